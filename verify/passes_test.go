package verify

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"sanitizer/diversity"
	"sanitizer/risk"
	"sanitizer/schema"
)

// passCase is a local recoding checked end to end: the placement of the input
// (ExpectedPasses), the truthfulness walk feeding a Counter that has it, the
// Counter's Finish, and the release's classes against the placement (CheckClasses).
type passCase struct {
	spec   Spec
	covers map[string]Cover
	input  [][]string // the input's records: the quasi-identifiers, then the sensitive columns
}

// placement decides the placement of c's input.
func (c passCase) placement(t *testing.T) *Placement {
	t.Helper()
	pl, err := ExpectedPasses(c.spec, &records{recs: c.input})
	if err != nil {
		t.Fatalf("ExpectedPasses: %v", err)
	}
	return pl
}

// check walks release against the input under pl, counts it and checks its
// classes: the walk's and Finish's first error, and CheckClasses's.
func (c passCase) check(t *testing.T, pl *Placement, release [][]string) (*Measured, error, error) {
	t.Helper()
	spec := c.spec
	spec.Placed = pl
	counter, err := NewCounter(spec, spec.Columns)
	if err != nil {
		t.Fatalf("NewCounter: %v", err)
	}
	tr := Truth{Columns: spec.Columns, Covers: c.covers, MaxSuppressed: spec.MaxSuppressed, Count: counter}
	n, err := Truthful(tr, spec.Columns, &records{recs: c.input}, &records{recs: release})
	var m *Measured
	if err == nil {
		m, err = counter.Finish()
		if err == nil && n != pl.Suppressed() {
			t.Fatalf("the walk left out %d records, the placement %d", n, pl.Suppressed())
		}
	}
	cl, cerr := ReleasedClasses(spec, &records{recs: release})
	if cerr == nil {
		cerr = pl.CheckClasses(cl)
	}
	return m, err, cerr
}

// passesOf is the pass of every input record under pl.
func passesOf(pl *Placement) []int {
	out := make([]int, pl.Records())
	for i := range out {
		out[i] = pl.Pass(i)
	}
	return out
}

// deptAgeCase is a release of (dept, age, dx) with k = 2: dept by the hierarchy file
// A,B→X, C,D→Y, then *; age by integer intervals of 10, then *; dx sensitive.
//
// The input, and where the passes (0,1), (1,1), (2,2) place it, by hand:
//
//	r1 A 21 a   pass 1: (A,[20,29]) holds r1, r3          ≥ 2
//	r2 B 23 b   pass 1: (B,[20,29]) alone; pass 2: (X,[20,29]) alone; pass 3: (*,*)
//	r3 A 25 b   pass 1
//	r4 C 31 a   pass 1: (C,[30,39]) holds r4, r6
//	r5 A 44 a   pass 1: (A,[40,49]) alone; pass 2: (X,[40,49]) holds r5, r7
//	r6 C 33 b   pass 1
//	r7 B 47 b   pass 1: (B,[40,49]) alone; pass 2 with r5
//	r8 D 55 c   pass 1, 2: (D,[50,59]), (Y,[50,59]) alone; pass 3: (*,*)
//	r9 D 36 a   pass 1, 2: (D,[30,39]), (Y,[30,39]) alone; pass 3: (*,*)
//
// With the first two passes, r2, r8 and r9 are suppressed; with all three, none:
// pass 3's (*,*) holds r2, r8, r9.
func deptAgeCase(t *testing.T, passes [][]int) passCase {
	t.Helper()
	dept, cover := fileDomain(t, "A;X;*\nB;X;*\nC;Y;*\nD;Y;*\n")
	return passCase{
		spec: Spec{
			K: 2, MaxSuppressed: 3, InputRows: 9,
			Columns: []string{"dept", "age", "dx"}, Quasi: []string{"dept", "age"},
			Sensitive: []Sensitive{{Column: "dx", Values: []string{"a", "b", "c"}, Reference: []int64{4, 4, 1}}},
			Utility: []Quasi{
				{Column: "dept", Domain: dept, Type: schema.String},
				{Column: "age", Domain: IntervalLevels(schema.Integer, []float64{10}), Type: schema.Integer},
			},
			Passes:     passes,
			FullDomain: true, // as the release sets it: ignored with passes
		},
		covers: map[string]Cover{"dept": cover, "age": CoverRange(schema.Integer)},
		input: [][]string{
			{"A", "21", "a"}, {"B", "23", "b"}, {"A", "25", "b"}, {"C", "31", "a"}, {"A", "44", "a"},
			{"C", "33", "b"}, {"B", "47", "b"}, {"D", "55", "c"}, {"D", "36", "a"},
		},
	}
}

// twoPassRelease is deptAgeCase's release under its first two passes, written by hand:
// r1, r3, r4, r6 at pass 1's node (0,1), r5 and r7 at pass 2's (1,1).
func twoPassRelease() [][]string {
	return [][]string{
		{"A", "[20,29]", "a"}, // r1
		{"A", "[20,29]", "b"}, // r3
		{"C", "[30,39]", "a"}, // r4
		{"X", "[40,49]", "a"}, // r5
		{"C", "[30,39]", "b"}, // r6
		{"X", "[40,49]", "b"}, // r7
	}
}

// edit is release with record i replaced by rec (nil: removed) and, with at ≥ 0,
// extra inserted before record at.
func edit(release [][]string, i int, rec []string, at int, extra []string) [][]string {
	out := slices.Clone(release)
	if i >= 0 {
		out[i] = rec
		if rec == nil {
			out = slices.Delete(out, i, i+1)
		}
	}
	if at >= 0 {
		out = slices.Insert(out, at, extra)
	}
	return out
}

var (
	node01 = []int{0, 1}
	node11 = []int{1, 1}
	node22 = []int{2, 2}
)

func TestExpectedPasses(t *testing.T) {
	two := deptAgeCase(t, [][]int{node01, node11}).placement(t)
	if got, want := passesOf(two), []int{1, 0, 1, 1, 2, 1, 2, 0, 0}; !slices.Equal(got, want) {
		t.Errorf("two passes place %v, want %v", got, want)
	}
	if two.Suppressed() != 3 || two.Released() != 6 || two.Placed(1) != 4 || two.Placed(2) != 2 || two.Classes() != 3 {
		t.Errorf("two passes: %d suppressed, %d released, %d and %d placed, %d classes; want 3, 6, 4 and 2, 3",
			two.Suppressed(), two.Released(), two.Placed(1), two.Placed(2), two.Classes())
	}
	three := deptAgeCase(t, [][]int{node01, node11, node22}).placement(t)
	if got, want := passesOf(three), []int{1, 3, 1, 1, 2, 1, 2, 3, 3}; !slices.Equal(got, want) {
		t.Errorf("three passes place %v, want %v", got, want)
	}
	if three.Suppressed() != 0 || three.Placed(3) != 3 || three.Classes() != 4 {
		t.Errorf("three passes: %d suppressed, pass 3 placed %d, %d classes; want 0, 3, 4", three.Suppressed(), three.Placed(3), three.Classes())
	}
	// l-diversity decides too: distinct 3-diversity fails every class of pass 1
	// (two values each) and pass 2's (X,[40,49]) (a, b); pass 3's (*,*) holds
	// every record (a, b, c)
	c := deptAgeCase(t, [][]int{node01, node11, node22})
	c.spec.Sensitive[0].Diversity = []diversity.Model{{Variant: diversity.Distinct, L: 3}}
	if got, want := passesOf(c.placement(t)), []int{3, 3, 3, 3, 3, 3, 3, 3, 3}; !slices.Equal(got, want) {
		t.Errorf("with distinct 3-diversity the passes place %v, want %v", got, want)
	}
}

func TestLocalRecodingRelease(t *testing.T) {
	l2 := []diversity.Model{{Variant: diversity.Distinct, L: 2}}
	for _, tc := range []struct {
		name    string
		passes  [][]int
		div     []diversity.Model
		release [][]string
		want    string // a part of the walk's (or Finish's) violation; "" for none
		classes string // a part of CheckClasses's violation; "" for none
	}{
		{"two passes", [][]int{node01, node11}, nil, twoPassRelease(), "", ""},
		{"two passes, distinct 2-diverse", [][]int{node01, node11}, l2, twoPassRelease(), "", ""},
		{"three passes", [][]int{node01, node11, node22}, nil, [][]string{
			{"A", "[20,29]", "a"}, {"*", "*", "b"}, {"A", "[20,29]", "b"}, {"C", "[30,39]", "a"}, {"X", "[40,49]", "a"},
			{"C", "[30,39]", "b"}, {"X", "[40,49]", "b"}, {"*", "*", "c"}, {"*", "*", "a"},
		}, "", ""},
		{"a record of pass 2 at pass 1's node", [][]int{node01, node11}, nil,
			edit(twoPassRelease(), 3, []string{"A", "[40,49]", "a"}, -1, nil),
			"release record 4 is input record 5 generalized at the node of pass 1, but pass 2 places it", "none of the 2 passes places"},
		{"a record at no pass's node", [][]int{node01, node11}, nil,
			edit(twoPassRelease(), 3, []string{"*", "[40,49]", "a"}, -1, nil),
			"release record 4 is not input record 5 generalized at the node of pass 2, which places it", "none of the 2 passes places"},
		{"a record of pass 2 left out, last", [][]int{node01, node11}, nil,
			edit(twoPassRelease(), 5, nil, -1, nil),
			"input record 7, which pass 2 places, is missing from the release", "1 of the 2 records of a class that pass 2 places are missing"},
		{"a record of pass 2 left out, before others", [][]int{node01, node11}, nil,
			edit(twoPassRelease(), 3, nil, -1, nil),
			"not the generalization of input record 5, which pass 2 places", "1 of the 2 records of a class that pass 2 places are missing"},
		{"a record every pass suppresses kept, last", [][]int{node01, node11}, nil,
			edit(twoPassRelease(), -1, nil, 6, []string{"Y", "[30,39]", "a"}),
			"release record 7: the input has no record left that the passes place", "none of the 2 passes places"},
		{"a record every pass suppresses kept, before others", [][]int{node01, node11}, nil,
			edit(twoPassRelease(), -1, nil, 1, []string{"X", "[20,29]", "b"}),
			"release record 2 is input record 3 generalized at the node of pass 2, but pass 1 places it", "none of the 2 passes places"},
		{"a record of pass 3 at pass 2's node", [][]int{node01, node11, node22}, nil, [][]string{
			{"A", "[20,29]", "a"}, {"*", "*", "b"}, {"A", "[20,29]", "b"}, {"C", "[30,39]", "a"}, {"X", "[40,49]", "a"},
			{"C", "[30,39]", "b"}, {"X", "[40,49]", "b"}, {"*", "*", "c"}, {"Y", "[30,39]", "a"},
		}, "release record 9 is input record 9 generalized at the node of pass 2, but pass 3 places it", "none of the 3 passes places"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := deptAgeCase(t, tc.passes)
			c.spec.Sensitive[0].Diversity = tc.div
			pl := c.placement(t)
			m, err, cerr := c.check(t, pl, tc.release)
			expectViolation(t, "walk", err, tc.want)
			expectViolation(t, "CheckClasses", cerr, tc.classes)
			if tc.want == "" && (m.Rows != pl.Released() || m.Suppressed != pl.Suppressed() || m.MinClass != 2) {
				t.Errorf("measured %d records, %d suppressed, smallest class %d; want %d, %d, 2", m.Rows, m.Suppressed, m.MinClass, pl.Released(), pl.Suppressed())
			}
			for _, s := range []string{"21", "23", "25", "31", "44", "33", "47", "55", "36"} {
				if err != nil && strings.Contains(err.Error(), s) || cerr != nil && strings.Contains(cerr.Error(), s) {
					t.Errorf("a message quotes an input value: %v / %v", err, cerr)
				}
			}
		})
	}
}

// expectViolation checks that err is a *Violation saying want, or nil when want is
// "".
func expectViolation(t *testing.T, what string, err error, want string) {
	t.Helper()
	var v *Violation
	switch {
	case want == "" && err != nil:
		t.Errorf("%s: a right release refused: %v", what, err)
	case want != "" && (!errors.As(err, &v) || !strings.Contains(err.Error(), want)):
		t.Errorf("%s: got %v, want a violation saying %q", what, err, want)
	}
}

// TestLocalRecodingUtility: the loss of deptAgeCase's two-pass release, measured by
// hand. dept has 4 leaves (X covers A, B: 1/3), age 9 (the input's values;
// [20,29] covers 21, 23, 25: 2/8; [30,39] 31, 33, 36: 2/8; [40,49] 44, 47: 1/8):
// r1, r3, r4, r6 cost 0 + 2/8 each, r5 and r7 1/3 + 1/8 each, the three suppressed
// records 1 + 1 each: 95/12 over 9 records and 2 columns.
func TestLocalRecodingUtility(t *testing.T) {
	c := deptAgeCase(t, [][]int{node01, node11})
	m, err, cerr := c.check(t, c.placement(t), twoPassRelease())
	if err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	if want := 95.0 / 12 / 18; !m.Utility || !near(m.Loss, want) {
		t.Errorf("loss %v (measured %v), want %v", m.Loss, m.Utility, want)
	}
}

// mergedCase is a release whose one class holds records of two passes, over a
// hierarchy file whose leaf X is also the label of A, B and X at level 1:
//
//	s1 X a   pass 1 (level 0): (X) holds s1, s2, values a, b
//	s2 X b   pass 1
//	s3 A a   pass 1: (A) alone; pass 2 (level 1): (X) holds s3, s4, values a, c
//	s4 B c   pass 1: (B) alone; pass 2
//	s5 C a   pass 1: (C) alone; pass 2: (Y) alone: suppressed
//
// The release's class X holds s1–s4: the union of pass 1's class and pass 2's, each
// of 2 records and distinct 2-diverse.
func mergedCase(t *testing.T) passCase {
	t.Helper()
	g, cover := fileDomain(t, "A;X;*\nB;X;*\nX;X;*\nC;Y;*\n")
	return passCase{
		spec: Spec{
			K: 2, MaxSuppressed: 1, InputRows: 5, Columns: []string{"g", "dx"}, Quasi: []string{"g"},
			Sensitive: []Sensitive{{Column: "dx", Values: []string{"a", "b", "c"}, Reference: []int64{3, 1, 1},
				Diversity: []diversity.Model{{Variant: diversity.Distinct, L: 2}}}},
			Utility:    []Quasi{{Column: "g", Domain: g, Type: schema.String}},
			Passes:     [][]int{{0}, {1}},
			FullDomain: true,
		},
		covers: map[string]Cover{"g": cover},
		input:  [][]string{{"X", "a"}, {"X", "b"}, {"A", "a"}, {"B", "c"}, {"C", "a"}},
	}
}

// TestLocalRecodingMergedClass: a class that two passes write alike is released as one
// class, accepted (every model the passes decide holds for a union of classes that
// meet it: k, distinct l here, each part having 2 records and 2 values; a class
// meeting k or l only together cannot arise, each part having met them alone), and
// each record's loss is measured at its own pass's node: s1, s2 at level 0 (0), s3,
// s4 at level 1 (X covers A, B, X: 2/3), s5 suppressed (1): 7/3 over 5 records. The
// lowest level naming X for the whole class would be level 1: 11/3 over 5.
func TestLocalRecodingMergedClass(t *testing.T) {
	c := mergedCase(t)
	pl := c.placement(t)
	if got, want := passesOf(pl), []int{1, 1, 2, 2, 0}; !slices.Equal(got, want) {
		t.Fatalf("the passes place %v, want %v", got, want)
	}
	release := [][]string{{"X", "a"}, {"X", "b"}, {"X", "a"}, {"X", "c"}}
	m, err, cerr := c.check(t, pl, release)
	if err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	if m.Classes != 1 || m.MinClass != 4 || m.Sensitive[0].MinDistinct != 3 {
		t.Errorf("%d classes, smallest %d, %d distinct values; want 1, 4, 3", m.Classes, m.MinClass, m.Sensitive[0].MinDistinct)
	}
	if want := 7.0 / 3 / 5; !near(m.Loss, want) {
		t.Errorf("loss %v, want %v", m.Loss, want)
	}
	// s3 released as itself (pass 1's node), which pass 2 places
	_, err, _ = c.check(t, pl, [][]string{{"X", "a"}, {"X", "b"}, {"A", "a"}, {"X", "c"}})
	expectViolation(t, "walk", err, "release record 3 is input record 3 generalized at the node of pass 1, but pass 2 places it")
	// an empty input field read as the column's null, X: labeled as X
	x := "X"
	c.spec.Utility = []Quasi{{Column: "g", Domain: c.spec.Utility[0].Domain, Type: schema.String, Null: &x}}
	c.covers = map[string]Cover{"g": NullAs(c.covers["g"], x)}
	c.input[0][0] = ""
	pl = c.placement(t)
	if got, want := passesOf(pl), []int{1, 1, 2, 2, 0}; !slices.Equal(got, want) {
		t.Fatalf("with a null, the passes place %v, want %v", got, want)
	}
	if _, err, cerr := c.check(t, pl, release); err != nil || cerr != nil {
		t.Errorf("with a null: %v, %v", err, cerr)
	}
}

// TestLocalRecodingProfitability: the prosecutor's profitability decides the passes
// and the released class (B = 1, L = 1.5, G = 1.5, C = 1: the adversary attacks a
// class of 1 record only). Pass 1 (level 0, IL 0): (X) of 2 records pays 1, the
// others of 1 record pay 1 − 1.5 < 0. Pass 2 (level 1): (X) over A, B, X pays
// 1 − ln 3/ln 4 > 0, (Y) of 1 record (IL 0) 1 − 1.5. The released class X (4
// records) is measured at its most general part's loss: 1 − ln 3/ln 4.
func TestLocalRecodingProfitability(t *testing.T) {
	c := mergedCase(t)
	c.spec.K, c.spec.Sensitive[0].Diversity = 1, nil
	c.spec.Profitability = &Profitability{Game: risk.CostBenefit{Benefit: 1, Loss: 1.5, Gain: 1.5, Cost: 1}.Game()}
	pl := c.placement(t)
	if got, want := passesOf(pl), []int{1, 1, 2, 2, 0}; !slices.Equal(got, want) {
		t.Fatalf("the passes place %v, want %v", got, want)
	}
	m, err, cerr := c.check(t, pl, [][]string{{"X", "a"}, {"X", "b"}, {"X", "a"}, {"X", "c"}})
	if err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	if want := 1 - math.Log(3)/math.Log(4); !m.Payout || !near(m.LeastPayout, want) {
		t.Errorf("least payout %v (%v), want %v", m.LeastPayout, m.Payout, want)
	}
}

// TestLocalRecodingRiskEnforced: with an enforced average risk, a pass may withhold
// a class that meets the models, which the next pass then places, only when it
// places no smaller class; the release's average risk is measured over all its
// classes. deptAgeCase's passes (0,1), (1,1), (2,2): pass 1 withholds (C,[30,39])
// (2 records, as small as (A,[20,29]) which it places); pass 2 places (Y,[30,39])
// (r4, r6, r9) and (X,[40,49]) (r5, r7); pass 3 (*,*) r2 and r8: 4 classes of 9
// records, an average risk of 4/9.
func TestLocalRecodingRiskEnforced(t *testing.T) {
	valid := [][]string{
		{"A", "[20,29]", "a"}, {"*", "*", "b"}, {"A", "[20,29]", "b"}, {"Y", "[30,39]", "a"}, {"X", "[40,49]", "a"},
		{"Y", "[30,39]", "b"}, {"X", "[40,49]", "b"}, {"*", "*", "c"}, {"Y", "[30,39]", "a"},
	}
	// pass 2 withholds (Y,[30,39]) (3 records) while it places (X,[40,49]) (2)
	larger := [][]string{
		{"A", "[20,29]", "a"}, {"*", "*", "b"}, {"A", "[20,29]", "b"}, {"*", "*", "a"}, {"X", "[40,49]", "a"},
		{"*", "*", "b"}, {"X", "[40,49]", "b"}, {"*", "*", "c"}, {"*", "*", "a"},
	}
	setup := func(t *testing.T, avg float64, release [][]string) passCase {
		t.Helper()
		c := deptAgeCase(t, [][]int{node01, node11, node22})
		c.spec.MaxSuppressed = 0
		c.spec.Risk = Risk{AverageRisk: avg, Enforced: true}
		kept, err := ReleasedClasses(c.spec, &records{recs: release})
		if err != nil {
			t.Fatal(err)
		}
		c.spec.Kept = kept
		return c
	}
	c := setup(t, 0.5, valid)
	pl := c.placement(t)
	if got, want := passesOf(pl), []int{1, 3, 1, 2, 2, 2, 2, 3, 2}; !slices.Equal(got, want) {
		t.Fatalf("the passes place %v, want %v", got, want)
	}
	if _, err, cerr := c.check(t, pl, valid); err != nil || cerr != nil {
		t.Fatalf("a valid release refused: %v, %v", err, cerr)
	}
	// the same release misses an average risk of 0.4 (4/9 > 0.4)
	c = setup(t, 0.4, valid)
	var v *Violation
	if _, err, _ := c.check(t, c.placement(t), valid); !errors.As(err, &v) || !strings.Contains(err.Error(), "average re-identification risk") {
		t.Errorf("an average risk of 4/9 under 0.4: got %v, want a violation", err)
	}
	c = setup(t, 0.5, larger)
	if _, err := ExpectedPasses(c.spec, &records{recs: c.input}); !errors.As(err, &v) || !strings.Contains(err.Error(), "pass 2 leaves out a class of 3 records") {
		t.Errorf("a pass withholding a larger class than it places: got %v, want a violation naming pass 2", err)
	}
	// measured, not enforced: every class that meets the models is placed
	c = setup(t, 0.5, larger)
	c.spec.Risk.Enforced = false
	if got, want := passesOf(c.placement(t)), []int{1, 3, 1, 1, 2, 1, 2, 3, 3}; !slices.Equal(got, want) {
		t.Errorf("measured: the passes place %v, want %v", got, want)
	}
}

// TestLocalRecodingRefused: the models a local recoding does not take part in, and
// misuses of the placement, are errors (not violations) of ExpectedPasses and
// NewCounter.
func TestLocalRecodingRefused(t *testing.T) {
	base := deptAgeCase(t, [][]int{node01, node11})
	pl := base.placement(t)
	for _, tc := range []struct {
		name  string
		edit  func(*Spec)
		want  string
		place bool // ExpectedPasses refuses it too
	}{
		{"a privacy unit", func(s *Spec) { s.Unit = "pid" }, "privacy unit", true},
		{"a research subset", func(s *Spec) { s.Population = &PopulationCheck{} }, "research subset", true},
		{"enforced average risk without the release's classes", func(s *Spec) { s.Risk.AverageRisk, s.Risk.Enforced = 0.2, true }, "Spec.Kept", true},
		{"enforced population uniqueness without the release's classes", func(s *Spec) {
			s.Risk.Uniqueness, s.Risk.Enforced = &Uniqueness{Max: 0.1, Population: 100}, true
		}, "Spec.Kept", true},
		{"the journalist's profitability", func(s *Spec) { s.Profitability = &Profitability{Journalist: true} }, "journalist", true},
		{"Mondrian's ranges", func(s *Spec) { s.Utility = slices.Clone(s.Utility); s.Utility[1].Ranges = true }, "Mondrian", true},
		{"a node of the wrong width", func(s *Spec) { s.Passes = [][]int{{0}} }, "1 levels for 2", true},
		{"a level outside the hierarchy", func(s *Spec) { s.Passes = [][]int{{0, 3}} }, "level 3", true},
		{"no hierarchies", func(s *Spec) { s.Utility = nil }, "hierarchies", true},
		{"a placement of other passes", func(s *Spec) { s.Passes = [][]int{node01, node22} }, "other passes", false},
		{"passes without their placement", func(s *Spec) { s.Placed = nil }, "Spec.Placed", false},
		{"a placement without passes", func(s *Spec) { s.Passes = nil }, "without the passes", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := base.spec
			spec.Placed = pl
			tc.edit(&spec)
			_, err := NewCounter(spec, spec.Columns)
			var v *Violation
			if err == nil || errors.As(err, &v) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewCounter: got %v, want an error saying %q", err, tc.want)
			}
			if !tc.place {
				return
			}
			_, err = ExpectedPasses(spec, &records{recs: base.input})
			if err == nil || errors.As(err, &v) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ExpectedPasses: got %v, want an error saying %q", err, tc.want)
			}
		})
	}
	// a local recoding's Counter counts only what the truthfulness walk matched
	spec := base.spec
	spec.Placed = pl
	c, err := NewCounter(spec, spec.Columns)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Add(twoPassRelease()[0]); err == nil || !strings.Contains(err.Error(), "truthfulness walk") {
		t.Errorf("Add: got %v, want an error naming the walk", err)
	}
	if _, err := c.Finish(); err == nil || !strings.Contains(err.Error(), "truthfulness walk") {
		t.Errorf("Finish without a walk: got %v, want an error naming the walk", err)
	}
	// an input other than the one placed
	_, err = Truthful(Truth{Columns: spec.Columns, Covers: base.covers, MaxSuppressed: 3, Count: mustCounter(t, spec)},
		spec.Columns, &records{recs: base.input[:8]}, &records{recs: twoPassRelease()})
	if err == nil || !strings.Contains(err.Error(), "the passes placed 9") {
		t.Errorf("a shorter input: got %v", err)
	}
}

func mustCounter(t *testing.T, spec Spec) *Counter {
	t.Helper()
	c, err := NewCounter(spec, spec.Columns)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fileDomain is the domain and the cover of a hierarchy file of the given rows, written
// by the test.
func fileDomain(t *testing.T, rows string) (*Domain, Cover) {
	t.Helper()
	path := writeHierarchy(t, rows)
	d, err := HierarchyDomain(path)
	if err != nil {
		t.Fatal(err)
	}
	cover, err := CoverHierarchyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return d, cover
}
