package fault

import (
	"errors"
	"io"
	"testing"
)

func TestKinds(t *testing.T) {
	kinds := []error{ErrBadInput, ErrUnattainable, ErrInternal}
	tests := []struct {
		name string
		err  error
		kind error
		msg  string
	}{
		{"bad input", BadInput("file %s: row %d", "a.csv", 3), ErrBadInput, "file a.csv: row 3"},
		{"unattainable", Unattainable("k=%d", 5), ErrUnattainable, "k=5"},
		{"internal", Internalf("%d of %d", 1, 2), ErrInternal, "internal error: 1 of 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err.Error() != tt.msg {
				t.Errorf("message %q, want %q", tt.err, tt.msg)
			}
			for _, k := range kinds {
				if got := errors.Is(tt.err, k); got != (k == tt.kind) {
					t.Errorf("errors.Is(err, %v) = %v", k, got)
				}
			}
		})
	}
}

func TestWrapsItsCause(t *testing.T) {
	for _, err := range []error{
		BadInput("read: %w", io.ErrUnexpectedEOF),
		Unattainable("read: %w", io.ErrUnexpectedEOF),
		Internalf("read: %w", io.ErrUnexpectedEOF),
	} {
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%v does not wrap its cause", err)
		}
	}
	// An internal error that wraps bad input matches both; the command line checks
	// ErrInternal first.
	if err := Internalf("the merged table: %w", BadInput("x")); !errors.Is(err, ErrInternal) || !errors.Is(err, ErrBadInput) {
		t.Errorf("%v: want both kinds", err)
	}
}
