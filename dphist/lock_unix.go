//go:build unix

package dphist

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// lockTries bounds the attempts at a lock whose file is replaced while it is waited
// for (by a Check that made it and removes it).
const lockTries = 1000

// lockFile takes an exclusive advisory lock on path (created if missing) and returns
// its release. Concurrent runs charging the same ledger wait for each other. The lock
// is taken on the file path names once it is held: a lock file removed meanwhile
// (see probeLock) is let go and path opened again.
func lockFile(path string) (func(), error) {
	for range lockTries {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("ledger lock: %w", err)
		}
		if err := flock(f, syscall.LOCK_EX); err != nil {
			f.Close()
			return nil, fmt.Errorf("ledger lock %s: %w", path, err)
		}
		if samePath(f, path) {
			return func() {
				flock(f, syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		f.Close()
	}
	return nil, fmt.Errorf("ledger lock %s: replaced %d times while waited for", path, lockTries)
}

// probeLock takes and lets go the lock on path as lockFile would, leaving no file
// that was not there: one it makes is removed while held, so that a run waiting for
// it finds it gone once it holds it, and opens path again.
func probeLock(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		unlock, err := lockFile(path)
		if err != nil {
			return err
		}
		unlock()
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	err = flock(f, syscall.LOCK_EX)
	if rerr := os.Remove(path); err == nil {
		err = rerr
	}
	return err
}

// flock applies how to f's lock, waiting as long as it takes.
func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}

// samePath reports whether path still names the open file f.
func samePath(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}

// links is how many names the file st describes has.
func links(st fs.FileInfo) uint64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Nlink)
	}
	return 1
}

// notWritable reports whether err says that a file cannot be made where it was
// asked for: permission denied, or a read-only file system.
func notWritable(err error) bool {
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)
}
