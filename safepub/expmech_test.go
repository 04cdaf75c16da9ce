package safepub

import (
	"bytes"
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestBernoulliExp: over 200,000 trials from a seeded stream, the share of true lies
// within five standard deviations of exp(−γ), for γ from 0 to 7.2.
func TestBernoulliExp(t *testing.T) {
	src := rand.NewChaCha8([32]byte{7})
	for _, g := range []*big.Rat{big.NewRat(0, 1), big.NewRat(3, 10), big.NewRat(1, 1), big.NewRat(5, 2), big.NewRat(36, 5)} {
		const n = 200_000
		hits := 0
		for range n {
			ok, err := bernoulliExp(g, src)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				hits++
			}
		}
		gf, _ := g.Float64()
		p := math.Exp(-gf)
		if sd := math.Sqrt(n * p * (1 - p)); math.Abs(float64(hits)-n*p) > 5*sd+1e-9 {
			t.Errorf("γ %v: %d of %d true, expected %.1f ± %.1f", g, hits, n, n*p, sd)
		}
	}
}

// TestExponentialDistribution: 120,000 draws over five scores at scale 1/2 fit
// exp(scores/2) normalised (chi-square with 4 degrees of freedom below 40, a false
// alarm about once in 10^7 runs), and do not fit the distribution of twice the scale
// (the test can tell a mechanism that spends twice its ε).
func TestExponentialDistribution(t *testing.T) {
	scores := []*big.Rat{big.NewRat(0, 1), big.NewRat(1, 1), big.NewRat(2, 1), big.NewRat(7, 2), big.NewRat(-1, 1)}
	scale := big.NewRat(1, 2)
	src := rand.NewChaCha8([32]byte{11})
	const n = 120_000
	counts := make([]int, len(scores))
	for range n {
		i, err := Exponential(scores, scale, src)
		if err != nil {
			t.Fatal(err)
		}
		counts[i]++
	}
	chi := func(factor float64) float64 {
		w := make([]float64, len(scores))
		sum := 0.0
		for i, s := range scores {
			f, _ := s.Float64()
			w[i] = math.Exp(factor * f)
			sum += w[i]
		}
		x := 0.0
		for i, c := range counts {
			e := n * w[i] / sum
			x += (float64(c) - e) * (float64(c) - e) / e
		}
		return x
	}
	if x := chi(0.5); x > 40 {
		t.Errorf("counts %v: chi-square %.1f against exp(s/2)", counts, x)
	}
	if x := chi(1); x < 40 {
		t.Errorf("counts %v: chi-square %.1f against exp(s): the test cannot tell twice the scale", counts, x)
	}
}

func TestExponentialRefuses(t *testing.T) {
	src := rand.NewChaCha8([32]byte{})
	if _, err := Exponential(nil, big.NewRat(1, 1), src); err == nil {
		t.Error("no candidates: no error")
	}
	if _, err := Exponential([]*big.Rat{big.NewRat(1, 1)}, big.NewRat(-1, 1), src); !errors.Is(err, ErrParams) {
		t.Errorf("a negative scale: %v", err)
	}
	if _, err := Exponential([]*big.Rat{big.NewRat(0, 1), big.NewRat(50, 1)}, big.NewRat(1, 1), bytes.NewReader(nil)); err == nil {
		t.Error("a dry source: no error")
	}
	// one candidate: always it, whatever the scale
	if i, err := Exponential([]*big.Rat{big.NewRat(-5, 1)}, big.NewRat(1000, 1), src); err != nil || i != 0 {
		t.Errorf("one candidate: %d, %v", i, err)
	}
}
