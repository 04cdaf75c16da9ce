package table

import (
	"math"
	"strconv"
	"testing"
)

// TestHalfEveryNumber: every half-precision number, subnormals and extremes included,
// becomes the float32 it stands for and back to the same bits, and so does its
// canonical text (as a release writes it back); NaNs stay NaNs.
func TestHalfEveryNumber(t *testing.T) {
	for b := range 1 << 16 {
		h := uint16(b)
		f := halfToFloat32(h)
		if math.IsNaN(float64(f)) {
			if back := float32ToHalf(f); back&0x7c00 != 0x7c00 || back&0x3ff == 0 {
				t.Fatalf("NaN 0x%04x came back as 0x%04x", h, back)
			}
			continue
		}
		if back := float32ToHalf(f); back != h {
			t.Fatalf("0x%04x → %g → 0x%04x", h, f, back)
		}
		g, err := strconv.ParseFloat(FormatFloat32(f), 32)
		if err != nil || float32ToHalf(float32(g)) != h {
			t.Fatalf("0x%04x as text %q read back as %g", h, FormatFloat32(f), g)
		}
	}
}

// TestHalfValues: known values, from IEEE 754's binary16 tables, and rounding.
func TestHalfValues(t *testing.T) {
	for _, c := range []struct {
		bits uint16
		f    float32
	}{
		{0x0001, 0x1p-24},        // the smallest subnormal
		{0x03ff, 0x3ffp-24},      // the largest subnormal
		{0x0400, 0x1p-14},        // the smallest normal
		{0x3c00, 1},              // one
		{0x3555, 0.333251953125}, // nearest to 1/3
		{0x7bff, 65504},          // the largest
		{0x7c00, float32(math.Inf(1))},
		{0xc000, -2},
		{0x8000, float32(math.Copysign(0, -1))},
	} {
		if got := halfToFloat32(c.bits); got != c.f || math.Signbit(float64(got)) != math.Signbit(float64(c.f)) {
			t.Errorf("halfToFloat32(0x%04x) = %g, want %g", c.bits, got, c.f)
		}
	}
	for _, c := range []struct {
		f    float32
		bits uint16
	}{
		{1.0 / 3, 0x3555},
		{65519, 0x7bff},       // below the midpoint to infinity
		{65520, 0x7c00},       // the midpoint rounds (to even) to infinity
		{0x1p-25, 0x0000},     // half the smallest subnormal: ties to even, zero
		{0x3p-25, 0x0002},     // 1.5 × the smallest: ties to even, 2
		{1 + 0x1p-11, 0x3c00}, // a tie between 1 and its successor: even
	} {
		if got := float32ToHalf(c.f); got != c.bits {
			t.Errorf("float32ToHalf(%g) = 0x%04x, want 0x%04x", c.f, got, c.bits)
		}
	}
}
