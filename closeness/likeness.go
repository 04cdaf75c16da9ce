package closeness

import (
	"errors"
	"fmt"
	"math"
)

// β-likeness (Cao & Karras, "Publishing microdata with a robust privacy guarantee",
// PVLDB 5(11), 2012) bounds how much more frequent a sensitive value is in a class than
// in the whole table: for every value v with a class share p_v above its table share
// q_v, the relative gain (p_v − q_v) / q_v is at most β (basic β-likeness) or at most
// min(β, −ln q_v) (enhanced β-likeness, which bounds a frequent value's gain more
// tightly: −ln q_v is small for a large q_v). Unlike
// t-closeness it bounds each value's gain on its own, so that a class cannot make a
// rare diagnosis much likelier while staying close on average. Values that are less
// frequent in the class than in the table are not bounded.

// LikenessVariant is a variant of β-likeness, spelled as the configuration's
// privacy.beta-likeness.variant (its String).
type LikenessVariant string

// Likeness variants.
const (
	// Basic: every gain at most β.
	Basic LikenessVariant = "basic"
	// Enhanced: the gain of a value of table share q at most min(β, −ln q).
	Enhanced LikenessVariant = "enhanced"
)

// LikenessVariants are the variants of β-likeness, in the order messages list them.
var LikenessVariants = []LikenessVariant{Basic, Enhanced}

// String is the variant's name.
func (v LikenessVariant) String() string { return string(v) }

// gainLimit is the most a value of table share q may gain: β, or for the enhanced
// variant min(β, −ln q).
func gainLimit(q, beta float64, enhanced bool) float64 {
	if enhanced {
		return min(beta, -math.Log(q))
	}
	return beta
}

// MaxGain is the largest relative gain (p_v − q_v) / q_v of a value of the class
// (vals, cnts) over the reference's distribution (0 when no value gains). A value the
// table does not hold cannot be in a class; it would gain without bound (+Inf).
func (r *Reference) MaxGain(vals, cnts []int32) float64 {
	n := total(cnts)
	worst := 0.0
	for k, v := range vals {
		q := r.q[v]
		p := float64(cnts[k]) / n
		switch {
		case p <= q:
		case q == 0:
			return math.Inf(1)
		default:
			worst = max(worst, (p-q)/q)
		}
	}
	return worst
}

// Likeness reports whether the class (vals, cnts) meets β-likeness against the
// reference: basic, or enhanced when enhanced is set.
func (r *Reference) Likeness(vals, cnts []int32, beta float64, enhanced bool) bool {
	n := total(cnts)
	for k, v := range vals {
		q := r.q[v]
		p := float64(cnts[k]) / n
		if p <= q {
			continue
		}
		if q == 0 || (p-q)/q > gainLimit(q, beta, enhanced)+likenessSlack {
			return false
		}
	}
	return true
}

// likenessSlack absorbs the rounding of a gain computed from counts, so that a class
// exactly at the bound (a gain of 1/2 with β = 0.5) meets it whatever the order of the
// divisions.
const likenessSlack = 1e-12

// LikenessOf is the largest relative gain of a value in the class histogram p over the
// table histogram q (both over the same numbered values), and whether p meets
// β-likeness against q (basic, or enhanced when enhanced is set): MaxGain and
// Likeness for dense histograms.
func LikenessOf(p, q []int64, beta float64, enhanced bool) (gain float64, holds bool, err error) {
	if len(p) != len(q) {
		return 0, false, fmt.Errorf("histograms of %d and %d values", len(p), len(q))
	}
	var np, nq int64
	for i := range p {
		if p[i] < 0 || q[i] < 0 {
			return 0, false, errors.New("negative count")
		}
		np += p[i]
		nq += q[i]
	}
	if np == 0 || nq == 0 {
		return 0, false, errors.New("empty distribution")
	}
	holds = true
	for i := range p {
		pi, qi := float64(p[i])/float64(np), float64(q[i])/float64(nq)
		switch {
		case pi <= qi:
		case qi == 0:
			return math.Inf(1), false, nil
		default:
			g := (pi - qi) / qi
			gain = max(gain, g)
			holds = holds && g <= gainLimit(qi, beta, enhanced)+likenessSlack
		}
	}
	return gain, holds, nil
}
