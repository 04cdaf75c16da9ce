package dprun

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"sanitizer/fault"
	"sanitizer/job"
)

// ledgerPath checks the ledger path given with --ledger against the output folder out
// and returns it resolved (absolute, symlinks followed), the path to read and charge.
// The ledger may not lie inside out (it outlives the outputs), its folder must exist,
// and it may not be a symbolic link to nothing (a ledger on a missing volume would
// read as empty, a fresh budget). Errors match fault.ErrBadInput.
func ledgerPath(ledger, out string) (string, error) {
	resolved := resolve(ledger)
	if within(resolve(out), resolved) {
		return "", fault.BadInput("--ledger: %s lies inside the output folder %s (the ledger outlives the outputs)", ledger, out)
	}
	dir := folderOf(ledger)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return "", fault.BadInput("--ledger: the folder %s does not exist", dir)
	}
	if st, err := os.Lstat(resolved); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return "", fault.BadInput("--ledger: %s is a symbolic link to nothing", ledger)
	}
	return resolved, nil
}

// folderOf is the folder that holds p as the system finds it: p up to its last
// separator, not cleaned ("a/missing/../x" is in "a/missing/..", which does not exist).
func folderOf(p string) string {
	vol := filepath.VolumeName(p)
	rest := p[len(vol):]
	i := strings.LastIndexFunc(rest, isSeparator)
	switch {
	case i < 0:
		return vol + "."
	case i == 0:
		return vol + rest[:1]
	}
	return vol + rest[:i]
}

// isSeparator reports whether r separates the elements of a path.
func isSeparator(r rune) bool { return r < utf8.RuneSelf && os.IsPathSeparator(uint8(r)) }

// within reports whether path p is dir or lies below it; both absolute and clean.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// resolve is p made absolute as the system resolves it: symlinks and ".." are
// followed one element at a time as far as the elements exist; what follows the
// first missing one is cleaned as text.
func resolve(p string) string {
	if !filepath.IsAbs(p) {
		wd, err := os.Getwd()
		if err != nil {
			return job.Abs(p)
		}
		p = wd + string(filepath.Separator) + p
	}
	vol := filepath.VolumeName(p)
	elems := strings.FieldsFunc(p[len(vol):], isSeparator)
	done := vol + string(filepath.Separator)
	for i, e := range elems {
		// done holds no symlink: its parent as text is its parent on disk.
		next := filepath.Join(done, e)
		r, err := filepath.EvalSymlinks(next)
		if err != nil {
			return filepath.Join(append([]string{next}, elems[i+1:]...)...)
		}
		done = r
	}
	return done
}
