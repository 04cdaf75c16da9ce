package testfiles

import (
	"os"
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
