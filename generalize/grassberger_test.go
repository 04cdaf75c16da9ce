package generalize

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"sanitizer/diversity"
)

// oracleGrassberger is entropy l-diversity by Grassberger's estimator, written from
// his recursion G(1) = −γ − ln 2, G(2m) = G(2m+1) = G(2m−1) + 2/(2m−1) rather than the
// digamma function the package uses.
func oracleGrassberger(l float64) func(map[string]int) bool {
	return func(h map[string]int) bool {
		n, s := oracleGSum(h)
		return math.Log(float64(n))-s/float64(n) >= math.Log(l)-1e-12
	}
}

// oracleGSum is a class's records N and Σ nᵢ·G(nᵢ) over its histogram h.
func oracleGSum(h map[string]int) (n int, s float64) {
	for _, c := range h {
		n += c
		s += float64(c) * oracleG(c)
	}
	return n, s
}

// oracleG is G(n) by Grassberger's recursion G(1) = −γ − ln 2,
// G(2m) = G(2m+1) = G(2m−1) + 2/(2m−1).
func oracleG(n int) float64 {
	v := -0.5772156649015329 - math.Ln2
	for m := 2; m <= n; m += 2 {
		v += 2 / float64(m-1)
	}
	return v
}

// oracleGrassbergerARX is entropy l-diversity as ARX decides it with Grassberger's
// estimator (EntropyLDiversity.isAnonymous): at least ⌈l⌉ values, and
// Σ nᵢ·G(nᵢ) ≤ N·(G(N) − ln l), G from the recursion as oracleGrassberger's.
func oracleGrassbergerARX(l float64) func(map[string]int) bool {
	return func(h map[string]int) bool {
		n, s := oracleGSum(h)
		return len(h) >= int(math.Ceil(l)) && s <= float64(n)*(oracleG(n)-math.Log(l))+1e-9
	}
}

// TestSearchRandomGrassbergerMatchesExhaustive: entropy l-diversity by Grassberger's
// estimator, the paper's and ARX's (every other trial), against the exhaustive optimum
// on random tables, with and without suppression (the search treats it as not
// monotone either way).
func TestSearchRandomGrassbergerMatchesExhaustive(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 5))
	const trials = 120
	binding := 0
	for trial := range trials {
		n := 20 + rng.IntN(200)
		tab, raw, hier := randomTable(rng, n, 1+rng.IntN(3))
		sensitive, sens := skewedSensitive(rng, n, 2+rng.IntN(5))
		tab.Sensitive = []Sensitive{sensitive}
		k := 1 + rng.IntN(4)
		maxSupp := 0
		if rng.IntN(3) > 0 {
			maxSupp = rng.IntN(n/4 + 1)
		}
		l := 1.5 + 4*rng.Float64()
		workers := 1 + rng.IntN(3)
		est, holds := diversity.Grassberger, oracleGrassberger(l)
		if trial%2 == 1 { // ARX's rule on every other trial
			est, holds = diversity.GrassbergerARX, oracleGrassbergerARX(l)
		}
		t.Run(fmt.Sprintf("trial%d/%s/n=%d/k=%d/supp=%d/l=%.2f", trial, est, n, k, maxSupp, l), func(t *testing.T) {
			o := newOracle(raw, hier)
			o.sens = [][]string{sens}
			b, _ := matchOracle(t, o, tab, oracleQuery{k: k, maxSupp: maxSupp, metric: MetricLoss, holds: first(holds)},
				Options{K: k, MaxSuppressed: maxSupp, Workers: workers, Diversity: []Diversity{{0, diversity.Model{Variant: diversity.Entropy, L: l, Estimator: est}}}})
			if b {
				binding++
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
	for _, est := range []diversity.Estimator{diversity.Shannon, diversity.Grassberger, diversity.GrassbergerARX} {
		s, err := prepareSearch(tab, tab, tab.Rows, Options{K: 2, Diversity: []Diversity{{0, diversity.Model{Variant: diversity.Entropy, L: 1.5, Estimator: est}}}})
		if err != nil {
			t.Fatal(err)
		}
		if want := est == diversity.Shannon; s.monotone != want {
			t.Errorf("%s without suppression: monotone %v, want %v", est, s.monotone, want)
		}
	}
}
