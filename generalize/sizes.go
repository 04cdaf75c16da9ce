package generalize

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"sanitizer/risk"
)

// denseSpanOf is the most keys ClassSizes tallies in an array of counts rather than by
// sorting the records' keys: 4 Mi counts, 32 MiB (a variable for the tests).
var denseSpanOf uint64 = 1 << 22

// overflows reports whether keys below span take no column of card more codes (a
// variable for the tests).
var overflows = func(span, card uint64) bool { return span > math.MaxUint64/card }

// ClassSizes is the class-size distribution of t's records grouped by the original
// values (the leaf codes) of the quasi-identifiers cols: all of them give the input's
// equivalence classes before any generalization, one or two the analysis of which
// quasi-identifiers make records distinct. It holds 8 bytes per record while it runs.
func ClassSizes(t *Table, cols []int) (risk.Distribution, error) {
	if len(cols) == 0 || t.Rows == 0 {
		return risk.FromCounts(nil)
	}
	for _, c := range cols {
		if c < 0 || c >= len(t.Columns) {
			return risk.Distribution{}, fmt.Errorf("class sizes: column %d of %d", c, len(t.Columns))
		}
	}
	keys := make([]uint64, t.Rows)
	span := uint64(1) // every key is below span
	for _, c := range cols {
		leaves := t.Columns[c].Hierarchy.Leaves()
		card := uint64(leaves)
		if overflows(span, card) {
			span = renumber(keys)
		}
		ident := make([]int32, leaves)
		for i := range ident {
			ident[i] = int32(i)
		}
		addKeys(t.Columns[c].Codes, keys, 0, t.Rows, ident, card)
		span *= card
	}
	if span <= denseSpanOf {
		return denseSizes(keys, span)
	}
	return sortedSizes(keys)
}

// sortedSizes is the distribution of the runs of equal keys, sorting them in place:
// in two halves at once on a large table, whose runs are then counted across both.
func sortedSizes(keys []uint64) (risk.Distribution, error) {
	if len(keys) < 1<<18 || runtime.GOMAXPROCS(0) < 2 {
		slices.Sort(keys)
		return runSizes(keys, nil)
	}
	a, b := keys[:len(keys)/2], keys[len(keys)/2:]
	var wg sync.WaitGroup
	wg.Go(func() { slices.Sort(a) })
	slices.Sort(b)
	wg.Wait()
	return runSizes(a, b)
}

// renumber replaces every key by its rank among the distinct keys and returns their
// number: the keys of the columns so far, made small enough to take another column.
func renumber(keys []uint64) uint64 {
	distinct := slices.Clone(keys)
	slices.Sort(distinct)
	distinct = slices.Compact(distinct)
	for i, k := range keys {
		r, _ := slices.BinarySearch(distinct, k)
		keys[i] = uint64(r)
	}
	return uint64(len(distinct))
}

// denseSizes tallies keys below span in an array.
func denseSizes(keys []uint64, span uint64) (risk.Distribution, error) {
	counts := make([]int64, span)
	for _, k := range keys {
		counts[k]++
	}
	return risk.FromSizes(counts)
}

// runSizes is the distribution of the classes of equal keys in a and b, each sorted:
// a class's size is its run in a and its run in b together.
func runSizes(a, b []uint64) (risk.Distribution, error) {
	bySize := map[int64]int64{}
	run := func(s []uint64, i int, k uint64) int { // the end of k's run from i
		for i < len(s) && s[i] == k {
			i++
		}
		return i
	}
	for i, j := 0, 0; i < len(a) || j < len(b); {
		var k uint64
		switch {
		case j == len(b) || (i < len(a) && a[i] <= b[j]):
			k = a[i]
		default:
			k = b[j]
		}
		ei, ej := run(a, i, k), run(b, j, k)
		bySize[int64(ei-i+ej-j)]++
		i, j = ei, ej
	}
	counts := make([]risk.SizeCount, 0, len(bySize))
	for s, c := range bySize {
		counts = append(counts, risk.SizeCount{Size: s, Classes: c})
	}
	return risk.FromCounts(counts)
}
