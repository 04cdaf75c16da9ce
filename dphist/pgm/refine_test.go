package pgm

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// refineDistance is Σ over sets of Σ over cells |count − n·p|, with p the set's marginal
// of the brute-force joint: it shares no code with Refine's tables.
func refineDistance(dom Domain, joint []float64, recs [][]int32, sets [][]int) float64 {
	n := len(recs[0])
	d := 0.0
	for _, s := range sets {
		p := bruteMarginal(dom, joint, s)
		counts := make([]float64, len(p))
		for r := range n {
			k := 0
			for _, a := range s {
				k = k*dom[a] + int(recs[a][r])
			}
			counts[k]++
		}
		for i := range p {
			d += math.Abs(counts[i] - float64(n)*p[i])
		}
	}
	return d
}

// allSubsets returns every subset of way attributes of n.
func allSubsets(n, way int) [][]int {
	var out [][]int
	var rec func(start int, cur []int)
	rec = func(start int, cur []int) {
		if len(cur) == way {
			out = append(out, slices.Clone(cur))
			return
		}
		for a := start; a < n; a++ {
			rec(a+1, append(cur, a))
		}
	}
	rec(0, nil)
	return out
}

func cloneRecs(recs [][]int32) [][]int32 {
	out := make([][]int32, len(recs))
	for a := range recs {
		out[a] = slices.Clone(recs[a])
	}
	return out
}

func TestRefine(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	dom := Domain{5, 7, 3, 6, 4, 2}
	cliques := [][]int{{0, 1}, {1, 2, 3}, {3, 4}, {0, 5}, {2, 4}}
	theta := randomTheta(rng, dom, cliques, 0.8)
	m, err := newModel(dom, cliques, theta, 1)
	if err != nil {
		t.Fatal(err)
	}
	joint := bruteJoint(dom, cliques, theta)
	const n = 3000
	sampled, err := m.Sample(n, 5)
	if err != nil {
		t.Fatal(err)
	}
	// A start far from the model: every record a copy of the first.
	same := make([][]int32, len(dom))
	for a := range dom {
		same[a] = make([]int32, n)
		for r := range same[a] {
			same[a][r] = sampled[a][0]
		}
	}
	for _, tc := range []struct {
		name    string
		start   [][]int32
		sets    [][]int
		shrink  float64 // the distance must fall below this share of the start's
		workers int
	}{
		{"sample, every 3-way", sampled, allSubsets(len(dom), 3), 0.4, 0},
		{"sample, every 2-way", sampled, allSubsets(len(dom), 2), 0.3, 0},
		{"one record repeated, every 1-way", same, allSubsets(len(dom), 1), 0.05, 0},
		{"one record repeated, every 3-way", same, allSubsets(len(dom), 3), 0.2, 0},
		{"sample, every 3-way, one worker", sampled, allSubsets(len(dom), 3), 0.4, 1},
		{"sample, every 3-way, three workers", sampled, allSubsets(len(dom), 3), 0.4, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs := cloneRecs(tc.start)
			before := refineDistance(dom, joint, recs, tc.sets)
			st, err := m.Refine(context.Background(), recs, tc.sets, RefineOptions{Seed: 9, Workers: tc.workers})
			if err != nil {
				t.Fatal(err)
			}
			after := refineDistance(dom, joint, recs, tc.sets)
			if st.Sets != len(tc.sets) || st.Moves != 2*n*len(dom) || st.Accepted == 0 {
				t.Fatalf("stats %+v", st)
			}
			// The tables' objective is the independent distance (float32 residuals).
			if math.Abs(st.Before-before) > 1e-3*before || math.Abs(st.After-after) > 1e-3*before {
				t.Fatalf("tables say %v → %v, the records %v → %v", st.Before, st.After, before, after)
			}
			if after > tc.shrink*before {
				t.Fatalf("distance %v → %v, want below %v of it", before, after, tc.shrink)
			}
			checkRecords(t, dom, recs, n)
			again := cloneRecs(tc.start)
			if _, err := m.Refine(context.Background(), again, tc.sets, RefineOptions{Seed: 9, Workers: tc.workers}); err != nil {
				t.Fatal(err)
			}
			for a := range recs {
				if !slices.Equal(recs[a], again[a]) {
					t.Fatal("same seed gave different records")
				}
			}
		})
	}
}

// TestRefineLimits checks the cell cap, the work cap and the no-op cases.
func TestRefineLimits(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 54))
	dom := Domain{6, 5, 4}
	cliques := [][]int{{0, 1}, {1, 2}}
	m, err := newModel(dom, cliques, randomTheta(rng, dom, cliques, 0.5), 1)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := m.Sample(500, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		sets     [][]int
		opt      RefineOptions
		wantSets int
	}{
		// {0,1,2} has 120 cells, {0,1} 30, {1,2} 20: a cap of 60 keeps the last two.
		{"cap leaves out what does not fit", [][]int{{0, 1, 2}, {0, 1}, {1, 2}}, RefineOptions{MaxCells: 60}, 2},
		// Inferring {0,1,2} (not inside a clique) costs more than the sum of the rest.
		{"inference cap leaves out the costly", [][]int{{0, 1, 2}, {0, 1}, {1, 2}},
			RefineOptions{MaxInferWork: m.MarginalCost([]int{0, 1}) + m.MarginalCost([]int{1, 2})}, 2},
		{"duplicates count once", [][]int{{0, 1}, {0, 1}, {2}}, RefineOptions{}, 2},
		{"nothing fits", [][]int{{0, 1, 2}}, RefineOptions{MaxCells: 100}, 0},
		{"no sets", nil, RefineOptions{}, 0},
		{"set moves", [][]int{{0, 2}}, RefineOptions{Moves: 17}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cp := cloneRecs(recs)
			st, err := m.Refine(context.Background(), cp, tc.sets, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if st.Sets != tc.wantSets {
				t.Fatalf("%d sets used, want %d", st.Sets, tc.wantSets)
			}
			if tc.wantSets == 0 {
				if st.Moves != 0 {
					t.Fatalf("stats %+v with no set", st)
				}
				for a := range cp {
					if !slices.Equal(cp[a], recs[a]) {
						t.Fatal("records changed with no set")
					}
				}
			}
			if tc.opt.Moves > 0 && st.Moves != tc.opt.Moves {
				t.Fatalf("%d moves, want %d", st.Moves, tc.opt.Moves)
			}
		})
	}
}

// TestRefineInferenceTable: MaxCells also caps the table inferring one set's marginal
// needs, which may be larger than the set's own.
func TestRefineInferenceTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(59, 60))
	dom := Domain{3, 4, 5, 3, 4}
	cliques := [][]int{{1, 2}, {2, 4}, {3, 4}}
	m, err := newModel(dom, cliques, randomTheta(rng, dom, cliques, 0.5), 1)
	if err != nil {
		t.Fatal(err)
	}
	set := []int{1, 3}
	tab := m.plan(set).maxTab
	if tab <= dom.cells(set) {
		t.Fatalf("inferring %v needs a table of %d cells, the test needs more than its %d", set, tab, dom.cells(set))
	}
	recs, err := m.Sample(300, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		maxCells int64
		want     int
	}{{tab, 1}, {tab - 1, 0}} {
		st, err := m.Refine(context.Background(), cloneRecs(recs), [][]int{set}, RefineOptions{MaxCells: tc.maxCells})
		if err != nil || st.Sets != tc.want {
			t.Errorf("MaxCells %d: %d sets used (%v), want %d", tc.maxCells, st.Sets, err, tc.want)
		}
	}
}

// TestRefineOneRecord: a single record is left as it is.
func TestRefineOneRecord(t *testing.T) {
	rng := rand.New(rand.NewPCG(57, 58))
	dom := Domain{4, 3}
	cliques := [][]int{{0, 1}}
	m, err := newModel(dom, cliques, randomTheta(rng, dom, cliques, 0.5), 1)
	if err != nil {
		t.Fatal(err)
	}
	recs := [][]int32{{3}, {2}}
	st, err := m.Refine(context.Background(), recs, [][]int{{0, 1}}, RefineOptions{})
	if err != nil || st != (RefineStats{}) || recs[0][0] != 3 || recs[1][0] != 2 {
		t.Fatalf("Refine of one record: %+v, %v, records %v", st, err, recs)
	}
}

func TestDefaultMoves(t *testing.T) {
	work := float64(refineWork)
	for _, tc := range []struct{ n, d, refs, want int }{
		{1000, 3, 9, 6000},
		{5000, 14, 1092, 2 * 5000 * 14},
		// adult-discrete with every 3-way marginal: 364 sets × 3 attributes over 14,
		// 156 cells visited a proposal, 2·n·d of them would pass the bound.
		{48842, 14, 1092, int(work / 156)},
		{10000000, 3, 9, int(work / 6)},
	} {
		if got := defaultMoves(tc.n, tc.d, tc.refs); got != tc.want {
			t.Errorf("defaultMoves(%d, %d, %d) = %d, want %d", tc.n, tc.d, tc.refs, got, tc.want)
		}
	}
}

func TestRefineBadInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(55, 56))
	dom := Domain{3, 4}
	cliques := [][]int{{0, 1}}
	m, err := newModel(dom, cliques, randomTheta(rng, dom, cliques, 0.5), 1)
	if err != nil {
		t.Fatal(err)
	}
	ok := [][]int32{{0, 1, 2}, {3, 2, 1}}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		m    *Model
		ctx  context.Context
		recs [][]int32
		sets [][]int
		want string
	}{
		{"nil model", nil, context.Background(), ok, [][]int{{0}}, "nil model"},
		{"columns", m, context.Background(), ok[:1], [][]int{{0}}, "record columns"},
		{"ragged", m, context.Background(), [][]int32{{0, 1}, {1}}, [][]int{{0}}, "rows"},
		{"value", m, context.Background(), [][]int32{{0, 3}, {1, 1}}, [][]int{{0}}, "outside"},
		{"negative", m, context.Background(), [][]int32{{0, 1}, {-1, 1}}, [][]int{{0}}, "outside"},
		{"unsorted set", m, context.Background(), ok, [][]int{{1, 0}}, "not sorted"},
		{"attribute", m, context.Background(), ok, [][]int{{2}}, "out of range"},
		{"cancelled", m, cancelled, ok, [][]int{{0, 1}}, "canceled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.m.Refine(tc.ctx, cloneRecs(tc.recs), tc.sets, RefineOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
