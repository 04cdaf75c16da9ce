package safepub

import (
	"fmt"
	"math"
	"math/big"
)

// Amplified is the ε′ a mechanism may spend on a sample drawn with p's probability β
// (record by record, independently) and be ε-differentially private for the input the
// sample was drawn from: ln(1 + (e^ε − 1)/β), by amplification by sampling (Li,
// Qardaji and Su 2012, Theorem 1; Balle, Barthe and Gaboardi 2018), for a mechanism
// that reads the sample alone. It is a rational at most that value: e^ε bounded from
// below by its series, the quotient rounded down, the logarithm taken in float64 and
// lowered by a margin far above its error.
func (p Params) Amplified(epsilon float64) (*big.Rat, error) {
	if !(epsilon > 0 && epsilon <= MaxEpsilon) || p.BetaBits == 0 || p.BetaBits > 1<<53 {
		return nil, fmt.Errorf("%w: amplifying ε %g by β·2^53 = %d", ErrParams, epsilon, p.BetaBits)
	}
	e := expLower(decimal(epsilon, big.ToNegativeInf))
	x := newFloat(big.ToNegativeInf).Sub(e, one())
	x.Mul(x, newFloat(big.ToNegativeInf).SetMantExp(one(), 53))
	x.Quo(x, newFloat(big.ToPositiveInf).SetUint64(p.BetaBits))
	l := math.Log1p(lowerFloat64(x)) // ln(1 + (e^ε − 1)/β), the quotient rounded down; Log1p exact to an ulp or two
	l -= 1e-12 * l
	if !(l > 0) {
		return nil, fmt.Errorf("%w: amplifying ε %g by β %g", ErrParams, epsilon, p.Beta)
	}
	return new(big.Rat).SetFloat64(l), nil
}
