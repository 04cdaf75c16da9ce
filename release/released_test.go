package release

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/verify"
)

// TestReleasedColumnGivesAway: on the hospital sample a ward treats one group of
// diagnoses, so ward, released as it is beside a 3-diverse diagnosis, gives the
// diagnosis away; insurance does not. The release's report and Check both name ward,
// with the figures a plain recount of the written file gives; with
// privacy.released-columns.check error the release is refused (unattainable, nothing
// written, no value in the message) and Check fails the earlier release. Under both
// algorithms.
func TestReleasedColumnGivesAway(t *testing.T) {
	cfg, in, dir := hospitalFixture(t, 4000)
	raw, err := os.ReadFile(cfg.File)
	if err != nil {
		t.Fatal(err)
	}
	for _, algorithm := range []string{"optimal", "mondrian"} {
		t.Run(algorithm, func(t *testing.T) {
			text := testfiles.Replace(t, string(raw), "privacy: {k: 5, suppression: 0.05}", "privacy: {k: 5, suppression: 0.05, l-diversity: {column: diagnosis, variant: distinct, l: 3}}")
			text = testfiles.Replace(t, text, "algorithm: optimal", "algorithm: "+algorithm)
			warn := loadConfigText(t, text)
			out := filepath.Join(dir, algorithm+".csv")
			rep, err := Release(context.Background(), warn, job.Options{Input: in, Output: out})
			if err != nil {
				t.Fatal(err)
			}
			failing := recountFailingWards(t, out, 3)
			byColumn := map[string]int{}
			for _, c := range rep.Verified.Released {
				if c.Sensitive != "diagnosis" {
					t.Errorf("measured against %q", c.Sensitive)
				}
				byColumn[c.Column] = c.FailingValues
			}
			if byColumn["ward"] == 0 || byColumn["ward"] != failing || byColumn["insurance"] != 0 {
				t.Fatalf("report: failing values by column %v; a recount of the file finds %d failing wards", byColumn, failing)
			}
			if _, ok := byColumn["diagnosis"]; ok {
				t.Error("diagnosis measured against itself")
			}
			m, err := Check(context.Background(), warn, job.Options{Input: in, Output: out})
			if err != nil {
				t.Fatalf("check (warn): %v", err)
			}
			if i := slices.IndexFunc(m.Released, func(r verify.ReleasedMeasured) bool { return r.Column == "ward" }); i < 0 || m.Released[i].FailingGroups != failing {
				t.Fatalf("check measured %+v", m.Released)
			}

			refuse := loadConfigText(t, testfiles.Replace(t, text, "l: 3}}", "l: 3}, released-columns: {check: error}}"))
			refused := filepath.Join(dir, algorithm+"-refused.csv")
			_, err = Release(context.Background(), refuse, job.Options{Input: in, Output: refused, Report: refused + ".json"})
			if !errors.Is(err, fault.ErrUnattainable) || !strings.Contains(err.Error(), `"ward"`) || strings.Contains(err.Error(), `"insurance"`) {
				t.Fatalf("release with check error: %v", err)
			}
			noValueIn(t, err.Error(), in, "ward", "diagnosis")
			if left, _ := filepath.Glob(refused + "*"); len(left) > 0 {
				t.Errorf("a refused release left %v", left)
			}
			if _, err := Check(context.Background(), refuse, job.Options{Input: in, Output: out}); !errors.Is(err, fault.ErrUnattainable) || !strings.Contains(err.Error(), `"ward"`) {
				t.Fatalf("check with check error: %v", err)
			}
		})
	}
}

// recountFailingWards counts, in the written CSV release, the wards whose records hold
// fewer than l distinct diagnoses.
func recountFailingWards(t *testing.T, path string, l int) int {
	t.Helper()
	header, recs := testfiles.ReadCSV(t, path)
	if len(recs) == 0 {
		t.Fatalf("%s: no record", path)
	}
	ward, dx := slices.Index(header, "ward"), slices.Index(header, "diagnosis")
	held := map[string]map[string]bool{}
	for _, r := range recs {
		if held[r[ward]] == nil {
			held[r[ward]] = map[string]bool{}
		}
		held[r[ward]][r[dx]] = true
	}
	n := 0
	for _, d := range held {
		if len(d) < l {
			n++
		}
	}
	return n
}

// noValueIn fails when msg holds any value of the named columns of the CSV input.
func noValueIn(t *testing.T, msg, input string, cols ...string) {
	t.Helper()
	header, recs := testfiles.ReadCSV(t, input)
	for _, c := range cols {
		at := slices.Index(header, c)
		for _, r := range recs {
			if r[at] != "" && strings.Contains(msg, r[at]) {
				t.Fatalf("the message quotes a value of %s: %s", c, msg)
			}
		}
	}
}
