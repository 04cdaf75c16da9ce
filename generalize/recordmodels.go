package generalize

import "fmt"

// RecordModels decides k-anonymity and the models on any set of a table's records, as
// Mondrian decides a partition: at least k records, or k distinct persons with a
// privacy unit, and every l-diversity, t-closeness and β-likeness requirement of the
// options (in persons with a unit), t-closeness and β-likeness against the whole
// table. A release series decides with it whether a class's new records may be
// published on their own. It is safe for concurrent use.
type RecordModels struct{ ms *mondrian }

// NewRecordModels is the RecordModels of table t under opt (its K and models; the
// search's other options are not read).
func NewRecordModels(t *Table, opt Options) (*RecordModels, error) {
	if opt.K < 1 {
		return nil, fmt.Errorf("k must be at least 1, got %d", opt.K)
	}
	m, err := newModels(t, opt)
	if err != nil {
		return nil, err
	}
	ms := &mondrian{t: t, m: m, k: opt.K}
	ms.checkers.New = func() any { return &partChecker{c: m.checker()} }
	return &RecordModels{ms: ms}, nil
}

// Holds reports whether the records rows (indexes into the table) meet k and the
// models.
func (rm *RecordModels) Holds(rows []int32) bool { return rm.ms.holds(rows) }
