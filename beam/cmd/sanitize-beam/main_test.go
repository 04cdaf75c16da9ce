package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sanitizer/internal/testfiles"
)

// TestReleaseCommand: sanitize-beam release on Prism publishes the parts and says so,
// with nothing on stderr under --quiet; run again it refuses to replace them without
// --force (exit 2) and replaces them with it, its temporary folder in --temp_location
// (left empty), logging its stages as JSON records and writing the HTML and the JSON
// report (--report twice, the JSON one recording every part's digest); a report that
// exists, two --report naming one file or one whose name says no format, a missing
// flag or input, and an unknown log format are exit 2.
func TestReleaseCommand(t *testing.T) {
	abs, _ := filepath.Abs("../../../../shared/data/adult")
	raw, err := os.ReadFile(filepath.Join(abs, "adult.csv"))
	if err != nil {
		t.Skipf("Adult data not available: %v", err)
	}
	dir := t.TempDir()
	lines := strings.Split(strings.TrimSpace(strings.ReplaceAll(string(raw), "\r\n", "\n")), "\n")
	parts := filepath.Join(dir, "parts")
	os.Mkdir(parts, 0o700)
	for i, n := 1, 0; i < len(lines); i, n = i+10000, n+1 {
		os.WriteFile(filepath.Join(parts, "p"+string(rune('a'+n))+".csv"), []byte(lines[0]+"\n"+strings.Join(lines[i:min(i+10000, len(lines))], "\n")+"\n"), 0o600)
	}
	var cfg strings.Builder
	cfg.WriteString("dataset: adult\ninput: {csv: {separator: \";\"}}\noutput: {csv: {separator: \";\"}}\ncolumns:\n")
	for _, q := range []string{"age", "education", "marital-status", "native-country", "race", "salary-class", "sex", "workclass"} {
		cfg.WriteString("  " + q + ": {role: quasi, hierarchy: {file: \"" + filepath.Join(abs, "adult_hierarchy_"+q+".csv") + "\"}}\n")
	}
	cfg.WriteString("  occupation: {role: insensitive}\nprivacy: {k: 5, suppression: 0.05}\n")
	c := filepath.Join(dir, "c.yaml")
	os.WriteFile(c, []byte(cfg.String()), 0o600)
	out, rep, repJSON := filepath.Join(dir, "rel"), filepath.Join(dir, "report.html"), filepath.Join(dir, "report.json")
	temp := t.TempDir()
	defer flag.Set("temp_location", "")
	args := []string{"release", "-c", c, "--in", parts, "--out", out, "--runner=prism"}
	with := func(more ...string) []string { return append(slices.Clone(args), more...) }
	quietStderr := func(t *testing.T, stderr string) {
		if stderr != "" {
			t.Errorf("--quiet: stderr %q", stderr)
		}
	}
	for i, tt := range []struct {
		args   []string
		code   int
		says   string
		stderr func(t *testing.T, stderr string) // nil: not checked
	}{
		{with("--quiet"), 0, "released 28816 of 30162 records", quietStderr},
		// the node in the CLI's words (report.LevelOf), never a bare vector
		{with("--force", "--quiet"), 0, "node (level 0 = original values, the top = *): age level 3 of 0–4, education level 2 of 0–3", quietStderr},
		{args, 2, "exists (use --force", nil},
		{with("--force", "--log-format", "json", "--report", rep, "--report", repJSON, "--temp_location", temp), 0, "report: " + rep + "\nreport: " + repJSON, jsonStages},
		{with("--force", "--report", filepath.Join(dir, "x.json"), "--report", filepath.Join(dir, "x.json")), 2, "same file", nil},
		{with("--force", "--report", filepath.Join(dir, "x.txt")), 2, "x.txt", nil},
		{[]string{"release", "-c", c, "--in", parts, "--out", filepath.Join(dir, "rel2"), "--report", rep, "--runner=prism"}, 2, "--report: " + rep + " exists", nil},
		{[]string{"release", "--in", parts, "--out", out}, 2, "required", nil},
		{with("--force", "--log-format", "yaml"), 2, "--log-format", nil},
		{[]string{"release", "-c", c, "--out", filepath.Join(dir, "other")}, 2, "no input file (--in or input.path)", nil},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tt.args, &stdout, &stderr)
		if code != tt.code || !strings.Contains(stdout.String()+stderr.String(), tt.says) {
			t.Errorf("run %d: exit %d, want %d; stdout %q stderr %q", i, code, tt.code, stdout.String(), stderr.String())
		}
		if tt.stderr != nil {
			tt.stderr(t, stderr.String())
		}
	}
	if entries, _ := os.ReadDir(out); len(entries) != 4 {
		t.Errorf("%d release parts, want 4", len(entries))
	}
	if html, err := os.ReadFile(rep); err != nil || !bytes.HasPrefix(html, []byte("<!DOCTYPE html>")) || !bytes.Contains(html, []byte("sanitize-beam")) {
		t.Errorf("the HTML report: %v, %.100q", err, html)
	}
	var recorded struct {
		Output struct {
			PartDigests map[string]string `json:"part_digests"`
		}
	}
	if data, err := os.ReadFile(repJSON); err != nil || json.Unmarshal(data, &recorded) != nil || len(recorded.Output.PartDigests) != 4 {
		t.Errorf("the JSON report: %v, %d part digests, want 4", err, len(recorded.Output.PartDigests))
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 5 { // parts, c.yaml, rel, report.html, report.json: no temporary left
		t.Errorf("the folder holds %d entries, want 5", len(entries))
	}
	if entries, _ := os.ReadDir(temp); len(entries) != 0 {
		t.Errorf("--temp_location holds %v after the run", entries)
	}
}

// jsonStages fails t unless every line of stderr is a JSON record and the release's
// stages each logged one "stage done" record.
func jsonStages(t *testing.T, stderr string) {
	t.Helper()
	done := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		var rec struct{ Msg, Stage string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("--log-format json: a line that is not JSON: %q", line)
			continue
		}
		if rec.Msg == "stage done" {
			done[rec.Stage] = true
		}
	}
	for _, s := range []string{"read", "search", "write", "verify"} {
		if !done[s] {
			t.Errorf("--log-format json: no record of stage %q: %s", s, stderr)
		}
	}
}

// TestDPCommand: sanitize-beam dp on Prism publishes the bundled sample's histogram
// and prints the CLI's summary; a second run into the same folder, a synthetic output
// (not on Beam) and the budget spent are refused with the CLI's exit statuses.
func TestDPCommand(t *testing.T) {
	raw, err := os.ReadFile("../../../testdata/hospital-dp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	hier, _ := filepath.Abs("../../../testdata/hierarchies")
	in, _ := filepath.Abs("../../../testdata/hospital.csv")
	text := testfiles.ReplaceAll(t, string(raw), "hierarchies/", hier+"/")
	text = text[:strings.Index(text, "    - {name: pairs")]
	dir := t.TempDir()
	c, synth := filepath.Join(dir, "c.yaml"), filepath.Join(dir, "s.yaml")
	os.WriteFile(c, []byte(text), 0o600)
	os.WriteFile(synth, []byte(testfiles.ReplaceAll(t, string(raw), "hierarchies/", hier+"/")), 0o600)
	out, ledger := filepath.Join(dir, "out"), filepath.Join(dir, "ledger.json")
	args := func(cfg, out string) []string {
		return []string{"dp", "-c", cfg, "--in", in, "--out", out, "--ledger", ledger, "--runner=prism"}
	}
	for i, tt := range []struct {
		args []string
		code int
		says string
	}{
		{args(c, out), 0, "age-by-diagnosis"},
		{args(c, out), 2, "--out"},
		{args(synth, filepath.Join(dir, "s")), 2, "synthetic records do not run on Beam"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tt.args, &stdout, &stderr)
		if code != tt.code || !strings.Contains(stdout.String()+stderr.String(), tt.says) {
			t.Errorf("run %d: exit %d, want %d; stdout %q stderr %q", i, code, tt.code, stdout.String(), stderr.String())
		}
	}
	// ε 0.5 a run against ε-total 5: the tenth run spends the last of it.
	code := 0
	for n := 2; code == 0 && n < 20; n++ {
		var stdout, stderr bytes.Buffer
		if code = run(context.Background(), args(c, filepath.Join(dir, fmt.Sprint("out", n))), &stdout, &stderr); code != 0 && n != 11 {
			t.Errorf("run %d: exit %d: %s", n, code, stderr.String())
		}
	}
	if code != 3 {
		t.Errorf("past the budget: exit %d, want 3", code)
	}
}

// TestTempLocation: a run's temporary folder goes to --temp_location, else to the
// folder tmp of --staging_location (as Beam's Dataflow runner takes it), else to the
// system's temporary folder ("").
func TestTempLocation(t *testing.T) {
	defer flag.Set("temp_location", "")
	defer flag.Set("staging_location", "")
	for _, c := range []struct{ temp, staging, want string }{
		{"", "", ""},
		{"/shared/tmp", "", "/shared/tmp"},
		{"gs://b/tmp", "gs://b/staging", "gs://b/tmp"},
		{"", "gs://b/staging/", "gs://b/staging/tmp"},
	} {
		if err := errors.Join(flag.Set("temp_location", c.temp), flag.Set("staging_location", c.staging)); err != nil {
			t.Fatal(err)
		}
		if got := tempLocation(); got != c.want {
			t.Errorf("--temp_location %q --staging_location %q: %q, want %q", c.temp, c.staging, got, c.want)
		}
	}
}
