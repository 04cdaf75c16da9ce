package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sanitizer/internal/testfiles"
)

// TestRiskCommand: sanitize risk measures the bundled sample (exit 0, a summary, an
// HTML report), a release that meets its risk models (exit 0) and one that misses them
// (exit 3, the report still written); bad input is exit 2 with nothing written.
func TestRiskCommand(t *testing.T) {
	td := repoTestdata(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	writeFile(t, cfg, testfiles.Replace(t, baseConfig(t), "privacy: {k: 5, suppression: 0.05}",
		"privacy: {k: 5, suppression: 0.05, highest-risk: 0.2}\nrisk: {sampling-fraction: 0.01}"))
	in := filepath.Join(td, "hospital.csv")
	html := filepath.Join(dir, "risk.html")
	code, stdout, stderr := runCLI(t, "risk", "-c", cfg, "--in", in, "--report", html)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"population: 500000 records", "input " + in + ": 5000 records in 5000 classes", "prosecutor risk highest 100.0%",
		"population uniqueness", "quasi-identifiers age+zip: distinction", "report: " + html} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if page := string(readFile(t, html)); !strings.Contains(page, "<html") {
		t.Errorf("the report is not HTML: %.200s", page)
	}
	out := filepath.Join(dir, "r.csv")
	if code, _, stderr := runCLI(t, "release", "-c", cfg, "--in", in, "--out", out); code != 0 {
		t.Fatalf("release: exit %d: %s", code, stderr)
	}
	code, stdout, stderr = runCLI(t, "risk", "-c", cfg, "--in", in, "--release", out)
	if code != 0 || !strings.Contains(stdout, "model highest-risk: limit 0.2, measured 0.2: holds") {
		t.Fatalf("exit %d: %s\n%s", code, stdout, stderr)
	}
	strict := filepath.Join(dir, "strict.yaml")
	writeFile(t, strict, testfiles.Replace(t, string(readFile(t, cfg)), "highest-risk: 0.2", "highest-risk: 0.1"))
	json := filepath.Join(dir, "risk.json")
	code, stdout, stderr = runCLI(t, "risk", "-c", strict, "--in", in, "--release", out, "--report", json)
	if code != 3 || !strings.Contains(stdout, "model highest-risk: limit 0.1, measured 0.2: MISSED") || !strings.Contains(stderr, "highest re-identification risk") {
		t.Errorf("exit %d: %s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(json); err != nil {
		t.Errorf("the report of a release that misses its models: %v", err)
	}
	// Bad input: an existing report without --force, a missing input.
	if code, _, stderr := runCLI(t, "risk", "-c", cfg, "--in", in, "--report", html); code != 2 || !strings.Contains(stderr, "--report") {
		t.Errorf("existing report: exit %d: %s", code, stderr)
	}
	missing := filepath.Join(dir, "none.html")
	if code, _, _ := runCLI(t, "risk", "-c", cfg, "--in", filepath.Join(dir, "nope.csv"), "--report", missing); code != 2 {
		t.Errorf("missing input: exit %d, want 2", code)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed run wrote its report: %v", err)
	}
}
