package generalize

import (
	"cmp"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"slices"
	"strconv"

	"sanitizer/schema"
)

// The entropy objectives, ARX's entropy-based information loss and the certainty
// penalty. Their values are real numbers (logarithms, ratios of value ranges): each
// computes a node's value as a deterministic function of its levels and the set of its
// failing classes — never of the order the classes come in — and orders nodes by an
// integer that orders them as those values do. Two nodes whose values differ by less
// than float rounding (about 1e-15 of the value for the entropies; for ncp and
// entropy-loss, the fixed point's 2^-bits per record and column, see fixedBits) may be
// ordered either way: ties between different nodes are decided up to float rounding,
// then by height and lexicographically, as for every objective.
const (
	// MetricEntropy is ARX's default entropy metric, the non-monotonic non-uniform
	// entropy (ARX's MetricMDNUNMEntropyPrecomputed, aggregate sum; the non-uniform
	// entropy of Gionis & Tassa 2009, "k-Anonymization with minimal loss of
	// information", with ARX's charge for suppressed records), in bits. Per
	// quasi-identifier, its base is Σ over the leaves x present of
	// f(x)·log2(F(x)/f(x)), f(x) the input's records of leaf x and F(x) those of x's
	// value at the node's level (every record, suppressed or not, counted at its
	// generalized value), times ARX's generalization factor gFactor; when records are
	// suppressed, the column adds sFactor times the entropy of the suppressed records'
	// generalized values, Σ over the distinct values v among them of
	// c_v·log2(S/c_v) (c_v suppressed records of value v, S suppressed in all). The
	// value is the sum over the columns. Bound: gFactor times the bases, exact when
	// nothing is suppressed (it needs no class counts). The suppressed part never
	// decreases when more classes fail: it is S·log2 S − Σ c_v·log2 c_v, and adding
	// m records of value v raises it by (g(S+m) − g(S)) − (g(c_v+m) − g(c_v)) ≥ 0
	// for g(x) = x·log2 x, whose slope log2 x + 1/ln 2 increases, as S ≥ c_v. Monotone
	// under generalization without suppression (merging values only raises F(x));
	// not with suppression (a generalization may suppress fewer records or other
	// values), as ARX says (non-monotone: "NM").
	MetricEntropy = schema.MetricEntropy
	// MetricEntropyMonotone is ARX's monotonic non-uniform entropy
	// (MetricMDNUEntropyPrecomputed): the base of MetricEntropy only, times gFactor;
	// suppression is not counted. Bound: the value itself (it needs no class counts).
	// Monotone under generalization with and without suppression.
	MetricEntropyMonotone = schema.MetricEntropyMonotone
	// MetricEntropyLoss is ARX's entropy-based information loss
	// (MetricSDNMEntropyBasedInformationLoss; Wan et al. 2015, "A Game Theoretic
	// Framework for Analyzing Re-Identification Risk", PLOS ONE): a published record
	// loses IL = Σ_i log(leaves under its released value of column i) / log(Π_i
	// leaves of column i), in [0, 1] (0 when every column has a single leaf), times
	// gFactor; a suppressed record loses sFactor. The value is the sum over the
	// input's records (0 … records). Bound: every record published, gFactor·Σ IL,
	// exact when nothing is suppressed. Suppressing a record changes its part from
	// gFactor·IL to sFactor, which never lowers it when sFactor = 1, that is for
	// gs-factors of at least 0.5; below, a suppression could lower the value, which
	// breaks what the search needs (a node's value never decreases when more classes
	// fail), so those gs-factors are refused. Monotone under generalization without
	// suppression (a record's leaves under its value only grow); not with it, as ARX
	// says (a generalization may publish records that a specialization suppressed
	// at 1 each).
	MetricEntropyLoss = schema.MetricEntropyLoss
	// MetricNCP is the global certainty penalty (Ghinita et al. 2007), exactly as
	// Metrics.NCP measures a full-domain release: per record and quasi-identifier, the
	// NCP of its released hierarchy node (a column with numeric values: the range of
	// the values of the leaves under it over the range of the values present in the
	// input, capped at 1, 0 when the latter is 0; otherwise leaves under it / leaves of
	// the column when it covers more than one leaf, else 0), a suppressed record
	// counting 1 per column, averaged over records × columns. Not an ARX metric (ARX
	// has no gs-factor for it: it takes none). Bound: every record published, exact
	// when nothing is suppressed; a suppressed record's 1 is at least its published
	// NCP, so suppressing more never lowers the value. Monotone under generalization
	// without suppression; not with it.
	MetricNCP = schema.MetricNCP
)

// gsFactor is ARX's generalization/suppression factor gs ∈ [0, 1] (ARX's Metric
// constructor): sFactor = 2·gs when gs < 0.5, else 1; gFactor = 1 when gs ≤ 0.5, else
// 1 − 2·(gs − 0.5). At ARX's default 0.5 both are 1: a generalized value and a
// suppressed one weigh alike; towards 0 suppression costs less, towards 1
// generalization does. gs is taken as the decimal it prints as (0.3 is 3/10), so that
// gFactor = gfd/d and sFactor = sfd/d hold exactly, d, gfd and sfd integers without a
// common factor.
type gsFactor struct {
	d, gfd, sfd *big.Int
	g, s        float64 // gFactor and sFactor
	isHalf      bool    // gs = 0.5: d = gfd = sfd = 1
}

// newGSFactor returns the factor gs (nil: 0.5).
func newGSFactor(gs *float64) (gsFactor, error) {
	x := 0.5
	if gs != nil {
		x = *gs
	}
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(x, 'g', -1, 64))
	if !ok || !(x >= 0 && x <= 1) {
		return gsFactor{}, fmt.Errorf("gs-factor %g: must be a number from 0 to 1", x)
	}
	p, d := r.Num(), r.Denom()
	twoP := new(big.Int).Lsh(p, 1)
	var gfd, sfd *big.Int
	switch c := r.Cmp(big.NewRat(1, 2)); {
	case c < 0:
		gfd, sfd = new(big.Int).Set(d), twoP
	case c == 0:
		gfd, sfd = new(big.Int).Set(d), new(big.Int).Set(d)
	default:
		gfd, sfd = new(big.Int).Sub(new(big.Int).Lsh(d, 1), twoP), new(big.Int).Set(d)
	}
	g := new(big.Int).GCD(nil, nil, d, gfd)
	g.GCD(nil, nil, g, sfd)
	f := gsFactor{d: new(big.Int).Quo(d, g), gfd: gfd.Quo(gfd, g), sfd: sfd.Quo(sfd, g)}
	f.g = ratFloat(f.gfd, f.d)
	f.s = ratFloat(f.sfd, f.d)
	one := big.NewInt(1)
	f.isHalf = f.d.Cmp(one) == 0 && f.gfd.Cmp(one) == 0 && f.sfd.Cmp(one) == 0
	return f, nil
}

// half reports whether gs is 0.5 (both factors 1).
func (f gsFactor) half() bool { return f.isHalf }

// ratFloat is num/den rounded to the nearest float64 (den > 0): a non-decreasing
// function of num.
func ratFloat(num, den *big.Int) float64 {
	const exact = 1 << 53 // integers a float64 holds exactly: their quotient is rounded once
	if num.IsInt64() && den.IsInt64() {
		if a, b := num.Int64(), den.Int64(); a > -exact && a < exact && b > 0 && b < exact {
			return float64(a) / float64(b)
		}
	}
	f, _ := new(big.Rat).SetFrac(num, den).Float64()
	return f
}

// floatExact is the exact integer of a value v ≥ 0 ordered as floats are: the bits of
// a non-negative float64 order as its value does.
func floatExact(v float64) *big.Int {
	if v <= 0 { // −0 and 0 alike
		return new(big.Int)
	}
	return new(big.Int).SetUint64(math.Float64bits(v))
}

// fixedBits is the scale, in bits, of the fixed point of ncp and entropy-loss: a
// per-record amount in [0, 1] is held as an integer in [0, 2^bits], rounded down
// once per column, level and value, so that every sum of them is exact and does not
// depend on the order it is taken in. units bounds the sum of the amounts of one
// node (records × the most a record can add), so that units·2^bits < 2^62 fits an
// int64; at most 52 bits (a float64's precision).
func fixedBits(units int64) uint {
	return uint(min(52, 62-bits.Len64(uint64(units))))
}

// entropy is MetricEntropy and (monotone) MetricEntropyMonotone.
type entropy struct {
	t        *Table
	f        gsFactor
	monotone bool
	base     [][]float64 // base[i][l]: Σ over leaves x present of f(x)·log2(F(x)/f(x))
}

func newEntropy(t *Table, tal tallier, f gsFactor, monotone bool) *entropy {
	m := &entropy{t: t, f: f, monotone: monotone, base: make([][]float64, len(t.Columns))}
	for i, c := range t.Columns {
		h := c.Hierarchy
		perLeaf := tal.leafCounts(i)
		m.base[i] = make([]float64, h.Height())
		for l := 1; l < h.Height(); l++ { // level 0 is F = f: 0
			freq := make([]int64, h.Size(l))
			for leaf, a := range perLeaf {
				freq[h.Code(l, int32(leaf))] += a
			}
			s := 0.0
			for leaf, a := range perLeaf {
				if b := freq[h.Code(l, int32(leaf))]; a > 0 && b != a {
					s += float64(a) * math.Log2(float64(b)/float64(a))
				}
			}
			m.base[i][l] = s
		}
	}
	return m
}

func (m *entropy) boundIsExactWithoutSuppression() bool { return true }

func (m *entropy) bound(levels []int) float64 {
	v := 0.0
	for i, l := range levels {
		v += m.base[i][l]
	}
	return m.f.g * v
}

func (m *entropy) exact(levels []int, cls *classes, fails func(j int) bool) (*big.Int, float64) {
	v := m.bound(levels)
	if !m.monotone && cls != nil {
		if s := m.suppressed(levels, cls, fails); s > 0 {
			v += m.f.s * s
		}
	}
	return floatExact(v), v
}

// codeCount is a suppressed class's generalized value in one column and its records.
type codeCount struct {
	code int32
	n    int64
}

// suppressed is Σ over the columns of the entropy of the failing classes' generalized
// values, in bits: per column Σ_v c_v·log2(S/c_v), the counts summed per value first
// and the terms taken in the order of the values' codes (whatever the classes' order).
func (m *entropy) suppressed(levels []int, cls *classes, fails func(j int) bool) float64 {
	var failing []int
	var total int64
	for j := 0; j < cls.n; j++ {
		if fails(j) {
			failing = append(failing, j)
			total += int64(cls.count(j))
		}
	}
	if total == 0 {
		return 0
	}
	s := float64(total)
	term := func(c int64) float64 { return float64(c) * math.Log2(s/float64(c)) }
	out := 0.0
	var pairs []codeCount
	for i, l := range levels {
		col := 0.0
		if size := m.t.Columns[i].Hierarchy.Size(l); size <= 64+4*len(failing) {
			counts := make([]int64, size)
			for _, j := range failing {
				counts[cls.code(i, j)] += int64(cls.count(j))
			}
			for _, c := range counts {
				if c > 0 {
					col += term(c)
				}
			}
		} else {
			pairs = pairs[:0]
			for _, j := range failing {
				pairs = append(pairs, codeCount{cls.code(i, j), int64(cls.count(j))})
			}
			slices.SortFunc(pairs, func(a, b codeCount) int { return cmp.Compare(a.code, b.code) })
			for k := 0; k < len(pairs); {
				c := int64(0)
				at := pairs[k].code
				for ; k < len(pairs) && pairs[k].code == at; k++ {
					c += pairs[k].n
				}
				col += term(c)
			}
		}
		out += col
	}
	return out
}

// fixedColumns is the fixed point of a per-record amount of ncp and entropy-loss:
// fix[i][l][code] is the amount of value code of column i's level l times 2^bits,
// rounded down, and base[i][l] its sum over the input's records.
type fixedColumns struct {
	t     *Table
	scale int64 // 2^bits
	fix   [][][]int64
	base  [][]int64
}

func newFixedColumns(t *Table, tal tallier, b uint, amount func(i, l int, code int32) float64) fixedColumns {
	fc := fixedColumns{t: t, scale: int64(1) << b, fix: make([][][]int64, len(t.Columns)), base: make([][]int64, len(t.Columns))}
	for i, c := range t.Columns {
		h := c.Hierarchy
		perLeaf := tal.leafCounts(i)
		fc.fix[i] = make([][]int64, h.Height())
		fc.base[i] = make([]int64, h.Height())
		for l := range h.Height() {
			fix := make([]int64, h.Size(l))
			for code := range fix {
				x := amount(i, l, int32(code))
				fix[code] = int64(math.Floor(min(1, max(0, x)) * float64(fc.scale)))
			}
			var s int64
			for leaf, cnt := range perLeaf {
				if cnt > 0 {
					s += cnt * fix[h.Code(l, int32(leaf))]
				}
			}
			fc.fix[i][l], fc.base[i][l] = fix, s
		}
	}
	return fc
}

// sums returns published = Σ_i base[i][levels[i]] (every record's amounts), failed =
// what the failing classes take from it (their records' amounts) and supp, their
// records, each an integer sum whatever the classes' order.
func (fc *fixedColumns) sums(levels []int, cls *classes, fails func(j int) bool) (published, failed, supp int64) {
	for i, l := range levels {
		published += fc.base[i][l]
	}
	if cls == nil {
		return published, 0, 0
	}
	for j := 0; j < cls.n; j++ {
		if !fails(j) {
			continue
		}
		cnt := int64(cls.count(j))
		supp += cnt
		var a int64
		for i, l := range levels {
			a += fc.fix[i][l][cls.code(i, j)]
		}
		failed += cnt * a
	}
	return published, failed, supp
}

// ncp is MetricNCP. Its exact value is Σ over published records and columns of the
// fixed-point NCP plus 2^bits per suppressed record and column, over records × columns
// × 2^bits; it fits an int64 (fixedBits of records × columns, each amount at most
// 2^bits).
type ncp struct {
	fixedColumns
	q     int64
	denom float64 // records × columns × 2^bits
}

// newNCP returns MetricNCP for t; values[i], when not nil, is the numeric value of each
// leaf of column i (as Utility takes them: the column is then measured by value).
func newNCP(t *Table, tal tallier, values [][]float64) (*ncp, error) {
	if values != nil && len(values) != len(t.Columns) {
		return nil, fmt.Errorf("ncp: values for %d columns, the table has %d quasi-identifiers", len(values), len(t.Columns))
	}
	q := len(t.Columns)
	spread := make([]float64, q)
	lo := make([][][]float64, q) // per column, level, value: the least and largest leaf value under it
	hi := make([][][]float64, q)
	for i, c := range t.Columns {
		if values == nil || values[i] == nil {
			continue
		}
		h := c.Hierarchy
		v := values[i]
		if len(v) != h.Leaves() {
			return nil, fmt.Errorf("ncp: column %q: %d values for %d leaves", c.Name, len(v), h.Leaves())
		}
		perLeaf := tal.leafCounts(i)
		a, b := math.Inf(1), math.Inf(-1)
		for x, f := range v {
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("ncp: column %q: the value of leaf %d is not finite", c.Name, x)
			}
			if perLeaf[x] > 0 {
				a, b = min(a, f), max(b, f)
			}
		}
		if b > a {
			spread[i] = b - a
		}
		lo[i], hi[i] = make([][]float64, h.Height()), make([][]float64, h.Height())
		for l := range h.Height() {
			lo[i][l], hi[i][l] = make([]float64, h.Size(l)), make([]float64, h.Size(l))
			for code := range lo[i][l] {
				lo[i][l][code], hi[i][l][code] = math.Inf(1), math.Inf(-1)
			}
			for x, f := range v {
				code := h.Code(l, int32(x))
				lo[i][l][code], hi[i][l][code] = min(lo[i][l][code], f), max(hi[i][l][code], f)
			}
		}
	}
	amount := func(i, l int, code int32) float64 {
		h := t.Columns[i].Hierarchy
		if lo[i] != nil {
			if spread[i] == 0 {
				return 0
			}
			return min(1, (hi[i][l][code]-lo[i][l][code])/spread[i])
		}
		if n := h.LeafCount(l, code); n > 1 {
			return float64(n) / float64(h.Leaves())
		}
		return 0
	}
	units := int64(t.Rows) * int64(q)
	b := fixedBits(units)
	m := &ncp{fixedColumns: newFixedColumns(t, tal, b, amount), q: int64(q)}
	m.denom = float64(units) * float64(m.scale)
	return m, nil
}

func (m *ncp) boundIsExactWithoutSuppression() bool { return true }

func (m *ncp) bound(levels []int) float64 {
	var s int64
	for i, l := range levels {
		s += m.base[i][l]
	}
	return m.value(s)
}

func (m *ncp) value(s int64) float64 {
	if m.denom == 0 {
		return 0
	}
	return float64(s) / m.denom
}

func (m *ncp) exact(levels []int, cls *classes, fails func(j int) bool) (*big.Int, float64) {
	published, failed, supp := m.sums(levels, cls, fails)
	s := published - failed + supp*m.q*m.scale
	return big.NewInt(s), m.value(s)
}

// entropyLoss is MetricEntropyLoss. A record's IL is held in fixed point per column
// (fix[i][l][code] ≈ 2^bits·log(leaves under the value)/log Π leaves, rounded down and
// capped so that a record's columns add up to at most 2^bits); its exact value is
// gfd·P + sfd·2^bits·S over d·2^bits, P the published records' sum of IL in fixed point
// (at most records·2^bits: fixedBits of the records) and S the suppressed records.
type entropyLoss struct {
	fixedColumns
	f gsFactor
}

func newEntropyLoss(t *Table, tal tallier, f gsFactor) (*entropyLoss, error) {
	if f.s < 1 {
		return nil, fmt.Errorf("entropy-loss with a gs-factor below 0.5: a suppressed record would cost less than a published one may (sFactor %g), and the search needs suppression never to lower a node's value; use a gs-factor from 0.5 to 1", f.s)
	}
	maxIL := 0.0
	for _, c := range t.Columns {
		maxIL += math.Log(float64(c.Hierarchy.Leaves()))
	}
	amount := func(i, l int, code int32) float64 {
		if maxIL == 0 {
			return 0
		}
		return math.Log(float64(t.Columns[i].Hierarchy.LeafCount(l, code))) / maxIL
	}
	m := &entropyLoss{fixedColumns: newFixedColumns(t, tal, fixedBits(int64(t.Rows)), amount), f: f}
	// A record's amounts add up to at most 2^bits, as its IL is at most 1: each
	// column's at most its top value's, and those, rounded down, at most 2^bits
	// together (lowered, the largest first, should rounding have lifted them above).
	top := make([]int64, len(t.Columns))
	var sum int64
	for i, c := range t.Columns {
		top[i] = m.fix[i][c.Hierarchy.Height()-1][0]
		sum += top[i]
	}
	for sum > m.scale {
		i := 0
		for j := range top {
			if top[j] > top[i] {
				i = j
			}
		}
		top[i]--
		sum--
	}
	for i, c := range t.Columns {
		h := c.Hierarchy
		perLeaf := tal.leafCounts(i)
		for l := range h.Height() {
			fix := m.fix[i][l]
			for code := range fix {
				fix[code] = min(fix[code], top[i])
			}
			var s int64
			for leaf, cnt := range perLeaf {
				if cnt > 0 {
					s += cnt * fix[h.Code(l, int32(leaf))]
				}
			}
			m.base[i][l] = s
		}
	}
	return m, nil
}

func (m *entropyLoss) boundIsExactWithoutSuppression() bool { return true }

func (m *entropyLoss) bound(levels []int) float64 {
	var s int64
	for i, l := range levels {
		s += m.base[i][l]
	}
	return m.value(m.exactOf(s, 0))
}

// exactOf is gfd·published + sfd·2^bits·supp.
func (m *entropyLoss) exactOf(published, supp int64) *big.Int {
	if m.f.half() {
		return big.NewInt(published + supp*m.scale) // at most records·2^bits
	}
	out := new(big.Int).Mul(m.f.gfd, big.NewInt(published))
	s := new(big.Int).Mul(m.f.sfd, big.NewInt(supp))
	return out.Add(out, s.Lsh(s, uint(bits.TrailingZeros64(uint64(m.scale)))))
}

// value is an exact value over d·2^bits.
func (m *entropyLoss) value(ex *big.Int) float64 {
	if m.f.half() {
		return float64(ex.Int64()) / float64(m.scale)
	}
	return ratFloat(ex, new(big.Int).Mul(m.f.d, big.NewInt(m.scale)))
}

func (m *entropyLoss) exact(levels []int, cls *classes, fails func(j int) bool) (*big.Int, float64) {
	published, failed, supp := m.sums(levels, cls, fails)
	ex := m.exactOf(published-failed, supp)
	return ex, m.value(ex)
}
