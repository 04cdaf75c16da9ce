package publish

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
)

var errBoom = errors.New("boom")

// catch runs fn and returns what it panicked with, if anything, and its error.
func catch(fn func() error) (p any, err error) {
	defer func() { p = recover() }()
	return nil, fn()
}

// TestWriteFile: WriteFile publishes what write wrote, once Verify has seen it in the
// temporary; an existing destination without force, a write or verify error and a
// panic in write or Verify each leave the folder exactly as it was.
func TestWriteFile(t *testing.T) {
	writeNew := func(f *os.File) error { _, err := f.WriteString("new\n"); return err }
	cases := []struct {
		name    string
		old     string // the destination's content before ("": none)
		force   bool
		write   func(f *os.File) error // writeNew when nil
		verify  func(tmp string) error
		wantErr error // matched with errors.Is; nil: published
		panics  bool
	}{
		{name: "new"},
		{name: "new, force", force: true},
		{name: "exists", old: "old\n", wantErr: fault.ErrBadInput},
		{name: "force", old: "old\n", force: true},
		{name: "verified", old: "old\n", force: true, verify: func(string) error { return nil }},
		{name: "write error", write: func(f *os.File) error { f.WriteString("part"); return errBoom }, wantErr: errBoom},
		{name: "write error, force", old: "old\n", force: true, write: func(f *os.File) error { f.WriteString("part"); return errBoom }, wantErr: errBoom},
		{name: "write closes", write: func(f *os.File) error { return f.Close() }, wantErr: os.ErrClosed},
		{name: "verify error", old: "old\n", force: true, verify: func(string) error { return errBoom }, wantErr: errBoom},
		{name: "write panics", old: "old\n", force: true, write: func(f *os.File) error { f.WriteString("part"); panic(errBoom) }, panics: true},
		{name: "verify panics", verify: func(string) error { panic(errBoom) }, panics: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			dest := filepath.Join(dir, "r.csv")
			if c.old != "" {
				if err := os.WriteFile(dest, []byte(c.old), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before := testfiles.Names(t, dir)
			write := c.write
			if write == nil {
				write = writeNew
			}
			verified := false
			verify := func(tmp string) error {
				// The temporary is beside dest, closed, complete and not yet readable by others.
				got, err := os.ReadFile(tmp)
				st, serr := os.Stat(tmp)
				if filepath.Dir(tmp) != dir || err != nil || serr != nil || st.Mode().Perm() != 0o600 || (c.write == nil && string(got) != "new\n") {
					t.Errorf("Verify sees %s holding %q (%v), mode %v (%v)", tmp, got, err, st.Mode(), serr)
				}
				verified = true
				if c.verify == nil {
					return nil
				}
				return c.verify(tmp)
			}
			p, err := catch(func() error { return WriteFile(dest, Options{Force: c.force, Verify: verify}, write) })
			if (p != nil) != c.panics || p != nil && p != errBoom {
				t.Fatalf("panicked with %v", p)
			}
			if c.wantErr == nil && !c.panics {
				if err != nil {
					t.Fatal(err)
				}
				if !verified {
					t.Error("Verify was not called")
				}
				if got, err := os.ReadFile(dest); err != nil || string(got) != "new\n" {
					t.Errorf("the destination holds %q (%v)", got, err)
				}
				if st, err := os.Stat(dest); err != nil || st.Mode().Perm() != 0o644 {
					t.Errorf("published with mode %v (%v), want 0644", st.Mode(), err)
				}
				if got := testfiles.Names(t, dir); !slices.Equal(got, []string{"r.csv"}) {
					t.Errorf("the folder holds %q", got)
				}
				return
			}
			if c.wantErr != nil && !errors.Is(err, c.wantErr) {
				t.Errorf("error %v, want %v", err, c.wantErr)
			}
			if got := testfiles.Names(t, dir); !slices.Equal(got, before) {
				t.Errorf("the folder holds %q, before %q", got, before)
			}
			if got, err := os.ReadFile(dest); c.old == "" && !errors.Is(err, os.ErrNotExist) || c.old != "" && string(got) != c.old {
				t.Errorf("the destination holds %q (%v), before %q", got, err, c.old)
			}
		})
	}
}

// TestWriteFileAppeared: without force, a destination made while write writes is left
// alone, and so is the folder.
func TestWriteFileAppeared(t *testing.T) {
	dir := t.TempDir()
	dest := filepath.Join(dir, "r.csv")
	err := WriteFile(dest, Options{}, func(f *os.File) error {
		f.WriteString("new\n")
		return os.WriteFile(dest, []byte("theirs\n"), 0o644)
	})
	if !errors.Is(err, fault.ErrBadInput) {
		t.Errorf("error %v, want bad input", err)
	}
	if got, err := os.ReadFile(dest); err != nil || string(got) != "theirs\n" {
		t.Errorf("the destination holds %q (%v)", got, err)
	}
	if got := testfiles.Names(t, dir); !slices.Equal(got, []string{"r.csv"}) {
		t.Errorf("the folder holds %q", got)
	}
}

// TestWriteFileSweeps: the temporaries of dest that dead runs left, a file and a
// folder, go; a live one stays.
func TestWriteFileSweeps(t *testing.T) {
	dir := t.TempDir()
	dest := filepath.Join(dir, "r.csv")
	held, err := Create(dest)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Discard()
	stale(t, dest, false)
	stale(t, dest, true)
	if err := WriteFile(dest, Options{}, func(f *os.File) error { _, err := f.WriteString("new\n"); return err }); err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Base(held.Name()), "r.csv"}
	slices.Sort(want)
	if got := testfiles.Names(t, dir); !slices.Equal(got, want) {
		t.Errorf("the folder holds %q, want %q", got, want)
	}
}

// TestPrepare: files prepared together are held, closed and unpublished until each is
// published; when one fails, discarding the others leaves nothing.
func TestPrepare(t *testing.T) {
	for _, c := range []struct {
		name  string
		fails error // the second file's write error
	}{
		{"both", nil},
		{"second fails", errBoom},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.json")
			fa, err := Prepare(a, nil, func(f *os.File) error { _, err := f.WriteString("a\n"); return err })
			if err != nil {
				t.Fatal(err)
			}
			defer fa.Discard()
			if _, err := fa.WriteString("more"); err == nil {
				t.Error("the prepared file is still open for writing")
			}
			if err := Sweep(a); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(fa.Name()); err != nil {
				t.Errorf("a sweep took the prepared file: %v", err)
			}
			fb, err := Prepare(b, func(tmp string) error {
				got, err := os.ReadFile(tmp)
				if err != nil || string(got) != "{}\n" {
					t.Errorf("verify sees %q (%v)", got, err)
				}
				return nil
			}, func(f *os.File) error {
				f.WriteString("{}\n")
				return c.fails
			})
			if c.fails != nil {
				if !errors.Is(err, c.fails) || fb != nil {
					t.Fatalf("Prepare: %v, %v", fb, err)
				}
				fa.Discard()
				if got := testfiles.Names(t, dir); len(got) != 0 {
					t.Errorf("the folder holds %q", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := testfiles.Names(t, dir); len(got) != 2 || slices.Contains(got, "a.csv") || slices.Contains(got, "b.json") {
				t.Errorf("before Publish the folder holds %q", got)
			}
			if err := fa.Publish(false); err != nil {
				t.Fatal(err)
			}
			if err := fb.Publish(false); err != nil {
				t.Fatal(err)
			}
			if got := testfiles.Names(t, dir); !slices.Equal(got, []string{"a.csv", "b.json"}) {
				t.Errorf("the folder holds %q", got)
			}
		})
	}
}

// TestFolderWriteFile: a file written into a temporary folder holds what write wrote;
// a write that fails or panics, or a name already taken, leaves the folder as it was.
func TestFolderWriteFile(t *testing.T) {
	dir := t.TempDir()
	d, err := CreateFolder(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Discard()
	text := func(s string) func(*os.File) error {
		return func(f *os.File) error { _, err := f.WriteString(s); return err }
	}
	if err := d.WriteFile("a.csv", text("x\n")); err != nil {
		t.Fatal(err)
	}
	if err := d.WriteFile("b.csv", func(f *os.File) error { f.WriteString("partial"); return errors.New("boom") }); err == nil {
		t.Error("a failed write gave no error")
	}
	func() {
		defer func() { recover() }()
		d.WriteFile("c.csv", func(f *os.File) error { f.WriteString("partial"); panic("boom") })
	}()
	if err := d.WriteFile("a.csv", text("y\n")); err == nil {
		t.Error("a name already taken was written over")
	}
	if got := testfiles.Names(t, d.Path); !slices.Equal(got, []string{"a.csv"}) {
		t.Errorf("the folder holds %q, want only a.csv", got)
	}
	if b, err := os.ReadFile(filepath.Join(d.Path, "a.csv")); err != nil || string(b) != "x\n" {
		t.Errorf("a.csv holds %q (%v)", b, err)
	}
}

// TestPrepareSyncing: a file prepared with its sync left running is published whole
// once the sync is done; discarded, or its write failing, it leaves nothing; after
// Discard, Publish is an error and puts nothing in place.
func TestPrepareSyncing(t *testing.T) {
	dir := t.TempDir()
	dest := filepath.Join(dir, "release.csv")
	body := strings.Repeat("a,b,c\n", 100_000)
	f, err := PrepareSyncing(dest, func(f *os.File) error { _, err := f.WriteString(body); return err })
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(f.Name()); err != nil || string(got) != body { // read while it syncs
		t.Errorf("the temporary read before it is published: %d bytes (%v)", len(got), err)
	}
	if err := f.Publish(false); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(dest); err != nil || string(got) != body {
		t.Errorf("published: %d bytes of %d (%v)", len(got), len(body), err)
	}
	other := filepath.Join(dir, "other.csv")
	g, err := PrepareSyncing(other, func(f *os.File) error { _, err := f.WriteString(body); return err })
	if err != nil {
		t.Fatal(err)
	}
	g.Discard()
	if err := g.Publish(false); err == nil {
		t.Error("Publish after Discard: no error")
	}
	if _, err := PrepareSyncing(other, func(*os.File) error { return errBoom }); !errors.Is(err, errBoom) {
		t.Errorf("a failing write: %v", err)
	}
	if got := testfiles.Names(t, dir); !slices.Equal(got, []string{"release.csv"}) {
		t.Errorf("the folder holds %q", got)
	}
}
