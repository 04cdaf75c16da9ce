//go:build !unix

package publish

import (
	"errors"
	"os"
)

// tryLock cannot lock here: temporaries are not held, so none is ever taken for a
// dead run's and swept.
func tryLock(*os.File) error {
	return errors.ErrUnsupported
}

// notWritable reports whether err says that a folder may not be written in.
func notWritable(err error) bool {
	return errors.Is(err, os.ErrPermission)
}

// syncDir cannot sync a folder here: the names in dir reach the disk when the system
// writes them.
func syncDir(string) error { return nil }
