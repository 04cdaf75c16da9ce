package verify

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/maphash"
	"math"
	"math/bits"
	"slices"
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
	return t.hashedClass(key, t.hash(key))
}

// hash is key's hash, for hashedClass.
func (t *classKeys) hash(key []byte) uint64 { return maphash.Bytes(t.seed, key) }

// touch reads the slot where a key of hash h is looked for first and the entry it
// points to, for a lookup soon after to find them near the processor: reading those
// of many keys one after another, the processor reads their memory at once rather
// than in turn.
func (t *classKeys) touch(h uint64) uint64 {
	s := t.slots[h&uint64(len(t.slots)-1)]
	if s == 0 {
		return 0
	}
	at := uint32(s) - 1
	return uint64(t.blocks[at>>keyBlockBits][at&(keyBlock-1)])
}

// hashedClass is class for a key of hash h (hash's).
func (t *classKeys) hashedClass(key []byte, h uint64) (c int32, added bool, ok bool) {
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

// classTable numbers the classes of a release, in order of first appearance. A class
// is keyed by the numbers of its quasi-identifiers' values (Counter.rel), q per class,
// packed into 64 bits (each column as wide as its largest number needs, widened as
// numbers grow) and looked up in one open-addressing table of keys and classes: one
// place in memory per record. When the numbers no longer fit in 64 bits, or a column
// has more values than are numbered, the classes are keyed by their values instead
// (toValues): each value after its length (4 bytes), in a classKeys.
type classTable struct {
	q      int
	n      int     // classes
	ids    []int32 // by numbers: per class, its key's numbers
	widths []uint  // by numbers: the bits of each column's numbers
	shifts []uint
	slots  []packedSlot // by numbers: open addressing, at most half used
	bits   uint         // len(slots) is 1<<bits
	values *classKeys   // by values (nil: by numbers)
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
	layout(t.widths, t.shifts)
	return t
}

// len is the number of classes.
func (t *classTable) len() int { return t.n }

// idsOf is class c's key, while the classes are keyed by numbers.
func (t *classTable) idsOf(c int32) []int32 { return t.ids[int(c)*t.q : (int(c)+1)*t.q] }

// layout places bits of the given widths one after another (shifts); it reports
// whether they fit in 64.
func layout(widths, shifts []uint) bool {
	var at uint
	for j, w := range widths {
		shifts[j] = at
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

// byNumbers sets out[i] to the class of record i, whose key is rids[i*q:(i+1)*q]
// (numbers, none negative), for n records, numbering the new ones. It goes over the
// records in steps, each over all of them: their keys, then the table's slots they
// fall on, then their classes; so that the table's memory, which a large table keeps
// far from the processor, is read for many records at once rather than for one after
// another. It reports false, and does nothing, when the numbers do not fit in 64
// bits: the classes must be keyed by their values (toValues). It fails (naming the
// record i) when the classes outgrow what can be counted.
func (t *classTable) byNumbers(rids []int32, n int, out []int32) (i int, fits bool, err error) {
	q := t.q
	if !t.widen(rids) {
		return 0, false, nil
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
				if t.n >= math.MaxInt32 {
					return i, true, errors.New("too many classes")
				}
				c := int32(t.n)
				t.ids = append(t.ids, rids[i*q:(i+1)*q]...)
				t.n++
				*e = packedSlot{key: k, class: uint32(c) + 1}
				if 2*t.n > len(t.slots) {
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
	return n, true, nil
}

// widen widens the columns whose numbers in rids outgrow their bits, and packs the
// classes again; it reports false, and changes nothing, when the bits would not fit
// in 64.
func (t *classTable) widen(rids []int32) bool {
	q := t.q
	var widths []uint
	for i := 0; i < len(rids); i += q {
		for j := range q {
			if need := uint(bits.Len32(uint32(rids[i+j]))); need > t.widths[j] {
				if widths == nil {
					widths = slices.Clone(t.widths)
				}
				widths[j] = max(widths[j], need)
			}
		}
	}
	if widths == nil {
		return true
	}
	shifts := make([]uint, q)
	if !layout(widths, shifts) {
		return false
	}
	t.widths, t.shifts = widths, shifts
	t.rehash(t.bits)
	return true
}

// rehash places every class again in a table of 1<<b slots.
func (t *classTable) rehash(b uint) {
	t.bits = b
	t.slots = make([]packedSlot, 1<<b)
	mask := uint64(len(t.slots) - 1)
	for c := range int32(t.n) {
		k := t.pack(t.idsOf(c))
		s := packedHash(k) >> (64 - b)
		for t.slots[s].class != 0 {
			s = (s + 1) & mask
		}
		t.slots[s] = packedSlot{key: k, class: uint32(c) + 1}
	}
}

// toValues keys the classes by their values from now on: key(c) is the key of class
// c by its values (appendValueKey), for each class so far. It fails when the keys
// outgrow what a classKeys holds.
func (t *classTable) toValues(key func(c int32) []byte) error {
	values := newClassKeys()
	for c := range int32(t.n) {
		if _, _, ok := values.class(key(c)); !ok { // in order: class c again
			return errors.New("too many classes")
		}
	}
	t.values, t.ids, t.slots = values, nil, nil
	return nil
}

// appendValueKey appends the key of a class by its values: each value after its
// length (appendKey), so that no two different tuples share a key.
func appendValueKey(key []byte, vals ...string) []byte {
	for _, v := range vals {
		key = appendKey(key, v)
	}
	return key
}

// byValues sets out[i] to the class of the record whose key (by its values) is
// keys[ends[i-1]:ends[i]], numbering the new ones. It fails (naming the record i)
// when the classes outgrow what can be counted.
func (t *classTable) byValues(keys []byte, ends []int, out []int32) (int, error) {
	// in steps over all the records, as byNumbers
	t.hashes = t.hashes[:0]
	start := 0
	for _, end := range ends {
		t.hashes = append(t.hashes, t.values.hash(keys[start:end]))
		start = end
	}
	var sink uint64
	for _, h := range t.hashes {
		sink += t.values.touch(h)
	}
	t.sink += sink
	start = 0
	for i, end := range ends {
		c, added, ok := t.values.hashedClass(keys[start:end], t.hashes[i])
		if !ok {
			return i, errors.New("too many classes")
		}
		if added {
			t.n++
		}
		out[i] = c
		start = end
	}
	return len(ends), nil
}

// valuesOf sets fields to the values of class c, keyed by its values.
func (t *classTable) valuesOf(c int32, fields []string) bool {
	return splitKey(t.values.key(c), fields)
}

// splitKey splits a class key by values (each value after its length, 4 bytes
// little-endian) into fields.
func splitKey(key string, fields []string) bool {
	for j := range fields {
		if len(key) < 4 {
			return false
		}
		l := uint64(key[0]) | uint64(key[1])<<8 | uint64(key[2])<<16 | uint64(key[3])<<24
		if l > uint64(len(key)-4) {
			return false
		}
		fields[j] = key[4 : 4+l]
		key = key[4+l:]
	}
	return key == ""
}
