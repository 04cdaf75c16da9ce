package series

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"sanitizer/fault"
	"sanitizer/internal/keyfile"
	"sanitizer/internal/readfile"
	"sanitizer/publish"
)

// maxState bounds a state file's size: about 22 bytes per published row (43 with
// persons), twice (the previous night's classes too).
const maxState = 8 << 30

// Handle is a series' state held by one run: locked from Open until Close.
type Handle struct {
	path    string
	keyPath string
	unlock  func()
	// State is the state as the last night left it; nil before the first night (or
	// with a restart). Raw is its file's bytes, for the verifier's own reader.
	State *State
	Raw   []byte
	// Key is the series key; NewKey says that it is drawn for this night's first
	// night and written at Commit.
	Key    []byte
	NewKey bool
}

// KeyPath is the series key's file: keyFile when configured, else the state's path
// with ".key" added.
func KeyPath(statePath, keyFile string) string {
	if keyFile != "" {
		return keyFile
	}
	return statePath + ".key"
}

// Open takes the lock of the series whose state is at path (path + ".lock"), reads the
// state and the key, and finishes the publication of a night that was committed but
// not put in place (Pending). restart starts a new series: the state, if any, is read
// only to be replaced. keyFile is series.key-file ("": beside the state). A state
// another run holds is an error matching publish.ErrLocked.
func Open(path, keyFile string, restart bool) (*Handle, error) {
	unlock, err := publish.Lock(path + ".lock")
	if err != nil {
		return nil, fmt.Errorf("series state %s: %w", path, err)
	}
	h := &Handle{path: path, keyPath: KeyPath(path, keyFile), unlock: unlock}
	if err := h.open(keyFile, restart); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

// open reads the state and the key of a locked series, recovering a night that was
// committed but not put in place.
func (h *Handle) open(keyFile string, restart bool) error {
	var err error
	if h.State, h.Raw, err = read(h.path); err != nil {
		return err
	}
	if h.State != nil && h.State.Pending != nil {
		if err := h.recover(); err != nil {
			return err
		}
	}
	if restart {
		h.State, h.Raw = nil, nil
	}
	return h.readKey(keyFile)
}

// Close lets the lock go.
func (h *Handle) Close() {
	if h.unlock != nil {
		h.unlock()
		h.unlock = nil
	}
}

// Path is the state file's path.
func (h *Handle) Path() string { return h.path }

// read reads the state at path, and its bytes; nil when there is none yet.
func read(path string) (*State, []byte, error) {
	data, err := readfile.Read(path, maxState)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fault.BadInput("series state: %w", err)
	}
	s, err := Parse(path, data)
	return s, data, err
}

// readKey reads the series key, or draws one for a new series whose key file does not
// exist yet. A series that has a state needs its key: a missing key file, or one that
// is not the key the state was made with, is bad input.
func (h *Handle) readKey(keyFile string) error {
	_, statErr := os.Lstat(h.keyPath)
	if h.State == nil && keyFile == "" && errors.Is(statErr, fs.ErrNotExist) {
		var err error
		h.Key, err = keyfile.New()
		h.NewKey = err == nil
		return err
	}
	key, err := keyfile.Read(h.keyPath, "series")
	if err != nil {
		return fault.BadInput("series.key-file: %w", err)
	}
	h.Key = key
	if h.State != nil && h.State.KeyCheck != KeyCheck(key) {
		return fault.BadInput("series.key-file: %s is not the key series %s was made with (its key check differs): the series cannot go on without its key; --series-restart starts a new one", h.keyPath, h.State.Series)
	}
	return nil
}

// KeyCheck is the state's check of its key: the first 8 bytes of HMAC-SHA-256 under
// the key of the prefix "sanitize-series/1 key", hex. It tells a wrong key from the
// right one and nothing else.
func KeyCheck(key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("sanitize-series/1 key"))
	return hex.EncodeToString(m.Sum(nil)[:8])
}

// recover finishes a night committed but not put in place: its temporary release is
// renamed to its output when its digest is the one the state recorded (or the output
// already is that release), and the state rewritten without Pending.
func (h *Handle) recover() error {
	p := h.State.Pending
	if d, err := publish.ReleaseDigest(p.Temp); err == nil && d == p.Digest {
		if err := publish.Rename(p.Temp, p.Output); err != nil {
			return fmt.Errorf("series state %s: night %d's release: putting %s in place: %w", h.path, h.State.Night, p.Output, err)
		}
	} else if d, err := publish.ReleaseDigest(p.Output); err != nil || d != p.Digest {
		return fmt.Errorf("series state %s: night %d was committed but its release is neither at %s nor at %s: the series cannot go on until the release recorded (digest %s) is put at %s", h.path, h.State.Night, p.Temp, p.Output, p.Digest, p.Output)
	}
	h.State.Pending = nil
	if err := h.write(h.State); err != nil {
		return err
	}
	var err error
	_, h.Raw, err = read(h.path) // the bytes the verifier reads
	return err
}

// write replaces the state file with s in one rename, synced.
func (h *Handle) write(s *State) error {
	err := publish.WriteFile(h.path, publish.Options{Force: true}, func(f *os.File) error { return s.Encode(f) })
	if err != nil {
		return fmt.Errorf("series state %s: %w", h.path, err)
	}
	h.Raw = nil // the state the run read is no longer the file's
	return nil
}

// Commit makes s, whose Pending names the night's verified temporary release, the
// series' state: the moment the night is committed (docs/series.md, step 6). A new key
// is written first, so that a committed state always has its key.
func (h *Handle) Commit(s *State) error {
	if s.Pending == nil {
		return fault.Internalf("series state %s: a night committed without its pending release", h.path)
	}
	if h.NewKey {
		if err := keyfile.Create(h.keyPath, h.Key); err != nil {
			return fmt.Errorf("series.key-file: %w", err)
		}
		h.NewKey = false
	}
	s.KeyCheck = KeyCheck(h.Key)
	if err := h.write(s); err != nil {
		return err
	}
	h.State = s
	return nil
}

// Published records that the committed night's release is in place: the state is
// rewritten without Pending (step 7).
func (h *Handle) Published() error {
	if h.State == nil || h.State.Pending == nil {
		return nil
	}
	h.State.Pending = nil
	return h.write(h.State)
}

// NewID draws a series id: 32 lowercase hex digits.
func NewID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
