package verify

// The released pseudonym (Spec.Pseudonym): a release whose records may be linked holds
// the privacy unit's column under its own name, each value the keyed pseudonym of the
// record's id: RFC 4648 base32 (standard alphabet, no padding) of the first 16 bytes
// of HMAC-SHA-256(key, id), 26 characters. The verifier computes it itself (no code
// shared with the writer).
//
// With the key, every released record's pseudonym must be its input record's: the
// truthfulness walk pairs a release record only with an input record whose id has its
// pseudonym (so that records alike in every other column are given to the right
// person), and AddMatched checks it on the records it is given.
//
// Without the key (a check of a release whose key is not at hand), the pseudonyms
// must stand for the persons one to one among the released records: one pseudonym per
// person and one person per pseudonym, each well formed and none the id itself. The
// walk then pairs records without the pseudonym: where the input holds records of
// different persons alike in every released column but the pseudonym and the release
// leaves one of them out, the earliest is paired, which may be the wrong person's, and
// a right release fails (never the other way round). Persons and pseudonyms are kept
// as 64-bit hashes (hash/maphash, a seed per count): a collision of two pseudonyms or
// of two persons makes the pairs look less one to one than they are (a right release
// fails), and only a collision of the two persons who share a pseudonym, or of the two
// pseudonyms of one person, hides a release that is wrong: at most one chance in 2⁶⁴
// per such pair.

import (
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"hash"
	"hash/maphash"
	"io"
	"log/slog"
	"slices"
)

// PseudonymCheck is what a release's pseudonym column must hold (Spec.Pseudonym).
type PseudonymCheck struct {
	// Column is the release's pseudonym column: the privacy unit's (Spec.Unit), which
	// the release holds under its own name. It is neither a quasi-identifier, nor a
	// sensitive column, nor measured as a column released as it is (Spec.Released).
	Column string
	// Key is the pseudonym's key; nil when it is not known (every pseudonym is then
	// checked to stand for one person, one to one).
	Key SecretKey
}

// SecretKey is a pseudonym key: it prints, logs and marshals as a placeholder, never
// as its bytes, so that a Spec printed by mistake does not carry it.
type SecretKey []byte

const secretKeyText = "(pseudonym key)"

// Format writes the placeholder whatever the verb.
func (SecretKey) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, secretKeyText) }

// LogValue is the placeholder.
func (SecretKey) LogValue() slog.Value { return slog.StringValue(secretKeyText) }

// MarshalText is the placeholder.
func (SecretKey) MarshalText() ([]byte, error) { return []byte(secretKeyText), nil }

const (
	// pseudonymBytes is how much of the MAC a pseudonym keeps.
	pseudonymBytes = 16
	// pseudonymChars is a pseudonym's length.
	pseudonymChars = 26
)

// pseudonymEncoding writes a pseudonym's bytes.
var pseudonymEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// macer computes keyed pseudonyms under one key, for one goroutine at a time.
type macer struct {
	mac hash.Hash
	sum []byte
	out []byte
	in  []byte
}

func newMacer(key []byte) *macer {
	return &macer{mac: hmac.New(sha256.New, key), sum: make([]byte, 0, sha256.Size)}
}

// is reports whether p is the pseudonym of id.
func (m *macer) is(p, id string) bool {
	if len(p) != pseudonymChars {
		return false
	}
	m.mac.Reset()
	m.in = append(m.in[:0], id...)
	m.mac.Write(m.in)
	m.sum = m.mac.Sum(m.sum[:0])
	m.out = pseudonymEncoding.AppendEncode(m.out[:0], m.sum[:pseudonymBytes])
	return string(m.out) == p
}

// wellFormedPseudonym reports whether p may be a pseudonym: 26 characters of the
// alphabet, the unused bits of the last zero (the encoding of 16 bytes).
func wellFormedPseudonym(p string) bool {
	if len(p) != pseudonymChars {
		return false
	}
	var b [pseudonymBytes + 1]byte
	n, err := pseudonymEncoding.Decode(b[:], []byte(p))
	if err != nil || n != pseudonymBytes {
		return false
	}
	var again [pseudonymChars]byte
	pseudonymEncoding.Encode(again[:], b[:n])
	return string(again[:]) == p
}

// checkPseudonymSpec reports a spec whose pseudonym cannot be checked as this file
// says.
func checkPseudonymSpec(spec Spec, header []string) error {
	ps := spec.Pseudonym
	if ps == nil {
		return nil
	}
	switch {
	case spec.Unit == "":
		return fmt.Errorf("pseudonym column %q without a privacy unit", ps.Column)
	case ps.Column != spec.Unit:
		return fmt.Errorf("pseudonym column %q: the release holds the privacy unit %q under its own name", ps.Column, spec.Unit)
	case !spec.Linkable:
		return fmt.Errorf("pseudonym column %q: a released pseudonym lets a person's records be linked, so the spec must check multirelational k-anonymity (Linkable)", ps.Column)
	case !slices.Contains(header, ps.Column):
		return &Violation{Msg: fmt.Sprintf("pseudonym column %q missing from the release", ps.Column)}
	case slices.Contains(spec.Quasi, ps.Column) || slices.Contains(spec.Released, ps.Column) ||
		slices.ContainsFunc(spec.Sensitive, func(s Sensitive) bool { return s.Column == ps.Column }):
		return fmt.Errorf("pseudonym column %q is named a quasi-identifier, a sensitive column or a column released as it is", ps.Column)
	case ps.Key != nil && len(ps.Key) == 0:
		return fmt.Errorf("pseudonym column %q: an empty key", ps.Column)
	}
	return nil
}

// pseudonymCounter checks a release's pseudonyms (Spec.Pseudonym): the Counter's
// staging side owns it.
type pseudonymCounter struct {
	column string
	at     int    // the pseudonym's field in a release record
	mac    *macer // nil: no key
	seed   maphash.Seed
	pairs  []pseudonymPair // without the key: per release record, its pseudonym and person
}

// pseudonymPair is a release record's pseudonym and person (hashes) and number (1 the
// first).
type pseudonymPair struct {
	p, h uint64
	rec  int64
}

func newPseudonymCounter(ps *PseudonymCheck, header []string, seed maphash.Seed) *pseudonymCounter {
	pc := &pseudonymCounter{column: ps.Column, at: slices.Index(header, ps.Column), seed: seed}
	if ps.Key != nil {
		pc.mac = newMacer(ps.Key)
	}
	return pc
}

// stage checks release record n's pseudonym p against id, its input record's id, whose
// person's hash is h: with the key, that p is id's pseudonym (unless paired says
// the walk paired them by it already); without, that it is well formed and not the
// id, its pair kept for finish.
func (pc *pseudonymCounter) stage(n int, p, id string, h uint64, paired bool) error {
	if pc.mac != nil {
		if !paired && !pc.mac.is(p, id) {
			return &Violation{Msg: fmt.Sprintf("release record %d: its pseudonym (column %q) is not the keyed pseudonym of the person of the input record it generalizes", n, pc.column)}
		}
		return nil
	}
	switch {
	case p == id:
		return &Violation{Msg: fmt.Sprintf("release record %d: column %q holds the person's id, not a pseudonym", n, pc.column)}
	case !wellFormedPseudonym(p):
		return &Violation{Msg: fmt.Sprintf("release record %d: column %q holds no pseudonym (%d characters of base32 encoding 16 bytes)", n, pc.column, pseudonymChars)}
	}
	pc.pairs = append(pc.pairs, pseudonymPair{p: maphash.String(pc.seed, p), h: h, rec: int64(n)})
	return nil
}

// unstage takes back the pair of the last record staged, which failed to be.
func (pc *pseudonymCounter) unstage(n int) {
	if k := len(pc.pairs); k > 0 && pc.pairs[k-1].rec == int64(n) {
		pc.pairs = pc.pairs[:k-1]
	}
}

// finish checks, without the key, that the pseudonyms and the persons of the
// released records are one to one: a pseudonym of two persons or a person of two
// pseudonyms is a *Violation naming the first records of both, never a pseudonym or
// an id.
func (pc *pseudonymCounter) finish() error {
	if pc.mac != nil {
		return nil
	}
	ps := pc.pairs
	pc.pairs = nil
	slices.SortFunc(ps, func(a, b pseudonymPair) int {
		return cmp.Or(cmp.Compare(a.p, b.p), cmp.Compare(a.h, b.h), cmp.Compare(a.rec, b.rec))
	})
	if a, b, ok := firstOfTwo(ps, func(x pseudonymPair) uint64 { return x.p }, func(x pseudonymPair) uint64 { return x.h }); ok {
		return &Violation{Msg: fmt.Sprintf("release records %d and %d hold one pseudonym (column %q) for two persons", min(a, b), max(a, b), pc.column)}
	}
	slices.SortFunc(ps, func(a, b pseudonymPair) int {
		return cmp.Or(cmp.Compare(a.h, b.h), cmp.Compare(a.p, b.p), cmp.Compare(a.rec, b.rec))
	})
	if a, b, ok := firstOfTwo(ps, func(x pseudonymPair) uint64 { return x.h }, func(x pseudonymPair) uint64 { return x.p }); ok {
		return &Violation{Msg: fmt.Sprintf("release records %d and %d hold two pseudonyms (column %q) of one person", min(a, b), max(a, b), pc.column)}
	}
	return nil
}

// firstOfTwo finds, in ps sorted by key, other and record, a key that comes with two
// others: the first records of the first two.
func firstOfTwo(ps []pseudonymPair, key, other func(pseudonymPair) uint64) (a, b int64, ok bool) {
	for i := 1; i < len(ps); i++ {
		if key(ps[i]) != key(ps[i-1]) || other(ps[i]) == other(ps[i-1]) {
			continue
		}
		j := i - 1 // the first record of the key's first other
		for j > 0 && key(ps[j-1]) == key(ps[i]) && other(ps[j-1]) == other(ps[i-1]) {
			j--
		}
		return ps[j].rec, ps[i].rec, true
	}
	return 0, 0, false
}
