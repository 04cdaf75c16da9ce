//go:build unix

package dphist

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/publish"
)

// killedSave names the ledger that TestKilledSave's child writes.
const killedSave = "DPHIST_KILLED_SAVE"

// TestKilledSave is the child of TestRecordAfterKilledSave (it does nothing
// otherwise): it starts writing the ledger, says which temporary it writes, and waits
// to be killed.
func TestKilledSave(t *testing.T) {
	path := os.Getenv(killedSave)
	if path == "" {
		t.Skip("run by TestRecordAfterKilledSave")
	}
	publish.WriteFile(path, publish.Options{Force: true}, func(f *os.File) error {
		f.WriteString(`{"datasets":{"ward":`)
		fmt.Printf("tmp %s\n", f.Name())
		io.Copy(io.Discard, os.Stdin) // until the parent goes
		os.Exit(1)                    // never publish
		return nil
	})
}

// TestRecordAfterKilledSave: while a run is writing the ledger, a Record leaves its
// temporary; once that run is killed, the next Record removes it.
func TestRecordAfterKilledSave(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.json")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledSave$", "-test.count=1")
	cmd.Env = append(os.Environ(), killedSave+"="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var tmp string
	for sc := bufio.NewScanner(out); tmp == "" && sc.Scan(); {
		tmp, _ = strings.CutPrefix(sc.Text(), "tmp ")
	}
	if filepath.Dir(tmp) != dir {
		t.Fatalf("the child wrote %q", tmp)
	}
	if _, err := Record(path, "ward", 1, 0, Spend{Epsilon: 0.1}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmp); err != nil {
		t.Fatalf("a live run's temporary was removed: %v", err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if _, err := os.Stat(tmp); err != nil {
		t.Fatalf("the killed run's temporary is not there to sweep: %v", err)
	}
	a, err := Record(path, "ward", 1, 0, Spend{Epsilon: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the killed run's temporary is still there (%v)", err)
	}
	if got := testfiles.Names(t, dir); !slices.Equal(got, []string{"ledger.json", "ledger.json.lock"}) {
		t.Errorf("the folder holds %q", got)
	}
	if len(a.Spends) != 2 {
		t.Errorf("the ledger holds %d spends, want 2", len(a.Spends))
	}
}

// oneLedger makes a ledger file and names for it: the path itself, a symbolic link,
// a link to the link, a path through a symlinked folder, one through "..", and two
// relative to the working folder (changed to the ledger's). It returns the file and
// its names.
func oneLedger(t *testing.T) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	books := filepath.Join(dir, "books")
	if err := os.MkdirAll(filepath.Join(books, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(books, "ledger.json")
	if err := os.WriteFile(real, []byte(`{"datasets":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, l := range [][2]string{{real, "link.json"}, {filepath.Join(dir, "link.json"), "link2.json"}, {books, "shelf"}} {
		if err := os.Symlink(l[0], filepath.Join(dir, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(books)
	return real, []string{real, filepath.Join(dir, "link.json"), filepath.Join(dir, "link2.json"),
		filepath.Join(dir, "shelf", "ledger.json"), filepath.Join(books, "sub", "..", "ledger.json"),
		"ledger.json", filepath.Join(".", "sub", "..", "ledger.json")}
}

// TestRecordNamesOfOneLedger: every name of one ledger file charges one account under
// one lock (beside the file, not beside the name): spends through all of them add up
// against one total, the links stay links, and no name gets a lock of its own.
func TestRecordNamesOfOneLedger(t *testing.T) {
	real, ledgerNames := oneLedger(t)
	for i, name := range ledgerNames {
		a, err := Record(name, "ward", 1, 0, Spend{Epsilon: 0.125, Outputs: []string{name}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(a.Spends) != i+1 {
			t.Fatalf("%s: the account holds %d spends, want %d", name, len(a.Spends), i+1)
		}
	}
	// 7 × 0.125 + 0.25 > 1, whichever name charges it.
	for _, name := range ledgerNames {
		if _, err := Record(name, "ward", 1, 0, Spend{Epsilon: 0.25}); !errors.Is(err, fault.ErrUnattainable) {
			t.Errorf("%s: err = %v, want unattainable", name, err)
		}
	}
	dir := filepath.Dir(filepath.Dir(real))
	for _, n := range []string{"link.json", "link2.json", "shelf"} {
		if st, err := os.Lstat(filepath.Join(dir, n)); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer a link (%v)", n, err)
		}
	}
	if got := testfiles.Names(t, dir); !slices.Equal(got, []string{"books", "link.json", "link2.json", "shelf"}) {
		t.Errorf("the links' folder holds %q", got)
	}
	if got := testfiles.Names(t, filepath.Dir(real)); !slices.Equal(got, []string{"ledger.json", "ledger.json.lock", "sub"}) {
		t.Errorf("the ledger's folder holds %q", got)
	}
}

// TestRecordConcurrentNames: runs charging one ledger through different names at the
// same time lose no spend and never pass the total together: they share one lock.
func TestRecordConcurrentNames(t *testing.T) {
	real, ledgerNames := oneLedger(t)
	const runs = 21
	errs := make(chan error, runs)
	for i := range runs {
		go func() {
			_, err := Record(ledgerNames[i%len(ledgerNames)], "ward", 1, 0, Spend{Epsilon: 0.1})
			errs <- err
		}()
	}
	ok := 0
	for range runs {
		switch err := <-errs; {
		case err == nil:
			ok++
		case !errors.Is(err, fault.ErrUnattainable):
			t.Fatal(err)
		}
	}
	l, err := LoadLedger(real)
	if err != nil {
		t.Fatal(err)
	}
	if ok != 10 || len(l.Datasets["ward"].Spends) != 10 {
		t.Errorf("%d recorded, %d in the ledger; want 10, 10", ok, len(l.Datasets["ward"].Spends))
	}
}

// TestLedgerHardLinks: a ledger file with a second name (a hard link) is refused as
// bad input naming it, through either name, by LoadLedger, Check and Record, and is
// left as it was: every charge replaces the ledger by a rename, which would leave the
// other name holding the old spends, a second budget. With one name again it is
// charged.
func TestLedgerHardLinks(t *testing.T) {
	dir := t.TempDir()
	path, other := filepath.Join(dir, "ledger.json"), filepath.Join(dir, "copy.json")
	text := `{"datasets":{"ward":{"epsilon_total":5,"delta_total":0,"spends":[` + spendA + `]}}}`
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(path, other); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	for _, name := range []string{path, other} {
		if _, err := LoadLedger(name); !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "2 names") {
			t.Errorf("LoadLedger(%s): err = %v, want bad input naming it and its 2 names", name, err)
		}
		if err := Check(name, "ward", 5, 0, Spend{Epsilon: 2.5}); !errors.Is(err, fault.ErrBadInput) {
			t.Errorf("Check(%s): err = %v, want bad input", name, err)
		}
		if _, err := Record(name, "ward", 5, 0, Spend{Epsilon: 2.5}); !errors.Is(err, fault.ErrBadInput) {
			t.Errorf("Record(%s): err = %v, want bad input", name, err)
		}
		if got, _ := os.ReadFile(name); string(got) != text {
			t.Errorf("%s changed: %s", name, got)
		}
	}
	if err := os.Remove(other); err != nil {
		t.Fatal(err)
	}
	if a, err := Record(path, "ward", 5, 0, Spend{Epsilon: 2.5}); err != nil || len(a.Spends) != 2 {
		t.Errorf("with one name: %+v, %v", a, err)
	}
}

// TestCheckLedgerPlace: Check refuses, as bad input naming the ledger, one that a
// Record could not write (its folder takes no new file: read-only, or a folder no one
// may write in) or could not lock (the lock's name is a folder, or a link into a
// missing folder), and one that is not a regular file; it accepts a ledger that is
// missing or has no lock yet. Either way it leaves the folder as it found it.
func TestCheckLedgerPlace(t *testing.T) {
	const text = `{"datasets":{}}`
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) string // the ledger's path
		ok    bool
	}{
		{"a read-only folder", func(t *testing.T, dir string) string {
			p := writeLedger(t, dir, text)
			if err := os.Chmod(dir, 0o555); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(dir, 0o755) })
			testfiles.SkipIfWritable(t, dir)
			return p
		}, false},
		{"a folder no one may create files in", func(t *testing.T, dir string) string {
			testfiles.SkipIfWritable(t, "/sys")
			return "/sys/ledger.json"
		}, false},
		{"the lock is a folder", func(t *testing.T, dir string) string {
			p := writeLedger(t, dir, text)
			if err := os.Mkdir(p+".lock", 0o755); err != nil {
				t.Fatal(err)
			}
			return p
		}, false},
		{"the lock links into a missing folder", func(t *testing.T, dir string) string {
			p := writeLedger(t, dir, text)
			if err := os.Symlink(filepath.Join(dir, "gone", "x.lock"), p+".lock"); err != nil {
				t.Fatal(err)
			}
			return p
		}, false},
		{"the ledger is a folder", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "ledger.json")
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
			return p
		}, false},
		{"no ledger yet", func(t *testing.T, dir string) string { return filepath.Join(dir, "ledger.json") }, true},
		{"no lock yet", func(t *testing.T, dir string) string { return writeLedger(t, dir, text) }, true},
		{"a lock", func(t *testing.T, dir string) string {
			p := writeLedger(t, dir, text)
			if err := os.WriteFile(p+".lock", nil, 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tt.setup(t, dir)
			before := testfiles.Names(t, filepath.Dir(path))
			err := Check(path, "ward", 1, 0, Spend{Epsilon: 0.5})
			if tt.ok && err != nil {
				t.Fatal(err)
			}
			if !tt.ok && (!errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), path)) {
				t.Fatalf("err = %v, want bad input naming %s", err, path)
			}
			if after := testfiles.Names(t, filepath.Dir(path)); !slices.Equal(after, before) {
				t.Errorf("Check changed the folder: %q, then %q", before, after)
			}
		})
	}
}

// writeLedger writes a ledger.json holding text into dir and returns its path.
func writeLedger(t *testing.T, dir, text string) string {
	t.Helper()
	p := filepath.Join(dir, "ledger.json")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
