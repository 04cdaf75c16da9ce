package publish

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// A release and its report are two files, put in place by two renames; no rename
// moves both. What keeps them a pair: the report records the release's digest (Digest,
// FolderDigests), so that a reader can tell a report of another release; and a run
// that replaces both removes the old report (Remove) before the new release is put in
// place, so that a kill between the steps leaves a release without a report, never a
// release beside another release's report.

// Digest is the SHA-256 of the file at path: "sha256:" and its hex.
func Digest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// ReleaseDigest is the digest of a release, a file or a folder of parts: a file's
// Digest; a folder's "sha256-folder:" and the hex SHA-256 of its files' names and
// Digests, one "name digest" line each in ascending order of name. It names what a
// series state records of a night's release (series.Pending, series.Record).
func ReleaseDigest(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return Digest(path)
	}
	files, err := FolderDigests(path)
	if err != nil {
		return "", err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%s %s\n", n, files[n])
	}
	return "sha256-folder:" + hex.EncodeToString(h.Sum(nil)), nil
}

// FolderDigests maps the name of every file in the folder dir to its Digest.
func FolderDigests(dir string) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(entries))
	for _, e := range entries {
		if !e.Type().IsRegular() {
			return nil, fmt.Errorf("%s: %s is not a regular file", dir, e.Name())
		}
		if out[e.Name()], err = Digest(filepath.Join(dir, e.Name())); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Remove removes the file at path, if there is one, and syncs its folder, so that
// the removal is durable before whatever the caller does next.
func Remove(path string) error {
	err := os.Remove(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}
