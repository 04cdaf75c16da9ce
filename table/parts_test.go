package table

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/schema"
)

// TestPartsFolderAndPatternAgree: a folder and a pattern that name the same parts
// read the same table, whatever the third part's name is: a symbolic link to a file
// outside the folder is followed both ways (its records read); a name that is no
// regular file once followed (a broken link, a FIFO, a link to one) and a second name
// of a part (a link to it, a hard link) are bad input naming it both ways; a folder,
// or a link to one, is not a part either way.
func TestPartsFolderAndPatternAgree(t *testing.T) {
	const part = "a,b\n1,2\n3,4\n"
	cases := []struct {
		name  string
		third func(t *testing.T, dir, outside, name string) // makes the third part's name
		rows  int                                           // the table's records; 0: bad input
	}{
		{"a regular file", func(t *testing.T, _, _, name string) { writeText(t, name, part) }, 6},
		{"a link to a file outside", func(t *testing.T, _, outside, name string) {
			writeText(t, filepath.Join(outside, "elsewhere.csv"), part)
			symlinkOr(t, filepath.Join(outside, "elsewhere.csv"), name)
		}, 6},
		{"a relative link to a file outside", func(t *testing.T, _, outside, name string) {
			writeText(t, filepath.Join(outside, "elsewhere.csv"), part)
			symlinkOr(t, filepath.Join("..", filepath.Base(outside), "elsewhere.csv"), name)
		}, 6},
		{"a link to a folder", func(t *testing.T, _, outside, name string) { symlinkOr(t, outside, name) }, 4},
		{"a folder", func(t *testing.T, _, _, name string) { mkdirT(t, name) }, 4},
		{"a broken link", func(t *testing.T, _, outside, name string) { symlinkOr(t, filepath.Join(outside, "gone.csv"), name) }, 0},
		{"a FIFO", func(t *testing.T, _, _, name string) { fifoOr(t, name) }, 0},
		{"a link to a FIFO", func(t *testing.T, _, outside, name string) {
			fifoOr(t, filepath.Join(outside, "pipe.csv"))
			symlinkOr(t, filepath.Join(outside, "pipe.csv"), name)
		}, 0},
		{"a link to another part", func(t *testing.T, dir, _, name string) { symlinkOr(t, filepath.Join(dir, "part-0.csv"), name) }, 0},
		{"a relative link to another part", func(t *testing.T, _, _, name string) { symlinkOr(t, "part-1.csv", name) }, 0},
		{"a hard link of another part", func(t *testing.T, dir, _, name string) {
			if err := os.Link(filepath.Join(dir, "part-0.csv"), name); err != nil {
				t.Skip(err)
			}
		}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			dir, outside := filepath.Join(root, "in"), filepath.Join(root, "outside")
			mkdirT(t, dir)
			mkdirT(t, outside)
			writeText(t, filepath.Join(dir, "part-0.csv"), part)
			writeText(t, filepath.Join(dir, "part-1.csv"), part)
			third := filepath.Join(dir, "part-2.csv")
			c.third(t, dir, outside, third)
			var lists [][]string
			for _, in := range []string{dir, filepath.Join(dir, "part-*.csv")} {
				paths, err := PartPaths(in)
				src, openErr := Open(in, "csv", schema.CSV{Separator: ',', Header: true}, nil)
				if c.rows == 0 {
					for _, err := range []error{err, openErr} {
						if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), third) {
							t.Errorf("%s: %v, want bad input naming %s", in, err, third)
						}
					}
					continue
				}
				if err != nil || openErr != nil {
					t.Fatalf("%s: %v, %v", in, err, openErr)
				}
				if n := countRows(t, src); n != c.rows {
					t.Errorf("%s: %d records, want %d", in, n, c.rows)
				}
				src.Close()
				lists = append(lists, paths)
			}
			if len(lists) == 2 && !slices.Equal(lists[0], lists[1]) {
				t.Errorf("the folder names %q, the pattern %q", lists[0], lists[1])
			}
		})
	}
}

// countRows streams every record of src and counts them.
func countRows(t *testing.T, src Source) int {
	t.Helper()
	out := make(chan *Batch, 2)
	errc := make(chan error, 1)
	go func() { errc <- src.Stream(t.Context(), []int{0}, out) }()
	n := 0
	for b := range out {
		n += b.N
		b.Release()
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	return n
}

// writeText writes text to path.
func writeText(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// symlinkOr makes name a symbolic link to target, or skips the test.
func symlinkOr(t *testing.T, target, name string) {
	t.Helper()
	if err := os.Symlink(target, name); err != nil {
		t.Skip(err)
	}
}

// mkdirT makes the folder path.
func mkdirT(t *testing.T, path string) {
	t.Helper()
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
}

// fifoOr makes a FIFO at path, or skips the test.
func fifoOr(t *testing.T, path string) {
	t.Helper()
	if err := mkfifo(path); err != nil {
		t.Skip(err)
	}
}

// TestInsidePartsResolved: a file would be a part of an input in parts when its
// folder, once resolved, is the input's folder (or one its pattern's folder matches)
// and, for a pattern, its name matches: a symbolic link to the folder, or a ".."
// after a link, does not hide it; a sub-folder, a name the pattern does not match or
// a name the folder's listing leaves out (a report's) is not a part.
func TestInsidePartsResolved(t *testing.T) {
	root := t.TempDir()
	in := filepath.Join(root, "data", "in")
	if err := os.MkdirAll(filepath.Join(in, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeText(t, filepath.Join(in, "part-0.csv"), "a\n1\n")
	symlinkOr(t, in, filepath.Join(root, "g2link"))
	symlinkOr(t, filepath.Join(in, "sub"), filepath.Join(root, "sublink"))
	pattern := filepath.Join(root, "data", "i*", "part-*.csv")
	sep := string(filepath.Separator)
	cases := []struct {
		out            string
		folder, global bool // a part of the folder input, of the pattern
	}{
		{filepath.Join(in, "part-1.csv"), true, true},
		{filepath.Join(in, "r.parquet"), true, false},
		{filepath.Join(root, "g2link", "part-0.csv"), true, true},
		{filepath.Join(root, "g2link", "part-3.csv"), true, true},
		{strings.Join([]string{root, "sublink", "..", "part-3.csv"}, sep), true, true}, // sub/.. is the input's folder, not root
		{filepath.Join(in, "sub", "part-3.csv"), false, false},
		{filepath.Join(root, "part-3.csv"), false, false},
		// Names the folder's listing leaves out: not a table's, hidden, a marker.
		{filepath.Join(in, "report.json"), false, false},
		{filepath.Join(in, "report.html"), false, false},
		{filepath.Join(in, ".part-4.csv"), false, false},
		{filepath.Join(in, "_part-4.csv"), false, false},
		{filepath.Join(root, "g2link", "risk.html"), false, false},
	}
	for _, c := range cases {
		out := c.out
		if got := InsideParts(in, out); got != c.folder {
			t.Errorf("InsideParts(folder, %s) = %v, want %v", out, got, c.folder)
		}
		if got := InsideParts(pattern, out); got != c.global {
			t.Errorf("InsideParts(pattern, %s) = %v, want %v", out, got, c.global)
		}
	}
}
