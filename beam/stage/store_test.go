package stage

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	// memfs:// stands in for gs:// and s3://: a store the embedded runner's workers,
	// which run in the test's process, share with the driver.
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs"

	"sanitizer/fault"
	"sanitizer/job"
	"sanitizer/release"
	"sanitizer/schema"
)

// toStore copies the files of the local folder dir into the store's folder prefix.
func toStore(t *testing.T, dir, prefix string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := copyFile(context.Background(), filepath.Join(dir, e.Name()), prefix+"/"+e.Name()); err != nil {
			t.Fatal(err)
		}
	}
	return prefix
}

// fromStore copies every object in the store's folder prefix into a new local folder,
// by name, and returns the folder and the names.
func fromStore(t *testing.T, prefix string) (string, []string) {
	t.Helper()
	objs, err := listObjects(context.Background(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "copy")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		names = append(names, strings.TrimPrefix(o, prefix+"/"))
		if err := copyFile(context.Background(), o, filepath.Join(dir, baseName(o))); err != nil {
			t.Fatal(err)
		}
	}
	return dir, names
}

// allObjects is every object in the store's folder root, five folders deep.
func allObjects(t *testing.T, root string) []string {
	t.Helper()
	fs, err := store(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	var all []string
	for depth := 1; depth <= 5; depth++ {
		objs, err := fs.List(context.Background(), root+strings.Repeat("/*", depth))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, objs...)
	}
	return all
}

// storeHolds fails t unless every object under root (five folders deep) is under one
// of the folders.
func storeHolds(t *testing.T, root string, folders ...string) {
	t.Helper()
	objs := allObjects(t, root)
	for _, o := range objs {
		if !slices.ContainsFunc(folders, func(f string) bool { return strings.HasPrefix(o, root+"/"+f+"/") }) {
			t.Errorf("the store holds %s, outside %v", o, folders)
		}
	}
}

// privateTemp points the process's temporary folder (the workers' copies of the parts
// in a store, the driver's) at a new folder, which t checks is left empty.
func privateTemp(t *testing.T) {
	t.Helper()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Cleanup(func() {
		entries, _ := os.ReadDir(tmp)
		for _, e := range entries {
			// Beam's loopback worker, which the embedded runner starts, leaves its own.
			if !strings.HasPrefix(e.Name(), "beamloopbackworker-") {
				t.Errorf("a temporary left behind: %s", e.Name())
			}
		}
	})
}

// TestReleaseOnPrismInStore: Adult in seven parts in a store (memfs://, as gs:// or
// s3:// on Dataflow), released on Prism into the store, is published there as seven
// parts and the marker _SUCCESS, which lists them; the parts hold the same records as
// the CLI's release of the whole file at the same node, and the report is the CLI's.
// No temporary object in the store, nor local copy, is left. A second run is refused
// without --force, and replaces the release with it.
func TestReleaseOnPrismInStore(t *testing.T) {
	cfgPath, whole, parts := adultParts(t, 5000, "privacy: {k: 10, suppression: 0.05}")
	privateTemp(t)
	root := "memfs://" + t.Name()
	in := toStore(t, parts, root+"/in")
	j, err := NewJob(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	rep := filepath.Join(t.TempDir(), "report.json")
	opt := job.Options{Input: in, Output: root + "/rel", Report: rep}
	got, err := Release(context.Background(), j, opt, onPrism)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := schema.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	cliOut := filepath.Join(t.TempDir(), "r.csv")
	cli, err := release.Release(context.Background(), cfg, job.Options{Input: whole, Output: cliOut})
	if err != nil {
		t.Fatal(err)
	}
	sameReport(t, rep, cli)
	local, names := fromStore(t, root+"/rel")
	want := []string{"_SUCCESS"}
	for i := range 7 {
		want = append(want, release.Engine{}.PartName(i, 7, "csv"))
	}
	if !slices.Equal(names, want) {
		t.Fatalf("the release in the store holds %v, want %v", names, want)
	}
	var marker struct{ Parts []string }
	data, err := os.ReadFile(filepath.Join(local, "_SUCCESS"))
	if err != nil || json.Unmarshal(data, &marker) != nil || !slices.Equal(marker.Parts, want[1:]) {
		t.Errorf("the marker: %q, %v", data, err)
	}
	os.Remove(filepath.Join(local, "_SUCCESS"))
	if beam, cliLines := lines(t, local), lines(t, cliOut); !slices.Equal(beam, cliLines) || len(beam) == 0 || got.Measured.Rows != cli.Output.Rows {
		t.Errorf("Beam released %d records into the store, the CLI %d; the same multiset: %v", len(beam), len(cliLines), slices.Equal(beam, cliLines))
	}
	storeHolds(t, root, "in", "rel")
	opt.Report = ""
	if _, err := Release(context.Background(), j, opt, onPrism); !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "exists") {
		t.Errorf("a second run: %v", err)
	}
	opt.Force = true
	if _, err := Release(context.Background(), j, opt, onPrism); err != nil {
		t.Errorf("a second run with force: %v", err)
	}
	if _, again := fromStore(t, root+"/rel"); !slices.Equal(again, want) {
		t.Errorf("after the second run the release holds %v", again)
	}
	// A release of fewer parts in its place: the old parts it lacks are removed.
	_, _, fewer := adultParts(t, 10000, "privacy: {k: 10, suppression: 0.05}")
	opt.Input = toStore(t, fewer, root+"/fewer")
	if _, err := Release(context.Background(), j, opt, onPrism); err != nil {
		t.Fatal(err)
	}
	want = []string{"_SUCCESS"}
	for i := range 4 {
		want = append(want, release.Engine{}.PartName(i, 4, "csv"))
	}
	if _, again := fromStore(t, root+"/rel"); !slices.Equal(again, want) {
		t.Errorf("after a release of 4 parts the release holds %v, want %v", again, want)
	}
	storeHolds(t, root, "in", "fewer", "rel")
	// Refused: the store's bucket itself, and a folder holding the input.
	for _, o := range []string{"memfs://bucket", root + "/in"} {
		opt.Output = o
		if _, err := Release(context.Background(), j, opt, onPrism); !errors.Is(err, fault.ErrBadInput) {
			t.Errorf("a release into %s: %v", o, err)
		}
	}
	storeHolds(t, root, "in", "fewer", "rel")
}

// TestReleaseOnPrismInStoreFails: a part in a store with a value its hierarchy does
// not list fails the run with the CLI's error, naming the part's object (not the
// worker's copy of it) and the row, never the value; nothing is published, and no
// temporary object or local copy is left.
func TestReleaseOnPrismInStoreFails(t *testing.T) {
	cfgPath, _, parts := adultParts(t, 5000, "privacy: {k: 10, suppression: 0.05}")
	bad := filepath.Join(parts, "part-003.csv")
	data, err := os.ReadFile(bad)
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(string(data), "\n")
	rows[7] = "SECRET" + rows[7][strings.IndexByte(rows[7], ';'):] // sex, the first column
	if err := os.WriteFile(bad, []byte(strings.Join(rows, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	privateTemp(t)
	root := "memfs://" + t.Name()
	in := toStore(t, parts, root+"/in")
	j, err := NewJob(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Release(context.Background(), j, job.Options{Input: in, Output: root + "/rel"}, onPrism)
	says := root + `/in/part-003.csv: row 7: column "sex": value not listed in hierarchy`
	if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), says) || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("got %v, want an error saying %q", err, says)
	}
	storeHolds(t, root, "in")
}

// TestDPOnPrismInStore: the hospital sample's dp outputs over four parts in a store,
// the workers' noisy results passed to the driver through a folder of the store
// (Job.Temp, Beam's --temp_location), publish what the CLI's do (dpMatchesCLI), and
// leave no temporary object or local copy behind; an output or ledger in a store is
// refused.
func TestDPOnPrismInStore(t *testing.T) {
	cfgPath, whole, parts := hospitalDP(t, 4000, nil)
	privateTemp(t)
	root := "memfs://" + t.Name()
	in := toStore(t, parts, root+"/in")
	j, err := NewJob(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	j.Temp = root + "/tmp"
	dpMatchesCLI(t, j, cfgPath, in, whole)
	storeHolds(t, root, "in")
	// dp's outputs and ledger are files on the driver: a store is refused up front.
	for _, opt := range []job.Options{{Input: in, Output: root + "/out"}, {Input: in, Output: filepath.Join(t.TempDir(), "out"), Ledger: root + "/ledger.json"}} {
		if _, err := DP(context.Background(), j, opt, onPrism); !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "not in a store") {
			t.Errorf("dp %+v: %v", opt, err)
		}
	}
	storeHolds(t, root, "in")
}
