package table

import (
	"fmt"

	"sanitizer/internal/safe"
)

// The Parquet and Arrow IPC sources both read with the Arrow project's libraries,
// which trust what a file states and may panic on a corrupt one.

// arrowLibrary is the import path of the Arrow project's Go libraries (its Parquet and
// IPC readers).
const arrowLibrary = "github.com/apache/arrow-go/"

// readPanic is the error for a panic r that a deferred function recovered while the
// Arrow library read a file (call it from that function). The file is to blame when
// the library raised it, or when the reader's allocator refused a buffer the file asked
// for (errBufferTooLarge): then it is bad input, as corrupt makes it of the panic's
// value. Any other panic is a defect of this program: an internal error with its stack
// (safe.PanicError).
func readPanic(r any, corrupt func(error) error) error {
	if e, ok := r.(errBufferTooLarge); ok {
		return corrupt(e)
	}
	if safe.RaisedIn(arrowLibrary) {
		return corrupt(fmt.Errorf("%v", r))
	}
	return safe.Recovered(r)
}
