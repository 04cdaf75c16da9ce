package diversity

import (
	"math"
	"testing"
)

// TestPersonsHold checks l-diversity counted in persons on both sides of its
// boundary, with hand-computed classes, the homogeneity counterexample first.
func TestPersonsHold(t *testing.T) {
	for _, c := range []struct {
		name    string
		l       float64
		persons int64
		holders []int64
		want    bool
		wantL   float64
	}{
		// Five persons all hold D1; one of them also holds D2..D5. In records the
		// class holds 5 distinct values (distinct 5-diverse), but every person's
		// diagnosis D1 is known: 5 of 5 persons hold it, above 5/2.
		{"homogeneity counterexample", 2, 5, []int64{5, 1, 1, 1, 1}, false, 1},
		{"homogeneity counterexample, l=1", 1, 5, []int64{5, 1, 1, 1, 1}, true, 1},
		// 4 persons, values held by 2 and 2: exactly n/l
		{"boundary 2 of 4", 2, 4, []int64{2, 2}, true, 2},
		{"one above the boundary", 2, 4, []int64{3, 1}, false, 4.0 / 3},
		// 6 persons, l=3: at most 2 each
		{"3-diverse", 3, 6, []int64{2, 2, 2, 1}, true, 3},
		{"not 3-diverse", 3, 6, []int64{3, 2, 1}, false, 2},
		// ⌊7/3⌋ = 2: 2 holders pass, 3 (3·3 = 9 > 7) fail
		{"floor 7/3 passes", 3, 7, []int64{2, 2, 2, 1}, true, 3.5},
		{"floor 7/3 fails", 3, 7, []int64{3, 2, 2}, false, 7.0 / 3},
		// one record per person: the share of records
		{"one row each", 2, 3, []int64{2, 1}, false, 1.5},
		{"zero counts ignored", 2, 2, []int64{0, 1, 0, 1}, true, 2},
		{"fewer persons than l", 3, 2, []int64{1, 1}, false, 2},
		{"no persons", 1, 0, nil, false, 0},
		{"no values", 1, 3, []int64{0}, false, 0},
		{"more holders than persons", 1, 2, []int64{3}, false, 2.0 / 3},
		{"l below 1", 0.5, 2, []int64{1, 1}, false, 2},
		{"l NaN", math.NaN(), 2, []int64{1, 1}, false, 2},
		{"huge l", 1e300, 1 << 62, []int64{1}, false, 1 << 62},
		{"fractional l", 2.5, 5, []int64{2, 2, 1}, true, 2.5},
		{"fractional l fails", 2.5, 5, []int64{3, 2}, false, 5.0 / 3},
	} {
		if got := PersonsHold(c.l, c.persons, c.holders); got != c.want {
			t.Errorf("%s: PersonsHold(%g, %d, %v) = %v, want %v", c.name, c.l, c.persons, c.holders, got, c.want)
		}
		if got := PersonsL(c.persons, c.holders); math.Abs(got-c.wantL) > 1e-12 {
			t.Errorf("%s: PersonsL(%d, %v) = %g, want %g", c.name, c.persons, c.holders, got, c.wantL)
		}
		// the measured l agrees with the decision for a whole l within the class
		if c.persons > 0 && c.l >= 1 && c.l == math.Trunc(c.l) && c.l < 1e6 {
			if decided := PersonsL(c.persons, c.holders) >= c.l; decided != c.want {
				t.Errorf("%s: PersonsL %g against l %g disagrees with PersonsHold %v", c.name, PersonsL(c.persons, c.holders), c.l, c.want)
			}
		}
	}
}

// TestPersonsHoldRows: with one record per person, a class that is l-diverse in
// persons is distinct l-diverse in records (each value at most n/l of n records: at
// least l values).
func TestPersonsHoldRows(t *testing.T) {
	for n := int64(1); n <= 6; n++ {
		for l := 1.0; l <= 4; l++ {
			for _, h := range [][]int64{{n}, {n - 1, 1}, []int64{1, 1, 1, 1, 1, 1}[:n], {2, 2, 2}} {
				var sum int64
				for _, x := range h {
					sum += x
				}
				if sum != n {
					continue
				}
				if PersonsHold(l, n, h) && !(Model{Variant: Distinct, L: l}).Holds(h) {
					t.Errorf("n=%d l=%g %v: l-diverse in persons but not distinct l-diverse", n, l, h)
				}
			}
		}
	}
}
