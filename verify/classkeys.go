package verify

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"math"
)

// classKeys numbers the classes' keys densely, in order of first appearance. The keys
// live one after the other in one byte slice and the table in integer slices, so the
// garbage collector has nothing to walk in it; a map with a string per class made every
// collection visit each of them (750,000 classes in a 10M-record Mondrian release).
//
// Each entry of keys is the class number (4 bytes), the key's length (4 bytes) and the
// key, so that a lookup reads one slot and one entry.
type classKeys struct {
	seed   maphash.Seed
	keys   []byte   // the entries, one after the other
	starts []uint32 // per class: where its entry starts in keys
	slots  []uint64 // open addressing: the key hash's top 32 bits << 32 | entry start + 1; 0 empty
}

// entryHead is the length of an entry's class number and key length.
const entryHead = 8

func newClassKeys() *classKeys {
	return &classKeys{seed: maphash.MakeSeed(), slots: make([]uint64, 1024)}
}

// len is the number of classes.
func (t *classKeys) len() int { return len(t.starts) }

// entry is the class number and key of the entry starting at at.
func (t *classKeys) entry(at uint32) (int32, []byte) {
	e := t.keys[at:]
	n := binary.LittleEndian.Uint32(e[4:entryHead])
	return int32(binary.LittleEndian.Uint32(e)), e[entryHead : entryHead+n]
}

// key is class c's key.
func (t *classKeys) key(c int32) string {
	_, k := t.entry(t.starts[c])
	return string(k)
}

// class returns the class of key, numbering it when it is new (added reports so). It
// fails when the keys outgrow the table's 4 GB.
func (t *classKeys) class(key []byte) (c int32, added bool, ok bool) {
	h := maphash.Bytes(t.seed, key)
	tag := h >> 32 << 32
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			at := len(t.keys)
			if at+entryHead+len(key) >= math.MaxUint32 || len(t.starts) >= math.MaxInt32 {
				return 0, false, false
			}
			c = int32(len(t.starts))
			t.keys = binary.LittleEndian.AppendUint32(t.keys, uint32(c))
			t.keys = binary.LittleEndian.AppendUint32(t.keys, uint32(len(key)))
			t.keys = append(t.keys, key...)
			t.starts = append(t.starts, uint32(at))
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
