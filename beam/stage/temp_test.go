package stage

import (
	"bufio"
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"sanitizer/job"
	"sanitizer/publish"
	"sanitizer/release"
	"sanitizer/schema"
)

// driverEnv makes the test binary a driver that TestKilledDriverLeftovers kills:
// "CONFIG|PARTS|OUT".
const driverEnv = "SANITIZE_BEAM_TEST_DRIVER"

// readyLine is what the driver prints once the first pipeline has written its files.
const readyLine = "sanitize-beam-test: intermediates written"

// TestKilledDriver is the driver TestKilledDriverLeftovers starts and kills -9: a
// release whose first pipeline (the values of the built hierarchies) runs, then which
// says so and waits to be killed. It skips unless started so.
func TestKilledDriver(t *testing.T) {
	args := strings.Split(os.Getenv(driverEnv), "|")
	if len(args) != 3 {
		t.Skip("run by TestKilledDriverLeftovers")
	}
	j, err := NewJob(args[0])
	if err != nil {
		t.Fatal(err)
	}
	wait := func(ctx context.Context, p *beam.Pipeline) error {
		if err := onPrism(ctx, p); err != nil {
			return err
		}
		os.Stdout.WriteString(readyLine + "\n")
		time.Sleep(time.Hour) // killed meanwhile
		return nil
	}
	_, err = Release(context.Background(), j, job.Options{Input: args[1], Output: args[2]}, wait)
	t.Fatalf("the driver was not killed: %v", err)
}

// runTemps is the run temporary folders in the local folder dir (those Beam's
// loopback worker leaves are not the run's).
func runTemps(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "beamloopbackworker-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// private fails t unless the folder dir and every folder in it have mode 0700.
func private(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		st, err := os.Stat(p)
		if err == nil && st.Mode().Perm() != 0o700 {
			t.Errorf("%s has mode %v, want 0700", p, st.Mode().Perm())
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestKilledDriverLeftovers: a driver killed (-9) in the middle of a release leaves
// its intermediate files (the built hierarchies' values, which suppressed records'
// values are among) in a folder of its own in the system's temporary folder, mode
// 0700, and nothing beside the output; the next run removes that folder before it
// runs anything, writes its own there too, mode 0700, and leaves nothing behind but
// the release.
func TestKilledDriverLeftovers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a driver in a process of its own")
	}
	cfgPath, _, parts := hospitalParts(t, "")
	tmp, outDir := t.TempDir(), t.TempDir()
	out := filepath.Join(outDir, "release")
	t.Setenv("TMPDIR", tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // a driver that never gets ready
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestKilledDriver$")
	cmd.Env = append(os.Environ(), driverEnv+"="+cfgPath+"|"+parts+"|"+out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := false
	for lines := bufio.NewScanner(stdout); !ready && lines.Scan(); {
		ready = lines.Text() == readyLine
	}
	if !ready {
		cmd.Wait()
		t.Fatalf("the driver stopped before its first pipeline ran:\n%s", stderr.String())
	}
	cmd.Process.Kill()
	cmd.Wait()

	// What the killed driver left: its own folder, private, holding the values.
	if entries, _ := os.ReadDir(outDir); len(entries) != 0 {
		t.Errorf("the killed driver left %v beside the output", entries)
	}
	left := runTemps(t, tmp)
	if len(left) != 1 || !strings.HasPrefix(left[0], ".sanitize-beam.sanitize-"+strconv.Itoa(cmd.Process.Pid)+"-") {
		t.Fatalf("the killed driver left %q in the temporary folder, want its run's folder", left)
	}
	dead := filepath.Join(tmp, left[0])
	private(t, dead)
	if values, _ := filepath.Glob(filepath.Join(dead, "*", "values-*.json")); len(values) == 0 {
		t.Errorf("the killed driver's folder holds no values: the test killed it too early")
	}

	// The next run sweeps it first and leaves nothing.
	j, err := NewJob(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	look := func(ctx context.Context, p *beam.Pipeline) error {
		if runs++; runs == 1 {
			if _, err := os.Stat(dead); err == nil {
				t.Errorf("the dead run's folder is still there when the next run's pipeline runs")
			}
			mine := runTemps(t, tmp)
			if len(mine) != 1 || mine[0] == left[0] {
				t.Errorf("the temporary folder holds %q while the run runs, want its folder alone", mine)
			} else {
				private(t, filepath.Join(tmp, mine[0]))
			}
			if entries, _ := os.ReadDir(outDir); len(entries) != 0 {
				t.Errorf("the run made %v beside the output", entries)
			}
		}
		return onPrism(ctx, p)
	}
	if _, err := Release(context.Background(), j, job.Options{Input: parts, Output: out}, look); err != nil {
		t.Fatal(err)
	}
	if mine := runTemps(t, tmp); len(mine) != 0 {
		t.Errorf("the run left %q in the temporary folder", mine)
	}
	if entries, _ := os.ReadDir(outDir); len(entries) != 1 || entries[0].Name() != "release" {
		t.Errorf("beside the output after the run: %v, want the release alone", entries)
	}
}

// TestReleaseOnPrismSweepsStoreTemp: with --temp_location in a store, a run's shared
// files go to a folder there that its local folder (private, in the system's
// temporary folder) names; the next run removes a dead run's local folder and its
// store folder with it, and leaves a live run's alone. Nothing is left in the store
// but the input, the release and the live run's folder.
func TestReleaseOnPrismSweepsStoreTemp(t *testing.T) {
	cfgPath, _, parts := hospitalParts(t, "")
	privateTemp(t)
	root := "memfs://" + t.Name()
	in := toStore(t, parts, root+"/in")
	j, err := NewJob(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	j.Temp = root + "/tmp"
	// A dead run's folders, as a driver killed -9 leaves them (no process holds the
	// local one), and a live run's (held).
	dead := filepath.Join(os.TempDir(), ".sanitize-beam.sanitize-99999999-0123456789abcdef.tmp")
	if err := os.Mkdir(dead, 0o700); err != nil {
		t.Fatal(err)
	}
	live, err := publish.CreateFolder(filepath.Join(os.TempDir(), tempBase))
	if err != nil {
		t.Fatal(err)
	}
	defer live.Discard()
	for _, local := range []string{dead, live.Path} {
		shared := j.Temp + "/" + filepath.Base(local)
		if err := os.WriteFile(filepath.Join(local, storeRecord), []byte(shared), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"work/values-age.json", "release/part-0.csv"} {
			if err := writeFile(context.Background(), shared+"/"+f, []byte("CANARY")); err != nil {
				t.Fatal(err)
			}
		}
	}
	liveShared := "tmp/" + filepath.Base(live.Path)
	runs := 0
	look := func(ctx context.Context, p *beam.Pipeline) error {
		if runs++; runs == 1 {
			if _, err := os.Stat(dead); err == nil {
				t.Errorf("the dead run's local folder is there when the run's pipeline runs")
			}
			if objs := allObjects(t, j.Temp); slices.ContainsFunc(objs, func(o string) bool { return strings.Contains(o, filepath.Base(dead)) }) {
				t.Errorf("the dead run's store folder is there when the run's pipeline runs: %q", objs)
			}
		}
		return onPrism(ctx, p)
	}
	if _, err := Release(context.Background(), j, job.Options{Input: in, Output: root + "/rel"}, look); err != nil {
		t.Fatal(err)
	}
	storeHolds(t, root, "in", "rel", liveShared)
	if objs := allObjects(t, root+"/"+liveShared); len(objs) != 2 {
		t.Errorf("the live run's store folder holds %q", objs)
	}
	if err := removeObjects(context.Background(), root+"/"+liveShared); err != nil {
		t.Fatal(err)
	}
}

// TestDPOnPrismTempPrivate: dp's intermediate files (the noisy results before the
// ledger records them, the workers' errors) go to the run's private folder in the
// system's temporary folder, mode 0700, never beside the output, and are removed.
func TestDPOnPrismTempPrivate(t *testing.T) {
	cfgPath, _, parts := hospitalDP(t, 400, nil)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	j, err := NewJob(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	look := func(ctx context.Context, p *beam.Pipeline) error {
		if mine := runTemps(t, tmp); len(mine) != 1 {
			t.Errorf("the temporary folder holds %q while dp runs, want its folder alone", mine)
		} else {
			private(t, filepath.Join(tmp, mine[0]))
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("dp made %v beside the output", entries)
		}
		return onPrism(ctx, p)
	}
	if _, err := DP(context.Background(), j, job.Options{Input: parts, Output: out}, look); err != nil {
		t.Fatal(err)
	}
	if mine := runTemps(t, tmp); len(mine) != 0 {
		t.Errorf("dp left %q in the temporary folder", mine)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 || entries[0].Name() != "out" {
		t.Errorf("beside the output after dp: %v, want the output alone", entries)
	}
}

// TestReleaseOnPrismStoreTempLocalOut: with --temp_location in a store and a local
// output, the checked parts (the driver's local copies of those in the store) are
// published at the output, as the CLI's release of the same parts (the parts were
// looked for at a local path made of the store's, and the run failed as it published).
func TestReleaseOnPrismStoreTempLocalOut(t *testing.T) {
	cfgPath, _, parts := hospitalParts(t, "")
	privateTemp(t)
	j, err := NewJob(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	j.Temp = "memfs://" + t.Name() + "/tmp"
	out := filepath.Join(t.TempDir(), "release")
	if _, err := Release(context.Background(), j, job.Options{Input: parts, Output: out, Report: out + ".json"}, onPrism); err != nil {
		t.Fatal(err)
	}
	cfg, err := schema.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := release.Check(context.Background(), cfg, job.Options{Input: parts, Output: out, Report: out + ".json"}); err != nil {
		t.Errorf("check: %v", err)
	}
}
