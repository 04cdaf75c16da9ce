package safepub

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
)

// prec is the precision, in bits, of the bounds.
const prec = 192

// MaxK bounds the k Params searches for: a δ that needs more is an error.
const MaxK = 1 << 20

// MinDelta is the smallest δ Compute takes: below it the tails' sums take minutes.
const MinDelta = 1e-20

// MinEpsilon is the smallest ε Compute takes.
const MinEpsilon = 0.001

// MaxEpsilon is the largest ε Compute takes: above it, the sampling probability is
// so close to 1 that the tails start beyond tens of thousands of records and k is
// in the thousands (ε = 3 already asks for k = 517 at δ = 10^−10).
const MaxEpsilon = 5

// Params are the parameters of a sampled k-anonymization that is (ε, δ)-DP.
type Params struct {
	// Beta is the sampling probability: BetaBits / 2^53, at most 1 − e^−ε.
	Beta float64
	// BetaBits is Beta · 2^53, an integer: a record is sampled when a uniform
	// integer in [0, 2^53) is below it.
	BetaBits uint64
	// K is the least k whose d(k, Beta, ε) is at most δ: every released class holds
	// at least K records.
	K int
	// Delta is the upper bound on d(K, Beta, ε) the computation found (≤ δ).
	Delta float64
}

// ErrParams is matched (errors.Is) by the error of an ε or δ Params cannot work with.
var ErrParams = errors.New("safepub: parameters out of range")

// Compute returns the sampling probability and the least k for (ε, δ): ε from 0.001 to
// 5 and δ from 10^−20 and below 1, each taken as the decimal it prints as.
func Compute(epsilon, delta float64) (Params, error) {
	if !(epsilon >= MinEpsilon && epsilon <= MaxEpsilon) {
		return Params{}, fmt.Errorf("%w: ε %g must be from %g to %g", ErrParams, epsilon, MinEpsilon, float64(MaxEpsilon))
	}
	if !(delta >= MinDelta && delta < 1) {
		return Params{}, fmt.Errorf("%w: δ %g must be from %g and below 1", ErrParams, delta, MinDelta)
	}
	b, err := newBounds(epsilon)
	if err != nil {
		return Params{}, err
	}
	dlt := decimal(delta, big.ToNegativeInf) // a lower bound of δ: d ≤ it implies d ≤ δ
	k, d, err := b.leastK(dlt)
	if err != nil {
		return Params{}, err
	}
	df, _ := d.Float64()
	return Params{Beta: float64(b.betaBits) / (1 << 53), BetaBits: b.betaBits, K: k, Delta: df}, nil
}

// Bound returns an upper bound on d(k, β, ε) for the β Compute chooses for ε.
func Bound(epsilon float64, k int) (float64, error) {
	if !(epsilon >= MinEpsilon && epsilon <= MaxEpsilon) || k < 1 || k > MaxK {
		return 0, fmt.Errorf("%w: ε %g, k %d", ErrParams, epsilon, k)
	}
	b, err := newBounds(epsilon)
	if err != nil {
		return 0, err
	}
	d := b.delta(k)
	f, _ := d.Float64()
	if d.Cmp(new(big.Float).SetFloat64(f)) > 0 {
		f = math.Nextafter(f, math.Inf(1))
	}
	return f, nil
}

// Remainder is the ε left to the anonymization when a search spends part of the whole
// ε: the largest float64 whose decimal (as it prints) is at most whole − part, both
// taken as the decimals they print as, so that the two spends never add up to more
// than whole. whole and part are finite and not negative.
func Remainder(whole, part float64) float64 {
	exact := new(big.Rat).Sub(Decimal(whole), Decimal(part))
	f, _ := exact.Float64()
	for Decimal(f).Cmp(exact) > 0 {
		f = math.Nextafter(f, math.Inf(-1))
	}
	return f
}

// Decimal is x (finite) as the decimal it prints as, exactly: how a configuration's ε
// is taken.
func Decimal(x float64) *big.Rat {
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(x, 'g', -1, 64))
	if !ok { // strconv's own output of a finite float always parses
		return new(big.Rat).SetFloat64(x)
	}
	return r
}

// bounds is what every d(k) of one ε shares: β and 1 − β exactly, γ's bounds, the
// Chernoff exponent's lower bound, and the tails already summed.
type bounds struct {
	betaBits uint64
	beta, q  *big.Float // β and 1 − β, exact
	gammaLo  *big.Float // γ from below: the tails start at ⌊n·gammaLo⌋ + 1
	gammaHi  *big.Float // γ from above: n_m from it
	chernoff float64    // a lower bound of γ' ln(γ'/β) − (γ' − β), γ' = gammaLo
	tails    map[int]*big.Float
}

// newBounds computes β and γ's bounds for ε.
func newBounds(epsilon float64) (*bounds, error) {
	lo := expLower(decimal(epsilon, big.ToNegativeInf)) // ≤ e^ε
	hi := expUpper(decimal(epsilon, big.ToPositiveInf)) // ≥ e^ε
	// β ≤ 1 − 1/lo ≤ 1 − e^−ε, then down to a multiple of 2^−53
	inv := newFloat(big.ToPositiveInf).Quo(one(), lo)
	beta := newFloat(big.ToNegativeInf).Sub(one(), inv)
	beta.SetMantExp(beta, 53)
	bits, _ := beta.Uint64() // truncates: floor of a positive number
	if bits == 0 {
		return nil, fmt.Errorf("%w: ε %g gives no sampling probability above 2^-53", ErrParams, epsilon)
	}
	b := &bounds{betaBits: bits, tails: map[int]*big.Float{}}
	b.beta = newFloat(big.ToNearestEven).SetMantExp(newFloat(big.ToNearestEven).SetUint64(bits), -53)
	b.q = newFloat(big.ToNearestEven).Sub(one(), b.beta) // exact: both multiples of 2^−53
	// γ = 1 − (1 − β)/e^ε: from below with e^ε ≥ lo, from above with e^ε ≤ hi
	b.gammaLo = newFloat(big.ToNegativeInf).Sub(one(), newFloat(big.ToPositiveInf).Quo(b.q, lo))
	b.gammaHi = newFloat(big.ToPositiveInf).Sub(one(), newFloat(big.ToNegativeInf).Quo(b.q, hi))
	if b.gammaLo.Cmp(b.beta) <= 0 {
		return nil, fmt.Errorf("%w: ε %g: γ is not decidably above β", ErrParams, epsilon)
	}
	if b.chernoff = chernoffLower(b.gammaLo, b.beta); b.chernoff <= 0 {
		return nil, fmt.Errorf("%w: ε %g: the tails' Chernoff bound does not decay", ErrParams, epsilon)
	}
	return b, nil
}

// leastK is the least k whose d(k) bound is at most dlt, with that bound. d(k) never
// rises with k (n_m grows), so the search doubles k, then bisects.
func (b *bounds) leastK(dlt *big.Float) (int, *big.Float, error) {
	hi := 1
	d := b.delta(hi)
	for d.Cmp(dlt) > 0 {
		if hi >= MaxK {
			return 0, nil, fmt.Errorf("%w: δ %s needs k above %d", ErrParams, dlt.Text('g', 6), MaxK)
		}
		hi = min(2*hi, MaxK)
		d = b.delta(hi)
	}
	lo := hi / 2 // d(lo) > δ, or lo = 0
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if dm := b.delta(mid); dm.Cmp(dlt) <= 0 {
			hi, d = mid, dm
		} else {
			lo = mid
		}
	}
	return hi, d, nil
}

// delta is an upper bound on d(k, β, ε): the largest tail bound over n from n_m,
// until the Chernoff bound of the tails beyond falls to it.
func (b *bounds) delta(k int) *big.Float {
	// n_m = ⌈k/γ − 1⌉ from above's γ: no larger than the true n_m
	x := newFloat(big.ToNegativeInf).Quo(newFloat(big.ToNegativeInf).SetInt64(int64(k)), b.gammaHi)
	x.Sub(x, one())
	nm := ceilInt(x)
	most := newFloat(big.ToPositiveInf)
	for n := max(nm, 1); ; n++ {
		if a := b.tail(n); a.Cmp(most) > 0 {
			most.Set(a)
		}
		// every later tail is at most exp(−n'·D) ≤ exp(−n·D)
		if c := chernoffUpper(n, b.chernoff); most.Sign() > 0 && c <= lowerFloat64(most) {
			return most
		}
	}
}

// tail is an upper bound on P[Bin(n, β) > ⌊n·γ⌋] for γ ≥ gammaLo: the sum from
// j = ⌊n·gammaLo⌋ + 1, each term rounded up, the terms beyond the last summed bounded
// by a geometric series.
func (b *bounds) tail(n int) *big.Float {
	if a, ok := b.tails[n]; ok {
		return a
	}
	ng := newFloat(big.ToNegativeInf).Mul(newFloat(big.ToNegativeInf).SetInt64(int64(n)), b.gammaLo)
	from := floorInt(ng) + 1
	sum := newFloat(big.ToPositiveInf)
	if from <= n {
		term := newFloat(big.ToPositiveInf).SetInt(new(big.Int).Binomial(int64(n), int64(from)))
		term.Mul(term, powUp(b.beta, from))
		term.Mul(term, powUp(b.q, n-from))
		ratio := newFloat(big.ToPositiveInf).Quo(b.beta, b.q) // β/(1 − β)
		eps := newFloat(big.ToPositiveInf).SetMantExp(one(), -80)
		for j := from; ; j++ {
			sum.Add(sum, term)
			if j == n {
				break
			}
			// the next term is term·(n − j)/(j + 1)·β/(1 − β); the ratio falls with j
			r := newFloat(big.ToPositiveInf).Quo(newFloat(big.ToPositiveInf).SetInt64(int64(n-j)), newFloat(big.ToPositiveInf).SetInt64(int64(j+1)))
			r.Mul(r, ratio)
			term.Mul(term, r)
			if r.Cmp(half()) <= 0 {
				// the rest is at most term·(1 + r + r² + …) ≤ 2·term
				rest := newFloat(big.ToPositiveInf).Mul(term, two())
				if rest.Cmp(newFloat(big.ToPositiveInf).Mul(sum, eps)) <= 0 || term.Sign() == 0 {
					sum.Add(sum, rest)
					break
				}
			}
		}
	}
	b.tails[n] = sum
	return sum
}

// chernoffLower is a lower bound of g·ln(g/β) − (g − β) (g > β > 0): computed in
// float64 from g rounded down (the expression grows with g) and β rounded up (it
// falls with β), less a margin far above the float error.
func chernoffLower(g, beta *big.Float) float64 {
	gf := lowerFloat64(g)
	bf := upperFloat64(beta)
	if !(gf > bf) {
		return 0
	}
	t1, t2 := gf*math.Log(gf/bf), gf-bf
	d := t1 - t2 - 1e-12*(math.Abs(t1)+math.Abs(t2))
	return math.Max(d, 0)
}

// chernoffUpper is an upper bound of exp(−n·d) (d ≥ 0).
func chernoffUpper(n int, d float64) float64 {
	if d <= 0 {
		return math.Inf(1)
	}
	return math.Exp(-float64(n)*d) * (1 + 1e-12)
}

// expLower is a lower bound of e^x (x ≥ 0): its series truncated, each term rounded
// down.
func expLower(x *big.Float) *big.Float {
	sum, term := newFloat(big.ToNegativeInf).SetInt64(1), newFloat(big.ToNegativeInf).SetInt64(1)
	tiny := newFloat(big.ToNegativeInf).SetMantExp(one(), -(prec + 20))
	for i := 1; term.Cmp(tiny) > 0; i++ {
		term.Mul(term, x)
		term.Quo(term, newFloat(big.ToNegativeInf).SetInt64(int64(i)))
		sum.Add(sum, term)
	}
	return sum
}

// expUpper is an upper bound of e^x (x ≥ 0): the series' terms to m rounded up, and
// the rest bounded by twice the next term once x/(m + 2) ≤ 1/2.
func expUpper(x *big.Float) *big.Float {
	sum, term := newFloat(big.ToPositiveInf).SetInt64(1), newFloat(big.ToPositiveInf).SetInt64(1)
	tiny := newFloat(big.ToPositiveInf).SetMantExp(one(), -(prec + 20))
	for i := 1; ; i++ {
		term.Mul(term, x)
		term.Quo(term, newFloat(big.ToPositiveInf).SetInt64(int64(i)))
		// term is x^i/i!; the rest from i on is at most 2·term when x/(i+1) ≤ 1/2
		if 2*float64(i+1) >= upperFloat64(x)*4 && term.Cmp(tiny) < 0 {
			return sum.Add(sum, term.Mul(term, two()))
		}
		sum.Add(sum, term)
	}
}

// powUp is x^e (e ≥ 0) rounded up, by squaring.
func powUp(x *big.Float, e int) *big.Float {
	out := newFloat(big.ToPositiveInf).SetInt64(1)
	base := newFloat(big.ToPositiveInf).Set(x)
	for ; e > 0; e >>= 1 {
		if e&1 == 1 {
			out.Mul(out, base)
		}
		base.Mul(base, base)
	}
	return out
}

// decimal is x (finite) as the decimal it prints as, rounded by mode to prec bits.
func decimal(x float64, mode big.RoundingMode) *big.Float {
	f, _, err := big.ParseFloat(strconv.FormatFloat(x, 'g', -1, 64), 10, prec, mode)
	if err != nil { // strconv's own output of a finite float always parses
		return newFloat(mode).SetFloat64(x)
	}
	return f
}

// lowerFloat64 and upperFloat64 are x rounded to a float64 down and up.
func lowerFloat64(x *big.Float) float64 {
	f, acc := x.Float64()
	if acc == big.Above {
		f = math.Nextafter(f, math.Inf(-1))
	}
	return f
}

func upperFloat64(x *big.Float) float64 {
	f, acc := x.Float64()
	if acc == big.Below {
		f = math.Nextafter(f, math.Inf(1))
	}
	return f
}

// floorInt and ceilInt are ⌊x⌋ and ⌈x⌉ of an x that fits an int.
func floorInt(x *big.Float) int {
	i, _ := x.Int(nil) // toward zero
	n := int(i.Int64())
	if x.Sign() < 0 && new(big.Float).SetInt(i).Cmp(x) != 0 {
		n--
	}
	return n
}

func ceilInt(x *big.Float) int {
	n := floorInt(x)
	if new(big.Float).SetInt64(int64(n)).Cmp(x) != 0 {
		n++
	}
	return n
}

func newFloat(mode big.RoundingMode) *big.Float { return new(big.Float).SetPrec(prec).SetMode(mode) }
func one() *big.Float                           { return newFloat(big.ToNearestEven).SetInt64(1) }
func two() *big.Float                           { return newFloat(big.ToNearestEven).SetInt64(2) }
func half() *big.Float                          { return newFloat(big.ToNearestEven).SetFloat64(0.5) }
