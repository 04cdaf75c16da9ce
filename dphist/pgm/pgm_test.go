package pgm

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestModelSize(t *testing.T) {
	big := make(Domain, 64)
	all := make([]int, 64)
	for i := range big {
		big[i] = 1 << 20
		all[i] = i
	}
	tests := []struct {
		name    string
		dom     Domain
		cliques [][]int
		want    int64
	}{
		{"chain", Domain{2, 3, 4}, [][]int{{0, 1}, {1, 2}}, 6 + 12},
		{"chain with subsets", Domain{2, 3, 4}, [][]int{{0}, {0, 1}, {1, 2}, {2}}, 6 + 12},
		// min-fill ties everywhere; min weight picks attribute 1 (neighbours
		// 0,2: 2·4) so the cliques are {0,1,2} and {0,2,3}.
		{"4-cycle", Domain{2, 3, 4, 5}, [][]int{{0, 1}, {1, 2}, {2, 3}, {0, 3}}, 24 + 40},
		{"disconnected", Domain{2, 3, 4, 5}, [][]int{{0, 1}}, 6 + 4 + 5},
		{"no cliques", Domain{2, 3, 4}, nil, 9},
		{"triangle", Domain{2, 3, 4}, [][]int{{0, 1}, {1, 2}, {0, 2}}, 24},
		{"saturates", big, [][]int{all}, math.MaxInt64},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ModelSize(tc.dom, tc.cliques)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("ModelSize = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestTriangulateCycle(t *testing.T) {
	dom := Domain{2, 3, 4, 5}
	tri := triangulate(dom, [][]int{{0, 1}, {1, 2}, {2, 3}, {0, 3}})
	want := [][]int{{0, 1, 2}, {0, 2, 3}}
	if !slices.EqualFunc(tri.maximal, want, slices.Equal) {
		t.Fatalf("maximal cliques %v, want %v", tri.maximal, want)
	}
	jt, err := buildJTree(dom, tri)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(jt.sep[1], []int{0, 2}) || jt.parent[1] != 0 {
		t.Fatalf("separator %v parent %d", jt.sep[1], jt.parent[1])
	}
}

// checkRunningIntersection verifies the junction tree property: the cliques
// holding any attribute form a connected subtree.
func checkRunningIntersection(t *testing.T, dom Domain, jt *jtree) {
	t.Helper()
	for a := range dom {
		n, edges := 0, 0
		for c, cl := range jt.cliques {
			if contains(cl, a) {
				n++
				if p := jt.parent[c]; p >= 0 && contains(jt.cliques[p], a) {
					edges++
				}
			}
		}
		if n == 0 || edges != n-1 {
			t.Fatalf("attribute %d: %d cliques, %d tree edges", a, n, edges)
		}
	}
}

func TestMarginalBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 40; trial++ {
		n := 2 + rng.IntN(5)
		dom := make(Domain, n)
		for i := range dom {
			dom[i] = 2 + rng.IntN(3)
		}
		if trial%7 == 3 {
			dom[rng.IntN(n)] = 1 // size-1 attributes are legal
		}
		cliques := randomCliques(rng, n, 1+rng.IntN(6), 3)
		if trial%5 == 0 && n >= 4 { // a cycle
			cliques = [][]int{{0, 1}, {1, 2}, {2, 3}, {0, 3}}
			if n >= 5 {
				cliques = append(cliques, []int{3, 4})
			}
		}
		theta := randomTheta(rng, dom, cliques, 1.5)
		total := 1 + 1000*rng.Float64()
		m, err := newModel(dom, cliques, theta, total)
		if err != nil {
			t.Fatal(err)
		}
		checkRunningIntersection(t, dom, m.e.jt)
		joint := bruteJoint(dom, cliques, theta)
		var sets [][]int
		for mask := 0; mask < 1<<n; mask++ {
			var attrs []int
			for a := 0; a < n; a++ {
				if mask&(1<<a) != 0 {
					attrs = append(attrs, a)
				}
			}
			sets = append(sets, attrs)
			got, err := m.Marginal(attrs)
			if err != nil {
				t.Fatalf("trial %d %v: %v", trial, attrs, err)
			}
			want := bruteMarginal(dom, joint, attrs)
			if len(got) != len(want) {
				t.Fatalf("trial %d %v: len %d want %d", trial, attrs, len(got), len(want))
			}
			for i := range got {
				if d := math.Abs(got[i] - total*want[i]); d > 1e-9*total {
					t.Fatalf("trial %d dom %v cliques %v attrs %v cell %d: got %v want %v", trial, dom, cliques, attrs, i, got[i], total*want[i])
				}
			}
			if c := m.MarginalCost(attrs); c <= 0 {
				t.Fatalf("cost %d", c)
			}
			// Every candidate elimination order gives the same answer.
			if pl := m.plan(attrs); pl.single < 0 {
				orders := [][][]int{greedyOrder(dom, pl.scopes, attrs)}
				for _, r := range pl.sub {
					orders = append(orders, treeOrder(m.e.jt, pl.in, r, attrs))
				}
				for _, o := range orders {
					pl.steps = o
					alt := m.run(pl, attrs)
					for i := range alt {
						if d := math.Abs(alt[i] - total*want[i]); d > 1e-9*total {
							t.Fatalf("trial %d attrs %v order %v: cell %d got %v want %v", trial, attrs, o, i, alt[i], total*want[i])
						}
					}
				}
			}
		}
		all, err := m.Marginals(context.Background(), sets, 3)
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range sets {
			one, _ := m.Marginal(s)
			if !slices.Equal(one, all[i]) {
				t.Fatalf("Marginals[%d] differs from Marginal", i)
			}
		}
	}
}

// TestBPExtremePotentials checks the underflow fallbacks: potentials with
// huge ranges must still give exact marginals.
func TestBPExtremePotentials(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	dom := Domain{3, 4, 3, 2, 3}
	cliques := [][]int{{0, 1}, {1, 2}, {2, 3}, {0, 3}, {3, 4}}
	for trial := 0; trial < 10; trial++ {
		theta := randomTheta(rng, dom, cliques, 400)
		m, err := newModel(dom, cliques, theta, 1)
		if err != nil {
			t.Fatal(err)
		}
		joint := bruteJoint(dom, cliques, theta)
		for _, attrs := range [][]int{{0}, {1, 2}, {0, 4}, {1, 3, 4}, {0, 1, 2, 3, 4}} {
			got, err := m.Marginal(attrs)
			if err != nil {
				t.Fatal(err)
			}
			want := bruteMarginal(dom, joint, attrs)
			for i := range got {
				if math.IsNaN(got[i]) || math.Abs(got[i]-want[i]) > 1e-9 {
					t.Fatalf("trial %d attrs %v cell %d: got %v want %v", trial, attrs, i, got[i], want[i])
				}
			}
		}
	}
}

// TestBPRootFallback builds potentials whose fast product underflows on
// every cell of the root, forcing the log-space path there.
func TestBPRootFallback(t *testing.T) {
	dom := Domain{2, 2}
	cliques := [][]int{{0, 1}, {0}}
	theta := [][]float64{{0, -1000, -1000, -1000}, {-1000, 0}}
	m, err := newModel(dom, cliques, theta, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !m.e.nodes[0].exact {
		t.Fatal("fallback not taken")
	}
	joint := bruteJoint(dom, cliques, theta)
	got, _ := m.Marginal([]int{0, 1})
	for i := range got {
		if math.Abs(got[i]-joint[i]) > 1e-12 {
			t.Fatalf("cell %d: %v want %v", i, got[i], joint[i])
		}
	}
}

// TestParallelBP checks that splitting large cliques across workers gives
// the serial result.
func TestParallelBP(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	dom := Domain{40, 30, 50, 3, 20}
	cliques := [][]int{{0, 1, 2}, {2, 3}, {0, 4}, {1, 4}, {2, 4}}
	theta := randomTheta(rng, dom, cliques, 1)
	m, err := newModel(dom, cliques, theta, 1)
	if err != nil {
		t.Fatal(err)
	}
	if m.Size() < parThreshold {
		t.Fatalf("model of %d cells too small to split", m.Size())
	}
	if got := m.Cliques(); !slices.EqualFunc(got, cliques, slices.Equal) {
		t.Fatalf("Cliques() = %v", got)
	}
	e := m.e
	e.workers = 2
	if len(e.sc) < 2 {
		e.sc = append(e.sc, newScratch(len(e.sc[0].base)))
		e.totals = make([]float64, 2)
		maxPriv := 0
		for c := range e.nodes {
			n := 0
			for _, p := range e.nodes[c].p {
				n += len(p)
			}
			maxPriv = max(maxPriv, n, len(e.upSum[c]))
		}
		e.priv = append(e.priv, make([]float64, maxPriv))
		e.privT = append(e.privT, make([][]float64, len(e.sc[0].base)))
	}
	e.bp()
	par := slices.Clone(e.work)
	parZ := e.logZ
	e.workers = 1
	e.bp()
	if math.Abs(parZ-e.logZ) > 1e-12*math.Abs(e.logZ) {
		t.Fatalf("logZ %v vs %v", parZ, e.logZ)
	}
	for i := range par {
		if math.Abs(par[i]-e.work[i]) > 1e-12 {
			t.Fatalf("cell %d: parallel %v serial %v", i, par[i], e.work[i])
		}
	}
}

func TestFastExp(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 200000; i++ {
		x := -750 + 1470*rng.Float64()
		if i%2 == 0 {
			x = -40 * rng.Float64()
		}
		got, want := fastExp(x), math.Exp(x)
		if want == 0 {
			if got != 0 {
				t.Fatalf("fastExp(%v) = %v, want 0", x, got)
			}
			continue
		}
		if math.Abs(got-want) > 1e-15*want && want > 1e-300 {
			t.Fatalf("fastExp(%v) = %v, want %v (rel %g)", x, got, want, math.Abs(got-want)/want)
		}
	}
	for _, x := range []float64{math.Inf(-1), math.Inf(1), math.NaN(), 0, -707, 709} {
		got, want := fastExp(x), math.Exp(x)
		if !(got == want || (math.IsNaN(got) && math.IsNaN(want)) || math.Abs(got-want) <= 1e-15*want) {
			t.Fatalf("fastExp(%v) = %v, want %v", x, got, want)
		}
	}
}

// exactMeasurements returns noise-free marginals of a positive random table.
func exactMeasurements(rng *rand.Rand, dom Domain, cliques [][]int) ([]Measurement, []float64, float64) {
	n := 1
	for _, s := range dom {
		n *= s
	}
	joint := make([]float64, n)
	total := 0.0
	for i := range joint {
		joint[i] = 1 + 20*rng.Float64()
		total += joint[i]
	}
	var ms []Measurement
	for _, c := range cliques {
		y := bruteMarginal(dom, joint, c)
		ms = append(ms, Measurement{Clique: c, Y: y, Sigma: 1})
	}
	return ms, joint, total
}

func TestEstimateExactRecovery(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	dom := Domain{2, 3, 4, 2, 3, 2}
	cliques := [][]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {0, 4}, {4, 5}, {1, 5}}
	ms, _, total := exactMeasurements(rng, dom, cliques)
	iters := 0
	m, err := estimate(context.Background(), dom, ms, EstimateOptions{Iters: 5000}, func(it int, loss, eta float64) { iters = it })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("iterations %d, total %v (true %v)", iters, m.Total, total)
	if math.Abs(m.Total-total) > 1e-9*total {
		t.Errorf("Total = %v, want %v", m.Total, total)
	}
	for _, meas := range ms {
		got, err := m.Marginal(meas.Clique)
		if err != nil {
			t.Fatal(err)
		}
		if d := relL1(got, meas.Y, total); d > 1e-6 {
			t.Errorf("clique %v: relative L1 %g", meas.Clique, d)
		}
	}
}

// noisyProblem returns noisy measurements of a random table.
func noisyProblem(rng *rand.Rand, dom Domain, cliques [][]int, sigma float64) []Measurement {
	ms, _, _ := exactMeasurements(rng, dom, cliques)
	for i := range ms {
		ms[i].Sigma = sigma
		for j := range ms[i].Y {
			ms[i].Y[j] += sigma * rng.NormFloat64()
		}
	}
	return ms
}

func TestEstimateNoisyLossDecreases(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	dom := Domain{3, 4, 2, 5, 3}
	cliques := [][]int{{0, 1}, {1, 2}, {2, 3}, {0, 3}, {3, 4}, {0}, {1, 2, 4}}
	ms := noisyProblem(rng, dom, cliques, 30)
	ms = append(ms, noisyProblem(rng, dom, [][]int{{0, 1}}, 10)...) // a repeated clique
	var losses []float64
	_, err := estimate(context.Background(), dom, ms, EstimateOptions{Iters: 300}, func(it int, loss, eta float64) { losses = append(losses, loss) })
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(losses); i++ {
		if losses[i] > losses[i-1] {
			t.Fatalf("loss increased at iteration %d: %v -> %v", i, losses[i-1], losses[i])
		}
	}
	if !(losses[len(losses)-1] < 0.5*losses[0]) {
		t.Fatalf("loss %v not well below the uniform model's %v", losses[len(losses)-1], losses[0])
	}
	// The returned model's tables belong to its final θ and loss.
	m, err := Estimate(context.Background(), dom, ms, EstimateOptions{Iters: 300})
	if err != nil {
		t.Fatal(err)
	}
	rebuilt, err := newModel(dom, m.Cliques(), m.e.theta, m.Total)
	if err != nil {
		t.Fatal(err)
	}
	loss := 0.0
	for _, meas := range ms {
		a, _ := m.Marginal(meas.Clique)
		b, _ := rebuilt.Marginal(meas.Clique)
		if d := relL1(a, b, m.Total); d > 1e-12 {
			t.Fatalf("clique %v: model and its θ differ by %g", meas.Clique, d)
		}
		for i := range a {
			d := (a[i] - meas.Y[i]) / meas.Sigma
			loss += d * d / 2
		}
	}
	if last := losses[len(losses)-1]; math.Abs(loss-last) > 1e-9*last {
		t.Fatalf("model loss %v, traced %v", loss, last)
	}
}

func TestEstimateWarmStart(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	dom := Domain{3, 4, 2, 5, 3}
	first := [][]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}}
	ms := noisyProblem(rng, dom, append(first, []int{0, 3}), 5)
	ctx := context.Background()
	m1, err := Estimate(ctx, dom, ms[:4], EstimateOptions{Iters: 2000})
	if err != nil {
		t.Fatal(err)
	}
	var coldLoss, warmLoss float64
	cold, err := estimate(ctx, dom, ms, EstimateOptions{Iters: 3000, Total: m1.Total}, func(_ int, l, _ float64) { coldLoss = l })
	if err != nil {
		t.Fatal(err)
	}
	warm, err := estimate(ctx, dom, ms, EstimateOptions{Iters: 3000, Warm: m1, Total: m1.Total}, func(_ int, l, _ float64) { warmLoss = l })
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(coldLoss-warmLoss) > 1e-6*coldLoss {
		t.Errorf("cold loss %v, warm loss %v", coldLoss, warmLoss)
	}
	for _, c := range append(first, []int{0, 3}) {
		a, _ := cold.Marginal(c)
		b, _ := warm.Marginal(c)
		if d := relL1(a, b, cold.Total); d > 1e-5 {
			t.Errorf("clique %v: cold and warm differ by %g", c, d)
		}
	}
	// A warm start from the optimum of the same problem stays there.
	again, err := Estimate(ctx, dom, ms, EstimateOptions{Iters: 5, Warm: warm, Total: m1.Total})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range first {
		a, _ := warm.Marginal(c)
		b, _ := again.Marginal(c)
		if d := relL1(a, b, warm.Total); d > 1e-6 {
			t.Errorf("clique %v: re-estimate moved by %g", c, d)
		}
	}
}

func TestEstimateContext(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	dom := Domain{3, 4, 2}
	ms := noisyProblem(rng, dom, [][]int{{0, 1}, {1, 2}}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Estimate(ctx, dom, ms, EstimateOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if _, err := (&Model{}).Marginals(ctx, nil, 1); err == nil {
		// an empty model with no sets is fine either way; with a canceled
		// context Marginals must report it
		t.Fatalf("Marginals ignored a canceled context")
	}
}

func TestEstimateNoMeasurements(t *testing.T) {
	m, err := Estimate(context.Background(), Domain{2, 3}, nil, EstimateOptions{Total: 60})
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Marginal([]int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range got {
		if math.Abs(x-10) > 1e-12 {
			t.Fatalf("uniform marginal %v", got)
		}
	}
}

func TestBadInputs(t *testing.T) {
	ctx := context.Background()
	dom := Domain{2, 3, 4}
	good := Measurement{Clique: []int{0, 1}, Y: make([]float64, 6), Sigma: 1}
	bad := []struct {
		name string
		ms   []Measurement
		dom  Domain
	}{
		{"out of range", []Measurement{{Clique: []int{0, 3}, Y: make([]float64, 8), Sigma: 1}}, dom},
		{"negative attr", []Measurement{{Clique: []int{-1}, Y: make([]float64, 2), Sigma: 1}}, dom},
		{"duplicated", []Measurement{{Clique: []int{1, 1}, Y: make([]float64, 9), Sigma: 1}}, dom},
		{"unsorted", []Measurement{{Clique: []int{1, 0}, Y: make([]float64, 6), Sigma: 1}}, dom},
		{"short Y", []Measurement{good, {Clique: []int{2}, Y: make([]float64, 3), Sigma: 1}}, dom},
		{"zero sigma", []Measurement{{Clique: []int{2}, Y: make([]float64, 4), Sigma: 0}}, dom},
		{"negative sigma", []Measurement{{Clique: []int{2}, Y: make([]float64, 4), Sigma: -1}}, dom},
		{"NaN sigma", []Measurement{{Clique: []int{2}, Y: make([]float64, 4), Sigma: math.NaN()}}, dom},
		{"Inf sigma", []Measurement{{Clique: []int{2}, Y: make([]float64, 4), Sigma: math.Inf(1)}}, dom},
		{"NaN Y", []Measurement{{Clique: []int{2}, Y: []float64{0, math.NaN(), 0, 0}, Sigma: 1}}, dom},
		{"empty domain", nil, Domain{}},
		{"zero size", nil, Domain{2, 0}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Estimate(ctx, tc.dom, tc.ms, EstimateOptions{}); err == nil {
				t.Fatal("Estimate: no error")
			}
			var cl [][]int
			for _, m := range tc.ms {
				cl = append(cl, m.Clique)
			}
			if _, err := ModelSize(tc.dom, cl); err == nil && tc.name != "short Y" && !isSigmaCase(tc.name) {
				t.Fatal("ModelSize: no error")
			}
		})
	}
	m, err := Estimate(ctx, dom, []Measurement{good}, EstimateOptions{Iters: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, attrs := range [][]int{{3}, {-1}, {1, 1}, {2, 1}} {
		if _, err := m.Marginal(attrs); err == nil {
			t.Errorf("Marginal(%v): no error", attrs)
		}
		if c := m.MarginalCost(attrs); c != math.MaxInt64 {
			t.Errorf("MarginalCost(%v) = %d", attrs, c)
		}
	}
	if _, err := m.Marginals(ctx, [][]int{{0}, {5}}, 2); err == nil {
		t.Error("Marginals: no error")
	}
	if _, err := m.Sample(-1, 1); err == nil {
		t.Error("Sample(-1): no error")
	}
	other, _ := Estimate(ctx, Domain{2, 3}, nil, EstimateOptions{})
	if _, err := Estimate(ctx, dom, []Measurement{good}, EstimateOptions{Warm: other}); err == nil {
		t.Error("warm model over another domain: no error")
	}
	if _, err := Estimate(ctx, dom, []Measurement{good}, EstimateOptions{Total: math.NaN()}); err == nil {
		t.Error("NaN Total: no error")
	}
	var nilModel *Model
	if _, err := nilModel.Marginal([]int{0}); err == nil {
		t.Error("nil model Marginal: no error")
	}
	if _, err := nilModel.Sample(1, 1); err == nil {
		t.Error("nil model Sample: no error")
	}
	huge := Domain{1 << 20, 1 << 20, 1 << 20}
	if _, err := Estimate(ctx, huge, []Measurement{{Clique: []int{0, 1}, Y: nil, Sigma: 1}}, EstimateOptions{}); err == nil {
		t.Error("huge clique: no error")
	}
}

func isSigmaCase(name string) bool {
	switch name {
	case "zero sigma", "negative sigma", "NaN sigma", "Inf sigma", "NaN Y":
		return true
	}
	return false
}

func TestSample(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	dom := Domain{3, 2, 4, 3, 2}
	cliques := [][]int{{0, 1}, {1, 2}, {2, 3}, {0, 3}, {3, 4}}
	theta := randomTheta(rng, dom, cliques, 0.7)
	m, err := newModel(dom, cliques, theta, 1)
	if err != nil {
		t.Fatal(err)
	}
	const n = 200000
	recs, err := m.Sample(n, 42)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, dom, recs, n)
	all := []int{0, 1, 2, 3, 4}
	p, err := m.Marginal(all)
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]float64, len(p))
	for r := 0; r < n; r++ {
		k := 0
		for _, a := range all {
			k = k*dom[a] + int(recs[a][r])
		}
		counts[k]++
	}
	chi := 0.0
	for i, c := range counts {
		e := n * p[i]
		chi += (c - e) * (c - e) / e
	}
	if q := chiSquareQuantile1e6(len(p) - 1); chi > q {
		t.Fatalf("chi-square %v > %v", chi, q)
	}
	// Variance reduction: the first attribute drawn has every count within
	// one of its expectation.
	first := m.e.tri.order[len(dom)-1]
	pf, _ := m.Marginal([]int{first})
	cf := make([]float64, dom[first])
	for _, v := range recs[first] {
		cf[v]++
	}
	for v := range cf {
		if math.Abs(cf[v]-n*pf[v]) >= 1 {
			t.Errorf("attribute %d value %d: count %v, expected %v", first, v, cf[v], n*pf[v])
		}
	}
	again, _ := m.Sample(n, 42)
	for a := range recs {
		if !slices.Equal(recs[a], again[a]) {
			t.Fatal("same seed gave different samples")
		}
	}
	other, _ := m.Sample(n, 43)
	if slices.Equal(recs[0], other[0]) && slices.Equal(recs[2], other[2]) {
		t.Fatal("different seeds gave the same samples")
	}
	empty, err := m.Sample(0, 1)
	if err != nil || len(empty) != len(dom) || len(empty[0]) != 0 {
		t.Fatalf("Sample(0) = %v, %v", empty, err)
	}
}

// TestSampleCliqueMarginals checks each maximal clique's sampled marginal
// on a larger model where the full joint is too big for one test.
func TestSampleCliqueMarginals(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	dom := Domain{5, 7, 3, 6, 4, 9, 2, 5}
	cliques := randomCliques(rng, len(dom), 9, 3)
	theta := randomTheta(rng, dom, cliques, 0.5)
	m, err := newModel(dom, cliques, theta, 1)
	if err != nil {
		t.Fatal(err)
	}
	const n = 100000
	recs, err := m.Sample(n, 7)
	if err != nil {
		t.Fatal(err)
	}
	for _, cl := range m.e.jt.cliques {
		p, _ := m.Marginal(cl)
		counts := make([]float64, len(p))
		for r := 0; r < n; r++ {
			k := 0
			for _, a := range cl {
				k = k*dom[a] + int(recs[a][r])
			}
			counts[k]++
		}
		chi, df := 0.0, -1
		for i, c := range counts {
			e := n * p[i]
			if e < 1e-9 {
				if c > 0 {
					t.Fatalf("clique %v cell %d: %v records where the model has none", cl, i, c)
				}
				continue
			}
			chi += (c - e) * (c - e) / e
			df++
		}
		if q := chiSquareQuantile1e6(max(df, 1)); chi > q {
			t.Fatalf("clique %v: chi-square %v > %v", cl, chi, q)
		}
	}
}

// TestSampleManyConfigs samples fewer rows than conditioning
// configurations (the sort-based grouping) and checks a one-way marginal.
func TestSampleManyConfigs(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	dom := Domain{40, 40, 30, 3}
	cliques := [][]int{{0, 1, 2}, {2, 3}}
	theta := randomTheta(rng, dom, cliques, 0.3)
	m, err := newModel(dom, cliques, theta, 1)
	if err != nil {
		t.Fatal(err)
	}
	const n = 3000
	recs, err := m.Sample(n, 9)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, dom, recs, n)
	again, _ := m.Sample(n, 9)
	for a := range recs {
		if !slices.Equal(recs[a], again[a]) {
			t.Fatal("same seed gave different samples")
		}
	}
	for a := range dom {
		p, _ := m.Marginal([]int{a})
		counts := make([]float64, dom[a])
		for _, v := range recs[a] {
			counts[v]++
		}
		chi := 0.0
		for v, c := range counts {
			e := n * p[v]
			chi += (c - e) * (c - e) / e
		}
		if q := chiSquareQuantile1e6(dom[a] - 1); chi > q {
			t.Fatalf("attribute %d: chi-square %v > %v", a, chi, q)
		}
	}
}
