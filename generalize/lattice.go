package generalize

// Lattice is the set of full-domain generalization nodes: one level per
// quasi-identifier, level i ranging over 0..Heights[i]-1. A node is identified by its
// index in mixed radix (the first quasi-identifier varies slowest).
type Lattice struct {
	Heights []int
	strides []int
	size    int
}

// maxLatticeSize bounds the number of nodes the search will consider.
const maxLatticeSize = 1 << 24

// NewLattice returns the lattice of the given level counts.
func NewLattice(heights []int) *Lattice {
	l := &Lattice{Heights: append([]int(nil), heights...), strides: make([]int, len(heights))}
	size := 1
	for i := len(heights) - 1; i >= 0; i-- {
		l.strides[i] = size
		if size > maxLatticeSize {
			size = maxLatticeSize + 1 // saturate: callers reject it
			continue
		}
		size *= heights[i]
	}
	l.size = size
	return l
}

// Size is the number of nodes (saturated just past the search's limit).
func (l *Lattice) Size() int { return l.size }

// TooLarge reports whether the lattice has more nodes than the search considers.
func (l *Lattice) TooLarge() bool { return l.size > maxLatticeSize }

// Levels writes the levels of node idx into dst (len = number of quasi-identifiers).
func (l *Lattice) Levels(idx int, dst []int) []int {
	dst = dst[:0]
	for i := range l.Heights {
		dst = append(dst, (idx/l.strides[i])%l.Heights[i])
	}
	return dst
}

// index returns the node of the given levels.
func (l *Lattice) index(levels []int) int {
	idx := 0
	for i, s := range l.strides {
		idx += levels[i] * s
	}
	return idx
}

// Up calls f with every direct generalization of node idx (one level higher in one
// quasi-identifier).
func (l *Lattice) Up(idx int, f func(int)) {
	for i, s := range l.strides {
		if (idx/s)%l.Heights[i] < l.Heights[i]-1 {
			f(idx + s)
		}
	}
}

// Down calls f with every direct specialization of node idx.
func (l *Lattice) Down(idx int, f func(int)) {
	for i, s := range l.strides {
		if (idx/s)%l.Heights[i] > 0 {
			f(idx - s)
		}
	}
}

// Leq reports whether node a is a specialization of (or equal to) node b.
func (l *Lattice) Leq(a, b int) bool {
	for i, s := range l.strides {
		h := l.Heights[i]
		if (a/s)%h > (b/s)%h {
			return false
		}
	}
	return true
}
