package generalize

import (
	"fmt"
	"slices"

	"sanitizer/diversity"
)

// A table with a privacy unit (Table.Unit) is searched on entries: its class tables
// are keyed by the quasi-identifiers' codes and the person, one entry per class and
// person, with the person's records in the class as its count. Generalization maps a
// node's entries onto the entries of every node above it (the person column is never
// generalized), so every roll-up, cache and merge of class tables works on entries as
// on classes; a node's classes are its entries collapsed (collapse): an entry per
// class, its records summed, its persons the entries it merged. k is then decided on
// the persons, and everything counted in records (the suppression limit, the
// metrics) on the records, as without a unit.

// unitMaps holds the person column's maps: identity (a roll-up keeps every person)
// and zero (a collapse merges them).
type unitMaps struct {
	identity, zero []int32
}

// newUnitMaps returns the maps of a unit of the given number of persons.
func newUnitMaps(persons int) *unitMaps {
	return &unitMaps{identity: identityMap(persons), zero: make([]int32, persons)}
}

// identityMap is the map of n codes to themselves.
func identityMap(n int) []int32 {
	m := make([]int32, n)
	for c := range m {
		m[c] = int32(c)
	}
	return m
}

// withUnit appends to the maps and sizes of a roll-up of t's records (or class table)
// the person column's, when t has a unit: the identity.
func (t *Table) withUnit(maps [][]int32, sizes []int) ([][]int32, []int) {
	if t.Unit == nil {
		return maps, sizes
	}
	return append(maps, identityMap(t.Unit.Persons)), append(sizes, t.Unit.Persons)
}

// nodeClassesOf returns the classes of the node of the given levels of t from cls, a
// roll-up of src (the records or a class table) onto it whose source class j went to
// cls's class assign[j], with their histograms of mod's columns: cls itself, or, with a
// unit, its entries collapsed, their histograms in persons, and assign rewritten to
// the classes (the entries kept beside them).
func nodeClassesOf(g *grouper, mod *models, t *Table, levels []int, src, cls *classes, assign []int32) *unitClasses {
	if t.Unit == nil {
		cls.hist = mod.rollHist(src, assign, cls.n)
		return &unitClasses{cls: cls}
	}
	q := len(t.Columns)
	maps, sizes := make([][]int32, q+1), make([]int, q+1)
	for i, c := range t.Columns {
		maps[i], sizes[i] = c.Hierarchy.levelMap(levels[i], levels[i]), c.Hierarchy.Size(levels[i])
	}
	cls.hist = mod.rollHist(src, assign, cls.n)
	out, of := collapseEntries(g, cls, maps, sizes, make([]int32, t.Unit.Persons))
	out.hist = mod.personHists(cls, of, out.n, mod.cols, &histScratch{})
	for j, e := range assign {
		assign[j] = of[e]
	}
	return &unitClasses{cls: out, entries: cls, of: of}
}

// unitClasses is a node's classes and, with a unit, its entries, entry j in class
// of[j].
type unitClasses struct {
	cls, entries *classes
	of           []int32
}

// failing returns the classes of u that fail the models of opt, and, with linkable
// records, the persons multirelational k-anonymity suppresses (nil: none), for table t
// at the node of the given levels.
func (u *unitClasses) failing(mod *models, t *Table, levels []int, opt Options) ([]bool, *linked, error) {
	failing := mod.failing(u.cls, opt.K)
	if err := failPopulation(t, opt, levels, u.cls, failing); err != nil {
		return nil, nil, err
	}
	failProfit(t, opt, levels, u.cls, failing)
	if opt.Risks.any() {
		if err := enforceRisksAt(u.cls, failing, len(t.Columns), opt); err != nil {
			return nil, nil, err
		}
	}
	if !opt.Linkable {
		return failing, nil, nil
	}
	l := linkPersons(u.entries, u.of, len(t.Columns), u.cls, failing, int32(opt.K), t.Unit.Persons)
	return l.failing, l, nil
}

// enforceRisksAt marks failing the classes of cls (q columns) that enforcing the
// risk-based models suppresses (riskChoice), as the search did at the node. Whether
// the models then hold is the search's verdict and the verifier's check: here the
// classes are only marked.
func enforceRisksAt(cls *classes, failing []bool, q int, opt Options) error {
	chosen, _, err := riskChoice(cls, failing, q, opt)
	for _, j := range chosen {
		failing[j] = true
	}
	return err
}

// riskChoice is the classes of cls (q columns) that enforcing the risk-based models
// suppresses (Risks.enforce) besides those failing k or marked in failing, within
// opt's suppression limit, and whether the models then hold.
func riskChoice(cls *classes, failing []bool, q int, opt Options) ([]int32, bool, error) {
	k := int32(opt.K)
	out := func(j int) bool { return cls.personsOf(j) < k || failing[j] }
	supp := 0
	for j := range cls.n {
		if out(j) {
			supp += int(cls.count(j))
		}
	}
	return opt.Risks.enforce(cls.n, func(j int) int32 {
		if out(j) {
			return 0
		}
		return cls.count(j)
	}, byCodes(cls, q), opt.MaxSuppressed-supp)
}

// keyMaps returns the maps and the sizes of a roll-up from a node of levels from to
// one of levels to: maps[i] the codes of quasi-identifier i, and, with a unit, the
// person column's identity last. Given scratch, they are its slices, valid until its
// next use (nil: allocated).
func (s *searcher) keyMaps(from, to []int, scratch *nodeScratch) ([][]int32, []int) {
	var maps [][]int32
	var sizes []int
	if scratch != nil && cap(scratch.maps) > s.q {
		maps, sizes = scratch.maps[:s.q], scratch.sizes[:s.q]
	} else {
		maps, sizes = make([][]int32, s.q, s.q+1), make([]int, s.q, s.q+1)
		if scratch != nil {
			scratch.maps, scratch.sizes = maps, sizes
		}
	}
	for i := range s.q {
		maps[i] = s.maps[i][from[i]][to[i]]
		sizes[i] = s.t.Columns[i].Hierarchy.Size(to[i])
	}
	if s.unit != nil {
		maps = append(maps, s.unit.identity)
		sizes = append(sizes, s.t.Unit.Persons)
	}
	return maps, sizes
}

// collapse turns c's classes, when the table has a unit, into the node's entries
// (c.entries) and their collapse (c.cls): the classes of the node, each with its
// records and its persons, and, when the models read them, their value sets and their
// histograms in persons. The entries get their histograms first (they are the source
// of later roll-ups, which read them). Without a unit, or when the count stopped
// (c.cls nil), it does nothing.
func (s *searcher) collapse(c *nodeCount, g *grouper) {
	if s.unit == nil || c.cls == nil {
		return
	}
	e := c.cls
	if s.withHist() && e.hist == nil {
		e.hist = s.mod.rollHists(c.src, c.assign, e.n, s.mod.histCols, &g.hist)
	}
	maps, sizes := s.keyMaps(c.levels, c.levels, nil)
	cls, of := collapseEntries(g, e, maps, sizes, s.unit.zero)
	if s.mod.any() {
		cls.sets = s.mod.rollSets(e, of, cls.n)
		cls.hist = s.mod.personHists(e, of, cls.n, s.mod.histCols, &g.hist)
	}
	c.entries, c.cls, c.of = e, cls, of
}

// personHists returns the histograms in persons of the classes (n of them) whose
// entries are e, entry j in class of[j]: a value's count is the class's entries, one
// per person, that hold it.
func (m *models) personHists(e *classes, of []int32, n int, cols []int, sc *histScratch) []*hist {
	held := &classes{n: e.n, hist: make([]*hist, len(e.hist))}
	for _, col := range cols {
		h := e.hist[col]
		ones := make([]int32, len(h.val))
		for i := range ones {
			ones[i] = 1
		}
		held.hist[col] = &hist{off: h.off, val: h.val, cnt: ones}
	}
	return m.rollHists(held, of, n, cols, sc)
}

// collapseEntries returns the classes whose entries are e (a node's classes keyed by
// the person too) and the class of every entry: maps and sizes are those of a roll-up
// of e onto its own node (the identity of every quasi-identifier, then the person
// column's), whose person map collapse replaces by zero, a map of as many persons to 0.
func collapseEntries(g *grouper, e *classes, maps [][]int32, sizes []int, zero []int32) (*classes, []int32) {
	last := len(maps) - 1
	maps, sizes = slices.Clone(maps), slices.Clone(sizes)
	maps[last], sizes[last] = zero, 1
	assign := make([]int32, e.n)
	cls, _ := g.rollUp(e, e.node, maps, sizes, assign, 0)
	cls.persons = make([]int32, cls.n)
	for _, a := range assign {
		cls.persons[a]++
	}
	return cls, assign
}

// checkUnit rejects the requirements that are not yet decided in persons: with a unit,
// every model must count persons, and a model that would count records is refused
// rather than applied to them.
func checkUnit(t *Table, opt Options) error {
	if t.Unit == nil {
		return nil
	}
	for _, d := range opt.Diversity {
		if d.Model.Variant != diversity.Distinct {
			return fmt.Errorf("%s l-diversity has no meaning in persons: use distinct, decided in persons as (k,l)-diversity", d.Model.Variant)
		}
	}
	switch {
	case opt.Risks.any():
		return fmt.Errorf("the risk-based models are not decided in persons in this version")
	case opt.Population != nil:
		return fmt.Errorf("δ-presence and k-map are not decided in persons in this version")
	}
	return nil
}
