package generalize

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"slices"
	"sort"

	"sanitizer/internal/safe"
)

// ErrIncompatible is matched (errors.Is) by the error of merging class tables whose
// columns differ: other quasi-identifiers, names, hierarchies or sensitive columns.
var ErrIncompatible = errors.New("class tables of different columns")

// ClassTable is the classes of the most specific node of a table, every
// quasi-identifier at its leaves: for every distinct combination of leaf codes among
// the records, the codes, the number of records, and per sensitive column the
// histogram of the records' values. It is all the search needs of the records, and
// what a table read in parts yields part by part: CountClasses counts one part,
// MergeClasses adds parts up, SearchClasses searches the sum, and NodeRecoding tells
// the records of any part whether they are suppressed at the chosen node.
//
// Leaf codes are the hierarchies' leaf indices and sensitive codes the caller's
// numbering of the values, so class tables of parts that share hierarchies and that
// numbering describe the same classes with the same codes.
//
// The classes are in canonical order, lexicographic by their leaf codes (the first
// quasi-identifier first), and a class's histogram lists its values in increasing
// order: the class tables of the same records are equal field by field (Equal,
// reflect.DeepEqual) however they were counted and merged.
//
// With a privacy unit (Table.Unit), a class table holds entries, not classes: one per
// class and person, the person's code a column after the quasi-identifiers (never
// generalized), its count the person's records in the class. Parts that number the
// persons alike merge exactly, however a person's records are spread among them; the
// search collapses a node's entries into its classes and their persons.
//
// Memory: per class, 4 bytes per quasi-identifier and 4 for the count; per sensitive
// column, 4 bytes per class and 8 per distinct value of the class. A class table is not
// modified once made: the functions that take one only read it, and may share its
// slices with what they return.
type ClassTable struct {
	meta   *Table    // Rows: the records counted; Columns and Sensitive without codes
	cols   [][]int32 // cols[i][j]: leaf code of quasi-identifier i of class j
	counts []int32   // counts[j]: records of class j
	hist   []*hist   // per sensitive column: class j's values (increasing) and their counts
}

// Len is the number of classes (0 for a nil or zero ClassTable).
func (ct *ClassTable) Len() int {
	if ct == nil {
		return 0
	}
	return len(ct.counts)
}

// Records is the number of records counted (0 for a nil or zero ClassTable).
func (ct *ClassTable) Records() int {
	if ct.check() != nil {
		return 0
	}
	return ct.meta.Rows
}

// Code, Count and Histogram read class j, 0 ≤ j < Len(), like an index of a slice.

// Code is the leaf code of quasi-identifier i of class j.
func (ct *ClassTable) Code(i, j int) int32 { return ct.cols[i][j] }

// Count is the number of records of class j.
func (ct *ClassTable) Count(j int) int { return int(ct.counts[j]) }

// Histogram is the histogram of sensitive column col among the records of class j: its
// values in increasing order and the records of each. The slices are the table's own:
// they must not be modified.
func (ct *ClassTable) Histogram(col, j int) (values, counts []int32) {
	h := ct.hist[col]
	lo, hi := h.off[j], h.off[j+1]
	return h.val[lo:hi:hi], h.cnt[lo:hi:hi]
}

// Columns are the quasi-identifiers (name and hierarchy; no codes) in table order.
func (ct *ClassTable) Columns() []Column {
	if ct.check() != nil {
		return nil
	}
	return slices.Clone(ct.meta.Columns)
}

// Sensitive are the sensitive columns (name, number of values and hierarchy; no codes)
// in table order.
func (ct *ClassTable) Sensitive() []Sensitive {
	if ct.check() != nil {
		return nil
	}
	return slices.Clone(ct.meta.Sensitive)
}

// Equal reports whether ct and o hold the same classes of the same columns.
func (ct *ClassTable) Equal(o *ClassTable) bool {
	if ct == nil || o == nil {
		return ct == o
	}
	if ct.check() != nil || o.check() != nil {
		return ct.check() != nil && o.check() != nil
	}
	if compatible(ct.meta, o.meta) != nil || ct.meta.Rows != o.meta.Rows || !slices.Equal(ct.counts, o.counts) {
		return false
	}
	for i := range ct.cols {
		if !slices.Equal(ct.cols[i], o.cols[i]) {
			return false
		}
	}
	for c, h := range ct.hist {
		g := o.hist[c]
		if !slices.Equal(h.off, g.off) || !slices.Equal(h.val, g.val) || !slices.Equal(h.cnt, g.cnt) {
			return false
		}
	}
	return true
}

// check reports a class table that was not made by CountClasses or MergeClasses.
func (ct *ClassTable) check() error {
	if ct == nil || ct.meta == nil {
		return errors.New("no class table (nil or zero ClassTable)")
	}
	return nil
}

// leafCounts and valueCounts make a class table a tallier: its classes weighted by
// their counts.
func (ct *ClassTable) leafCounts(i int) []int64 {
	out := make([]int64, ct.meta.Columns[i].Hierarchy.Leaves())
	for j, c := range ct.cols[i] {
		out[c] += int64(ct.counts[j])
	}
	return out
}

func (ct *ClassTable) valueCounts(col int) []int64 {
	out := make([]int64, ct.meta.Sensitive[col].Values)
	h := ct.hist[col]
	for k, v := range h.val {
		out[v] += int64(h.cnt[k])
	}
	return out
}

// metaOf returns t's columns without their codes, for rows records.
func metaOf(t *Table, rows int) *Table {
	m := &Table{Rows: rows, Columns: make([]Column, len(t.Columns)), Sensitive: make([]Sensitive, len(t.Sensitive))}
	for i, c := range t.Columns {
		m.Columns[i] = Column{Name: c.Name, Hierarchy: c.Hierarchy}
	}
	for i, s := range t.Sensitive {
		m.Sensitive[i] = Sensitive{Name: s.Name, Values: s.Values, Tree: s.Tree}
	}
	if t.Unit != nil {
		m.Unit = &Unit{Persons: t.Unit.Persons}
	}
	return m
}

// CountClasses counts the classes of the most specific node of t (its class table):
// the first pass over one part of a table read in parts. The count uses GOMAXPROCS
// goroutines for large tables.
func CountClasses(t *Table) (ct *ClassTable, err error) {
	err = safe.Call(func() error {
		ct, err = countClasses(t)
		return err
	})
	if err != nil {
		return nil, err
	}
	return ct, nil
}

// CountClassesUpTo is CountClasses, unless t has more than limit classes (limit >
// 0): then it stops as soon as it has counted limit+1 of them and returns a nil table.
func CountClassesUpTo(t *Table, limit int) (ct *ClassTable, err error) {
	err = safe.Call(func() error {
		ct, _, err = countRecordClasses(t, limit, false)
		return err
	})
	if err != nil {
		return nil, err
	}
	return ct, nil
}

// CountRecordClasses is CountClasses for a search over all of t's records: it returns
// t's class table and every record's class in it (assign[r], an index of the table),
// unless the table has more than limit classes (limit > 0): then it stops as soon as
// it has counted limit+1 of them and returns a nil table.
func CountRecordClasses(t *Table, limit int) (ct *ClassTable, assign []int32, err error) {
	err = safe.Call(func() error {
		ct, assign, err = countRecordClasses(t, limit, true)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return ct, assign, nil
}

// ManyClasses reports whether a sample of t's records says that they fall in far more
// than limit classes (limit at most one per 16 records), so that CountRecordClasses(t,
// limit) would stop past limit: of about one record in manySample, taken in blocks of
// manyBlock consecutive records at spread offsets, more than 19 in 20 lie in distinct
// classes. Were there at most limit classes, a sample of a random order's records
// would find at most 82% of them distinct on average (a class of c of the n records is
// missed with probability (1 − m/n)^c, so at most limit·(1 − e^(−m/limit)) classes are
// hit, m/limit ≥ 16/40); records in order of their classes find fewer. When it answers
// false the count may still stop: the answer changes how a search counts the records,
// never what it finds. It reads a 40th of the records (10M: about 30 ms).
func ManyClasses(t *Table, limit int) bool {
	blocks := t.Rows / (manySample * manyBlock)
	if limit <= 0 || limit > t.Rows/16 || blocks < 1024 {
		return false
	}
	codes := t.keyCodes()
	keys := make([]uint64, 0, blocks*manyBlock)
	span := t.Rows - manyBlock
	pos := uint64(0x2545F4914F6CDD1D)
	for range blocks {
		pos ^= pos << 13 // xorshift: offsets spread over the table, the same every run
		pos ^= pos >> 7
		pos ^= pos << 17
		at := int(pos % uint64(span))
		for r := at; r < at+manyBlock; r++ {
			h := uint64(0x9E3779B97F4A7C15)
			for _, c := range codes {
				h = (h ^ uint64(uint32(c.At(r)))) * 0xBF58476D1CE4E5B9
				h ^= h >> 31
			}
			keys = append(keys, h) // a collision only lowers the count: no false yes
		}
	}
	slices.Sort(keys)
	distinct := len(slices.Compact(keys))
	return 20*distinct > 19*len(keys)
}

// The sample of ManyClasses: a record in manySample, in blocks of manyBlock.
const (
	manySample = 40
	manyBlock  = 64
)

// countClasses is CountClasses, its panics not recovered.
func countClasses(t *Table) (*ClassTable, error) {
	ct, _, err := countRecordClasses(t, 0, false)
	return ct, err
}

// countRecordClasses is CountRecordClasses, its panics not recovered; without
// records it returns no classes of the records.
func countRecordClasses(t *Table, limit int, records bool) (*ClassTable, []int32, error) {
	if t == nil {
		return nil, nil, errors.New("counting classes: no table")
	}
	if err := t.validate(); err != nil {
		return nil, nil, fmt.Errorf("counting classes: %w", err)
	}
	rows := &classes{rows: t.keyCodes(), n: t.Rows}
	identity := make([][]int32, len(t.Columns))
	for i, c := range t.Columns {
		identity[i] = c.Hierarchy.levelMap(0, 0)
	}
	leaves := t.keyLeaves()
	identity, _ = t.withUnit(identity, nil)
	g := &grouper{par: runtime.GOMAXPROCS(0), pack: newPacking(leaves)}
	var assign []int32
	if records || len(t.Sensitive) > 0 {
		assign = make([]int32, t.Rows)
	}
	cls, _ := g.rollUp(rows, 0, identity, leaves, assign, limit)
	if cls == nil {
		return nil, nil, nil // more than limit classes
	}
	if len(t.Sensitive) > 0 {
		all := &models{t: t}
		for c := range t.Sensitive {
			all.use(c)
		}
		cls.hist = all.rollHist(rows, assign, cls.n)
	}
	ct, perm := canonical(metaOf(t, t.Rows), cls, leaves)
	if !records {
		return ct, nil, nil
	}
	at := make([]int32, len(perm)) // at[j]: the canonical place of counted class j
	for c, j := range perm {
		at[j] = int32(c)
	}
	for r, j := range assign {
		assign[r] = at[j]
	}
	return ct, assign, nil
}

// canonical returns the class table of the classes cls (leaf codes, counts and, per
// sensitive column of meta, histograms in any order), in canonical order, and the
// order (the class of cls at each place); leaves[i] is the number of leaves of
// quasi-identifier i.
func canonical(meta *Table, cls *classes, leaves []int) (*ClassTable, []int32) {
	perm := lexOrder(cls, leaves)
	ct := &ClassTable{meta: meta, cols: make([][]int32, len(leaves)), counts: make([]int32, cls.n), hist: make([]*hist, len(meta.Sensitive))}
	for i := range leaves {
		col := make([]int32, cls.n)
		switch { // the fields read without code's switch: the hot loop
		case cls.packed != nil:
			sh, mask := cls.pack.shift[i]&63, cls.pack.mask[i]
			for c, j := range perm {
				col[c] = int32(cls.packed[j] >> sh & mask)
			}
		case cls.narrow != nil:
			sh, mask := cls.npack.shift[i]&31, uint32(cls.npack.mask[i])
			for c, j := range perm {
				col[c] = int32(cls.narrow[j] >> sh & mask)
			}
		default:
			for c, j := range perm {
				col[c] = cls.code(i, int(j))
			}
		}
		ct.cols[i] = col
	}
	for c, j := range perm {
		ct.counts[c] = cls.count(int(j))
	}
	for col := range ct.hist {
		ct.hist[col] = sortedHist(cls.hist[col], perm)
	}
	return ct, perm
}

// lexOrder returns the classes of cls in lexicographic order of their codes (the first
// column first); widths[i] is the number of codes column i may hold. Classes are sorted
// by their codes packed in one word when the codes fit in 64 bits, else compared
// column by column.
func lexOrder(cls *classes, widths []int) []int32 {
	n := cls.n
	perm := make([]int32, n)
	for j := range perm {
		perm[j] = int32(j)
	}
	p := newPacking(widths)
	if p == nil {
		slices.SortFunc(perm, func(a, b int32) int {
			for i := range widths {
				if c := cmp.Compare(cls.code(i, int(a)), cls.code(i, int(b))); c != 0 {
					return c
				}
			}
			return 0
		})
		return perm
	}
	// A packed word holds column 0 in its highest bits: word order is code order.
	words := cls.packed
	if words == nil || cls.pack == nil || !slices.Equal(cls.pack.shift, p.shift) {
		words = make([]uint64, n)
		for i := range widths {
			sh := p.shift[i]
			for j := range n {
				words[j] |= uint64(cls.code(i, j)) << sh
			}
		}
	}
	type keyed struct {
		key uint64
		j   int32
	}
	ks := make([]keyed, n)
	for j, w := range words {
		ks[j] = keyed{w, int32(j)}
	}
	slices.SortFunc(ks, func(a, b keyed) int { return cmp.Compare(a.key, b.key) })
	for c, k := range ks {
		perm[c] = k.j
	}
	return perm
}

// sortedHist returns the histograms of h for the classes perm[0], perm[1], …, each
// class's values in increasing order.
func sortedHist(h *hist, perm []int32) *hist {
	out := &hist{off: make([]int32, len(perm)+1), val: make([]int32, 0, len(h.val)), cnt: make([]int32, 0, len(h.cnt))}
	for c, j := range perm {
		lo, hi := h.off[j], h.off[j+1]
		start := len(out.val)
		out.val = append(out.val, h.val[lo:hi]...)
		out.cnt = append(out.cnt, h.cnt[lo:hi]...)
		sortPairs(out.val[start:], out.cnt[start:])
		out.off[c+1] = int32(len(out.val))
	}
	return out
}

// sortPairs sorts vals in increasing order, moving cnts along.
func sortPairs(vals, cnts []int32) {
	if len(vals) <= 16 { // a class has few values, usually
		for a := 1; a < len(vals); a++ {
			for b := a; b > 0 && vals[b] < vals[b-1]; b-- {
				vals[b], vals[b-1] = vals[b-1], vals[b]
				cnts[b], cnts[b-1] = cnts[b-1], cnts[b]
			}
		}
		return
	}
	sort.Sort(pairs{vals, cnts})
}

type pairs struct{ vals, cnts []int32 }

func (p pairs) Len() int           { return len(p.vals) }
func (p pairs) Less(a, b int) bool { return p.vals[a] < p.vals[b] }
func (p pairs) Swap(a, b int) {
	p.vals[a], p.vals[b] = p.vals[b], p.vals[a]
	p.cnts[a], p.cnts[b] = p.cnts[b], p.cnts[a]
}

// MergeClasses returns the class table of the records of all parts: the classes of the
// same codes are one, their counts and histograms added. The parts must have the same
// quasi-identifiers (names and hierarchies, compared value by value: leaf codes are
// hierarchy leaf indices) and the same sensitive columns (names, number of values and
// hierarchies); the numbering of sensitive values, which a part cannot tell, must be
// the same too. Parts that differ are refused with an error matching ErrIncompatible.
// Merging is associative and commutative: the result is in canonical order, the same
// for any order or grouping of the parts. The parts are not modified; a single part is
// returned as it is. The search counts records in 32 bits: a merge of more than
// math.MaxInt32 records in all is refused.
func MergeClasses(parts ...*ClassTable) (ct *ClassTable, err error) {
	err = safe.Call(func() error {
		ct, err = mergeClasses(parts)
		return err
	})
	if err != nil {
		return nil, err
	}
	return ct, nil
}

// mergeClasses is MergeClasses, its panics not recovered.
func mergeClasses(parts []*ClassTable) (*ClassTable, error) {
	if len(parts) == 0 {
		return nil, errors.New("merging class tables: no parts")
	}
	total := 0
	for p, part := range parts {
		if err := part.check(); err != nil {
			return nil, fmt.Errorf("merging class tables: part %d: %w", p, err)
		}
		if p > 0 {
			if err := compatible(parts[0].meta, part.meta); err != nil {
				return nil, fmt.Errorf("merging class tables: part %d against part 0: %w", p, err)
			}
		}
		total += part.Records()
	}
	if total > math.MaxInt32 {
		return nil, fmt.Errorf("merging class tables: %d records in all, at most %d can be counted", total, math.MaxInt32)
	}
	// Pairwise, as a balanced tree: every class is copied about log2(len(parts)) times.
	for len(parts) > 1 {
		next := make([]*ClassTable, 0, (len(parts)+1)/2)
		for p := 0; p+1 < len(parts); p += 2 {
			next = append(next, merge2(parts[p], parts[p+1]))
		}
		if len(parts)%2 == 1 {
			next = append(next, parts[len(parts)-1])
		}
		parts = next
	}
	return parts[0], nil
}

// merge2 merges two compatible class tables in canonical order into one, in one pass
// over both.
func merge2(a, b *ClassTable) *ClassTable {
	q, n := len(a.cols), a.Len()+b.Len()
	out := &ClassTable{meta: metaOf(a.meta, a.Records()+b.Records()), cols: make([][]int32, q), counts: make([]int32, 0, n), hist: make([]*hist, len(a.hist))}
	for i := range out.cols {
		out.cols[i] = make([]int32, 0, n)
	}
	for c := range out.hist {
		vals := len(a.hist[c].val) + len(b.hist[c].val)
		out.hist[c] = &hist{off: make([]int32, 1, n+1), val: make([]int32, 0, vals), cnt: make([]int32, 0, vals)}
	}
	copyClass := func(src *ClassTable, j int) {
		for i := range out.cols {
			out.cols[i] = append(out.cols[i], src.cols[i][j])
		}
		out.counts = append(out.counts, src.counts[j])
		for c, h := range out.hist {
			s := src.hist[c]
			h.val = append(h.val, s.val[s.off[j]:s.off[j+1]]...)
			h.cnt = append(h.cnt, s.cnt[s.off[j]:s.off[j+1]]...)
			h.off = append(h.off, int32(len(h.val)))
		}
	}
	addClasses := func(i, j int) {
		for c := range out.cols {
			out.cols[c] = append(out.cols[c], a.cols[c][i])
		}
		out.counts = append(out.counts, a.counts[i]+b.counts[j])
		for c, h := range out.hist {
			ha, hb := a.hist[c], b.hist[c]
			x, xEnd, y, yEnd := ha.off[i], ha.off[i+1], hb.off[j], hb.off[j+1]
			for x < xEnd || y < yEnd {
				switch {
				case y == yEnd || (x < xEnd && ha.val[x] < hb.val[y]):
					h.val, h.cnt = append(h.val, ha.val[x]), append(h.cnt, ha.cnt[x])
					x++
				case x == xEnd || hb.val[y] < ha.val[x]:
					h.val, h.cnt = append(h.val, hb.val[y]), append(h.cnt, hb.cnt[y])
					y++
				default:
					h.val, h.cnt = append(h.val, ha.val[x]), append(h.cnt, ha.cnt[x]+hb.cnt[y])
					x++
					y++
				}
			}
			h.off = append(h.off, int32(len(h.val)))
		}
	}
	i, j := 0, 0
	for i < a.Len() || j < b.Len() {
		var c int
		switch {
		case i == a.Len():
			c = 1
		case j == b.Len():
			c = -1
		default:
			c = compareClasses(a, i, b, j)
		}
		switch {
		case c < 0:
			copyClass(a, i)
			i++
		case c > 0:
			copyClass(b, j)
			j++
		default:
			addClasses(i, j)
			i++
			j++
		}
	}
	return out
}

// compareClasses compares the codes of class i of a and class j of b lexicographically.
func compareClasses(a *ClassTable, i int, b *ClassTable, j int) int {
	for c := range a.cols {
		if d := cmp.Compare(a.cols[c][i], b.cols[c][j]); d != 0 {
			return d
		}
	}
	return 0
}

// compatible returns an error matching ErrIncompatible when tables a and b differ in
// their columns: quasi-identifiers (names, hierarchies) or sensitive columns (names,
// number of values, hierarchies). Their records are not compared.
func compatible(a, b *Table) error {
	if len(a.Columns) != len(b.Columns) {
		return fmt.Errorf("%w: %d quasi-identifiers against %d", ErrIncompatible, len(a.Columns), len(b.Columns))
	}
	for i, c := range a.Columns {
		d := b.Columns[i]
		if c.Name != d.Name {
			return fmt.Errorf("%w: quasi-identifier %d is %q against %q", ErrIncompatible, i, c.Name, d.Name)
		}
		if !sameHierarchy(c.Hierarchy, d.Hierarchy) {
			return fmt.Errorf("%w: quasi-identifier %q has different hierarchies (%s against %s)", ErrIncompatible, c.Name, c.Hierarchy.Source(), d.Hierarchy.Source())
		}
	}
	switch {
	case (a.Unit == nil) != (b.Unit == nil):
		return fmt.Errorf("%w: a privacy unit in one only", ErrIncompatible)
	case a.Unit != nil && a.Unit.Persons != b.Unit.Persons:
		return fmt.Errorf("%w: %d persons against %d", ErrIncompatible, a.Unit.Persons, b.Unit.Persons)
	}
	if len(a.Sensitive) != len(b.Sensitive) {
		return fmt.Errorf("%w: %d sensitive columns against %d", ErrIncompatible, len(a.Sensitive), len(b.Sensitive))
	}
	for i, s := range a.Sensitive {
		r := b.Sensitive[i]
		switch {
		case s.Name != r.Name:
			return fmt.Errorf("%w: sensitive column %d is %q against %q", ErrIncompatible, i, s.Name, r.Name)
		case s.Values != r.Values:
			return fmt.Errorf("%w: sensitive column %q has %d values against %d", ErrIncompatible, s.Name, s.Values, r.Values)
		case !reflect.DeepEqual(s.Tree, r.Tree):
			return fmt.Errorf("%w: sensitive column %q has different hierarchies", ErrIncompatible, s.Name)
		}
	}
	return nil
}

// sameHierarchy reports whether a and b have the same values at every level and map
// every leaf to the same codes (where they came from aside).
func sameHierarchy(a, b *Hierarchy) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil || a.Height() != b.Height() {
		return false
	}
	for l := range a.Height() {
		if !slices.Equal(a.names[l], b.names[l]) || !slices.Equal(a.up[l], b.up[l]) {
			return false
		}
	}
	return true
}

// SearchClasses is Search on the records whose class table ct is, which it starts from
// as the bottom node's classes (whatever the number of records): it chooses the same
// node and reports the same Levels, Metric, Value, Classes, MinClass and Suppressed as
// Search on a table of those records; its work counters (Evaluated, Tagged, Bounded,
// RolledUp) may differ. Errors and panics are returned as Search returns them.
func SearchClasses(ctx context.Context, ct *ClassTable, opt Options) (res *Result, err error) {
	err = safe.Call(func() error {
		res, err = searchClasses(ctx, ct, opt)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// searchClasses is SearchClasses, its panics not recovered.
func searchClasses(ctx context.Context, ct *ClassTable, opt Options) (*Result, error) {
	if err := ct.check(); err != nil {
		return nil, fmt.Errorf("searching classes: %w", err)
	}
	s, err := prepareSearch(ct.meta, ct, ct.Len(), opt)
	if err != nil {
		return nil, err
	}
	if s.grouped {
		s.bottom = ct.groupedBottom(s.pack)
	} else {
		s.bottom = ct.bottom(s.pack)
	}
	return s.run(ctx)
}

// bottom returns the class table as the search's classes of the bottom node: packed by
// pack when not nil, column-major (sharing ct's codes) otherwise. Its counts and
// histograms are ct's.
func (ct *ClassTable) bottom(pack *packing) *classes {
	c := &classes{node: 0, counts: ct.counts, n: ct.Len(), hist: ct.hist}
	if pack == nil {
		c.cols = ct.cols
		return c
	}
	words := make([]uint64, c.n)
	for i, col := range ct.cols {
		sh := pack.shift[i]
		for j, code := range col {
			words[j] |= uint64(code) << sh
		}
	}
	c.packed, c.pack = words, pack
	return c
}

// Recoding is what the node of given levels publishes of a class table's records, in a
// form that recodes the records of any part of the table on their own (the second pass
// over a table read in parts): which classes of the node are suppressed (fewer than K
// records, or failing an l-diversity or t-closeness requirement, on the counts and
// histograms of all parts) and the number of every published class.
//
// Its memory is, per class of the node, a map entry (8 bytes of key and 4 of class
// number, or, when the node's codes do not fit in 64 bits, a string of 4 bytes per
// quasi-identifier) and, per published class, 4 bytes per quasi-identifier in Covers
// and 8 in Sizes. It is safe for concurrent use.
type Recoding struct {
	Levels []int // the node: a level per quasi-identifier
	// Covers is what every published class releases, as NodeClasses gives it: Dict[i]
	// lists every value of quasi-identifier i's level in code order; the published
	// classes are numbered in lexicographic order of their codes at the node.
	Covers     ClassCovers
	Sizes      []int // records per published class
	Records    int   // records of the class table
	Suppressed int   // records in suppressed classes

	// persons, with linkable records, marks the persons multirelational k-anonymity
	// suppresses: all of their records (nil: none).
	persons []bool

	maps  [][]int32 // maps[i][leaf]: the node's code of a leaf of quasi-identifier i
	sizes []uint64  // codes per quasi-identifier at the node: the radix of a key
	byKey map[uint64]int32
	byStr map[string]int32 // when the node's codes do not fit in 64 bits
}

// NodeRecoding returns the classes of the node with the given levels of ct: which are
// suppressed under the models of opt, and the published ones. A record is suppressed
// there exactly when Suppressed(t, levels, opt) says so for the table t of all the
// records.
func NodeRecoding(ct *ClassTable, levels []int, opt Options) (r *Recoding, err error) {
	err = safe.Call(func() error {
		r, err = nodeRecoding(ct, levels, opt, true)
		return err
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// nodeRecoding is NodeRecoding, its panics not recovered; packed false looks classes up
// by strings of their codes even when they fit in 64 bits (tests).
func nodeRecoding(ct *ClassTable, levels []int, opt Options, packed bool) (*Recoding, error) {
	if err := ct.check(); err != nil {
		return nil, fmt.Errorf("recoding classes: %w", err)
	}
	t := ct.meta
	q := len(t.Columns)
	if len(levels) != q {
		return nil, fmt.Errorf("recoding classes: node has %d levels for %d quasi-identifiers", len(levels), q)
	}
	if err := checkUnit(t, opt); err != nil {
		return nil, fmt.Errorf("recoding classes: %w", err)
	}
	mod, err := newModelsOf(t, ct, opt)
	if err != nil {
		return nil, fmt.Errorf("recoding classes: %w", err)
	}
	r := &Recoding{Levels: slices.Clone(levels), Records: ct.Records(), maps: make([][]int32, q), sizes: make([]uint64, q)}
	sizes := make([]int, q)
	for i, c := range t.Columns {
		if levels[i] < 0 || levels[i] >= c.Hierarchy.Height() {
			return nil, fmt.Errorf("recoding classes: column %q: level %d outside 0..%d", c.Name, levels[i], c.Hierarchy.Height()-1)
		}
		r.maps[i] = c.Hierarchy.levelMap(0, levels[i])
		sizes[i] = c.Hierarchy.Size(levels[i])
		r.sizes[i] = uint64(sizes[i])
	}
	src := &classes{cols: ct.cols, counts: ct.counts, n: ct.Len(), hist: ct.hist}
	var assign []int32
	if mod.any() || t.Unit != nil {
		assign = make([]int32, src.n)
	}
	g := &grouper{par: runtime.GOMAXPROCS(0)}
	keyMaps, keySizes := t.withUnit(r.maps, sizes)
	counted, _ := g.rollUp(src, 0, keyMaps, keySizes, assign, 0)
	u := nodeClassesOf(g, mod, t, levels, src, counted, assign)
	cls := u.cls
	failing, l, err := u.failing(mod, t, levels, opt)
	if err != nil {
		return nil, fmt.Errorf("recoding classes: %w", err)
	}
	if l != nil {
		r.persons = l.persons
	}

	r.Covers.Dict = make([][]Cover, q)
	for i := range q {
		r.Covers.Dict[i] = make([]Cover, sizes[i])
		for code := range r.Covers.Dict[i] {
			r.Covers.Dict[i][code] = Cover{Level: int32(levels[i]), Code: int32(code)}
		}
	}
	_, exact := keySpace(sizes)
	exact = exact && packed
	if exact {
		r.byKey = make(map[uint64]int32, cls.n)
	} else {
		r.byStr = make(map[string]int32, cls.n)
	}
	codes := make([]int32, q)
	published := int32(0)
	for _, j := range lexOrder(cls, sizes) {
		for i := range q {
			codes[i] = cls.code(i, int(j))
		}
		number := int32(-1)
		if c := int(cls.count(int(j))); int(cls.personsOf(int(j))) < opt.K || failing[j] {
			r.Suppressed += c
		} else {
			number = published
			published++
			if l != nil { // the records of persons suppressed are not published
				c -= int(l.rows[j])
				r.Suppressed += int(l.rows[j])
			}
			r.Covers.Index = append(r.Covers.Index, codes...)
			r.Sizes = append(r.Sizes, c)
		}
		if exact {
			r.byKey[r.key(codes)] = number
		} else {
			r.byStr[string(codesBytes(nil, codes))] = number
		}
	}
	return r, nil
}

// key is the mixed-radix key of codes at the node.
func (r *Recoding) key(codes []int32) uint64 {
	var k uint64
	for i, c := range codes {
		k = k*r.sizes[i] + uint64(c)
	}
	return k
}

// codesBytes appends codes to b, 4 bytes each.
func codesBytes(b []byte, codes []int32) []byte {
	for _, c := range codes {
		b = append(b, byte(c), byte(c>>8), byte(c>>16), byte(c>>24))
	}
	return b
}

// Class returns the number of the published class of the record whose leaf codes are
// leaves (one per quasi-identifier, in table order): an index of Covers and Sizes, or
// −1 when the record's class is suppressed. counted is false, and class −1, when the
// class table counted no record of that class at the node (or the codes are not leaf
// codes of the hierarchies): the record was not among those counted.
func (r *Recoding) Class(leaves []int32) (class int32, counted bool) {
	if r == nil || len(leaves) != len(r.maps) {
		return -1, false
	}
	if r.byKey != nil {
		var k uint64
		for i, l := range leaves {
			m := r.maps[i]
			if l < 0 || int(l) >= len(m) {
				return -1, false
			}
			k = k*r.sizes[i] + uint64(m[l])
		}
		class, counted = r.byKey[k]
	} else {
		var buf [64]byte
		b := buf[:0]
		for i, l := range leaves {
			m := r.maps[i]
			if l < 0 || int(l) >= len(m) {
				return -1, false
			}
			c := m[l]
			b = append(b, byte(c), byte(c>>8), byte(c>>16), byte(c>>24))
		}
		class, counted = r.byStr[string(b)]
	}
	if !counted {
		return -1, false
	}
	return class, true
}

// PersonSuppressed reports whether the records of person p (a code of the table's
// unit) are all suppressed, whatever their classes: with linkable records,
// multirelational k-anonymity suppresses persons.
func (r *Recoding) PersonSuppressed(p int32) bool {
	return r != nil && r.persons != nil && p >= 0 && int(p) < len(r.persons) && r.persons[p]
}

// IsSuppressed reports whether the record whose leaf codes are leaves is suppressed at
// the node: its class fails the models, or (the safe answer) was not counted at all.
func (r *Recoding) IsSuppressed(leaves []int32) bool {
	c, _ := r.Class(leaves)
	return c < 0
}
