package safe

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"sanitizer/fault"
)

func TestCall(t *testing.T) {
	cause := errors.New("cause")
	tests := []struct {
		name      string
		f         func() error
		internal  bool
		wantCause bool
	}{
		{"returns nil", func() error { return nil }, false, false},
		{"returns an error", func() error { return cause }, false, true},
		{"panics with a string", func() error { panic("boom") }, true, false},
		{"index out of range", func() error { var a []int; _ = a[len(a)+1]; return nil }, true, false},
		{"panics with a worker's panic", func() error { panic(&PanicError{Value: "w", Stack: []byte("worker stack")}) }, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Call(tc.f)
			if got := errors.Is(err, fault.ErrInternal); got != tc.internal {
				t.Fatalf("errors.Is(%v, fault.ErrInternal) = %v, want %v", err, got, tc.internal)
			}
			if got := errors.Is(err, cause); got != tc.wantCause {
				t.Fatalf("errors.Is(%v, cause) = %v, want %v", err, got, tc.wantCause)
			}
			var pe *PanicError
			if tc.internal && (!errors.As(err, &pe) || len(pe.Stack) == 0) {
				t.Fatalf("%v: no stack", err)
			}
			if tc.internal && strings.Contains(err.Error(), "goroutine") {
				t.Fatalf("the message carries the stack: %q", err)
			}
		})
	}
	// A worker's panic raised again keeps the worker's stack.
	var pe *PanicError
	errors.As(Call(func() error { panic(&PanicError{Value: "w", Stack: []byte("worker stack")}) }), &pe)
	if string(pe.Stack) != "worker stack" {
		t.Fatalf("stack %q, want the worker's", pe.Stack)
	}
}

func TestParallel(t *testing.T) {
	for _, parts := range []int{1, 2, 5} {
		for _, bad := range []int{-1, 0, parts - 1} {
			var ran atomic.Int32
			err := Parallel(parts, func(p int) {
				ran.Add(1)
				if p == bad {
					panic("boom")
				}
			})
			if int(ran.Load()) != parts {
				t.Errorf("parts %d: %d ran", parts, ran.Load())
			}
			if got := errors.Is(err, fault.ErrInternal); got != (bad >= 0) {
				t.Errorf("parts %d, panic in %d: err %v", parts, bad, err)
			}
		}
	}
}

func TestMustParallel(t *testing.T) {
	err := Call(func() error {
		MustParallel(3, func(p int) {
			if p == 2 {
				panic("boom")
			}
		})
		return nil
	})
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Value != "boom" || !strings.Contains(string(pe.Stack), "TestMustParallel") {
		t.Fatalf("got %v, want the worker's panic with its stack", err)
	}
}
