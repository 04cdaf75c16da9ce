package generalize

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"sync"

	"sanitizer/fault"
	"sanitizer/schema"
)

// The metrics Search computes: the values of search.metric (schema.Metric), named
// here where their arithmetic is documented.
const (
	// MetricLoss is ARX's loss (MetricMDNMLoss): per record and quasi-identifier,
	// (leaves under the released value − 1) / (leaves of the domain − 1), a suppressed
	// record counting 1, averaged over records and quasi-identifiers (0 = no loss, 1 =
	// everything lost), at ARX's default gs-factor 0.5; at another gs-factor, ARX's
	// normalization of the generalized and suppressed shares (newLoss). Bound: every
	// record published, exact when nothing is suppressed; suppressing a record never
	// lowers its column's loss, at every gs-factor. Monotone under generalization
	// without suppression; not with it.
	MetricLoss = schema.MetricLoss
	// MetricDiscernibility is the discernibility metric (Bayardo & Agrawal 2005):
	// the sum of the squared sizes of the published classes plus, for every suppressed
	// record, the number of input records.
	MetricDiscernibility = schema.MetricDiscernibility
)

// metric scores a node. exact values are integers that order nodes as their values do
// and are equal exactly when the values are (the value scaled by a constant common to
// all nodes, or for MetricAECS a decreasing function of its denominator), so that ties
// are decided exactly — for the objectives whose values are real numbers (entropy.go),
// as their values computed once, in an order that does not depend on the classes'
// order, so that ties are decided up to float rounding; bound is a cheap lower bound of
// the float value, used to order and prune the search. A node's exact value never
// decreases when more of its classes fail (the search bounds a node's value by its
// value with only some of the failing classes known). The objectives (objective.go,
// entropy.go) state their bounds and monotonicity.
type metric interface {
	bound(levels []int) float64
	exact(levels []int, cls *classes, fails func(j int) bool) (exact *big.Int, value float64)
	// boundIsExactWithoutSuppression reports whether a node that suppresses nothing has
	// exactly the value of its bound (so it needs no class counts).
	boundIsExactWithoutSuppression() bool
}

// newMetric returns the named metric for table t, whose records per leaf tal counts
// (the table itself, or its class table), at ARX's default gs-factor (0.5) and with no
// numeric values for ncp.
func newMetric(name schema.Metric, t *Table, tal tallier) (metric, error) {
	return newMetricOf(Options{Metric: name}, nil, t, tal)
}

// newMetricOf returns opt's metric for table t (see newMetric): its name, and its
// aggregate, weights and gs-factor where the metric takes them (an error where it does
// not). values gives ncp the numeric value of each leaf of every column measured by
// value (nil, or a nil column: by its leaves), as Utility takes them.
func newMetricOf(opt Options, values [][]float64, t *Table, tal tallier) (metric, error) {
	name := opt.Metric
	f, err := newGSFactor(opt.GSFactor)
	if err != nil {
		return nil, err
	}
	if opt.GSFactor != nil && !name.TakesGSFactor() {
		return nil, fmt.Errorf("a gs-factor is for the loss, entropy, entropy-monotone, entropy-loss and publisher-payout metrics, not %q", name)
	}
	if name != "" && name != MetricLoss && ((opt.Aggregate != "" && opt.Aggregate != AggregateArithmetic) || opt.Weights != nil) {
		return nil, fmt.Errorf("an aggregate or weights are for the loss metric, not %q", name)
	}
	switch name {
	case MetricLoss, "":
		l := newLoss(t, tal, f)
		if err := l.setAggregate(opt.Aggregate); err != nil {
			return nil, err
		}
		if err := l.setWeights(opt.Weights); err != nil {
			return nil, err
		}
		return l, nil
	case MetricDiscernibility:
		return &discernibility{n: int64(t.Rows)}, nil
	case MetricHeight:
		return height{}, nil
	case MetricPrecision:
		return newPrecision(t), nil
	case MetricAECS:
		return &aecs{n: int64(t.Rows), present: present(t, tal)}, nil
	case MetricDiscernibilityStar:
		return &discernibilityStar{n: int64(t.Rows), present: present(t, tal)}, nil
	case MetricEntropy, MetricEntropyMonotone:
		return newEntropy(t, tal, f, name == MetricEntropyMonotone), nil
	case MetricEntropyLoss:
		return newEntropyLoss(t, tal, f)
	case MetricNCP:
		return newNCP(t, tal, values)
	case MetricPublisherPayout:
		return newPublisherPayout(t, tal, f, opt.Payout)
	}
	return nil, fault.Internalf("unknown metric %q", name)
}

// Aggregates of the loss metric over the quasi-identifiers (ARX's aggregate
// functions): each quasi-identifier's loss vᵢ is (Σ records (leaves under the released
// value − 1) / (leaves − 1), a suppressed record counting 1) / records. They are the
// values of search.aggregate (schema.LossAggregate).
const (
	// AggregateArithmetic is the mean Σ vᵢ / q (the default; ARX's ARITHMETIC_MEAN).
	AggregateArithmetic = schema.AggregateArithmetic
	// AggregateGeometric is Π (vᵢ + 1)^(1/q) − 1 (ARX's GEOMETRIC_MEAN, its default):
	// a node that loses much on one quasi-identifier and little on the others scores
	// better than under the mean.
	AggregateGeometric = schema.AggregateGeometric
	// AggregateSum is Σ vᵢ (ARX's SUM): the mean times q, the same order of nodes.
	AggregateSum = schema.AggregateSum
	// AggregateMax is max vᵢ (ARX's MAXIMUM): the quasi-identifier that loses most.
	AggregateMax = schema.AggregateMax
)

type loss struct {
	agg schema.LossAggregate // "" is AggregateArithmetic
	// weight is each quasi-identifier's weight (nil: all 1), as ARX's weights: the
	// mean Σ wᵢ·vᵢ / q, the sum Σ wᵢ·vᵢ, the max max wᵢ·vᵢ, the geometric mean
	// Π((vᵢ + 1)·wᵢ)^(1/q) − 1 (whose order of nodes they do not change); wint is
	// them times the least common multiple of their denominators, as decimals.
	weight []float64
	wint   []*big.Int
	t      *Table
	n      int64
	f      gsFactor
	size   []int64   // leaves of the domain, per column
	span   []int64   // leaves of the domain − 1, per column
	sum    [][]int64 // sum[i][level]: Σ over all records of (leaves under the value − 1)
	// Column i loses vᵢ = tᵢ / (n·den[i]) (see exactColumn); w[i] = d / den[i], d the
	// least common multiple of the den[i].
	den    []*big.Int
	boundF [][]float64 // boundF[i][level]: tᵢ / den[i] with nothing suppressed
	ff     *lossFloats // the factors in float64 (approx; nil until needed)
	w      []*big.Int
	d      *big.Int
	scale  float64 // N × q
	// allSuppressed is the value of a node that suppresses every record when
	// sFactor = 1 (a gs-factor of at least 0.5): a suppressed record then loses 1 in
	// every column at any level, so every such node has this value, taken once.
	allSuppressed struct {
		once  sync.Once
		exact *big.Int
		value float64
	}
	// geometric is the bound's terms under the geometric aggregate (boundTerms).
	geometric struct {
		once  sync.Once
		terms [][]float64
	}
}

// newLoss returns MetricLoss at the gs-factor f. ARX's loss (MetricMDNMLoss) charges a
// record, per quasi-identifier, the share s = leaves under its released value / leaves
// of the domain (size): gFactor·s when published, 1 when suppressed if sFactor = 1,
// else s + sFactor·(1 − s) (s of its value at the node's level); the column's sum agg
// over the input's records is normalized as (agg − gFactor·n/size) / (n − gFactor·n/size).
// With gFactor = gfd/d and sFactor = sfd/d (gsFactor), multiplying by d·size gives
// vᵢ = tᵢ / (n·den) with the integers
//
//	tᵢ = gfd·Σ_all (leaves − 1) + Σ_suppressed [(d − gfd)·leaves + sfd·(size − leaves)]
//	den = d·size − gfd
//
// (the published records' gfd·leaves and the suppressed records' d·leaves +
// sfd·(size − leaves) less gfd·n, regrouped by what suppression adds). A suppressed
// record adds (d − gfd)·leaves + sfd·(size − leaves) ≥ 0 (gFactor ≤ 1, leaves ≤ size),
// so suppressing a class never lowers tᵢ, at every gs-factor; with nothing suppressed
// tᵢ = gfd·Σ (leaves − 1), the bound, exact. At gs = 0.5 (d = gfd = sfd = 1) this is
// (leaves − 1)/(size − 1), a suppressed record 1. A column of one leaf has den = 0 when
// gFactor = 1 (ARX divides 0 by 0): it loses sFactor per suppressed record, tᵢ =
// sfd·suppressed over den = d (at 0.5, the suppressed share, as before).
func newLoss(t *Table, tal tallier, f gsFactor) *loss {
	q := len(t.Columns)
	m := &loss{t: t, n: int64(t.Rows), f: f, size: make([]int64, q), span: make([]int64, q), sum: make([][]int64, q),
		den: make([]*big.Int, q), boundF: make([][]float64, q), w: make([]*big.Int, q), d: big.NewInt(1), scale: float64(t.Rows) * float64(q)}
	for i, c := range t.Columns {
		h := c.Hierarchy
		m.size[i] = int64(h.Leaves())
		m.span[i] = m.size[i] - 1
		perLeaf := tal.leafCounts(i)
		m.sum[i] = make([]int64, h.Height())
		for l := range h.Height() {
			var s int64
			for leaf, cnt := range perLeaf {
				if cnt > 0 {
					s += cnt * int64(h.LeafCount(l, h.Code(l, int32(leaf)))-1)
				}
			}
			m.sum[i][l] = s
		}
		if m.oneLeaf(i) {
			m.den[i] = new(big.Int).Set(f.d)
		} else {
			m.den[i] = new(big.Int).Sub(new(big.Int).Mul(f.d, big.NewInt(m.size[i])), f.gfd)
		}
		m.boundF[i] = make([]float64, h.Height())
		for l := range h.Height() {
			if !m.oneLeaf(i) {
				m.boundF[i][l] = ratFloat(new(big.Int).Mul(f.gfd, big.NewInt(m.sum[i][l])), m.den[i])
			}
		}
		g := new(big.Int).GCD(nil, nil, m.d, m.den[i])
		m.d.Mul(m.d, new(big.Int).Div(m.den[i], g))
	}
	for i := range q {
		m.w[i] = new(big.Int).Div(m.d, m.den[i])
	}
	return m
}

// oneLeaf reports whether column i is a single leaf with gFactor 1 (den would be 0).
func (m *loss) oneLeaf(i int) bool { return m.size[i] == 1 && m.f.gfd.Cmp(m.f.d) == 0 }

func (m *loss) boundIsExactWithoutSuppression() bool { return true }

// setWeights sets the quasi-identifiers' weights (in table order; nil: all 1), each a
// number above 0 taken as the decimal it prints as (0.1 is 1/10).
func (m *loss) setWeights(w []float64) error {
	if w == nil {
		return nil
	}
	if len(w) != len(m.span) {
		return fmt.Errorf("%d loss weights for %d quasi-identifiers", len(w), len(m.span))
	}
	rats := make([]*big.Rat, len(w))
	lcm := big.NewInt(1)
	for i, x := range w {
		r, ok := new(big.Rat).SetString(strconv.FormatFloat(x, 'g', -1, 64))
		if !ok || !(x > 0) || math.IsInf(x, 1) {
			return fmt.Errorf("loss weight %g: must be a number above 0", x)
		}
		rats[i] = r
		g := new(big.Int).GCD(nil, nil, lcm, r.Denom())
		lcm.Mul(lcm, new(big.Int).Quo(r.Denom(), g))
	}
	m.weight, m.wint = w, make([]*big.Int, len(w))
	for i, r := range rats {
		m.wint[i] = new(big.Int).Quo(new(big.Int).Mul(r.Num(), lcm), r.Denom())
	}
	return nil
}

// plain reports whether the loss is the unweighted arithmetic mean (its own fast path).
func (m *loss) plain() bool { return (m.agg == "" || m.agg == AggregateArithmetic) && m.weight == nil }

// setAggregate sets how the quasi-identifiers' losses combine (AggregateArithmetic
// when agg is "").
func (m *loss) setAggregate(agg schema.LossAggregate) error {
	switch agg {
	case "", AggregateArithmetic, AggregateGeometric, AggregateSum, AggregateMax:
		m.agg = agg
		return nil
	}
	return fault.Internalf("unknown loss aggregate %q (arithmetic, geometric, sum or max)", agg)
}

// smallQ is the most quasi-identifiers whose per-column scratch a node's evaluation
// keeps on the stack (more: allocated).
const smallQ = 16

// perColumn is a slice of q floats: onStack's when they fit (the caller's array, which
// stays on its stack when the slice does not escape), else allocated.
func perColumn(q int, onStack *[smallQ]float64) []float64 {
	if q <= smallQ {
		return onStack[:q]
	}
	return make([]float64, q)
}

// boundTerms is the geometric aggregate's term (geometricTerm) of every column's bound
// at every level, computed on first use (the search bounds every node of the lattice).
func (m *loss) boundTerms() [][]float64 {
	m.geometric.once.Do(func() {
		m.geometric.terms = make([][]float64, len(m.boundF))
		for i, byLevel := range m.boundF {
			m.geometric.terms[i] = make([]float64, len(byLevel))
			for l, b := range byLevel {
				m.geometric.terms[i][l] = m.geometricTerm(i, b/float64(m.n))
			}
		}
	})
	return m.geometric.terms
}

func (m *loss) bound(levels []int) float64 {
	if m.n == 0 {
		return 0
	}
	if m.agg == AggregateGeometric {
		// aggregate's sum, of terms taken once per column and level
		terms, out := m.boundTerms(), 0.0
		for i, l := range levels {
			out += terms[i][l]
		}
		return math.Expm1(out / float64(len(levels)))
	}
	if !m.plain() {
		per := perColumn(len(levels), new([smallQ]float64))
		for i, l := range levels {
			per[i] = m.boundF[i][l] / float64(m.n)
		}
		return m.aggregate(per)
	}
	v := 0.0
	for i, l := range levels {
		v += m.boundF[i][l]
	}
	return v / m.scale
}

// geometricTerm is column i's term of the geometric aggregate of losses v:
// ln(1 + v) + ln wᵢ (without weights ln 1 = 0, not computed: the same sum).
func (m *loss) geometricTerm(i int, v float64) float64 {
	if m.weight == nil {
		return math.Log1p(v)
	}
	return math.Log1p(v) + math.Log(m.weight[i])
}

// aggregate combines the quasi-identifiers' losses per by m's aggregate and weights.
func (m *loss) aggregate(per []float64) float64 {
	w := func(i int) float64 {
		if m.weight == nil {
			return 1
		}
		return m.weight[i]
	}
	out := 0.0
	switch m.agg {
	case AggregateGeometric:
		for i, v := range per {
			out += m.geometricTerm(i, v)
		}
		return math.Expm1(out / float64(len(per)))
	case AggregateMax:
		for i, v := range per {
			out = max(out, v*w(i))
		}
		return out
	}
	for i, v := range per {
		out += v * w(i)
	}
	if m.agg != AggregateSum {
		out /= float64(len(per))
	}
	return out
}

// suppression sums, per column, what the failing classes' records add to tᵢ:
// lv[i] = Σ leaves under their value and rest[i] = Σ (size − leaves), and counts them.
// (lv counts for nothing when d = gfd, at a gs-factor of at most 0.5; it is summed
// all the same, so that a memo's sums serve every gs-factor, memo.go.)
func (m *loss) suppression(levels []int, cls *classes, fails func(j int) bool) (lv, rest []int64, supp int64) {
	q := len(levels)
	both := make([]int64, 2*q)
	lv, rest = both[:q:q], both[q:]
	if cls == nil {
		return lv, rest, 0
	}
	// Per column: the leaves under each code at its level (lcs), and Σ records × those
	// leaves of the side summed (under); on the stack for up to smallQ columns.
	var lcsOnStack [smallQ][]int32
	var underOnStack [smallQ]int64
	lcs, under := lcsOnStack[:], underOnStack[:]
	if q > smallQ {
		lcs, under = make([][]int32, q), make([]int64, q)
	}
	lcs, under = lcs[:q], under[:q]
	for i := range q {
		lcs[i] = m.t.Columns[i].Hierarchy.leaves[levels[i]]
	}
	failing, total := 0, int64(0)
	for j := 0; j < cls.n; j++ {
		total += int64(cls.count(j))
		if fails(j) {
			failing++
			supp += int64(cls.count(j))
		}
	}
	// Most classes failing: the leaves of the published ones are summed and taken from
	// those of all records (sum[i][l] + n), which the classes hold when they count n.
	complement := total == m.n && failing > cls.n/2
	for j := 0; j < cls.n; j++ {
		if fails(j) == complement {
			continue
		}
		cnt := int64(cls.count(j))
		for i, lc := range lcs {
			var code int32
			if cls.packed != nil {
				code = int32(cls.packed[j] >> cls.pack.shift[i] & cls.pack.mask[i])
			} else {
				code = cls.code(i, j)
			}
			under[i] += cnt * int64(lc[code])
		}
	}
	for i, l := range levels {
		if complement {
			under[i] = m.sum[i][l] + m.n - under[i]
		}
		rest[i] = m.size[i]*supp - under[i]
		lv[i] = under[i]
	}
	return lv, rest, supp
}

// exactColumn is tᵢ of column i at level l (see newLoss).
func (m *loss) exactColumn(i, l int, lv, rest []int64, supp int64) *big.Int {
	if m.oneLeaf(i) {
		return new(big.Int).Mul(m.f.sfd, big.NewInt(supp))
	}
	t := new(big.Int).Mul(m.f.gfd, big.NewInt(m.sum[i][l]))
	term := new(big.Int)
	if lv != nil && m.f.d.Cmp(m.f.gfd) != 0 {
		t.Add(t, term.Mul(new(big.Int).Sub(m.f.d, m.f.gfd), big.NewInt(lv[i])))
	}
	return t.Add(t, term.Mul(m.f.sfd, big.NewInt(rest[i])))
}

// columnValue is tᵢ / den[i] rounded once (a non-decreasing function of tᵢ, as the
// bound's boundF: with nothing suppressed the two are equal).
func (m *loss) columnValue(i, l int, t *big.Int, supp int64) float64 {
	if supp == 0 {
		return m.boundF[i][l]
	}
	return ratFloat(t, m.den[i])
}

func (m *loss) exact(levels []int, cls *classes, fails func(j int) bool) (*big.Int, float64) {
	return m.exactOf(levels, m.sumsOf(levels, cls, fails))
}

// lossSums is what a node's failing classes add to the loss (suppression): all its
// value needs besides its levels.
type lossSums struct {
	lv, rest []int64
	supp     int64
}

// sumsOf is the sums of the node of levels with the classes of cls that fails marks
// suppressed.
func (m *loss) sumsOf(levels []int, cls *classes, fails func(j int) bool) *lossSums {
	lv, rest, supp := m.suppression(levels, cls, fails)
	return &lossSums{lv: lv, rest: rest, supp: supp}
}

// exactOf is exact from the node's sums.
func (m *loss) exactOf(levels []int, s *lossSums) (*big.Int, float64) {
	if m.f.half() && m.plain() {
		return m.exactHalf(levels, s.rest, s.supp)
	}
	if s.supp == m.n && m.f.sfd.Cmp(m.f.d) == 0 {
		a := &m.allSuppressed
		a.once.Do(func() { a.exact, a.value = m.exactOfSums(levels, s) })
		return new(big.Int).Set(a.exact), a.value
	}
	return m.exactOfSums(levels, s)
}

// exactOfSums is exactOf, computed.
func (m *loss) exactOfSums(levels []int, s *lossSums) (*big.Int, float64) {
	q := len(levels)
	lv, rest, supp := s.lv, s.rest, s.supp
	ts := make([]*big.Int, q)
	per := make([]float64, q)
	for i, l := range levels {
		ts[i] = m.exactColumn(i, l, lv, rest, supp)
		per[i] = m.columnValue(i, l, ts[i], supp)
	}
	if !m.plain() {
		return m.exactAggregate(ts, per)
	}
	num := new(big.Int)
	term := new(big.Int)
	value := 0.0
	for i := range q {
		num.Add(num, term.Mul(m.w[i], ts[i]))
		value += per[i]
	}
	if m.scale > 0 {
		value /= m.scale
	}
	return num, value
}

// exactHalf is exact for the unweighted mean at gs = 0.5, in int64: tᵢ = Σ_all (leaves
// − 1) + Σ_suppressed (size − leaves) (at most records × size), the suppressed records
// for a column of one leaf.
// adj[i] is what the suppressed records add to column i, Σ (size − leaves) (sums's
// rest), supp the suppressed records.
func (m *loss) exactHalf(levels []int, adj []int64, supp int64) (*big.Int, float64) {
	q := len(levels)
	num := new(big.Int)
	term := new(big.Int)
	value := 0.0
	for i := range q {
		if m.span[i] > 0 {
			t := m.sum[i][levels[i]] + adj[i]
			num.Add(num, term.Mul(m.w[i], big.NewInt(t)))
			value += float64(t) / float64(m.span[i])
		} else {
			num.Add(num, term.Mul(m.d, big.NewInt(supp)))
			value += float64(supp)
		}
	}
	if m.scale > 0 {
		value /= m.scale
	}
	return num, value
}

// exactAggregate is exact for a weighted loss or an aggregate other than the mean,
// given each quasi-identifier's tᵢ and loss per[i]·n. Quasi-identifier i loses vᵢ = tᵢ /
// (n·den[i]); with d the least common multiple of the den[i], n·d·vᵢ = tᵢ·wᵢ is an
// integer, so the sum and the maximum order nodes exactly by Σ tᵢ·wᵢ and max tᵢ·wᵢ,
// and the geometric mean by Π (tᵢ·wᵢ + n·d), its n·d·(vᵢ + 1).
func (m *loss) exactAggregate(ts []*big.Int, perN []float64) (*big.Int, float64) {
	q := len(ts)
	nd := new(big.Int).Mul(big.NewInt(m.n), m.d)
	per := make([]float64, q)
	scaled := make([]*big.Int, q) // n·d·vᵢ
	for i := range q {
		scaled[i] = new(big.Int).Mul(m.w[i], ts[i])
		if m.n > 0 {
			per[i] = perN[i] / float64(m.n)
		}
	}
	if m.wint != nil && m.agg != AggregateGeometric { // the geometric mean's order is the weights'-free one
		for i := range scaled {
			scaled[i].Mul(scaled[i], m.wint[i])
		}
	}
	out := new(big.Int)
	switch m.agg {
	case AggregateGeometric:
		out.SetInt64(1)
		for _, v := range scaled {
			out.Mul(out, new(big.Int).Add(v, nd))
		}
	case AggregateMax:
		for _, v := range scaled {
			if v.Cmp(out) > 0 {
				out.Set(v)
			}
		}
	default: // the mean and the sum: the same order
		for _, v := range scaled {
			out.Add(out, v)
		}
	}
	return out, m.aggregate(per)
}

type discernibility struct{ n int64 }

func (m *discernibility) boundIsExactWithoutSuppression() bool { return false }

// bound: every record lies in a class of at least one record.
func (m *discernibility) bound([]int) float64 { return float64(m.n) }

func (m *discernibility) exact(_ []int, cls *classes, fails func(j int) bool) (*big.Int, float64) {
	v := new(big.Int)
	term := new(big.Int)
	for j := 0; j < cls.n; j++ {
		c := int64(cls.count(j))
		if fails(j) {
			term.SetInt64(c)
			v.Add(v, term.Mul(term, big.NewInt(m.n)))
		} else {
			v.Add(v, term.SetInt64(c*c))
		}
	}
	f, _ := new(big.Float).SetInt(v).Float64()
	return v, f
}
