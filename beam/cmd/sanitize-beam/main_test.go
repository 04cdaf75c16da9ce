package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReleaseCommand: sanitize-beam release on Prism publishes the parts and says so;
// run again it refuses to replace them without --force (exit 2) and replaces them with
// it; a missing flag is exit 2.
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
	out := filepath.Join(dir, "rel")
	args := []string{"release", "-c", c, "--in", parts, "--out", out, "--runner=prism"}
	for i, tt := range []struct {
		args []string
		code int
		says string
	}{
		{args, 0, "released 28816 of 30162 records"},
		{args, 2, "exists (use --force"},
		{append(args, "--force"), 0, "released 28816"},
		{[]string{"release", "--in", parts, "--out", out}, 2, "required"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tt.args, &stdout, &stderr)
		if code != tt.code || !strings.Contains(stdout.String()+stderr.String(), tt.says) {
			t.Errorf("run %d: exit %d, want %d; stdout %q stderr %q", i, code, tt.code, stdout.String(), stderr.String())
		}
	}
	if entries, _ := os.ReadDir(out); len(entries) != 4 {
		t.Errorf("%d release parts, want 4", len(entries))
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
	text := strings.ReplaceAll(string(raw), "hierarchies/", hier+"/")
	text = text[:strings.Index(text, "    - {name: pairs")]
	dir := t.TempDir()
	c, synth := filepath.Join(dir, "c.yaml"), filepath.Join(dir, "s.yaml")
	os.WriteFile(c, []byte(text), 0o600)
	os.WriteFile(synth, []byte(string(raw)), 0o600)
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
