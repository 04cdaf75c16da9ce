package schema

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sanitizer/diversity"
	"sanitizer/fault"
	"sanitizer/risk"
)

func TestParseExample(t *testing.T) {
	data, err := os.ReadFile("testdata/ward.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse(data, "testdata/ward.yaml", "/cfg")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	level0 := 0
	want := &Config{
		File:     "testdata/ward.yaml",
		Dir:      "/cfg",
		Digest:   hex.EncodeToString(sum[:]),
		Dataset:  "ward-admissions",
		Unlisted: "error",
		Input:    IO{Path: "/cfg/data/ward.csv", Format: "csv", CSV: CSV{Separator: ';', Header: true}},
		Output:   IO{Path: "/tmp/release.parquet", Format: "parquet", CSV: CSV{Separator: ',', Header: true}},
		Columns: []Column{
			{Name: "patient_id", Role: Identifier, Type: String},
			{Name: "name", Role: Identifier, Type: String},
			{Name: "age", Role: Quasi, Type: Integer, TypeDeclared: true,
				Hierarchy: &Hierarchy{Intervals: []float64{5, 10, 20}},
				Domain:    &Domain{Range: &[2]float64{0, 119}, Width: 10}},
			{Name: "sex", Role: Quasi, Type: String,
				Hierarchy: &Hierarchy{File: "/cfg/hierarchies/sex.csv"},
				Domain:    &Domain{Values: []string{"F", "M"}}},
			{Name: "zip", Role: Quasi, Type: String,
				Hierarchy: &Hierarchy{Mask: &Mask{FromRight: true, Max: 5}}},
			{Name: "admitted", Role: Quasi, Type: Date, TypeDeclared: true,
				Hierarchy: &Hierarchy{Date: []DateUnit{"month", "year", "decade"}}},
			{Name: "education", Role: Quasi, Type: String,
				Hierarchy: &Hierarchy{File: "/cfg/hierarchies/education.csv"}},
			{Name: "diagnosis", Role: Sensitive, Type: String,
				Hierarchy: &Hierarchy{File: "/cfg/hierarchies/diagnosis.csv"},
				Domain:    &Domain{HierarchyLevel: &level0}},
			{Name: "stay_days", Role: Insensitive, Type: Integer, TypeDeclared: true},
		},
		Privacy: Privacy{
			K:               5,
			Suppression:     0.05,
			LDiversity:      []LDiversity{{Column: "diagnosis", Variant: "recursive", L: 3, C: 4}},
			TCloseness:      []TCloseness{{Column: "diagnosis", T: 0.2, Distance: "hierarchical"}},
			ReleasedColumns: ReleasedWarn, RiskEnforcement: RiskSuppress,
		},
		Search: Search{Algorithm: "optimal", Metric: "loss"},
		Series: Series{MaxDeferred: 1, Removals: RemovalsRefuse},
		DP: &DP{
			EpsilonTotal: 1,
			DeltaTotal:   1e-6,
			Neighbours:   "add-remove",
			PrivacyUnit:  &PrivacyUnit{Column: "patient_id", MaxRowsPerUnit: 3, Seed: 1},
			Outputs: []DPOutput{
				{Name: "age-by-diagnosis", Histogram: []string{"age", "diagnosis"}, Epsilon: 0.5, Mechanism: "laplace"},
				{Name: "pairs", Marginals: &Marginals{Columns: []string{"age", "sex", "diagnosis"}, Way: 2},
					Epsilon: 0.3, Delta: 1e-7, Mechanism: "gaussian", Post: []PostProcess{"consistent", "clamp", "round"}},
				{Name: "stay", Aggregate: &Aggregate{GroupBy: []string{"diagnosis"}, Column: "stay_days",
					Stats: []Stat{"count", "mean"}, Bounds: [2]float64{0, 60}}, Epsilon: 0.2, Mechanism: "laplace"},
				{Name: "synth", Synthetic: &Synthetic{Columns: []string{"age", "sex", "diagnosis"}, Rows: 0,
					Method: "aim", Way: 3}, Epsilon: 1, Delta: 1e-9},
			},
		},
	}
	cfg.lines = nil // TestWhere
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("Parse(ward.yaml):\n got %s\nwant %s", dump(cfg), dump(want))
	}
	var names []string
	for _, c := range cfg.Quasi() {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, ","); got != "age,sex,zip,admitted,education" {
		t.Errorf("Quasi() = %s", got)
	}
}

// dump renders a configuration with its pointers followed, for failure messages.
func dump(c *Config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%+v\n", *c)
	for _, col := range c.Columns {
		fmt.Fprintf(&b, "  column %s: hierarchy %+v domain %+v\n", col.Name, col.Hierarchy, col.Domain)
	}
	if c.DP != nil {
		fmt.Fprintf(&b, "  dp %+v unit %+v\n", *c.DP, c.DP.PrivacyUnit)
		for _, o := range c.DP.Outputs {
			fmt.Fprintf(&b, "  output %+v %+v %+v %+v\n", o, o.Marginals, o.Aggregate, o.Synthetic)
		}
	}
	return b.String()
}

func TestParseDefaults(t *testing.T) {
	src := `
input: {path: in.csv}
columns:
  zip: {role: quasi, hierarchy: {mask: {max: 2}}}
  diag: {role: sensitive}
  code: &c {role: insensitive}
  copy: *c
privacy:
  t-closeness: {column: diag, t: 0}
search: {}
`
	cfg, err := Parse([]byte(src), "", "")
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		what      string
		got, want any
	}{
		{"File", cfg.File, ""},
		{"Dir", cfg.Dir, ""},
		{"Unlisted", cfg.Unlisted, UnlistedError},
		{"Input.Path", cfg.Input.Path, "in.csv"},
		{"Input.Format", cfg.Input.Format, Format("")},
		{"Input.CSV", cfg.Input.CSV, CSV{Separator: ',', Header: true}},
		{"Output", cfg.Output, IO{CSV: CSV{Separator: ',', Header: true}}},
		{"len(Columns)", len(cfg.Columns), 4},
		{"zip type", cfg.Columns[0].Type, String},
		{"mask", *cfg.Columns[0].Hierarchy.Mask, Mask{FromRight: true, Max: 2}},
		{"alias", cfg.Columns[3], Column{Name: "copy", Role: Insensitive, Type: String}},
		{"K", cfg.Privacy.K, 1}, // t-closeness without k: k defaults to 1
		{"KDefault", cfg.Privacy.KDefault, true},
		{"Suppression", cfg.Privacy.Suppression, 0.0},
		{"LDiversity", len(cfg.Privacy.LDiversity), 0},
		{"TCloseness", cfg.Privacy.TCloseness, []TCloseness{{Column: "diag", Distance: "equal"}}},
		{"Search", cfg.Search, Search{Algorithm: "optimal", Metric: "loss"}},
		{"DP", cfg.DP, (*DP)(nil)},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.what, c.got, c.want)
		}
	}
	if len(cfg.Digest) != 64 {
		t.Errorf("Digest = %q, want 64 hex digits", cfg.Digest)
	}
}

func TestParseVariants(t *testing.T) {
	src := `
unlisted: drop
output: {path: out/release.csv, format: arrows, csv: {separator: "\t", header: false}}
columns:
  id: {role: identifier}
  score: {role: quasi, type: float, hierarchy: {intervals: [0.1, 0.3, 0.9, 1.8]}}
  zip: {role: quasi, hierarchy: {mask: {from: left, max: 1}}, domain: [1, "02139", x]}
  diag: {role: sensitive, null-as: 0}
  drug: {role: sensitive, hierarchy: {file: /abs/drug.csv}}
  stay: {role: insensitive, type: integer}
privacy:
  l-diversity:
    - {column: diag, variant: entropy, l: 2.5}
    - {column: drug, variant: distinct, l: 2}
  t-closeness: [{column: drug, t: 1, distance: ordered, order: [low, "2", high]}]
  average-risk: 0.05
  highest-risk: 0.25
  records-at-risk: {threshold: 0.1, max: 0.02}
  population-uniqueness: {max: 0.01}
  risk-enforcement: measure
search: {algorithm: mondrian, metric: ncp}
risk: {sampling-fraction: 0.3}
dp:
  epsilon-total: 2
  neighbours: replace-one
  outputs:
    - {name: n, aggregate: {column: stay, stats: [count]}, epsilon: 1e-6, format: parquet}
    - name: s
      epsilon: 1
      delta: 1e-9
      synthetic:
        columns: [zip, diag, drug]
        rows: 1000
        method: mst
        workload: [[zip, diag], [diag, drug]]
`
	cfg, err := Parse([]byte(src), "v.yaml", "conf")
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		what      string
		got, want any
	}{
		{"Unlisted", cfg.Unlisted, UnlistedDrop},
		{"RiskEnforcement", cfg.Privacy.RiskEnforcement, RiskMeasure},
		{"Output", cfg.Output, IO{Path: filepath.Join("conf", "out", "release.csv"), Format: "arrows", CSV: CSV{Separator: '\t'}}},
		{"intervals", cfg.Columns[1].Hierarchy.Intervals, []float64{0.1, 0.3, 0.9, 1.8}},
		{"mask", *cfg.Columns[2].Hierarchy.Mask, Mask{Max: 1}},
		{"domain", cfg.Columns[2].Domain.Values, []string{"1", "02139", "x"}},
		{"absolute file", cfg.Columns[4].Hierarchy.File, "/abs/drug.csv"},
		{"null", *cfg.Columns[3].Null, "0"},
		{"no null", cfg.Columns[4].Null, (*string)(nil)},
		{"type declared", cfg.Columns[1].TypeDeclared, true},
		{"type not declared", cfg.Columns[2].TypeDeclared, false},
		{"LDiversity", cfg.Privacy.LDiversity, []LDiversity{{Column: "diag", Variant: "entropy", L: 2.5, Estimator: "shannon"}, {Column: "drug", Variant: "distinct", L: 2}}},
		{"TCloseness", cfg.Privacy.TCloseness, []TCloseness{{Column: "drug", T: 1, Distance: "ordered", Order: []string{"low", "2", "high"}}}},
		{"Search", cfg.Search, Search{Algorithm: "mondrian", Metric: "ncp"}},
		{"risks", [2]float64{cfg.Privacy.AverageRisk, cfg.Privacy.HighestRisk}, [2]float64{0.05, 0.25}},
		{"RecordsAtRisk", *cfg.Privacy.RecordsAtRisk, RecordsAtRisk{Threshold: 0.1, Max: 0.02}},
		{"PopulationUniqueness", *cfg.Privacy.PopulationUniqueness, PopulationUniqueness{Max: 0.01, Model: risk.Dankar}},
		{"Risk", cfg.Risk, Risk{SamplingFraction: 0.3}},
		{"Neighbours", cfg.DP.Neighbours, ReplaceOne},
		{"aggregate", *cfg.DP.Outputs[0].Aggregate, Aggregate{Column: "stay", Stats: []Stat{"count"}}},
		{"epsilon", cfg.DP.Outputs[0].Epsilon, 1e-6},
		{"format", cfg.DP.Outputs[0].Format, FormatParquet},
		{"synthetic", *cfg.DP.Outputs[1].Synthetic, Synthetic{Columns: []string{"zip", "diag", "drug"}, Rows: 1000, Method: "mst",
			Workload: [][]string{{"zip", "diag"}, {"diag", "drug"}}}},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.what, c.got, c.want)
		}
	}
}

func TestParseDPKeys(t *testing.T) {
	src := "dp:\n  epsilon-total: 1\n  privacy-unit: {column: id, max-cells-per-unit: 2, seed: 7}\n  outputs:\n" +
		"    - {name: a, epsilon: 0.5, other: true, histogram: [age, sex]}\n" +
		"    - {name: b, epsilon: 0.5, aggregate: {column: stay, stats: [quantiles], bounds: [0, 9]}}\n" +
		"    - {name: c, epsilon: 0.5, aggregate: {column: stay, stats: [quantiles], bounds: [0, 9], quantiles: [0.1, 0.9]}}\n" + cols
	cfg, err := Parse([]byte(src), "test.yaml", "/cfg")
	if err != nil {
		t.Fatal(err)
	}
	d := cfg.DP
	if *d.PrivacyUnit != (PrivacyUnit{Column: "id", MaxCellsPerUnit: 2, Seed: 7}) {
		t.Errorf("privacy unit %+v", *d.PrivacyUnit)
	}
	if !d.Outputs[0].Other || d.Outputs[1].Other {
		t.Errorf("other = %v, %v", d.Outputs[0].Other, d.Outputs[1].Other)
	}
	if q := d.Outputs[1].Aggregate.Quantiles; !reflect.DeepEqual(q, []float64{0.25, 0.5, 0.75}) {
		t.Errorf("default quantiles %v", q)
	}
	if q := d.Outputs[2].Aggregate.Quantiles; !reflect.DeepEqual(q, []float64{0.1, 0.9}) {
		t.Errorf("quantiles %v", q)
	}
	cfg, err = Parse([]byte("dp:\n  epsilon-total: 1\n  privacy-unit: {column: id, max-rows-per-unit: 3}\n  outputs:\n    - {name: a, epsilon: 1, histogram: [sex]}\n"+cols), "test.yaml", "/cfg")
	if err != nil {
		t.Fatal(err)
	}
	if u := *cfg.DP.PrivacyUnit; u != (PrivacyUnit{Column: "id", MaxRowsPerUnit: 3, Seed: 1}) {
		t.Errorf("default seed: %+v", u)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ward.yaml")
	data := []byte("input: {path: in.csv}\ncolumns:\n  sex: {role: quasi, hierarchy: {file: h/sex.csv}}\n")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if cfg.File != path || cfg.Dir != dir || cfg.Digest != hex.EncodeToString(sum[:]) {
		t.Errorf("File, Dir, Digest = %q, %q, %q", cfg.File, cfg.Dir, cfg.Digest)
	}
	if want := filepath.Join(dir, "in.csv"); cfg.Input.Path != want {
		t.Errorf("Input.Path = %q, want %q", cfg.Input.Path, want)
	}
	if want := filepath.Join(dir, "h", "sex.csv"); cfg.Columns[0].Hierarchy.File != want {
		t.Errorf("hierarchy file = %q, want %q", cfg.Columns[0].Hierarchy.File, want)
	}

	// A store's URL (the beam module reads gs:// and s3://) is kept as it is; a name
	// that merely holds "://" after other characters is a path.
	for path, want := range map[string]string{
		"gs://bucket/in/": "gs://bucket/in/",
		"s3://b/part.csv": "s3://b/part.csv",
		"memfs://x/y":     "memfs://x/y",
		"dir/x://y":       filepath.Join(dir, "dir/x:/y"),
		"9p://not-scheme": filepath.Join(dir, "9p:/not-scheme"),
	} {
		if err := os.WriteFile(filepath.Join(dir, "s.yaml"), []byte("input: {path: \""+path+"\"}\ncolumns:\n  sex: {role: insensitive}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(filepath.Join(dir, "s.yaml"))
		if err != nil {
			t.Fatalf("input.path %q: %v", path, err)
		}
		if cfg.Input.Path != want {
			t.Errorf("input.path %q: %q, want %q", path, cfg.Input.Path, want)
		}
	}

	_, err = Load(filepath.Join(dir, "missing.yaml"))
	if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("Load(missing) = %v, want a bad-input error naming the file", err)
	}
}

// cols is a valid columns section appended to the error cases that need columns.
const cols = `columns:
  id: {role: identifier}
  age: {role: quasi, type: integer, hierarchy: {intervals: [5, 10]}}
  sex: {role: quasi, hierarchy: {file: sex.csv}, domain: [F, M]}
  diag: {role: sensitive, hierarchy: {file: diag.csv}}
  drug: {role: sensitive}
  stay: {role: insensitive, type: integer}
`

// column returns a configuration whose columns section holds def on line 2.
func column(def string) string { return "columns:\n  x: " + def + "\n" + cols[len("columns:\n"):] }

// output returns a configuration whose first DP output, on line 4, is def.
func output(def string) string {
	return "dp:\n  epsilon-total: 1\n  outputs:\n    - " + def + "\n" + cols
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		line int
		path string // "" for errors about the whole document
		msg  string
	}{
		// the document
		{"empty", "", 1, "", "empty"},
		{"only comments", "# nothing\n", 1, "", "empty"},
		{"null document", "---\n", 1, "", "empty"},
		{"syntax", "dataset: a\nunlisted: drop\ncolumns: x: y\n", 3, "", "syntax error: mapping values are not allowed"},
		{"unclosed flow", "columns:\n  x: {role: quasi\n", 1, "", "syntax error"}, // the decoder gives the line of the enclosing mapping
		{"tab indentation", "columns:\n\tx: {role: identifier}\n", 2, "", "syntax error"},
		{"two documents", cols + "---\n" + cols, 8, "", "only one YAML document"},
		{"not a mapping", "- a\n", 1, "", "expected a mapping, got a list"},
		{"unknown key", "colums: {}\n" + cols, 1, "colums", "unknown key"},
		{"duplicate key", "dataset: a\ndataset: b\n" + cols, 2, "dataset", "duplicate key (first given at line 1)"},
		{"duplicate column", "columns:\n  id: {role: identifier}\n  id: {role: identifier}\n", 3, "columns.id", "duplicate key"},
		{"merge key", "columns:\n  id: {<<: {role: identifier}}\n", 2, "columns.id", "merge keys"},
		{"complex key", "columns:\n  ? [a]\n  : {role: identifier}\n", 2, "columns", "keys must be names"},

		// top level
		{"dataset type", "dataset: [a]\n" + cols, 1, "dataset", "expected a name"},
		{"unlisted", "unlisted: keep\n" + cols, 1, "unlisted", "must be one of error, drop"},
		{"unlisted type", "unlisted: 1\n" + cols, 1, "unlisted", "expected a string, got integer 1"},

		// input and output
		{"input type", "input: data.csv\n" + cols, 1, "input", "expected a mapping"},
		{"input unknown", "input: {paht: x}\n" + cols, 1, "input.paht", "unknown key"},
		{"input format", "input: {format: xlsx}\n" + cols, 1, "input.format", "must be one of csv, parquet, arrow, arrows"},
		{"output empty path", "output: {path: ''}\n" + cols, 1, "output.path", "must not be empty"},
		{"separator empty", "input: {csv: {separator: ''}}\n" + cols, 1, "input.csv.separator", "must not be empty"},
		{"separator long", "input: {csv: {separator: ';;'}}\n" + cols, 1, "input.csv.separator", "single character"},
		{"separator quote", "input: {csv: {separator: '\"'}}\n" + cols, 1, "input.csv.separator", "quote"},
		{"separator newline", "input: {csv: {separator: \"\\n\"}}\n" + cols, 1, "input.csv.separator", "line break"},
		{"separator CR", "input: {csv: {separator: \"\\r\"}}\n" + cols, 1, "input.csv.separator", "line break"},
		{"separator type", "output: {csv: {separator: 1}}\n" + cols, 1, "output.csv.separator", "expected a string"},
		{"header", "input: {csv: {header: yes}}\n" + cols, 1, "input.csv.header", "expected a boolean"},

		// columns
		{"columns missing", "dataset: a\n", 1, "columns", "required"},
		{"columns list", "columns: [a]\n", 1, "columns", "expected a mapping, got a list"},
		{"columns empty", "columns: {}\n", 1, "columns", "at least one column"},
		{"column null", "columns:\n  x:\n", 2, "columns.x", "expected a mapping, got null"},
		{"column unknown key", column("{role: identifier, kind: x}"), 2, "columns.x.kind", "unknown key"},
		{"role missing", column("{type: integer}"), 2, "columns.x.role", "required"},
		{"null on insensitive", column("{role: insensitive, null-as: x}"), 2, "columns.x.null-as", "not allowed for an insensitive column"},
		{"null on identifier", column("{role: identifier, null-as: x}"), 2, "columns.x.null-as", "not allowed for an identifier column"},
		{"null type", column("{role: sensitive, null-as: [x]}"), 2, "columns.x.null-as", "expected the value a null is read as"},
		{"null null", column("{role: sensitive, null-as: ~}"), 2, "columns.x.null-as", "expected the value a null is read as"},
		{"role", column("{role: quasy}"), 2, "columns.x.role", "must be one of identifier, quasi, sensitive, insensitive"},
		{"type", column("{role: identifier, type: int}"), 2, "columns.x.type", "must be one of"},
		{"quasi without hierarchy", column("{role: quasi}"), 2, "columns.x.hierarchy", "required for a quasi-identifier"},
		{"identifier hierarchy", column("{role: identifier, hierarchy: {file: a.csv}}"), 2, "columns.x.hierarchy", "not allowed for an identifier column"},
		{"insensitive hierarchy", column("{role: insensitive, hierarchy: {file: a.csv}}"), 2, "columns.x.hierarchy", "not allowed for an insensitive column"},
		{"hierarchy type", column("{role: quasi, hierarchy: a.csv}"), 2, "columns.x.hierarchy", "expected a mapping"},
		{"hierarchy none", column("{role: quasi, hierarchy: {}}"), 2, "columns.x.hierarchy", "needs one of file, intervals, mask, date"},
		{"hierarchy two", column("{role: quasi, hierarchy: {file: a.csv, mask: {max: 1}}}"), 2, "columns.x.hierarchy", "only one of"},
		{"hierarchy file empty", column("{role: quasi, hierarchy: {file: ''}}"), 2, "columns.x.hierarchy.file", "must not be empty"},
		{"intervals on string", column("{role: quasi, hierarchy: {intervals: [5]}}"), 2, "columns.x.hierarchy.intervals", "needs a column of type integer or float"},
		{"intervals empty", column("{role: quasi, type: integer, hierarchy: {intervals: []}}"), 2, "columns.x.hierarchy.intervals", "must not be empty"},
		{"intervals negative", column("{role: quasi, type: integer, hierarchy: {intervals: [5, -10]}}"), 2, "columns.x.hierarchy.intervals", "widths must be positive"},
		{"intervals zero", column("{role: quasi, type: float, hierarchy: {intervals: [0]}}"), 2, "columns.x.hierarchy.intervals", "widths must be positive"},
		{"intervals decreasing", column("{role: quasi, type: integer, hierarchy: {intervals: [10, 5]}}"), 2, "columns.x.hierarchy.intervals", "strictly increasing"},
		{"intervals multiple", column("{role: quasi, type: integer, hierarchy: {intervals: [5, 12]}}"), 2, "columns.x.hierarchy.intervals", "multiple"},
		{"intervals float multiple", column("{role: quasi, type: float, hierarchy: {intervals: [0.1, 0.25]}}"), 2, "columns.x.hierarchy.intervals", "multiple"},
		{"intervals whole", column("{role: quasi, type: integer, hierarchy: {intervals: [2.5, 5]}}"), 2, "columns.x.hierarchy.intervals", "whole numbers"},
		{"intervals item type", column("{role: quasi, type: integer, hierarchy: {intervals: [five]}}"), 2, "columns.x.hierarchy.intervals[0]", "expected a number"},
		{"intervals NaN", column("{role: quasi, type: float, hierarchy: {intervals: [.nan]}}"), 2, "columns.x.hierarchy.intervals[0]", "finite number"},
		{"intervals Inf", column("{role: quasi, type: float, hierarchy: {intervals: [1, .inf]}}"), 2, "columns.x.hierarchy.intervals[1]", "finite number"},
		{"mask max", column("{role: quasi, hierarchy: {mask: {max: 0}}}"), 2, "columns.x.hierarchy.mask.max", "at least 1"},
		{"mask max huge", column("{role: quasi, hierarchy: {mask: {max: 1000000000}}}"), 2, "columns.x.hierarchy.mask.max", "at most 30"},
		{"mask max one over", column("{role: quasi, hierarchy: {mask: {max: 31}}}"), 2, "columns.x.hierarchy.mask.max", "at most 30"},
		{"intervals too many", column("{role: quasi, type: integer, hierarchy: {intervals: [1,2,4,8,16,32,64,128,256,512,1024,2048,4096,8192,16384,32768,65536,131072,262144,524288,1048576,2097152,4194304,8388608,16777216,33554432,67108864,134217728,268435456,536870912,1073741824]}}"), 2, "columns.x.hierarchy.intervals", "at most 30 widths"},
		{"mask max missing", column("{role: quasi, hierarchy: {mask: {from: left}}}"), 2, "columns.x.hierarchy.mask.max", "required"},
		{"mask from", column("{role: quasi, hierarchy: {mask: {from: middle, max: 2}}}"), 2, "columns.x.hierarchy.mask.from", "must be one of right, left"},
		{"date on string", column("{role: quasi, hierarchy: {date: [year]}}"), 2, "columns.x.hierarchy.date", "needs a column of type date"},
		{"date empty", column("{role: quasi, type: date, hierarchy: {date: []}}"), 2, "columns.x.hierarchy.date", "must not be empty"},
		{"date repeat", column("{role: quasi, type: date, hierarchy: {date: [month, month]}}"), 2, "columns.x.hierarchy.date[1]", "listed twice"},
		{"date order", column("{role: quasi, type: date, hierarchy: {date: [year, month]}}"), 2, "columns.x.hierarchy.date", "finest level first"},
		{"date unit", column("{role: quasi, type: date, hierarchy: {date: [week]}}"), 2, "columns.x.hierarchy.date[0]", "must be one of month, quarter, year, decade"},
		{"domain type", column("{role: insensitive, domain: F}"), 2, "columns.x.domain", "expected a list of values"},
		{"domain empty", column("{role: insensitive, domain: []}"), 2, "columns.x.domain", "must not be empty"},
		{"domain repeat", column("{role: insensitive, domain: [F, F]}"), 2, "columns.x.domain[1]", "listed twice"},
		{"domain item", column("{role: insensitive, domain: [[a]]}"), 2, "columns.x.domain[0]", "expected a value"},
		{"domain null item", column("{role: insensitive, domain: [a, ~]}"), 2, "columns.x.domain[1]", "expected a value, got null"},
		{"domain range order", column("{role: insensitive, type: integer, domain: {range: [10, 0], width: 1}}"), 2, "columns.x.domain.range", "lo must be less than hi"},
		{"domain range size", column("{role: insensitive, type: integer, domain: {range: [0], width: 1}}"), 2, "columns.x.domain.range", "two numbers"},
		{"domain width missing", column("{role: insensitive, type: integer, domain: {range: [0, 10]}}"), 2, "columns.x.domain.width", "required"},
		{"domain width", column("{role: insensitive, type: integer, domain: {range: [0, 10], width: 0}}"), 2, "columns.x.domain.width", "must be positive"},
		{"domain mapping empty", column("{role: insensitive, domain: {}}"), 2, "columns.x.domain", "needs range and width"},
		{"domain level negative", column("{role: sensitive, hierarchy: {file: a.csv}, domain: {hierarchy-level: -1}}"), 2, "columns.x.domain.hierarchy-level", "at least 0"},
		{"domain level without hierarchy", column("{role: sensitive, domain: {hierarchy-level: 0}}"), 2, "columns.x.domain.hierarchy-level", "requires a hierarchy"},
		{"domain level and width", column("{role: sensitive, hierarchy: {file: a.csv}, domain: {hierarchy-level: 0, width: 2}}"), 2, "columns.x.domain", "cannot be combined with width"},
		{"domain unknown key", column("{role: insensitive, domain: {values: [a]}}"), 2, "columns.x.domain.values", "unknown key"},

		// privacy
		{"privacy type", "privacy: 5\n" + cols, 1, "privacy", "expected a mapping"},
		{"k string", "privacy: {k: five}\n" + cols, 1, "privacy.k", `expected an integer, got string "five"`},
		{"k float", "privacy: {k: 2.5}\n" + cols, 1, "privacy.k", "expected an integer"},
		{"k zero", "privacy: {k: 0}\n" + cols, 1, "privacy.k", "at least 1"},
		{"k huge", "privacy: {k: 99999999999999999999}\n" + cols, 1, "privacy.k", "expected an integer"},
		{"suppression list", "privacy: {suppression: [1]}\n" + cols, 1, "privacy.suppression", "expected a number, got a list"},
		{"suppression high", "privacy: {suppression: 1.5}\n" + cols, 1, "privacy.suppression", "between 0 and 1"},
		{"suppression negative", "privacy: {suppression: -0.1}\n" + cols, 1, "privacy.suppression", "between 0 and 1"},
		{"suppression NaN", "privacy: {suppression: .NaN}\n" + cols, 1, "privacy.suppression", "finite number"},
		{"suppression quoted", "privacy: {suppression: '0.1'}\n" + cols, 1, "privacy.suppression", "expected a number"},
		{"l-diversity type", "privacy: {l-diversity: 3}\n" + cols, 1, "privacy.l-diversity", "expected a mapping or a list of mappings"},
		{"l-diversity empty", "privacy: {l-diversity: []}\n" + cols, 1, "privacy.l-diversity", "must not be empty"},
		{"l-diversity item type", "privacy: {l-diversity: [diag]}\n" + cols, 1, "privacy.l-diversity[0]", "expected a mapping"},
		{"l-diversity unknown key", "privacy: {l-diversity: {column: diag, variant: distinct, l: 2, k: 1}}\n" + cols, 1, "privacy.l-diversity.k", "unknown key"},
		{"l-diversity column missing", "privacy: {l-diversity: {variant: distinct, l: 2}}\n" + cols, 1, "privacy.l-diversity.column", "required"},
		{"l-diversity column unknown", "privacy: {l-diversity: {column: dx, variant: distinct, l: 2}}\n" + cols, 1, "privacy.l-diversity.column", `unknown column "dx"`},
		{"l-diversity column not sensitive", "privacy: {l-diversity: {column: age, variant: distinct, l: 2}}\n" + cols, 1, "privacy.l-diversity.column", "not sensitive"},
		{"l-diversity variant missing", "privacy: {l-diversity: {column: diag, l: 2}}\n" + cols, 1, "privacy.l-diversity.variant", "required"},
		{"l-diversity variant", "privacy: {l-diversity: {column: diag, variant: shannon, l: 2}}\n" + cols, 1, "privacy.l-diversity.variant", "must be one of distinct, entropy, recursive"},
		{"l missing", "privacy: {l-diversity: {column: diag, variant: entropy}}\n" + cols, 1, "privacy.l-diversity.l", "required"},
		{"l small", "privacy: {l-diversity: {column: diag, variant: entropy, l: 0.5}}\n" + cols, 1, "privacy.l-diversity.l", "at least 1"},
		{"l distinct whole", "privacy: {l-diversity: {column: diag, variant: distinct, l: 2.5}}\n" + cols, 1, "privacy.l-diversity.l", "whole number"},
		{"l recursive whole", "privacy: {l-diversity: {column: diag, variant: recursive, l: 2.5, c: 1}}\n" + cols, 1, "privacy.l-diversity.l", "whole number"},
		{"c missing", "privacy: {l-diversity: {column: diag, variant: recursive, l: 2}}\n" + cols, 1, "privacy.l-diversity.c", "required for the recursive variant"},
		{"c zero", "privacy: {l-diversity: {column: diag, variant: recursive, l: 2, c: 0}}\n" + cols, 1, "privacy.l-diversity.c", "must be positive"},
		{"c forbidden", "privacy:\n  l-diversity:\n    - {column: diag, variant: distinct, l: 2}\n    - {column: drug, variant: entropy, l: 2, c: 1}\n" + cols, 4, "privacy.l-diversity[1].c", "only allowed for the recursive variant"},
		{"estimator not entropy", "privacy: {l-diversity: {column: diag, variant: distinct, l: 2, estimator: grassberger}}\n" + cols, 1, "privacy.l-diversity.estimator", "only allowed for the entropy variant"},
		{"risk enforcement unknown", "privacy: {k: 2, average-risk: 0.1, risk-enforcement: drop}\n" + cols, 1, "privacy.risk-enforcement", "must be one of suppress, measure"},
		{"estimator unknown", "privacy: {l-diversity: {column: diag, variant: entropy, l: 2, estimator: miller}}\n" + cols, 1, "privacy.l-diversity.estimator", "must be one of shannon, grassberger"},
		{"aggregate not loss", "search: {metric: discernibility, aggregate: geometric}\n" + cols, 1, "search.aggregate", "only allowed with metric: loss"},
		{"weights not loss", "search: {metric: height, weights: {age: 2}}\n" + cols, 1, "search.weights", "only allowed with metric: loss"},
		{"weights unknown column", "search: {weights: {agee: 2}}\n" + cols, 1, "search.weights.agee", `unknown column "agee"`},
		{"weights not quasi", "search: {weights: {diag: 2}}\n" + cols, 1, "search.weights.diag", "not a quasi-identifier"},
		{"weights zero", "search: {weights: {age: 0}}\n" + cols, 1, "search.weights.age", "must be above 0"},
		{"aggregate unknown", "search: {aggregate: median}\n" + cols, 1, "search.aggregate", "must be one of arithmetic, geometric, sum, max"},
		{"subset not identifier", "privacy: {subset: {column: age}, k-map: {k: 3}}\n" + cols, 1, "privacy.subset.column", "must have role identifier"},
		{"subset unknown column", "privacy: {subset: {column: nope}, k-map: {k: 3}}\n" + cols, 1, "privacy.subset.column", `unknown column "nope"`},
		{"unit not identifier", "privacy: {k: 2, privacy-unit: {column: age}}\n" + cols, 1, "privacy.privacy-unit.column", "must have role identifier, so that the id is never released"},
		{"unit unknown column", "privacy: {k: 2, privacy-unit: {column: nope}}\n" + cols, 1, "privacy.privacy-unit.column", `unknown column "nope"`},
		{"unit without column", "privacy: {k: 2, privacy-unit: {pseudonym: {}}}\n" + cols, 1, "privacy.privacy-unit.column", "required"},
		{"unit pseudonym unknown key", "privacy: {k: 2, privacy-unit: {column: id, pseudonym: {key: x}}}\n" + cols, 1, "privacy.privacy-unit.pseudonym.key", "unknown key"},
		{"unit empty key file", "privacy: {k: 2, privacy-unit: {column: id, pseudonym: {key-file: \"\"}}}\n" + cols, 1, "privacy.privacy-unit.pseudonym.key-file", "must not be empty"},
		{"subset without model", "privacy: {k: 2, subset: {column: id}}\n" + cols, 1, "privacy.subset", "needs delta-presence, k-map or a journalist's profitability"},
		{"delta without subset", "privacy: {delta-presence: {max: 0.5}}\n" + cols, 1, "privacy.delta-presence", "needs privacy.subset"},
		{"delta max missing", "privacy: {subset: {column: id}, delta-presence: {min: 0.1}}\n" + cols, 1, "privacy.delta-presence.max", "required"},
		{"delta min above max", "privacy: {subset: {column: id}, delta-presence: {min: 0.6, max: 0.5}}\n" + cols, 1, "privacy.delta-presence.max", "at least min"},
		{"delta max zero", "privacy: {subset: {column: id}, delta-presence: {max: 0}}\n" + cols, 1, "privacy.delta-presence.max", "above 0"},
		{"k-map zero", "privacy: {subset: {column: id}, k-map: {k: 0}}\n" + cols, 1, "privacy.k-map.k", "at least 1"},
		{"k-map neither", "privacy: {k-map: {k: 3}}\n" + cols, 1, "privacy.k-map", "needs privacy.subset"},
		{"k-map estimator with subset", "privacy: {subset: {column: id}, k-map: {k: 3, estimator: poisson}}\n" + cols, 1, "privacy.k-map.estimator", "not with privacy.subset"},
		{"k-map estimator unknown", "privacy: {k-map: {k: 3, estimator: binomial}}\n" + cols, 1, "privacy.k-map.estimator", "must be one of poisson, zero-truncated-poisson"},
		{"k-map estimator no risk", "privacy: {k-map: {k: 3, estimator: poisson}}\n" + cols, 1, "privacy.k-map", "needs the population"},
		{"subset mondrian", "privacy: {subset: {column: id}, k-map: {k: 3}}\nsearch: {algorithm: mondrian}\n" + cols, 2, "search.algorithm", "mondrian cannot decide"},
		{"dp no node", "privacy: {differential-privacy: {epsilon: 1, delta: 1e-6}}\n" + cols, 1, "privacy.differential-privacy", "needs one of generalization"},
		{"dp two nodes", "privacy: {differential-privacy: {epsilon: 1, delta: 1e-6, degree: low, search: {epsilon: 0.1}}}\n" + cols, 1, "privacy.differential-privacy.search", "not with degree"},
		{"dp epsilon missing", "privacy: {differential-privacy: {delta: 1e-6, degree: low}}\n" + cols, 1, "privacy.differential-privacy.epsilon", "required"},
		{"dp epsilon high", "privacy: {differential-privacy: {epsilon: 6, delta: 1e-6, degree: low}}\n" + cols, 1, "privacy.differential-privacy.epsilon", "must be from 0.001 to 5, got 6"},
		{"dp delta one", "privacy: {differential-privacy: {epsilon: 1, delta: 1, degree: low}}\n" + cols, 1, "privacy.differential-privacy.delta", "from 1e-20 and below 1"},
		{"dp degree unknown", "privacy: {differential-privacy: {epsilon: 1, delta: 1e-6, degree: extreme}}\n" + cols, 1, "privacy.differential-privacy.degree", "must be one of low, low-medium, medium, medium-high, high"},
		{"dp node incomplete", "privacy: {differential-privacy: {epsilon: 1, delta: 1e-6, generalization: {age: 1}}}\n" + cols, 1, "privacy.differential-privacy.generalization", `names no level for quasi-identifier "sex"`},
		{"dp node not quasi", "privacy: {differential-privacy: {epsilon: 1, delta: 1e-6, generalization: {age: 1, sex: 0, diag: 1}}}\n" + cols, 1, "privacy.differential-privacy.generalization.diag", "not a quasi-identifier"},
		{"dp search all", "privacy: {differential-privacy: {epsilon: 1, delta: 1e-6, search: {epsilon: 1}}}\n" + cols, 1, "privacy.differential-privacy.epsilon", "leaves nothing to the anonymization"},
		{"dp search little left", "privacy: {differential-privacy: {epsilon: 1, delta: 1e-6, search: {epsilon: 0.9995}}}\n" + cols, 1, "privacy.differential-privacy.epsilon", "leaves 0.0005 to the anonymization"},
		{"dp search steps", "privacy: {differential-privacy: {epsilon: 1, delta: 1e-6, search: {epsilon: 0.1, steps: 0}}}\n" + cols, 1, "privacy.differential-privacy.search.steps", "from 1 to 100000"},
		{"dp with k", "privacy: {k: 5, differential-privacy: {epsilon: 1, delta: 1e-6, degree: low}}\n" + cols, 1, "privacy.k", "not with privacy.differential-privacy"},
		{"dp with l", "privacy:\n  differential-privacy: {epsilon: 1, delta: 1e-6, degree: low}\n  l-diversity: {column: diag, variant: distinct, l: 2}\n" + cols, 3, "privacy.l-diversity", "not with privacy.differential-privacy"},
		{"min-levels not quasi", "search: {min-levels: {diag: 1}}\n" + cols, 1, "search.min-levels.diag", "not a quasi-identifier"},
		{"max-levels negative", "search: {max-levels: {age: -1}}\n" + cols, 1, "search.max-levels.age", "at least 0"},
		{"max below min", "search: {min-levels: {age: 2}, max-levels: {age: 1}}\n" + cols, 1, "search.max-levels.age", "below min-levels' 2"},
		{"gs-factor not loss", "search: {metric: aecs, gs-factor: 0.3}\n" + cols, 1, "search.gs-factor", "only allowed with metric: loss, entropy"},
		{"gs-factor range", "search: {gs-factor: 1.5}\n" + cols, 1, "search.gs-factor", "between 0 and 1"},
		{"l-diversity twice", "privacy:\n  l-diversity:\n    - {column: diag, variant: distinct, l: 2}\n    - {column: diag, variant: entropy, l: 2}\n" + cols, 4, "privacy.l-diversity[1]", "already has"},
		{"average-risk zero", "privacy: {average-risk: 0}\n" + cols, 1, "privacy.average-risk", "above 0 and at most 1"},
		{"highest-risk high", "privacy: {highest-risk: 1.5}\n" + cols, 1, "privacy.highest-risk", "above 0 and at most 1"},
		{"records-at-risk type", "privacy: {records-at-risk: 0.2}\n" + cols, 1, "privacy.records-at-risk", "expected a mapping"},
		{"records-at-risk threshold", "privacy: {records-at-risk: {max: 0.1}}\n" + cols, 1, "privacy.records-at-risk.threshold", "required"},
		{"records-at-risk max", "privacy: {records-at-risk: {threshold: 0.2, max: -1}}\n" + cols, 1, "privacy.records-at-risk.max", "between 0 and 1"},
		{"records-at-risk key", "privacy: {records-at-risk: {threshold: 0.2, max: 0, share: 1}}\n" + cols, 1, "privacy.records-at-risk.share", "unknown key"},
		{"uniqueness model", "privacy: {population-uniqueness: {max: 0.1, model: poisson}}\nrisk: {population: 10}\n" + cols, 1, "privacy.population-uniqueness.model", "must be one of dankar, pitman, zayatz, snb"},
		{"uniqueness without population", "privacy: {population-uniqueness: {max: 0.1}}\n" + cols, 1, "privacy.population-uniqueness", "needs the population"},
		{"risk empty", "risk: {}\n" + cols, 1, "risk", "needs population or sampling-fraction"},
		{"risk both", "risk: {population: 10, sampling-fraction: 0.5}\n" + cols, 1, "risk.sampling-fraction", "not both"},
		{"risk population", "risk: {population: 0}\n" + cols, 1, "risk.population", "at least 1"},
		{"risk fraction", "risk: {sampling-fraction: 0}\n" + cols, 1, "risk.sampling-fraction", "above 0 and at most 1"},
		{"risk population huge", "risk: {population: 9223372036854775807}\n" + cols, 1, "risk.population", "at most 1000000000000"},
		{"risk population above bound", "risk: {population: 1000000000001}\n" + cols, 1, "risk.population", "at most 1000000000000"},
		{"risk population beyond int64", "risk: {population: 99999999999999999999}\n" + cols, 1, "risk.population", "expected an integer"},
		{"risk fraction tiny", "risk: {sampling-fraction: 1e-16}\n" + cols, 1, "risk.sampling-fraction", "at least 1e-09"},
		{"risk fraction denormal", "risk: {sampling-fraction: 5e-324}\n" + cols, 1, "risk.sampling-fraction", "at least 1e-09"},
		{"risk key", "risk: {fraction: 0.1}\n" + cols, 1, "risk.fraction", "unknown key"},
		{"t-closeness column missing", "privacy: {t-closeness: {t: 0.2}}\n" + cols, 1, "privacy.t-closeness.column", "required"},
		{"t-closeness column not sensitive", "privacy: {t-closeness: {column: stay, t: 0.2}}\n" + cols, 1, "privacy.t-closeness.column", "not sensitive"},
		{"t missing", "privacy: {t-closeness: {column: diag}}\n" + cols, 1, "privacy.t-closeness.t", "required"},
		{"t negative", "privacy: {t-closeness: {column: diag, t: -0.1}}\n" + cols, 1, "privacy.t-closeness.t", "at least 0"},
		{"t distance", "privacy: {t-closeness: {column: diag, t: 0.1, distance: cosine}}\n" + cols, 1, "privacy.t-closeness.distance", "must be one of equal, ordered, hierarchical"},
		{"t hierarchical", "privacy:\n  t-closeness: [{column: diag, t: 0.1}, {column: drug, t: 0.1, distance: hierarchical}]\n" + cols, 2, "privacy.t-closeness[1].distance", `needs a hierarchy on column "drug"`},
		{"t order without ordered", "privacy: {t-closeness: {column: diag, t: 0.1, order: [a, b]}}\n" + cols, 1, "privacy.t-closeness.order", "only allowed with distance: ordered"},
		{"t ordered string without order", "privacy: {t-closeness: {column: diag, t: 0.1, distance: ordered}}\n" + cols, 1, "privacy.t-closeness.distance", "needs order:"},
		{"t order twice", "privacy: {t-closeness: {column: diag, t: 0.1, distance: ordered, order: [a, b, a]}}\n" + cols, 1, "privacy.t-closeness.order[2]", "listed twice"},
		{"t order empty", "privacy: {t-closeness: {column: diag, t: 0.1, distance: ordered, order: []}}\n" + cols, 1, "privacy.t-closeness.order", ""},
		{"t-closeness twice", "privacy:\n  t-closeness: [{column: diag, t: 0.1}, {column: diag, t: 0.2}]\n" + cols, 2, "privacy.t-closeness[1]", "already has"},

		// search
		{"search type", "search: optimal\n" + cols, 1, "search", "expected a mapping"},
		{"search algorithm", "search: {algorithm: greedy}\n" + cols, 1, "search.algorithm", "must be one of optimal, mondrian"},
		{"search metric", "search: {metric: prec}\n" + cols, 1, "search.metric", "must be one of loss, discernibility, discernibility-star, height, precision, aecs, entropy, entropy-monotone, entropy-loss, ncp"},
		{"search unknown", "search: {algorithm: optimal, prune: false}\n" + cols, 1, "search.prune", "unknown key"},

		// dp
		{"dp type", "dp: [1]\n" + cols, 1, "dp", "expected a mapping"},
		{"epsilon-total missing", "dp: {outputs: [{name: o, epsilon: 1, histogram: [age]}]}\n" + cols, 1, "dp.epsilon-total", "required"},
		{"epsilon-total zero", "dp: {epsilon-total: 0, outputs: [{name: o, epsilon: 1, histogram: [age]}]}\n" + cols, 1, "dp.epsilon-total", "must be positive"},
		{"epsilon-total type", "dp: {epsilon-total: one, outputs: [{name: o, epsilon: 1, histogram: [age]}]}\n" + cols, 1, "dp.epsilon-total", "expected a number"},
		{"epsilon-total overflow", "dp: {epsilon-total: 1e400, outputs: [{name: o, epsilon: 1, histogram: [age]}]}\n" + cols, 1, "dp.epsilon-total", "expected a number"},
		{"delta-total one", "dp: {epsilon-total: 1, delta-total: 1, outputs: [{name: o, epsilon: 1, histogram: [age]}]}\n" + cols, 1, "dp.delta-total", "less than 1"},
		{"delta-total negative", "dp: {epsilon-total: 1, delta-total: -1e-6, outputs: [{name: o, epsilon: 1, histogram: [age]}]}\n" + cols, 1, "dp.delta-total", "at least 0"},
		{"neighbours", "dp: {epsilon-total: 1, neighbours: swap, outputs: [{name: o, epsilon: 1, histogram: [age]}]}\n" + cols, 1, "dp.neighbours", "must be one of add-remove, replace-one"},
		{"privacy-unit column", "dp: {epsilon-total: 1, privacy-unit: {column: pid, max-rows-per-unit: 1}, outputs: [{name: o, epsilon: 1, histogram: [age]}]}\n" + cols, 1, "dp.privacy-unit.column", `unknown column "pid"`},
		{"privacy-unit column missing", "dp: {epsilon-total: 1, privacy-unit: {max-rows-per-unit: 1}, outputs: [{name: o, epsilon: 1, histogram: [age]}]}\n" + cols, 1, "dp.privacy-unit.column", "required"},
		{"max-rows-per-unit", "dp: {epsilon-total: 1, privacy-unit: {column: id, max-rows-per-unit: 0}, outputs: [{name: o, epsilon: 1, histogram: [age]}]}\n" + cols, 1, "dp.privacy-unit.max-rows-per-unit", "at least 1"},
		{"max-cells-per-unit", "dp: {epsilon-total: 1, privacy-unit: {column: id, max-cells-per-unit: 1.5}, outputs: [{name: o, epsilon: 1, histogram: [age]}]}\n" + cols, 1, "dp.privacy-unit.max-cells-per-unit", "expected an integer"},
		{"outputs empty", "dp: {epsilon-total: 1, outputs: []}\n" + cols, 1, "dp.outputs", "must not be empty"},
		{"outputs mapping", "dp: {epsilon-total: 1, outputs: {name: a}}\n" + cols, 1, "dp.outputs", "expected a list"},
		{"output unknown key", output("{name: a, epsilon: 1, histogram: [age], noise: 1}"), 4, "dp.outputs[0].noise", "unknown key"},
		{"output name missing", output("{epsilon: 1, histogram: [age]}"), 4, "dp.outputs[0].name", "required"},
		{"output name path", output("{name: ../a, epsilon: 1, histogram: [age]}"), 4, "dp.outputs[0].name", "file name"},
		{"output name twice", output("{name: a, epsilon: 1, histogram: [age]}\n    - {name: a, epsilon: 1, histogram: [sex]}"), 5, "dp.outputs[1].name", `output "a" is named twice`},
		{"epsilon missing", output("{name: a, histogram: [age]}"), 4, "dp.outputs[0].epsilon", "required"},
		{"epsilon zero", output("{name: a, epsilon: 0, histogram: [age]}"), 4, "dp.outputs[0].epsilon", "must be at least 1e-09"},
		{"epsilon tiny", output("{name: a, epsilon: 1e-300, histogram: [age]}"), 4, "dp.outputs[0].epsilon", "must be at least 1e-09"},
		{"gaussian epsilon huge", output("{name: a, epsilon: 1000, delta: 1e-7, mechanism: gaussian, histogram: [age]}"), 4, "dp.outputs[0].epsilon", "at most 500 for the gaussian mechanism"},
		{"delta negative", output("{name: a, epsilon: 1, delta: -1, histogram: [age]}"), 4, "dp.outputs[0].delta", "at least 0"},
		{"mechanism", output("{name: a, epsilon: 1, mechanism: exponential, histogram: [age]}"), 4, "dp.outputs[0].mechanism", "must be one of laplace, gaussian"},
		{"gaussian without delta", output("{name: a, epsilon: 1, mechanism: gaussian, histogram: [age]}"), 4, "dp.outputs[0].delta", "must be positive for the gaussian mechanism"},
		{"gaussian zero delta", output("{name: a, epsilon: 1, delta: 0, mechanism: gaussian, histogram: [age]}"), 4, "dp.outputs[0].delta", "gaussian"},
		{"post", output("{name: a, epsilon: 1, post: [smooth], histogram: [age]}"), 4, "dp.outputs[0].post[0]", "must be one of clamp, round, consistent"},
		{"post twice", output("{name: a, epsilon: 1, post: [clamp, clamp], histogram: [age]}"), 4, "dp.outputs[0].post[1]", "listed twice"},
		{"output format", output("{name: a, epsilon: 1, format: arrow, histogram: [age]}"), 4, "dp.outputs[0].format", "must be one of csv, parquet"},
		{"output kind none", output("{name: a, epsilon: 1}"), 4, "dp.outputs[0]", "needs one of histogram, marginals, aggregate, synthetic"},
		{"output kind two", output("{name: a, epsilon: 1, histogram: [age], marginals: {columns: [age], way: 1}}"), 4, "dp.outputs[0]", "only one of"},
		{"histogram empty", output("{name: a, epsilon: 1, histogram: []}"), 4, "dp.outputs[0].histogram", "must not be empty"},
		{"histogram type", output("{name: a, epsilon: 1, histogram: age}"), 4, "dp.outputs[0].histogram", "expected a list"},
		{"histogram column", output("{name: a, epsilon: 1, histogram: [age, nope]}"), 4, "dp.outputs[0].histogram[1]", `unknown column "nope"`},
		{"histogram twice", output("{name: a, epsilon: 1, histogram: [age, age]}"), 4, "dp.outputs[0].histogram[1]", "listed twice"},
		{"marginals way high", output("{name: a, epsilon: 1, marginals: {columns: [age, sex], way: 3}}"), 4, "dp.outputs[0].marginals.way", "between 1 and the number of columns (2)"},
		{"marginals way zero", output("{name: a, epsilon: 1, marginals: {columns: [age, sex], way: 0}}"), 4, "dp.outputs[0].marginals.way", "between 1"},
		{"marginals way missing", output("{name: a, epsilon: 1, marginals: {columns: [age, sex]}}"), 4, "dp.outputs[0].marginals.way", "required"},
		{"marginals columns", output("{name: a, epsilon: 1, marginals: {columns: [age, zz], way: 1}}"), 4, "dp.outputs[0].marginals.columns[1]", "unknown column"},
		{"aggregate column missing", output("{name: a, epsilon: 1, aggregate: {stats: [count]}}"), 4, "dp.outputs[0].aggregate.column", "required"},
		{"aggregate column", output("{name: a, epsilon: 1, aggregate: {column: los, stats: [count]}}"), 4, "dp.outputs[0].aggregate.column", "unknown column"},
		{"aggregate group-by", output("{name: a, epsilon: 1, aggregate: {group-by: [dx], column: stay, stats: [count]}}"), 4, "dp.outputs[0].aggregate.group-by[0]", "unknown column"},
		{"aggregate stats missing", output("{name: a, epsilon: 1, aggregate: {column: stay}}"), 4, "dp.outputs[0].aggregate.stats", "required"},
		{"aggregate stats", output("{name: a, epsilon: 1, aggregate: {column: stay, stats: [median], bounds: [0, 1]}}"), 4, "dp.outputs[0].aggregate.stats[0]", "must be one of count, sum, mean, quantiles"},
		{"aggregate bounds", output("{name: a, epsilon: 1, aggregate: {column: stay, stats: [sum], bounds: [5, 1]}}"), 4, "dp.outputs[0].aggregate.bounds", "lo must be less than hi"},
		{"aggregate bounds missing", output("{name: a, epsilon: 1, aggregate: {column: stay, stats: [count, mean]}}"), 4, "dp.outputs[0].aggregate.bounds", "required"},
		{"max-rows-per-unit huge", "dp: {epsilon-total: 1, privacy-unit: {column: id, max-rows-per-unit: 6148914691236517206}, outputs: [{name: o, epsilon: 1, histogram: [age]}]}\n" + cols, 1, "dp.privacy-unit.max-rows-per-unit", "at most 1000000"},
		{"privacy-unit no cap", "dp: {epsilon-total: 1, privacy-unit: {column: id}, outputs: [{name: o, epsilon: 1, histogram: [age]}]}\n" + cols, 1, "dp.privacy-unit", "needs max-rows-per-unit or max-cells-per-unit"},
		{"privacy-unit seed", "dp: {epsilon-total: 1, privacy-unit: {column: id, max-rows-per-unit: 2, seed: -1}, outputs: [{name: o, epsilon: 1, histogram: [age]}]}\n" + cols, 1, "dp.privacy-unit.seed", "at least 0"},
		{"output other", output("{name: a, epsilon: 1, other: yes please, histogram: [age]}"), 4, "dp.outputs[0].other", "expected a boolean"},
		{"aggregate quantiles without stat", output("{name: a, epsilon: 1, aggregate: {column: stay, stats: [mean], bounds: [0, 9], quantiles: [0.5]}}"), 4, "dp.outputs[0].aggregate.quantiles", "needs quantiles among the stats"},
		{"aggregate quantile rank", output("{name: a, epsilon: 1, aggregate: {column: stay, stats: [quantiles], bounds: [0, 9], quantiles: [0.5, 1.5]}}"), 4, "dp.outputs[0].aggregate.quantiles[1]", "between 0 and 1"},
		{"synthetic columns missing", output("{name: a, epsilon: 1, synthetic: {rows: same}}"), 4, "dp.outputs[0].synthetic.columns", "required"},
		{"synthetic column", output("{name: a, epsilon: 1, synthetic: {columns: [age, x]}}"), 4, "dp.outputs[0].synthetic.columns[1]", "unknown column"},
		{"synthetic rows zero", output("{name: a, epsilon: 1, synthetic: {columns: [age], rows: 0}}"), 4, "dp.outputs[0].synthetic.rows", "at least 1"},
		{"synthetic rows huge", output("{name: a, epsilon: 1, synthetic: {columns: [age], rows: 100000001}}"), 4, "dp.outputs[0].synthetic.rows", "at most 100000000"},
		{"synthetic rows word", output("{name: a, epsilon: 1, synthetic: {columns: [age], rows: all}}"), 4, "dp.outputs[0].synthetic.rows", "positive integer or same"},
		{"synthetic method", output("{name: a, epsilon: 1, synthetic: {columns: [age], method: gan}}"), 4, "dp.outputs[0].synthetic.method", "must be one of aim, mst"},
		{"synthetic workload way", output("{name: a, epsilon: 1, synthetic: {columns: [age, sex], workload: {way: 3}}}"), 4, "dp.outputs[0].synthetic.workload.way", "between 1"},
		{"synthetic workload type", output("{name: a, epsilon: 1, synthetic: {columns: [age, sex], workload: 2}}"), 4, "dp.outputs[0].synthetic.workload", "expected a mapping {way: n} or a list"},
		{"synthetic workload column", output("{name: a, epsilon: 1, synthetic: {columns: [age, sex], workload: [[age, nope]]}}"), 4, "dp.outputs[0].synthetic.workload[0][1]", "unknown column"},
		{"synthetic without delta", output("{name: a, epsilon: 1, synthetic: {columns: [age]}}"), 4, "dp.outputs[0].delta", "must be positive for a synthetic output"},
		{"synthetic mechanism", output("{name: a, epsilon: 1, delta: 1e-9, mechanism: laplace, synthetic: {columns: [age]}}"), 4, "dp.outputs[0].mechanism", "takes no mechanism"},
		{"synthetic post", output("{name: a, epsilon: 1, delta: 1e-9, post: [round], synthetic: {columns: [age]}}"), 4, "dp.outputs[0].post", "takes no post"},
		{"synthetic model size", output("{name: a, epsilon: 1, delta: 1e-9, synthetic: {columns: [age], max-model-size: 0}}"), 4, "dp.outputs[0].synthetic.max-model-size", "at least 1"},
		{"synthetic model size huge", output("{name: a, epsilon: 1, delta: 1e-9, synthetic: {columns: [age], max-model-size: 1e12}}"), 4, "dp.outputs[0].synthetic.max-model-size", ""},
		{"synthetic workload outside", output("{name: a, epsilon: 1, synthetic: {columns: [age, sex], workload: [[age], [sex, diag]]}}"), 4, "dp.outputs[0].synthetic.workload[1][1]", "not among the synthetic columns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tt.src), "test.yaml", "/cfg")
			if err == nil {
				t.Fatalf("Parse succeeded, want an error (%+v)", cfg)
			}
			if cfg != nil {
				t.Errorf("Parse returned a configuration with the error %v", err)
			}
			if !errors.Is(err, fault.ErrBadInput) {
				t.Errorf("error %q does not match fault.ErrBadInput", err)
			}
			prefix := fmt.Sprintf("test.yaml:%d: ", tt.line)
			if tt.path != "" {
				prefix += tt.path + ": "
			}
			if msg := err.Error(); !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, tt.msg) {
				t.Errorf("error %q, want prefix %q and %q", msg, prefix, tt.msg)
			}
			// One mistake is one error: what depends on the part in error is not
			// reported as a mistake of its own.
			if list := (*ErrorList)(nil); errors.As(err, &list) {
				t.Errorf("one mistake gave %d errors:\n%v", list.Len(), err)
			}
		})
	}
}

// TestParseNoName checks the messages of a configuration parsed without a name.
func TestParseNoName(t *testing.T) {
	_, err := Parse([]byte("columns: {}\n"), "", "")
	if !errors.Is(err, fault.ErrBadInput) || !strings.HasPrefix(err.Error(), "configuration:1: columns: ") {
		t.Errorf("error %v", err)
	}
}

// TestParseSyntaxWithoutLine checks decoder errors that carry no line number.
func TestParseSyntaxWithoutLine(t *testing.T) {
	for _, src := range []string{"columns: *nope\n", "\t columns: 1\n"} {
		_, err := Parse([]byte(src), "test.yaml", "")
		if !errors.Is(err, fault.ErrBadInput) || !strings.HasPrefix(err.Error(), "test.yaml") || !strings.Contains(err.Error(), "syntax error") {
			t.Errorf("Parse(%q) = %v, want a bad-input syntax error naming the file", src, err)
		}
	}
}

// TestParseKDefault: k is 1 when only other models are given (and says so), absent
// when no model is, and as given otherwise.
func TestParseKDefault(t *testing.T) {
	cols := "columns:\n  zip: {role: quasi, hierarchy: {mask: {max: 2}}}\n  diag: {role: sensitive}\n"
	tests := []struct {
		privacy string
		k       int
		def     bool
	}{
		{"privacy: {suppression: 0.1}", 0, false},
		{"privacy: {l-diversity: {column: diag, variant: distinct, l: 2}}", 1, true},
		{"privacy: {average-risk: 0.1}", 1, true},
		{"privacy: {k: 3, average-risk: 0.1}", 3, false},
	}
	for _, tt := range tests {
		cfg, err := Parse([]byte(cols+tt.privacy+"\n"), "", "")
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Privacy.K != tt.k || cfg.Privacy.KDefault != tt.def {
			t.Errorf("%s: k %d (default %v), want %d (%v)", tt.privacy, cfg.Privacy.K, cfg.Privacy.KDefault, tt.k, tt.def)
		}
	}
}

// TestParsePopulationModels: the research subset, δ-presence and k-map parse as given,
// with k 1 by default and the estimator's significance 0.01 by default.
func TestParsePopulationModels(t *testing.T) {
	cols := "columns:\n  pid: {role: identifier}\n  zip: {role: quasi, hierarchy: {mask: {max: 2}}}\n"
	cfg, err := Parse([]byte(cols+"privacy: {subset: {column: pid}, delta-presence: {min: 0.1, max: 0.6}, k-map: {k: 4}}\n"), "", "")
	if err != nil {
		t.Fatal(err)
	}
	pr := cfg.Privacy
	if pr.Subset == nil || pr.Subset.Column != "pid" || *pr.DeltaPresence != (DeltaPresence{Min: 0.1, Max: 0.6}) || *pr.KMap != (KMap{K: 4}) || pr.K != 1 || !pr.KDefault {
		t.Errorf("parsed %+v %+v %+v k=%d default=%v", pr.Subset, pr.DeltaPresence, pr.KMap, pr.K, pr.KDefault)
	}
	cfg, err = Parse([]byte(cols+"privacy: {k: 2, k-map: {k: 5, estimator: zero-truncated-poisson}}\nrisk: {sampling-fraction: 0.1}\n"), "", "")
	if err != nil {
		t.Fatal(err)
	}
	if km := cfg.Privacy.KMap; km.K != 5 || km.Estimator == nil || *km.Estimator != risk.ZeroTruncatedPoisson || km.Significance != 0.01 || cfg.Privacy.Subset != nil {
		t.Errorf("parsed %+v", km)
	}
}

// TestParseUnit: privacy.privacy-unit names its identifier column, and a pseudonym's key
// file is resolved against the configuration's folder.
func TestParseUnit(t *testing.T) {
	cols := "columns:\n  pid: {role: identifier}\n  zip: {role: quasi, hierarchy: {mask: {max: 2}}}\n"
	tests := []struct {
		name, privacy string
		want          Unit
	}{
		{"column", "privacy: {k: 2, privacy-unit: {column: pid}}\n", Unit{Column: "pid"}},
		{"random key", "privacy: {k: 2, privacy-unit: {column: pid, pseudonym: {}}}\n", Unit{Column: "pid", Pseudonym: &Pseudonym{}}},
		{"key file", "privacy: {k: 2, privacy-unit: {column: pid, pseudonym: {key-file: keys/p.key}}}\n", Unit{Column: "pid", Pseudonym: &Pseudonym{KeyFile: filepath.Join("/etc/cfg", "keys/p.key")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(cols+tt.privacy), "c.yaml", "/etc/cfg")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg.Privacy.Unit, &tt.want) {
				t.Errorf("parsed %+v, want %+v", cfg.Privacy.Unit, tt.want)
			}
		})
	}
}

// TestParseSearchMetrics: every objective the optimal search offers parses as itself.
func TestParseSearchMetrics(t *testing.T) {
	cols := "columns:\n  zip: {role: quasi, hierarchy: {mask: {max: 2}}}\nprivacy: {k: 2}\n"
	for _, m := range []string{"loss", "discernibility", "discernibility-star", "height", "precision", "aecs"} {
		cfg, err := Parse([]byte(cols+"search: {metric: "+m+"}\n"), "", "")
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		if cfg.Search.Metric != Metric(m) {
			t.Errorf("search.metric %s parsed as %q", m, cfg.Search.Metric)
		}
	}
}

// TestParseEntropyEstimators: every estimator the configuration names is the one the
// model gets.
func TestParseEntropyEstimators(t *testing.T) {
	for _, est := range diversity.Estimators {
		src := "privacy: {l-diversity: {column: diag, variant: entropy, l: 2.5, estimator: " + est.String() + "}}\n" + cols
		cfg, err := Parse([]byte(src), "test.yaml", "/cfg")
		if err != nil {
			t.Fatalf("%s: %v", est, err)
		}
		if got := cfg.Privacy.LDiversity[0].Estimator; got != est {
			t.Errorf("estimator: %s parsed as %q", est, got)
		}
	}
	if len(diversity.Estimators) != 3 || diversity.Estimators[2] != diversity.GrassbergerARX {
		t.Errorf("the estimators are %v", diversity.Estimators)
	}
}
