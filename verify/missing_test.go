package verify

import (
	"errors"
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
			spec := missingSpec(t, tc.div...)
			rel, err := ReleasedClasses(spec, &records{recs: tc.release})
			if err != nil {
				t.Fatal(err)
			}
			required, err := ExpectedSuppression(spec, []int{1, 1}, rel, &records{recs: missingInput})
			var v *Violation
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("a right release: %v", err)
			case tc.want == "" && required != tc.required:
				t.Fatalf("%d records required suppressed, want %d", required, tc.required)
			case tc.want != "" && (!errors.As(err, &v) || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want a violation saying %q", err, tc.want)
			}
		})
	}
}

func TestInferLevels(t *testing.T) {
	spec := missingSpec(t)
	quasiOnly := func() Reader {
		var recs [][]string
		for _, r := range missingInput {
			recs = append(recs, r[:2])
		}
		return &records{recs: recs}
	}
	// a hierarchy whose level 1 writes a leaf's own value for a: a release holding only
	// a fits levels 0 and 1, which generalize b differently
	odd, err := HierarchyDomain(writeHierarchy(t, "A;A;*\nB;A;*\nC;Y;*\nD;Y;*\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		dept    Quasi // zero: spec's
		release [][]string
		want    []int
		err     string // "ambiguous", or a part of the violation
	}{
		{"the release's levels", Quasi{}, releaseOf(0, 1, 2, 3, 4, 5), []int{1, 1}, ""},
		{"originals and top", Quasi{}, [][]string{{"A", "*", "a"}, {"C", "*", "b"}}, []int{0, 2}, ""},
		{"a value of no level", Quasi{}, [][]string{{"Q", "[20,29]", "a"}}, nil, "not those of one level"},
		{"levels that fit alike but generalize differently", Quasi{Column: "dept", Domain: odd}, [][]string{{"A", "[20,29]", "a"}}, nil, "ambiguous"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := spec
			if tc.dept.Domain != nil {
				s.Utility = []Quasi{tc.dept, spec.Utility[1]}
			}
			rel, err := ReleasedClasses(s, &records{recs: tc.release})
			if err != nil {
				t.Fatal(err)
			}
			got, err := InferLevels(s, rel, quasiOnly())
			var v *Violation
			switch {
			case tc.err == "" && (err != nil || len(got) != len(tc.want) || got[0] != tc.want[0] || got[1] != tc.want[1]):
				t.Fatalf("levels %v (%v), want %v", got, err, tc.want)
			case tc.err == "ambiguous" && !errors.Is(err, ErrAmbiguousLevels):
				t.Fatalf("got %v %v, want ErrAmbiguousLevels", got, err)
			case tc.err != "" && tc.err != "ambiguous" && (!errors.As(err, &v) || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("got %v %v, want a violation saying %q", got, err, tc.err)
			}
		})
	}
}
