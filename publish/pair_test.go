package publish

import (
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
