package release

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
)

// TestReleaseLevelBounds: search.min-levels and max-levels bound the release's node,
// which differs from the unbounded one, and check passes it; a bound above a
// hierarchy's top is exit 2 naming the key; bounds no node within meets are exit 3.
func TestReleaseLevelBounds(t *testing.T) {
	modelsOnly(t)
	base, in, dir := hospitalFixture(t, 3000)
	raw, err := os.ReadFile(base.File)
	if err != nil {
		t.Fatal(err)
	}
	run := func(search string) (map[string]int, error) {
		cfg := loadConfigText(t, testfiles.Replace(t, string(raw), "search: {algorithm: optimal, metric: loss}", search))
		out := filepath.Join(dir, "r.csv")
		rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out, Force: true})
		if err != nil {
			return nil, err
		}
		if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
			t.Errorf("%s: check: %v", search, err)
		}
		node := map[string]int{}
		for _, n := range rep.Node {
			node[n.Column] = n.Level
		}
		return node, nil
	}
	free, err := run("search: {metric: loss}")
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := free["age"]+1, free["zip"]-1
	bounded, err := run("search: {metric: loss, min-levels: {age: " + itoa(lo) + "}, max-levels: {zip: " + itoa(hi) + "}}")
	if err != nil {
		t.Fatal(err)
	}
	if bounded["age"] < lo || bounded["zip"] > hi {
		t.Errorf("bounded node %v, unbounded %v: age at least %d, zip at most %d", bounded, free, lo, hi)
	}
	if _, err := run("search: {max-levels: {sex: 9}}"); !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "search.max-levels.sex: 9 is above the hierarchy's top level") {
		t.Errorf("a bound above the top: %v", err)
	}
	if _, err := run("search: {max-levels: {age: 0, zip: 0, admitted: 0, sex: 0}}"); !errors.Is(err, fault.ErrUnattainable) {
		t.Errorf("bounds no node meets: %v", err)
	}
	t.Logf("unbounded %v, bounded %v", free, bounded)
}
