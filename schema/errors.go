package schema

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

type badInput struct{ err error }

func (e *badInput) Error() string        { return e.err.Error() }
func (e *badInput) Unwrap() error        { return e.err }
func (e *badInput) Is(target error) bool { return target == ErrBadInput }

// BadInput returns an error with the formatted message that matches ErrBadInput.
// Use %w to wrap a cause.
func BadInput(format string, a ...any) error {
	return &badInput{fmt.Errorf(format, a...)}
}

type unattainable struct{ err error }

func (e *unattainable) Error() string        { return e.err.Error() }
func (e *unattainable) Unwrap() error        { return e.err }
func (e *unattainable) Is(target error) bool { return target == ErrUnattainable }

// Unattainable returns an error with the formatted message that matches ErrUnattainable.
func Unattainable(format string, a ...any) error {
	return &unattainable{fmt.Errorf(format, a...)}
}
