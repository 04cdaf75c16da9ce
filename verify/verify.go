// Package verify re-checks a written release from its strings alone. It shares no
// code with the search: it does not know hierarchies, codes, lattices or the chosen
// node, only what a recipient of the file could count.
package verify

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// Spec is what a release of a given input must satisfy.
type Spec struct {
	K             int      // every published class has at least K records
	MaxSuppressed int      // at most this many input records may be missing
	InputRows     int      // records of the input
	Columns       []string // the release's header, in order
	Quasi         []string // the quasi-identifier columns (a subset of Columns)
}

// Measured is what the release was found to hold.
type Measured struct {
	Rows       int     // records released
	Suppressed int     // input records not released
	Classes    int     // equivalence classes (distinct quasi-identifier tuples)
	MinClass   int     // smallest class (the measured k); 0 when nothing is released
	AvgClass   float64 // average class size
}

// Violation reports a release that breaks its Spec.
type Violation struct{ Msg string }

func (v *Violation) Error() string { return v.Msg }

// Reader yields the records of a release, returning io.EOF after the last.
type Reader interface {
	Read() ([]string, error)
}

// Release counts the equivalence classes of the release read from r (header already
// consumed and given) and checks them against spec. A release that breaks spec yields a
// *Violation together with the measurements; a read failure yields the reader's error.
func Release(spec Spec, header []string, r Reader) (*Measured, error) {
	if !slices.Equal(header, spec.Columns) {
		// The expected names only: a release without a header would put data here.
		return nil, &Violation{Msg: fmt.Sprintf("the release's header is not the expected %q", spec.Columns)}
	}
	pos := make([]int, len(spec.Quasi))
	for i, q := range spec.Quasi {
		pos[i] = slices.Index(header, q)
		if pos[i] < 0 {
			return nil, &Violation{Msg: fmt.Sprintf("quasi-identifier %q missing from the release", q)}
		}
	}
	classes := map[string]*int{}
	var key []byte
	m := &Measured{}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(rec) != len(header) {
			return nil, &Violation{Msg: fmt.Sprintf("release record %d has %d fields, the header %d", m.Rows+1, len(rec), len(header))}
		}
		m.Rows++
		key = key[:0]
		for _, p := range pos {
			// length-prefixed so that no two different tuples share a key
			key = strconv.AppendInt(key, int64(len(rec[p])), 10)
			key = append(key, ':')
			key = append(key, rec[p]...)
		}
		if c := classes[string(key)]; c != nil {
			*c++
		} else {
			one := 1
			classes[string(key)] = &one
		}
	}
	m.Classes = len(classes)
	for _, n := range classes {
		if m.MinClass == 0 || *n < m.MinClass {
			m.MinClass = *n
		}
	}
	if m.Classes > 0 {
		m.AvgClass = float64(m.Rows) / float64(m.Classes)
	}
	m.Suppressed = spec.InputRows - m.Rows
	switch {
	case m.Suppressed < 0:
		return m, &Violation{Msg: fmt.Sprintf("release has %d records, more than the input's %d", m.Rows, spec.InputRows)}
	case m.Suppressed > spec.MaxSuppressed:
		return m, &Violation{Msg: fmt.Sprintf("%d records suppressed, the limit is %d", m.Suppressed, spec.MaxSuppressed)}
	case m.Rows > 0 && m.MinClass < spec.K:
		return m, &Violation{Msg: fmt.Sprintf("smallest class has %d records, k is %d", m.MinClass, spec.K)}
	}
	return m, nil
}
