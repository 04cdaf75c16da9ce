package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sanitizer/internal/testfiles"
)

// hidden are the characters that reorder or hide what a terminal shows around them,
// or drive the terminal: the explicit bidi formatting characters, the marks, and
// controls (ESC, a C1 control).
const hidden = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c\x1b\u009b\u2029"

// hiding is a name that holds every hidden character, Hebrew letters and an unmatched
// PDI and PDF.
func hiding(name string) string { return "\u2069\u202c" + name + "\u202e" + hidden + "עב" }

// rawHidden is the first hidden character in s, or -1.
func rawHidden(s string) rune {
	if i := strings.IndexAny(s, hidden); i >= 0 {
		r := []rune(s[i:])[0]
		return r
	}
	return -1
}

// TestNoRawBidiOnTerminal: a release, a dp run and a refused run whose dataset,
// columns, hierarchy labels, DP outputs, configuration keys and paths hold bidi
// controls and terminal escapes print none of them raw on stdout or stderr, text or
// JSON logs: each is shown as an escape (\u202e), and a JSON log record still decodes
// to the name.
func TestNoRawBidiOnTerminal(t *testing.T) {
	notInRaceRun(t)
	td := repoTestdata(t)
	dir := t.TempDir()
	sex, diag, ward := hiding("sex"), hiding("diagnosis"), hiding("ward")
	in := renamedInput(t, dir, map[string]string{"sex": sex, "diagnosis": diag, "ward": ward})
	hier := filepath.Join(dir, hiding("sex")+".csv")
	writeFile(t, hier, "F;"+hiding("female")+";*\nM;"+hiding("male")+";*\n")
	q := strconv.QuoteToASCII // a YAML double-quoted scalar
	cfg := baseConfig(t)
	// A dataset name with controls is refused (it names a budget in the ledger); one
	// in Hebrew is not.
	cfg = testfiles.Replace(t, cfg, "dataset: hospital-sample", "dataset: "+q("מחלקה-admissions"))
	cfg = setSexHierarchy(t, cfg, q(hier))
	cfg = testfiles.Replace(t, cfg, "  sex: ", "  "+q(sex)+": ")
	cfg = testfiles.Replace(t, cfg, "  diagnosis: ", "  "+q(diag)+": ")
	cfg = testfiles.Replace(t, cfg, "  ward: ", "  "+q(ward)+": ")
	cfgPath := filepath.Join(dir, hiding("c")+".yaml")
	writeFile(t, cfgPath, cfg)
	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, bad, testfiles.Replace(t, cfg, "unlisted: error", "unlisted: error\n"+q(hiding("unknown-key"))+": 1"))
	badDataset := filepath.Join(dir, "dataset.yaml")
	writeFile(t, badDataset, testfiles.Replace(t, cfg, q("מחלקה-admissions"), q(hiding("ward-admissions"))))
	dpConfig := func(output string) string {
		p := filepath.Join(dir, output+".yaml")
		writeFile(t, p, strings.Join([]string{
			"dataset: " + q("מחלקה"), "unlisted: drop", "columns:",
			"  " + q(sex) + ": {role: insensitive, domain: [F, M]}",
			"dp: {epsilon-total: 1, outputs: [{name: " + q(output) + ", histogram: [" + q(sex) + "], epsilon: 0.5}]}",
		}, "\n"))
		return p
	}
	// An output's name with controls is refused (it names a file); a column's is not.
	dpCfg, dpBad := dpConfig("by-sex"), dpConfig(hiding("by-sex"))
	out := func(name string) string { return filepath.Join(dir, hiding(name)) }
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"release", []string{"release", "-c", cfgPath, "--in", in, "--out", out("r") + ".csv", "--report", out("rep") + ".html"}, 0},
		{"release-json", []string{"--log-format", "json", "release", "-c", cfgPath, "--in", in, "--out", out("j") + ".csv"}, 0},
		{"validate", []string{"validate", "-c", cfgPath, "--in", in}, 0},
		{"unknown key", []string{"release", "-c", bad, "--in", in, "--out", out("x") + ".csv"}, 2},
		{"dataset", []string{"release", "-c", badDataset, "--in", in, "--out", out("x") + ".csv"}, 2},
		{"unlisted column", []string{"release", "-c", filepath.Join(td, "hospital-tests.yaml"), "--in", in, "--out", out("y") + ".csv"}, 2},
		{"dp", []string{"dp", "-c", dpCfg, "--in", in, "--out", out("dp")}, 0},
		{"dp output", []string{"dp", "-c", dpBad, "--in", in, "--out", out("dp2")}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout: %q\nstderr: %q", code, c.code, stdout, stderr)
			}
			for what, s := range map[string]string{"stdout": stdout, "stderr": stderr} {
				if r := rawHidden(s); r >= 0 {
					t.Errorf("%s holds %U raw: %q", what, r, s)
				}
			}
			if !strings.Contains(stdout+stderr, `\u202e`) {
				t.Errorf("neither stdout nor stderr shows a name: %q %q", stdout, stderr)
			}
			if c.name == "release-json" {
				checkJSONNames(t, stderr, diag)
			}
		})
	}
	if _, err := os.Stat(out("rep") + ".html"); err != nil {
		t.Errorf("the release wrote no HTML report: %v", err)
	}
}

// renamedInput writes the hospital sample with its columns renamed by names into dir,
// under a name with hidden characters, and returns its path.
func renamedInput(t *testing.T, dir string, names map[string]string) string {
	t.Helper()
	data := string(readFile(t, filepath.Join(repoTestdata(t), "hospital.csv")))
	head, rest, _ := strings.Cut(data, "\n")
	cols := strings.Split(head, ",")
	for i, c := range cols {
		if n, ok := names[c]; ok {
			cols[i] = n
		}
	}
	in := filepath.Join(dir, hiding("in")+".csv")
	writeFile(t, in, strings.Join(cols, ",")+"\n"+rest)
	return in
}

// checkJSONNames fails unless every line of stderr is a JSON record and one of them
// names column, decoded.
func checkJSONNames(t *testing.T, stderr, column string) {
	t.Helper()
	named := false
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("a JSON log line does not decode: %v: %q", err, line)
		}
		named = named || rec["column"] == column
	}
	if !named {
		t.Errorf("no JSON log record names the column %q: %q", column, stderr)
	}
}
