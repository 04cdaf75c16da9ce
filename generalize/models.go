package generalize

import (
	"fmt"
	"math"
	"math/bits"
	"slices"

	"sanitizer/closeness"
	"sanitizer/diversity"
)

// Diversity is an l-diversity requirement on Table.Sensitive[Column].
type Diversity struct {
	Column int
	Model  diversity.Model
}

// Closeness is a t-closeness requirement on Table.Sensitive[Column]: the Earth Mover's
// Distance (closeness.Equal, Ordered or Hierarchical) between a class's distribution
// and the whole table's is at most T.
type Closeness struct {
	Column   int
	T        float64
	Distance closeness.Distance
}

// Likeness is a β-likeness requirement on Table.Sensitive[Column] (Cao & Karras
// 2012, closeness.Reference.Likeness): in every class, no value's share exceeds its
// share in the whole table by more than Beta relatively (with Enhanced, by more than
// min(Beta, −ln of its table share)).
type Likeness struct {
	Column   int
	Beta     float64
	Enhanced bool
}

// Monotonicity of the models under generalization, which the search's tagging relies
// on. Merging classes (generalizing) can only lower the number of records that lie in
// failing classes when the union of a passing class with any class passes:
//
//   - k-anonymity: a union holds at least as many records as its parts — always.
//   - distinct l-diversity: a union holds at least the distinct values of its parts —
//     always.
//   - entropy l-diversity, recursive (c,l)-diversity, t-closeness, β-likeness: the
//     union of two passing classes passes (entropy and EMD are concave/convex in the
//     distribution; Machanavajjhala et al. 2007 prove it for recursive diversity; a
//     value's share in a union lies between its shares in the parts, so its gain does
//     too), but a passing class merged with a failing one may fail. So the node-level property is monotone
//     only when no record may be suppressed; with a suppression limit a node that
//     meets the models can have a generalization that does not.
//
// The search therefore tags generalizations and specializations of a node by the
// models' verdict only when every model is monotone for the suppression limit
// (monotone below). Otherwise it tags by the monotone part of the requirements alone,
// and checks the rest only on the nodes where that part holds.
//
// The monotone part. A requirement on the set of values a class holds (not on their
// counts) is monotone in the sense above whenever a class holding more values never
// fails where one holding fewer passes: a union holds every value of its parts. Each
// requirement contributes such a necessary condition, decided on the classes' value
// sets (kept for sensitive columns of at most maxSetValues values):
//
//   - distinct l-diversity: at least l values — the requirement itself.
//   - recursive (c,l)-diversity: at least l values, which the definition demands (a
//     class of fewer than l values fails, diversity.Recursive).
//   - entropy l-diversity: the entropy of v values is at most ln v (the uniform
//     distribution's), so a class with ln v < ln l fails (entropyValues). Not with
//     Grassberger's estimator, which can exceed ln v: its classes are decided on their
//     histograms only, and it counts as not monotone even without suppression. ARX's
//     form of it (diversity.GrassbergerARX) first asks for ⌈l⌉ values, which is such a
//     condition; it too counts as not monotone.
//   - t-closeness: the EMD moves the table's share q_v of every value v the class lacks
//     from some value u it holds, at a ground distance of at least d(v, V) = min over
//     the class's values u of d(u, v); so EMD ≥ Σ_{v∉V} q_v·d(v, V), and a class whose
//     bound exceeds t fails (cover).
//
// A class failing the monotone part fails the requirements, so a node where the
// records of classes failing k or the monotone part exceed the limit does not meet
// them, and neither does any specialization (their failing records are at least as
// many); a node where they are within the limit tags its generalizations as passing
// the monotone part (not the requirements). Each bound keeps a margin (setMargin) far
// above the rounding of the distances and entropies the requirements compute, so it
// never fails a class the requirement passes.

// models holds the l-diversity and t-closeness requirements prepared for a table.
type models struct {
	t *Table
	// persons says that the table has a privacy unit: a class's histograms count, per
	// value, the class's persons who hold it, and l-diversity is decided on them
	// (diversity.PersonsHold), never on records.
	persons   bool
	diversity []Diversity
	closeness []Closeness
	likeness  []Likeness
	ref       []*closeness.Reference // per sensitive column with a t-closeness or β-likeness requirement
	// pref replaces ref when the models count persons: the table's share of persons
	// holding each value
	pref []*closeness.PersonsReference
	cols []int // sensitive columns some model reads

	// The monotone part (see above) and what is left to the histograms.
	words     []int       // per sensitive column: 64-bit words of a class's value set (0: not kept)
	setCols   []int       // sensitive columns whose value sets are kept
	minValues []int       // per sensitive column: the fewest values a class may hold
	covers    []cover     // t-closeness bounds on value sets
	byHist    []Diversity // l-diversity requirements decided on histograms
	histCols  []int       // sensitive columns whose histograms byHist or t-closeness read
}

// Value sets are kept for sensitive columns of at most maxSetValues values (4 words a
// class), and a hierarchical distance is bounded on them up to maxTreeSetValues values
// (its ground distances are computed pairwise up front). setMargin is the margin of
// the monotone part's bounds over the values the requirements compute: the rounding of
// an entropy of at most maxSetValues terms, or of a distance over as many values, is
// below 1e-12.
const (
	maxSetValues     = 256
	maxTreeSetValues = 64
	setMargin        = 1e-6
)

// newModels prepares the requirements of opt for the records of table t.
func newModels(t *Table, opt Options) (*models, error) { return newModelsOf(t, t, opt) }

// referenced is a tallier whose sensitive values are counted as refs gives them
// (Options.References).
type referenced struct {
	tallier
	refs [][]int64
}

func (r referenced) valueCounts(col int) []int64 { return r.refs[col] }

// newModelsOf prepares the requirements of opt for table t, whose records per
// sensitive value tal counts (the table itself, or its class table): t's per-record
// codes are not read.
func newModelsOf(t *Table, tal tallier, opt Options) (*models, error) {
	if opt.References != nil {
		if len(opt.References) != len(t.Sensitive) {
			return nil, fmt.Errorf("references for %d sensitive columns, the table has %d", len(opt.References), len(t.Sensitive))
		}
		tal = referenced{tallier: tal, refs: opt.References}
	}
	m := &models{t: t, persons: t.Unit != nil, diversity: opt.Diversity, closeness: opt.Closeness, likeness: opt.Likeness}
	if err := m.checkRequirements(opt); err != nil {
		return nil, err
	}
	if err := m.references(tal, opt); err != nil {
		return nil, err
	}
	m.words = make([]int, len(t.Sensitive))
	m.minValues = make([]int, len(t.Sensitive))
	for _, col := range m.cols {
		if v := t.Sensitive[col].Values; v <= maxSetValues {
			m.words[col] = (v + 63) / 64
			m.setCols = append(m.setCols, col)
		}
	}
	for _, d := range opt.Diversity {
		// In persons, even distinct l-diversity reads how many persons hold each value;
		// its value sets keep the necessary part (a class of v values has a value held
		// by at least 1/v of its persons, so it needs l values).
		if d.Model.Variant != diversity.Distinct || m.words[d.Column] == 0 || m.persons {
			m.byHist = append(m.byHist, d)
			m.useHist(d.Column)
		}
		if m.words[d.Column] == 0 || d.Model.Estimator == diversity.Grassberger {
			continue // Grassberger's estimate is not bounded by the values present
		}
		need := int(d.Model.L)
		switch {
		case d.Model.Estimator == diversity.GrassbergerARX:
			need = int(math.Ceil(d.Model.L)) // ARX's rule asks for ⌈l⌉ values first
		case d.Model.Variant == diversity.Entropy:
			need = entropyValues(d.Model.L)
		}
		m.minValues[d.Column] = max(m.minValues[d.Column], need)
	}
	for _, c := range opt.Closeness {
		m.useHist(c.Column)
		if m.words[c.Column] == 0 || m.persons {
			continue // no bound of a distance in persons on the values present
		}
		if cv := newCover(t.Sensitive[c.Column], tal.valueCounts(c.Column), c); cv != nil {
			m.covers = append(m.covers, *cv)
		}
	}
	return m, nil
}

// checkRequirements rejects a requirement of opt on a column m's table does not have,
// or with a parameter out of range, and notes the columns the requirements read.
func (m *models) checkRequirements(opt Options) error {
	t := m.t
	for _, d := range opt.Diversity {
		if d.Column < 0 || d.Column >= len(t.Sensitive) {
			return fmt.Errorf("l-diversity on sensitive column %d of %d", d.Column, len(t.Sensitive))
		}
		if err := d.Model.Check(); err != nil {
			return fmt.Errorf("l-diversity on %q: %w", t.Sensitive[d.Column].Name, err)
		}
		m.use(d.Column)
	}
	for _, c := range opt.Closeness {
		if c.Column < 0 || c.Column >= len(t.Sensitive) {
			return fmt.Errorf("t-closeness on sensitive column %d of %d", c.Column, len(t.Sensitive))
		}
		switch c.Distance {
		case closeness.Equal:
		case closeness.Ordered:
			if t.Unit != nil {
				return fmt.Errorf("t-closeness on %q: the ordered distance has no meaning in persons", t.Sensitive[c.Column].Name)
			}
		case closeness.Hierarchical:
			if t.Unit != nil {
				return fmt.Errorf("t-closeness on %q: the hierarchical distance has no meaning in persons", t.Sensitive[c.Column].Name)
			}
			if t.Sensitive[c.Column].Tree == nil {
				return fmt.Errorf("t-closeness on %q: the hierarchical distance needs the column's hierarchy", t.Sensitive[c.Column].Name)
			}
		default:
			return fmt.Errorf("t-closeness on %q: unknown distance %q", t.Sensitive[c.Column].Name, c.Distance)
		}
		if !(c.T >= 0) {
			return fmt.Errorf("t-closeness on %q: t must be at least 0, got %g", t.Sensitive[c.Column].Name, c.T)
		}
		m.use(c.Column)
	}
	for _, l := range opt.Likeness {
		if l.Column < 0 || l.Column >= len(t.Sensitive) {
			return fmt.Errorf("β-likeness on sensitive column %d of %d", l.Column, len(t.Sensitive))
		}
		if !(l.Beta > 0) || math.IsInf(l.Beta, 1) {
			return fmt.Errorf("β-likeness on %q: β must be above 0, got %g", t.Sensitive[l.Column].Name, l.Beta)
		}
		m.use(l.Column)
		m.useHist(l.Column)
	}
	return nil
}

// references sets m.ref: the whole table's distribution (tal's counts) of every
// column a t-closeness or β-likeness requirement of opt reads.
func (m *models) references(tal tallier, opt Options) error {
	m.ref = make([]*closeness.Reference, len(m.t.Sensitive))
	refCols := make([]int, 0, len(opt.Closeness)+len(opt.Likeness))
	for _, c := range opt.Closeness {
		refCols = append(refCols, c.Column)
	}
	for _, l := range opt.Likeness {
		refCols = append(refCols, l.Column)
	}
	if m.persons {
		m.pref = make([]*closeness.PersonsReference, len(m.t.Sensitive))
	}
	for _, col := range refCols {
		if m.ref[col] != nil || (m.persons && m.pref[col] != nil) {
			continue
		}
		s := m.t.Sensitive[col]
		if m.persons {
			ref, err := closeness.NewPersonsReference(tal.personHolders(col))
			if err != nil {
				return fmt.Errorf("the persons holding each value of %q: %w", s.Name, err)
			}
			m.pref[col] = ref
			continue
		}
		ref, err := closeness.NewReference(tal.valueCounts(col), s.Tree)
		if err != nil {
			return fmt.Errorf("the distribution of %q: %w", s.Name, err)
		}
		m.ref[col] = ref
	}
	return nil
}

func (m *models) useHist(col int) {
	if !slices.Contains(m.histCols, col) {
		m.histCols = append(m.histCols, col)
	}
}

// entropyValues is the fewest distinct values a class meeting entropy l-diversity can
// hold (up to maxSetValues+1: more than a column with value sets has): v values have
// an entropy of at most ln v, so a class of v values with ln v < ln l − setMargin fails
// (diversity.EntropyHolds grants only 1e-12 of slack).
func entropyValues(l float64) int {
	v := 1
	for v <= maxSetValues && math.Log(float64(v)) < math.Log(l)-setMargin {
		v++
	}
	return v
}

// cover is the lower bound, from the set V of values a class holds, of its EMD to the
// table's distribution q under one t-closeness requirement:
// Σ_{v∉V} q_v·d(v, V), d(v, V) = min over u ∈ V of the ground distance d(u, v)
// (the cost of bringing q_v to v from the nearest value the class holds).
//
//   - Equal (d = 1 between distinct values): q(V̄), the table's share of the values
//     the class lacks.
//   - Ordered (d(u, v) = |u − v|/(m − 1), m values): from the nearest held value on
//     either side.
//   - Hierarchical (d(u, v) = the level of the lowest common ancestor of u and v over
//     the tree's height): closeness.Reference.Hierarchical computes
//     Σ_l (l/H)·Σ_{nodes N of level l} min(pos_N, neg_N); as min(a, b) = (a + b − |a −
//     b|)/2, that is (1/2H)·Σ_{l=0}^{H−1} A_l with A_l = Σ_{nodes N of level l}
//     |p(N) − q(N)| (level 0: the values), and A_l ≥ 2·Σ_{N∩V=∅} q(N) (p sums to q's
//     total), so the distance is at least Σ_v q_v·(the lowest level whose ancestor of
//     v holds a value of V)/H — the bound. Its ground distances are those of the
//     requirement itself: the distance between two one-value classes.
//
// The distances of Equal and Hierarchical are ultrametric: the bound is
// Σ_i (θ_i − θ_{i−1})·q(values whose block at threshold θ_{i−1} misses V), over the
// distinct distances 0 = θ_0 < θ_1 < …, where the block of v at θ is the values
// within θ of v (at θ_0, v alone).
type cover struct {
	col     int
	t       float64
	mass    []float64 // q_v: the table's share of every value
	steps   []float64 // θ_i − θ_{i−1}, i = 1 … (ultrametric distances)
	blocks  [][]block // blocks[i−1]: the blocks at threshold θ_i, i = 1 … (the last θ has one block: none kept)
	ordered bool
}

// block is a set of values within some distance of each other, and their share of the
// table.
type block struct {
	set  []uint64
	mass float64
}

// newCover returns the bound of requirement c on column s, whose records per value are
// counts; nil when it keeps none (a hierarchical distance over more than
// maxTreeSetValues values, or distances not ultrametric).
func newCover(s Sensitive, counts []int64, c Closeness) *cover {
	var n int64
	for _, x := range counts {
		n += x
	}
	cv := &cover{col: c.Column, t: c.T, mass: make([]float64, len(counts))}
	for v, x := range counts {
		cv.mass[v] = float64(x) / float64(n)
	}
	switch c.Distance {
	case closeness.Ordered:
		cv.ordered = true
		return cv
	case closeness.Equal:
		cv.steps = []float64{1}
		return cv
	}
	if s.Values > maxTreeSetValues {
		return nil
	}
	d, levels := groundDistances(s)
	if d == nil {
		return nil
	}
	prev := 0.0
	for i, theta := range levels {
		cv.steps = append(cv.steps, theta-prev)
		prev = theta
		if i == len(levels)-1 {
			break
		}
		bs := ultrametricBlocks(d, theta, cv.mass)
		if bs == nil {
			return nil // not ultrametric
		}
		cv.blocks = append(cv.blocks, bs)
	}
	return cv
}

// groundDistances returns the hierarchical distance between every two values of s
// (the distance between one-value classes) and the distinct positive ones, in
// increasing order (nil: the column's hierarchy gives none).
func groundDistances(s Sensitive) (d [][]float64, levels []float64) {
	m := s.Values
	d = make([][]float64, m)
	one := []int32{1}
	for u := range m {
		point := make([]int64, m)
		point[u] = 1
		ref, err := closeness.NewReference(point, s.Tree)
		if err != nil {
			return nil, nil
		}
		sc := ref.NewScratch()
		d[u] = make([]float64, m)
		for v := range m {
			d[u][v] = ref.Hierarchical([]int32{int32(v)}, one, sc)
			if d[u][v] > 0 && !slices.Contains(levels, d[u][v]) {
				levels = append(levels, d[u][v])
			}
		}
	}
	slices.Sort(levels)
	return d, levels
}

// ultrametricBlocks returns the blocks at θ of the values of distances d, of shares
// mass: with an ultrametric, the values within θ of any member. It returns nil when d
// is not an ultrametric at θ.
func ultrametricBlocks(d [][]float64, theta float64, mass []float64) []block {
	m := len(d)
	words := (m + 63) / 64
	var bs []block
	in := make([]bool, m)
	for v := range m {
		if in[v] {
			continue
		}
		b := block{set: make([]uint64, words)}
		for u := range m {
			if d[v][u] <= theta {
				if in[u] {
					return nil
				}
				in[u] = true
				b.set[u>>6] |= 1 << (u & 63)
				b.mass += mass[u]
			}
		}
		bs = append(bs, b)
	}
	for _, b := range bs { // every pair within a block within θ
		for u := range m {
			for v := range m {
				if b.set[u>>6]>>(u&63)&1 == 1 && b.set[v>>6]>>(v&63)&1 == 1 && d[u][v] > theta {
					return nil
				}
			}
		}
	}
	return bs
}

// fails reports whether a class holding the value set set fails the requirement for
// sure: its bound exceeds t by more than setMargin.
func (cv *cover) fails(set []uint64) bool {
	return cv.bound(set) > cv.t+setMargin
}

// bound is the lower bound of the EMD of a class holding the value set set.
func (cv *cover) bound(set []uint64) float64 {
	m := len(cv.mass)
	held := func(v int) bool { return set[v>>6]>>(v&63)&1 == 1 }
	if cv.ordered {
		if m < 2 {
			return 0
		}
		// Distance to the nearest held value: from the left, then from the right.
		lb, last := 0.0, -1
		for v := range m {
			if held(v) {
				// values between last and v: the nearer of the two
				for u := last + 1; u < v; u++ {
					dist := v - u
					if last >= 0 {
						dist = min(dist, u-last)
					}
					lb += cv.mass[u] * float64(dist)
				}
				last = v
			}
		}
		if last < 0 {
			return 1 // no value: not a class
		}
		for u := last + 1; u < m; u++ {
			lb += cv.mass[u] * float64(u-last)
		}
		return lb / float64(m-1)
	}
	missing := 0.0
	for w, x := range set { // the values the class lacks, in increasing order
		lack := ^x
		if rest := m - 64*w; rest < 64 {
			lack &= 1<<rest - 1
		}
		for ; lack != 0; lack &= lack - 1 {
			missing += cv.mass[64*w+bits.TrailingZeros64(lack)]
		}
	}
	lb := cv.steps[0] * missing
	for i, bs := range cv.blocks {
		missing = 0
		for _, b := range bs {
			disjoint := true
			for w, x := range b.set {
				if x&set[w] != 0 {
					disjoint = false
					break
				}
			}
			if disjoint {
				missing += b.mass
			}
		}
		lb += cv.steps[i+1] * missing
	}
	return lb
}

func (m *models) use(col int) {
	if !slices.Contains(m.cols, col) {
		m.cols = append(m.cols, col)
	}
}

// any reports whether there is a model besides k-anonymity.
func (m *models) any() bool { return len(m.cols) > 0 }

// monotone reports whether every model is monotone under generalization with the
// given suppression limit (see above).
func (m *models) monotone(maxSuppressed int) bool {
	if m.persons && m.any() {
		// Two classes that share a person may each be l-diverse in persons while
		// their union is not: {A: x, B: y} and {A: x, C: y} are 2-diverse, their
		// union of 3 persons has y held by 2.
		return false
	}
	for _, d := range m.diversity {
		if d.Model.Estimator.IsGrassberger() {
			return false // no union property is known for the estimate, with or without suppression
		}
	}
	if maxSuppressed == 0 {
		return true
	}
	for _, d := range m.diversity {
		if d.Model.Variant != diversity.Distinct {
			return false
		}
	}
	return len(m.closeness) == 0 && len(m.likeness) == 0
}

// checker decides the models on classes; it holds the scratch space of one goroutine.
type checker struct {
	m       *models
	scratch []*closeness.Scratch // per sensitive column with a t-closeness requirement
	counts  []int64
	// vals and cnts hold, per sensitive column, a class's histogram (histFails)
	vals, cnts [][]int32
}

func (m *models) checker() *checker {
	c := &checker{m: m, scratch: make([]*closeness.Scratch, len(m.ref))}
	for i, r := range m.ref {
		if r != nil {
			c.scratch[i] = r.NewScratch()
		}
	}
	return c
}

// holds reports whether a class meets every model, given its histogram (vals, cnts)
// per sensitive column.
func (c *checker) holds(vals, cnts [][]int32) bool { return c.holdsIn(vals, cnts, 0) }

// holdsIn is holds for a class of the given persons when the models count persons
// (then cnts counts the persons holding each value; persons is ignored otherwise).
func (c *checker) holdsIn(vals, cnts [][]int32, persons int32) bool {
	for _, d := range c.m.diversity {
		if !c.diverse(d, cnts[d.Column], persons) {
			return false
		}
	}
	return c.close(vals, cnts, persons)
}

// close decides the t-closeness and β-likeness requirements on a class whose histogram
// of each sensitive column is vals, cnts: of records, or, when the models count persons,
// of the class's persons holding each value, the class having persons persons.
func (c *checker) close(vals, cnts [][]int32, persons int32) bool {
	for _, t := range c.m.closeness {
		d := 0.0
		if c.m.persons {
			d = c.m.pref[t.Column].Equal(vals[t.Column], cnts[t.Column], int64(persons))
		} else {
			d = c.distance(t, vals[t.Column], cnts[t.Column])
		}
		if d > t.T {
			return false
		}
	}
	for _, l := range c.m.likeness {
		var ok bool
		if c.m.persons {
			ok = c.m.pref[l.Column].Likeness(vals[l.Column], cnts[l.Column], int64(persons), l.Beta, l.Enhanced)
		} else {
			ok = c.m.ref[l.Column].Likeness(vals[l.Column], cnts[l.Column], l.Beta, l.Enhanced)
		}
		if !ok {
			return false
		}
	}
	return true
}

// distance is the EMD of a class for requirement t.
func (c *checker) distance(t Closeness, vals, cnts []int32) float64 {
	ref, s := c.m.ref[t.Column], c.scratch[t.Column]
	switch t.Distance {
	case closeness.Ordered:
		return ref.Ordered(vals, cnts, s)
	case closeness.Hierarchical:
		return ref.Hierarchical(vals, cnts, s)
	}
	return ref.Equal(vals, cnts)
}

// hist is the sensitive histograms of a class table, per sensitive column, in
// compressed rows: the values of class j are val[off[j]:off[j+1]] with their counts.
type hist struct {
	off []int32
	val []int32
	cnt []int32
}

// histOf returns the histogram of sensitive column col for the classes of cls; for the
// records themselves, each record's own value.
func (m *models) histOf(cls *classes, col int) *hist {
	if cls.rows != nil {
		return nil
	}
	return cls.hist[col]
}

// rollHist returns the histograms of the output classes (n of them) of a roll-up whose
// source class j went to output class assign[j].
func (m *models) rollHist(src *classes, assign []int32, n int) []*hist {
	return m.rollHists(src, assign, n, m.cols, &histScratch{})
}

// histScratch is the reusable working space of rollHists.
type histScratch struct {
	start, order, next, dense, touched, val, cnt []int32
}

// grow returns s[:n], reallocated when too short.
func grow(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

// rollHists is rollHist for the sensitive columns cols only (the others' histograms
// nil), with the working space sc.
//
// When the output's classes times the column's values are few against the source's
// entries, the counts are added up in a dense table of them, read back in value order;
// otherwise the source classes are sorted by output class (counting sort) and each
// output class's counts added up in turn.
func (m *models) rollHists(src *classes, assign []int32, n int, cols []int, sc *histScratch) []*hist {
	out := make([]*hist, len(m.t.Sensitive))
	sorted := false
	for _, col := range cols {
		s := m.t.Sensitive[col]
		sh := m.histOf(src, col)
		// A class has at most the entries of its sources, and at most every value.
		entries := src.n
		if sh != nil {
			entries = len(sh.val)
		}
		h := &hist{off: make([]int32, n+1)}
		out[col] = h
		if n*s.Values <= denseCells*entries {
			m.denseHist(src, assign, n, col, sh, h, sc)
			continue
		}
		size := min(entries, n*s.Values)
		h.val, h.cnt = make([]int32, 0, size), make([]int32, 0, size)
		if !sorted {
			sc.sortByOutput(assign[:src.n], n)
			sorted = true
		}
		start, order := sc.start, sc.order
		dense := grow(sc.dense, s.Values)
		clear(dense)
		touched := sc.touched[:0]
		for c := range n {
			for _, j := range order[start[c]:start[c+1]] {
				if sh == nil {
					v := s.Codes.At(int(j))
					if dense[v] == 0 {
						touched = append(touched, v)
					}
					dense[v]++
					continue
				}
				for k := sh.off[j]; k < sh.off[j+1]; k++ {
					v := sh.val[k]
					if dense[v] == 0 {
						touched = append(touched, v)
					}
					dense[v] += sh.cnt[k]
				}
			}
			for _, v := range touched { // in order of first appearance: the models need no order
				h.val = append(h.val, v)
				h.cnt = append(h.cnt, dense[v])
				dense[v] = 0
			}
			touched = touched[:0]
			h.off[c+1] = int32(len(h.val))
		}
		sc.dense, sc.touched = dense, touched
	}
	return out
}

// denseCells is the largest number of output cells (classes times values) per source
// entry that rollHists adds up in a dense table.
const denseCells = 4

// denseHist adds the counts of column col of the source classes (their histograms sh,
// or the records' values) up in a dense table of n classes by the column's values, and
// writes them to h in value order.
func (m *models) denseHist(src *classes, assign []int32, n, col int, sh *hist, h *hist, sc *histScratch) {
	s := m.t.Sensitive[col]
	v := s.Values
	acc := grow(sc.dense, n*v)
	clear(acc)
	if sh == nil {
		for j, a := range assign[:src.n] {
			acc[int(a)*v+int(s.Codes.At(j))]++
		}
	} else {
		for j, a := range assign[:src.n] {
			row := acc[int(a)*v : int(a)*v+v]
			lo, hi := sh.off[j], sh.off[j+1]
			cnt := sh.cnt[lo:hi]
			for k, x := range sh.val[lo:hi] {
				row[x] += cnt[k]
			}
		}
	}
	// Read back into scratch with room for every cell (a cell is written whether or
	// not it counts, which saves a branch), then copied out at its size.
	val, cnt := grow(sc.val, n*v), grow(sc.cnt, n*v)
	w := 0
	for c := range n {
		for x, k := range acc[c*v : c*v+v] {
			val[w], cnt[w] = int32(x), k
			if k != 0 {
				w++
			}
		}
		h.off[c+1] = int32(w)
	}
	h.val, h.cnt = slices.Clone(val[:w]), slices.Clone(cnt[:w])
	sc.dense, sc.val, sc.cnt = acc, val, cnt
}

// sortByOutput sorts the source classes by output class, stably (counting sort): those
// of output class c are order[start[c]:start[c+1]].
func (sc *histScratch) sortByOutput(assign []int32, n int) {
	start := grow(sc.start, n+1)
	clear(start)
	for _, a := range assign {
		start[a+1]++
	}
	for c := 1; c <= n; c++ {
		start[c] += start[c-1]
	}
	order := grow(sc.order, len(assign))
	next := append(sc.next[:0], start[:n]...)
	for j, a := range assign {
		order[next[a]] = int32(j)
		next[a]++
	}
	sc.start, sc.order, sc.next = start, order, next
}

// rollSets returns the value sets of the output classes (n of them) of a roll-up whose
// source class j went to output class assign[j]: the union of their sources' sets.
func (m *models) rollSets(src *classes, assign []int32, n int) [][]uint64 {
	if len(m.setCols) == 0 {
		return nil
	}
	out := make([][]uint64, len(m.t.Sensitive))
	for _, col := range m.setCols {
		w := m.words[col]
		o := make([]uint64, n*w)
		switch {
		case src.rows != nil:
			codes := m.t.Sensitive[col].Codes
			for j, a := range assign[:src.n] {
				v := codes.At(j)
				o[int(a)*w+int(v>>6)] |= 1 << (v & 63)
			}
		case w == 1:
			set := src.sets[col]
			for j, a := range assign[:src.n] {
				o[a] |= set[j]
			}
		default:
			set := src.sets[col]
			for j, a := range assign[:src.n] {
				for x := range w {
					o[int(a)*w+x] |= set[j*w+x]
				}
			}
		}
		out[col] = o
	}
	return out
}

// setsOf returns the value sets of the classes of c from their histograms (c is a
// class table, not the records).
func (m *models) setsOf(c *classes) [][]uint64 {
	if len(m.setCols) == 0 {
		return nil
	}
	out := make([][]uint64, len(m.t.Sensitive))
	for _, col := range m.setCols {
		w, h := m.words[col], c.hist[col]
		o := make([]uint64, c.n*w)
		for j := range c.n {
			for k := h.off[j]; k < h.off[j+1]; k++ {
				v := h.val[k]
				o[j*w+int(v>>6)] |= 1 << (v & 63)
			}
		}
		out[col] = o
	}
	return out
}

// setFails reports whether class j of cls fails the monotone part of the requirements
// (see above) on its value sets; it stops at the first bound that fails.
func (m *models) setFails(cls *classes, j int) bool {
	for _, col := range m.setCols {
		w := m.words[col]
		set := cls.sets[col][j*w : (j+1)*w]
		if need := m.minValues[col]; need > 1 {
			held := 0
			for _, x := range set {
				held += bits.OnesCount64(x)
			}
			if held < need {
				return true
			}
		}
	}
	for i := range m.covers {
		cv := &m.covers[i]
		w := m.words[cv.col]
		if cv.fails(cls.sets[cv.col][j*w : (j+1)*w]) {
			return true
		}
	}
	return false
}

// histFails reports whether class j of cls fails a requirement decided on its
// histograms (all but distinct l-diversity on columns with value sets); it stops at
// the first that fails.
func (c *checker) histFails(cls *classes, j int) bool {
	for _, d := range c.m.byHist {
		h := cls.hist[d.Column]
		if !c.diverse(d, h.cnt[h.off[j]:h.off[j+1]], cls.personsOf(j)) {
			return true
		}
	}
	if len(c.m.closeness)+len(c.m.likeness) == 0 {
		return false
	}
	vals, cnts := c.vals[:0], c.cnts[:0]
	for _, h := range cls.hist {
		if h == nil {
			vals, cnts = append(vals, nil), append(cnts, nil)
			continue
		}
		lo, hi := h.off[j], h.off[j+1]
		vals, cnts = append(vals, h.val[lo:hi]), append(cnts, h.cnt[lo:hi])
	}
	c.vals, c.cnts = vals, cnts
	return !c.close(vals, cnts, cls.personsOf(j))
}

// diverse decides l-diversity requirement d on a class whose histogram of the column
// has counts cnts: of records, or, when the models count persons, of the class's
// persons holding each value, the class having persons persons.
func (c *checker) diverse(d Diversity, cnts []int32, persons int32) bool {
	c.counts = c.counts[:0]
	for _, n := range cnts {
		c.counts = append(c.counts, int64(n))
	}
	if c.m.persons {
		return diversity.PersonsHold(d.Model.L, int64(persons), c.counts)
	}
	return d.Model.Holds(c.counts)
}

// failing returns, for every class of cls with at least k records, whether it fails a
// model other than k-anonymity (smaller classes are suppressed anyway and not checked).
func (m *models) failing(cls *classes, k int) []bool {
	out := make([]bool, cls.n)
	if !m.any() {
		return out
	}
	c := m.checker()
	vals := make([][]int32, len(m.t.Sensitive))
	cnts := make([][]int32, len(m.t.Sensitive))
	one := []int32{1}
	own := make([]int32, len(m.t.Sensitive))
	for j := range cls.n {
		if int(cls.personsOf(j)) < k {
			continue
		}
		for _, col := range m.cols {
			h := m.histOf(cls, col)
			if h == nil { // a record: its own value, once
				own[col] = m.t.Sensitive[col].Codes.At(j)
				vals[col], cnts[col] = own[col:col+1], one
				continue
			}
			vals[col], cnts[col] = h.val[h.off[j]:h.off[j+1]], h.cnt[h.off[j]:h.off[j+1]]
		}
		out[j] = !c.holdsIn(vals, cnts, cls.personsOf(j))
	}
	return out
}
