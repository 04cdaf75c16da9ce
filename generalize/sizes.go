package generalize

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
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
	keys, span, err := classKeys(t, cols)
	if err != nil {
		return risk.Distribution{}, err
	}
	if span <= denseSpanOf {
		return denseSizes(keys, span)
	}
	return sortedSizes(keys, span)
}

// PersonSizes is ClassSizes counted in persons, for a table with a privacy unit: the
// distribution of the classes' distinct persons, a person with records in several
// classes counted in each. It holds 8 bytes per record while it runs.
func PersonSizes(t *Table, cols []int) (risk.Distribution, error) {
	if t.Unit == nil {
		return risk.Distribution{}, errors.New("person sizes: the table has no privacy unit")
	}
	if len(cols) == 0 || t.Rows == 0 {
		return risk.FromCounts(nil)
	}
	keys, span, err := classKeys(t, cols)
	if err != nil {
		return risk.Distribution{}, err
	}
	persons := uint64(max(t.Unit.Persons, 1))
	if overflows(span, persons) {
		span = renumber(keys)
	}
	for r := range keys { // a class's key, then the person: one key per class and person
		keys[r] = keys[r]*persons + uint64(t.Unit.Codes.At(r))
	}
	if len(keys) < flagMin {
		slices.Sort(keys)
	} else {
		flagSort(keys, span*persons)
	}
	keys = slices.Compact(keys)
	for i := range keys {
		keys[i] /= persons // the class's key: its run is its persons
	}
	return runSizes(keys)
}

// classKeys returns every record's key of its class by the leaf codes of the columns
// cols, and a bound of the keys.
func classKeys(t *Table, cols []int) (keys []uint64, span uint64, err error) {
	for _, c := range cols {
		if c < 0 || c >= len(t.Columns) {
			return nil, 0, fmt.Errorf("class sizes: column %d of %d", c, len(t.Columns))
		}
	}
	keys = make([]uint64, t.Rows)
	span = 1 // every key is below span
	for _, c := range cols {
		leaves := t.Columns[c].Hierarchy.Leaves()
		card := uint64(leaves)
		if overflows(span, card) {
			span = renumber(keys) // the keys so far, made small enough for column c
		}
		ident := make([]int32, leaves)
		for i := range ident {
			ident[i] = int32(i)
		}
		addKeys(t.Columns[c].Codes, keys, 0, t.Rows, ident, card)
		span *= card
	}
	return keys, span, nil
}

// flagMin is the fewest keys sortedSizes partitions before sorting (a variable for
// the tests).
var flagMin = 1 << 18

// flagBits is the number of bits of the keys each partition of a large sort moves
// them by; a bucket of at most flagLeaf keys is sorted as it is.
const (
	flagBits = 8
	flagLeaf = 1 << 10
)

// sortedSizes is the distribution of the runs of equal keys (each below span),
// sorting them in place: a large table's by in-place partitions on their bits first
// (flagSort).
func sortedSizes(keys []uint64, span uint64) (risk.Distribution, error) {
	if len(keys) < flagMin {
		slices.Sort(keys)
	} else {
		flagSort(keys, span)
	}
	return runSizes(keys)
}

// flagSort sorts keys (each below span) in place, as an American flag sort: it moves
// every key into the bucket of its top flagBits bits, then sorts each bucket the same
// way by the next bits, down to buckets of flagLeaf keys, which it sorts by
// comparison. The top buckets are shared between two goroutines when there are two
// cores.
func flagSort(keys []uint64, span uint64) {
	shift := max(0, bits.Len64(span-1)-flagBits)
	end := partition(keys, shift)
	split := 0 // the buckets before split hold half the keys
	for split < len(end) && end[split] < len(keys)/2 {
		split++
	}
	sortBuckets := func(lo, hi int) {
		from := 0
		if lo > 0 {
			from = end[lo-1]
		}
		for b := lo; b < hi; b++ {
			sortBucket(keys[from:end[b]], shift)
			from = end[b]
		}
	}
	if runtime.GOMAXPROCS(0) < 2 {
		sortBuckets(0, len(end))
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() { sortBuckets(0, split) })
	sortBuckets(split, len(end))
	wg.Wait()
}

// sortBucket sorts the keys of one bucket, which agree on every bit from shift up.
func sortBucket(keys []uint64, shift int) {
	if len(keys) <= flagLeaf || shift == 0 {
		slices.Sort(keys)
		return
	}
	shift = max(0, shift-flagBits)
	end := partition(keys, shift)
	from := 0
	for _, e := range end {
		sortBucket(keys[from:e], shift)
		from = e
	}
}

// partition moves every key into the bucket of its flagBits bits from shift up (the
// keys agree on the bits above them) and returns where each bucket ends.
func partition(keys []uint64, shift int) []int {
	const mask = 1<<flagBits - 1
	var next, end [1 << flagBits]int
	for _, k := range keys {
		end[k>>shift&mask]++
	}
	at := 0
	for b, n := range end {
		next[b], end[b] = at, at+n
		at += n
	}
	for b := range next {
		for next[b] < end[b] {
			k := keys[next[b]]
			for d := k >> shift & mask; d != uint64(b); d = k >> shift & mask {
				keys[next[d]], k = k, keys[next[d]]
				next[d]++
			}
			keys[next[b]] = k
			next[b]++
		}
	}
	return end[:]
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

// runSizes is the distribution of the runs of equal keys in sorted keys.
func runSizes(keys []uint64) (risk.Distribution, error) {
	var small [256]int64 // classes of each size below 256; larger sizes in large
	large := map[int64]int64{}
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && keys[j] == keys[i] {
			j++
		}
		if n := j - i; n < len(small) {
			small[n]++
		} else {
			large[int64(n)]++
		}
		i = j
	}
	counts := make([]risk.SizeCount, 0, len(large)+len(small))
	for size, c := range small {
		if c > 0 {
			counts = append(counts, risk.SizeCount{Size: int64(size), Classes: c})
		}
	}
	for size, c := range large {
		counts = append(counts, risk.SizeCount{Size: size, Classes: c})
	}
	return risk.FromCounts(counts)
}
