package verify

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sanitizer/schema"
)

// utilityCase is a release fed to a Counter that measures utility: every release
// record with the input record it generalizes (orig), and the input records left out.
type utilityCase struct {
	spec       Spec
	released   [][2][]string // {release record, original quasi-identifier values}
	suppressed [][]string
}

func (uc utilityCase) measure(t *testing.T) (*Measured, error) {
	t.Helper()
	c, err := NewCounter(uc.spec, uc.spec.Columns)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range uc.released {
		if err := c.AddMatched(r[0], r[1]); err != nil {
			return nil, err
		}
	}
	for _, o := range uc.suppressed {
		if err := c.AddSuppressed(o); err != nil {
			return nil, err
		}
	}
	return c.Finish()
}

func writeHierarchy(t *testing.T, rows string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "h.csv")
	if err := os.WriteFile(path, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*max(1, math.Abs(b)) }

// TestUtilityByHand measures a five-record release whose metrics are derived by hand.
//
// Input (dept, age): r1 (A, 20), r2 (B, 25), r3 (C, 30), r4 (C, 40), r5 (A, 40).
// dept has the hierarchy file A→X, B→X, C→Y, D→Y, then * (4 leaves; D is not in the
// input); age is an integer released as Mondrian ranges, its leaves the input's values
// 20, 25, 30, 40 (4 leaves; the values present span 40 − 20 = 20).
// Release, k = 2: r1, r2 as (X, [20,25]); r3, r4 as (C, [30,40]); r5 suppressed.
// Input frequencies: dept A 2, B 1, C 2, D 0; age 20 1, 25 1, 30 1, 40 2.
//
// Loss, per record and column (covered − 1)/(4 − 1), a suppressed record 1:
// dept: X covers {A,B}: 1/3 for r1 and r2; C covers itself: 0; r5: 1 → 5/3.
// age: [20,25] covers {20,25}: 1/3 twice; [30,40] covers {30,40}: 1/3 twice; r5: 1 → 7/3.
// Loss = (5/3 + 7/3) / (5 records × 2 columns) = 0.4.
//
// NCP: dept is categorical: X covers 2 of 4 leaves: 1/2 twice; C one leaf: 0; r5: 1 → 2.
// age is numeric: [20,25] 5/20 twice; [30,40] 10/20 twice; r5: 1 → 2.5.
// NCP = (2 + 2.5) / 10 = 0.45.
//
// Non-uniform entropy, Σ −log2(f(leaf) / f(covered)):
// dept: r1 −log2(2/3), r2 −log2(1/3); r3, r4 0 (C alone); r5 covers all: −log2(2/5).
// age: r1, r2 −log2(1/2) each; r3 −log2(1/3), r4 −log2(2/3); r5 −log2(2/5).
// Sum = 2 + 2·log2 3 + 2·log2(3/2) + 2·log2(5/2) = 4·log2 3 + 2·log2 5 − 2 ≈ 8.98370.
//
// Discernibility 2² + 2² + 1 × 5 = 13; C_AVG (4 records / 2 classes) / 2 = 1.
func TestUtilityByHand(t *testing.T) {
	dept, err := HierarchyDomain(writeHierarchy(t, "A;X;*\nB;X;*\nC;Y;*\nD;Y;*\n"))
	if err != nil {
		t.Fatal(err)
	}
	cols := []string{"dept", "age", "note"}
	uc := utilityCase{
		spec: Spec{K: 2, MaxSuppressed: 1, InputRows: 5, Columns: cols, Quasi: []string{"dept", "age"},
			Utility: []Quasi{
				{Column: "dept", Domain: dept, Type: schema.String},
				{Column: "age", Domain: IntervalDomain(), Type: schema.Integer, Ranges: true},
			}},
		released: [][2][]string{
			{{"X", "[20,25]", "a"}, {"A", "20"}},
			{{"X", "[20,25]", "b"}, {"B", "25"}},
			{{"C", "[30,40]", "c"}, {"C", "30"}},
			{{"C", "[30,40]", "d"}, {"C", "40"}},
		},
		suppressed: [][]string{{"A", "40"}},
	}
	m, err := uc.measure(t)
	if err != nil {
		t.Fatal(err)
	}
	wantEntropy := 4*math.Log2(3) + 2*math.Log2(5) - 2
	if !m.Utility || !near(m.Loss, 0.4) || !near(m.NCP, 0.45) || !near(m.NonUniformEntropy, wantEntropy) ||
		m.Discernibility != 13 || m.CAvg != 1 {
		t.Errorf("measured loss %v, NCP %v, entropy %v, discernibility %v, C_AVG %v (measured: %v); want 0.4, 0.45, %v, 13, 1",
			m.Loss, m.NCP, m.NonUniformEntropy, m.Discernibility, m.CAvg, m.Utility, wantEntropy)
	}

	// Nothing generalized, nothing suppressed: every metric 0 (entropy exactly, not a
	// rounding residue).
	same := uc
	same.spec.MaxSuppressed = 0
	same.spec.K = 1
	same.released = [][2][]string{
		{{"A", "[20,20]", "a"}, {"A", "20"}},
		{{"B", "[25,25]", "b"}, {"B", "25"}},
		{{"C", "[30,30]", "c"}, {"C", "30"}},
		{{"C", "[40,40]", "d"}, {"C", "40"}},
		{{"A", "[40,40]", "e"}, {"A", "40"}},
	}
	same.suppressed = nil
	if m, err := same.measure(t); err != nil || m.Loss != 0 || m.NCP != 0 || m.NonUniformEntropy != 0 {
		t.Errorf("identity release: %+v, %v; want 0, 0, 0", m, err)
	}

	// Everything suppressed: loss and NCP 1, entropy Σ −log2(f/5).
	none := uc
	none.spec.MaxSuppressed = 5
	none.released = nil
	none.suppressed = [][]string{{"A", "20"}, {"B", "25"}, {"C", "30"}, {"C", "40"}, {"A", "40"}}
	// dept: 2·log2(5/2) + log2 5 + 2·log2(5/2); age: 3·log2 5 + 2·log2(5/2)
	want := 6*math.Log2(2.5) + 4*math.Log2(5)
	if m, err := none.measure(t); err != nil || m.Loss != 1 || m.NCP != 1 || !near(m.NonUniformEntropy, want) {
		t.Errorf("empty release: %+v, %v; want 1, 1, %v", m, err, want)
	}
}

// TestUtilityLevels: a hierarchy value that two levels write alike stands for the node
// at the lowest level consistent with the records: of its class (Mondrian), or of the
// whole column (a full-domain release). The file's "Other" is a leaf and, one level up,
// the node {Other, Unknown}.
func TestUtilityLevels(t *testing.T) {
	dx, err := HierarchyDomain(writeHierarchy(t, "Other;Other;*\nUnknown;Other;*\nFlu;Resp;*\nCold;Resp;*\n"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := HierarchyDomain(writeHierarchy(t, "x;*\ny;*\n"))
	if err != nil {
		t.Fatal(err)
	}
	uc := utilityCase{
		spec: Spec{K: 2, InputRows: 4, Columns: []string{"dx", "g"}, Quasi: []string{"dx", "g"},
			Utility: []Quasi{{Column: "dx", Domain: dx}, {Column: "g", Domain: g}}},
		released: [][2][]string{
			{{"Other", "x"}, {"Other", "x"}},
			{{"Other", "x"}, {"Other", "x"}},
			{{"Other", "y"}, {"Unknown", "y"}},
			{{"Other", "y"}, {"Unknown", "y"}},
		},
	}
	// Per class: (Other, x) is the leaf Other (loss 0), (Other, y) the node: 1/3 for
	// two records → (2/3) / (4 × 2).
	m, err := uc.measure(t)
	if err != nil || !near(m.Loss, 1.0/12) {
		t.Errorf("per class: loss %v, %v; want 1/12", m.Loss, err)
	}
	// Full domain: one level for the column, the node for every record: 4/3 / 8.
	uc.spec.FullDomain = true
	m, err = uc.measure(t)
	if err != nil || !near(m.Loss, 1.0/6) {
		t.Errorf("full domain: loss %v, %v; want 1/6", m.Loss, err)
	}

	// The mask builder writes "*" for a one-character value at every level: a class
	// of one-character values released as "*" is the level-1 node (the two of them),
	// not the top (all four values).
	mask, err := MaskDomain(true, 2)
	if err != nil {
		t.Fatal(err)
	}
	mc := utilityCase{
		spec: Spec{K: 2, InputRows: 4, Columns: []string{"zip"}, Quasi: []string{"zip"},
			Utility: []Quasi{{Column: "zip", Domain: mask}}},
		released: [][2][]string{
			{{"*"}, {"1"}}, {{"*"}, {"2"}}, {{"3*"}, {"33"}}, {{"3*"}, {"34"}},
		},
	}
	for _, full := range []bool{false, true} {
		mc.spec.FullDomain = full
		// every record covers 2 of 4 leaves: loss 1/3, NCP 1/2
		if m, err := mc.measure(t); err != nil || !near(m.Loss, 1.0/3) || !near(m.NCP, 0.5) {
			t.Errorf("mask, full domain %v: loss %v, NCP %v, %v; want 1/3, 1/2", full, m.Loss, m.NCP, err)
		}
	}
	// The top covers all: "22" and "1" share no level below it.
	mc.released = [][2][]string{{{"*"}, {"1"}}, {{"*"}, {"22"}}, {{"3*"}, {"33"}}, {{"3*"}, {"34"}}}
	mc.spec.FullDomain = false
	// loss: 1, 1, 1/3, 1/3 over 4
	if m, err := mc.measure(t); err != nil || !near(m.Loss, (2+2.0/3)/4) {
		t.Errorf("mask, top: loss %v, %v; want 2/3", m.Loss, err)
	}
}

// TestUtilityBuilders: the date builder's labels and the interval builder's closed
// integer and half-open float intervals, with leaves the input's values.
func TestUtilityBuilders(t *testing.T) {
	date, err := DateDomain(schema.DateUnits)
	if err != nil {
		t.Fatal(err)
	}
	cols := []string{"d", "i", "f"}
	uc := utilityCase{
		spec: Spec{K: 1, InputRows: 4, Columns: cols, Quasi: cols,
			Utility: []Quasi{
				{Column: "d", Domain: date, Type: schema.Date},
				{Column: "i", Domain: IntervalDomain(), Type: schema.Integer},
				{Column: "f", Domain: IntervalDomain(), Type: schema.Float},
			}},
		released: [][2][]string{
			{{"2019-Q1", "[0,9]", "[0,1)"}, {"2019-01-05", "3", "0.5"}},
			{{"2019-Q1", "[0,9]", "[0,1)"}, {"2019-03-31", "9", "0.25"}},
			{{"[2010,2019]", "[10,19]", "[1,2)"}, {"2014-06-01", "10", "1"}},
			{{"2020-01", "*", "2"}, {"2020-01-09", "25", "2"}},
		},
	}
	// d: 4 leaves; Q1 2019 covers 2 → 1/3 ×2; the decade covers the three 2010s → 2/3;
	//    the month one → 0. Loss 4/3. NCP by value: dates present span 2014-… to
	//    2020-01-09; Q1 covers Jan 5 to Mar 31, the decade Jan 5 2019 back to Jun 1 2014.
	// i: leaves 3, 9, 10, 25; [0,9] → 2: 1/3 ×2; [10,19] → 1: 0; * → 4: 1. Loss 5/3.
	// f: leaves 0.5, 0.25, 1, 2; [0,1) → 2 (1 is outside): 1/3 ×2; [1,2) → 1; "2" → 1.
	//    Loss 2/3.
	// Loss = (4/3 + 5/3 + 2/3) / 12.
	m, err := uc.measure(t)
	if err != nil {
		t.Fatal(err)
	}
	if want := (4.0/3 + 5.0/3 + 2.0/3) / 12; !near(m.Loss, want) {
		t.Errorf("loss %v, want %v", m.Loss, want)
	}
	day := func(s string) float64 {
		v, _ := valueOf(schema.Date, s)
		return v
	}
	span := day("2020-01-09") - day("2014-06-01")
	ncpD := 2*(day("2019-03-31")-day("2019-01-05"))/span + (day("2019-03-31")-day("2014-06-01"))/span
	ncpI := 2*(9.0-3)/(25-3) + 1 // [0,9] covers 3..9; * everything
	ncpF := 2 * (0.5 - 0.25) / (2 - 0.25)
	if want := (ncpD + ncpI + ncpF) / 12; !near(m.NCP, want) {
		t.Errorf("NCP %v, want %v", m.NCP, want)
	}
}

// TestUtilityErrors: what the measurement refuses, in messages that quote no value.
func TestUtilityErrors(t *testing.T) {
	const secretValue = "Secret-Diagnosis-42"
	dx, err := HierarchyDomain(writeHierarchy(t, "Flu;Resp;*\nCold;Resp;*\n"))
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{K: 1, InputRows: 1, Columns: []string{"dx"}, Quasi: []string{"dx"}, Utility: []Quasi{{Column: "dx", Domain: dx}}}
	cases := []struct {
		name     string
		uc       utilityCase
		want     string
		violates bool
	}{
		{"input value not in the file", utilityCase{spec: spec, released: [][2][]string{{{"*"}, {secretValue}}}},
			"an input value that the hierarchy file", true},
		{"released value no node", utilityCase{spec: spec, released: [][2][]string{{{secretValue}, {"Flu"}}}},
			"a released value that no single level", true},
		{"records missing", utilityCase{spec: Spec{K: 1, InputRows: 2, MaxSuppressed: 1, Columns: spec.Columns, Quasi: spec.Quasi, Utility: spec.Utility},
			released: [][2][]string{{{"Resp"}, {"Flu"}}}, suppressed: nil}, "1 input records counted, the input has 2", false},
		{"range of non-numbers", utilityCase{
			spec:     Spec{K: 1, InputRows: 1, Columns: spec.Columns, Quasi: spec.Quasi, Utility: []Quasi{{Column: "dx", Domain: dx, Type: schema.Integer, Ranges: true}}},
			released: [][2][]string{{{"[Flu,Flu]"}, {"Flu"}}}}, "a value of its domain is not of type integer", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.uc.measure(t)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			var v *Violation
			if errors.As(err, &v) != tc.violates {
				t.Errorf("violation %v, want %v", errors.As(err, &v), tc.violates)
			}
			if strings.Contains(err.Error(), "Secret") || strings.Contains(err.Error(), "Flu") {
				t.Errorf("the message quotes a value: %v", err)
			}
		})
	}

	// A counter that measures utility needs every record's original.
	c, err := NewCounter(spec, spec.Columns)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Add([]string{"Resp"}); !errors.Is(err, errNoOriginal) {
		t.Errorf("Add without the original: %v", err)
	}
	// The described quasi-identifiers must be the spec's.
	bad := spec
	bad.Utility = []Quasi{{Column: "other", Domain: dx}}
	if _, err := NewCounter(bad, bad.Columns); err == nil {
		t.Error("a utility description of another column was accepted")
	}
}

// TestTruthfulInput: the walk hands every input record to Truth.Input, in order, saying
// which generalize a release record and which are left out.
func TestTruthfulInput(t *testing.T) {
	inHeader := []string{"id", "age"}
	input := [][]string{{"1", "23"}, {"2", "31"}, {"3", "27"}, {"4", "45"}, {"5", "52"}}
	release := [][]string{{"[20,29]"}, {"[20,29]"}, {"[40,49]"}}
	var got []string
	tr := Truth{Columns: []string{"age"}, Covers: map[string]Cover{"age": CoverRange(schema.Integer)}, MaxSuppressed: 2,
		Input: func(rec []string, matched bool) {
			s := rec[0] + "-"
			if matched {
				s += "matched"
			} else {
				s += "left out"
			}
			got = append(got, s)
		}}
	n, err := Truthful(tr, inHeader, &records{recs: input}, &records{recs: release})
	if err != nil || n != 2 {
		t.Fatalf("suppressed %d, %v", n, err)
	}
	want := []string{"1-matched", "2-left out", "3-matched", "4-matched", "5-left out"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("input records %q, want %q", got, want)
	}
}

// TestUtilityFileTop: in a column released as ranges whose hierarchy file ends in a
// label of its own, that label covers every leaf (loss 1), and "*", which the file does
// not have, is a violation.
func TestUtilityFileTop(t *testing.T) {
	age, err := HierarchyDomain(writeHierarchy(t, "20;[20,29];any age\n25;[20,29];any age\n30;[30,39];any age\n40;[30,39];any age\n"))
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{K: 2, InputRows: 2, Columns: []string{"age"}, Quasi: []string{"age"},
		Utility: []Quasi{{Column: "age", Domain: age, Type: schema.Integer, Ranges: true}}}
	for _, tc := range []struct {
		released string
		loss     float64 // -1: a violation
	}{
		{"any age", 1},
		{"[20,30]", 2.0 / 3},
		{"*", -1},
	} {
		uc := utilityCase{spec: spec, released: [][2][]string{{{tc.released}, {"20"}}, {{tc.released}, {"30"}}}}
		m, err := uc.measure(t)
		var v *Violation
		switch {
		case tc.loss < 0 && !errors.As(err, &v):
			t.Errorf("%q: got %v, want a violation", tc.released, err)
		case tc.loss >= 0 && (err != nil || !near(m.Loss, tc.loss)):
			t.Errorf("%q: loss %v, %v; want %v", tc.released, m, err, tc.loss)
		}
	}
}
