package safe

import (
	"context"
	"errors"
	"testing"

	"sanitizer/fault"
)

func TestStart(t *testing.T) {
	cause := errors.New("cause")
	tests := []struct {
		name string
		f    func(ctx context.Context, out chan<- int) error
		// cancel cancels the context once the first value is received
		cancel   bool
		want     error // errors.Is the result
		internal bool
		values   int
	}{
		{"result", func(ctx context.Context, out chan<- int) error {
			defer close(out)
			out <- 1
			out <- 2
			return nil
		}, false, nil, false, 2},
		{"error", func(ctx context.Context, out chan<- int) error {
			defer close(out)
			out <- 1
			return cause
		}, false, cause, false, 1},
		{"panic", func(ctx context.Context, out chan<- int) error {
			defer close(out)
			out <- 1
			panic("boom")
		}, false, fault.ErrInternal, true, 1},
		{"cancellation", func(ctx context.Context, out chan<- int) error {
			defer close(out)
			for i := 0; ; i++ {
				select {
				case out <- i:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
		}, true, context.Canceled, false, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			out := make(chan int)
			done := Start(func() error { return tc.f(ctx, out) })
			if cap(done) != 1 {
				t.Fatalf("a channel of capacity %d: the goroutine would wait for its receiver", cap(done))
			}
			values := 0
			for range out {
				if values++; tc.cancel {
					cancel()
					break
				}
			}
			err := <-done
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			var pe *PanicError
			if got := errors.As(err, &pe); got != tc.internal || tc.internal && (pe.Value != "boom" || len(pe.Stack) == 0) {
				t.Fatalf("got %#v, want a PanicError: %v", err, tc.internal)
			}
			if values != tc.values {
				t.Fatalf("%d values, want %d", values, tc.values)
			}
		})
	}
}
