package schema

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

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
// matches fault.ErrBadInput; its message is one error a line.
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

// Unwrap returns the errors of l: errors.Is(l, fault.ErrBadInput) holds when one of them is
// bad input.
func (l *ErrorList) Unwrap() []error { return l.errs }
