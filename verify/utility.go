package verify

// Utility: the information-loss metrics of a release (loss, NCP, non-uniform entropy),
// measured from the written release beside the input. What a released value covers is
// re-derived here from the value formats (the builders' labels, interval and Mondrian
// ranges) and the configuration's hierarchy files; this file shares no code with
// package generalize, which computes the same metrics for the search (their
// definitions: the doc comments of generalize.Metrics).

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"sanitizer/fault"
	"sanitizer/internal/safe"
	"sanitizer/schema"
)

// Quasi is what the utility measurement knows of one quasi-identifier.
type Quasi struct {
	Column string
	// Domain is the column's hierarchy: which values are its leaves and what a released
	// value covers.
	Domain *Domain
	// Type is the column's type. A column of type integer, float or date whose every
	// leaf reads as such is measured by value (NCP); any other by its leaves.
	Type schema.Type
	// Ranges: the release writes the column as ranges "[lo,hi]" of leaf values
	// (Mondrian's numeric columns): such a range covers every leaf whose value lies in
	// it.
	Ranges bool
	// Null is the value an empty input field is read as (nil: the empty string is a
	// value of its own).
	Null *string
}

// Domain is a quasi-identifier's hierarchy as the utility measurement sees it: its
// leaves (a hierarchy file's every row, listed in the input or not; for a built
// hierarchy the distinct values of the input column) and, for every leaf, its
// generalization at every level.
type Domain struct {
	kind   domainKind
	source string // what the messages call it
	height int    // levels, leaf and top included (not for intervals)
	top    string // the top value: a hierarchy file's own label, else "*"
	// file: every row (leaf, level 1, …, "*") and the row of every leaf
	rows  [][]string
	index map[string]int32
	// mask, date: how the builder writes the levels
	fromRight bool
	max       int
	dates     []schema.DateUnit
	// intervals (IntervalLevels): the column's type and the widths, finest first
	typ    schema.Type
	widths []float64
}

type domainKind int

const (
	domainFile domainKind = iota
	domainMask
	domainDate
	domainIntervals
)

// maxLevels is the most levels a hierarchy may have for the utility measurement (the
// candidate levels of a released value are a 32-bit set).
const maxLevels = 32

// newSlot is a labeled column's slot in a new class (see utilityCounter.add): its
// candidate levels, every level.
const newSlot uint64 = math.MaxUint32

// HierarchyDomain reads an ARX hierarchy file as CoverHierarchyFile does. Its leaves are
// the first values of its rows, whether the input holds them or not. The errors name
// the file and a line, never a value.
func HierarchyDomain(path string) (*Domain, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("hierarchy file: %w", err)
	}
	return HierarchyDomainOf(data, path)
}

// HierarchyDomainOf is HierarchyDomain over the bytes of a hierarchy file that path
// names in errors.
func HierarchyDomainOf(data []byte, path string) (*Domain, error) {
	rows, lines, err := readHierarchyRows(data, path)
	if err != nil {
		return nil, err
	}
	d := &Domain{kind: domainFile, source: path, height: len(rows[0]), top: rows[0][len(rows[0])-1], rows: rows, index: make(map[string]int32, len(rows))}
	if d.height > maxLevels {
		return nil, fmt.Errorf("%s: %d levels: the utility measurement handles at most %d", path, d.height, maxLevels)
	}
	for i, r := range rows {
		if _, dup := d.index[r[0]]; dup {
			return nil, fmt.Errorf("%s:%d: a leaf value listed on an earlier row too", path, lines[i])
		}
		d.index[r[0]] = int32(i)
	}
	return d, nil
}

// MaskDomain is the mask builder's hierarchy: level j (1..max) replaces j characters of
// the value, from the right (from the left when !fromRight), by '*' (every character
// when the value has at most j), then "*". Its leaves are the input's values.
func MaskDomain(fromRight bool, max int) (*Domain, error) {
	if max < 0 || max+2 > maxLevels {
		return nil, fmt.Errorf("mask hierarchy: %d levels: the utility measurement handles 0 to %d", max, maxLevels-2)
	}
	return &Domain{kind: domainMask, source: "mask hierarchy", height: max + 2, top: top, fromRight: fromRight, max: max}, nil
}

// DateDomain is the date builder's hierarchy over ISO dates with the given levels
// (month "2023-04", quarter "2023-Q2", year "2023", decade "[2020,2029]", finest
// first), then "*". Its leaves are the input's values.
func DateDomain(levels []schema.DateUnit) (*Domain, error) {
	for _, l := range levels {
		switch l {
		case schema.DateMonth, schema.DateQuarter, schema.DateYear, schema.DateDecade:
		default:
			return nil, fmt.Errorf("date hierarchy: unknown level %q", l)
		}
	}
	return &Domain{kind: domainDate, source: "date hierarchy", height: len(levels) + 2, top: top, dates: slices.Clone(levels)}, nil
}

// IntervalDomain is the interval builder's hierarchy: a released "[lo,hi]" (integer
// column) covers the leaves lo ≤ v ≤ hi, a released "[lo,hi)" (float column) the leaves
// lo ≤ v < hi, "*" every leaf, a value itself. Its leaves are the input's values.
func IntervalDomain() *Domain {
	return &Domain{kind: domainIntervals, source: "interval hierarchy", top: top}
}

// labelsOf is the generalization of leaf v at every level, v first and the top last.
func (d *Domain) labelsOf(v string) ([]string, bool) {
	switch d.kind {
	case domainFile:
		r, ok := d.index[v]
		if !ok {
			return nil, false
		}
		return d.rows[r], true
	case domainMask:
		out := make([]string, d.height)
		out[0], out[d.height-1] = v, top
		cs := chars(v)
		for j := 1; j <= d.max; j++ {
			out[j] = maskChars(cs, j, d.fromRight)
		}
		return out, true
	case domainDate:
		t, err := time.Parse(time.DateOnly, v)
		if err != nil || len(v) != len(time.DateOnly) {
			return nil, false
		}
		y, m := t.Year(), int(t.Month())
		out := make([]string, d.height)
		out[0], out[d.height-1] = v, top
		for j, l := range d.dates {
			switch l {
			case schema.DateMonth:
				out[j+1] = fmt.Sprintf("%04d-%02d", y, m)
			case schema.DateQuarter:
				out[j+1] = fmt.Sprintf("%04d-Q%d", y, (m-1)/3+1)
			case schema.DateYear:
				out[j+1] = fmt.Sprintf("%04d", y)
			case schema.DateDecade:
				out[j+1] = fmt.Sprintf("[%d,%d]", y-y%10, y-y%10+9)
			}
		}
		return out, true
	}
	return nil, false
}

// maskChars is the characters cs with j of them, from the right (left), replaced by
// '*'; all of them when there are at most j.
func maskChars(cs []string, j int, fromRight bool) string {
	if j >= len(cs) {
		return strings.Repeat(top, len(cs))
	}
	if fromRight {
		return strings.Join(cs[:len(cs)-j], "") + strings.Repeat(top, j)
	}
	return strings.Repeat(top, j) + strings.Join(cs[j:], "")
}

// utilityCounter measures loss, NCP and non-uniform entropy incrementally: per
// quasi-identifier the input's count of every leaf, per released class the levels its
// released values may stand at; memory grows with the distinct values and the classes,
// not with the records.
type utilityCounter struct {
	cols       []*utilityColumn
	fullDomain bool
	labeled    int   // columns with cand (see utilityColumn.cand)
	matched    int64 // records released
	suppressed int64 // input records left out
	// keepUnder: measure keeps, per class and column, the leaves its released value
	// covers, in under (class i's at i·columns), for the profitability (profit.go)
	keepUnder bool
	under     []int64
	// a local recoding's: its passes' nodes (Spec.Passes), and where a class's
	// slots hold its records of each pass (passAt; 0: not a local recoding), whose
	// labeled columns are measured at each pass's level (addPasses)
	nodes  [][]int
	passAt int
}

// utilityColumn is one quasi-identifier being measured.
type utilityColumn struct {
	Quasi
	labeled bool // released values are hierarchy nodes named by their value
	// cand: for a labeled column, its place among a class's candidate level sets:
	// the levels of the column's hierarchy whose value, for every record of the class
	// so far, is the one released
	cand   int
	index  map[string]int32
	memo   *strMemo   // in front of index
	leaves []string   // per leaf number
	labels [][]string // labeled: per leaf, its values at every level
	freq   []int64    // input records per leaf
	file   bool       // the leaves are a file's rows (all known up front)
	// labeled: the levels at which a leaf's value is a released value, per pair of
	// the released value's number (Counter.rel) and the leaf's
	names *pairMemo
}

func newUtilityCounter(qs []Quasi, fullDomain bool) (*utilityCounter, error) {
	u := &utilityCounter{fullDomain: fullDomain}
	for _, q := range qs {
		if q.Domain == nil {
			return nil, fmt.Errorf("utility: quasi-identifier %q has no hierarchy", q.Column)
		}
		c := &utilityColumn{Quasi: q, index: map[string]int32{}, memo: newStrMemo(), names: newPairMemo()}
		c.labeled = !q.Ranges && q.Domain.kind != domainIntervals
		if c.labeled {
			c.cand = u.labeled
			u.labeled++
		}
		if q.Domain.kind == domainFile {
			c.file = true
			c.leaves = make([]string, len(q.Domain.rows))
			c.freq = make([]int64, len(q.Domain.rows))
			for i, r := range q.Domain.rows {
				c.leaves[i] = r[0]
			}
			c.index = q.Domain.index
			if c.labeled {
				c.labels = q.Domain.rows
			}
		}
		u.cols = append(u.cols, c)
	}
	return u, nil
}

// leaf returns the leaf number of an input value (v as read, "" possibly a null).
func (c *utilityColumn) leaf(v string) (int32, error) {
	if v == "" && c.Null != nil {
		v = *c.Null
	}
	if x, ok := c.index[v]; ok {
		return x, nil
	}
	return c.newLeaf(v)
}

// leafOf is leaf, remembered per value.
func (c *utilityColumn) leafOf(v string) (int32, error) {
	if x, ok := c.memo.get(v); ok {
		return x, nil
	}
	x, err := c.leaf(v)
	if err == nil {
		c.memo.put(v, x)
	}
	return x, err
}

// newLeaf numbers a value not met before.
func (c *utilityColumn) newLeaf(v string) (int32, error) {
	if c.file {
		return 0, &Violation{Msg: fmt.Sprintf("column %q: an input value that the hierarchy file %s does not list", c.Column, c.Domain.source)}
	}
	x := int32(len(c.leaves))
	v = strings.Clone(v)
	if c.labeled {
		labs, ok := c.Domain.labelsOf(v)
		if !ok {
			return 0, &Violation{Msg: fmt.Sprintf("column %q: an input value that its %s does not generalize", c.Column, c.Domain.source)}
		}
		c.labels = append(c.labels, labs)
	}
	c.index[v] = x
	c.leaves = append(c.leaves, v) // freq grows as the counting meets it (add, left)
	return x, nil
}

// add counts released records and the input records they generalize: batch holds
// their classes, leaves the leaf numbers of the input records' quasi-identifier
// values (flat), masks the levels at which each leaf is the released value (for the
// labeled columns). Per class, cls holds stride values: the class's size, then a slot
// per labeled column: its candidate levels (every level for a new class), which add
// narrows to those at which each record's leaf is the released value.
func (u *utilityCounter) add(cls []uint64, stride int, batch, leaves []int32, masks []uint32) {
	q := len(u.cols)
	u.matched += int64(len(batch))
	for r, k := range batch { // record by record: its class's values are together
		at := int(k)*stride + 1
		for j, c := range u.cols {
			c.count(leaves[r*q+j])
			if c.labeled {
				cls[at+c.cand] &= uint64(masks[r*q+j])
			}
		}
	}
}

// naming is the levels of a labeled column's hierarchy at which leaf x is the
// released value r, remembered per pair of leaf and r's number rid (Counter.rel; -1:
// r has none); 0 for a column that is not labeled.
func (c *utilityColumn) naming(rid, x int32, r string) uint32 {
	if !c.labeled {
		return 0
	}
	if rid < 0 {
		return uint32(levelsNaming(c.labels[x], r))
	}
	m, ok := c.names.get(rid, x)
	if !ok {
		m = uint32(levelsNaming(c.labels[x], r))
		c.names.put(rid, x, m)
	}
	return m
}

// levelsNaming is the set of levels at which labs (a leaf's values) is s.
func levelsNaming(labs []string, s string) uint64 {
	var m uint64
	for l, lab := range labs {
		if lab == s {
			m |= 1 << l
		}
	}
	return m
}

// left counts input records the release leaves out: leaves holds the leaf numbers
// of their quasi-identifier values, flat.
func (u *utilityCounter) left(leaves []int32) {
	q := len(u.cols)
	if q == 0 {
		return
	}
	u.suppressed += int64(len(leaves) / q)
	for i, x := range leaves {
		u.cols[i%q].count(x)
	}
}

// count counts an input record of leaf x.
func (c *utilityColumn) count(x int32) {
	if int(x) >= len(c.freq) {
		c.freq = append(c.freq, make([]int64, int(x)+1-len(c.freq))...)
	}
	c.freq[x]++
}

// coverStat is what a released value covers: its leaves, their input records, those
// of them the input holds (and, when one, which), the smallest and largest of their
// values (columns measured by value).
type coverStat struct {
	leaves, freq, present int64
	only                  int32
	lo, hi                float64
}

func newStat() *coverStat { return &coverStat{only: -1, lo: math.Inf(1), hi: math.Inf(-1)} }

func (s *coverStat) add(x int32, f int64, vals []float64) {
	s.leaves++
	s.freq += f
	if f > 0 {
		s.present++
		s.only = x
	}
	if vals != nil {
		s.lo, s.hi = min(s.lo, vals[x]), max(s.hi, vals[x])
	}
}

// measure computes the three metrics over the classes (classes of them, fields giving
// a class's released quasi-identifier values; per class, stride values in cls: its
// size and its candidate level sets) once every record has been counted; inputRows is
// the input's record count.
//
// Two passes over the classes: the first finds the hierarchy nodes that labeled
// columns release (then measured in one pass over the leaves), the second adds every
// class's share. Memory grows with the hierarchies and the distinct values, not with
// the classes.
func (u *utilityCounter) measure(classes int, fields func(int32, []string) bool, cls []uint64, stride, inputRows int) (loss, ncp, entropy float64, _ error) {
	n := u.matched + u.suppressed
	if n != int64(inputRows) {
		return 0, 0, 0, fmt.Errorf("utility: %d input records counted, the input has %d", n, inputRows)
	}
	q := len(u.cols)
	if n == 0 || q == 0 {
		return 0, 0, 0, nil
	}
	for _, c := range u.cols { // leaves no record was counted of
		c.freq = append(c.freq, make([]int64, len(c.leaves)-len(c.freq))...)
	}
	if u.keepUnder {
		u.under = make([]int64, classes*q)
	}
	mc := &measuredClasses{n: classes, fields: fields, cls: cls, stride: stride, colCand: u.columnLevels(cls, stride)}
	sums, err := u.sumColumns(mc)
	if err != nil {
		return 0, 0, 0, err
	}
	for _, s := range sums {
		cl, cn, ce := s.finish(u.suppressed)
		loss += cl
		ncp += cn
		entropy += ce
	}
	den := float64(n) * float64(q)
	return loss / den, ncp / den, entropy, nil
}

// measuredClasses is what measure reads of the classes: n of them, fields giving a
// class's released quasi-identifier values, and per class stride values in cls (its
// size and its candidate level sets); colCand, per column, the levels every class of a
// full-domain release admits (all levels otherwise).
type measuredClasses struct {
	n       int
	fields  func(int32, []string) bool
	cls     []uint64
	stride  int
	colCand []uint64
}

// columnLevels returns, per column, the candidate levels of every class of a
// full-domain release (one level per column); every level otherwise.
//
// A labeled column's released value names the node at the lowest level consistent
// with all of its class's records (with all of the column's records, for a
// full-domain release: one level per column). The file alone cannot tell two levels
// apart that write every released record alike but cover different leaves (a
// hierarchy file whose leaf "Other" also names a larger node above it, say): the
// lower is taken. For Mondrian that is exactly the released node (the lowest
// covering the partition); for a full-domain release it is the node the search
// picks when it minimizes loss, the lower node having the smaller loss and the
// same classes; a search that picked the higher one anyway (a tie under another
// metric) would measure differently here, and the release's cross-check fail.
func (u *utilityCounter) columnLevels(cls []uint64, stride int) []uint64 {
	colCand := make([]uint64, len(u.cols))
	for j := range colCand {
		colCand[j] = math.MaxUint64
	}
	if u.fullDomain {
		for at := 0; at < len(cls); at += stride {
			for j, c := range u.cols {
				if c.labeled {
					colCand[j] &= cls[at+1+c.cand]
				}
			}
		}
	}
	return colCand
}

// level returns the level at which labeled column j's released value of the class
// whose values start at cls[at] stands.
func (u *utilityCounter) level(mc *measuredClasses, j, at int) (int, error) {
	c := u.cols[j]
	m := mc.cls[at+1+c.cand] & mc.colCand[j]
	if m == 0 {
		what := "the class's records"
		if u.fullDomain {
			what = "the column's records (one level for the whole column)"
		}
		return 0, &Violation{Msg: fmt.Sprintf("column %q: a released value that no single level of its %s gives %s", c.Column, c.Domain.source, what)}
	}
	return bits.TrailingZeros64(m), nil
}

// sumColumns sums up every column over the classes, the columns in parallel, a share
// each per processor; the first error by share.
func (u *utilityCounter) sumColumns(mc *measuredClasses) ([]*columnSum, error) {
	q := len(u.cols)
	sums := make([]*columnSum, q)
	parts := max(1, min(q, runtime.GOMAXPROCS(0)))
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for part := range parts {
		wg.Go(func() { errs[part] = safe.Call(func() error { return u.sumShare(mc, sums, part, parts) }) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return sums, nil
}

// sumShare sums up the columns j ≡ part (mod parts) over the classes, into sums[j].
func (u *utilityCounter) sumShare(mc *measuredClasses, sums []*columnSum, part, parts int) error {
	q := len(u.cols)
	var mine []int
	for j := part; j < q; j += parts {
		s, err := newColumnSum(u.cols[j])
		if err != nil {
			return err
		}
		sums[j], mine = s, append(mine, j)
	}
	vals := make([]string, q)
	for i := range int32(mc.n) {
		at := int(i) * mc.stride
		size := int64(mc.cls[at])
		if size == 0 {
			continue
		}
		if !mc.fields(i, vals) {
			return errors.New("utility: a malformed class key")
		}
		for _, j := range mine {
			s := sums[j]
			var (
				st  *coverStat
				err error
			)
			switch {
			case s.c.labeled && u.passAt > 0:
				st, err = u.addPasses(s, mc, j, at, vals[j])
			case s.c.labeled:
				var l int
				if l, err = u.level(mc, j, at); err == nil {
					st = s.node(l, vals[j])
					err = s.add(st, size)
				}
			default:
				if st, err = s.valueStat(vals[j]); err == nil {
					err = s.add(st, size)
				}
			}
			if err != nil {
				return err
			}
			if u.under != nil {
				u.under[int(i)*q+j] = st.leaves // each share its own columns
			}
		}
	}
	return nil
}

// addPasses adds the share of the records of a local recoding's class (whose slots
// start at cls[at]) in labeled column j, its released value v: each pass's records at
// the node of the pass's level, where the truthfulness walk found them. It returns
// the node of the most leaves among them (the class's information loss for the
// profitability: the largest).
func (u *utilityCounter) addPasses(s *columnSum, mc *measuredClasses, j, at int, v string) (*coverStat, error) {
	var most *coverStat
	for p, node := range u.nodes {
		n := int64(mc.cls[at+u.passAt+p])
		if n == 0 {
			continue
		}
		st := s.node(node[j], v)
		if st != nil && node[j] == 0 {
			leaf := *st // node's stat for a leaf is only valid until its next call
			st = &leaf
		}
		if err := s.add(st, n); err != nil {
			return nil, err
		}
		if most == nil || st.leaves > most.leaves {
			most = st
		}
	}
	if most == nil {
		return nil, fault.Internalf("utility: a released class of no pass's records")
	}
	return most, nil
}

// numericValues is the value of every leaf when the column is measured by value, else
// nil.
func (c *utilityColumn) numericValues() []float64 {
	if c.Type != schema.Integer && c.Type != schema.Float && c.Type != schema.Date {
		return nil
	}
	vals := make([]float64, len(c.leaves))
	for x, v := range c.leaves {
		f, ok := valueOf(c.Type, v)
		if !ok {
			return nil
		}
		vals[x] = f
	}
	return vals
}

// valueOf is the number a value of a numeric column stands for: integers and floats
// their value, dates their Unix time in seconds.
func valueOf(typ schema.Type, v string) (float64, bool) {
	if typ == schema.Date {
		t, err := time.Parse(time.DateOnly, v)
		return float64(t.Unix()), err == nil
	}
	f, err := strconv.ParseFloat(v, 64)
	return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
}

// columnSum adds up one column's share of the metrics over the released classes.
type columnSum struct {
	c      *utilityColumn
	vals   []float64 // per leaf, when measured by value
	spread float64   // of the values the input holds: NCP's denominator
	// labeled: what every node of the hierarchy covers, nodes[need[level][value]]
	need  []map[string]int32
	nodes []coverStat
	leaf  coverStat // the stat node returns for a leaf
	// the others: the leaves sorted by value, and the stats of values met (bounded)
	idx  *leafIndex
	memo map[string]*coverStat
	// records whose released value covers a single leaf the input holds, per leaf
	single            []int64
	lossSum, ncpCount int64 // Σ |c|·(covered − 1); Σ |c|·covered (categorical, > 1 leaf)
	ncpSum, entropy   float64
}

// memoMax bounds the stats a columnSum keeps of released values: the first ones met.
const memoMax = 1 << 12

func newColumnSum(c *utilityColumn) (*columnSum, error) {
	if len(c.leaves) == 0 {
		return nil, fmt.Errorf("utility: column %q has no leaves", c.Column)
	}
	s := &columnSum{c: c, vals: c.numericValues(), single: make([]int64, len(c.leaves))}
	if c.Ranges && s.vals == nil {
		return nil, &Violation{Msg: fmt.Sprintf("column %q: released as ranges of values, but a value of its domain is not of type %s", c.Column, c.Type)}
	}
	if s.vals != nil {
		lo, hi := math.Inf(1), math.Inf(-1)
		for x, f := range c.freq {
			if f > 0 {
				lo, hi = min(lo, s.vals[x]), max(hi, s.vals[x])
			}
		}
		if hi > lo {
			s.spread = hi - lo
		}
	}
	if c.labeled {
		s.measureNodes()
		return s, nil
	}
	idx, err := c.sortedIndex(s.vals)
	if err != nil {
		return nil, err
	}
	s.idx, s.memo = idx, map[string]*coverStat{}
	return s, nil
}

// measureNodes measures every node of a labeled column's hierarchy above the leaves,
// in one pass over the leaves: as many as the hierarchy has values there, whatever the
// number of classes.
func (s *columnSum) measureNodes() {
	c := s.c
	s.need = make([]map[string]int32, c.Domain.height)
	for l := 1; l < len(s.need); l++ {
		s.need[l] = map[string]int32{}
	}
	for x, labs := range c.labels {
		for l := 1; l < len(labs); l++ {
			i, ok := s.need[l][labs[l]]
			if !ok {
				i = int32(len(s.nodes))
				s.need[l][labs[l]] = i
				s.nodes = append(s.nodes, *newStat())
			}
			s.nodes[i].add(int32(x), c.freq[x], s.vals)
		}
	}
}

// node is what the node of the given level and value covers (nil: no such node). A
// leaf's stat is only valid until the next call.
func (s *columnSum) node(level int, value string) *coverStat {
	if level == 0 {
		x, ok := s.c.index[value]
		if !ok {
			return nil
		}
		s.leaf = *newStat()
		s.leaf.add(x, s.c.freq[x], s.vals)
		return &s.leaf
	}
	if i, ok := s.need[level][value]; ok {
		return &s.nodes[i]
	}
	return nil
}

// valueStat is what a released value of a column that is not labeled covers.
func (s *columnSum) valueStat(v string) (*coverStat, error) {
	if st := s.memo[v]; st != nil {
		return st, nil
	}
	st, err := s.idx.stat(v)
	if err != nil {
		return nil, err
	}
	if len(s.memo) < memoMax { // a few values released often (a full-domain release)
		s.memo[v] = st // v is the counter's copy of the value, kept until the end
	}
	return st, nil
}

// add adds the share of size records released as a value covering st.
//
// Non-uniform entropy: a record of leaf x under a value covering F input records
// costs log2 F − log2 f(x): Σ size·log2 F over the released values and the suppressed
// records, less Σ f(x) log2 f(x) over the leaves (in finish). A value covering one leaf
// the input holds costs its records exactly 0: they are left out of both sums (single
// counts them per leaf), so that a release without loss measures 0, not a residue.
func (s *columnSum) add(st *coverStat, size int64) error {
	if st == nil || st.leaves == 0 || st.present == 0 {
		return &Violation{Msg: fmt.Sprintf("column %q: a released value that covers none of the input's values", s.c.Column)}
	}
	s.lossSum += size * (st.leaves - 1)
	switch {
	case s.vals != nil:
		if s.spread > 0 {
			s.ncpSum += float64(size) * min(1, (st.hi-st.lo)/s.spread)
		}
	case st.leaves > 1:
		s.ncpCount += size * st.leaves
	}
	s.addEntropy(st, size)
	return nil
}

func (s *columnSum) addEntropy(st *coverStat, size int64) {
	if st.present == 1 {
		s.single[st.only] += size
	} else {
		s.entropy += float64(size) * math.Log2(float64(st.freq))
	}
}

// finish adds the supp suppressed records (each covering every leaf) and returns the
// column's Σ over records of the loss and of the NCP, and its non-uniform entropy.
func (s *columnSum) finish(supp int64) (loss, ncp, entropy float64) {
	c := s.c
	if supp > 0 {
		all := newStat()
		for x, f := range c.freq {
			all.add(int32(x), f, s.vals)
		}
		s.addEntropy(all, supp)
	}
	entropy = s.entropy
	for x, f := range c.freq {
		if f > s.single[x] {
			entropy -= float64(f-s.single[x]) * math.Log2(float64(f))
		}
	}
	leaves := int64(len(c.leaves))
	loss = float64(supp)
	if leaves > 1 {
		loss += float64(s.lossSum) / float64(leaves-1)
	}
	ncp = float64(supp) + s.ncpSum + float64(s.ncpCount)/float64(leaves)
	return loss, ncp, max(0, entropy)
}

// sortedIndex orders the leaves of a column whose released values are ranges or
// intervals: integer intervals by their exact value, the others by their number.
func (c *utilityColumn) sortedIndex(vals []float64) (*leafIndex, error) {
	idx := &leafIndex{c: c, vals: vals}
	n := len(c.leaves)
	idx.order = make([]int32, n)
	for x := range idx.order {
		idx.order[x] = int32(x)
	}
	intervals := c.Domain.kind == domainIntervals && !c.Ranges
	switch {
	case intervals && c.Type == schema.Integer:
		idx.ints = make([]int64, n)
		for x, v := range c.leaves {
			i, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, &Violation{Msg: fmt.Sprintf("column %q: a value of an integer interval hierarchy that is not a 64-bit integer", c.Column)}
			}
			idx.ints[x] = i
		}
		slices.SortStableFunc(idx.order, func(a, b int32) int { return cmpOrdered(idx.ints[a], idx.ints[b]) })
		sorted := make([]int64, n)
		for i, x := range idx.order {
			sorted[i] = idx.ints[x]
		}
		idx.ints = sorted
	default:
		if vals == nil {
			return nil, &Violation{Msg: fmt.Sprintf("column %q: released as ranges or intervals, but a value of its domain is not a number", c.Column)}
		}
		slices.SortStableFunc(idx.order, func(a, b int32) int { return cmpOrdered(vals[a], vals[b]) })
		idx.floats = make([]float64, n)
		for i, x := range idx.order {
			idx.floats[i] = vals[x]
		}
	}
	idx.preFreq = make([]int64, n+1)
	idx.preLive = make([]int64, n+1)
	for i, x := range idx.order {
		f := c.freq[x]
		idx.preFreq[i+1] = idx.preFreq[i] + f
		idx.preLive[i+1] = idx.preLive[i]
		if f > 0 {
			idx.preLive[i+1]++
		}
	}
	return idx, nil
}

func cmpOrdered[T int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// leafIndex is a column's leaves sorted by value, with prefix sums of their input
// records and of the leaves the input holds.
type leafIndex struct {
	c       *utilityColumn
	vals    []float64 // per leaf, when measured by value
	order   []int32   // leaves by value
	ints    []int64   // sorted values (integer intervals), or
	floats  []float64 // sorted values
	preFreq []int64
	preLive []int64
}

// stat is what a released value covers: the top every leaf, a range or interval the leaves
// whose value lies in it, a value of the domain itself, another number the leaves of
// that value.
func (idx *leafIndex) stat(v string) (*coverStat, error) {
	c := idx.c
	n := len(idx.order)
	var a, b int // the covered positions: [a, b)
	switch lo, hi, open, ok := splitRange(v); {
	case v == c.Domain.top:
		a, b = 0, n
	case ok && idx.ints != nil:
		l, ok1 := new(big.Int).SetString(lo, 10)
		h, ok2 := new(big.Int).SetString(hi, 10)
		if !ok1 || !ok2 || open {
			return nil, &Violation{Msg: fmt.Sprintf("column %q: a released value that is not an integer interval [lo,hi]", c.Column)}
		}
		a, b = intSearch(idx.ints, l, false), intSearch(idx.ints, h, true)
	case ok:
		l, ok1 := idx.bound(lo)
		h, ok2 := idx.bound(hi)
		if !ok1 || !ok2 {
			return nil, &Violation{Msg: fmt.Sprintf("column %q: a released range whose bounds are not values of type %s", c.Column, c.Type)}
		}
		a = sort.SearchFloat64s(idx.floats, l)
		if open {
			b = sort.SearchFloat64s(idx.floats, h)
		} else {
			b = sort.Search(n, func(i int) bool { return idx.floats[i] > h })
		}
	default:
		if x, ok := c.index[v]; ok {
			s := newStat()
			s.add(x, c.freq[x], idx.vals)
			return s, nil
		}
		if idx.ints != nil {
			if i, ok := new(big.Int).SetString(v, 10); ok {
				a, b = intSearch(idx.ints, i, false), intSearch(idx.ints, i, true)
				break
			}
		} else if f, ok := idx.bound(v); ok {
			a = sort.SearchFloat64s(idx.floats, f)
			b = sort.Search(n, func(i int) bool { return idx.floats[i] > f })
			break
		}
		return nil, &Violation{Msg: fmt.Sprintf("column %q: a released value that is neither a range, a value of its domain nor its hierarchy's top", c.Column)}
	}
	s := newStat()
	if b <= a {
		s.leaves = 0
		return s, nil
	}
	s.leaves = int64(b - a)
	s.freq = idx.preFreq[b] - idx.preFreq[a]
	s.present = idx.preLive[b] - idx.preLive[a]
	if s.present == 1 {
		for i := a; i < b; i++ {
			if x := idx.order[i]; c.freq[x] > 0 {
				s.only = x
				break
			}
		}
	}
	if idx.vals != nil {
		s.lo, s.hi = idx.vals[idx.order[a]], idx.vals[idx.order[b-1]]
	}
	return s, nil
}

// bound reads a range bound or a number as the column's values are read.
func (idx *leafIndex) bound(s string) (float64, bool) {
	typ := idx.c.Type
	if idx.c.Domain.kind == domainIntervals && !idx.c.Ranges {
		typ = schema.Float // interval bounds are numbers
	}
	return valueOf(typ, s)
}

// intSearch is the first position whose value is ≥ v (after: > v).
func intSearch(sorted []int64, v *big.Int, after bool) int {
	switch {
	case !v.IsInt64() && v.Sign() < 0:
		return 0
	case !v.IsInt64():
		return len(sorted)
	}
	x := v.Int64()
	if after {
		return sort.Search(len(sorted), func(i int) bool { return sorted[i] > x })
	}
	return sort.Search(len(sorted), func(i int) bool { return sorted[i] >= x })
}

// errNoOriginal reports a release record counted without the input record it
// generalizes while utility is measured.
var errNoOriginal = errors.New("utility: a release record was counted without the input record it generalizes")
