package generalize

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"sync"
)

// recordLayout is a copy of the records of a large table reordered so that every class
// of one node, the layout's node, lies within one of about layoutRanges ranges of
// records, the smallest classes first. The records are the search's bottom: the
// records themselves, or the classes of a class table (SearchClasses), with their
// counts.
//
// Every class of a specialization of the layout's node lies within one of its classes,
// so within one range: a roll-up of the records to such a node counts them range by
// range (radixCountRanges), each range's classes whole, and stops at the first range after
// which those classes hold more records in classes below k than may be suppressed
// (suppressionStop). Most nodes a search counts from the records fail so, and the
// layout's first ranges, its smallest classes, split into the smallest classes of the
// node: they show it after a fraction of the records instead of a pass over all of them
// (the 10M-record benchmark: 261 M records keyed instead of 980 M).
type recordLayout struct {
	node int
	key  uint64   // the node's levelKey
	src  *classes // the records, range after range
	// ranges are the bounds of the ranges: range r is src's ranges[r] … ranges[r+1]−1.
	ranges []int
}

const (
	// layoutRanges is about how many ranges a layout has: each holds at least a
	// layoutRanges-th of the records (a class larger than that, one range of its own),
	// and a record's range takes a byte. The 10M-record benchmark's search alone:
	// 2.39–2.40 s at 250 ranges, 2.66–3.02 s at 128, 2.41–2.77 s at 1,000.
	layoutRanges = 250
	// layoutShare bounds a layout's node: at most one class per layoutShare records,
	// so that it generalizes the nodes the search will count from the records, which
	// have many more.
	layoutShare = 1024
)

// covers reports whether every class of node lies within a range of layout l: node
// specializes l's node.
func (s *searcher) covers(l *recordLayout, node int) bool {
	return l != nil && s.leq(node, l.node, s.levelKey(node), l.key)
}

// layoutFor returns a layout of the records that covers node: the one kept, or a new
// one (counted on g), whose node is the join of the kept one's and node's, generalized
// further until it has few enough classes (layoutShare), which then replaces it. It
// returns nil when that node has too few classes to make two ranges. Only the search's
// goroutine calls it: it counts a node from the records one at a time (evaluateBatch).
func (s *searcher) layoutFor(node int, g *grouper) *recordLayout {
	if s.covers(s.layout, node) {
		return s.layout
	}
	if s.opt.radix.noLayout {
		return nil
	}
	levels := s.lat.Levels(node, nil)
	if s.layout != nil {
		for i, l := range s.lat.Levels(s.layout.node, nil) {
			levels[i] = max(levels[i], l)
		}
	}
	l := s.newLayout(levels, g)
	if l == nil {
		return nil // the kept layout still covers what it covered
	}
	s.layout = l
	s.layouts++
	return l
}

// newLayout lays out the records by the classes of the node of the given levels, each
// column's level raised, the column of most codes first, until the node has at most
// one class per layoutShare records; nil when it has fewer than two ranges then. It
// reorders the kept layout's records, when there is one, and drops each of its columns
// once reordered, writing the next into it: two layouts are never held whole at once.
// The records are the bottom's: the records themselves, or a packed class table's
// classes, with their counts.
func (s *searcher) newLayout(levels []int, g *grouper) *recordLayout {
	from := s.bottom
	if s.layout != nil {
		from = s.layout.src
	}
	cls, maps, sizes := s.layoutNode(from, levels, g)
	if cls == nil {
		return nil
	}
	records := 0
	for _, c := range cls.counts {
		records += int(c)
	}
	ranges, rangeOf := layoutRangesOf(cls.counts, records)
	if len(ranges) < 3 {
		return nil
	}
	dest := layoutDest(from, maps, sizes, newRangeIndex(cls, sizes, rangeOf), g.par)
	if from.counts != nil {
		// The ranges' bounds in classes of from, not in records.
		ranges = boundsOf(dest, len(ranges)-1)
	}
	out := reorder(from, dest, ranges, g.par, from != s.bottom)
	node := s.lat.index(levels)
	return &recordLayout{node: node, key: s.levelKey(node), src: out, ranges: ranges}
}

// layoutNode counts the classes of from at the given levels, raised (raiseWidest) until
// the node's codes have exact keys (mixed radix in 64 bits, so that a record's key
// finds its class's range: rangeIndex) and it has at most layoutClasses classes; nil
// when no node has. It returns them with the node's maps from the leaves and sizes.
func (s *searcher) layoutNode(from *classes, levels []int, g *grouper) (*classes, [][]int32, []int) {
	limit := s.opt.radix.layoutClasses(from.n)
	// Counted in one table, which stops at limit+1 classes, after the records that
	// show them: a radix-partitioned count would key and move every record first
	// (10M records: the first layout 340–450 → 260–290 ms).
	tune := g.tune
	g.tune.minSource = math.MaxInt
	defer func() { g.tune = tune }()
	for {
		maps, sizes := s.keyMaps(make([]int, s.q), levels, nil)
		if _, exact := keySpace(sizes); exact {
			if cls, _ := g.rollUp(from, s.lat.index(levels), maps, sizes, nil, limit); cls != nil {
				return cls, maps, sizes
			}
		}
		if !s.raiseWidest(levels) {
			return nil, nil, nil
		}
	}
}

// boundsOf returns the bounds of the given number of ranges that hold the classes
// whose ranges are dest, each range's classes together in order.
func boundsOf(dest []uint8, ranges int) []int {
	bounds := make([]int, ranges+1)
	for _, r := range dest {
		bounds[r+1]++
	}
	for r := 1; r <= ranges; r++ {
		bounds[r] += bounds[r-1]
	}
	return bounds
}

// layoutDest returns the range of each of from's classes, on par goroutines: its key
// (the mixed radix of its codes that maps take to the layout's node of sizes) found
// in index.
func layoutDest(from *classes, maps [][]int32, sizes []int, index *rangeIndex, par int) []uint8 {
	n := from.n
	dest := make([]uint8, n)
	parts := max(par, 1)
	fanOut(parts, func(p int) {
		end := n * (p + 1) / parts
		keys := make([]uint64, min(chunkRows, end-n*p/parts))
		for lo := n * p / parts; lo < end; lo += chunkRows {
			hi := min(lo+chunkRows, end)
			mixedKeys(keys[:hi-lo], from, lo, hi, maps, sizes)
			for j, key := range keys[:hi-lo] {
				dest[lo+j] = index.find(key)
			}
		}
	})
	return dest
}

// mixedKeys writes into keys the mixed-radix keys (of radix sizes) of the codes that
// maps take from's classes lo … hi−1 to: records, or a packed class table's.
func mixedKeys(keys []uint64, from *classes, lo, hi int, maps [][]int32, sizes []int) {
	if from.packed == nil {
		computeKeys(keys, from, lo, hi, maps, sizes, true)
		return
	}
	clear(keys)
	for i, m := range maps {
		sz, sh, mk := uint64(sizes[i]), from.pack.shift[i]&63, from.pack.mask[i]
		for j, w := range from.packed[lo:hi] {
			keys[j] = keys[j]*sz + uint64(m[w>>sh&mk])
		}
	}
}

// reorder returns from's classes, class j at the next place of range dest[j] (ranges
// bound them), on par goroutines; owned says the columns of from may be written over
// and dropped (a kept layout's: see newLayout).
func reorder(from *classes, dest []uint8, ranges []int, par int, owned bool) *classes {
	parts := max(par, 1)
	out := &classes{node: 0, n: from.n}
	if from.packed != nil {
		out.packed, out.pack = make([]uint64, from.n), from.pack
		if from.counts != nil {
			out.counts = make([]int32, from.n)
		}
		fanOut(min(parts, 2), func(p int) {
			next := slices.Clone(ranges[:len(ranges)-1])
			if p == 0 || parts == 1 {
				scatterOf(out.packed, from.packed, dest, next)
			}
			if (p == 1 || parts == 1) && from.counts != nil {
				copy(next, ranges)
				scatterOf(out.counts, from.counts, dest, next)
			}
		})
		if owned {
			from.packed, from.counts = nil, nil
		}
		return out
	}
	out.rows = make([]Codes, len(from.rows))
	var spare columnPool // the kept layout's columns once reordered, for the next
	fanOut(min(parts, len(from.rows)), func(p int) {
		next := make([]int, len(ranges)-1)
		for i := p; i < len(from.rows); i += parts {
			copy(next, ranges)
			out.rows[i] = spare.take(from.rows[i])
			from.rows[i].scatterTo(out.rows[i], dest, next)
			if owned {
				spare.give(from.rows[i])
				from.rows[i] = Codes{}
			}
		}
	})
	return out
}

// raiseWidest raises, among the columns below their top level, the level of the one
// with most codes at its level (the first of equals), and reports whether there was one.
func (s *searcher) raiseWidest(levels []int) bool {
	widest, most := -1, 0
	for i, c := range s.t.Columns {
		if levels[i] < c.Hierarchy.Height()-1 && c.Hierarchy.Size(levels[i]) > most {
			widest, most = i, c.Hierarchy.Size(levels[i])
		}
	}
	if widest < 0 {
		return false
	}
	levels[widest]++
	return true
}

// layoutRangesOf returns the ranges of a layout of the classes of the given counts (of
// n records in all): the classes in increasing order of their counts (of their indexes
// among equals), a range closed once it holds a layoutRanges-th of the records (rounded up); and
// the range of every class.
func layoutRangesOf(counts []int32, n int) (ranges []int, rangeOf []uint8) {
	order := make([]int32, len(counts))
	for c := range order {
		order[c] = int32(c)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(counts[a], counts[b]) })
	share := max((n+layoutRanges-1)/layoutRanges, 1)
	rangeOf = make([]uint8, len(counts)) // at most layoutRanges ranges
	ranges = []int{0}
	filled := 0
	for _, c := range order {
		rangeOf[c] = uint8(len(ranges) - 1)
		filled += int(counts[c])
		if filled-ranges[len(ranges)-1] >= share || filled == n {
			ranges = append(ranges, filled)
		}
	}
	return ranges, rangeOf
}

// rangeIndex finds the range of a class of a layout's node by the class's exact key
// (computeKeys), in open addressing.
type rangeIndex struct {
	slots []rangeSlot
	mask  uint64
}

type rangeSlot struct {
	key   uint64
	rng   uint8
	taken bool
}

// newRangeIndex returns the index of the classes of cls, whose node has sizes[i] codes
// in column i (in 64 bits in mixed radix), class j in range rangeOf[j].
func newRangeIndex(cls *classes, sizes []int, rangeOf []uint8) *rangeIndex {
	size := 1 << bits.Len(uint(2*cls.n))
	x := &rangeIndex{slots: make([]rangeSlot, size), mask: uint64(size - 1)}
	for j := range cls.n {
		var key uint64
		for i, sz := range sizes {
			key = key*uint64(sz) + uint64(cls.code(i, j))
		}
		p := mix(key, true) & x.mask
		for x.slots[p].taken {
			p = (p + 1) & x.mask
		}
		x.slots[p] = rangeSlot{key: key, rng: rangeOf[j], taken: true}
	}
	return x
}

// find returns the range of the class of the given key, which must be one of the
// index's: a record's class was counted from the same records.
func (x *rangeIndex) find(key uint64) uint8 {
	for p := mix(key, true) & x.mask; ; p = (p + 1) & x.mask {
		sl := &x.slots[p]
		if !sl.taken {
			panic("generalize: a record's class is missing from its layout's count")
		}
		if sl.key == key {
			return sl.rng
		}
	}
}

// scatterTo writes code j of c at place next[dest[j]] of out, a column as long and as
// wide, and advances it.
func (c Codes) scatterTo(out Codes, dest []uint8, next []int) {
	switch {
	case c.u8 != nil:
		scatterOf(out.u8, c.u8, dest, next)
	case c.u16 != nil:
		scatterOf(out.u16, c.u16, dest, next)
	default:
		scatterOf(out.i32, c.i32, dest, next)
	}
}

func scatterOf[T uint8 | uint16 | int32 | uint64](out, col []T, dest []uint8, next []int) {
	out = out[:len(col)]
	for j, v := range col {
		d := dest[j]
		out[next[d]] = v
		next[d]++
	}
}

// columnPool holds columns no longer needed, for goroutines to write others into.
type columnPool struct {
	mu   sync.Mutex
	cols []Codes
}

// take returns a column as long and as wide as like: one given back, or a new one.
func (cp *columnPool) take(like Codes) Codes {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	for k, c := range cp.cols {
		if c.Len() == like.Len() && (c.u8 != nil) == (like.u8 != nil) && (c.u16 != nil) == (like.u16 != nil) {
			cp.cols = slices.Delete(cp.cols, k, k+1)
			return c
		}
	}
	switch {
	case like.u8 != nil:
		return Codes{u8: make([]uint8, len(like.u8))}
	case like.u16 != nil:
		return Codes{u16: make([]uint16, len(like.u16))}
	}
	return Codes{i32: make([]int32, len(like.i32))}
}

// give gives c back.
func (cp *columnPool) give(c Codes) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.cols = append(cp.cols, c)
}
