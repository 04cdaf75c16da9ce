package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sanitizer/internal/testfiles"
)

// TestReleaseSeveralReports: release --report r.json --report r.html writes both (and
// says so), check --report takes the JSON one and refuses the HTML one with exit 2
// naming it and the report it needs; a repeated --report, or one whose name says no
// format, is exit 2 with nothing written.
func TestReleaseSeveralReports(t *testing.T) {
	td := repoTestdata(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	writeFile(t, cfg, baseConfig(t))
	in, out := filepath.Join(td, "hospital.csv"), filepath.Join(dir, "r.csv")
	js, html := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.html")
	code, stdout, stderr := runCLI(t, "release", "-c", cfg, "--in", in, "--out", out, "--report", js, "--report", html)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, p := range []string{js, html} {
		if !strings.Contains(stdout, "report: "+p+"\n") {
			t.Errorf("stdout does not name the report %s:\n%s", p, stdout)
		}
	}
	if page := string(readFile(t, html)); !strings.HasPrefix(page, "<!DOCTYPE html>") {
		t.Errorf("%s is not an HTML page: %.100s", html, page)
	}
	if code, _, stderr := runCLI(t, "check", "-c", cfg, "--in", in, "--release", out, "--report", js); code != 0 {
		t.Errorf("check --report %s: exit %d: %s", js, code, stderr)
	}
	code, _, stderr = runCLI(t, "check", "-c", cfg, "--in", in, "--release", out, "--report", html)
	if code != 2 || !strings.Contains(stderr, html) || !strings.Contains(stderr, "--report R.json") || strings.Contains(stderr, "invalid character") {
		t.Errorf("check --report %s: exit %d, want 2 naming it and the JSON report: %s", html, code, stderr)
	}
	before := testfiles.Names(t, dir)
	for _, reports := range [][]string{
		{filepath.Join(dir, "a.json"), filepath.Join(dir, "a.json")},
		{filepath.Join(dir, "a.json"), filepath.Join(dir, "a.txt")},
	} {
		args := []string{"release", "-c", cfg, "--in", in, "--out", filepath.Join(dir, "r2.csv")}
		for _, r := range reports {
			args = append(args, "--report", r)
		}
		if code, _, stderr := runCLI(t, args...); code != 2 || !strings.Contains(stderr, reports[1]) {
			t.Errorf("--report %v: exit %d, want 2 naming %s: %s", reports, code, reports[1], stderr)
		}
		if after := testfiles.Names(t, dir); !slices.Equal(after, before) {
			t.Errorf("--report %v: the refused run wrote %v", reports, after)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "a.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused run wrote a report: %v", err)
	}
}
