package keyfile

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sanitizer/fault"
)

// secret is key content no error may quote.
var secret = []byte(strings.Repeat("CANARY-KEY-", 4))

// writeKey writes content at dir/name with mode perm (chmod, past the umask).
func writeKey(t *testing.T, dir, name string, content []byte, perm os.FileMode) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, content, perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		path func() string
		want string // part of the error; "" to accept
	}{
		{"32 bytes", func() string { return writeKey(t, dir, "ok", secret[:MinBytes], 0o600) }, ""},
		{"longer", func() string { return writeKey(t, dir, "long", secret, 0o400) }, ""},
		{"MaxBytes", func() string { return writeKey(t, dir, "max", bytes.Repeat(secret[:1], MaxBytes), 0o600) }, ""},
		{"missing", func() string { return filepath.Join(dir, "none") }, "does not exist"},
		{"group-readable", func() string { return writeKey(t, dir, "group", secret, 0o640) }, "mode 0640"},
		{"others-readable", func() string { return writeKey(t, dir, "others", secret, 0o604) }, "mode 0604"},
		{"short", func() string { return writeKey(t, dir, "short", secret[:MinBytes-1], 0o600) }, "holds 31 bytes"},
		{"empty", func() string { return writeKey(t, dir, "empty", nil, 0o600) }, "holds 0 bytes"},
		{"too long", func() string { return writeKey(t, dir, "huge", bytes.Repeat(secret[:1], MaxBytes+1), 0o600) }, "more than"},
		{"a folder", func() string {
			p := filepath.Join(dir, "folder")
			if err := os.Mkdir(p, 0o700); err != nil {
				t.Fatal(err)
			}
			return p
		}, "regular file"},
		{"a symlink to a fifo", func() string {
			fifo := filepath.Join(dir, "fifo")
			if err := exec.Command("mkfifo", "-m", "600", fifo).Run(); err != nil {
				t.Skipf("no named pipes here: %v", err)
			}
			link := filepath.Join(dir, "fifo-link")
			if err := os.Symlink(fifo, link); err != nil {
				t.Skipf("no symlinks here: %v", err)
			}
			return link
		}, "regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.path()
			key, err := Read(path, "series")
			if tt.want == "" {
				want, _ := os.ReadFile(path)
				if err != nil || !bytes.Equal(key, want) {
					t.Fatalf("Read = %d bytes, %v; want the file's %d bytes", len(key), err, len(want))
				}
				return
			}
			if err == nil {
				t.Fatalf("Read accepted the key file (%d bytes)", len(key))
			}
			if !errors.Is(err, fault.ErrBadInput) {
				t.Errorf("error %q does not match fault.ErrBadInput", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.want) || !strings.Contains(msg, path) {
				t.Errorf("error %q does not name %s and say %q", msg, path, tt.want)
			}
			if strings.Contains(msg, "CANARY") {
				t.Errorf("error %q quotes the key", msg)
			}
		})
	}
}

func TestCreate(t *testing.T) {
	dir := t.TempDir()
	key, err := New()
	if err != nil {
		t.Fatal(err)
	}
	other, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if len(key) != MinBytes || bytes.Equal(key, other) {
		t.Fatalf("New gave %d bytes, twice the same: %v", len(key), bytes.Equal(key, other))
	}
	path := filepath.Join(dir, "series.key")
	if err := Create(path, key); err != nil {
		t.Fatalf("Create: %v", err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 || !st.Mode().IsRegular() {
		t.Fatalf("created %v, %v; want a regular file of mode 0600", st.Mode(), err)
	}
	if got, err := Read(path, "series"); err != nil || !bytes.Equal(got, key) {
		t.Errorf("Read of a created key: %v, equal %v", err, bytes.Equal(got, key))
	}
	if err := Create(path, other); err == nil {
		t.Error("Create over an existing key file succeeded")
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, key) {
		t.Error("a refused Create changed the existing key file")
	}
	if err := Create(filepath.Join(dir, "none", "series.key"), key); err == nil {
		t.Error("Create in a missing folder succeeded")
	}
}
