package release

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"sanitizer/generalize"
	"sanitizer/safepub"
	"sanitizer/schema"
)

// auditTable is a table of one quasi-identifier with two values, a and b: m records
// of a, then 3 of b.
func auditTable(t testing.TB, m int) *generalize.Table {
	t.Helper()
	h, err := generalize.NewHierarchy("ab", [][]string{{"a", generalize.Top}, {"b", generalize.Top}})
	if err != nil {
		t.Fatal(err)
	}
	n := m + 3
	codes := generalize.NewCodes(n, 2)
	for r := m; r < n; r++ {
		codes.Set(r, 1)
	}
	return &generalize.Table{Rows: n, Columns: []generalize.Column{{Name: "q", Hierarchy: h, Codes: codes}}}
}

// released runs a SafePub release's sample and suppression (dpClasses, the release's
// own code) of tab at its bottom node with params, its draws from src, and reports
// whether the class of a (the records before the last 3) is released.
func released(t testing.TB, tab *generalize.Table, params safepub.Params, src *rand.ChaCha8) bool {
	t.Helper()
	dr := &dpRelease{params: params, node: []int{0}}
	var err error
	if dr.sampled, err = params.Sample(tab.Rows, src); err != nil {
		t.Fatal(err)
	}
	r := &run{t: tab, sopt: generalize.Options{K: 1, Metric: schema.MetricLoss}}
	if _, err := r.dpClasses(context.Background(), dr); err != nil {
		t.Fatal(err)
	}
	for _, c := range r.class[:tab.Rows-3] {
		if c >= 0 {
			return true
		}
	}
	return false
}

// TestDPAudit audits the release's guarantee as the DP outputs' statistical tests do:
// for neighbouring inputs (a class of m records of a, and the same with one record
// more) it runs the release's sampling and suppression many times on each and counts
// how often the class of a is released; the Clopper–Pearson bounds on the two
// frequencies imply a lower bound on ε at the claimed δ, ln((p₁ − δ)/p₂) with p₁'s
// lower bound and p₂'s upper one, both ways round, over m from k−1 up, which must not
// exceed the claimed ε. Positive controls, the same audit of releases whose k or β
// was weakened, must be flagged.
func TestDPAudit(t *testing.T) {
	if testing.Short() {
		// With fewer runs the k-halved control is flagged about half the time (its
		// margin at 4,000 runs is more than five standard deviations), and the audit
		// has no concurrency for the race detector's -short run to check.
		t.Skip("statistical audit: runs in the full test run")
	}
	const runs = 4000
	const epsilon, delta = 1, 0.05
	params, err := safepub.Compute(epsilon, delta)
	if err != nil {
		t.Fatal(err)
	}
	src := rand.NewChaCha8([32]byte{'a', 'u', 'd', 'i', 't'})
	if got := auditEpsilon(t, params, delta, runs, src); got > epsilon {
		t.Errorf("ε=%g, δ=%g (β=%.4f, k=%d): the audit's lower bound on ε is %.3f, above the claimed ε", float64(epsilon), delta, params.Beta, params.K, got)
	} else {
		t.Logf("ε=%g, δ=%g (β=%.4f, k=%d): the audit's lower bound on ε is %.3f", float64(epsilon), delta, params.Beta, params.K, got)
	}
	weakK := params
	weakK.K = params.K / 2
	allDrawn := params
	allDrawn.BetaBits, allDrawn.Beta = 1<<53, 1
	moreDrawn := params
	moreDrawn.BetaBits = 15 << 49 // β = 0.9375
	moreDrawn.Beta = float64(moreDrawn.BetaBits) / (1 << 53)
	controls := []struct {
		name string
		weak safepub.Params
	}{{"k halved", weakK}, {"every record drawn", allDrawn}, {"β 0.9375", moreDrawn}}
	for _, c := range controls { // in a fixed order: the draws come from one seeded stream
		name, weak := c.name, c.weak
		if got := auditEpsilon(t, weak, delta, runs, src); got <= epsilon {
			t.Errorf("positive control (%s: β=%.4f, k=%d): the audit's lower bound on ε is %.3f, not above the claimed %g: the audit cannot tell", name, weak.Beta, weak.K, got, float64(epsilon))
		} else {
			t.Logf("positive control (%s: β=%.4f, k=%d) flagged: lower bound on ε %.3f", name, weak.Beta, weak.K, got)
		}
	}
}

// auditEpsilon is the largest lower bound on ε the audit finds for releases made with
// params, at δ, over classes of m = k−1 … k+6 records (where one record more or less
// decides whether the class is released).
func auditEpsilon(t *testing.T, params safepub.Params, delta float64, runs int, src *rand.ChaCha8) float64 {
	t.Helper()
	worst := math.Inf(-1)
	for m := max(params.K-1, 1); m <= params.K+6; m++ {
		d, d1 := auditTable(t, m), auditTable(t, m+1)
		var x, x1 int
		for range runs {
			if released(t, d, params, src) {
				x++
			}
			if released(t, d1, params, src) {
				x1++
			}
		}
		const alpha = 1e-4 // per bound: the scan makes a few hundred
		lo, up := clopperPearson(x, runs, alpha)
		lo1, up1 := clopperPearson(x1, runs, alpha)
		for _, b := range [][2]float64{{lo1, up}, {lo, up1}} {
			if b[0] > delta && b[1] > 0 {
				worst = max(worst, math.Log((b[0]-delta)/b[1]))
			} else if b[0] > delta {
				worst = math.Inf(1)
			}
		}
	}
	return worst
}

// clopperPearson is the exact (Clopper–Pearson) confidence bounds on a binomial
// proportion from x successes in n trials, each one-sided at level alpha.
func clopperPearson(x, n int, alpha float64) (lo, hi float64) {
	if x > 0 {
		lo = bisect(func(p float64) bool { return binomTail(x, n, p) >= alpha })
	}
	hi = 1
	if x < n {
		hi = bisect(func(p float64) bool { return binomTail(x+1, n, p) >= 1-alpha }) // P(X ≤ x) ≤ alpha above hi
	}
	return lo, hi
}

// bisect is the least p in [0, 1] where ok turns true (ok monotone).
func bisect(ok func(p float64) bool) float64 {
	a, b := 0.0, 1.0
	for range 100 {
		mid := (a + b) / 2
		if ok(mid) {
			b = mid
		} else {
			a = mid
		}
	}
	return b
}

// binomTail is P(X ≥ x) for X ~ Binomial(n, p): summed from the term at x away from
// the mean (upwards when x lies above it, else the complement downwards), the first
// term from log-gamma and the rest by the ratio of consecutive terms, so that a sum
// that matters never starts from a term that underflows.
func binomTail(x, n int, p float64) float64 {
	switch {
	case x <= 0:
		return 1
	case x > n || p <= 0:
		return 0
	case p >= 1:
		return 1
	}
	odds := p / (1 - p)
	if float64(x) >= float64(n)*p {
		sum, term := 0.0, binomTerm(x, n, p)
		for j := x; j <= n && term > 0; j++ {
			sum += term
			term *= float64(n-j) / float64(j+1) * odds
		}
		return math.Min(sum, 1)
	}
	sum, term := 0.0, binomTerm(x-1, n, p) // P(X ≤ x−1), downwards
	for j := x - 1; j >= 0 && term > 0; j-- {
		sum += term
		term *= float64(j) / float64(n-j+1) / odds
	}
	return math.Max(0, 1-sum)
}

// binomTerm is P(X = j) for X ~ Binomial(n, p).
func binomTerm(j, n int, p float64) float64 {
	lgn, _ := math.Lgamma(float64(n + 1))
	a, _ := math.Lgamma(float64(j + 1))
	b, _ := math.Lgamma(float64(n - j + 1))
	return math.Exp(lgn - a - b + float64(j)*math.Log(p) + float64(n-j)*math.Log1p(-p))
}
