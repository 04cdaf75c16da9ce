package publish

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLock(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json.lock")
	unlock, err := Lock(path)
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	start := time.Now()
	if u, err := Lock(path); !errors.Is(err, ErrLocked) {
		if u != nil {
			u()
		}
		t.Fatalf("a second Lock on a held lock: %v, want an error matching ErrLocked", err)
	} else if !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name the lock", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the second Lock waited %v instead of failing at once", d)
	}
	// Another lock file is another lock.
	other, err := Lock(filepath.Join(dir, "other.lock"))
	if err != nil {
		t.Fatalf("Lock of another file while the first is held: %v", err)
	}
	other()
	unlock()
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the lock file is gone after unlock: %v", err)
	}
	again, err := Lock(path)
	if err != nil {
		t.Fatalf("Lock after unlock: %v", err)
	}
	again()
}

func TestLockMissingFolder(t *testing.T) {
	_, err := Lock(filepath.Join(t.TempDir(), "no", "state.lock"))
	if err == nil || errors.Is(err, ErrLocked) {
		t.Fatalf("Lock in a missing folder: %v, want an error that is not ErrLocked", err)
	}
}

func TestRename(t *testing.T) {
	dir := t.TempDir()
	tmp, dest := filepath.Join(dir, ".release.tmp"), filepath.Join(dir, "release.csv")
	if err := os.WriteFile(tmp, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dest, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Rename(tmp, dest); err != nil {
		t.Fatalf("Rename: %v", err)
	}
	if b, err := os.ReadFile(dest); err != nil || string(b) != "new" {
		t.Errorf("dest holds %q, %v; want the temporary's content", b, err)
	}
	if st, err := os.Stat(dest); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("dest's mode %v, %v; want 0644", st.Mode(), err)
	}
	if _, err := os.Lstat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary is still there: %v", err)
	}
	if err := Rename(tmp, dest); err == nil {
		t.Error("Rename of a missing temporary succeeded")
	}
	if b, _ := os.ReadFile(dest); string(b) != "new" {
		t.Errorf("a failed Rename changed dest to %q", b)
	}
}

// TestRenameFolder: a folder replaces a missing or empty folder, readable by others;
// a folder that holds files is never replaced, and the temporary stays.
func TestRenameFolder(t *testing.T) {
	dir := t.TempDir()
	write := func(path, s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		dest    func(string) // makes what is at dest before the rename
		wantErr bool
	}{
		{"missing", func(string) {}, false},
		{"empty folder", func(d string) { os.Mkdir(d, 0o755) }, false},
		{"folder with a part", func(d string) { os.Mkdir(d, 0o755); write(filepath.Join(d, "part-00000.csv"), "old") }, true},
		{"a file", func(d string) { write(d, "old") }, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp, dest := filepath.Join(dir, fmt.Sprintf(".tmp%d", i)), filepath.Join(dir, fmt.Sprintf("out%d", i))
			if err := os.Mkdir(tmp, 0o700); err != nil {
				t.Fatal(err)
			}
			write(filepath.Join(tmp, "part-00000.csv"), "new")
			tt.dest(dest)
			err := Rename(tmp, dest)
			if tt.wantErr {
				if err == nil {
					t.Fatal("Rename replaced what it must not")
				}
				if _, err := os.Stat(filepath.Join(tmp, "part-00000.csv")); err != nil {
					t.Errorf("the temporary is gone after a failed Rename: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Rename: %v", err)
			}
			if b, err := os.ReadFile(filepath.Join(dest, "part-00000.csv")); err != nil || string(b) != "new" {
				t.Errorf("dest's part holds %q, %v", b, err)
			}
			if st, err := os.Stat(dest); err != nil || st.Mode().Perm() != 0o755 {
				t.Errorf("dest's mode %v, %v; want 0755", st.Mode(), err)
			}
		})
	}
}
