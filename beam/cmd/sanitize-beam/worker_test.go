package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/container/pool"

	"sanitizer/internal/testfiles"
	"sanitizer/job"
	clirelease "sanitizer/release"
	"sanitizer/schema"
)

// TestReleaseOnWorkerPool: the command run as a real runner runs it, with workers in
// processes of their own. The binary is built, Prism takes the job with an EXTERNAL
// environment, and Beam's worker pool (the Go SDK container's, as Flink, Spark and
// Kubernetes deployments run it beside their task managers) starts Beam's boot loader,
// which fetches the staged binary and starts it as a worker (--worker_binary, --worker):
// the same path a Flink or Spark job server takes, but for the container. The driver
// runs in a folder of its own with relative paths, the workers in another, so what
// the workers are sent must not depend on the driver's working folder. The release is
// the CLI's, record for record; the dp outputs are published with their manifest.
func TestReleaseOnWorkerPool(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and Beam's boot loader")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // a worker that never connects hangs the runner
	defer cancel()
	bin := t.TempDir()
	build := func(out, pkg string) {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(bin, out), pkg)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, b)
		}
	}
	build("sanitize-beam", ".")
	build("boot", "github.com/apache/beam/sdks/v2/go/container")
	port, stop := workerPool(t, filepath.Join(bin, "boot"))
	defer stop()

	// The driver's folder: the hospital sample in four parts, the configurations.
	dir := t.TempDir()
	hier, _ := filepath.Abs("../../../testdata/hierarchies")
	raw, err := os.ReadFile("../../../testdata/hospital.csv")
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	os.Mkdir(filepath.Join(dir, "parts"), 0o700)
	for i, n := 1, 0; i < len(rows); i, n = i+1250, n+1 {
		body := rows[0] + "\n" + strings.Join(rows[i:min(i+1250, len(rows))], "\n") + "\n"
		os.WriteFile(filepath.Join(dir, "parts", "part-"+strconv.Itoa(n)+".csv"), []byte(body), 0o600)
	}
	os.WriteFile(filepath.Join(dir, "all.csv"), raw, 0o600)
	for _, c := range []struct{ from, to string }{{"hospital-tests.yaml", "c.yaml"}, {"hospital-dp.yaml", "dp.yaml"}} {
		text, err := os.ReadFile(filepath.Join("../../../testdata", c.from))
		if err != nil {
			t.Fatal(err)
		}
		s := testfiles.ReplaceAll(t, string(text), "hierarchies/", hier+"/")
		if i := strings.Index(s, "    - {name: synthetic"); i >= 0 { // not on Beam
			s = s[:i]
		}
		os.WriteFile(filepath.Join(dir, c.to), []byte(s), 0o600)
	}
	beamFlags := []string{"--runner=prism", "--environment_type=EXTERNAL", "--environment_config=localhost:" + strconv.Itoa(port), "--worker_binary=" + filepath.Join(bin, "sanitize-beam")}
	for _, args := range [][]string{
		{"release", "-c", "c.yaml", "--in", "parts", "--out", "rel"},
		{"dp", "-c", "dp.yaml", "--in", "parts", "--out", "dp"},
	} {
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "sanitize-beam"), append(args, beamFlags...)...)
		cmd.Dir = dir
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("sanitize-beam %s: %v\n%s\n%s", args[0], err, stdout.String(), lastLines(stderr.String(), 20))
		}
		t.Logf("sanitize-beam %s: %s", args[0], stdout.String())
	}
	cfg, err := schema.Load(filepath.Join(dir, "c.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := clirelease.Release(ctx, cfg, job.Options{Input: filepath.Join(dir, "all.csv"), Output: filepath.Join(dir, "cli.csv")}); err != nil {
		t.Fatal(err)
	}
	if got, want := records(t, filepath.Join(dir, "rel")), records(t, filepath.Join(dir, "cli.csv")); len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("the release on the worker pool has %d records, the CLI's %d; the same multiset: %v", len(got), len(want), slices.Equal(got, want))
	}
	for _, f := range []string{"manifest.json", "age-by-diagnosis.csv"} {
		if _, err := os.Stat(filepath.Join(dir, "dp", f)); err != nil {
			t.Errorf("dp on the worker pool: %v", err)
		}
	}
}

// poolEnv makes the test binary serve Beam's worker pool (TestMain) on the port it
// holds.
const poolEnv = "SANITIZE_BEAM_TEST_WORKER_POOL"

// TestMain runs the tests, or Beam's worker pool when the test binary is started for
// it (workerPool).
func TestMain(m *testing.M) {
	if port := os.Getenv(poolEnv); port != "" {
		os.Exit(servePool(port))
	}
	os.Exit(m.Run())
}

// servePool serves Beam's worker pool on port, starting boot for every worker, until
// it is killed.
func servePool(port string) int {
	p, err := strconv.Atoi(port)
	if err != nil {
		return 2
	}
	workers, err := pool.New(context.Background(), p, os.Getenv(poolEnv+"_BOOT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := workers.ServeAndWait(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// workerPool starts Beam's worker pool in a process group of its own (this test
// binary, in TestMain), its workers started by boot, and returns its port and a
// function that kills the group: the pool, the boot loaders and the workers, which
// would otherwise outlive the test. The pool's output is logged on failure.
func workerPool(t *testing.T, boot string) (int, func()) {
	t.Helper()
	lis, err := net.Listen("tcp", "localhost:0") // the pool takes a port, not a listener: a free one
	if err != nil {
		t.Fatal(err)
	}
	port := lis.Addr().(*net.TCPAddr).Port
	lis.Close()
	var out bytes.Buffer
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), poolEnv+"="+strconv.Itoa(port), poolEnv+"_BOOT="+boot)
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Dir = t.TempDir() // the boot loader writes its files (pipeline_options.json) where it runs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for range 100 { // until it listens
		if c, err := net.Dial("tcp", "localhost:"+strconv.Itoa(port)); err == nil {
			c.Close()
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return port, func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		if t.Failed() {
			t.Logf("the worker pool's output, its end:\n%s", lastLines(out.String(), 40))
		}
	}
}

// records is the records of a CSV file or of a folder's CSV files, header rows left
// out, sorted.
func records(t *testing.T, path string) []string {
	t.Helper()
	files := []string{path}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		files, _ = filepath.Glob(filepath.Join(path, "*.csv"))
	}
	var out []string
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.Split(strings.TrimRight(string(raw), "\n"), "\n")[1:]...)
	}
	slices.Sort(out)
	return out
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
