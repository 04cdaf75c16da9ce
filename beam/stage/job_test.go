package stage

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"sanitizer/fault"
	"sanitizer/schema"
)

// TestNewJobRefusesNonRegular: a configuration that is a device or a named pipe is bad
// input naming it, before a byte is read (/dev/zero was read until memory ran out), as
// in the CLI; so is one larger than schema.MaxConfigBytes.
func TestNewJobRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	pipe := filepath.Join(dir, "c.yaml")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Skip(err)
	}
	big := filepath.Join(dir, "big.yaml")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(schema.MaxConfigBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for path, want := range map[string]string{"/dev/zero": "not a regular file", pipe: "not a regular file (a named pipe)", big: "more than 16 MiB"} {
		_, err := NewJob(path)
		if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want bad input naming it and saying %q", path, err, want)
		}
	}
}
