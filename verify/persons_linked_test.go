package verify

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"sanitizer/schema"
)

// linkable is personsSpec(k) with linkable records.
func linkable(k int) Spec {
	spec := personsSpec(k)
	spec.Linkable = true
	return spec
}

// TestPersonsLinkableGroups: classes A (p1..p4) and B (p1, p5..p7) each hold 4
// persons, k = 3 in persons; but p1 alone lies in both, a group of one: linkable, the
// release fails multirelational k, naming the group's size and classes, never an
// id. Without p1 every group holds 3.
func TestPersonsLinkableGroups(t *testing.T) {
	withP1 := append(sameClass("A", "p1", "p2", "p3", "p4", "p2"), sameClass("B", "p5", "p1", "p6", "p7")...)
	withoutP1 := slices.DeleteFunc(slices.Clone(withP1), func(r personRec) bool { return r.id == "p1" })

	if _, err := countPersons(t, personsSpec(3), withP1, nil); err != nil {
		t.Fatalf("not linkable, every class holds 4 persons: %v", err)
	}
	m, err := countPersons(t, linkable(3), withP1, nil)
	var v *Violation
	if !errors.As(err, &v) {
		t.Fatalf("linkable: %v, want a violation", err)
	}
	for _, want := range []string{"1 released persons share one set of 2 released classes", "class 1 (its first record is release record 1)", "k is 3", "multirelational"} {
		if !strings.Contains(v.Msg, want) {
			t.Errorf("message %q lacks %q", v.Msg, want)
		}
	}
	if strings.Contains(v.Msg, "p1") {
		t.Errorf("message %q quotes an id", v.Msg)
	}
	if m.Persons.Groups != 3 || m.Persons.MinGroup != 1 {
		t.Errorf("persons %+v: want 3 groups, the smallest of 1", *m.Persons)
	}
	m, err = countPersons(t, linkable(3), withoutP1, []string{"p1", "p1"})
	if err != nil || m.Persons.Groups != 2 || m.Persons.MinGroup != 3 || m.Persons.LostAll != 1 {
		t.Errorf("without p1: %v, %+v; want 2 groups of 3, p1 lost", err, m.Persons)
	}
	if m, _ := countPersons(t, personsSpec(3), withoutP1, nil); m.Persons.Groups != 0 || m.Persons.MinGroup != 0 {
		t.Errorf("not linkable: groups measured %+v", *m.Persons)
	}
	// the highest risk raises k for the groups as for the classes: 0.3 is k = 4. A and
	// B hold 6 persons each, in three groups of 3 ({A}, {B}, {A, B})
	var three []personRec
	for i, q := range []string{"A", "A", "A", "B", "B", "B"} {
		three = append(three, personRec{q, "a", fmt.Sprint("x", i)})
	}
	for i := range 3 {
		three = append(three, personRec{"A", "b", fmt.Sprint("y", i)}, personRec{"B", "b", fmt.Sprint("y", i)})
	}
	risky := linkable(3)
	risky.Risk.HighestRisk = 0.5
	if m, err := countPersons(t, risky, three, nil); err != nil || m.Persons.MinGroup != 3 || m.Persons.Groups != 3 {
		t.Errorf("groups of 3 within a risk of ½: %v, %+v", err, m.Persons)
	}
	risky.Risk.HighestRisk = 0.3
	if _, err := countPersons(t, risky, three, nil); !errors.As(err, &v) || !strings.Contains(v.Msg, "3 released persons share one set") || !strings.Contains(v.Msg, "k is 4") {
		t.Errorf("groups of 3 persons, a risk of 0.3: %v, want them to fail k = 4", err)
	}
}

// refGroups groups the released persons by their set of classes with maps of ids:
// the number of groups and the persons of the smallest.
func refGroups(released []personRec) (groups, smallest int) {
	sets := map[string]map[string]bool{}
	for _, r := range released {
		if sets[r.id] == nil {
			sets[r.id] = map[string]bool{}
		}
		sets[r.id][r.q] = true
	}
	count := map[string]int{}
	for _, s := range sets {
		keys := make([]string, 0, len(s))
		for q := range s {
			keys = append(keys, q)
		}
		slices.Sort(keys)
		count[strings.Join(keys, "\x00")]++
	}
	for _, n := range count {
		if smallest == 0 || n < smallest {
			smallest = n
		}
	}
	return len(count), smallest
}

// TestPersonsLinkableAgainstMaps holds the Counter's groups of linked persons, and its
// decision, to the same counted with maps of ids on random releases, a large one
// sorted on two goroutines among them.
func TestPersonsLinkableAgainstMaps(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 6))
	sizes := []int{1, 2, 3, 5, 8, 13, 40, 100, 300}
	outcomes := map[bool]int{}
	for trial := range 400 {
		n := sizes[trial%len(sizes)]
		if trial == 0 {
			n = 3 * parallelMin
		}
		released, left := randomPersons(rng, n)
		k := 1 + rng.IntN(3)
		classes, _ := refPersons(released, left, k, nil)
		groups, smallest := refGroups(released)
		ok := (len(released) == 0 || classes.MinClass >= k) && (len(released) == 0 || smallest >= k)
		outcomes[ok]++
		m, err := countPersons(t, linkable(k), released, left)
		var v *Violation
		switch {
		case err != nil && !errors.As(err, &v):
			t.Fatalf("trial %d: %v", trial, err)
		case ok != (err == nil):
			t.Fatalf("trial %d (%d records, k %d): counted %v, the maps say the models hold: %v", trial, n, k, err, ok)
		case m.Persons.Groups != groups || m.Persons.MinGroup != smallest:
			t.Fatalf("trial %d (%d records): %d groups, the smallest %d; the maps %d, %d", trial, n, m.Persons.Groups, m.Persons.MinGroup, groups, smallest)
		}
	}
	if outcomes[true] < 50 || outcomes[false] < 50 {
		t.Errorf("%d releases meet the models, %d do not: the trials test little", outcomes[true], outcomes[false])
	}
}

// linkInputSpec is a release of (q, s) counted in persons by pid, q a quasi-identifier
// of classes A..F (a hierarchy file; released at level 0, as they are), s sensitive
// (values a..e), the records linkable.
func linkInputSpec(t *testing.T, k int) Spec {
	t.Helper()
	dom, err := HierarchyDomain(writeHierarchy(t, "A;*\nB;*\nC;*\nD;*\nE;*\nF;*\n"))
	if err != nil {
		t.Fatal(err)
	}
	spec := linkable(k)
	spec.Utility = []Quasi{{Column: "q", Domain: dom, Type: schema.String}}
	return spec
}

// refRounds is multirelational k-anonymity's rounds with maps of ids: which input
// records a linkable release keeps (classes under k persons fail; then, until no group
// is under k, the persons of the groups under k are suppressed and the classes left
// under k persons fail).
func refRounds(input []personRec, k int) []bool {
	failing := map[string]bool{}
	gone := map[string]bool{}
	personsOf := func(q string) int {
		ids := map[string]bool{}
		for _, r := range input {
			if r.q == q && !gone[r.id] {
				ids[r.id] = true
			}
		}
		return len(ids)
	}
	for _, r := range input {
		failing[r.q] = personsOf(r.q) < k
	}
	for {
		var kept []personRec
		for _, r := range input {
			if !failing[r.q] && !gone[r.id] {
				kept = append(kept, r)
			}
		}
		sets := map[string][]string{}
		for _, r := range kept {
			if !slices.Contains(sets[r.id], r.q) {
				sets[r.id] = append(sets[r.id], r.q)
			}
		}
		size := map[string]int{}
		key := func(id string) string { s := slices.Sorted(slices.Values(sets[id])); return strings.Join(s, ",") }
		for id := range sets {
			size[key(id)]++
		}
		small := false
		for id := range sets {
			if size[key(id)] < k {
				gone[id], small = true, true
			}
		}
		if !small {
			break
		}
		for q := range failing {
			failing[q] = failing[q] || personsOf(q) < k
		}
	}
	keep := make([]bool, len(input))
	for i, r := range input {
		keep[i] = !failing[r.q] && !gone[r.id]
	}
	return keep
}

// expectLinked runs ExpectedSuppression at level 0 on input, of which the release
// keeps the records keep says.
func expectLinked(t *testing.T, spec Spec, input []personRec, keep []bool) (int, error) {
	t.Helper()
	var rel, in [][]string
	for i, r := range input {
		in = append(in, []string{r.q, r.s, r.id})
		if keep[i] {
			rel = append(rel, []string{r.q, r.s})
		}
	}
	spec.InputRows = len(input)
	classes, err := ReleasedClasses(spec, &records{recs: rel})
	if err != nil {
		t.Fatal(err)
	}
	return ExpectedSuppression(spec, []int{0}, classes, &records{recs: in})
}

// TestExpectedSuppressionLinkable: the persons of a group under k are suppressed
// whole, then the classes they leave under k fail, until no group is under k. Here
// (k = 2) A holds p1, p2, p3, B p1, p4, C p5, p6, every class 2 persons or more: but
// p1 alone lies in A and B, and p4 alone in B only: both are suppressed, B is left
// with none and fails; every person left (p2, p3 in {A}; p5, p6 in {C}) is in a
// group of 2.
func TestExpectedSuppressionLinkable(t *testing.T) {
	input := []personRec{{"A", "a", "p1"}, {"A", "b", "p2"}, {"B", "a", "p1"}, {"A", "c", "p3"}, {"B", "b", "p4"}, {"C", "a", "p5"}, {"C", "b", "p6"}, {"B", "c", "p4"}}
	keep := refRounds(input, 2)
	if want := []bool{false, true, false, true, false, true, true, false}; !slices.Equal(keep, want) {
		t.Fatalf("the maps' rounds keep %v, want %v", keep, want)
	}
	spec := linkInputSpec(t, 2)
	if required, err := expectLinked(t, spec, input, keep); err != nil || required != 4 {
		t.Fatalf("the release of the rounds: %d required, %v; want 4", required, err)
	}
	classesOnly := []bool{true, true, true, true, true, true, true, true} // every class holds 2 persons
	var v *Violation
	if _, err := expectLinked(t, spec, input, classesOnly); !errors.As(err, &v) || !strings.Contains(v.Msg, "multirelational") {
		t.Errorf("a release of the classes only: %v, want a violation", err)
	}
	notLinked := spec
	notLinked.Linkable = false
	if _, err := expectLinked(t, notLinked, input, classesOnly); err != nil {
		t.Errorf("not linkable, the classes only: %v", err)
	}
	// B published though the rounds fail it
	bKept := slices.Clone(keep)
	bKept[4], bKept[7] = true, true
	if _, err := expectLinked(t, spec, input, bKept); !errors.As(err, &v) || !strings.Contains(v.Msg, "left with 0 persons once the persons of groups under k are suppressed") {
		t.Errorf("B published: %v", err)
	}
}

// TestExpectedSuppressionLinkableAgainstMaps: on random inputs of persons with records
// in several classes, ExpectedSuppression accepts exactly the release of the rounds
// run with maps of ids (and the records it requires suppressed), and refuses the
// release of the classes under k only when that differs from it.
func TestExpectedSuppressionLinkableAgainstMaps(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 7))
	differ := 0
	for trial := range 300 {
		persons, k := 2+rng.IntN(30), 2+rng.IntN(3)
		var input []personRec
		for range 1 + rng.IntN(80) {
			input = append(input, personRec{string(rune('A' + rng.IntN(1+rng.IntN(6)))), []string{"a", "b", "c"}[rng.IntN(3)], fmt.Sprintf("p%d", rng.IntN(persons))})
		}
		spec := linkInputSpec(t, k)
		keep := refRounds(input, k)
		want := 0
		for _, x := range keep {
			if !x {
				want++
			}
		}
		required, err := expectLinked(t, spec, input, keep)
		if err != nil || required != want {
			t.Fatalf("trial %d (k %d, %d records): the rounds' release: %d required, %v; the maps %d", trial, k, len(input), required, err, want)
		}
		notLinked := spec
		notLinked.Linkable = false
		classesOnly := refRounds(input, 1) // every record kept
		for i, r := range input {
			ids := map[string]bool{}
			for _, x := range input {
				if x.q == r.q {
					ids[x.id] = true
				}
			}
			classesOnly[i] = len(ids) >= k
		}
		if _, err := expectLinked(t, notLinked, input, classesOnly); err != nil {
			t.Fatalf("trial %d: not linkable, the classes under k suppressed: %v", trial, err)
		}
		var v *Violation
		_, err = expectLinked(t, spec, input, classesOnly)
		switch same := slices.Equal(keep, classesOnly); {
		case same && err != nil:
			t.Fatalf("trial %d: the rounds suppress no person, the release of the classes: %v", trial, err)
		case !same && !errors.As(err, &v):
			t.Fatalf("trial %d: the rounds suppress persons, the release of the classes only: %v, want a violation", trial, err)
		case !same:
			differ++
		}
	}
	if differ < 50 {
		t.Errorf("the rounds suppressed persons in %d trials only: the trials test little", differ)
	}
}
