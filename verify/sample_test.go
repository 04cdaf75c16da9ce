package verify

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckSample: a SafePub release is its sample's function, nothing else: every
// record not drawn left out, every drawn class of k or more released whole, every
// smaller one left out; without the sample, every class of k or more and one of the
// input's at the node. The violations name no value.
func TestCheckSample(t *testing.T) {
	spec := Spec{Columns: []string{"q", "x"}, Quasi: []string{"q"}}
	key := func(v string) string { return string(appendKey(nil, v)) }
	release := func(vals ...string) *Classes {
		var recs [][]string
		for _, v := range vals {
			recs = append(recs, []string{v, "secret-" + v})
		}
		c, err := ReleasedClasses(spec, &records{recs: recs})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	drawn := []bool{true, true, true, false, true}
	for _, c := range []struct {
		name    string
		s       Sample
		rel     *Classes
		problem string // "" when the release passes
	}{
		{"exact", Sample{K: 2, Drawn: drawn, LeftOut: []bool{false, false, true, true, true}, Counts: map[string]int64{key("a"): 2, key("b"): 1}}, release("a", "a"), ""},
		{"undrawn released", Sample{K: 2, Drawn: drawn, LeftOut: []bool{false, false, true, false, true}, Counts: map[string]int64{key("a"): 2, key("b"): 1}}, release("a", "a"), "input record 4 is released but was not drawn"},
		{"class in part", Sample{K: 2, Drawn: drawn, LeftOut: []bool{false, false, true, true, false}, Counts: map[string]int64{key("a"): 3}}, release("a", "a"), "holds 2 records of the 3"},
		{"class of k left out", Sample{K: 2, Drawn: drawn, LeftOut: []bool{false, false, true, true, true}, Counts: map[string]int64{key("a"): 2, key("b"): 2}}, release("a", "a"), "1 classes of the sample of k=2 records or more are left out"},
		{"class not drawn", Sample{K: 1, Drawn: drawn, LeftOut: []bool{false, false, true, true, true}, Counts: map[string]int64{key("a"): 2}}, release("a", "a", "c"), "holds 1 records of the 0"},
		{"accounts differ", Sample{K: 2, Drawn: drawn, LeftOut: []bool{false}, Counts: map[string]int64{}}, release(), "holds 5 records, of the records left out 1"},
		{"check: fine", Sample{K: 2, Input: map[string]int64{key("a"): 3}}, release("a", "a"), ""},
		{"check: below k", Sample{K: 3, Input: map[string]int64{key("a"): 3}}, release("a", "a"), "below the k 3"},
		{"check: larger than the input's", Sample{K: 2, Input: map[string]int64{key("a"): 1}}, release("a", "a"), "not one of the input's classes"},
		{"check: not the input's", Sample{K: 1, Input: map[string]int64{key("a"): 1}}, release("z"), "not one of the input's classes"},
	} {
		err := CheckSample(c.s, c.rel)
		var v *Violation
		switch {
		case c.problem == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.problem != "" && (!errors.As(err, &v) || !strings.Contains(err.Error(), c.problem)):
			t.Errorf("%s: %v, want a violation saying %q", c.name, err, c.problem)
		case err != nil && strings.Contains(err.Error(), "secret"):
			t.Errorf("%s: the violation quotes a value: %v", c.name, err)
		}
	}
}
