package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sanitizer/internal/testfiles"
)

// TestSupervisedStatus runs the command's main (this test binary, told by mainEnv),
// which runs each command in a supervised child process (internal/supervise): the
// child's statuses reach the caller as they are (0 done, 2 bad input, 3 the models
// cannot be met), with its output; a child that dies of the Go runtime's fatal error
// (a stack overflow: status 2 of its own) is an internal error, 1.
func TestSupervisedStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	td := repoTestdata(t)
	dir := t.TempDir()
	unattainable := filepath.Join(dir, "k.yaml")
	writeFile(t, unattainable, testfiles.Replace(t, baseConfig(t), privacyLine, "privacy: {k: 100000, suppression: 0}"))
	for _, c := range []struct {
		name string
		args []string
		code int
		want string // in stdout (0) or stderr
	}{
		{"done", []string{"release", "-c", filepath.Join(td, "hospital-tests.yaml"), "--in", filepath.Join(td, "hospital.csv"), "--out", filepath.Join(dir, "r.csv")}, 0, "verified from the written file"},
		{"bad input", []string{"release", "-c", "/dev/zero", "--in", filepath.Join(td, "hospital.csv"), "--out", filepath.Join(dir, "r2.csv")}, 2, "not a regular file"},
		{"unattainable", []string{"release", "-c", unattainable, "--in", filepath.Join(td, "hospital.csv"), "--out", filepath.Join(dir, "r3.csv")}, 3, "k=100000"},
		{"command-line mistake", []string{"release", "--no-such-flag"}, 2, "unknown flag"},
		{"crash", []string{"release", "-c", filepath.Join(td, "hospital-tests.yaml")}, 1, "internal error: the run's process ended with status 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], c.args...)
			cmd.Env = append(os.Environ(), mainEnv+"=1")
			if c.name == "crash" {
				cmd.Env = append(os.Environ(), mainEnv+"=overflow")
			}
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if err != nil && !errors.As(err, &ee) {
				t.Fatal(err)
			}
			out := stdout.String()
			if c.code != 0 {
				out = stderr.String()
			}
			if code := cmd.ProcessState.ExitCode(); code != c.code || !strings.Contains(out, c.want) || (c.code != 1 && strings.Contains(stderr.String(), "internal error")) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d and %q", code, stdout.String(), stderr.String(), c.code, c.want)
			}
		})
	}
}
