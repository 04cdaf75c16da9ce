package safe

import (
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"

	"sanitizer/fault"
)

// raisedIn runs f and returns what RaisedIn(prefixes...) says of its panic, and the
// error Recovered makes of it.
func raisedIn(f func(), prefixes ...string) (lib bool, err *PanicError) {
	defer func() {
		r := recover()
		lib, err = RaisedIn(prefixes...), Recovered(r)
	}()
	f()
	return false, nil
}

func TestRaisedIn(t *testing.T) {
	var nilMap map[string]int
	tests := []struct {
		name     string
		f        func()
		prefixes []string
		want     bool
	}{
		{"this module's panic", func() { panic("boom") }, []string{"strings"}, false},
		{"this module's index out of range", func() { var a []int; _ = a[len(a)+1] }, []string{"strings"}, false},
		{"this module's write to a nil map", func() { nilMap["x"] = 1 }, []string{"strings"}, false},
		{"the library's", func() { strings.Repeat("x", -1) }, []string{"strings"}, true},
		{"the library's, another prefix", func() { strings.Repeat("x", -1) }, []string{"bytes", "strings"}, true},
		{"a package not named", func() { strings.Repeat("x", -1) }, []string{"bytes"}, false},
		// The library calls back this module's code, which panics.
		{"this module's, called by the library", func() {
			slices.SortFunc([]int{2, 1}, func(a, b int) int { panic("compare") })
		}, []string{"slices"}, false},
		// The library's call to a package not named (here internal/reflectlite, on a
		// value that is not a slice) is passed over.
		{"the library's, through a package not named", func() {
			sort.Slice(1, func(i, j int) bool { return false })
		}, []string{"sort"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := raisedIn(tc.f, tc.prefixes...)
			if got != tc.want {
				t.Errorf("RaisedIn(%q) = %v, want %v", tc.prefixes, got, tc.want)
			}
			if err == nil || !errors.Is(err, fault.ErrInternal) || !strings.Contains(string(err.Stack), "TestRaisedIn") {
				t.Errorf("Recovered: %v, without the panic's stack", err)
			}
		})
	}
	// Recovered returns a worker's panic, raised again, as it is.
	pe := &PanicError{Value: "w", Stack: []byte("worker stack")}
	if _, err := raisedIn(func() { panic(pe) }); err != pe {
		t.Errorf("Recovered: %v, want the worker's PanicError", err)
	}
}
