package generalize

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"sanitizer/fault"
	"sanitizer/schema"
)

// TestLevelBoundsMatchExhaustive: with minimum and maximum levels, the search returns
// the exhaustive optimum among the nodes within the bounds (loss and DM, with and
// without suppression), or none when no node within them qualifies.
func TestLevelBoundsMatchExhaustive(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 53))
	trials, differs := 150, 0
	for trial := range trials {
		n := 30 + rng.IntN(250)
		q := 1 + rng.IntN(3)
		tab, raw, hier := randomTableOf(rng, n, q, 3, 16, func(u float64) float64 { return u * u })
		k := 2 + rng.IntN(6)
		maxSupp := 0
		if rng.IntN(2) == 0 {
			maxSupp = rng.IntN(n/4 + 1)
		}
		lo, hi := make([]int, q), make([]int, q)
		for i, c := range tab.Columns {
			top := c.Hierarchy.Height() - 1
			lo[i] = rng.IntN(top + 1)
			hi[i] = lo[i] + rng.IntN(top-lo[i]+1)
		}
		metric := []schema.Metric{MetricLoss, MetricDiscernibility}[rng.IntN(2)]
		o := newOracle(raw, hier)
		all := o.bestMany(t, []oracleQuery{{k: k, maxSupp: maxSupp, metric: metric, all: true}})[0]
		var want *oracleResult
		if all != nil {
			for _, r := range all.nodes {
				in := true
				for i, l := range r.node {
					in = in && l >= lo[i] && l <= hi[i]
				}
				if in && (want == nil || oracleBetter(r, want)) {
					want = r
				}
			}
			if want == nil || !slices.Equal(want.node, all.node) {
				differs++
			}
		}
		t.Run(fmt.Sprintf("trial%d/%s/k=%d/supp=%d/min=%v/max=%v", trial, metric, k, maxSupp, lo, hi), func(t *testing.T) {
			got, err := Search(context.Background(), tab, Options{K: k, MaxSuppressed: maxSupp, Metric: metric, MinLevels: lo, MaxLevels: hi, Workers: 1 + rng.IntN(2)})
			if want == nil {
				if !errors.Is(err, fault.ErrUnattainable) {
					t.Fatalf("want unattainable, got %v, %v", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Levels, want.node) || got.Suppressed != want.suppressed {
				t.Fatalf("search chose %v (%d suppressed), the optimum within the bounds %v (%d)", got.Levels, got.Suppressed, want.node, want.suppressed)
			}
		})
	}
	if differs < trials/4 {
		t.Errorf("the bounds change the optimum in %d of %d trials only", differs, trials)
	}
	tab, _, _ := randomTableOf(rng, 50, 2, 3, 8, func(u float64) float64 { return u })
	for _, opt := range []Options{
		{K: 2, MinLevels: []int{0}},
		{K: 2, MaxLevels: []int{0, 99}},
		{K: 2, MinLevels: []int{1, 1}, MaxLevels: []int{0, 1}},
	} {
		if _, err := Search(context.Background(), tab, opt); err == nil {
			t.Errorf("%+v accepted", opt)
		}
	}
}
