// Package readfile reads the small files a run takes whole into memory (its
// configuration, hierarchy files, a report): regular files only, up to a size, so that
// a path naming a device (/dev/zero, /dev/urandom), a pipe or a file grown without
// bound cannot make a run read until memory runs out.
//
// It imports nothing of this module; schema, generalize, table, job and release read
// their small files through it.
package readfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular is matched by the error for a path that names something other than a
// regular file (a device, a named pipe, a socket, a folder).
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is matched by the error for a file larger than the limit.
var ErrTooLarge = errors.New("larger than allowed")

// Read returns the bytes of the regular file at path (symbolic links followed), at most
// limit of them: a file that is not a regular one, or that holds more, is an error
// naming path (matching ErrNotRegular or ErrTooLarge), read no further.
func Read(path string, limit int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := Regular(path, st.Mode()); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The file opened may not be the one looked at (a race): it is looked at again.
	if st, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := Regular(path, st.Mode()); err != nil {
		return nil, err
	}
	if st.Size() > limit {
		return nil, tooLarge(path, limit)
	}
	data, err := readAll(io.LimitReader(f, limit+1), min(st.Size(), limit)+1)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit { // it grew while it was read
		return nil, tooLarge(path, limit)
	}
	return data, nil
}

// readAll reads r to its end into room for size bytes first (the size looked at and
// one more, to see a file grow: a series' state of tens of megabytes is read without
// being copied as it grows), growing only past it.
func readAll(r io.Reader, size int64) ([]byte, error) {
	data := make([]byte, 0, size)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// Regular is nil when mode is a regular file's, else an error naming path and what
// it is (matching ErrNotRegular).
func Regular(path string, mode fs.FileMode) error {
	if mode.IsRegular() {
		return nil
	}
	return fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, kind(mode))
}

// kind names what a file of the given mode is.
func kind(mode fs.FileMode) string {
	switch {
	case mode.IsDir():
		return "a folder"
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeCharDevice != 0:
		return "a character device"
	case mode&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a file of data"
}

// tooLarge is the error for a file over the limit.
func tooLarge(path string, limit int64) error {
	return fmt.Errorf("%s: %w: more than %s", path, ErrTooLarge, Size(limit))
}

// Size writes a byte count for a message: "16 MiB".
func Size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
