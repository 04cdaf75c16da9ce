package schema

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
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

// MaxListed is how many errors an ErrorList's message lists; "and N more" counts the
// rest.
const MaxListed = 50

// positioned is an error at a line of the configuration file; its message starts
// "FILE:LINE: ".
type positioned struct {
	line int
	err  error
}

func (e *positioned) Error() string { return e.err.Error() }
func (e *positioned) Unwrap() error { return e.err }

// lineOf is the configuration line err is positioned at, 0 when it is not.
func lineOf(err error) int {
	var p *positioned
	if errors.As(err, &p) {
		return p.line
	}
	return 0
}

// ErrorList is every error found in a configuration (and what it names), in the order
// of the configuration's lines; an error of no line comes after those of one. It
// matches ErrBadInput; its message is one error a line.
type ErrorList struct {
	errs []error
}

// Add appends err (nothing when nil); a list's errors are appended one by one.
func (l *ErrorList) Add(err error) {
	var more *ErrorList
	switch {
	case err == nil:
	case errors.As(err, &more):
		l.errs = append(l.errs, more.errs...)
	default:
		l.errs = append(l.errs, err)
	}
}

// Len is the number of errors in l.
func (l *ErrorList) Len() int { return len(l.errs) }

// Errors returns l's errors in the order of their lines.
func (l *ErrorList) Errors() []error {
	key := func(err error) int {
		if line := lineOf(err); line > 0 {
			return line
		}
		return math.MaxInt
	}
	slices.SortStableFunc(l.errs, func(a, b error) int { return cmp.Compare(key(a), key(b)) })
	return l.errs
}

// Err is nil when l is empty, its error when it holds one, and l otherwise.
func (l *ErrorList) Err() error {
	switch len(l.errs) {
	case 0:
		return nil
	case 1:
		return l.errs[0]
	}
	l.Errors()
	return l
}

// Error lists the first MaxListed errors, one a line, and how many more there are.
func (l *ErrorList) Error() string {
	var b strings.Builder
	for i, err := range l.Errors() {
		if i == MaxListed {
			fmt.Fprintf(&b, "\nand %d more", len(l.errs)-MaxListed)
			break
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(err.Error())
	}
	return b.String()
}

// Unwrap returns the errors of l: errors.Is(l, ErrBadInput) holds when one of them is
// bad input.
func (l *ErrorList) Unwrap() []error { return l.errs }
