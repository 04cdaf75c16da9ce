package series

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// uvarint is n as an unsigned LEB128 varint, written out here rather than by
// encoding/binary so that the digests below are computed independently.
func uvarint(n int) []byte {
	var b []byte
	for n >= 0x80 {
		b = append(b, byte(n)|0x80)
		n >>= 7
	}
	return append(b, byte(n))
}

// rowDigest is docs/series.md's row digest of cells.
func rowDigest(cells []string) []byte {
	h := sha256.New()
	h.Write([]byte("sanitize-series/1 row"))
	h.Write([]byte{0})
	for _, c := range cells {
		h.Write(uvarint(len(c)))
		h.Write([]byte(c))
	}
	return h.Sum(nil)[:16]
}

// keyed is the first n bytes of HMAC-SHA-256 under key of prefix, a zero byte and msg.
func keyed(key []byte, prefix string, msg []byte, n int) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(prefix))
	m.Write([]byte{0})
	m.Write(msg)
	return m.Sum(nil)[:n]
}

func TestRowDigest(t *testing.T) {
	long := strings.Repeat("x", 300) // a length of two varint bytes
	rows := [][]string{
		nil, {""}, {"", ""}, {"a", "bc"}, {"ab", "c"}, {"abc"}, {"a", "", "bc"},
		{strings.Repeat("y", 127)}, {strings.Repeat("y", 128)}, {long, "z"}, {"ünïcode", "\x00"},
	}
	var h RowHasher
	seen := map[string][]string{}
	for _, cells := range rows {
		want := rowDigest(cells)
		got := h.Digest([]byte("dst"), cells)
		if !bytes.Equal(got, append([]byte("dst"), want...)) {
			t.Errorf("Digest(%q) = %x, want dst and %x", cells, got, want)
		}
		d := string(got[3:])
		if other, ok := seen[d]; ok {
			t.Errorf("rows %q and %q have the same digest", other, cells)
		}
		seen[d] = cells
	}
	// The hasher's buffer is reused: a long row then a short one gives the short
	// one's digest, not one with the long row's tail.
	h.Digest(nil, []string{long, long})
	if got := h.Digest(nil, []string{"a"}); !bytes.Equal(got, rowDigest([]string{"a"})) {
		t.Errorf("after a longer row, Digest([a]) = %x, want %x", got, rowDigest([]string{"a"}))
	}
}

func TestPersonDigest(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	h := NewPersonHasher(key)
	ids := []string{"", "1", "12", "patient-0042", strings.Repeat("9", 200)}
	seen := map[string]string{}
	for _, id := range ids {
		want := keyed(key, "sanitize-series/1 person", []byte(id), 16)
		got := h.Digest(nil, id)
		if !bytes.Equal(got, want) {
			t.Errorf("Digest(%q) = %x, want %x", id, got, want)
		}
		if other, ok := seen[string(got)]; ok {
			t.Errorf("ids %q and %q have the same digest", other, id)
		}
		seen[string(got)] = id
	}
	// The hasher keeps its own copy of the key; another key gives other digests.
	key[0] = 8
	if got := h.Digest(nil, "1"); !bytes.Equal(got, keyed(bytes.Repeat([]byte{7}, 32), "sanitize-series/1 person", []byte("1"), 16)) {
		t.Error("changing the caller's key slice changed the hasher's digests")
	}
	if bytes.Equal(NewPersonHasher(key).Digest(nil, "1"), h.Digest(nil, "1")) {
		t.Error("two keys give the same person digest")
	}
	// A person digest is not the row digest of the id: the prefixes differ.
	if bytes.Equal(h.Digest(nil, "1"), keyed(bytes.Repeat([]byte{7}, 32), "sanitize-series/1 row", []byte("1"), 16)) {
		t.Error("the person digest does not depend on its prefix")
	}
}

func TestClassTag(t *testing.T) {
	key := bytes.Repeat([]byte{3}, 32)
	var seen = map[string][]string{}
	for _, labels := range [][]string{nil, {""}, {"a", "bc"}, {"ab", "c"}, {"20-29", "12***"}} {
		var msg []byte
		for _, l := range labels {
			msg = append(append(msg, uvarint(len(l))...), l...)
		}
		want := hex.EncodeToString(keyed(key, "sanitize-series/1 class", msg, 16))
		got := ClassTag(key, labels)
		if got != want {
			t.Errorf("ClassTag(%q) = %s, want %s", labels, got, want)
		}
		if other, ok := seen[got]; ok {
			t.Errorf("classes %q and %q have the same tag", other, labels)
		}
		seen[got] = labels
	}
}

// randomEntries is n entries of width bytes drawn from a few values, so that entries
// repeat.
func randomEntries(r *rand.Rand, n, width, values int) []byte {
	var e []byte
	for range n {
		v := byte(r.IntN(values))
		b := bytes.Repeat([]byte{v}, width)
		b[width-1] = byte(r.IntN(2)) // entries that differ only in their last byte
		e = append(e, b...)
	}
	return e
}

// split is e's entries as strings.
func split(e []byte, width int) []string {
	var out []string
	for i := 0; i < len(e); i += width {
		out = append(out, string(e[i:i+width]))
	}
	return out
}

// counts is the multiset of e's entries.
func counts(e []byte, width int) map[string]int {
	m := map[string]int{}
	for _, s := range split(e, width) {
		m[s]++
	}
	return m
}

// sorted is e with its entries sorted, by the test's own sort.
func sorted(e []byte, width int) []byte {
	s := split(e, width)
	slices.Sort(s)
	return []byte(strings.Join(s, ""))
}

func TestSortMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 1))
	for round := range 500 {
		width := DigestBytes
		if round%2 == 1 {
			width = 2 * DigestBytes
		}
		before := randomEntries(r, r.IntN(30), width, 1+r.IntN(6))
		now := randomEntries(r, r.IntN(30), width, 1+r.IntN(6))
		wantBefore, wantNow := sorted(before, width), sorted(now, width)
		SortEntries(before, width)
		SortEntries(now, width)
		if !bytes.Equal(before, wantBefore) || !bytes.Equal(now, wantNow) {
			t.Fatalf("round %d: SortEntries does not sort", round)
		}
		cb, cn := counts(before, width), counts(now, width)
		merged := Merge(before, now, width)
		wantMerged := map[string]int{}
		for e, n := range cb {
			wantMerged[e] += n
		}
		for e, n := range cn {
			wantMerged[e] += n
		}
		checkMultiset(t, round, "merged", merged, wantMerged, width)
	}
}

// checkMultiset fails the test unless e is sorted and holds exactly want's entries.
func checkMultiset(t *testing.T, round int, what string, e []byte, want map[string]int, width int) {
	t.Helper()
	if len(e)%width != 0 {
		t.Fatalf("round %d: %s: %d bytes, not whole entries", round, what, len(e))
	}
	if !bytes.Equal(e, sorted(e, width)) {
		t.Fatalf("round %d: %s not sorted", round, what)
	}
	got := counts(e, width)
	if len(got) != len(want) {
		t.Fatalf("round %d: %s holds %d distinct entries, want %d", round, what, len(got), len(want))
	}
	for k, n := range want {
		if got[k] != n {
			t.Fatalf("round %d: %s holds an entry %d times, want %d", round, what, got[k], n)
		}
	}
}

func TestPersons(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 2))
	const w = 2 * DigestBytes
	if got := Persons(nil); got != 0 {
		t.Errorf("Persons(nil) = %d", got)
	}
	for round := range 200 {
		var e []byte
		persons := map[string]bool{}
		for range r.IntN(40) {
			row := bytes.Repeat([]byte{byte(r.IntN(4))}, DigestBytes)
			person := bytes.Repeat([]byte{byte(r.IntN(8))}, DigestBytes)
			person[0] = byte(r.IntN(2))
			persons[string(person)] = true
			e = append(append(e, row...), person...)
		}
		SortEntries(e, w)
		if got := Persons(e); got != len(persons) {
			t.Fatalf("round %d: Persons = %d, want %d distinct person digests", round, got, len(persons))
		}
	}
	// Equal row halves with different persons are different persons; an equal person
	// half in different rows is one person.
	a := append(bytes.Repeat([]byte{1}, DigestBytes), bytes.Repeat([]byte{2}, DigestBytes)...)
	b := append(bytes.Repeat([]byte{1}, DigestBytes), bytes.Repeat([]byte{3}, DigestBytes)...)
	c := append(bytes.Repeat([]byte{9}, DigestBytes), bytes.Repeat([]byte{2}, DigestBytes)...)
	if got := Persons(slices.Concat(a, b, c)); got != 2 {
		t.Errorf("Persons of persons 2, 3, 2 = %d, want 2", got)
	}
}
