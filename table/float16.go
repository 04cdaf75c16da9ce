package table

import "math"

// The Arrow project's float16 conversions (float16.Num.Float32 and float16.New) are
// wrong for the numbers too small to be normal (they read bits 0x0001 as 1.4e-41
// instead of 2⁻²⁴ and write such numbers as zero), so half-precision values are
// converted here, per IEEE 754-2008 binary16: 1 sign bit, 5 exponent bits (bias 15), 10
// fraction bits.

// halfToFloat32 is the float32 a half-precision number's bits stand for, exactly
// (every half-precision number is a float32).
func halfToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f: // infinities and NaNs
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp == 0: // zero and the subnormals: frac × 2⁻²⁴
		f := float32(frac) / (1 << 24)
		if sign != 0 {
			f = -f
		}
		return f
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}

// float32ToHalf is the half-precision number nearest f (ties to even), as bits; a
// value past the largest (65504, up to where it rounds) is an infinity.
func float32ToHalf(f float32) uint16 {
	sign := uint16(math.Float32bits(f)>>16) & 0x8000
	a := math.Abs(float64(f))
	switch {
	case a != a:
		return sign | 0x7e00
	case a >= 65520: // 65504 + half its last step: rounds to infinity
		return sign | 0x7c00
	case a < 0x1p-14: // subnormal: m × 2⁻²⁴ (m = 1024 is the smallest normal's bits)
		return sign | uint16(math.RoundToEven(a*(1<<24)))
	}
	frac, e := math.Frexp(a) // a = frac × 2^e, frac in [0.5, 1)
	m := math.RoundToEven((2*frac - 1) * 1024)
	exp := e - 1 + 15
	if m == 1024 {
		m, exp = 0, exp+1
	}
	return sign | uint16(exp)<<10 | uint16(m)
}
