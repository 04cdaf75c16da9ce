package generalize

// tallier counts the records of an input per value: what the metric (records per leaf
// of every quasi-identifier) and t-closeness (the distribution of a sensitive column)
// need of the whole input besides its classes. A Table counts its records; a
// ClassTable its classes, weighted by their counts.
type tallier interface {
	// leafCounts returns the number of records per leaf code of quasi-identifier i.
	leafCounts(i int) []int64
	// valueCounts returns the number of records per value of sensitive column col.
	valueCounts(col int) []int64
}

func (t *Table) leafCounts(i int) []int64 {
	c := t.Columns[i]
	out := make([]int64, c.Hierarchy.Leaves())
	c.Codes.tally(out)
	return out
}

func (t *Table) valueCounts(col int) []int64 {
	s := t.Sensitive[col]
	out := make([]int64, s.Values)
	s.Codes.tally(out)
	return out
}
