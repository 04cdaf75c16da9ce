package generalize

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"

	"sanitizer/fault"

	"sanitizer/internal/safe"
)

// Mondrian is the result of strict multidimensional partitioning (LeFevre, DeWitt,
// Ramakrishnan 2006, "Mondrian multidimensional k-anonymity"): every record's partition
// and what each partition releases.
type Mondrian struct {
	Class  []int32     // per record: its partition (0 … len(Sizes)−1)
	Covers ClassCovers // what every partition releases, the dictionaries in order of first use
	Sizes  []int       // records per partition
	// Persons is the distinct persons of every partition when the table has a privacy
	// unit (nil without one). A person's records may lie in several partitions.
	Persons []int
	Splits  int // partitions that were split on the way
}

// MondrianSearch partitions the table top-down. values[j] holds the numeric value of
// every leaf of quasi-identifier j for a numeric column (integers, floats, dates), nil
// for a categorical one. A partition is split on the dimension of widest normalized
// range (numeric: the range of its values over the table's; categorical: the leaves
// under its lowest covering hierarchy node, over the column's, less one each) that
// allows a split: a numeric dimension at its median (records ≤ median, then > median;
// if that leaves one side empty, < median and ≥ median), a categorical one into the
// children of its covering node that hold records. A split is allowed only when every
// resulting partition meets k and the l-diversity and t-closeness requirements of opt;
// with a privacy unit (t.Unit), k counts a partition's distinct persons, and
// l-diversity, t-closeness and β-likeness the shares of its persons who hold each
// value (a person holds a value one of their records in the partition has): no two
// partitions get the same covers (they differ in the dimension of the split that
// parted them), so every released class is one partition, whose persons were decided;
// partitions that no dimension can split are released: numeric quasi-identifiers as
// the range of their values, categorical ones as the lowest hierarchy node covering
// them. Nothing is suppressed. Partitions are numbered by their first record, so the
// result does not depend on opt.Workers. If the whole table does not meet the models,
// the error matches fault.ErrUnattainable. A panic, on any of its goroutines, is
// returned as a safe.PanicError.
func MondrianSearch(ctx context.Context, t *Table, values [][]float64, opt Options) (res *Mondrian, err error) {
	err = safe.Call(func() error {
		res, err = mondrianSearch(ctx, t, values, opt)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// mondrianSearch is MondrianSearch, its panics not recovered.
func mondrianSearch(ctx context.Context, t *Table, values [][]float64, opt Options) (*Mondrian, error) {
	if err := t.validate(); err != nil {
		return nil, err
	}
	if opt.K < 1 {
		return nil, fmt.Errorf("k must be at least 1, got %d", opt.K)
	}
	if len(values) != len(t.Columns) {
		return nil, fmt.Errorf("%d value lists for %d quasi-identifiers", len(values), len(t.Columns))
	}
	if opt.Population != nil {
		return nil, fmt.Errorf("δ-presence and k-map against a population are decided on full-domain classes, not on Mondrian's partitions")
	}
	m, err := newModels(t, opt)
	if err != nil {
		return nil, err
	}
	dims := make([]*dim, len(t.Columns))
	for j, c := range t.Columns {
		if dims[j], err = newDim(c, values[j]); err != nil {
			return nil, fmt.Errorf("column %q: %w", c.Name, err)
		}
	}
	rows := make([]int32, t.Rows)
	for r := range rows {
		rows[r] = int32(r)
	}
	q := len(dims)
	ms := &mondrian{t: t, m: m, k: opt.K, dims: dims, rows: rows, dict: make([][]Cover, q), seen: make([]map[Cover]int32, q)}
	for j := range q {
		ms.seen[j] = map[Cover]int32{}
	}
	ms.checkers.New = func() any { return &partChecker{c: m.checker()} }
	if !ms.holds(rows) {
		if t.Unit != nil {
			persons := ms.checkers.Get().(*partChecker).distinctPersons(t.Unit, rows, 0)
			return nil, fault.Unattainable("the whole table of %d records and %d persons does not meet k=%d%s: no partition can", t.Rows, persons, opt.K, ms.modelsText())
		}
		return nil, fault.Unattainable("the whole table of %d records does not meet k=%d%s: no partition can", t.Rows, opt.K, ms.modelsText())
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	ms.g, ms.ctx = g, gctx
	g.Go(safe.Go(func() error { return ms.split(rows) }))
	if err := g.Wait(); err != nil {
		return nil, err
	}
	ms.seen = nil
	return ms.result(), nil
}

// result numbers the partitions by their first record and the values of each column's
// dictionary by their first use in that order: the same whatever the scheduling.
func (ms *mondrian) result() *Mondrian {
	slices.SortFunc(ms.parts, func(a, b part) int { return int(a.first - b.first) })
	q := len(ms.dims)
	res := &Mondrian{Class: make([]int32, ms.t.Rows), Sizes: make([]int, len(ms.parts)), Splits: int(ms.splits)}
	for i, p := range ms.parts {
		for _, r := range ms.rows[p.off : p.off+p.n] {
			res.Class[r] = int32(i)
		}
		res.Sizes[i] = int(p.n)
	}
	if u := ms.t.Unit; u != nil {
		pc := &partChecker{}
		res.Persons = make([]int, len(ms.parts))
		for i, p := range ms.parts {
			res.Persons[i] = pc.distinctPersons(u, ms.rows[p.off:p.off+p.n], 0)
		}
	}
	ms.rows = nil
	renumber := make([][]int32, q)
	res.Covers.Dict = make([][]Cover, q)
	for j := range q {
		renumber[j] = make([]int32, len(ms.dict[j]))
		for x := range renumber[j] {
			renumber[j][x] = -1
		}
		res.Covers.Dict[j] = make([]Cover, 0, len(ms.dict[j]))
	}
	res.Covers.Index = make([]int32, len(ms.parts)*q)
	for i, p := range ms.parts {
		for j := range q {
			x := ms.coverIdx[int(p.at)*q+j]
			if renumber[j][x] < 0 {
				renumber[j][x] = int32(len(res.Covers.Dict[j]))
				res.Covers.Dict[j] = append(res.Covers.Dict[j], ms.dict[j][x])
			}
			res.Covers.Index[i*q+j] = renumber[j][x]
		}
	}
	return res
}

// dim is one quasi-identifier prepared for partitioning: every leaf has a rank such
// that a numeric column's ranks follow its values (equal values, equal ranks) and a
// categorical column's every hierarchy node covers a contiguous run of ranks.
type dim struct {
	h       *Hierarchy
	codes   Codes
	numeric bool
	rank    []int32   // per leaf
	leafOf  []int32   // per rank: a leaf holding it
	value   []float64 // per rank (numeric)
	span    float64   // numeric: the range of the values present in the table
	leaves  int       // categorical: leaves of the hierarchy
	// Categorical: childIdx[l][code] is node (l, code)'s place among its parent's
	// children (in rank order), fanout[l][code] the number of children of (l, code).
	childIdx, fanout [][]int32
}

func newDim(c Column, values []float64) (*dim, error) {
	h := c.Hierarchy
	n := h.Leaves()
	d := &dim{h: h, codes: c.Codes, numeric: values != nil, rank: make([]int32, n), leaves: n}
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	if d.numeric {
		if len(values) != n {
			return nil, fmt.Errorf("%d values for %d leaves", len(values), n)
		}
		slices.SortStableFunc(order, func(a, b int32) int {
			switch {
			case values[a] < values[b]:
				return -1
			case values[a] > values[b]:
				return 1
			}
			return 0
		})
		r := int32(-1)
		for i, leaf := range order {
			if i == 0 || values[leaf] != values[order[i-1]] {
				r++
				d.leafOf = append(d.leafOf, leaf)
				d.value = append(d.value, values[leaf])
			}
			d.rank[leaf] = r
		}
		lo, hi := int32(len(d.value)), int32(-1)
		for i := range c.Codes.Len() {
			x := d.rank[c.Codes.At(i)]
			lo, hi = min(lo, x), max(hi, x)
		}
		if hi >= lo {
			d.span = d.value[hi] - d.value[lo]
		}
		return d, nil
	}
	// Leaves in the order of their ancestors from the top down: every node's leaves
	// are then consecutive.
	top := h.Height() - 1
	slices.SortStableFunc(order, func(a, b int32) int {
		for l := top; l >= 1; l-- {
			if x, y := h.Code(l, a), h.Code(l, b); x != y {
				return int(x - y)
			}
		}
		return int(a - b)
	})
	d.leafOf = order
	for r, leaf := range order {
		d.rank[leaf] = int32(r)
	}
	d.childIdx, d.fanout = make([][]int32, top+1), make([][]int32, top+1)
	for l := 0; l <= top; l++ {
		d.childIdx[l] = make([]int32, h.Size(l))
		d.fanout[l] = make([]int32, h.Size(l))
		for i := range d.childIdx[l] {
			d.childIdx[l][i] = -1
		}
	}
	for _, leaf := range order {
		for l := 0; l < top; l++ {
			node, parent := h.Code(l, leaf), h.Code(l+1, leaf)
			if d.childIdx[l][node] < 0 {
				d.childIdx[l][node] = d.fanout[l+1][parent]
				d.fanout[l+1][parent]++
			}
		}
	}
	return d, nil
}

// key is record r's rank.
func (d *dim) key(r int32) int32 { return d.rank[d.codes.At(int(r))] }

// cover is the lowest hierarchy node over the leaves at ranks lo and hi (categorical),
// or the range between them (numeric).
func (d *dim) cover(lo, hi int32) Cover {
	a, b := d.leafOf[lo], d.leafOf[hi]
	if d.numeric {
		return Cover{Level: -1, Lo: a, Hi: b}
	}
	for l := 0; l < d.h.Height(); l++ {
		if x := d.h.Code(l, a); x == d.h.Code(l, b) {
			return Cover{Level: int32(l), Code: x}
		}
	}
	return Cover{Level: int32(d.h.Height() - 1)} // the single top node
}

// width is the normalized range of a partition whose ranks run from lo to hi.
func (d *dim) width(lo, hi int32) float64 {
	if d.numeric {
		if d.span == 0 {
			return 0
		}
		return (d.value[hi] - d.value[lo]) / d.span
	}
	if d.leaves < 2 {
		return 0
	}
	c := d.cover(lo, hi)
	return float64(d.h.LeafCount(int(c.Level), c.Code)-1) / float64(d.leaves-1)
}

// mondrian is one run of MondrianSearch.
type mondrian struct {
	t        *Table
	m        *models
	k        int
	dims     []*dim
	g        *errgroup.Group
	ctx      context.Context
	checkers sync.Pool // *partChecker

	// rows is every record, reordered in place by the splits: each partition is a run
	// of it (recovered from a run's capacity, see release).
	rows []int32

	mu     sync.Mutex
	parts  []part
	splits int64
	// Each column's distinct released values (dict, and seen to find them) and, per
	// released partition in the order of release, its values' places in dict.
	dict     [][]Cover
	seen     []map[Cover]int32
	coverIdx []int32
}

// part is a released partition: rows[off:off+n], released at the at-th release.
type part struct {
	first, off, n, at int32
}

// maxPooledKeys bounds the scratch a pooled partChecker keeps: the few partitions
// larger than this allocate their own, so that the scratch of the first splits (as long
// as the table) is not held to the end of the partitioning.
const maxPooledKeys = 1 << 20

// keepKeys keeps keys as the checker's scratch unless it is larger than maxPooledKeys.
func (pc *partChecker) keepKeys(keys []int32) {
	if cap(keys) > maxPooledKeys {
		keys = nil
	}
	pc.keys = keys
}

// partChecker holds one goroutine's scratch for deciding the models on a partition.
type partChecker struct {
	c          *checker
	count      [][]int32 // per sensitive column, per value
	vals, cnts [][]int32
	keys       []int32
	pairs      []uint64 // personValues' (person, value) pairs
	hist       []int32  // medianByCount's counts
	// stamp[p] == gen when person p was seen in the current count (distinctPersons):
	// a count needs no clearing, but for one in 2³²−1, when gen wraps around.
	stamp []uint32
	gen   uint32
}

// distinctPersons counts the distinct persons of u among rows, stopping as soon as
// there are stop of them (stop ≤ 0: counting them all).
func (pc *partChecker) distinctPersons(u *Unit, rows []int32, stop int) int {
	if len(pc.stamp) != u.Persons {
		pc.stamp, pc.gen = make([]uint32, u.Persons), 0
	}
	if pc.gen++; pc.gen == 0 {
		clear(pc.stamp)
		pc.gen = 1
	}
	switch c := u.Codes; {
	case c.u8 != nil:
		return distinctOf(c.u8, rows, pc.stamp, pc.gen, stop)
	case c.u16 != nil:
		return distinctOf(c.u16, rows, pc.stamp, pc.gen, stop)
	default:
		return distinctOf(c.i32, rows, pc.stamp, pc.gen, stop)
	}
}

// distinctOf is distinctPersons for one code width: the codes whose stamp is not gen
// yet are counted and stamped.
func distinctOf[T uint8 | uint16 | int32](codes []T, rows []int32, stamp []uint32, gen uint32, stop int) int {
	n := 0
	for _, r := range rows {
		if p := codes[r]; stamp[p] != gen {
			stamp[p] = gen
			if n++; n == stop {
				return n
			}
		}
	}
	return n
}

func (ms *mondrian) modelsText() string {
	if ms.m.any() {
		return " and the l-diversity/t-closeness requirements"
	}
	return ""
}

// holds reports whether a set of records may form a partition: at least k records or,
// with a privacy unit, k distinct persons (fewer than k records cannot hold them), and
// the models.
func (ms *mondrian) holds(rows []int32) bool {
	if len(rows) < ms.k {
		return false
	}
	u := ms.t.Unit
	if u == nil && !ms.m.any() {
		return true
	}
	pc := ms.checkers.Get().(*partChecker)
	defer ms.checkers.Put(pc)
	stop := ms.k // with models in persons, every person counted: their shares read it
	if ms.m.any() {
		stop = 0
	}
	persons := 0
	if u != nil {
		if persons = pc.distinctPersons(u, rows, stop); persons < ms.k {
			return false
		}
	}
	if !ms.m.any() {
		return true
	}
	ns := len(ms.t.Sensitive)
	if pc.count == nil {
		pc.count = make([][]int32, ns)
		pc.vals, pc.cnts = make([][]int32, ns), make([][]int32, ns)
		for _, c := range ms.m.cols {
			pc.count[c] = make([]int32, ms.t.Sensitive[c].Values)
		}
	}
	if u != nil {
		pc.personValues(u, rows, ms.m.cols, ms.t.Sensitive)
		return pc.c.holdsIn(pc.vals, pc.cnts, int32(persons))
	}
	for _, c := range ms.m.cols {
		codes, cnt := ms.t.Sensitive[c].Codes, pc.count[c]
		vals := pc.vals[c][:0]
		for _, r := range rows {
			v := codes.At(int(r))
			if cnt[v] == 0 {
				vals = append(vals, v)
			}
			cnt[v]++
		}
		pc.vals[c], pc.cnts[c] = vals, sortedCounts(vals, cnt, pc.cnts[c][:0])
	}
	return pc.c.holds(pc.vals, pc.cnts)
}

// personValues sets, for every sensitive column c of cols, pc.vals[c] to the values
// the persons of rows hold (a person holds a value one of their records among rows
// has), in order, and pc.cnts[c] to how many of those persons hold each.
func (pc *partChecker) personValues(u *Unit, rows []int32, cols []int, sens []Sensitive) {
	for _, c := range cols {
		codes, cnt := sens[c].Codes, pc.count[c]
		pairs := pc.pairs[:0]
		for _, r := range rows {
			pairs = append(pairs, uint64(u.Codes.At(int(r)))<<32|uint64(codes.At(int(r))))
		}
		slices.Sort(pairs) // each (person, value) once after this
		vals := pc.vals[c][:0]
		for i, pv := range pairs {
			if i > 0 && pairs[i-1] == pv {
				continue
			}
			v := int32(uint32(pv))
			if cnt[v] == 0 {
				vals = append(vals, v)
			}
			cnt[v]++
		}
		pc.vals[c], pc.cnts[c], pc.pairs = vals, sortedCounts(vals, cnt, pc.cnts[c][:0]), pairs
	}
}

// sortedCounts sorts vals, the values a tally met, appends to cnts each one's count
// in cnt, in that order, and zeroes cnt for the next tally.
func sortedCounts(vals, cnt, cnts []int32) []int32 {
	slices.Sort(vals)
	for _, v := range vals {
		cnts = append(cnts, cnt[v])
		cnt[v] = 0
	}
	return cnts
}

// split partitions rows (owned by this call) or releases them.
func (ms *mondrian) split(rows []int32) error {
	for {
		if err := ms.ctx.Err(); err != nil {
			return err
		}
		lo, hi := ms.ranges(rows)
		groups := ms.bestSplit(rows, lo, hi)
		if groups == nil {
			return ms.release(rows, lo, hi)
		}
		ms.mu.Lock()
		ms.splits++
		ms.mu.Unlock()
		// Hand all groups but the last to other goroutines when some are free; go on
		// with the last here.
		for _, gr := range groups[:len(groups)-1] {
			if !ms.g.TryGo(safe.Go(func() error { return ms.split(gr) })) {
				if err := ms.split(gr); err != nil {
					return err
				}
			}
		}
		rows = groups[len(groups)-1]
	}
}

// ranges is the smallest and largest rank of the records in every dimension.
func (ms *mondrian) ranges(rows []int32) (lo, hi []int32) {
	lo, hi = make([]int32, len(ms.dims)), make([]int32, len(ms.dims))
	for j, d := range ms.dims {
		lo[j], hi[j] = rankRange(d.codes, d.rank, rows)
	}
	return lo, hi
}

// rankRange is the smallest and largest rank of the rows' codes, one loop per code
// width (this is the partitioning's hottest loop).
func rankRange(c Codes, rank []int32, rows []int32) (lo, hi int32) {
	switch {
	case c.u8 != nil:
		return rankRangeOf(c.u8, rank, rows)
	case c.u16 != nil:
		return rankRangeOf(c.u16, rank, rows)
	}
	return rankRangeOf(c.i32, rank, rows)
}

func rankRangeOf[T uint8 | uint16 | int32](codes []T, rank []int32, rows []int32) (lo, hi int32) {
	lo = rank[codes[rows[0]]]
	hi = lo
	for _, r := range rows[1:] {
		x := rank[codes[r]]
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}

// bestSplit tries the dimensions in decreasing normalized width (ties: column order)
// and returns the groups of the first allowed split, rows reordered so that each group
// is a contiguous run of rows; nil when none is allowed.
func (ms *mondrian) bestSplit(rows []int32, lo, hi []int32) [][]int32 {
	if len(rows) < 2*ms.k { // two partitions of k records (or persons, each of a record) at least
		return nil
	}
	type cand struct {
		j int
		w float64
	}
	var cands []cand
	for j, d := range ms.dims {
		if w := d.width(lo[j], hi[j]); w > 0 {
			cands = append(cands, cand{j, w})
		}
	}
	slices.SortStableFunc(cands, func(a, b cand) int {
		switch {
		case a.w > b.w:
			return -1
		case a.w < b.w:
			return 1
		}
		return 0
	})
	for _, c := range cands {
		var groups [][]int32
		if ms.dims[c.j].numeric {
			groups = ms.splitMedian(rows, ms.dims[c.j], lo[c.j], hi[c.j])
		} else {
			groups = ms.splitChildren(rows, ms.dims[c.j], lo[c.j], hi[c.j])
		}
		if groups == nil {
			continue
		}
		ok := true
		for _, gr := range groups {
			if !ms.holds(gr) {
				ok = false
				break
			}
		}
		if ok {
			return groups
		}
		// The rejected split reordered the rows: restore their increasing order (the
		// partitions it happens to are small, near the leaves of the recursion).
		slices.Sort(rows)
	}
	return nil
}

// splitMedian reorders rows into those with a key ≤ the median and the rest (or < and
// ≥ when the first rule leaves the second side empty); nil when a side stays empty.
func (ms *mondrian) splitMedian(rows []int32, d *dim, lo, hi int32) [][]int32 {
	pc := ms.checkers.Get().(*partChecker)
	keys := append(pc.keys[:0], make([]int32, len(rows))...)
	var med int32
	if int(hi-lo) < len(rows) {
		med, pc.hist = d.medianByCount(rows, lo, hi, pc.hist)
	} else {
		for i, r := range rows {
			keys[i] = d.key(r)
		}
		med = selectKth(keys, (len(keys)-1)/2)
	}
	// keys is free again: the scratch of the stable partitions.
	defer func() {
		pc.keepKeys(keys)
		ms.checkers.Put(pc)
	}()
	if n := partitionRows(rows, keys, func(r int32) bool { return d.key(r) <= med }); n < len(rows) {
		return [][]int32{rows[:n], rows[n:]}
	}
	if n := partitionRows(rows, keys, func(r int32) bool { return d.key(r) < med }); n > 0 {
		return [][]int32{rows[:n], rows[n:]}
	}
	return nil
}

// medianByCount is the median rank of rows (the ((len(rows)−1)/2)-th smallest, as
// selectKth finds it), all of whose ranks lie in lo..hi, found by counting the ranks:
// one pass over the records instead of a copy of their keys and the passes of a
// selection, when the ranks are fewer than the records. hist is scratch (returned,
// possibly grown, for the next call).
func (d *dim) medianByCount(rows []int32, lo, hi int32, hist []int32) (int32, []int32) {
	hist = append(hist[:0], make([]int32, int(hi-lo)+1)...)
	for _, r := range rows {
		hist[d.key(r)-lo]++
	}
	k, seen := (len(rows)-1)/2, 0
	for x, c := range hist {
		if seen += int(c); seen > k {
			return lo + int32(x), hist
		}
	}
	return hi, hist // not reached: the counts add up to len(rows)
}

// splitChildren reorders rows by the child of their covering node they fall under
// (a stable counting sort, children in rank order); nil when one child holds them all.
func (ms *mondrian) splitChildren(rows []int32, d *dim, lo, hi int32) [][]int32 {
	c := d.cover(lo, hi)
	if c.Level < 1 {
		return nil
	}
	up, idx := d.h.up[c.Level-1], d.childIdx[c.Level-1]
	counts := make([]int, d.fanout[c.Level][c.Code]+1)
	for _, r := range rows {
		counts[idx[up[d.codes.At(int(r))]]+1]++
	}
	used := 0
	for _, n := range counts[1:] {
		if n > 0 {
			used++
		}
	}
	if used < 2 {
		return nil
	}
	for i := 1; i < len(counts); i++ {
		counts[i] += counts[i-1]
	}
	pc := ms.checkers.Get().(*partChecker)
	tmp := append(pc.keys[:0], make([]int32, len(rows))...)
	next := slices.Clone(counts)
	for _, r := range rows {
		k := idx[up[d.codes.At(int(r))]]
		tmp[next[k]] = r
		next[k]++
	}
	copy(rows, tmp)
	pc.keepKeys(tmp)
	ms.checkers.Put(pc)
	groups := make([][]int32, 0, used)
	for i := 0; i+1 < len(counts); i++ {
		if counts[i+1] > counts[i] {
			groups = append(groups, rows[counts[i]:counts[i+1]])
		}
	}
	return groups
}

// release records a partition that is not split. Every run of rows that split handles
// is a slice of ms.rows whose capacity reaches to the end of ms.rows, so the run
// starts where its capacity says (checked: an error otherwise).
func (ms *mondrian) release(rows []int32, lo, hi []int32) error {
	off := cap(ms.rows) - cap(rows)
	if off < 0 || off+len(rows) > len(ms.rows) || &ms.rows[off] != &rows[0] {
		return fault.Internalf("a partition's records are not a run of the row order")
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	ms.parts = append(ms.parts, part{first: rows[0], off: int32(off), n: int32(len(rows)), at: int32(len(ms.parts))}) // rows ascend
	for j, d := range ms.dims {
		cv := d.cover(lo[j], hi[j])
		x, ok := ms.seen[j][cv]
		if !ok {
			x = int32(len(ms.dict[j]))
			ms.dict[j] = append(ms.dict[j], cv)
			ms.seen[j][cv] = x
		}
		ms.coverIdx = append(ms.coverIdx, x)
	}
	return nil
}

// partitionRows moves the rows for which in holds to the front, both sides keeping
// their order, and returns how many; scratch holds at least len(rows). Rows stay in
// increasing order within every partition, so that passes over a partition read the
// columns forwards.
func partitionRows(rows, scratch []int32, in func(int32) bool) int {
	n, m := 0, 0
	for _, r := range rows {
		if in(r) {
			rows[n] = r
			n++
		} else {
			scratch[m] = r
			m++
		}
	}
	copy(rows[n:], scratch[:m])
	return n
}

// selectKth returns the k-th smallest key (0-based), reordering keys.
func selectKth(keys []int32, k int) int32 {
	lo, hi := 0, len(keys)-1
	for lo < hi {
		// Median of three as the pivot, then a three-way partition.
		mid := lo + (hi-lo)/2
		a, b, c := keys[lo], keys[mid], keys[hi]
		p := max(min(a, b), min(max(a, b), c))
		lt, i, gt := lo, lo, hi
		for i <= gt {
			switch x := keys[i]; {
			case x < p:
				keys[lt], keys[i] = x, keys[lt]
				lt++
				i++
			case x > p:
				keys[gt], keys[i] = x, keys[gt]
				gt--
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt - 1
		case k > gt:
			lo = gt + 1
		default:
			return p
		}
	}
	return keys[k]
}
