package generalize

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"sanitizer/risk"
)

// TestClassSizesMatchesStrings: the class sizes of every set of columns, by the dense
// tally, by sorting (after a partition or not) and through renumbering, equal a count
// of the records' raw values.
func TestClassSizesMatchesStrings(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 30 {
		n := 1 + rng.IntN(400)
		q := 1 + rng.IntN(4)
		tab, raw, _ := randomTable(rng, n, q)
		var subsets [][]int
		for mask := 1; mask < 1<<q; mask++ {
			var cols []int
			for c := range q {
				if mask&(1<<c) != 0 {
					cols = append(cols, c)
				}
			}
			subsets = append(subsets, cols)
		}
		for _, cols := range subsets {
			want := map[string]int64{}
			for _, rec := range raw {
				var key []string
				for _, c := range cols {
					key = append(key, rec[c])
				}
				want[strings.Join(key, "\x1f")]++
			}
			var sizes []int64
			for _, s := range want {
				sizes = append(sizes, s)
			}
			wd, err := risk.FromSizes(sizes)
			if err != nil {
				t.Fatal(err)
			}
			for _, way := range []string{"dense", "sorted", "renumbered", "partitioned"} {
				got, err := classSizesBy(tab, cols, way)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got.Counts(), wd.Counts()) {
					t.Fatalf("trial %d, columns %v, %s: %v, want %v", trial, cols, way, got.Counts(), wd.Counts())
				}
			}
		}
	}
}

// classSizesBy runs ClassSizes with its dense tally, its sort, its partition before
// the sort, or a renumbering after every column forced.
func classSizesBy(tab *Table, cols []int, way string) (risk.Distribution, error) {
	switch way {
	case "sorted":
		defer func(s uint64) { denseSpanOf = s }(denseSpanOf)
		denseSpanOf = 0
	case "partitioned":
		defer func(s uint64, m int) { denseSpanOf, flagMin = s, m }(denseSpanOf, flagMin)
		denseSpanOf, flagMin = 0, 0
	case "renumbered":
		defer func(f func(uint64, uint64) bool) { overflows = f }(overflows)
		overflows = func(span, card uint64) bool { return span > 1 }
	}
	return ClassSizes(tab, cols)
}

// TestFlagSort: the partition and the buckets' sorts give the keys sorted, for spans
// of a few bits to all 64 and with many equal keys.
func TestFlagSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, span := range []uint64{1, 2, 100, 1 << 12, 1 << 13, 1<<40 + 7, math.MaxUint64} {
		for _, n := range []int{0, 1, 1000, 70000} {
			keys := make([]uint64, n)
			for i := range keys {
				keys[i] = rng.Uint64N(span)
				if i > 0 && rng.IntN(3) == 0 {
					keys[i] = keys[rng.IntN(i)]
				}
			}
			want := slices.Clone(keys)
			slices.Sort(want)
			flagSort(keys, span)
			if !slices.Equal(keys, want) {
				t.Fatalf("span %d, %d keys: not sorted", span, n)
			}
		}
	}
}
