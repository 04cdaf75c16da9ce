package dphist

import (
	"fmt"
	"math"
)

// Zero-concentrated differential privacy (zCDP; Bun & Steinke 2016, "Concentrated
// differential privacy: simplifications, extensions, and lower bounds", TCC) is the
// accounting of the synthetic-records mechanism:
//
//   - ρ-zCDP composes by adding ρ (Bun & Steinke 2016, Lemma 2.3);
//   - the Gaussian mechanism with L2 sensitivity Δ and standard deviation σ is
//     Δ²/(2σ²)-zCDP (Bun & Steinke 2016, Proposition 1.6);
//   - the exponential mechanism that is ε-DP is ε²/8-zCDP (Cesar & Rogers 2021,
//     "Bounding, concentrating, and truncating: unifying privacy loss composition for
//     data analytics", ALT, via its bounded-range property);
//   - ρ-zCDP implies (ε, δ)-DP for δ = inf over α > 1 of
//     exp((α−1)(αρ−ε)) / (α−1) · (1−1/α)^α (Canonne, Kamath & Steinke 2020, "The
//     discrete Gaussian for differential privacy", NeurIPS, Proposition 12 /
//     Corollary 13), which is never worse than Bun & Steinke's ε = ρ + 2√(ρ log(1/δ))
//     (Proposition 1.3).
//
// An output configured with (ε, δ) gets the largest ρ whose conversion gives at most
// δ at ε (ZCDPRho), and its mechanism spends at most that ρ (ZCDPBudget).

// ZCDPDelta is the δ such that ρ-zCDP implies (ε, δ)-DP, by Canonne, Kamath & Steinke's
// conversion. Any α > 1 gives a valid δ: the search for the best α can only err on
// the safe side (a larger δ).
func ZCDPDelta(rho, eps float64) float64 {
	switch {
	case rho <= 0:
		return 0
	case math.IsInf(rho, 1):
		return 1
	}
	// The exponent's derivative in α, (2α−1)ρ − ε + log(1−1/α), increases with α; the
	// optimum lies below (ε+1)/(2ρ) + 2.
	lo, hi := bisect(1.0+1e-9, (eps+1)/(2*rho)+2, func(a float64) bool { return (2*a-1)*rho-eps+math.Log1p(-1/a) < 0 })
	best := 1.0
	for _, a := range []float64{lo, hi, (lo + hi) / 2} {
		if a <= 1 {
			continue
		}
		d := math.Exp((a-1)*(a*rho-eps)+a*math.Log1p(-1/a)) / (a - 1)
		best = math.Min(best, d)
	}
	return best
}

// ZCDPEpsilon is the smallest ε (to a relative 1e-12) such that ρ-zCDP implies
// (ε, δ)-DP by ZCDPDelta.
func ZCDPEpsilon(rho, delta float64) float64 {
	if rho <= 0 {
		return 0
	}
	// Bun & Steinke's ε is always enough.
	_, hi := bisect(0, rho+2*math.Sqrt(rho*math.Log(1/delta)), func(e float64) bool { return ZCDPDelta(rho, e) > delta })
	return hi
}

// ZCDPRho is the largest ρ (to a relative 1e-12, rounded down) such that ρ-zCDP implies
// (ε, δ)-DP by ZCDPDelta. ε must be positive and δ in (0, 1).
func ZCDPRho(eps, delta float64) (float64, error) {
	if !(eps > 0) || math.IsInf(eps, 1) || !(delta > 0 && delta < 1) {
		return 0, fmt.Errorf("zCDP needs a positive finite epsilon and delta in (0, 1), got ε=%g, δ=%g", eps, delta)
	}
	lo, _ := bisect(0, eps+1, func(r float64) bool { return ZCDPDelta(r, eps) <= delta }) // ρ ≤ ε always
	return lo, nil
}

// bisect narrows [lo, hi] to a relative 1e-12 around the point where below(x) turns
// from true (x in the lower part) to false; below must be monotone on [lo, hi].
func bisect(lo, hi float64, below func(x float64) bool) (float64, float64) {
	for i := 0; i < 200 && hi-lo > 1e-12*hi; i++ {
		if m := (lo + hi) / 2; below(m) {
			lo = m
		} else {
			hi = m
		}
	}
	return lo, hi
}

// ZCDPBudget accounts the ρ a mechanism spends against a fixed total; it never lets the
// spend exceed the total.
type ZCDPBudget struct {
	Total float64
	spent float64
}

// Spent is the ρ spent so far.
func (b *ZCDPBudget) Spent() float64 { return b.spent }

// Remaining is the ρ left.
func (b *ZCDPBudget) Remaining() float64 { return math.Max(b.Total-b.spent, 0) }

// Spend charges rho; it is an error (and nothing is charged) when rho is negative or
// the total would be exceeded.
func (b *ZCDPBudget) Spend(rho float64) error {
	if !(rho >= 0) || math.IsInf(rho, 1) {
		return fmt.Errorf("zCDP spend must be non-negative and finite, got %g", rho)
	}
	if b.spent+rho > b.Total {
		return fmt.Errorf("zCDP spend %g exceeds the remaining budget %g of %g", rho, b.Total-b.spent, b.Total)
	}
	b.spent += rho
	return nil
}

// GaussianRho is the ρ of the Gaussian mechanism with standard deviation sigma on a
// query of L2 sensitivity l2.
func GaussianRho(l2, sigma float64) float64 { return l2 * l2 / (2 * sigma * sigma) }

// ExponentialRho is the ρ of the ε-DP exponential mechanism.
func ExponentialRho(eps float64) float64 { return eps * eps / 8 }
