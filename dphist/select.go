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
// Google's library, whose Gaussian is calibrated by (ε, δ) and a sensitivity: at fixed
// (ε, δ) the library's σ is proportional to the L∞ sensitivity it is given, so that
// sensitivity is chosen to make its σ at least Sigma and within 0.1% of it; Scale is
// that σ.
type GaussianNoise struct {
	Sigma float64 // the σ asked for
	Scale float64 // the σ the library adds (≥ Sigma)
	linf  float64 // the sensitivity given to the library
}

// The (ε, δ) given to the library when it is asked for a given σ: any fixed pair works,
// the sensitivity scales its σ.
const (
	gaussianEps   = 1.0
	gaussianDelta = 1e-5
)

// NewGaussianNoise prepares noise of standard deviation sigma.
func NewGaussianNoise(sigma float64) (*GaussianNoise, error) {
	if !(sigma > 0) || math.IsInf(sigma, 1) || sigma > 1e12 || sigma < 1e-12 {
		return nil, fmt.Errorf("gaussian noise: sigma must be in [1e-12, 1e12], got %g", sigma)
	}
	sig := func(linf float64) float64 { return noise.SigmaForGaussian(1, linf, gaussianEps, gaussianDelta) }
	linf := sigma / sig(1)
	for i := 0; sig(linf) < sigma; i++ {
		if i == 100 {
			return nil, fmt.Errorf("gaussian noise: the library gives no sigma of %g", sigma)
		}
		linf *= 1 + 1e-6
	}
	g := &GaussianNoise{Sigma: sigma, Scale: sig(linf), linf: linf}
	if g.Scale > sigma*(1+1e-3) {
		return nil, fmt.Errorf("gaussian noise: the library's sigma %g does not match %g", g.Scale, sigma)
	}
	return g, nil
}

// Add returns x plus the noise.
func (g *GaussianNoise) Add(x float64) (float64, error) {
	return noise.Gaussian().AddNoiseFloat64(x, 1, g.linf, gaussianEps, gaussianDelta)
}
