package generalize

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"

	"sanitizer/internal/safe"
)

// Cut counts a table's records at per-column minimum levels instead of at their
// leaves, for a search that may not release any quasi-identifier below them
// (Options.MinLevels): every record's leaf of quasi-identifier i is replaced by a
// representative of its value at level Levels()[i], the least leaf code under that
// value. Records that share their values at the minimum levels then share their codes,
// so the class table of the replaced records (a cut class table) has one class per
// distinct combination of the minimum levels' values: no more, and often far fewer,
// than the table's own class table, and the most a driver that merges the parts of a
// table read in parts has to hold.
//
// A cut class table is an ordinary ClassTable over the table's own hierarchies:
// MergeClasses, MarshalBinary and UnmarshalClasses take it as they take any other.
// At every node at or above the cut it has the table's classes, counts and sensitive
// histograms exactly (a representative has its leaf's value at every level from the
// cut up), and every metric's quantities are the original hierarchy's (leaves under
// a value, levels, heights). So Cut.Search returns what SearchClasses of the table's
// own class table returns with the same options — node, metric and value, classes and
// suppressed records — and Cut.Recoding suppresses and numbers the classes
// NodeRecoding of the table's own class table does, at the same levels: no level is
// shifted. Below the cut its classes are not the table's; Cut.Search never chooses
// such a node, and Cut.Recoding refuses one.
//
// With a privacy unit (Table.Unit) a cut class table holds entries, one per class and
// person, as any class table of such a table does: the person's code is kept, never
// cut, so that parts that number the persons alike merge exactly and the search counts
// the persons of every class as it does on the table's own class table.
//
// The metrics that read the frequencies of the leaves themselves (CutNeedsLeafCounts:
// entropy and entropy-monotone, and ncp measuring a column by numeric leaf values) need
// the table's records per leaf beside the cut class table (LeafCounts, counted part by
// part and added up); the others need nothing more.
type Cut struct {
	levels  []int
	columns []Column  // names and hierarchies, without codes
	rep     [][]int32 // rep[i][leaf]: the representative of leaf's value at levels[i]
}

// NewCut returns the cut of the quasi-identifiers columns (names and hierarchies, in
// table order; their codes are not read) at the given levels, one per column, each
// from 0 (the leaves: nothing is merged) to the top level.
func NewCut(columns []Column, levels []int) (*Cut, error) {
	if len(levels) != len(columns) {
		return nil, fmt.Errorf("cut: %d levels for %d quasi-identifiers", len(levels), len(columns))
	}
	c := &Cut{levels: slices.Clone(levels), columns: make([]Column, len(columns)), rep: make([][]int32, len(columns))}
	for i, col := range columns {
		h := col.Hierarchy
		if h == nil {
			return nil, fmt.Errorf("cut: column %q has no hierarchy", col.Name)
		}
		if levels[i] < 0 || levels[i] >= h.Height() {
			return nil, fmt.Errorf("cut: column %q: level %d outside its hierarchy's 0..%d", col.Name, levels[i], h.Height()-1)
		}
		c.columns[i] = Column{Name: col.Name, Hierarchy: h}
		first := make([]int32, h.Size(levels[i]))
		for v := range first {
			first[v] = -1
		}
		rep := make([]int32, h.Leaves())
		for leaf := range rep {
			v := h.Code(levels[i], int32(leaf))
			if first[v] < 0 {
				first[v] = int32(leaf)
			}
			rep[leaf] = first[v]
		}
		c.rep[i] = rep
	}
	return c, nil
}

// Levels are the cut's level per quasi-identifier, in table order.
func (c *Cut) Levels() []int { return slices.Clone(c.levels) }

// Leaf returns the representative of leaf code leaf of quasi-identifier i: the code
// its record is counted with in a cut class table. leaf must be a leaf code of the
// column's hierarchy.
func (c *Cut) Leaf(i int, leaf int32) int32 { return c.rep[i][leaf] }

// isRep reports whether code is a representative of quasi-identifier i.
func (c *Cut) isRep(i int, code int32) bool {
	return code >= 0 && int(code) < len(c.rep[i]) && c.rep[i][code] == code
}

// matches returns an error unless cols are the cut's quasi-identifiers: the same
// names and hierarchies in the same order.
func (c *Cut) matches(cols []Column) error {
	if len(cols) != len(c.columns) {
		return fmt.Errorf("%w: %d quasi-identifiers, the cut has %d", ErrIncompatible, len(cols), len(c.columns))
	}
	for i, col := range cols {
		if col.Name != c.columns[i].Name || !sameHierarchy(col.Hierarchy, c.columns[i].Hierarchy) {
			return fmt.Errorf("%w: quasi-identifier %d is %q, the cut's %q (or its hierarchy differs)", ErrIncompatible, i, col.Name, c.columns[i].Name)
		}
	}
	return nil
}

// Table returns the records of t with every leaf code replaced by its representative
// (new codes; the hierarchies and sensitive columns are t's own): CountClasses of it is
// a cut class table, a part of one when t is a part of a table.
func (c *Cut) Table(t *Table) (*Table, error) {
	if t == nil {
		return nil, errors.New("cut: no table")
	}
	if err := c.matches(t.Columns); err != nil {
		return nil, fmt.Errorf("cut: %w", err)
	}
	if err := t.validate(); err != nil {
		return nil, fmt.Errorf("cut: %w", err)
	}
	out := &Table{Rows: t.Rows, Columns: make([]Column, len(t.Columns)), Sensitive: t.Sensitive, Unit: t.Unit}
	for i, col := range t.Columns {
		codes := NewCodes(t.Rows, col.Hierarchy.Leaves())
		rep := c.rep[i]
		for r := range t.Rows {
			codes.Set(r, rep[col.Codes.At(r)])
		}
		out.Columns[i] = Column{Name: col.Name, Hierarchy: col.Hierarchy, Codes: codes}
	}
	return out, nil
}

// Classes returns the cut class table of the records whose class table ct is (their
// classes at the leaves, or cut already: then it equals ct): the classes that share
// representatives merged, their counts and histograms added.
func (c *Cut) Classes(ct *ClassTable) (out *ClassTable, err error) {
	err = safe.Call(func() error {
		out, err = c.classes(ct)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// classes is Classes, its panics not recovered.
func (c *Cut) classes(ct *ClassTable) (*ClassTable, error) {
	if err := ct.check(); err != nil {
		return nil, fmt.Errorf("cut: %w", err)
	}
	if err := c.matches(ct.meta.Columns); err != nil {
		return nil, fmt.Errorf("cut: %w", err)
	}
	q := len(c.columns)
	leaves := make([]int, q)
	for i, col := range c.columns {
		leaves[i] = col.Hierarchy.Leaves()
	}
	src := &classes{cols: ct.cols, counts: ct.counts, n: ct.Len(), hist: ct.hist}
	var assign []int32
	if len(ct.meta.Sensitive) > 0 {
		assign = make([]int32, src.n)
	}
	// With a unit, the person's code is a key column after the quasi-identifiers,
	// mapped to itself: the entries of a person in classes the cut merges are merged.
	maps, keys := ct.meta.withUnit(slices.Clone(c.rep), leaves)
	g := &grouper{par: runtime.GOMAXPROCS(0)}
	cls, _ := g.rollUp(src, 0, maps, keys, assign, 0)
	if len(ct.meta.Sensitive) > 0 {
		all := &models{t: ct.meta}
		for col := range ct.meta.Sensitive {
			all.use(col)
		}
		cls.hist = all.rollHist(src, assign, cls.n)
	}
	out, _ := canonical(ct.meta, cls, keys)
	return out, nil
}

// Check returns an error unless ct is a cut class table of the cut's quasi-identifiers:
// their names and hierarchies, every code a representative. (A table cut at levels
// above the cut's has representatives of it too, and is not told apart.)
func (c *Cut) Check(ct *ClassTable) error {
	if err := ct.check(); err != nil {
		return fmt.Errorf("cut: %w", err)
	}
	if err := c.matches(ct.meta.Columns); err != nil {
		return fmt.Errorf("cut: %w", err)
	}
	for i, col := range ct.cols[:len(c.columns)] { // a unit's person codes are not cut
		for j, code := range col {
			if !c.isRep(i, code) {
				return fmt.Errorf("cut: class %d's code %d of %q is not a representative of level %d: the class table is not cut there", j, code, c.columns[i].Name, c.levels[i])
			}
		}
	}
	return nil
}

// Population returns p with its records (Table or Classes) cut as the table's: what
// Cut.Search needs of a population (δ-presence, k-map). p itself is not modified.
func (c *Cut) Population(p *Population) (*Population, error) {
	if p == nil {
		return nil, nil
	}
	out := *p
	var err error
	switch {
	case p.Table != nil && p.Classes != nil:
		return nil, errors.New("cut: population: give the population's table or its class table")
	case p.Table != nil:
		out.Table, err = c.Table(p.Table)
	case p.Classes != nil:
		out.Classes, err = c.Classes(p.Classes)
	default:
		return nil, errors.New("cut: population: no table nor class table")
	}
	if err != nil {
		return nil, fmt.Errorf("population: %w", err)
	}
	return &out, nil
}

// checkPopulation returns an error unless p's records are cut.
func (c *Cut) checkPopulation(p *Population) error {
	switch {
	case p.Table != nil:
		for i, col := range p.Table.Columns {
			if i >= len(c.rep) || col.Codes.Len() != p.Table.Rows {
				break // the population's own check reports it
			}
			for r := range p.Table.Rows {
				if !c.isRep(i, col.Codes.At(r)) {
					return fmt.Errorf("cut: population record %d: the code of %q is not a representative: cut the population too (Cut.Population)", r, col.Name)
				}
			}
		}
	case p.Classes != nil:
		if err := c.Check(p.Classes); err != nil {
			return fmt.Errorf("population: %w (Cut.Population cuts it)", err)
		}
	}
	return nil
}

// atCut returns opt with MinLevels the cut's when it has none, or an error when one of
// its minimum levels lies below the cut's.
func (c *Cut) atCut(opt Options) (Options, error) {
	if opt.MinLevels == nil {
		opt.MinLevels = slices.Clone(c.levels)
		return opt, nil
	}
	if len(opt.MinLevels) != len(c.levels) {
		return opt, fmt.Errorf("cut: %d minimum levels for %d quasi-identifiers", len(opt.MinLevels), len(c.levels))
	}
	for i, l := range opt.MinLevels {
		if l < c.levels[i] {
			return opt, fmt.Errorf("cut: column %q: minimum level %d below the cut's %d: the class table cannot tell its classes there", c.columns[i].Name, l, c.levels[i])
		}
	}
	return opt, nil
}

// CutNeedsLeafCounts reports whether opt's metric reads the frequencies of the
// original leaves, which a cut class table does not hold: entropy and
// entropy-monotone (every leaf's records), and ncp with numeric values for some column
// (which leaves are present). Cut.Search then needs the table's LeafCounts.
func CutNeedsLeafCounts(opt Options) bool {
	switch opt.Metric {
	case MetricEntropy, MetricEntropyMonotone:
		return true
	case MetricNCP:
		for _, v := range opt.Values {
			if v != nil {
				return true
			}
		}
	}
	return false
}

// ErrNoLeafCounts is matched (errors.Is) by the error of Cut.Search for a metric that
// needs the table's leaf counts (CutNeedsLeafCounts) when it is given none.
var ErrNoLeafCounts = errors.New("the metric needs the records per original leaf beside a cut class table")

// Search is SearchClasses on the cut class table ct (Cut.Table or Cut.Classes of a
// table's records, or a merge of their parts): with the same options it reports the
// same Levels, Metric, Value, Classes, MinClass and Suppressed as SearchClasses on the
// table's own class table with MinLevels at least the cut's, and the same error when no
// node meets the models. opt.MinLevels nil stands for the cut's levels; a minimum below
// the cut is an error. leaves are the table's records per leaf (LeafCounts); nil when
// the metric does not need them (CutNeedsLeafCounts), else ErrNoLeafCounts. Given,
// they must be the same records' (their counts rolled to representatives are ct's).
// opt.Population's records must be cut too (Cut.Population). ct must be a cut class
// table of c (Check).
func (c *Cut) Search(ctx context.Context, ct *ClassTable, leaves LeafCounts, opt Options) (res *Result, err error) {
	err = safe.Call(func() error {
		res, err = c.search(ctx, ct, leaves, opt)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// search is Search, its panics not recovered.
func (c *Cut) search(ctx context.Context, ct *ClassTable, leaves LeafCounts, opt Options) (*Result, error) {
	if err := c.Check(ct); err != nil {
		return nil, fmt.Errorf("searching classes: %w", err)
	}
	opt, err := c.atCut(opt)
	if err != nil {
		return nil, err
	}
	if leaves == nil && CutNeedsLeafCounts(opt) {
		return nil, fmt.Errorf("cut: metric %q: %w", opt.Metric, ErrNoLeafCounts)
	}
	if leaves != nil {
		if err := c.checkLeaves(ct, leaves); err != nil {
			return nil, err
		}
	}
	if opt.Population != nil {
		if err := c.checkPopulation(opt.Population); err != nil {
			return nil, err
		}
	}
	s, err := prepareSearch(ct.meta, cutTally{ct: ct, leaves: leaves}, ct.Len(), opt)
	if err != nil {
		return nil, err
	}
	if s.grouped { // a unit's entries grouped by person, as SearchClasses has them
		s.bottom = ct.groupedBottom(s.pack)
	} else {
		s.bottom = ct.bottom(s.pack)
	}
	return s.run(ctx)
}

// checkLeaves returns an error unless leaves are records per leaf of ct's records:
// one count per leaf of every quasi-identifier, added up per representative ct's.
func (c *Cut) checkLeaves(ct *ClassTable, leaves LeafCounts) error {
	if len(leaves) != len(c.columns) {
		return fmt.Errorf("cut: leaf counts of %d quasi-identifiers for %d", len(leaves), len(c.columns))
	}
	for i, col := range c.columns {
		if len(leaves[i]) != col.Hierarchy.Leaves() {
			return fmt.Errorf("cut: column %q: %d leaf counts for %d leaves", col.Name, len(leaves[i]), col.Hierarchy.Leaves())
		}
		perRep := make([]int64, len(leaves[i]))
		for leaf, n := range leaves[i] {
			if n < 0 {
				return fmt.Errorf("cut: column %q: leaf %d counts %d records", col.Name, leaf, n)
			}
			perRep[c.rep[i][leaf]] += n
		}
		if !slices.Equal(perRep, ct.leafCounts(i)) {
			return fmt.Errorf("cut: column %q: the leaf counts are not of the class table's records", col.Name)
		}
	}
	return nil
}

// cutTally is a cut class table as a tallier: its sensitive values' counts, and the
// table's records per leaf when given (else the class table's, per representative,
// which every metric but CutNeedsLeafCounts's reads only through the values at the
// node's levels).
type cutTally struct {
	ct     *ClassTable
	leaves LeafCounts
}

func (t cutTally) leafCounts(i int) []int64 {
	if t.leaves == nil {
		return t.ct.leafCounts(i)
	}
	return slices.Clone(t.leaves[i])
}

func (t cutTally) valueCounts(col int) []int64 { return t.ct.valueCounts(col) }

func (t cutTally) personHolders(col int) ([]int64, int64) { return t.ct.personHolders(col) }

// Recoding is NodeRecoding of the cut class table ct at levels at or above the cut: it
// suppresses, numbers and publishes the classes NodeRecoding of the table's own class
// table does there. Its Class takes a record's original leaf codes (or their
// representatives, alike). Levels below the cut are refused.
func (c *Cut) Recoding(ct *ClassTable, levels []int, opt Options) (*Recoding, error) {
	if err := c.Check(ct); err != nil {
		return nil, fmt.Errorf("recoding classes: %w", err)
	}
	if len(levels) != len(c.levels) {
		return nil, fmt.Errorf("recoding classes: node has %d levels for %d quasi-identifiers", len(levels), len(c.levels))
	}
	for i, l := range levels {
		if l < c.levels[i] {
			return nil, fmt.Errorf("recoding classes: column %q: level %d below the cut's %d", c.columns[i].Name, l, c.levels[i])
		}
	}
	return NodeRecoding(ct, levels, opt)
}

// LeafCounts is, per quasi-identifier of a table in table order, its records per leaf
// code: what a search on a cut class table needs of the original leaves for the
// metrics of CutNeedsLeafCounts. Parts' counts add up (MergeLeafCounts).
type LeafCounts [][]int64

// CountLeaves counts the records of t per leaf of every quasi-identifier.
func CountLeaves(t *Table) (LeafCounts, error) {
	if t == nil {
		return nil, errors.New("counting leaves: no table")
	}
	if err := t.validate(); err != nil {
		return nil, fmt.Errorf("counting leaves: %w", err)
	}
	out := make(LeafCounts, len(t.Columns))
	for i := range t.Columns {
		out[i] = t.leafCounts(i)
	}
	return out, nil
}

// MergeLeafCounts adds up the leaf counts of parts, which must have the same columns
// and leaves; the parts are not modified.
func MergeLeafCounts(parts ...LeafCounts) (LeafCounts, error) {
	if len(parts) == 0 {
		return nil, errors.New("merging leaf counts: no parts")
	}
	out := make(LeafCounts, len(parts[0]))
	for i, col := range parts[0] {
		out[i] = make([]int64, len(col))
	}
	for p, part := range parts {
		if len(part) != len(out) {
			return nil, fmt.Errorf("%w: leaf counts of part %d have %d quasi-identifiers, part 0's %d", ErrIncompatible, p, len(part), len(out))
		}
		for i, col := range part {
			if len(col) != len(out[i]) {
				return nil, fmt.Errorf("%w: leaf counts of part %d: quasi-identifier %d has %d leaves, part 0's %d", ErrIncompatible, p, i, len(col), len(out[i]))
			}
			for leaf, n := range col {
				if n < 0 || out[i][leaf] > math.MaxInt64-n {
					return nil, fmt.Errorf("merging leaf counts: part %d, quasi-identifier %d, leaf %d: count %d out of range", p, i, leaf, n)
				}
				out[i][leaf] += n
			}
		}
	}
	return out, nil
}

// Magics of the encodings of cut tables (version 1).
const (
	cutTableMagic  = "SCC1"
	leafCountMagic = "SLC1"
)

// MarshalClasses encodes the cut class table ct as MarshalBinary does, with the cut's
// levels ahead, which UnmarshalClasses of a cut checks: a part counted at other levels
// is refused rather than merged.
func (c *Cut) MarshalClasses(ct *ClassTable) ([]byte, error) {
	if err := c.Check(ct); err != nil {
		return nil, err
	}
	body, err := ct.MarshalBinary()
	if err != nil {
		return nil, err
	}
	b := append([]byte(cutTableMagic), c.header()...)
	return append(b, body...), nil
}

// header is the cut's levels, uvarints after their number.
func (c *Cut) header() []byte {
	b := binary.AppendUvarint(nil, uint64(len(c.levels)))
	for _, l := range c.levels {
		b = binary.AppendUvarint(b, uint64(l))
	}
	return b
}

// UnmarshalClasses decodes data (MarshalClasses's, of a cut at the same levels) as a
// cut class table of the columns of like (its quasi-identifiers must be the cut's; see
// the package's UnmarshalClasses). Data of another cut, or whose codes are not
// representatives, is an error.
func (c *Cut) UnmarshalClasses(data []byte, like *Table) (*ClassTable, error) {
	if like == nil {
		return nil, errors.New("cut class table: no table to decode it for")
	}
	if err := c.matches(like.Columns); err != nil {
		return nil, fmt.Errorf("cut class table: %w", err)
	}
	rest, ok := c.stripHeader(data, cutTableMagic)
	if !ok {
		return nil, fmt.Errorf("%w: not a cut class table of levels %v", errClassTableData, c.levels)
	}
	ct, err := UnmarshalClasses(rest, like)
	if err != nil {
		return nil, err
	}
	if err := c.Check(ct); err != nil {
		return nil, fmt.Errorf("%w: %w", errClassTableData, err)
	}
	return ct, nil
}

// stripHeader returns data after magic and the cut's own header, or false.
func (c *Cut) stripHeader(data []byte, magic string) ([]byte, bool) {
	h := append([]byte(magic), c.header()...)
	if len(data) < len(h) || string(data[:len(h)]) != string(h) {
		return nil, false
	}
	return data[len(h):], true
}

// MarshalBinary encodes the leaf counts: per quasi-identifier, its number of leaves
// and their counts.
func (lc LeafCounts) MarshalBinary() ([]byte, error) {
	b := binary.AppendUvarint([]byte(leafCountMagic), uint64(len(lc)))
	for _, col := range lc {
		b = binary.AppendUvarint(b, uint64(len(col)))
		for _, n := range col {
			if n < 0 {
				return nil, fmt.Errorf("leaf counts: a count %d below 0", n)
			}
			b = binary.AppendUvarint(b, uint64(n))
		}
	}
	return b, nil
}

// UnmarshalLeafCounts decodes data (LeafCounts.MarshalBinary's) as the leaf counts of
// the quasi-identifiers of like (their hierarchies' leaves; like's codes are not
// read). Data that is not such counts is an error.
func UnmarshalLeafCounts(data []byte, like *Table) (LeafCounts, error) {
	if like == nil {
		return nil, errors.New("leaf counts: no table to decode them for")
	}
	if len(data) < len(leafCountMagic) || string(data[:len(leafCountMagic)]) != leafCountMagic {
		return nil, errors.New("not encoded leaf counts: no header")
	}
	b := data[len(leafCountMagic):]
	var bad error
	next := func(most uint64) uint64 {
		if bad != nil {
			return 0
		}
		x, k := binary.Uvarint(b)
		switch {
		case k <= 0:
			bad = errors.New("truncated")
		case k > 1 && b[k-1] == 0:
			bad = errors.New("a number not in its shortest form")
		case x > most:
			bad = fmt.Errorf("a number %d above %d", x, most)
		}
		if bad != nil {
			return 0
		}
		b = b[k:]
		return x
	}
	q := int(next(uint64(len(like.Columns))))
	if bad == nil && q != len(like.Columns) {
		bad = fmt.Errorf("%d quasi-identifiers, the table has %d", q, len(like.Columns))
	}
	out := make(LeafCounts, q)
	for i := 0; i < q && bad == nil; i++ {
		leaves := like.Columns[i].Hierarchy.Leaves()
		if k := int(next(uint64(leaves))); bad == nil && k != leaves {
			bad = fmt.Errorf("quasi-identifier %q: %d counts for %d leaves", like.Columns[i].Name, k, leaves)
		}
		out[i] = make([]int64, leaves)
		for leaf := 0; leaf < leaves && bad == nil; leaf++ {
			out[i][leaf] = int64(next(math.MaxInt64))
		}
	}
	if bad == nil && len(b) != 0 {
		bad = fmt.Errorf("%d bytes after the counts", len(b))
	}
	if bad != nil {
		return nil, fmt.Errorf("not encoded leaf counts: %w", bad)
	}
	return out, nil
}
