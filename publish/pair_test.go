package publish

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

// TestDigests: a file's digest is the SHA-256 of its bytes; a folder's digests name
// every file in it, and a folder holding anything but files has none; Remove removes
// a file and is content with one already gone.
func TestDigests(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a")
	if err := os.WriteFile(a, []byte("abc"), 0o600); err != nil {
		t.Fatal(err)
	}
	const abc = "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" // FIPS 180-2 example
	if d, err := Digest(a); err != nil || d != abc {
		t.Errorf("Digest = %q, %v; want %q", d, err, abc)
	}
	if err := os.WriteFile(filepath.Join(dir, "b"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ds, err := FolderDigests(dir)
	if err != nil || len(ds) != 2 || ds["a"] != abc || ds["b"] != "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Errorf("FolderDigests = %v, %v", ds, err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := FolderDigests(dir); err == nil {
		t.Error("FolderDigests of a folder holding a folder: no error")
	}
	for range 2 {
		if err := Remove(a); err != nil {
			t.Errorf("Remove: %v", err)
		}
	}
	if _, err := os.Lstat(a); !os.IsNotExist(err) {
		t.Errorf("%s is still there: %v", a, err)
	}
}

// TestReleaseDigest: a file's release digest is its Digest; a folder's is the SHA-256
// of its "name digest" lines in order of name, so that a changed part, a renamed
// part or another part changes it.
func TestReleaseDigest(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("part-00001.csv", "")
	write("part-00000.csv", "abc")
	if d, err := ReleaseDigest(filepath.Join(dir, "part-00000.csv")); err != nil || d != "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("ReleaseDigest of a file = %q, %v", d, err)
	}
	lines := "part-00000.csv sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\n" +
		"part-00001.csv sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
	sum := sha256.Sum256([]byte(lines))
	want := "sha256-folder:" + hex.EncodeToString(sum[:])
	got, err := ReleaseDigest(dir)
	if err != nil || got != want {
		t.Fatalf("ReleaseDigest of a folder = %q, %v; want %q", got, err, want)
	}
	seen := map[string]bool{got: true}
	for _, change := range []func(){
		func() { write("part-00001.csv", "x") },
		func() { os.Rename(filepath.Join(dir, "part-00001.csv"), filepath.Join(dir, "part-00002.csv")) },
		func() { write("part-00003.csv", "") },
	} {
		change()
		d, err := ReleaseDigest(dir)
		if err != nil || seen[d] {
			t.Errorf("ReleaseDigest after a change = %q, %v: not a new digest", d, err)
		}
		seen[d] = true
	}
	if _, err := ReleaseDigest(filepath.Join(dir, "missing")); err == nil {
		t.Error("ReleaseDigest of a missing path: no error")
	}
}
