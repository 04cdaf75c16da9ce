package dphist

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"

	"sanitizer/internal/safe"
)

// Bound holds the contribution caps of a privacy unit in one output: at most Cells
// distinct cells per unit (0: no cap on cells) and at most Rows rows per unit, or per
// unit and cell when Cells is set (0: no cap; with Cells set and Rows 0, one row per
// unit and cell).
//
// The rows a unit keeps are a uniformly random choice (pseudo-random, from Seed) among
// its rows, or cells, of the allowed size, and depend only on that unit's own rows:
// adding or removing the rows of other units never changes them. The caps, and so the
// sensitivity, hold for every seed, which need not be secret: it only spreads the
// choice evenly, so that no row is favoured.
type Bound struct {
	Cells int
	Rows  int
	Seed  uint64
}

// Check reports a bound that caps nothing or has a negative cap.
func (b Bound) Check() error {
	switch {
	case b.Cells < 0 || b.Rows < 0:
		return fmt.Errorf("contribution bounds must not be negative, got %d cells and %d rows", b.Cells, b.Rows)
	case b.Cells == 0 && b.Rows == 0:
		return fmt.Errorf("a contribution bound needs a cap on cells or on rows per privacy unit")
	}
	return nil
}

// Sensitivity returns the per-output sensitivity a bound gives to counts under
// add-remove neighbours: a unit changes at most L0 cells, each by at most LInf.
// Cells set: (Cells, max(Rows,1)); Rows only: (1, Rows) — a unit keeps at most Rows
// rows in total, so its L1 and L2 contributions are both at most Rows. For a bound that
// Check rejects no sensitivity holds and it returns (0, 0), which Mechanism.Check
// refuses.
func (b Bound) Sensitivity() (l0, linf int64) {
	if b.Check() != nil {
		return 0, 0
	}
	if b.Cells > 0 {
		return int64(b.Cells), int64(max(b.Rows, 1))
	}
	return 1, int64(b.Rows)
}

// Keep decides which rows survive the bound. unit[r] is a 64-bit hash of row r's
// privacy-unit id (equal ids, equal hashes; the caller computes it), cell[r] the row's
// cell in this output (any uint64 key; equal cells, equal keys). keep must have
// len(unit) entries; it is overwritten. It returns the number of rows kept.
//
// With Cells set, each unit keeps min(Cells, its distinct cells) of its cells, and in
// each kept cell min(Rows, the unit's rows there) of those rows (Rows 0 counting as 1);
// without, each unit keeps min(Rows, its rows) of its rows. Two units whose ids hash
// equal are bounded as one, which breaks the bound for both: callers check with
// SameUnits first.
func (b Bound) Keep(unit, cell []uint64, keep []bool) (int, error) {
	if err := b.Check(); err != nil {
		return 0, err
	}
	n := len(unit)
	if len(cell) != n || len(keep) != n {
		return 0, fmt.Errorf("contribution bound: %d unit hashes, %d cells and %d keep flags", n, len(cell), len(keep))
	}
	if n > math.MaxInt32 {
		return 0, fmt.Errorf("contribution bound: %d rows, more than %d", n, math.MaxInt32)
	}
	if n == 0 {
		return 0, nil
	}
	// How the choice is made, and why it is stable and uniform.
	//
	// Rows are grouped by unit with stable bucket sorts on g = mix(unit hash) (mix, the
	// splitmix64 finalizer, is a bijection, so equal g means equal hash, and its output
	// spreads over the buckets whatever the hashes): a unit's rows end up together in
	// input order, and a row's position among them is its ordinal among the unit's rows.
	// Inserting or removing other units' rows anywhere changes neither which rows a unit
	// has nor their ordinals. Each candidate (a row, or a distinct cell) gets the priority
	// mix(h + x·φ), where φ is the 64-bit golden ratio, x the row's ordinal (or the cell
	// key) and h = mix(mix(Seed ⊕ tag) ⊕ g), with separate tags for rows and cells; the
	// candidates with the lowest (priority, x) are kept. Everything that enters a unit's
	// decision — Seed, its hash, its cells, its ordinals — is the unit's own, which makes
	// the transformation stable.
	//
	// For a fixed unit, x ↦ priority is a bijection (mix is invertible and φ odd), so a
	// unit's candidates never tie and the tie-break by x is only there to make the order
	// total. Treating mix as a random function of the seed, the priorities of a unit's m
	// candidates are exchangeable: each of the m! orders is equally likely, hence the k
	// lowest are each k-subset with probability 1/C(m, k).
	//
	// The rows are scattered into up to 2¹¹ buckets by the top bits of g, keeping input
	// order in each; each bucket (a few thousand rows for 10⁷, so in cache) is sorted by
	// g with a stable radix sort and decided run by run; the flags, kept in bucket order,
	// are gathered back into input order by walking the input again, which reads each
	// bucket in order. Large inputs are cut into parts done in parallel: part p of the
	// input (rows n·p/parts to n·(p+1)/parts) fills each bucket after the parts before
	// it, and the buckets are shared out among the parts; the result is the same.
	l := newBoundLayout(unit)
	keys, cells := l.scatter(unit, cell, b.Cells > 0)
	flags, kept := l.decide(b, keys, cells)
	l.gather(unit, flags, keep)
	return kept, nil
}

// boundLayout is where Keep's rows go: the buckets (by the top bits of their mixed unit
// hash) and, per part of the input, where its rows of each bucket start.
type boundLayout struct {
	n, parts  int
	topBits   int
	shift     int     // a row's bucket is its mixed hash >> shift (64: one bucket)
	off       [][]int // off[p][d]: where part p's rows of bucket d go
	starts    []int   // starts[d]: bucket d's first row; starts[1<<topBits] = n
	maxBucket int     // the most rows in a bucket
}

// newBoundLayout counts the rows of each bucket per part (in parallel) and lays the
// buckets out one after another, each part's rows of a bucket after the parts before.
func newBoundLayout(unit []uint64) *boundLayout {
	n := len(unit)
	l := &boundLayout{n: n, parts: 1, topBits: min(boundBits, max(bits.Len(uint(n))-10, 0))}
	l.shift = 64 - l.topBits // a shift by 64 gives 0: one bucket
	if n >= boundParallel {
		l.parts = min(max(runtime.GOMAXPROCS(0), 2), boundMaxParts)
	}
	buckets := 1 << l.topBits
	l.off = make([][]int, l.parts)
	boundEach(l.parts, func(p int) {
		c := make([]int, buckets)
		lo, hi := l.rows(p)
		for _, u := range unit[lo:hi] {
			c[boundMix(u)>>l.shift]++
		}
		l.off[p] = c
	})
	l.starts = make([]int, buckets+1)
	for d := range buckets {
		at := l.starts[d]
		for _, o := range l.off {
			o[d], at = at, at+o[d]
		}
		l.starts[d+1] = at
		l.maxBucket = max(l.maxBucket, at-l.starts[d])
	}
	return l
}

// rows returns part p's rows: n·p/parts to n·(p+1)/parts.
func (l *boundLayout) rows(p int) (lo, hi int) {
	return int(int64(l.n) * int64(p) / int64(l.parts)), int(int64(l.n) * int64(p+1) / int64(l.parts))
}

// scatter returns the rows' mixed unit hashes, and their cells when withCells, in
// bucket order (input order within a bucket).
func (l *boundLayout) scatter(unit, cell []uint64, withCells bool) (keys, cells []uint64) {
	keys = make([]uint64, l.n)
	if withCells {
		cells = make([]uint64, l.n)
	}
	boundEach(l.parts, func(p int) {
		next := slices.Clone(l.off[p])
		lo, hi := l.rows(p)
		if cells == nil {
			for _, u := range unit[lo:hi] {
				g := boundMix(u)
				j := &next[g>>l.shift]
				keys[*j] = g
				*j++
			}
			return
		}
		for r := lo; r < hi; r++ {
			g := boundMix(unit[r])
			j := &next[g>>l.shift]
			keys[*j], cells[*j] = g, cell[r]
			*j++
		}
	})
	return keys, cells
}

// decide decides the rows bucket by bucket, each part the buckets starting in its share
// of the rows: it returns their flags in bucket order and the number kept.
func (l *boundLayout) decide(b Bound, keys, cells []uint64) ([]bool, int) {
	flags := make([]bool, l.n)
	kept := make([]int, l.parts)
	buckets := 1 << l.topBits
	boundEach(l.parts, func(p int) {
		lo, hi := l.rows(p)
		d0, _ := slices.BinarySearch(l.starts[:buckets], lo)
		d1, _ := slices.BinarySearch(l.starts[:buckets], hi)
		if p == l.parts-1 {
			d1 = buckets
		}
		kept[p] = b.keepBuckets(keys, cells, flags, l.starts[d0:d1+1], l.shift, l.maxBucket)
	})
	total := 0
	for _, k := range kept {
		total += k
	}
	return flags, total
}

// gather sets keep, in input order, to the flags in bucket order, walking the input
// again (which reads each bucket in order). It uses up l.off.
func (l *boundLayout) gather(unit []uint64, flags, keep []bool) {
	boundEach(l.parts, func(p int) {
		next := l.off[p]
		lo, hi := l.rows(p)
		for r := lo; r < hi; r++ {
			j := &next[boundMix(unit[r])>>l.shift]
			keep[r] = flags[*j]
			*j++
		}
	})
}

// Parallelism: inputs of boundParallel rows or more are cut into up to boundMaxParts
// parts.
const (
	boundParallel = 1 << 15
	boundMaxParts = 4
)

// boundEach runs f(0), …, f(parts−1), in parallel when parts > 1. A worker's panic is
// raised again on the caller's goroutine (safe.MustParallel).
func boundEach(parts int, f func(p int)) {
	if parts == 1 {
		f(0)
		return
	}
	safe.MustParallel(parts, f)
}

// keepBuckets decides the rows of the buckets starting at starts[0], …, starts[len−2]
// (each ending where the next starts), whose keys share their top 64−left bits: it sets
// their flags and returns the number kept.
func (b Bound) keepBuckets(keys, cells []uint64, flags []bool, starts []int, left, maxBucket int) int {
	if len(starts) < 2 {
		return 0
	}
	ord := make([]int32, maxBucket)
	srt := boundSorter{tk: make([]uint64, maxBucket), to: make([]int32, maxBucket)}
	srt.block = 1 << boundWidth(maxBucket, left)
	srt.cnt = make([]int32, boundDepth*srt.block)
	rows := max(b.Rows, 1)
	var sel boundSel
	var cs boundCellScratch
	rowSeed := boundMix(b.Seed ^ boundRowTag)
	cellSeed := boundMix(b.Seed ^ boundCellTag)
	kept := 0
	for d := range len(starts) - 1 {
		lo, hi := starts[d], starts[d+1]
		if lo == hi {
			continue
		}
		k, o := keys[lo:hi], ord[:hi-lo]
		for i := range o {
			o[i] = int32(i)
		}
		srt.sort(k, o, left, srt.cnt)
		flag := flags[lo:hi]
		for i := 0; i < len(k); {
			g := k[i]
			j := i + 1
			for j < len(k) && k[j] == g {
				j++
			}
			hr := boundMix(rowSeed ^ g)
			if b.Cells == 0 {
				kept += boundRows(o[i:j], hr, b.Rows, &sel, flag)
			} else {
				kept += boundCells(o[i:j], cells[lo:hi], &cs, boundMix(cellSeed^g), hr, b.Cells, rows, &sel, flag)
			}
			i = j
		}
	}
	return kept
}

const (
	boundGolden  = 0x9e3779b97f4a7c15
	boundRowTag  = 0x243f6a8885a308d3 // π's fraction bits
	boundCellTag = 0x13198a2e03707344 // and the next 64
)

// boundMix is the splitmix64 finalizer, a bijection on 64-bit words with full avalanche.
func boundMix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// boundPrio is the priority of candidate x (an ordinal or a cell key) in the stream h.
func boundPrio(h, x uint64) uint64 { return boundMix(h + x*boundGolden) }

// boundRows keeps min(k, len(run)) of a unit's rows, run listing their positions in flag
// in input order: it sets their flags and returns the number kept.
func boundRows(run []int32, h uint64, k int, sel *boundSel, flag []bool) int {
	m := len(run)
	if m <= k {
		for _, r := range run {
			flag[r] = true
		}
		return m
	}
	if m <= 16 {
		// A unit's priorities are distinct (x ↦ boundPrio(h, x) is a bijection), so the
		// ordinals' ranks by priority alone are their ranks by (priority, ordinal).
		var pr [16]uint64
		for o := range m {
			pr[o] = boundPrio(h, uint64(o))
		}
		for o, r := range run {
			rank := 0
			for _, q := range pr[:m] {
				if q < pr[o] {
					rank++
				}
			}
			flag[r] = rank < k
		}
		return k
	}
	prs := boundGrow(&sel.pairs, m)
	for o := range prs {
		x := uint64(o)
		prs[o] = boundPair{boundPrio(h, x), x}
	}
	th := sel.kth(prs, k)
	for o, r := range run {
		flag[r] = !th.less(prs[o])
	}
	return k
}

// boundCells keeps min(c, distinct) of a unit's cells, and in each min(k, rows there)
// rows, run listing the rows' positions in cell and flag in input order: it sets their
// flags and returns the number kept.
func boundCells(run []int32, cell []uint64, cs *boundCellScratch, hc, hr uint64, c, k int, sel *boundSel, flag []bool) int {
	m := len(run)
	if m <= c && m <= k {
		for _, r := range run {
			flag[r] = true
		}
		return m
	}
	items := boundGrow(&cs.items, m)
	for o, r := range run {
		items[o] = boundItem{cell[r], int32(o)}
	}
	if m <= 32 {
		for i := 1; i < m; i++ { // by cell; the order within a cell does not matter
			x := items[i]
			j := i
			for ; j > 0 && items[j-1].cell > x.cell; j-- {
				items[j] = items[j-1]
			}
			items[j] = x
		}
	} else {
		slices.SortFunc(items, func(a, b boundItem) int {
			if a.cell != b.cell {
				return cmp.Compare(a.cell, b.cell)
			}
			return cmp.Compare(a.ord, b.ord)
		})
	}
	cellPrs := boundGrow(&cs.pairs, m)[:0]
	for o := range items {
		if o == 0 || items[o].cell != items[o-1].cell {
			x := items[o].cell
			cellPrs = append(cellPrs, boundPair{boundPrio(hc, x), x})
		}
	}
	var th boundPair
	all := len(cellPrs) <= c
	if !all {
		th = sel.kth(cellPrs, c)
	}
	kept := 0
	for s, ci := 0, 0; s < m; ci++ {
		e := s + 1
		for e < m && items[e].cell == items[s].cell {
			e++
		}
		group := items[s:e]
		s = e
		if !all && th.less(cellPrs[ci]) {
			for _, it := range group {
				flag[run[it.ord]] = false
			}
			continue
		}
		if len(group) <= k {
			for _, it := range group {
				flag[run[it.ord]] = true
			}
			kept += len(group)
			continue
		}
		prs := boundGrow(&sel.pairs, len(group))
		for i, it := range group {
			x := uint64(it.ord)
			prs[i] = boundPair{boundPrio(hr, x), x}
		}
		th := sel.kth(prs, k)
		for i, it := range group {
			flag[run[it.ord]] = !th.less(prs[i])
		}
		kept += k
	}
	return kept
}

// boundGrow returns (*s)[:m], first growing *s to at least twice its capacity if it is
// shorter: scratch grows with the longest run seen, in few steps.
func boundGrow[T any](s *[]T, m int) []T {
	if cap(*s) < m {
		*s = make([]T, max(m, 2*cap(*s)))
	}
	return (*s)[:m]
}

// boundCellScratch is scratch for boundCells.
type boundCellScratch struct {
	items []boundItem
	pairs []boundPair
}

// boundItem is a row of a unit's run: its cell and its ordinal in the run.
type boundItem struct {
	cell uint64
	ord  int32
}

// boundPair is a candidate's priority and its ordinal or cell key, ordered
// lexicographically.
type boundPair struct{ p, x uint64 }

func (a boundPair) less(b boundPair) bool { return a.p < b.p || a.p == b.p && a.x < b.x }

// boundSel selects the least candidates; pairs is scratch for the caller, heap for kth.
type boundSel struct {
	pairs, heap []boundPair
}

// kth returns the k-th least of the distinct pairs prs, 0 < k < len(prs).
func (s *boundSel) kth(prs []boundPair, k int) boundPair {
	if len(prs) <= 16 {
		// The priorities of distinct candidates of a unit are distinct (x ↦ boundPrio(h,
		// x) is a bijection), so ranks by priority alone are ranks by pair.
		for _, a := range prs {
			rank := 0
			for _, b := range prs {
				if b.p < a.p {
					rank++
				}
			}
			if rank == k-1 {
				return a
			}
		}
	}
	// A max-heap of the k least so far.
	h := append(s.heap[:0], prs[:k]...)
	for i := range h {
		for j := i; j > 0; {
			p := (j - 1) / 2
			if !h[p].less(h[j]) {
				break
			}
			h[p], h[j] = h[j], h[p]
			j = p
		}
	}
	for _, e := range prs[k:] {
		if !e.less(h[0]) {
			continue
		}
		h[0] = e
		for i := 0; ; {
			l := 2*i + 1
			if l >= len(h) {
				break
			}
			if r := l + 1; r < len(h) && h[l].less(h[r]) {
				l = r
			}
			if !h[i].less(h[l]) {
				break
			}
			h[i], h[l] = h[l], h[i]
			i = l
		}
	}
	s.heap = h
	return h[0]
}

// Radix digits: the rows are first scattered by the top boundBits bits of their key; the
// buckets are then sorted on boundWidth bits at a time, at least 4 (or what is left),
// which bounds the depth of the recursion by boundDepth.
const (
	boundBits  = 11
	boundDepth = 64/4 + 1
)

// boundSorter sorts a bucket's keys; tk, to and cnt are scratch, cnt in blocks of
// block counters, one block a level of recursion.
type boundSorter struct {
	tk    []uint64
	to    []int32
	cnt   []int32
	block int
}

// boundWidth is the number of bits sorted on at once for s keys with left bits to sort:
// about log₂ s, so that most of the parts are of 0, 1 or 2 keys, and from 4 to 12.
func boundWidth(s, left int) int {
	return min(left, 12, max(bits.Len(uint(s)), 4))
}

// sort sorts the keys k, equal in the bits above bit left, stably by their lower bits,
// moving the ordinals o with them. cnt holds the blocks of this level and the ones below.
func (t *boundSorter) sort(k []uint64, o []int32, left int, cnt []int32) {
	for {
		s := len(k)
		if s <= 32 {
			boundInsertion(k, o)
			return
		}
		if left == 0 {
			return // all keys equal
		}
		width := boundWidth(s, left)
		shift := left - width
		mask := uint64(1)<<width - 1
		ends := cnt[:mask+1]
		clear(ends)
		for _, x := range k {
			ends[x>>shift&mask]++
		}
		if int(ends[k[0]>>shift&mask]) == s {
			left = shift // one digit for all
			continue
		}
		sum := int32(0)
		for d, c := range ends {
			ends[d] = sum
			sum += c
		}
		tk, to := t.tk[:s], t.to[:s]
		for i, x := range k {
			d := x >> shift & mask
			j := ends[d]
			ends[d]++
			tk[j], to[j] = x, o[i]
		}
		copy(k, tk)
		copy(o, to)
		lo := int32(0)
		for _, hi := range ends {
			switch {
			case hi-lo > 32:
				t.sort(k[lo:hi], o[lo:hi], shift, cnt[t.block:])
			case hi-lo > 1:
				boundInsertion(k[lo:hi], o[lo:hi])
			}
			lo = hi
		}
		return
	}
}

// boundInsertion sorts the keys k stably, moving the ordinals o with them.
func boundInsertion(k []uint64, o []int32) {
	for i := 1; i < len(k); i++ {
		x, y := k[i], o[i]
		j := i
		for ; j > 0 && k[j-1] > x; j-- {
			k[j], o[j] = k[j-1], o[j-1]
		}
		k[j], o[j] = x, y
	}
}
