package table

import (
	"os"
	"path/filepath"
	"strings"
)

// Two paths may name one file although their text differs: through a symbolic link
// (to the file or to a folder on the way), a ".." after a symbolic link (which leads
// to the link's target's parent, not the link's), or a hard link. The functions below
// compare what the paths name, not their text.

// Resolve is path made absolute with every symbolic link on it followed and every
// "." and ".." taken where the file system takes them. Of a path that does not exist,
// the folder is resolved (as far as it exists) and the rest joined to it as written.
func Resolve(path string) string {
	if !filepath.IsAbs(path) {
		wd, err := os.Getwd()
		if err != nil {
			return filepath.Clean(path)
		}
		path = wd + string(filepath.Separator) + path // not Join: Join would take "link/.." as written
	}
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	dir, name := splitPath(strings.TrimRight(path, `/`+string(filepath.Separator)))
	if name == "" || name == "." || name == ".." {
		return filepath.Clean(path)
	}
	return filepath.Join(Resolve(dir), name)
}

// SameFile reports whether a and b name one file: the same file (a hard link
// included) when both exist, else the same path once resolved (Resolve).
func SameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(sa, sb)
	}
	if (errA == nil) != (errB == nil) {
		return false
	}
	return Resolve(a) == Resolve(b)
}

// Within reports whether path is the folder dir or inside it, both resolved
// (Resolve).
func Within(path, dir string) bool {
	p, d := Resolve(path), Resolve(dir)
	return p == d || strings.HasPrefix(p, strings.TrimSuffix(d, string(filepath.Separator))+string(filepath.Separator))
}
