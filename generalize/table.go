package generalize

import (
	"fmt"
	"math"
)

// Table is the encoded quasi-identifier part of an input: for every quasi-identifier,
// its hierarchy and the leaf code of every record. Raw values are not kept.
type Table struct {
	Rows    int
	Columns []Column
}

// Column is one encoded quasi-identifier.
type Column struct {
	Name      string
	Hierarchy *Hierarchy
	Codes     []int32 // leaf code per record, len == Table.Rows
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
		if len(c.Codes) != t.Rows {
			return fmt.Errorf("column %q: %d codes for %d rows", c.Name, len(c.Codes), t.Rows)
		}
		n := int32(c.Hierarchy.Leaves())
		for r, code := range c.Codes {
			if code < 0 || code >= n {
				return fmt.Errorf("column %q row %d: leaf code %d outside the hierarchy", c.Name, r+1, code)
			}
		}
	}
	return nil
}
