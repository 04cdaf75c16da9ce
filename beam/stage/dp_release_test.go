package stage

import (
	"context"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/release"
	"sanitizer/report"
	"sanitizer/schema"
)

// TestReleaseDPOnPrism: a release under privacy.differential-privacy on Beam (its node
// searched) is decided on this machine and written by the workers, part by part: the
// release is verified against the run's sample, its spend charged to the ledger, and
// the CLI's check passes the folder with the report; Release, which searches the
// workers' class tables, refuses the configuration. The search takes one step, so that
// its node is the top or one level below: deeper, every class may hold fewer than k
// drawn records (k = 74 of some 1,900 drawn) and the release be empty, as it may.
func TestReleaseDPOnPrism(t *testing.T) {
	cfgPath, _, parts := seriesNights(t, []int{3000}, func(cfg string) string {
		cfg = testfiles.Replace(t, cfg, "  k: 5\n  suppression: 0.05\n  l-diversity: {column: diagnosis, variant: distinct, l: 3}\n",
			"  differential-privacy: {epsilon: 2, delta: 1e-6, search: {epsilon: 1, steps: 1}}\n")
		cfg = testfiles.Replace(t, cfg, "search: {algorithm: optimal, metric: loss}\n", "search: {algorithm: optimal, metric: precision}\ndp: {epsilon-total: 3, delta-total: 1e-5}\n")
		cfg = testfiles.Replace(t, cfg, "diagnosis:  {role: sensitive, hierarchy:", "diagnosis:  {role: quasi, hierarchy:") // no column as it is
		cfg = testfiles.Replace(t, cfg, "insurance:  {role: insensitive}", "insurance:  {role: identifier}")
		return testfiles.Replace(t, cfg, "series: {removals: retire, key-file: ", "# series: {removals: retire, key-file: ")
	})
	j, err := NewJob(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if !j.DifferentiallyPrivate() {
		t.Fatal("the job does not say it is differentially private")
	}
	dir := t.TempDir()
	out, rp, ledger := filepath.Join(dir, "out")+"/", filepath.Join(dir, "report.json"), filepath.Join(dir, "ledger.json")
	rep, err := ReleaseDP(context.Background(), j, job.Options{Input: parts[0], Output: out, Reports: []string{rp}, Ledger: ledger}, onPrism)
	if err != nil {
		t.Fatal(err)
	}
	d := rep.DifferentialPrivacy
	if rep.Tool != "sanitize-beam" || d == nil || d.Chosen != report.DPSearched || d.Ledger == nil || d.Ledger.EpsilonSpent != 2 || rep.Output.Rows != rep.Verified.Rows {
		t.Fatalf("the report: tool %q, differential privacy %+v, %d records written, %d verified", rep.Tool, d, rep.Output.Rows, rep.Verified.Rows)
	}
	if names := testfiles.Names(t, out); len(names) != 3 {
		t.Errorf("the release holds %q, want a part per input part", names)
	}
	recs, err := csv.NewReader(strings.NewReader(strings.Join(orderedRows(t, out), "\n"))).ReadAll()
	if err != nil || len(recs) < 2 || !slices.IsSortedFunc(recs[1:], slices.Compare) {
		t.Errorf("Beam's parts hold %d records (%v), not in the order of their values (node %v, k %d, %d of %d records left out)", len(recs)-1, err, rep.Node, d.K, rep.Suppressed, rep.Input.Rows)
	}
	cfg, err := schema.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := release.Check(context.Background(), cfg, job.Options{Input: parts[0], Output: out, Report: rp}); err != nil {
		t.Errorf("the CLI's check of Beam's release: %v", err)
	}
	_, err = Release(context.Background(), j, job.Options{Input: parts[0], Output: filepath.Join(dir, "other") + "/"}, onPrism)
	if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "privacy.differential-privacy") {
		t.Errorf("Release of a differentially private configuration: %v, want bad input", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "other")); !os.IsNotExist(err) {
		t.Errorf("the refused release wrote: %v", err)
	}
}
