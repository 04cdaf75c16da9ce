package dphist

import (
	"math"
	"testing"

	"sanitizer/schema"
)

func TestAggregateBudgets(t *testing.T) {
	a := Aggregate{Kind: schema.Laplace, Epsilon: 1, L0: 2, LInf: 3, Stats: []schema.Stat{schema.StatCount, schema.StatSum, schema.StatMean, schema.StatQuantiles},
		Lower: -1, Upper: 4, Ranks: []float64{0.5}}
	b, err := a.Budgets()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range b {
		if s.Epsilon != 0.25 || s.LibEpsilon != 0.25 || s.L0 != 2 {
			t.Errorf("add-remove %s: %+v", s.Stat, s)
		}
	}
	// A unit adds at most 3 rows in [-1, 4] to a group: its sum there is in [-3, 12].
	if s := b[1]; s.SumLower != -3 || s.SumUpper != 12 || s.LInf != 12 {
		t.Errorf("sum bounds %+v", s)
	}
	// Laplace count: b = L0·L∞/ε = 24; the 95% half-width is b·ln(20) ≈ 71.9 (rounded
	// up to an integer by the library's integer interval).
	if hw := b[0].HalfWidth95; math.Abs(hw-24*math.Log(20)) > 1 {
		t.Errorf("count half-width %g, want about %g", hw, 24*math.Log(20))
	}

	a.ReplaceOne, a.Kind, a.Delta = true, schema.Gaussian, 4e-6
	if b, err = a.Budgets(); err != nil {
		t.Fatal(err)
	}
	if c := b[0]; c.L0 != 4 || c.LibEpsilon != 0.25 || c.LibDelta != 1e-6 {
		t.Errorf("replace-one count: %+v (want L0 doubled, budget unchanged)", c)
	}
	for _, s := range b[1:] {
		wantDelta := 1e-6 / (1 + math.Exp(0.125))
		if s.LibEpsilon != 0.125 || math.Abs(s.LibDelta-wantDelta) > 1e-18 || s.L0 != 2 {
			t.Errorf("replace-one %s: %+v (want group privacy ε/2, δ/(1+e^(ε/2)))", s.Stat, s)
		}
	}

	for _, bad := range []Aggregate{
		{Kind: schema.Laplace, Epsilon: 1, L0: 1, LInf: 1},
		{Kind: schema.Laplace, Epsilon: 1, L0: 1, LInf: 1, Stats: []schema.Stat{schema.StatSum}, Lower: 2, Upper: 2},
		{Kind: schema.Laplace, Epsilon: 1, L0: 1, LInf: 1, Stats: []schema.Stat{"median"}},
		{Kind: schema.Laplace, Epsilon: 1, L0: 1, LInf: 1, Stats: []schema.Stat{schema.StatQuantiles}, Lower: 0, Upper: 1, Ranks: []float64{2}},
		{Kind: schema.Gaussian, Epsilon: 1, L0: 1, LInf: 1, Stats: []schema.Stat{schema.StatCount}},
	} {
		if _, err := bad.Budgets(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// TestAggregateCompute: with a budget so large that the noise is negligible, every
// statistic is the true one of the clamped values.
func TestAggregateCompute(t *testing.T) {
	a := Aggregate{Kind: schema.Laplace, Epsilon: 1e5, L0: 1, LInf: 1, Stats: []schema.Stat{schema.StatCount, schema.StatSum, schema.StatMean, schema.StatQuantiles},
		Lower: 0, Upper: 100, Ranks: []float64{0.1, 0.5, 0.9}}
	var group []int32
	var value []float64
	for i := range 1000 {
		group = append(group, 0)
		value = append(value, float64(i%100)+0.5)
	}
	group = append(group, 1, 1)
	value = append(value, -50, 500) // clamped to 0 and 100
	res, err := a.Compute(group, value, 3)
	if err != nil {
		t.Fatal(err)
	}
	g := res[0]
	if g.Count != 1000 || math.Abs(g.Sum-50000) > 1 || math.Abs(g.Mean-50) > 0.01 {
		t.Errorf("group 0: %+v", g)
	}
	for i, want := range []float64{10, 50, 90} {
		if math.Abs(g.Quantiles[i]-want) > 1.5 {
			t.Errorf("quantile %g = %g, want about %g", a.Ranks[i], g.Quantiles[i], want)
		}
	}
	if h := res[1]; h.Count != 2 || math.Abs(h.Sum-100) > 0.1 || math.Abs(h.Mean-50) > 0.1 {
		t.Errorf("group 1 (clamped values): %+v", h)
	}
	if e := res[2]; e.Count != 0 || math.Abs(e.Sum) > 0.1 {
		t.Errorf("empty group 2 is released too: %+v", e)
	}
	if _, err := a.Compute([]int32{0}, []float64{math.NaN()}, 1); err == nil {
		t.Error("NaN accepted")
	}
	if _, err := a.Compute([]int32{3}, []float64{1}, 3); err == nil {
		t.Error("group out of range accepted")
	}
}

// TestAggregateCountVariance: the count noise of an aggregate has the Laplace variance
// 2(L0·L∞/ε)². With n = 4000 draws the sample variance of a Laplace(b) sample has
// standard deviation about b²·√(20/n) (fourth moment 24b⁴): for b = 1, 0.071; the
// bounds [1.5, 2.5] are 7 standard deviations from 2, never reached by chance.
func TestAggregateCountVariance(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical: many library draws (runs in the full test run, not the -short race run)")
	}
	a := Aggregate{Kind: schema.Laplace, Epsilon: 1, L0: 1, LInf: 1, Stats: []schema.Stat{schema.StatCount}}
	group := make([]int32, 100)
	value := make([]float64, 100)
	const n = 4000
	var s, s2 float64
	for range n {
		res, err := a.Compute(group, value, 1)
		if err != nil {
			t.Fatal(err)
		}
		d := float64(res[0].Count - 100)
		s += d
		s2 += d * d
	}
	mean := s / n
	v := s2/n - mean*mean
	if v < 1.5 || v > 2.5 || math.Abs(mean) > 0.2 {
		t.Errorf("count noise: mean %g, variance %g; want 0 and 2", mean, v)
	}
}
