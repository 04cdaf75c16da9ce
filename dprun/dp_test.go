package dprun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sanitizer/dphist"
	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/report"
	"sanitizer/schema"
)

// dpRun writes a configuration and an input into a fresh folder and runs DP with the
// given ledger ("" = none). It returns the folder, the output folder and the result.
func dpRun(t *testing.T, conf, input, ledger string) (string, string, *report.Manifest, error) {
	t.Helper()
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "dp.yaml")
	if err := os.WriteFile(cfgPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := schema.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if ledger != "" && !filepath.IsAbs(ledger) {
		ledger = filepath.Join(dir, ledger)
	}
	man, err := Run(context.Background(), cfg, job.Options{Input: in, Output: out, Ledger: ledger})
	return dir, out, man, err
}

// wardInput is a small admissions table: patient p1 has many rows, all in one cell.
func wardInput(extra ...string) string {
	var b strings.Builder
	b.WriteString("pid,age,sex,dx,stay\n")
	for i := range 40 {
		fmt.Fprintf(&b, "q%d,%d,%s,%s,%d\n", i, 20+i, []string{"F", "M"}[i%2], []string{"flu", "cold", "flu"}[i%3], i%10)
	}
	for range 30 {
		b.WriteString("p1,35,F,flu,9\n")
	}
	for _, e := range extra {
		b.WriteString(e + "\n")
	}
	return b.String()
}

const wardColumns = `unlisted: error
columns:
  pid:  {role: identifier}
  age:  {role: quasi, type: integer, hierarchy: {intervals: [10]}, domain: {range: [0, 99], width: 25}}
  sex:  {role: quasi, hierarchy: {mask: {max: 1}}, domain: [F, M]}
  dx:   {role: sensitive, domain: [flu, cold, sepsis]}
  stay: {role: insensitive, type: integer}
`

func TestDPHistogramCellsAndManifest(t *testing.T) {
	conf := "dataset: ward\n" + wardColumns + `dp:
  epsilon-total: 1
  delta-total: 1e-5
  outputs:
    - {name: h, histogram: [sex, dx], epsilon: 0.5}
    - {name: m, marginals: {columns: [age, sex, dx], way: 2}, epsilon: 0.25, mechanism: gaussian, delta: 1e-6, post: [consistent]}
`
	_, out, man, err := dpRun(t, conf, wardInput(), "ledger.json")
	if err != nil {
		t.Fatal(err)
	}
	header, recs := testfiles.ReadCSV(t, filepath.Join(out, "h.csv"))
	if !slices.Equal(header, []string{"sex", "dx", "count"}) {
		t.Fatalf("header %v", header)
	}
	// Every cell of the declared domains, in order, the empty "sepsis" cells too.
	var cells []string
	for _, r := range recs {
		cells = append(cells, r[0]+"/"+r[1])
		if _, err := strconv.ParseInt(r[2], 10, 64); err != nil {
			t.Errorf("count %q is not an integer", r[2])
		}
	}
	want := []string{"F/flu", "F/cold", "F/sepsis", "M/flu", "M/cold", "M/sepsis"}
	if !slices.Equal(cells, want) {
		t.Errorf("cells %v, want %v", cells, want)
	}
	o := man.Outputs[0]
	if o.L0 != 1 || o.LInf != 1 || o.NoiseScale != 2 || o.Cells != 6 || o.Neighbours != "add-remove" {
		t.Errorf("histogram manifest %+v", o)
	}
	m := man.Outputs[1]
	if m.L0 != 3 || m.Cells != 4*2+4*3+2*3 || !slices.Equal(m.Post, []string{"consistent"}) {
		t.Errorf("marginals manifest %+v", m)
	}
	if math.Abs(m.NoiseScale-dphist.Mechanism{Kind: "gaussian", Epsilon: 0.25, Delta: 1e-6, L0: 3, LInf: 1}.Scale()) > 1e-9 {
		t.Errorf("gaussian scale %g", m.NoiseScale)
	}
	if man.Epsilon != 0.75 || man.Delta != 1e-6 || man.Ledger == nil || man.Ledger.EpsilonSpent != 0.75 {
		t.Errorf("run spend ε=%g δ=%g ledger %+v", man.Epsilon, man.Delta, man.Ledger)
	}
	var onDisk report.Manifest
	data, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil || json.Unmarshal(data, &onDisk) != nil || len(onDisk.Outputs) != 2 {
		t.Fatalf("manifest.json: %v", err)
	}

	// Consistency: every marginal summed down to a shared column gives the same table.
	_, mrecs := testfiles.ReadCSV(t, filepath.Join(out, "m.csv"))
	sums := map[string]map[string]float64{} // marginal → "column=value" → sum
	for _, r := range mrecs {
		v, err := strconv.ParseFloat(r[4], 64)
		if err != nil {
			t.Fatal(err)
		}
		if sums[r[0]] == nil {
			sums[r[0]] = map[string]float64{}
		}
		for i, col := range []string{"age", "sex", "dx"} {
			if r[i+1] != "*" {
				sums[r[0]][col+"="+r[i+1]] += v
			}
		}
	}
	for _, pair := range [][3]string{{"age,sex", "age,dx", "age"}, {"age,sex", "sex,dx", "sex"}, {"age,dx", "sex,dx", "dx"}} {
		for k, a := range sums[pair[0]] {
			if !strings.HasPrefix(k, pair[2]+"=") {
				continue
			}
			if b := sums[pair[1]][k]; math.Abs(a-b) > 1e-6 {
				t.Errorf("%s: %s gives %g, %s gives %g", k, pair[0], a, pair[1], b)
			}
		}
	}
}

func TestDPDomainViolation(t *testing.T) {
	conf := "dataset: ward\n" + wardColumns + `dp:
  epsilon-total: 1
  outputs:
    - {name: h, histogram: [dx], epsilon: 1}
`
	// Row 72 (1-based, after the header) has a diagnosis outside the domain.
	dir, out, _, err := dpRun(t, conf, wardInput("q9,50,M,measles,3"), "ledger.json")
	if !errors.Is(err, fault.ErrBadInput) {
		t.Fatalf("err = %v, want bad input", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, `row 71`) || !strings.Contains(msg, `column "dx"`) || strings.Contains(msg, "measles") {
		t.Errorf("error %q: want row 71 and column dx, and never the value", msg)
	}
	assertNothingWritten(t, dir, out)

	// With other: true, the value is counted in the other cell and never named.
	conf = testfiles.Replace(t, conf, "epsilon: 1}", "epsilon: 1, other: true}")
	_, out, _, err = dpRun(t, conf, wardInput("q9,50,M,measles,3"), "")
	if err != nil {
		t.Fatal(err)
	}
	_, recs := testfiles.ReadCSV(t, filepath.Join(out, "h.csv"))
	var labels []string
	for _, r := range recs {
		labels = append(labels, r[0])
	}
	if !slices.Equal(labels, []string{"flu", "cold", "sepsis", "other"}) {
		t.Errorf("labels %v", labels)
	}
	data, _ := os.ReadFile(filepath.Join(out, "h.csv"))
	if strings.Contains(string(data), "measles") {
		t.Error("a category present only in the data appears in the output")
	}
}

// assertNothingWritten checks that a failed run left no output folder, no temporary
// folder and no ledger.
func assertNothingWritten(t *testing.T, dir, out string) {
	t.Helper()
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("output folder exists after a failed run: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if n := e.Name(); n != "dp.yaml" && n != "in.csv" && n != "ledger.json" && n != "ledger.json.lock" {
			t.Errorf("left behind: %s", n)
		}
	}
}

func TestDPLedgerRefusesOverspend(t *testing.T) {
	conf := "dataset: ward\n" + wardColumns + `dp:
  epsilon-total: 1
  outputs:
    - {name: h, histogram: [dx], epsilon: 0.4}
`
	dir := t.TempDir()
	ledger := filepath.Join(dir, "ledger.json")
	l := &dphist.Ledger{Datasets: map[string]*dphist.Account{}}
	if err := l.Charge("ward", 1, 0, dphist.Spend{Epsilon: 0.3, Outputs: []string{"earlier"}}); err != nil {
		t.Fatal(err)
	}
	if err := l.Charge("ward", 1, 0, dphist.Spend{Epsilon: 0.3, Outputs: []string{"earlier"}}); err != nil {
		t.Fatal(err)
	}
	if err := l.Save(ledger); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(ledger)
	// 0.3 + 0.3 + 0.4 = 1 exactly: allowed.
	_, out, _, err := dpRun(t, conf, wardInput(), ledger)
	if err != nil {
		t.Fatalf("a run that spends the budget exactly: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "h.csv")); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(ledger)
	if string(after) == string(before) {
		t.Fatal("the ledger did not record the spend")
	}
	// Anything more is refused: exit 3, nothing written, ledger unchanged.
	rdir, out, _, err := dpRun(t, conf, wardInput(), ledger)
	if !errors.Is(err, fault.ErrUnattainable) {
		t.Fatalf("err = %v, want unattainable", err)
	}
	assertNothingWritten(t, rdir, out)
	if again, _ := os.ReadFile(ledger); string(again) != string(after) {
		t.Error("a refused run changed the ledger")
	}
	// The configuration alone over its total is refused before reading.
	over := testfiles.Replace(t, conf, "epsilon: 0.4", "epsilon: 1.5")
	if _, _, _, err := dpRun(t, over, wardInput(), ""); !errors.Is(err, fault.ErrUnattainable) {
		t.Errorf("outputs over epsilon-total: err = %v, want unattainable", err)
	}
}

func TestDPBadSettings(t *testing.T) {
	base := "dataset: ward\n" + wardColumns + "dp:\n  epsilon-total: 1\n  outputs:\n"
	tests := []struct{ name, conf, want string }{
		{"no domain", testfiles.Replace(t, base, ", domain: [F, M]", "") + "    - {name: h, histogram: [sex], epsilon: 1}\n", "columns.sex.domain"},
		{"laplace with delta", base + "    - {name: h, histogram: [sex], epsilon: 1, delta: 1e-6}\n", "takes no delta"},
		{"consistent on a histogram", base + "    - {name: h, histogram: [sex], epsilon: 1, post: [consistent]}\n", "consistent applies to marginals only"},
		{"unit in an output", testfiles.Replace(t, base, "epsilon-total: 1\n", "epsilon-total: 1\n  privacy-unit: {column: pid, max-rows-per-unit: 2}\n") +
			"    - {name: h, histogram: [pid], epsilon: 1}\n", "privacy unit"},
		{"string aggregate", base + "    - {name: a, aggregate: {column: dx, stats: [count]}, epsilon: 1}\n", "needs type integer or float"},
		{"synthetic model too small", testfiles.Replace(t, base, "epsilon-total: 1\n", "epsilon-total: 1\n  delta-total: 1e-6\n") +
			"    - {name: s, synthetic: {columns: [age, dx], max-model-size: 3}, epsilon: 1, delta: 1e-9}\n", "more than the model may hold"},
		{"other clashes, data in domain", testfiles.Replace(t, base, "domain: [F, M]", "domain: [F, M, other]") + "    - {name: h, histogram: [sex], epsilon: 1, other: true}\n", `already has a value "other"`},
		{"too many marginals", testfiles.Replace(t, base, "  pid:  {role: identifier}\n", "  pid:  {role: identifier}\n"+manyColumns(16)) +
			"    - {name: m, marginals: {columns: [" + manyNames(16) + "], way: 8}, epsilon: 1}\n", "more than 4096 marginals"},
		{"unit with null-as", testfiles.Replace(t, testfiles.Replace(t, base, "pid:  {role: identifier}", "pid:  {role: quasi, hierarchy: {mask: {max: 1}}, null-as: x}"),
			"epsilon-total: 1\n", "epsilon-total: 1\n  privacy-unit: {column: pid, max-rows-per-unit: 2}\n") +
			"    - {name: h, histogram: [sex], epsilon: 1}\n", "may not stand for nulls"},
		{"range on a string", testfiles.Replace(t, base, "domain: [F, M]", "domain: {range: [0, 1], width: 1}") + "    - {name: h, histogram: [sex], epsilon: 1}\n", "type integer or float"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			input := wardInput()
			if strings.Contains(tt.conf, "c0:") { // the extra columns, all "a"
				lines := strings.Split(strings.TrimSuffix(input, "\n"), "\n")
				for i := range lines {
					extra := "a"
					if i == 0 {
						extra = "c0"
					}
					for j := 1; j < 16; j++ {
						if i == 0 {
							extra += fmt.Sprintf(",c%d", j)
						} else {
							extra += ",a"
						}
					}
					lines[i] += "," + extra
				}
				input = strings.Join(lines, "\n") + "\n"
			}
			dir, out, _, err := dpRun(t, tt.conf, input, "")
			if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want bad input mentioning %q", err, tt.want)
			}
			assertNothingWritten(t, dir, out)
		})
	}
	// A ledger inside the output folder is refused before anything is spent.
	{
		dir := t.TempDir()
		cfg, err := schema.Parse([]byte("dataset: ward\n"+wardColumns[len("unlisted: error\n"):]+"dp:\n  epsilon-total: 1\n  outputs:\n    - {name: h, histogram: [sex], epsilon: 1}\n"), "dp.yaml", dir)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "in.csv"), []byte(wardInput()), 0o644)
		out := filepath.Join(dir, "out")
		ledger := filepath.Join(out, "ledger.json")
		if _, err := Run(context.Background(), cfg, job.Options{Input: filepath.Join(dir, "in.csv"), Output: out, Ledger: ledger}); !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "inside the output folder") {
			t.Errorf("ledger inside --out: %v", err)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Error("the output folder was created")
		}
	}
	// An output folder that is not empty is refused.
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	os.MkdirAll(out, 0o755)
	os.WriteFile(filepath.Join(out, "old.csv"), []byte("x\n"), 0o644)
	cfg, err := schema.Parse([]byte(base+"    - {name: h, histogram: [sex], epsilon: 1}\n"), "dp.yaml", dir)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "in.csv"), []byte(wardInput()), 0o644)
	if _, err := Run(context.Background(), cfg, job.Options{Input: filepath.Join(dir, "in.csv"), Output: out}); !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("non-empty output folder: %v", err)
	}
}

// TestDPPrivacyUnitCap: patient p1 has 30 rows in one cell. With at most 3 rows per
// unit and a budget so large that the noise is far below 1, the cell's count is that of
// the other patients plus 3, not plus 30; and the sensitivity is 3.
func TestDPPrivacyUnitCap(t *testing.T) {
	conf := "dataset: ward\n" + wardColumns + `dp:
  epsilon-total: 20000
  privacy-unit: {column: pid, max-rows-per-unit: 3, seed: 5}
  outputs:
    - {name: h, histogram: [sex, dx], epsilon: 10000}
    - {name: a, aggregate: {group-by: [sex], column: stay, stats: [count, mean], bounds: [0, 9]}, epsilon: 10000}
`
	_, out, man, err := dpRun(t, conf, wardInput(), "")
	if err != nil {
		t.Fatal(err)
	}
	if o := man.Outputs[0]; o.L0 != 1 || o.LInf != 3 || o.L1 != 3 {
		t.Errorf("sensitivity L0=%d L∞=%d L1=%g, want 1, 3, 3", o.L0, o.LInf, o.L1)
	}
	_, recs := testfiles.ReadCSV(t, filepath.Join(out, "h.csv"))
	got := map[string]string{}
	for _, r := range recs {
		got[r[0]+"/"+r[1]] = r[2]
	}
	// q0…q39: F when i even; flu when i%3 != 1. F/flu among them: i even and i%3 != 1.
	others := 0
	for i := 0; i < 40; i += 2 {
		if i%3 != 1 {
			others++
		}
	}
	if want := strconv.Itoa(others + 3); got["F/flu"] != want {
		t.Errorf("F/flu = %s, want %s (p1 capped at 3 rows)", got["F/flu"], want)
	}
	_, recs = testfiles.ReadCSV(t, filepath.Join(out, "a.csv"))
	if recs[0][0] != "F" || recs[0][1] != strconv.Itoa(20+3) {
		t.Errorf("aggregate F count row %v, want 23 (20 patients + 3 of p1)", recs[0])
	}
	// The mean of F: q-even stays (i%10 for even i) plus three 9s.
	sum := 27.0
	for i := 0; i < 40; i += 2 {
		sum += float64(i % 10)
	}
	mean, _ := strconv.ParseFloat(recs[0][2], 64)
	if math.Abs(mean-sum/23) > 0.05 {
		t.Errorf("mean %g, want about %g", mean, sum/23)
	}
	data, _ := os.ReadFile(filepath.Join(out, "h.csv"))
	data2, _ := os.ReadFile(filepath.Join(out, "a.csv"))
	if strings.Contains(string(data)+string(data2), "p1") || strings.Contains(string(data)+string(data2), "pid") {
		t.Error("the privacy unit's id reached an output")
	}
}

func TestDPReplaceOne(t *testing.T) {
	conf := "dataset: ward\n" + wardColumns + `dp:
  epsilon-total: 1
  neighbours: replace-one
  outputs:
    - {name: h, histogram: [sex], epsilon: 0.5}
    - {name: a, aggregate: {column: stay, stats: [count, sum], bounds: [0, 9]}, epsilon: 0.5, format: parquet}
`
	_, out, man, err := dpRun(t, conf, wardInput(), "")
	if err != nil {
		t.Fatal(err)
	}
	if o := man.Outputs[0]; o.L0 != 2 || o.L1 != 2 || o.NoiseScale != 4 {
		t.Errorf("replace-one histogram: L0=%d L1=%g scale %g, want 2, 2, 4", o.L0, o.L1, o.NoiseScale)
	}
	st := man.Outputs[1].Stats
	if st[0].L0 != 2 || st[1].LibEpsilon != 0.125 {
		t.Errorf("replace-one aggregate budgets %+v", st)
	}
	if _, err := os.Stat(filepath.Join(out, "a.parquet")); err != nil {
		t.Error(err)
	}
}

// manyColumns declares n extra binary columns c0…c(n−1).
func manyColumns(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "  c%d: {role: insensitive, domain: [a, b]}\n", i)
	}
	return b.String()
}

func manyNames(n int) string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("c%d", i)
	}
	return strings.Join(names, ", ")
}

// TestDPUnitSpellings: in an integer privacy-unit column, "7", "07" and "+7" are one
// unit, bounded together; an empty id is refused.
func TestDPUnitSpellings(t *testing.T) {
	conf := `dataset: w
columns:
  pid: {role: identifier, type: integer}
  sex: {role: insensitive, domain: [F, M]}
dp:
  epsilon-total: 20000
  privacy-unit: {column: pid, max-rows-per-unit: 1}
  outputs:
    - {name: h, histogram: [sex], epsilon: 10000}
`
	_, out, _, err := dpRun(t, conf, "pid,sex\n7,F\n07,F\n+7,F\n8,M\n", "")
	if err != nil {
		t.Fatal(err)
	}
	_, recs := testfiles.ReadCSV(t, filepath.Join(out, "h.csv"))
	if recs[0][1] != "1" || recs[1][1] != "1" {
		t.Errorf("counts %v, want F 1 (one unit, capped at one row) and M 1", recs)
	}
	dir, out, _, err := dpRun(t, conf, "pid,sex\n7,F\n,F\n", "")
	if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "row 2") {
		t.Errorf("empty id: %v", err)
	}
	assertNothingWritten(t, dir, out)
}

// TestDPCountedAndAggregated: one column both counted (a histogram) and measured (an
// aggregate) in the same run.
func TestDPCountedAndAggregated(t *testing.T) {
	conf := testfiles.Replace(t, "dataset: ward\n"+wardColumns, "stay: {role: insensitive, type: integer}", "stay: {role: insensitive, type: integer, domain: {range: [0, 9], width: 5}}") + `dp:
  epsilon-total: 20000
  outputs:
    - {name: h, histogram: [stay], epsilon: 10000}
    - {name: a, aggregate: {group-by: [sex], column: stay, stats: [count, sum], bounds: [0, 9]}, epsilon: 10000}
`
	_, out, _, err := dpRun(t, conf, wardInput(), "")
	if err != nil {
		t.Fatal(err)
	}
	_, recs := testfiles.ReadCSV(t, filepath.Join(out, "h.csv"))
	// stays: q_i has i%10 (40 rows: 20 in [0,4], 20 in [5,9]) and p1 30 × 9.
	if len(recs) != 2 || recs[0][1] != "20" || recs[1][1] != "50" {
		t.Errorf("histogram %v, want [0,4] 20 and [5,9] 50", recs)
	}
	_, recs = testfiles.ReadCSV(t, filepath.Join(out, "a.csv"))
	if recs[0][0] != "F" || recs[0][1] != "50" {
		t.Errorf("aggregate %v, want F 50 (20 + p1's 30)", recs)
	}
}

// TestDPRecordThenRelease: when writing fails after the spend was recorded (here the
// Parquet sink refuses two columns of one name, the input's "count" and the output's),
// the ledger keeps the spend and nothing is published: no output folder, no temporary
// folder.
func TestDPRecordThenRelease(t *testing.T) {
	conf := `dataset: w
columns:
  count: {role: insensitive, domain: [a, b]}
dp:
  epsilon-total: 1
  outputs:
    - {name: h, histogram: [count], epsilon: 0.25, format: parquet}
`
	dir, out, _, err := dpRun(t, conf, "count\na\nb\na\n", "ledger.json")
	if err == nil || !strings.Contains(err.Error(), `two columns are named "count"`) {
		t.Fatalf("error %v; the test needs the write to fail", err)
	}
	assertNothingWritten(t, dir, out)
	l, lerr := dphist.LoadLedger(filepath.Join(dir, "ledger.json"))
	if lerr != nil {
		t.Fatal(lerr)
	}
	if a := l.Datasets["w"]; a == nil || len(a.Spends) != 1 || a.Spends[0].Epsilon != 0.25 {
		t.Fatalf("ledger after a failed write: %+v (want the spend recorded)", a)
	}
}
