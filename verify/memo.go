package verify

// The verifier works once per distinct value where it can: a column repeats a few
// values millions of times, so its memos remember, per column, the number of a value
// or what a pair of values was found to be. A memo only ever saves work: what it
// holds is what the work gave for exactly those values, and whatever it does not hold
// is worked out again.

import (
	"strings"
	"unsafe"
)

// memoTable remembers a value of type V per key of type K: an open-addressing table
// (linear probing) of 1<<memoMinBits to 1<<memoMaxBits slots, at most half of them
// used. A table doubles as it fills, and a full table of the largest size takes no
// more (what it does not hold is worked out every time). A table is ready once init
// has made its first slots.
//
// Two keys are one when they are ==. Each comes with its 64-bit hash, which its user
// computes (the table is generic, so calling a key's method from it would be an
// indirect call on the verifier's hot path): the hash's high bits pick the key's
// first slot, and the slot keeps them (its tag) to place the key again as the table
// grows and to pass over most other keys without comparing them.
type memoTable[K comparable, V any] struct {
	slots []memoSlot[K, V]
	bits  uint
	n     int
}

type memoSlot[K comparable, V any] struct {
	key K
	val V
	tag uint32 // memoTag of the key's hash; 0: an empty slot
}

const (
	memoMinBits = 6
	memoMaxBits = 14
)

// memoTag is the high 32 bits of a hash, the lowest of them set so that no tag is 0:
// a slot's tag; its high bits are the hash's, which pick the first slot.
func memoTag(h uint64) uint32 { return uint32(h>>32) | 1 }

// init makes the table's first slots, none of them used.
func (t *memoTable[K, V]) init() {
	t.slots, t.bits, t.n = make([]memoSlot[K, V], 1<<memoMinBits), memoMinBits, 0
}

// get returns the value remembered for k, whose hash is h.
func (t *memoTable[K, V]) get(k K, h uint64) (v V, ok bool) {
	tag, mask := memoTag(h), uint(len(t.slots)-1)
	for i := uint(tag >> (32 - t.bits)); t.slots[i].tag != 0; i = (i + 1) & mask {
		if s := &t.slots[i]; s.tag == tag && s.key == k {
			return s.val, true
		}
	}
	return v, false
}

// put remembers v for k, whose hash is h (a key get did not find).
func (t *memoTable[K, V]) put(k K, h uint64, v V) {
	t.place(memoSlot[K, V]{key: k, val: v, tag: memoTag(h)})
}

// place puts a slot's key and value in the table, unless it is full.
func (t *memoTable[K, V]) place(s memoSlot[K, V]) {
	switch grow, full := grows(t.n, t.bits); {
	case full:
		return
	case grow:
		t.grow()
	}
	mask := uint(len(t.slots) - 1)
	i := uint(s.tag >> (32 - t.bits))
	for t.slots[i].tag != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = s
	t.n++
}

// grow doubles the table.
func (t *memoTable[K, V]) grow() {
	old := t.slots
	t.bits++
	t.slots, t.n = make([]memoSlot[K, V], 1<<t.bits), 0
	for _, s := range old {
		if s.tag != 0 {
			t.place(s)
		}
	}
}

// reset lets go of every key and value.
func (t *memoTable[K, V]) reset() {
	clear(t.slots)
	t.n = 0
}

// grows reports whether a table of 1<<bits slots, n of them used, must grow to take
// one more; full that it cannot.
func grows(n int, bits uint) (grow, full bool) {
	if 2*(n+1) <= 1<<bits {
		return false, false
	}
	return bits < memoMaxBits, bits >= memoMaxBits
}

// strMemo remembers the numbers of the strings a column met. The verifier's decoders
// hand out each distinct value of a column as one string (a dictionary's entries,
// interned values), so a value is looked for where its bytes lie (addrKey) and found
// in the common case by comparing two addresses: the memo holds the strings it
// remembers, whose memory therefore is not reused while it does, and two strings at
// one address of one length are one value. A value met in another string is not found
// (and is numbered again by its bytes). So that it does not keep the memory of many
// strings alive (a CSV reader's value that it did not intern shares its batch's
// memory), it lets go of every string each strMemoPeriod lookups: it only ever holds
// strings of the recent records.
type strMemo struct {
	table memoTable[addrKey, int32]
	left  int // lookups until it lets go
}

// addrKey is a string as a memo's key: where its bytes lie and its length (the pointer
// keeps the bytes from being reused while the memo holds the key). Two keys are one
// when they are the same bytes in memory, so a lookup compares two words, never the
// bytes; every empty string is one key.
type addrKey struct {
	p *byte
	n int
}

func addrKeyOf(v string) addrKey {
	if len(v) == 0 {
		return addrKey{}
	}
	return addrKey{p: unsafe.StringData(v), n: len(v)}
}

// hash is a hash of the key's address and length.
func (k addrKey) hash() uint64 {
	return (uint64(uintptr(unsafe.Pointer(k.p))) ^ uint64(k.n)<<48) * 0x9e3779b97f4a7c15
}

// strMemoPeriod is how many lookups a strMemo or a coverMemo holds its strings for.
const strMemoPeriod = 1 << 16

func newStrMemo() *strMemo {
	m := &strMemo{left: strMemoPeriod}
	m.table.init()
	return m
}

// get returns the number remembered for v.
func (m *strMemo) get(v string) (int32, bool) {
	if m.left--; m.left < 0 {
		m.table.reset()
		m.left = strMemoPeriod
	}
	k := addrKeyOf(v)
	return m.table.get(k, k.hash())
}

// put remembers that v, which get did not find, is number id.
func (m *strMemo) put(v string, id int32) {
	k := addrKeyOf(v)
	m.table.put(k, k.hash(), id)
}

// coverMemo remembers pairs of a released and an input value of a column that were
// found to match (the released value covers the input's), as a strMemo remembers
// values: found where their bytes lie, held for strMemoPeriod lookups at most; but
// found only in the strings it holds (compared by address: a pair of equal values in
// other strings is decided again, and remembered too). It remembers matches only: a
// pair it does not hold is decided again.
type coverMemo struct {
	table memoTable[stringPair, pairIDs]
	left  int
	// The pairs found this period, and looked for. A memo that finds fewer than half
	// of those it looks for (a column of as many pairs as records: Mondrian's ranges
	// of dates, say) is put aside (off) for a period, and tried again after it.
	found, finds int
	off          bool
}

// stringPair is a pair of strings as a memo's key: one when both are the same strings
// (addrKey), not merely equal ones.
type stringPair struct{ r, o addrKey }

func pairOf(r, o string) stringPair { return stringPair{addrKeyOf(r), addrKeyOf(o)} }

// hash is a hash of where the pair's bytes lie and of their lengths.
func (p stringPair) hash() uint64 {
	x := p.r.hash() ^ uint64(uintptr(unsafe.Pointer(p.o.p))) ^ uint64(p.o.n)<<48
	return x * 0xff51afd7ed558ccd
}

// pairIDs is what a Counter makes of a pair of a released value and the input value
// it covers, of a quasi-identifier: the released value's number, and when utility is
// measured the input value's leaf and the levels at which it is the released value.
type pairIDs struct {
	rid, leaf int32
	mask      uint32
}

func newCoverMemo() *coverMemo {
	m := &coverMemo{left: strMemoPeriod}
	m.table.init()
	return m
}

// find returns what the memo remembers of the pair (r, o); ok false if it holds none.
func (m *coverMemo) find(r, o string) (ids pairIDs, ok bool) {
	if m.left--; m.left < 0 {
		m.table.reset()
		m.off = !m.off && 2*m.found < m.finds
		m.left, m.found, m.finds = strMemoPeriod, 0, 0
	}
	if m.off {
		return pairIDs{}, false
	}
	m.finds++
	p := pairOf(r, o)
	if ids, ok = m.table.get(p, p.hash()); ok {
		m.found++
	}
	return ids, ok
}

// put remembers that r matches o (a pair find did not find), and the pair's numbers.
func (m *coverMemo) put(r, o string, ids pairIDs) {
	if !m.off {
		p := pairOf(r, o)
		m.table.put(p, p.hash(), ids)
	}
}

// pairMemo remembers a value per pair of numbers (a released value's and an input
// value's).
type pairMemo struct {
	table memoTable[[2]int32, uint32]
}

func newPairMemo() *pairMemo {
	m := &pairMemo{}
	m.table.init()
	return m
}

// pairHash is a hash of a pair of numbers.
func pairHash(a, b int32) uint64 {
	x := (uint64(uint32(a))<<32 | uint64(uint32(b))) * 0x9e3779b97f4a7c15
	x ^= x >> 32
	return x * 0xff51afd7ed558ccd
}

// get returns the value remembered for the pair (a, b).
func (m *pairMemo) get(a, b int32) (uint32, bool) {
	return m.table.get([2]int32{a, b}, pairHash(a, b))
}

// put remembers v for the pair (a, b), which get did not find.
func (m *pairMemo) put(a, b int32, v uint32) {
	m.table.put([2]int32{a, b}, pairHash(a, b), v)
}

// valueNumbers numbers the distinct values of a column in the order they are met,
// keeping a copy of each, up to numberedMax of them: a value met after those has no
// number (-1).
type valueNumbers struct {
	ids  map[string]int32
	vals []string // by number
	memo *strMemo
}

func newValueNumbers() *valueNumbers {
	return &valueNumbers{ids: map[string]int32{}, memo: newStrMemo()}
}

// numberedMax is how many values of a column are numbered: as many as a memo holds.
// A column of more (Mondrian's ranges, say) would be looked up in a large map for
// almost every record; its classes are keyed by their values instead.
const numberedMax = 1 << (memoMaxBits - 1)

// id returns v's number, numbering it when it is new; -1 when v is new and the
// column has numberedMax values.
func (t *valueNumbers) id(v string) int32 {
	if id, ok := t.memo.get(v); ok {
		return id
	}
	id, ok := t.ids[v]
	if !ok {
		if len(t.vals) >= numberedMax {
			return -1
		}
		id = int32(len(t.vals))
		c := strings.Clone(v) // not the record's: its memory may be a whole batch's
		t.ids[c] = id
		t.vals = append(t.vals, c)
	}
	t.memo.put(v, id)
	return id
}
