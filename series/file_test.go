package series

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"sanitizer/internal/testfiles"
	"slices"
	"strings"
	"testing"
	"time"

	"sanitizer/fault"
	"sanitizer/internal/keyfile"
	"sanitizer/publish"
)

// firstNight is a valid state of night 1 whose pending release is temp, to be put at
// output, with digest.
func firstNight(output, temp, digest string) *State {
	s := validState()
	s.Night, s.Previous, s.Waiting, s.History = 1, nil, []Wait{}, s.History[:1]
	firstCohort(s)
	s.Pending = &Pending{Output: output, Temp: temp, Digest: digest}
	return s
}

// write writes content at path.
func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// digestOf is the "sha256:" digest of content.
func digestOf(content string) string {
	sum := sha256.Sum256([]byte(content))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// open is Open(path, "", false) that must succeed, closed when the test ends.
func open(t *testing.T, path string) *Handle {
	t.Helper()
	h, err := Open(path, "", false)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(h.Close)
	return h
}

func TestKeyCheck(t *testing.T) {
	m := hmac.New(sha256.New, testKey)
	m.Write([]byte("sanitize-series/1 key"))
	if got, want := KeyCheck(testKey), hex.EncodeToString(m.Sum(nil)[:8]); got != want {
		t.Errorf("KeyCheck = %s, want %s", got, want)
	}
	if KeyCheck(testKey) == KeyCheck(bytes.Repeat([]byte{1}, 32)) {
		t.Error("two keys have the same key check")
	}
}

// TestFirstNight: Open of a new series draws a key and writes nothing; Commit writes
// the key (0600) and the state; the next Open reads both.
func TestFirstNight(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	h := open(t, path)
	if h.State != nil || !h.NewKey || len(h.Key) != keyfile.MinBytes {
		t.Fatalf("Open of a new series: State %v, NewKey %v, %d key bytes", h.State, h.NewKey, len(h.Key))
	}
	if got := testfiles.Names(t, dir); !slices.Equal(got, []string{"state.json.lock"}) {
		t.Fatalf("Open wrote %v before Commit", got)
	}
	if err := h.Commit(&State{}); !errors.Is(err, fault.ErrInternal) {
		t.Errorf("Commit of a state without its pending release: %v, want an internal error", err)
	}
	write(t, filepath.Join(dir, "n1.tmp"), "night 1")
	s := firstNight(filepath.Join(dir, "n1.csv"), filepath.Join(dir, "n1.tmp"), digestOf("night 1"))
	s.KeyCheck = ""
	if err := h.Commit(s); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	key := slices.Clone(h.Key)
	st, err := os.Stat(path + ".key")
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the key file: %v, %v; want mode 0600", st, err)
	}
	if b, _ := os.ReadFile(path + ".key"); !bytes.Equal(b, key) {
		t.Error("the key file does not hold the series key")
	}
	onDisk := readState(t, path)
	if onDisk.KeyCheck != KeyCheck(key) || onDisk.Pending == nil {
		t.Errorf("the committed state has key check %q, pending %v; want the key's check and the pending release", onDisk.KeyCheck, onDisk.Pending)
	}
	sameState(t, "the committed state", onDisk, h.State)
	if err := h.Published(); err != nil {
		t.Fatalf("Published: %v", err)
	}
	if readState(t, path).Pending != nil {
		t.Error("Published left the pending release in the state")
	}
	h.Close()

	again := open(t, path)
	if again.NewKey || !bytes.Equal(again.Key, key) || again.State == nil || again.State.Night != 1 || again.State.Pending != nil {
		t.Fatalf("Open of a committed series: NewKey %v, same key %v, state %+v", again.NewKey, bytes.Equal(again.Key, key), again.State)
	}
}

// readState parses the state file at path.
func readState(t *testing.T, path string) *State {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse(path, b)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// committed makes a series in dir of one night, published, under testKey; it returns
// the state's path.
func committed(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "state.json")
	if err := keyfile.Create(path+".key", testKey); err != nil {
		t.Fatal(err)
	}
	s := firstNight("n1.csv", "n1.tmp", sha("d"))
	s.Pending = nil
	write(t, path, string(marshal(t, s)))
	return path
}

func TestOpenKey(t *testing.T) {
	t.Run("another key", func(t *testing.T) {
		path := committed(t, t.TempDir())
		other := bytes.Repeat([]byte{0x11}, 32)
		if err := os.WriteFile(path+".key", other, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Open(path, "", false)
		if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), path+".key") {
			t.Fatalf("Open with another key file: %v, want bad input naming the key file", err)
		}
	})
	t.Run("key file missing", func(t *testing.T) {
		path := committed(t, t.TempDir())
		if err := os.Remove(path + ".key"); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(path, "", false); !errors.Is(err, fault.ErrBadInput) {
			t.Fatalf("Open of a series without its key: %v, want bad input", err)
		}
	})
	t.Run("configured key file", func(t *testing.T) {
		dir := t.TempDir()
		path := committed(t, dir)
		moved := filepath.Join(dir, "keys.bin")
		if err := os.Rename(path+".key", moved); err != nil {
			t.Fatal(err)
		}
		h, err := Open(path, moved, false)
		if err != nil || !bytes.Equal(h.Key, testKey) {
			t.Fatalf("Open with series.key-file: %v", err)
		}
		h.Close()
		if _, err := Open(filepath.Join(dir, "new.json"), filepath.Join(dir, "none.key"), false); !errors.Is(err, fault.ErrBadInput) {
			t.Errorf("a new series with a configured key file that does not exist: %v, want bad input", err)
		}
	})
	t.Run("restart", func(t *testing.T) {
		path := committed(t, t.TempDir())
		h, err := Open(path, "", true)
		if err != nil {
			t.Fatalf("Open with restart: %v", err)
		}
		defer h.Close()
		if h.State != nil || h.NewKey || !bytes.Equal(h.Key, testKey) {
			t.Errorf("restart: State %v, NewKey %v; want no state and the existing key", h.State, h.NewKey)
		}
	})
	t.Run("broken state", func(t *testing.T) {
		dir := t.TempDir()
		path := committed(t, dir)
		write(t, path, `{"format": "sanitize-series/1"}`)
		for range 2 { // the second Open is refused for the state, not for the lock
			if _, err := Open(path, "", false); !errors.Is(err, fault.ErrBadInput) {
				t.Fatalf("Open of a broken state: %v, want bad input", err)
			}
		}
	})
}

func TestOpenLocked(t *testing.T) {
	path := committed(t, t.TempDir())
	h := open(t, path)
	start := time.Now()
	if second, err := Open(path, "", false); !errors.Is(err, publish.ErrLocked) {
		if second != nil {
			second.Close()
		}
		t.Fatalf("a second Open while the first holds the lock: %v, want ErrLocked", err)
	} else if !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name the state", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the second Open waited %v", d)
	}
	h.Close()
	open(t, path) // the lock is free again
}

// TestRecover: a committed night whose release was not put in place is finished by the
// next Open, or refused when its release is nowhere.
func TestRecover(t *testing.T) {
	const release, old = "night 1's release", "night 0's release"
	tests := []struct {
		name         string
		temp, output string // contents; "" for no file
		ok           bool
	}{
		{"temporary in place", release, old, true},
		{"temporary, no output yet", release, "", true},
		{"already put in place", "", release, true},
		{"temporary differs, output right", "tampered", release, true},
		{"neither", "", old, false},
		{"temporary differs", "tampered", old, false},
		{"nothing", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := committed(t, dir)
			temp, output := filepath.Join(dir, ".n1.csv.tmp"), filepath.Join(dir, "n1.csv")
			for _, f := range []struct{ path, content string }{{temp, tt.temp}, {output, tt.output}} {
				if f.content != "" {
					write(t, f.path, f.content)
				}
			}
			s := firstNight(output, temp, digestOf(release))
			s.KeyCheck = KeyCheck(testKey)
			before := marshal(t, s)
			write(t, path, string(before))
			h, err := Open(path, "", false)
			if !tt.ok {
				if err == nil {
					h.Close()
					t.Fatal("Open recovered a night whose release is nowhere")
				}
				if errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), path) {
					t.Errorf("error %q: want an error (exit 1) naming the state", err)
				}
				if b, _ := os.ReadFile(path); !bytes.Equal(b, before) {
					t.Error("a failed recovery changed the state")
				}
				if b, _ := os.ReadFile(output); string(b) != tt.output {
					t.Errorf("a failed recovery changed the output to %q", b)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer h.Close()
			if b, err := os.ReadFile(output); err != nil || string(b) != release {
				t.Errorf("the output holds %q, %v; want the committed release", b, err)
			}
			if h.State.Pending != nil || readState(t, path).Pending != nil {
				t.Error("the state still has its pending release")
			}
			want := firstNight(output, temp, digestOf(release))
			want.Pending = nil
			sameState(t, "the recovered state", readState(t, path), want)
		})
	}
}
