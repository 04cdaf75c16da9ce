// Package closeness computes the distances of t-closeness (Li, Li, Venkatasubramanian,
// "t-Closeness: Privacy Beyond k-Anonymity and l-Diversity", ICDE 2007): the Earth
// Mover's Distance between the distribution of a sensitive attribute in one equivalence
// class, P, and its distribution in the whole table, Q, under three ground distances.
// A class is t-close when the distance is at most t.
//
// Distributions are given as histograms over the same numbered values (p[i] and q[i]
// count the records holding value i); they are normalized here. The package does no
// I/O and knows nothing of the search: the search and the verifier both call it.
//
// It imports nothing of this module (docs/design.md's package table), so that the
// search and the verifier share only this arithmetic.
package closeness

import (
	"errors"
	"fmt"
)

// Distance is a ground distance between sensitive values, spelled as the
// configuration's privacy.t-closeness.distance (its String).
type Distance string

// Distances between sensitive values.
const (
	// Equal: every two different values are at distance 1. The EMD is then the
	// variational distance ½ Σ |pᵢ − qᵢ|.
	Equal Distance = "equal"
	// Ordered: the m values are ordered and values i and j are at distance
	// |i − j| / (m − 1). The EMD is Σᵢ |r₁ + … + rᵢ| / (m − 1) with r = p − q.
	Ordered Distance = "ordered"
	// Hierarchical: the values are the leaves of a hierarchy of height H, and two
	// values are at distance level(lowest common ancestor) / H. The EMD is
	// Σ over inner nodes N of height(N)/H · min(pos(N), neg(N)), where pos(N) and
	// neg(N) sum the positive and the negative surpluses (of p over q) of N's
	// children.
	Hierarchical Distance = "hierarchical"
)

// Distances are the ground distances, in the order messages list them.
var Distances = []Distance{Equal, Ordered, Hierarchical}

// String is the distance's name.
func (d Distance) String() string { return string(d) }

// fractions returns p/Σp − q/Σq per value.
func fractions(p, q []int64) ([]float64, error) {
	if len(p) != len(q) {
		return nil, fmt.Errorf("histograms of %d and %d values", len(p), len(q))
	}
	var np, nq int64
	for i := range p {
		if p[i] < 0 || q[i] < 0 {
			return nil, errors.New("negative count")
		}
		np += p[i]
		nq += q[i]
	}
	if np == 0 || nq == 0 {
		return nil, errors.New("empty distribution")
	}
	r := make([]float64, len(p))
	for i := range p {
		r[i] = float64(p[i])/float64(np) - float64(q[i])/float64(nq)
	}
	return r, nil
}

// EqualEMD is the Earth Mover's Distance between p and q under the equal distance.
func EqualEMD(p, q []int64) (float64, error) {
	r, err := fractions(p, q)
	if err != nil {
		return 0, err
	}
	pos := 0.0
	for _, v := range r {
		if v > 0 {
			pos += v
		}
	}
	// Σ r = 0, so the positive part is half the absolute sum; summing only one sign
	// loses less to rounding.
	return min(pos, 1), nil
}

// OrderedEMD is the Earth Mover's Distance between p and q under the ordered distance;
// value i is the i-th smallest. With a single value the distance is 0.
func OrderedEMD(p, q []int64) (float64, error) {
	r, err := fractions(p, q)
	if err != nil {
		return 0, err
	}
	if len(r) < 2 {
		return 0, nil
	}
	sum, acc := 0.0, 0.0
	for _, v := range r[:len(r)-1] { // the last prefix sum is 0
		acc += v
		if acc < 0 {
			sum -= acc
		} else {
			sum += acc
		}
	}
	return min(sum/float64(len(r)-1), 1), nil
}

// Tree is a hierarchy over the values for the hierarchical distance.
type Tree struct {
	values int
	first  []int32   // first[v]: the node at level 1 above value v
	parent [][]int32 // parent[l][n]: the node at level l+2 above node n of level l+1
	size   []int     // nodes per level 1 … H
}

// NewTree builds a tree over values values from up, where up[l-1][v] is the node at
// level l (1 … H) above value v, nodes numbered 0 … size[l-1]−1; level H must be a
// single root. A hierarchy that is not consistent (two values sharing a node at some
// level but not at the level above) is refused.
func NewTree(values int, up [][]int32, size []int) (*Tree, error) {
	if len(up) == 0 || len(up) != len(size) {
		return nil, errors.New("a hierarchy needs at least one level above the values")
	}
	if size[len(size)-1] != 1 {
		return nil, errors.New("the top level of the hierarchy must be a single node")
	}
	t := &Tree{values: values, size: size}
	for l, u := range up {
		if len(u) != values {
			return nil, fmt.Errorf("level %d maps %d values, want %d", l+1, len(u), values)
		}
		for v, n := range u {
			if n < 0 || int(n) >= size[l] {
				return nil, fmt.Errorf("level %d: value %d maps to node %d of %d", l+1, v, n, size[l])
			}
		}
	}
	t.first = up[0]
	for l := 0; l+1 < len(up); l++ {
		parent := make([]int32, size[l])
		for i := range parent {
			parent[i] = -1
		}
		for v, n := range up[l] {
			next := up[l+1][v]
			if parent[n] >= 0 && parent[n] != next {
				return nil, fmt.Errorf("level %d: node %d has two parents", l+1, n)
			}
			parent[n] = next
		}
		for n, pn := range parent {
			if pn < 0 { // a node no value lies under: it carries no surplus
				parent[n] = 0
			}
		}
		t.parent = append(t.parent, parent)
	}
	return t, nil
}

// HierarchicalEMD is the Earth Mover's Distance between p and q under the hierarchical
// distance of tree t.
func HierarchicalEMD(p, q []int64, t *Tree) (float64, error) {
	if len(p) != t.values {
		return 0, fmt.Errorf("histogram of %d values for a hierarchy over %d", len(p), t.values)
	}
	r, err := fractions(p, q)
	if err != nil {
		return 0, err
	}
	h := float64(len(t.size))
	extra := r // surplus of each node of the level below, starting with the values
	cost := 0.0
	for l, size := range t.size {
		up := t.first
		if l > 0 {
			up = t.parent[l-1]
		}
		pos := make([]float64, size)
		neg := make([]float64, size)
		for c, e := range extra {
			if e > 0 {
				pos[up[c]] += e
			} else {
				neg[up[c]] -= e
			}
		}
		next := make([]float64, size)
		for n := range next {
			cost += float64(l+1) / h * min(pos[n], neg[n])
			next[n] = pos[n] - neg[n]
		}
		extra = next
	}
	return min(cost, 1), nil
}

// Reference is the whole table's distribution prepared for the distances of many
// classes, each given sparsely: the values it holds (vals, ascending or not) and their
// counts. It is not modified by the distance methods, which several goroutines may call
// at once, each with scratch space of its own (Scratch).
type Reference struct {
	q    []float64 // the table's distribution
	qcum []float64 // its prefix sums, for the ordered distance
	tree *Tree
}

// NewReference prepares the table's histogram q (and, for the hierarchical distance,
// the tree over its values; nil otherwise).
func NewReference(q []int64, tree *Tree) (*Reference, error) {
	var n int64
	for _, c := range q {
		if c < 0 {
			return nil, errors.New("negative count")
		}
		n += c
	}
	if n == 0 {
		return nil, errors.New("empty distribution")
	}
	if tree != nil && tree.values != len(q) {
		return nil, fmt.Errorf("a hierarchy over %d values for a histogram of %d", tree.values, len(q))
	}
	r := &Reference{q: make([]float64, len(q)), qcum: make([]float64, len(q)), tree: tree}
	acc := 0.0
	for i, c := range q {
		r.q[i] = float64(c) / float64(n)
		acc += r.q[i]
		r.qcum[i] = acc
	}
	return r, nil
}

// Scratch is the working space of one goroutine's distance computations.
type Scratch struct {
	dense []float64 // zero between calls
	leaf  []float64 // overwritten by every call
	level [][]float64
}

// NewScratch returns working space for the distances to r.
func (r *Reference) NewScratch() *Scratch {
	s := &Scratch{dense: make([]float64, len(r.q)), leaf: make([]float64, len(r.q))}
	if r.tree != nil {
		for _, size := range r.tree.size {
			s.level = append(s.level, make([]float64, 3*size))
		}
	}
	return s
}

// total is the number of records of a sparse class.
func total(cnts []int32) float64 {
	var n int64
	for _, c := range cnts {
		n += int64(c)
	}
	return float64(n)
}

// Equal is EqualEMD of the class (vals, cnts) against the reference.
func (r *Reference) Equal(vals, cnts []int32) float64 {
	n := total(cnts)
	pos := 0.0
	for k, v := range vals {
		if d := float64(cnts[k])/n - r.q[v]; d > 0 {
			pos += d
		}
	}
	return min(pos, 1)
}

// Ordered is OrderedEMD of the class (vals, cnts) against the reference.
func (r *Reference) Ordered(vals, cnts []int32, s *Scratch) float64 {
	m := len(r.q)
	if m < 2 {
		return 0
	}
	n := total(cnts)
	p := s.dense
	for k, v := range vals {
		p[v] += float64(cnts[k]) / n
	}
	sum, acc := 0.0, 0.0
	for i := range m - 1 {
		acc += p[i]
		d := acc - r.qcum[i]
		if d < 0 {
			d = -d
		}
		sum += d
	}
	for _, v := range vals {
		p[v] = 0
	}
	return min(sum/float64(m-1), 1)
}

// Hierarchical is HierarchicalEMD of the class (vals, cnts) against the reference,
// whose tree must be set.
func (r *Reference) Hierarchical(vals, cnts []int32, s *Scratch) float64 {
	t := r.tree
	n := total(cnts)
	extra := s.leaf
	for i, q := range r.q {
		extra[i] = -q
	}
	for k, v := range vals {
		extra[v] += float64(cnts[k]) / n
	}
	h := float64(len(t.size))
	cost := 0.0
	for l, size := range t.size {
		up := t.first
		if l > 0 {
			up = t.parent[l-1]
		}
		buf := s.level[l]
		pos, neg, next := buf[:size], buf[size:2*size], buf[2*size:3*size]
		clear(pos)
		clear(neg)
		for c, e := range extra {
			if e > 0 {
				pos[up[c]] += e
			} else {
				neg[up[c]] -= e
			}
		}
		for nd := range next {
			cost += float64(l+1) / h * min(pos[nd], neg[nd])
			next[nd] = pos[nd] - neg[nd]
		}
		extra = next
	}
	return min(cost, 1)
}
