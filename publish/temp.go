package publish

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"sanitizer/fault"
)

// tries bounds the attempts at a fresh temporary name.
const tries = 100

// File is a temporary file beside its destination, open for writing and held by this
// process until Publish or Discard.
type File struct {
	*os.File          // the temporary, open for writing; Close it before Publish
	dest     string   // where Publish puts it
	lock     *os.File // holds the lock; nil once published or discarded
	// syncing, when not nil, gives the result of the sync and close that
	// PrepareSyncing left running (once): Publish and Discard wait for it.
	syncing chan error
}

// Create makes a temporary file beside dest (mode 0600 until published).
func Create(dest string) (*File, error) {
	for range tries {
		name := tempName(dest)
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		lock, err := hold(name)
		if err != nil || lock == nil {
			f.Close()
			os.Remove(name)
			if err != nil {
				return nil, err
			}
			continue
		}
		return &File{File: f, dest: dest, lock: lock}, nil
	}
	return nil, fmt.Errorf("no fresh temporary name beside %s", dest)
}

// Publish makes the temporary readable by others (0644), renames it to its
// destination and syncs the destination's folder. Without force an existing
// destination is left alone and the temporary removed, with an error matching
// fault.ErrBadInput; with force it is replaced in one rename. The temporary's file
// must have been written, synced and closed.
func (f *File) Publish(force bool) error {
	if f.lock == nil {
		return fmt.Errorf("%s: published or discarded already", f.dest)
	}
	if err := f.synced(); err != nil {
		f.Discard()
		return err
	}
	name := f.Name()
	if err := os.Chmod(name, 0o644); err != nil {
		f.Discard()
		return err
	}
	var err error
	if force {
		err = os.Rename(name, f.dest)
	} else {
		err = linkNew(name, f.dest)
	}
	if err != nil {
		f.Discard()
		return err
	}
	err = syncDir(filepath.Dir(f.dest))
	f.release()
	if err != nil {
		return fmt.Errorf("%s is in place, but its folder was not synced: %w", f.dest, err)
	}
	return nil
}

// linkNew gives the file at name the new name dest, which must not exist, and
// removes name.
func linkNew(name, dest string) error {
	err := os.Link(name, dest)
	switch {
	case errors.Is(err, fs.ErrExist):
		return fault.BadInput("%s appeared while the run wrote it: left alone (it %w)", dest, ErrExists)
	case err != nil:
		// No hard links here: check, then rename (the one window in which a file made
		// at dest meanwhile would be replaced).
		if _, err := os.Lstat(dest); !errors.Is(err, fs.ErrNotExist) {
			return fault.BadInput("%s appeared while the run wrote it: left alone (it %w)", dest, ErrExists)
		}
		return os.Rename(name, dest)
	}
	os.Remove(name) // published; a name left here is swept as a dead run's
	return nil
}

// Discard closes and removes the temporary unless it was published; it may be
// called more than once.
func (f *File) Discard() {
	if f.lock == nil {
		return
	}
	f.synced() // not closed under a sync still running
	f.File.Close()
	os.Remove(f.Name())
	f.release()
}

// synced waits for the sync and close PrepareSyncing left running, if any, and
// returns their error (nil after the first call).
func (f *File) synced() error {
	if f.syncing == nil {
		return nil
	}
	err := <-f.syncing
	f.syncing = nil
	return err
}

// release lets the lock go.
func (f *File) release() {
	f.File.Close()
	f.lock.Close()
	f.lock = nil
}

// Folder is a temporary folder beside its destination, held by this process until
// Publish or Discard.
type Folder struct {
	Path string   // the temporary folder to write into
	dest string   // where Publish puts it
	lock *os.File // the folder, open and locked; nil once published or discarded
}

// CreateFolder makes a temporary folder beside dest (mode 0700 until published).
func CreateFolder(dest string) (*Folder, error) {
	dest = filepath.Clean(dest)
	for range tries {
		name := tempName(dest)
		err := os.Mkdir(name, 0o700)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		lock, err := hold(name)
		if err != nil || lock == nil {
			os.RemoveAll(name)
			if err != nil {
				return nil, err
			}
			continue
		}
		return &Folder{Path: name, dest: dest, lock: lock}, nil
	}
	return nil, fmt.Errorf("no fresh temporary name beside %s", dest)
}

// Publish makes the temporary folder readable by others (0755), syncs the names it
// holds, renames it to its destination, which must be missing or an empty folder, and
// syncs the destination's folder. The files in the folder must have been synced.
func (d *Folder) Publish() error {
	if d.lock == nil {
		return fmt.Errorf("%s: published or discarded already", d.dest)
	}
	if err := os.Chmod(d.Path, 0o755); err != nil {
		d.Discard()
		return err
	}
	if err := syncDir(d.Path); err != nil {
		d.Discard()
		return err
	}
	// An empty folder at the destination makes way (os.Rename does not replace a
	// folder); one that is not empty stays, and the rename fails.
	if st, err := os.Lstat(d.dest); err == nil && st.IsDir() {
		if err := os.Remove(d.dest); err != nil {
			d.Discard()
			return err
		}
	}
	if err := os.Rename(d.Path, d.dest); err != nil {
		d.Discard()
		return err
	}
	err := syncDir(filepath.Dir(d.dest))
	d.lock.Close()
	d.lock = nil
	if err != nil {
		return fmt.Errorf("%s is in place, but its folder was not synced: %w", d.dest, err)
	}
	return nil
}

// Discard removes the temporary folder and all it holds unless it was published; it
// may be called more than once.
func (d *Folder) Discard() {
	if d.lock == nil {
		return
	}
	os.RemoveAll(d.Path)
	d.lock.Close()
	d.lock = nil
}

// WriteFile makes the file name in the temporary folder (it must be new) and fills it
// with write, then syncs and closes it, as Prepare does for a file of its own: the
// folder's files are published together by Publish. On an error, or a panic in write,
// the file is removed (the folder stays, for the caller to Discard).
func (d *Folder) WriteFile(name string, write func(f *os.File) error) (err error) {
	path := filepath.Join(d.Path, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(path)
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	done = true
	return f.Close()
}
