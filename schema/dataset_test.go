package schema

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"sanitizer/fault"
)

// TestDatasetName: a dataset name that another name could look the same as (spaces at
// either end or doubled, a space that is not U+0020, an invisible or control
// character, letters not in Unicode's composed form NFC) is refused at parse, naming
// the key and showing the name quoted; names a person can tell apart are kept exactly,
// those of scripts written with combining marks among them.
func TestDatasetName(t *testing.T) {
	refused := []struct{ name, want string }{
		{"hospital-sample ", "ends with a space"},
		{" hospital-sample", "begins with a space"},
		{"hospital  sample", "two spaces in a row"},
		{"hospital-sample\t", "U+0009"},
		{"hospital\u00a0sample", "U+00A0"},       // no-break space
		{"hospital\u3000sample", "U+3000"},       // ideographic space
		{"hospital\u200bsample", "U+200B"},       // zero-width space
		{"\ufeffhospital-sample", "U+FEFF"},      // byte order mark
		{"hospital\u202esample", "U+202E"},       // right-to-left override
		{"hospital-sampl\u00ad", "U+00AD"},       // soft hyphen
		{"hospital-sample\x7f", "U+007F"},        // delete
		{"hospital\u2028sample", "U+2028"},       // line separator
		{"hospit\u0061\u0301l", "NFC"},           // á as a + combining acute accent
		{"\u0958", "NFC"},                        // क़ as one character (its NFC is क + nukta)
		{"hospital-sample\ufe0f", "U+FE0F"},      // variation selector
		{"hospital\u034fsample", "U+034F"},       // combining grapheme joiner
		{"hospital-sample\ue000", "U+E000"},      // private use
		{"hospital-sample\U000e0001", "U+E0001"}, // language tag
	}
	for _, tt := range refused {
		t.Run(strconv.QuoteToASCII(tt.name), func(t *testing.T) {
			err := CheckDatasetName(tt.name)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), strconv.QuoteToASCII(tt.name)) {
				t.Errorf("CheckDatasetName: %v, want an error saying %q and showing the name quoted", err, tt.want)
			}
			conf := "dataset: " + strconv.QuoteToASCII(tt.name) + "\ncolumns:\n  a: {role: insensitive}\n"
			_, err = Parse([]byte(conf), "c.yaml", "/cfg")
			if !errors.Is(err, fault.ErrBadInput) || !strings.HasPrefix(err.Error(), "c.yaml:1: dataset: ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse: %v, want bad input naming c.yaml:1: dataset", err)
			}
		})
	}
	// Names written with combining marks in their composed form are names like any
	// other: Hindi, Tamil and Arabic cannot be written without them.
	for _, name := range []string{"ward-admissions", "hospital sample 2024", "2024", "Station Köln", "病院・外来", "a_b.c+d (e)", "x",
		"अस्पताल", "மருத்துவமனை", "مُسْتَشْفَى", "Hà Nội"} {
		if err := CheckDatasetName(name); err != nil {
			t.Errorf("%q: %v", name, err)
		}
		cfg, err := Parse([]byte("dataset: "+strconv.Quote(name)+"\ncolumns:\n  a: {role: insensitive}\n"), "c.yaml", "/cfg")
		if err != nil || cfg.Dataset != name {
			t.Errorf("%q: parsed as %q, %v", name, cfg.Dataset, err)
		}
	}
	if err := CheckDatasetName("bad\xffutf8"); err == nil {
		t.Error("a name that is not UTF-8 was accepted")
	}
}
