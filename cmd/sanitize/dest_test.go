package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestForceNeverReplacesWhatTheRunReads: release --out and --report and risk --report
// with --force naming a hierarchy file or the configuration through a hard link or a
// link to its folder, or a new file among the input's parts through a link to their
// folder, exit 2 naming the path and leave the file as it was.
func TestForceNeverReplacesWhatTheRunReads(t *testing.T) {
	td := repoTestdata(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "conf")
	if err := os.MkdirAll(filepath.Join(conf, "hierarchies"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"hospital-tests.yaml", "hierarchies/sex.csv", "hierarchies/diagnosis.csv"} {
		writeFile(t, filepath.Join(conf, f), string(readFile(t, filepath.Join(td, f))))
	}
	parts := filepath.Join(dir, "parts")
	if err := os.Mkdir(parts, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(parts, "part-0.csv"), string(readFile(t, filepath.Join(td, "hospital.csv"))))
	if err := os.Symlink(conf, filepath.Join(dir, "clink")); err != nil {
		t.Skip(err)
	}
	if err := os.Symlink(parts, filepath.Join(dir, "plink")); err != nil {
		t.Skip(err)
	}
	if err := os.Link(filepath.Join(conf, "hierarchies", "sex.csv"), filepath.Join(dir, "sex.csv")); err != nil {
		t.Skip(err)
	}
	cfg := filepath.Join(conf, "hospital-tests.yaml")
	in := filepath.Join(dir, "parts")
	out := filepath.Join(dir, "r.csv")
	cases := []struct{ name, dest string }{
		{"hard link of a hierarchy file", filepath.Join(dir, "sex.csv")},
		{"hierarchy file through a linked folder", filepath.Join(dir, "clink", "hierarchies", "diagnosis.csv")},
		{"configuration through a linked folder", filepath.Join(dir, "clink", "hospital-tests.yaml")},
		{"new part through a linked folder", filepath.Join(dir, "plink", "part-3.csv")},
	}
	for _, c := range cases {
		for _, args := range [][]string{
			{"release", "-c", cfg, "--in", in, "--out", c.dest, "--force"},
			{"release", "-c", cfg, "--in", in, "--out", out, "--report", c.dest, "--force"},
			{"risk", "-c", cfg, "--in", in, "--report", c.dest, "--force"},
		} {
			t.Run(c.name+"/"+strings.Join(args[:1], "")+"/"+args[len(args)-3], func(t *testing.T) {
				before, beforeErr := os.ReadFile(c.dest)
				code, stdout, stderr := runCLI(t, args...)
				if code != 2 || !strings.Contains(stderr, c.dest) {
					t.Errorf("exit %d, want 2 naming %s\nstdout: %s\nstderr: %s", code, c.dest, stdout, stderr)
				}
				after, afterErr := os.ReadFile(c.dest)
				if string(after) != string(before) || (beforeErr == nil) != (afterErr == nil) {
					t.Errorf("%s was changed", c.dest)
				}
			})
		}
	}
}
