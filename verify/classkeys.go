package verify

import (
	"bytes"
	"hash/maphash"
)

// classKeys numbers the classes' keys densely, in order of first appearance. The keys
// live one after the other in one byte slice and the table in integer slices, so the
// garbage collector has nothing to walk in it; a map with a string per class made every
// collection visit each of them (750,000 classes in a 10M-record Mondrian release).
type classKeys struct {
	seed  maphash.Seed
	keys  []byte   // every key, one after the other
	ends  []int    // per class: the end of its key in keys
	slots []uint64 // open addressing: the key hash's top 32 bits << 32 | class+1; 0 empty
}

func newClassKeys() *classKeys {
	return &classKeys{seed: maphash.MakeSeed(), slots: make([]uint64, 1024)}
}

// len is the number of classes.
func (t *classKeys) len() int { return len(t.ends) }

// bytesOf is class c's key, pointing into the table.
func (t *classKeys) bytesOf(c int32) []byte {
	start := 0
	if c > 0 {
		start = t.ends[c-1]
	}
	return t.keys[start:t.ends[c]]
}

// key is class c's key.
func (t *classKeys) key(c int32) string { return string(t.bytesOf(c)) }

// class returns the class of key, numbering it when it is new (added reports so).
func (t *classKeys) class(key []byte) (c int32, added bool) {
	h := maphash.Bytes(t.seed, key)
	tag := h >> 32 << 32
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			c = int32(len(t.ends))
			t.keys = append(t.keys, key...)
			t.ends = append(t.ends, len(t.keys))
			t.slots[i] = tag | uint64(c+1)
			if 2*len(t.ends) > len(t.slots) {
				t.grow()
			}
			return c, true
		}
		if s&^0xffffffff == tag && bytes.Equal(t.bytesOf(int32(s&0xffffffff)-1), key) {
			return int32(s&0xffffffff) - 1, false
		}
	}
}

// grow doubles the slots and places every class again.
func (t *classKeys) grow() {
	t.slots = make([]uint64, 2*len(t.slots))
	mask := uint64(len(t.slots) - 1)
	for c := range int32(len(t.ends)) {
		h := maphash.Bytes(t.seed, t.bytesOf(c))
		i := h & mask
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = h>>32<<32 | uint64(c+1)
	}
}
