package diversity

import "math"

// Estimator is an estimator of the entropy of entropy l-diversity, spelled as the
// configuration's privacy.l-diversity.estimator (its String).
type Estimator string

// Entropy estimators of entropy l-diversity.
const (
	// Shannon is the plug-in entropy −Σ p·ln p of the class's shares (the default).
	Shannon Estimator = "shannon"
	// Grassberger is Grassberger's estimator of the entropy of the distribution the
	// class was drawn from (P. Grassberger, "Entropy estimates from insufficient
	// samplings", arXiv:physics/0307138, 2003; ARX's EntropyEstimator.GRASSBERGER):
	// ln N − (1/N)·Σ nᵢ·G(nᵢ), with G(n) = ψ(n) + ½(−1)ⁿ(ψ((n+1)/2) − ψ(n/2)), ψ the
	// digamma function. It corrects the plug-in estimate's downward bias on small
	// classes and is not bounded by ln of the values present: a class of two records
	// with two values has an estimate of 1.96 (an l of 7.1), one record twice −0.04.
	Grassberger Estimator = "grassberger"
	// GrassbergerARX is Grassberger's estimator as ARX computes it
	// (EntropyLDiversity.isAnonymous with EntropyEstimator.GRASSBERGER): G(N) −
	// (1/N)·Σ nᵢ·G(nᵢ), G(N) in place of the estimate's ln N, and a class must first
	// hold at least ⌈l⌉ distinct values. G(N) exceeds ln N by about 1/(6N²)·… for large
	// N (G(2m) − ln 2m → 0) but by 0.04 at N = 2 and −1.27 at N = 1, so on small
	// classes the two differ: a class of two records with two values has an ARX
	// estimate of 2.00 (the paper's 1.96), but is not 3-diverse under ARX's rule, as it
	// holds two values.
	GrassbergerARX Estimator = "grassberger-arx"
)

// Estimators are the entropy estimators, in the order messages list them.
var Estimators = []Estimator{Shannon, Grassberger, GrassbergerARX}

// String is the estimator's name.
func (e Estimator) String() string { return string(e) }

// IsGrassberger reports whether e is one of Grassberger's estimates (the paper's or
// ARX's): neither is bounded by ln of the values present, nor known to hold for a
// union of classes that each meet it.
func (e Estimator) IsGrassberger() bool { return e == Grassberger || e == GrassbergerARX }

// GrassbergerOf is Grassberger's entropy estimate of a class's sensitive values (0 for
// an empty class).
func GrassbergerOf(counts []int64) float64 {
	n, s := gSum(counts)
	if n == 0 {
		return 0
	}
	return math.Log(float64(n)) - s/float64(n)
}

// gSum is a class's records N and Σ nᵢ·G(nᵢ) over its values' counts nᵢ.
func gSum(counts []int64) (n int64, s float64) {
	for _, c := range counts {
		if c > 0 {
			n += c
			s += float64(c) * grassbergerG(c)
		}
	}
	return n, s
}

// GrassbergerHolds reports whether Grassberger's entropy estimate of a class is at
// least ln l (with entropySlack, as EntropyHolds).
func GrassbergerHolds(counts []int64, l float64) bool {
	return GrassbergerOf(counts) >= math.Log(l)-entropySlack
}

// GrassbergerARXOf is ARX's form of Grassberger's estimate of a class's sensitive
// values (GrassbergerARX; 0 for an empty class): G(N) − (1/N)·Σ nᵢ·G(nᵢ).
func GrassbergerARXOf(counts []int64) float64 {
	n, s := gSum(counts)
	if n == 0 {
		return 0
	}
	return grassbergerG(n) - s/float64(n)
}

// GrassbergerARXHolds reports whether a class meets entropy l-diversity as ARX decides
// it with Grassberger's estimator: at least ⌈l⌉ distinct values, and
// GrassbergerARXOf at least ln l (with entropySlack, as EntropyHolds).
func GrassbergerARXHolds(counts []int64, l float64) bool {
	if float64(Values(counts)) < math.Ceil(l) {
		return false
	}
	return GrassbergerARXOf(counts) >= math.Log(l)-entropySlack
}

// grassbergerG is G(n) for a count n ≥ 1. For whole n it has the closed form
// G(2m) = G(2m+1) = −ln 2 + 2ψ(2m+1) − ψ(m+1) (and G(1) = −γ − ln 2), from
// Grassberger's G(2m+1) = G(2m) = −γ − ln 2 + Σ_{k=1}^{m} 2/(2k−1).
func grassbergerG(n int64) float64 {
	m := n / 2
	if m == 0 {
		return -eulerGamma - math.Ln2
	}
	return -math.Ln2 + 2*digamma(float64(2*m+1)) - digamma(float64(m+1))
}

const eulerGamma = 0.57721566490153286060651209008240243

// digamma is ψ(x) for x > 0: raised by ψ(x) = ψ(x+1) − 1/x to x ≥ 20, then the
// asymptotic series ln x − 1/(2x) − Σ B₂ₖ/(2k·x²ᵏ), whose next term is below 1e-17
// there.
func digamma(x float64) float64 {
	v := 0.0
	for x < 20 {
		v -= 1 / x
		x++
	}
	inv := 1 / x
	inv2 := inv * inv
	series := inv2 * (1.0/12 - inv2*(1.0/120-inv2*(1.0/252-inv2*(1.0/240-inv2*(1.0/132)))))
	return v + math.Log(x) - 0.5*inv - series
}
