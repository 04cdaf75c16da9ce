package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"sanitizer/internal/supervise"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
)

// The kill tests run this test binary again as the command line: with childEnv set,
// TestMain runs the arguments as `sanitize` does (stopped by SIGINT and SIGTERM as
// main is), and with stopEnv set the run writes the stage's name to file descriptor 3
// when it reaches that stage and waits there to be killed; with pauseEnv set instead,
// it writes the name and waits there until a signal has cancelled the run, then goes
// on. With mainEnv set, TestMain is the command's main (supervisor and all; "overflow":
// the supervised child then dies of the runtime's fatal error).
const (
	childEnv = "SANITIZE_TEST_CHILD"
	mainEnv  = "SANITIZE_TEST_MAIN"
	stopEnv  = "SANITIZE_TEST_STOP"
	pauseEnv = "SANITIZE_TEST_PAUSE"
)

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) != "" {
		if os.Getenv(mainEnv) == "overflow" && supervise.Supervised() {
			overflow() // the runtime's fatal error, status 2
		}
		main() // the command as it is built, supervisor and all
	}
	if os.Getenv(childEnv) == "" {
		os.Exit(m.Run())
	}
	ctx, stopSignals := signalContext()
	var atStage func(job.Stage)
	if stop := os.Getenv(stopEnv); stop != "" {
		signal := os.NewFile(3, "stage")
		atStage = func(stage job.Stage) {
			if stage == job.Stage(stop) {
				fmt.Fprintln(signal, stage)
				select {} // until killed
			}
		}
	}
	if pause := os.Getenv(pauseEnv); pause != "" {
		signal := os.NewFile(3, "stage")
		atStage = func(stage job.Stage) {
			if stage == job.Stage(pause) {
				fmt.Fprintln(signal, stage)
				<-ctx.Done()
			}
		}
	}
	code := runWith(ctx, os.Args[1:], os.Stdout, os.Stderr, atStage)
	stopSignals()
	os.Exit(code)
}

// overflow recurses until the runtime ends the process with its fatal error "stack
// overflow" (exit status 2), which no recover catches.
func overflow() {
	debug.SetMaxStack(1 << 20)
	var f func(int) int
	f = func(n int) int { return f(n+1) + 1 }
	f(0)
}

// killAt starts the command line args in a child process, waits until it reaches
// stage, and kills it with SIGKILL.
func killAt(t *testing.T, stage string, args ...string) {
	t.Helper()
	cmd := startAt(t, stage, args...)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
}

// startAt starts the command line args in a child process and returns it once it
// waits at stage.
func startAt(t *testing.T, stage string, args ...string) *exec.Cmd {
	t.Helper()
	return startWith(t, stopEnv, stage, &strings.Builder{}, args...)
}

// startWith starts the command line args in a child process with env (stopEnv or
// pauseEnv) set to stage, its stderr written to stderr, and returns it once it has
// reached stage.
func startWith(t *testing.T, env, stage string, stderr *strings.Builder, args ...string) *exec.Cmd {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), childEnv+"=1", env+"="+stage)
	cmd.ExtraFiles = []*os.File{w}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	got := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		got <- strings.TrimSpace(line)
	}()
	select {
	case line := <-got:
		if line != stage {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("the child ended before stage %s\nstderr: %s", stage, stderr.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("the child did not reach stage %s in time", stage)
	}
	return cmd
}

// temporaries are the names in dir that are not in keep.
func temporaries(t *testing.T, dir string, keep ...string) []string {
	t.Helper()
	var extra []string
	for _, n := range testfiles.Names(t, dir) {
		if !slices.Contains(keep, n) {
			extra = append(extra, n)
		}
	}
	return extra
}

// TestKillLeavesNothing kills release, dp and gen with SIGKILL at each stage: nothing
// is at the output path, and the next run to the same output leaves no temporary of
// the killed run in the folder.
func TestKillLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	td := repoTestdata(t)
	in := filepath.Join(td, "hospital.csv")
	parquet := filepath.Join(t.TempDir(), "parquet.yaml")
	writeFile(t, parquet, testfiles.Replace(t, baseConfig(t), outputLine, "output: {format: parquet}"))
	cases := []struct {
		cmd    string
		stages []string
		args   func(dir string) []string
		out    string   // the output path's name in dir
		keep   []string // what a run leaves in dir besides out
	}{
		{"release", []string{"read", "search", "write", "verify", "publish"}, func(dir string) []string {
			return []string{"release", "-c", filepath.Join(td, "hospital-tests.yaml"), "--in", in,
				"--out", filepath.Join(dir, "r.csv"), "--report", filepath.Join(dir, "report.json")}
		}, "r.csv", []string{"report.json"}},
		{"release-parquet", []string{"write", "verify", "publish"}, func(dir string) []string {
			return []string{"release", "-c", parquet, "--in", in, "--out", filepath.Join(dir, "r.parquet")}
		}, "r.parquet", nil},
		{"dp", []string{"read", "noise", "recorded", "publish"}, func(dir string) []string {
			return []string{"dp", "-c", filepath.Join(td, "hospital-dp.yaml"), "--in", in,
				"--out", filepath.Join(dir, "dp"), "--ledger", filepath.Join(dir, "ledger.json")}
		}, "dp", []string{"ledger.json", "ledger.json.lock"}},
		{"gen", []string{"write", "publish"}, func(dir string) []string {
			return []string{"gen", "--rows", "20000", "--out", filepath.Join(dir, "gen.parquet")}
		}, "gen.parquet", nil},
	}
	for _, c := range cases {
		for _, stage := range c.stages {
			t.Run(c.cmd+"/"+stage, func(t *testing.T) {
				dir := t.TempDir()
				killAt(t, stage, c.args(dir)...)
				if _, err := os.Lstat(filepath.Join(dir, c.out)); err == nil {
					t.Errorf("killed at %s: %s exists", stage, c.out)
				}
				if code, _, stderr := runCLI(t, c.args(dir)...); code != 0 {
					t.Fatalf("the next run: exit %d\n%s", code, stderr)
				}
				if extra := temporaries(t, dir, append([]string{c.out}, c.keep...)...); len(extra) > 0 {
					t.Errorf("killed at %s, then run again: the folder still holds %q", stage, extra)
				}
			})
		}
	}
}

// TestLiveTemporaryKept: a run does not sweep the temporary of a run to the same
// output that is still alive; once that run is killed, the next run sweeps it.
func TestLiveTemporaryKept(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	td := repoTestdata(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "r.csv")
	args := []string{"release", "-c", filepath.Join(td, "hospital-tests.yaml"), "--in", filepath.Join(td, "hospital.csv"), "--out", out}
	child := startAt(t, "verify", args...)
	held := temporaries(t, dir)
	if len(held) == 0 {
		t.Fatal("the run waiting in its verify stage has no temporary file")
	}
	if code, _, stderr := runCLI(t, args...); code != 0 {
		t.Fatalf("a second run beside a live one: exit %d\n%s", code, stderr)
	}
	if got := temporaries(t, dir, "r.csv"); !slices.Equal(got, held) {
		t.Errorf("a run swept the temporary of a live run: %q, before %q", got, held)
	}
	_ = child.Process.Kill()
	_ = child.Wait()
	if code, _, stderr := runCLI(t, append(args, "--force")...); code != 0 {
		t.Fatalf("a run after the kill: exit %d\n%s", code, stderr)
	}
	if got := temporaries(t, dir, "r.csv"); len(got) > 0 {
		t.Errorf("the killed run's temporary outlived the next run: %q", got)
	}
}

// TestDestinations: an output that exists is refused (exit 2, named, before the input
// is read, and left as it was) unless --force, which replaces it only with a verified
// release; a folder, a file that is not a regular file and a folder that cannot be
// written in are refused up front. No run leaves a temporary behind.
func TestDestinations(t *testing.T) {
	td := repoTestdata(t)
	in := filepath.Join(td, "hospital.csv")
	good := filepath.Join(td, "hospital-tests.yaml")
	const old = "old\n"
	type setup func(t *testing.T, dir string)
	file := func(name string) setup {
		return func(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, name), old) }
	}
	folder := func(name string) setup {
		return func(t *testing.T, dir string) {
			if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	fifo := func(name string) setup {
		return func(t *testing.T, dir string) {
			if err := mkfifo(filepath.Join(dir, name)); err != nil {
				t.Skip(err)
			}
		}
	}
	readOnly := func(t *testing.T, dir string) {
		if os.Geteuid() == 0 {
			t.Skip("root writes in any folder")
		}
		sub := filepath.Join(dir, "ro")
		if err := os.Mkdir(sub, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(sub, 0o755) })
	}
	// unattainable is the sample configuration with k above the number of records: a
	// run that got to the search would exit 3.
	unattainable := func(t *testing.T, dir string) string {
		p := filepath.Join(dir, "k.yaml")
		writeFile(t, p, testfiles.Replace(t, baseConfig(t), privacyLine, "privacy: {k: 100000, suppression: 0}"))
		return p
	}
	release := func(cfg string, out string, more ...string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string {
			if cfg == "" {
				cfg = unattainable(t, dir)
			}
			return append([]string{"release", "-c", cfg, "--in", in, "--out", filepath.Join(dir, out)}, more...)
		}
	}
	cases := []struct {
		name   string
		setup  setup
		args   func(t *testing.T, dir string) []string
		code   int
		stderr string            // in the message, with {{DIR}} the folder
		want   map[string]string // files after the run: name → content ("" = anything but old)
	}{
		{"release over a file", file("r.csv"), release("", "r.csv"), 2, "output: {{DIR}}/r.csv exists", map[string]string{"r.csv": old}},
		{"release --force, unattainable", file("r.csv"), release("", "r.csv", "--force"), 3, "", map[string]string{"r.csv": old}},
		{"release --force", file("r.csv"), release(good, "r.csv", "--force"), 0, "", map[string]string{"r.csv": ""}},
		{"release into a folder", folder("r.csv"), release("", "r.csv"), 2, "output: {{DIR}}/r.csv is a folder", nil},
		{"release --force into a folder", folder("r.csv"), release("", "r.csv", "--force"), 2, "output: {{DIR}}/r.csv is a folder", nil},
		{"release --force over a fifo", fifo("r.csv"), release("", "r.csv", "--force"), 2, "output: {{DIR}}/r.csv is not a regular file", nil},
		{"release into a read-only folder", readOnly, release(good, "ro/r.csv"), 2, "output: cannot write in the folder {{DIR}}/ro", nil},
		{"report over a file", file("rep.json"), func(t *testing.T, dir string) []string {
			return release("", "r.csv", "--report", filepath.Join(dir, "rep.json"))(t, dir)
		}, 2, "--report: {{DIR}}/rep.json exists", map[string]string{"rep.json": old}},
		{"report into a folder", folder("rep.json"), func(t *testing.T, dir string) []string {
			return release("", "r.csv", "--force", "--report", filepath.Join(dir, "rep.json"))(t, dir)
		}, 2, "--report: {{DIR}}/rep.json is a folder", nil},
		{"report --force", file("rep.json"), func(t *testing.T, dir string) []string {
			return release(good, "r.csv", "--force", "--report", filepath.Join(dir, "rep.json"))(t, dir)
		}, 0, "", map[string]string{"r.csv": "", "rep.json": ""}},
		{"gen over a file", file("g.csv"), func(t *testing.T, dir string) []string {
			return []string{"gen", "--rows", "10", "--out", filepath.Join(dir, "g.csv")}
		}, 2, "--out: {{DIR}}/g.csv exists", map[string]string{"g.csv": old}},
		{"gen --force", file("g.csv"), func(t *testing.T, dir string) []string {
			return []string{"gen", "--rows", "10", "--force", "--out", filepath.Join(dir, "g.csv")}
		}, 0, "", map[string]string{"g.csv": ""}},
		{"gen into a folder", folder("g.csv"), func(t *testing.T, dir string) []string {
			return []string{"gen", "--rows", "10", "--force", "--out", filepath.Join(dir, "g.csv")}
		}, 2, "--out: {{DIR}}/g.csv is a folder", nil},
		{"dp into a read-only folder", readOnly, func(t *testing.T, dir string) []string {
			return []string{"dp", "-c", filepath.Join(td, "hospital-dp.yaml"), "--in", in, "--out", filepath.Join(dir, "ro", "dp")}
		}, 2, "--out: cannot write in the folder {{DIR}}/ro", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.setup(t, dir)
			args := c.args(t, dir)
			before := testfiles.Names(t, dir) // with the configuration the case wrote
			code, stdout, stderr := runCLI(t, args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, c.code, stdout, stderr)
			}
			if want := strings.ReplaceAll(c.stderr, "{{DIR}}", dir); !strings.Contains(stderr, want) {
				t.Errorf("stderr %q does not say %q", stderr, want)
			}
			for name, content := range c.want {
				got := string(readFile(t, filepath.Join(dir, name)))
				if content == "" && got == old || content != "" && got != content {
					t.Errorf("%s holds %q", name, got)
				}
			}
			after := testfiles.Names(t, dir)
			if c.code != 0 && !slices.Equal(after, before) {
				t.Errorf("a refused run changed the folder: %q, before %q", after, before)
			}
			for _, n := range after {
				if strings.HasSuffix(n, ".tmp") {
					t.Errorf("the run left the temporary %s", n)
				}
			}
		})
	}
}
