package main

import (
	"bytes"
	"context"
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
