package release

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"sanitizer/internal/testfiles"
	"sanitizer/job"
)

// TestReleaseObjectiveOptions: the release passes search.gs-factor and, for ncp, the
// numeric quasi-identifiers' values on to the search. ncp on the hospital sample
// (integer age, date admitted) reports as the objective's value the NCP the verifier
// measures from the written file; loss at gs-factor 1 (only suppression counts)
// chooses a node at least as general as at 0.5 and reports a different value than
// the arithmetic loss it measures.
func TestReleaseObjectiveOptions(t *testing.T) {
	modelsOnly(t)
	base, in, dir := hospitalFixture(t, 3000)
	raw, err := os.ReadFile(base.File)
	if err != nil {
		t.Fatal(err)
	}
	run := func(search string) (value, ncp, loss float64, node []int) {
		t.Helper()
		cfg := loadConfigText(t, testfiles.Replace(t, string(raw), "search: {algorithm: optimal, metric: loss}", search))
		rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: filepath.Join(dir, "r.csv"), Force: true})
		if err != nil {
			t.Fatalf("%s: %v", search, err)
		}
		return rep.Metric.Value, rep.Utility.NCP, rep.Utility.Loss, nodeOf(rep)
	}
	v, ncp, _, node := run("search: {metric: ncp}")
	if math.Abs(v-ncp) > 1e-6 {
		t.Errorf("ncp: the search's value %.9f, the measured NCP %.9f (node %v)", v, ncp, node)
	}
	_, _, _, half := run("search: {metric: loss, gs-factor: 0.5}")
	v1, _, loss1, one := run("search: {metric: loss, gs-factor: 1}")
	sum := func(n []int) (s int) {
		for _, l := range n {
			s += l
		}
		return s
	}
	if sum(one) < sum(half) || v1 == loss1 {
		t.Errorf("gs-factor 1: node %v (value %g, measured loss %g); at 0.5 %v", one, v1, loss1, half)
	}
	t.Logf("ncp node %v value %.6f; loss node at 0.5 %v, at 1 %v (value %.6f)", node, v, half, one, v1)
}
