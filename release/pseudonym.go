package release

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"log/slog"
	"os"

	"sanitizer/fault"
	"sanitizer/internal/readfile"
	"sanitizer/schema"
	"sanitizer/verify"
)

// A released privacy unit (privacy.privacy-unit.pseudonym) is the keyed pseudonym of
// each record's id: HMAC-SHA-256 under the key, cut to its first 16 bytes, written in
// RFC 4648 base32 (the standard alphabet, no padding), 26 characters. The key is the
// key file's whole content, or 32 random bytes drawn for the run (two releases then do
// not link). The key is never written anywhere: not in the release, its metadata, the
// report, a log or an error.

const (
	// keyBytes is the least length of a pseudonym key, and the length of a random one.
	keyBytes = 32
	// maxKeyFile bounds a key file's size: its whole content is the key.
	maxKeyFile = 64 << 10
	// pseudonymBytes is how much of the MAC a pseudonym keeps.
	pseudonymBytes = 16
	// pseudonymLen is a pseudonym's length in characters.
	pseudonymLen = 26
	// keyFileKey is the configuration's key of the key file, which its errors name.
	keyFileKey = "privacy.privacy-unit.pseudonym.key-file"
)

// pseudonymText is a pseudonym's encoding.
var pseudonymText = base32.StdEncoding.WithPadding(base32.NoPadding)

// secret is a pseudonym key. It prints, logs and marshals as a placeholder, never as
// its bytes, so that no error, log record or report can carry it by mistake.
type secret []byte

const secretText = "(pseudonym key)"

// Format writes the placeholder whatever the verb.
func (secret) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, secretText) }

// LogValue is the placeholder.
func (secret) LogValue() slog.Value { return slog.StringValue(secretText) }

// MarshalText is the placeholder.
func (secret) MarshalText() ([]byte, error) { return []byte(secretText), nil }

// pseudonym is the pseudonym of id under key.
func pseudonym(key []byte, id string) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id))
	return pseudonymText.EncodeToString(mac.Sum(nil)[:pseudonymBytes])
}

// pseudonymizer gives pseudonyms under one key without allocating per id (the MAC's
// keyed state is kept and reset): for one goroutine at a time.
type pseudonymizer struct {
	mac hash.Hash
	in  []byte // the id's bytes
	sum []byte // its MAC
}

func newPseudonymizer(key []byte) *pseudonymizer {
	return &pseudonymizer{mac: hmac.New(sha256.New, key), sum: make([]byte, 0, sha256.Size)}
}

// append appends the pseudonym of id (pseudonym's) to dst.
func (z *pseudonymizer) append(dst []byte, id string) []byte {
	z.mac.Reset()
	z.in = append(z.in[:0], id...)
	z.mac.Write(z.in)
	z.sum = z.mac.Sum(z.sum[:0])
	return pseudonymText.AppendEncode(dst, z.sum[:pseudonymBytes])
}

// pseudonymKey is the key of cfg's pseudonym (nil without one): the key file's whole
// content, or 32 bytes from crypto/rand for this run when the configuration names no
// key file. A key file that cannot serve (missing, unreadable, not a regular file,
// readable by group or others, shorter than 32 bytes) is bad input at the key-file
// key, naming the path and what is wrong, never the content.
func pseudonymKey(cfg *schema.Config) (secret, error) {
	if !linkable(cfg) {
		return nil, nil
	}
	path := cfg.Privacy.Unit.Pseudonym.KeyFile
	if path == "" {
		key := make(secret, keyBytes)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("a random pseudonym key: %w", err)
		}
		return key, nil
	}
	key, err := readKeyFile(path)
	if err != nil {
		return nil, cfg.Wrap(keyFileKey, err)
	}
	return key, nil
}

// readKeyFile reads a pseudonym key file whole, checked as pseudonymKey says. The
// file opened is looked at again, so that a file swapped after the first look is
// refused, not read.
func readKeyFile(path string) (secret, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, keyFileError(path, err)
	}
	if err := keyFileMode(path, st); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, keyFileError(path, err)
	}
	defer f.Close()
	opened, err := f.Stat()
	if err != nil {
		return nil, keyFileError(path, err)
	}
	if !os.SameFile(st, opened) {
		return nil, fault.BadInput("%s: the key file changed while it was opened", path)
	}
	if err := keyFileMode(path, opened); err != nil {
		return nil, err
	}
	key, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, keyFileError(path, err)
	}
	if err := keySize(path, int64(len(key))); err != nil { // it changed while it was read
		clear(key)
		return nil, err
	}
	return key, nil
}

// keyFileMode refuses a key file st that is not a regular file, that group or others
// may read, or whose size is not a key's.
func keyFileMode(path string, st fs.FileInfo) error {
	if err := readfile.Regular(path, st.Mode()); err != nil {
		return fault.BadInput("%w: a pseudonym key file must be a regular file", err)
	}
	if perm := st.Mode().Perm(); perm&0o044 != 0 {
		return fault.BadInput("%s: mode %04o lets group or others read the pseudonym key: make it readable by its owner only (chmod 600)", path, perm)
	}
	return keySize(path, st.Size())
}

// keySize refuses a key of n bytes shorter than keyBytes or longer than maxKeyFile.
func keySize(path string, n int64) error {
	switch {
	case n < keyBytes:
		return fault.BadInput("%s: the key file holds %d bytes, a pseudonym key needs at least %d (its whole content is the key)", path, n, keyBytes)
	case n > maxKeyFile:
		return fault.BadInput("%s: the key file holds more than %d bytes, more than a pseudonym key file may (its whole content is the key)", path, maxKeyFile)
	}
	return nil
}

// keyFileError is bad input naming path and why it could not be read.
func keyFileError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the path is named once
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fault.BadInput("%s: the pseudonym key file does not exist", path)
	case errors.Is(err, fs.ErrPermission):
		return fault.BadInput("%s: the pseudonym key file cannot be read by this user", path)
	}
	return fault.BadInput("%s: the pseudonym key file cannot be read: %v", path, err)
}

// pseudonymCover is the truthfulness check's Cover of the released pseudonym column:
// with the key, a released value covers an id when it is the id's pseudonym; without it
// (sanitize check of a release made with a random key, which nothing kept), when it is
// a well-formed pseudonym. Like every Cover, it is not asked about a released value
// equal to the input's: the verifier takes equal strings as a match (verify.Truthful).
func pseudonymCover(key secret) verify.Cover {
	if key == nil {
		return func(released, _ string) (bool, error) { return wellFormed(released), nil }
	}
	z := newPseudonymizer(key)
	var buf []byte
	return func(released, original string) (bool, error) {
		buf = z.append(buf[:0], original)
		return string(buf) == released, nil
	}
}

// wellFormed reports whether s may be a pseudonym: 26 characters of base32's
// alphabet, the last one's unused bits zero (so that it decodes to 16 bytes).
func wellFormed(s string) bool {
	if len(s) != pseudonymLen {
		return false
	}
	var b [pseudonymBytes + 1]byte
	n, err := pseudonymText.Decode(b[:], []byte(s))
	return err == nil && n == pseudonymBytes && pseudonymText.EncodeToString(b[:n]) == s
}

// checkLinkable refuses, with a pseudonym (linkable records), what the search cannot
// release then, naming the key: the release must meet multirelational k-anonymity
// too, which the optimal search enforces by suppressing whole persons (generalize's
// Options.Linkable), with the metrics that never fall when a person's records leave a
// class, and without l-diversity, t-closeness or β-likeness.
func checkLinkable(cfg *schema.Config) error {
	if !linkable(cfg) {
		return nil
	}
	pr := cfg.Privacy
	const why = "with privacy.privacy-unit.pseudonym a person's records can be linked, so the release must meet multirelational k-anonymity (every group of persons with the same set of classes holds k persons)"
	for _, r := range []struct {
		model, column string
	}{{"l-diversity", firstColumn(pr.LDiversity, func(d schema.LDiversity) string { return d.Column })},
		{"t-closeness", firstColumn(pr.TCloseness, func(t schema.TCloseness) string { return t.Column })},
		{"beta-likeness", firstColumn(pr.BetaLikeness, func(b schema.BetaLikeness) string { return b.Column })}} {
		if r.column != "" {
			return cfg.Errorf(cfg.RequirementKey(r.model, r.column), "%s: %s on linked records is not in this version; drop the pseudonym or the requirement", why, r.model)
		}
	}
	if cfg.Search.Algorithm == schema.Mondrian {
		return cfg.Errorf("search.algorithm", "%s: mondrian on linked records is not in this version; use optimal", why)
	}
	switch cfg.Search.Metric {
	case "", schema.MetricLoss, schema.MetricNCP, schema.MetricHeight, schema.MetricPrecision, schema.MetricEntropyLoss:
		return nil
	}
	return cfg.Errorf("search.metric", "%s, which suppresses whole persons, and %q may fall when a person's records leave a class, so that the search could not bound it: use loss, ncp, height, precision or entropy-loss", why, cfg.Search.Metric)
}

// firstColumn is the column of the first of rs, "" when there is none.
func firstColumn[R any](rs []R, column func(R) string) string {
	if len(rs) == 0 {
		return ""
	}
	return column(rs[0])
}
