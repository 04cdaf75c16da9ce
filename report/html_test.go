package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestHTMLPages: every page is self-contained, escapes what it is given, shows the
// figures it claims to, and holds its charts.
func TestHTMLPages(t *testing.T) {
	for _, tc := range htmlCases() {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.render(&b); err != nil {
				t.Fatal(err)
			}
			page := b.String()
			checkSelfContained(t, page)
			checkEscaped(t, page)
			plain := withoutIsolates(page)
			for _, w := range tc.want {
				if !strings.Contains(plain, w) {
					t.Errorf("page lacks %q", w)
				}
			}
			for _, w := range tc.empty {
				if !strings.Contains(page, `<p class="empty">`) || !strings.Contains(page, w) {
					t.Errorf("page lacks the sentence %q for an empty chart", w)
				}
			}
			checkCharts(t, page, tc.svgs)
			checkPercentages(t, page)
		})
	}
}

// withoutIsolates is page without the <bdi> elements and isolate marks that set its
// user-supplied strings apart, to look for sentences in.
func withoutIsolates(page string) string {
	return strings.NewReplacer("<bdi>", "", "</bdi>", "", "\u2068", "", "\u2069", "").Replace(page)
}

// forbidden are what would load something, or run something, in a page.
var forbidden = []string{"http://", "https://", "src=", "href=", "@import", "url(", "<script", "<link", "<img", "<iframe",
	"<object", "<embed", "javascript:", "xmlns", " on", "srcset", "<base", "<meta http-equiv"}

// checkSelfContained fails on anything in page that loads or runs something.
func checkSelfContained(t *testing.T, page string) {
	t.Helper()
	lower := strings.ToLower(page)
	for _, f := range forbidden {
		if f == " on" {
			if m := regexp.MustCompile(`<[^>]*\son[a-z]+\s*=`).FindString(lower); m != "" {
				t.Errorf("page holds an event handler: %q", m)
			}
			continue
		}
		if i := strings.Index(lower, f); i >= 0 {
			t.Errorf("page holds %q: …%s…", f, page[max(0, i-60):min(len(page), i+60)])
		}
	}
	if !strings.HasPrefix(page, "<!DOCTYPE html>") || !strings.HasSuffix(strings.TrimSpace(page), "</html>") {
		t.Errorf("page is not one whole HTML document")
	}
}

// checkEscaped fails when the hostile name, or any markup of the test values, reaches
// the page unescaped.
func checkEscaped(t *testing.T, page string) {
	t.Helper()
	for _, raw := range []string{hostile, "<script>", "<b>co", "<i>x</i>", "<admissions>", `"x"`} {
		if strings.Contains(page, raw) {
			t.Errorf("page holds %q unescaped", raw)
		}
	}
}

var (
	svgRE     = regexp.MustCompile(`(?s)<svg\b[^>]*>.*?</svg>`)
	svgOpenRE = regexp.MustCompile(`^<svg class="chart" width="(\d+)" height="(\d+)" viewBox="0 0 (\d+) (\d+)" role="img"><title>[^<]+</title>`)
)

// checkCharts fails unless page holds n charts, each well-formed XML with its size,
// view box, title (drawn too), axis label and legible text.
func checkCharts(t *testing.T, page string, n int) {
	t.Helper()
	charts := svgRE.FindAllString(page, -1)
	if len(charts) != n || strings.Count(page, "<svg") != n {
		t.Errorf("page holds %d charts, want %d", len(charts), n)
	}
	for _, c := range charts {
		m := svgOpenRE.FindStringSubmatch(c)
		if m == nil {
			t.Errorf("chart without its size, view box or title: %.200s", c)
			continue
		}
		if m[1] != m[3] || m[2] != m[4] || m[1] == "0" || m[2] == "0" {
			t.Errorf("chart's size %s×%s differs from its view box %s×%s", m[1], m[2], m[3], m[4])
		}
		for _, part := range []string{`class="title"`, `class="axislabel"`, `class="axis"`} {
			if !strings.Contains(c, part) {
				t.Errorf("chart lacks %s: %.200s", part, c)
			}
		}
		if err := wellFormed(c); err != nil {
			t.Errorf("chart is not well-formed: %v: %.300s", err, c)
		}
	}
}

// wellFormed checks that an SVG fragment is well-formed XML.
func wellFormed(s string) error {
	d := xml.NewDecoder(strings.NewReader(s))
	d.Strict = true
	for {
		if _, err := d.Token(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// checkPercentages fails on a percentage printed with only zeros ("0.0%"): a share
// rounded away. (TestFmtPct and TestHTMLSharesNeverZero check that a non-zero share
// never prints as "0%".)
func checkPercentages(t *testing.T, page string) {
	t.Helper()
	for _, m := range regexp.MustCompile(`\b0\.0+%`).FindAllString(page, -1) {
		t.Errorf("page prints %q: a share with only zeros", m)
	}
}

// TestFmtPct: a share prints with enough digits to be told from 0 and from 1, and close
// to its value.
func TestFmtPct(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want string
	}{
		{0, "0%"}, {1, "100%"}, {0.045, "4.5%"}, {0.000033, "0.0033%"}, {0.2, "20%"}, {1.0 / 3, "33.3%"},
		{0.00049, "0.049%"}, {0.0001, "0.01%"}, {0.99997, "99.997%"}, {0.9995, "99.95%"}, {0.994, "99.4%"}, {0.0316, "3.2%"},
		{0.0000999, "0.01%"}, {1e-15, "< 0.000000000001%"},
	} {
		if got := fmtPct(tc.x); got != tc.want {
			t.Errorf("fmtPct(%g) = %q, want %q", tc.x, got, tc.want)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		x := math.Pow(10, -12*rng.Float64()) // (1e-12, 1]
		if rng.IntN(2) == 0 {
			x = 1 - x*0.999
		}
		s := fmtPct(x)
		if x > 0 && x < 1 && (s == "0%" || s == "100%") {
			t.Fatalf("fmtPct(%g) = %q", x, s)
		}
		v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
		if err != nil {
			continue // "< …" for the smallest
		}
		if math.Abs(v/100-x) > 0.06*math.Min(x, 1-x)+1e-12 {
			t.Fatalf("fmtPct(%g) = %q: too far off", x, s)
		}
	}
}

// TestFmtNumbers: counts and numbers carry thousands separators; risks read as 1 in N.
func TestFmtNumbers(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{fmtCount(30162), "30,162"}, {fmtCount(0), "0"}, {fmtCount(999), "999"}, {fmtCount(1000), "1,000"}, {fmtCount(-1234567), "-1,234,567"},
		{fmtNumber(90254.73697), "90,254.74"}, {fmtNumber(681537), "681,537"}, {fmtNumber(0.26716), "0.267"}, {fmtNumber(6.999), "7"},
		{fmtNumber(1.5), "1.5"}, {fmtRisk(0.2), "20% (1 in 5)"}, {fmtRisk(0.0316), "3.2% (1 in 32)"}, {fmtRisk(0.6214), "62.1% (1 in 1.6)"},
		{fmtRisk(0), "0%"}, {fmtShareOf(1346, 30162), "1,346 (4.5%)"}, {fmtScale(4313.85), "4,314"}, {fmtScale(46.765), "46.77"},
		{fmtSci(1.01e-7), "1.01 × 10⁻⁷"}, {fmtSci(1e-6), "10⁻⁶"}, {fmtSci(0.5), "0.5"}, {fmtSci(0), "0"}, {fmtSci(9.999e-9), "10⁻⁸"},
		{bandLabel(RiskBand{Above: 0.2, UpTo: 1.0 / 3}), "20%–33.3% (groups of 3–4)"}, {bandLabel(RiskBand{Above: 0, UpTo: 0.001}), "0%–0.1% (groups of 1,000 or more)"},
		{bandLabel(RiskBand{Above: 0.5, UpTo: 1}), "50%–100% (groups of 1)"}, {bucketLabel(SizeBucket{Min: 1000}), "1,000 or more"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestHTMLSharesNeverZero: every non-zero share of the test values that a page shows
// is printed as itself, never as 0%.
func TestHTMLSharesNeverZero(t *testing.T) {
	r := adultReport(true)
	var b bytes.Buffer
	if err := WriteReleaseHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	shares := []float64{r.Risk.Release.Marketer.Share, r.Risk.Release.Journalist.Average, r.Risk.Release.RecordsAtHighest, r.Risk.Input.RecordRisk[1].Records}
	for _, e := range r.Risk.Release.PopulationUniqueness {
		shares = append(shares, e.Share)
	}
	for _, x := range shares {
		if x == 0 {
			continue
		}
		s := fmtPct(x)
		if s == "0%" || !strings.Contains(b.String(), s) {
			t.Errorf("share %g: printed as %q, found: %v", x, s, strings.Contains(b.String(), s))
		}
	}
}

// TestHTMLShowsEveryRiskFigure: every figure of the risk report a release page shows,
// before and after, appears as the page formats it.
func TestHTMLShowsEveryRiskFigure(t *testing.T) {
	r := adultReport(true)
	var b bytes.Buffer
	if err := WriteReleaseHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, m := range []*RiskMeasures{&r.Risk.Input, r.Risk.Release} {
		want := []string{fmtRisk(m.HighestRisk), fmtRisk(m.AverageRisk), fmtPct(m.SampleUniqueness), fmtPct(m.RecordsAtHighest),
			fmtCount(m.Records), fmtCount(m.Classes), fmtRisk(m.Journalist.Average), fmtPct(m.Marketer.Share)}
		for _, x := range m.RecordsAtRisk {
			want = append(want, fmtPct(x))
		}
		for _, band := range m.RecordRisk {
			want = append(want, fmtPct(band.Records))
		}
		for _, c := range m.ClassSizes {
			if c.Records > 0 {
				want = append(want, fmtPct(float64(c.Records)/float64(m.Records))+" · "+fmtCount(c.Records))
			}
		}
		for _, e := range m.PopulationUniqueness {
			if e.Valid {
				want = append(want, fmtPct(e.Share))
			}
		}
		for _, w := range want {
			if !strings.Contains(page, w) {
				t.Errorf("page lacks %q", w)
			}
		}
	}
	for _, mc := range r.Risk.Models {
		if !strings.Contains(page, fmtPct(mc.Measured)) || !strings.Contains(page, fmtPct(mc.Limit)) {
			t.Errorf("page lacks model %s's limit %s or measure %s", mc.Model, fmtPct(mc.Limit), fmtPct(mc.Measured))
		}
	}
}

// TestHTMLNil: a nil result is an error, not a panic.
func TestHTMLNil(t *testing.T) {
	var b bytes.Buffer
	if WriteReleaseHTML(&b, nil) == nil || WriteRiskHTML(&b, nil) == nil || WriteManifestHTML(&b, nil) == nil || b.Len() > 0 {
		t.Errorf("a nil result rendered")
	}
}

// TestHTMLWriteError: a failing writer's error comes back wrapped.
func TestHTMLWriteError(t *testing.T) {
	want := errors.New("disk full")
	if err := WriteManifestHTML(failWriter{want}, hospitalManifest(true)); !errors.Is(err, want) {
		t.Errorf("error %v, want %v wrapped", err, want)
	}
}

type failWriter struct{ err error }

func (f failWriter) Write([]byte) (int, error) { return 0, f.err }

// plainPage is r's release page as a reader sees its text: without its style sheet
// (whose class names are no words of the page) and isolates.
func plainPage(t *testing.T, r *Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteReleaseHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	return withoutIsolates(regexp.MustCompile(`(?s)<style>.*?</style>`).ReplaceAllString(b.String(), ""))
}

// TestHTMLPersons: a release counted in persons says so in its models, its checks, its
// risk figures and its box of persons and records side by side, never states k in
// records, and says what its pseudonym links; the checks judge k and l by the persons.
func TestHTMLPersons(t *testing.T) {
	for _, key := range []PseudonymKey{"", PseudonymKeyFile, PseudonymKeyRandom} {
		t.Run(string(key), func(t *testing.T) {
			r := personsReport(key)
			page := plainPage(t, r)
			for _, bad := range []string{"at least 5 records", "smallest group 5 records", "the smallest holds", "Records at risk", "every record&#39;s risk",
				"share of the records", "Records by", "largest EMD", "distinct values per group", "{population: N}", "does not hold"} {
				if strings.Contains(page, bad) {
					t.Errorf("a release in persons says %q", bad)
				}
			}
			p := r.Persons
			for _, row := range [][3]int{{p.Input, r.Input.Rows}, {p.Released, r.Verified.Rows}, {p.LostSome, r.Verified.Suppressed}, {p.MinClass, r.Verified.MinClass}} {
				if w := fmt.Sprintf(`<td class="n">%s</td><td class="n">%s</td></tr>`, fmtCount(int64(row[0])), fmtCount(int64(row[1]))); !strings.Contains(page, w) {
					t.Errorf("the persons box lacks persons %d beside records %d", row[0], row[1])
				}
			}
			for _, w := range []string{"Here a person is one value of patient_id", fmtCount(int64(p.LostAll)), fmtCount(int64(p.Several)),
				fmtNumber(p.AvgClass) + " persons (" + fmtNumber(r.AvgClass) + " records)", "every group: records of at least 5 persons",
				fmt.Sprintf("fewest persons in a group: %d (fewest records: %d)", p.MinClass, r.Verified.MinClass), "Persons at risk above 10%",
				"every person&#39;s risk at most", "Counted in persons (patient_id)", "<title>Persons by the size of their group, in persons</title>"} {
				if !strings.Contains(page, w) {
					t.Errorf("page lacks %q", w)
				}
			}
			linking := map[PseudonymKey]string{"": "", PseudonymKeyFile: "Links to other releases: yes.", PseudonymKeyRandom: "Links to other releases: none."}
			for k, w := range linking {
				if w != "" && strings.Contains(page, w) != (k == key) {
					t.Errorf("key %q: the page says %q: %v", key, w, !(k == key))
				}
			}
			if key != "" && (!strings.Contains(page, template.HTMLEscapeString(PseudonymLinks(key))) || !strings.Contains(page, "Multirelational k-anonymity")) {
				t.Errorf("key %q: the page does not say what the pseudonym links and that multirelational k-anonymity holds", key)
			}
			if key == "" && (strings.Contains(page, "pseudonym") || strings.Contains(page, "Multirelational")) {
				t.Errorf("a release without a pseudonym speaks of one")
			}
		})
	}
}

// TestHTMLPersonsChecks: the table of checks judges k and l-diversity by the persons
// the verifier counted, not by records, and a figure the report lacks fails.
func TestHTMLPersonsChecks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*Report)
		fails  string
	}{
		{"k in persons", func(r *Report) { r.Persons.MinClass = 4 }, "k-anonymity in persons"}, // 9 records, 4 persons
		{"l in persons", func(r *Report) { r.Verified.Sensitive[0].MinPersonsL = 2.9 }, "distinct l-diversity in persons on diagnosis"},
		{"no l figure", func(r *Report) { r.Verified.Sensitive[0].Measures &^= MeasurePersonsL }, "distinct l-diversity in persons on diagnosis"},
		{"t in persons", func(r *Report) { r.Verified.Sensitive[0].MaxEMD = 0.31 }, "t-closeness in persons on diagnosis"},
		{"β in persons", func(r *Report) { r.Verified.Sensitive[0].MaxGain = 1.6 }, "basic β-likeness in persons on diagnosis"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := personsReport("")
			page := plainPage(t, r)
			if strings.Contains(page, "does not hold") {
				t.Fatalf("the release's own figures fail a check")
			}
			tc.mutate(r)
			var failed []string
			for _, c := range modelChecks(r) {
				if !c.Holds {
					failed = append(failed, c.Model)
				}
			}
			if len(failed) != 1 || failed[0] != tc.fails {
				t.Errorf("failed %q, want only %q", failed, tc.fails)
			}
		})
	}
}

// TestHTMLRecordsSayNoPersons: a release or risk analysis counted in records speaks
// of no person count anywhere.
func TestHTMLRecordsSayNoPersons(t *testing.T) {
	for _, tc := range htmlCases() {
		if strings.Contains(tc.name, "persons") {
			continue
		}
		var b bytes.Buffer
		if err := tc.render(&b); err != nil {
			t.Fatal(err)
		}
		page := regexp.MustCompile(`(?s)<style>.*?</style>`).ReplaceAllString(b.String(), "")
		for _, bad := range []string{"persons", "pseudonym", "Counted in"} {
			if strings.Contains(page, bad) {
				t.Errorf("%s: the page says %q", tc.name, bad)
			}
		}
	}
}

// TestHTMLRiskPersons: a risk analysis in persons labels its measures in persons, says
// how they are counted, and gives the release's persons.
func TestHTMLRiskPersons(t *testing.T) {
	a := personsAnalysis()
	var b bytes.Buffer
	if err := WriteRiskHTML(&b, a); err != nil {
		t.Fatal(err)
	}
	page := withoutIsolates(b.String())
	for _, bad := range []string{"Records at risk", "Records in groups", "Records by", "share of the records", "every record&#39;s", "{population: N}"} {
		if strings.Contains(page, bad) {
			t.Errorf("a risk analysis in persons says %q", bad)
		}
	}
	r := a.Persons.Release
	for _, w := range []string{"Counted in persons (" + template.HTMLEscapeString(hostile) + "): a group&#39;s size is the number of different persons",
		fmt.Sprintf("about %s persons", fmtCount(int64(a.Persons.Input))),
		fmt.Sprintf("records of %s of them", fmtCount(int64(r.Released))), fmt.Sprintf("%d with records in several groups; %d lost some of their records, %d all", r.Several, r.LostSome, r.LostAll),
		"Persons at risk above 20%", "Persons in groups", "Share of persons at the highest risk"} {
		if !strings.Contains(page, w) {
			t.Errorf("page lacks %q", w)
		}
	}
}

// TestHTMLPersonsIsolatesUserStrings: the unit's column, as the persons box, the
// models, the risk section and the risk analysis show it, is isolated like every other
// user-supplied string (TestHTMLIsolatesUserStrings); the pseudonym's key kind and
// what it links are the program's words, left as they are.
func TestHTMLPersonsIsolatesUserStrings(t *testing.T) {
	for _, key := range []PseudonymKey{"", PseudonymKeyFile} {
		r := personsReport(key)
		poisonAll(reflect.ValueOf(r), false)
		if ps := r.Persons.Pseudonym; ps != nil {
			ps.Key, ps.Links = key, PseudonymLinks(key)
		}
		var b bytes.Buffer
		if err := WriteReleaseHTML(&b, r); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		if shown := checkIsolates(t, page, true); shown < 5 {
			t.Errorf("key %q: the page shows %d user-supplied strings", key, shown)
		}
	}
	a := personsAnalysis()
	poisonAll(reflect.ValueOf(a), false)
	var b bytes.Buffer
	if err := WriteRiskHTML(&b, a); err != nil {
		t.Fatal(err)
	}
	if shown := checkIsolates(t, b.String(), true); shown < 5 {
		t.Errorf("the risk analysis shows %d user-supplied strings", shown)
	}
	all := personsReport(PseudonymKeyRandom) // every string poisoned, the program's words too: none strays
	poisonAll(reflect.ValueOf(all), true)
	b.Reset()
	if err := WriteReleaseHTML(&b, all); err != nil {
		t.Fatal(err)
	}
	checkIsolates(t, b.String(), false)
}

// TestHTMLDifferentialPrivacy: the page of a SafePub release states its guarantee, β,
// k and how the node was chosen, counts the records left out as the sample's (no
// suppression limit), and warns that the page's counts are not covered; the summary
// on stdout says the same.
func TestHTMLDifferentialPrivacy(t *testing.T) {
	for _, chosen := range []DPChoice{DPGiven, "degree low-medium", DPSearched} {
		r := adultReport(false)
		r.Model = ModelSummary{K: 61, MaxSuppressed: r.Input.Rows}
		r.DifferentialPrivacy = &DPSummary{Epsilon: 2, Delta: 1e-5, EpsilonAnonymization: 1, Beta: 0.6321, K: 61, DeltaBound: 7.8e-6, Chosen: chosen, Node: r.Node, Guarantee: DPGuarantee}
		if chosen == DPSearched {
			d := r.DifferentialPrivacy
			d.EpsilonSearch, d.Steps, d.StepsTaken, d.Pivots, d.Score = 1, 100, 100, 97, "loss"
		}
		page := plainPage(t, r)
		for _, w := range []string{"(ε = 2, δ = 1e-05)-differential privacy", "probability β = 0.632", "k = 61", "publish the file, not this page", "No ledger recorded the spend", "Groups of the sample"} {
			if !strings.Contains(page, template.HTMLEscapeString(w)) {
				t.Errorf("%s: the page lacks %q", chosen, w)
			}
		}
		for _, bad := range []string{"the most allowed being", "k-anonymity (k ="} {
			if strings.Contains(page, template.HTMLEscapeString(bad)) {
				t.Errorf("%s: the page says %q", chosen, bad)
			}
		}
		want := map[DPChoice]string{DPGiven: "given by the configuration", "degree low-medium": "derived from the hierarchies", DPSearched: "took 100 of 100 steps"}[chosen]
		if !strings.Contains(page, want) {
			t.Errorf("%s: the page does not say how the node was chosen (%q)", chosen, want)
		}
		var b strings.Builder
		r.Summary(&b)
		if !strings.Contains(b.String(), "(ε=2, δ=1e-05)-differential privacy") || strings.Contains(b.String(), "limit") || strings.Contains(b.String(), "lattice") {
			t.Errorf("%s: the summary says\n%s", chosen, b.String())
		}
	}
}
