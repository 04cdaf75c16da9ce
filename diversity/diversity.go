// Package diversity decides the l-diversity models of Machanavajjhala, Kifer, Gehrke
// and Venkitasubramaniam ("l-Diversity: Privacy Beyond k-Anonymity", ACM TKDD 1(1),
// 2007) on one equivalence class, given the class's histogram of a sensitive
// attribute: how many of the class's records hold each sensitive value. The order of
// the histogram does not matter and zero counts are ignored. The package does no I/O
// and knows nothing of the search: the search and the verifier both call it.
//
// It imports nothing of this module (docs/design.md's package table), so that the
// search and the verifier share only this arithmetic.
package diversity

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Variant is a variant of l-diversity, spelled as the configuration's
// privacy.l-diversity.variant (its String).
type Variant string

// Variants of l-diversity.
const (
	// Distinct: the class holds at least l distinct sensitive values.
	Distinct Variant = "distinct"
	// Entropy: the entropy of the class's sensitive values, −Σ p·ln p, is at least ln l.
	Entropy Variant = "entropy"
	// Recursive (c,l): with the counts sorted in decreasing order r₁ ≥ r₂ ≥ … ≥ rₘ,
	// r₁ < c·(r_l + r_{l+1} + … + rₘ): the most frequent value is not too frequent
	// even after an adversary rules out l−2 other values. A class with fewer than l
	// values fails.
	Recursive Variant = "recursive"
)

// Variants are the variants of l-diversity, in the order messages list them.
var Variants = []Variant{Distinct, Entropy, Recursive}

// String is the variant's name.
func (v Variant) String() string { return string(v) }

// Model is one l-diversity requirement.
type Model struct {
	Variant Variant
	L       float64 // Distinct and Recursive: a whole number; Entropy: any value ≥ 1
	C       float64 // Recursive only
	// Estimator is Entropy's estimator: Shannon ("" is Shannon), Grassberger or
	// GrassbergerARX.
	Estimator Estimator
}

// Check reports an impossible setting: l < 1, a fractional l where the variant counts
// values, c ≤ 0 for the recursive variant, or an unknown variant.
func (m Model) Check() error {
	switch m.Variant {
	case Distinct, Entropy, Recursive:
	default:
		return fmt.Errorf("unknown l-diversity variant %q (distinct, entropy or recursive)", m.Variant)
	}
	if !(m.L >= 1) || math.IsInf(m.L, 1) {
		return fmt.Errorf("l must be a number of at least 1, got %g", m.L)
	}
	if m.Variant != Entropy && m.L != math.Trunc(m.L) {
		return fmt.Errorf("l must be a whole number for %s l-diversity, got %g", m.Variant, m.L)
	}
	if m.Variant == Recursive && (!(m.C > 0) || math.IsInf(m.C, 1)) {
		return fmt.Errorf("c must be a number above 0, got %g", m.C)
	}
	switch {
	case m.Estimator == "" || m.Estimator == Shannon:
	case !m.Estimator.IsGrassberger():
		return fmt.Errorf("unknown entropy estimator %q (shannon, grassberger or grassberger-arx)", m.Estimator)
	case m.Variant != Entropy:
		return fmt.Errorf("an entropy estimator is for entropy l-diversity, not %s", m.Variant)
	}
	return nil
}

// Holds reports whether a class with the given sensitive histogram satisfies the model.
// The model must have passed Check.
func (m Model) Holds(counts []int64) bool {
	switch m.Variant {
	case Distinct:
		return float64(Values(counts)) >= m.L
	case Entropy:
		switch m.Estimator {
		case Grassberger:
			return GrassbergerHolds(counts, m.L)
		case GrassbergerARX:
			return GrassbergerARXHolds(counts, m.L)
		}
		return EntropyHolds(counts, m.L)
	case Recursive:
		return RecursiveHolds(counts, m.C, int(m.L))
	}
	return false
}

// Values is the number of distinct sensitive values of a class.
func Values(counts []int64) int {
	n := 0
	for _, c := range counts {
		if c > 0 {
			n++
		}
	}
	return n
}

// EntropyOf is the entropy −Σ p·ln p of a class's sensitive values (0 for an empty
// class), computed as ln N − (Σ n·ln n)/N from the counts n and their sum N.
func EntropyOf(counts []int64) float64 {
	var n int64
	s := 0.0
	for _, c := range counts {
		if c > 0 {
			n += c
			s += float64(c) * math.Log(float64(c))
		}
	}
	if n == 0 {
		return 0
	}
	return math.Log(float64(n)) - s/float64(n)
}

// entropySlack absorbs the rounding of EntropyOf: a class whose entropy is ln l exactly
// (l equally frequent values) holds entropy l-diversity, although the floating-point
// difference ln(l·n) − ln n can land an ulp below ln l. A class whose entropy lies
// within 1e-12 of ln l therefore counts as meeting it: the one place where the check is
// not exact, by a margin far below what separates the histograms of small classes.
const entropySlack = 1e-12

// EntropyHolds reports whether the entropy of a class is at least ln l.
func EntropyHolds(counts []int64, l float64) bool {
	return EntropyOf(counts) >= math.Log(l)-entropySlack
}

// RecursiveHolds reports whether a class satisfies recursive (c,l)-diversity.
func RecursiveHolds(counts []int64, c float64, l int) bool {
	if l < 1 {
		return false
	}
	r := make([]int64, 0, len(counts))
	for _, n := range counts {
		if n > 0 {
			r = append(r, n)
		}
	}
	if len(r) < l {
		return false
	}
	slices.SortFunc(r, func(a, b int64) int { return cmp.Compare(b, a) })
	var tail int64
	for _, n := range r[l-1:] {
		tail += n
	}
	return float64(r[0]) < c*float64(tail)
}
