package release

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/generalize"
	"sanitizer/job"
	"sanitizer/report"
	"sanitizer/schema"
	"sanitizer/verify"
)

// sameMetrics reports how the verifier's five metrics differ from the search's
// (generalize.Utility, as the report gives them), "" when they agree: loss and NCP
// within a relative 1e-9, entropy within 1e-6 bits per record, discernibility exactly,
// C_AVG within a relative 1e-12.
func sameMetrics(m *verify.Measured, u generalize.Metrics, records int) string {
	rel := func(a, b, tol float64) bool { return math.Abs(a-b) <= tol*max(math.Abs(a), math.Abs(b)) }
	switch {
	case !m.Utility:
		return "the verifier did not measure loss, NCP and entropy"
	case !rel(m.Loss, u.Loss, 1e-9), !rel(m.NCP, u.NCP, 1e-9), math.Abs(m.NonUniformEntropy-u.NonUniformEntropy) > 1e-6*float64(records),
		m.Discernibility != u.Discernibility, !rel(m.CAvg, u.CAvg, 1e-12):
		return fmt.Sprintf("verifier: loss %v, NCP %v, entropy %v, discernibility %v, C_AVG %v; search: %v, %v, %v, %v, %v",
			m.Loss, m.NCP, m.NonUniformEntropy, m.Discernibility, m.CAvg, u.Loss, u.NCP, u.NonUniformEntropy, u.Discernibility, u.CAvg)
	}
	return ""
}

// releaseAndCheck releases in to dir/release.csv under cfg, checks the release again,
// and fails the test unless Check's five metrics equal the report's (the search's).
func releaseAndCheck(t *testing.T, cfg *schema.Config, in, dir string) (*report.Report, *verify.Measured) {
	t.Helper()
	out := filepath.Join(dir, "release.csv")
	rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
	if err != nil {
		t.Fatalf("release: %v", err)
	}
	m, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out})
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	if d := sameMetrics(m, rep.Utility, rep.Input.Rows); d != "" {
		t.Fatal(d)
	}
	if rep.Utility.Loss <= 0 || rep.Utility.NCP <= 0 || rep.Utility.NonUniformEntropy <= 0 {
		t.Fatalf("a release without loss proves little: %+v", rep.Utility)
	}
	return rep, m
}

// TestVerifiedUtility: for both algorithms, on the hospital sample (interval, mask, date
// and file hierarchies; Mondrian ranges on age and admission date, and with eight
// quasi-identifiers on stay too) and on Adult (hierarchy files listing leaves the
// data lacks; Mondrian ranges over the age file's leaves), the loss, NCP, non-uniform
// entropy, discernibility and C_AVG that Check measures from the written file equal
// those the search computed (generalize.Utility, in the report).
func TestVerifiedUtility(t *testing.T) {
	modelsOnly(t)
	td, _ := filepath.Abs("../testdata")
	hospital := filepath.Join(td, "hospital.csv")
	for _, c := range []struct {
		config    string
		algorithm schema.Algorithm
	}{
		{"hospital-tests.yaml", "optimal"},
		{"hospital-mondrian.yaml", "mondrian"},
		{"hospital-8qi.yaml", "optimal"},
		{"hospital-8qi-mondrian.yaml", "mondrian"},
	} {
		t.Run(c.config, func(t *testing.T) {
			if testing.Short() && strings.Contains(c.config, "8qi.yaml") {
				t.Skip("the eight-column lattice takes a few seconds")
			}
			cfg, err := schema.Load(filepath.Join(td, c.config))
			if err != nil {
				t.Fatal(err)
			}
			if got := algorithm(cfg); got != c.algorithm {
				t.Fatalf("%s is %s, want %s", c.config, got, c.algorithm)
			}
			rep, _ := releaseAndCheck(t, cfg, hospital, t.TempDir())
			t.Logf("%s: %+v", c.config, rep.Utility)
		})
	}

	abs := needAdult(t)
	adult := filepath.Join(abs, "adult.csv")
	for _, c := range []struct {
		algorithm string
		supp      float64
	}{{"optimal", 0}, {"optimal", 0.05}, {"mondrian", 0}} {
		t.Run(fmt.Sprintf("adult %s %g", c.algorithm, c.supp), func(t *testing.T) {
			dir := t.TempDir()
			cfg := adultConfig(t, dir, 5, c.supp)
			if c.algorithm == "mondrian" {
				cfg = adultTyped(t, dir, 5, c.supp, c.algorithm)
			}
			rep, _ := releaseAndCheck(t, cfg, adult, dir)
			t.Logf("adult %s %g: %+v", c.algorithm, c.supp, rep.Utility)
		})
	}
}

// TestVerifiedUtilityBuilders: a generated table exercising what the hospital sample
// does not — float intervals (half-open), a mask over values of one to four characters
// (the builder writes "*" for a one-character value at every level), all four date
// levels, a hierarchy file whose leaf "Other" is also the name of a node one level up
// and that lists a leaf the data lacks, nulls read as a value — released by both
// algorithms, with suppression: the Release cross-check and Check agree with the
// search's metrics.
func TestVerifiedUtilityBuilders(t *testing.T) {
	dir := t.TempDir()
	hier := filepath.Join(dir, "dx.csv")
	must(t, os.WriteFile(hier, []byte("Other;Other;*\nUnknown;Other;*\nFlu;Resp;*\nCold;Resp;*\nRare;Resp;*\n"), 0o644))
	rng := rand.New(rand.NewPCG(7, 11))
	var b strings.Builder
	b.WriteString("id,weight,age,code,day,dx,note\n")
	dxs := []string{"Other", "Unknown", "Flu", "Cold"}
	for i := range 600 {
		age := fmt.Sprint(18 + rng.IntN(60))
		if rng.IntN(40) == 0 {
			age = "" // a null, read as 0
		}
		code := strings.Repeat(string(rune('1'+rng.IntN(3))), 1+rng.IntN(2)) + fmt.Sprint(rng.IntN(3))[:rng.IntN(2)]
		day := fmt.Sprintf("%04d-%02d-%02d", 2005+rng.IntN(20), 1+rng.IntN(12), 1+rng.IntN(28))
		fmt.Fprintf(&b, "p%d,%.2f,%s,%s,%s,%s,n%d\n", i, 40+rng.Float64()*80, age, code, day, dxs[rng.IntN(len(dxs))], i)
	}
	in := filepath.Join(dir, "in.csv")
	must(t, os.WriteFile(in, []byte(b.String()), 0o644))
	for _, alg := range []string{"optimal", "mondrian"} {
		t.Run(alg, func(t *testing.T) {
			sub := filepath.Join(dir, alg)
			must(t, os.MkdirAll(sub, 0o755))
			config := fmt.Sprintf(`dataset: built
columns:
  id:     {role: identifier}
  weight: {role: quasi, type: float, hierarchy: {intervals: [0.5, 1, 5, 20]}}
  age:    {role: quasi, type: integer, null-as: "0", hierarchy: {intervals: [5, 10, 20]}}
  code:   {role: quasi, hierarchy: {mask: {from: right, max: 2}}}
  day:    {role: quasi, type: date, hierarchy: {date: [month, quarter, year, decade]}}
  dx:     {role: quasi, hierarchy: {file: %q}}
  note:   {role: insensitive}
privacy: {k: 3, suppression: 0.1}
search: {algorithm: %s}
`, hier, alg)
			path := filepath.Join(sub, "c.yaml")
			must(t, os.WriteFile(path, []byte(config), 0o644))
			cfg, err := schema.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			rep, _ := releaseAndCheck(t, cfg, in, sub)
			t.Logf("%s: %+v (%d suppressed)", alg, rep.Utility, rep.Suppressed)
		})
	}
}

// TestUtilityByHandCheck is verify's TestUtilityByHand end to end: the same five records,
// hierarchy file and Mondrian integer ranges, written as files and measured by Check;
// and generalize.Utility, given the same release, computes the same figures.
//
// Input (dept, age): (A, 20), (B, 25), (C, 30), (C, 40), (A, 40); dept's file A→X,
// B→X, C→Y, D→Y (D not in the input); released: (X, [20,25]) twice, (C, [30,40])
// twice, the last record suppressed. By hand (see verify/utility_test.go): loss
// (5/3 + 7/3)/10 = 0.4, NCP (2 + 2.5)/10 = 0.45, non-uniform entropy
// 4·log2 3 + 2·log2 5 − 2 bits, discernibility 13, C_AVG 1.
func TestUtilityByHandCheck(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"dept.csv":    "A;X;*\nB;X;*\nC;Y;*\nD;Y;*\n",
		"in.csv":      "dept,age,note\nA,20,a\nB,25,b\nC,30,c\nC,40,d\nA,40,e\n",
		"release.csv": "dept,age,note\nX,\"[20,25]\",a\nX,\"[20,25]\",b\nC,\"[30,40]\",c\nC,\"[30,40]\",d\n",
		"c.yaml": `dataset: tiny
columns:
  dept: {role: quasi, hierarchy: {file: dept.csv}}
  age:  {role: quasi, type: integer, hierarchy: {intervals: [10]}}
  note: {role: insensitive}
privacy: {k: 2, suppression: 0.2}
search: {algorithm: mondrian}
`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := schema.Load(filepath.Join(dir, "c.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// A Mondrian release suppresses nothing, so Check rejects this one for the record
	// it leaves out; it has measured the release by then.
	m, err := Check(context.Background(), cfg, job.Options{Input: filepath.Join(dir, "in.csv"), Output: filepath.Join(dir, "release.csv")})
	if !errors.Is(err, fault.ErrUnattainable) || !strings.Contains(err.Error(), "missing from a Mondrian release") || m == nil {
		t.Fatalf("check: %v, want the record missing from a Mondrian release", err)
	}
	want := generalize.Metrics{Loss: 0.4, NCP: 0.45, NonUniformEntropy: 4*math.Log2(3) + 2*math.Log2(5) - 2, Discernibility: 13, CAvg: 1}
	if d := sameMetrics(m, want, 5); d != "" {
		t.Errorf("check, against the figures by hand: %s", d)
	}

	// The search's side on the same release.
	dept, err := generalize.NewHierarchy("dept", [][]string{{"A", "X", "*"}, {"B", "X", "*"}, {"C", "Y", "*"}, {"D", "Y", "*"}})
	if err != nil {
		t.Fatal(err)
	}
	age, err := generalize.BuildIntervals("age", []string{"20", "25", "30", "40"}, schema.Integer, []float64{10})
	if err != nil {
		t.Fatal(err)
	}
	codes := func(h *generalize.Hierarchy, vals ...string) generalize.Codes {
		c := generalize.NewCodes(len(vals), h.Leaves())
		for r, v := range vals {
			x, ok := h.Leaf(v)
			if !ok {
				t.Fatalf("%s is not a leaf", v)
			}
			c.Set(r, x)
		}
		return c
	}
	leaf := func(h *generalize.Hierarchy, v string) int32 { x, _ := h.Leaf(v); return x }
	tab := &generalize.Table{Rows: 5, Columns: []generalize.Column{
		{Name: "dept", Hierarchy: dept, Codes: codes(dept, "A", "B", "C", "C", "A")},
		{Name: "age", Hierarchy: age, Codes: codes(age, "20", "25", "30", "40", "40")},
	}}
	// Class 0 releases (dept's parent of A, [20,25]), class 1 (C, [30,40]).
	covers := generalize.ClassCovers{Dict: [][]generalize.Cover{
		{{Level: 1, Code: dept.Code(1, leaf(dept, "A"))}, {Level: 0, Code: leaf(dept, "C")}},
		{{Level: -1, Lo: leaf(age, "30"), Hi: leaf(age, "40")}, {Level: -1, Lo: leaf(age, "20"), Hi: leaf(age, "25")}},
	}, Index: []int32{0, 1, 1, 0}}
	u, err := generalize.Utility(tab, []int32{0, 0, 1, 1, -1}, covers, [][]float64{nil, {20, 25, 30, 40}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if d := sameMetrics(&verify.Measured{Utility: true, Loss: want.Loss, NCP: want.NCP, NonUniformEntropy: want.NonUniformEntropy,
		Discernibility: want.Discernibility, CAvg: want.CAvg}, u, 5); d != "" {
		t.Errorf("generalize.Utility, against the figures by hand: %s", d)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestSameUtility: the Release cross-check's tolerances: loss and NCP relative 1e-9,
// entropy 1e-6 bits per record.
func TestSameUtility(t *testing.T) {
	base := generalize.Metrics{Loss: 0.25, NCP: 0.5, NonUniformEntropy: 1000}
	m := func(loss, ncp, entropy float64) *verify.Measured {
		return &verify.Measured{Utility: true, Loss: loss, NCP: ncp, NonUniformEntropy: entropy}
	}
	cases := []struct {
		m    *verify.Measured
		same bool
	}{
		{m(0.25, 0.5, 1000), true},
		{m(0.25*(1+5e-10), 0.5*(1-5e-10), 1000+0.9e-6*100), true},
		{m(0.25*(1+2e-9), 0.5, 1000), false},
		{m(0.25, 0.5*(1-2e-9), 1000), false},
		{m(0.25, 0.5, 1000+1.1e-6*100), false},
		{m(0, 0.5, 1000), false},
	}
	for i, c := range cases {
		if got := sameUtility(c.m, base, 100); got != c.same {
			t.Errorf("case %d (%+v): same %v, want %v", i, *c.m, got, c.same)
		}
	}
	if !sameUtility(m(0, 0, 0), generalize.Metrics{}, 10) {
		t.Error("all zero: not the same")
	}
}
