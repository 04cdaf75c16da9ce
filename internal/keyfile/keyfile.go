// Package keyfile reads and creates secret key files: regular files readable by their
// owner only, whose whole content is the key. Its errors name the file and what is
// wrong with it, never the content. It imports, of this module, only fault and
// internal/readfile.
package keyfile

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"sanitizer/fault"
	"sanitizer/internal/readfile"
)

const (
	// MinBytes is the least length of a key, and the length of a created one.
	MinBytes = 32
	// MaxBytes bounds a key file's size: its whole content is the key.
	MaxBytes = 64 << 10
)

// Read reads the key file path whole; what names the key in errors ("pseudonym",
// "series"). A key file that cannot serve (missing, unreadable, not a regular file,
// readable by group or others, shorter than MinBytes or longer than MaxBytes) is an
// error matching fault.ErrBadInput. The file opened is looked at again, so that a file
// swapped after the first look is refused, not read.
func Read(path, what string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, openError(path, what, err)
	}
	if err := checkMode(path, what, st); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, openError(path, what, err)
	}
	defer f.Close()
	opened, err := f.Stat()
	if err != nil {
		return nil, openError(path, what, err)
	}
	if !os.SameFile(st, opened) {
		return nil, fault.BadInput("%s: the key file changed while it was opened", path)
	}
	if err := checkMode(path, what, opened); err != nil {
		return nil, err
	}
	key, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return nil, openError(path, what, err)
	}
	if err := checkSize(path, what, int64(len(key))); err != nil { // it changed while it was read
		clear(key)
		return nil, err
	}
	return key, nil
}

// New draws a key of MinBytes random bytes.
func New() ([]byte, error) {
	key := make([]byte, MinBytes)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("a random key: %w", err)
	}
	return key, nil
}

// Create makes the key file path (which must not exist) holding key, readable and
// writable by its owner only, synced with its folder.
func Create(path string, key []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("creating the key file: %w", err)
	}
	_, err = f.Write(key)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = syncDir(filepath.Dir(path))
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("creating the key file %s: %w", path, err)
	}
	return nil
}

// syncDir makes the names in dir reach the disk; a folder that cannot be synced is
// not an error.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	_ = d.Sync()
	return nil
}

// checkMode refuses a key file st that is not a regular file, that group or others
// may read, or whose size is not a key's.
func checkMode(path, what string, st fs.FileInfo) error {
	if err := readfile.Regular(path, st.Mode()); err != nil {
		return fault.BadInput("%w: a %s key file must be a regular file", err, what)
	}
	if perm := st.Mode().Perm(); perm&0o044 != 0 {
		return fault.BadInput("%s: mode %04o lets group or others read the %s key: make it readable by its owner only (chmod 600)", path, perm, what)
	}
	return checkSize(path, what, st.Size())
}

// checkSize refuses a key of n bytes shorter than MinBytes or longer than MaxBytes.
func checkSize(path, what string, n int64) error {
	switch {
	case n < MinBytes:
		return fault.BadInput("%s: the key file holds %d bytes, a %s key needs at least %d (its whole content is the key)", path, n, what, MinBytes)
	case n > MaxBytes:
		return fault.BadInput("%s: the key file holds more than %d bytes, more than a %s key file may (its whole content is the key)", path, MaxBytes, what)
	}
	return nil
}

// openError is bad input naming path and why it could not be read.
func openError(path, what string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the path is named once
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fault.BadInput("%s: the %s key file does not exist", path, what)
	case errors.Is(err, fs.ErrPermission):
		return fault.BadInput("%s: the %s key file cannot be read by this user", path, what)
	}
	return fault.BadInput("%s: the %s key file cannot be read: %w", path, what, err)
}
