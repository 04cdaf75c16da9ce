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

// The memos are open-addressing tables (linear probing) of 1<<memoMinBits to
// 1<<memoMaxBits slots, at most half of them used: a table doubles as it fills, and a
// full table of the largest size takes no more (what it does not hold is worked out
// every time).
const (
	memoMinBits = 6
	memoMaxBits = 14
)

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
// interned values), so a value is looked for where its bytes lie (its slot is a hash
// of its address and length) and found in the common case by comparing two addresses:
// the memo holds the strings it remembers, whose memory therefore is not reused while
// it does, and two strings at one address of one length are one value. A value met in
// another string is found by comparing the bytes, or not found. So that it does not
// keep the memory of many strings alive (a CSV reader's value that it did not intern
// shares its batch's memory), it lets go of every string each strMemoPeriod lookups:
// it only ever holds strings of the recent records.
type strMemo struct {
	slots []strEntry
	bits  uint
	n     int
	left  int // lookups until it lets go
}

type strEntry struct {
	s  string
	id int32 // the value's number + 1; 0: an empty slot
}

// strMemoPeriod is how many lookups a strMemo or a coverMemo holds its strings for.
const strMemoPeriod = 1 << 16

func newStrMemo() *strMemo {
	return &strMemo{slots: make([]strEntry, 1<<memoMinBits), bits: memoMinBits, left: strMemoPeriod}
}

// addrHash is a hash of where a string's bytes lie and of its length.
func addrHash(v string) uint64 {
	return (uint64(uintptr(unsafe.Pointer(unsafe.StringData(v)))) ^ uint64(len(v))<<48) * 0x9e3779b97f4a7c15
}

// sameString reports whether a and b are equal, comparing their addresses first.
func sameString(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}

// get returns the number remembered for v.
func (m *strMemo) get(v string) (int32, bool) {
	if m.left--; m.left < 0 {
		clear(m.slots)
		m.n, m.left = 0, strMemoPeriod
	}
	mask := uint(len(m.slots) - 1)
	for i := uint(addrHash(v) >> (64 - m.bits)); ; i = (i + 1) & mask {
		e := &m.slots[i]
		if e.id == 0 {
			return 0, false
		}
		if sameString(e.s, v) {
			return e.id - 1, true
		}
	}
}

// put remembers that v, which get did not find, is number id.
func (m *strMemo) put(v string, id int32) {
	switch grow, full := grows(m.n, m.bits); {
	case full:
		return
	case grow:
		old := m.slots
		m.bits++
		m.slots, m.n = make([]strEntry, 1<<m.bits), 0
		for _, e := range old {
			if e.id != 0 {
				m.put(e.s, e.id-1)
			}
		}
	}
	mask := uint(len(m.slots) - 1)
	i := uint(addrHash(v) >> (64 - m.bits))
	for m.slots[i].id != 0 {
		i = (i + 1) & mask
	}
	m.slots[i] = strEntry{s: v, id: id + 1}
	m.n++
}

// coverMemo remembers pairs of a released and an input value of a column that were
// found to match (the released value covers the input's), as a strMemo remembers
// values: found where their bytes lie, held for strMemoPeriod lookups at most; but
// found only in the strings it holds (compared by address: a pair of equal values in
// other strings is decided again, and remembered too). It remembers matches only: a
// pair it does not hold is decided again.
type coverMemo struct {
	slots []coverEntry
	bits  uint
	n     int
	left  int
	// The pairs found this period, and looked for. A memo that finds fewer than half
	// of those it looks for (a column of as many pairs as records: Mondrian's ranges
	// of dates, say) is put aside (off) for a period, and tried again after it.
	found, finds int
	off          bool
}

type coverEntry struct {
	r, o string
	ids  pairIDs
	used bool
}

// pairIDs is what a Counter makes of a pair of a released value and the input value
// it covers, of a quasi-identifier: the released value's number, and when utility is
// measured the input value's leaf and the levels at which it is the released value.
type pairIDs struct {
	rid, leaf int32
	mask      uint32
}

func newCoverMemo() *coverMemo {
	return &coverMemo{slots: make([]coverEntry, 1<<memoMinBits), bits: memoMinBits, left: strMemoPeriod}
}

func coverSlotOf(r, o string, bits uint) uint {
	x := addrHash(r) ^ uint64(uintptr(unsafe.Pointer(unsafe.StringData(o)))) ^ uint64(len(o))<<48
	return uint((x * 0xff51afd7ed558ccd) >> (64 - bits))
}

// find returns the memo's entry of the pair (r, o), nil if it holds none.
func (m *coverMemo) find(r, o string) *coverEntry {
	if m.left--; m.left < 0 {
		m.reset()
	}
	if m.off {
		return nil
	}
	m.finds++
	e := &m.slots[coverSlotOf(r, o, m.bits)]
	if e.used && sameAddr(e.r, r) && sameAddr(e.o, o) {
		m.found++
		return e
	}
	if !e.used {
		return nil
	}
	if e = m.probe(r, o); e != nil {
		m.found++
	}
	return e
}

// probe is find past the pair's first slot.
func (m *coverMemo) probe(r, o string) *coverEntry {
	mask := uint(len(m.slots) - 1)
	for i := (coverSlotOf(r, o, m.bits) + 1) & mask; ; i = (i + 1) & mask {
		e := &m.slots[i]
		if !e.used {
			return nil
		}
		if sameAddr(e.r, r) && sameAddr(e.o, o) {
			return e
		}
	}
}

// reset lets go of every pair, and starts a period.
func (m *coverMemo) reset() {
	clear(m.slots)
	m.off = !m.off && 2*m.found < m.finds
	m.n, m.left, m.found, m.finds = 0, strMemoPeriod, 0, 0
}

// sameAddr reports whether a and b are one string: the same bytes at the same
// address (which a string the memo holds keeps from being reused).
func sameAddr(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}

// put remembers that r matches o (a pair find did not find), and the pair's numbers.
func (m *coverMemo) put(r, o string, ids pairIDs) {
	if m.off {
		return
	}
	switch grow, full := grows(m.n, m.bits); {
	case full:
		return
	case grow:
		old := m.slots
		m.bits++
		m.slots, m.n = make([]coverEntry, 1<<m.bits), 0
		for _, e := range old {
			if e.used {
				m.put(e.r, e.o, e.ids)
			}
		}
	}
	mask := uint(len(m.slots) - 1)
	i := coverSlotOf(r, o, m.bits)
	for m.slots[i].used {
		i = (i + 1) & mask
	}
	m.slots[i] = coverEntry{r: r, o: o, ids: ids, used: true}
	m.n++
}

// pairMemo remembers a value per pair of numbers (a released value's and an input
// value's).
type pairMemo struct {
	slots []pairSlot
	bits  uint
	n     int
}

type pairSlot struct {
	a, b int32
	v    uint32
	used bool
}

func newPairMemo() *pairMemo {
	return &pairMemo{slots: make([]pairSlot, 1<<memoMinBits), bits: memoMinBits}
}

func pairSlotOf(a, b int32, bits uint) uint {
	x := (uint64(uint32(a))<<32 | uint64(uint32(b))) * 0x9e3779b97f4a7c15
	x ^= x >> 32
	return uint((x * 0xff51afd7ed558ccd) >> (64 - bits))
}

// get returns the value remembered for the pair (a, b).
func (m *pairMemo) get(a, b int32) (uint32, bool) {
	mask := uint(len(m.slots) - 1)
	for i := pairSlotOf(a, b, m.bits); ; i = (i + 1) & mask {
		e := &m.slots[i]
		if !e.used {
			return 0, false
		}
		if e.a == a && e.b == b {
			return e.v, true
		}
	}
}

// put remembers v for the pair (a, b), which get did not find.
func (m *pairMemo) put(a, b int32, v uint32) {
	switch grow, full := grows(m.n, m.bits); {
	case full:
		return
	case grow:
		old := m.slots
		m.bits++
		m.slots, m.n = make([]pairSlot, 1<<m.bits), 0
		for _, e := range old {
			if e.used {
				m.put(e.a, e.b, e.v)
			}
		}
	}
	mask := uint(len(m.slots) - 1)
	i := pairSlotOf(a, b, m.bits)
	for m.slots[i].used {
		i = (i + 1) & mask
	}
	m.slots[i] = pairSlot{a: a, b: b, v: v, used: true}
	m.n++
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
