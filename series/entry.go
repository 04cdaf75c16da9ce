package series

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"slices"
)

// DigestBytes is the length of a row, person or class digest.
const DigestBytes = 16

// The prefixes of the digests (docs/series.md, "Entries"), each followed by a zero
// byte: a digest of one kind never equals one of another.
const (
	rowPrefix    = "sanitize-series/1 row\x00"
	personPrefix = "sanitize-series/1 person\x00"
	classPrefix  = "sanitize-series/1 class\x00"
)

// RowHasher computes row digests: the first 16 bytes of SHA-256 over the prefix and
// the row's cells other than its quasi-identifiers, each as a uvarint length and its
// bytes. One RowHasher is for one goroutine.
type RowHasher struct {
	buf []byte
}

// Digest appends to dst the row digest of cells, the text of a row's columns that are
// not quasi-identifiers in the release's column order (a null is "").
func (h *RowHasher) Digest(dst []byte, cells []string) []byte {
	b := append(h.buf[:0], rowPrefix...)
	for _, c := range cells {
		b = binary.AppendUvarint(b, uint64(len(c)))
		b = append(b, c...)
	}
	h.buf = b
	sum := sha256.Sum256(b)
	return append(dst, sum[:DigestBytes]...)
}

// PersonHasher computes person digests under a series key: the first 16 bytes of
// HMAC-SHA-256 over the prefix and the id. One PersonHasher is for one goroutine.
type PersonHasher struct {
	mac hash.Hash
	buf []byte
}

// NewPersonHasher is a PersonHasher under key.
func NewPersonHasher(key []byte) *PersonHasher {
	return &PersonHasher{mac: hmac.New(sha256.New, slices.Clone(key))}
}

// Digest appends to dst the person digest of id.
func (h *PersonHasher) Digest(dst []byte, id string) []byte {
	h.mac.Reset()
	h.mac.Write([]byte(personPrefix))
	h.mac.Write([]byte(id))
	h.buf = h.mac.Sum(h.buf[:0])
	return append(dst, h.buf[:DigestBytes]...)
}

// ClassTag is the keyed tag of a class by its labels, hex: it names a class whose
// records wait without writing its labels into the state.
func ClassTag(key []byte, labels []string) string {
	b := []byte(classPrefix)
	for _, l := range labels {
		b = binary.AppendUvarint(b, uint64(len(l)))
		b = append(b, l...)
	}
	m := hmac.New(sha256.New, key)
	m.Write(b)
	return hex.EncodeToString(m.Sum(nil)[:DigestBytes])
}

// SortEntries sorts the entries of e (each width bytes) in ascending byte order, in
// place.
func SortEntries(e []byte, width int) {
	n := len(e) / width
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		return bytes.Compare(e[a*width:(a+1)*width], e[b*width:(b+1)*width])
	})
	out := make([]byte, 0, len(e))
	for _, i := range idx {
		out = append(out, e[i*width:(i+1)*width]...)
	}
	copy(e, out)
}

// Merge is the multiset union of sorted entries a and b (each width bytes), sorted.
func Merge(a, b []byte, width int) []byte {
	out := make([]byte, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if bytes.Compare(a[i:i+width], b[j:j+width]) <= 0 {
			out = append(out, a[i:i+width]...)
			i += width
		} else {
			out = append(out, b[j:j+width]...)
			j += width
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}

// Persons is the number of distinct person digests among entries (each a row digest
// and a person digest, 2·DigestBytes).
func Persons(entries []byte) int {
	const w = 2 * DigestBytes
	seen := make(map[[DigestBytes]byte]struct{}, len(entries)/w)
	for i := 0; i+w <= len(entries); i += w {
		seen[[DigestBytes]byte(entries[i+DigestBytes:i+w])] = struct{}{}
	}
	return len(seen)
}
