package release

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/report"
)

// TestRiskAnalysis: sanitize risk's measures of an input equal what the test counts
// from the input's strings, for all the quasi-identifiers, each alone and each pair;
// with a release, its measures equal the count of the written file.
func TestRiskAnalysis(t *testing.T) {
	modelsOnly(t)
	rows := 6000
	if testing.Short() {
		rows = 3000 // the race run
	}
	cfg, in, dir := hospitalFixture(t, rows)
	quasi := hospitalQuasi
	a, err := Risk(context.Background(), cfg, job.Options{Input: in})
	if err != nil {
		t.Fatal(err)
	}
	checkMeasures(t, "input", a.Risk.Input, releasedSizes(t, in, ',', quasi))
	if len(a.Risk.QuasiIdentifiers) != 4+6 || a.Release != nil || a.Risk.Release != nil {
		t.Fatalf("%d quasi-identifier sets, release %v", len(a.Risk.QuasiIdentifiers), a.Release)
	}
	for _, q := range a.Risk.QuasiIdentifiers {
		sizes := releasedSizes(t, in, ',', q.Columns)
		var n, same float64
		for _, s := range sizes {
			n += float64(s)
			same += float64(s) * float64(s-1)
		}
		if d, s := float64(len(sizes))/n, 1-same/(n*(n-1)); !near(q.Distinction, d) || !near(q.Separation, s) {
			t.Errorf("%v: distinction %g, separation %g; counted %g, %g", q.Columns, q.Distinction, q.Separation, d, s)
		}
	}
	out := filepath.Join(dir, "r.csv")
	if _, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
		t.Fatal(err)
	}
	a, err = Risk(context.Background(), cfg, job.Options{Input: in, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	if a.Release == nil || a.Risk.Release == nil {
		t.Fatal("no release measured")
	}
	checkMeasures(t, "release", *a.Risk.Release, releasedSizes(t, out, ',', quasi))
}

func near(a, b float64) bool { return a == b || (a-b < 1e-12 && b-a < 1e-12) }

// checkMeasures compares the prosecutor measures with the class sizes counted.
func checkMeasures(t *testing.T, what string, m report.RiskMeasures, sizes []int64) {
	t.Helper()
	var records int64
	for _, s := range sizes {
		records += s
	}
	if m.Records != records || m.Classes != int64(len(sizes)) || m.HighestRisk != 1/float64(slices.Min(sizes)) ||
		!near(m.AverageRisk, float64(len(sizes))/float64(records)) {
		t.Errorf("%s: %d records, %d classes, highest %g, average %g; counted %d records, %d classes, smallest %d",
			what, m.Records, m.Classes, m.HighestRisk, m.AverageRisk, records, len(sizes), slices.Min(sizes))
	}
}

// TestRiskReleaseMissesModels: a release that misses the configuration's risk models
// is exit 3, and the report (JSON here) is still written with the verdicts; an
// existing report is refused without force before anything is read.
func TestRiskReleaseMissesModels(t *testing.T) {
	modelsOnly(t)
	cfg, in, dir := hospitalFixture(t, 4000)
	out := filepath.Join(dir, "r.csv")
	if _, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(cfg.File)
	if err != nil {
		t.Fatal(err)
	}
	strict := loadConfigText(t, testfiles.Replace(t, string(raw), "privacy: {k: 5, suppression: 0.05}",
		"privacy: {k: 5, suppression: 0.05, average-risk: 0.001, highest-risk: 0.5}\nrisk: {population: 100000}"))
	rep := filepath.Join(dir, "risk.json")
	a, err := Risk(context.Background(), strict, job.Options{Input: in, Output: out, Report: rep})
	if !errors.Is(err, fault.ErrUnattainable) || a == nil {
		t.Fatalf("got %v, want the models unmet", err)
	}
	var back report.RiskAnalysis
	data, err := os.ReadFile(rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Risk.Models) != 2 || back.Risk.Models[0].Model != "highest-risk" || !back.Risk.Models[0].Holds ||
		back.Risk.Models[1].Model != "average-risk" || back.Risk.Models[1].Holds || back.Risk.Population == nil {
		t.Errorf("models %+v, population %+v", back.Risk.Models, back.Risk.Population)
	}
	if _, err := Risk(context.Background(), strict, job.Options{Input: in, Report: rep}); !errors.Is(err, fault.ErrBadInput) {
		t.Errorf("an existing report: %v, want bad input", err)
	}
	if _, err := Risk(context.Background(), strict, job.Options{Input: in, Report: rep, Force: true}); err != nil {
		t.Errorf("an existing report with force: %v", err)
	}
}

// TestRiskNotThisRelease: a release of another input (more records than this one) is
// bad input naming the release, and no report is written.
func TestRiskNotThisRelease(t *testing.T) {
	cfg, in, dir := hospitalFixture(t, 3000)
	out := filepath.Join(dir, "r.csv")
	if _, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	small := filepath.Join(dir, "small.csv")
	lines := strings.SplitAfter(string(data), "\n")
	if err := os.WriteFile(small, []byte(strings.Join(lines[:1001], "")), 0o600); err != nil {
		t.Fatal(err)
	}
	rep := filepath.Join(dir, "risk.html")
	_, err = Risk(context.Background(), cfg, job.Options{Input: small, Output: out, Report: rep})
	if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "not a release of") {
		t.Fatalf("got %v, want bad input: not a release of the input", err)
	}
	if _, err := os.Stat(rep); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("report written: %v", err)
	}
}

// TestReleaseRiskLimits: a highest risk below what any class can meet is exit 3 naming
// it; a population smaller than the input is bad input before anything is written.
func TestReleaseRiskLimits(t *testing.T) {
	base, in, dir := hospitalFixture(t, 2000)
	raw, err := os.ReadFile(base.File)
	if err != nil {
		t.Fatal(err)
	}
	for i, tt := range []struct {
		privacy string
		kind    error
		want    string
	}{
		{"privacy: {k: 2, highest-risk: 1e-20}", fault.ErrUnattainable, "privacy.highest-risk 1e-20"},
		{"privacy: {k: 2, highest-risk: 0.0004}", fault.ErrUnattainable, "k=2500: the smallest class"},
		{"privacy: {k: 2}\nrisk: {population: 1500}", fault.ErrBadInput, "risk.population: 1500 is fewer than the input's 2000 records"},
		{"privacy: {k: 2}\nrisk: {sampling-fraction: 1e-9}", fault.ErrBadInput, "risk.sampling-fraction: 1e-09 of the input's 2000 records is a population of 2e+12 records, more than the 1000000000000"},
		{"privacy: {k: 2, population-uniqueness: {max: 0.5, model: pitman}}\nrisk: {sampling-fraction: 1e-9}", fault.ErrBadInput, "risk.sampling-fraction"},
	} {
		cfg := loadConfigText(t, testfiles.Replace(t, string(raw), "privacy: {k: 5, suppression: 0.05}", tt.privacy))
		out := filepath.Join(dir, fmt.Sprintf("r%d.csv", i))
		var stages []job.Stage
		_, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out, AtStage: func(s job.Stage) { stages = append(stages, s) }})
		if slices.Contains(stages, job.StageWrite) {
			t.Errorf("%s: the run reached the write stage (%v) before failing", tt.privacy, stages)
		}
		if !errors.Is(err, tt.kind) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want %v naming %q", tt.privacy, err, tt.kind, tt.want)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: %s written", tt.privacy, out)
		}
	}
}
