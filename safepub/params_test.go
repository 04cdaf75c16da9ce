package safepub

import (
	"errors"
	"math"
	"math/big"
	"testing"
	"time"
)

// arxCases are ARX 3.9.2's ParameterCalculation (β and k) for the parameters of its
// differential-privacy tests and a few more, computed by ARX built from its sources
// (BENCHMARKS.md, issue 40). ARX's k is one above the least k whose δ bound is below
// δ (its loop increments k once more after the bound it stops at).
var arxCases = []struct {
	epsilon, delta float64
	beta           float64
	k              int
}{
	{2, 1e-5, 0.8646647167633871, 114},
	{1.5, 1e-6, 0.77686983985157, 100},
	{0.6931471805599453, 1e-7, 0.4999999999999997, 81},
	{1.0986122886681098, 1e-8, 0.6666666666666664, 109},
	{1.0, 1e-8, 0.6321205588285574, 105},
	{1.5, 1e-8, 0.77686983985157, 137},
	{1.0986122886681098, 1e-5, 0.6666666666666664, 66},
	{0.6931471805599453, 1e-6, 0.4999999999999997, 68},
	{1.0, 1e-7, 0.6321205588285574, 92},
	{1.0, 1e-6, 0.6321205588285574, 75},
	{2, 1e-7, 0.8646647167633871, 165},
	{0.01, 1e-9, 0.00995016625083178, 96},
	{1.0, 1e-5, 0.6321205588285574, 62},
	{0.1, 1e-6, 0.09516258196404025, 61},
	{0.5, 1e-6, 0.3934693402873664, 64},
	{3, 1e-10, 0.9502129316321359, 517},
}

func TestComputeAgainstARX(t *testing.T) {
	for _, c := range arxCases {
		start := time.Now()
		p, err := Compute(c.epsilon, c.delta)
		if err != nil {
			t.Fatalf("ε %g δ %g: %v", c.epsilon, c.delta, err)
		}
		t.Logf("ε %g δ %g: β %.17g (ARX %.17g) k %d (ARX %d) bound %.4g, %v", c.epsilon, c.delta, p.Beta, c.beta, p.K, c.k, p.Delta, time.Since(start).Round(time.Millisecond))
		if p.K != c.k-1 {
			t.Errorf("ε %g δ %g: k %d, ARX's %d less one is %d", c.epsilon, c.delta, p.K, c.k, c.k-1)
		}
		if math.Abs(p.Beta-c.beta) > 0x1p-50 || !(p.Delta <= c.delta) {
			t.Errorf("ε %g δ %g: β %.17g (ARX %.17g), δ bound %g", c.epsilon, c.delta, p.Beta, c.beta, p.Delta)
		}
	}
}

func TestComputeRefuses(t *testing.T) {
	for _, c := range []struct{ epsilon, delta float64 }{
		{0, 1e-5}, {-1, 1e-5}, {0.0009, 1e-5}, {5.5, 1e-5}, {math.NaN(), 1e-5}, {1, 0}, {1, 1}, {1, -1e-5}, {1, math.NaN()}, {math.Inf(1), 1e-5},
	} {
		if _, err := Compute(c.epsilon, c.delta); !errors.Is(err, ErrParams) {
			t.Errorf("ε %g δ %g: %v, want ErrParams", c.epsilon, c.delta, err)
		}
	}
	if _, err := Bound(1, 0); !errors.Is(err, ErrParams) {
		t.Errorf("Bound(1, 0): %v", err)
	}
	// Bound agrees with Compute: K's bound is at most δ, K − 1's above it
	p, err := Compute(1, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	at, err := Bound(1, p.K)
	if err != nil || at > 1e-6 {
		t.Errorf("Bound(1, %d) = %g, %v", p.K, at, err)
	}
	if below, err := Bound(1, p.K-1); err != nil || below <= 1e-6 {
		t.Errorf("Bound(1, %d) = %g, %v", p.K-1, below, err)
	}
}

// TestComputeLeastK checks Compute's k by an independent computation: the tails in
// exact rationals (β = BetaBits/2^53 exactly, binomial terms as integers over
// 2^53n), γ from math.Exp with n·γ and k/γ kept off integers by a margin (an n
// where the floor is not decided by the margin is summed from the lower floor, the
// larger tail), over n from n_m until the float Chernoff bound of the tails beyond
// falls below a tenth of the largest tail. K's δ is at most δ and K − 1's above it.
func TestComputeLeastK(t *testing.T) {
	cases := []struct{ epsilon, delta float64 }{
		{0.6931471805599453, 1e-6}, {1, 1e-5}, {0.5, 1e-6}, {1.5, 1e-6}, {0.1, 1e-4},
	}
	if testing.Short() {
		cases = cases[:2]
	}
	for _, c := range cases {
		p, err := Compute(c.epsilon, c.delta)
		if err != nil {
			t.Fatal(err)
		}
		if want := -math.Expm1(-c.epsilon); p.Beta > want || want-p.Beta > 0x1p-51 {
			t.Errorf("ε %g: β %.17g, 1 − e^−ε %.17g: β must be the largest multiple of 2^-53 below it", c.epsilon, p.Beta, want)
		}
		if float64(p.BetaBits)/(1<<53) != p.Beta {
			t.Errorf("ε %g: BetaBits %d is not β·2^53", c.epsilon, p.BetaBits)
		}
		dAt := func(k int) *big.Rat { return exactDelta(t, c.epsilon, p.BetaBits, k) }
		lim := new(big.Rat).SetFloat64(c.delta)
		if d := dAt(p.K); d.Cmp(lim) > 0 {
			t.Errorf("ε %g δ %g: k %d has δ %s", c.epsilon, c.delta, p.K, d.FloatString(12))
		}
		if d := dAt(p.K - 1); d.Cmp(lim) <= 0 {
			t.Errorf("ε %g δ %g: k %d is not the least: %d has δ %s", c.epsilon, c.delta, p.K, p.K-1, d.FloatString(12))
		}
	}
}

// exactDelta is d(k, β, ε) for β = bits/2^53, computed as TestComputeLeastK says.
func exactDelta(t *testing.T, epsilon float64, bits uint64, k int) *big.Rat {
	t.Helper()
	beta := float64(bits) / (1 << 53)
	gamma := (math.Exp(epsilon) - 1 + beta) / math.Exp(epsilon)
	const margin = 1e-9
	nm := int(math.Ceil(float64(k)/gamma - 1 - margin))
	B := new(big.Int).SetUint64(bits)
	Q := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 53), B)
	best := new(big.Rat)
	d := gamma*math.Log(gamma/beta) - (gamma - beta)
	for n := max(nm, 1); ; n++ {
		from := int(math.Floor(float64(n)*gamma-margin)) + 1
		sum := new(big.Int)
		for j := from; j <= n; j++ {
			term := new(big.Int).Binomial(int64(n), int64(j))
			term.Mul(term, new(big.Int).Exp(B, big.NewInt(int64(j)), nil))
			term.Mul(term, new(big.Int).Exp(Q, big.NewInt(int64(n-j)), nil))
			sum.Add(sum, term)
		}
		a := new(big.Rat).SetFrac(sum, new(big.Int).Lsh(big.NewInt(1), uint(53*n)))
		if a.Cmp(best) > 0 {
			best = a
		}
		if bf, _ := best.Float64(); bf > 0 && math.Exp(-float64(n)*d) < bf/10 {
			return best
		}
		if n > 100000 {
			t.Fatalf("ε %g k %d: no end to the tails by n = %d", epsilon, k, n)
		}
	}
}

// TestRemainder: the anonymization's ε and the search's never add up, as decimals,
// to more than the whole, and the remainder is the largest float64 that does not.
func TestRemainder(t *testing.T) {
	for _, c := range []struct{ whole, part float64 }{
		{1, 0.1}, {0.3, 0.1}, {2, 0.7}, {1.1, 0.2}, {5, 4.999}, {0.01, 0.003}, {1, 0}, {3.3, 1.1}, {1, 1e-20}, {0.7, 3e-18},
	} {
		got := Remainder(c.whole, c.part)
		sum := new(big.Rat).Add(Decimal(got), Decimal(c.part))
		if sum.Cmp(Decimal(c.whole)) > 0 {
			t.Errorf("Remainder(%g, %g) = %g: with the part it adds up to %s, above the whole", c.whole, c.part, got, sum.FloatString(20))
		}
		next := math.Nextafter(got, math.Inf(1))
		if new(big.Rat).Add(Decimal(next), Decimal(c.part)).Cmp(Decimal(c.whole)) <= 0 {
			t.Errorf("Remainder(%g, %g) = %g, but %g fits too", c.whole, c.part, got, next)
		}
	}
}

// TestAmplified: the ε′ a search may spend on a sample is at most ln(1 + (e^ε − 1)/β)
// (checked in float64 with a margin above its error) and within 1e-9 of it, never
// below ε (β ≤ 1), and ε itself when β is 1.
func TestAmplified(t *testing.T) {
	for _, c := range []struct{ eps, anon float64 }{{1, 1}, {0.1, 1}, {0.5, 2}, {1, 0.1}, {3, 0.01}, {0.001, 3}} {
		p, err := Compute(c.anon, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Amplified(c.eps)
		if err != nil {
			t.Fatal(err)
		}
		f, _ := got.Float64()
		want := math.Log1p(math.Expm1(c.eps) / p.Beta)
		if f > want*(1+1e-15) || f < want*(1-1e-9) || f < c.eps*(1-1e-9) {
			t.Errorf("ε %g, β %g: amplified to %v, want just below %v", c.eps, p.Beta, f, want)
		}
	}
	one := Params{Beta: 1, BetaBits: 1 << 53}
	if got, _ := one.Amplified(1); got.Cmp(big.NewRat(1, 1)) > 0 {
		t.Errorf("β = 1 amplifies ε 1 to %s", got.FloatString(12))
	}
}
