package dprun

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/schema"
)

// TestDPSynthetic: a synthetic output has exactly its columns, the rows asked for,
// values from the declared domains only, and a manifest naming the method, the
// measured marginals with their noise, and a spend within the budget.
func TestDPSynthetic(t *testing.T) {
	if testing.Short() {
		t.Skip("many library draws (runs in the full test run, not the -short race run)")
	}
	for _, c := range []struct {
		name, dp   string
		l1, l2     float64
		rows       int
		method     schema.SynthesisMethod
		unitCapped bool
	}{
		{"aim", "dp:\n  epsilon-total: 1\n  delta-total: 1e-6\n  outputs:\n    - {name: syn, epsilon: 1, delta: 1e-9, synthetic: {columns: [age, sex, dx], rows: 300}}\n",
			1, 1, 300, "aim", false},
		{"mst replace-one", "dp:\n  epsilon-total: 1\n  delta-total: 1e-6\n  neighbours: replace-one\n  outputs:\n    - {name: syn, epsilon: 1, delta: 1e-9, synthetic: {columns: [age, sex, dx], rows: 200, method: mst}}\n",
			2, math.Sqrt2, 200, "mst", false},
		{"unit", "dp:\n  epsilon-total: 1\n  delta-total: 1e-6\n  privacy-unit: {column: pid, max-rows-per-unit: 2}\n  outputs:\n    - {name: syn, epsilon: 1, delta: 1e-9, synthetic: {columns: [age, sex, dx], rows: 100, workload: [[age, sex], [dx]]}}\n",
			2, 2, 100, "aim", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, out, man, err := dpRun(t, wardColumns+c.dp, wardInput(), "")
			if err != nil {
				t.Fatal(err)
			}
			header, recs := testfiles.ReadCSV(t, filepath.Join(out, "syn.csv"))
			if !slices.Equal(header, []string{"age", "sex", "dx"}) {
				t.Fatalf("header %v", header)
			}
			if len(recs) != c.rows {
				t.Fatalf("%d records, want %d", len(recs), c.rows)
			}
			ages := []string{"[0,24]", "[25,49]", "[50,74]", "[75,99]"}
			for i, r := range recs {
				if !slices.Contains(ages, r[0]) || !slices.Contains([]string{"F", "M"}, r[1]) || !slices.Contains([]string{"flu", "cold", "sepsis"}, r[2]) {
					t.Fatalf("record %d %v: a value outside the declared domains", i, r)
				}
			}
			mo := man.Outputs[0]
			s := mo.Synthetic
			if mo.Kind != "synthetic" || s == nil || s.Method != c.method {
				t.Fatalf("manifest output %+v", mo)
			}
			if mo.L1 != c.l1 || math.Abs(mo.L2-c.l2) > 1e-12 {
				t.Errorf("sensitivities L1=%g L2=%g, want %g, %g", mo.L1, mo.L2, c.l1, c.l2)
			}
			if s.RhoSpent > s.Rho || s.Rho <= 0 {
				t.Errorf("spent ρ %g of %g", s.RhoSpent, s.Rho)
			}
			if len(s.Measured) < 3 {
				t.Fatalf("%d measured marginals", len(s.Measured))
			}
			for _, m := range s.Measured {
				if len(m.Names) == 0 || m.Sigma <= 0 {
					t.Errorf("measured %+v", m)
				}
				for _, n := range m.Names {
					if !slices.Contains(header, n) {
						t.Errorf("measured column %q", n)
					}
				}
			}
			if c.unitCapped != (mo.Contributions != nil) {
				t.Errorf("contributions %+v", mo.Contributions)
			}
		})
	}
}

// TestDPSyntheticIntegers: a width-1 integer range is written as integers of the
// range, and a value outside the domain is exit 2 naming the row, with nothing written.
func TestDPSyntheticIntegers(t *testing.T) {
	conf := `columns:
  a: {role: insensitive, type: integer, domain: {range: [0, 5], width: 1}}
  b: {role: insensitive, type: integer, domain: [1, 2, 3]}
dp:
  epsilon-total: 2
  delta-total: 1e-6
  outputs:
    - {name: syn, epsilon: 2, delta: 1e-9, synthetic: {columns: [a, b]}}
`
	input := "a,b\n"
	for i := range 200 {
		input += strconv.Itoa(i%6) + "," + strconv.Itoa(1+i%3) + "\n"
	}
	_, out, man, err := dpRun(t, conf, input, "")
	if err != nil {
		t.Fatal(err)
	}
	_, recs := testfiles.ReadCSV(t, filepath.Join(out, "syn.csv"))
	if n := man.Outputs[0].Synthetic.Rows; len(recs) != n || n < 150 || n > 250 {
		t.Fatalf("%d records, manifest says %d, for 200 input rows", len(recs), n)
	}
	for i, r := range recs {
		a, errA := strconv.Atoi(r[0])
		b, errB := strconv.Atoi(r[1])
		if errA != nil || errB != nil || a < 0 || a > 5 || b < 1 || b > 3 {
			t.Fatalf("record %d %v: not integers of the domains", i, r)
		}
	}

	dir, out, _, err := dpRun(t, conf, input+"9,1\n", "")
	if !errors.Is(err, fault.ErrBadInput) {
		t.Fatalf("a value outside the domain: %v", err)
	}
	assertNothingWritten(t, dir, out)
}

// TestDPSyntheticWideUnit: a synthetic output over columns whose cross product does not
// fit 64 bits works with a privacy unit bounded by rows alone, and is exit 2 (nothing
// written) when the unit is bounded by cells, which needs cells told apart.
func TestDPSyntheticWideUnit(t *testing.T) {
	var conf, header strings.Builder
	conf.WriteString("columns:\n  pid: {role: identifier}\n")
	header.WriteString("pid")
	var names []string
	for i := range 10 {
		n := fmt.Sprintf("c%d", i)
		names = append(names, n)
		fmt.Fprintf(&conf, "  %s: {role: insensitive, type: integer, domain: {range: [0, 99], width: 1}}\n", n)
		header.WriteString("," + n)
	}
	input := header.String() + "\n"
	for r := range 60 {
		input += fmt.Sprintf("p%d", r%20)
		for i := range 10 {
			input += fmt.Sprintf(",%d", (r*(i+3))%100)
		}
		input += "\n"
	}
	dp := func(bound string) string {
		return conf.String() + "dp:\n  epsilon-total: 1\n  delta-total: 1e-6\n  privacy-unit: {column: pid, " + bound + "}\n  outputs:\n" +
			"    - {name: syn, epsilon: 1, delta: 1e-9, synthetic: {columns: [" + strings.Join(names, ", ") + "], rows: 30, workload: {way: 1}}}\n"
	}
	if _, out, _, err := dpRun(t, dp("max-rows-per-unit: 2"), input, ""); err != nil {
		t.Fatalf("rows bound: %v", err)
	} else if _, recs := testfiles.ReadCSV(t, filepath.Join(out, "syn.csv")); len(recs) != 30 {
		t.Fatalf("%d records", len(recs))
	}
	dir, out, _, err := dpRun(t, dp("max-cells-per-unit: 1"), input, "")
	if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "cannot be told apart") {
		t.Fatalf("cells bound over 10 columns of 100 values: %v", err)
	}
	assertNothingWritten(t, dir, out)
}
