package verify

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/maphash"
	"math"
	"math/bits"
)

// classKeys numbers the classes' keys densely, in order of first appearance. The keys
// live one after the other in byte blocks and the table in integer slices, so the
// garbage collector has nothing to walk in it; a map with a string per class made every
// collection visit each of them (750,000 classes in a 10M-record Mondrian release).
//
// Each entry is the class number (4 bytes), the key's length (4 bytes) and the key, so
// that a lookup reads one slot and one entry. The blocks are filled, never moved: one
// slice grown by append held the old and the new copy at each growth and left the old
// ones as garbage (some 500 MB of it for the 100 MB of keys of that release).
type classKeys struct {
	seed   maphash.Seed
	blocks [][]byte // the entries, one after the other in blocks of at most keyBlock bytes (a longer entry has one of its own)
	starts []uint32 // per class: its entry's address
	slots  []uint64 // open addressing: the key hash's top 32 bits << 32 | entry address + 1; 0 empty
}

// entryHead is the length of an entry's class number and key length.
const entryHead = 8

// An entry's address is its block's number << keyBlockBits | where it starts in the
// block. The blocks grow from firstKeyBlock bytes to keyBlock.
const (
	keyBlockBits  = 20
	keyBlock      = 1 << keyBlockBits
	firstKeyBlock = 4 << 10
	maxKeyBlocks  = 1 << (32 - keyBlockBits)
)

func newClassKeys() *classKeys {
	return &classKeys{seed: maphash.MakeSeed(), slots: make([]uint64, 1024)}
}

// len is the number of classes.
func (t *classKeys) len() int { return len(t.starts) }

// entry is the class number and key of the entry at address at.
func (t *classKeys) entry(at uint32) (int32, []byte) {
	e := t.blocks[at>>keyBlockBits][at&(keyBlock-1):]
	n := binary.LittleEndian.Uint32(e[4:entryHead])
	return int32(binary.LittleEndian.Uint32(e)), e[entryHead : entryHead+n]
}

// add stores the entry of class c and key and returns its address; ok is false when the
// addresses are used up.
func (t *classKeys) add(c int32, key []byte) (at uint32, ok bool) {
	n := entryHead + len(key)
	last := len(t.blocks) - 1
	if last < 0 || n > cap(t.blocks[last])-len(t.blocks[last]) {
		if len(t.blocks) == maxKeyBlocks || n > math.MaxUint32-entryHead {
			return 0, false
		}
		size := firstKeyBlock
		if last >= 0 {
			size = min(2*cap(t.blocks[last]), keyBlock)
		}
		t.blocks = append(t.blocks, make([]byte, 0, max(size, n)))
		last++
	}
	b := t.blocks[last]
	at = uint32(last)<<keyBlockBits | uint32(len(b))
	b = binary.LittleEndian.AppendUint32(b, uint32(c))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(key)))
	t.blocks[last] = append(b, key...)
	return at, true
}

// key is class c's key.
func (t *classKeys) key(c int32) string {
	_, k := t.entry(t.starts[c])
	return string(k)
}

// class returns the class of key, numbering it when it is new (added reports so). It
// fails when the keys outgrow the table's 4 GB of addresses.
func (t *classKeys) class(key []byte) (c int32, added bool, ok bool) {
	h := maphash.Bytes(t.seed, key)
	tag := h >> 32 << 32
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			if len(t.starts) >= math.MaxInt32 {
				return 0, false, false
			}
			c = int32(len(t.starts))
			at, ok := t.add(c, key)
			if !ok {
				return 0, false, false
			}
			t.starts = append(t.starts, at)
			t.slots[i] = tag | uint64(at+1)
			if 2*len(t.starts) > len(t.slots) {
				t.grow()
			}
			return c, true, true
		}
		if s&^0xffffffff == tag {
			if c, k := t.entry(uint32(s) - 1); bytes.Equal(k, key) {
				return c, false, true
			}
		}
	}
}

// grow doubles the slots and places every class again.
func (t *classKeys) grow() {
	t.slots = make([]uint64, 2*len(t.slots))
	mask := uint64(len(t.slots) - 1)
	for _, at := range t.starts {
		_, k := t.entry(at)
		h := maphash.Bytes(t.seed, k)
		i := h & mask
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = h>>32<<32 | uint64(at+1)
	}
}

// classTable numbers the classes of a release, in order of first appearance, keyed by
// the numbers of their quasi-identifiers' values (Counter.rel), q per class. While
// the numbers fit, a key is packed into 64 bits (each column as wide as its largest
// number needs, widened as numbers grow) and looked up in one open-addressing table
// of keys and classes: one place in memory per record. When they no longer fit, the
// keys go to a classKeys, as bytes.
type classTable struct {
	q      int
	n      int     // classes
	ids    []int32 // per class, its key's numbers
	widths []uint  // packed: the bits of each column's numbers
	shifts []uint
	slots  []packedSlot // packed: open addressing, at most half used
	bits   uint         // len(slots) is 1<<bits
	wide   *classKeys   // not packed: the keys as bytes (4 per number)
	key    []byte
	// the keys and hashes of the records being looked up, and the sum of the memory
	// read ahead
	keys   []uint64
	hashes []uint64
	sink   uint64
}

type packedSlot struct {
	key   uint64
	class uint32 // the class + 1; 0: an empty slot
}

func newClassTable(q int) *classTable {
	t := &classTable{q: q, widths: make([]uint, q), shifts: make([]uint, q), bits: 10}
	t.slots = make([]packedSlot, 1<<t.bits)
	t.layout()
	return t
}

// len is the number of classes.
func (t *classTable) len() int { return t.n }

// idsOf is class c's key.
func (t *classTable) idsOf(c int32) []int32 { return t.ids[int(c)*t.q : (int(c)+1)*t.q] }

// layout places the columns' bits one after another; it reports whether they fit in
// 64.
func (t *classTable) layout() bool {
	var at uint
	for j, w := range t.widths {
		t.shifts[j] = at
		at += w
	}
	return at <= 64
}

// pack is the packed key of the numbers ids.
func (t *classTable) pack(ids []int32) uint64 {
	var k uint64
	for j, id := range ids {
		k |= uint64(id) << t.shifts[j]
	}
	return k
}

func packedHash(k uint64) uint64 {
	k ^= k >> 29
	return k * 0x9e3779b97f4a7c15
}

// classes sets out[i] to the class of record i, whose key is rids[i*q:(i+1)*q], for
// n records, numbering the new ones. It goes over the records in steps, each over all
// of them: their keys, then the table's slots they fall on, then their classes; so
// that the table's memory, which a large table keeps far from the processor, is read
// for many records at once rather than for one after another. It fails (naming the
// record i) when the classes outgrow what can be counted.
func (t *classTable) classes(rids []int32, n int, out []int32) (int, error) {
	q := t.q
	if t.wide == nil {
		t.widen(rids)
	}
	if t.wide != nil {
		return t.wideClasses(rids, n, out)
	}
	t.keys, t.hashes = t.keys[:0], t.hashes[:0]
	for i := range n {
		k := t.pack(rids[i*q : (i+1)*q])
		t.keys, t.hashes = append(t.keys, k), append(t.hashes, packedHash(k))
	}
	var sink uint64
	for _, h := range t.hashes {
		sink += t.slots[h>>(64-t.bits)].key
	}
	t.sink += sink // read, so that the reads are made
	for i, k := range t.keys {
		mask := uint64(len(t.slots) - 1)
		for s := t.hashes[i] >> (64 - t.bits); ; s = (s + 1) & mask {
			e := &t.slots[s]
			if e.class == 0 {
				if t.len() >= math.MaxInt32 {
					return i, errors.New("too many classes")
				}
				c := int32(t.n)
				t.ids = append(t.ids, rids[i*q:(i+1)*q]...)
				t.n++
				*e = packedSlot{key: k, class: uint32(c) + 1}
				if 2*t.len() > len(t.slots) {
					t.rehash(t.bits + 1)
				}
				out[i] = c
				break
			}
			if e.key == k {
				out[i] = int32(e.class - 1)
				break
			}
		}
	}
	return n, nil
}

// widen widens the columns whose numbers in rids outgrow their bits, and packs the
// classes again; when the bits no longer fit in 64, it moves the classes to a
// classKeys.
func (t *classTable) widen(rids []int32) {
	q := t.q
	grew := false
	for i := 0; i < len(rids); i += q {
		for j := range q {
			if need := uint(bits.Len32(uint32(rids[i+j]))); need > t.widths[j] {
				t.widths[j], grew = need, true
			}
		}
	}
	if !grew {
		return
	}
	if t.layout() {
		t.rehash(t.bits)
		return
	}
	t.wide, t.slots = newClassKeys(), nil
	for c := range int32(t.len()) {
		t.wide.class(t.wideKey(t.idsOf(c))) // in order: class c again
	}
}

// rehash places every class again in a table of 1<<b slots.
func (t *classTable) rehash(b uint) {
	t.bits = b
	t.slots = make([]packedSlot, 1<<b)
	mask := uint64(len(t.slots) - 1)
	for c := range int32(t.len()) {
		k := t.pack(t.idsOf(c))
		s := packedHash(k) >> (64 - b)
		for t.slots[s].class != 0 {
			s = (s + 1) & mask
		}
		t.slots[s] = packedSlot{key: k, class: uint32(c) + 1}
	}
}

// wideKey is the bytes of a key of numbers.
func (t *classTable) wideKey(ids []int32) []byte {
	t.key = t.key[:0]
	for _, id := range ids {
		t.key = binary.LittleEndian.AppendUint32(t.key, uint32(id))
	}
	return t.key
}

// wideClasses is classes with the keys as bytes.
func (t *classTable) wideClasses(rids []int32, n int, out []int32) (int, error) {
	q := t.q
	for i := range n {
		ids := rids[i*q : (i+1)*q]
		c, added, ok := t.wide.class(t.wideKey(ids))
		if !ok {
			return i, errors.New("too many classes")
		}
		if added {
			t.ids = append(t.ids, ids...)
			t.n++
		}
		out[i] = c
	}
	return n, nil
}
