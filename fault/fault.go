// Package fault holds the three kinds of error every package of sanitizer reports, so
// that a caller can tell them apart with errors.Is and the command line can choose its
// exit status: bad input (the data or the configuration; exit 2), unattainable (the
// privacy models or the DP budget cannot be met; exit 3) and internal (a defect of this
// program; exit 1).
//
// It imports nothing of this module; every other package may import it.
package fault

import (
	"errors"
	"fmt"
)

// ErrBadInput is matched (errors.Is) by every error caused by the input data or the
// configuration. The command line exits with status 2 for it.
var ErrBadInput = errors.New("bad input")

// ErrUnattainable is matched by errors that report that the privacy models (or the DP
// budget) cannot be met within the configured limits. The command line exits with 3.
var ErrUnattainable = errors.New("privacy models cannot be met")

// ErrInternal is matched by every error that reports a defect of this program rather
// than of its input: a broken invariant, or a recovered panic. The command line exits
// with 1 for it, whatever else the error wraps.
var ErrInternal = errors.New("internal error")

// kinded is an error of one kind: it matches its kind's sentinel and unwraps to its
// cause.
type kinded struct {
	kind error
	err  error
}

func (e *kinded) Error() string        { return e.err.Error() }
func (e *kinded) Unwrap() error        { return e.err }
func (e *kinded) Is(target error) bool { return target == e.kind }

// BadInput returns an error with the formatted message that matches ErrBadInput.
// Use %w to wrap a cause.
func BadInput(format string, a ...any) error {
	return &kinded{ErrBadInput, fmt.Errorf(format, a...)}
}

// Unattainable returns an error with the formatted message that matches
// ErrUnattainable. Use %w to wrap a cause.
func Unattainable(format string, a ...any) error {
	return &kinded{ErrUnattainable, fmt.Errorf(format, a...)}
}

// Internalf returns an error that matches ErrInternal, with the formatted message after
// "internal error: ". Use %w to wrap a cause.
func Internalf(format string, a ...any) error {
	return &kinded{ErrInternal, fmt.Errorf("internal error: "+format, a...)}
}
