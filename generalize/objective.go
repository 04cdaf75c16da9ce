package generalize

import (
	"math"
	"math/big"

	"sanitizer/schema"
)

// The objectives below follow ARX's metrics of the same meaning at ARX's default
// generalization/suppression factor (0.5, under which ARX weighs generalized and
// suppressed values alike: both factors are 1); they take no other (MetricLoss and the
// entropy objectives of entropy.go do: gsFactor). Each states its source, its lower bound
// (the value bound() gives without counting a node's classes), and whether it is
// monotone under generalization (a generalization's value is never lower) when nothing
// is suppressed and when records may be. The search needs neither monotonicity: it needs
// bound ≤ value, and that a node's exact value never decreases when more of its classes
// fail, which each of them meets (see each).
const (
	// MetricHeight is the height of the node: the sum of its generalization levels
	// (ARX's MetricMDHeight, with its default aggregate, the sum). Suppression does not
	// count. Bound: the value itself (it needs no counting). Monotone under
	// generalization with and without suppression (strictly increasing).
	MetricHeight = schema.MetricHeight
	// MetricPrecision is the loss form of Sweeney's precision (Sweeney 2002, "Achieving
	// k-anonymity privacy protection using generalization and suppression": Prec =
	// 1 − Σ level/height over records and attributes / (N·q)), as ARX's
	// MetricMDNMPrecision computes it: per quasi-identifier i of h_i levels, every
	// published record counts level_i / (h_i − 1) (0 when the column has a single
	// level), every suppressed record counts 1 (it is fully generalized); each column's
	// sum is divided by the input's records N, and the columns are averaged (ARX's
	// default aggregate, the arithmetic mean). 0 = the input, 1 = everything at the top
	// or suppressed. Bound: the value with nothing suppressed, (1/q) Σ level_i/(h_i−1),
	// exact when nothing is suppressed; a suppressed record counts 1 ≥ its published
	// share, so suppressing more never lowers the value. Monotone under generalization
	// without suppression; not with suppression (a generalization may suppress fewer
	// records, each of which counted 1), as ARX says (non-monotone: "NM").
	MetricPrecision = schema.MetricPrecision
	// MetricAECS is the average equivalence class size (LeFevre, DeWitt, Ramakrishnan
	// 2006, "Mondrian multidimensional k-anonymity": C_AVG = N / (classes · k), here
	// without the division by k, as ARX's MetricSDAECS, since k is not the only model):
	// N / (P + s), P the published classes, s = 1 when some records are suppressed (ARX:
	// "the suppressed tuples form one additional group") and 0 otherwise; N is every
	// input record, the suppressed ones included. Failing one more class removes a
	// published class and either adds the suppressed group (the same denominator) or
	// not (one less): the value never decreases when more classes fail. Bound: a node
	// has at most min(N, Π_i d_i) classes, d_i the values of column i's level present
	// in the input, and P + s is at most its classes, so the value is at least
	// N / min(N, Π d_i). Monotone under generalization without suppression (merging
	// classes leaves fewer); not with suppression (classes 3,1,1,1,1 at k=2 give
	// 7/(1+1), their generalization 3,2,2 gives 7/3), as ARX says (its configuration:
	// not monotone).
	MetricAECS = schema.MetricAECS
	// MetricDiscernibilityStar is DM*, the discernibility metric that counts every
	// record in its own class of the node, suppressed or not: Σ |C|² over all the
	// node's classes (ARX's MetricSDDiscernability, "Monotonic discernability (DM*)";
	// ARX's MetricSDNMDiscernability is MetricDiscernibility, Bayardo & Agrawal 2005's
	// DM, which charges a suppressed record the table's size instead). Suppression does
	// not change it. Bound: Σ|C|² ≥ N²/c for c classes (Cauchy–Schwarz), and c ≤
	// min(N, Π_i d_i) as for MetricAECS. Monotone under generalization with and
	// without suppression (merging classes a and b adds 2ab).
	MetricDiscernibilityStar = schema.MetricDiscernibilityStar
)

// present returns, per quasi-identifier of t and level, the number of the level's
// values that some record of tal lies under.
func present(t *Table, tal tallier) [][]int64 {
	out := make([][]int64, len(t.Columns))
	for i, c := range t.Columns {
		h := c.Hierarchy
		perLeaf := tal.leafCounts(i)
		out[i] = make([]int64, h.Height())
		for l := range h.Height() {
			seen := make([]bool, h.Size(l))
			for leaf, cnt := range perLeaf {
				if cnt > 0 {
					code := h.Code(l, int32(leaf))
					if !seen[code] {
						seen[code] = true
						out[i][l]++
					}
				}
			}
		}
	}
	return out
}

// maxClasses is min(n, Π_i present[i][levels[i]]): the most classes the node can have.
func maxClasses(n int64, present [][]int64, levels []int) int64 {
	c := int64(1)
	for i, l := range levels {
		d := present[i][l]
		if d == 0 {
			return 0
		}
		if c > n/d {
			return n
		}
		c *= d
	}
	return min(c, n)
}

// height is MetricHeight.
type height struct{}

func (height) boundIsExactWithoutSuppression() bool { return true }

func (height) bound(levels []int) float64 {
	s := 0
	for _, l := range levels {
		s += l
	}
	return float64(s)
}

func (m height) exact(levels []int, _ *classes, _ func(j int) bool) (*big.Int, float64) {
	v := m.bound(levels)
	return big.NewInt(int64(v)), v
}

// precision is MetricPrecision. Its exact value is scaled by N·q·d, d the least common
// multiple of the columns' h_i − 1.
type precision struct {
	n    int64
	top  []int64 // h_i − 1 per column
	w    []int64 // d / (h_i − 1), 0 for a column of one level
	d    *big.Int
	q    int
	dInt int64 // d when it fits in an int64 (0 otherwise)
}

func newPrecision(t *Table) *precision {
	q := len(t.Columns)
	m := &precision{n: int64(t.Rows), top: make([]int64, q), w: make([]int64, q), d: big.NewInt(1), q: q}
	for i, c := range t.Columns {
		m.top[i] = int64(c.Hierarchy.Height() - 1)
		if m.top[i] > 0 {
			g := new(big.Int).GCD(nil, nil, m.d, big.NewInt(m.top[i]))
			m.d.Mul(m.d, new(big.Int).Div(big.NewInt(m.top[i]), g))
		}
	}
	// Heights are small (a lattice of at most maxLatticeSize nodes): d fits.
	m.dInt = m.d.Int64()
	for i := range q {
		if m.top[i] > 0 {
			m.w[i] = m.dInt / m.top[i]
		}
	}
	return m
}

func (m *precision) boundIsExactWithoutSuppression() bool { return true }

func (m *precision) bound(levels []int) float64 {
	if m.q == 0 {
		return 0
	}
	v := 0.0
	for i, l := range levels {
		if m.top[i] > 0 {
			v += float64(l) / float64(m.top[i])
		}
	}
	return v / float64(m.q)
}

func (m *precision) exact(levels []int, cls *classes, fails func(j int) bool) (*big.Int, float64) {
	var supp int64
	if cls != nil {
		for j := 0; j < cls.n; j++ {
			if fails(j) {
				supp += int64(cls.count(j))
			}
		}
	}
	kept := m.n - supp
	num, term := new(big.Int), new(big.Int)
	value := 0.0
	for i, l := range levels {
		// kept·l·w_i + supp·d
		num.Add(num, term.Mul(big.NewInt(kept*int64(l)), big.NewInt(m.w[i])))
		num.Add(num, term.Mul(big.NewInt(supp), m.d))
		if m.top[i] > 0 {
			value += float64(kept) * float64(l) / float64(m.top[i])
		}
		value += float64(supp)
	}
	if m.n > 0 && m.q > 0 {
		value /= float64(m.n) * float64(m.q)
	}
	return num, value
}

// aecs is MetricAECS. Its exact value is N − (P + s): the value N/(P+s) decreases as
// P + s grows, so the two order nodes alike (and tie alike).
type aecs struct {
	n       int64
	present [][]int64
}

func (m *aecs) boundIsExactWithoutSuppression() bool { return false }

func (m *aecs) bound(levels []int) float64 {
	c := maxClasses(m.n, m.present, levels)
	if c == 0 {
		return 0
	}
	return float64(m.n) / float64(c)
}

func (m *aecs) exact(_ []int, cls *classes, fails func(j int) bool) (*big.Int, float64) {
	var groups int64
	suppressed := false
	for j := 0; j < cls.n; j++ {
		if fails(j) {
			suppressed = true
		} else {
			groups++
		}
	}
	if suppressed {
		groups++
	}
	if groups == 0 {
		return big.NewInt(m.n), 0
	}
	return big.NewInt(m.n - groups), float64(m.n) / float64(groups)
}

// discernibilityStar is MetricDiscernibilityStar.
type discernibilityStar struct {
	n       int64
	present [][]int64
}

func (m *discernibilityStar) boundIsExactWithoutSuppression() bool { return false }

func (m *discernibilityStar) bound(levels []int) float64 {
	c := maxClasses(m.n, m.present, levels)
	if c == 0 {
		return 0
	}
	// N²/c rounded down to an integer is still at most Σ|C|², an integer.
	return math.Floor(float64(m.n) * float64(m.n) / float64(c))
}

func (m *discernibilityStar) exact(_ []int, cls *classes, _ func(j int) bool) (*big.Int, float64) {
	v, term := new(big.Int), new(big.Int)
	for j := 0; j < cls.n; j++ {
		c := int64(cls.count(j))
		v.Add(v, term.SetInt64(c*c))
	}
	f, _ := new(big.Float).SetInt(v).Float64()
	return v, f
}
