package generalize

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"sanitizer/closeness"
	"sanitizer/diversity"
	"sanitizer/fault"
	"sanitizer/schema"
)

// oraclePasses is ARX's optimizeIterative written over the exhaustive oracle: the
// first pass at the oracle's optimum of all records (gs-factor pq.firstGS), then each
// pass the oracle's optimum of the records still suppressed (gs-factor pq.gs, raised
// by pq.adaption after a pass that places none), a class failing when it has fewer
// than k records or holds fails on its histogram (against the whole table's
// distribution, which holds closes over), or the risk model's enforcement takes it
// (decided on the sizes of the classes earlier passes released and the pass's). With
// cells, the passes after the first choose among the first node with some columns
// raised to their top level only. It returns the nodes that place records and, per
// record, the node that places it (−1: none); found says whether the first pass has
// a node.
func oraclePasses(t *testing.T, raw [][]string, sens []string, hier [][][]string, pq passQuery) (nodes [][]int, pass []int, found bool) {
	t.Helper()
	pass = make([]int, len(raw))
	rows := make([]int, len(raw))
	for r := range rows {
		rows[r] = r
	}
	limit := func(n int) int { return int(math.Floor(pq.share * float64(n))) }
	var released []int // the sizes of the classes placed so far
	// place runs one pass over rows: the rows it leaves, and whether it placed any.
	searched := 0
	place := func(rows []int, g *float64) ([]int, bool) {
		sub, subSens := make([][]string, len(rows)), make([]string, len(rows))
		for i, r := range rows {
			sub[i] = raw[r]
			if sens != nil {
				subSens[i] = sens[r]
			}
		}
		o := newOracle(sub, hier)
		if sens != nil {
			o.sens = [][]string{subSens}
		}
		qu := oracleQuery{k: pq.k, maxSupp: limit(len(rows)), metric: pq.metric, gs: g, holds: pq.holds}
		if pq.cells && len(nodes) > 0 {
			qu.allow = func(node []int) bool {
				for c, l := range node {
					if l != nodes[0][c] && l != len(hier[c][0])-1 {
						return false
					}
				}
				return true
			}
		}
		if pq.risk != nil {
			base := slices.Clone(released)
			qu.release = func(sizes []int) bool { return pq.risk(append(slices.Clone(base), sizes...)) }
			qu.enforce = true
		}
		best := o.bestMany(t, []oracleQuery{qu})[0]
		if best == nil {
			return rows, false
		}
		searched++
		// the classes at best's node, decided as the oracle decides them
		groups := map[string][]int{}
		for i, r := range rows {
			key := ""
			for c, v := range raw[r] {
				key += o.levels[c][v][best.node[c]] + "\x1f"
			}
			groups[key] = append(groups[key], i)
		}
		var left []int
		placed := false
		for key, members := range groups {
			h := map[string]int{}
			for _, i := range members {
				if sens != nil {
					h[subSens[i]]++
				}
			}
			bad := len(members) < pq.k || (pq.holds != nil && !pq.holds([]map[string]int{h})) || best.enforced[key]
			if !bad {
				released = append(released, len(members))
			}
			for _, i := range members {
				if bad {
					left = append(left, rows[i])
				} else {
					pass[rows[i]] = len(nodes)
					placed = true
				}
			}
		}
		if placed {
			nodes = append(nodes, best.node)
		}
		slices.Sort(left)
		return left, placed
	}
	for r := range pass {
		pass[r] = -1
	}
	rows, _ = place(rows, pq.firstGS)
	if searched == 0 {
		return nil, nil, false
	}
	ok := true
	gs := pq.gs
	for it := 0; it < pq.iterations && len(rows) >= pq.k && ok; it++ {
		g := gs
		var placed bool
		rows, placed = place(rows, &g)
		ok = placed
		if !placed && pq.adaption > 0 {
			if gs += pq.adaption; gs <= 1 {
				ok = true
			}
		}
	}
	return nodes, pass, true
}

// passQuery is what oraclePasses optimises for.
type passQuery struct {
	k            int
	share        float64
	metric       schema.Metric
	firstGS      *float64
	gs, adaption float64
	iterations   int
	holds        func([]map[string]int) bool
	cells        bool
	risk         func(sizes []int) bool // a release-wide model on all released classes' sizes (nil: none)
}

// TestLocalRecodeMatchesOracle: on random tables, with k alone, distinct l-diversity
// or t-closeness (against the whole table's distribution in every pass), at several
// suppression limits, gs-factors, adaption factors and iteration bounds, LocalRecode
// places every record at the node the exhaustive oracle's passes place it, in the
// same order of nodes.
func TestLocalRecodeMatchesOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 73))
	trials := 300
	if testing.Short() {
		trials = 100
	}
	multi, multiCells, multiRisk := 0, 0, 0
	for trial := range trials {
		n := 30 + rng.IntN(170)
		q := 1 + rng.IntN(3)
		tab, raw, hier := randomTable(rng, n, q)
		k := 2 + rng.IntN(4)
		share := []float64{0, 0.25, 0.5, 1}[rng.IntN(4)]
		gs := []float64{0.05, 0.3, 0.5}[rng.IntN(3)]
		adaption := []float64{0, 0.05, 0.25}[rng.IntN(3)]
		iterations := []int{1, 3, 100}[rng.IntN(3)]
		opt := Options{K: k, MaxSuppressed: int(math.Floor(share * float64(n))), Metric: MetricLoss, Workers: 1 + rng.IntN(2)}
		var sens []string
		var holds func([]map[string]int) bool
		if m := rng.IntN(3); m > 0 {
			values := 2 + rng.IntN(3)
			codes := NewCodes(n, values)
			sens = make([]string, n)
			ref := make([]int64, values)
			for r := range n {
				v := rng.IntN(values)
				codes.Set(r, int32(v))
				sens[r] = fmt.Sprintf("s%d", v)
				ref[v]++
			}
			tab.Sensitive = []Sensitive{{Name: "s", Values: values, Codes: codes}}
			if m == 1 {
				opt.Diversity = []Diversity{{0, diversity.Model{Variant: diversity.Distinct, L: 2}}}
				holds = first(oracleDistinct(2))
			} else {
				tt := 0.15 + 0.3*rng.Float64()
				opt.Closeness = []Closeness{{0, tt, closeness.Equal}}
				holds = first(func(h map[string]int) bool { // against the whole table's distribution
					p := make([]int64, values)
					for v, c := range h {
						p[int(v[1]-'0')] = int64(c)
					}
					return must(closeness.EqualEMD(p, ref)) <= tt
				})
			}
		}
		cells := rng.IntN(2) == 0
		var riskHolds func(sizes []int) bool
		switch rng.IntN(4) {
		case 1: // average risk: classes / records
			avg := []float64{0.2, 0.3}[rng.IntN(2)]
			opt.Risks.Average = avg
			riskHolds = func(sizes []int) bool {
				n := 0
				for _, c := range sizes {
					n += c
				}
				return n == 0 || float64(len(sizes))/float64(n) <= avg
			}
		case 2: // records at risk: classes under 4 records hold at most a tenth
			opt.Risks.AtRiskThreshold, opt.Risks.AtRiskMax = 0.25, 0.1
			riskHolds = func(sizes []int) bool {
				n, at := 0, 0
				for _, c := range sizes {
					n += c
					if c < 4 {
						at += c
					}
				}
				return n == 0 || float64(at)/float64(n) <= 0.1
			}
		}
		name := fmt.Sprintf("trial%d/n=%d/q=%d/k=%d/share=%g/gs=%g/adapt=%g/it=%d/models=%v/cells=%v/risk=%v", trial, n, q, k, share, gs, adaption, iterations, holds != nil, cells, riskHolds != nil)
		t.Run(name, func(t *testing.T) {
			pq := passQuery{k: k, share: share, metric: MetricLoss, gs: gs, adaption: adaption, iterations: iterations, holds: holds, cells: cells, risk: riskHolds}
			wantNodes, wantPass, found := oraclePasses(t, raw, sens, hier, pq)
			first, err := Search(context.Background(), tab, opt)
			if !found {
				if !errors.Is(err, fault.ErrUnattainable) {
					t.Fatalf("the oracle finds no first node; the search: %v, %v", first, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			lr := LocalRecoding{Iterations: iterations, GSFactor: gs, Adaption: adaption, Limit: func(m int) int { return int(math.Floor(share * float64(m))) }, Cells: cells}
			p, err := LocalRecode(context.Background(), tab, opt, first.Levels, lr)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(p.Nodes, wantNodes, slices.Equal[[]int]) {
				t.Fatalf("nodes %v, the oracle's %v", p.Nodes, wantNodes)
			}
			for r := range n {
				if int(p.Pass[r]) != wantPass[r] {
					t.Fatalf("record %d placed by pass %d, the oracle's %d", r, p.Pass[r], wantPass[r])
				}
			}
			checkPlacement(t, tab, p)
			checkCells(t, hier, p, cells)
			if riskHolds != nil {
				sizes := map[int32]int{}
				for _, c := range p.Class {
					if c >= 0 {
						sizes[c]++
					}
				}
				if !riskHolds(slices.Collect(maps.Values(sizes))) {
					t.Fatalf("the release's %d classes miss the risk model", len(sizes))
				}
			}
			if len(p.Nodes) > 1 {
				multi++
				if cells {
					multiCells++
				}
				if riskHolds != nil {
					multiRisk++
				}
			}
		})
	}
	t.Logf("%d of %d trials placed records at more than one node (%d with cells, %d with a risk model)", multi, trials, multiCells, multiRisk)
	if multi < trials/5 || multiCells < trials/20 || multiRisk < trials/20 {
		t.Errorf("only %d trials with a second node (%d with cells, %d with a risk model): the test checks too little", multi, multiCells, multiRisk)
	}
}

// checkCells: with cells, every node after the first is the first with some
// columns raised to their top level; Cells counts the values so raised.
func checkCells(t *testing.T, hier [][][]string, p *Placement, cells bool) {
	t.Helper()
	var want int64
	for i, node := range p.Nodes[1:] {
		for c, l := range node {
			top := len(hier[c][0]) - 1
			if cells && l != p.Nodes[0][c] && l != top {
				t.Fatalf("pass %d's node %v: column %d neither at the first node's level %d nor at the top", i+2, node, c, p.Nodes[0][c])
			}
			if l == top && p.Nodes[0][c] != top {
				want += int64(p.Placed[i+1])
			}
		}
	}
	if p.Cells != want {
		t.Fatalf("Cells %d, the nodes raise %d values", p.Cells, want)
	}
}

// checkPlacement: every placed record's class releases its leaves' values at its
// pass's node, and the counts add up.
func checkPlacement(t *testing.T, tab *Table, p *Placement) {
	t.Helper()
	placed, supp := 0, 0
	for r := range tab.Rows {
		if p.Pass[r] < 0 {
			if p.Class[r] >= 0 {
				t.Fatalf("record %d: suppressed but in class %d", r, p.Class[r])
			}
			supp++
			continue
		}
		placed++
		node := p.Nodes[p.Pass[r]]
		for j, c := range tab.Columns {
			cv := p.Covers.At(int(p.Class[r]), j)
			if int(cv.Level) != node[j] || cv.Code != c.Hierarchy.Code(node[j], c.Codes.At(r)) {
				t.Fatalf("record %d, column %d: class releases level %d code %d, its node %v gives code %d", r, j, cv.Level, cv.Code, node, c.Hierarchy.Code(node[j], c.Codes.At(r)))
			}
		}
	}
	sum := 0
	for _, x := range p.Placed {
		sum += x
	}
	if sum != placed || supp != p.Suppressed {
		t.Fatalf("placed %d (nodes say %d), suppressed %d (says %d)", placed, sum, supp, p.Suppressed)
	}
}
