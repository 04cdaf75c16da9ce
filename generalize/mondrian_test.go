package generalize

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"sanitizer/diversity"
	"sanitizer/fault"
)

// mondrianCase is a random table with some columns numeric: the value of a numeric
// column's leaf i is its index times a column factor (so the order is known).
func mondrianCase(rng *rand.Rand, n, q int) (*Table, [][][]string, [][]float64) {
	tab, _, hier := randomTable(rng, n, q)
	values := make([][]float64, q)
	for j := range q {
		if rng.IntN(2) == 0 {
			f := 1 + float64(rng.IntN(5))
			vals := make([]float64, tab.Columns[j].Hierarchy.Leaves())
			for l := range vals {
				// a permutation of the leaves, so that value order is not code order
				vals[l] = f * float64((l*7)%len(vals))
			}
			values[j] = vals
		}
	}
	return tab, hier, values
}

// checkMondrian checks a result from the hierarchy rows and values alone: every
// partition has at least k records, its covers are the tightest that cover its
// records, and no dimension would have allowed a split (k only).
func checkMondrian(t *testing.T, tab *Table, hier [][][]string, values [][]float64, k int, res *Mondrian) {
	t.Helper()
	if res.Covers.Classes() != len(res.Sizes) || len(res.Covers.Dict) != len(tab.Columns) {
		t.Fatalf("covers of %d partitions in %d dictionaries, %d sizes", res.Covers.Classes(), len(res.Covers.Dict), len(res.Sizes))
	}
	// Every dictionary holds distinct values, each used, numbered by first use.
	for j, dict := range res.Covers.Dict {
		next := int32(0)
		for p := range res.Sizes {
			switch x := res.Covers.Index[p*len(tab.Columns)+j]; {
			case x == next:
				next++
			case x > next || x < 0:
				t.Fatalf("column %d: partition %d releases value %d, next new one is %d", j, p, x, next)
			}
		}
		if int(next) != len(dict) {
			t.Fatalf("column %d: %d of %d values used", j, next, len(dict))
		}
		if len(slices.Compact(slices.SortedFunc(slices.Values(dict), func(a, b Cover) int {
			return cmp.Or(cmp.Compare(a.Level, b.Level), cmp.Compare(a.Code, b.Code), cmp.Compare(a.Lo, b.Lo), cmp.Compare(a.Hi, b.Hi))
		}))) != len(dict) {
			t.Fatalf("column %d: a value twice in the dictionary", j)
		}
	}
	parts := make([][]int, len(res.Sizes))
	for r, c := range res.Class {
		if c < 0 || int(c) >= len(parts) {
			t.Fatalf("record %d in partition %d of %d", r, c, len(parts))
		}
		parts[c] = append(parts[c], r)
	}
	for p, rows := range parts {
		if len(rows) < k || len(rows) != res.Sizes[p] {
			t.Fatalf("partition %d: %d records (size says %d), k=%d", p, len(rows), res.Sizes[p], k)
		}
		if p > 0 && parts[p-1][0] >= rows[0] {
			t.Fatalf("partitions not numbered by first record")
		}
		for j, col := range tab.Columns {
			cv := res.Covers.At(p, j)
			leafOf := func(r int) int { return int(col.Codes.At(r)) }
			if values[j] != nil {
				lo, hi := values[j][leafOf(rows[0])], values[j][leafOf(rows[0])]
				for _, r := range rows {
					v := values[j][leafOf(r)]
					lo, hi = min(lo, v), max(hi, v)
				}
				if cv.Level >= 0 || values[j][cv.Lo] != lo || values[j][cv.Hi] != hi {
					t.Fatalf("partition %d column %d: cover %+v, want the range [%g, %g]", p, j, cv, lo, hi)
				}
				continue
			}
			// The lowest level at which every record has the same ancestor.
			want := -1
			for l := 0; l < len(hier[j][0]); l++ {
				same := true
				for _, r := range rows {
					same = same && hier[j][leafOf(r)][l] == hier[j][leafOf(rows[0])][l]
				}
				if same {
					want = l
					break
				}
			}
			if int(cv.Level) != want || col.Hierarchy.Value(int(cv.Level), cv.Code) != hier[j][leafOf(rows[0])][want] {
				t.Fatalf("partition %d column %d: cover level %d, want %d", p, j, cv.Level, want)
			}
		}
		// No allowed split left: in every dimension, the split Mondrian would try
		// leaves a side with fewer than k records.
		for j, col := range tab.Columns {
			leafOf := func(r int) int { return int(col.Codes.At(r)) }
			var sizes []int
			if values[j] != nil {
				vs := make([]float64, len(rows))
				for i, r := range rows {
					vs[i] = values[j][leafOf(r)]
				}
				slices.Sort(vs)
				med := vs[(len(vs)-1)/2]
				le := 0
				for _, v := range vs {
					if v <= med {
						le++
					}
				}
				if le == len(vs) {
					lt := 0
					for _, v := range vs {
						if v < med {
							lt++
						}
					}
					le = lt
				}
				if le > 0 && le < len(vs) {
					sizes = []int{le, len(vs) - le}
				}
			} else if cv := res.Covers.At(p, j); cv.Level >= 1 {
				groups := map[string]int{}
				for _, r := range rows {
					groups[hier[j][leafOf(r)][cv.Level-1]]++
				}
				for _, n := range groups {
					sizes = append(sizes, n)
				}
			}
			if len(sizes) >= 2 && slices.Min(sizes) >= k {
				t.Fatalf("partition %d (%d records) could still be split on column %d into %v", p, len(rows), j, sizes)
			}
		}
	}
}

func TestMondrianRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for trial := range 80 {
		n := 10 + rng.IntN(600)
		q := 1 + rng.IntN(4)
		tab, hier, values := mondrianCase(rng, n, q)
		k := 1 + rng.IntN(15)
		if k > n {
			k = n
		}
		t.Run(fmt.Sprintf("trial%d", trial), func(t *testing.T) {
			res, err := MondrianSearch(context.Background(), tab, values, Options{K: k, Workers: 1 + trial%3})
			if err != nil {
				t.Fatal(err)
			}
			checkMondrian(t, tab, hier, values, k, res)
		})
	}
}

func TestMondrianDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	tab, _, values := mondrianCase(rng, 20000, 4)
	var first *Mondrian
	for _, w := range []int{1, 2, 3, 8} {
		res, err := MondrianSearch(context.Background(), tab, values, Options{K: 4, Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = res
			if len(res.Sizes) < 10 {
				t.Fatalf("only %d partitions: the test would prove nothing", len(res.Sizes))
			}
			continue
		}
		if !reflect.DeepEqual(res, first) {
			t.Fatalf("workers=%d gives a different result", w)
		}
	}
}

// TestMondrianDiversity: with distinct 3-diversity on a sensitive column, every
// partition holds at least 3 distinct values (counted here), and fewer partitions
// result than with k alone.
func TestMondrianDiversity(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tab, hier, values := mondrianCase(rng, 3000, 3)
	codes := NewCodes(tab.Rows, 5)
	for r := range tab.Rows {
		codes.Set(r, int32(rng.IntN(5)*rng.IntN(2))) // value 0 half the time
	}
	tab.Sensitive = []Sensitive{{Name: "s", Values: 5, Codes: codes}}
	opt := Options{K: 3, Diversity: []Diversity{{Column: 0, Model: diversity.Model{Variant: diversity.Distinct, L: 3}}}}
	res, err := MondrianSearch(context.Background(), tab, values, opt)
	if err != nil {
		t.Fatal(err)
	}
	checkDistinct := map[int32]map[int32]bool{}
	for r, c := range res.Class {
		if checkDistinct[c] == nil {
			checkDistinct[c] = map[int32]bool{}
		}
		checkDistinct[c][codes.At(r)] = true
	}
	for c, vals := range checkDistinct {
		if len(vals) < 3 {
			t.Fatalf("partition %d holds %d distinct values", c, len(vals))
		}
	}
	kOnly, err := MondrianSearch(context.Background(), tab, values, Options{K: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sizes) >= len(kOnly.Sizes) {
		t.Errorf("%d partitions with 3-diversity, %d with k alone", len(res.Sizes), len(kOnly.Sizes))
	}
	_ = hier
}

func TestMondrianUnattainable(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	tab, _, values := mondrianCase(rng, 30, 2)
	_, err := MondrianSearch(context.Background(), tab, values, Options{K: 31})
	if !errors.Is(err, fault.ErrUnattainable) {
		t.Fatalf("k > records: %v", err)
	}
	if _, err := MondrianSearch(context.Background(), tab, values[:1], Options{K: 2}); err == nil {
		t.Fatal("value lists of the wrong length accepted")
	}
}

// BenchmarkMondrianAdult partitions Adult (age numeric) with k=5.
func BenchmarkMondrianAdult(b *testing.B) {
	tab, _, _ := loadAdult(b)
	values := adultValues(b, tab)
	for b.Loop() {
		res, err := MondrianSearch(context.Background(), tab, values, Options{K: 5})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(len(res.Sizes)), "partitions")
	}
}

// adultValues gives Adult's age its numeric values; the other columns stay categorical.
func adultValues(tb testing.TB, tab *Table) [][]float64 {
	tb.Helper()
	values := make([][]float64, len(tab.Columns))
	for j, c := range tab.Columns {
		if c.Name != "age" {
			continue
		}
		values[j] = make([]float64, c.Hierarchy.Leaves())
		for l := range values[j] {
			if _, err := fmt.Sscan(c.Hierarchy.Value(0, int32(l)), &values[j][l]); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return values
}

func TestMondrianAdult(t *testing.T) {
	if testing.Short() {
		t.Skip("Adult")
	}
	tab, _, hier := loadAdult(t)
	values := adultValues(t, tab)
	for _, k := range []int{5, 50} {
		res, err := MondrianSearch(context.Background(), tab, values, Options{K: k})
		if err != nil {
			t.Fatal(err)
		}
		checkMondrian(t, tab, hier, values, k, res)
	}
}

// TestMedianByCount: the median found by counting ranks is the one selectKth finds, on
// random partitions of random numeric and categorical dimensions.
func TestMedianByCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for trial := range 40 {
		tab, _, values := mondrianCase(rng, 50+rng.IntN(400), 3)
		for j, c := range tab.Columns {
			d, err := newDim(c, values[j])
			if err != nil {
				t.Fatal(err)
			}
			var rows []int32
			for r := range int32(tab.Rows) {
				if rng.IntN(3) > 0 {
					rows = append(rows, r)
				}
			}
			if len(rows) == 0 {
				continue
			}
			lo, hi := rankRange(d.codes, d.rank, rows)
			keys := make([]int32, len(rows))
			for i, r := range rows {
				keys[i] = d.key(r)
			}
			want := selectKth(keys, (len(keys)-1)/2)
			if got, _ := d.medianByCount(rows, lo, hi, nil); got != want {
				t.Fatalf("trial %d column %d: median %d by counting, %d by selection", trial, j, got, want)
			}
		}
	}
}
