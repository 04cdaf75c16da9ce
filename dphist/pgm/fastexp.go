package pgm

import "math"

// expTable[j] = 2^(j/64).
var expTable = func() [64]float64 {
	var t [64]float64
	for j := range t {
		t[j] = math.Exp2(float64(j) / 64)
	}
	return t
}()

const (
	expInvLn2x64 = 64 / math.Ln2
	expLn2Hi64   = 6.93147180369123816490e-01 / 64 // high bits of ln2/64, exact times small integers
	expLn2Lo64   = 1.90821492927058770002e-10 / 64 // rest of ln2/64
	expRound     = 6755399441055744.0              // 1.5·2^52: adding and subtracting rounds to an integer
)

// fastExp returns e^x with a relative error of a few ulp, faster than
// math.Exp on the hot paths of belief propagation. Arguments outside
// [-707, 709] (and NaN) go to math.Exp.
func fastExp(x float64) float64 {
	if !(x >= -707 && x <= 709) {
		return math.Exp(x)
	}
	kd := (x*expInvLn2x64 + expRound) - expRound
	k := int64(kd)
	r := (x - kd*expLn2Hi64) - kd*expLn2Lo64
	p := 1 + r*(1+r*(0.5+r*(1.0/6+r*(1.0/24+r*(1.0/120)))))
	y := expTable[k&63] * p
	return math.Float64frombits(math.Float64bits(y) + uint64(k>>6)<<52)
}
