package dphist

import "fmt"

// Marginal is one noisy marginal table: Attrs are indexes (ascending, distinct) into a
// shared list of attribute domain sizes; Cells holds one value per cell of the cross
// product of those attributes' domains in mixed-radix order, the last attribute varying
// fastest (cell (v0,v1,…) = v0·s1·s2… + v1·s2… + …).
type Marginal struct {
	Attrs []int
	Cells []float64
}

const (
	// maxMarginalAttrs is the most attributes one marginal given to Consistent may have.
	maxMarginalAttrs = 16
	// maxMarginalCells is the most cells one marginal given to Consistent may have.
	maxMarginalCells = 1 << 26
)

// Consistent returns the least-squares consistent estimates of the marginals: among all
// sets of tables that are the marginals of one common real-valued table over all
// attributes, the one nearest (sum of squared cell differences over all marginals) to
// the given noisy marginals. sizes[a] is attribute a's domain size. The output has the
// input's order and attributes; the input is not modified. Marginals with the same
// attributes are allowed. It is an error for a domain size to be below 1, or for a
// marginal to have an attribute index out of range, indexes not ascending, more than 16
// attributes, more than 1<<26 cells or a number of cells that does not fit its attributes.
func Consistent(sizes []int, ms []Marginal) ([]Marginal, error) {
	// How it works. A table f over a set A of attributes splits orthogonally into
	// components f = Σ_{B⊆A} lift_A(f_B), f_B a table over B that sums to zero along
	// each attribute of B; the component projector is ⊗_{a∈B}(I−P_a) ⊗_{a∈A\B} P_a,
	// P_a averaging along a, and ‖f‖² = Σ_B |A\B|·‖f_B‖². The A-marginal of a common
	// table has components h_B/|A\B|, h_B the B-component of its B-marginal, so the
	// objective separates into one weighted average per B:
	// h_B = Σ_{A⊇B} (y_A)_B / Σ_{A⊇B} 1/|A\B|, and m̂_A = Σ_{B⊆A} lift_A(h_B)/|A\B|.
	//
	// Each table is transformed in place, axis by axis: the s values along an axis
	// become their mean followed by the deviations of the first s−1 values from it
	// (the last deviation is minus the sum of the others). Afterwards the cells whose
	// transformed index is nonzero exactly on the attributes of B hold (y_A)_B at
	// its first s_a−1 values per attribute; the inverse transform rebuilds a table
	// from components stored the same way.
	for a, s := range sizes {
		if s < 1 {
			return nil, fmt.Errorf("attribute %d has a domain of %d values", a, s)
		}
	}
	for i, m := range ms {
		if err := checkMarginal(sizes, m); err != nil {
			return nil, fmt.Errorf("marginal %d: %w", i, err)
		}
	}
	cs := components{ids: map[componentKey]int{}}
	tabs := make([][]float64, len(ms)) // per marginal: its transformed table
	compIDs := make([][]int, len(ms))  // per marginal: the component id of each subset mask
	var lay marginalLayout
	for i, m := range ms {
		lay.init(sizes, m.Attrs)
		tabs[i], compIDs[i] = cs.add(&lay, m)
	}
	cs.average()
	out := make([]Marginal, len(ms))
	for i, m := range ms {
		lay.init(sizes, m.Attrs)
		out[i] = Marginal{Attrs: append([]int(nil), m.Attrs...), Cells: cs.rebuild(&lay, tabs[i], compIDs[i])}
	}
	return out, nil
}

// componentKey identifies a component by its attribute list.
type componentKey struct {
	n     int
	attrs [maxMarginalAttrs]int
}

// components are Consistent's components h_B, one per attribute set B of a marginal:
// comps[id] holds the running numerator (then h_B) and den[id] the summed weights.
type components struct {
	ids   map[componentKey]int
	comps [][]float64
	den   []float64
}

// add transforms a copy of m's table (lay laid out for m's attributes) and adds each
// of its components to the running sums: it returns the transformed table and the
// component id of each subset mask of m's attributes.
func (cs *components) add(lay *marginalLayout, m Marginal) ([]float64, []int) {
	t := append([]float64(nil), m.Cells...)
	lay.forward(t)
	k := len(m.Attrs)
	compIDs := make([]int, 1<<k)
	for mask := 0; mask < 1<<k; mask++ {
		var key componentKey
		for j, a := range m.Attrs {
			if mask&(1<<j) != 0 {
				key.attrs[key.n] = a
				key.n++
			}
		}
		id, ok := cs.ids[key]
		if !ok {
			id = len(cs.comps)
			cs.ids[key] = id
			cs.comps = append(cs.comps, make([]float64, lay.blockSize(mask)))
			cs.den = append(cs.den, 0)
		}
		compIDs[mask] = id
		c := cs.comps[id]
		lay.blockRuns(mask, func(b, o, n, st int) {
			for v, cb := range c[b : b+n] {
				c[b+v] = cb + t[o+v*st]
			}
		})
		cs.den[id] += 1 / lay.restSize(mask)
	}
	return t, compIDs
}

// average divides each component's sum by its summed weights: h_B.
func (cs *components) average() {
	for id, c := range cs.comps {
		for b := range c {
			c[b] /= cs.den[id]
		}
	}
}

// rebuild writes into t (a marginal's transformed table, lay laid out for its
// attributes) its components h_B/|A\B| and transforms it back: the consistent
// marginal m̂_A.
func (cs *components) rebuild(lay *marginalLayout, t []float64, compIDs []int) []float64 {
	for mask, id := range compIDs {
		c := cs.comps[id]
		w := 1 / lay.restSize(mask)
		lay.blockRuns(mask, func(b, o, n, st int) {
			for v, cb := range c[b : b+n] {
				t[o+v*st] = cb * w
			}
		})
	}
	lay.inverse(t)
	return t
}

// checkMarginal reports whether m is a well-formed table over attributes of the given
// domain sizes, and small enough for Consistent.
func checkMarginal(sizes []int, m Marginal) error {
	if len(m.Attrs) > maxMarginalAttrs {
		return fmt.Errorf("%d attributes, more than %d", len(m.Attrs), maxMarginalAttrs)
	}
	n := 1
	for j, a := range m.Attrs {
		if a < 0 || a >= len(sizes) {
			return fmt.Errorf("attribute index %d out of range [0, %d)", a, len(sizes))
		}
		if j > 0 && a <= m.Attrs[j-1] {
			return fmt.Errorf("attribute indexes %v not ascending and distinct", m.Attrs)
		}
		if n > maxMarginalCells/sizes[a] {
			return fmt.Errorf("more than %d cells", maxMarginalCells)
		}
		n *= sizes[a]
	}
	if len(m.Cells) != n {
		return fmt.Errorf("%d cells, want %d", len(m.Cells), n)
	}
	return nil
}

// marginalLayout describes one marginal's table shape: domain sizes and strides per
// attribute (the last attribute has stride 1). Its buffers are reused between marginals.
type marginalLayout struct {
	size, stride []int
	dims, str    []int     // scratch for blockRuns
	ctr          []int     // scratch for blockRuns
	line, sum    []float64 // scratch for the axis transforms
}

func (l *marginalLayout) init(sizes, attrs []int) {
	k := len(attrs)
	l.size = l.size[:0]
	l.stride = append(l.stride[:0], make([]int, k)...)
	for _, a := range attrs {
		l.size = append(l.size, sizes[a])
	}
	st := 1
	for j := k - 1; j >= 0; j-- {
		l.stride[j] = st
		st *= l.size[j]
	}
}

// blockSize is the number of stored values of the component of the attributes in mask:
// the product of size−1 over them.
func (l *marginalLayout) blockSize(mask int) int {
	n := 1
	for j, s := range l.size {
		if mask&(1<<j) != 0 {
			n *= s - 1
		}
	}
	return n
}

// restSize is the product of the domain sizes of the attributes not in mask.
func (l *marginalLayout) restSize(mask int) float64 {
	n := 1.0
	for j, s := range l.size {
		if mask&(1<<j) == 0 {
			n *= float64(s)
		}
	}
	return n
}

// blockRuns calls f for each run of the component of the attributes in mask: the
// component's values b … b+n−1 (in its own mixed-radix order) are those of the
// transformed table at o, o+st, …, o+(n−1)·st.
func (l *marginalLayout) blockRuns(mask int, f func(b, o, n, st int)) {
	l.dims, l.str = l.dims[:0], l.str[:0]
	base, n := 0, 1
	for j, s := range l.size {
		if mask&(1<<j) != 0 {
			l.dims = append(l.dims, s-1)
			l.str = append(l.str, l.stride[j])
			base += l.stride[j]
			n *= s - 1
		}
	}
	if n == 0 {
		return
	}
	k := len(l.dims)
	if k == 0 {
		f(0, base, 1, 1)
		return
	}
	// Odometer over all but the last dimension; the last one is a run.
	l.ctr = append(l.ctr[:0], make([]int, k)...)
	ctr := l.ctr
	last, lastStr := l.dims[k-1], l.str[k-1]
	o := base
	for b := 0; ; b += last {
		f(b, o, last, lastStr)
		j := k - 2
		for ; j >= 0; j-- {
			ctr[j]++
			o += l.str[j]
			if ctr[j] < l.dims[j] {
				break
			}
			o -= ctr[j] * l.str[j]
			ctr[j] = 0
		}
		if j < 0 {
			return
		}
	}
}

// transformChunk bounds the scratch space of the axis transforms, which work on this
// many lines at a time.
const transformChunk = 256

// forward replaces, along every axis in turn, the values x_0…x_{s−1} by their mean m
// followed by x_0−m, …, x_{s−2}−m.
func (l *marginalLayout) forward(t []float64) {
	for j, s := range l.size {
		if s == 1 {
			continue
		}
		st := l.stride[j]
		fs := float64(s)
		if st == 1 {
			for i := 0; i < len(t); i += s {
				x := t[i : i+s]
				sum := 0.0
				for _, v := range x {
					sum += v
				}
				m := sum / fs
				for v := s - 1; v >= 1; v-- {
					x[v] = x[v-1] - m
				}
				x[0] = m
			}
			continue
		}
		// Lines i0 … i1−1 of a block at a time; their v-th values are contiguous.
		l.scratch(transformChunk)
		for outer := 0; outer < len(t); outer += st * s {
			for i0 := 0; i0 < st; i0 += transformChunk {
				w := min(transformChunk, st-i0)
				row := func(v int) []float64 {
					o := outer + v*st + i0
					return t[o : o+w]
				}
				m := l.line[:w]
				clear(m)
				for v := range s {
					for i, x := range row(v) {
						m[i] += x
					}
				}
				for i := range m {
					m[i] /= fs
				}
				for v := s - 1; v >= 1; v-- {
					dst, src := row(v), row(v-1)
					for i := range dst {
						dst[i] = src[i] - m[i]
					}
				}
				copy(row(0), m)
			}
		}
	}
}

// inverse undoes forward: along every axis, m, d_0…d_{s−2} become m+d_0, …,
// m+d_{s−2}, m−Σd.
func (l *marginalLayout) inverse(t []float64) {
	for j, s := range l.size {
		if s == 1 {
			continue
		}
		st := l.stride[j]
		if st == 1 {
			for i := 0; i < len(t); i += s {
				x := t[i : i+s]
				m, sum := x[0], 0.0
				for v := 0; v < s-1; v++ {
					d := x[v+1]
					sum += d
					x[v] = m + d
				}
				x[s-1] = m - sum
			}
			continue
		}
		l.scratch(transformChunk)
		for outer := 0; outer < len(t); outer += st * s {
			for i0 := 0; i0 < st; i0 += transformChunk {
				w := min(transformChunk, st-i0)
				row := func(v int) []float64 {
					o := outer + v*st + i0
					return t[o : o+w]
				}
				m, sum := l.line[:w], l.sum[:w]
				copy(m, row(0))
				clear(sum)
				for v := 0; v < s-1; v++ {
					dst, d := row(v), row(v+1)
					for i := range dst {
						sum[i] += d[i]
						dst[i] = m[i] + d[i]
					}
				}
				dst := row(s - 1)
				for i := range dst {
					dst[i] = m[i] - sum[i]
				}
			}
		}
	}
}

// scratch makes l.line and l.sum hold at least n values.
func (l *marginalLayout) scratch(n int) {
	if len(l.line) < n {
		l.line = make([]float64, n)
		l.sum = make([]float64, n)
	}
}
