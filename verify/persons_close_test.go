package verify

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"sanitizer/closeness"
)

// closeSpec is personsSpec(1) with t-closeness (equal distance) t and β-likeness β on
// s (none when ≤ 0).
func closeSpec(t, beta float64) Spec {
	spec := personsSpec(1)
	if t > 0 {
		spec.Sensitive[0].Closeness = []Closeness{{T: t, Distance: closeness.Equal}}
	}
	if beta > 0 {
		spec.Sensitive[0].Likeness = []Likeness{{Beta: beta}}
	}
	return spec
}

// bothHalves is closeness's TestPersonsSharesNotNormalized as a release: class A's 10
// persons each hold a and b; class B's 20 persons hold a (10 of them) or b (the other
// 10). Every class and the table have half their records a: in records each class
// lies at distance 0 and gains nothing. In persons B(a) = B(b) = 20/30: A's persons
// all hold both, distance ½(⅓ + ⅓) = ⅓ and a's gain (1 − ⅔)/⅔ = ½; B's hold each
// value half, distance ½(⅙ + ⅙) = ⅙, no gain.
func bothHalves() []personRec {
	var out []personRec
	for i := range 10 {
		id := fmt.Sprintf("both-%d", i)
		out = append(out, personRec{"A", "a", id}, personRec{"A", "b", id})
	}
	for i := range 20 {
		out = append(out, personRec{"B", []string{"a", "b"}[i%2], fmt.Sprintf("one-%d", i)})
	}
	return out
}

// TestPersonsCloseness: the release of bothHalves passes t = 0.3 and β = 0.4 counted
// in records and fails both counted in persons, measuring the distance ⅓ and the
// gain ½; t = 0.34 and β = 0.5 it meets in persons. The messages name the class by
// number and first record, never a value.
func TestPersonsCloseness(t *testing.T) {
	rel := bothHalves()
	for _, tc := range []struct {
		name    string
		t, beta float64
		want    string // a part of the violation in persons; "" for none
	}{
		{"t", 0.3, 0, "distance 0.3333 in persons"},
		{"β", 0, 0.4, "β-likeness counted in persons (β=0.4)"},
		{"both met", 0.34, 0.5, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := closeSpec(tc.t, tc.beta)
			rows := spec
			rows.Unit = ""
			rows.Sensitive = slices.Clone(rows.Sensitive)
			rows.Sensitive[0].Reference = []int64{20, 20, 0, 0, 0, 0, 0, 0, 0, 0}
			m, err := countPersons(t, rows, rel, nil)
			if err != nil || m.Sensitive[0].MaxEMD != 0 || m.Sensitive[0].MaxGain != 0 {
				t.Fatalf("counted in records: %v, measured %+v; want every class at the table's distribution", err, m.Sensitive)
			}
			m, err = countPersons(t, spec, rel, nil)
			var v *Violation
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("in persons: %v", err)
			case tc.want != "" && (!errors.As(err, &v) || !strings.Contains(v.Msg, tc.want) || !strings.Contains(v.Msg, "class 1 (its first record is release record 1) of 10 persons")):
				t.Fatalf("in persons: %v, want a violation of class 1 saying %q", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "both-") {
				t.Errorf("%v quotes an id", err)
			}
			if tc.want == "" {
				ps := m.Persons.Sensitive[0]
				if math.Abs(ps.MaxEMD-1.0/3) > 1e-12 || math.Abs(ps.MaxGain-0.5) > 1e-12 {
					t.Errorf("measured in persons %+v, want the distance ⅓ and the gain ½", ps)
				}
			}
		})
	}
}

// TestPersonsReferenceWholeInput: the reference is the shares of all the input's
// persons, those whose every record was left out too. Thirty persons holding only b,
// all left out, make B(a) = 20/60: class A's gain is (1 − ⅓)/⅓ = 2 (it would be ½
// against the released persons only) and its distance ½(⅔ + ⅙) = 5/12.
func TestPersonsReferenceWholeInput(t *testing.T) {
	var left []personRec
	for i := range 30 {
		left = append(left, personRec{"C", "b", fmt.Sprintf("gone-%d", i)})
	}
	m, err := countPersonsLeft(t, closeSpec(100, 100), bothHalves(), left)
	if err != nil {
		t.Fatal(err)
	}
	if ps := m.Persons.Sensitive[0]; math.Abs(ps.MaxEMD-5.0/12) > 1e-12 || math.Abs(ps.MaxGain-2) > 1e-12 {
		t.Errorf("measured %+v, want the distance 5/12 and the gain 2 against the whole input's persons", ps)
	}
	var v *Violation
	if _, err := countPersonsLeft(t, closeSpec(0, 1), bothHalves(), left); !errors.As(err, &v) || !strings.Contains(v.Msg, "gains 2 over") {
		t.Errorf("β = 1: %v, want class A to fail, gaining 2", err)
	}
	if _, err := countPersons(t, closeSpec(0, 1), bothHalves(), nil); err != nil {
		t.Errorf("β = 1 without the persons left out: %v", err)
	}
}

// refCloseness measures, with maps of ids, the largest distance and gain in persons
// of the classes of released against the persons of released and left, and whether
// every class meets t and β.
func refCloseness(released, left []personRec, t, beta float64) (maxEMD, maxGain float64, ok bool) {
	holders := map[string]map[string]bool{} // value → persons, over the whole input
	all := map[string]bool{}
	for _, r := range append(slices.Clone(released), left...) {
		if holders[r.s] == nil {
			holders[r.s] = map[string]bool{}
		}
		holders[r.s][r.id], all[r.id] = true, true
	}
	classes := map[string]map[string]map[string]bool{} // class → value → persons
	persons := map[string]map[string]bool{}
	for _, r := range released {
		if classes[r.q] == nil {
			classes[r.q], persons[r.q] = map[string]map[string]bool{}, map[string]bool{}
		}
		if classes[r.q][r.s] == nil {
			classes[r.q][r.s] = map[string]bool{}
		}
		classes[r.q][r.s][r.id], persons[r.q][r.id] = true, true
	}
	ok = true
	for q, vals := range classes {
		n := float64(len(persons[q]))
		var d, g float64
		for v, hs := range holders {
			b, B := float64(len(vals[v]))/n, float64(len(hs))/float64(len(all))
			d += math.Abs(b-B) / 2
			if b > B {
				g = max(g, (b-B)/B)
			}
		}
		maxEMD, maxGain = max(maxEMD, d), max(maxGain, g)
		ok = ok && d <= t && g <= beta+1e-12
	}
	return maxEMD, maxGain, ok
}

// TestPersonsClosenessAgainstMaps holds the Counter's distances, gains and decisions
// in persons to the same counted with maps of ids on random releases, a large one
// sorted on two goroutines among them.
func TestPersonsClosenessAgainstMaps(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 5))
	sizes := []int{1, 2, 5, 13, 40, 100, 300}
	outcomes := map[bool]int{}
	for trial := range 300 {
		n := sizes[trial%len(sizes)]
		if trial == 0 {
			n = 3 * parallelMin
		}
		released, leftIDs := randomPersons(rng, n)
		var left []personRec
		for _, id := range leftIDs {
			left = append(left, personRec{"", []string{"a", "b", "c", "d", "e"}[rng.IntN(5)], id})
		}
		if len(released) == 0 {
			continue
		}
		wantD, wantG, _ := refCloseness(released, left, math.Inf(1), math.Inf(1))
		m, err := countPersonsLeft(t, closeSpec(1e9, 1e9), released, left)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if ps := m.Persons.Sensitive[0]; math.Abs(ps.MaxEMD-wantD) > 1e-9 || math.Abs(ps.MaxGain-wantG) > 1e-9 {
			t.Fatalf("trial %d (%d records): measured %+v, the maps %g, %g", trial, n, ps, wantD, wantG)
		}
		tt, beta := []float64{0.1234567, 0.2345678, 0.4567891}[rng.IntN(3)], []float64{0.3456789, 1.2345678, 3.4567891}[rng.IntN(3)]
		_, _, ok := refCloseness(released, left, tt, beta)
		outcomes[ok]++
		_, err = countPersonsLeft(t, closeSpec(tt, beta), released, left)
		var v *Violation
		if (err == nil) != ok || (err != nil && !errors.As(err, &v)) {
			t.Fatalf("trial %d (%d records, t %g, β %g): counted %v, the maps say the models hold: %v", trial, n, tt, beta, err, ok)
		}
	}
	if outcomes[true] < 30 || outcomes[false] < 30 {
		t.Errorf("%d releases meet the models, %d do not: the trials test little", outcomes[true], outcomes[false])
	}
}
