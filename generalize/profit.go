package generalize

import (
	"fmt"
	"math"
	"math/big"
	"strconv"

	"sanitizer/risk"
	"sanitizer/schema"
)

// The game-theoretic model of re-identification (Wan et al. 2015, "A Game Theoretic
// Framework for Analyzing Re-Identification Risk", PLOS ONE; risk.CostBenefit) as
// ARX's profitability criteria decide it: with an attack allowed, a class is released
// when the publisher's expected payout for each of its records, B·(1 − IL) less L/n
// when the adversary attacks (G/n > C), is positive; IL is the records' entropy-based
// information loss at the node (risk.EntropyLoss) and 1/n the adversary's chance:
// n the class's records for the prosecutor (Options.Profitability), its population
// count for the journalist (Population.Profitability). A class that fails is
// suppressed, as one that fails k. The forms without an attack are k-anonymity and
// k-map with risk.CostBenefit.NoAttackK, which the caller sets.
//
// Monotonicity (see models.go): none, as ARX says. Generalizing raises IL (the payout
// falls) and lowers the adversary's chance (the payout may rise), so a class may pass
// at a node and fail at a generalization, and the reverse.

// classLoss gives a class its records' entropy-based information loss at a node: the
// sum of the logarithms of the leaves under its values, over the sum of those of the
// hierarchies' leaves, added in the order risk.EntropyLoss adds them, so that both
// give the same float64.
type classLoss struct {
	logs [][][]float64 // logs[i][level][code]: log of the leaves under the value
	den  float64
}

func newClassLoss(t *Table) *classLoss {
	cl := &classLoss{logs: make([][][]float64, len(t.Columns))}
	for i, c := range t.Columns {
		h := c.Hierarchy
		cl.logs[i] = make([][]float64, h.Height())
		for l := range h.Height() {
			lg := make([]float64, h.Size(l))
			for code := range lg {
				lg[code] = math.Log(float64(h.LeafCount(l, int32(code))))
			}
			cl.logs[i][l] = lg
		}
		cl.den += math.Log(float64(h.Leaves()))
	}
	return cl
}

// of is the information loss of class j of cls at the node of levels.
func (cl *classLoss) of(levels []int, cls *classes, j int) float64 {
	var num float64
	for i, l := range levels {
		num += cl.logs[i][l][cls.code(i, j)]
	}
	if cl.den == 0 || math.IsNaN(cl.den) || math.IsInf(cl.den, 0) {
		return 0
	}
	return min(1, max(0, num/cl.den))
}

// checkProfit decides the prosecutor's profitability (Options.Profitability) class by
// class and reports whether it holds within the suppression limit (it stops past the
// limit).
func (s *searcher) checkProfit(c *nodeCount) bool {
	k, most := int32(s.opt.K), s.opt.MaxSuppressed
	for j := 0; j < c.cls.n && c.supp <= most; j++ {
		if !c.failing[j] && c.cls.personsOf(j) >= k && !s.opt.Profitability.Pays(s.loss.of(c.levels, c.cls, j), int64(c.cls.count(j))) {
			c.suppress(j)
		}
	}
	return c.supp <= most
}

// journalistFails reports whether class j of c, of population count pop, fails the
// journalist's profitability (Population.Profitability; false without it).
func (s *searcher) journalistFails(c *nodeCount, j int, pop int32) bool {
	g := s.pop.model.Profitability
	return g != nil && !g.Pays(s.loss.of(c.levels, c.cls, j), int64(pop))
}

// failProfit marks failing the classes of cls (table t, the node of levels) that fail
// the prosecutor's profitability, as the search decided them.
func failProfit(t *Table, opt Options, levels []int, cls *classes, failing []bool) {
	if opt.Profitability == nil {
		return
	}
	loss := newClassLoss(t)
	for j := range cls.n {
		if !failing[j] && int(cls.personsOf(j)) >= opt.K && !opt.Profitability.Pays(loss.of(levels, cls, j), int64(cls.count(j))) {
			failing[j] = true
		}
	}
}

// MetricPublisherPayout is ARX's publisher payout metric (publisherPayout).
const MetricPublisherPayout = schema.MetricPublisherPayout

// publisherPayout is MetricPublisherPayout: ARX's MetricSDNMPublisherPayout with the
// prosecutor's chance (its createPublisherPayoutMetric(false)), after Wan et al. 2015.
// A published class of c records costs the publisher what it forgoes of their
// benefit, gFactor·c·(B − payout) = gFactor·(B·c·IL + L when the adversary attacks
// it, G/c > C); a suppressed record costs sFactor·B. The value is the sum over the
// classes, between 0 and B·records. It is B times MetricEntropyLoss plus gFactor·L per
// attacked published class, computed on entropy-loss's fixed point: the exact value is
// bn·ld·x + gfd·ln·bd·2^bits·A over d·2^bits·bd·ld, x entropy-loss's exact value, A
// the attacked published classes, B = bn/bd and L = ln/ld as the decimals written.
//
// Bound: B times entropy-loss's, every record published and none attacked. Not exact
// without suppression (attacks need the classes). Unlike the other metrics, the value
// may fall when more classes fail (a small attacked class may cost more published,
// gFactor·(B·c·IL + L), than suppressed, sFactor·B·c); lowerGiven bounds it
// otherwise. The gs-factor must be at least 0.5, as for entropy-loss.
type publisherPayout struct {
	el     *entropyLoss
	game   risk.Game
	bnld   *big.Int // bn·ld
	attack *big.Int // gfd·ln·bd·2^bits
	den    *big.Int // d·2^bits·bd·ld
	b      float64
}

func newPublisherPayout(t *Table, tal tallier, f gsFactor, cb *risk.CostBenefit) (*publisherPayout, error) {
	if cb == nil {
		return nil, fmt.Errorf("publisher-payout: the game's amounts are not given")
	}
	if err := cb.Check(); err != nil {
		return nil, err
	}
	el, err := newEntropyLoss(t, tal, f)
	if err != nil {
		return nil, fmt.Errorf("publisher-payout: %w", err)
	}
	b, l := decimalRat(cb.Benefit), decimalRat(cb.Loss)
	scale := big.NewInt(el.scale)
	m := &publisherPayout{el: el, game: cb.Game(), b: cb.Benefit}
	m.bnld = new(big.Int).Mul(b.Num(), l.Denom())
	m.attack = new(big.Int).Mul(f.gfd, l.Num())
	m.attack.Mul(m.attack, b.Denom()).Mul(m.attack, scale)
	m.den = new(big.Int).Mul(f.d, scale)
	m.den.Mul(m.den, b.Denom()).Mul(m.den, l.Denom())
	return m, nil
}

// decimalRat is x as the decimal it prints as.
func decimalRat(x float64) *big.Rat {
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(x, 'g', -1, 64))
	if !ok {
		return new(big.Rat)
	}
	return r
}

func (m *publisherPayout) boundIsExactWithoutSuppression() bool { return false }

func (m *publisherPayout) bound(levels []int) float64 { return m.b * m.el.bound(levels) }

func (m *publisherPayout) exact(levels []int, cls *classes, fails func(j int) bool) (*big.Int, float64) {
	ex := m.lowerGiven(levels, cls, fails)
	if cls != nil {
		var a int64
		for j := range cls.n {
			if c := cls.count(j); c > 0 && !fails(j) && m.game.Attacks(int64(c)) {
				a++
			}
		}
		ex.Add(ex, new(big.Int).Mul(m.attack, big.NewInt(a)))
	}
	return ex, ratFloat(ex, m.den)
}

// lowerGiven is the exact value with the classes fails marks suppressed and no
// class attacked: at most the value with those and any more suppressed, since a
// suppressed record costs at least its share of entropy-loss published.
func (m *publisherPayout) lowerGiven(levels []int, cls *classes, fails func(j int) bool) *big.Int {
	ex, _ := m.el.exact(levels, cls, fails)
	return ex.Mul(ex, m.bnld)
}

// partialBounder is a metric whose value may fall when more classes fail: lowerGiven
// is a lower bound of its value with the classes fails marks, and perhaps more,
// failing.
type partialBounder interface {
	lowerGiven(levels []int, cls *classes, fails func(j int) bool) *big.Int
}
