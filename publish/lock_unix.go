//go:build unix

package publish

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// tryLock takes an exclusive lock on f without waiting. It returns errHeld when
// another open file holds one, and an error matching errors.ErrUnsupported when the
// file system does not lock.
func tryLock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case err == syscall.EINTR:
			continue
		case err == syscall.EWOULDBLOCK:
			return errHeld
		case err == syscall.ENOLCK || err == syscall.EOPNOTSUPP || err == syscall.ENOTSUP || err == syscall.EBADF:
			return fmt.Errorf("lock %s: %w (%w)", f.Name(), errors.ErrUnsupported, err)
		}
		return fmt.Errorf("lock %s: %w", f.Name(), err)
	}
}

// notWritable reports whether err says that a folder may not be written in.
func notWritable(err error) bool {
	return errors.Is(err, os.ErrPermission) || errors.Is(err, syscall.EROFS)
}

// syncDir makes the names in the folder dir reach the disk. A file system that cannot
// sync a folder is not an error.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	d.Close()
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EOPNOTSUPP) {
		return nil
	}
	return err
}
