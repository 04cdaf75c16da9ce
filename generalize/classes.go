package generalize

import (
	"math"
	"math/bits"
	"slices"
	"sync/atomic"

	"sanitizer/internal/safe"
)

// classes holds the equivalence classes of one node and the number of records in each:
// a class table's codes at the node's levels, packed into one word per class (packed)
// or column-major (cols); or, for the records themselves, the table's leaf codes
// (rows), every record a class of one.
type classes struct {
	node   int
	cols   [][]int32
	packed []uint64 // the codes of class j in the bit fields of pack
	pack   *packing
	// narrow, instead of packed, holds the codes of class j in 32 bits: the fields of
	// npack, as wide as the node's own codes need (narrowRadix), which holds a class
	// in 8 bytes with its count instead of 12.
	narrow []uint32
	npack  *packing
	rows   []Codes // the records: leaf codes (cols and packed are nil)
	counts []int32 // nil: every class has one record (the rows themselves)
	// persons, of the classes of a table with a privacy unit (collapse), is the
	// number of distinct persons among each class's records (nil: one per record).
	persons []int32
	n       int
	hist    []*hist // per sensitive column a model reads: the classes' histograms
	// sets, per sensitive column with value sets (models.words), the values class j
	// holds: words w·j … w·j+w−1 (nil: not counted, nor for the records themselves).
	sets [][]uint64
}

// packing lays the codes of a class out in one 64-bit word: column i's code in the
// bits from shift[i] up, mask[i] wide enough for any code of the column at any level
// (a level has at most as many values as the column has leaves).
type packing struct {
	shift []uint
	mask  []uint64
	radix []int // mask+1: the number of values each field can hold
}

// newPacking returns the packing for columns of the given leaf counts, or nil when
// their codes need more than 64 bits together.
func newPacking(leaves []int) *packing {
	p := &packing{shift: make([]uint, len(leaves)), mask: make([]uint64, len(leaves)), radix: make([]int, len(leaves))}
	var used uint
	for i := len(leaves) - 1; i >= 0; i-- {
		w := uint(bits.Len(uint(max(leaves[i]-1, 0))))
		if used+w > 64 {
			return nil
		}
		p.shift[i], p.mask[i], p.radix[i] = used, uint64(1)<<w-1, 1<<w
		used += w
	}
	return p
}

func (c *classes) count(j int) int32 {
	if c.counts == nil {
		return 1
	}
	return c.counts[j]
}

// personsOf is the number of persons among the records of class j: what k counts.
func (c *classes) personsOf(j int) int32 {
	if c.persons == nil {
		return c.count(j)
	}
	return c.persons[j]
}

// code returns the code of column i of class j.
func (c *classes) code(i, j int) int32 {
	switch {
	case c.rows != nil:
		return c.rows[i].At(j)
	case c.packed != nil:
		return int32(c.packed[j] >> c.pack.shift[i] & c.pack.mask[i])
	case c.narrow != nil:
		return int32(uint64(c.narrow[j]) >> c.npack.shift[i] & c.npack.mask[i])
	}
	return c.cols[i][j]
}

// entries is the memory the table holds, in int32s.
func (c *classes) entries() int {
	e := c.n * (len(c.cols) + 1)
	switch {
	case c.packed != nil:
		e += 2 * c.n
	case c.narrow != nil:
		e += c.n
	}
	for _, h := range c.hist {
		if h != nil {
			e += len(h.off) + 2*len(h.val)
		}
	}
	for _, set := range c.sets {
		e += 2 * len(set)
	}
	return e
}

// grouper rolls classes up to a more general node. It owns reusable scratch space, so a
// grouper must not be used by two goroutines at once.
type grouper struct {
	par int // goroutines it may use (≤ 1: the caller's only)
	// pack, when not nil, is how class tables are laid out (see packing): a roll-up
	// then needs no column reads but of the records, and rewrites, in a class
	// table's words, only the fields of the columns whose map is not the identity.
	pack *packing
	// tune says which roll-ups of packed tables are radix-partitioned (radixCount).
	tune   radixTuning
	keys   []uint64
	slots  []int32 // direct counting: index+1 of the output class, 0 = empty
	parts  []*table
	assign []int32 // scratch for roll-ups that need every source class's output class
	hist   histScratch
	check  *checker // the searcher's models' checker (made on first use)
	// grouped is the scatter scratch of each goroutine of a grouped roll-up
	// (rollUpGrouped), kept for the next (the searcher's, for a large source).
	grouped []*groupScratch
	// node is the scratch of the node being evaluated with this grouper (its levels,
	// its source's, its key maps), reused from node to node.
	node nodeScratch
	// stop, when set, ends a radix-partitioned roll-up (radixCount) once the classes
	// it has counted are enough to fail the node: their records in classes smaller
	// than k exceed the suppression limit (the search's evaluations set it).
	stop suppressionStop
	// ranges, when set, are ranges of the source that each hold whole classes of the
	// node counted (a recordLayout's): a radix-partitioned count counts them one after
	// the other (radixCount).
	ranges []int
}

// suppressionStop is what fails a node whatever its other classes: more than most
// records in classes of fewer than k records (k = 0: no stop). A class counted whole
// keeps its size, whatever else is counted, so the classes of a part of the key space
// decide it as soon as they hold more than most records of classes below k.
type suppressionStop struct {
	k    int32
	most int
}

// small returns the records of the classes below k among counts.
func (st suppressionStop) small(counts []int32) int {
	n := 0
	for _, c := range counts {
		if c < st.k {
			n += int(c)
		}
	}
	return n
}

// nodeScratch is what a node's evaluation needs per quasi-identifier, kept by its
// grouper so that counting a node allocates none of it.
type nodeScratch struct {
	levels, srcLevels []int
	maps              [][]int32
	sizes             []int
	changed           []int // the columns a packed roll-up rewrites (packedKeys)
}

// Sizes of the grouping's work units.
const (
	// directLimit bounds the size of a key space that is counted in a plain array.
	directLimit = 1 << 20
	// chunkRows is how many source classes get their keys at once: the keys of a
	// chunk, not of the whole source, are held, so that grouping the records of a
	// large table needs little memory besides the output.
	chunkRows = 1 << 18
)

// rollUp groups the classes of src into the classes of node dst; maps[i] maps a code of
// column i at src's level to its code at dst's level, and sizes[i] is the number of
// codes at dst's level. When assign is not nil, assign[j] receives the index of the
// output class of source class j. When limit > 0 and the output would have more than
// limit classes, rollUp stops as soon as it has seen limit+1 of them and returns nil.
// read is the number of source classes it read.
//
// When the grouper packs class tables (g.pack), the output is packed and a class's key
// is its packed word; rollUpPacked and, for a large source, radixCount (rollUpRadix,
// rollUpNarrow) count them.
// Otherwise each class gets a key: its codes in mixed radix when the key space fits in
// 64 bits (then equal keys are equal tuples), otherwise a hash of its codes (then
// tuples are compared on equal keys). Keys are counted in an array when the key space
// is small, else in an open-addressing table; output classes are in order of first
// appearance. Keys are computed a chunk at a time (in parallel within a large chunk),
// so that grouping the records of a large table holds little besides its output.
//
// Splitting one table's counting between goroutines by key hash was measured twice
// and dropped: on a million classes it was no faster (the counting waits on memory),
// on Adult's sources of a few thousand it was slower (handing work to the other core
// costs more than it saves). Partitioning pays once the buckets fit in the cache and
// each core has milliseconds of work (radixCount).
func (g *grouper) rollUp(src *classes, dst int, maps [][]int32, sizes []int, assign []int32, limit int) (out *classes, read int) {
	n := src.n
	if limit <= 0 {
		limit = n + 1
	}
	space, exact := keySpace(sizes)
	direct := exact && space <= directLimit && space <= uint64(8*n+1024)
	if g.pack != nil && src.cols == nil {
		if direct && src.rows != nil {
			// Few possible classes: counted in an array, then packed.
			rep, counts, read := g.direct(src, maps, sizes, space, assign, limit)
			if len(rep) > limit {
				return nil, read
			}
			words := make([]uint64, len(rep))
			for i, m := range maps {
				sh := g.pack.shift[i]
				for c, j := range rep {
					words[c] |= uint64(m[src.rows[i].At(int(j))]) << sh
				}
			}
			return &classes{node: dst, packed: words, pack: g.pack, counts: slices.Clone(counts), n: len(rep)}, read
		}
		return g.rollUpPacked(src, dst, maps, sizes, assign, limit)
	}
	var rep, counts []int32
	switch {
	case direct:
		rep, counts, read = g.direct(src, maps, sizes, space, assign, limit)
	default:
		t := g.table(0)
		t.reset(n)
		keysOf := func(keys []uint64, lo, hi int) { computeKeys(keys, src, lo, hi, maps, sizes, exact) }
		read = g.eachChunk(src, keysOf, func(lo int, keys []uint64) bool {
			return t.count(src, maps, keys, lo, exact, assign, limit)
		})
		rep, counts = t.rep, t.counts
	}
	if len(rep) > limit {
		return nil, read
	}
	out = &classes{node: dst, cols: make([][]int32, len(maps)), counts: slices.Clone(counts), n: len(rep)}
	for i, m := range maps {
		oc := make([]int32, len(rep))
		if src.rows != nil {
			for c, j := range rep {
				oc[c] = m[src.rows[i].At(int(j))]
			}
		} else {
			col := src.cols[i]
			for c, j := range rep {
				oc[c] = m[col[j]]
			}
		}
		out.cols[i] = oc
	}
	return out, read
}

// keySpace returns the number of code tuples of a node with sizes[i] codes in column
// i, and exact true, when it fits in 64 bits (then a tuple's mixed-radix key is exact);
// exact false otherwise (then keys are hashes).
func keySpace(sizes []int) (space uint64, exact bool) {
	space = 1
	for _, sz := range sizes {
		hi, lo := bits.Mul64(space, uint64(sz))
		if hi != 0 {
			return 0, false
		}
		space = lo
	}
	return space, true
}

// rollUpPacked is rollUp for packed class tables: it groups src (the records or a
// packed class table) into a packed class table; sizes[i] is the number of codes of
// column i at dst's level.
func (g *grouper) rollUpPacked(src *classes, dst int, maps [][]int32, sizes []int, assign []int32, limit int) (out *classes, read int) {
	pack := g.pack
	keysOf := g.packedKeys(src, maps)
	if assign == nil && src.n >= g.tune.min() {
		if radix := narrowRadix(sizes); radix != nil {
			return g.rollUpNarrow(src, dst, maps, radix, limit)
		}
		if mixed32(sizes) {
			return g.rollUpMixed(src, dst, maps, sizes, limit)
		}
		return g.rollUpRadix(src, dst, keysOf, limit)
	}
	var t *table
	over := false
	if assign != nil && src.rows != nil && g.par > 1 && src.n >= partsMinRecords {
		t, over, read = g.countInParts(src, maps, keysOf, assign, limit)
	} else {
		t = g.table(0)
		t.reset(src.n)
		read = g.eachChunk(src, keysOf, func(lo int, keys []uint64) bool {
			return t.count(src, maps, keys, lo, true, assign, limit)
		})
	}
	if over || len(t.rep) > limit {
		return nil, read
	}
	return &classes{node: dst, packed: slices.Clone(t.held), pack: pack, counts: slices.Clone(t.counts), n: len(t.rep)}, read
}

// packedKeys returns the function that writes the packed words, at the node maps map
// to, of src's classes lo … hi−1 (the records, a packed or a narrow class table).
func (g *grouper) packedKeys(src *classes, maps [][]int32) func(keys []uint64, lo, hi int) {
	pack := g.pack
	switch {
	case src.narrow != nil:
		return func(keys []uint64, lo, hi int) { widenNarrow(keys, src.narrow[lo:hi], maps, src.npack, pack) }
	case src.rows == nil:
		changed := g.node.changed[:0]
		for i, m := range maps {
			if !isIdentity(m) {
				changed = append(changed, i)
			}
		}
		g.node.changed = changed
		return func(keys []uint64, lo, hi int) { repack(keys, src.packed[lo:hi], maps, pack, changed) }
	}
	// The records' packed words are their mixed-radix keys when every column's radix
	// is its field's width: the first column ends in the highest bits.
	return func(keys []uint64, lo, hi int) { computeKeys(keys, src, lo, hi, maps, pack.radix, true) }
}

// partsMinRecords is the fewest records that countInParts splits: below it, handing
// work to the other core costs more than it saves (see parallelKeys).
const partsMinRecords = 1 << 18

// countInParts counts the records of src (exact keys from keysOf) as rollUpPacked does,
// on g.par goroutines: each counts a range of the records in a table of its own
// (g.table(p)) and gives its records the indexes of that table; the tables are then
// merged into the first, and the records of the others given the merged table's
// indexes. The parts are merged in order, each listing its classes in order of first
// appearance: the merged table is the one goroutine's count would make. It returns the
// merged table, or over true when the records hold more than limit classes, and the
// records read.
func (g *grouper) countInParts(src *classes, maps [][]int32, keysOf func(keys []uint64, lo, hi int), assign []int32, limit int) (merged *table, over bool, read int) {
	par, n := g.par, src.n
	bound := func(p int) int { return n * p / par }
	var stop atomic.Bool // a part has more than limit classes: the others stop too
	reads := make([]int, par)
	tables := make([]*table, par) // taken here: g.table grows g.parts
	for p := range tables {
		tables[p] = g.table(p)
	}
	fanOut(par, func(p int) {
		t := tables[p]
		t.reset(bound(p+1) - bound(p))
		keys := make([]uint64, min(partsChunk, bound(p+1)-bound(p)))
		for lo := bound(p); lo < bound(p+1) && !stop.Load(); lo += partsChunk {
			hi := min(lo+partsChunk, bound(p+1))
			keysOf(keys[:hi-lo], lo, hi)
			reads[p] += hi - lo
			if !t.count(src, maps, keys[:hi-lo], lo, true, assign, limit) {
				stop.Store(true)
			}
		}
	})
	for _, r := range reads {
		read += r
	}
	base := tables[0]
	if stop.Load() {
		return base, true, read
	}
	for p := 1; p < par; p++ {
		t := tables[p]
		at := make([]int32, len(t.held)) // at[c]: the merged index of t's class c
		for c, key := range t.held {
			at[c] = base.add(key, t.rep[c], t.counts[c])
		}
		if len(base.rep) > limit {
			return base, true, read
		}
		for j := bound(p); j < bound(p+1); j++ {
			assign[j] = at[assign[j]]
		}
	}
	return base, false, read
}

// partsChunk is how many records a goroutine of countInParts keys at once.
const partsChunk = 1 << 14

// add adds count records of the class with exact key key (rep one of them) to t and
// returns its index.
func (t *table) add(key uint64, rep, count int32) int32 {
	pos := mix(key, true) & t.mask
	for {
		s := t.slots[pos]
		if s == 0 {
			t.held = append(t.held, key)
			t.rep = append(t.rep, rep)
			t.counts = append(t.counts, count)
			t.slots[pos] = int32(len(t.held))
			if 2*len(t.held) > len(t.slots) {
				t.grow(true)
			}
			return int32(len(t.held) - 1)
		}
		if t.held[s-1] == key {
			t.counts[s-1] += count
			return s - 1
		}
		pos = (pos + 1) & t.mask
	}
}

// Radix-partitioned counting (radixCount), by default: sources of at least
// radixMinSource classes, buckets of about radixBucket classes.
const (
	radixMinSource = 1 << 20
	radixBucket    = 1 << 15
)

// radixTuning says which roll-ups are radix-partitioned and into buckets of how many
// classes; its zero value is the default (radixMinSource, radixBucket). Tests set it to
// send small sources through radixCount and make many buckets of them.
type radixTuning struct {
	minSource int  // smallest source radix-partitioned (0: radixMinSource)
	bucket    int  // classes per bucket (0: radixBucket)
	chunk     int  // source entries a grouped roll-up maps at once (0: chunkRows)
	abort     int  // smallest source whose roll-ups stop once the node fails (0: abortMinSource)
	noLayout  bool // the records are never laid out by a node's classes (recordLayout)
	layout    int  // records per class of a layout's node at most (0: layoutShare)
}

// abortFrom is the smallest source, in classes, whose roll-ups stop once they show the
// node fails (see countNode).
func (r radixTuning) abortFrom() int {
	if r.abort <= 0 {
		return abortMinSource
	}
	return r.abort
}

// layoutClasses is the most classes of the node of a layout of n records.
func (r radixTuning) layoutClasses(n int) int {
	if r.layout <= 0 {
		return n / layoutShare
	}
	return n / r.layout
}

// min is the smallest source, in classes, that is radix-partitioned.
func (r radixTuning) min() int {
	if r.minSource <= 0 {
		return radixMinSource
	}
	return r.minSource
}

// bucketSize is the number of classes per bucket of a radix-partitioned count.
func (r radixTuning) bucketSize() int {
	if r.bucket <= 0 {
		return radixBucket
	}
	return r.bucket
}

const (
	// radixTableMin is the slot count a bucket's table starts with (it doubles at
	// half load): fixed, so that the classes come out in the same order whatever the
	// number of goroutines.
	radixTableMin = 1 << 12
)

// radixKey is what a radix-partitioned count moves and counts: a class's packed word,
// or, when the node's codes fit in 32 bits at its own field widths (narrowRadix), that
// narrower word, which halves the memory moved, held and probed.
type radixKey interface{ uint32 | uint64 }

// narrowRadix returns, when the codes of a node with sizes[i] codes in column i fit
// in 32 bits with column i in a field of bits.Len(sizes[i]−1) bits, the radix 2^width
// of every field; nil otherwise.
func narrowRadix(sizes []int) []int {
	radix := make([]int, len(sizes))
	used := 0
	for i, sz := range sizes {
		w := bits.Len(uint(max(sz-1, 0)))
		used += w
		if used > 32 {
			return nil
		}
		radix[i] = 1 << w
	}
	return radix
}

// rollUpRadix groups a large source into a packed class table by radixCount of its
// packed words (keysOf computes them).
func (g *grouper) rollUpRadix(src *classes, dst int, keysOf func(keys []uint64, lo, hi int), limit int) (*classes, int) {
	parts, counts, read, ok := radixCount(g.par, g.tune.bucketSize(), src, keysOf, limit, g.stop, g.ranges)
	if !ok {
		return nil, read
	}
	keys := parts[0]
	if len(parts) > 1 {
		keys = slices.Concat(parts...)
	}
	return &classes{node: dst, packed: keys, pack: g.pack, counts: counts, n: len(keys)}, read
}

// rollUpNarrow groups a large source into a narrow class table (its words in the
// fields of narrowPacking(radix)) by radixCount of 32-bit words holding the node's
// codes in mixed radix (radix from narrowRadix): the same words, since every radix is
// a power of two.
func (g *grouper) rollUpNarrow(src *classes, dst int, maps [][]int32, radix []int, limit int) (*classes, int) {
	keysOf := func(keys []uint32, lo, hi int) { narrowKeys(keys, src, lo, hi, maps, radix, g.pack) }
	parts, counts, read, ok := radixCount(g.par, g.tune.bucketSize(), src, keysOf, limit, g.stop, g.ranges)
	if !ok {
		return nil, read
	}
	words := parts[0]
	if len(parts) > 1 {
		words = slices.Concat(parts...)
	}
	return &classes{node: dst, narrow: words, npack: narrowPacking(radix), counts: counts, n: len(words)}, read
}

// mixed32 reports whether the codes of a node with sizes[i] codes in column i fit in
// 32 bits in mixed radix (their number of tuples is at most 2^32).
func mixed32(sizes []int) bool {
	space, exact := keySpace(sizes)
	return exact && space <= 1<<32
}

// rollUpMixed groups a large source into a packed class table by radixCount of 32-bit
// keys holding the node's codes in mixed radix of its own sizes, for a node whose codes
// fit 32 bits that way but not in power-of-two fields (mixed32, not narrowRadix); the
// classes' codes are then taken apart by division, into the packing of class tables.
func (g *grouper) rollUpMixed(src *classes, dst int, maps [][]int32, sizes []int, limit int) (*classes, int) {
	keysOf := func(keys []uint32, lo, hi int) { narrowKeys(keys, src, lo, hi, maps, sizes, g.pack) }
	parts, counts, read, ok := radixCount(g.par, g.tune.bucketSize(), src, keysOf, limit, g.stop, g.ranges)
	if !ok {
		return nil, read
	}
	// x/d is the high word of x·magic for every x and d below 2^32, d ≥ 2 (Lemire,
	// Kaser and Kurz, "Faster remainder by direct computation", 2019).
	type divisor struct {
		d, magic uint64
		shift    uint
	}
	var divs []divisor // from the last column to the first, those of more than one code
	for i := len(sizes) - 1; i >= 0; i-- {
		if d := uint64(sizes[i]); d > 1 {
			divs = append(divs, divisor{d, ^uint64(0)/d + 1, g.pack.shift[i]})
		}
	}
	words := make([]uint64, len(counts))
	at := make([]int, len(parts)) // where part p's classes begin
	for p := 1; p < len(parts); p++ {
		at[p] = at[p-1] + len(parts[p-1])
	}
	fanOut(len(parts), func(p int) {
		out := words[at[p] : at[p]+len(parts[p])]
		for j, k := range parts[p] {
			var w uint64
			x := uint64(k)
			for _, dv := range divs {
				q, _ := bits.Mul64(x, dv.magic)
				w |= (x - q*dv.d) << dv.shift
				x = q
			}
			out[j] = w
		}
	})
	return &classes{node: dst, packed: words, pack: g.pack, counts: counts, n: len(words)}, read
}

// narrowPacking is the packing of the mixed-radix words of radix (from narrowRadix):
// the first column in the highest bits.
func narrowPacking(radix []int) *packing {
	p := &packing{shift: make([]uint, len(radix)), mask: make([]uint64, len(radix)), radix: slices.Clone(radix)}
	var used uint
	for i := len(radix) - 1; i >= 0; i-- {
		p.shift[i], p.mask[i] = used, uint64(radix[i]-1)
		used += uint(bits.TrailingZeros(uint(radix[i])))
	}
	return p
}

// narrowKeys writes into keys the node's codes of source classes lo..hi-1 in mixed
// radix (radix[i] for column i: its power-of-two field, narrowRadix, or its number of
// codes, rollUpMixed): maps[i] takes column i's code (a leaf code for the records, a
// field of the word of a class table) to the node's.
func narrowKeys(keys []uint32, src *classes, lo, hi int, maps [][]int32, radix []int, pack *packing) {
	keys = keys[:hi-lo]
	first := true
	for i, m := range maps {
		r := uint32(radix[i])
		if r == 1 {
			continue // one code at the node, 0: the keys times 1 plus 0
		}
		if first {
			r, first = 0, false // the first column sets the keys
		}
		switch {
		case src.rows != nil:
			addKeys(src.rows[i], keys, lo, hi, m, r)
		case src.narrow != nil:
			sh, mk := src.npack.shift[i]&31, uint32(src.npack.mask[i])
			for j, w := range src.narrow[lo:hi] {
				keys[j] = keys[j]*r + uint32(m[w>>sh&mk])
			}
		default:
			sh, mk := pack.shift[i]&63, pack.mask[i]
			for j, w := range src.packed[lo:hi] {
				keys[j] = keys[j]*r + uint32(m[w>>sh&mk])
			}
		}
	}
	if first {
		clear(keys) // every column has one code
	}
}

// widenNarrow writes into keys the words, in the fields of pack, of the classes of a
// narrow class table whose words (in the fields of npack) are words, their codes
// mapped by maps.
func widenNarrow(keys []uint64, words []uint32, maps [][]int32, npack, pack *packing) {
	keys = keys[:len(words)]
	clear(keys)
	for i, m := range maps {
		nsh, nmk, sh := npack.shift[i]&31, uint32(npack.mask[i]), pack.shift[i]&63
		for j, w := range words {
			keys[j] |= uint64(m[w>>nsh&nmk]) << sh
		}
	}
}

// radixCount counts the keys of a large source in two passes: par goroutines compute
// the keys of a share of the source each and sort every chunk of them by bucket (the
// top bits of their hash; a counting sort, which moves each key, and its class's
// count, once), then count a share of the buckets each, every bucket in a table small
// enough to stay in the cache. Counting straight into one table of millions of
// classes waits on memory at every record (a cache miss per key); these passes read
// and write in order. It returns every distinct key, in parts (one per goroutine)
// whose concatenation is in bucket order and within a bucket in the order of the
// bucket's table, the same whatever par, and the keys' counts in that order. While it
// runs it holds one key (and count) per source class, then the distinct keys and
// counts twice over (the tables' output grows by appending) while they are gathered.
//
// When ranges is set (a recordLayout's), every class lies within one of the ranges of
// the source it bounds, and the ranges are counted apart (radixCountRanges): the keys
// held are a range's per goroutine, and the parts are the ranges', in order.
//
// It returns ok false once the classes counted, by all goroutines together, exceed
// limit, or once those counted whole hold more records in classes below stop.k than
// stop.most (suppressionStop; k = 0: never); read is the source classes it keyed.
// Buckets hold about bucket source classes (at least 16 and at most 4,096 buckets).
func radixCount[K radixKey](par, bucket int, src *classes, keysOf func(keys []K, lo, hi int), limit int, stop suppressionStop, ranges []int) (keys [][]K, counts []int32, read int, ok bool) {
	if len(ranges) > 2 {
		return radixCountRanges(par, bucket, src, keysOf, limit, stop, ranges)
	}
	n := src.n
	width := radixWidth(n, bucket)
	buckets, shift := 1<<width, uint(64-width)
	parts := max(par, 1)
	segs := make([][]radixSegment[K], parts)
	fanOut(parts, func(p int) {
		segs[p] = radixScatter(src, keysOf, n*p/parts, n*(p+1)/parts, buckets, shift, math.MaxUint64, nil)
	})
	results := make([]radixPart[K], parts)
	tally := &radixTally{limit: limit, stop: stop}
	fanOut(parts, func(p int) {
		results[p] = radixGather(segs, buckets*p/parts, buckets*(p+1)/parts, tally)
	})
	keys, counts, ok = radixJoin(results, limit)
	return keys, counts, n, ok
}

// radixCountRanges is radixCount of a source whose every class lies within one of the
// ranges it is cut into: each of par goroutines takes the next range not taken and
// counts it alone (rangeCounter), until none is left or the count stops; the ranges'
// parts are then joined in range order, the same whatever par.
func radixCountRanges[K radixKey](par, bucket int, src *classes, keysOf func(keys []K, lo, hi int), limit int, stop suppressionStop, ranges []int) (keys [][]K, counts []int32, read int, ok bool) {
	results := make([]radixPart[K], len(ranges)-1)
	var next, keyed atomic.Int64
	var over atomic.Bool
	tally := &radixTally{limit: limit, stop: stop}
	fanOut(max(par, 1), func(int) {
		w := rangeCounter[K]{src: src, keysOf: keysOf, bucket: bucket, tally: tally}
		for !over.Load() {
			r := int(next.Add(1) - 1)
			if r >= len(results) {
				return
			}
			results[r] = w.count(ranges[r], ranges[r+1])
			keyed.Add(int64(ranges[r+1] - ranges[r]))
			if results[r].over {
				over.Store(true)
			}
		}
	})
	keys, counts, ok = radixJoin(results, limit)
	return keys, counts, int(keyed.Load()), ok
}

// rangeCounter counts ranges of a source, one at a time, each a range of whole
// classes, adding the classes it finds to tally, as radixGather does; its scratch
// serves range after range.
type rangeCounter[K radixKey] struct {
	src     *classes
	keysOf  func(keys []K, lo, hi int)
	bucket  int // source classes per bucket of a large range's radixCount
	tally   *radixTally
	keys    []K
	table   radixTable[K]
	scatter scatterScratch[K]
}

// count counts the source classes lo … hi−1: a range of at most two buckets' worth in
// one table (sized to hold them without growing, so in the cache), a larger one by
// radix partitioning. A range's output is in the order of its table's slots, which
// depends on its classes only.
func (w *rangeCounter[K]) count(lo, hi int) radixPart[K] {
	if hi-lo > 2*w.bucket {
		width := radixWidth(hi-lo, w.bucket)
		segs := [][]radixSegment[K]{radixScatter(w.src, w.keysOf, lo, hi, 1<<width, uint(64-width), math.MaxUint64, &w.scatter)}
		return radixGather(segs, 0, 1<<width, w.tally)
	}
	if cap(w.keys) < hi-lo {
		w.keys = make([]K, hi-lo)
	}
	keys := w.keys[:hi-lo]
	w.keysOf(keys, lo, hi)
	var counts []int32
	if w.src.counts != nil {
		counts = w.src.counts[lo:hi]
	}
	w.table.resetFor(hi - lo)
	w.table.addAll(keys, counts)
	var part radixPart[K]
	part.keys, part.counts = w.table.appendTo(nil, nil)
	part.over = w.tally.add(part.counts)
	return part
}

// radixSegment is a chunk of source classes that radixScatter moved, sorted by bucket
// (a counting sort): bucket b of the chunk is keys[start[b]:start[b+1]], with their
// classes' counts (nil: the source has none).
type radixSegment[K radixKey] struct {
	keys   []K
	counts []int32
	start  []int32
}

// radixScatter computes the keys of the source classes lo … end−1 of src (keysOf) and
// sorts every chunk of them by bucket, of the given number of buckets, each key's the
// top bits from bit shift of the hash of its bits in mask.
func radixScatter[K radixKey](src *classes, keysOf func(keys []K, lo, hi int), lo, end, buckets int, shift uint, mask uint64, sc *scatterScratch[K]) []radixSegment[K] {
	var segs []radixSegment[K]
	size := min(chunkRows, end-lo)
	if sc == nil {
		sc = newScatterScratch[K](size, buckets)
	} else {
		if len(sc.keys) < size {
			sc.keys, sc.bucket = make([]K, size), make([]uint16, size)
		}
		sc.reserve(end-lo, buckets)
	}
	for ; lo < end; lo += size {
		hi := min(lo+size, end)
		keys := sc.keys[:hi-lo]
		keysOf(keys, lo, hi)
		var counts []int32
		if src.counts != nil {
			counts = src.counts[lo:hi]
		}
		segs = append(segs, sc.scatter(keys, counts, shift, mask))
	}
	return segs
}

// scatterScratch is the scratch of the scatter of chunks of keys into buckets: room for
// a chunk's keys and their buckets, and the buckets' histogram.
type scatterScratch[K radixKey] struct {
	keys   []K
	bucket []uint16
	hist   []int32
	// arena and counts, when not nil, hold the segments' keys and counts from used
	// on, so that a scatter reused for another count allocates nothing (reserve).
	arena  []K
	counts []int32
	used   int
}

// reserve gives sc an arena for n keys and counts, reused from earlier scatters when
// it is large enough, into the given number of buckets; the segments of earlier
// scatters are then overwritten.
func (sc *scatterScratch[K]) reserve(n, buckets int) {
	if cap(sc.arena) < n {
		sc.arena, sc.counts = make([]K, n), make([]int32, n)
	}
	sc.arena, sc.counts, sc.used = sc.arena[:cap(sc.arena)], sc.counts[:cap(sc.counts)], 0
	if len(sc.hist) != buckets+1 {
		sc.hist = make([]int32, buckets+1)
	}
}

// take returns n keys and, when counts is set, n counts of the arena (new ones when
// it has no room).
func (sc *scatterScratch[K]) take(n int, counts bool) ([]K, []int32) {
	if sc.used+n > len(sc.arena) {
		if !counts {
			return make([]K, n), nil
		}
		return make([]K, n), make([]int32, n)
	}
	k, c := sc.arena[sc.used:sc.used+n:sc.used+n], sc.counts[sc.used:sc.used+n:sc.used+n]
	sc.used += n
	return k, c
}

// newScatterScratch returns the scratch of chunks of at most size keys into the given
// number of buckets.
func newScatterScratch[K radixKey](size, buckets int) *scatterScratch[K] {
	return &scatterScratch[K]{keys: make([]K, size), bucket: make([]uint16, size), hist: make([]int32, buckets+1)}
}

// scatter sorts keys, and their counts when not nil, by bucket (a counting sort) into a
// new segment: a key's bucket is the top bits from bit shift of the hash of its bits in
// mask.
func (sc *scatterScratch[K]) scatter(keys []K, counts []int32, shift uint, mask uint64) radixSegment[K] {
	hist, bk := sc.hist, sc.bucket[:len(keys)]
	buckets := len(hist) - 1
	clear(hist)
	for j, k := range keys {
		b := uint16(mix(uint64(k)&mask, true) >> shift)
		bk[j] = b
		hist[b+1]++
	}
	for b := 1; b <= buckets; b++ {
		hist[b] += hist[b-1]
	}
	seg := radixSegment[K]{start: slices.Clone(hist)}
	var arenaCounts []int32
	seg.keys, arenaCounts = sc.take(len(keys), counts != nil)
	next := hist[:buckets] // where the next key of every bucket goes
	out := seg.keys
	for j, k := range keys {
		b := bk[j]
		out[next[b]] = k
		next[b]++
	}
	if counts != nil {
		seg.counts = arenaCounts
		copy(next, seg.start[:buckets])
		for j, c := range counts[:len(keys)] {
			b := bk[j]
			seg.counts[next[b]] = c
			next[b]++
		}
	}
	return seg
}

// radixPart is what one goroutine of radixCount counted: the distinct keys of its
// buckets, in bucket order, and their counts; over: the count stopped past its limit.
type radixPart[K radixKey] struct {
	keys   []K
	counts []int32
	over   bool
}

// radixTally is what the goroutines of one radixCount have counted together: the
// distinct keys, and the records of those in classes below stop.k. Buckets (and a
// layout's ranges) hold different keys, so once either passes its bound (limit,
// stop.most), so does the whole count, and every goroutine stops.
type radixTally struct {
	counted, small atomic.Int64
	limit          int
	stop           suppressionStop
}

// add adds whole classes of the given counts and reports whether the count is over.
func (t *radixTally) add(counts []int32) bool {
	if t.counted.Add(int64(len(counts))) > int64(t.limit) {
		return true
	}
	return t.stop.k > 1 && t.small.Add(int64(t.stop.small(counts))) > int64(t.stop.most)
}

// radixGather counts the keys of buckets from … to−1 of every goroutine's segments,
// a bucket at a time, adding the classes it finds to tally, until it is over (a
// bucket's classes are whole once it is counted).
func radixGather[K radixKey](segs [][]radixSegment[K], from, to int, tally *radixTally) radixPart[K] {
	t := &radixTable[K]{}
	var res radixPart[K]
	for b := from; b < to; b++ {
		t.reset()
		for _, part := range segs {
			for _, sg := range part {
				from, to := sg.start[b], sg.start[b+1]
				var c []int32
				if sg.counts != nil {
					c = sg.counts[from:to]
				}
				t.addAll(sg.keys[from:to], c)
			}
		}
		found := len(res.keys)
		res.keys, res.counts = t.appendTo(res.keys, res.counts)
		if tally.add(res.counts[found:]) {
			res.over = true
			return res
		}
	}
	return res
}

// radixJoin returns radixCount's keys, one part per goroutine, and their counts in one
// slice, or ok false when a part stopped, or all together exceed limit.
func radixJoin[K radixKey](results []radixPart[K], limit int) (keys [][]K, counts []int32, ok bool) {
	total := 0
	for _, r := range results {
		total += len(r.keys)
		if r.over || total > limit {
			return nil, nil, false
		}
	}
	keys = make([][]K, len(results))
	for p, r := range results {
		keys[p] = r.keys
	}
	if len(results) == 1 {
		return keys, results[0].counts, true
	}
	counts = make([]int32, 0, total)
	for _, r := range results {
		counts = append(counts, r.counts...)
	}
	return keys, counts, true
}

// radixWidth is the number of hash bits that pick the bucket of a radix-partitioned
// count of n source classes into buckets of about bucket classes.
func radixWidth(n, bucket int) int { return min(max(bits.Len(uint(n/bucket)), 4), 12) }

// radixTable counts the keys of one bucket in open addressing, the key and its count
// side by side in the slot (a count of 0 marks an empty slot), so that a probe reads
// one place. Positions come from the low bits of the key's hash, buckets from the high
// bits.
type radixTable[K radixKey] struct {
	slots []radixSlot[K]
	spare []radixSlot[K] // the slots before the last growth, for the next one
	used  int
}

type radixSlot[K radixKey] struct {
	key   K
	count int32
}

// reset empties the table, at radixTableMin slots.
func (t *radixTable[K]) reset() { t.resetFor(0) }

// resetFor empties the table, at room for n keys without growing (at least
// radixTableMin slots).
func (t *radixTable[K]) resetFor(n int) {
	size := radixTableMin
	if 2*n > size {
		size = 1 << bits.Len(uint(2*n-1))
	}
	if cap(t.slots) < size {
		t.slots = make([]radixSlot[K], size)
	}
	t.slots = t.slots[:size]
	clear(t.slots)
	t.used = 0
}

// addAll adds keys[j] with count counts[j] (1 when counts is nil): the hot loop of a
// radix-partitioned count, with the table in locals.
func (t *radixTable[K]) addAll(keys []K, counts []int32) {
	if counts != nil {
		counts = counts[:len(keys)]
	}
	slots, used := t.slots, t.used
	mask := uint64(len(slots) - 1)
	for j, k := range keys {
		c := int32(1)
		if counts != nil {
			c = counts[j]
		}
		p := mix(uint64(k), true) & mask
		for {
			sl := &slots[p]
			if sl.count == 0 {
				sl.key, sl.count = k, c
				used++
				if 2*used > len(slots) {
					t.grow()
					slots = t.slots
					mask = uint64(len(slots) - 1)
				}
				break
			}
			if sl.key == k {
				sl.count += c
				break
			}
			p = (p + 1) & mask
		}
	}
	t.used = used
}

// grow doubles the table.
func (t *radixTable[K]) grow() {
	old := t.slots
	size := 2 * len(old)
	if cap(t.spare) >= size {
		t.slots = t.spare[:size]
		clear(t.slots)
	} else {
		t.slots = make([]radixSlot[K], size)
	}
	mask := uint64(size - 1)
	for _, sl := range old {
		if sl.count == 0 {
			continue
		}
		p := mix(uint64(sl.key), true) & mask
		for t.slots[p].count != 0 {
			p = (p + 1) & mask
		}
		t.slots[p] = sl
	}
	t.spare = old[:0]
}

// appendTo appends the table's keys and counts, in slot order.
func (t *radixTable[K]) appendTo(keys []K, counts []int32) ([]K, []int32) {
	for _, sl := range t.slots {
		if sl.count != 0 {
			keys = append(keys, sl.key)
			counts = append(counts, sl.count)
		}
	}
	return keys, counts
}

// repack writes into keys the words of a packed class table with the fields of the
// columns changed mapped by maps.
func repack(keys, words []uint64, maps [][]int32, pack *packing, changed []int) {
	copy(keys, words)
	keys = keys[:len(words)]
	for _, i := range changed {
		m, sh, mk := maps[i], pack.shift[i]&63, pack.mask[i]
		clearField := ^(mk << sh)
		for j, w := range keys {
			keys[j] = w&clearField | uint64(m[w>>sh&mk])<<sh
		}
	}
}

// fanOut runs f(0), …, f(parts−1), on as many goroutines when parts > 1 (the caller's
// only otherwise), and returns when all have. A worker's panic is raised again on the
// caller's goroutine (safe.MustParallel), which the search and NodeClasses recover.
func fanOut(parts int, f func(p int)) {
	if parts <= 1 {
		f(0)
		return
	}
	safe.MustParallel(parts, f)
}

// isIdentity reports whether m maps every code to itself.
func isIdentity(m []int32) bool {
	for c, v := range m {
		if v != int32(c) {
			return false
		}
	}
	return true
}

// direct counts keys in an array indexed by the key.
func (g *grouper) direct(src *classes, maps [][]int32, sizes []int, space uint64, assign []int32, limit int) (rep, counts []int32, read int) {
	if uint64(cap(g.slots)) < space {
		g.slots = make([]int32, space)
	}
	slots := g.slots[:space]
	clear(slots)
	keysOf := func(keys []uint64, lo, hi int) { computeKeys(keys, src, lo, hi, maps, sizes, true) }
	read = g.eachChunk(src, keysOf, func(lo int, keys []uint64) bool {
		for j, key := range keys {
			s := slots[key]
			if s == 0 {
				rep = append(rep, int32(lo+j))
				counts = append(counts, 0)
				s = int32(len(rep))
				slots[key] = s
				if len(rep) > limit {
					return false
				}
			}
			counts[s-1] += src.count(lo + j)
			if assign != nil {
				assign[lo+j] = s - 1
			}
		}
		return true
	})
	return rep, counts, read
}

// eachChunk computes the keys of the source classes chunk by chunk with keysOf (in
// parallel within a large chunk) and hands each chunk's keys to f in order, until f
// returns false. It returns the number of source classes handed over.
func (g *grouper) eachChunk(src *classes, keysOf func(keys []uint64, lo, hi int), f func(lo int, keys []uint64) bool) int {
	size := min(src.n, chunkRows)
	if cap(g.keys) < size {
		g.keys = make([]uint64, size)
	}
	for lo := 0; lo < src.n; lo += chunkRows {
		hi := min(lo+chunkRows, src.n)
		keys := g.keys[:hi-lo]
		parts := 1
		if g.par > 1 && hi-lo >= parallelKeys {
			parts = g.par
		}
		if parts == 1 {
			keysOf(keys, lo, hi) // as fanOut would, without allocating its closure
		} else {
			fanOut(parts, func(p int) {
				a, b := (hi-lo)*p/parts, (hi-lo)*(p+1)/parts
				keysOf(keys[a:b], lo+a, lo+b)
			})
		}
		if !f(lo, keys) {
			return hi
		}
	}
	return src.n
}

// table returns the grouper's p-th open-addressing table.
func (g *grouper) table(p int) *table {
	for len(g.parts) <= p {
		g.parts = append(g.parts, &table{})
	}
	return g.parts[p]
}

// table counts keys in open addressing. It starts small and doubles at half load, so
// that it stays in cache when (as usual) there are far fewer output classes than
// source classes.
type table struct {
	slots  []int32  // index+1 of the output class, 0 = empty
	held   []uint64 // key of every output class
	rep    []int32  // a source class of every output class
	counts []int32
	mask   uint64
}

// count adds source classes lo, lo+1, … (whose keys are keys) to the table. When
// assign is not nil, assign[j] receives the table's index of source class j's output
// class. It stops and returns false as soon as the table has more than limit classes.
func (t *table) count(src *classes, maps [][]int32, keys []uint64, lo int, exact bool, assign []int32, limit int) bool {
	// The table's slices in locals for the loop (stored back before growing and at
	// the end): the hot loop then keeps them in registers.
	slots, mask, held, reps, cnts := t.slots, t.mask, t.held, t.rep, t.counts
	defer func() { t.held, t.rep, t.counts = held, reps, cnts }()
	for j, key := range keys {
		j += lo
		pos := mix(key, exact) & mask
		for {
			s := slots[pos]
			if s == 0 {
				held = append(held, key)
				reps = append(reps, int32(j))
				cnts = append(cnts, src.count(j))
				c := int32(len(held))
				slots[pos] = c
				if len(held) > limit {
					return false
				}
				if 2*len(held) > len(slots) {
					t.held = held
					t.grow(exact)
					slots, mask = t.slots, t.mask
				}
				if assign != nil {
					assign[j] = c - 1
				}
				break
			}
			if held[s-1] == key && (exact || sameTuple(src, maps, int(reps[s-1]), j)) {
				cnts[s-1] += src.count(j)
				if assign != nil {
					assign[j] = s - 1
				}
				break
			}
			pos = (pos + 1) & mask
		}
	}
	return true
}

func (t *table) reset(expect int) {
	size := 1 << bits.Len(uint(min(2*expect, 4096)))
	if cap(t.slots) < size {
		t.slots = make([]int32, size)
	}
	t.slots = t.slots[:size]
	clear(t.slots)
	t.mask = uint64(size - 1)
	t.held, t.rep, t.counts = t.held[:0], t.rep[:0], t.counts[:0]
}

func (t *table) grow(exact bool) {
	size := 2 * len(t.slots)
	if cap(t.slots) < size {
		t.slots = make([]int32, size)
	}
	t.slots = t.slots[:size]
	clear(t.slots)
	t.mask = uint64(size - 1)
	for c, key := range t.held {
		p := mix(key, exact) & t.mask
		for t.slots[p] != 0 {
			p = (p + 1) & t.mask
		}
		t.slots[p] = int32(c + 1)
	}
}

// mix is the hash of a key: exact (mixed-radix) keys are scrambled, inexact keys are
// hashes already.
func mix(key uint64, exact bool) uint64 {
	if exact {
		key = (key ^ (key >> 29)) * 0xBF58476D1CE4E5B9
		key ^= key >> 32
	}
	return key
}

// parallelKeys is the smallest chunk whose keys are computed in parallel. Handing work
// to another core and waiting for it costs 10–20 µs on the 2-core machine, about the
// time it takes to compute 30,000 keys, and the other core's caches do not hold the
// source: on Adult (sources of 1,000 to 30,000 classes) the search was a sixth faster
// with one goroutine than with two.
const parallelKeys = 1 << 16

// computeKeys writes the keys of source classes lo..hi-1 into keys.
func computeKeys(keys []uint64, src *classes, lo, hi int, maps [][]int32, sizes []int, exact bool) {
	if exact {
		for i, m := range maps {
			sz := uint64(sizes[i])
			if i == 0 { // the first column sets the keys (sz is then irrelevant)
				sz = 0
			}
			if src.rows != nil {
				addKeys(src.rows[i], keys, lo, hi, m, sz)
				continue
			}
			keys := keys[:hi-lo]
			for j, c := range src.cols[i][lo:hi] {
				keys[j] = keys[j]*sz + uint64(m[c])
			}
		}
		return
	}
	for j := range keys {
		keys[j] = 0x9E3779B97F4A7C15
	}
	for i, m := range maps {
		if src.rows != nil {
			src.rows[i].mixKeys(keys, lo, hi, m)
			continue
		}
		for j, c := range src.cols[i][lo:hi] {
			keys[j] = (keys[j] ^ uint64(uint32(m[c]))) * 0xBF58476D1CE4E5B9
		}
	}
}

// sameTuple reports whether source classes a and b map to the same codes.
func sameTuple(src *classes, maps [][]int32, a, b int) bool {
	for i, m := range maps {
		if m[src.code(i, a)] != m[src.code(i, b)] {
			return false
		}
	}
	return true
}
