package dphist

import (
	"fmt"
	"math"

	"github.com/google/differential-privacy/go/v3/noise"
)

// Select is the exponential mechanism (McSherry & Talwar 2007): it returns index i with
// probability proportional to exp(ε·scores[i] / (2·sensitivity)), where sensitivity
// bounds how much any score changes when one privacy unit changes. It is ε-DP, and
// ε²/8-zCDP (ExponentialRho).
//
// It is report-noisy-max with Gumbel noise, which has exactly that distribution (the
// Gumbel-max trick), and the Gumbel noise comes from the library: if L is Laplace with
// scale 1 (from Google's library), |L| is exponential with mean 1 and −log|L| is a
// standard Gumbel variate. No float sampler is written here.
func Select(scores []float64, eps, sensitivity float64) (int, error) {
	switch {
	case len(scores) == 0:
		return 0, fmt.Errorf("exponential mechanism: no candidates")
	case !(eps > 0) || math.IsInf(eps, 1):
		return 0, fmt.Errorf("exponential mechanism: epsilon must be positive and finite, got %g", eps)
	case !(sensitivity > 0) || math.IsInf(sensitivity, 1):
		return 0, fmt.Errorf("exponential mechanism: sensitivity must be positive and finite, got %g", sensitivity)
	}
	lap := noise.Laplace()
	best, bestV := -1, math.Inf(-1)
	for i, s := range scores {
		if math.IsNaN(s) {
			return 0, fmt.Errorf("exponential mechanism: score %d is NaN", i)
		}
		l, err := lap.AddNoiseFloat64(0, 1, 1, 1, 0)
		if err != nil {
			return 0, err
		}
		// |L| = 0 has probability about 2^-40: its Gumbel variate is +∞, a valid
		// (if astronomically rare) draw.
		v := eps*s/(2*sensitivity) - math.Log(math.Abs(l))
		if v > bestV || best < 0 {
			best, bestV = i, v
		}
	}
	return best, nil
}

// GaussianNoise adds Gaussian noise of standard deviation at least Sigma to counts with
// Google's library, whose Gaussian is calibrated by (ε, δ): it finds library parameters
// whose σ is at least Sigma and within 0.1% of it, and Scale is that σ.
type GaussianNoise struct {
	Sigma float64 // the σ asked for
	Scale float64 // the σ the library adds (≥ Sigma)
	eps   float64 // the library's parameters giving Scale for L2 sensitivity 1
	delta float64
}

// gaussianDelta is the δ given to the library when it is asked for a given σ: any value
// works, the search adjusts ε.
const gaussianDelta = 1e-5

// NewGaussianNoise prepares noise of standard deviation sigma.
func NewGaussianNoise(sigma float64) (*GaussianNoise, error) {
	if !(sigma > 0) || math.IsInf(sigma, 1) {
		return nil, fmt.Errorf("gaussian noise: sigma must be positive and finite, got %g", sigma)
	}
	// The library's σ for (ε, δ) decreases as ε grows; find the largest ε whose σ is
	// still ≥ sigma. Bounds: a tiny ε gives a huge σ, a huge ε a tiny one.
	sig := func(e float64) float64 { return noise.SigmaForGaussian(1, 1, e, gaussianDelta) }
	lo, hi := 1e-9, 1.0
	for sig(hi) >= sigma {
		lo, hi = hi, hi*2
		if hi > 1e9 {
			return nil, fmt.Errorf("gaussian noise: sigma %g is too small for the library", sigma)
		}
	}
	if sig(lo) < sigma {
		return nil, fmt.Errorf("gaussian noise: sigma %g is too large for the library", sigma)
	}
	for i := 0; i < 200 && hi-lo > 1e-12*hi; i++ {
		m := (lo + hi) / 2
		if sig(m) >= sigma {
			lo = m
		} else {
			hi = m
		}
	}
	g := &GaussianNoise{Sigma: sigma, Scale: sig(lo), eps: lo, delta: gaussianDelta}
	if g.Scale < sigma || g.Scale > sigma*(1+1e-3) {
		return nil, fmt.Errorf("gaussian noise: the library's sigma %g does not match %g", g.Scale, sigma)
	}
	return g, nil
}

// Add returns x plus the noise.
func (g *GaussianNoise) Add(x float64) (float64, error) {
	return noise.Gaussian().AddNoiseFloat64(x, 1, 1, g.eps, g.delta)
}
