// Package safe turns a panic in a worker goroutine into an error value, so that the
// failure reaches the stage that started the worker (and cancels the others) instead of
// crashing the process with temporary files left behind.
//
// It imports, of this module, only fault (a recovered panic matches
// fault.ErrInternal); every package that starts goroutines may import it.
package safe

import (
	"fmt"
	"sync"

	"sanitizer/fault"
)

// PanicError is a panic recovered from a function: the value it panicked with and the
// stack of the goroutine where it did (for the debug log, never for the message).
type PanicError struct {
	Value any
	Stack []byte
}

// Error reports the panic's value without the stack.
func (e *PanicError) Error() string { return fmt.Sprintf("internal error: %v", e.Value) }

// Is matches fault.ErrInternal.
func (e *PanicError) Is(target error) bool { return target == fault.ErrInternal }

// Call runs f and returns its error, or a *PanicError if f panics. A panic with a
// *PanicError (a worker's, raised again on its caller's goroutine) is returned as it is,
// with the worker's stack.
func Call(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = Recovered(r)
		}
	}()
	return f()
}

// Do runs f and returns a *PanicError if f panics, else nil.
func Do(f func()) error {
	return Call(func() error { f(); return nil })
}

// Go returns f as a function that returns a panic of f as a *PanicError, for
// errgroup.Group.Go.
func Go(f func() error) func() error {
	return func() error { return Call(f) }
}

// Parallel runs f(0), …, f(parts−1), on as many goroutines when parts > 1 (on the
// caller's only otherwise), waits for all of them and returns the first panic among
// them as a *PanicError (nil when none panicked).
func Parallel(parts int, f func(p int)) error {
	if parts <= 1 {
		return Do(func() { f(0) })
	}
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		wg.Go(func() { errs[p] = Do(func() { f(p) }) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// MustParallel is Parallel for workers whose caller has no error to return: a worker's
// panic is raised again, as its *PanicError, on the caller's goroutine, where a Call
// further up returns it (with the worker's stack).
func MustParallel(parts int, f func(p int)) {
	if err := Parallel(parts, f); err != nil {
		panic(err)
	}
}
