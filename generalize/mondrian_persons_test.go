package generalize

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sanitizer/closeness"
	"sanitizer/diversity"
	"sanitizer/fault"
)

// mondrianPersonsCase is mondrianCase with persons: runs of 1 to most consecutive
// records, some columns constant per person (withPersons).
func mondrianPersonsCase(rng *rand.Rand, n, q, most int) (*Table, [][][]string, [][]float64) {
	tab, hier, values := mondrianCase(rng, n, q)
	raw := make([][]string, n)
	for r := range raw {
		raw[r] = make([]string, q)
	}
	withPersons(rng, tab, raw, most)
	return tab, hier, values
}

// personsOf is the distinct persons of the records, counted with a map.
func personsOf(tab *Table, rows []int) int {
	who := map[int32]bool{}
	for _, r := range rows {
		who[tab.Unit.Codes.At(r)] = true
	}
	return len(who)
}

// triedSplit is the split Mondrian tries of a partition's records on column j, worked
// out from the hierarchy rows and values alone: a numeric column at the median (≤,
// or < when ≤ leaves the other side empty), a categorical one by the children of the
// lowest node covering the records; nil when it leaves a single group.
func triedSplit(tab *Table, hier [][][]string, values [][]float64, j int, rows []int) [][]int {
	leafOf := func(r int) int { return int(tab.Columns[j].Codes.At(r)) }
	if values[j] != nil {
		vs := make([]float64, len(rows))
		for i, r := range rows {
			vs[i] = values[j][leafOf(r)]
		}
		slices.Sort(vs)
		med := vs[(len(vs)-1)/2]
		in := func(v float64) bool { return v <= med }
		if vs[len(vs)-1] <= med {
			in = func(v float64) bool { return v < med }
		}
		var lo, hi []int
		for _, r := range rows {
			if in(values[j][leafOf(r)]) {
				lo = append(lo, r)
			} else {
				hi = append(hi, r)
			}
		}
		if len(lo) == 0 || len(hi) == 0 {
			return nil
		}
		return [][]int{lo, hi}
	}
	level := -1 // the lowest level at which every record has the same ancestor
	for l := 0; l < len(hier[j][0]) && level < 0; l++ {
		same := true
		for _, r := range rows {
			same = same && hier[j][leafOf(r)][l] == hier[j][leafOf(rows[0])][l]
		}
		if same {
			level = l
		}
	}
	if level < 1 {
		return nil
	}
	byChild := map[string][]int{}
	for _, r := range rows {
		child := hier[j][leafOf(r)][level-1]
		byChild[child] = append(byChild[child], r)
	}
	if len(byChild) < 2 {
		return nil
	}
	var groups [][]int
	for _, g := range byChild {
		groups = append(groups, g)
	}
	return groups
}

// checkMondrianPersons checks a result on a table with a unit from the records alone:
// every record in a partition, the partitions numbered by their first record, each of
// the size and the persons the result says, at least k persons (counted here), and no
// partition left that a split Mondrian tries would divide into parts of k persons.
// It returns how many partitions a split counted in records could still divide.
func checkMondrianPersons(t *testing.T, tab *Table, hier [][][]string, values [][]float64, k int, res *Mondrian) (splittableInRows int) {
	t.Helper()
	if len(res.Persons) != len(res.Sizes) {
		t.Fatalf("%d person counts for %d partitions", len(res.Persons), len(res.Sizes))
	}
	parts := make([][]int, len(res.Sizes))
	for r, c := range res.Class {
		if c < 0 || int(c) >= len(parts) {
			t.Fatalf("record %d in partition %d of %d", r, c, len(parts))
		}
		parts[c] = append(parts[c], r)
	}
	for p, rows := range parts {
		if len(rows) != res.Sizes[p] || (p > 0 && parts[p-1][0] >= rows[0]) {
			t.Fatalf("partition %d: %d records (size says %d), or not numbered by its first record", p, len(rows), res.Sizes[p])
		}
		persons := personsOf(tab, rows)
		if persons < k || persons != res.Persons[p] {
			t.Fatalf("partition %d: %d records of %d persons (the result says %d), k=%d", p, len(rows), persons, res.Persons[p], k)
		}
		inRows := false
		for j := range tab.Columns {
			groups := triedSplit(tab, hier, values, j, rows)
			if groups == nil {
				continue
			}
			fewest, smallest := math.MaxInt, math.MaxInt
			for _, g := range groups {
				fewest, smallest = min(fewest, personsOf(tab, g)), min(smallest, len(g))
			}
			if fewest >= k {
				t.Fatalf("partition %d (%d records, %d persons) could still be split on column %d into parts of at least %d persons", p, len(rows), persons, j, fewest)
			}
			inRows = inRows || smallest >= k
		}
		if inRows {
			splittableInRows++
		}
	}
	return splittableInRows
}

// TestMondrianPersons: on random tables of several records per person, every
// partition holds at least k distinct persons and none is left that a split would
// divide into parts of k persons; in enough of them a split counted in records was
// still possible, so the test tells persons from records.
func TestMondrianPersons(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 2))
	trials := 120
	if testing.Short() {
		trials = 40
	}
	differ := 0
	for trial := range trials {
		n, q, most := 10+rng.IntN(600), 1+rng.IntN(4), 1+rng.IntN(6)
		tab, hier, values := mondrianPersonsCase(rng, n, q, most)
		k := min(1+rng.IntN(10), tab.Unit.Persons)
		workers := 1 + trial%3
		t.Run(fmt.Sprintf("trial%d/n=%d/persons=%d/q=%d/k=%d/w=%d", trial, n, tab.Unit.Persons, q, k, workers), func(t *testing.T) {
			res, err := MondrianSearch(context.Background(), tab, values, Options{K: k, Workers: workers})
			if err != nil {
				t.Fatal(err)
			}
			if checkMondrianPersons(t, tab, hier, values, k, res) > 0 {
				differ++
			}
		})
	}
	if differ < trials/4 {
		t.Errorf("only %d of %d trials left a partition that records alone would split", differ, trials)
	}
}

// TestMondrianOnePersonPerRecord: with one record per person, counting persons is
// counting records: the same partitions, covers and splits as without the unit, and
// every partition's persons its size.
func TestMondrianOnePersonPerRecord(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 3))
	for trial := range 40 {
		n, q := 10+rng.IntN(600), 1+rng.IntN(4)
		tab, _, values := mondrianCase(rng, n, q)
		k := min(1+rng.IntN(12), n)
		t.Run(fmt.Sprintf("trial%d/n=%d/q=%d/k=%d", trial, n, q, k), func(t *testing.T) {
			want, err := MondrianSearch(context.Background(), tab, values, Options{K: k})
			if err != nil {
				t.Fatal(err)
			}
			codes := NewCodes(n, n)
			for r := range n {
				codes.Set(r, int32(n-1-r)) // persons not numbered as the records
			}
			withUnit := *tab
			withUnit.Unit = &Unit{Persons: n, Codes: codes}
			got, err := MondrianSearch(context.Background(), &withUnit, values, Options{K: k, Workers: 1 + trial%3})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Persons, got.Sizes) {
				t.Fatalf("persons per partition %v, sizes %v", got.Persons, got.Sizes)
			}
			if want.Persons != nil {
				t.Fatalf("persons counted without a unit: %v", want.Persons)
			}
			got.Persons = nil
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%d partitions with the unit, %d without", len(got.Sizes), len(want.Sizes))
			}
		})
	}
}

// TestMondrianPersonsUnattainable: a table whose records, however many, are those of
// fewer than k persons is unattainable, and the error counts the persons (not who
// they are); of exactly k persons, it is one partition at least.
func TestMondrianPersonsUnattainable(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 4))
	for _, c := range []struct{ n, persons, k int }{
		{30, 4, 5}, {30, 1, 2}, {300, 9, 10}, {300, 299, 300}, {5, 5, 6},
	} {
		t.Run(fmt.Sprintf("n=%d/persons=%d/k=%d", c.n, c.persons, c.k), func(t *testing.T) {
			tab, _, values := mondrianCase(rng, c.n, 2)
			codes := NewCodes(c.n, c.persons)
			for r := range c.n {
				codes.Set(r, int32(r%c.persons))
			}
			tab.Unit = &Unit{Persons: c.persons, Codes: codes}
			_, err := MondrianSearch(context.Background(), tab, values, Options{K: c.k})
			if !errors.Is(err, fault.ErrUnattainable) {
				t.Fatalf("%d records of %d persons, k=%d: %v", c.n, c.persons, c.k, err)
			}
			if want := fmt.Sprintf("%d records and %d persons", c.n, c.persons); !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
			res, err := MondrianSearch(context.Background(), tab, values, Options{K: c.persons})
			if err != nil {
				t.Fatalf("k = the %d persons: %v", c.persons, err)
			}
			for p, n := range res.Persons {
				if n < c.persons {
					t.Fatalf("partition %d of %d persons, k=%d", p, n, c.persons)
				}
			}
		})
	}
}

// TestMondrianPersonsDeterministic: with a unit, the result does not depend on the
// number of workers.
func TestMondrianPersonsDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 5))
	tab, _, values := mondrianPersonsCase(rng, 20000, 4, 5)
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

// TestMondrianPersonsModels: with a unit, l-diversity, t-closeness and β-likeness are
// decided in persons: every released partition, counted here with maps, has each value
// held by at most 1/l of its persons, ½ Σ |b(v) − B(v)| ≤ t and (b(v) − B(v))/B(v) ≤ β
// on the shares of persons (b in the partition, B in the table); and the partitions'
// covers are distinct, so that each is one released class.
func TestMondrianPersonsModels(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 6))
	split := 0 // the releases of more than one partition
	defer func() {
		if split < 60 {
			t.Errorf("only %d of 180 releases split the table", split)
		}
	}()
	for trial := range 60 {
		tab, _, values := mondrianPersonsCase(rng, 150+rng.IntN(250), 2, 1+rng.IntN(5))
		sens, _ := skewedSensitive(rng, tab.Rows, 4)
		tab.Sensitive = []Sensitive{sens}
		holders := func(rows []int) (map[int32]int, int) { // persons per value, persons
			held, who := map[[2]int32]bool{}, map[int32]bool{}
			for _, r := range rows {
				held[[2]int32{tab.Unit.Codes.At(r), sens.Codes.At(r)}] = true
				who[tab.Unit.Codes.At(r)] = true
			}
			per := map[int32]int{}
			for pv := range held {
				per[pv[1]]++
			}
			return per, len(who)
		}
		all := make([]int, tab.Rows)
		for r := range all {
			all[r] = r
		}
		tablePer, tablePersons := holders(all)
		l, tt, beta := 2, 0.3+0.3*rng.Float64(), 1+2*rng.Float64()
		for _, c := range []struct {
			name string
			opt  Options
			fail func(per map[int32]int, persons int) bool
		}{
			{"l-diversity", Options{K: 2, Diversity: []Diversity{{Column: 0, Model: diversity.Model{Variant: diversity.Distinct, L: float64(l)}}}},
				func(per map[int32]int, persons int) bool {
					for _, n := range per {
						if n*l > persons {
							return true
						}
					}
					return false
				}},
			{"t-closeness", Options{K: 2, Closeness: []Closeness{{Column: 0, T: tt, Distance: closeness.Equal}}},
				func(per map[int32]int, persons int) bool {
					d := 0.0
					for v := range int32(sens.Values) {
						d += math.Abs(float64(per[v])/float64(persons) - float64(tablePer[v])/float64(tablePersons))
					}
					return d/2 > tt+1e-9
				}},
			{"β-likeness", Options{K: 2, Likeness: []Likeness{{Column: 0, Beta: beta}}},
				func(per map[int32]int, persons int) bool {
					for v, n := range per {
						b, bb := float64(n)/float64(persons), float64(tablePer[v])/float64(tablePersons)
						if b > bb && (b-bb)/bb > beta+1e-9 {
							return true
						}
					}
					return false
				}},
		} {
			name := fmt.Sprintf("trial%d/%s", trial, c.name)
			res, err := MondrianSearch(context.Background(), tab, values, c.opt)
			if errors.Is(err, fault.ErrUnattainable) {
				if per, persons := holders(all); !c.fail(per, persons) && persons >= 2 {
					t.Fatalf("%s: unattainable, but the whole table meets the model", name)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if len(res.Sizes) > 1 {
				split++
			}
			parts := make([][]int, len(res.Sizes))
			for r, cl := range res.Class {
				parts[cl] = append(parts[cl], r)
			}
			q := len(tab.Columns)
			covers := map[string]bool{}
			for i, rows := range parts {
				if per, persons := holders(rows); persons < 2 || c.fail(per, persons) {
					t.Fatalf("%s: partition %d (%d persons, holders %v) fails", name, i, persons, per)
				}
				key := fmt.Sprint(res.Covers.Index[i*q : (i+1)*q])
				if covers[key] {
					t.Fatalf("%s: two partitions share the covers %s", name, key)
				}
				covers[key] = true
			}
		}
	}
}

// TestMondrianPersonsHomogeneity: five persons who all have one diagnosis, one of
// whom also has four others, hold five distinct values but are not 2-diverse in
// persons: Mondrian refuses a table that is only that.
func TestMondrianPersonsHomogeneity(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 7))
	tab, _, values := mondrianPersonsCase(rng, 9, 1, 1)
	person := []int32{0, 1, 2, 3, 4, 4, 4, 4, 4}
	diag := []int32{0, 0, 0, 0, 0, 1, 2, 3, 4}
	tab.Unit = &Unit{Persons: 5, Codes: NewCodes(9, 5)}
	codes := NewCodes(9, 5)
	for r := range 9 {
		tab.Unit.Codes.Set(r, person[r])
		codes.Set(r, diag[r])
	}
	tab.Sensitive = []Sensitive{{Name: "diagnosis", Codes: codes, Values: 5}}
	opt := Options{K: 2, Diversity: []Diversity{{Column: 0, Model: diversity.Model{Variant: diversity.Distinct, L: 2}}}}
	if _, err := MondrianSearch(context.Background(), tab, values, opt); !errors.Is(err, fault.ErrUnattainable) {
		t.Fatalf("five persons all holding one value: got %v, want unattainable", err)
	}
}

// TestDistinctPersons: the stamp count equals a map's on random subsets of records,
// for every code width, across the stamp's wrap-around, and stops at stop.
func TestDistinctPersons(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 7))
	for _, persons := range []int{7, 256, 300, 70000} {
		n := 2 * persons
		codes := NewCodes(n, persons)
		for r := range n {
			codes.Set(r, int32(rng.IntN(persons)))
		}
		u := &Unit{Persons: persons, Codes: codes}
		all := make([]int32, n)
		for r := range all {
			all[r] = int32(r)
		}
		pc := &partChecker{}
		pc.distinctPersons(u, all, 0) // every person stamped 1, as after the wrap-around
		pc.gen = math.MaxUint32 - 2   // which comes at the loop's second full count
		for call := range 8 {
			var rows []int32
			who := map[int32]bool{}
			for r := range int32(n) {
				if rng.IntN(4) == 0 {
					rows = append(rows, r)
					who[codes.At(int(r))] = true
				}
			}
			if got := pc.distinctPersons(u, rows, 0); got != len(who) {
				t.Fatalf("%d persons, call %d (gen %d): counted %d, the map %d", persons, call, pc.gen, got, len(who))
			}
			if stop := 1 + rng.IntN(len(who)); pc.distinctPersons(u, rows, stop) != stop {
				t.Fatalf("%d persons: did not stop at %d", persons, stop)
			}
		}
	}
}

// BenchmarkMondrianPersons partitions Adult (age numeric) with k=5, every record a
// person of its own, or runs of 1 to 5 records a person's, who keeps the first one's
// values but for age.
func BenchmarkMondrianPersons(b *testing.B) {
	tab, _, _ := loadAdult(b)
	values := adultValues(b, tab)
	for _, most := range []int{0, 1, 5} {
		t := *tab
		if most > 0 {
			t.Columns = slices.Clone(tab.Columns)
			for j, c := range t.Columns {
				t.Columns[j].Codes = NewCodes(t.Rows, c.Hierarchy.Leaves())
			}
			rng := rand.New(rand.NewPCG(1, 1))
			codes := NewCodes(t.Rows, t.Rows)
			person, first, left := -1, 0, 0
			for r := range t.Rows {
				if left == 0 {
					person, first, left = person+1, r, 1+rng.IntN(most)
				}
				left--
				codes.Set(r, int32(person))
				for j, c := range t.Columns {
					from := first
					if c.Name == "age" {
						from = r
					}
					c.Codes.Set(r, tab.Columns[j].Codes.At(from))
				}
			}
			t.Unit = &Unit{Persons: person + 1, Codes: codes}
		}
		b.Run(fmt.Sprintf("most=%d", most), func(b *testing.B) {
			for b.Loop() {
				res, err := MondrianSearch(context.Background(), &t, values, Options{K: 5})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(len(res.Sizes)), "partitions")
			}
		})
	}
}
