package generalize

import (
	"fmt"

	"sanitizer/schema"
)

// Top is the most general value of every built hierarchy (intervals, mask, date).
const Top = "*"

// Hierarchy maps each leaf value of a quasi-identifier to its generalization at every
// level, level 0 being the leaf itself and level Height()-1 its single top value
// (TopValue: Top, or the label a hierarchy file gives it).
// Values at every level are held as dense codes 0..Size(level)-1.
type Hierarchy struct {
	source string
	index  map[string]int32 // leaf value -> leaf code
	names  [][]string       // names[l][code]: the value at level l
	up     [][]int32        // up[l][leaf]: code at level l of a leaf
	leaves [][]int32        // leaves[l][code]: number of leaves under the value
}

// RowError reports a hierarchy row that breaks a rule; Row is the 0-based index of the
// row among those given to NewHierarchy.
type RowError struct {
	Row int
	Msg string
}

// Error names the row, counted from 1, and says what is wrong with it.
func (e *RowError) Error() string { return fmt.Sprintf("row %d: %s", e.Row+1, e.Msg) }

// NewHierarchy builds a validated hierarchy from rows of the form
// leaf, level 1, …, top. Every row must have the same number of values (at least 2),
// leaves must be unique, every row must end in the same top value (any label but the
// empty one, "*" by convention), and the hierarchy
// must be consistent: two leaves that share a value at level i share it at every level
// above i. source names the hierarchy in messages (a file path or a builder).
// Violations are reported as *RowError.
func NewHierarchy(source string, rows [][]string) (*Hierarchy, error) {
	if len(rows) == 0 {
		return nil, &RowError{Row: 0, Msg: "hierarchy has no rows"}
	}
	height := len(rows[0])
	if height > schema.MaxHierarchyLevels {
		return nil, &RowError{Row: 0, Msg: fmt.Sprintf("has %d levels: a hierarchy has at most %d, the value and the top included", height, schema.MaxHierarchyLevels)}
	}
	h := &Hierarchy{
		source: source,
		index:  make(map[string]int32, len(rows)),
		names:  make([][]string, height),
		up:     make([][]int32, height),
		leaves: make([][]int32, height),
	}
	codes := make([]map[string]int32, height)
	parent := make([]map[int32]int32, height) // parent[l][code at l] = code at l+1
	for l := range height {
		codes[l] = make(map[string]int32)
		parent[l] = make(map[int32]int32)
		h.up[l] = make([]int32, len(rows))
	}
	for r, row := range rows {
		if len(row) != height {
			return nil, &RowError{Row: r, Msg: fmt.Sprintf("has %d levels, the first row has %d", len(row), height)}
		}
		if height < 2 {
			return nil, &RowError{Row: r, Msg: "needs at least a value and \"*\""}
		}
		if err := checkTop(r, row[height-1], rows[0][height-1]); err != nil {
			return nil, err
		}
		if _, dup := h.index[row[0]]; dup {
			return nil, &RowError{Row: r, Msg: "leaf value listed twice"}
		}
		h.index[row[0]] = int32(r)
		for l, v := range row {
			c, ok := codes[l][v]
			if !ok {
				c = int32(len(h.names[l]))
				codes[l][v] = c
				h.names[l] = append(h.names[l], v)
				h.leaves[l] = append(h.leaves[l], 0)
			}
			h.up[l][r] = c
			h.leaves[l][c]++
			if l > 0 {
				below := h.up[l-1][r]
				if p, seen := parent[l-1][below]; seen && p != c {
					return nil, &RowError{Row: r, Msg: fmt.Sprintf("inconsistent: level %d value is generalized differently at level %d than in an earlier row", l-1, l)}
				}
				parent[l-1][below] = c
			}
		}
	}
	return h, nil
}

// checkTop checks the last value of row r against the first row's: a hierarchy has a
// single top value, of any label but the empty one.
func checkTop(r int, v, first string) error {
	switch {
	case first == "":
		return &RowError{Row: 0, Msg: "the top value is empty (the last level must hold one label, such as \"*\")"}
	case v != first:
		return &RowError{Row: r, Msg: "last level differs from the first row's: a hierarchy has a single top value"}
	}
	return nil
}

// Source names where the hierarchy came from (file path or builder).
func (h *Hierarchy) Source() string { return h.source }

// Height is the number of levels, counting the leaves and the top "*".
func (h *Hierarchy) Height() int { return len(h.names) }

// TopValue is the single value of the top level: Top for a built hierarchy, the label
// a hierarchy file gives it ("*", "any disease", …).
func (h *Hierarchy) TopValue() string { return h.names[len(h.names)-1][0] }

// Leaves is the number of leaf values (the domain's size).
func (h *Hierarchy) Leaves() int { return len(h.names[0]) }

// Leaf returns the leaf code of a value, and whether the hierarchy lists it.
func (h *Hierarchy) Leaf(value string) (int32, bool) {
	c, ok := h.index[value]
	return c, ok
}

// Size is the number of distinct values at a level.
func (h *Hierarchy) Size(level int) int { return len(h.names[level]) }

// Code returns the code at level of a leaf.
func (h *Hierarchy) Code(level int, leaf int32) int32 { return h.up[level][leaf] }

// Value returns the value of a code at a level.
func (h *Hierarchy) Value(level int, code int32) string { return h.names[level][code] }

// LeafCount is the number of leaves under the value with the given code at level.
func (h *Hierarchy) LeafCount(level int, code int32) int { return int(h.leaves[level][code]) }

// levelMap returns, for every code at level from, its code at level to (to ≥ from).
func (h *Hierarchy) levelMap(from, to int) []int32 {
	m := make([]int32, h.Size(from))
	for leaf := range h.up[0] {
		m[h.up[from][leaf]] = h.up[to][leaf]
	}
	return m
}
