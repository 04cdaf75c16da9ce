package main

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"sanitizer/fault"
	"sanitizer/internal/safe"
)

// TestExitCodeInternal: a defect of the program (a recovered panic) exits 1 even when a
// stage wrapped it in a bad-input or unattainable error; the others keep their status.
func TestExitCodeInternal(t *testing.T) {
	panicked := &safe.PanicError{Value: "boom", Stack: []byte("goroutine 7 [running]:\nworker()")}
	for _, tc := range []struct {
		err  error
		want int
	}{
		{fault.BadInput("in.csv: row 3: bad"), 2},
		{fault.Unattainable("no node"), 3},
		{errors.New("disk full"), 1},
		{fmt.Errorf("pass 2: %w", panicked), 1},
		{fault.BadInput("in.csv: %w", panicked), 1},
		{fault.Unattainable("search: %w", panicked), 1},
	} {
		if got := exitCode(tc.err); got != tc.want {
			t.Errorf("exitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

// TestLogStack: the stack of a recovered panic goes to the debug log, not elsewhere.
func TestLogStack(t *testing.T) {
	panicked := &safe.PanicError{Value: "boom", Stack: []byte("goroutine 7 [running]:\nworker()")}
	for _, tc := range []struct {
		err   error
		level slog.Level
		want  bool
	}{
		{fmt.Errorf("pass 2: %w", panicked), slog.LevelDebug, true},
		{fmt.Errorf("pass 2: %w", panicked), slog.LevelWarn, false},
		{errors.New("disk full"), slog.LevelDebug, false},
	} {
		var buf bytes.Buffer
		logStack(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tc.level})), tc.err)
		if got := strings.Contains(buf.String(), "worker()"); got != tc.want {
			t.Errorf("%v at level %v: logged %q", tc.err, tc.level, buf.String())
		}
	}
}

// TestDebugFlagShowsStack: the logger --debug sets up logs a recovered panic's stack;
// the default and --quiet loggers do not, in either format.
func TestDebugFlagShowsStack(t *testing.T) {
	panicked := fmt.Errorf("pass 2: %w", &safe.PanicError{Value: "boom", Stack: []byte("goroutine 7 [running]:\nworker()")})
	for _, tc := range []struct {
		format       string
		debug, quiet bool
		want         bool
	}{
		{"text", true, false, true},
		{"json", true, false, true},
		{"text", false, false, false},
		{"json", false, false, false},
		{"json", false, true, false},
	} {
		var buf bytes.Buffer
		g := &globals{stderr: &buf, logFormat: tc.format, debug: tc.debug, quiet: tc.quiet, progressEvery: time.Second}
		if err := g.setup(); err != nil {
			t.Fatal(err)
		}
		logStack(g.log, panicked)
		if got := strings.Contains(buf.String(), "worker()"); got != tc.want {
			t.Errorf("%s debug=%v quiet=%v: logged %q", tc.format, tc.debug, tc.quiet, buf.String())
		}
	}
}
