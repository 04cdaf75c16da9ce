package risk

import "math"

// The slide negative binomial model (Chen & Keller-McNulty 1998, "Estimation of
// identification disclosure risk in microdata", Journal of Official Statistics 14(1),
// 79–95). The population has K non-empty classes whose sizes F are 1 plus a negative
// binomial count, P(F = 1 + m) = Γ(m+α)/(Γ(α)·m!)·β^α·(1−β)^m (α > 0, 0 < β < 1), so
// K·β^α of them have one member. Each member enters the sample with probability π;
// writing q = (1−π)(1−β), the expected numbers of sample classes of sizes 1 and 2 are
//
//	E s₁ = K·π·(β/(1−q))^α · (1 + α·q/(1−q))
//	E s₂ = K·α·π²·(1−β)·β^α · (2 − (1−α)·q) / (2·(1−q)^(α+2))
//
// (sum the binomial chance of 1 resp. 2 sampled members over the slid negative
// binomial). Setting them to the observed s₁ and s₂ gives two equations in α and β,
// solved here by Newton–Raphson in (ln α, logit β) on the logarithms of both sides.
// K is estimated from the sample (see shlosserK).
//
// ARX's implementation of this model differs in two places, both of which look like
// slips rather than choices: its second equation multiplies by (1−q)^(α+2) where the
// expectation divides (its Jacobian is that of the division), and its Shlosser sum
// Σ(1−π)^j((1+π)^j − 1)s_j is coded as Σ((1−π)^j s_j (1+π)^j − 1). This code follows
// the formulas, so its SNB estimates differ from ARX's.

// shlosserK estimates the number of the population's non-empty classes by the
// modification of Shlosser's estimator in Haas & Stokes (1998, "Estimating the number
// of classes in a finite population", JASA 93(444)), the one ARX cites:
//
//	K = u + s₁ · Σ_j j·π²·(1−π²)^(j−1)·s_j / Σ_j ((1−π²)^j − (1−π)^j)·s_j
//	          · (Σ_j (1−π)^j·s_j / Σ_j j·π·(1−π)^(j−1)·s_j)²
func (s sample) shlosserK() float64 {
	p := s.pi
	var v1, v2, v3, v4 float64
	for _, c := range s.d.counts {
		j, sj := float64(c.Size), float64(c.Classes)
		v1 += j * p * p * math.Pow(1-p*p, j-1) * sj
		v2 += (math.Pow(1-p*p, j) - math.Pow(1-p, j)) * sj
		v3 += math.Pow(1-p, j) * sj
		v4 += j * p * math.Pow(1-p, j-1) * sj
	}
	r := v3 / v4
	return s.u + s.s1*(v1/v2)*r*r
}

// snbSystem is the SNB equations in v = (ln α, logit β) with their Jacobian: the
// residuals are ln E s₁ − ln s₁ and ln E s₂ − ln s₂.
func (s sample) snbSystem(k float64) system2 {
	p := s.pi
	ls1, ls2 := math.Log(s.s1), math.Log(s.s2)
	lk := math.Log(k)
	return func(v [2]float64) (r [2]float64, jac [2][2]float64, ok bool) {
		if math.Abs(v[0]) > 40 || math.Abs(v[1]) > 40 {
			return r, jac, false
		}
		a := math.Exp(v[0])
		b := 1 / (1 + math.Exp(-v[1]))
		lb := -math.Log1p(math.Exp(-v[1])) // ln β
		l1b := -math.Log1p(math.Exp(v[1])) // ln(1−β)
		q := (1 - p) * (1 - b)             // (1−π)(1−β)
		oq := p + b*(1-p)                  // 1 − q
		t1 := 1 - (1-a)*q                  // 1 − q + αq
		t2 := 2 - (1-a)*q                  // 2 − (1−α)q
		if !(oq > 0 && t1 > 0 && t2 > 0) {
			return r, jac, false
		}
		lo := math.Log(oq)
		r[0] = lk + math.Log(p) + a*lb - (a+1)*lo + math.Log(t1) - ls1
		r[1] = lk + 2*math.Log(p) - math.Ln2 + math.Log(a) + l1b + a*lb - (a+2)*lo + math.Log(t2) - ls2
		// Partial derivatives in α and β, then the chain rule to ln α and logit β.
		d1a := lb - lo + q/t1
		d1b := a/b - (a+1)*(1-p)/oq + (1-a)*(1-p)/t1
		d2a := 1/a + lb - lo + q/t2
		d2b := -1/(1-b) + a/b - (a+2)*(1-p)/oq + (1-a)*(1-p)/t2
		db := b * (1 - b)
		jac[0][0], jac[0][1] = a*d1a, db*d1b
		jac[1][0], jac[1][1] = a*d2a, db*d2b
		return r, jac, true
	}
}

// snb is the SNB estimate of the population uniques, K·β^α, NaN when the equations have
// no solution the solver finds (always when the sample has no class of size 2).
func (s sample) snb() float64 {
	if s.s1 == 0 || s.s2 == 0 {
		return math.NaN()
	}
	k := s.shlosserK()
	if !finite(k) || k <= 0 {
		return math.NaN()
	}
	alpha, beta, ok := s.snbFit(k)
	if !ok {
		return math.NaN()
	}
	return k * math.Pow(beta, alpha)
}

// snbFit solves the SNB equations for α and β given K, trying Newton–Raphson from a
// grid of starting points until one reaches residuals below 1e-9 (relative, as the
// residuals are differences of logarithms).
func (s sample) snbFit(k float64) (alpha, beta float64, ok bool) {
	sys := s.snbSystem(k)
	for _, a := range []float64{1, 0.1, 10, 0.01} {
		for _, b := range []float64{0.5, 0.1, 0.9, 0.01, 0.99} {
			start := [2]float64{math.Log(a), math.Log(b / (1 - b))}
			root, _ := newton2(sys, start, 0, 200)
			r, _, ok := sys(root)
			if !ok || math.Abs(r[0]) > 1e-9 || math.Abs(r[1]) > 1e-9 {
				continue
			}
			return math.Exp(root[0]), 1 / (1 + math.Exp(-root[1])), true
		}
	}
	return 0, 0, false
}
