package dphist

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"sanitizer/schema"
)

// synthTable is a table of n rows over domains sizes where column 1 copies column 0
// (mod its size) 90% of the time, column 2 is independent and skewed, and the others
// are uniform: structure a good synthesizer must keep.
func synthTable(n int, sizes []int, seed uint64) [][]int32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	cols := make([][]int32, len(sizes))
	for i := range cols {
		cols[i] = make([]int32, n)
	}
	for r := range n {
		a := rng.IntN(sizes[0])
		cols[0][r] = int32(a)
		if len(sizes) > 1 {
			if rng.Float64() < 0.9 {
				cols[1][r] = int32(a % sizes[1])
			} else {
				cols[1][r] = int32(rng.IntN(sizes[1]))
			}
		}
		if len(sizes) > 2 {
			v := 0
			for v < sizes[2]-1 && rng.Float64() < 0.5 {
				v++
			}
			cols[2][r] = int32(v)
		}
		for c := 3; c < len(sizes); c++ {
			cols[c][r] = int32(rng.IntN(sizes[c]))
		}
	}
	return cols
}

// marginalL1 is Σ over cells |p_a − p_b| of the normalized marginals over attrs.
func marginalL1(a, b [][]int32, sizes []int, attrs []int) float64 {
	norm := func(cols [][]int32) []float64 {
		sub, ss := make([][]int32, len(attrs)), make([]int, len(attrs))
		n := 1
		for j, c := range attrs {
			sub[j], ss[j] = cols[c], sizes[c]
			n *= sizes[c]
		}
		counts := make([]int64, n)
		Count(counts, sub, ss)
		p := make([]float64, n)
		for i, c := range counts {
			p[i] = float64(c) / float64(len(cols[0]))
		}
		return p
	}
	pa, pb := norm(a), norm(b)
	s := 0.0
	for i := range pa {
		s += math.Abs(pa[i] - pb[i])
	}
	return s
}

// TestSynthesizeBudgetAndDomains: for both methods, several budgets and shapes, the
// accountant never spends more than ρ(ε, δ), the measurements' ρ add up to the spend,
// every record is inside the domains (after the refinement too), and the record count
// is the one asked for.
func TestSynthesizeBudgetAndDomains(t *testing.T) {
	if testing.Short() {
		t.Skip("many library draws (runs in the full test run, not the -short race run)")
	}
	for _, c := range []struct {
		method schema.SynthesisMethod
		sizes  []int
		way    int
		eps    float64
		l1, l2 float64
		rows   int
	}{
		{schema.AIM, []int{4, 3, 5, 2}, 2, 0.5, 1, 1, 700},
		{schema.AIM, []int{6, 6, 3, 2, 2}, 3, 2, 2, math.Sqrt2, 0},
		{schema.AIM, []int{3}, 1, 1, 1, 1, 50},
		{schema.MST, []int{4, 3, 5, 2}, 2, 0.3, 1, 1, 300},
		{schema.MST, []int{8, 4, 3}, 2, 5, 3, 3, 0},
	} {
		cols := synthTable(2000, c.sizes, 7)
		s := Synth{Method: c.method, Sizes: c.sizes, Workload: Subsets(len(c.sizes), c.way), Epsilon: c.eps, Delta: 1e-9,
			L1: c.l1, L2: c.l2, Rows: c.rows, Seed: 3, Iters: 30, FinalIters: 200}
		out, rep, err := Synthesize(context.Background(), s, cols, nil)
		if err != nil {
			t.Fatalf("%s %v: %v", c.method, c.sizes, err)
		}
		rho, _ := ZCDPRho(c.eps, 1e-9)
		if rep.Rho != rho || rep.RhoSpent > rho {
			t.Errorf("%s %v: spent ρ %g of %g (budget ρ %g)", c.method, c.sizes, rep.RhoSpent, rep.Rho, rho)
		}
		sum := 0.0
		for _, m := range rep.Measured {
			sum += m.Rho
		}
		if math.Abs(sum-rep.RhoSpent) > 1e-12*rho {
			t.Errorf("%s %v: measurements add up to ρ %g, the accountant says %g", c.method, c.sizes, sum, rep.RhoSpent)
		}
		if len(out) != len(c.sizes) {
			t.Fatalf("%d columns", len(out))
		}
		// Every workload marginal is small enough to refine the records towards.
		if rep.RefinedSets != len(s.Workload) {
			t.Errorf("%s %v: records refined towards %d of %d workload marginals", c.method, c.sizes, rep.RefinedSets, len(s.Workload))
		}
		// Several columns: sampling leaves the workload marginals off the model's, and
		// the refinement changes records.
		if len(c.sizes) > 1 && rep.RefineMoves == 0 {
			t.Errorf("%s %v: the refinement changed no record", c.method, c.sizes)
		}
		want := c.rows
		if want == 0 {
			want = rep.Rows
			if math.Abs(float64(want)-2000) > 200 {
				t.Errorf("%s %v: %d rows for 2000 records at ε=%g", c.method, c.sizes, want, c.eps)
			}
		}
		for i, col := range out {
			if len(col) != want {
				t.Fatalf("%s: column %d has %d rows, want %d", c.method, i, len(col), want)
			}
			for r, v := range col {
				if v < 0 || int(v) >= c.sizes[i] {
					t.Fatalf("%s: column %d row %d: value %d outside its domain of %d", c.method, i, r, v, c.sizes[i])
				}
			}
		}
	}
}

// TestSynthesizeHugeEpsilon: with negligible noise, AIM's records reproduce every
// 2-way marginal of the workload, the correlated pair included, and MST's (a tree) the
// pairs it measured.
func TestSynthesizeHugeEpsilon(t *testing.T) {
	sizes := []int{5, 4, 3, 2}
	cols := synthTable(5000, sizes, 11)
	for _, method := range []schema.SynthesisMethod{schema.AIM, schema.MST} {
		s := Synth{Method: method, Sizes: sizes, Workload: Subsets(4, 2), Epsilon: 1e5, Delta: 1e-9, L1: 1, L2: 1,
			Seed: 5, Iters: 100, FinalIters: 2000}
		out, rep, err := Synthesize(context.Background(), s, cols, nil)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Rows < 4990 || rep.Rows > 5010 {
			t.Errorf("%s: %d rows for 5000", method, rep.Rows)
		}
		// The correlated pair (0, 1) is measured by both (MST's tree must take it:
		// its error under independence is by far the largest).
		if e := marginalL1(cols, out, sizes, []int{0, 1}); e > 0.03 {
			t.Errorf("%s: marginal (0,1) L1 error %.4f", method, e)
		}
		if method == schema.AIM {
			for _, p := range Subsets(4, 2) {
				if e := marginalL1(cols, out, sizes, p); e > 0.03 {
					t.Errorf("%s: marginal %v L1 error %.4f", method, p, e)
				}
			}
		}
	}
}

func TestSynthesizeBadInput(t *testing.T) {
	cols := synthTable(10, []int{2, 2}, 1)
	good := Synth{Method: schema.AIM, Sizes: []int{2, 2}, Workload: [][]int{{0, 1}}, Epsilon: 1, Delta: 1e-9, L1: 1, L2: 1}
	for name, mod := range map[string]func(*Synth){
		"method":    func(s *Synth) { s.Method = "gan" },
		"delta":     func(s *Synth) { s.Delta = 0 },
		"epsilon":   func(s *Synth) { s.Epsilon = 0 },
		"sizes":     func(s *Synth) { s.Sizes = []int{2} },
		"empty dom": func(s *Synth) { s.Sizes = []int{2, 0} },
		"l1":        func(s *Synth) { s.L1 = 0 },
		"rows":      func(s *Synth) { s.Rows = -1 },
		"workload":  func(s *Synth) { s.Workload = [][]int{{1, 0}} },
		"outside":   func(s *Synth) { s.Workload = [][]int{{0, 2}} },
	} {
		s := good
		mod(&s)
		if _, _, err := Synthesize(context.Background(), s, cols, nil); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestMSTCompression: a column whose domain is mostly unused is compressed after the
// 1-way measurements (its unused values become one); the records come back over the
// original domain, and with negligible noise the used values keep their frequencies
// and the unused ones stay (nearly) absent.
func TestMSTCompression(t *testing.T) {
	if testing.Short() {
		t.Skip("many library draws (runs in the full test run, not the -short race run)")
	}
	sizes := []int{12, 3}
	cols := [][]int32{make([]int32, 3000), make([]int32, 3000)}
	for r := range 3000 {
		cols[0][r] = int32([]int{2, 5, 5, 9}[r%4]) // values 2, 5, 9 only
		cols[1][r] = int32(r % 3)
	}
	s := Synth{Method: schema.MST, Sizes: sizes, Workload: [][]int{{0, 1}}, Epsilon: 1e5, Delta: 1e-9, L1: 1, L2: 1, Seed: 9}
	out, _, err := Synthesize(context.Background(), s, cols, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e := marginalL1(cols, out, sizes, []int{0, 1}); e > 0.02 {
		t.Errorf("marginal (0,1) L1 error %.4f after compression", e)
	}
	unused := 0
	for _, v := range out[0] {
		if v < 0 || int(v) >= sizes[0] {
			t.Fatalf("value %d outside the domain", v)
		}
		if v != 2 && v != 5 && v != 9 {
			unused++
		}
	}
	if unused > 10 {
		t.Errorf("%d records took values absent from the data", unused)
	}
}
