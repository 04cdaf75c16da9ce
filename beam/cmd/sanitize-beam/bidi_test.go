package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoRawBidiPrinted: names and paths that hold bidi controls or a terminal escape
// are printed with those shown as escapes (\u202e), on stderr and in JSON logs.
func TestNoRawBidiPrinted(t *testing.T) {
	dir := t.TempDir()
	name := "c\u202e\u2066\x1b[2J"
	cfg := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(cfg, []byte("dataset: x\ncolumns:\n  \"a\\u202eb\": {role: nonsense}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"release", "-c", filepath.Join(dir, "missing-"+name+".yaml"), "--out", filepath.Join(dir, name)},
		{"release", "-c", cfg, "--in", filepath.Join(dir, name+".csv"), "--out", filepath.Join(dir, name)},
		{"release", "--log-format", "json", "-c", cfg, "--in", filepath.Join(dir, name+".csv"), "--out", filepath.Join(dir, name)},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), args, &stdout, &stderr)
		printed := stdout.String() + stderr.String()
		if code != 2 || !strings.Contains(printed, `\u202e`) {
			t.Errorf("%q: exit %d, want 2 showing the override as an escape: %q", args, code, printed)
		}
		if strings.ContainsAny(printed, "\u202e\u2066\x1b") {
			t.Errorf("%q: printed a control raw: %q", args, printed)
		}
	}
}
