package publish

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"sanitizer/fault"
)

// errHeld says that another open file holds the lock.
var errHeld = errors.New("held by a live process")

// marker sits between a destination's name and its temporary's owner.
const marker = ".sanitize-"

// tempName is a new temporary's name beside dest.
func tempName(dest string) string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails
	name := "." + filepath.Base(dest) + marker + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b[:]) + ".tmp"
	return filepath.Join(filepath.Dir(dest), name)
}

// isTemp reports whether name (a name in dest's folder) is a temporary of dest.
func isTemp(name, dest string) bool {
	owner, ok := strings.CutPrefix(name, "."+filepath.Base(dest)+marker)
	if !ok {
		return false
	}
	owner, ok = strings.CutSuffix(owner, ".tmp")
	if !ok {
		return false
	}
	pid, r, ok := strings.Cut(owner, "-")
	if _, err := strconv.ParseUint(pid, 10, 64); !ok || err != nil || len(r) != 16 {
		return false
	}
	_, err := hex.DecodeString(r)
	return err == nil
}

// CheckFile refuses a file destination the run could not publish to, before the run
// reads anything, with an error matching fault.ErrBadInput that names key and path:
// a folder; an existing file unless force; anything else that exists and is not a
// regular file (a symbolic link included); a parent folder that is missing or that the
// process cannot write in. It then sweeps
// the temporaries that dead runs left for path.
func CheckFile(key, path string, force bool) error {
	if err := checkParent(key, path); err != nil {
		return err
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fault.BadInput("%s: %s is a folder", key, path)
	}
	if st, err := os.Lstat(path); err == nil {
		if !force {
			return fault.BadInput("%s: %s %w", key, path, ErrExists)
		}
		if !st.Mode().IsRegular() {
			return fault.BadInput("%s: %s is not a regular file", key, path)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fault.BadInput("%s: %w", key, err)
	}
	f, err := Create(path)
	if err != nil {
		return probeError(key, path, err)
	}
	f.Discard()
	return Sweep(path)
}

// CheckFolder refuses a folder destination the run could not publish to, before the
// run reads anything, with an error matching fault.ErrBadInput that names key and
// path: anything but a missing or empty folder; a parent folder that is missing or
// that the process cannot write in. It then sweeps the temporaries that dead runs left
// for path.
func CheckFolder(key, path string) error {
	path = filepath.Clean(path)
	if err := checkParent(key, path); err != nil {
		return err
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fault.BadInput("%s: %w", key, err)
	case !st.IsDir():
		return fault.BadInput("%s: %s exists and is not a folder", key, path)
	default:
		entries, err := os.ReadDir(path)
		if err != nil {
			return fault.BadInput("%s: %w", key, err)
		}
		if len(entries) > 0 {
			return fault.BadInput("%s: the folder %s is not empty (a run never overwrites published outputs)", key, path)
		}
	}
	d, err := CreateFolder(path)
	if err != nil {
		return probeError(key, path, err)
	}
	d.Discard()
	return Sweep(path)
}

// checkParent refuses a destination whose parent is not a folder.
func checkParent(key, path string) error {
	parent := filepath.Dir(path)
	if st, err := os.Stat(parent); err != nil || !st.IsDir() {
		return fault.BadInput("%s: the folder %s does not exist", key, parent)
	}
	return nil
}

// probeError is the error of a temporary that could not be made beside path.
func probeError(key, path string, err error) error {
	if notWritable(err) {
		return fault.BadInput("%s: cannot write in the folder %s: %w", key, filepath.Dir(path), err)
	}
	return fmt.Errorf("%s: %w", key, err)
}

// Sweep removes the temporaries of dest that no live process holds: those that runs
// killed before they published left. A temporary it cannot remove is an error naming
// it.
func Sweep(dest string) error { return SweepFunc(dest, nil) }

// SweepFunc is Sweep, calling clean (unless nil) with each dead run's temporary while
// it holds the temporary's lock, before it removes it: for what a temporary records of
// files elsewhere that its run would have removed (a store's objects). A temporary
// that clean fails on stays, for a later sweep, and the error names it.
func SweepFunc(dest string, clean func(tmp string) error) error {
	dest = filepath.Clean(dest)
	dir := filepath.Dir(dest)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("sweeping %s: %w", dir, err)
	}
	for _, e := range entries {
		if isTemp(e.Name(), dest) {
			if err := sweepOne(filepath.Join(dir, e.Name()), clean); err != nil {
				return fmt.Errorf("removing the stale temporary %s: %w", filepath.Join(dir, e.Name()), err)
			}
		}
	}
	return nil
}

// sweepOne removes the temporary path when its lock can be taken (its owner is dead)
// and path still names the file locked, after clean (unless nil) has cleaned up after
// it.
func sweepOne(path string, clean func(string) error) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // its owner published or discarded it meanwhile
	}
	if errors.Is(err, fs.ErrPermission) {
		return nil // another user's: cannot tell whether it is alive
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if err := tryLock(f); err != nil {
		if errors.Is(err, errHeld) || errors.Is(err, errors.ErrUnsupported) {
			return nil // alive, or cannot tell
		}
		return err
	}
	if !samePath(f, path) {
		return nil
	}
	if clean != nil {
		if err := clean(path); err != nil {
			return err
		}
	}
	return os.RemoveAll(path)
}

// samePath reports whether path still names the open file f.
func samePath(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Lstat(path)
	return err == nil && os.SameFile(a, b)
}

// hold opens path (made by this process a moment ago) and locks it. It returns nil
// and no error when a sweep took path for a dead run's before the lock: the caller
// makes another.
func hold(path string) (*os.File, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	err = tryLock(f)
	switch {
	case errors.Is(err, errHeld):
		f.Close() // a sweep holds it and will remove it
		return nil, nil
	case err != nil && !errors.Is(err, errors.ErrUnsupported):
		f.Close()
		return nil, err
	case !samePath(f, path):
		f.Close()
		return nil, nil
	}
	return f, nil
}
