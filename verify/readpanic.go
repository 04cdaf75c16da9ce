package verify

import (
	"fmt"

	"sanitizer/internal/safe"
)

// The libraries the verifier reads files with trust what a file states and may panic
// on a corrupt one: the import paths of their code.
const (
	arrowLibrary   = "github.com/apache/arrow-go/"
	parquetLibrary = "github.com/parquet-go/"
)

// readPanic is the error for a panic r that a deferred function recovered while the
// library (the import path of its code) read a file (call it from that function). The
// file is to blame when the library raised it, or when the Arrow reader's allocator
// refused a buffer the file asked for (arrowTooLarge): then it is bad input, as corrupt
// makes it of the panic's value ("the … library failed: …"). Any other panic is a
// defect of this program: an internal error with its stack (safe.PanicError).
func readPanic(r any, library string, corrupt func(error) error) error {
	name := "Parquet"
	if library == arrowLibrary {
		name = "Arrow"
	}
	if _, ok := r.(arrowTooLarge); ok || safe.RaisedIn(library) {
		return corrupt(fmt.Errorf("the %s library failed: %v", name, r))
	}
	return safe.Recovered(r)
}
