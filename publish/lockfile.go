package publish

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrLocked is matched by Lock's error when another live process holds the lock.
var ErrLocked = errors.New("in use by another run")

// Lock takes an exclusive lock on the file path (created, mode 0644, when missing;
// never removed, so that two runs always lock the same file) without waiting, and
// returns its release. A lock another process holds is an error matching ErrLocked;
// a file system that cannot lock is an error too: a caller that needs the lock must
// not go on without it.
func Lock(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := tryLock(f); err != nil {
		f.Close()
		if errors.Is(err, errHeld) {
			return nil, fmt.Errorf("%s: %w", path, ErrLocked)
		}
		return nil, err
	}
	return func() { f.Close() }, nil
}

// Rename puts the file or folder tmp in place at dest in one rename and syncs dest's
// folder: for a release whose publication a caller committed to elsewhere (a series'
// state) and finishes after a crash. A file replaces dest; a folder replaces only a
// missing or empty folder (as Folder.Publish). The release becomes readable by others
// (a file 0644, a folder 0755), as Publish makes it.
func Rename(tmp, dest string) error {
	st, err := os.Stat(tmp)
	if err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if st.IsDir() {
		mode = 0o755
		if d, err := os.Lstat(dest); err == nil && d.IsDir() {
			if err := os.Remove(dest); err != nil { // not empty: it stays, and so does tmp
				return err
			}
		}
	}
	if err := os.Chmod(tmp, mode); err != nil {
		return err
	}
	if err := os.Rename(tmp, dest); err != nil {
		return err
	}
	return syncDir(filepath.Dir(dest))
}
