package verify

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"sanitizer/closeness"
	"sanitizer/diversity"
	"sanitizer/fault"
	"sanitizer/risk"
)

// risk0 stands for the class sizes where a comparison leaves them out.
var risk0 risk.Distribution

// personRec is a release record (q, s) with the person of the input record it
// generalizes.
type personRec struct{ q, s, id string }

// personsSpec is a release of columns q (the quasi-identifier) and s (sensitive,
// values a..e and D1..D5) counted in persons by the unit pid.
func personsSpec(k int, ls ...float64) Spec {
	sc := Sensitive{Column: "s", Values: []string{"a", "b", "c", "d", "e", "D1", "D2", "D3", "D4", "D5"}, Reference: []int64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}}
	for _, l := range ls {
		sc.Diversity = append(sc.Diversity, diversity.Model{Variant: diversity.Distinct, L: l})
	}
	return Spec{K: k, MaxSuppressed: 1 << 30, InputRows: 1 << 10, Columns: []string{"q", "s"}, Quasi: []string{"q"},
		Sensitive: []Sensitive{sc}, Unit: "pid"}
}

// countPersons feeds a Counter of spec the released records, then the persons of
// the input records left out (each of value a).
func countPersons(t *testing.T, spec Spec, released []personRec, left []string) (*Measured, error) {
	t.Helper()
	var recs []personRec
	for _, id := range left {
		recs = append(recs, personRec{"", "a", id})
	}
	return countPersonsLeft(t, spec, released, recs)
}

// countPersonsLeft is countPersons with the input records left out given whole.
func countPersonsLeft(t *testing.T, spec Spec, released, left []personRec) (*Measured, error) {
	t.Helper()
	spec.InputRows = len(released) + len(left)
	c, err := NewCounter(spec, spec.Columns)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range released {
		orig := []string{r.q}
		if spec.Unit != "" {
			orig = append(orig, r.id)
		}
		if err := c.AddMatched([]string{r.q, r.s}, orig); err != nil {
			return nil, err
		}
	}
	for _, r := range left {
		orig := []string{r.q}
		if spec.Unit != "" {
			orig = append(orig, r.id, r.s)
		}
		if err := c.AddSuppressed(orig); err != nil {
			return nil, err
		}
	}
	return c.Finish()
}

// sameClass is n records of class q, the persons ids in turn, all of value a.
func sameClass(q string, ids ...string) []personRec {
	var out []personRec
	for _, id := range ids {
		out = append(out, personRec{q, "a", id})
	}
	return out
}

// TestPersonsK: a class of 5 records of 2 persons fails k=3 counted in persons (it
// passes counted in records), the same records of 3 persons pass; the message names
// the class by number and first record, never an id.
func TestPersonsK(t *testing.T) {
	other := sameClass("B", "id-7", "id-8", "id-9")
	two := append(slices.Clone(other), sameClass("A", "id-secret-1", "id-secret-1", "id-secret-2", "id-secret-1", "id-secret-2")...)
	three := append(slices.Clone(other), sameClass("A", "id-secret-1", "id-secret-1", "id-secret-2", "id-secret-3", "id-secret-2")...)

	m, err := countPersons(t, personsSpec(3), two, nil)
	var v *Violation
	if !errors.As(err, &v) {
		t.Fatalf("5 records of 2 persons, k=3: %v, want a violation", err)
	}
	for _, want := range []string{"class 2", "release record 4", "2 persons", "k is 3"} {
		if !strings.Contains(v.Msg, want) {
			t.Errorf("message %q lacks %q", v.Msg, want)
		}
	}
	if strings.Contains(v.Msg, "secret") || strings.Contains(v.Msg, `"A"`) {
		t.Errorf("message %q quotes an id or a value", v.Msg)
	}
	if m.Persons == nil || m.Persons.MinClass != 2 || m.MinClass != 3 {
		t.Errorf("measured %+v, persons %+v: want the smallest class 2 persons, 3 records", m, m.Persons)
	}

	rows := personsSpec(3)
	rows.Unit = ""
	if _, err := countPersons(t, rows, two, nil); err != nil {
		t.Errorf("counted in records, 5 records pass k=3: %v", err)
	}
	m, err = countPersons(t, personsSpec(3), three, nil)
	if err != nil {
		t.Fatalf("5 records of 3 persons, k=3: %v", err)
	}
	if m.Persons.MinClass != 3 || m.Persons.Released != 6 {
		t.Errorf("persons %+v: want the smallest class 3, 6 persons released", *m.Persons)
	}
}

// TestPersonsMeasuredByHand: every person count of a small release.
//
// Class A: p1 (a), p1 (b), p2 (a), p3 (c) — 3 persons; class B: p3 (a), p4 (b),
// p5 (c) — 3 persons. Left out: p4, p6, p6, p7. Input persons p1..p7 = 7; released
// p1..p5 = 5; p3 lies in A and B; lost some p4, p6, p7 = 3; lost all p6, p7 = 2.
// In persons A's value a is held by 2 of 3 (l = 1.5), B's by 1 of 3 each (l = 3).
func TestPersonsMeasuredByHand(t *testing.T) {
	released := []personRec{{"A", "a", "p1"}, {"A", "b", "p1"}, {"A", "a", "p2"}, {"A", "c", "p3"}, {"B", "a", "p3"}, {"B", "b", "p4"}, {"B", "c", "p5"}}
	m, err := countPersons(t, personsSpec(3, 1), released, []string{"p4", "p6", "p6", "p7"})
	if err != nil {
		t.Fatal(err)
	}
	got := *m.Persons
	if got.Sizes.Records() != 6 || got.Sizes.Classes() != 2 || got.Sizes.Smallest() != 3 {
		t.Errorf("sizes %+v: want two classes of 3 persons", got.Sizes)
	}
	got.Sizes = m.Persons.Sizes
	want := PersonsMeasured{InputPersons: 7, Released: 5, MinClass: 3, InSeveralClasses: 1, LostSome: 3, LostAll: 2,
		Sizes: got.Sizes, Sensitive: []PersonsSensitive{{Column: "s", MinL: 1.5}}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("persons\n%+v, want\n%+v", got, want)
	}
	// the records' fields count records
	if m.Rows != 7 || m.Classes != 2 || m.MinClass != 3 || m.Sensitive[0].MinDistinct != 3 {
		t.Errorf("records: %+v", *m)
	}
}

// TestPersonsHomogeneity: five persons who all hold D1, one of whom also holds D2..D5,
// hold five distinct values in records (distinct 2-diverse counted in records) but
// are not 2-diverse counted in persons.
func TestPersonsHomogeneity(t *testing.T) {
	released := sameClass("B", "x1", "x2", "x3", "x4") // 4 persons, 4 values
	for i, s := range []string{"a", "b", "c", "d"} {
		released[i].s = s
	}
	for _, id := range []string{"p1", "p2", "p3", "p4", "p5"} {
		released = append(released, personRec{"A", "D1", id})
	}
	for _, s := range []string{"D2", "D3", "D4", "D5"} {
		released = append(released, personRec{"A", s, "p5"})
	}
	rows := personsSpec(2, 2)
	rows.Unit = ""
	if _, err := countPersons(t, rows, released, nil); err != nil {
		t.Fatalf("counted in records the class holds 5 values: %v", err)
	}
	m, err := countPersons(t, personsSpec(2, 2), released, nil)
	var v *Violation
	if !errors.As(err, &v) || !strings.Contains(v.Msg, "l-diversity counted in persons (l=2)") || !strings.Contains(v.Msg, "class 2") || !strings.Contains(v.Msg, "5 persons") {
		t.Fatalf("got %v, want the class of 5 persons to fail 2-diversity counted in persons", err)
	}
	if strings.Contains(v.Msg, "D1") || strings.Contains(v.Msg, "p5") {
		t.Errorf("message %q quotes a value or an id", v.Msg)
	}
	if m.Persons.Sensitive[0].MinL != 1 {
		t.Errorf("persons %+v: want the measured l 1 (5 of 5 persons hold D1)", *m.Persons)
	}
	// 1-diverse it is
	if _, err := countPersons(t, personsSpec(2, 1), released, nil); err != nil {
		t.Errorf("l=1: %v", err)
	}
}

// TestPersonsRefused: models without a person-level meaning in this version are an
// error of NewCounter with a privacy unit, and fine without.
func TestPersonsRefused(t *testing.T) {
	for _, c := range []struct {
		name, want string
		edit       func(*Spec)
	}{
		{"entropy", "entropy l-diversity", func(s *Spec) {
			s.Sensitive[0].Diversity = []diversity.Model{{Variant: diversity.Entropy, L: 2}}
		}},
		{"recursive", "recursive l-diversity", func(s *Spec) {
			s.Sensitive[0].Diversity = []diversity.Model{{Variant: diversity.Recursive, L: 2, C: 3}}
		}},
		{"average risk", "average re-identification risk", func(s *Spec) { s.Risk.AverageRisk = 0.1 }},
		{"records at risk", "at risk", func(s *Spec) { s.Risk.AtRiskThreshold, s.Risk.AtRiskMax = 0.2, 0.1 }},
		{"uniqueness", "population uniqueness", func(s *Spec) { s.Risk.Uniqueness = &Uniqueness{Max: 0.1, Population: 1e6} }},
		{"population", "δ-presence", func(s *Spec) { s.Population = &PopulationCheck{} }},
	} {
		spec := personsSpec(2)
		c.edit(&spec)
		if _, err := NewCounter(spec, spec.Columns); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "not in this version") {
			t.Errorf("%s: %v, want an error naming %q", c.name, err, c.want)
		}
		spec.Unit = ""
		if _, err := NewCounter(spec, spec.Columns); err != nil {
			t.Errorf("%s without a unit: %v", c.name, err)
		}
	}
	for _, d := range []closeness.Distance{closeness.Ordered, closeness.Hierarchical, ""} {
		spec := personsSpec(2)
		spec.Sensitive[0].Closeness = []Closeness{{T: 0.2, Distance: d}}
		if _, err := NewCounter(spec, spec.Columns); err == nil || !strings.Contains(err.Error(), "no meaning in persons") {
			t.Errorf("t-closeness under the %q distance in persons: %v, want it refused", d, err)
		}
	}
	spec := personsSpec(2, 3)
	spec.Risk.HighestRisk = 0.5
	spec.Sensitive[0].Closeness = []Closeness{{T: 0.2, Distance: closeness.Equal}}
	spec.Sensitive[0].Likeness = []Likeness{{Beta: 1}}
	spec.Linkable = true
	if _, err := NewCounter(spec, spec.Columns); err != nil {
		t.Errorf("k, distinct l, t (equal), β, the highest risk and multirelational k are counted in persons: %v", err)
	}
	spec.Unit = ""
	if _, err := NewCounter(spec, spec.Columns); err == nil || !strings.Contains(err.Error(), "without a privacy unit") {
		t.Errorf("linkable records without a unit: %v", err)
	}
}

// TestPersonsHighestRisk: the highest re-identification risk is 1 / the persons of
// the smallest class: a class of 4 records of 2 persons breaks a limit of 0.4.
func TestPersonsHighestRisk(t *testing.T) {
	spec := personsSpec(1)
	spec.Risk.HighestRisk = 0.4
	released := sameClass("A", "p1", "p2", "p1", "p2")
	var v *Violation
	if _, err := countPersons(t, spec, released, nil); !errors.As(err, &v) || !strings.Contains(v.Msg, "risk") {
		t.Errorf("got %v, want the risk 1/2 to break 0.4", err)
	}
	spec.Unit = ""
	if _, err := countPersons(t, spec, released, nil); err != nil {
		t.Errorf("counted in records the risk is 1/4: %v", err)
	}
}

// TestPersonsNeedInput: a Counter that counts persons needs, with every release
// record, its input record's unit, and refuses an empty unit (bad input, its value
// unquoted).
func TestPersonsNeedInput(t *testing.T) {
	spec := personsSpec(1)
	c, err := NewCounter(spec, spec.Columns)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Add([]string{"A", "a"}); !errors.Is(err, errNoPerson) {
		t.Errorf("Add: %v, want errNoPerson", err)
	}
	if err := c.AddMatched([]string{"A", "a"}, []string{"A"}); err == nil {
		t.Error("AddMatched without the unit: no error")
	}
	if err := c.AddMatched([]string{"A", "a"}, []string{"A", ""}); !errors.Is(err, fault.ErrBadInput) {
		t.Errorf("an empty unit: %v, want bad input", err)
	}
	if err := c.AddSuppressed([]string{"A", "", "a"}); !errors.Is(err, fault.ErrBadInput) {
		t.Errorf("an empty unit left out: %v, want bad input", err)
	}
	if err := c.AddSuppressed([]string{"A"}); err == nil {
		t.Error("AddSuppressed without the unit: no error")
	}
	if err := c.AddSuppressed([]string{"A", "p1"}); err == nil {
		t.Error("AddSuppressed without the sensitive values: no error")
	}
	if err := c.AddMatchedBatch([]string{"A", "a", "A", "b"}, []string{"A", "p1"}); !errors.Is(err, errNoPerson) {
		t.Errorf("a batch without every unit: %v", err)
	}
	if err := c.AddMatchedBatch([]string{"A", "a", "A", "b"}, []string{"A", "p1", "A", "p2"}); err != nil {
		t.Fatal(err)
	}
	m, err := c.Finish()
	if err != nil || m.Rows != 2 || m.Persons.MinClass != 2 {
		t.Errorf("the records counted: %v, %+v", err, m)
	}
	if _, err := Release(spec, spec.Columns, &records{recs: [][]string{{"A", "a"}}}); !errors.Is(err, errNoPerson) {
		t.Errorf("Release from the release alone: %v, want errNoPerson", err)
	}
}

// refPersons is what a release holds in persons, counted with maps of ids: whether
// every class meets k and every l, and the measures.
func refPersons(released []personRec, left []string, k int, ls []float64) (PersonsMeasured, bool) {
	classes := map[string]map[string]bool{}
	holders := map[string]map[string]map[string]bool{} // class → value → persons
	classesOf := map[string]map[string]bool{}          // person → classes
	for _, r := range released {
		if classes[r.q] == nil {
			classes[r.q], holders[r.q] = map[string]bool{}, map[string]map[string]bool{}
		}
		classes[r.q][r.id] = true
		if holders[r.q][r.s] == nil {
			holders[r.q][r.s] = map[string]bool{}
		}
		holders[r.q][r.s][r.id] = true
		if classesOf[r.id] == nil {
			classesOf[r.id] = map[string]bool{}
		}
		classesOf[r.id][r.q] = true
	}
	pm := PersonsMeasured{Released: len(classesOf), Sensitive: []PersonsSensitive{{Column: "s"}}}
	ok, first := true, true
	for q, ids := range classes {
		n := len(ids)
		if pm.MinClass == 0 || n < pm.MinClass {
			pm.MinClass = n
		}
		most := 0
		for _, hs := range holders[q] {
			most = max(most, len(hs))
		}
		if l := float64(n) / float64(most); first || l < pm.Sensitive[0].MinL {
			pm.Sensitive[0].MinL, first = l, false
		}
		ok = ok && n >= k
		for _, l := range ls {
			ok = ok && float64(most)*l <= float64(n)
		}
	}
	for _, cs := range classesOf {
		if len(cs) > 1 {
			pm.InSeveralClasses++
		}
	}
	lost := map[string]bool{}
	for _, id := range left {
		lost[id] = true
	}
	pm.LostSome = len(lost)
	for id := range lost {
		if classesOf[id] == nil {
			pm.LostAll++
		}
	}
	pm.InputPersons = pm.Released + pm.LostAll
	return pm, ok
}

// randomPersons is a random release of n records counted in persons: classes of very
// different sizes, persons with one to many records in one or several classes, some
// persons' records left out.
func randomPersons(rng *rand.Rand, n int) ([]personRec, []string) {
	classes, persons := 1+rng.IntN(max(1, n/8)), 1+rng.IntN(max(1, n/2))
	var released []personRec
	var left []string
	for range n {
		id := fmt.Sprintf("person-%d", rng.IntN(persons))
		q := fmt.Sprint(rng.IntN(classes))
		if rng.IntN(4) == 0 {
			q = "0" // one large class
		}
		if rng.IntN(10) == 0 {
			left = append(left, id)
			continue
		}
		released = append(released, personRec{q, []string{"a", "b", "c", "d", "e"}[rng.IntN(1+rng.IntN(5))], id})
	}
	return released, left
}

// TestPersonsAgainstMaps holds the Counter's person counts to the same counted with
// maps of ids, on random releases: small ones, and one large enough to be sorted on
// two goroutines.
func TestPersonsAgainstMaps(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 4))
	sizes := []int{1, 2, 3, 5, 8, 13, 40, 100, 300}
	outcomes := map[bool]int{}
	for trial := range 400 {
		n := sizes[trial%len(sizes)]
		if trial == 0 {
			n = 3 * parallelMin
		}
		released, left := randomPersons(rng, n)
		k := 1 + rng.IntN(4)
		var ls []float64
		if rng.IntN(2) == 0 {
			ls = append(ls, float64(1+rng.IntN(3)))
		}
		want, ok := refPersons(released, left, k, ls)
		outcomes[ok]++
		m, err := countPersons(t, personsSpec(k, ls...), released, left)
		var v *Violation
		switch {
		case err != nil && !errors.As(err, &v):
			t.Fatalf("trial %d: %v", trial, err)
		case ok != (err == nil):
			t.Fatalf("trial %d (%d records, k %d, l %v): counted %v, the maps say the models hold: %v", trial, n, k, ls, err, ok)
		}
		got := *m.Persons
		if len(released) == 0 {
			want.Sensitive = got.Sensitive
		}
		if !ok { // the count stopped at the first class that fails: l measured in part
			want.Sensitive = got.Sensitive
		}
		got.Sizes = risk0
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("trial %d (%d records): persons\n%+v, the maps\n%+v", trial, n, got, want)
		}
	}
	if outcomes[true] < 50 || outcomes[false] < 50 {
		t.Errorf("%d releases meet the models, %d do not: the trials test little", outcomes[true], outcomes[false])
	}
}

// TestPersonsWalk: the truthfulness walk reads the unit from the input records it
// matches (a column the release lacks) and counts what AddMatched counts; an input
// without the unit column is an error.
func TestPersonsWalk(t *testing.T) {
	spec := personsSpec(2, 2)
	in := [][]string{{"p1", "A", "a"}, {"p2", "A", "b"}, {"p1", "A", "c"}, {"p3", "B", "a"}, {"p4", "B", "b"}, {"p9", "C", "a"}, {"p3", "B", "c"}}
	rel := [][]string{{"A", "a"}, {"A", "b"}, {"A", "c"}, {"B", "a"}, {"B", "b"}, {"B", "c"}}
	c, err := NewCounter(spec, spec.Columns)
	if err != nil {
		t.Fatal(err)
	}
	tr := Truth{Columns: spec.Columns, MaxSuppressed: 1, Covers: map[string]Cover{"q": CoverMask(true)}, Count: c}
	n, err := Truthful(tr, []string{"pid", "q", "s"}, &records{recs: in}, &records{recs: rel})
	if err != nil || n != 1 {
		t.Fatalf("walk: %d left out, %v", n, err)
	}
	m, err := c.Finish()
	if err != nil {
		t.Fatal(err)
	}
	var released []personRec
	for i, x := range in {
		if i != 5 {
			released = append(released, personRec{x[1], x[2], x[0]})
		}
	}
	want, _ := refPersons(released, []string{"p9"}, 2, nil)
	got := *m.Persons
	got.Sizes = risk0
	if fmt.Sprint(got) != fmt.Sprint(want) || got.InputPersons != 5 || got.LostAll != 1 {
		t.Errorf("walk counted\n%+v, want\n%+v", got, want)
	}
	c, err = NewCounter(spec, spec.Columns)
	if err != nil {
		t.Fatal(err)
	}
	tr.Count = c
	if _, err := Truthful(tr, []string{"q", "s"}, &records{recs: [][]string{{"A", "a"}}}, &records{recs: [][]string{{"A", "a"}}}); err == nil || !strings.Contains(err.Error(), `"pid"`) {
		t.Errorf("an input without the unit: %v, want an error naming it", err)
	}
}

// TestExpectedSuppressionPersons: counted in persons, the input's class (X,[20,29])
// of 3 records of 2 persons (p1 holding a and b, p2 a) fails k=3 and distinct l=2,
// which it meets counted in records: a release that publishes it is a violation, one
// that suppresses it is right. (Y,[30,39]) holds 3 persons of a, b, c.
func TestExpectedSuppressionPersons(t *testing.T) {
	ids := []string{"p1", "p1", "p2", "p3", "p4", "p5", "p6"}
	var input [][]string
	for i, r := range missingInput {
		input = append(input, append(slices.Clone(r), ids[i]))
	}
	l2 := diversity.Model{Variant: diversity.Distinct, L: 2}
	for _, tc := range []struct {
		name     string
		k        int
		div      []diversity.Model
		release  [][]string
		required int
		want     string // a part of the violation; "" for none
	}{
		{"k: the class of 2 persons suppressed", 3, nil, releaseOf(3, 4, 5), 4, ""},
		{"k: the class of 2 persons published", 3, nil, releaseOf(0, 1, 2, 3, 4, 5), 0, "publishes 3 records of a class that has records of 2 persons, k is 3"},
		{"l: the class of 2 persons suppressed", 2, []diversity.Model{l2}, releaseOf(3, 4, 5), 4, ""},
		{"l: the class of 2 persons published", 2, []diversity.Model{l2}, releaseOf(0, 1, 2, 3, 4, 5), 0, "fails l-diversity counted in persons (l=2)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := missingSpec(t, tc.div...)
			spec.K = tc.k
			rel, err := ReleasedClasses(spec, &records{recs: tc.release})
			if err != nil {
				t.Fatal(err)
			}
			rows := missingInput
			if _, err := ExpectedSuppression(spec, []int{1, 1}, rel, &records{recs: rows}); tc.want == "" && err == nil {
				t.Fatal("counted in records, the release that suppresses the class of 2 persons passes")
			}
			spec.Unit = "pid"
			required, err := ExpectedSuppression(spec, []int{1, 1}, rel, &records{recs: input})
			var v *Violation
			switch {
			case tc.want == "" && (err != nil || required != tc.required):
				t.Fatalf("a right release: %d required, %v; want %d", required, err, tc.required)
			case tc.want != "" && (!errors.As(err, &v) || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want a violation saying %q", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "p1") {
				t.Errorf("%v quotes an id", err)
			}
		})
	}
	spec := missingSpec(t)
	spec.Unit = "pid"
	rel, err := ReleasedClasses(spec, &records{recs: releaseOf(3, 4, 5)})
	if err != nil {
		t.Fatal(err)
	}
	empty := slices.Clone(input)
	empty[4] = []string{"C", "33", "b", ""}
	if _, err := ExpectedSuppression(spec, []int{1, 1}, rel, &records{recs: empty}); !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "input record 5") {
		t.Errorf("an empty unit: %v, want bad input naming record 5", err)
	}
	if _, err := ExpectedSuppression(spec, []int{1, 1}, rel, &records{recs: missingInput}); err == nil {
		t.Error("an input without the unit: no error")
	}
	spec.Sensitive[0].Closeness = []Closeness{{T: 0.5, Distance: closeness.Ordered}}
	if _, err := ExpectedSuppression(spec, []int{1, 1}, rel, &records{recs: input}); err == nil || !strings.Contains(err.Error(), "no meaning in persons") {
		t.Errorf("t-closeness in persons under the ordered distance: %v", err)
	}
}
