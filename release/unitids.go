package release

import (
	"fmt"
	"hash/maphash"
	"math"
)

// idTable numbers the distinct ids of the privacy unit's column, exactly (ids are
// compared byte for byte), in about 26 bytes per person beside the ids' bytes: the
// ids one after another in one arena, where each ends, 32 bits of each one's hash,
// and an open-addressing table of their numbers. The dictionary of the other columns
// holds a map entry, a string, a copy of it in a slice and its first record per
// value, over 100 bytes: for 2.9 million patients, some 300 MB more at the peak of
// the read.
type idTable struct {
	text  []byte
	end   []uint32 // id c is text[end[c-1]:end[c]] (from 0 for c = 0)
	tag   []uint32 // the top 32 bits of id c's hash, which place it in slots
	slots []int32  // an id's number + 1 (0: empty); at most half full
	seed  maphash.Seed
}

func newIDTable() *idTable {
	return &idTable{slots: make([]int32, 1024), seed: maphash.MakeSeed()}
}

// len is the number of ids numbered.
func (t *idTable) len() int { return len(t.end) }

// id returns the text of id c.
func (t *idTable) id(c int32) []byte {
	start := uint32(0)
	if c > 0 {
		start = t.end[c-1]
	}
	return t.text[start:t.end[c]]
}

// find returns the number of id v and whether it has one, and, when it has none, the
// slot its number would take.
func (t *idTable) find(v string) (c int32, ok bool, slot int) {
	tag := uint32(maphash.String(t.seed, v) >> 32)
	mask := len(t.slots) - 1
	for i := int(tag) & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			return 0, false, i
		}
		if t.tag[s-1] == tag && string(t.id(s-1)) == v {
			return s - 1, true, i
		}
	}
}

// number returns the number of id v, numbering it next when it is new (added).
func (t *idTable) number(v string) (c int32, added bool, err error) {
	c, ok, slot := t.find(v)
	if ok {
		return c, false, nil
	}
	if uint64(len(t.text))+uint64(len(v)) > math.MaxUint32 || len(t.end) >= math.MaxInt32-1 {
		return 0, false, fmt.Errorf("the privacy unit's ids take more than 4 GiB, or are more than %d", math.MaxInt32-1)
	}
	c = int32(len(t.end))
	t.text = append(t.text, v...)
	t.end = append(t.end, uint32(len(t.text)))
	t.tag = append(t.tag, uint32(maphash.String(t.seed, v)>>32))
	t.slots[slot] = c + 1
	if 2*len(t.end) > len(t.slots) {
		t.grow()
	}
	return c, true, nil
}

// grow doubles the slots, placing every number again by its tag.
func (t *idTable) grow() {
	t.slots = make([]int32, 2*len(t.slots))
	mask := len(t.slots) - 1
	for c, tag := range t.tag {
		i := int(tag) & mask
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = int32(c + 1)
	}
}
