package generalize

import (
	"fmt"
	"slices"
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

// collapseAt is collapseEntries for the node of the given levels of t, whose entries
// are e.
func collapseAt(g *grouper, e *classes, t *Table, levels []int) (*classes, []int32) {
	q := len(t.Columns)
	maps, sizes := make([][]int32, q+1), make([]int, q+1)
	for i, c := range t.Columns {
		maps[i], sizes[i] = c.Hierarchy.levelMap(levels[i], levels[i]), c.Hierarchy.Size(levels[i])
	}
	return collapseEntries(g, e, maps, sizes, make([]int32, t.Unit.Persons))
}

// keyMaps returns the maps and the sizes of a roll-up from a node of levels from to
// one of levels to: maps[i] the codes of quasi-identifier i, and, with a unit, the
// person column's identity last.
func (s *searcher) keyMaps(from, to []int) ([][]int32, []int) {
	maps := make([][]int32, s.q, s.q+1)
	sizes := make([]int, s.q, s.q+1)
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
// records and its persons. Without a unit, or when the count stopped (c.cls nil), it
// does nothing.
func (s *searcher) collapse(c *nodeCount, g *grouper) {
	if s.unit == nil || c.cls == nil {
		return
	}
	c.entries = c.cls
	c.cls = s.collapseEntries(c.entries, c.levels, g)
}

// collapseEntries returns the classes of the node of the given levels whose entries
// are e: the person column zeroed, the entries of a class merged, their records
// summed and their number its persons.
func (s *searcher) collapseEntries(e *classes, levels []int, g *grouper) *classes {
	maps, sizes := s.keyMaps(levels, levels)
	cls, _ := collapseEntries(g, e, maps, sizes, s.unit.zero)
	return cls
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
	switch {
	case len(opt.Diversity)+len(opt.Closeness)+len(opt.Likeness) > 0:
		return fmt.Errorf("l-diversity, t-closeness and β-likeness are not decided in persons in this version")
	case opt.Risks.any():
		return fmt.Errorf("the risk-based models are not decided in persons in this version")
	case opt.Population != nil:
		return fmt.Errorf("δ-presence and k-map are not decided in persons in this version")
	}
	return nil
}
