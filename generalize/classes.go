package generalize

import "math/bits"

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

// grouper rolls classes up to a more general node. It owns a reusable hash table, so a
// grouper must not be used by two goroutines at once.
type grouper struct {
	slots []int32 // index+1 of the class in the output, 0 = empty
	tuple []int32
}

func (g *grouper) table(n int) []int32 {
	size := 1 << bits.Len(uint(2*n))
	if cap(g.slots) < size {
		g.slots = make([]int32, size)
	}
	g.slots = g.slots[:size]
	clear(g.slots)
	return g.slots
}

// rollUp groups the classes of src into the classes of node dst; maps[i] maps a code of
// column i at src's level to its code at dst's level. When assign is not nil,
// assign[j] receives the index of the output class of source class j.
func (g *grouper) rollUp(src *classes, dst int, maps [][]int32, assign []int32) *classes {
	q := len(src.cols)
	out := &classes{node: dst, cols: make([][]int32, q), counts: make([]int32, 0, 64)}
	for i := range out.cols {
		out.cols[i] = make([]int32, 0, 64)
	}
	slots := g.table(src.n)
	mask := uint64(len(slots) - 1)
	if cap(g.tuple) < q {
		g.tuple = make([]int32, q)
	}
	t := g.tuple[:q]
	for j := 0; j < src.n; j++ {
		h := uint64(0x9E3779B97F4A7C15)
		for i := range q {
			c := maps[i][src.cols[i][j]]
			t[i] = c
			h = (h ^ uint64(uint32(c))) * 0xBF58476D1CE4E5B9
		}
		h ^= h >> 31
		pos := h & mask
		for {
			s := slots[pos]
			if s == 0 {
				for i := range q {
					out.cols[i] = append(out.cols[i], t[i])
				}
				out.counts = append(out.counts, src.count(j))
				out.n++
				slots[pos] = int32(out.n)
				if assign != nil {
					assign[j] = int32(out.n - 1)
				}
				break
			}
			k := s - 1
			same := true
			for i := range q {
				if out.cols[i][k] != t[i] {
					same = false
					break
				}
			}
			if same {
				out.counts[k] += src.count(j)
				if assign != nil {
					assign[j] = k
				}
				break
			}
			pos = (pos + 1) & mask
		}
	}
	return out
}
