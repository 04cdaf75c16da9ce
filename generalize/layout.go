package generalize

import (
	"cmp"
	"slices"
)

// recordLayout is a copy of the records of a large table (the search's bottom, when it
// is the records) reordered so that every class of one node, the layout's node, lies
// within one of about layoutRanges ranges of records, the smallest classes first.
//
// Every class of a specialization of the layout's node lies within one of its classes,
// so within one range: a roll-up of the records to such a node counts them range by
// range (radixCount), each range's classes whole, and stops at the first range after
// which those classes hold more records in classes below k than may be suppressed
// (suppressionStop). Most nodes a search counts from the records fail so, and the
// layout's first ranges, its smallest classes, split into the smallest classes of the
// node: they show it after a fraction of the records instead of a pass over all of them
// (the 10M-record benchmark: 268 M records keyed instead of 980 M).
type recordLayout struct {
	node int
	key  uint64   // the node's levelKey
	rows *classes // the records, range after range
	// ranges are the bounds of the ranges: range r is records ranges[r] … ranges[r+1]−1.
	ranges []int
}

const (
	// layoutRanges is about how many ranges a layout has: each holds at least a
	// layoutRanges-th of the records (a class larger than that, one range of its own).
	layoutRanges = 128
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
// once reordered, so that two layouts are never held whole at once.
func (s *searcher) newLayout(levels []int, g *grouper) *recordLayout {
	from := s.bottom
	if s.layout != nil {
		from = s.layout.rows
	}
	n := from.n
	limit := s.opt.radix.layoutClasses(n)
	assign := make([]int32, n)
	var cls *classes
	for {
		maps, sizes := s.keyMaps(make([]int, s.q), levels, nil)
		if cls, _ = g.rollUp(from, s.lat.index(levels), maps, sizes, assign, limit); cls != nil {
			break
		}
		if !s.raiseWidest(levels) {
			return nil
		}
	}
	ranges, rangeOf := layoutRangesOf(cls.counts, n)
	if len(ranges) < 3 {
		return nil
	}
	dest := make([]uint8, n)
	parts := max(g.par, 1)
	fanOut(parts, func(p int) {
		for j := n * p / parts; j < n*(p+1)/parts; j++ {
			dest[j] = rangeOf[assign[j]]
		}
	})
	assign = nil
	out := &classes{node: 0, rows: make([]Codes, len(from.rows)), n: n}
	fanOut(min(parts, len(from.rows)), func(p int) {
		next := make([]int, len(ranges)-1)
		for i := p; i < len(from.rows); i += parts {
			copy(next, ranges)
			out.rows[i] = from.rows[i].scatterBy(dest, next)
			if from != s.bottom {
				from.rows[i] = Codes{} // the kept layout's column, no longer needed
			}
		}
	})
	node := s.lat.index(levels)
	return &recordLayout{node: node, key: s.levelKey(node), rows: out, ranges: ranges}
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

// scatterBy returns a copy of c with code j at place next[dest[j]], which it advances.
func (c Codes) scatterBy(dest []uint8, next []int) Codes {
	switch {
	case c.u8 != nil:
		return Codes{u8: scatterOf(c.u8, dest, next)}
	case c.u16 != nil:
		return Codes{u16: scatterOf(c.u16, dest, next)}
	}
	return Codes{i32: scatterOf(c.i32, dest, next)}
}

func scatterOf[T uint8 | uint16 | int32](col []T, dest []uint8, next []int) []T {
	out := make([]T, len(col))
	for j, v := range col {
		d := dest[j]
		out[next[d]] = v
		next[d]++
	}
	return out
}
