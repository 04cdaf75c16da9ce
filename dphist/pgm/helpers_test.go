package pgm

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// bruteJoint enumerates every joint assignment of dom and returns the
// normalised distribution p(x) ∝ exp(Σ_m θ_m(x_m)), indexed row-major over
// all attributes. It shares no code with the junction tree.
func bruteJoint(dom Domain, cliques [][]int, theta [][]float64) []float64 {
	n := 1
	for _, s := range dom {
		n *= s
	}
	logp := make([]float64, n)
	x := make([]int, len(dom))
	for idx := 0; idx < n; idx++ {
		// decode idx
		r := idx
		for a := len(dom) - 1; a >= 0; a-- {
			x[a] = r % dom[a]
			r /= dom[a]
		}
		s := 0.0
		for m, c := range cliques {
			k := 0
			for _, a := range c {
				k = k*dom[a] + x[a]
			}
			s += theta[m][k]
		}
		logp[idx] = s
	}
	mx := math.Inf(-1)
	for _, v := range logp {
		mx = max(mx, v)
	}
	z := 0.0
	for i, v := range logp {
		logp[i] = math.Exp(v - mx)
		z += logp[i]
	}
	for i := range logp {
		logp[i] /= z
	}
	return logp
}

// bruteMarginal sums a joint table (row-major over dom) onto attrs.
func bruteMarginal(dom Domain, joint []float64, attrs []int) []float64 {
	size := 1
	for _, a := range attrs {
		size *= dom[a]
	}
	out := make([]float64, size)
	x := make([]int, len(dom))
	for idx, p := range joint {
		r := idx
		for a := len(dom) - 1; a >= 0; a-- {
			x[a] = r % dom[a]
			r /= dom[a]
		}
		k := 0
		for _, a := range attrs {
			k = k*dom[a] + x[a]
		}
		out[k] += p
	}
	return out
}

// randomCliques returns k distinct random sorted cliques of 1..maxLen
// attributes of an n-attribute domain.
func randomCliques(rng *rand.Rand, n, k, maxLen int) [][]int {
	seen := map[string]bool{}
	var out [][]int
	for tries := 0; len(out) < k && tries < 1000; tries++ {
		l := 1 + rng.IntN(maxLen)
		perm := rng.Perm(n)[:min(l, n)]
		slices.Sort(perm)
		key := cliqueKey(perm)
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, perm)
	}
	return out
}

// randomTheta returns normal(0, scale) log-potentials for the cliques.
func randomTheta(rng *rand.Rand, dom Domain, cliques [][]int, scale float64) [][]float64 {
	th := make([][]float64, len(cliques))
	for m, c := range cliques {
		th[m] = make([]float64, dom.cells(c))
		for i := range th[m] {
			th[m][i] = scale * rng.NormFloat64()
		}
	}
	return th
}

// relL1 returns Σ|a−b| / total.
func relL1(a, b []float64, total float64) float64 {
	s := 0.0
	for i := range a {
		s += math.Abs(a[i] - b[i])
	}
	return s / total
}

// chiSquareQuantile approximates the upper-p quantile of the chi-square
// distribution with k degrees of freedom (Wilson–Hilferty), for p = 1e-6.
func chiSquareQuantile1e6(k int) float64 {
	const z = 4.753424308822899 // upper 1e-6 quantile of N(0,1)
	kf := float64(k)
	h := 2 / (9 * kf)
	t := 1 - h + z*math.Sqrt(h)
	return kf * t * t * t
}

// checkRecords fails the test unless recs has a column of n values inside the domain
// for every attribute of dom.
func checkRecords(t *testing.T, dom Domain, recs [][]int32, n int) {
	t.Helper()
	if len(recs) != len(dom) {
		t.Fatalf("%d columns for %d attributes", len(recs), len(dom))
	}
	for a, col := range recs {
		if len(col) != n {
			t.Fatalf("column %d has %d rows, want %d", a, len(col), n)
		}
		for _, v := range col {
			if v < 0 || int(v) >= dom[a] {
				t.Fatalf("attribute %d value %d out of domain", a, v)
			}
		}
	}
}
