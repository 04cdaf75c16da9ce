package generalize

import "slices"

// tallier counts the records of an input per value: what the metric (records per leaf
// of every quasi-identifier) and t-closeness (the distribution of a sensitive column)
// need of the whole input besides its classes. A Table counts its records; a
// ClassTable its classes, weighted by their counts.
type tallier interface {
	// leafCounts returns the number of records per leaf code of quasi-identifier i.
	leafCounts(i int) []int64
	// valueCounts returns the number of records per value of sensitive column col.
	valueCounts(col int) []int64
	// personHolders returns, with a privacy unit, the persons holding each value of
	// sensitive column col and the persons in all.
	personHolders(col int) (holders []int64, persons int64)
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

// personHolders returns, for a table with a unit, how many distinct persons hold each
// value of sensitive column col, and how many persons have a record.
func (t *Table) personHolders(col int) (holders []int64, persons int64) {
	s := t.Sensitive[col]
	return holdersByPerson(t.Unit.Persons, s.Values, t.Rows, t.Unit.Codes.At, func(r int, f func(v int32)) { f(s.Codes.At(r)) })
}

// personHolders is Table's for the class table's entries, one per class and person.
func (ct *ClassTable) personHolders(col int) (holders []int64, persons int64) {
	person, h := ct.cols[len(ct.cols)-1], ct.hist[col]
	return holdersByPerson(ct.meta.Unit.Persons, ct.meta.Sensitive[col].Values, ct.Len(), func(j int) int32 { return person[j] },
		func(j int, f func(v int32)) {
			for _, v := range h.val[h.off[j]:h.off[j+1]] {
				f(v)
			}
		})
}

// holdersByPerson counts, over n items (records or entries) of persons persons, item i
// of person personOf(i) holding the values valuesOf(i) gives, the distinct persons
// holding each of values values, and the persons with an item: the items ordered by
// person (a counting sort), each person's values counted once.
func holdersByPerson(persons, values, n int, personOf func(i int) int32, valuesOf func(i int, f func(v int32))) ([]int64, int64) {
	start := make([]int32, persons+1)
	for i := range n {
		start[personOf(i)+1]++
	}
	for p := range persons {
		start[p+1] += start[p]
	}
	order, next := make([]int32, n), slices.Clone(start[:persons])
	for i := range n {
		p := personOf(i)
		order[next[p]] = int32(i)
		next[p]++
	}
	holders, last := make([]int64, values), make([]int32, values)
	for v := range last {
		last[v] = -1
	}
	var with int64
	for p := range persons {
		if start[p] == start[p+1] {
			continue
		}
		with++
		for _, i := range order[start[p]:start[p+1]] {
			valuesOf(int(i), func(v int32) {
				if last[v] != int32(p) {
					last[v] = int32(p)
					holders[v]++
				}
			})
		}
	}
	return holders, with
}
