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

func TestIsTemp(t *testing.T) {
	dest := "/d/r.csv"
	cases := []struct {
		name string
		want bool
	}{
		{filepath.Base(tempName(dest)), true},
		{".r.csv.sanitize-12-0123456789abcdef.tmp", true},
		{".r.csv.sanitize-12-0123456789abcdef", false},       // no .tmp
		{".r.csv.sanitize-x-0123456789abcdef.tmp", false},    // not a pid
		{".r.csv.sanitize-12-0123456789abcdeg.tmp", false},   // not hex
		{".r.csv.sanitize-12-0123.tmp", false},               // too short
		{".r.csv.123456.tmp", false},                         // os.CreateTemp's
		{".r.csv.x.sanitize-12-0123456789abcdef.tmp", false}, // r.csv.x's
		{".r.csv.sanitize-1.sanitize-12-0123456789abcdef.tmp", false},
		{"r.csv", false},
	}
	for _, c := range cases {
		if got := isTemp(c.name, dest); got != c.want {
			t.Errorf("isTemp(%q) = %v, want %v", c.name, got, c.want)
		}
	}
}

// stale makes a temporary of dest that no process holds, as a killed run leaves it.
func stale(t *testing.T, dest string, folder bool) string {
	t.Helper()
	name := tempName(dest)
	var err error
	if folder {
		if err = os.Mkdir(name, 0o700); err == nil {
			err = os.WriteFile(filepath.Join(name, "x.csv"), []byte("noisy\n"), 0o644)
		}
	} else {
		err = os.WriteFile(name, []byte("unverified\n"), 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Base(name)
}

// TestSweep: the temporaries of the destination that no process holds go; a held
// one, another destination's and other files stay.
func TestSweep(t *testing.T) {
	dir := t.TempDir()
	dest := filepath.Join(dir, "r.csv")
	held, err := Create(dest)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Discard()
	heldDir, err := CreateFolder(dest)
	if err != nil {
		t.Fatal(err)
	}
	defer heldDir.Discard()
	stale(t, dest, false)
	stale(t, dest, true)
	other := stale(t, filepath.Join(dir, "r.csv.x"), false)
	for _, n := range []string{"r.csv", ".r.csv.123.tmp"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := Sweep(dest); err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Base(held.Name()), filepath.Base(heldDir.Path), other, ".r.csv.123.tmp", "r.csv"}
	slices.Sort(want)
	if got := testfiles.Names(t, dir); !slices.Equal(got, want) {
		t.Errorf("after the sweep: %q, want %q", got, want)
	}
}

// TestSweepFunc: clean is called with each dead run's temporary, before it goes, and
// never with a held one; a temporary clean fails on stays, and the error names it.
func TestSweepFunc(t *testing.T) {
	dir := t.TempDir()
	dest := filepath.Join(dir, "work")
	held, err := CreateFolder(dest)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Discard()
	dead := []string{stale(t, dest, true), stale(t, dest, true)}
	slices.Sort(dead)
	var cleaned []string
	clean := func(tmp string) error {
		if _, err := os.Stat(filepath.Join(tmp, "x.csv")); err != nil {
			t.Errorf("clean(%s) after the temporary was removed: %v", tmp, err)
		}
		cleaned = append(cleaned, filepath.Base(tmp))
		return nil
	}
	if err := SweepFunc(dest, clean); err != nil {
		t.Fatal(err)
	}
	if slices.Sort(cleaned); !slices.Equal(cleaned, dead) {
		t.Errorf("cleaned %q, want the dead runs' %q", cleaned, dead)
	}
	if got := testfiles.Names(t, dir); !slices.Equal(got, []string{filepath.Base(held.Path)}) {
		t.Errorf("after the sweep: %q, want the held one alone", got)
	}
	left := stale(t, dest, true)
	err = SweepFunc(dest, func(string) error { return errors.New("store unreachable") })
	if err == nil || !strings.Contains(err.Error(), left) || !slices.Contains(testfiles.Names(t, dir), left) {
		t.Errorf("a failed clean: %v; the folder holds %q", err, testfiles.Names(t, dir))
	}
}

// TestFilePublish: a temporary becomes the destination, readable by others, with no
// temporary left; without force a destination made meanwhile is left alone.
func TestFilePublish(t *testing.T) {
	for _, c := range []struct {
		name   string
		before string // the destination's content made while the temporary is written ("": none)
		force  bool
		bad    bool
		want   string
	}{
		{"new", "", false, false, "new\n"},
		{"appeared", "old\n", false, true, "old\n"},
		{"force", "old\n", true, false, "new\n"},
		{"force new", "", true, false, "new\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			dest := filepath.Join(dir, "r.csv")
			f, err := Create(dest)
			if err != nil {
				t.Fatal(err)
			}
			if st, err := f.Stat(); err != nil || st.Mode().Perm() != 0o600 {
				t.Errorf("the temporary's mode %v (%v), want 0600", st.Mode(), err)
			}
			if _, err := f.WriteString("new\n"); err != nil {
				t.Fatal(err)
			}
			f.Close()
			if c.before != "" {
				if err := os.WriteFile(dest, []byte(c.before), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err = f.Publish(c.force)
			if c.bad != errors.Is(err, fault.ErrBadInput) || !c.bad && err != nil {
				t.Fatalf("Publish: %v", err)
			}
			got, err := os.ReadFile(dest)
			if err != nil || string(got) != c.want {
				t.Errorf("the destination holds %q (%v), want %q", got, err, c.want)
			}
			if st, err := os.Stat(dest); !c.bad && (err != nil || st.Mode().Perm() != 0o644) {
				t.Errorf("published with mode %v (%v), want 0644", st.Mode(), err)
			}
			if got := testfiles.Names(t, dir); !slices.Equal(got, []string{"r.csv"}) {
				t.Errorf("the folder holds %q", got)
			}
			f.Discard() // after Publish: nothing
			if _, err := os.Stat(dest); err != nil {
				t.Errorf("Discard after Publish removed the destination: %v", err)
			}
		})
	}
}

// TestFolderPublish: a temporary folder becomes the destination (missing or empty);
// a discarded one leaves nothing.
func TestFolderPublish(t *testing.T) {
	for _, empty := range []bool{false, true} {
		dir := t.TempDir()
		dest := filepath.Join(dir, "dp")
		if empty {
			if err := os.Mkdir(dest, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		d, err := CreateFolder(dest + "/")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d.Path, "a.csv"), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := d.Publish(); err != nil {
			t.Fatal(err)
		}
		if got := testfiles.Names(t, dest); !slices.Equal(got, []string{"a.csv"}) {
			t.Errorf("published folder holds %q", got)
		}
		if got := testfiles.Names(t, dir); !slices.Equal(got, []string{"dp"}) {
			t.Errorf("the parent holds %q", got)
		}
		d2, err := CreateFolder(filepath.Join(dir, "other"))
		if err != nil {
			t.Fatal(err)
		}
		d2.Discard()
		if got := testfiles.Names(t, dir); !slices.Equal(got, []string{"dp"}) {
			t.Errorf("after Discard the parent holds %q", got)
		}
	}
}

// TestCheck: destinations a run cannot publish to are bad input naming the key and
// the path, with nothing made; a good one is swept of dead runs' temporaries.
func TestCheck(t *testing.T) {
	type setup func(t *testing.T, dir string)
	file := func(t *testing.T, dir string) {
		if err := os.WriteFile(filepath.Join(dir, "r"), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	folder := func(t *testing.T, dir string) {
		if err := os.Mkdir(filepath.Join(dir, "r"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	full := func(t *testing.T, dir string) {
		folder(t, dir)
		if err := os.WriteFile(filepath.Join(dir, "r", "x"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fifo := func(t *testing.T, dir string) {
		if err := mkfifo(filepath.Join(dir, "r")); err != nil {
			t.Skip(err)
		}
	}
	none := func(*testing.T, string) {}
	cases := []struct {
		name   string
		setup  setup
		path   string // below the test's folder
		folder bool
		force  bool
		want   string // in the error; "" = none
	}{
		{"new file", none, "r", false, false, ""},
		{"existing file", file, "r", false, false, "k: {{DIR}}/r exists"},
		{"existing file, force", file, "r", false, true, ""},
		{"folder", folder, "r", false, true, "k: {{DIR}}/r is a folder"},
		{"fifo, force", fifo, "r", false, true, "k: {{DIR}}/r is not a regular file"},
		{"no parent", none, "no/r", false, false, "k: the folder {{DIR}}/no does not exist"},
		{"parent is a file", file, "r/x", false, false, "k: the folder {{DIR}}/r does not exist"},
		{"new folder", none, "r", true, false, ""},
		{"empty folder", folder, "r", true, false, ""},
		{"full folder", full, "r", true, false, "k: the folder {{DIR}}/r is not empty"},
		{"file for a folder", file, "r", true, false, "k: {{DIR}}/r exists and is not a folder"},
		{"folder, no parent", none, "no/r", true, false, "k: the folder {{DIR}}/no does not exist"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.setup(t, dir)
			path := filepath.Join(dir, c.path)
			gone := stale(t, filepath.Join(dir, "r"), c.folder)
			before := testfiles.Names(t, dir)
			var err error
			if c.folder {
				err = CheckFolder("k", path)
			} else {
				err = CheckFile("k", path, c.force)
			}
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got := testfiles.Names(t, dir); slices.Contains(got, gone) || len(got) != len(before)-1 {
					t.Errorf("after the check: %q, before %q", got, before)
				}
				return
			}
			want := strings.ReplaceAll(c.want, "{{DIR}}", dir)
			if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), want) {
				t.Errorf("error %v, want bad input saying %q", err, want)
			}
			if got := testfiles.Names(t, dir); !slices.Equal(got, before) {
				t.Errorf("a refused check changed the folder: %q, before %q", got, before)
			}
		})
	}
}

// TestCheckReadOnly: a folder the process cannot write in is bad input (not as root,
// who writes anywhere).
func TestCheckReadOnly(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes in any folder")
	}
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(ro, 0o755)
	for _, err := range []error{CheckFile("k", filepath.Join(ro, "r"), false), CheckFolder("k", filepath.Join(ro, "r"))} {
		if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "k: cannot write in the folder "+ro) {
			t.Errorf("error %v", err)
		}
	}
}
