package generalize

import (
	"cmp"
	"slices"
)

// cachedTable is a cached class table and its node's levelKey.
type cachedTable struct {
	c   *classes
	key uint64
}

// levelKey returns node's levels in the fields of keyShift (0 when they do not fit).
func (s *searcher) levelKey(node int) uint64 {
	if s.keyShift == nil {
		return 0
	}
	var key uint64
	for i, st := range s.lat.strides {
		key |= uint64((node/st)%s.lat.Heights[i]) << s.keyShift[i]
	}
	return key
}

// leq reports whether node a (of levelKey ka) is a specialization of node b (of
// levelKey kb): in every field, b's level with the guard bit set, minus a's, keeps
// the guard bit when a's level is at most b's (and borrows nothing from the next
// field).
func (s *searcher) leq(a, b int, ka, kb uint64) bool {
	if s.keyShift == nil {
		return s.lat.Leq(a, b)
	}
	return ((kb|s.keyGuard)-ka)&s.keyGuard == s.keyGuard
}

// smallBottom is the most classes of a bottom node that no table is cached for: a
// roll-up from such a bottom reads as few classes as one from a cached table would
// save, and keeping the tables costs more than that (a list ordered by size, searched
// for every node: a local recoding's passes over a few hundred records count most of
// the lattice's nodes, and spent four fifths of their time there).
const smallBottom = 512

// source returns, among the cached class tables of specializations of node (the
// bottom node's is always cached) that have the classes' histograms when hist is set,
// the one with the fewest classes (the first cached among equals).
func (s *searcher) source(node int, hist bool) *classes {
	if i := s.sourceAt(node, hist); i >= 0 {
		return s.bySize[i].c
	}
	return s.bottom
}

// sourceAt is the place in bySize of source(node, hist), or −1 for the bottom.
func (s *searcher) sourceAt(node int, hist bool) int {
	key := s.levelKey(node)
	for i, e := range s.bySize {
		if e.c.n >= s.bottom.n {
			break
		}
		if (!hist || e.c.hist != nil) && s.leq(e.c.node, node, e.key, key) {
			return i
		}
	}
	return -1
}

func (s *searcher) remember(c *classes) {
	if c == nil || c.node == 0 || s.cache[c.node] != nil || (s.bottom != nil && s.bottom.n <= smallBottom) {
		return
	}
	s.cache[c.node] = c
	s.fifo = append(s.fifo, c.node)
	at, _ := slices.BinarySearchFunc(s.bySize, c.n+1, func(e cachedTable, n int) int { return cmp.Compare(e.c.n, n) })
	s.bySize = slices.Insert(s.bySize, at, cachedTable{c, s.levelKey(c.node)})
	s.entries += c.entries()
	// Past its bound, the cache is emptied to three quarters of it: ranking the tables
	// is then paid once per quarter of the cache, not at every table remembered (Adult
	// with t-closeness on a hierarchy: 520-631 ms of search, 166-168 ms so).
	if bound := s.opt.CacheEntries - s.reserve; s.entries > bound {
		s.evict(bound-bound/4, nil)
	}
}

// evict drops cached tables but keep until the cache holds at most limit entries: those
// needed last first (see uses; among tables of the same next use, the larger, which
// that use would not read), or, without uses, the oldest first. What it drops changes
// only which specialization a later count rolls up, never the classes it counts: the
// search's result does not depend on it.
func (s *searcher) evict(limit int, keep *classes) {
	if s.entries <= limit {
		return
	}
	victims := s.fifo
	if s.uses != nil {
		victims = s.byNextUse()
	}
	var dropped []*classes
	for _, m := range victims {
		if s.entries <= limit {
			break
		}
		c := s.cache[m]
		if c == keep {
			continue
		}
		s.entries -= c.entries()
		delete(s.cache, m)
		dropped = append(dropped, c)
	}
	s.fifo = slices.DeleteFunc(s.fifo, func(m int) bool { return s.cache[m] == nil })
	gone := func(c *classes) bool { return slices.Contains(dropped, c) }
	if len(dropped) > 8 {
		set := make(map[*classes]bool, len(dropped))
		for _, c := range dropped {
			set[c] = true
		}
		gone = func(c *classes) bool { return set[c] }
	}
	s.bySize = slices.DeleteFunc(s.bySize, func(e cachedTable) bool { return gone(e.c) })
}

// radix reports whether a roll-up of src may be radix-partitioned (radixCount): a
// source of the records whose node has few enough codes is counted in an array
// instead, without the scratch.
func (s *searcher) radix(src *classes) bool {
	return src.n >= s.opt.radix.min() && s.packed && !s.mod.any()
}

// scratchEntries is the scratch, in int32 entries, of a radix-partitioned roll-up of
// src to a node with sizes[i] codes in column i: a key of 32 or 64 bits per source
// class, and its count when src has counts.
func scratchEntries(src *classes, sizes []int) int {
	per := 2
	if mixed32(sizes) { // 32-bit keys (narrowRadix or rollUpMixed)
		per = 1
	}
	if src.counts != nil {
		per++
	}
	return per * src.n
}

// byNextUse returns the cached tables' nodes in the order evict drops them under
// uses: the tables needed last first, the larger first among tables of the same next
// use (which that use would not read), then the oldest first.
func (s *searcher) byNextUse() []int {
	uses := make([]rank, len(s.bySize))
	s.uses(uses)
	at := make(map[int]int, len(s.fifo)) // a node's place in remembering order
	for i, m := range s.fifo {
		at[m] = i
	}
	type victim struct {
		use     rank
		n, node int
		age     int // place in s.fifo: among equals, the oldest first
	}
	ranked := make([]victim, len(s.bySize))
	for i, e := range s.bySize {
		ranked[i] = victim{uses[i], e.c.n, e.c.node, at[e.c.node]}
	}
	slices.SortFunc(ranked, func(a, b victim) int {
		switch {
		case b.use.before(a.use):
			return -1
		case a.use.before(b.use):
			return 1
		case a.n != b.n:
			return cmp.Compare(b.n, a.n)
		}
		return cmp.Compare(a.age, b.age)
	})
	victims := make([]int, len(ranked))
	for i, v := range ranked {
		victims[i] = v.node
	}
	return victims
}
