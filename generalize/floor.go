package generalize

import "math/big"

// floorer is a metric whose value at every generalization of a node, with any
// classes suppressed, is at least a value the node's own classes give: once the
// search has counted a node, the nodes above it need not be counted when that floor
// cannot beat the best node found.
type floorer interface {
	floor(cls *classes) (*big.Int, float64)
}

// floor of MetricAECS: a generalization G of a node of c classes has at most c
// classes, so its published classes plus the suppressed group are at most c and its
// value N / (P + s) is at least N / c.
func (m *aecs) floor(cls *classes) (*big.Int, float64) {
	c := int64(cls.n)
	if c == 0 {
		return nil, 0
	}
	return big.NewInt(m.n - c), float64(m.n) / float64(c)
}

// floor of MetricDiscernibilityStar: merging classes a and b adds 2ab to Σ|C|², and
// suppression does not change it, so every generalization's value is at least the
// node's own.
func (m *discernibilityStar) floor(cls *classes) (*big.Int, float64) {
	return m.exact(nil, cls, nil)
}

// floors holds, per node, the largest floor (floorer) of the counted nodes below it
// (nil: none). A floor raised at a node is raised at every node above it, so the
// floors never decrease upwards and raising stops where a floor is already as high.
type floors struct {
	lat   *Lattice
	exact []*big.Int
	value []float64
	stack []int
}

func newFloors(lat *Lattice) *floors {
	return &floors{lat: lat, exact: make([]*big.Int, lat.Size()), value: make([]float64, lat.Size())}
}

// raise gives node and every node above it the floor (ex, v) where theirs is lower.
func (f *floors) raise(node int, ex *big.Int, v float64) {
	if ex == nil {
		return
	}
	f.stack = append(f.stack[:0], node)
	for len(f.stack) > 0 {
		n := f.stack[len(f.stack)-1]
		f.stack = f.stack[:len(f.stack)-1]
		if f.exact[n] != nil && f.exact[n].Cmp(ex) >= 0 {
			continue
		}
		f.exact[n], f.value[n] = ex, v
		f.lat.Up(n, func(up int) { f.stack = append(f.stack, up) })
	}
}
