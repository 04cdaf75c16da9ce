package generalize

import (
	"math/bits"
	"slices"
	"sync"
)

// classes holds the equivalence classes of one node: column-major codes (codes at the
// node's levels) and the number of records in each class.
type classes struct {
	node   int
	cols   [][]int32
	counts []int32 // nil: every class has one record (the rows themselves)
	n      int
}

func (c *classes) count(j int) int32 {
	if c.counts == nil {
		return 1
	}
	return c.counts[j]
}

// entries is the memory the table holds, in int32s.
func (c *classes) entries() int { return c.n * (len(c.cols) + 1) }

// grouper rolls classes up to a more general node. It owns reusable scratch space, so a
// grouper must not be used by two goroutines at once.
type grouper struct {
	par    int // goroutines for computing keys (≤ 1: the caller's only)
	keys   []uint64
	slots  []int32 // index+1 of the output class, 0 = empty
	held   []uint64
	rep    []int32 // a source class of every output class
	counts []int32
}

// directLimit bounds the size of a key space that is counted in a plain array.
const directLimit = 1 << 20

// rollUp groups the classes of src into the classes of node dst; maps[i] maps a code of
// column i at src's level to its code at dst's level, and sizes[i] is the number of
// codes at dst's level. When assign is not nil, assign[j] receives the index of the
// output class of source class j.
//
// Each class gets a key: its codes in mixed radix when the key space fits in 64 bits
// (then equal keys are equal tuples), otherwise a hash of its codes (then tuples are
// compared on equal keys). Keys are counted in an array when the key space is small,
// else in an open-addressing table.
func (g *grouper) rollUp(src *classes, dst int, maps [][]int32, sizes []int, assign []int32) *classes {
	q := len(src.cols)
	n := src.n
	if cap(g.keys) < n {
		g.keys = make([]uint64, n)
	}
	keys := g.keys[:n]
	space, exact := uint64(1), true
	for _, sz := range sizes {
		hi, lo := bits.Mul64(space, uint64(sz))
		if hi != 0 {
			exact = false
			break
		}
		space = lo
	}
	// Keys of disjoint ranges of classes are independent: large tables split them
	// over par goroutines.
	parts := 1
	if g.par > 1 && n >= parallelKeys {
		parts = g.par
	}
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := n*p/parts, n*(p+1)/parts
		wg.Go(func() { computeKeys(keys[lo:hi], src, lo, hi, maps, sizes, exact) })
	}
	wg.Wait()
	rep, counts := g.rep[:0], g.counts[:0]
	add := func(j int) int32 {
		rep = append(rep, int32(j))
		counts = append(counts, src.count(j))
		return int32(len(rep))
	}
	switch {
	case exact && space <= directLimit && space <= uint64(8*n+1024):
		if uint64(cap(g.slots)) < space {
			g.slots = make([]int32, space)
		}
		slots := g.slots[:space]
		clear(slots)
		for j, key := range keys {
			s := slots[key]
			if s == 0 {
				s = add(j)
				slots[key] = s
			} else {
				counts[s-1] += src.count(j)
			}
			if assign != nil {
				assign[j] = s - 1
			}
		}
	default:
		// The table starts small and doubles at half load, so that it stays in cache
		// when (as usual) there are far fewer output classes than source classes.
		size := 1 << bits.Len(uint(min(2*n, 4096)))
		if cap(g.slots) < size {
			g.slots = make([]int32, size)
		}
		slots := g.slots[:size]
		clear(slots)
		held := g.held[:0] // key of every output class
		mask := uint64(size - 1)
		slot := func(key uint64) uint64 {
			h := key
			if exact {
				h = (h ^ (h >> 29)) * 0xBF58476D1CE4E5B9
			}
			return (h ^ (h >> 32)) & mask
		}
		for j, key := range keys {
			pos := slot(key)
			for {
				s := slots[pos]
				if s == 0 {
					s = add(j)
					held = append(held, key)
					slots[pos] = s
					if assign != nil {
						assign[j] = s - 1
					}
					if 2*len(held) > size {
						size *= 2
						if cap(g.slots) < size {
							g.slots = make([]int32, size)
						}
						slots = g.slots[:size]
						clear(slots)
						mask = uint64(size - 1)
						for c, k := range held {
							p := slot(k)
							for slots[p] != 0 {
								p = (p + 1) & mask
							}
							slots[p] = int32(c + 1)
						}
					}
					break
				}
				if held[s-1] == key && (exact || sameTuple(src, maps, int(rep[s-1]), j)) {
					counts[s-1] += src.count(j)
					if assign != nil {
						assign[j] = s - 1
					}
					break
				}
				pos = (pos + 1) & mask
			}
		}
		g.held = held
	}
	g.rep, g.counts = rep, counts
	out := &classes{node: dst, cols: make([][]int32, q), counts: slices.Clone(counts), n: len(rep)}
	for i := range q {
		m, col := maps[i], src.cols[i]
		oc := make([]int32, len(rep))
		for c, j := range rep {
			oc[c] = m[col[j]]
		}
		out.cols[i] = oc
	}
	return out
}

// parallelKeys is the smallest source table whose keys are computed in parallel.
const parallelKeys = 8192

// computeKeys writes the keys of source classes lo..hi-1 into keys.
func computeKeys(keys []uint64, src *classes, lo, hi int, maps [][]int32, sizes []int, exact bool) {
	if exact {
		clear(keys)
		for i, m := range maps {
			col, sz := src.cols[i][lo:hi], uint64(sizes[i])
			for j, c := range col {
				keys[j] = keys[j]*sz + uint64(m[c])
			}
		}
		return
	}
	for j := range keys {
		keys[j] = 0x9E3779B97F4A7C15
	}
	for i, m := range maps {
		for j, c := range src.cols[i][lo:hi] {
			keys[j] = (keys[j] ^ uint64(uint32(m[c]))) * 0xBF58476D1CE4E5B9
		}
	}
}

// sameTuple reports whether source classes a and b map to the same codes.
func sameTuple(src *classes, maps [][]int32, a, b int) bool {
	for i, m := range maps {
		if m[src.cols[i][a]] != m[src.cols[i][b]] {
			return false
		}
	}
	return true
}
