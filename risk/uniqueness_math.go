package risk

import "math"

// Numerical helpers of the population-uniqueness models: sums of 1/(a+i) and 1/(a+i)²
// over long runs of i, by the digamma and trigamma functions where a run is too long to
// add term by term, and a damped Newton–Raphson solver for two equations in two
// unknowns. The standard library has Gamma and Lgamma but no polygamma functions.

// shortRun is the longest run of terms that the sums below add one by one.
const shortRun = 64

// asymptoticFrom is the argument from which the asymptotic series of digamma and
// trigamma are used; smaller arguments are shifted up by the recurrences
// ψ(x) = ψ(x+1) − 1/x and ψ'(x) = ψ'(x+1) + 1/x². At 20 the first omitted terms are
// below 1e-17.
const asymptoticFrom = 20

// invSum is Σ_{i=0}^{m-1} 1/(a+i) = ψ(a+m) − ψ(a), for a > 0 and m ≥ 0.
func invSum(a float64, m int64) float64 {
	if m <= 0 {
		return 0
	}
	if m <= shortRun {
		var s float64
		for i := m - 1; i >= 0; i-- { // smallest terms first
			s += 1 / (a + float64(i))
		}
		return s
	}
	// Shift a up until the series holds; the shifted-over terms are added directly.
	var head float64
	for a < asymptoticFrom && m > 0 {
		head += 1 / a
		a++
		m--
	}
	if m == 0 {
		return head
	}
	b := a + float64(m)
	// ψ(b) − ψ(a) from ψ(x) ~ ln x − 1/(2x) − Σ_k B_2k/(2k x^2k), the logarithms as one
	// log1p so that nothing cancels when b is close to a.
	d := math.Log1p(float64(m)/a) + float64(m)/(2*a*b)
	d += digammaTail(a) - digammaTail(b)
	return head + d
}

// digammaTail is the part of ψ(x)'s asymptotic series after ln x − 1/(2x), with its
// sign flipped: 1/(12x²) − 1/(120x⁴) + 1/(252x⁶) − 1/(240x⁸) + 1/(132x¹⁰).
func digammaTail(x float64) float64 {
	z := 1 / (x * x)
	return z * (1.0/12 - z*(1.0/120-z*(1.0/252-z*(1.0/240-z/132))))
}

// invSqSum is Σ_{i=0}^{m-1} 1/(a+i)² = ψ'(a) − ψ'(a+m), for a > 0 and m ≥ 0.
func invSqSum(a float64, m int64) float64 {
	if m <= 0 {
		return 0
	}
	if m <= shortRun {
		var s float64
		for i := m - 1; i >= 0; i-- {
			x := a + float64(i)
			s += 1 / (x * x)
		}
		return s
	}
	var head float64
	for a < asymptoticFrom && m > 0 {
		head += 1 / (a * a)
		a++
		m--
	}
	if m == 0 {
		return head
	}
	b := a + float64(m)
	// ψ'(x) ~ 1/x + 1/(2x²) + 1/(6x³) − 1/(30x⁵) + 1/(42x⁷) − 1/(30x⁹) + 5/(66x¹¹).
	d := float64(m) / (a * b)
	return head + d + trigammaTail(a) - trigammaTail(b)
}

func trigammaTail(x float64) float64 {
	z := 1 / (x * x)
	return z * (0.5 + (1/x)*(1.0/6-z*(1.0/30-z*(1.0/42-z*(1.0/30-z*5/66)))))
}

// finite reports whether every value is a number and not infinite.
func finite(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// system2 is two equations in two unknowns: at x it gives the residuals r and their
// Jacobian j (j[i][k] = ∂r_i/∂x_k), and ok=false where x lies outside the equations'
// domain.
type system2 func(x [2]float64) (r [2]float64, j [2][2]float64, ok bool)

// newton2 solves s(x) = 0 from the start x by Newton–Raphson steps, each shortened
// (halved up to 60 times) until it stays in the domain and lowers |r|². The Newton step
// always points downhill for |r|², so the damping cannot stall where the Jacobian is
// regular. done reports whether the residuals and the step both fell below tol (the
// residuals being relative to the scale the caller gives them).
func newton2(s system2, x [2]float64, tol float64, maxIter int) (root [2]float64, done bool) {
	r, j, ok := s(x)
	if !ok || !finite(r[0], r[1]) {
		return x, false
	}
	norm := r[0]*r[0] + r[1]*r[1]
	for it := 0; it < maxIter; it++ {
		if math.Abs(r[0]) <= tol && math.Abs(r[1]) <= tol {
			return x, true
		}
		det := j[0][0]*j[1][1] - j[0][1]*j[1][0]
		if det == 0 || !finite(det) {
			return x, false
		}
		// δ = −J⁻¹ r
		d0 := -(j[1][1]*r[0] - j[0][1]*r[1]) / det
		d1 := -(-j[1][0]*r[0] + j[0][0]*r[1]) / det
		if !finite(d0, d1) {
			return x, false
		}
		t := 1.0
		moved := false
		for h := 0; h < 60; h++ {
			y := [2]float64{x[0] + t*d0, x[1] + t*d1}
			ry, jy, oky := s(y)
			if oky && finite(ry[0], ry[1]) {
				ny := ry[0]*ry[0] + ry[1]*ry[1]
				if ny < norm || (ny == norm && ny == 0) {
					x, r, j, norm = y, ry, jy, ny
					moved = true
					break
				}
			}
			t /= 2
		}
		if !moved {
			return x, math.Abs(r[0]) <= tol && math.Abs(r[1]) <= tol
		}
	}
	return x, math.Abs(r[0]) <= tol && math.Abs(r[1]) <= tol
}
