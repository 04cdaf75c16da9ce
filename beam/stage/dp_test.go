package stage

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"sanitizer/dphist"
	"sanitizer/dprun"
	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/report"
	"sanitizer/sample"
	"sanitizer/schema"
)

// readCSV is a CSV file's records, header first.
func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// readManifest is the manifest a dp run published into dir.
func readManifest(t *testing.T, dir string) *report.Manifest {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m report.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return &m
}

// hospitalDP writes the hospital sample (rows records) whole and in four CSV parts, and
// the bundled dp configuration for it with its synthetic output (not on Beam) left
// out and every output written as CSV; edit changes the configuration's text.
func hospitalDP(t *testing.T, rows int, edit func(string) string) (cfgPath, whole, parts string) {
	t.Helper()
	dir := t.TempDir()
	var buf bytes.Buffer
	if err := sample.Hospital(&buf, rows, 5); err != nil {
		t.Fatal(err)
	}
	whole = filepath.Join(dir, "in.csv")
	if err := os.WriteFile(whole, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	parts = filepath.Join(dir, "parts")
	os.Mkdir(parts, 0o700)
	size := (len(lines) + 2) / 4
	for i, n := 1, 0; i < len(lines); i, n = i+size, n+1 {
		body := lines[0] + "\n" + strings.Join(lines[i:min(i+size, len(lines))], "\n") + "\n"
		if err := os.WriteFile(filepath.Join(parts, fmt.Sprintf("part-%d.csv", n)), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile("../../testdata/hospital-dp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	hier, _ := filepath.Abs("../../testdata/hierarchies")
	text := testfiles.ReplaceAll(t, string(raw), "hierarchies/", hier+"/")
	text = text[:strings.Index(text, "    - {name: synthetic")]
	text = testfiles.Replace(t, text, ", format: parquet}", "}")
	if edit != nil {
		text = edit(text)
	}
	cfgPath = filepath.Join(dir, "dp.yaml")
	if err := os.WriteFile(cfgPath, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfgPath, whole, parts
}

// dpOnPrism runs the dp outputs of the configuration at cfgPath on Prism.
func dpOnPrism(t *testing.T, cfgPath string, opt job.Options) (*DPRun, error) {
	t.Helper()
	j, err := NewJob(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	return DP(context.Background(), j, opt, onPrism)
}

// TestDPOnPrismMatchesCLI: the hospital sample's histogram, 2-way marginals and
// aggregate, run on Prism over four parts, publish the CLI's manifest for the same
// configuration — the same cells, sensitivities, noise scales, confidence widths,
// per-statistic budgets and post-processing — and tables with exactly the rows of
// the declared domains, in the CLI's order; the ledger records the same spend. Only
// the contributions differ, as Privacy on Beam bounds them: per partition.
func TestDPOnPrismMatchesCLI(t *testing.T) {
	cfgPath, whole, parts := hospitalDP(t, 4000, nil)
	j, err := NewJob(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	dpMatchesCLI(t, j, cfgPath, parts, whole)
}

// dpMatchesCLI runs the dp outputs of the job j (its configuration at cfgPath) on
// Prism over beamIn, and the CLI's over whole, and fails t unless both publish what
// TestDPOnPrismMatchesCLI says.
func dpMatchesCLI(t *testing.T, j Job, cfgPath, beamIn, whole string) {
	t.Helper()
	dir := t.TempDir()
	beamOut, cliOut := filepath.Join(dir, "beam"), filepath.Join(dir, "cli")
	beamLedger, cliLedger := filepath.Join(dir, "beam.json"), filepath.Join(dir, "cli.json")
	if _, err := DP(context.Background(), j, job.Options{Input: beamIn, Output: beamOut, Ledger: beamLedger}, onPrism); err != nil {
		t.Fatal(err)
	}
	cfg, err := schema.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dprun.Run(context.Background(), cfg, job.Options{Input: whole, Output: cliOut, Ledger: cliLedger}); err != nil {
		t.Fatal(err)
	}
	got, want := readManifest(t, beamOut), readManifest(t, cliOut)
	if got.Epsilon != want.Epsilon || got.Delta != want.Delta || got.ConfigDigest != want.ConfigDigest || len(got.Outputs) != len(want.Outputs) || len(got.Outputs) != 3 {
		t.Fatalf("Beam manifest ε=%g δ=%g %d outputs; CLI ε=%g δ=%g %d outputs", got.Epsilon, got.Delta, len(got.Outputs), want.Epsilon, want.Delta, len(want.Outputs))
	}
	if got.Ledger == nil || want.Ledger == nil || got.Ledger.EpsilonSpent != want.Ledger.EpsilonSpent || got.Ledger.DeltaSpent != want.Ledger.DeltaSpent {
		t.Errorf("ledger: Beam %+v, CLI %+v", got.Ledger, want.Ledger)
	}
	for i, g := range got.Outputs {
		w := want.Outputs[i]
		// Privacy on Beam's bound: L0 partitions, L∞ rows in each (an aggregate's: the
		// unit's one group and three rows).
		bound := report.ManifestContributed{CellsPerUnit: int(g.L0), RowsPerCell: int(g.LInf)}
		if g.Kind == "aggregate" {
			bound = report.ManifestContributed{CellsPerUnit: 1, RowsPerCell: 3}
		}
		if g.Contributions == nil || *g.Contributions != bound {
			t.Errorf("output %s: contributions %+v, want Privacy on Beam's %+v", g.Name, g.Contributions, bound)
		}
		g.Contributions, w.Contributions = nil, nil
		if !reflect.DeepEqual(g, w) {
			t.Errorf("output %d:\nBeam %+v\nCLI  %+v", i, g, w)
		}
		if g.NoiseScale == 0 && g.Kind != "aggregate" {
			t.Errorf("output %s: no noise scale", g.Name)
		}
		b, c := readCSV(t, filepath.Join(beamOut, g.File)), readCSV(t, filepath.Join(cliOut, w.File))
		if len(b) != g.Cells+1 || len(c) != len(b) || !slices.Equal(b[0], c[0]) {
			t.Fatalf("output %s: Beam %d rows, CLI %d, %d cells", g.Name, len(b)-1, len(c)-1, g.Cells)
		}
		labels := len(g.Columns)
		if g.Kind == "marginals" {
			labels++
		}
		for r := range b {
			if !slices.Equal(b[r][:labels], c[r][:labels]) {
				t.Fatalf("output %s row %d: Beam %v, CLI %v", g.Name, r, b[r], c[r])
			}
		}
	}
	if _, err := os.Stat(filepath.Join(beamOut, "manifest.html")); err != nil {
		t.Error(err)
	}
}

// histogramInput writes n records of columns id, a and b (a in a0…a49, b in b0…b39,
// uniformly), with a dp configuration of outputs: histograms of a and b.
func histogramInput(t *testing.T, n int, outputs, unit string) (cfgPath, in string) {
	t.Helper()
	dir := t.TempDir()
	var buf bytes.Buffer
	buf.WriteString("id,a,b\n")
	r := rand.New(rand.NewPCG(7, 8))
	for i := range n {
		fmt.Fprintf(&buf, "u%d,a%d,b%d\n", i, r.IntN(50), r.IntN(40))
	}
	in = filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	list := func(p string, n int) string {
		var vs []string
		for i := range n {
			vs = append(vs, p+strconv.Itoa(i))
		}
		return "[" + strings.Join(vs, ", ") + "]"
	}
	cfg := "dataset: h\ncolumns:\n  id: {role: identifier}\n" +
		"  a: {role: insensitive, domain: " + list("a", 50) + "}\n" +
		"  b: {role: insensitive, domain: " + list("b", 40) + "}\n" +
		"dp:\n  epsilon-total: 1000\n  delta-total: 1e-5\n" + unit + "  outputs:\n" + outputs
	cfgPath = filepath.Join(dir, "dp.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfgPath, in
}

// exactCounts counts the records of the CSV file in of every (a, b) pair.
func exactCounts(t *testing.T, in string) map[[2]string]int {
	t.Helper()
	counts := map[[2]string]int{}
	for _, rec := range readCSV(t, in)[1:] {
		counts[[2]string{rec[1], rec[2]}]++
	}
	return counts
}

// residuals is the noisy count minus the exact count of every cell of a published
// histogram of a and b.
func residuals(t *testing.T, file string, exact map[[2]string]int) []float64 {
	t.Helper()
	recs := readCSV(t, file)
	if len(recs) != 50*40+1 {
		t.Fatalf("%s: %d cells, want the declared domains' 2000", file, len(recs)-1)
	}
	out := make([]float64, 0, len(recs)-1)
	for _, rec := range recs[1:] {
		v, err := strconv.ParseFloat(rec[2], 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v-float64(exact[[2]string{rec[0], rec[1]}]))
	}
	return out
}

// ksDistance is the two-sample Kolmogorov–Smirnov statistic of x and y.
func ksDistance(x, y []float64) float64 {
	x, y = slices.Clone(x), slices.Clone(y)
	slices.Sort(x)
	slices.Sort(y)
	d, i, j := 0.0, 0, 0
	for i < len(x) && j < len(y) {
		v := math.Min(x[i], y[j])
		for i < len(x) && x[i] == v {
			i++
		}
		for j < len(y) && y[j] == v {
			j++
		}
		d = math.Max(d, math.Abs(float64(i)/float64(len(x))-float64(j)/float64(len(y))))
	}
	return d
}

// TestDPOnPrismNoise: Privacy on Beam's noise on a histogram of 2,000 cells (empty
// ones too: they are public partitions, never dropped or clamped) has the scale the
// manifest claims — a Laplace residual's mean absolute value is b, a Gaussian's
// standard deviation σ — and the distribution of the CLI's noise for the same
// configuration (two-sample Kolmogorov–Smirnov).
func TestDPOnPrismNoise(t *testing.T) {
	outputs := "    - {name: lap, histogram: [a, b], epsilon: 0.25, mechanism: laplace}\n" +
		"    - {name: gauss, histogram: [a, b], epsilon: 0.5, mechanism: gaussian, delta: 1e-6}\n"
	cfgPath, in := histogramInput(t, 30000, outputs, "")
	exact := exactCounts(t, in)
	dir := t.TempDir()
	beamOut, cliOut := filepath.Join(dir, "beam"), filepath.Join(dir, "cli")
	if _, err := dpOnPrism(t, cfgPath, job.Options{Input: in, Output: beamOut}); err != nil {
		t.Fatal(err)
	}
	cfg, err := schema.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dprun.Run(context.Background(), cfg, job.Options{Input: in, Output: cliOut}); err != nil {
		t.Fatal(err)
	}
	man := readManifest(t, beamOut)
	for i, o := range man.Outputs {
		got := residuals(t, filepath.Join(beamOut, o.File), exact)
		cli := residuals(t, filepath.Join(cliOut, o.File), exact)
		var abs, sq float64
		for _, r := range got {
			abs += math.Abs(r)
			sq += r * r
		}
		n := float64(len(got))
		var measured float64
		if i == 0 { // Laplace: E|X| = b; its standard error over 2,000 cells is b/√2000
			measured = abs / n
		} else { // Gaussian: the standard deviation; its relative error is 1/√4000
			measured = math.Sqrt(sq / n)
		}
		if math.Abs(measured/o.NoiseScale-1) > 0.1 {
			t.Errorf("output %s: measured scale %.3f, the manifest's %.3f", o.Name, measured, o.NoiseScale)
		}
		// The 0.01% critical value of two 2,000-sample KS is 2.23·√(2/2000) ≈ 0.0705
		// (ties of the integer noise only make it more conservative).
		if d := ksDistance(got, cli); d > 0.0705 {
			t.Errorf("output %s: Kolmogorov–Smirnov distance %.3f between Beam's and the CLI's noise", o.Name, d)
		}
		t.Logf("output %s: scale %.3f (manifest %.3f)", o.Name, measured, o.NoiseScale)
	}
}

// TestDPOnPrismBoundsUnits: a privacy unit with 1,000 records in one cell adds at most
// max-rows-per-unit to it, and one with records in many cells adds to at most
// max-cells-per-unit of them: Privacy on Beam bounds the contributions (the noise is
// far below one at this ε).
func TestDPOnPrismBoundsUnits(t *testing.T) {
	outputs := "    - {name: h, histogram: [a, b], epsilon: 500, mechanism: laplace}\n"
	cfgPath, in := histogramInput(t, 0, outputs, "  privacy-unit: {column: id, max-cells-per-unit: 2, max-rows-per-unit: 3}\n")
	var buf bytes.Buffer
	buf.WriteString("id,a,b\n")
	for range 1000 {
		buf.WriteString("heavy,a0,b0\n")
	}
	for i := range 40 {
		fmt.Fprintf(&buf, "wide,a1,b%d\n", i)
	}
	if err := os.WriteFile(in, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	if _, err := dpOnPrism(t, cfgPath, job.Options{Input: in, Output: out}); err != nil {
		t.Fatal(err)
	}
	wide := 0
	for _, rec := range readCSV(t, filepath.Join(out, "h.csv"))[1:] {
		c, _ := strconv.Atoi(rec[2])
		switch {
		case rec[0] == "a0" && rec[1] == "b0":
			if c != 3 {
				t.Errorf("the heavy unit's cell counts %d, want max-rows-per-unit 3", c)
			}
		case rec[0] == "a1":
			wide += c
		case c != 0:
			t.Errorf("cell %v counts %d, want 0", rec[:2], c)
		}
	}
	if wide != 2 {
		t.Errorf("the wide unit adds %d to its cells, want max-cells-per-unit 2", wide)
	}
}

// TestDPOnPrismPublishesNothing: a part with a value outside a declared domain, a
// synthetic output, replace-one neighbours and a run past the ledger's budget are
// refused with the CLI's kinds of error; nothing is published and the ledger is
// charged only by the run that published.
func TestDPOnPrismPublishesNothing(t *testing.T) {
	cfgPath, _, parts := hospitalDP(t, 400, nil)
	bad := filepath.Join(parts, "part-2.csv")
	raw, err := os.ReadFile(bad)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	rec := strings.Split(lines[5], ",")
	rec[9] = "SECRET-INSURER" // insurance, outside its declared domain
	lines[5] = strings.Join(rec, ",")
	if err := os.WriteFile(bad, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out, ledger := filepath.Join(dir, "out"), filepath.Join(dir, "ledger.json")
	_, err = dpOnPrism(t, cfgPath, job.Options{Input: parts, Output: out, Ledger: ledger})
	if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), `part-2.csv: row 5: column "insurance": a value outside the declared domain`) || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("a value outside the domain: %v", err)
	}
	nothing := func(what string) {
		t.Helper()
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: %s published", what, out)
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if e.Name() != "ledger.json" {
				t.Errorf("%s: %s left behind", what, e.Name())
			}
		}
		l, err := dphist.LoadLedger(ledger)
		if err != nil {
			t.Fatal(err)
		}
		if a := l.Datasets["hospital-sample"]; a != nil && len(a.Spends) > 0 {
			t.Errorf("%s: the ledger was charged %d times", what, len(a.Spends))
		}
	}
	nothing("a value outside the domain")

	for name, edit := range map[string]func(string) string{
		"synthetic": func(s string) string {
			return s + "    - {name: synth, synthetic: {columns: [age, sex], rows: same, method: aim, workload: {way: 2}}, epsilon: 1, delta: 1e-9}\n"
		},
		"replace-one": func(s string) string {
			return testfiles.Replace(t, s, "neighbours: add-remove", "neighbours: replace-one")
		},
	} {
		cfgPath, _, parts := hospitalDP(t, 100, edit)
		_, err := dpOnPrism(t, cfgPath, job.Options{Input: parts, Output: out, Ledger: ledger})
		if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "Beam") {
			t.Errorf("%s: %v", name, err)
		}
		nothing(name)
	}

	// The budget: ε-total 5 allows three runs of ε 1.5; the fourth is refused.
	cfgPath, _, parts = hospitalDP(t, 400, nil)
	for run := range 4 {
		out := filepath.Join(dir, fmt.Sprintf("run%d", run))
		_, err := dpOnPrism(t, cfgPath, job.Options{Input: parts, Output: out, Ledger: ledger})
		if run < 3 && err != nil {
			t.Fatal(err)
		}
		if run == 3 {
			if !errors.Is(err, fault.ErrUnattainable) {
				t.Errorf("a run past the budget: %v", err)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a run past the budget published %s", out)
			}
		}
	}
	l, err := dphist.LoadLedger(ledger)
	if err != nil {
		t.Fatal(err)
	}
	if a := l.Datasets["hospital-sample"]; a == nil || len(a.Spends) != 3 {
		t.Errorf("the ledger holds %v, want three spends", a)
	}
}

// TestDPOnPrismPartTypes: parts whose column types give an output other cells (a
// domain of 1.0 and 2.0 is the numbers 1 and 2 in a part whose column holds numbers,
// the texts "1.0" and "2.0" in one whose column holds text) fail the run as bad input
// naming the part, on the worker that reads it; nothing is published.
func TestDPOnPrismPartTypes(t *testing.T) {
	dir := t.TempDir()
	parts := filepath.Join(dir, "parts")
	os.Mkdir(parts, 0o700)
	for p, typ := range []arrow.DataType{arrow.PrimitiveTypes.Float64, arrow.BinaryTypes.String, arrow.PrimitiveTypes.Float64} {
		rb := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{{Name: "x", Type: typ}}, nil))
		for i := range 50 {
			switch b := rb.Field(0).(type) {
			case *array.Float64Builder:
				b.Append(float64(1 + i%2))
			case *array.StringBuilder:
				b.Append([]string{"1.0", "2.0"}[i%2])
			}
		}
		rec := rb.NewRecordBatch()
		testfiles.WriteArrowParquet(t, filepath.Join(parts, fmt.Sprintf("part-%d.parquet", p)), rec, nil, pqarrow.WithStoreSchema())
		rec.Release()
		rb.Release()
	}
	cfgPath := filepath.Join(dir, "dp.yaml")
	cfg := "dataset: typed\ninput: {format: parquet}\ncolumns:\n  x: {role: insensitive, domain: [\"1.0\", \"2.0\"]}\n" +
		"dp:\n  epsilon-total: 10\n  outputs:\n    - {name: xs, histogram: [x], epsilon: 1}\n"
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	_, err := dpOnPrism(t, cfgPath, job.Options{Input: parts, Output: out})
	if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), `part-1.parquet: output "xs": the part's column types give other cells than`) {
		t.Errorf("got %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 { // parts, dp.yaml
		t.Errorf("left behind: %v", entries)
	}
}
