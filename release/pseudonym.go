package release

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"hash"
	"io"
	"log/slog"

	"sanitizer/internal/keyfile"
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

// readKeyFile reads a pseudonym key file whole, checked as pseudonymKey says
// (keyfile.Read).
func readKeyFile(path string) (secret, error) {
	key, err := keyfile.Read(path, "pseudonym")
	return secret(key), err
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
