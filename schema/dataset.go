package schema

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// CheckDatasetName refuses a dataset name that another could look the same as: the DP
// ledger keeps one budget per name, compared exactly, so "ward " beside "ward" would
// be a second budget for one dataset. A name is valid UTF-8 of letters, marks, digits,
// punctuation and symbols, with single spaces (U+0020) between words: no space at
// either end or two in a row, no other space, no control or invisible character; and
// it is in Unicode's composed normal form, NFC (an accented letter written as one
// character, as keyboards type it, not as a letter and a combining accent), so that
// the same letters have one spelling. The error shows the name quoted in ASCII.
func CheckDatasetName(name string) error {
	q := strconv.QuoteToASCII(name)
	const why = "a name that differs from another only in spaces, invisible characters or how an accent is encoded would open a second budget in the DP ledger"
	switch {
	case !utf8.ValidString(name):
		return fmt.Errorf("%s is not valid UTF-8", q)
	case strings.HasPrefix(name, " "):
		return fmt.Errorf("%s begins with a space: %s", q, why)
	case strings.HasSuffix(name, " "):
		return fmt.Errorf("%s ends with a space: %s", q, why)
	case strings.Contains(name, "  "):
		return fmt.Errorf("%s has two spaces in a row: %s", q, why)
	case !norm.NFC.IsNormalString(name):
		return fmt.Errorf("%s is not in Unicode's composed form, NFC (an accented letter written as a letter and a combining accent, say): %s", q, why)
	}
	for _, r := range name {
		var what string
		switch {
		case unicode.In(r, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point):
			what = "an invisible character"
		case unicode.IsSpace(r) || unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp):
			if r == ' ' {
				continue
			}
			what = "a space other than U+0020"
		case !unicode.IsPrint(r):
			what = "a control, invisible or unassigned character"
		default:
			continue
		}
		return fmt.Errorf("%s holds %U, %s: %s", q, r, what, why)
	}
	return nil
}
