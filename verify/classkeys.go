package verify

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"math"
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
