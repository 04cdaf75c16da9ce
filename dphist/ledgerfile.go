package dphist

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"sanitizer/fault"
	"sanitizer/publish"
)

// File is the ledger file that path names, as the system finds it: absolute, with
// every symbolic link followed (one to the ledger, and those among its folders) and
// ".." taken as the system takes it, after the link before it. Every name of one
// ledger (a link to it, a/../ledger.json, a relative path) gives one file, so one lock
// and one budget, and a charge replaces the file, never a link to it. A link to
// nothing, a path whose folder does not exist, or one that names anything but a
// regular file is bad input naming path.
func File(path string) (string, error) {
	abs := path
	if !filepath.IsAbs(path) {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("ledger %s: %w", path, err)
		}
		abs = wd + string(filepath.Separator) + path // not cleaned: ".." after a link is the link's
	}
	dir, base := filepath.Split(abs)
	if base == "" || base == "." || base == ".." {
		return "", fault.BadInput("ledger %s: not a file's name", path)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fault.BadInput("ledger %s: its folder %s: %w", path, dir, err)
	}
	file := filepath.Join(real, base)
	st, err := os.Lstat(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return file, nil
	case err != nil:
		return "", fault.BadInput("ledger %s: %w", path, err)
	case st.Mode()&fs.ModeSymlink != 0:
		if file, err = filepath.EvalSymlinks(file); err != nil {
			return "", fault.BadInput("ledger %s: a symbolic link to nothing (a ledger on a missing volume would read as a fresh budget): %w", path, err)
		}
		if st, err = os.Stat(file); err != nil {
			return "", fault.BadInput("ledger %s: %w", path, err)
		}
	}
	if !st.Mode().IsRegular() {
		return "", fault.BadInput("ledger %s: not a regular file", path)
	}
	return file, nil
}

// Check refuses, before a run reads any data, a charge that Record would refuse or
// could not make. It resolves the ledger (see File), loads it (see LoadLedger) and
// charges spend to the copy in memory (see Charge); then it makes and removes a
// temporary beside the file (a folder that is read-only, or one the process may not
// write in, is bad input naming path) and takes and lets go the ledger's lock as
// Record would (one that cannot be taken is bad input naming path). It leaves the
// folder as it found it: a lock it had to make is removed.
func Check(path, dataset string, epsTotal, deltaTotal float64, spend Spend) error {
	file, err := File(path)
	if err != nil {
		return err
	}
	l, err := LoadLedger(file)
	if err != nil {
		return err
	}
	if err := l.Charge(dataset, epsTotal, deltaTotal, spend); err != nil {
		return fmt.Errorf("ledger %s: %w", path, err)
	}
	tmp, err := publish.Create(file)
	if err != nil {
		if notWritable(err) {
			return fault.BadInput("ledger %s: cannot write in its folder %s: %w", path, filepath.Dir(file), err)
		}
		return fmt.Errorf("ledger %s: %w", path, err)
	}
	tmp.Discard()
	if err := probeLock(file + ".lock"); err != nil {
		return fault.BadInput("ledger %s: cannot take its lock: %w", path, err)
	}
	return nil
}
