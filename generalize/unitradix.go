package generalize

import "slices"

// rollUpUnit rolls a table's entries (classes keyed by the person too, the person's
// field person of the packed words) up to node dst and collapses them in the same
// pass, for a search that reads nothing but the classes' records and persons (k, no
// histograms, no entry's class): the source entries are radix-partitioned by the hash
// of their class (the word without the person's field), so that all the entries of a
// class meet in one bucket, where one table counts the node's entries and another its
// classes, their records and their persons (the entries new to the first). It returns
// the node's entries (packed, the source of later roll-ups) and its classes.
func (g *grouper) rollUpUnit(src *classes, dst int, maps [][]int32, person uint64) (entries, cls *classes) {
	keysOf := g.packedKeys(src, maps)
	n := src.n
	width := radixWidth(n, g.tune.bucketSize())
	buckets, shift := 1<<width, uint(64-width)
	parts := max(g.par, 1)
	segs := make([][]radixSegment[uint64], parts)
	fanOut(parts, func(p int) {
		segs[p] = radixScatter(src, keysOf, n*p/parts, n*(p+1)/parts, buckets, shift, ^person)
	})
	results := make([]unitPart, parts)
	fanOut(parts, func(p int) {
		results[p] = unitGather(segs, buckets*p/parts, buckets*(p+1)/parts, person)
	})
	join := func(w func(r unitPart) []uint64, c func(r unitPart) []int32) ([]uint64, []int32) {
		words, counts := make([][]uint64, len(results)), make([][]int32, len(results))
		for p, r := range results {
			words[p], counts[p] = w(r), c(r)
		}
		return slices.Concat(words...), slices.Concat(counts...)
	}
	entries = &classes{node: dst, pack: g.pack}
	entries.packed, entries.counts = join(func(r unitPart) []uint64 { return r.keys }, func(r unitPart) []int32 { return r.counts })
	cls = &classes{node: dst, pack: g.pack}
	cls.packed, cls.counts = join(func(r unitPart) []uint64 { return r.classes }, func(r unitPart) []int32 { return r.rows })
	_, cls.persons = join(func(unitPart) []uint64 { return nil }, func(r unitPart) []int32 { return r.persons })
	entries.n, cls.n = len(entries.packed), len(cls.packed)
	return entries, cls
}

// unitPart is what one goroutine of rollUpUnit counted, bucket after bucket: the
// node's entries (their words and records) and its classes (their words, records and
// persons).
type unitPart struct {
	keys, classes         []uint64
	counts, rows, persons []int32
}

// unitGather counts the entries of buckets from … to−1 of every goroutine's segments,
// a bucket at a time: each distinct word is an entry of the node, and the first time a
// bucket meets one, a person of its class. The tables are sized for the bucket's
// entries up front and list what they hold in the order they met it, so that they
// never grow and are read back without a scan of their slots.
func unitGather(segs [][]radixSegment[uint64], from, to int, person uint64) unitPart {
	et, ct := &unitTable{}, &unitTable{}
	bucketIn := func(b int) (in int) {
		for _, part := range segs {
			for _, sg := range part {
				in += int(sg.start[b+1] - sg.start[b])
			}
		}
		return in
	}
	total := 0
	for b := from; b < to; b++ {
		total += bucketIn(b)
	}
	// Room for every source entry: pages never written are never touched.
	res := unitPart{keys: make([]uint64, 0, total), counts: make([]int32, 0, total),
		classes: make([]uint64, 0, total), rows: make([]int32, 0, total), persons: make([]int32, 0, total)}
	for b := from; b < to; b++ {
		in := bucketIn(b)
		et.reset(in)
		ct.reset(in)
		for _, part := range segs {
			for _, sg := range part {
				lo, hi := sg.start[b], sg.start[b+1]
				for j, k := range sg.keys[lo:hi] {
					c := int32(1)
					if sg.counts != nil {
						c = sg.counts[int(lo)+j]
					}
					p := int32(0)
					if et.add(k, c, 0) {
						p = 1
					}
					ct.add(k&^person, c, p)
				}
			}
		}
		for _, i := range et.order {
			res.keys, res.counts = append(res.keys, et.slots[i].key), append(res.counts, et.slots[i].count)
		}
		for _, i := range ct.order {
			sl := &ct.slots[i]
			res.classes, res.rows, res.persons = append(res.classes, sl.key), append(res.rows, sl.count), append(res.persons, sl.persons)
		}
	}
	return res
}

// unitTable counts the entries or the classes of one bucket of rollUpUnit in open
// addressing, sized for the bucket (at most half full: it never grows): a word, its
// records and (classes) its persons side by side in its slot (no records: empty),
// and the slots used in the order they were.
type unitTable struct {
	slots []unitSlot
	order []int32
}

type unitSlot struct {
	key            uint64
	count, persons int32
}

// reset empties the table, with room for n words.
func (t *unitTable) reset(n int) {
	size := radixTableMin
	for size < 2*n {
		size *= 2
	}
	if cap(t.slots) < size {
		t.slots = make([]unitSlot, size)
	}
	t.slots = t.slots[:size]
	clear(t.slots)
	t.order = t.order[:0]
}

// add adds count records and persons persons to word k and reports whether k is new.
func (t *unitTable) add(k uint64, count, persons int32) bool {
	mask := uint64(len(t.slots) - 1)
	for i := mix(k, true) & mask; ; i = (i + 1) & mask {
		sl := &t.slots[i]
		if sl.count == 0 {
			sl.key, sl.count, sl.persons = k, count, persons
			t.order = append(t.order, int32(i))
			return true
		}
		if sl.key == k {
			sl.count += count
			sl.persons += persons
			return false
		}
	}
}

// fusedUnit reports whether a roll-up of src for the search of s counts the node's
// classes with its entries in one pass (rollUpUnit): with a unit, packed tables, a
// source of at least unitRadixMin entries, and models that read nothing but the
// classes' records and persons.
func (s *searcher) fusedUnit(src *classes) bool {
	return s.unit != nil && s.packed && !s.mod.any() && !s.opt.Linkable && src.n >= s.opt.radix.unitMin()
}

// personField is the person's field of the packed words of a search with a unit.
func (s *searcher) personField() uint64 {
	return s.pack.mask[s.q] << s.pack.shift[s.q]
}

// unitMin is the smallest source a search with a unit counts with rollUpUnit:
// unitRadixMin, or the tests' smallest radix-partitioned source when lower.
func (r radixTuning) unitMin() int {
	if r.minSource > 0 {
		return min(r.minSource, unitRadixMin)
	}
	return unitRadixMin
}

// unitRadixMin is the fewest source entries rollUpUnit partitions: below, the
// separate roll-up and collapse cost less than the partitioning.
const unitRadixMin = 1 << 16
