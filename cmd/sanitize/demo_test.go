package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDemoPrintsNoWarning runs the sanitize commands of the Makefile's demo target, as
// it writes them (the outputs in a temporary folder), and fails unless each exits 0 and
// none prints a warning: the bundled example is one to copy. It also checks that the
// demo writes the release's report in both formats and checks the release against the
// JSON one.
func TestDemoPrintsNoWarning(t *testing.T) {
	notInRaceRun(t)
	repo := filepath.Dir(repoTestdata(t))
	raw, err := os.ReadFile(filepath.Join(repo, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	var cmds [][]string
	inDemo := false
	for _, line := range strings.Split(string(raw), "\n") {
		switch {
		case strings.HasPrefix(line, "demo:"):
			inDemo = true
		case inDemo && !strings.HasPrefix(line, "\t"):
			inDemo = false
		case inDemo && strings.HasPrefix(line, "\t./bin/sanitize "):
			args := strings.Fields(strings.ReplaceAll(strings.TrimPrefix(line, "\t./bin/sanitize "), "$(OUT)", out))
			for i, a := range args {
				if strings.HasPrefix(a, "testdata/") {
					args[i] = filepath.Join(repo, a)
				}
			}
			cmds = append(cmds, args)
		}
	}
	if len(cmds) < 4 {
		t.Fatalf("the demo target runs %d sanitize commands, want release, check, risk and dp: %q", len(cmds), cmds)
	}
	for _, args := range cmds {
		code, stdout, stderr := runCLI(t, args...)
		said := strings.ToLower(strings.ReplaceAll(stdout, out, "OUT")) // the folder's name holds the test's
		if code != 0 || stderr != "" || strings.Contains(said, "warn") {
			t.Errorf("sanitize %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, stdout, stderr)
		}
	}
	for _, f := range []string{"hospital-report.json", "hospital-report.html", "hospital-release.csv", "hospital-risk.html"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("the demo did not write %s: %v", f, err)
		}
	}
	if !strings.Contains(strings.Join(cmds[1], " "), "--report") {
		t.Errorf("the demo's check does not read the report: %q", cmds[1])
	}
}

// notInRaceRun skips, under -short (make test's race run), a test of what the CLI
// prints or writes rather than of its concurrency (the supervisor, signals,
// publication and locks, which the race run's other tests exercise); make test's full
// run runs it.
func notInRaceRun(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("what the CLI prints or writes, not its concurrency: make test's full run has it")
	}
}
