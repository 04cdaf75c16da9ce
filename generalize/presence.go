package generalize

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sync"

	"sanitizer/risk"
)

// Population is the population a table was drawn from, for the models measured
// against it (ARX's research subset: the table holds the records to release, a subset
// of the population's). A released class's population count is the number of the
// population's records whose quasi-identifiers generalize to the class's values at the
// node's levels; the population includes the table's own records.
//
//   - δ-presence (Nergiz, Atzori, Clifton 2007, "Hiding the presence of individuals
//     from shared databases"): every released class's records are a share δ of its
//     population count with DeltaMin ≤ δ ≤ DeltaMax, so that an attacker who knows
//     someone is in the population learns that they are in the release with a
//     probability within those bounds. A class of the population with no record of the
//     table is not released and is not decided.
//   - k-map (Sweeney 2002; El Emam & Dankar 2008, "Protecting privacy using
//     k-anonymity"): every released class's population count is at least KMap, so
//     that each released record could be any of KMap people of the population.
//
// A class that fails either is suppressed, as one that fails k.
//
// Monotonicity under generalization (see models.go). k-map as k-anonymity: a union's
// population count is at least its parts', so a union with a passing part passes,
// with and without suppression. δ-presence: a union's share lies between its parts'
// shares (c₁+c₂)/(p₁+p₂), so a union of passing classes meets the upper bound; but a
// union with a class of the population that holds no record of the table (share 0,
// not released, never decided) lowers the share below the parts', so with DeltaMin >
// 0 a generalization of a node that meets δ-presence can fail it even without
// suppression (ARX calls δ-presence monotone under generalization; it is only with
// DeltaMin = 0). With suppression, a passing class merged with a failing one may fail.
// So δ-presence is monotone only when DeltaMin = 0 and nothing may be suppressed.
type Population struct {
	// Table holds the population's quasi-identifiers encoded with the table's
	// hierarchies: the same columns in the same order, the same leaf codes. Its
	// sensitive columns are not read.
	Table *Table
	// Classes, instead of Table, is the population's class table at its original
	// values (CountClasses or MergeClasses of its parts), for a population counted in
	// parts, as a distributed engine counts it. Its sensitive columns are not read.
	Classes *ClassTable
	// DeltaMin and DeltaMax are δ-presence's bounds (DeltaMax 0: no δ-presence). A
	// class's share is its records / its population count in float64, each correctly
	// rounded, compared with the bounds as given.
	DeltaMin, DeltaMax float64
	// KMap is k-map's k (0: no k-map).
	KMap int
	// Profitability, when not nil, is the game-theoretic model with the journalist's
	// chance (ARX's ProfitabilityJournalist, profit.go): a released class fails when
	// its records' expected payout to the publisher, the adversary succeeding with
	// probability 1/its population count, is not positive.
	Profitability *risk.Game
}

// check rejects a population the models cannot be decided with against table t.
func (p *Population) check(t *Table) error {
	meta := p.Table
	if meta == nil && p.Classes != nil && p.Classes.check() == nil {
		meta = p.Classes.meta
	}
	switch {
	case meta == nil || (p.Table != nil && p.Classes != nil):
		return fmt.Errorf("population: give the population's table or its class table")
	case p.DeltaMax == 0 && p.KMap == 0 && p.Profitability == nil:
		return fmt.Errorf("population: neither δ-presence, k-map nor the journalist's profitability is given")
	case p.DeltaMax != 0 && !(p.DeltaMin >= 0 && p.DeltaMin <= p.DeltaMax && p.DeltaMax <= 1):
		return fmt.Errorf("δ-presence: bounds %g and %g: need 0 ≤ δmin ≤ δmax ≤ 1 and δmax > 0", p.DeltaMin, p.DeltaMax)
	case p.KMap < 0:
		return fmt.Errorf("k-map: k %d: must be at least 1", p.KMap)
	case meta.Rows < t.Rows:
		return fmt.Errorf("population: %d records, fewer than the table's %d", meta.Rows, t.Rows)
	case len(meta.Columns) != len(t.Columns):
		return fmt.Errorf("population: %d quasi-identifiers, the table has %d", len(meta.Columns), len(t.Columns))
	}
	for i, c := range meta.Columns {
		if c.Hierarchy != t.Columns[i].Hierarchy {
			return fmt.Errorf("population: column %q is not encoded with the table's hierarchy", c.Name)
		}
	}
	if p.Table != nil {
		return p.Table.validate()
	}
	return nil
}

// monotone reports whether the models are monotone under generalization with the
// suppression limit (see Population).
func (p *Population) monotone(maxSuppressed int) bool {
	return p.Profitability == nil && (p.DeltaMax == 0 || (p.DeltaMin == 0 && maxSuppressed == 0))
}

// fails reports whether a class of c records and a population count of pop fails a
// model.
func (p *Population) fails(c, pop int32) bool {
	if p.KMap > 0 && pop < int32(p.KMap) {
		return true
	}
	if p.DeltaMax > 0 {
		if pop == 0 {
			return true // not a generalization of the population: cannot happen for a subset
		}
		d := float64(c) / float64(pop)
		return d < p.DeltaMin || d > p.DeltaMax
	}
	return false
}

// popIndex counts the population's records per class of a node. The population's
// classes at a node are rolled up, as the search rolls up the table's own classes,
// from those of a node below it counted before: the population's class table at the
// bottom, or a cached node's (the smallest that lies below).
type popIndex struct {
	model    *Population
	lat      *Lattice
	q        int
	pack     *packing      // the codes of a class in one word (nil: as bytes, no cache)
	maps     [][][][]int32 // maps[i][from][to]: column i's codes from a level to another
	sizes    [][]int       // sizes[i][level]: column i's codes at a level
	cols     [][]int32     // the bottom's classes, for the byte-keyed path
	counts   []int32
	bottom   *classes      // the bottom's classes, packed
	groupers chan *grouper // for the roll-ups, one per worker

	mu      sync.Mutex
	cache   []popTable // the nodes counted
	entries int        // their classes
	limit   int        // the most classes the cache holds
}

// popTable is the population's classes at a node.
type popTable struct {
	node, height int
	cls          *classes
}

func newPopIndex(p *Population, lat *Lattice, workers int) (*popIndex, error) {
	ct := p.Classes
	if ct == nil {
		var err error
		if ct, err = CountClasses(p.Table); err != nil {
			return nil, err
		}
	}
	q := len(ct.meta.Columns)
	x := &popIndex{model: p, lat: lat, q: q, cols: ct.cols, counts: ct.counts, maps: make([][][][]int32, q), sizes: make([][]int, q)}
	leaves := make([]int, q)
	for i, c := range ct.meta.Columns {
		h := c.Hierarchy
		leaves[i] = h.Leaves()
		x.maps[i] = make([][][]int32, h.Height())
		x.sizes[i] = make([]int, h.Height())
		for from := range h.Height() {
			x.sizes[i][from] = h.Size(from)
			x.maps[i][from] = make([][]int32, h.Height())
			for to := from; to < h.Height(); to++ {
				x.maps[i][from][to] = h.levelMap(from, to)
			}
		}
	}
	x.pack = newPacking(leaves)
	if x.pack == nil {
		return x, nil
	}
	words := make([]uint64, len(ct.counts))
	for c := range words {
		for i, col := range ct.cols {
			words[c] |= uint64(col[c]) << x.pack.shift[i]
		}
	}
	x.bottom = &classes{node: 0, packed: words, pack: x.pack, counts: ct.counts, n: len(words)}
	x.groupers = make(chan *grouper, max(workers, 1))
	for range max(workers, 1) {
		x.groupers <- &grouper{pack: x.pack}
	}
	// As many classes as the bottom has (at most the population's records: the cache
	// never outgrows the population's class table), and at least 1 Mi (12 MiB).
	x.limit = max(len(words), 1<<20)
	return x, nil
}

// countsOf returns, per class j of cls (the table's classes at the node of the given
// index and levels), its population count.
func (x *popIndex) countsOf(node int, levels []int, cls *classes) []int32 {
	out := make([]int32, cls.n)
	if x.pack == nil {
		x.countsByBytes(levels, cls, out)
		return out
	}
	key := func(c *classes, j int) uint64 {
		if c.packed != nil && (c.pack == x.pack || slices.Equal(c.pack.shift, x.pack.shift)) {
			return c.packed[j]
		}
		var k uint64
		for i := range x.q {
			k |= uint64(c.code(i, j)) << x.pack.shift[i]
		}
		return k
	}
	index := make(map[uint64]int32, cls.n)
	for j := range cls.n {
		index[key(cls, j)] = int32(j)
	}
	pt := x.rollUp(node, levels)
	for c := range pt.n {
		if j, ok := index[key(pt, c)]; ok {
			out[j] = pt.count(c)
		}
	}
	return out
}

// rollUp returns the population's classes at node, rolled up from the smallest table
// counted at or below it, and caches them.
func (x *popIndex) rollUp(node int, levels []int) *classes {
	x.mu.Lock()
	src, srcNode := x.bottom, -1
	for _, c := range x.cache {
		if c.node == node {
			x.mu.Unlock()
			return c.cls
		}
		if c.cls.n < src.n && x.lat.Leq(c.node, node) {
			src, srcNode = c.cls, c.node
		}
	}
	x.mu.Unlock()
	from := make([]int, x.q)
	if srcNode >= 0 {
		from = x.lat.Levels(srcNode, from[:0])
	}
	maps := make([][]int32, x.q)
	sizes := make([]int, x.q)
	for i := range x.q {
		maps[i] = x.maps[i][from[i]][levels[i]]
		sizes[i] = x.sizes[i][levels[i]]
	}
	g := <-x.groupers
	out, _ := g.rollUp(src, node, maps, sizes, nil, 0)
	x.groupers <- g
	x.mu.Lock()
	defer x.mu.Unlock()
	if out.n <= x.limit/4 {
		x.cache = append(x.cache, popTable{node: node, height: sum(levels), cls: out})
		x.entries += out.n
		for x.entries > x.limit {
			x.evict()
		}
	}
	return out
}

// evict drops the cached table of the highest node (the oldest among equals): the
// nodes near the bottom have the largest tables, the costliest to count again, and
// are the sources of the most nodes.
func (x *popIndex) evict() {
	at := 0
	for i, c := range x.cache {
		if c.height > x.cache[at].height {
			at = i
		}
	}
	x.entries -= x.cache[at].cls.n
	x.cache = append(x.cache[:at], x.cache[at+1:]...)
}

// sum is the sum of levels.
func sum(levels []int) int {
	s := 0
	for _, l := range levels {
		s += l
	}
	return s
}

// countsByBytes is countsOf for codes that do not fit in one word: the bottom's
// classes keyed by their codes' bytes at the node's levels.
func (x *popIndex) countsByBytes(levels []int, cls *classes, out []int32) {
	m := make(map[string]int32, len(x.counts))
	buf := make([]byte, 4*x.q)
	for c, n := range x.counts {
		for i, col := range x.cols {
			binary.LittleEndian.PutUint32(buf[4*i:], uint32(x.maps[i][0][levels[i]][col[c]]))
		}
		m[string(buf)] += n
	}
	for j := range cls.n {
		for i := range x.q {
			binary.LittleEndian.PutUint32(buf[4*i:], uint32(cls.code(i, j)))
		}
		out[j] = m[string(buf)]
	}
}

// Select returns the records of t at the given indexes (in their order) as a table of
// their own: a research subset of a population.
func (t *Table) Select(rows []int) (*Table, error) {
	if len(rows) > math.MaxInt32 {
		return nil, fmt.Errorf("%d records: at most %d can be counted", len(rows), math.MaxInt32)
	}
	out := &Table{Rows: len(rows), Columns: make([]Column, len(t.Columns)), Sensitive: make([]Sensitive, len(t.Sensitive))}
	pick := func(c Codes, leaves int) (Codes, error) {
		d := NewCodes(len(rows), leaves)
		for k, r := range rows {
			if r < 0 || r >= t.Rows {
				return Codes{}, fmt.Errorf("record %d of a table of %d", r, t.Rows)
			}
			d.Set(k, c.At(r))
		}
		return d, nil
	}
	var err error
	for i, c := range t.Columns {
		if c.Codes, err = pick(c.Codes, c.Hierarchy.Leaves()); err != nil {
			return nil, err
		}
		out.Columns[i] = c
	}
	for i, s := range t.Sensitive {
		if s.Codes, err = pick(s.Codes, s.Values); err != nil {
			return nil, err
		}
		out.Sensitive[i] = s
	}
	return out, nil
}

// failPopulation marks in failing every class of cls (the classes at levels) of at
// least k records that fails opt.Population's models (none when it is nil).
func failPopulation(t *Table, opt Options, levels []int, cls *classes, failing []bool) error {
	if opt.Population == nil {
		return nil
	}
	if err := opt.Population.check(t); err != nil {
		return err
	}
	lat := t.lattice()
	x, err := newPopIndex(opt.Population, lat, 1)
	if err != nil {
		return err
	}
	x.pack = nil // one node: no roll-up to share
	pop := make([]int32, cls.n)
	x.countsByBytes(levels, cls, pop)
	for j := range cls.n {
		if !failing[j] && int(cls.count(j)) >= opt.K && x.model.fails(cls.count(j), pop[j]) {
			failing[j] = true
		}
	}
	if g := opt.Population.Profitability; g != nil {
		loss := newClassLoss(t)
		for j := range cls.n {
			if !failing[j] && int(cls.count(j)) >= opt.K && !g.Pays(loss.of(levels, cls, j), int64(pop[j])) {
				failing[j] = true
			}
		}
	}
	return nil
}
