package verify

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"sanitizer/diversity"
	"sanitizer/schema"
)

// missingSpec is a release of (dept, age, dx) with k = 2: dept by the hierarchy file
// A,B→X, C,D→Y; age by integer intervals of 10; dx sensitive (values a, b, c).
func missingSpec(t *testing.T, div ...diversity.Model) Spec {
	t.Helper()
	dept, err := HierarchyDomain(writeHierarchy(t, "A;X;*\nB;X;*\nC;Y;*\nD;Y;*\n"))
	if err != nil {
		t.Fatal(err)
	}
	return Spec{
		K: 2, MaxSuppressed: 7, InputRows: 7,
		Columns: []string{"dept", "age", "dx"}, Quasi: []string{"dept", "age"},
		Sensitive: []Sensitive{{Column: "dx", Values: []string{"a", "b", "c"}, Reference: []int64{4, 2, 1}, Diversity: div}},
		Utility: []Quasi{
			{Column: "dept", Domain: dept, Type: schema.String},
			{Column: "age", Domain: IntervalLevels(schema.Integer, []float64{10}), Type: schema.Integer},
		},
	}
}

// The input: at levels (1, 1) the classes (X,[20,29]) of records 1–3, (Y,[30,39]) of
// 4–6, and (X,[40,49]) of record 7 alone, which fails k = 2.
var missingInput = [][]string{
	{"A", "21", "a"}, {"B", "22", "b"}, {"A", "25", "a"},
	{"C", "31", "a"}, {"C", "33", "b"}, {"D", "37", "c"},
	{"A", "45", "a"},
}

// releaseOf is the input records at the given indexes, released at levels (1, 1).
func releaseOf(idx ...int) [][]string {
	var out [][]string
	for _, i := range idx {
		r := missingInput[i]
		dept := map[string]string{"A": "X", "B": "X", "C": "Y", "D": "Y"}[r[0]]
		age := "[" + r[1][:1] + "0," + r[1][:1] + "9]"
		out = append(out, []string{dept, age, r[2]})
	}
	return out
}

func TestExpectedSuppression(t *testing.T) {
	l3 := diversity.Model{Variant: diversity.Distinct, L: 3}
	for _, tc := range []struct {
		name     string
		div      []diversity.Model
		release  [][]string
		required int    // when the release is right
		want     string // a part of the violation; "" for none
	}{
		{"exactly the failing class suppressed", nil, releaseOf(0, 1, 2, 3, 4, 5), 1, ""},
		{"one record of a class that meets k missing", nil, releaseOf(0, 1, 3, 4, 5), 0, "1 of the 3 input records of a class that meets the models are missing"},
		{"a whole class that meets k missing", nil, releaseOf(0, 1, 2), 0, "3 of the 3 input records"},
		{"the class failing k published", nil, releaseOf(0, 1, 2, 3, 4, 5, 6), 0, "publishes 1 records of a class that has 1 records, k is 2"},
		{"a class holding more records than the input's", nil, releaseOf(0, 1, 2, 2, 3, 4, 5), 0, "holds 4 records of a class that has 3"},
		{"a class no input record makes", nil, append(releaseOf(0, 1, 2, 3, 4, 5), []string{"Y", "[20,29]", "a"}, []string{"Y", "[20,29]", "b"}), 0, "no input record"},
		{"the class failing l suppressed too", []diversity.Model{l3}, releaseOf(3, 4, 5), 4, ""},
		{"the class failing l published", []diversity.Model{l3}, releaseOf(0, 1, 2, 3, 4, 5), 0, "fails distinct l-diversity (l=3)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			expectSuppression(t, missingSpec(t, tc.div...), tc.release, missingInput, tc.required, tc.want)
		})
	}
}

// expectSuppression checks release against input at levels (1, 1) under spec: with
// want "", no violation and required records required suppressed; else a violation
// saying want.
func expectSuppression(t *testing.T, spec Spec, release, input [][]string, required int, want string) {
	t.Helper()
	rel, err := ReleasedClasses(spec, &records{recs: release})
	if err != nil {
		t.Fatal(err)
	}
	got, err := ExpectedSuppression(spec, []int{1, 1}, rel, &records{recs: input})
	var v *Violation
	switch {
	case want == "" && err != nil:
		t.Fatalf("a right release: %v", err)
	case want == "" && got != required:
		t.Fatalf("%d records required suppressed, want %d", got, required)
	case want != "" && (!errors.As(err, &v) || !strings.Contains(err.Error(), want)):
		t.Fatalf("got %v, want a violation saying %q", err, want)
	}
}

func TestInferNode(t *testing.T) {
	// a hierarchy whose level 1 writes "a" for a and b: the values "a" fit levels 0 and
	// 1, which the records left out tell apart
	odd, err := HierarchyDomain(writeHierarchy(t, "a;a;*\nb;a;*\n"))
	if err != nil {
		t.Fatal(err)
	}
	oddInput := [][]string{{"a", "21", "a"}, {"a", "22", "b"}, {"a", "23", "a"}, {"b", "24", "c"}}
	for _, tc := range []struct {
		name     string
		odd      bool // g (the odd hierarchy) and age over oddInput, not missingSpec's
		release  [][]string
		want     []int
		required int
		err      string // "ambiguous", or a part of the violation
	}{
		{"the release's levels", false, releaseOf(0, 1, 2, 3, 4, 5), []int{1, 1}, 1, ""},
		{"originals and top", false, [][]string{{"A", "*", "a"}, {"A", "*", "a"}, {"A", "*", "a"}, {"C", "*", "a"}, {"C", "*", "b"}}, []int{0, 2}, 2, ""},
		{"a value of no level", false, [][]string{{"Q", "[20,29]", "a"}}, nil, 0, "not those of one level"},
		{"one node fits: a class missing", false, releaseOf(0, 1, 2), nil, 0, "3 of the 3 input records"},
		{"levels that fit alike, told apart by the records left out", true, [][]string{{"a", "[20,29]", "a"}, {"a", "[20,29]", "b"}, {"a", "[20,29]", "a"}}, []int{0, 1}, 1, ""},
		{"no node explains the release", true, [][]string{{"a", "[20,29]", "a"}, {"a", "[20,29]", "b"}}, nil, 0, "none of the 2 nodes"},
		{"several nodes explain the release", false, nil, nil, 0, "ambiguous"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec, input := missingSpec(t), missingInput
			if tc.odd {
				spec.InputRows, input = len(oddInput), oddInput
				spec.Utility = []Quasi{{Column: "dept", Domain: odd, Type: schema.String}, spec.Utility[1]}
			}
			rel, err := ReleasedClasses(spec, &records{recs: tc.release})
			if err != nil {
				t.Fatal(err)
			}
			open := func() (Reader, func(), error) { return &records{recs: input}, func() {}, nil }
			got, required, err := InferNode(spec, rel, open)
			var v *Violation
			switch {
			case tc.err == "" && (err != nil || !slices.Equal(got, tc.want) || required != tc.required):
				t.Fatalf("node %v, %d required (%v), want %v, %d", got, required, err, tc.want, tc.required)
			case tc.err == "ambiguous" && !errors.Is(err, ErrAmbiguousLevels):
				t.Fatalf("got %v %v, want ErrAmbiguousLevels", got, err)
			case tc.err != "" && tc.err != "ambiguous" && (!errors.As(err, &v) || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("got %v %v, want a violation saying %q", got, err, tc.err)
			}
		})
	}
}

// TestExpectedSuppressionRiskEnforced: with the risk models enforced by suppression, a
// whole class that meets k may be left out, if no class released is smaller; a larger
// one left out while a smaller is released, or part of a class, is a violation; with
// the models measured (or none given), no class that meets k may be left out.
func TestExpectedSuppressionRiskEnforced(t *testing.T) {
	// (X,[20,29]) now 4 records, (Y,[30,39]) 3, (X,[40,49]) 1 (fails k = 2).
	input := append(slices.Clone(missingInput), []string{"A", "26", "b"})
	x20 := append(releaseOf(0, 1, 2), []string{"X", "[20,29]", "b"})
	y30 := releaseOf(3, 4, 5)
	enforced := Risk{AverageRisk: 0.9, Enforced: true}
	for _, tc := range []struct {
		name     string
		risk     Risk
		release  [][]string
		required int
		want     string
	}{
		{"the smaller class left out", enforced, x20, 4, ""},
		{"the larger class left out", enforced, y30, 0, "leaves out a class of 4 records that meets the models while it releases one of 3"},
		{"both left out", enforced, nil, 8, ""},
		{"part of a class left out", enforced, append(slices.Clone(y30), x20[:2]...), 0, "2 of the 4 input records"},
		{"measured: no class that meets k left out", Risk{AverageRisk: 0.9}, x20, 0, "3 of the 3 input records"},
		{"no risk model: none left out", Risk{Enforced: true}, x20, 0, "3 of the 3 input records"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := missingSpec(t)
			spec.InputRows, spec.MaxSuppressed, spec.Risk = 8, 8, tc.risk
			expectSuppression(t, spec, tc.release, input, tc.required, tc.want)
		})
	}
}

// TestFitsLevels: every value a release holds must be what the levels write for some
// input value; a release's classes are counted from its records, their values from
// the classes.
func TestFitsLevels(t *testing.T) {
	for _, tc := range []struct {
		name    string
		release [][]string
		want    string // a part of the violation; "" for none
	}{
		{"the release's values", releaseOf(0, 1, 2, 3, 4, 5), ""},
		{"a value of no input record's at the level", append(releaseOf(0, 1), []string{"X", "[90,99]", "a"}), `column "age": a released value that level 1`},
		{"a value of another level", append(releaseOf(3, 4), []string{"A", "[20,29]", "a"}), `column "dept": a released value that level 1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := missingSpec(t)
			rel, err := ReleasedClasses(spec, &records{recs: tc.release})
			if err != nil {
				t.Fatal(err)
			}
			for j, q := range spec.Quasi {
				want := map[string]bool{}
				for _, r := range tc.release {
					want[r[j]] = true
				}
				if !maps.Equal(rel.values[j], want) {
					t.Fatalf("column %q: released values %v, want %v", q, rel.values[j], want)
				}
			}
			err = FitsLevels(spec, []int{1, 1}, rel, &records{recs: missingInput})
			var v *Violation
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("a right release: %v", err)
			case tc.want != "" && (!errors.As(err, &v) || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want a violation saying %q", err, tc.want)
			}
		})
	}
}
