package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sanitizer/internal/testfiles"
)

// validateConfig is a valid configuration of the small input (smallRows), its
// hierarchy files absolute; the cases below edit its lines, numbered on the right.
func validateConfig(t *testing.T) string {
	hier := filepath.Join(repoTestdata(t), "hierarchies")
	return `input: {format: csv}
output: {format: csv}
columns:
  patient_id: {role: identifier}
  name:       {role: identifier}
  age:        {role: quasi, type: integer, hierarchy: {intervals: [5, 10, 20]}}
  sex:        {role: quasi, hierarchy: {file: ` + filepath.Join(hier, "sex.csv") + `}}
  zip:        {role: quasi, hierarchy: {mask: {from: right, max: 4}}}
  admitted:   {role: quasi, type: date, hierarchy: {date: [month, year, decade]}}
  diagnosis:  {role: sensitive, hierarchy: {file: ` + filepath.Join(hier, "diagnosis.csv") + `}}
  stay_days:  {role: insensitive, type: integer}
  ward:       {role: insensitive}
  insurance:  {role: insensitive}
privacy:
  k: 2
  l-diversity: {column: diagnosis, variant: distinct, l: 2}
search: {algorithm: optimal, metric: loss}
`
}

// editedConfig is validateConfig, followed by dpSection when dp, with line n set to
// edits[n] for each n of edits.
func editedConfig(t *testing.T, dp bool, edits map[int]string) string {
	t.Helper()
	cfg := validateConfig(t)
	if dp {
		cfg += dpSection
	}
	for n, line := range edits {
		cfg = setLine(t, cfg, n, line)
	}
	return cfg
}

// setLine replaces line n (1-based) of text by line.
func setLine(t *testing.T, text string, n int, line string) string {
	t.Helper()
	lines := strings.Split(text, "\n")
	if n < 1 || n > len(lines) {
		t.Fatalf("no line %d", n)
	}
	lines[n-1] = line
	return strings.Join(lines, "\n")
}

// TestValidateReportsEveryError: validate prints every error it can find in one run,
// one a line as c.yaml:LINE: key: message in the order of the lines, exits 2 and
// writes nothing; and the other commands, which stop at the first error, place the
// missing hierarchy file and the data-dependent errors at their configuration line
// too. No data value is printed.
func TestValidateReportsEveryError(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	writeFile(t, in, csvText(smallRows(), ','))
	unlisted := filepath.Join(dir, "unlisted.csv")
	writeFile(t, unlisted, withCell(3, "sex", secret))
	badHier := filepath.Join(dir, "bad.csv")
	writeFile(t, badHier, "F;*\nM;X;*\n")
	base := validateConfig(t)
	type edit struct {
		line int
		text string
	}
	tests := []struct {
		name  string
		edits []edit
		in    string   // --in, if any
		want  []string // the lines of the error, each "LINE: key: part of the message"
		other string   // another command that meets the first error
	}{
		{"mistakes in every part", []edit{
			{6, "  age:        {role: quasi, type: integer, hierarchy: {intervals: [5, 10, 20]}, colour: red}"},
			{7, "  sex:        {role: quasi, hierarchy: {file: " + filepath.Join(dir, "nosuch.csv") + "}}"},
			{10, "  diagnosis:  {role: sensitive, hierarchy: {file: " + badHier + "}}"},
			{15, "  k: 0"},
			{16, "  l-diversity: {column: ward, variant: distinct, l: 2}"},
			{17, "search: {algorithm: optimal, metric: precise}"},
		}, "", []string{
			"6: columns.age.colour: unknown key",
			"7: columns.sex.hierarchy.file: ", // and the system's message
			"10: columns.diagnosis.hierarchy.file: " + badHier + ":2: ",
			"15: privacy.k: must be at least 1, got 0",
			`16: privacy.l-diversity.column: column "ward" is not sensitive`,
			"17: search.metric: must be one of",
		}, ""},
		{"the release's checks and the hierarchy files", []edit{
			{7, "  sex:        {role: quasi, hierarchy: {file: " + filepath.Join(dir, "nosuch.csv") + "}}"},
			{17, "search: {algorithm: mondrian, metric: height}"},
		}, "", []string{
			"7: columns.sex.hierarchy.file: ",
			"17: search.metric: \"height\" is defined by a hierarchy level",
		}, ""},
		{"missing hierarchy file", []edit{
			{7, "  sex:        {role: quasi, hierarchy: {file: " + filepath.Join(dir, "nosuch.csv") + "}}"},
		}, in, []string{"7: columns.sex.hierarchy.file: "}, "release"},
		{"l above the distinct values", []edit{
			{16, "  l-diversity: {column: diagnosis, variant: distinct, l: 11}"},
		}, in, []string{`16: privacy.l-diversity.l: column "diagnosis": l = 11 but the input holds only 10 distinct values`}, "risk"},
		{"a value its hierarchy does not list", nil, unlisted, []string{
			"7: columns.sex.hierarchy.file: " + unlisted + ": row 3: column \"sex\": value not listed in hierarchy",
		}, "release"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base
			for _, e := range tc.edits {
				cfg = setLine(t, cfg, e.line, e.text)
			}
			cdir := t.TempDir()
			path := filepath.Join(cdir, "c.yaml")
			writeFile(t, path, cfg)
			args := []string{"validate", "-c", path}
			if tc.in != "" {
				args = append(args, "--in", tc.in)
			}
			before := testfiles.Names(t, dir)
			code, stdout, stderr := runCLI(t, args...)
			wantEveryError(t, path, code, stdout, stderr, tc.want, secret)
			if after := testfiles.Names(t, dir); !slices.Equal(before, after) || !slices.Equal(testfiles.Names(t, cdir), []string{"c.yaml"}) {
				t.Errorf("validate wrote files: %v → %v, %v", before, after, testfiles.Names(t, cdir))
			}
			if tc.other != "" {
				checkOtherCommand(t, tc.other, path, tc.in, path+":"+tc.want[0])
			}
		})
	}
}

// checkOtherCommand runs command (release or risk) on the configuration and
// input, and checks that it exits 2 with want as its error, writing nothing.
func checkOtherCommand(t *testing.T, command, cfg, in, want string) {
	t.Helper()
	out := t.TempDir()
	args := []string{command, "-c", cfg, "--in", in}
	if command == "release" {
		args = append(args, "--out", filepath.Join(out, "r.csv"))
	}
	code, stdout, stderr := runCLI(t, args...)
	if code != 2 || !strings.HasPrefix(stderr, "sanitize: "+want) || strings.Contains(stdout+stderr, secret) {
		t.Errorf("%s: exit %d, stderr %q; want 2 and %q…", command, code, stderr, want)
	}
	if names := testfiles.Names(t, out); len(names) > 0 {
		t.Errorf("%s wrote %v", command, names)
	}
}

// TestValidateConfigurationNotDecoded: a configuration whose YAML does not decode is
// one error (nothing else can be checked), exit 2.
func TestValidateConfigurationNotDecoded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	writeFile(t, path, "columns: {a: {role: x}\nprivacy: {k: 0}\n")
	code, _, stderr := runCLI(t, "validate", "-c", path)
	if want := fmt.Sprintf("sanitize: %s:1: syntax error", path); code != 2 || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, stderr %q; want 2 and one line %q…", code, stderr, want)
	}
}

// dpSection is a dp section to append to validateConfig (its lines 18 to 21).
const dpSection = `dp:
  epsilon-total: 1.0
  outputs:
    - {name: a, histogram: [sex], epsilon: 0.5}
`

// TestValidateEveryDataError: with --in, validate reports every configuration key the
// input shows wrong in one run, each at its line (the first row per column for values
// a column does not allow), exits 2, writes nothing and prints no data value.
func TestValidateEveryDataError(t *testing.T) {
	dir := t.TempDir()
	rows := smallRows()
	rows[2][2] = secret // age, row 2: not an integer
	rows[3][3] = secret // sex, row 3: not in its hierarchy…
	rows[5][3] = secret // …nor row 5: the first row is named
	in := filepath.Join(dir, "in.csv")
	writeFile(t, in, csvText(dropColumn(rows, "ward"), ','))
	rows = smallRows()
	rows[3][6] = secret // diagnosis, row 3: not in its hierarchy
	rows[2][7] = secret // stay_days, row 2: not an integer
	rows[4][2] = ""     // age, row 4: a null
	kept := filepath.Join(dir, "kept.csv")
	writeFile(t, kept, csvText(rows, ','))
	hier := filepath.Join(repoTestdata(t), "hierarchies")
	tests := []struct {
		name  string
		edits map[int]string
		dp    bool
		in    string // "": in
		want  []string
	}{
		{"columns released as they are", map[int]string{16: "  suppression: 0"}, false, kept, []string{
			`6: columns.age.null-as: ` + kept + `: row 4: column "age": null value`,
			`10: columns.diagnosis.hierarchy.file: ` + kept + `: row 3: column "diagnosis": value not listed in hierarchy`,
			`11: columns.stay_days.type: ` + kept + `: row 2: column "stay_days": `,
		}},
		{"release", map[int]string{
			16: "  l-diversity: {column: diagnosis, variant: distinct, l: 11}",
			17: "search: {algorithm: optimal, metric: loss, max-levels: {admitted: 9}, min-levels: {zip: 6}}",
		}, false, "", []string{
			`6: columns.age.hierarchy: ` + in + `: row 2: column "age": `,
			`7: columns.sex.hierarchy.file: ` + in + `: row 3: column "sex": value not listed in hierarchy`,
			`12: columns.ward: ` + in + `: configured column "ward" is missing from the input`,
			`16: privacy.l-diversity.l: column "diagnosis": l = 11 but the input holds only 10 distinct values`,
			`17: search.min-levels.zip: 6 is above the hierarchy's top level, 5`, // one line: in the columns' order
			`17: search.max-levels.admitted: 9 is above the hierarchy's top level, 4`,
		}},
		{"release and dp", map[int]string{
			6:  "  age:        {role: quasi, type: integer, hierarchy: {intervals: [5, 10, 20]}}",
			7:  "  sex:        {role: quasi, hierarchy: {file: " + filepath.Join(hier, "sex.csv") + "}, domain: [F]}",
			10: "  diagnosis:  {role: sensitive, hierarchy: {file: " + filepath.Join(hier, "diagnosis.csv") + "}, domain: {hierarchy-level: 0}}",
			16: "  l-diversity: {column: diagnosis, variant: distinct, l: 12}",
			21: "    - {name: a, histogram: [sex, diagnosis], epsilon: 0.5}",
		}, true, "", []string{
			`6: columns.age.hierarchy: ` + in + `: row 2: column "age": `,
			`7: columns.sex.hierarchy.file: ` + in + `: row 3: column "sex": value not listed in hierarchy`,
			`7: columns.sex.domain: ` + in + `: row 2: column "sex": a value outside the declared domain`,
			`12: columns.ward: ` + in + `: configured column "ward" is missing from the input`,
			`16: privacy.l-diversity.l: column "diagnosis": l = 12 but the input holds only 10 distinct values`,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := editedConfig(t, tc.dp, tc.edits)
			cdir := t.TempDir()
			path := filepath.Join(cdir, "c.yaml")
			writeFile(t, path, cfg)
			input := in
			if tc.in != "" {
				input = tc.in
			}
			code, stdout, stderr := runCLI(t, "validate", "-c", path, "--in", input)
			wantEveryError(t, path, code, stdout, stderr, tc.want, secret)
			if names := testfiles.Names(t, cdir); !slices.Equal(names, []string{"c.yaml"}) {
				t.Errorf("validate wrote %v", names)
			}
			if names := testfiles.Names(t, dir); !slices.Equal(names, []string{"in.csv", "kept.csv"}) {
				t.Errorf("validate wrote %v", names)
			}
		})
	}
}

// TestKeyMessagesPlaced: every message about a configuration key that a command finds
// after parsing, the input's included, says FILE:LINE: key (the line of the key or of
// the section that holds it); one about the input keeps its file, row and column and
// prints no data value. Each exits 2 and writes nothing.
func TestKeyMessagesPlaced(t *testing.T) {
	dir := t.TempDir()
	in := func(name, text string) string {
		path := filepath.Join(dir, name)
		writeFile(t, path, text)
		return path
	}
	good := in("in.csv", csvText(smallRows(), ','))
	extra := smallRows()
	for i := range extra {
		extra[i] = append(extra[i], "x")
	}
	extra[0][len(header)] = "extra"
	withExtra := in("extra.csv", csvText(extra, ','))
	nullAge := in("null-age.csv", withCell(2, "age", ""))
	nullStay := in("null-stay.csv", withCell(4, "stay_days", ""))
	noWard := in("no-ward.csv", csvText(dropColumn(smallRows(), "ward"), ','))
	tests := []struct {
		name    string
		command string
		edits   map[int]string
		dp      bool
		in      string
		want    string // "LINE: key: message…"
	}{
		{"level bound above the top", "release", map[int]string{17: "search: {algorithm: optimal, metric: loss, max-levels: {admitted: 9}}"}, false, good,
			"17: search.max-levels.admitted: 9 is above the hierarchy's top level, 4"},
		{"risk without quasi-identifiers", "risk", map[int]string{6: "  age: {role: insensitive}", 7: "  sex: {role: insensitive}", 8: "  zip: {role: insensitive}", 9: "  admitted: {role: insensitive}"}, false, good,
			"3: columns: a risk analysis needs at least one quasi-identifier"},
		{"configured column missing", "validate", nil, false, noWard,
			"12: columns.ward: " + noWard + `: configured column "ward" is missing from the input`},
		{"input column not configured", "release", nil, false, withExtra,
			"3: columns: " + withExtra + `: column "extra" is not in the configuration`},
		{"null without null-as", "release", nil, false, nullAge,
			"6: columns.age.null-as: " + nullAge + `: row 2: column "age": null value`},
		{"a value its built hierarchy cannot read", "release", nil, false, in("bad-age.csv", withCell(2, "age", secret)),
			"6: columns.age.hierarchy: " + dir + `/bad-age.csv: row 2: column "age": `},
		{"dp value outside its domain", "validate", map[int]string{7: "  sex: {role: quasi, hierarchy: {file: SEX}, domain: [F]}"}, true, good,
			"7: columns.sex.domain: " + good + `: row 2: column "sex": a value outside the declared domain`},
		{"dp domain above the hierarchy", "dp", map[int]string{7: "  sex: {role: quasi, hierarchy: {file: SEX}, domain: {hierarchy-level: 2}}"}, true, good,
			"7: columns.sex.domain.hierarchy-level: 2 is above the hierarchy's top level 1"},
		{"dp domain missing", "validate", map[int]string{21: "    - {name: a, histogram: [zip], epsilon: 0.5}"}, true, good,
			`8: columns.zip.domain: a DP output uses column "zip", which needs a declared domain`},
		{"dp budgets past the largest number", "dp", map[int]string{19: "  epsilon-total: 1e308", 21: "    - {name: a, histogram: [sex], epsilon: 1e308}\n    - {name: b, histogram: [sex], epsilon: 1e308}"}, true, good,
			"20: dp.outputs: the outputs' budgets: "},
		{"dp aggregated null", "validate", map[int]string{21: "    - {name: a, aggregate: {column: stay_days, stats: [count]}, epsilon: 0.5}"}, true, nullStay,
			"11: columns.stay_days.null-as: " + nullStay + `: row 4: column "stay_days": null value in an aggregated column`},
	}
	sex := filepath.Join(repoTestdata(t), "hierarchies", "sex.csv")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			edits := map[int]string{}
			for n, line := range tc.edits {
				edits[n] = strings.ReplaceAll(line, "SEX", sex)
			}
			cfg := editedConfig(t, tc.dp, edits)
			cdir := t.TempDir()
			path := filepath.Join(cdir, "c.yaml")
			writeFile(t, path, cfg)
			args := []string{tc.command, "-c", path, "--in", tc.in}
			switch tc.command {
			case "release":
				args = append(args, "--out", filepath.Join(cdir, "r.csv"))
			case "dp":
				args = append(args, "--out", filepath.Join(cdir, "dp"))
			}
			before := testfiles.Names(t, dir)
			code, stdout, stderr := runCLI(t, args...)
			if want := "sanitize: " + path + ":" + tc.want; code != 2 || !strings.HasPrefix(stderr, want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q…", code, stderr, want)
			}
			if strings.Contains(stdout+stderr, secret) {
				t.Errorf("a data value in the output: %q", stderr)
			}
			if after := testfiles.Names(t, dir); !slices.Equal(before, after) || !slices.Equal(testfiles.Names(t, cdir), []string{"c.yaml"}) {
				t.Errorf("%s wrote files: %v → %v, %v", tc.command, before, after, testfiles.Names(t, cdir))
			}
		})
	}
}

// wantEveryError fails unless validate exited 2 with nothing on stdout and one error
// line per entry of want, in order, each the configuration path, a colon and the entry
// (a prefix of the line), and none quoting secret.
func wantEveryError(t *testing.T, path string, code int, stdout, stderr string, want []string, secret string) {
	t.Helper()
	if code != 2 || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 2 and nothing on stdout", code, stdout, stderr)
	}
	got := strings.Split(strings.TrimSuffix(strings.TrimPrefix(stderr, "sanitize: "), "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("%d errors, want %d:\n%s", len(got), len(want), stderr)
	}
	for i, w := range want {
		if w := path + ":" + w; !strings.HasPrefix(got[i], w) {
			t.Errorf("error %d:\n got %q\nwant %q…", i, got[i], w)
		}
	}
	if strings.Contains(stderr, secret) {
		t.Errorf("a data value in the output: %q", stderr)
	}
}

// TestValidateDPBudget: outputs that need more than dp's totals are refused by
// validate as by dp, before anything is read: the same line, the same exit status (3,
// the budget cannot be met), with the input given or not.
func TestValidateDPBudget(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	writeFile(t, in, csvText(smallRows(), ','))
	cfg := validateConfig(t) + testfiles.Replace(t, dpSection, "epsilon: 0.5}", "epsilon: 0.5}\n    - {name: b, histogram: [sex], epsilon: 0.75}")
	path := filepath.Join(dir, "c.yaml")
	writeFile(t, path, cfg)
	want := "sanitize: " + path + ":18: dp: the outputs need ε=1.25, δ=0: "
	for _, args := range [][]string{
		{"dp", "-c", path, "--in", in, "--out", filepath.Join(dir, "dp")},
		{"validate", "-c", path},
		{"validate", "-c", path, "--in", in},
	} {
		code, _, stderr := runCLI(t, args...)
		if code != 3 || !strings.HasPrefix(stderr, want) {
			t.Errorf("%s: exit %d, stderr %q; want 3 and %q…", args[0], code, stderr, want)
		}
	}
	if names := testfiles.Names(t, dir); !slices.Equal(names, []string{"c.yaml", "in.csv"}) {
		t.Errorf("the folder holds %v", names)
	}
}
