package release

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/report"
	"sanitizer/schema"
)

// TestUnconfiguredMeasuresLeftOut: a protected column's measures are printed only for
// the models the configuration requires of it, wherever they are printed (release's
// and check's summaries, the JSON and the HTML report): a release without β-likeness
// shows no gain (check printed "largest β-likeness gain 0"), one without t-closeness no
// EMD, one without l-diversity no l; a configured measure is shown even when it is 0.
func TestUnconfiguredMeasuresLeftOut(t *testing.T) {
	modelsOnly(t)
	cfg0, in, dir := hospitalFixture(t, 600)
	raw, err := os.ReadFile(cfg0.File)
	if err != nil {
		t.Fatal(err)
	}
	const (
		distinct = "l-diversity: {column: diagnosis, variant: distinct, l: 2}"
		entropy  = "l-diversity: {column: diagnosis, variant: entropy, l: 1.5}"
		closer   = "t-closeness: {column: diagnosis, t: 0.6}"
		beta     = "beta-likeness: {column: diagnosis, beta: 1000}"
	)
	// Each measure: the model that requires it, and how each output shows it.
	measures := []struct {
		model, stdout, check, key, html string
	}{
		{distinct, "distinct values", "distinct values", "min_distinct_l", "distinct values</"},
		{entropy, "entropy l", "entropy l", "min_entropy_l", "weakest group: entropy l"},
		{closer, "EMD", "EMD", "max_emd", "largest EMD"},
		{beta, "β-likeness gain", "β-likeness gain", "max_gain", "largest gain"},
	}
	for i, models := range [][]string{{distinct}, {entropy}, {closer}, {beta}, {distinct, closer}, {entropy, beta}, {distinct, closer, beta}} {
		text := testfiles.Replace(t, string(raw), "privacy: {k: 5, suppression: 0.05}", "privacy:\n  k: 5\n  suppression: 0.05\n  "+strings.Join(models, "\n  "))
		path := filepath.Join(dir, "c.yaml")
		writeTestFile(t, path, []byte(text))
		cfg, err := schema.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		out, js, page := filepath.Join(dir, "r.csv"), filepath.Join(dir, "r.json"), filepath.Join(dir, "r.html")
		rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out, Reports: []string{js, page}, Force: i > 0})
		if err != nil {
			t.Fatalf("%v: %v", models, err)
		}
		m, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out, Report: js})
		if err != nil {
			t.Fatalf("%v: check: %v", models, err)
		}
		var summary, check bytes.Buffer
		rep.Summary(&summary)
		report.CheckSummary(&check, cfg, m)
		var written struct {
			Verified struct{ Sensitive []map[string]any }
		}
		if err := json.Unmarshal(readTestFile(t, js), &written); err != nil || len(written.Verified.Sensitive) != 1 {
			t.Fatalf("%v: the JSON report's verified.sensitive %v, %v", models, written.Verified.Sensitive, err)
		}
		html := string(readTestFile(t, page))
		for _, ms := range measures {
			want := strings.Contains(strings.Join(models, " "), ms.model)
			shown := map[string]bool{
				"release's summary": strings.Contains(lineOf(summary.String(), "diagnosis: "), ms.stdout),
				"check's summary":   strings.Contains(lineOf(check.String(), "measured on diagnosis: "), ms.check),
				"the JSON report":   written.Verified.Sensitive[0][ms.key] != nil,
				"the HTML report":   strings.Contains(html, ms.html),
			}
			for where, got := range shown {
				if got != want {
					t.Errorf("%v: %s shows %q: %v, want %v\n%s%s", models, where, ms.stdout, got, want, summary.String(), check.String())
				}
			}
		}
		if strings.Contains(check.String(), " 0\n") || strings.Contains(summary.String(), " 0\n") {
			t.Errorf("%v: a figure 0 at the end of a line:\n%s%s", models, summary.String(), check.String())
		}
	}
}

// TestSensitiveSummaryJSON: the JSON of a protected column's measures holds those of
// its models only, a configured measure of 0 included, and reads back as written.
func TestSensitiveSummaryJSON(t *testing.T) {
	all := report.SensitiveSummary{Column: "d", MinDistinct: 3, MinEntropyL: 2.5, MaxEMD: 0.25, Distance: "equal", MaxGain: 0}
	for _, set := range []report.Measures{report.MeasureDistinct, report.MeasureEntropy, report.MeasureEMD, report.MeasureGain, report.MeasureDistinct | report.MeasureGain} {
		s := all
		s.Measures = set
		data, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var keys map[string]any
		if err := json.Unmarshal(data, &keys); err != nil {
			t.Fatal(err)
		}
		for key, m := range map[string]report.Measures{"min_distinct_l": report.MeasureDistinct, "min_entropy_l": report.MeasureEntropy, "max_emd": report.MeasureEMD, "max_gain": report.MeasureGain} {
			if _, ok := keys[key]; ok != set.Has(m) {
				t.Errorf("measures %b: %s in %s: %v", set, key, data, ok)
			}
		}
		var back report.SensitiveSummary
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatal(err)
		}
		if again, _ := json.Marshal(back); !bytes.Equal(again, data) || back.Measures != set {
			t.Errorf("measures %b: %s read back as %s (%b)", set, data, again, back.Measures)
		}
	}
}

// lineOf is the first line of text that starts with prefix ("" when none).
func lineOf(text, prefix string) string {
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, prefix) {
			return line
		}
	}
	return ""
}

// readTestFile is the content of path.
func readTestFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
