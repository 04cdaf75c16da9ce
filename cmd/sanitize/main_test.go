package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sanitizer/internal/build"
	"sanitizer/internal/testfiles"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// secret is a distinctive data value: wherever a test puts it into an input, it must
// never come back on stdout or stderr.
const secret = "Zq9SECRET"

// runCLI runs the command line in-process and returns its exit status and output.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(t.Context(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// repoTestdata is the absolute path of the module's testdata folder.
func repoTestdata(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// baseConfig is testdata/hospital-tests.yaml with its hierarchy paths made absolute, so the
// configuration can be written to any folder.
func baseConfig(t *testing.T) string {
	t.Helper()
	td := repoTestdata(t)
	data, err := os.ReadFile(filepath.Join(td, "hospital-tests.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return testfiles.ReplaceAll(t, string(data), "file: hierarchies/", "file: "+filepath.Join(td, "hierarchies")+"/")
}

// Lines of testdata/hospital-tests.yaml that the cases edit.
const (
	privacyLine = "privacy: {k: 5, suppression: 0.05}"
	searchLine  = "search: {algorithm: optimal, metric: loss}"
	inputLine   = `input: {format: csv, csv: {separator: ",", header: true}}`
	outputLine  = "output: {format: csv}"
	sexLine     = "  sex:        {role: quasi, hierarchy: {file: "
	stayLine    = "  stay_days:  {role: insensitive, type: integer}"
)

// setSexHierarchy points the sex column at the hierarchy file path.
func setSexHierarchy(t *testing.T, cfg, path string) string {
	t.Helper()
	re := regexp.MustCompile(`(?m)^  sex: .*$`)
	if !re.MatchString(cfg) {
		t.Fatalf("configuration template has no sex column")
	}
	return re.ReplaceAllLiteralString(cfg, "  sex:        {role: quasi, hierarchy: {file: "+path+"}}")
}

var header = []string{"patient_id", "name", "age", "sex", "zip", "admitted", "diagnosis", "stay_days", "ward", "insurance"}

// smallRows is a valid ten-record input in the hospital sample's layout (header first).
func smallRows() [][]string {
	diag := []string{"Asthma", "Influenza", "Stroke", "Migraine", "Sepsis", "Anemia", "Cataract", "Concussion", "Depression", "Hip fracture"}
	rows := [][]string{slices.Clone(header)}
	for i := range 10 {
		sex := "F"
		if i%2 == 1 {
			sex = "M"
		}
		rows = append(rows, []string{
			fmt.Sprintf("P%07d", 1000+i),
			fmt.Sprintf("Person Number%d", i),
			strconv.Itoa(31 + 3*i),
			sex,
			fmt.Sprintf("0213%d", i%3),
			fmt.Sprintf("2020-%02d-15", i%12+1),
			diag[i],
			strconv.Itoa(i + 1),
			fmt.Sprintf("Ward %d", i%2),
			"Private",
		})
	}
	return rows
}

// csvText encodes rows as CSV with separator sep.
func csvText(rows [][]string, sep rune) string {
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Comma = sep
	_ = w.WriteAll(rows)
	return b.String()
}

// withCell is the small input with the value of column col in data row row (1-based,
// the header not counted) replaced by v.
func withCell(row int, col, v string) string {
	rows := smallRows()
	rows[row][slices.Index(header, col)] = v
	return csvText(rows, ',')
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// readCSV parses a CSV file written by a release (header included).
func readCSV(t *testing.T, path string, sep rune) [][]string {
	t.Helper()
	r := csv.NewReader(bytes.NewReader(readFile(t, path)))
	r.Comma = sep
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rows
}

// badCase is a run that must fail with a given exit status and write nothing.
type badCase struct {
	name string
	// config edits the base configuration; dir is the test's folder.
	config func(t *testing.T, cfg, dir string) string
	input  string            // the input table; "" means the valid small input
	empty  bool              // write an empty input file (input is ignored)
	files  map[string]string // more files the test puts in the folder
	// args builds the command line from the folder's paths; nil: a release with report.
	args   func(p paths) []string
	code   int
	stderr []string // substrings of stderr; "{{DIR}}" is the folder, "{{HIER}}" the repository's hierarchies
	secret string   // a data value that must not appear on stdout or stderr ("" = secret)
}

type paths struct{ dir, cfg, in, out, report string }

func releaseArgs(p paths) []string {
	return []string{"release", "-c", p.cfg, "--in", p.in, "--out", p.out, "--report", p.report}
}

func edit(old, new string) func(t *testing.T, cfg, dir string) string {
	return func(t *testing.T, cfg, _ string) string { return testfiles.Replace(t, cfg, old, new) }
}

func TestBadInput(t *testing.T) {
	dropStay := func() string {
		rows := smallRows()
		at := slices.Index(header, "stay_days")
		for i := range rows {
			rows[i] = slices.Delete(rows[i], at, at+1)
		}
		return csvText(rows, ',')
	}()
	extraColumn := func() string {
		rows := smallRows()
		for i := range rows {
			v := secret + strconv.Itoa(i)
			if i == 0 {
				v = "secret_col"
			}
			rows[i] = slices.Insert(rows[i], 2, v)
		}
		return csvText(rows, ',')
	}()
	sexHier := func(name string) func(t *testing.T, cfg, dir string) string {
		return func(t *testing.T, cfg, dir string) string { return setSexHierarchy(t, cfg, filepath.Join(dir, name)) }
	}
	lines := func(rows ...string) string { return strings.Join(rows, "\n") + "\n" }
	small := csvText(smallRows(), ',')
	smallLines := strings.SplitAfter(small, "\n")

	cases := []badCase{
		// configuration
		{name: "config/unknown top-level key", config: edit(privacyLine, privacyLine+"\nfrobnicate: "+secret),
			code: 2, stderr: []string{"config.yaml", "frobnicate", "unknown key"}},
		{name: "config/unknown nested key", config: edit(privacyLine, "privacy: {k: 5, suppression: 0.05, kk: 3}"),
			code: 2, stderr: []string{"config.yaml", "privacy.kk", "unknown key"}},
		{name: "config/unknown column key", config: edit(stayLine, "  stay_days:  {role: insensitive, typ: integer}"),
			code: 2, stderr: []string{"config.yaml", "columns.stay_days.typ", "unknown key"}},
		{name: "config/wrong type k", config: edit(privacyLine, "privacy: {k: five, suppression: 0.05}"),
			code: 2, stderr: []string{"config.yaml", "privacy.k", "integer"}},
		{name: "config/k zero", config: edit(privacyLine, "privacy: {k: 0, suppression: 0.05}"),
			code: 2, stderr: []string{"config.yaml", "privacy.k"}},
		{name: "config/k missing", config: edit(privacyLine, "privacy: {suppression: 0.05}"),
			code: 2, stderr: []string{"privacy.k"}},
		{name: "config/suppression above 1", config: edit(privacyLine, "privacy: {k: 5, suppression: 1.5}"),
			code: 2, stderr: []string{"config.yaml", "privacy.suppression"}},
		{name: "config/quasi without hierarchy",
			config: func(t *testing.T, cfg, _ string) string {
				re := regexp.MustCompile(`(?m)^  sex: .*$`)
				return re.ReplaceAllLiteralString(cfg, "  sex:        {role: quasi}")
			},
			code: 2, stderr: []string{"config.yaml", "columns.sex.hierarchy", "required"}},
		{name: "config/YAML syntax", config: edit(privacyLine, "privacy: {k: 5, suppression: 0.05"),
			code: 2, stderr: []string{"config.yaml"}},
		{name: "config/missing file",
			args: func(p paths) []string {
				return []string{"release", "-c", filepath.Join(p.dir, "nosuch.yaml"), "--in", p.in, "--out", p.out, "--report", p.report}
			},
			code: 2, stderr: []string{"nosuch.yaml"}},

		// columns
		{name: "columns/unlisted column with unlisted: error", input: extraColumn,
			code: 2, stderr: []string{"in.csv", `"secret_col"`, "unlisted"}},
		{name: "columns/configured column missing from the input", input: dropStay,
			code: 2, stderr: []string{"in.csv", `"stay_days"`, "missing"}},
		{name: "columns/duplicate header", input: testfiles.Replace(t, small, "stay_days", "age"),
			code: 2, stderr: []string{"in.csv", "columns 3 and 8 have the same name"}},

		// hierarchy files
		{name: "hierarchy/missing file", config: sexHier("nosuch-sex.csv"),
			code: 2, stderr: []string{"columns.sex.hierarchy.file", "{{DIR}}/nosuch-sex.csv"}},
		{name: "hierarchy/unequal depth", config: sexHier("sex-bad.csv"),
			files: map[string]string{"sex-bad.csv": lines("F;*", "M;Any;*")},
			code:  2, stderr: []string{"columns.sex.hierarchy.file", "{{DIR}}/sex-bad.csv:2:", "levels"}},
		{name: "hierarchy/duplicate leaf", config: sexHier("sex-bad.csv"),
			files: map[string]string{"sex-bad.csv": lines("F;*", "M;*", "F;*")},
			code:  2, stderr: []string{"{{DIR}}/sex-bad.csv:3:", "twice"}},
		{name: "hierarchy/no single top", config: sexHier("sex-bad.csv"),
			files: map[string]string{"sex-bad.csv": lines("F;Person", "M;Human")},
			code:  2, stderr: []string{"{{DIR}}/sex-bad.csv:2:", "single top value"}},
		{name: "hierarchy/no single top on a later line", config: sexHier("sex-bad.csv"),
			files: map[string]string{"sex-bad.csv": lines("F;*", "", "M;Person")},
			code:  2, stderr: []string{"{{DIR}}/sex-bad.csv:3:"}},
		{name: "hierarchy/inconsistent", config: sexHier("sex-bad.csv"),
			files: map[string]string{"sex-bad.csv": lines("F;Person;Human;*", "M;Person;Other;*")},
			code:  2, stderr: []string{"{{DIR}}/sex-bad.csv:2:", "inconsistent"}},
		{name: "hierarchy/unterminated quote", config: sexHier("sex-bad.csv"),
			files: map[string]string{"sex-bad.csv": lines("F;*", `"M;*`)},
			code:  2, stderr: []string{"{{DIR}}/sex-bad.csv:2:"}},
		{name: "hierarchy/empty file", config: sexHier("sex-bad.csv"),
			files: map[string]string{"sex-bad.csv": ""},
			code:  2, stderr: []string{"{{DIR}}/sex-bad.csv"}},

		// data values
		{name: "value/quasi value not in hierarchy", input: withCell(7, "sex", secret),
			code: 2, stderr: []string{"in.csv", "row 7", `"sex"`, "{{HIER}}/sex.csv"}},
		{name: "value/sensitive value not in hierarchy", input: withCell(7, "diagnosis", secret),
			code: 2, stderr: []string{"in.csv", "row 7", `"diagnosis"`, "{{HIER}}/diagnosis.csv"}},
		{name: "value/non-integer age (intervals)", input: withCell(7, "age", secret),
			code: 2, stderr: []string{"in.csv", "row 7", `"age"`}},
		{name: "value/fractional age (intervals)", input: withCell(7, "age", "41.5"),
			code: 2, stderr: []string{"in.csv", "row 7", `"age"`}, secret: "41.5"},
		{name: "value/bad date", input: withCell(7, "admitted", secret),
			code: 2, stderr: []string{"in.csv", "row 7", `"admitted"`}},
		{name: "value/impossible date", input: withCell(7, "admitted", "2021-02-30"),
			code: 2, stderr: []string{"in.csv", "row 7", `"admitted"`}, secret: "2021-02-30"},
		{name: "value/non-integer typed insensitive column", input: withCell(7, "stay_days", secret),
			code: 2, stderr: []string{"in.csv", "row 7", `"stay_days"`}},
		{name: "value/non-integer typed insensitive column, last row", input: withCell(10, "stay_days", "1e3"),
			code: 2, stderr: []string{"in.csv", "row 10", `"stay_days"`}, secret: "1e3"},

		// CSV syntax
		{name: "csv/unterminated quote", input: strings.Join(smallLines[:7], "") + `P0000099,"` + secret + ` unterminated,40,F,02130,2020-01-15,Asthma,3` + "\n" + strings.Join(smallLines[8:], ""),
			code: 2, stderr: []string{"in.csv", "row 7"}},
		{name: "csv/bare quote in unquoted field", input: withCell(7, "name", "") + "P1,Ann " + secret + `"x,40,F,02130,2020-01-15,Asthma,3` + "\n",
			code: 2, stderr: []string{"in.csv", "row 11"}},
		{name: "csv/too many fields", input: strings.Join(smallLines[:7], "") + strings.TrimSuffix(smallLines[7], "\n") + "," + secret + "\n" + strings.Join(smallLines[8:], ""),
			code: 2, stderr: []string{"in.csv", "row 7"}},
		{name: "csv/too few fields", input: strings.Join(smallLines[:9], "") + "P0000099," + secret + ",40\n" + strings.Join(smallLines[9:], ""),
			code: 2, stderr: []string{"in.csv", "row 9"}},
		{name: "csv/empty file", empty: true,
			code: 2, stderr: []string{"in.csv", "empty"}},
		{name: "csv/header only", input: smallLines[0],
			code: 2, stderr: []string{"in.csv", "no records"}},
		{name: "csv/missing input file",
			args: func(p paths) []string {
				return []string{"release", "-c", p.cfg, "--in", filepath.Join(p.dir, "nosuch.csv"), "--out", p.out, "--report", p.report}
			},
			code: 2, stderr: []string{"nosuch.csv"}},

		// the model
		{name: "model/k above the number of records, no suppression", config: edit(privacyLine, "privacy: {k: 11, suppression: 0}"),
			code: 3, stderr: []string{"k=11"}},
		{name: "model/k above the number of records, suppression allowed", config: edit(privacyLine, "privacy: {k: 50, suppression: 0.5}"),
			code: 3, stderr: []string{"k=50"}},
		// ten records, ten distinct diagnoses: recursive (0.1, 2) fails in every class
		{name: "model/recursive l-diversity that no class meets", config: edit(privacyLine, "privacy: {k: 2, suppression: 0.1, l-diversity: {column: diagnosis, variant: recursive, l: 2, c: 0.1}}"),
			code: 3, stderr: []string{"k=2", "l-diversity"}},

		// unsupported features
		{name: "models/l above the distinct values", config: edit(privacyLine, "privacy: {k: 5, suppression: 0.05, l-diversity: {column: diagnosis, variant: distinct, l: 11}}"),
			code: 2, stderr: []string{"privacy.l-diversity", `"diagnosis"`, "l = 11", "only 10 distinct values"}},
		{name: "models/entropy l above the distinct values", config: edit(privacyLine, "privacy: {k: 5, l-diversity: {column: diagnosis, variant: entropy, l: 10.5}}"),
			code: 2, stderr: []string{"privacy.l-diversity", `"diagnosis"`}},
		{name: "models/t-closeness ordered on a string column", config: edit(privacyLine, "privacy: {k: 5, t-closeness: {column: diagnosis, t: 0.2, distance: ordered}}"),
			code: 2, stderr: []string{"privacy.t-closeness", "needs order"}},
		{name: "models/order missing a value", config: edit(privacyLine, "privacy: {k: 5, t-closeness: {column: diagnosis, t: 0.2, distance: ordered, order: [Asthma, Influenza]}}"),
			code: 2, stderr: []string{"in.csv", `"diagnosis"`, "not listed in privacy.t-closeness.order"}},
		{name: "unsupported/entropy-loss under mondrian", config: edit(searchLine, "search: {algorithm: mondrian, metric: entropy-loss}"),
			code: 2, stderr: []string{"search.metric", "entropy-loss"}},
		{name: "format/format csv but --out .parquet",
			args: func(p paths) []string {
				return []string{"release", "-c", p.cfg, "--in", p.in, "--out", filepath.Join(p.dir, "release.parquet"), "--report", p.report}
			},
			code: 2, stderr: []string{"extension of parquet", "output.format is csv"}},
		{name: "format/input.format arrow on a .csv file", config: edit(inputLine, "input: {format: arrow}"),
			code: 2, stderr: []string{"extension of csv", "input.format is arrow"}},
		{name: "format/unknown extension", config: edit(outputLine+"\n", ""),
			args: func(p paths) []string {
				return []string{"release", "-c", p.cfg, "--in", p.in, "--out", filepath.Join(p.dir, "release.xlsx"), "--report", p.report}
			},
			code: 2, stderr: []string{"release.xlsx", "cannot tell the format", "output.format"}},
		{name: "value/null (empty) typed quasi-identifier", input: withCell(7, "age", ""),
			code: 2, stderr: []string{"in.csv", "row 7", `"age"`, "null", "columns.age.null-as"}},

		// the command line
		{name: "cli/missing -c",
			args: func(p paths) []string { return []string{"release", "--in", p.in, "--out", p.out, "--report", p.report} },
			code: 2, stderr: []string{"config"}},
		{name: "cli/unknown flag",
			args: func(p paths) []string { return append(releaseArgs(p), "--frobnicate") },
			code: 2, stderr: []string{"--frobnicate"}},
		{name: "cli/unexpected argument",
			args: func(p paths) []string { return append(releaseArgs(p), "extra") },
			code: 2, stderr: []string{"extra"}},
		{name: "cli/unknown command",
			args: func(p paths) []string { return []string{"frobnicate", "-c", p.cfg} },
			code: 2, stderr: []string{"frobnicate"}},
		{name: "cli/--out equal to --in",
			args: func(p paths) []string {
				return []string{"release", "-c", p.cfg, "--in", p.in, "--out", p.in, "--report", p.report}
			},
			code: 2, stderr: []string{"in.csv", "input"}},
		{name: "cli/--out equal to --in, spelled differently",
			args: func(p paths) []string {
				return []string{"release", "-c", p.cfg, "--in", p.in, "--out", filepath.Join(p.dir, ".", "sub", "..", "in.csv"), "--report", p.report}
			},
			code: 2, stderr: []string{"in.csv", "input"}},
		{name: "cli/--report equal to --in",
			args: func(p paths) []string {
				return []string{"release", "-c", p.cfg, "--in", p.in, "--out", p.out, "--report", p.in}
			},
			code: 2, stderr: []string{"in.csv", "--report"}},
		{name: "cli/--report equal to --out",
			args: func(p paths) []string {
				return []string{"release", "-c", p.cfg, "--in", p.in, "--out", p.out, "--report", p.out}
			},
			code: 2, stderr: []string{"release.csv", "--report"}},
		{name: "cli/--report equal to -c",
			args: func(p paths) []string {
				return []string{"release", "-c", p.cfg, "--in", p.in, "--out", p.out, "--report", p.cfg}
			},
			code: 2, stderr: []string{"config.yaml", "--report"}},
		{name: "cli/check without -c",
			args: func(p paths) []string { return []string{"check", "--in", p.in, "--release", p.out} },
			code: 2, stderr: []string{"config"}},
		{name: "cli/gen without --out",
			args: func(p paths) []string { return []string{"gen", "--rows", "10"} },
			code: 2, stderr: []string{"out"}},
		{name: "cli/--out in a missing folder",
			args: func(p paths) []string {
				return []string{"release", "-c", p.cfg, "--in", p.in, "--out", filepath.Join(p.dir, "nosuch", "release.csv")}
			},
			code: 2, stderr: []string{"nosuch", "does not exist"}},
		{name: "cli/check: missing release file",
			args: func(p paths) []string {
				return []string{"check", "-c", p.cfg, "--in", p.in, "--release", filepath.Join(p.dir, "nosuch-release.csv")}
			},
			code: 2, stderr: []string{"nosuch-release.csv"}},
		{name: "cli/gen: unknown extension",
			args: func(p paths) []string {
				return []string{"gen", "--rows", "10", "--seed", "1", "--out", filepath.Join(p.dir, "sample.xlsx")}
			},
			code: 2, stderr: []string{"sample.xlsx", "--format"}},
		{name: "cli/gen: unknown --format",
			args: func(p paths) []string {
				return []string{"gen", "--rows", "10", "--format", "orc", "--out", filepath.Join(p.dir, "sample.parquet")}
			},
			code: 2, stderr: []string{"--format", "orc"}},
		{name: "cli/unknown --log-format",
			args: func(p paths) []string {
				return []string{"release", "--log-format", "xml", "-c", p.cfg, "--in", p.in, "--out", p.out, "--report", p.report}
			},
			code: 2, stderr: []string{"--log-format", "xml"}},
		{name: "cli/gen: --rows not a number",
			args: func(p paths) []string {
				return []string{"gen", "--rows", "ten", "--out", filepath.Join(p.dir, "sample.csv")}
			},
			code: 2, stderr: []string{"--rows"}},
		{name: "cli/gen: negative --rows",
			args: func(p paths) []string {
				return []string{"gen", "--rows", "-1", "--out", filepath.Join(p.dir, "sample.csv")}
			},
			code: 2, stderr: []string{"--rows"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			p := paths{dir: dir, cfg: filepath.Join(dir, "config.yaml"), in: filepath.Join(dir, "in.csv"),
				out: filepath.Join(dir, "release.csv"), report: filepath.Join(dir, "report.json")}
			cfg := baseConfig(t)
			if tc.config != nil {
				cfg = tc.config(t, cfg, dir)
			}
			writeFile(t, p.cfg, cfg)
			input := tc.input
			if input == "" && !tc.empty {
				input = small
			}
			writeFile(t, p.in, input)
			for name, content := range tc.files {
				writeFile(t, filepath.Join(dir, name), content)
			}
			before := testfiles.Names(t, dir)

			argv := releaseArgs(p)
			if tc.args != nil {
				argv = tc.args(p)
			}
			code, stdout, stderr := runCLI(t, argv...)
			var missing []string
			for _, want := range tc.stderr {
				want = strings.ReplaceAll(want, "{{DIR}}", dir)
				want = strings.ReplaceAll(want, "{{HIER}}", filepath.Join(repoTestdata(t), "hierarchies"))
				if !strings.Contains(stderr, want) {
					missing = append(missing, want)
				}
			}
			if code != tc.code {
				t.Errorf("exit status %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, stdout, stderr)
			}
			for _, want := range missing {
				t.Errorf("stderr does not contain %q:\n%s", want, stderr)
			}
			value := tc.secret
			if value == "" {
				value = secret
			}
			if strings.Contains(stderr, value) || strings.Contains(stdout, value) {
				t.Errorf("the data value %q appears in the output\nstdout: %s\nstderr: %s", value, stdout, stderr)
			}
			for _, arg := range argv {
				if strings.HasPrefix(arg, dir) && arg != p.in && arg != p.cfg && !slices.Contains(before, filepath.Base(arg)) {
					if _, err := os.Stat(arg); err == nil {
						t.Errorf("%s was written", arg)
					}
				}
			}
			if after := testfiles.Names(t, dir); !slices.Equal(after, before) {
				t.Errorf("the folder holds %q after the run, want only %q", after, before)
			}
			if got := string(readFile(t, p.in)); got != input {
				t.Errorf("the input was modified")
			}
		})
	}
}

// jsonReport is the part of the JSON report the tests check (field names as written).
type jsonReport struct {
	Tool         string `json:"tool"`
	ConfigDigest string `json:"config_digest"`
	Input        struct {
		Rows int `json:"rows"`
	} `json:"input"`
	Output struct {
		Path string `json:"path"`
		Rows int    `json:"rows"`
	} `json:"output"`
	Model struct {
		K             int     `json:"k"`
		Suppression   float64 `json:"suppression_limit"`
		MaxSuppressed int     `json:"max_suppressed_records"`
	} `json:"model"`
	Node []struct {
		Column string `json:"column"`
		Level  int    `json:"level"`
		Levels int    `json:"levels"`
	} `json:"node"`
	Classes    int `json:"classes"`
	MinClass   int `json:"min_class"`
	Suppressed int `json:"suppressed"`
	Verified   struct {
		Rows       int `json:"rows"`
		Classes    int `json:"classes"`
		MinClass   int `json:"min_class"`
		Suppressed int `json:"suppressed"`
	} `json:"verified"`
}

// classSizes counts the release's records per tuple of the quasi columns.
func classSizes(rows [][]string, quasi []string) map[string]int {
	pos := make([]int, len(quasi))
	for i, q := range quasi {
		pos[i] = slices.Index(rows[0], q)
	}
	sizes := map[string]int{}
	for _, r := range rows[1:] {
		var key []string
		for _, p := range pos {
			key = append(key, r[p])
		}
		k, _ := json.Marshal(key)
		sizes[string(k)]++
	}
	return sizes
}

var measuredK = regexp.MustCompile(`measured k=(\d+) \(required (\d+)\)`)

func TestReleaseHospital(t *testing.T) {
	dir := t.TempDir()
	cfgPath, in := filepath.Join(dir, "config.yaml"), filepath.Join(dir, "hospital.csv")
	out, rep := filepath.Join(dir, "release.csv"), filepath.Join(dir, "report.json")
	cfg := baseConfig(t)
	writeFile(t, cfgPath, cfg)
	inData := readFile(t, filepath.Join(repoTestdata(t), "hospital.csv"))
	if err := os.WriteFile(in, inData, 0o644); err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := runCLI(t, "release", "-c", cfgPath, "--in", in, "--out", out, "--report", rep)
	if code != 0 {
		t.Fatalf("release: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	for _, want := range []string{"released", "k=5", out, "report: " + rep} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	if got, want := testfiles.Names(t, dir), []string{"config.yaml", "hospital.csv", "release.csv", "report.json"}; !slices.Equal(got, want) {
		t.Errorf("folder holds %q, want %q", got, want)
	}

	input := readCSV(t, in, ',')
	release := readCSV(t, out, ',')
	quasi := []string{"age", "sex", "zip", "admitted"}

	// The release: identifiers dropped, k holds, truthful kept values.
	if want := []string{"age", "sex", "zip", "admitted", "diagnosis", "stay_days", "ward", "insurance"}; !slices.Equal(release[0], want) {
		t.Fatalf("release header %q, want %q", release[0], want)
	}
	sizes := classSizes(release, quasi)
	minClass := len(release)
	for _, n := range sizes {
		minClass = min(minClass, n)
	}
	if minClass < 5 {
		t.Errorf("smallest class of the release has %d records, k is 5", minClass)
	}
	inputKept := map[string]int{}
	for _, r := range input[1:] {
		inputKept[r[6]+"\x00"+r[7]]++
	}
	for i, r := range release[1:] {
		key := r[4] + "\x00" + r[5]
		if inputKept[key] == 0 {
			t.Fatalf("release record %d: (diagnosis, stay_days) not found among the unreleased input records", i+1)
		}
		inputKept[key]--
	}

	// The report.
	data := readFile(t, rep)
	var r jsonReport
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("report: %v\n%s", err, data)
	}
	sum := sha256.Sum256([]byte(cfg))
	inputRows := len(input) - 1
	switch {
	case r.Tool != "sanitize":
		t.Errorf("report tool %q", r.Tool)
	case r.ConfigDigest != "sha256:"+hex.EncodeToString(sum[:]):
		t.Errorf("report config_digest %q, want sha256 of the configuration file", r.ConfigDigest)
	case r.Model.K != 5 || r.Model.Suppression != 0.05 || r.Model.MaxSuppressed != inputRows*5/100:
		t.Errorf("report model %+v", r.Model)
	case r.Input.Rows != inputRows || r.Output.Rows != len(release)-1 || r.Output.Path != out:
		t.Errorf("report input rows %d, output %+v; the input has %d records, the release %d", r.Input.Rows, r.Output, inputRows, len(release)-1)
	case r.Suppressed < 0 || r.Suppressed > r.Model.MaxSuppressed || r.Suppressed != inputRows-(len(release)-1):
		t.Errorf("report suppressed %d (limit %d), the release misses %d records", r.Suppressed, r.Model.MaxSuppressed, inputRows-(len(release)-1))
	case r.MinClass < r.Model.K || r.Verified.MinClass != minClass || r.MinClass != minClass:
		t.Errorf("report min_class %d, verified %d; measured %d", r.MinClass, r.Verified.MinClass, minClass)
	case r.Classes != len(sizes) || r.Verified.Classes != len(sizes) || r.Verified.Rows != len(release)-1 || r.Verified.Suppressed != r.Suppressed:
		t.Errorf("report classes %d, verified %+v; measured %d classes", r.Classes, r.Verified, len(sizes))
	}
	if len(r.Node) != len(quasi) {
		t.Fatalf("report node %+v, want one level per quasi-identifier %q", r.Node, quasi)
	}
	for i, n := range r.Node {
		if n.Column != quasi[i] || n.Levels < 2 || n.Level < 0 || n.Level >= n.Levels {
			t.Errorf("report node[%d] = %+v", i, n)
		}
	}
	for _, col := range []string{"name", "diagnosis", "patient_id"} {
		c := slices.Index(input[0], col)
		seen := map[string]bool{}
		for _, row := range input[1:] {
			if v := row[c]; !seen[v] {
				seen[v] = true
				if bytes.Contains(data, []byte(v)) {
					t.Errorf("the report contains a value of %s: %q", col, v)
				}
			}
		}
	}
	released := readFile(t, out)
	for _, row := range input[1:] {
		if bytes.Contains(released, []byte(row[0])) {
			t.Fatalf("the release contains a patient_id")
		}
	}

	t.Run("check", func(t *testing.T) {
		code, stdout, stderr := runCLI(t, "check", "-c", cfgPath, "--in", in, "--release", out)
		if code != 0 {
			t.Fatalf("check: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
		}
		m := measuredK.FindStringSubmatch(stdout)
		if m == nil || m[1] != strconv.Itoa(minClass) || m[2] != "5" {
			t.Errorf("check does not print measured k=%d (required 5):\n%s", minClass, stdout)
		}
	})

	// tampered runs check on a modified copy of the release in a folder of its own.
	tampered := func(t *testing.T, rows [][]string) (int, string, string) {
		t.Helper()
		d := t.TempDir()
		rel := filepath.Join(d, "release.csv")
		writeFile(t, rel, csvText(rows, ','))
		return runCLI(t, "check", "-c", cfgPath, "--in", in, "--release", rel)
	}

	t.Run("check a release with a class below k", func(t *testing.T) {
		// Delete records of the smallest class until it has k-1.
		var smallest string
		for key, n := range sizes {
			if smallest == "" || n < sizes[smallest] || n == sizes[smallest] && key < smallest {
				smallest = key
			}
		}
		drop := sizes[smallest] - 4
		if r.Suppressed+drop > r.Model.MaxSuppressed {
			t.Skipf("cannot delete %d records within the suppression limit", drop)
		}
		rows := [][]string{release[0]}
		for _, row := range release[1:] {
			k, _ := json.Marshal([]string{row[0], row[1], row[2], row[3]})
			if string(k) == smallest && drop > 0 {
				drop--
				continue
			}
			rows = append(rows, row)
		}
		code, stdout, stderr := tampered(t, rows)
		if code != 3 {
			t.Fatalf("check: exit %d, want 3\nstdout: %s\nstderr: %s", code, stdout, stderr)
		}
		if m := measuredK.FindStringSubmatch(stdout); m == nil || m[1] != "4" {
			t.Errorf("check does not print measured k=4:\n%s", stdout)
		}
		if !strings.Contains(stderr, "k is 5") {
			t.Errorf("stderr does not name the violated k:\n%s", stderr)
		}
	})

	t.Run("check a release with an added record", func(t *testing.T) {
		rows := slices.Clone(release)
		extra := slices.Clone(release[1])
		extra[2] = "99999" // a zip no class has: a class of one
		rows = append(rows, extra)
		code, stdout, stderr := tampered(t, rows)
		if code != 3 {
			t.Fatalf("check: exit %d, want 3\nstdout: %s\nstderr: %s", code, stdout, stderr)
		}
		if m := measuredK.FindStringSubmatch(stdout); m == nil || m[1] != "1" {
			t.Errorf("check does not print measured k=1:\n%s", stdout)
		}
	})

	t.Run("check a release with too many records", func(t *testing.T) {
		rows := slices.Clone(release)
		for i := 0; len(rows)-1 <= inputRows; i++ {
			rows = append(rows, release[1+i%(len(release)-1)]) // more records than the input, every class ≥ k
		}
		code, stdout, stderr := tampered(t, rows)
		if code != 3 {
			t.Fatalf("check: exit %d, want 3\nstdout: %s\nstderr: %s", code, stdout, stderr)
		}
	})

	// deleteClass is the release less n records of the class with the given key (all of
	// them for n < 0).
	deleteClass := func(key string, n int) [][]string {
		rows := [][]string{release[0]}
		for _, row := range release[1:] {
			k, _ := json.Marshal([]string{row[0], row[1], row[2], row[3]})
			if string(k) == key && n != 0 {
				n--
				continue
			}
			rows = append(rows, row)
		}
		return rows
	}
	var largest, smallest string
	for key, n := range sizes {
		if largest == "" || n > sizes[largest] || n == sizes[largest] && key < largest {
			largest = key
		}
		if smallest == "" || n < sizes[smallest] || n == sizes[smallest] && key < smallest {
			smallest = key
		}
	}

	// A record may be missing only when its class fails the models: deleting records
	// of a class that meets them is a violation even when k and the suppression limit
	// still hold.
	for _, tc := range []struct {
		name string
		key  string
		n    int
	}{
		{"check a release with one record deleted", largest, 1},
		{"check a release with a whole class deleted", smallest, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := deleteClass(tc.key, tc.n)
			if inputRows-(len(rows)-1) > r.Model.MaxSuppressed {
				t.Skip("the deletion exceeds the suppression limit")
			}
			code, stdout, stderr := tampered(t, rows)
			if code != 3 {
				t.Fatalf("check: exit %d, want 3\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			if !strings.Contains(stderr, "missing from the release") {
				t.Errorf("stderr does not say records are missing:\n%s", stderr)
			}
		})
	}

	// --report: a CSV release checked against its report, whose recorded parameters
	// must agree with what check measures.
	t.Run("check with its report", func(t *testing.T) {
		code, stdout, stderr := runCLI(t, "check", "-c", cfgPath, "--in", in, "--release", out, "--report", rep)
		if code != 0 {
			t.Fatalf("check --report: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
		}
	})
	for _, tc := range []struct{ name, field, old, new string }{
		{"suppressed", "suppressed", fmt.Sprintf(`"suppressed": %d`, r.Suppressed), fmt.Sprintf(`"suppressed": %d`, r.Suppressed+1)},
		{"k", "model.k", `"k": 5`, `"k": 6`},
		{"node", "node", `"level": 3,`, `"level": 2,`},
	} {
		t.Run("check with a report that disagrees: "+tc.name, func(t *testing.T) {
			text := string(readFile(t, rep))
			bad := filepath.Join(t.TempDir(), "report.json")
			writeFile(t, bad, testfiles.Replace(t, text, tc.old, tc.new))
			code, stdout, stderr := runCLI(t, "check", "-c", cfgPath, "--in", in, "--release", out, "--report", bad)
			if code != 3 {
				t.Fatalf("check --report: exit %d, want 3\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			if !strings.Contains(stderr, tc.field) {
				t.Errorf("stderr does not name %s:\n%s", tc.field, stderr)
			}
		})
	}

	t.Run("check a release that still holds an identifier", func(t *testing.T) {
		rows := [][]string{append([]string{"name"}, release[0]...)}
		for i, row := range release[1:] {
			rows = append(rows, append([]string{input[1+i][1]}, row...))
		}
		code, stdout, stderr := tampered(t, rows)
		if code == 0 {
			t.Fatalf("check accepted a release with a name column\nstdout: %s\nstderr: %s", stdout, stderr)
		}
	})
}

// TestUnlistedDrop: the input of the "unlisted column" bad case is released once the
// configuration says unlisted: drop, without the column or its values.
func TestUnlistedDrop(t *testing.T) {
	dir := t.TempDir()
	cfgPath, in, out := filepath.Join(dir, "config.yaml"), filepath.Join(dir, "in.csv"), filepath.Join(dir, "release.csv")
	writeFile(t, cfgPath, testfiles.Replace(t, baseConfig(t), "unlisted: error", "unlisted: drop"))
	rows := smallRows()
	for i := range rows {
		v := secret + strconv.Itoa(i)
		if i == 0 {
			v = "secret_col"
		}
		rows[i] = slices.Insert(rows[i], 2, v)
	}
	writeFile(t, in, csvText(rows, ','))
	code, stdout, stderr := runCLI(t, "release", "-c", cfgPath, "--in", in, "--out", out)
	if code != 0 {
		t.Fatalf("release: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	data := readFile(t, out)
	if bytes.Contains(data, []byte("secret_col")) || bytes.Contains(data, []byte(secret)) {
		t.Errorf("the dropped column is in the release:\n%s", data)
	}
	release := readCSV(t, out, ',')
	if want := []string{"age", "sex", "zip", "admitted", "diagnosis", "stay_days", "ward", "insurance"}; !slices.Equal(release[0], want) {
		t.Errorf("release header %q, want %q", release[0], want)
	}
	if strings.Contains(stdout+stderr, secret) {
		t.Errorf("a value of the dropped column is on the output")
	}
	if code, stdout, stderr := runCLI(t, "check", "-c", cfgPath, "--in", in, "--release", out); code != 0 {
		t.Errorf("check: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
}

// TestSeparatorNoHeader: input with ';' and no header row, output with ';'.
func TestSeparatorNoHeader(t *testing.T) {
	dir := t.TempDir()
	cfgPath, in, out := filepath.Join(dir, "config.yaml"), filepath.Join(dir, "in.csv"), filepath.Join(dir, "release.csv")
	cfg := testfiles.Replace(t, baseConfig(t), inputLine, `input: {format: csv, csv: {separator: ";", header: false}}`)
	cfg = testfiles.Replace(t, cfg, outputLine, `output: {format: csv, csv: {separator: ";"}}`)
	writeFile(t, cfgPath, cfg)
	rows := smallRows()
	rows[3][1] = "Smith, Jo" // a comma is plain data with ';' as separator
	writeFile(t, in, csvText(rows[1:], ';'))
	code, stdout, stderr := runCLI(t, "release", "-c", cfgPath, "--in", in, "--out", out)
	if code != 0 {
		t.Fatalf("release: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	release := readCSV(t, out, ';')
	if want := []string{"age", "sex", "zip", "admitted", "diagnosis", "stay_days", "ward", "insurance"}; !slices.Equal(release[0], want) {
		t.Fatalf("release header %q, want %q", release[0], want)
	}
	if len(release) != 11 {
		t.Errorf("release has %d records, want 10", len(release)-1)
	}
	for i, r := range release[1:] {
		if r[4] != rows[1+i][6] || r[5] != rows[1+i][7] {
			t.Errorf("release record %d: diagnosis, stay_days = %q, %q; want %q, %q", i+1, r[4], r[5], rows[1+i][6], rows[1+i][7])
		}
	}
	code, stdout, stderr = runCLI(t, "check", "-c", cfgPath, "--in", in, "--release", out)
	if code != 0 || !measuredK.MatchString(stdout) {
		t.Errorf("check: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
}

// TestQuotedCRLF: quoted fields holding the separator, quotes and line breaks, in a
// file with CRLF line ends, come through intact.
func TestQuotedCRLF(t *testing.T) {
	dir := t.TempDir()
	cfgPath, in, out := filepath.Join(dir, "config.yaml"), filepath.Join(dir, "in.csv"), filepath.Join(dir, "release.csv")
	writeFile(t, cfgPath, testfiles.Replace(t, baseConfig(t), stayLine, stayLine+"\n  note:       {role: insensitive}"))
	rows := smallRows()
	notes := make([]string, len(rows))
	notes[0] = "note"
	for i := 1; i < len(rows); i++ {
		notes[i] = fmt.Sprintf("plain note %d", i)
	}
	notes[4] = "first line, with a comma\nsecond line with \"quotes\"; and more"
	notes[9] = ",\n,"
	for i := range rows {
		rows[i] = append(rows[i], notes[i])
	}
	rows[2][1] = "Perez, Amy \"the patient\""
	rows[5][6] = "Heart failure" // quoted below, although it needs no quotes
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.UseCRLF = true
	if err := w.WriteAll(rows); err != nil {
		t.Fatal(err)
	}
	text := testfiles.Replace(t, b.String(), "Heart failure", `"Heart failure"`)
	if !strings.Contains(text, "\r\n") || !strings.Contains(text, "comma\r\nsecond") {
		t.Fatalf("test input is not what it should be:\n%q", text)
	}
	writeFile(t, in, text)
	code, stdout, stderr := runCLI(t, "release", "-c", cfgPath, "--in", in, "--out", out)
	if code != 0 {
		t.Fatalf("release: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	release := readCSV(t, out, ',')
	if want := []string{"age", "sex", "zip", "admitted", "diagnosis", "stay_days", "ward", "insurance", "note"}; !slices.Equal(release[0], want) {
		t.Fatalf("release header %q, want %q", release[0], want)
	}
	if len(release) != len(rows) {
		t.Fatalf("release has %d records, want %d", len(release)-1, len(rows)-1)
	}
	for i := 1; i < len(rows); i++ {
		if got := release[i][8]; got != notes[i] {
			t.Errorf("record %d: note %q, want %q", i, got, notes[i])
		}
		if got := release[i][4]; got != rows[i][6] {
			t.Errorf("record %d: diagnosis %q, want %q", i, got, rows[i][6])
		}
	}
	if bytes.Contains(readFile(t, out), []byte("Perez")) {
		t.Errorf("the name column is in the release")
	}
	if code, stdout, stderr := runCLI(t, "check", "-c", cfgPath, "--in", in, "--release", out); code != 0 {
		t.Errorf("check: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
}

// TestOutputOverwrite: with --force, an existing file at --out is replaced only by a
// verified release, and left alone when the run fails.
func TestOutputOverwrite(t *testing.T) {
	dir := t.TempDir()
	cfgPath, in, out := filepath.Join(dir, "config.yaml"), filepath.Join(dir, "in.csv"), filepath.Join(dir, "release.csv")
	writeFile(t, cfgPath, testfiles.Replace(t, baseConfig(t), privacyLine, "privacy: {k: 11, suppression: 0}"))
	writeFile(t, in, csvText(smallRows(), ','))
	writeFile(t, out, "old release\n")
	// Without --force: refused before anything is read, with how to ask.
	code, stdout, stderr := runCLI(t, "release", "-c", cfgPath, "--in", in, "--out", out)
	if code != 2 || !strings.Contains(stderr, out+" exists (--force replaces it)") {
		t.Errorf("release over an existing file: exit %d, stderr %q; want 2 and the hint", code, stderr)
	}
	code, stdout, stderr = runCLI(t, "release", "-c", cfgPath, "--in", in, "--out", out, "--force")
	if code != 3 {
		t.Fatalf("release: exit %d, want 3\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if got := string(readFile(t, out)); got != "old release\n" {
		t.Errorf("a failed run changed the existing release: %q", got)
	}
	if got, want := testfiles.Names(t, dir), []string{"config.yaml", "in.csv", "release.csv"}; !slices.Equal(got, want) {
		t.Errorf("folder holds %q, want %q", got, want)
	}
}

func TestGenDeterministic(t *testing.T) {
	dir := t.TempDir()
	gen := func(name, seed string) []byte {
		t.Helper()
		p := filepath.Join(dir, name)
		code, stdout, stderr := runCLI(t, "gen", "--rows", "300", "--seed", seed, "--out", p)
		if code != 0 {
			t.Fatalf("gen: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
		}
		if !strings.Contains(stdout, "300") {
			t.Errorf("gen summary %q does not name the record count", stdout)
		}
		return readFile(t, p)
	}
	a, b, c := gen("a.csv", "42"), gen("b.csv", "42"), gen("c.csv", "43")
	if !bytes.Equal(a, b) {
		t.Errorf("the same seed gave different files")
	}
	if bytes.Equal(a, c) {
		t.Errorf("different seeds gave the same file")
	}
	rows := readCSV(t, filepath.Join(dir, "a.csv"), ',')
	if len(rows) != 301 || !slices.Equal(rows[0], header) {
		t.Errorf("gen wrote %d records with header %q", len(rows)-1, rows[0])
	}
	if got, want := testfiles.Names(t, dir), []string{"a.csv", "b.csv", "c.csv"}; !slices.Equal(got, want) {
		t.Errorf("folder holds %q, want %q", got, want)
	}
	// The generated sample releases with the bundled configuration.
	cfgPath := filepath.Join(dir, "config.yaml")
	writeFile(t, cfgPath, baseConfig(t))
	code, stdout, stderr := runCLI(t, "release", "-c", cfgPath, "--in", filepath.Join(dir, "a.csv"), "--out", filepath.Join(dir, "r.csv"))
	if code != 0 {
		t.Errorf("release of the generated sample: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
}

// TestLogs: text logs are silent on success (stderr is not a terminal here), warn about
// dropped columns unless --quiet; JSON logs give a record per stage and the error with
// its exit status. No log line holds a data value.
func TestLogs(t *testing.T) {
	dir := t.TempDir()
	cfgPath, in := filepath.Join(dir, "config.yaml"), filepath.Join(dir, "in.csv")
	writeFile(t, cfgPath, testfiles.Replace(t, baseConfig(t), "unlisted: error", "unlisted: drop"))
	rows := smallRows()
	for i := range rows {
		v := secret
		if i == 0 {
			v = "extra"
		}
		rows[i] = append(rows[i], v)
	}
	writeFile(t, in, csvText(rows, ','))
	release := func(flags ...string) (int, string) {
		t.Helper()
		out := filepath.Join(t.TempDir(), "r.csv")
		code, _, stderr := runCLI(t, append(flags, "release", "-c", cfgPath, "--in", in, "--out", out)...)
		if strings.Contains(stderr, secret) {
			t.Errorf("logs hold a data value: %s", stderr)
		}
		return code, stderr
	}
	if code, stderr := release(); code != 0 || !strings.Contains(stderr, "WARN") || !strings.Contains(stderr, `column=extra`) ||
		!strings.Contains(stderr, "no l-diversity, t-closeness or β-likeness requirement protects it\" column=diagnosis") || strings.Count(stderr, "\n") != 2 {
		t.Errorf("text: exit %d, stderr %q: want a warning naming the dropped column and one naming the unprotected sensitive column", code, stderr)
	}
	if code, stderr := release("--quiet"); code != 0 || stderr != "" {
		t.Errorf("--quiet: exit %d, stderr %q", code, stderr)
	}
	code, stderr := release("--log-format", "json")
	if code != 0 {
		t.Fatalf("json: exit %d: %s", code, stderr)
	}
	stages := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not a JSON record: %q", line)
		}
		if s, ok := rec["stage"].(string); ok {
			stages[s] = true
		}
	}
	for _, s := range []string{"read", "search", "write", "verify"} {
		if !stages[s] {
			t.Errorf("json: no record for stage %s in %s", s, stderr)
		}
	}
	// An error as JSON: level, message, exit status.
	out := filepath.Join(dir, "r.csv")
	code, _, stderr = runCLI(t, "--log-format", "json", "release", "-c", cfgPath, "--in", filepath.Join(dir, "nosuch.csv"), "--out", out)
	var rec map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(stderr)), &rec); code != 2 || err != nil || rec["level"] != "ERROR" || rec["exit"] != float64(2) || !strings.Contains(rec["msg"].(string), "nosuch.csv") {
		t.Errorf("json error: exit %d, stderr %q", code, stderr)
	}
}

// TestDPCommand runs `sanitize dp` on the bundled sample: exit 0 with a summary and the
// files; the same run again on the same ledger until the budget is spent, then exit 3
// with nothing written; a domain violation is exit 2 naming row and column.
func TestDPCommand(t *testing.T) {
	td := repoTestdata(t)
	dir := t.TempDir()
	ledger := filepath.Join(dir, "ledger.json")
	args := func(out string) []string {
		return []string{"dp", "-c", filepath.Join(td, "hospital-dp.yaml"), "--in", filepath.Join(td, "hospital.csv"),
			"--out", filepath.Join(dir, out), "--ledger", ledger}
	}
	code, stdout, stderr := runCLI(t, args("a")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "spent ε=2.5") || !strings.Contains(stdout, "age-by-diagnosis.csv: histogram, 300 cells") ||
		!strings.Contains(stdout, "synthetic.csv: synthetic, ") {
		t.Errorf("stdout: %s", stdout)
	}
	if got := testfiles.Names(t, filepath.Join(dir, "a")); !slices.Equal(got, []string{"age-by-diagnosis.csv", "manifest.html", "manifest.json", "pairs.csv", "stay.parquet", "synthetic.csv"}) {
		t.Errorf("files %v", got)
	}
	if code, _, stderr = runCLI(t, args("b")...); code != 0 { // 5.0 of 5.0
		t.Fatalf("second run: exit %d: %s", code, stderr)
	}
	before := readFile(t, ledger)
	code, _, stderr = runCLI(t, args("c")...)
	if code != 3 || !strings.Contains(stderr, "over the totals") {
		t.Errorf("third run: exit %d (%s), want 3", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "c")); !errors.Is(err, os.ErrNotExist) {
		t.Error("a refused run wrote its folder")
	}
	if after := readFile(t, ledger); string(after) != string(before) {
		t.Error("a refused run changed the ledger")
	}

	in := filepath.Join(dir, "bad.csv")
	data := string(readFile(t, filepath.Join(td, "hospital.csv")))
	lines := strings.SplitAfterN(data, "\n", 4)
	lines[2] = testfiles.Replace(t, lines[2], ",F,", ",X,")
	writeFile(t, in, strings.Join(lines, ""))
	code, _, stderr = runCLI(t, "dp", "-c", filepath.Join(td, "hospital-dp.yaml"), "--in", in, "--out", filepath.Join(dir, "d"))
	if code != 2 || !strings.Contains(stderr, "row 2") || !strings.Contains(stderr, `column "sex"`) {
		t.Errorf("domain violation: exit %d: %s", code, stderr)
	}
	if code, _, _ = runCLI(t, "dp", "-c", filepath.Join(td, "hospital-dp.yaml"), "--in", in); code != 2 {
		t.Errorf("missing --out: exit %d, want 2", code)
	}
}

var measuredUtility = regexp.MustCompile(`measured utility: loss (\S+), NCP (\S+), non-uniform entropy (\S+) bits, discernibility (\S+), C_AVG (\S+)\n`)

// TestCheckPrintsUtility: `sanitize check` prints the five utility metrics it measured
// from the written file, and they are the release report's (the search's), for both
// algorithms; a release that fails the check says the three it could not measure.
func TestCheckPrintsUtility(t *testing.T) {
	notInRaceRun(t)
	td := repoTestdata(t)
	in := filepath.Join(td, "hospital.csv")
	for _, config := range []string{"hospital-tests.yaml", "hospital-mondrian.yaml"} {
		t.Run(config, func(t *testing.T) {
			dir := t.TempDir()
			cfg, out, rep := filepath.Join(td, config), filepath.Join(dir, "release.csv"), filepath.Join(dir, "report.json")
			if code, stdout, stderr := runCLI(t, "release", "-c", cfg, "--in", in, "--out", out, "--report", rep); code != 0 {
				t.Fatalf("release: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			var r struct {
				Utility struct {
					Loss           float64 `json:"loss"`
					NCP            float64 `json:"ncp"`
					Discernibility float64 `json:"discernibility"`
					CAvg           float64 `json:"c_avg"`
					Entropy        float64 `json:"non_uniform_entropy"`
				} `json:"utility"`
			}
			if err := json.Unmarshal(readFile(t, rep), &r); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := runCLI(t, "check", "-c", cfg, "--in", in, "--release", out)
			if code != 0 {
				t.Fatalf("check: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			m := measuredUtility.FindStringSubmatch(stdout)
			if m == nil {
				t.Fatalf("check does not print the five utility metrics:\n%s", stdout)
			}
			want := []float64{r.Utility.Loss, r.Utility.NCP, r.Utility.Entropy, r.Utility.Discernibility, r.Utility.CAvg}
			for i, name := range []string{"loss", "NCP", "non-uniform entropy", "discernibility", "C_AVG"} {
				got, err := strconv.ParseFloat(m[i+1], 64)
				// printed with 4 decimals (loss, NCP), 6 digits (entropy, discernibility) or 2 decimals (C_AVG)
				tol := map[int]float64{0: 5e-5, 1: 5e-5, 2: 5e-6 * want[2], 3: 5e-6 * want[3], 4: 5e-3}[i]
				if err != nil || want[i] == 0 || math.Abs(got-want[i]) > tol {
					t.Errorf("check prints %s %s, the report %v", name, m[i+1], want[i])
				}
			}
		})
	}

	// A release below k: the class-based metrics only.
	dir := t.TempDir()
	cfg, out := filepath.Join(td, "hospital-tests.yaml"), filepath.Join(dir, "release.csv")
	if code, stdout, stderr := runCLI(t, "release", "-c", cfg, "--in", in, "--out", out); code != 0 {
		t.Fatalf("release: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	rows := readCSV(t, out, ',')
	rows = append(rows[:1], rows[2:]...) // one record fewer: some class may fall below k
	rows[1][0] = "[0,4]"                 // and one record alone in a class of its own
	writeFile(t, out, csvText(rows, ','))
	code, stdout, _ := runCLI(t, "check", "-c", cfg, "--in", in, "--release", out)
	if code != 3 || !strings.Contains(stdout, "measured utility: discernibility") || !strings.Contains(stdout, "not measured") {
		t.Errorf("check of a release below k: exit %d\n%s", code, stdout)
	}
}

// TestJSONProgress: with JSON logs a release logs "progress" records at the interval
// while it runs (stage and the three counters, no data value); a non-positive interval
// is a command-line mistake.
func TestJSONProgress(t *testing.T) {
	td := repoTestdata(t)
	out := filepath.Join(t.TempDir(), "r.csv")
	code, _, stderr := runCLI(t, "--log-format", "json", "--progress-interval", "1ms", "release",
		"-c", filepath.Join(td, "hospital-tests.yaml"), "--in", filepath.Join(td, "hospital.csv"), "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	progress := 0
	stages := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not a JSON record: %q", line)
		}
		if rec["msg"] != "progress" {
			continue
		}
		progress++
		stages[fmt.Sprint(rec["stage"])] = true
		for _, k := range []string{"records_read", "nodes_evaluated", "records_released"} {
			if _, ok := rec[k].(float64); !ok {
				t.Errorf("progress record without %s: %s", k, line)
			}
		}
	}
	if progress < 2 || len(stages) < 2 {
		t.Errorf("%d progress records over stages %v, want several over more than one stage:\n%s", progress, stages, stderr)
	}
	if code, _, stderr := runCLI(t, "--progress-interval", "0s", "gen", "--out", filepath.Join(t.TempDir(), "g.csv")); code != 2 || !strings.Contains(stderr, "--progress-interval") {
		t.Errorf("interval 0: exit %d, stderr %q; want 2 naming the flag", code, stderr)
	}
}

// TestSummaryAgreesWithReport: the summary's node line counts levels as the report
// does ("level 2 of 0–4": level 0 is the original, the report's levels − 1 the top), and a
// release that suppresses every record says so on stdout and as a logged warning.
func TestSummaryAgreesWithReport(t *testing.T) {
	notInRaceRun(t)
	td := repoTestdata(t)
	for _, tc := range []struct {
		name, privacy string
		empty         bool
	}{
		{"k=5", "privacy: {k: 5, suppression: 0.05}", false},
		{"every record suppressed", "privacy: {k: 6000, suppression: 1.0}", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfgPath := filepath.Join(dir, "c.yaml")
			writeFile(t, cfgPath, testfiles.Replace(t, baseConfig(t), "privacy: {k: 5, suppression: 0.05}", tc.privacy))
			report := filepath.Join(dir, "r.json")
			code, stdout, stderr := runCLI(t, "release", "-c", cfgPath, "--in", filepath.Join(td, "hospital.csv"),
				"--out", filepath.Join(dir, "r.csv"), "--report", report)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var rep struct {
				Node []struct {
					Column        string
					Level, Levels int
				}
			}
			if err := json.Unmarshal(readFile(t, report), &rep); err != nil || len(rep.Node) == 0 {
				t.Fatalf("report: %v, node %v", err, rep.Node)
			}
			for _, n := range rep.Node {
				if want := fmt.Sprintf(" %s level %d of 0–%d", n.Column, n.Level, n.Levels-1); !strings.Contains(stdout, want) {
					t.Errorf("summary lacks %q (the report's level and levels):\n%s", want, stdout)
				}
			}
			warned := strings.Contains(stdout, "warning: the release holds no record") && strings.Contains(stderr, "WARN") && strings.Contains(stderr, "holds no record")
			if warned != tc.empty {
				t.Errorf("empty-release warning %v, want %v:\nstdout %s\nstderr %s", warned, tc.empty, stdout, stderr)
			}
		})
	}
}

// TestValidate: validate accepts the bundled configurations (with and without the
// input), gives the lattice size the release searches, writes nothing, and exits 2
// naming the key, file, column or row for each kind of mistake it must find.
func TestValidate(t *testing.T) {
	td := repoTestdata(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	writeFile(t, in, csvText(smallRows(), ','))
	cfgPath := filepath.Join(dir, "c.yaml")
	writeFile(t, cfgPath, baseConfig(t))
	badHier := filepath.Join(dir, "bad.csv")
	writeFile(t, badHier, "F;*\nM;X;*\n")

	// The lattice validate counts is the one the release searches.
	report := filepath.Join(t.TempDir(), "r.json")
	if code, _, stderr := runCLI(t, "release", "-c", filepath.Join(td, "hospital-tests.yaml"), "--in", filepath.Join(td, "hospital.csv"),
		"--out", filepath.Join(filepath.Dir(report), "r.csv"), "--report", report); code != 0 {
		t.Fatalf("release: exit %d: %s", code, stderr)
	}
	var rep struct{ Lattice struct{ Size int } }
	if err := json.Unmarshal(readFile(t, report), &rep); err != nil || rep.Lattice.Size == 0 {
		t.Fatalf("report: %v %+v", err, rep)
	}
	code, stdout, stderr := runCLI(t, "validate", "-c", filepath.Join(td, "hospital-tests.yaml"), "--in", filepath.Join(td, "hospital.csv"))
	if want := fmt.Sprintf("lattice %d nodes", rep.Lattice.Size); code != 0 || !strings.Contains(stdout, want) || !strings.Contains(stdout, "5000 records") {
		t.Errorf("validate with the input: exit %d, stdout %q, stderr %q; want %q", code, stdout, stderr, want)
	}

	tests := []struct {
		name string
		cfg  string // the configuration's text
		in   string // --in, if any
		code int
		want []string // in stdout (exit 0) or stderr
	}{
		{"valid, no input", baseConfig(t), "", 0, []string{"is valid", "depends on the data"}},
		{"valid with input", baseConfig(t), in, 0, []string{"is valid", "10 records"}},
		{"dp configuration", testfiles.ReplaceAll(t, readConfig(t, td, "hospital-dp.yaml"), "file: hierarchies/", "file: "+filepath.Join(td, "hierarchies")+"/"), filepath.Join(td, "hospital.csv"), 0, []string{"dp: 4 outputs", "domains agree"}},
		{"unknown key", testfiles.Replace(t, baseConfig(t), privacyLine, "privacy: {k: 5, suppresion: 0.05}"), "", 2, []string{"privacy.suppresion"}},
		{"k missing", testfiles.Replace(t, baseConfig(t), privacyLine, "privacy: {suppression: 0.05}"), "", 2, []string{"privacy.k"}},
		{"missing hierarchy file", setSexHierarchy(t, baseConfig(t), filepath.Join(dir, "nosuch.csv")), "", 2, []string{"columns.sex.hierarchy.file", "nosuch.csv"}},
		{"malformed hierarchy file", setSexHierarchy(t, baseConfig(t), badHier), "", 2, []string{"bad.csv"}},
		{"value not in its hierarchy", baseConfig(t), writeInput(t, dir, "x.csv", withCell(3, "sex", secret)), 2, []string{"sex", "row"}},
		{"missing column", baseConfig(t), writeInput(t, dir, "y.csv", csvText(dropColumn(smallRows(), "ward"), ',')), 2, []string{"ward"}},
		{"wrong type", baseConfig(t), writeInput(t, dir, "z.csv", withCell(2, "age", "old")), 2, []string{"age", "row"}},
		{"population beyond the bound", testfiles.Replace(t, baseConfig(t), searchLine, searchLine+"\nrisk: {population: 9223372036854775807}"), "", 2, []string{"c.yaml:", "risk.population", "at most 1000000000000"}},
		{"sampling fraction too small", testfiles.Replace(t, baseConfig(t), searchLine, searchLine+"\nrisk: {sampling-fraction: 1e-16}"), "", 2, []string{"c.yaml:", "risk.sampling-fraction", "at least 1e-09"}},
		{"sampling fraction beyond the population bound", testfiles.Replace(t, baseConfig(t), searchLine, searchLine+"\nrisk: {sampling-fraction: 1e-9}"), filepath.Join(td, "hospital.csv"), 2, []string{"risk.sampling-fraction", "population of 5e+12 records"}},
		{"min level above the top", testfiles.Replace(t, baseConfig(t), searchLine, "search: {algorithm: optimal, metric: loss, min-levels: {zip: 7}}"), in, 2, []string{"search.min-levels.zip"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cdir := t.TempDir()
			path := filepath.Join(cdir, "c.yaml")
			writeFile(t, path, tc.cfg)
			args := []string{"validate", "-c", path}
			if tc.in != "" {
				args = append(args, "--in", tc.in)
			}
			before := testfiles.Names(t, dir)
			code, stdout, stderr := runCLI(t, args...)
			out := stdout
			if tc.code != 0 {
				out = stderr
			}
			if code != tc.code {
				t.Fatalf("exit %d, want %d: stdout %q stderr %q", code, tc.code, stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q: %q", w, out)
				}
			}
			if strings.Contains(stdout+stderr, secret) {
				t.Errorf("a data value in the output: %q %q", stdout, stderr)
			}
			if after := testfiles.Names(t, dir); !slices.Equal(before, after) || !slices.Equal(testfiles.Names(t, cdir), []string{"c.yaml"}) {
				t.Errorf("validate wrote files: %v → %v, %v", before, after, testfiles.Names(t, cdir))
			}
		})
	}
}

// readConfig is a configuration of the testdata folder as text.
func readConfig(t *testing.T, td, name string) string {
	t.Helper()
	return string(readFile(t, filepath.Join(td, name)))
}

// writeInput writes content as file name in dir and returns its path.
func writeInput(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	writeFile(t, path, content)
	return path
}

// dropColumn removes column col from rows (header first).
func dropColumn(rows [][]string, col string) [][]string {
	i := slices.Index(rows[0], col)
	for r := range rows {
		rows[r] = slices.Delete(rows[r], i, i+1)
	}
	return rows
}

// TestVersionFlag: --version prints the version the build recorded (the one the
// reports and release metadata carry) and exits 0.
func TestVersionFlag(t *testing.T) {
	code, stdout, stderr := runCLI(t, "--version")
	if code != 0 || stdout != "sanitize "+build.Version+"\n" || build.Version == "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want %q", code, stdout, stderr, "sanitize "+build.Version)
	}
}

// TestDPFilesShareOnePermission: the manifest is readable as the outputs are (the
// same mode for every file of the dp folder), and so are a release and its report.
func TestDPFilesShareOnePermission(t *testing.T) {
	notInRaceRun(t)
	td := repoTestdata(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "dp")
	if code, _, stderr := runCLI(t, "dp", "-c", filepath.Join(td, "hospital-dp.yaml"), "--in", filepath.Join(td, "hospital.csv"), "--out", out); code != 0 {
		t.Fatalf("dp: exit %d: %s", code, stderr)
	}
	rel, rep := filepath.Join(dir, "r.csv"), filepath.Join(dir, "r.json")
	if code, _, stderr := runCLI(t, "release", "-c", filepath.Join(td, "hospital-tests.yaml"), "--in", filepath.Join(td, "hospital.csv"), "--out", rel, "--report", rep); code != 0 {
		t.Fatalf("release: exit %d: %s", code, stderr)
	}
	modes := map[string]os.FileMode{}
	for _, name := range testfiles.Names(t, out) {
		st, err := os.Stat(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		modes[name] = st.Mode().Perm()
	}
	for _, path := range []string{rel, rep} {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		modes[filepath.Base(path)] = st.Mode().Perm()
	}
	if _, ok := modes["manifest.json"]; !ok || len(modes) < 4 {
		t.Fatalf("files: %v", modes)
	}
	for name, m := range modes {
		if m != modes["manifest.json"] || m&0o044 == 0 {
			t.Errorf("modes differ or are private: %v (%s)", modes, name)
			break
		}
	}
}
