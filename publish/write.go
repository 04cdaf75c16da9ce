package publish

import (
	"os"

	"sanitizer/fault"
)

// Options says how WriteFile puts its file in place.
type Options struct {
	Force  bool                       // replace an existing destination
	Verify func(tmpPath string) error // checks the written file before it is published; nil: no check
}

// WriteFile makes dest the file that write writes, whole or not at all: write fills a
// held temporary beside dest (f, which it must leave open), which is synced, closed,
// checked by opt.Verify and renamed to dest; dest's folder is then synced. Temporaries
// that dead runs left for dest are swept first. Without opt.Force an existing dest is
// an error matching fault.ErrBadInput and is left alone; with it, dest is replaced in
// one rename. On any error, and on a panic in write or Verify, the temporary is
// removed and dest left as it was.
func WriteFile(dest string, opt Options, write func(f *os.File) error) error {
	if !opt.Force {
		if _, err := os.Lstat(dest); err == nil {
			return fault.BadInput("%s %w", dest, ErrExists)
		}
	}
	f, err := Prepare(dest, opt.Verify, write)
	if err != nil {
		return err
	}
	return f.Publish(opt.Force)
}

// PrepareSyncing is Prepare without verify, returning as soon as write is done: the
// temporary's sync and close run meanwhile, while the caller reads the file (a
// release's verification), and Publish waits for them (a failed sync is its error,
// and the temporary removed); Discard waits for them too.
func PrepareSyncing(dest string, write func(f *os.File) error) (*File, error) {
	return written(dest, write, func(f *File) error {
		f.syncing = make(chan error, 1)
		go func() {
			err := f.File.Sync()
			if cerr := f.File.Close(); err == nil {
				err = cerr
			}
			f.syncing <- err
		}()
		return nil
	})
}

// written makes a temporary beside dest (swept of dead runs' first), fills it with
// write and hands it to then; on any error, and on a panic in write or then, the
// temporary is removed.
func written(dest string, write func(f *os.File) error, then func(f *File) error) (*File, error) {
	if err := Sweep(dest); err != nil {
		return nil, err
	}
	f, err := Create(dest)
	if err != nil {
		return nil, err
	}
	done := false
	defer func() {
		if !done {
			f.Discard()
		}
	}()
	if err := write(f.File); err != nil {
		return nil, err
	}
	if err := then(f); err != nil {
		return nil, err
	}
	done = true
	return f, nil
}

// Prepare is WriteFile up to the rename, for a caller that publishes several files
// only once all are written and checked: it returns the temporary that write wrote,
// synced, closed and checked by verify (when not nil), still held, for the caller to
// Publish or Discard. On any error, and on a panic in write or verify, nothing is
// left.
func Prepare(dest string, verify func(tmpPath string) error, write func(f *os.File) error) (*File, error) {
	return written(dest, write, func(f *File) error {
		if err := f.Sync(); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		if verify != nil {
			return verify(f.Name())
		}
		return nil
	})
}
