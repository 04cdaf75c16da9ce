package risk

import (
	"math"
	"testing"
)

// TestPolygammaSums compares invSum and invSqSum, which switch to the digamma and
// trigamma series for long runs, with the sums added term by term (smallest first).
func TestPolygammaSums(t *testing.T) {
	for _, tc := range []struct {
		a float64
		m int64
	}{
		{0.5, 0}, {0.5, 1}, {1, 64}, {1, 65}, {0.001, 1000}, {0.3, 100000}, {7.5, 3000},
		{19.9, 500}, {25, 70}, {1e6, 5000}, {1e9, 200}, {1e-6, 2000}, {3176.2, 30161},
	} {
		var s0, s1 float64
		for i := tc.m - 1; i >= 0; i-- {
			x := tc.a + float64(i)
			s0 += 1 / x
			s1 += 1 / (x * x)
		}
		if got := invSum(tc.a, tc.m); !uqClose(got, s0, 1e-13) && got != s0 {
			t.Errorf("invSum(%v, %d) = %v, term by term %v", tc.a, tc.m, got, s0)
		}
		if got := invSqSum(tc.a, tc.m); !uqClose(got, s1, 1e-13) && got != s1 {
			t.Errorf("invSqSum(%v, %d) = %v, term by term %v", tc.a, tc.m, got, s1)
		}
	}
	// Known values: ψ(11) − ψ(1) = H₁₀ = 7381/2520; ψ'(1) − ψ'(1+m) → π²/6 as m grows.
	if got := invSum(1, 10); !uqClose(got, 7381.0/2520, 1e-15) {
		t.Errorf("H₁₀ = %v", got)
	}
	if got := invSqSum(1, 1<<40); !uqClose(got, math.Pi*math.Pi/6, 1e-12) {
		t.Errorf("Σ 1/i² = %v, want π²/6", got)
	}
}

// TestNewton2 solves x² = 2, y = x·y₀ and reports a singular system as unsolved.
func TestNewton2(t *testing.T) {
	sys := func(v [2]float64) (r [2]float64, j [2][2]float64, ok bool) {
		r = [2]float64{v[0]*v[0] - 2, v[1] - 3*v[0]}
		j = [2][2]float64{{2 * v[0], 0}, {-3, 1}}
		return r, j, true
	}
	root, done := newton2(sys, [2]float64{1, 0}, 1e-14, 100)
	if !done || !uqClose(root[0], math.Sqrt2, 1e-14) || !uqClose(root[1], 3*math.Sqrt2, 1e-14) {
		t.Errorf("root %v done %v", root, done)
	}
	flat := func(v [2]float64) (r [2]float64, j [2][2]float64, ok bool) {
		return [2]float64{1, 1}, [2][2]float64{}, true
	}
	if _, done := newton2(flat, [2]float64{0, 0}, 1e-9, 10); done {
		t.Error("a system without root reported solved")
	}
	outside := func(v [2]float64) (r [2]float64, j [2][2]float64, ok bool) { return r, j, false }
	if _, done := newton2(outside, [2]float64{0, 0}, 1e-9, 10); done {
		t.Error("a start outside the domain reported solved")
	}
}
