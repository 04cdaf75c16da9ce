//go:build unix

package readfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRead: a regular file (or a link to one) is read whole up to the limit; a larger
// one, a folder, a device and a named pipe are errors naming the path and what it is,
// returned without reading (a pipe without a writer would block an open).
func TestRead(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("12345"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	pipe := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path  string
		limit int64
		want  string
		is    error
	}{
		{file, 5, "12345", nil},
		{link, 100, "12345", nil},
		{file, 4, "", ErrTooLarge},
		{dir, 100, "", ErrNotRegular},
		{pipe, 100, "", ErrNotRegular},
		{"/dev/zero", 100, "", ErrNotRegular},
		{"/dev/null", 100, "", ErrNotRegular},
		{filepath.Join(dir, "none"), 100, "", os.ErrNotExist},
	} {
		got, err := Read(c.path, c.limit)
		if c.is == nil {
			if err != nil || string(got) != c.want {
				t.Errorf("%s: %q, %v; want %q", c.path, got, err, c.want)
			}
			continue
		}
		if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.path) {
			t.Errorf("%s: %v, want an error naming it that matches %v", c.path, err, c.is)
		}
	}
}

// TestSize: byte counts as the messages write them.
func TestSize(t *testing.T) {
	for n, want := range map[int64]string{16 << 20: "16 MiB", 256 << 20: "256 MiB", 1 << 30: "1 GiB", 2048: "2 KiB", 1000: "1000 bytes", 3<<20 + 1: "3145729 bytes"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
