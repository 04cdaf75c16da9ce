package dphist

import (
	"fmt"
	"math"

	"github.com/google/differential-privacy/go/v3/noise"

	"sanitizer/schema"
)

// Mechanism adds noise to counts so that their release is (ε, δ)-differentially private
// when one privacy unit changes at most L0 counts, each by at most LInf.
type Mechanism struct {
	Kind    schema.Mechanism
	Epsilon float64
	Delta   float64 // 0 for Laplace; in (0, 1) for Gaussian
	L0      int64
	LInf    int64
}

// maxSensitivity bounds L0·L∞ (exact in a float64, far from int64 overflow).
const maxSensitivity = 1 << 53

// Check reports parameters the library would refuse, with the reason.
func (m Mechanism) Check() error {
	switch {
	case m.Kind != schema.Laplace && m.Kind != schema.Gaussian:
		return fmt.Errorf("unknown mechanism %q (laplace or gaussian)", m.Kind)
	case !(m.Epsilon > 0) || math.IsInf(m.Epsilon, 1):
		return fmt.Errorf("epsilon must be positive and finite, got %g", m.Epsilon)
	case m.L0 < 1 || m.LInf < 1:
		return fmt.Errorf("sensitivities must be at least 1, got L0=%d, L∞=%d", m.L0, m.LInf)
	case m.L0 > maxSensitivity/m.LInf:
		// The library multiplies them in int64, unchecked: refuse before it wraps.
		return fmt.Errorf("sensitivities L0=%d, L∞=%d: their product exceeds 2^53", m.L0, m.LInf)
	case m.Kind == schema.Laplace && m.Delta != 0:
		return fmt.Errorf("the Laplace mechanism takes no delta, got %g", m.Delta)
	case m.Kind == schema.Gaussian && !(m.Delta > 0 && m.Delta < 1):
		return fmt.Errorf("the Gaussian mechanism needs delta in (0, 1), got %g", m.Delta)
	}
	return nil
}

func (m Mechanism) noise() noise.Noise {
	if m.Kind == schema.Gaussian {
		return noise.Gaussian()
	}
	return noise.Laplace()
}

// Scale is the noise's scale: the Laplace parameter b = L0·L∞/ε, or the Gaussian σ the
// library calibrates for (ε, δ).
func (m Mechanism) Scale() float64 {
	if m.Kind == schema.Gaussian {
		return noise.SigmaForGaussian(m.L0, float64(m.LInf), m.Epsilon, m.Delta)
	}
	return float64(m.L0*m.LInf) / m.Epsilon
}

// Count returns a noisy count.
func (m Mechanism) Count(x int64) (int64, error) {
	return m.noise().AddNoiseInt64(x, m.L0, m.LInf, m.Epsilon, m.Delta)
}

// HalfWidth95 is the half-width of the 95% confidence interval of a noisy count, from
// the library's confidence-interval function.
func (m Mechanism) HalfWidth95() (float64, error) {
	ci, err := m.noise().ComputeConfidenceIntervalInt64(0, m.L0, m.LInf, m.Epsilon, m.Delta, 0.05)
	if err != nil {
		return 0, err
	}
	return (ci.UpperBound - ci.LowerBound) / 2, nil
}
