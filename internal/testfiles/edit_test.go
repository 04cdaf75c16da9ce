package testfiles

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// fatalRecorder is a test whose Fatalf records its message and stops the goroutine, as
// a failed test's does.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// edited runs edit against a recording test and returns its result and the failure's
// message ("" when it did not fail).
func edited(edit func(t testing.TB) string) (out, failure string) {
	r := &fatalRecorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		out = edit(r)
	}()
	<-done
	return out, r.msg
}

func TestReplace(t *testing.T) {
	const text = "privacy: {k: 5}\nsearch: {algorithm: optimal}\nprivacy: {k: 5}\n"
	tests := []struct {
		name     string
		all      bool
		old, new string
		want     string // the edited text, or the failure's message when fails
		fails    bool
	}{
		{"first", false, "privacy: {k: 5}", "privacy: {k: 2}", "privacy: {k: 2}\nsearch: {algorithm: optimal}\nprivacy: {k: 5}\n", false},
		{"all", true, "privacy: {k: 5}", "privacy: {k: 2}", "privacy: {k: 2}\nsearch: {algorithm: optimal}\nprivacy: {k: 2}\n", false},
		{"to nothing", false, "search: {algorithm: optimal}\n", "", "privacy: {k: 5}\nprivacy: {k: 5}\n", false},
		{"absent", false, "privacy: {k: 6}", "privacy: {k: 2}", `does not hold "privacy: {k: 6}"`, true},
		{"absent, all", true, "algorithm: mondrian", "x", `does not hold "algorithm: mondrian"`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, failure := edited(func(r testing.TB) string {
				if tt.all {
					return ReplaceAll(r, text, tt.old, tt.new)
				}
				return Replace(r, text, tt.old, tt.new)
			})
			switch {
			case tt.fails && !strings.Contains(failure, tt.want):
				t.Errorf("failure %q, want one naming %q", failure, tt.want)
			case !tt.fails && failure != "":
				t.Errorf("failed: %s", failure)
			case !tt.fails && out != tt.want:
				t.Errorf("got %q, want %q", out, tt.want)
			}
		})
	}
}

func TestTableCells(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{"| a | b |", []string{"a", "b"}},
		{"  |`k`|  x y  |  ", []string{"`k`", "x y"}},
		{`| a \| b | c |`, []string{"a | b", "c"}},
		{"|---|:-:|", []string{"---", ":-:"}},
		{"| only |", []string{"only"}},
		{"| a | |", []string{"a", ""}},
		{`| a\b |`, []string{`a\b`}},
	}
	for _, tt := range tests {
		if got := TableCells(tt.line); !slices.Equal(got, tt.want) {
			t.Errorf("TableCells(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}
