package generalize

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"sanitizer/risk"
)

// TestClassSizesMatchesStrings: the class sizes of every set of columns, by the dense
// tally, by sorting and through renumbering, equal a count of the records' raw values.
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
			for _, way := range []string{"dense", "sorted", "renumbered", "halves"} {
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

// classSizesBy runs ClassSizes with its dense tally, its sort, or a renumbering after
// every column forced.
func classSizesBy(tab *Table, cols []int, way string) (risk.Distribution, error) {
	switch way {
	case "sorted":
		defer func(s uint64) { denseSpanOf = s }(denseSpanOf)
		denseSpanOf = 0
	case "halves":
		defer func(s uint64) { denseSpanOf = s }(denseSpanOf)
		denseSpanOf = 0
		keys := make([]uint64, tab.Rows)
		for r := range keys {
			for _, c := range cols {
				keys[r] = keys[r]*uint64(tab.Columns[c].Hierarchy.Leaves()) + uint64(tab.Columns[c].Codes.At(r))
			}
		}
		a, b := keys[:len(keys)/2], keys[len(keys)/2:]
		slices.Sort(a)
		slices.Sort(b)
		return runSizes(a, b)
	case "renumbered":
		defer func(f func(uint64, uint64) bool) { overflows = f }(overflows)
		overflows = func(span, card uint64) bool { return span > 1 }
	}
	return ClassSizes(tab, cols)
}
