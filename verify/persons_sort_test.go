package verify

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// refOrder is the comparator of order o, as the person count sorted by before its
// radix sort.
func refOrder(o rowOrder) func(a, b personRow) int {
	switch o {
	case byClass:
		return func(a, b personRow) int {
			return cmp.Or(cmp.Compare(a.c, b.c), cmp.Compare(a.h, b.h), cmp.Compare(a.s, b.s))
		}
	case byPersonValue:
		return func(a, b personRow) int {
			return cmp.Or(cmp.Compare(a.h, b.h), cmp.Compare(a.s, b.s), cmp.Compare(a.c, b.c))
		}
	}
	return func(a, b personRow) int {
		return cmp.Or(cmp.Compare(a.h, b.h), cmp.Compare(a.c, b.c), cmp.Compare(a.s, b.s))
	}
}

// randomRows is n rows of at most persons persons (hashes drawn from few bits when
// narrow, so that they share bytes), classes classes and values values, negative
// ones among them when signed.
func randomRows(rng *rand.Rand, n, persons, classes, values int, narrow, signed bool) []personRow {
	hs := make([]uint64, persons)
	for i := range hs {
		hs[i] = rng.Uint64()
		if narrow {
			hs[i] = hs[i]&0xff00000000000f00 | 0x0011223344550000
		}
	}
	rs := make([]personRow, n)
	for i := range rs {
		rs[i] = personRow{h: hs[rng.IntN(persons)], c: int32(rng.IntN(classes)), s: int32(rng.IntN(values))}
		if signed {
			rs[i].c -= int32(classes / 2)
			rs[i].s -= int32(values / 2)
		}
	}
	if signed && n > 2 { // the extremes
		rs[0].c, rs[1].c, rs[0].s, rs[1].s = -1<<31, 1<<31-1, 1<<31-1, -1<<31
	}
	return rs
}

// TestPersonRowsSortAsComparator holds the radix sort to the comparator sort of each
// order, on random rows: equal keys, one class, one person, one value, hashes that
// share most bytes, negative numbers, few rows and more than are sorted on two
// goroutines.
func TestPersonRowsSortAsComparator(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	type shape struct {
		n, persons, classes, values int
		narrow, signed              bool
	}
	var shapes []shape
	for _, n := range []int{0, 1, 2, 3, insertionMax, insertionMax + 1, 300, 5000, parallelMin - 1, parallelMin, 3 * parallelMin} {
		shapes = append(shapes,
			shape{n, max(n/3, 1), 50, 4, false, false},
			shape{n, 1, 70000, 3, false, false},           // one person
			shape{n, n + 1, 1, 1, false, false},           // one class, one value
			shape{n, 5, 3, 2, false, false},               // mostly equal keys
			shape{n, max(n/4, 1), 65536, 20, true, false}, // hashes alike but in two bytes
			shape{n, max(n/2, 1), 1000, 1000, false, true},
		)
	}
	for _, sh := range shapes {
		for _, o := range []rowOrder{byClass, byPerson, byPersonValue} {
			rs := randomRows(rng, sh.n, sh.persons, sh.classes, sh.values, sh.narrow, sh.signed)
			want := slices.Clone(rs)
			slices.SortFunc(want, refOrder(o))
			if err := sortRows(rs, o); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(rs, want) {
				t.Fatalf("%+v, order %d: the radix sort differs from the comparator's (%d rows)", sh, o, len(rs))
			}
		}
	}
}

// TestPersonRowsKeys holds keyed and unkeyed to each other and keyLess to the
// comparators, on extreme values.
func TestPersonRowsKeys(t *testing.T) {
	vals := []int32{-1 << 31, -1, 0, 1, 1<<31 - 1}
	hs := []uint64{0, 1, 1 << 32, 1<<64 - 1}
	var rs []personRow
	for _, c := range vals {
		for _, s := range vals {
			for _, h := range hs {
				rs = append(rs, personRow{h: h, c: c, s: s})
			}
		}
	}
	for _, o := range []rowOrder{byClass, byPerson, byPersonValue} {
		ref := refOrder(o)
		for _, a := range rs {
			if unkeyed(keyed(a, o), o) != a {
				t.Fatalf("order %d: %+v keyed and unkeyed is %+v", o, a, unkeyed(keyed(a, o), o))
			}
			for _, b := range rs {
				if keyLess(keyed(a, o), keyed(b, o)) != (ref(a, b) < 0) {
					t.Fatalf("order %d: %+v < %+v is %v by the keys", o, a, b, keyLess(keyed(a, o), keyed(b, o)))
				}
			}
		}
	}
}

// TestPersonsJudgeWithoutSensitive holds judge with no sensitive column (its records
// sorted by person) to judge by class (one sensitive column of one value and no
// model), on random rows: the same persons per class, the same classes failing k in
// the same order, and the same spread, groups of linked persons and rounds of
// ExpectedSuppression (linkRounds) from the records as each leaves them.
func TestPersonsJudgeWithoutSensitive(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 12))
	for trial := range 200 {
		n := []int{0, 1, 2, 7, 40, 300, 2000}[trial%7]
		if trial == 1 {
			n = 3 * parallelMin
		}
		classes := 1 + rng.IntN(max(1, n/5))
		rs := randomRows(rng, n, 1+rng.IntN(max(1, n/2)), classes, 1, false, false)
		k := 1 + rng.IntN(4)
		var got, want [5]string
		for i, sens := range []int{0, 1} {
			spec := Spec{K: k, Unit: "pid"}
			if sens > 0 {
				spec.Sensitive = []Sensitive{{Column: "s", Values: []string{"a"}}}
			}
			tl := newPersonTally(sens, 0)
			tl.rows[0] = slices.Clone(rs)
			var fails []personFailure
			persons, _, err := tl.judge(spec, classes, func(f personFailure) bool { fails = append(fails, f); return true })
			if err != nil {
				t.Fatal(err)
			}
			failing := make([]bool, classes)
			for _, f := range fails {
				failing[f.class] = true
			}
			lost, left, err := linkRounds(tl.rows[0], failing, persons, k)
			if err != nil {
				t.Fatal(err)
			}
			pm := &PersonsMeasured{}
			pairs, err := tl.spread(tl.rows[0], pm)
			if err != nil {
				t.Fatal(err)
			}
			groups, smallest, small, err := releasedGroups(pairs, k)
			if err != nil {
				t.Fatal(err)
			}
			out := &got
			if i == 1 {
				out = &want
			}
			*out = [5]string{fmt.Sprint(persons), fmt.Sprint(fails), fmt.Sprint(lost, left, failing), fmt.Sprintf("%+v", *pm), fmt.Sprint(groups, smallest, small)}
		}
		for i, what := range []string{"persons", "failures", "rounds", "spread", "groups"} {
			if got[i] != want[i] {
				t.Fatalf("trial %d (%d rows, %d classes, k %d): the %s differ without a sensitive column and by class:\n%.200s\n%.200s", trial, n, classes, k, what, got[i], want[i])
			}
		}
	}
}
