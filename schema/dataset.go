package schema

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CheckDatasetName refuses a dataset name that another could look the same as: the DP
// ledger keeps one budget per name, compared exactly, so "ward " beside "ward" would
// be a second budget for one dataset. A name is valid UTF-8 of letters, digits,
// punctuation and symbols, with single spaces (U+0020) between words: no space at
// either end or two in a row, no other space, no control or invisible character, and
// no combining mark (an accented letter is written as one character, as keyboards
// type it). The error shows the name quoted in ASCII.
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
	}
	for _, r := range name {
		var what string
		switch {
		case unicode.Is(unicode.M, r):
			what = "a combining mark (write an accented letter as one character)"
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
