package pgm

import (
	"fmt"
	"math/bits"
)

// bitset is a fixed-size set of small non-negative integers.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) set(i int)      { b[i>>6] |= 1 << uint(i&63) }
func (b bitset) clear(i int)    { b[i>>6] &^= 1 << uint(i&63) }
func (b bitset) has(i int) bool { return b[i>>6]&(1<<uint(i&63)) != 0 }

// forEach calls f for every member in increasing order.
func (b bitset) forEach(f func(i int)) {
	for w, x := range b {
		for x != 0 {
			t := bits.TrailingZeros64(x)
			f(w*64 + t)
			x &= x - 1
		}
	}
}

// triangulation is the result of greedy elimination on the interaction
// graph of a clique set.
type triangulation struct {
	order      []int   // elimination order of the attributes
	elimClique [][]int // per attribute: itself and its later-eliminated neighbours (sorted)
	maximal    [][]int // maximal cliques of the triangulated graph (sorted attrs)
	cliqueOf   []int   // per attribute: a maximal clique holding elimClique[attr]
}

// checkCliques validates a domain and a list of attribute sets.
func checkCliques(dom Domain, cliques [][]int) error {
	if err := dom.validate(); err != nil {
		return err
	}
	for i, c := range cliques {
		if err := dom.checkSet(c); err != nil {
			return fmt.Errorf("clique %d: %w", i, err)
		}
	}
	return nil
}

// triangulate builds the interaction graph of the cliques over every
// attribute of dom and triangulates it by greedy min-fill elimination
// (ties broken by the smaller product of neighbour sizes, then by index).
// Inputs must have been validated.
func triangulate(dom Domain, cliques [][]int) *triangulation {
	n := len(dom)
	t := &triangulation{
		order:      make([]int, 0, n),
		elimClique: make([][]int, n),
		cliqueOf:   make([]int, n),
	}
	t.eliminate(dom, interactionGraph(n, cliques))
	t.findMaximal()
	// cliqueOf: the smallest maximal clique holding the elimination clique.
	for v := 0; v < n; v++ {
		best := -1
		var bestSize int64
		for i, mc := range t.maximal {
			if isSubset(t.elimClique[v], mc) {
				s := dom.cells(mc)
				if best < 0 || s < bestSize {
					best, bestSize = i, s
				}
			}
		}
		t.cliqueOf[v] = best
	}
	return t
}

// interactionGraph returns the adjacency of n attributes, two of them adjacent when a
// clique holds both.
func interactionGraph(n int, cliques [][]int) []bitset {
	adj := make([]bitset, n)
	for i := range adj {
		adj[i] = newBitset(n)
	}
	for _, c := range cliques {
		for _, a := range c {
			for _, b := range c {
				if a != b {
					adj[a].set(b)
				}
			}
		}
	}
	return adj
}

// eliminate eliminates every attribute, the one of least fill first (minFill), adding
// the fill to adj: it sets t.order and t.elimClique.
func (t *triangulation) eliminate(dom Domain, adj []bitset) {
	n := len(dom)
	alive := newBitset(n)
	for i := 0; i < n; i++ {
		alive.set(i)
	}
	nb := newBitset(n)
	for step := 0; step < n; step++ {
		v := minFill(dom, adj, alive, nb)
		for k := range nb {
			nb[k] = adj[v][k] & alive[k]
		}
		cl := []int{}
		nb.set(v)
		nb.forEach(func(u int) { cl = append(cl, u) })
		nb.clear(v)
		nb.forEach(func(u int) {
			for k := range nb {
				adj[u][k] |= nb[k]
			}
			adj[u].clear(u)
		})
		alive.clear(v)
		t.order = append(t.order, v)
		t.elimClique[v] = cl
	}
}

// minFill returns the alive attribute whose elimination adds the fewest edges among
// its alive neighbours (ties: the smaller product of their sizes, then the lower
// index). nb is scratch of the graph's size.
func minFill(dom Domain, adj []bitset, alive, nb bitset) int {
	best, bestFill := -1, 0
	bestW := 0.0
	for v := range dom {
		if !alive.has(v) {
			continue
		}
		fill := 0
		w := 1.0
		for k := range nb {
			nb[k] = adj[v][k] & alive[k]
		}
		nb.forEach(func(u int) {
			w *= float64(dom[u])
			for k := range nb {
				m := nb[k] &^ adj[u][k]
				fill += bits.OnesCount64(m)
			}
			fill-- // u itself is in nb but not in adj[u]
		})
		fill /= 2
		if best < 0 || fill < bestFill || (fill == bestFill && w < bestW) {
			best, bestFill, bestW = v, fill, w
		}
	}
	return best
}

// findMaximal sets t.maximal to the elimination cliques not strictly inside another
// (two elimination cliques are never equal), in elimination order.
func (t *triangulation) findMaximal() {
	n := len(t.elimClique)
	sets := make([]bitset, n)
	for v := 0; v < n; v++ {
		sets[v] = newBitset(n)
		for _, a := range t.elimClique[v] {
			sets[v].set(a)
		}
	}
	for _, v := range t.order {
		isMax := true
		for u := 0; u < n; u++ {
			if u == v || len(t.elimClique[u]) <= len(t.elimClique[v]) {
				continue
			}
			sub := true
			for k := range sets[v] {
				if sets[v][k]&^sets[u][k] != 0 {
					sub = false
					break
				}
			}
			if sub {
				isMax = false
				break
			}
		}
		if isMax {
			t.maximal = append(t.maximal, t.elimClique[v])
		}
	}
}

// size returns the number of cells of the maximal clique tables,
// saturating at math.MaxInt64.
func (t *triangulation) size(dom Domain) int64 {
	var s int64
	for _, c := range t.maximal {
		s = satAdd(s, dom.cells(c))
	}
	return s
}

// ModelSize returns the number of float64 cells in the junction tree of a
// model over dom whose measured cliques are cliques: the sum of the table
// sizes of the maximal cliques of the triangulated interaction graph, with
// attributes in no clique as singleton cliques. It saturates at
// math.MaxInt64.
func ModelSize(dom Domain, cliques [][]int) (int64, error) {
	if err := checkCliques(dom, cliques); err != nil {
		return 0, err
	}
	return triangulate(dom, cliques).size(dom), nil
}

// jtree is a junction tree over the maximal cliques of a triangulation,
// rooted at clique 0.
type jtree struct {
	cliques  [][]int
	parent   []int   // parent clique, -1 for the root
	children [][]int // child cliques
	order    []int   // parents before children
	sep      [][]int // separator with the parent (nil for the root)
	size     []int   // cells per clique
	off      []int   // offset of each clique's table in a flat buffer
	total    int     // sum of sizes
}

// buildJTree connects the maximal cliques into a maximum-weight spanning
// tree on separator cardinality (Prim's algorithm, ties to the lowest
// index), so disconnected components are joined by empty separators.
func buildJTree(dom Domain, t *triangulation) (*jtree, error) {
	k := len(t.maximal)
	j := &jtree{
		cliques:  t.maximal,
		parent:   make([]int, k),
		children: make([][]int, k),
		sep:      make([][]int, k),
		size:     make([]int, k),
		off:      make([]int, k),
	}
	var total int64
	for i, c := range t.maximal {
		s := dom.cells(c)
		total = satAdd(total, s)
		if total > maxModelCells {
			return nil, fmt.Errorf("pgm: model needs more than %d cells", maxModelCells)
		}
		j.size[i] = int(s)
		j.off[i] = int(total - s)
	}
	j.total = int(total)
	in := make([]bool, k)
	bestW := make([]int, k)
	bestFrom := make([]int, k)
	for i := range bestW {
		bestW[i] = -1
		bestFrom[i] = -1
	}
	cur := 0
	in[0] = true
	j.parent[0] = -1
	j.order = append(j.order, 0)
	for len(j.order) < k {
		for i := 0; i < k; i++ {
			if in[i] {
				continue
			}
			w := len(intersect(t.maximal[cur], t.maximal[i]))
			if w > bestW[i] {
				bestW[i], bestFrom[i] = w, cur
			}
		}
		next := -1
		for i := 0; i < k; i++ {
			if !in[i] && (next < 0 || bestW[i] > bestW[next]) {
				next = i
			}
		}
		in[next] = true
		p := bestFrom[next]
		j.parent[next] = p
		j.children[p] = append(j.children[p], next)
		j.sep[next] = intersect(t.maximal[next], t.maximal[p])
		j.order = append(j.order, next)
		cur = next
	}
	return j, nil
}
