package generalize

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"sanitizer/diversity"
	"sanitizer/schema"
)

// oracleGrassberger is entropy l-diversity by Grassberger's estimator, written from
// his recursion G(1) = −γ − ln 2, G(2m) = G(2m+1) = G(2m−1) + 2/(2m−1) rather than the
// digamma function the package uses.
func oracleGrassberger(l float64) func(map[string]int) bool {
	g := func(n int) float64 {
		v := -0.5772156649015329 - math.Ln2
		for m := 2; m <= n; m += 2 {
			v += 2 / float64(m-1)
		}
		return v
	}
	return func(h map[string]int) bool {
		n, s := 0, 0.0
		for _, c := range h {
			n += c
			s += float64(c) * g(c)
		}
		return math.Log(float64(n))-s/float64(n) >= math.Log(l)-1e-12
	}
}

// TestSearchRandomGrassbergerMatchesExhaustive: entropy l-diversity by Grassberger's
// estimator against the exhaustive optimum on random tables, with and without
// suppression (the search treats it as not monotone either way).
func TestSearchRandomGrassbergerMatchesExhaustive(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 5))
	const trials = 120
	binding := 0
	for trial := range trials {
		n := 20 + rng.IntN(200)
		tab, raw, hier := randomTable(rng, n, 1+rng.IntN(3))
		values := 2 + rng.IntN(5)
		codes := NewCodes(n, values)
		sens := make([]string, n)
		for r := range n {
			u := rng.Float64()
			v := int(u * u * float64(values))
			codes.Set(r, int32(v))
			sens[r] = fmt.Sprintf("s%d", v)
		}
		tab.Sensitive = []Sensitive{{Name: "s", Values: values, Codes: codes}}
		k := 1 + rng.IntN(4)
		maxSupp := 0
		if rng.IntN(3) > 0 {
			maxSupp = rng.IntN(n/4 + 1)
		}
		l := 1.5 + 4*rng.Float64()
		workers := 1 + rng.IntN(3)
		t.Run(fmt.Sprintf("trial%d/n=%d/k=%d/supp=%d/l=%.2f", trial, n, k, maxSupp, l), func(t *testing.T) {
			o := newOracle(raw, hier)
			o.sens = [][]string{sens}
			want := o.bestMany(t, []oracleQuery{{k: k, maxSupp: maxSupp, metric: MetricLoss, holds: first(oracleGrassberger(l))}, {k: k, maxSupp: maxSupp, metric: MetricLoss}})
			got, err := Search(context.Background(), tab, Options{K: k, MaxSuppressed: maxSupp, Workers: workers,
				Diversity: []Diversity{{0, diversity.Model{Variant: diversity.Entropy, L: l, Estimator: diversity.Grassberger}}}})
			if want[1] != nil && (want[0] == nil || !slices.Equal(want[0].node, want[1].node)) {
				binding++
			}
			if want[0] == nil {
				if !errors.Is(err, schema.ErrUnattainable) {
					t.Fatalf("want unattainable, got %v, %v", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Levels, want[0].node) || got.Suppressed != want[0].suppressed {
				t.Fatalf("search: node %v, %d suppressed; exhaustive: node %v, %d suppressed", got.Levels, got.Suppressed, want[0].node, want[0].suppressed)
			}
		})
	}
	t.Logf("Grassberger's entropy l-diversity changes the k-only optimum in %d of %d trials", binding, trials)
	if binding < trials/5 {
		t.Errorf("only %d binding trials: the test checks too little", binding)
	}
}

// TestGrassbergerNotMonotone: with Grassberger's estimator the search tags by the
// monotone part only, even without suppression (no union property is known for it).
func TestGrassbergerNotMonotone(t *testing.T) {
	tab, _, _ := randomTable(rand.New(rand.NewPCG(2, 2)), 40, 2)
	tab.Sensitive = []Sensitive{{Name: "s", Values: 2, Codes: NewCodes(40, 2)}}
	for _, est := range []string{diversity.Shannon, diversity.Grassberger} {
		s, err := prepareSearch(tab, tab, tab.Rows, Options{K: 2, Diversity: []Diversity{{0, diversity.Model{Variant: diversity.Entropy, L: 1.5, Estimator: est}}}})
		if err != nil {
			t.Fatal(err)
		}
		if want := est == diversity.Shannon; s.monotone != want {
			t.Errorf("%s without suppression: monotone %v, want %v", est, s.monotone, want)
		}
	}
}
