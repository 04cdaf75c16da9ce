package dphist

import (
	"math"
	"testing"
)

// gaussianExactDelta is the exact privacy profile of the Gaussian mechanism with L2
// sensitivity 1 and standard deviation sigma (Balle & Wang 2018, "Improving the
// Gaussian mechanism for differential privacy", Theorem 8):
// δ(ε) = Φ(1/(2σ) − εσ) − e^ε Φ(−1/(2σ) − εσ).
func gaussianExactDelta(sigma, eps float64) float64 {
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	return phi(1/(2*sigma)-eps*sigma) - math.Exp(eps)*phi(-1/(2*sigma)-eps*sigma)
}

func TestZCDPConversions(t *testing.T) {
	// Published values of the Gaussian's exact profile (Balle & Wang's formula, worked
	// by hand): σ = 1, ε = 1 gives δ = Φ(−0.5) − e·Φ(−1.5) = 0.3085375 − 0.1816008.
	if d := gaussianExactDelta(1, 1); math.Abs(d-0.1269367) > 1e-6 {
		t.Fatalf("exact Gaussian profile at σ=1, ε=1: %g, want 0.1269367", d)
	}
	for _, c := range []struct{ eps, delta float64 }{
		{0.3, 1e-9}, {1, 1e-9}, {3, 1e-9}, {1, 1e-6}, {0.1, 1e-5}, {10, 1e-9},
	} {
		rho, err := ZCDPRho(c.eps, c.delta)
		if err != nil {
			t.Fatal(err)
		}
		// Sound: converting back gives at most δ at ε.
		if d := ZCDPDelta(rho, c.eps); d > c.delta {
			t.Errorf("ε=%g δ=%g: ρ=%g converts to δ=%g", c.eps, c.delta, rho, d)
		}
		// At least as good as Bun & Steinke's Proposition 1.3, whose inverse is
		// ρ = (√(log(1/δ)+ε) − √log(1/δ))².
		l := math.Log(1 / c.delta)
		bs := math.Pow(math.Sqrt(l+c.eps)-math.Sqrt(l), 2)
		if rho < bs {
			t.Errorf("ε=%g δ=%g: ρ=%g is below Bun & Steinke's %g", c.eps, c.delta, rho, bs)
		}
		// Never better than exact: the Gaussian mechanism with this ρ (σ = 1/√(2ρ)) is
		// exactly ρ-zCDP, and its true δ at ε must not exceed the conversion's.
		sigma := 1 / math.Sqrt(2*rho)
		if d := gaussianExactDelta(sigma, c.eps); d > c.delta*(1+1e-6) {
			t.Errorf("ε=%g δ=%g: the Gaussian with ρ=%g has true δ=%g > δ: the conversion is unsound", c.eps, c.delta, rho, d)
		}
		// ZCDPEpsilon inverts it.
		if e := ZCDPEpsilon(rho, c.delta); math.Abs(e-c.eps) > 1e-6*c.eps {
			t.Errorf("ε=%g δ=%g: ZCDPEpsilon(%g) = %g", c.eps, c.delta, rho, e)
		}
	}
	if _, err := ZCDPRho(0, 1e-9); err == nil {
		t.Error("ε = 0 accepted")
	}
	if _, err := ZCDPRho(1, 0); err == nil {
		t.Error("δ = 0 accepted")
	}
}

func TestZCDPBudget(t *testing.T) {
	b := ZCDPBudget{Total: 1}
	if err := b.Spend(0.6); err != nil {
		t.Fatal(err)
	}
	if err := b.Spend(0.5); err == nil {
		t.Fatal("overspend accepted")
	}
	if b.Spent() != 0.6 {
		t.Fatalf("a refused spend was charged: %g", b.Spent())
	}
	if err := b.Spend(-0.1); err == nil {
		t.Fatal("negative spend accepted")
	}
	if err := b.Spend(b.Remaining()); err != nil || b.Spent() > b.Total {
		t.Fatalf("spending the rest: %v, spent %g of %g", err, b.Spent(), b.Total)
	}
}
