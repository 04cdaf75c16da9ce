package risk

import "math"

// Pitman's model (Hoshino 2001, "Applying Pitman's sampling formula to microdata
// disclosure risk assessment", Journal of Official Statistics 17(4), 499–520). The
// sample's partition into classes follows Pitman's sampling formula with parameters
// θ > −α and 0 < α < 1; its log-likelihood, up to a constant, is
//
//	L(θ, α) = Σ_{i=1}^{u−1} ln(θ + iα) − Σ_{i=1}^{n−1} ln(θ + i) + Σ_j s_j Σ_{k=1}^{j−1} ln(k − α)
//
// (u classes, n records, s_j classes of size j). The maximum-likelihood (θ, α) solves
// ∂L/∂θ = ∂L/∂α = 0, found by Newton–Raphson; the population of N then has about
//
//	S₁ = N^α · Γ(θ+1) / Γ(θ+α)
//
// uniques (Hoshino's large-N expression, which ARX also uses).

// pitmanScore is the gradient and Hessian of L at (θ, α), ok=false outside the domain.
func (s sample) pitmanScore(theta, alpha float64) (g [2]float64, h [2][2]float64, ok bool) {
	if !(alpha > 0 && alpha < 1 && theta > -alpha) || !finite(theta, alpha) {
		return g, h, false
	}
	m := int64(s.u) - 1 // terms i = 1..u−1
	// The sums over i = 1..u−1 of 1/(θ+iα), i/(θ+iα), 1/(θ+iα)², i/(θ+iα)², i²/(θ+iα)².
	var a0, a1, b0, b1, b2 float64
	x := theta / alpha
	if m <= 4096 || x > 1e4*float64(m) {
		for i := m; i >= 1; i-- {
			fi := float64(i)
			v := 1 / (theta + fi*alpha)
			a0 += v
			a1 += fi * v
			b0 += v * v
			b1 += fi * v * v
			b2 += fi * fi * v * v
		}
	} else {
		// With x = θ/α: Σ 1/(x+i) = ψ(x+u) − ψ(x+1), Σ 1/(x+i)² = ψ'(x+1) − ψ'(x+u), and
		// i/(x+i) = 1 − x/(x+i), i/(x+i)² = 1/(x+i) − x/(x+i)², i²/(x+i)² = 1 − 2x/(x+i) + x²/(x+i)².
		d0 := invSum(x+1, m)
		d1 := invSqSum(x+1, m)
		fm := float64(m)
		a0 = d0 / alpha
		a1 = (fm - x*d0) / alpha
		b0 = d1 / (alpha * alpha)
		b1 = (d0 - x*d1) / (alpha * alpha)
		b2 = (fm - 2*x*d0 + x*x*d1) / (alpha * alpha)
	}
	// Σ_{i=1}^{n−1} 1/(θ+i) and 1/(θ+i)².
	c0 := invSum(theta+1, int64(s.n)-1)
	c1 := invSqSum(theta+1, int64(s.n)-1)
	// Σ_j s_j Σ_{k=1}^{j−1} 1/(k−α) and 1/(k−α)².
	var e0, e1 float64
	for _, c := range s.d.counts {
		if c.Size > 1 {
			e0 += float64(c.Classes) * invSum(1-alpha, c.Size-1)
			e1 += float64(c.Classes) * invSqSum(1-alpha, c.Size-1)
		}
	}
	g[0] = a0 - c0
	g[1] = a1 - e0
	h[0][0] = c1 - b0
	h[0][1] = -b1
	h[1][0] = -b1
	h[1][1] = -b2 - e1
	return g, h, finite(g[0], g[1], h[0][0], h[0][1], h[1][1])
}

// pitmanFit is the maximum-likelihood (θ, α) of Pitman's model for the sample, ok=false
// when none is found (for instance when every class has one record, where the
// likelihood grows without bound as α → 1).
func (s sample) pitmanFit() (theta, alpha float64, ok bool) {
	if s.u < 2 || s.n < 2 || s.s1 >= s.u {
		// One class, or no class of two or more records: ∂L/∂θ < 0 or ∂L/∂α > 0
		// everywhere, so the likelihood has no interior maximum.
		return 0, 0, false
	}
	score := func(v [2]float64) ([2]float64, [2][2]float64, bool) { return s.pitmanScore(v[0], v[1]) }
	starts := s.pitmanStarts()
	for _, st := range starts {
		// Newton–Raphson runs until it can lower |score| no further; the exact zero is
		// seldom reached in floating point, so a root is a point where the score is tiny
		// relative to the sums it is the difference of.
		root, _ := newton2(score, st, 0, 200)
		if !s.pitmanConverged(root) {
			continue
		}
		_, h, okh := s.pitmanScore(root[0], root[1])
		if !okh {
			continue
		}
		// A maximum: the Hessian is negative definite.
		if h[0][0] < 0 && h[0][0]*h[1][1]-h[0][1]*h[1][0] > 0 {
			return root[0], root[1], true
		}
	}
	return 0, 0, false
}

// pitmanConverged reports whether the score at v is zero up to rounding: each of its
// two components is below 1e-9 of the largest sum it is the difference of.
func (s sample) pitmanConverged(v [2]float64) bool {
	theta, alpha := v[0], v[1]
	g, _, ok := s.pitmanScore(theta, alpha)
	if !ok {
		return false
	}
	c0 := invSum(theta+1, int64(s.n)-1)
	var e0 float64
	for _, c := range s.d.counts {
		if c.Size > 1 {
			e0 += float64(c.Classes) * invSum(1-alpha, c.Size-1)
		}
	}
	return math.Abs(g[0]) <= 1e-9*math.Max(1, c0) && math.Abs(g[1]) <= 1e-9*math.Max(1, e0)
}

// pitmanStarts are the points Newton–Raphson starts from: first the closed-form guess
// from s₁, s₂, u and n that ARX starts from, when it lies in the domain, then a grid
// over the domain.
func (s sample) pitmanStarts() [][2]float64 {
	var starts [][2]float64
	n, u, s1 := s.n, s.u, s.s1
	s2 := s.s2
	if s2 == 0 {
		s2 = 1
	}
	c := s1 * (s1 - 1) / s2
	theta := (n*u*c - s1*(n-1)*(2*u+c)) / (2*s1*u + s1*c - n*c)
	alpha := (theta*(s1-n) + (n-1)*s1) / (n * u)
	if finite(theta, alpha) && alpha > 0 && alpha < 1 && theta > -alpha {
		starts = append(starts, [2]float64{theta, alpha})
	}
	for _, a := range []float64{0.5, 0.2, 0.8, 0.05, 0.95} {
		for _, t := range []float64{1, u / 10, u, 10 * u} {
			starts = append(starts, [2]float64{t, a})
		}
	}
	return starts
}

// pitman is Pitman's estimate of the population uniques, NaN when the fit fails.
func (s sample) pitman() float64 {
	theta, alpha, ok := s.pitmanFit()
	if !ok {
		return math.NaN()
	}
	return pitmanUniques(s.popSize, theta, alpha)
}

// pitmanUniques is the expected number of uniques in a population of N under Pitman's
// model with parameters (θ, α), for large N: N^α·Γ(θ+1)/Γ(θ+α).
func pitmanUniques(N, theta, alpha float64) float64 {
	lt1, _ := math.Lgamma(theta + 1)
	lta, _ := math.Lgamma(theta + alpha)
	return math.Exp(alpha*math.Log(N) + lt1 - lta)
}
