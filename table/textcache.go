package table

import (
	"hash/maphash"
	"strings"
)

// textSlots is the number of entries of a textCache, a power of two.
const textSlots = 4096

// textCache remembers the text of the values of one column recently read, so that a
// value that repeats (a category, a date, a released label) is converted and allocated
// once instead of once per record. It is direct-mapped: a value's slot is fixed by
// the value, and a new value evicts the old one. A column whose values seldom repeat
// stops using it (see hit). It is used by one goroutine.
type textCache struct {
	seed maphash.Seed
	strs [textSlots]string // copies of string values, by a hash of their bytes
	nums [textSlots]int64  // numbers (integers, dates) whose text is in text
	set  [textSlots]bool   // whether nums[i] is set
	text [textSlots]string

	// Lookups and hits of the last window, and whether the cache is bypassed.
	looks, hits int
	off         bool
}

// textWindow is the number of lookups after which the cache judges its hit rate: a
// column with fewer than one hit in four is read without it from then on.
const textWindow = 1 << 14

func newTextCache() *textCache { return &textCache{seed: maphash.MakeSeed()} }

// hit counts a lookup and, at the end of a window, turns the cache off when values
// repeat too seldom to pay for the lookups.
func (c *textCache) hit(ok bool) {
	c.looks++
	if ok {
		c.hits++
	}
	if c.looks == textWindow {
		c.off = c.hits < textWindow/4
		c.looks, c.hits = 0, 0
	}
}

// str returns a copy of s (which may point into a buffer that will be reused) that
// the caller may keep.
func (c *textCache) str(s string) string {
	if c == nil || c.off {
		return strings.Clone(s)
	}
	i := maphash.String(c.seed, s) & (textSlots - 1)
	if c.strs[i] == s {
		c.hit(true)
		return c.strs[i]
	}
	c.hit(false)
	c.strs[i] = strings.Clone(s)
	return c.strs[i]
}

// bytes is str for a value given as bytes.
func (c *textCache) bytes(b []byte) string {
	if c == nil || c.off {
		return string(b)
	}
	i := maphash.Bytes(c.seed, b) & (textSlots - 1)
	if c.strs[i] == string(b) {
		c.hit(true)
		return c.strs[i]
	}
	c.hit(false)
	c.strs[i] = string(b)
	return c.strs[i]
}

// num returns format(v), from the cache when v was formatted recently.
func (c *textCache) num(v int64, format func(int64) string) string {
	if c == nil || c.off {
		return format(v)
	}
	i := uint64(v) & (textSlots - 1)
	if c.set[i] && c.nums[i] == v {
		c.hit(true)
		return c.text[i]
	}
	c.hit(false)
	c.nums[i], c.set[i], c.text[i] = v, true, format(v)
	return c.text[i]
}
