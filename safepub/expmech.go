package safepub

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"math/big"
)

// Exponential draws an index of scores with probability proportional to
// exp(scale · scores[i]): the exponential mechanism (McSherry and Talwar 2007) with
// scale = ε / (2Δ) for scores of sensitivity Δ, which SafePub's search applies at
// every step. The draw is exact, with no floating point: an index drawn uniformly is
// accepted with probability exp(−scale · (max − scores[i])), a Bernoulli trial of
// exp(−γ) for rational γ ≥ 0 drawn from uniform integers of src (Canonne, Kamath and
// Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020,
// Algorithm 1), and the loop ends with probability at least 1/len(scores) each
// round. src is crypto/rand.Reader in a release.
func Exponential(scores []*big.Rat, scale *big.Rat, src io.Reader) (int, error) {
	if len(scores) == 0 {
		return 0, errors.New("safepub: the exponential mechanism over no candidate")
	}
	if scale == nil || scale.Sign() < 0 {
		return 0, fmt.Errorf("%w: the exponential mechanism's scale must be at least 0", ErrParams)
	}
	best := scores[0]
	for _, s := range scores[1:] {
		if s.Cmp(best) > 0 {
			best = s
		}
	}
	m := big.NewInt(int64(len(scores)))
	gamma := new(big.Rat)
	for {
		i, err := rand.Int(src, m)
		if err != nil {
			return 0, fmt.Errorf("safepub: the exponential mechanism: reading the random source: %w", err)
		}
		k := int(i.Int64())
		gamma.Sub(best, scores[k])
		gamma.Mul(gamma, scale)
		ok, err := bernoulliExp(gamma, src)
		if err != nil {
			return 0, err
		}
		if ok {
			return k, nil
		}
	}
}

// bernoulliExp is true with probability exp(−gamma), exactly (gamma ≥ 0 rational).
func bernoulliExp(gamma *big.Rat, src io.Reader) (bool, error) {
	one := big.NewRat(1, 1)
	if gamma.Cmp(one) <= 0 {
		return bernoulliExpUnit(gamma, src)
	}
	// exp(−γ) = exp(−1)^⌊γ⌋ · exp(−(γ − ⌊γ⌋))
	whole := new(big.Int).Quo(gamma.Num(), gamma.Denom())
	for n := new(big.Int); n.Cmp(whole) < 0; n.Add(n, big.NewInt(1)) {
		ok, err := bernoulliExpUnit(one, src)
		if err != nil || !ok {
			return false, err
		}
	}
	frac := new(big.Rat).Sub(gamma, new(big.Rat).SetInt(whole))
	return bernoulliExpUnit(frac, src)
}

// bernoulliExpUnit is true with probability exp(−gamma) for gamma in [0, 1]: with
// A_k ~ Bernoulli(gamma/k), the first k with A_k false is odd with probability
// Σ (−gamma)^j / j! = exp(−gamma).
func bernoulliExpUnit(gamma *big.Rat, src io.Reader) (bool, error) {
	p := new(big.Rat)
	for k := int64(1); ; k++ {
		p.Quo(gamma, big.NewRat(k, 1))
		a, err := bernoulli(p, src)
		if err != nil {
			return false, err
		}
		if !a {
			return k%2 == 1, nil
		}
	}
}

// bernoulli is true with probability p in [0, 1] (rational), exactly: a uniform
// integer below p's denominator is below its numerator.
func bernoulli(p *big.Rat, src io.Reader) (bool, error) {
	if p.Sign() <= 0 {
		return false, nil
	}
	u, err := rand.Int(src, p.Denom())
	if err != nil {
		return false, fmt.Errorf("safepub: reading the random source: %w", err)
	}
	return u.Cmp(p.Num()) < 0, nil
}
