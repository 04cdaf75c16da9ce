// Package risk measures re-identification risk from the sizes of a table's
// equivalence classes (the records that share every quasi-identifier value) and, where
// a model needs them, from figures about the population the table was drawn from. Its
// functions are pure: they read no file and keep no state.
//
// The measures follow ARX's risk analysis (Prasser et al., "Lightning: utility-driven
// anonymization of high-dimensional data", and the ARX documentation's "Risk analysis"
// pages) and the papers each one cites.
//
// It imports nothing of this module (docs/design.md's package table): the search, the
// verifier and the risk analysis share it.
package risk

import (
	"cmp"
	"fmt"
	"slices"
)

// SizeCount is how many classes have one size.
type SizeCount struct {
	Size    int64 // records in each of these classes, ≥ 1
	Classes int64 // classes of that size, ≥ 1
}

// Distribution is a table's class-size distribution: for every class size that occurs,
// the number of classes of that size (f_i in the population-uniqueness literature: the
// number of sample classes of size i). Suppressed records belong to no class and are not
// in it. The zero Distribution is the empty table.
type Distribution struct {
	counts  []SizeCount // ascending by Size
	records int64
	classes int64
}

// FromSizes is the distribution of the given class sizes; a size of 0 is no class.
func FromSizes(sizes []int64) (Distribution, error) {
	bySize := make(map[int64]int64)
	for i, s := range sizes {
		if s < 0 {
			return Distribution{}, fmt.Errorf("risk: class %d has size %d", i, s)
		}
		if s > 0 {
			bySize[s]++
		}
	}
	counts := make([]SizeCount, 0, len(bySize))
	for s, c := range bySize {
		counts = append(counts, SizeCount{Size: s, Classes: c})
	}
	return FromCounts(counts)
}

// FromCounts is the distribution with the given number of classes of each size. Sizes
// may come in any order and repeat (their classes add up); an entry with no classes is
// ignored.
func FromCounts(counts []SizeCount) (Distribution, error) {
	merged := make(map[int64]int64, len(counts))
	for _, c := range counts {
		if c.Size < 1 || c.Classes < 0 {
			return Distribution{}, fmt.Errorf("risk: %d classes of size %d", c.Classes, c.Size)
		}
		if c.Classes > 0 {
			merged[c.Size] += c.Classes
		}
	}
	d := Distribution{counts: make([]SizeCount, 0, len(merged))}
	for s, c := range merged {
		d.counts = append(d.counts, SizeCount{Size: s, Classes: c})
		d.records += s * c
		d.classes += c
	}
	slices.SortFunc(d.counts, func(a, b SizeCount) int { return cmp.Compare(a.Size, b.Size) })
	return d, nil
}

// Records is the number of records in classes (n).
func (d Distribution) Records() int64 { return d.records }

// Classes is the number of classes.
func (d Distribution) Classes() int64 { return d.classes }

// Counts is the distribution's sizes in ascending order with their number of classes.
// The caller must not change it.
func (d Distribution) Counts() []SizeCount { return d.counts }

// ClassesOfSize is the number of classes with exactly size records (f_size).
func (d Distribution) ClassesOfSize(size int64) int64 {
	i, ok := slices.BinarySearchFunc(d.counts, size, func(c SizeCount, s int64) int { return cmp.Compare(c.Size, s) })
	if !ok {
		return 0
	}
	return d.counts[i].Classes
}

// Smallest is the size of the smallest class, 0 for the empty table.
func (d Distribution) Smallest() int64 {
	if len(d.counts) == 0 {
		return 0
	}
	return d.counts[0].Size
}

// Largest is the size of the largest class, 0 for the empty table.
func (d Distribution) Largest() int64 {
	if len(d.counts) == 0 {
		return 0
	}
	return d.counts[len(d.counts)-1].Size
}
