package generalize

import (
	"math/bits"
	"runtime"
	"sync/atomic"
)

// A search with a privacy unit whose models read nothing but the classes' records and
// persons (k-anonymity alone: groupedPacking) keeps its entries grouped by person: a
// table's packed words, quasi-identifiers only, each person's entries one run, the
// first marked by personMark. A roll-up maps a run's words to the node and counts them
// by class, each class counting a person once: the count meets a person's entries one
// after another (they stay together through the radix buckets), so a class's last
// person counted tells whether an entry's person is new to it (see rollUpGrouped). The
// person's code is never part of a key, so the words need no more bits than without a
// unit (10M admissions of 2.9M patients: 43, where a word with the person took 65 and
// the search fell back to unpacked keys), and no table of entries is probed.

// personMark marks, in a grouped table's words, a person's first entry. No field of a
// grouped packing reaches it (groupedPacking).
const personMark = uint64(1) << 63

// groupedPacking returns the packing of a search of t for opt that keeps its entries
// grouped by person: with a unit, when the models read nothing but the classes'
// records and persons (no l-diversity, t-closeness, β-likeness, nor multirelational k,
// which read the entries' persons), and the quasi-identifiers' packed codes leave the
// top bit free for personMark. Nil: the search keys its entries by person.
func groupedPacking(t *Table, opt Options) *packing {
	if t.Unit == nil || opt.Linkable || len(opt.Diversity)+len(opt.Closeness)+len(opt.Likeness) > 0 || len(t.Columns) == 0 {
		return nil
	}
	p := newPacking(t.keyLeaves()[:len(t.Columns)])
	if p == nil || p.shift[0]+uint(bits.Len64(p.mask[0])) > 63 {
		return nil
	}
	return p
}

// groupRecords returns t's records as the grouped entries of the bottom node: each
// record's packed word, in order of person (a counting sort: a person's records keep
// their order), the records of a person one run.
func groupRecords(t *Table, pack *packing, identity [][]int32) *classes {
	src := &classes{rows: t.keyCodes()[:len(t.Columns)], n: t.Rows}
	unit := t.Unit.Codes
	words := groupByPerson(t.Rows, t.Unit.Persons, unit.At, func(keys []uint64, lo, hi int) {
		computeKeys(keys, src, lo, hi, identity, pack.radix, true)
	}, nil)
	return &classes{node: 0, packed: words.packed, pack: pack, n: t.Rows}
}

// groupedBottom returns the class table's entries (a class and a person each, the
// person last of its codes) as the grouped entries of the bottom node, with their
// records.
func (ct *ClassTable) groupedBottom(pack *packing) *classes {
	q := len(ct.cols) - 1
	person := func(j int) int32 { return ct.cols[q][j] }
	out := groupByPerson(ct.Len(), ct.meta.Unit.Persons, person, func(keys []uint64, lo, hi int) {
		clear(keys)
		for i, col := range ct.cols[:q] {
			sh := pack.shift[i]
			for j, code := range col[lo:hi] {
				keys[j] |= uint64(code) << sh
			}
		}
	}, ct.counts)
	out.node, out.pack = 0, pack
	return out
}

// groupByPerson returns the words (wordsOf writes those of sources lo … hi−1) and
// counts (nil: one each) of n sources, person(j) the person of source j among persons,
// reordered by person (each person's in their order) and the first of each person
// marked: a grouped table.
func groupByPerson(n, persons int, person func(j int) int32, wordsOf func(keys []uint64, lo, hi int), counts []int32) *classes {
	next := personStarts(n, persons, person) // where the next source of every person goes
	out := &classes{packed: make([]uint64, n), n: n}
	if counts != nil {
		out.counts = make([]int32, n)
	}
	keys := make([]uint64, min(chunkRows, n))
	for lo := 0; lo < n; lo += chunkRows {
		hi := min(lo+chunkRows, n)
		wordsOf(keys[:hi-lo], lo, hi)
		for j, w := range keys[:hi-lo] {
			p := person(lo + j)
			at := next[p]
			out.packed[at] = w
			if counts != nil {
				out.counts[at] = counts[lo+j]
			}
			next[p]++
		}
	}
	// next[p] is now where person p's sources end, and p+1's start.
	start := int32(0)
	for _, end := range next[:persons] {
		if end > start {
			out.packed[start] |= personMark
		}
		start = end
	}
	return out
}

// personStarts returns where each person's sources start in an order of n sources by
// person (person(j) the person of source j among persons), and, last, n: a counting
// sort's prefix sums, which its placing then moves on to each person's end.
func personStarts(n, persons int, person func(j int) int32) []int32 {
	start := make([]int32, persons+1)
	for j := range n {
		start[person(j)+1]++
	}
	for p := 1; p <= persons; p++ {
		start[p] += start[p-1]
	}
	return start
}

// rollUpGrouped rolls the grouped entries src up to node dst, maps[i] the codes of
// quasi-identifier i at dst's level of those at src's: it returns the node's classes,
// their records and persons (nil when there are more than limit, when limit > 0), and,
// when there are at most keep of them, its grouped entries (nil otherwise). With npack
// (the node's codes fit 32 bits: narrowRadix) the entries are counted as 32-bit words
// in its fields and the classes are a narrow table; otherwise as words of src's
// packing.
//
// The source is cut into parts at persons' first entries, one per goroutine. A part
// maps a chunk of its words at a time and scatters them, each with its person, into
// radix buckets by the hash of their word; the buckets are then counted, each in a
// table sized for it, by the goroutines in turn (gatherGrouped), a class's persons
// the distinct persons of its entries. Where the node's entries are kept for later
// roll-ups (or the source's entries have counts), a chunk's entries are merged by
// person first (merger): each is then one person of its class.
func (g *grouper) rollUpGrouped(src *classes, dst int, maps [][]int32, npack *packing, limit, keep int) (cls, entries *classes) {
	if npack != nil {
		return rollUpGroupedAs[uint32](g, src, dst, maps, npack, limit, keep)
	}
	return rollUpGroupedAs[uint64](g, src, dst, maps, nil, limit, keep)
}

// groupedPass is what the goroutines of one grouped roll-up share.
type groupedPass struct {
	src     *classes
	maps    [][]int32
	changed []int    // the columns whose map is not the identity
	pack    *packing // the grouped words' (src's and the kept entries')
	npack   *packing // the node's 32-bit words' (nil: the keys are words of pack)
	buckets int
	shift   uint // a key's bucket: the top bits of its hash, from bit shift
	chunk   int
	keep    int          // the most entries kept (0: none)
	kept    atomic.Int64 // the entries kept by all goroutines
}

// rollUpGroupedAs is rollUpGrouped with keys of type K: uint32 with npack, uint64
// without.
func rollUpGroupedAs[K radixKey](g *grouper, src *classes, dst int, maps [][]int32, npack *packing, limit, keep int) (cls, entries *classes) {
	n := src.n
	parts := max(g.par, 1)
	if n < min(parallelKeys, g.tune.min()) {
		parts = 1
	}
	bounds := make([]int, parts+1)
	for p := range bounds {
		bounds[p] = nextPerson(src.packed, n*p/parts)
	}
	width := radixWidth(n, g.tune.bucketSize())
	pass := &groupedPass{src: src, maps: maps, changed: changedFields(maps), pack: g.pack, npack: npack,
		buckets: 1 << width, shift: uint(64 - width), chunk: g.tune.groupChunk(), keep: keep}
	for len(g.grouped) < parts {
		g.grouped = append(g.grouped, &groupScratch{})
	}
	segs := make([][]groupedSegment[K], parts)
	kept := make([]groupedPart, parts)
	fanOut(parts, func(p int) {
		segs[p], kept[p] = scatterGrouped(workOf[K](g.grouped[p]), pass, bounds[p], bounds[p+1])
	})
	entries = joinKept(kept, dst, g.pack, keep > 0 && pass.kept.Load() <= int64(keep))
	results := make([]unitPart[K], parts)
	var counted atomic.Int64
	fanOut(parts, func(p int) {
		results[p] = gatherGrouped(segs, pass.buckets*p/parts, pass.buckets*(p+1)/parts, &counted, limit)
	})
	for _, r := range results {
		if r.over {
			return nil, entries
		}
	}
	return joinClasses(results, dst, g.pack, npack), entries
}

// joinClasses returns the classes of node dst the goroutines of a grouped roll-up
// counted: words of pack, or of npack when it is not nil.
func joinClasses[K radixKey](results []unitPart[K], dst int, pack, npack *packing) *classes {
	cls := &classes{node: dst}
	for _, r := range results {
		cls.n += len(r.classes)
	}
	words := make([]K, 0, cls.n)
	cls.counts, cls.persons = make([]int32, 0, cls.n), make([]int32, 0, cls.n)
	for _, r := range results {
		words = append(words, r.classes...)
		cls.counts = append(cls.counts, r.rows...)
		cls.persons = append(cls.persons, r.persons...)
	}
	switch w := any(words).(type) {
	case []uint32:
		cls.narrow, cls.npack = w, npack
	case []uint64:
		cls.packed, cls.pack = w, pack
	}
	return cls
}

// nextPerson returns the first entry at or after j that starts a person's run (n: none).
func nextPerson(words []uint64, j int) int {
	for j < len(words) && words[j]&personMark == 0 {
		j++
	}
	return j
}

// changedFields returns the columns whose map is not the identity, in order.
func changedFields(maps [][]int32) []int {
	var changed []int
	for i, m := range maps {
		if !isIdentity(m) {
			changed = append(changed, i)
		}
	}
	return changed
}

// groupedPart is the grouped entries one goroutine of rollUpGrouped found and kept:
// words (marked) and counts.
type groupedPart struct {
	words  []uint64
	counts []int32
}

// groupedSegment is a chunk of entries scattered into buckets (radixSegment), and
// what its counts hold: the entries' records, each entry one person of its class
// (merged), or each entry's person (the place of the person's first entry in the
// source), its records one (not merged).
type groupedSegment[K radixKey] struct {
	radixSegment[K]
	byPerson bool
}

// scatterGrouped maps, on scratch gw, the entries lo … hi−1 of the pass's source (lo
// and hi at persons' first entries), a chunk of persons at a time, and scatters them
// into buckets. While it keeps the node's entries (the entries kept by all goroutines
// at most the pass's keep, and at most keepShare quarters of those read), or when the
// source's entries have counts, it merges each person's equal keys first (merger);
// otherwise it scatters the keys as they are with each one's person, and the count
// takes each class's persons once (gatherGrouped): a person's entries lie together in
// every bucket, in the source's order.
func scatterGrouped[K radixKey](gw *groupWork[K], pass *groupedPass, lo, hi int) ([]groupedSegment[K], groupedPart) {
	var segs []groupedSegment[K]
	var part groupedPart
	src, sc, m, keys := pass.src, &gw.scatter, &gw.merger, gw.keys
	defer func() { gw.keys = keys }()
	sc.reserve(hi-lo, pass.buckets)
	consumed, keep := 0, pass.keep
	for at := lo; at < hi; {
		end := nextPerson(src.packed[:hi], min(at+pass.chunk, hi))
		if cap(keys) < end-at {
			keys = make([]K, end-at)
		}
		keys = keys[:end-at]
		groupedKeys(keys, src.packed[at:end], pass)
		if cap(sc.bucket) < len(keys) {
			sc.bucket = make([]uint16, len(keys))
		}
		consumed += end - at
		if keep == 0 && src.counts == nil {
			persons := gw.personsOf(src.packed[at:end], keys, at)
			segs = append(segs, groupedSegment[K]{sc.scatter(keys, persons, pass.shift, ^uint64(0)), true})
			at = end
			continue
		}
		var counts []int32
		if src.counts != nil {
			counts = src.counts[at:end]
		}
		m.merge(keys, src.packed[at:end], counts)
		dc := m.counts
		if m.ones {
			dc = nil // one record each: the buckets need no counts
		}
		segs = append(segs, groupedSegment[K]{sc.scatter(m.words, dc, pass.shift, ^uint64(0)), false})
		// Kept while they are at most keep, and at most keepShare of the source's so
		// far: a table of nearly as many entries as its source saves later roll-ups
		// little and takes the cache's room (10M admissions: most nodes have 60–100%).
		if keep > 0 && len(part.words)+len(m.words) <= consumed*keepShare/4 && pass.kept.Add(int64(len(m.words))) <= int64(keep) {
			part = keepEntries(part, m, pass)
		} else if keep > 0 {
			part = groupedPart{} // too many: dropped, by every goroutine
			pass.kept.Add(int64(keep) + 1)
			keep = 0
		}
		at = end
	}
	return segs, part
}

// personsOf returns the person of each of a chunk of grouped words, the chunk from
// place at of the source: the place of the person's first entry; and drops from their
// keys the mark a person's first keeps (groupedKeys).
func (gw *groupWork[K]) personsOf(words []uint64, keys []K, at int) []int32 {
	if cap(gw.persons) < len(words) {
		gw.persons = make([]int32, len(words))
	}
	persons := gw.persons[:len(words)]
	p := int32(at)
	for j, w := range words {
		if w&personMark != 0 { // a conditional move: which entries start a person is unpredictable
			p = int32(at + j)
		}
		persons[j] = p
	}
	if _, wide := any(keys).([]uint64); wide {
		for j, k := range keys {
			keys[j] = K(uint64(k) &^ personMark)
		}
	}
	return persons
}

// groupedKeys writes into keys the node's keys of grouped words (marked words of the
// pass's packing): the words with the changed fields mapped (marks kept), or, with
// the pass's npack, 32-bit words of the node's codes in its fields.
func groupedKeys[K radixKey](keys []K, words []uint64, pass *groupedPass) {
	// Mapped a field at a time, over the chunk: the entries do not wait on each
	// other's lookups (one entry's fields in turn took twice as long).
	switch ks := any(keys).(type) {
	case []uint64:
		repack(ks, words, pass.maps, pass.pack, pass.changed)
	case []uint32:
		narrowGrouped(ks, words, pass.maps, pass.pack, pass.npack, pass.changed)
	}
}

// narrowGrouped writes into keys the codes of grouped words (in the fields of pack),
// mapped by maps where the column is among changed (in order), in the 32-bit fields
// of npack.
func narrowGrouped(keys []uint32, words []uint64, maps [][]int32, pack, npack *packing, changed []int) {
	keys = keys[:len(words)]
	clear(keys)
	for i, m := range maps {
		mapped := len(changed) > 0 && changed[0] == i
		if mapped {
			changed = changed[1:]
		}
		if npack.mask[i] == 0 {
			continue // one code at the node: 0
		}
		sh, mk, nsh := pack.shift[i]&63, pack.mask[i], npack.shift[i]&31
		if !mapped {
			for j, w := range words {
				keys[j] |= uint32(w>>sh&mk) << nsh
			}
			continue
		}
		for j, w := range words {
			keys[j] |= uint32(m[w>>sh&mk]) << nsh
		}
	}
}

// keepEntries returns part with the merged entries of m appended as grouped words of
// the pass's packing, each person's first marked.
func keepEntries[K radixKey](part groupedPart, m *merger[K], pass *groupedPass) groupedPart {
	first := len(part.words)
	switch ws := any(m.words).(type) {
	case []uint64:
		part.words = append(part.words, ws...)
	case []uint32:
		np, pk := pass.npack, pass.pack
		for _, k := range ws {
			var w uint64
			for i := range pk.shift {
				w |= (uint64(k) >> (np.shift[i] & 31) & np.mask[i]) << pk.shift[i]
			}
			part.words = append(part.words, w)
		}
	}
	part.counts = append(part.counts, m.counts...)
	for _, f := range m.firsts {
		part.words[first+int(f)] |= personMark
	}
	return part
}

// keepShare is the most entries, in quarters of its source's, that a grouped roll-up
// keeps for later ones.
const keepShare = 2

// groupScratch is what one goroutine of grouped roll-ups reuses from one roll-up to
// the next: its work with 64-bit keys or with 32-bit ones, whichever the last roll-up
// used (the other's room is let go).
type groupScratch struct {
	wide   groupWork[uint64]
	narrow groupWork[uint32]
}

// groupWork is a grouped roll-up's room for one goroutine: its scatter's, its
// merger's, and its chunk's keys and persons.
type groupWork[K radixKey] struct {
	scatter scatterScratch[K]
	merger  merger[K]
	keys    []K
	persons []int32
}

// workOf returns gs's work with keys of type K, letting the other's room go.
func workOf[K radixKey](gs *groupScratch) *groupWork[K] {
	if w, ok := any(&gs.wide).(*groupWork[K]); ok {
		gs.narrow = groupWork[uint32]{}
		return w
	}
	gs.wide = groupWork[uint64]{}
	return any(&gs.narrow).(*groupWork[K])
}

// joinKept returns the grouped entries of node dst the goroutines of rollUpGrouped
// kept, in order (nil when they did not keep all of them).
func joinKept(parts []groupedPart, dst int, pack *packing, all bool) *classes {
	if !all {
		return nil
	}
	out := &classes{node: dst, pack: pack}
	for _, p := range parts {
		out.packed = append(out.packed, p.words...)
		out.counts = append(out.counts, p.counts...)
	}
	out.n = len(out.packed)
	return out
}

// merger merges each person's equal keys of grouped entries mapped to a node: the
// node's entries.
type merger[K radixKey] struct {
	// words and counts are the merged entries of the last chunk, unmarked; firsts,
	// the place of each person's first; ones, whether every count is 1.
	words  []K
	counts []int32
	firsts []int32
	ones   bool
	// A person's entries past shortRun are found in an open-addressing table of their
	// places (+1, 0: empty) in words: that of the entries from run on (−1: none).
	slots []int32
	run   int
}

// shortRun is the most entries of a person merged by comparing each word with all of
// them; a person with more gets a table of its entries (merger.index).
const shortRun = 24

// merge sets m's entries to those of a chunk of grouped entries, keys their keys at
// the node (a person's first may carry personMark, which is dropped), marked the
// source words (each person whole, the first marked), counts their counts (nil: one
// each), merged.
func (m *merger[K]) merge(keys []K, marked []uint64, counts []int32) {
	if cap(m.words) < len(keys) {
		m.words, m.counts = make([]K, len(keys)), make([]int32, len(keys))
	}
	dw, dc := m.words[:len(keys)], m.counts[:len(keys)]
	m.firsts, m.run = m.firsts[:0], -1
	n, start, ones := 0, 0, true
	for j, w := range keys {
		c := int32(1)
		if counts != nil {
			c = counts[j]
		}
		if marked[j]&personMark != 0 { // a person's first entry: nothing to merge it with
			start = n
			m.firsts = append(m.firsts, int32(n))
			dw[n], dc[n] = K(uint64(w)&^personMark), c
			n++
			ones = ones && c == 1
			continue
		}
		if i := m.find(dw, start, n, w); i >= 0 {
			dc[i] += c
			ones = false
			continue
		}
		dw[n], dc[n] = w, c
		n++
		ones = ones && c == 1
	}
	m.words, m.counts, m.ones = dw[:n], dc[:n], ones
}

// find returns the place of word w among the entries dw[start:n] (the current
// person's), or −1 when it is not there, which it records as the place of the next
// entry, n (the caller puts w there).
func (m *merger[K]) find(dw []K, start, n int, w K) int {
	if n-start <= shortRun {
		for i := start; i < n; i++ {
			if dw[i] == w {
				return i
			}
		}
		return -1
	}
	if m.run != start || 2*(n-start+1) > len(m.slots) {
		m.index(dw[:n], start)
	}
	mask := uint64(len(m.slots) - 1)
	for p := mix(uint64(w), true) & mask; ; p = (p + 1) & mask {
		at := m.slots[p]
		if at == 0 {
			m.slots[p] = int32(n + 1)
			return -1
		}
		if dw[at-1] == w {
			return int(at - 1)
		}
	}
}

// index builds the table of the entries dw[start:], with room for twice as many.
func (m *merger[K]) index(dw []K, start int) {
	size := 64
	for size < 4*(len(dw)-start+1) {
		size *= 2
	}
	if cap(m.slots) < size {
		m.slots = make([]int32, size)
	}
	m.slots = m.slots[:size]
	clear(m.slots)
	mask := uint64(size - 1)
	for i := start; i < len(dw); i++ {
		p := mix(uint64(dw[i]), true) & mask
		for m.slots[p] != 0 {
			p = (p + 1) & mask
		}
		m.slots[p] = int32(i + 1)
	}
	m.run = start
}

// unitPart is what one goroutine of gatherGrouped counted, bucket after bucket: the
// node's classes, their words, records and persons; over: the count stopped past its
// limit.
type unitPart[K radixKey] struct {
	classes       []K
	rows, persons []int32
	over          bool
}

// gatherGrouped counts the entries of buckets from … to−1 of every goroutine's
// segments, a bucket at a time, adding the classes it finds to counted; it stops once
// counted exceeds limit (when limit > 0). An entry of a merged segment is one person
// of its class; one of a segment by person counts its person once, the first time it
// meets it in the class (the slot keeps the last person it counted: a person's
// entries come together). A bucket's table is sized for the bucket's entries up front
// and lists what it holds in the order it met it, so that it never grows and is read
// back without a scan of its slots.
func gatherGrouped[K radixKey](segs [][]groupedSegment[K], from, to int, counted *atomic.Int64, limit int) unitPart[K] {
	ct := &unitTable[K]{}
	bucketIn := func(b int) (in int) {
		for _, part := range segs {
			for _, sg := range part {
				in += int(sg.start[b+1] - sg.start[b])
			}
		}
		return in
	}
	var res unitPart[K]
	for b := from; b < to; b++ {
		ct.reset(bucketIn(b))
		for _, part := range segs {
			for _, sg := range part {
				ct.addSegment(sg, b)
			}
		}
		for _, i := range ct.order {
			sl := &ct.slots[i]
			res.classes, res.rows, res.persons = append(res.classes, sl.key), append(res.rows, sl.count), append(res.persons, sl.persons)
		}
		if counted.Add(int64(len(ct.order))) > int64(limit) && limit > 0 {
			res.over = true
			return res
		}
	}
	return res
}

// unitTable counts the classes of one bucket of rollUpGrouped in open addressing,
// sized for the bucket (at most half full: it never grows): a word, its records, its
// persons and the last person counted (−1: none) side by side in its slot (no
// records: empty), and the slots used in the order they were.
type unitTable[K radixKey] struct {
	slots []unitSlot[K]
	order []int32
}

type unitSlot[K radixKey] struct {
	key                  K
	count, persons, last int32
}

// reset empties the table, with room for n words.
func (t *unitTable[K]) reset(n int) {
	size := radixTableMin
	for size < 2*n {
		size *= 2
	}
	if cap(t.slots) < size {
		t.slots = make([]unitSlot[K], size)
	}
	t.slots = t.slots[:size]
	clear(t.slots)
	t.order = t.order[:0]
}

// addSegment counts bucket b of segment sg.
func (t *unitTable[K]) addSegment(sg groupedSegment[K], b int) {
	lo, hi := sg.start[b], sg.start[b+1]
	switch {
	case sg.byPerson:
		for j, k := range sg.keys[lo:hi] {
			t.addPerson(k, sg.counts[int(lo)+j])
		}
	case sg.counts == nil:
		for _, k := range sg.keys[lo:hi] {
			t.add(k, 1)
		}
	default:
		for j, k := range sg.keys[lo:hi] {
			t.add(k, sg.counts[int(lo)+j])
		}
	}
}

// slot returns the slot of word k (a new one, counting nothing yet, when k has none).
func (t *unitTable[K]) slot(k K) *unitSlot[K] {
	mask := uint64(len(t.slots) - 1)
	for i := mix(uint64(k), true) & mask; ; i = (i + 1) & mask {
		sl := &t.slots[i]
		if sl.count == 0 {
			sl.key, sl.last = k, -1
			t.order = append(t.order, int32(i))
			return sl
		}
		if sl.key == k {
			return sl
		}
	}
}

// add adds count records of a person not counted in word k yet.
func (t *unitTable[K]) add(k K, count int32) {
	sl := t.slot(k)
	sl.count += count
	sl.persons++
}

// addPerson adds a record of person p to word k, and p to its persons unless it was
// the last counted.
func (t *unitTable[K]) addPerson(k K, p int32) {
	sl := t.slot(k)
	sl.count++
	if sl.last != p {
		sl.persons++
		sl.last = p
	}
}

// groupChunk is how many source entries a goroutine of rollUpGrouped maps and
// merges at once (more when a person's run crosses the chunk's end).
func (r radixTuning) groupChunk() int {
	if r.chunk > 0 {
		return r.chunk
	}
	return chunkRows
}

// countGrouped is countNode for a search on grouped entries: the node's classes rolled
// up from its cached entries or, when they are not cached, from its source's, with the
// node's entries when the cache has room for them beside the tables it holds.
func (s *searcher) countGrouped(c nodeCount, g *grouper) (nodeCount, int) {
	keep := (s.opt.CacheEntries - s.reserve - s.entries) / 3
	c.src = s.cache[c.node] // counted again: its classes are not kept
	if c.src != nil {
		keep = 0
	} else {
		c.src = s.source(c.node, false)
	}
	srcLevels := s.lat.Levels(c.src.node, make([]int, 0, s.q))
	maps, sizes := s.keyMaps(srcLevels, c.levels, nil)
	var npack *packing // 32-bit keys, when the node's codes fit them (halves the buckets' room)
	if radix := narrowRadix(sizes); radix != nil {
		npack = narrowPacking(radix)
	}
	limit := 0 // see countNode
	if c.src.n >= abortMinSource {
		limit = s.t.Rows/s.opt.K + s.opt.MaxSuppressed
	}
	if s.radix(c.src) {
		// Room for the buckets' words and counts (see countNode).
		s.evict(s.opt.CacheEntries-3*c.src.n, c.src)
	}
	if s.radix(c.src) {
		// The searcher's scatter scratch, which only one roll-up of a source this
		// large uses at a time (see countNode): one set of buckets' room, not one
		// per grouper.
		g.grouped = s.scatter
		defer func() { s.scatter, g.grouped = g.grouped, nil }()
	}
	c.cls, c.entries = g.rollUpGrouped(c.src, c.node, maps, npack, limit, max(keep, 0))
	return c, c.src.n
}

// recordPersons returns the classes of t's records at the node maps and sizes give
// (maps[i] from the leaves of quasi-identifier i), packed by pack, with their persons,
// for a table whose search keeps its entries grouped (groupedPacking): the records'
// classes counted as without a unit (assign receives each record's), then each
// person's records visited together (a counting sort), each class counting a person
// once.
func recordPersons(t *Table, pack *packing, maps [][]int32, sizes []int, assign []int32) *unitClasses {
	rows := &classes{rows: t.keyCodes()[:len(t.Columns)], n: t.Rows}
	g := &grouper{par: runtime.GOMAXPROCS(0), pack: pack}
	cls, _ := g.rollUp(rows, 0, maps, sizes, assign, 0)
	unit := t.Unit.Codes
	end := personStarts(t.Rows, t.Unit.Persons, unit.At) // where each person's records start, then end
	order := make([]int32, t.Rows)
	for r := range t.Rows {
		p := unit.At(r)
		order[end[p]] = int32(r)
		end[p]++
	}
	cls.persons = make([]int32, cls.n)
	last := make([]int32, cls.n) // the last person (+1) counted in each class
	p := int32(0)
	for i, r := range order {
		for int32(i) >= end[p] {
			p++
		}
		if a := assign[r]; last[a] != p+1 {
			last[a] = p + 1
			cls.persons[a]++
		}
	}
	return &unitClasses{cls: cls}
}
