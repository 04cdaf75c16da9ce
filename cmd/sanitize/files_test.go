package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sanitizer/internal/testfiles"
	"sanitizer/schema"
)

// sparseFile makes a file of size bytes that takes no room on the disk.
func sparseFile(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
}

// TestNonRegularFilesRefused: a configuration, a hierarchy file or an input (or a
// release that check or risk reads) that is a device (/dev/zero, /dev/urandom: read
// without end) or a named pipe, and a
// configuration or hierarchy file larger than allowed, are exit 2 naming the file (and
// the key that names a hierarchy file), from every command that reads them, before
// anything is read from them or written.
func TestNonRegularFilesRefused(t *testing.T) {
	td := repoTestdata(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := mkfifo(fifo); err != nil {
		t.Skip(err)
	}
	bigConfig := filepath.Join(dir, "big.yaml")
	sparseFile(t, bigConfig, schema.MaxConfigBytes+1)
	bigHier := filepath.Join(dir, "big.csv")
	sparseFile(t, bigHier, schema.MaxHierarchyBytes+1)
	config := func(hier string) string {
		p := filepath.Join(t.TempDir(), "c.yaml")
		cfg := baseConfig(t)
		if hier != "" {
			cfg = setSexHierarchy(t, cfg, hier)
		}
		writeFile(t, p, cfg)
		return p
	}
	good := config("")
	dpConfig := filepath.Join(t.TempDir(), "dp.yaml")
	dp := testfiles.ReplaceAll(t, readConfig(t, td, "hospital-dp.yaml"), "file: hierarchies/", "file: "+filepath.Join(td, "hierarchies")+"/")
	writeFile(t, dpConfig, testfiles.Replace(t, dp, "unlisted: drop\n", "unlisted: drop\ninput: {format: csv}\n"))
	in := filepath.Join(td, "hospital.csv")
	report := filepath.Join(t.TempDir(), "r.json") // a report check never gets to read
	writeFile(t, report, "{}")
	out := t.TempDir()
	commands := func(cfg, input string) map[string][]string {
		return map[string][]string{
			"validate":          {"validate", "-c", cfg},
			"validate --in":     {"validate", "-c", cfg, "--in", input},
			"release":           {"release", "-c", cfg, "--in", input, "--out", filepath.Join(out, "r.csv"), "--report", filepath.Join(out, "r.json")},
			"risk":              {"risk", "-c", cfg, "--in", input, "--report", filepath.Join(out, "risk.html")},
			"check":             {"check", "-c", cfg, "--in", input, "--release", in},
			"check --release":   {"check", "-c", cfg, "--in", in, "--release", input, "--report", report},
			"risk --release":    {"risk", "-c", cfg, "--in", in, "--release", input},
			"dp (its own conf)": {"dp", "-c", dpConfig, "--in", input, "--out", filepath.Join(out, "dp")},
		}
	}
	for _, c := range []struct {
		name       string
		cfg, input string
		skip       []string // commands that do not read what is wrong
		want       []string
	}{
		{"configuration is /dev/zero", "/dev/zero", in, []string{"dp (its own conf)", "check --release", "risk --release"}, []string{"/dev/zero", "not a regular file", "configuration"}},
		{"configuration a named pipe", fifo, in, []string{"dp (its own conf)", "check --release", "risk --release"}, []string{fifo, "not a regular file (a named pipe)"}},
		{"configuration too large", bigConfig, in, []string{"dp (its own conf)", "check --release", "risk --release"}, []string{bigConfig, "more than 16 MiB"}},
		{"hierarchy is /dev/urandom", config("/dev/urandom"), in, []string{"dp (its own conf)", "check --release", "risk --release"}, []string{"columns.sex.hierarchy.file", "/dev/urandom", "not a regular file"}},
		{"hierarchy a named pipe", config(fifo), in, []string{"dp (its own conf)", "check --release", "risk --release"}, []string{"columns.sex.hierarchy.file", "not a regular file (a named pipe)"}},
		{"hierarchy too large", config(bigHier), in, []string{"dp (its own conf)", "check --release", "risk --release"}, []string{"columns.sex.hierarchy.file", bigHier, "more than 256 MiB"}},
		{"input is /dev/zero", good, "/dev/zero", []string{"validate"}, []string{"/dev/zero", "not a regular file"}},
		{"input a named pipe", good, fifo, []string{"validate"}, []string{fifo, "not a regular file (a named pipe)"}},
	} {
		for name, args := range commands(c.cfg, c.input) {
			if strings.Contains(strings.Join(c.skip, "|"), name) {
				continue
			}
			t.Run(strings.ReplaceAll(c.name+" "+name, "/", "_"), func(t *testing.T) {
				code, stdout, stderr := runCLI(t, args...)
				if code != 2 {
					t.Fatalf("exit %d, want 2: stdout %q stderr %q", code, stdout, stderr)
				}
				for _, w := range c.want {
					if !strings.Contains(stderr, w) {
						t.Errorf("stderr lacks %q: %q", w, stderr)
					}
				}
				if got := testfiles.Names(t, out); len(got) != 0 {
					t.Errorf("written: %v", got)
				}
			})
		}
	}
}
