package generalize

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"sanitizer/diversity"
)

// oracleLikeness is β-likeness written from its definition (Cao & Karras 2012) over a
// class's histogram of raw values against the table's: every value more frequent in
// the class than in the table gains at most β relatively (enhanced: at most
// min(β, −ln of its table share)).
func oracleLikeness(table map[string]int, beta float64, enhanced bool) func(map[string]int) bool {
	n := 0
	for _, c := range table {
		n += c
	}
	return func(h map[string]int) bool {
		m := 0
		for _, c := range h {
			m += c
		}
		for v, c := range h {
			p, q := float64(c)/float64(m), float64(table[v])/float64(n)
			limit := beta
			if enhanced {
				limit = min(beta, -math.Log(q))
			}
			if p > q && (p-q)/q > limit+1e-12 {
				return false
			}
		}
		return true
	}
}

// TestSearchRandomLikenessMatchesExhaustive: β-likeness, basic and enhanced, alone and
// with distinct l-diversity, with and without suppression, against the exhaustive
// optimum on random tables; the model must change the k-only optimum often, and with
// suppression nodes must pass k and fail it.
func TestSearchRandomLikenessMatchesExhaustive(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 3))
	const trials = 150
	binding, rejected := 0, 0
	for trial := range trials {
		n := 20 + rng.IntN(200)
		tab, raw, hier := randomTable(rng, n, 1+rng.IntN(3))
		sensitive, sens := skewedSensitive(rng, n, 2+rng.IntN(5)) // skewed: rare values gain much
		tab.Sensitive = []Sensitive{sensitive}
		table := map[string]int{}
		for _, v := range sens {
			table[v]++
		}
		k := 1 + rng.IntN(4)
		maxSupp := 0
		if rng.IntN(3) > 0 {
			maxSupp = rng.IntN(n/4 + 1)
		}
		like := Likeness{Column: 0, Beta: 0.3 + 2*rng.Float64(), Enhanced: rng.IntN(2) == 0}
		holds := oracleLikeness(table, like.Beta, like.Enhanced)
		var div []Diversity
		if rng.IntN(3) == 0 {
			div = []Diversity{{0, diversity.Model{Variant: diversity.Distinct, L: 2}}}
			like2, dist2 := holds, oracleDistinct(2)
			holds = func(h map[string]int) bool { return like2(h) && dist2(h) }
		}
		workers := 1 + rng.IntN(3)
		name := fmt.Sprintf("trial%d/n=%d/k=%d/supp=%d/beta=%.2f/enhanced=%v/l=%v", trial, n, k, maxSupp, like.Beta, like.Enhanced, div != nil)
		t.Run(name, func(t *testing.T) {
			o := newOracle(raw, hier)
			o.sens = [][]string{sens}
			b, r := matchOracle(t, o, tab, oracleQuery{k: k, maxSupp: maxSupp, metric: MetricLoss, holds: first(holds)},
				Options{K: k, MaxSuppressed: maxSupp, Workers: workers, Diversity: div, Likeness: []Likeness{like}})
			if b {
				binding++
			}
			rejected += r
		})
	}
	t.Logf("β-likeness changes the k-only optimum in %d of %d trials; %d nodes passed k and failed it", binding, trials, rejected)
	if binding < trials/5 || rejected < trials/5 {
		t.Errorf("only %d binding trials, %d nodes failing after k: the test checks too little", binding, rejected)
	}
}
