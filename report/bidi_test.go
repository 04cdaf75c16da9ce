package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// bidiControls are every character of the class a name may hide: the explicit bidi
// formatting characters (embeddings, overrides, isolates and their pops), the marks,
// and the controls that end a bidi paragraph or drive a terminal.
var bidiControls = []rune{'\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069',
	'\u200e', '\u200f', '\u061c', '\u2028', '\u2029', '\x1b', '\x00', '\r', '\u0085', '\u009b', '\x7f'}

// token starts every poisoned string: wherever a page shows the string, or its start,
// the token is there.
const token = "ʬ"

// poison is s with a token before it and, around it, an unmatched PDI and PDF (that
// would close an isolate or embedding opened before it), every bidi control, Hebrew
// letters and a terminal escape.
func poison(s string) string {
	return token + "\u2069\u202c" + s + "\u202eevil\u2066\u2067\u2068\u202a\u202b\u202d\u200e\u200f\u061cעברית\x1b[31m\u0085\u2029\u2028\r\n\t\x00\x7f\u009b"
}

// TestVisible: Visible writes every bidi control, control and byte that is not UTF-8
// as an escape, and leaves newlines, tabs and every other character as they are.
func TestVisible(t *testing.T) {
	for _, r := range bidiControls {
		got := Visible("a" + string(r) + "b")
		if strings.ContainsRune(got, r) || !strings.HasPrefix(got, `a\u`) || !strings.HasSuffix(got, "b") {
			t.Errorf("Visible(a %U b) = %q", r, got)
		}
	}
	for in, want := range map[string]string{
		"plain name, עברית, 名前 ✓": "plain name, עברית, 名前 ✓",
		"line\nnext\tcell":        "line\nnext\tcell",
		"x\u202ey":                `x\u202ey`,
		"\x1b[2J":                 `\u001b[2J`,
		"caf\xe9":                 `caf\xe9`,
		"":                        "",
	} {
		if got := Visible(in); got != want {
			t.Errorf("Visible(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestTerminalWriter: what a TerminalWriter writes is Visible of all that was written,
// however the writes split it, a character included.
func TestTerminalWriter(t *testing.T) {
	text := poison("col\u202eumn") + " released\n" + "\xff\xfe tail"
	for cut := range len(text) + 1 {
		for cut2 := cut; cut2 <= len(text); cut2 += 3 {
			var b bytes.Buffer
			w := NewTerminalWriter(&b)
			for _, part := range []string{text[:cut], text[cut:cut2], text[cut2:]} {
				if n, err := io.WriteString(w, part); err != nil || n != len(part) {
					t.Fatalf("write %q: %d, %v", part, n, err)
				}
			}
			if got, want := b.String(), Visible(text); got != want {
				t.Fatalf("written in parts at %d and %d: %q, want %q", cut, cut2, got, want)
			}
		}
	}
}

// enumFields are the result fields that hold one of a closed set of words the program
// chose (a variant, a format, a mechanism), a digest or a time: not user-supplied.
var enumFields = map[string]bool{
	"Report.Tool": true, "Report.Version": true, "Report.ConfigDigest": true, "Report.CreatedUTC": true, "Report.Algorithm": true,
	"RiskAnalysis.Tool": true, "RiskAnalysis.Version": true, "RiskAnalysis.ConfigDigest": true, "RiskAnalysis.CreatedUTC": true,
	"Manifest.Tool": true, "Manifest.Version": true, "Manifest.ConfigDigest": true, "Manifest.CreatedUTC": true, "Manifest.Neighbours": true,
	"FileSummary.Format": true, "MetricSummary.Name": true, "MetricSummary.Aggregate": true,
	"LDiversityIn.Variant": true, "LDiversityIn.Estimator": true, "TClosenessIn.Distance": true, "BetaLikenessIn.Variant": true,
	"KMapIn.Estimator": true, "SensitiveSummary.Distance": true, "RiskModelCheck.Model": true, "RiskModelCheck.Estimator": true,
	"UniquenessEstimate.Model": true, "UniquenessEstimate.Chosen": true,
	"ManifestOutput.Kind": true, "ManifestOutput.Mechanism": true, "ManifestOutput.Neighbours": true, "ManifestOutput.Post": true,
	"StatBudget.Stat": true, "SynthReport.Method": true, "ManifestLedger.Recorded": true, "LedgerSpend.Time": true,
	"SeriesSummary.Series": true, "SeriesSummary.Removals": true, "SeriesSummary.Learns": true, "SeriesRecord.Time": true,
}

// poisonAll poisons, in place, every string v reaches (fields, slice elements, map
// keys), but the fields of enumFields unless all is set. A map's string values are
// digests: left alone.
func poisonAll(v reflect.Value, all bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			poisonAll(v.Elem(), all)
		}
	case reflect.String:
		if v.CanSet() {
			v.SetString(poison(v.String()))
		}
	case reflect.Slice:
		for i := range v.Len() {
			poisonAll(v.Index(i), all)
		}
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String || v.IsNil() {
			return
		}
		out := reflect.MakeMap(v.Type())
		for it := v.MapRange(); it.Next(); {
			out.SetMapIndex(reflect.ValueOf(poison(it.Key().String())).Convert(v.Type().Key()), it.Value())
		}
		v.Set(out)
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() || !all && enumFields[v.Type().Name()+"."+f.Name] {
				continue
			}
			poisonAll(v.Field(i), all)
		}
	}
}

// poisonedPages are the HTML pages of every fixture, with every user-supplied string
// poisoned (and, with all, every string).
func poisonedPages(t *testing.T, all bool) map[string]string {
	t.Helper()
	pages := map[string]string{}
	add := func(name string, v any, write func(*bytes.Buffer) error) {
		poisonAll(reflect.ValueOf(v), all)
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		pages[name] = b.String()
	}
	for name, r := range map[string]*Report{"release": adultReport(true), "subset": subsetReport(), "mondrian": mondrianReport(),
		"empty": emptyReport(), "no-risk": noRiskReport(), "series-retire": seriesReport("retire"), "series-allow": seriesReport("allow"),
		"persons-series": personsSeriesReport()} {
		r.Model.KMap = &KMapIn{K: 20, Estimator: "zero-truncated-poisson", DerivedK: 6}
		r.Metric.Weights = map[string]float64{"age": 2}
		add(name, r, func(b *bytes.Buffer) error { return WriteReleaseHTML(b, r) })
	}
	a := adultAnalysis(true)
	add("risk", a, func(b *bytes.Buffer) error { return WriteRiskHTML(b, a) })
	m := hospitalManifest(true)
	add("manifest", m, func(b *bytes.Buffer) error { return WriteManifestHTML(b, m) })
	return pages
}

// TestHTMLIsolatesUserStrings: with every user-supplied string of every page holding
// every bidi control, each string the page shows (its start marked by a token) is
// inside a <bdi> element in the page's text, or inside a FIRST STRONG ISOLATE … POP
// DIRECTIONAL ISOLATE in its title, its charts' text and its attributes; no other bidi
// formatting character is in the page raw, marks only inside an isolate, and every
// isolate is closed where its text ends. The page is parsed as HTML to tell where each
// character is.
func TestHTMLIsolatesUserStrings(t *testing.T) {
	for name, page := range poisonedPages(t, false) {
		t.Run(name, func(t *testing.T) {
			shown := checkIsolates(t, page, true)
			if shown < 5 {
				t.Errorf("the page shows %d user-supplied strings: the poisoned fixture did not reach it", shown)
			}
			if !strings.Contains(page, `\u202e`) {
				t.Error("the page does not show the override as an escape")
			}
		})
	}
}

// TestHTMLNoStrayBidi: with every string of the results poisoned, the names of
// variants and formats too (which are not isolated), no bidi control reaches a page
// outside an isolate.
func TestHTMLNoStrayBidi(t *testing.T) {
	for name, page := range poisonedPages(t, true) {
		t.Run(name, func(t *testing.T) { checkIsolates(t, page, false) })
	}
}

// checkIsolates parses page and fails where a bidi control is outside an isolate or
// an isolate is left open, and, with tokens, where a token is; it returns the number
// of tokens.
func checkIsolates(t *testing.T, page string, tokens bool) int {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(page))
	d.Strict, d.AutoClose, d.Entity = false, xml.HTMLAutoClose, xml.HTMLEntity
	var stack []string
	count, failures := 0, 0
	fail := func(format string, args ...any) {
		if failures++; failures <= 10 {
			t.Errorf(format, args...)
		}
	}
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the page does not parse: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			stack = append(stack, tok.Name.Local)
			for _, a := range tok.Attr {
				count += checkMarks(fail, "attribute "+a.Name.Local, a.Value, tokens)
			}
		case xml.EndElement:
			if i := lastIndex(stack, tok.Name.Local); i >= 0 {
				stack = stack[:i]
			}
		case xml.CharData:
			if lastIndex(stack, "head") >= 0 || lastIndex(stack, "svg") >= 0 {
				count += checkMarks(fail, strings.Join(stack, ">"), string(tok), tokens)
				continue
			}
			count += checkText(fail, stack, string(tok), tokens)
		}
	}
	return count
}

// checkText checks a text node of the body: no bidi formatting character at all;
// marks and tokens only inside a <bdi> element.
func checkText(fail func(string, ...any), stack []string, text string, tokens bool) int {
	inBDI := lastIndex(stack, "bdi") >= 0
	count := 0
	for _, r := range text {
		switch {
		case isBidiFormatting(r):
			fail("%s: raw %U in the text %q", strings.Join(stack, ">"), r, text)
		case isBidiMark(r) && !inBDI:
			fail("%s: %U outside a <bdi> element in %q", strings.Join(stack, ">"), r, text)
		case tokens && string(r) == token:
			count++
			if !inBDI {
				fail("%s: a user-supplied string outside a <bdi> element: %q", strings.Join(stack, ">"), text)
			}
		}
	}
	return count
}

// checkMarks checks text where isolates are marks: FSI … PDI balanced and closed by
// the text's end, no other bidi formatting character, marks and tokens only inside.
func checkMarks(fail func(string, ...any), where, text string, tokens bool) int {
	depth, count := 0, 0
	for _, r := range text {
		switch {
		case r == '\u2068':
			depth++
		case r == '\u2069' && depth > 0:
			depth--
		case isBidiFormatting(r):
			fail("%s: raw %U in %q", where, r, text)
		case isBidiMark(r) && depth == 0:
			fail("%s: %U outside an isolate in %q", where, r, text)
		case tokens && string(r) == token:
			count++
			if depth == 0 {
				fail("%s: a user-supplied string outside an isolate: %q", where, text)
			}
		}
	}
	if depth != 0 {
		fail("%s: %d isolates left open in %q", where, depth, text)
	}
	return count
}

// lastIndex is the index of the last s in stack, or -1.
func lastIndex(stack []string, s string) int {
	for i := len(stack) - 1; i >= 0; i-- {
		if stack[i] == s {
			return i
		}
	}
	return -1
}

// TestIsolatePage: isolatePage makes isolates in text <bdi> elements and keeps them
// as marks in the head, in SVG and in tags, closes what is left open where the text
// ends, and shows every other bidi control outside an isolate as an escape.
func TestIsolatePage(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"<p>a \u2068x\u2069 b</p>", "<p>a <bdi>x</bdi> b</p>"},
		{"<p>\u2068x \u202e</p>", `<p><bdi>x \u202e</bdi></p>`},
		{"<p>\u2068x</p><p>y\u2069</p>", `<p><bdi>x</bdi></p><p>y\u2069</p>`},
		{"<p>\u2069\u202c\u200f</p>", `<p>\u2069\u202c\u200f</p>`},
		{"<p>\u2068\u200f\u2068a\u2069\u2069</p>", "<p><bdi>\u200f<bdi>a</bdi></bdi></p>"},
		{"<head><title>\u2068x\u2069 \u2067</title></head>", `<head><title>` + "\u2068x\u2069" + ` \u2067</title></head>`},
		{"<svg><text>\u2068abc</text></svg><p>\u2068d\u2069</p>", "<svg><text>\u2068abc\u2069</text></svg><p><bdi>d</bdi></p>"},
		{"<svg><g><title>\u2068t\u2069</title></g></svg>", "<svg><g><title>\u2068t\u2069</title></g></svg>"},
		{`<td title="` + "\u2068x\u202e" + `">`, `<td title="` + "\u2068x" + `\u202e` + "\u2069" + `">`},
	} {
		if got := isolatePage(tc.in); got != tc.want {
			t.Errorf("isolatePage(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestIsolate: a user string is isolated, with its own bidi formatting characters and
// controls escaped, its marks and letters kept; "" stays "".
func TestIsolate(t *testing.T) {
	got := isolate("a\u202eb\u2069\u200fג\n")
	if want := "\u2068a\\u202eb\\u2069\u200fג\\u000a\u2069"; got != want {
		t.Errorf("isolate = %q, want %q", got, want)
	}
	if isolate("") != "" {
		t.Error(`isolate("") is not ""`)
	}
	if !utf8.ValidString(isolate("caf\xe9")) {
		t.Error("isolate keeps a byte that is not UTF-8")
	}
}

// FuzzVisible: whatever a name holds, Visible leaves no bidi control, mark or control
// but newline and tab in it, and writes valid UTF-8; isolated into a page, it leaves no
// raw bidi formatting character outside the <bdi> element that holds it, which is
// closed.
func FuzzVisible(f *testing.F) {
	f.Add(poison("age"))
	f.Add("\u2069\u202e\xff")
	f.Fuzz(func(t *testing.T, s string) {
		v := Visible(s)
		if !utf8.ValidString(v) {
			t.Fatalf("Visible(%q) = %q is not UTF-8", s, v)
		}
		for _, r := range v {
			if r != '\n' && r != '\t' && (isBidiFormatting(r) || isBidiMark(r) || isControl(r)) {
				t.Fatalf("Visible(%q) = %q holds %U", s, v, r)
			}
		}
		page := isolatePage("<p>a " + esc(isolate(s)) + " b</p>") // escaped, as the templates escape it
		if s != "" && (!strings.HasPrefix(page, "<p>a <bdi>") || !strings.HasSuffix(page, "</bdi> b</p>") || strings.Count(page, "<bdi>") != 1) {
			t.Fatalf("%q isolated: %q", s, page)
		}
		for _, r := range page {
			if isBidiFormatting(r) {
				t.Fatalf("%q isolated: %q holds %U raw", s, page, r)
			}
		}
	})
}
