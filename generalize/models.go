package generalize

import (
	"fmt"
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
	Distance string
}

// Monotonicity of the models under generalization, which the search's tagging relies
// on. Merging classes (generalizing) can only lower the number of records that lie in
// failing classes when the union of a passing class with any class passes:
//
//   - k-anonymity: a union holds at least as many records as its parts — always.
//   - distinct l-diversity: a union holds at least the distinct values of its parts —
//     always.
//   - entropy l-diversity, recursive (c,l)-diversity, t-closeness: the union of two
//     passing classes passes (entropy and EMD are concave/convex in the distribution;
//     Machanavajjhala et al. 2007 prove it for recursive diversity), but a passing
//     class merged with a failing one may fail. So the node-level property is monotone
//     only when no record may be suppressed; with a suppression limit a node that
//     meets the models can have a generalization that does not.
//
// The search therefore tags generalizations of a node that meets the models only when
// every model is monotone for the suppression limit (monotone below), and tags the
// specializations of a node only when k-anonymity alone fails there.

// models holds the l-diversity and t-closeness requirements prepared for a table.
type models struct {
	t         *Table
	diversity []Diversity
	closeness []Closeness
	ref       []*closeness.Reference // per sensitive column with a t-closeness requirement
	cols      []int                  // sensitive columns some model reads
}

// newModels prepares the requirements of opt for the records of table t.
func newModels(t *Table, opt Options) (*models, error) { return newModelsOf(t, t, opt) }

// newModelsOf prepares the requirements of opt for table t, whose records per
// sensitive value tal counts (the table itself, or its class table): t's per-record
// codes are not read.
func newModelsOf(t *Table, tal tallier, opt Options) (*models, error) {
	m := &models{t: t, diversity: opt.Diversity, closeness: opt.Closeness}
	for _, d := range opt.Diversity {
		if d.Column < 0 || d.Column >= len(t.Sensitive) {
			return nil, fmt.Errorf("l-diversity on sensitive column %d of %d", d.Column, len(t.Sensitive))
		}
		if err := d.Model.Check(); err != nil {
			return nil, fmt.Errorf("l-diversity on %q: %w", t.Sensitive[d.Column].Name, err)
		}
		m.use(d.Column)
	}
	for _, c := range opt.Closeness {
		if c.Column < 0 || c.Column >= len(t.Sensitive) {
			return nil, fmt.Errorf("t-closeness on sensitive column %d of %d", c.Column, len(t.Sensitive))
		}
		switch c.Distance {
		case closeness.Equal, closeness.Ordered:
		case closeness.Hierarchical:
			if t.Sensitive[c.Column].Tree == nil {
				return nil, fmt.Errorf("t-closeness on %q: the hierarchical distance needs the column's hierarchy", t.Sensitive[c.Column].Name)
			}
		default:
			return nil, fmt.Errorf("t-closeness on %q: unknown distance %q", t.Sensitive[c.Column].Name, c.Distance)
		}
		if !(c.T >= 0) {
			return nil, fmt.Errorf("t-closeness on %q: t must be at least 0, got %g", t.Sensitive[c.Column].Name, c.T)
		}
		m.use(c.Column)
	}
	m.ref = make([]*closeness.Reference, len(t.Sensitive))
	for _, c := range opt.Closeness {
		if m.ref[c.Column] != nil {
			continue
		}
		s := t.Sensitive[c.Column]
		ref, err := closeness.NewReference(tal.valueCounts(c.Column), s.Tree)
		if err != nil {
			return nil, fmt.Errorf("t-closeness on %q: %w", s.Name, err)
		}
		m.ref[c.Column] = ref
	}
	return m, nil
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
	if maxSuppressed == 0 {
		return true
	}
	for _, d := range m.diversity {
		if d.Model.Variant != diversity.Distinct {
			return false
		}
	}
	return len(m.closeness) == 0
}

// checker decides the models on classes; it holds the scratch space of one goroutine.
type checker struct {
	m       *models
	scratch []*closeness.Scratch // per sensitive column with a t-closeness requirement
	counts  []int64
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
func (c *checker) holds(vals, cnts [][]int32) bool {
	for _, d := range c.m.diversity {
		c.counts = c.counts[:0]
		for _, n := range cnts[d.Column] {
			c.counts = append(c.counts, int64(n))
		}
		if !d.Model.Holds(c.counts) {
			return false
		}
	}
	for _, t := range c.m.closeness {
		if c.distance(t, vals[t.Column], cnts[t.Column]) > t.T {
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
	out := make([]*hist, len(m.t.Sensitive))
	if !m.any() {
		return out
	}
	// Source classes by output class (counting sort, stable).
	start := make([]int32, n+1)
	for _, a := range assign[:src.n] {
		start[a+1]++
	}
	for c := 1; c <= n; c++ {
		start[c] += start[c-1]
	}
	order := make([]int32, src.n)
	next := slices.Clone(start[:n])
	for j, a := range assign[:src.n] {
		order[next[a]] = int32(j)
		next[a]++
	}
	for _, col := range m.cols {
		s := m.t.Sensitive[col]
		dense := make([]int32, s.Values)
		h := &hist{off: make([]int32, n+1)}
		sh := m.histOf(src, col)
		var touched []int32
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
		out[col] = h
	}
	return out
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
		if int(cls.count(j)) < k {
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
		out[j] = !c.holds(vals, cnts)
	}
	return out
}
