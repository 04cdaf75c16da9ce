package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestSignalStops sends SIGTERM (and, to gen, SIGINT too: the commands share the
// handling) to a real gen, release and dp process while it writes and when it is about
// to publish: the run stops, exits 1 (a failure that is
// not the input's), says it was interrupted, and leaves neither the output nor a
// temporary in the folder (dp: the ledger stays).
func TestSignalStops(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	td := repoTestdata(t)
	both := []syscall.Signal{syscall.SIGTERM, syscall.SIGINT}
	term := both[:1] // the commands share the signal handling gen's cases test
	cases := []struct {
		name   string
		stages []string
		sigs   []syscall.Signal
		args   func(dir string) []string
		out    string
		keep   []string // what a stopped run leaves in the folder
	}{
		// 20,000 records are five batches: a run that went on after the signal at the
		// first would write them all and publish.
		{"gen", []string{"write", "publish"}, both, func(dir string) []string {
			return []string{"gen", "--rows", "20000", "--seed", "3", "--out", filepath.Join(dir, "g.parquet")}
		}, "g.parquet", nil},
		{"gen-csv", []string{"write"}, both, func(dir string) []string {
			return []string{"gen", "--rows", "20000", "--out", filepath.Join(dir, "g.csv")}
		}, "g.csv", nil},
		{"release", []string{"write", "publish"}, term, func(dir string) []string {
			return []string{"release", "-c", filepath.Join(td, "hospital-tests.yaml"), "--in", filepath.Join(td, "hospital.csv"),
				"--out", filepath.Join(dir, "r.csv")}
		}, "r.csv", nil},
		{"dp", []string{"noise", "recorded", "publish"}, term, func(dir string) []string {
			return []string{"dp", "-c", filepath.Join(td, "hospital-dp.yaml"), "--in", filepath.Join(td, "hospital.csv"),
				"--out", filepath.Join(dir, "dp"), "--ledger", filepath.Join(dir, "ledger.json")}
		}, "dp", []string{"ledger.json", "ledger.json.lock"}},
	}
	for _, c := range cases {
		for _, stage := range c.stages {
			for _, sig := range c.sigs {
				t.Run(c.name+"/"+stage+"/"+sig.String(), func(t *testing.T) {
					dir := t.TempDir()
					var stderr strings.Builder
					cmd := startWith(t, pauseEnv, stage, &stderr, c.args(dir)...)
					if err := cmd.Process.Signal(sig); err != nil {
						t.Fatal(err)
					}
					err := cmd.Wait()
					var exit *exec.ExitError
					if !errors.As(err, &exit) || exit.ExitCode() != 1 {
						t.Errorf("%s at %s: %v, want exit status 1\nstderr: %s", sig, stage, err, stderr.String())
					}
					if !strings.Contains(stderr.String(), "interrupted") {
						t.Errorf("stderr does not say the run was interrupted: %q", stderr.String())
					}
					if _, err := os.Lstat(filepath.Join(dir, c.out)); err == nil {
						t.Errorf("%s at %s: %s was published", sig, stage, c.out)
					}
					if left := temporaries(t, dir, c.keep...); len(left) > 0 {
						t.Errorf("%s at %s: the folder holds %q", sig, stage, left)
					}
				})
			}
		}
	}
}
