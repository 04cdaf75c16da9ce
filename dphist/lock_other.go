//go:build !unix

package dphist

import (
	"errors"
	"io/fs"
)

// errNoLock says that charging a ledger without a lock could lose a concurrent run's
// spend, so it is refused.
var errNoLock = errors.New("ledger: file locking is not supported on this platform")

// lockFile is not available here: see errNoLock.
func lockFile(path string) (func(), error) { return nil, errNoLock }

// probeLock is not available here: see errNoLock.
func probeLock(path string) error { return errNoLock }

// links is how many names the file st describes has: 1, as far as this platform
// tells.
func links(st fs.FileInfo) uint64 { return 1 }

// notWritable reports whether err says that a file cannot be made where it was
// asked for.
func notWritable(err error) bool { return errors.Is(err, fs.ErrPermission) }
