package stage

import (
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"sanitizer/release"
	"sanitizer/schema"
)

// With privacy.privacy-unit.pseudonym the release writes every record's person id as
// its keyed pseudonym (release.Pseudonymizer: the CLI's HMAC-SHA-256, 16 bytes,
// base32), and the search, the recoding of every part and the check meet
// multirelational k-anonymity (generalize.Options.Linkable: whole persons suppressed),
// as the CLI's release does.
//
// The key never travels in the pipeline: a DoFn's fields are serialized into the
// pipeline's description, which runners log and show, so the workers are given the
// path of the key (Job.KeyFile) and read it themselves, with the CLI's rules (a
// regular file readable by its owner only, at least 32 bytes: bad input at the
// key-file key otherwise). With a key file that path is the configuration's, which
// the driver reads first, so that a key file that cannot serve is refused before
// anything runs; a worker on another machine (Dataflow) must find the key file at the
// same path. Without one, the run draws a key of its own (32 bytes from crypto/rand)
// and writes it, mode 0600, into its work folder, a local folder of mode 0700
// (newRunTemp) that the workers share; it is removed when the run ends, whatever ends
// it, with the run's temporary folders (and by the next run's sweep if the driver was
// killed outright). A work folder in a store (--temp_location gs://…) has no file
// modes and would hold the key in the bucket: a random key is refused there, naming
// the key, and a key file is asked for instead.

// randomKeyBytes is the length of a run's random key: the CLI's (release's keyBytes).
const randomKeyBytes = 32

// randomKeyName is the random key's file in the run's work folder.
const randomKeyName = "pseudonym.key"

// linkable reports whether cfg releases the privacy unit as a pseudonym, so that a
// person's records can be linked.
func linkable(cfg *schema.Config) bool {
	return cfg.Privacy.Unit != nil && cfg.Privacy.Unit.Pseudonym != nil
}

// runKey is the file of a run's pseudonym key, which the workers read (Job.KeyFile).
type runKey struct {
	path   string // "": no pseudonym
	random bool   // the run drew the key and wrote the file: removed when it ends
}

// newRunKey is the run's pseudonym key: none without a pseudonym; the
// configuration's key file, once read and checked here as the CLI checks it; else a
// random key written into the local folder work (refused, naming the key, when work
// is in a store).
func newRunKey(cfg *schema.Config, work string) (runKey, error) {
	if !linkable(cfg) {
		return runKey{}, nil
	}
	if kf := cfg.Privacy.Unit.Pseudonym.KeyFile; kf != "" {
		if _, err := (release.Engine{Config: cfg}).Pseudonymizer(kf); err != nil {
			return runKey{}, err
		}
		return runKey{path: kf}, nil
	}
	if isObject(work) {
		return runKey{}, cfg.Errorf("privacy.privacy-unit.pseudonym", "without a key-file the run draws a random key, which its workers would read from the work folder in %s: sanitize-beam never writes a pseudonym key into a store; name a key-file the workers can read at the same path, or use a local --temp_location", work)
	}
	path := filepath.Join(work, randomKeyName)
	if err := writeRandomKey(path); err != nil {
		return runKey{}, fmt.Errorf("the run's random pseudonym key: %w", err)
	}
	return runKey{path: path, random: true}, nil
}

// remove removes the file of a random key, and says on log (naming the path, never
// the key) when it cannot: the run's temporary folder, which holds it, is removed
// next.
func (k runKey) remove(log *slog.Logger) {
	if !k.random {
		return
	}
	if err := os.Remove(k.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		log.Warn("the run's random pseudonym key is left until its temporary folder is removed", "error", err.Error())
	}
}

// checked is the configuration the check of the written parts takes: cfg, with a
// random key's file as its key file, so that every pseudonym is checked against the
// key (the CLI's check reads a key file as the CLI's release does). cfg itself is not
// changed.
func (k runKey) checked(cfg *schema.Config) *schema.Config {
	if !k.random {
		return cfg
	}
	c := *cfg
	unit := *c.Privacy.Unit
	ps := *unit.Pseudonym
	ps.KeyFile = k.path
	unit.Pseudonym = &ps
	c.Privacy.Unit = &unit
	return &c
}

// writeRandomKey writes randomKeyBytes random bytes into a new file at path,
// readable and writable by its owner only; a file it could not write whole is
// removed.
func writeRandomKey(path string) error {
	key := make([]byte, randomKeyBytes)
	defer clear(key)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(key)
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		return errors.Join(err, os.Remove(path))
	}
	return nil
}
