package dphist

import (
	"math"
	"testing"
	"time"
)

// TestSelectDistribution: the exponential mechanism's choices follow
// exp(ε·u/(2Δ)) proportions. Pearson's statistic over 40,000 draws against those
// proportions is compared with 30.66, the upper 10⁻⁶ quantile of the chi-square
// distribution with 3 degrees of freedom; every category expects over 3,000 draws. The
// library's noise cannot be seeded, so a correct mechanism fails with probability
// 10⁻⁶; a mechanism using ε·u/Δ instead (twice too sharp) gives a statistic in the
// thousands.
func TestSelectDistribution(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical: many library draws (runs in the full test run, not the -short race run)")
	}
	scores := []float64{10, 11, 12, 14} // a common offset changes nothing
	const eps, sens, n = 1.0, 1.0, 40000
	w := make([]float64, len(scores))
	sum := 0.0
	for i, s := range scores {
		w[i] = math.Exp(eps * (s - scores[0]) / (2 * sens))
		sum += w[i]
	}
	counts := make([]int, len(scores))
	for range n {
		i, err := Select(scores, eps, sens)
		if err != nil {
			t.Fatal(err)
		}
		counts[i]++
	}
	x := 0.0
	for i, c := range counts {
		e := n * w[i] / sum
		x += (float64(c) - e) * (float64(c) - e) / e
	}
	if x > 30.66 {
		t.Fatalf("selection counts %v: chi-square %.1f > 30.66 against exp(εu/2Δ) proportions %v", counts, x, w)
	}
}

func TestSelectBadInput(t *testing.T) {
	for _, c := range []struct {
		scores    []float64
		eps, sens float64
	}{
		{nil, 1, 1},
		{[]float64{1}, 0, 1},
		{[]float64{1}, 1, 0},
		{[]float64{1}, math.Inf(1), 1},
		{[]float64{math.NaN()}, 1, 1},
	} {
		if _, err := Select(c.scores, c.eps, c.sens); err == nil {
			t.Errorf("Select(%v, %g, %g) accepted", c.scores, c.eps, c.sens)
		}
	}
	// A score of −∞ is never chosen against a finite one.
	for range 200 {
		if i, err := Select([]float64{math.Inf(-1), 0}, 1, 1); err != nil || i != 1 {
			t.Fatalf("Select chose %d (%v)", i, err)
		}
	}
}

// TestGaussianNoise: the library's σ is at least the one asked for and within 0.1%,
// and the sample variance of 20,000 draws is within 6 standard errors (√(2/n) ≈ 1%
// relative) of σ².
func TestGaussianNoise(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical: many library draws (runs in the full test run, not the -short race run)")
	}
	for _, sigma := range []float64{0.003, 0.3, 3.7, 250, 1e6} {
		g, err := NewGaussianNoise(sigma)
		if err != nil {
			t.Fatal(err)
		}
		if g.Scale < sigma || g.Scale > sigma*1.001 {
			t.Fatalf("σ %g: library scale %g", sigma, g.Scale)
		}
		const n = 20000
		s2 := 0.0
		start := time.Now()
		for range n {
			v, err := g.Add(0)
			if err != nil {
				t.Fatal(err)
			}
			s2 += v * v
		}
		t.Logf("σ %g: %v per draw", sigma, time.Since(start)/n)
		v := s2 / n
		if rel := math.Abs(v/(g.Scale*g.Scale) - 1); rel > 6*math.Sqrt(2.0/n) {
			t.Errorf("σ %g: sample variance %g, want %g (relative error %.3f)", sigma, v, g.Scale*g.Scale, rel)
		}
	}
	if _, err := NewGaussianNoise(0); err == nil {
		t.Error("σ = 0 accepted")
	}
}
