package testfiles

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Names returns the names of the entries of dir, in order; the test fails when dir
// cannot be read.
func Names(t testing.TB, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// GoFiles returns the Go source files below root (test files included), as paths
// joined to root, in walk order; folders named testdata or starting with "." or "_"
// are passed over, and so, with ownModule, is every folder that holds a module of its
// own (a go.mod) below root. The test fails when root cannot be walked. The
// documentation's and the structure's tests read the tree with it.
func GoFiles(t testing.TB, root string, ownModule bool) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			if strings.HasSuffix(path, ".go") {
				out = append(out, path)
			}
			return nil
		}
		name := d.Name()
		if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		if path != root && ownModule {
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
