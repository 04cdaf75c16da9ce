package risk

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// uqDist is the distribution of the given (size, classes) pairs.
func uqDist(t *testing.T, counts ...SizeCount) Distribution {
	t.Helper()
	d, err := FromCounts(counts)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// uqClose reports whether got is within rel (relative) of want.
func uqClose(got, want, rel float64) bool {
	return math.Abs(got-want) <= rel*math.Max(math.Abs(want), 1e-300)
}

// adultCounts is the class-size distribution of ARX's test data set data/adult.csv
// (30,162 records of the UCI Adult data) with all nine of its columns as
// quasi-identifiers, which is how ARX's TestRiskMetrics (getDataObject) loads it: every
// column has a hierarchy file, and every such column becomes a quasi-identifier. It was
// counted from that file (identical rows grouped); the test below checks it against the
// two figures of ARX's tests that depend on nothing but it.
var adultCounts = []SizeCount{
	{1, 15512}, {2, 2098}, {3, 754}, {4, 375}, {5, 189}, {6, 155}, {7, 97}, {8, 73},
	{9, 39}, {10, 37}, {11, 29}, {12, 18}, {13, 23}, {14, 14}, {15, 15}, {16, 9},
	{17, 11}, {18, 10}, {19, 10}, {20, 5}, {21, 3}, {22, 4}, {23, 3}, {24, 2}, {25, 1},
	{26, 3}, {27, 5}, {29, 1}, {30, 2}, {32, 1}, {34, 1}, {35, 1}, {36, 1}, {45, 1},
}

func TestUniquenessModelNames(t *testing.T) {
	for _, m := range []UniquenessModel{Dankar, Zayatz, Pitman, SNB} {
		got, err := ParseUniquenessModel(m.String())
		if err != nil || got != m {
			t.Errorf("ParseUniquenessModel(%q) = %v, %v; want %v", m.String(), got, err, m)
		}
	}
	for in, want := range map[string]UniquenessModel{"zayatz": Zayatz, "Pitman": Pitman, " SNB ": SNB, "DANKAR": Dankar} {
		if got, err := ParseUniquenessModel(in); err != nil || got != want {
			t.Errorf("ParseUniquenessModel(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "mu-argus", "zayat"} {
		if _, err := ParseUniquenessModel(in); err == nil {
			t.Errorf("ParseUniquenessModel(%q) accepted", in)
		}
	}
	if s := UniquenessModel(7).String(); s != "UniquenessModel(7)" {
		t.Errorf("String of an unknown model = %q", s)
	}
	if Dankar != 0 {
		t.Error("the zero UniquenessModel is not Dankar's rule")
	}
}

func TestPopulationUniquenessErrors(t *testing.T) {
	d := uqDist(t, SizeCount{1, 2}, SizeCount{2, 1})
	for _, f := range []float64{0, -0.5, 1.0000001, 2, math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := PopulationUniqueness(d, f, Dankar); !errors.Is(err, ErrSamplingFraction) {
			t.Errorf("fraction %v: error %v, want ErrSamplingFraction", f, err)
		}
	}
	if _, err := PopulationUniqueness(Distribution{}, 0.1, Zayatz); !errors.Is(err, ErrNoRecords) {
		t.Errorf("empty table: error %v, want ErrNoRecords", err)
	}
	for _, m := range []UniquenessModel{-1, 4} {
		if _, err := PopulationUniqueness(d, 0.1, m); err == nil {
			t.Errorf("model %d accepted", m)
		}
	}
}

func TestSampleUniqueness(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    Distribution
		want float64
	}{
		{"empty", Distribution{}, 0},
		{"sizes 1,1,2: 2 of 4 records unique", uqDist(t, SizeCount{1, 2}, SizeCount{2, 1}), 0.5},
		{"no unique", uqDist(t, SizeCount{3, 4}), 0},
		{"all unique", uqDist(t, SizeCount{1, 7}), 1},
		// ARX TestRiskMetrics.testDecisionRule2: at fraction 1 the population uniqueness
		// is the sample uniqueness, 0.5142895033485844 (= 15512/30162).
		{"adult", uqDist(t, adultCounts...), 0.5142895033485844},
	} {
		if got := SampleUniqueness(tc.d); !uqClose(got, tc.want, 1e-15) && got != tc.want {
			t.Errorf("%s: SampleUniqueness = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestZayatzByHand checks Zayatz's estimate against the arithmetic of Bayes' rule with
// hypergeometric chances, done by hand.
func TestZayatzByHand(t *testing.T) {
	for _, tc := range []struct {
		name     string
		d        Distribution
		fraction float64
		uniques  float64
	}{
		{
			// n=4 (sizes 1,1,2), N=8. P(f=1|F=1) = n/N = 1/2; P(f=1|F=2) = 2·C(6,3)/C(8,4)
			// = 40/70 = 4/7. P(F=1|f=1) = (2/3·1/2) / (2/3·1/2 + 1/3·4/7) = 7/11.
			// S₁ = s₁·7/11·N/n = 2·7/11·2 = 28/11.
			"sizes 1,1,2 at 1/2", uqDist(t, SizeCount{1, 2}, SizeCount{2, 1}), 0.5, 28.0 / 11,
		},
		{
			// n=6 (sizes 1,1,1,3), N=12. P(f=1|F=1) = 1/2; P(f=1|F=3) = 3·C(9,5)/C(12,6) =
			// 378/924 = 9/22. P(F=1|f=1) = (3/4·1/2) / (3/4·1/2 + 1/4·9/22) = 11/14.
			// S₁ = 3·11/14·2 = 33/7.
			"sizes 1,1,1,3 at 1/2", uqDist(t, SizeCount{1, 3}, SizeCount{3, 1}), 0.5, 33.0 / 7,
		},
		{
			// n=4 (sizes 1,3), N=5: a sample of 4 of 5 cannot hold just one of a class of
			// 3, so P(f=1|F=3) = 0, P(F=1|f=1) = 1 and S₁ = 1·5/4.
			"sizes 1,3 at 4/5", uqDist(t, SizeCount{1, 1}, SizeCount{3, 1}), 0.8, 1.25,
		},
		{
			// Every record unique: P(F=1|f=1) = 1 and S₁ = s₁·N/n = N = 40.
			"4 uniques at 1/10", uqDist(t, SizeCount{1, 4}), 0.1, 40,
		},
	} {
		got, err := PopulationUniqueness(tc.d, tc.fraction, Zayatz)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		N := float64(tc.d.Records()) / tc.fraction
		if !got.Valid || got.Model != Zayatz || !uqClose(got.Uniques, tc.uniques, 1e-12) || !uqClose(got.Share, tc.uniques/N, 1e-12) {
			t.Errorf("%s: %+v, want %v uniques (share %v)", tc.name, got, tc.uniques, tc.uniques/N)
		}
	}
}

// pitmanScoreDirect is the gradient of Pitman's log-likelihood term by term, as
// Hoshino (2001) writes it, with none of the digamma shortcuts of pitmanScore.
func pitmanScoreDirect(d Distribution, theta, alpha float64) (g0, g1, scale0, scale1 float64) {
	u, n := d.Classes(), d.Records()
	var a0, a1, c0, e0 float64
	for i := int64(1); i < u; i++ {
		a0 += 1 / (theta + float64(i)*alpha)
		a1 += float64(i) / (theta + float64(i)*alpha)
	}
	for i := int64(1); i < n; i++ {
		c0 += 1 / (theta + float64(i))
	}
	for _, c := range d.Counts() {
		for k := int64(1); k < c.Size; k++ {
			e0 += float64(c.Classes) / (float64(k) - alpha)
		}
	}
	return a0 - c0, a1 - e0, c0, e0
}

// pitmanHessianDirect is the Hessian of Pitman's log-likelihood term by term:
// ∂²/∂θ² = −Σ_{i<u} 1/(θ+iα)² + Σ_{i<n} 1/(θ+i)², ∂²/∂θ∂α = −Σ_{i<u} i/(θ+iα)²,
// ∂²/∂α² = −Σ_{i<u} i²/(θ+iα)² − Σ_j s_j Σ_{k<j} 1/(k−α)².
func pitmanHessianDirect(d Distribution, theta, alpha float64) (h [2][2]float64) {
	for i := int64(1); i < d.Classes(); i++ {
		v := 1 / (theta + float64(i)*alpha)
		fi := float64(i)
		h[0][0] -= v * v
		h[0][1] -= fi * v * v
		h[1][1] -= fi * fi * v * v
	}
	for i := int64(1); i < d.Records(); i++ {
		h[0][0] += 1 / ((theta + float64(i)) * (theta + float64(i)))
	}
	for _, c := range d.Counts() {
		for k := int64(1); k < c.Size; k++ {
			h[1][1] -= float64(c.Classes) / ((float64(k) - alpha) * (float64(k) - alpha))
		}
	}
	h[1][0] = h[0][1]
	return h
}

func TestPitmanByHand(t *testing.T) {
	// Sizes 1,2: u=2, n=3, s₁=s₂=1. At θ=1, α=1/2:
	//   ∂L/∂θ = 1/(θ+α) − 1/(θ+1) − 1/(θ+2) = 2/3 − 1/2 − 1/3 = −1/6
	//   ∂L/∂α = 1/(θ+α) − 1/(1−α) = 2/3 − 2 = −4/3
	//   ∂²L/∂θ² = −1/(θ+α)² + 1/(θ+1)² + 1/(θ+2)² = −4/9 + 1/4 + 1/9 = −1/12
	//   ∂²L/∂θ∂α = −1/(θ+α)² = −4/9
	//   ∂²L/∂α² = −1/(θ+α)² − 1/(1−α)² = −4/9 − 4 = −40/9
	s := sampleOf(uqDist(t, SizeCount{1, 1}, SizeCount{2, 1}), 0.1)
	g, h, ok := s.pitmanScore(1, 0.5)
	want := [5]float64{-1.0 / 6, -4.0 / 3, -1.0 / 12, -4.0 / 9, -40.0 / 9}
	got := [5]float64{g[0], g[1], h[0][0], h[0][1], h[1][1]}
	if !ok || h[0][1] != h[1][0] {
		t.Fatalf("score at (1, 1/2): ok=%v, h=%v", ok, h)
	}
	for i := range want {
		if !uqClose(got[i], want[i], 1e-14) {
			t.Errorf("score/Hessian term %d = %v, want %v", i, got[i], want[i])
		}
	}
	// The same sample has no maximum: ∂L/∂α = 0 needs θ = 1 − 2α, and then ∂L/∂θ = 0
	// needs 1/(2(1−α)) = 1/(3−2α), that is 3 = 2. Pitman has no estimate.
	if u, _ := PopulationUniqueness(s.d, 0.1, Pitman); u.Valid || u.Uniques != 0 || u.Model != Pitman {
		t.Errorf("sizes 1,2: Pitman = %+v, want no estimate", u)
	}
	// Sizes 1×5, 2×3, 4×1: the likelihood grows towards α → 0 (θ ≈ 8.6), the
	// boundary of the model (searched on a grid); no estimate either.
	if u, _ := PopulationUniqueness(uqDist(t, SizeCount{1, 5}, SizeCount{2, 3}, SizeCount{4, 1}), 0.05, Pitman); u.Valid {
		t.Errorf("sizes 1×5, 2×3, 4×1: Pitman = %+v, want no estimate", u)
	}
	// S₁ = N^α·Γ(θ+1)/Γ(θ+α) at N=100, θ=1, α=1/2: 10·Γ(2)/Γ(3/2) = 10/(√π/2) = 20/√π.
	if got, want := pitmanUniques(100, 1, 0.5), 20/math.Sqrt(math.Pi); !uqClose(got, want, 1e-13) {
		t.Errorf("pitmanUniques(100, 1, 1/2) = %v, want %v", got, want)
	}
}

// TestPitmanScoreClosedForm compares the digamma form of the score and Hessian, used
// when a sample has more than 4097 classes, with the sums term by term.
func TestPitmanScoreClosedForm(t *testing.T) {
	d := uqDist(t, SizeCount{1, 6000}, SizeCount{2, 1500}, SizeCount{3, 500}, SizeCount{5, 100}, SizeCount{10, 20}, SizeCount{200, 1})
	s := sampleOf(d, 0.05)
	for _, p := range [][2]float64{{1, 0.5}, {3000, 0.7}, {0.2, 0.05}, {50, 0.95}, {-0.3, 0.4}} {
		theta, alpha := p[0], p[1]
		g, h, ok := s.pitmanScore(theta, alpha)
		g0, g1, sc0, sc1 := pitmanScoreDirect(d, theta, alpha)
		if !ok || math.Abs(g[0]-g0) > 1e-11*sc0 || math.Abs(g[1]-g1) > 1e-11*sc1 {
			t.Errorf("(θ, α) = %v: score %v, term by term %v", p, g, [2]float64{g0, g1})
		}
		// The Hessian against its terms.
		want := pitmanHessianDirect(d, theta, alpha)
		for i := range 2 {
			for j := range 2 {
				if !uqClose(h[i][j], want[i][j], 1e-10) {
					t.Errorf("(θ, α) = %v: Hessian[%d][%d] = %v, term by term %v", p, i, j, h[i][j], want[i][j])
				}
			}
		}
	}
	// Outside the domain there is no score.
	for _, p := range [][2]float64{{1, 0}, {1, 1}, {-0.6, 0.5}, {math.NaN(), 0.5}} {
		if _, _, ok := s.pitmanScore(p[0], p[1]); ok {
			t.Errorf("(θ, α) = %v accepted", p)
		}
	}
}

// TestPitmanFitIsMaximum checks that the fitted (θ, α) zeroes the likelihood's
// gradient, summed term by term, and is a maximum.
func TestPitmanFitIsMaximum(t *testing.T) {
	for _, d := range []Distribution{
		uqDist(t, adultCounts...),
		uqDist(t, SizeCount{1, 6000}, SizeCount{2, 1500}, SizeCount{3, 500}, SizeCount{5, 100}, SizeCount{10, 20}, SizeCount{200, 1}),
		uqDist(t, SizeCount{1, 8}, SizeCount{2, 2}, SizeCount{5, 1}),
	} {
		s := sampleOf(d, 0.05)
		theta, alpha, ok := s.pitmanFit()
		if !ok {
			t.Errorf("%v: no fit", d.Counts()[:3])
			continue
		}
		g0, g1, sc0, sc1 := pitmanScoreDirect(d, theta, alpha)
		if math.Abs(g0) > 1e-8*sc0 || math.Abs(g1) > 1e-8*sc1 {
			t.Errorf("%v: score at the fit (%v, %v) = %v, %v", d.Counts()[:3], theta, alpha, g0, g1)
		}
		_, h, _ := s.pitmanScore(theta, alpha)
		if !(h[0][0] < 0 && h[0][0]*h[1][1]-h[0][1]*h[1][0] > 0) {
			t.Errorf("%v: the fit is not a maximum: Hessian %v", d.Counts()[:3], h)
		}
	}
}

// snbExpectedDirect is E s₁/K and E s₂/K of the SNB model by summing over the population
// class size F = 1+m: P(F) = Γ(m+α)/(Γ(α)m!)·β^α(1−β)^m times the binomial chance that 1
// resp. 2 of the F members are sampled.
func snbExpectedDirect(alpha, beta, pi float64) (e1, e2 float64) {
	la, _ := math.Lgamma(alpha)
	for m := 0; m < 20000; m++ {
		fm := float64(m)
		lgm, _ := math.Lgamma(fm + alpha)
		lf, _ := math.Lgamma(fm + 1)
		p := math.Exp(lgm - la - lf + alpha*math.Log(beta) + fm*math.Log1p(-beta))
		F := fm + 1
		e1 += p * F * pi * math.Pow(1-pi, F-1)
		if F >= 2 {
			e2 += p * F * (F - 1) / 2 * pi * pi * math.Pow(1-pi, F-2)
		}
	}
	return e1, e2
}

func TestSNBExpectations(t *testing.T) {
	for _, p := range [][3]float64{{0.7, 0.3, 0.2}, {2.5, 0.05, 0.01}, {0.1, 0.6, 0.5}, {1, 0.5, 0.9}} {
		alpha, beta, pi := p[0], p[1], p[2]
		e1, e2 := snbExpectedDirect(alpha, beta, pi)
		// With K = 1 and s₁ = s₂ = 1 the residuals are ln E s₁ and ln E s₂.
		s := sample{pi: pi, s1: 1, s2: 1}
		r, jac, ok := s.snbSystem(1)([2]float64{math.Log(alpha), math.Log(beta / (1 - beta))})
		if !ok || !uqClose(math.Exp(r[0]), e1, 1e-10) || !uqClose(math.Exp(r[1]), e2, 1e-10) {
			t.Errorf("α=%v β=%v π=%v: closed forms %v, %v; sums %v, %v", alpha, beta, pi, math.Exp(r[0]), math.Exp(r[1]), e1, e2)
		}
		// The Jacobian against central differences.
		v := [2]float64{math.Log(alpha), math.Log(beta / (1 - beta))}
		const e = 1e-6
		for k := range 2 {
			vp, vm := v, v
			vp[k] += e
			vm[k] -= e
			rp, _, _ := s.snbSystem(1)(vp)
			rm, _, _ := s.snbSystem(1)(vm)
			for i := range 2 {
				if num := (rp[i] - rm[i]) / (2 * e); math.Abs(jac[i][k]-num) > 1e-7*math.Max(1, math.Abs(num)) {
					t.Errorf("α=%v β=%v π=%v: ∂r%d/∂v%d = %v, differences %v", alpha, beta, pi, i, k, jac[i][k], num)
				}
			}
		}
		// The solver recovers α and β from the expectations they give.
		K := 5000.0
		s = sample{pi: pi, s1: K * e1, s2: K * e2}
		ga, gb, ok := s.snbFit(K)
		if !ok || !uqClose(ga, alpha, 1e-7) || !uqClose(gb, beta, 1e-7) {
			t.Errorf("α=%v β=%v π=%v: fit gives α=%v β=%v ok=%v", alpha, beta, pi, ga, gb, ok)
		}
	}
}

// TestSNBAdult fits the SNB model to adult at π = 0.2 and checks that the fit
// reproduces the sample's s₁ and s₂ (by the sums over the population class sizes, not
// the closed forms) and that the estimate is K·P(F = 1), P(F = 1) being the slid
// negative binomial's mass at m = 0, Γ(α)/(Γ(α)·0!)·β^α·(1−β)⁰. There is no published
// figure to compare with: ARX's SNB finds no solution here (see uniqueness_snb.go).
func TestSNBAdult(t *testing.T) {
	s := sampleOf(uqDist(t, adultCounts...), 0.2)
	k := s.shlosserK()
	alpha, beta, ok := s.snbFit(k)
	if !ok {
		t.Fatal("no SNB fit")
	}
	e1, e2 := snbExpectedDirect(alpha, beta, 0.2)
	if !uqClose(k*e1, s.s1, 1e-8) || !uqClose(k*e2, s.s2, 1e-8) {
		t.Errorf("fit α=%v β=%v K=%v gives E s₁ = %v, E s₂ = %v; sample %v, %v", alpha, beta, k, k*e1, k*e2, s.s1, s.s2)
	}
	p1 := math.Exp(alpha * math.Log(beta)) // Γ(α)/(Γ(α)·0!) = 1, (1−β)⁰ = 1
	got, err := PopulationUniqueness(s.d, 0.2, SNB)
	if err != nil || !got.Valid || !uqClose(got.Uniques, k*p1, 1e-12) {
		t.Errorf("SNB = %+v, %v; want K·P(F=1) = %v", got, err, k*p1)
	}
}

func TestShlosserByHand(t *testing.T) {
	// Sizes 1,1,2 (u=3, s₁=2, s₂=1) at π=1/2:
	//   Σ j·π²(1−π²)^(j−1)·s_j = 1·1/4·2 + 2·1/4·3/4·1 = 7/8
	//   Σ ((1−π²)^j − (1−π)^j)·s_j = (3/4−1/2)·2 + (9/16−1/4)·1 = 13/16
	//   Σ (1−π)^j·s_j = 1/2·2 + 1/4 = 5/4
	//   Σ j·π(1−π)^(j−1)·s_j = 1/2·2 + 2·1/2·1/2 = 3/2
	//   K = 3 + 2·(7/8)/(13/16)·((5/4)/(3/2))² = 3 + 2·14/13·25/36 = 3 + 175/117 = 526/117
	s := sampleOf(uqDist(t, SizeCount{1, 2}, SizeCount{2, 1}), 0.5)
	if got := s.shlosserK(); !uqClose(got, 526.0/117, 1e-14) {
		t.Errorf("K = %v, want 526/117 = %v", got, 526.0/117)
	}
}

// TestARXAdult compares with the values ARX's TestRiskMetrics.testDecisionRule2
// asserts for data/adult.csv (to four digits there; the numbers are ARX's full
// doubles). ARX builds its population of N = round(n/π) members; all N here are whole.
func TestARXAdult(t *testing.T) {
	d := uqDist(t, adultCounts...)
	// The distribution is the right one: ARX's testAverageRisk2 asserts the average
	// prosecutor risk before anonymization, classes/records, = 0.6465751607983555.
	if got := float64(d.Classes()) / float64(d.Records()); got != 0.6465751607983555 || d.Records() != 30162 {
		t.Fatalf("adult: %d records, classes/records %v", d.Records(), got)
	}
	for _, tc := range []struct {
		fraction float64
		model    UniquenessModel
		share    float64
		chosen   UniquenessModel
		why      string
	}{
		{0.01, Dankar, 0.1446083531167384, Pitman, "π ≤ 0.1: Pitman's estimate"},
		{0.1, Dankar, 0.27684993883653597, Pitman, "π ≤ 0.1: Pitman's estimate"},
		{0.1, Pitman, 0.27684993883653597, Pitman, "ARX's Pitman branch of the test"},
		{0.1, Zayatz, 0.3207402393466189, Zayatz, "ARX's Zayatz branch of the test"},
		// ARX's Dankar at 0.2 is Zayatz's estimate because ARX's SNB finds no solution
		// (see uniqueness_snb.go); it is Zayatz's figure that is compared here.
		{0.2, Zayatz, 0.3577099234829125, Zayatz, "Zayatz at 0.2"},
		{1, Dankar, 0.5142895033485844, Zayatz, "π = 1: the sample uniques"},
	} {
		got, err := PopulationUniqueness(d, tc.fraction, tc.model)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Valid || got.Model != tc.chosen || !uqClose(got.Share, tc.share, 1e-9) {
			t.Errorf("%v at %v (%s): %+v, want share %v by %v", tc.model, tc.fraction, tc.why, got, tc.share, tc.chosen)
		}
	}
}

func TestUniquenessBoundaries(t *testing.T) {
	models := []UniquenessModel{Dankar, Zayatz, Pitman, SNB}
	for _, tc := range []struct {
		name     string
		d        Distribution
		fraction float64
		// want per model: uniques, or -1 for no estimate (Valid=false); and the model
		// Dankar's rule reports.
		want   map[UniquenessModel]float64
		dankar UniquenessModel
	}{
		{
			// One record (u=1): Zayatz gives N=10; Pitman has no maximum (one class); SNB
			// needs a class of size 2. Dankar (π ≤ 0.1) falls back to Zayatz.
			"single record at 1/10", uqDist(t, SizeCount{1, 1}), 0.1,
			map[UniquenessModel]float64{Dankar: 10, Zayatz: 10, Pitman: -1, SNB: -1}, Zayatz,
		},
		{
			// A single class of 5: no sample unique, so no model finds a population unique.
			"single class of 5", uqDist(t, SizeCount{5, 1}), 0.05,
			map[UniquenessModel]float64{Dankar: 0, Zayatz: 0, Pitman: 0, SNB: 0}, Dankar,
		},
		{
			// ARX TestRiskMetrics.testDecisionRule: its 7-record example table (all
			// records distinct) at π=0.2 has population uniqueness 1. Zayatz: N = 35;
			// SNB has no class of size 2, so Dankar (π > 0.1) takes Zayatz.
			"every record unique at 1/5 (ARX example)", uqDist(t, SizeCount{1, 7}), 0.2,
			map[UniquenessModel]float64{Dankar: 35, Zayatz: 35, Pitman: -1, SNB: -1}, Zayatz,
		},
		{
			"every record unique at 1/20", uqDist(t, SizeCount{1, 7}), 0.05,
			map[UniquenessModel]float64{Dankar: 140, Zayatz: 140, Pitman: -1, SNB: -1}, Zayatz,
		},
		{
			// π = 1: every model gives the sample's 2 uniques.
			"sizes 1,1,2,3 at 1", uqDist(t, SizeCount{1, 2}, SizeCount{2, 1}, SizeCount{3, 1}), 1,
			map[UniquenessModel]float64{Dankar: 2, Zayatz: 2, Pitman: 2, SNB: 2}, Zayatz,
		},
		{
			// ARX testDecisionRule again: after 2-anonymity there is no sample unique.
			"no sample uniques", uqDist(t, SizeCount{2, 2}, SizeCount{3, 1}), 0.1,
			map[UniquenessModel]float64{Dankar: 0, Zayatz: 0, Pitman: 0, SNB: 0}, Dankar,
		},
	} {
		N := float64(tc.d.Records()) / tc.fraction
		for _, m := range models {
			got, err := PopulationUniqueness(tc.d, tc.fraction, m)
			if err != nil {
				t.Fatalf("%s, %v: %v", tc.name, m, err)
			}
			want := tc.want[m]
			wantModel := m
			if m == Dankar {
				wantModel = tc.dankar
			}
			switch {
			case want < 0 && (got.Valid || got.Uniques != 0 || got.Share != 0 || got.Model != m):
				t.Errorf("%s, %v: %+v, want no estimate", tc.name, m, got)
			case want >= 0 && (!got.Valid || !uqClose(got.Uniques, want, 1e-12) && got.Uniques != want ||
				!uqClose(got.Share, want/N, 1e-12) && got.Share != want/N || got.Model != wantModel):
				t.Errorf("%s, %v: %+v, want %v uniques by %v", tc.name, m, got, want, wantModel)
			}
		}
	}
}

// uqRandomDistributions are class-size distributions of many shapes, from a fixed seed.
func uqRandomDistributions(t *testing.T, count int) []Distribution {
	r := rand.New(rand.NewPCG(1, 2))
	var out []Distribution
	for range count {
		var counts []SizeCount
		for range 1 + r.IntN(6) {
			size := int64(1 + r.IntN(40))
			if r.IntN(3) == 0 {
				size = int64(1 + r.IntN(3))
			}
			counts = append(counts, SizeCount{Size: size, Classes: int64(1 + r.IntN(3000))})
		}
		out = append(out, uqDist(t, counts...))
	}
	return out
}

// TestUniquenessProperties checks on many distributions and fractions that every
// estimate is a number in [0, N] with Share = Uniques/N, or marked invalid with zeros,
// and that Dankar's rule picks what the rule says from the three models' estimates.
func TestUniquenessProperties(t *testing.T) {
	ds := append(uqRandomDistributions(t, 60), uqDist(t, adultCounts...))
	for _, d := range ds {
		for _, f := range []float64{0.001, 0.01, 0.1, 0.10000001, 0.3, 0.9, 1} {
			N := float64(d.Records()) / f
			est := map[UniquenessModel]Uniqueness{}
			for _, m := range []UniquenessModel{Zayatz, Pitman, SNB, Dankar} {
				u, err := PopulationUniqueness(d, f, m)
				if err != nil {
					t.Fatal(err)
				}
				est[m] = u
				if u.Valid {
					if !finite(u.Uniques, u.Share) || u.Uniques < 0 || u.Uniques > N*(1+1e-15) || !uqClose(u.Share, u.Uniques/N, 1e-12) && u.Share != 0 {
						t.Errorf("%v at %v by %v: %+v outside [0, %v]", d.Counts(), f, m, u, N)
					}
				} else if u.Uniques != 0 || u.Share != 0 {
					t.Errorf("%v at %v by %v: invalid estimate with values %+v", d.Counts(), f, m, u)
				}
				if m != Dankar && u.Model != m {
					t.Errorf("%v at %v by %v: reported as %v", d.Counts(), f, m, u.Model)
				}
			}
			// The rule, from the three estimates.
			z, p, b, got := est[Zayatz], est[Pitman], est[SNB], est[Dankar]
			want := z
			switch {
			case d.ClassesOfSize(1) == 0:
				want = Uniqueness{Model: Dankar, Valid: true}
			case f == 1:
				want = z
			case f <= 0.1 && p.Valid && p.Uniques > 0:
				want = p
			case f > 0.1 && b.Valid && b.Uniques > 0 && b.Uniques <= z.Uniques:
				want = b
			}
			if got != want {
				t.Errorf("%v at %v: Dankar gives %+v, the rule %+v (Zayatz %+v, Pitman %+v, SNB %+v)", d.Counts(), f, got, want, z, p, b)
			}
			if d.ClassesOfSize(1) > 0 && !got.Valid {
				t.Errorf("%v at %v: Dankar has no estimate", d.Counts(), f)
			}
		}
	}
}

// TestDankarChoices checks samples where the rule's branch is known beforehand.
func TestDankarChoices(t *testing.T) {
	adult := uqDist(t, adultCounts...)
	for _, tc := range []struct {
		name     string
		d        Distribution
		fraction float64
		want     UniquenessModel
	}{
		{"adult at 0.01: Pitman", adult, 0.01, Pitman},
		{"adult at exactly 0.1: still Pitman", adult, 0.1, Pitman},
		// Above 0.1 the smaller of Zayatz's and SNB's: on adult at 0.2 these are 0.3577
		// and 0.3195 of the population.
		{"adult at 0.2: SNB below Zayatz", adult, 0.2, SNB},
		{"sizes 1,2 at 0.05: no Pitman estimate, Zayatz", uqDist(t, SizeCount{1, 1}, SizeCount{2, 1}), 0.05, Zayatz},
		{"uniques only at 0.5: no SNB estimate, Zayatz", uqDist(t, SizeCount{1, 9}), 0.5, Zayatz},
	} {
		got, err := PopulationUniqueness(tc.d, tc.fraction, Dankar)
		if err != nil {
			t.Fatal(err)
		}
		if got.Model != tc.want || !got.Valid {
			t.Errorf("%s: %+v, want %v", tc.name, got, tc.want)
		}
		alone, _ := PopulationUniqueness(tc.d, tc.fraction, tc.want)
		if alone != got {
			t.Errorf("%s: Dankar %+v differs from %v alone %+v", tc.name, got, tc.want, alone)
		}
	}
}
