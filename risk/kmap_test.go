package risk

import (
	"math"
	"testing"
)

// TestKMapK: ARX's derived k on hand-computed Poisson sums.
func TestKMapK(t *testing.T) {
	e := math.Exp
	tests := []struct {
		name      string
		k         int
		f, sig    float64
		est       CellSizeEstimator
		records   int
		want      int
		wantTypeI float64
	}{
		// λ = 0.05: P(X≤0) = e^−λ = 0.9512 < 0.99, P(X≤1) = e^−λ(1+λ) = 0.99879 ≥ 0.99:
		// the loop stops at c = 2 and ARX adds one: 3.
		{"poisson small fraction", 5, 0.01, 0.01, Poisson, 0, 3, 1 - e(-0.05)*1.05},
		// λ = 0.5: P(X≤3) = e^−λ(1 + λ + λ²/2 + λ³/6) = 0.99825 is the first ≥ 0.99: c = 4, 5.
		{"poisson", 5, 0.1, 0.01, Poisson, 0, 5, 1 - e(-0.5)*(1+0.5+0.125+0.125/6)},
		// λ = 1: P(X≤3) = 0.98101 < 0.99 when c reaches k = 4: k itself, no type I error.
		{"poisson reaches k", 4, 0.25, 0.01, Poisson, 0, 4, 0},
		// Zero-truncated, λ = 0.05: P(1)/(1−e^−λ) = 0.97521, + P(2)/(1−e^−λ) = 0.99959 ≥ 0.99 at c = 3.
		{"zero-truncated", 5, 0.01, 0.01, ZeroTruncatedPoisson, 0, 3, 1 - (0.05*e(-0.05)+0.00125*e(-0.05))/(1-e(-0.05))},
		// At significance 0.05, λ = 0.05: 0.97521 ≥ 0.95 at c = 2.
		{"zero-truncated lax", 5, 0.01, 0.05, ZeroTruncatedPoisson, 0, 2, 1 - 0.05*e(-0.05)/(1-e(-0.05))},
		{"bounded by the records", 5, 0.01, 0.01, Poisson, 2, 2, 1 - e(-0.05)*1.05},
	}
	for _, tt := range tests {
		got, typeI, err := KMapK(tt.k, tt.f, tt.sig, tt.est, tt.records)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got != tt.want || math.Abs(typeI-tt.wantTypeI) > 1e-12 {
			t.Errorf("%s: derived k %d (type I %.12g), want %d (%.12g)", tt.name, got, typeI, tt.want, tt.wantTypeI)
		}
	}
	for _, bad := range []struct {
		k      int
		f, sig float64
	}{{0, 0.1, 0.01}, {3, 0, 0.01}, {3, 1.5, 0.01}, {3, 0.1, -1}, {3, math.NaN(), 0.01}} {
		if _, _, err := KMapK(bad.k, bad.f, bad.sig, Poisson, 0); err == nil {
			t.Errorf("KMapK(%d, %g, %g) accepted", bad.k, bad.f, bad.sig)
		}
	}
	if e, err := ParseCellSizeEstimator("Zero-Truncated-Poisson"); err != nil || e != ZeroTruncatedPoisson || e.String() != "zero-truncated-poisson" {
		t.Errorf("parse: %v %v", e, err)
	}
}
