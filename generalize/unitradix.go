package generalize

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
	entries = &classes{node: dst, pack: g.pack}
	cls = &classes{node: dst, pack: g.pack}
	for _, r := range results {
		entries.packed, entries.counts = append(entries.packed, r.keys...), append(entries.counts, r.counts...)
		cls.packed, cls.counts = append(cls.packed, r.classes...), append(cls.counts, r.rows...)
		cls.persons = append(cls.persons, r.persons...)
	}
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
// bucket meets one, a person of its class.
func unitGather(segs [][]radixSegment[uint64], from, to int, person uint64) unitPart {
	et, ct := &radixTable[uint64]{}, &unitClassTable{}
	var res unitPart
	for b := from; b < to; b++ {
		et.reset()
		ct.reset()
		for _, part := range segs {
			for _, sg := range part {
				lo, hi := sg.start[b], sg.start[b+1]
				for j, k := range sg.keys[lo:hi] {
					c := int32(1)
					if sg.counts != nil {
						c = sg.counts[int(lo)+j]
					}
					ct.add(k&^person, c, et.add(k, c))
				}
			}
		}
		res.keys, res.counts = et.appendTo(res.keys, res.counts)
		res.classes, res.rows, res.persons = ct.appendTo(res.classes, res.rows, res.persons)
	}
	return res
}

// add adds count records of the key k and reports whether k is new to the table.
func (t *radixTable[K]) add(k K, count int32) bool {
	mask := uint64(len(t.slots) - 1)
	for p := mix(uint64(k), true) & mask; ; p = (p + 1) & mask {
		sl := &t.slots[p]
		if sl.count == 0 {
			sl.key, sl.count = k, count
			t.used++
			if 2*t.used > len(t.slots) {
				t.grow()
			}
			return true
		}
		if sl.key == k {
			sl.count += count
			return false
		}
	}
}

// unitClassTable counts the classes of one bucket of rollUpUnit, in open addressing:
// a class's word, records and persons side by side in its slot (no records: empty).
type unitClassTable struct {
	slots []unitClassSlot
	used  int
}

type unitClassSlot struct {
	key           uint64
	rows, persons int32
}

// reset empties the table, at radixTableMin slots.
func (t *unitClassTable) reset() {
	if cap(t.slots) < radixTableMin {
		t.slots = make([]unitClassSlot, radixTableMin)
	}
	t.slots = t.slots[:radixTableMin]
	clear(t.slots)
	t.used = 0
}

// add adds count records to class k, and a person when newPerson.
func (t *unitClassTable) add(k uint64, count int32, newPerson bool) {
	p := int32(0)
	if newPerson {
		p = 1
	}
	mask := uint64(len(t.slots) - 1)
	for i := mix(k, true) & mask; ; i = (i + 1) & mask {
		sl := &t.slots[i]
		if sl.rows == 0 {
			sl.key, sl.rows, sl.persons = k, count, p
			t.used++
			if 2*t.used > len(t.slots) {
				t.grow()
			}
			return
		}
		if sl.key == k {
			sl.rows += count
			sl.persons += p
			return
		}
	}
}

// grow doubles the table.
func (t *unitClassTable) grow() {
	old := t.slots
	t.slots = make([]unitClassSlot, 2*len(old))
	mask := uint64(len(t.slots) - 1)
	for _, sl := range old {
		if sl.rows == 0 {
			continue
		}
		i := mix(sl.key, true) & mask
		for t.slots[i].rows != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = sl
	}
}

// appendTo appends the table's classes, in slot order.
func (t *unitClassTable) appendTo(keys []uint64, rows, persons []int32) ([]uint64, []int32, []int32) {
	for _, sl := range t.slots {
		if sl.rows != 0 {
			keys, rows, persons = append(keys, sl.key), append(rows, sl.rows), append(persons, sl.persons)
		}
	}
	return keys, rows, persons
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
