package risk

import (
	"fmt"
	"math"
	"strings"
)

// CellSizeEstimator is a model of a population class's size given that a sample of
// the population holds the class, for k-map without the population's records.
type CellSizeEstimator int

const (
	// Poisson models a population class of mean size λ = f·k (f the sampling
	// fraction) as Poisson(λ).
	Poisson CellSizeEstimator = iota
	// ZeroTruncatedPoisson conditions Poisson(λ) on the class being non-empty.
	ZeroTruncatedPoisson
)

var estimatorNames = [...]string{Poisson: "poisson", ZeroTruncatedPoisson: "zero-truncated-poisson"}

// CellSizeEstimators are the estimators, in the order messages list them.
var CellSizeEstimators = []CellSizeEstimator{Poisson, ZeroTruncatedPoisson}

// String is the estimator's name as ParseCellSizeEstimator reads it.
func (e CellSizeEstimator) String() string {
	if e < 0 || int(e) >= len(estimatorNames) {
		return fmt.Sprintf("CellSizeEstimator(%d)", int(e))
	}
	return estimatorNames[e]
}

// ParseCellSizeEstimator is the estimator named "poisson" or "zero-truncated-poisson"
// (in any case).
func ParseCellSizeEstimator(s string) (CellSizeEstimator, error) {
	for e, name := range estimatorNames {
		if strings.EqualFold(strings.TrimSpace(s), name) {
			return CellSizeEstimator(e), nil
		}
	}
	return 0, fmt.Errorf("risk: unknown cell size estimator %q (want poisson or zero-truncated-poisson)", s)
}

// KMapK is the k of k-anonymity on a sample that stands for k-map (every class shared
// by at least k members of the population) when only the sampling fraction f is known,
// as ARX derives it (its KMap criterion, after El Emam & Dankar 2008, "Protecting
// privacy using k-anonymity", JAMIA 15(5)): with λ = f·k the expected population size of
// a class of k sample records, it is the first count c (the Poisson's c from 0, the
// zero-truncated Poisson's from 1) at which the estimator's cumulative probability
// reaches 1 − significance, plus one for the Poisson (ARX's convention), and never above
// k (a class of k sample records has k population members). typeI is 1 minus the
// cumulative probability reached (0 when k was reached first): the chance the bound is
// wrong for a class. records bounds the result from above (a sample of records records
// has no larger class). The estimate assumes the sample is drawn uniformly from the
// population.
func KMapK(k int, fraction, significance float64, e CellSizeEstimator, records int) (derived int, typeI float64, err error) {
	switch {
	case k < 1:
		return 0, 0, fmt.Errorf("risk: k-map: k %d: must be at least 1", k)
	case !(fraction > 0 && fraction <= 1):
		return 0, 0, fmt.Errorf("risk: k-map: sampling fraction %g: must be in (0, 1]", fraction)
	case !(significance >= 0 && significance <= 1):
		return 0, 0, fmt.Errorf("risk: k-map: significance %g: must be in [0, 1]", significance)
	}
	lambda := fraction * float64(k)
	threshold := 1 - significance
	var c int
	var value float64
	switch e {
	case Poisson:
		for value < threshold {
			value = poissonCDF(lambda, c)
			c++
			if c >= k {
				value = 1
				break
			}
		}
		c++
	case ZeroTruncatedPoisson:
		nonEmpty := -math.Expm1(-lambda) // 1 − P(0)
		c = 1
		for value < threshold {
			value += poissonPMF(lambda, c) / nonEmpty
			c++
			if c >= k {
				value = 1
				break
			}
		}
	default:
		return 0, 0, fmt.Errorf("risk: k-map: unknown estimator %d", int(e))
	}
	derived = min(c, k)
	if records > 0 {
		derived = min(derived, records)
	}
	return derived, max(0, 1-value), nil
}

// poissonPMF is P(X = c) for X ~ Poisson(λ), λ > 0.
func poissonPMF(lambda float64, c int) float64 {
	lg, _ := math.Lgamma(float64(c) + 1)
	return math.Exp(-lambda + float64(c)*math.Log(lambda) - lg)
}

// poissonCDF is P(X ≤ c) for X ~ Poisson(λ), λ > 0.
func poissonCDF(lambda float64, c int) float64 {
	var s float64
	for i := 0; i <= c; i++ {
		s += poissonPMF(lambda, i)
	}
	return min(s, 1)
}
