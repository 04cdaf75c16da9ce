package generalize

import (
	"fmt"
	"math"

	"sanitizer/closeness"
)

// Table is the encoded quasi-identifier part of an input: for every quasi-identifier,
// its hierarchy and the leaf code of every record. Raw values are not kept.
type Table struct {
	Rows      int
	Columns   []Column
	Sensitive []Sensitive // the columns l-diversity and t-closeness protect
	// Unit, when not nil, is the person each record is about (the privacy unit):
	// then k-anonymity counts persons, not records (nil: every record is a person of
	// its own).
	Unit *Unit
}

// Unit is the encoded privacy unit: every record's person, numbered 0 … Persons−1.
// A person's records may lie in several classes; a class's persons are the distinct
// persons among its records.
type Unit struct {
	Persons int   // the number of persons the codes may name
	Codes   Codes // person code per record, Len() == Table.Rows (empty in a class table's columns)
}

// Column is one encoded quasi-identifier.
type Column struct {
	Name      string
	Hierarchy *Hierarchy
	Codes     Codes // leaf code per record, Len() == Table.Rows
}

// validate checks that the table is well formed.
func (t *Table) validate() error {
	if len(t.Columns) == 0 {
		return fmt.Errorf("no quasi-identifiers to generalize")
	}
	if t.Rows > math.MaxInt32 {
		return fmt.Errorf("%d records: at most %d can be counted", t.Rows, math.MaxInt32)
	}
	for _, c := range t.Columns {
		if c.Codes.Len() != t.Rows {
			return fmt.Errorf("column %q: %d codes for %d rows", c.Name, c.Codes.Len(), t.Rows)
		}
		if !c.Codes.below(int32(c.Hierarchy.Leaves())) {
			lo, hi := c.Codes.minMax()
			return fmt.Errorf("column %q: leaf codes %d..%d outside the hierarchy's 0..%d", c.Name, lo, hi, c.Hierarchy.Leaves()-1)
		}
	}
	if u := t.Unit; u != nil {
		if u.Codes.Len() != t.Rows {
			return fmt.Errorf("privacy unit: %d codes for %d rows", u.Codes.Len(), t.Rows)
		}
		if u.Persons > math.MaxInt32 || (t.Rows > 0 && !u.Codes.below(int32(u.Persons))) {
			lo, hi := u.Codes.minMax()
			return fmt.Errorf("privacy unit: person codes %d..%d outside 0..%d", lo, hi, u.Persons-1)
		}
	}
	for _, c := range t.Sensitive {
		if c.Codes.Len() != t.Rows {
			return fmt.Errorf("sensitive column %q: %d codes for %d rows", c.Name, c.Codes.Len(), t.Rows)
		}
		if !c.Codes.below(int32(c.Values)) {
			lo, hi := c.Codes.minMax()
			return fmt.Errorf("sensitive column %q: codes %d..%d outside 0..%d", c.Name, lo, hi, c.Values-1)
		}
	}
	return nil
}

// Sensitive is an encoded sensitive column: every record's value, numbered 0 … Values−1
// in the order the ordered distance needs (the caller numbers them), and, for the
// hierarchical distance, the hierarchy over those numbers.
type Sensitive struct {
	Name   string
	Values int
	Codes  Codes
	Tree   *closeness.Tree // nil unless a t-closeness requirement uses the hierarchical distance
}

// lattice is the generalization lattice of t's quasi-identifiers' hierarchies.
func (t *Table) lattice() *Lattice {
	heights := make([]int, len(t.Columns))
	for i, c := range t.Columns {
		heights[i] = c.Hierarchy.Height()
	}
	return NewLattice(heights)
}

// Records returns records lo … hi−1 of t as a table of their own, sharing t's codes:
// one part of an input in parts, whose class table (CountClasses) merges with the
// others' into the whole's.
func (t *Table) Records(lo, hi int) *Table {
	out := &Table{Rows: hi - lo, Columns: make([]Column, len(t.Columns)), Sensitive: make([]Sensitive, len(t.Sensitive))}
	for i, c := range t.Columns {
		c.Codes = c.Codes.Slice(lo, hi)
		out.Columns[i] = c
	}
	for i, s := range t.Sensitive {
		s.Codes = s.Codes.Slice(lo, hi)
		out.Sensitive[i] = s
	}
	if t.Unit != nil {
		out.Unit = &Unit{Persons: t.Unit.Persons, Codes: t.Unit.Codes.Slice(lo, hi)}
	}
	return out
}

// keyLeaves is the number of codes of every column a class of t is keyed by: its
// quasi-identifiers' leaves and, with a privacy unit, the persons (the last column,
// never generalized): a class table of t then holds one entry per class and person.
func (t *Table) keyLeaves() []int {
	leaves := make([]int, len(t.Columns), len(t.Columns)+1)
	for i, c := range t.Columns {
		leaves[i] = c.Hierarchy.Leaves()
	}
	if t.Unit != nil {
		leaves = append(leaves, t.Unit.Persons)
	}
	return leaves
}

// keyCodes is the codes of those columns, per record.
func (t *Table) keyCodes() []Codes {
	codes := make([]Codes, len(t.Columns), len(t.Columns)+1)
	for i, c := range t.Columns {
		codes[i] = c.Codes
	}
	if t.Unit != nil {
		codes = append(codes, t.Unit.Codes)
	}
	return codes
}
