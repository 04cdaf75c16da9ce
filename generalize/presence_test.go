package generalize

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"sanitizer/closeness"
	"sanitizer/diversity"
	"sanitizer/fault"
)

// popOracle is an exhaustive evaluation of every node for a research subset of a
// population, written from the definitions over the records' strings: it shares
// nothing with the search but the hierarchies' rows.
type popOracle struct {
	rows   [][]string   // the population's quasi-identifier values
	in     []bool       // whether a record is in the subset
	sens   []string     // the subset records' sensitive value, or nil
	hier   [][][]string // per column: its hierarchy's rows (leaf first, top last)
	levels []map[string][]string
	under  []map[string]int // "level\x00value" → leaves under it
}

func newPopOracle(rows [][]string, in []bool, hier [][][]string) *popOracle {
	o := &popOracle{rows: rows, in: in, hier: hier}
	for _, h := range hier {
		lv := map[string][]string{}
		un := map[string]int{}
		for _, r := range h {
			lv[r[0]] = r
			for l, v := range r {
				un[fmt.Sprint(l)+"\x00"+v]++
			}
		}
		o.levels = append(o.levels, lv)
		o.under = append(o.under, un)
	}
	return o
}

type popQuery struct {
	k, maxSupp         int
	deltaMin, deltaMax float64
	kmap               int
	l                  int     // distinct l-diversity (0: none)
	t                  float64 // t-closeness, equal distance (0: none)
	dm                 bool    // discernibility instead of loss
	// profit, when not nil, is the journalist's profitability with an attack: a class
	// fails when its records' payout, the chance 1/its population count, is not
	// positive.
	profit *oracleGame
}

type popBest struct {
	node       []int
	value      *big.Rat
	suppressed int
}

// best returns the node of least loss that meets q, or nil.
func (o *popOracle) best(q popQuery) *popBest {
	nq := len(o.hier)
	var best *popBest
	node := make([]int, nq)
	// the subset's sensitive distribution, t-closeness's reference
	ref := map[string]int{}
	subset := 0
	for r, in := range o.in {
		if in {
			subset++
			if o.sens != nil {
				ref[o.sens[r]]++
			}
		}
	}
	var walk func(i int)
	walk = func(i int) {
		if i < nq {
			for l := range len(o.hier[i][0]) {
				node[i] = l
				walk(i + 1)
			}
			return
		}
		key := func(r int) string {
			parts := make([]string, nq)
			for c := range nq {
				parts[c] = o.levels[c][o.rows[r][c]][node[c]]
			}
			return strings.Join(parts, "\x1f")
		}
		pop, count := map[string]int{}, map[string]int{}
		hist := map[string]map[string]int{}
		for r := range o.rows {
			k := key(r)
			pop[k]++
			if o.in[r] {
				count[k]++
				if o.sens != nil {
					if hist[k] == nil {
						hist[k] = map[string]int{}
					}
					hist[k][o.sens[r]]++
				}
			}
		}
		fails := map[string]bool{}
		supp := 0
		for k, c := range count {
			f := c < q.k
			if q.kmap > 0 && pop[k] < q.kmap {
				f = true
			}
			if q.deltaMax > 0 {
				d := float64(c) / float64(pop[k])
				if d < q.deltaMin || d > q.deltaMax {
					f = true
				}
			}
			if q.profit != nil && !q.profit.pays(o.il(node, k), pop[k]) {
				f = true
			}
			if q.l > 0 && len(hist[k]) < q.l {
				f = true
			}
			if q.t > 0 {
				// equal ground distance: half the L1 distance between the shares
				var emd float64
				for v, rc := range ref {
					p := float64(hist[k][v]) / float64(c)
					emd += abs(p - float64(rc)/float64(subset))
				}
				if emd/2 > q.t+1e-12 {
					f = true
				}
			}
			if f {
				fails[k] = true
				supp += c
			}
		}
		if supp > q.maxSupp {
			return
		}
		v := new(big.Rat)
		if q.dm { // Σ|C|² over published classes + suppressed × records
			var dm int64
			for k, c := range count {
				if fails[k] {
					dm += int64(c) * int64(subset)
				} else {
					dm += int64(c) * int64(c)
				}
			}
			cand := &popBest{node: slices.Clone(node), value: new(big.Rat).SetInt64(dm), suppressed: supp}
			if best == nil || oracleBetter(&oracleResult{node: cand.node, value: cand.value}, &oracleResult{node: best.node, value: best.value}) {
				best = cand
			}
			return
		}
		for r := range o.rows {
			if !o.in[r] {
				continue
			}
			if fails[key(r)] {
				v.Add(v, big.NewRat(int64(nq), 1))
				continue
			}
			for c := range nq {
				total := len(o.hier[c])
				if total > 1 {
					val := o.levels[c][o.rows[r][c]][node[c]]
					v.Add(v, big.NewRat(int64(o.under[c][fmt.Sprint(node[c])+"\x00"+val]-1), int64(total-1)))
				}
			}
		}
		v.Quo(v, big.NewRat(int64(subset*nq), 1))
		cand := &popBest{node: slices.Clone(node), value: v, suppressed: supp}
		if best == nil || oracleBetter(&oracleResult{node: cand.node, value: cand.value}, &oracleResult{node: best.node, value: best.value}) {
			best = cand
		}
	}
	walk(0)
	return best
}

// il is the entropy-based information loss of the class of key (its values at node
// joined by \x1f): Σ ln(leaves under its values) / Σ ln(leaves), column by column.
func (o *popOracle) il(node []int, key string) float64 {
	vals := strings.Split(key, "\x1f")
	var num, den float64
	for c := range o.hier {
		num += math.Log(float64(o.under[c][fmt.Sprint(node[c])+"\x00"+vals[c]]))
		den += math.Log(float64(len(o.hier[c])))
	}
	if den == 0 {
		return 0
	}
	return min(1, max(0, num/den))
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestPopulationModelsMatchExhaustive: on random populations and research subsets,
// the search under δ-presence and k-map (alone, together, with k, distinct
// l-diversity and t-closeness, with and without suppression) returns the exhaustive
// optimum.
func TestPopulationModelsMatchExhaustive(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 43))
	trials := 300
	if testing.Short() {
		trials = 100
	}
	binding, unattainable := 0, 0
	for trial := range trials {
		n := 30 + rng.IntN(250)
		q := 1 + rng.IntN(3)
		popTab, raw, hier := randomTableOf(rng, n, q, 3, 14, func(u float64) float64 { return u * u })
		share := 0.1 + 0.6*rng.Float64()
		in := make([]bool, n)
		var rows []int
		for r := range n {
			if rng.Float64() < share {
				in[r] = true
				rows = append(rows, r)
			}
		}
		if len(rows) == 0 {
			in[0] = true
			rows = []int{0}
		}
		qu := popQuery{k: 1 + rng.IntN(4), dm: rng.IntN(2) == 0}
		if rng.IntN(2) == 0 {
			qu.maxSupp = rng.IntN(len(rows)/3 + 1)
		}
		pop := &Population{Table: popTab}
		switch rng.IntN(4) {
		case 3: // the journalist's profitability, with k-map or alone
			cb := randomGame(rng)
			g := cb.Game()
			pop.Profitability, qu.profit = &g, gameOf(cb, true)
			if rng.IntN(3) == 0 {
				qu.kmap = 2 + rng.IntN(6)
			}
		case 0:
			qu.kmap = 2 + rng.IntN(8)
		case 1:
			qu.deltaMax = 0.3 + 0.7*rng.Float64()
			if rng.IntN(2) == 0 {
				qu.deltaMin = 0.3 * rng.Float64()
			}
		default:
			qu.kmap = 2 + rng.IntN(6)
			qu.deltaMax = 0.4 + 0.6*rng.Float64()
			qu.deltaMin = 0.2 * rng.Float64()
		}
		pop.KMap, pop.DeltaMin, pop.DeltaMax = qu.kmap, qu.deltaMin, qu.deltaMax
		if trial%2 == 1 { // the population as its class table, as a distributed engine counts it
			ct, err := CountClasses(popTab)
			if err != nil {
				t.Fatal(err)
			}
			pop.Table, pop.Classes = nil, ct
		}
		sub, err := popTab.Select(rows)
		if err != nil {
			t.Fatal(err)
		}
		o := newPopOracle(raw, in, hier)
		opt := Options{K: qu.k, MaxSuppressed: qu.maxSupp, Population: pop, Workers: 1 + rng.IntN(3)}
		if qu.dm {
			opt.Metric = MetricDiscernibility
		}
		if m := rng.IntN(4); m < 2 { // a sensitive column with l-diversity or t-closeness
			values := 2 + rng.IntN(3)
			codes := NewCodes(len(rows), values)
			o.sens = make([]string, n)
			for r := range n {
				o.sens[r] = fmt.Sprintf("s%d", rng.IntN(values))
			}
			for i, r := range rows {
				var v int
				fmt.Sscanf(o.sens[r], "s%d", &v)
				codes.Set(i, int32(v))
			}
			sub.Sensitive = []Sensitive{{Name: "s", Values: values, Codes: codes}}
			if m == 0 {
				qu.l = 2
				opt.Diversity = []Diversity{{Column: 0, Model: diversity.Model{Variant: diversity.Distinct, L: 2}}}
			} else {
				qu.t = 0.2 + 0.3*rng.Float64()
				opt.Closeness = []Closeness{{Column: 0, T: qu.t, Distance: closeness.Equal}}
			}
		}
		want := o.best(qu)
		plain := o.best(popQuery{k: qu.k, maxSupp: qu.maxSupp, l: qu.l, t: qu.t, dm: qu.dm})
		if want != nil && (plain == nil || !slices.Equal(plain.node, want.node) || plain.suppressed != want.suppressed) {
			binding++
		}
		name := fmt.Sprintf("trial%d/n=%d/subset=%d/q=%d/k=%d/supp=%d/kmap=%d/delta=[%.2f,%.2f]/profit=%v/l=%d/t=%.2f/dm=%v", trial, n, len(rows), q, qu.k, qu.maxSupp, qu.kmap, qu.deltaMin, qu.deltaMax, qu.profit != nil, qu.l, qu.t, qu.dm)
		t.Run(name, func(t *testing.T) {
			got, err := Search(context.Background(), sub, opt)
			if want == nil {
				unattainable++
				if !errors.Is(err, fault.ErrUnattainable) {
					t.Fatalf("want unattainable, got %v, %v", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Levels, want.node) || got.Suppressed != want.suppressed {
				t.Fatalf("search chose %v (%g, %d suppressed), exhaustive optimum %v (%s, %d)", got.Levels, got.Value, got.Suppressed, want.node, want.value.FloatString(9), want.suppressed)
			}
			// What the release recodes: the same classes suppressed.
			checkNodeSuppression(t, sub, opt, got.Levels, want.suppressed)
		})
	}
	t.Logf("%d trials: the population models change the optimum in %d, unattainable in %d", trials, binding, unattainable)
	if binding < trials/5 {
		t.Errorf("the population models change the optimum in %d of %d trials only: the test checks too little", binding, trials)
	}
}

// TestPopulationHandCases decides classes on both sides of each bound.
func TestPopulationHandCases(t *testing.T) {
	cases := []struct {
		name    string
		p       Population
		c, pop  int32
		wantBad bool
	}{
		{"kmap at k", Population{KMap: 5}, 1, 5, false},
		{"kmap below k", Population{KMap: 5}, 1, 4, true},
		{"delta at max", Population{DeltaMax: 0.5}, 2, 4, false},   // 2/4 = 0.5
		{"delta above max", Population{DeltaMax: 0.5}, 3, 5, true}, // 0.6
		{"delta at min", Population{DeltaMin: 0.25, DeltaMax: 1}, 1, 4, false},
		{"delta below min", Population{DeltaMin: 0.25, DeltaMax: 1}, 1, 5, true}, // 0.2
		{"delta whole population", Population{DeltaMax: 1}, 7, 7, false},
		{"delta one third", Population{DeltaMax: 1.0 / 3}, 1, 3, false},
		{"both, kmap fails", Population{KMap: 3, DeltaMax: 1}, 2, 2, true},
	}
	for _, c := range cases {
		if got := c.p.fails(c.c, c.pop); got != c.wantBad {
			t.Errorf("%s: %d of %d: fails %v, want %v", c.name, c.c, c.pop, got, c.wantBad)
		}
	}
}

// TestPopulationMonotonicity: the cases the doc of Population gives.
func TestPopulationMonotonicity(t *testing.T) {
	// δ-presence with δmin > 0: classes a (1 of 2) passes [0.4, 1]; merged with a
	// class of the population that holds no subset record (0 of 3), 1 of 5 fails.
	p := Population{DeltaMin: 0.4, DeltaMax: 1}
	if p.fails(1, 2) || !p.fails(1, 5) {
		t.Fatal("the merge that lowers the share below δmin should fail")
	}
	if p.monotone(0) {
		t.Error("δ-presence with δmin > 0 is not monotone")
	}
	if !(&Population{DeltaMax: 0.5}).monotone(0) || (&Population{DeltaMax: 0.5}).monotone(3) {
		t.Error("δ-presence with δmin = 0 is monotone without suppression only")
	}
	if !(&Population{KMap: 4}).monotone(3) {
		t.Error("k-map is monotone with suppression")
	}
}

// BenchmarkSearchAdultPopulation: the search on a 10% research subset of Adult
// against the whole table as its population, by model, beside the same search
// without the population models.
func BenchmarkSearchAdultPopulation(b *testing.B) {
	pop, _, _ := loadAdult(b)
	var rows []int
	for r := range pop.Rows {
		if (r*2654435761)%10 == 0 {
			rows = append(rows, r)
		}
	}
	sub, err := pop.Select(rows)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		p    *Population
	}{
		{"none", nil},
		{"kmap=5", &Population{Table: pop, KMap: 5}},
		{"delta=0-0.5", &Population{Table: pop, DeltaMax: 0.5}},
		{"delta=0.05-0.5", &Population{Table: pop, DeltaMin: 0.05, DeltaMax: 0.5}},
		{"both", &Population{Table: pop, KMap: 5, DeltaMin: 0.05, DeltaMax: 0.5}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var res *Result
			for b.Loop() {
				res, err = Search(context.Background(), sub, Options{K: 2, MaxSuppressed: sub.Rows / 20, Population: bc.p})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(res.Evaluated+res.MonotoneOnly), "counted")
		})
	}
}
