package generalize

import (
	"encoding/binary"
	"math"
)

// Codes is a column of leaf codes, one per record, held in the narrowest of 8, 16 or
// 32 bits that holds every leaf of the column's hierarchy: the encoded table, which
// the whole search keeps in memory, costs one or two bytes per record and column for
// the usual hierarchies instead of four.
type Codes struct {
	u8  []uint8
	u16 []uint16
	i32 []int32
}

// NewCodes returns n zero codes wide enough for codes below leaves.
func NewCodes(n, leaves int) Codes {
	switch {
	case leaves <= math.MaxUint8+1:
		return Codes{u8: make([]uint8, n)}
	case leaves <= math.MaxUint16+1:
		return Codes{u16: make([]uint16, n)}
	}
	return Codes{i32: make([]int32, n)}
}

// Len is the number of codes.
func (c Codes) Len() int {
	switch {
	case c.u8 != nil:
		return len(c.u8)
	case c.u16 != nil:
		return len(c.u16)
	}
	return len(c.i32)
}

// At returns code i.
func (c Codes) At(i int) int32 {
	switch {
	case c.u8 != nil:
		return int32(c.u8[i])
	case c.u16 != nil:
		return int32(c.u16[i])
	}
	return c.i32[i]
}

// Set sets code i to v, which must fit the width NewCodes chose.
func (c Codes) Set(i int, v int32) {
	switch {
	case c.u8 != nil:
		c.u8[i] = uint8(v)
	case c.u16 != nil:
		c.u16[i] = uint16(v)
	default:
		c.i32[i] = v
	}
}

// Bytes is the memory the codes take.
func (c Codes) Bytes() int { return len(c.u8) + 2*len(c.u16) + 4*len(c.i32) }

// minMax returns the smallest and the largest code (0 and −1 when empty).
func (c Codes) minMax() (lo, hi int32) {
	switch {
	case c.u8 != nil:
		return minMaxOf(c.u8)
	case c.u16 != nil:
		return minMaxOf(c.u16)
	}
	return minMaxOf(c.i32)
}

// below reports whether every code is in 0 … n−1: at about a byte per cycle's
// fraction, since every check of a table before a search or a count makes one pass
// over all of its codes.
func (c Codes) below(n int32) bool {
	switch {
	case c.u8 != nil && n <= 128:
		return n > 0 && bytesBelow(c.u8, uint8(n))
	case c.u8 != nil:
		return n > math.MaxUint8 || int32(maxOf(c.u8)) < n
	case c.u16 != nil:
		return n > math.MaxUint16 || int32(maxOf(c.u16)) < n
	}
	lo, hi := minMaxOf(c.i32)
	return lo >= 0 && hi < n
}

// bytesBelow reports whether every byte of s is below n (1 ≤ n ≤ 128), eight bytes
// at a time: a byte's high bit is set in b | (b&0x7F + 128−n) exactly when b ≥ n (the
// sum of the low seven bits and 128−n is at most 255, so it never carries into the
// next byte).
func bytesBelow(s []uint8, n uint8) bool {
	const high = 0x8080808080808080
	add := uint64(128-n) * 0x0101010101010101
	var acc0, acc1 uint64
	for len(s) >= 16 {
		w0, w1 := binary.LittleEndian.Uint64(s), binary.LittleEndian.Uint64(s[8:])
		acc0 |= w0 | (w0&^high + add)
		acc1 |= w1 | (w1&^high + add)
		s = s[16:]
	}
	if (acc0|acc1)&high != 0 {
		return false
	}
	for _, b := range s {
		if b >= n {
			return false
		}
	}
	return true
}

// maxOf is the largest of s (0 when empty), in four independent running maxima.
func maxOf[T uint8 | uint16](s []T) T {
	var m0, m1, m2, m3 T
	for len(s) >= 4 {
		v := s[:4:4]
		m0, m1, m2, m3 = max(m0, v[0]), max(m1, v[1]), max(m2, v[2]), max(m3, v[3])
		s = s[4:]
	}
	for _, v := range s {
		m0 = max(m0, v)
	}
	return max(m0, m1, m2, m3)
}

func minMaxOf[T uint8 | uint16 | int32](s []T) (lo, hi int32) {
	if len(s) == 0 {
		return 0, -1
	}
	l, h := s[0], s[0]
	for _, v := range s {
		l, h = min(l, v), max(h, v)
	}
	return int32(l), int32(h)
}

// addKeys adds, for records lo..hi-1, the mapped code m[code] of column c to keys[j]
// times sz (mixed radix) — the hot loop of grouping records.
func addKeys[K radixKey](c Codes, keys []K, lo, hi int, m []int32, sz K) {
	switch {
	case c.u8 != nil:
		addKeysOf(keys, c.u8[lo:hi], m, sz)
	case c.u16 != nil:
		addKeysOf(keys, c.u16[lo:hi], m, sz)
	default:
		addKeysOf(keys, c.i32[lo:hi], m, sz)
	}
}

func addKeysOf[K radixKey, T uint8 | uint16 | int32](keys []K, col []T, m []int32, sz K) {
	keys = keys[:len(col)]
	for j, c := range col {
		keys[j] = keys[j]*sz + K(m[c])
	}
}

// mixKeys mixes, for records lo..hi-1, the mapped code of this column into a hash.
func (c Codes) mixKeys(keys []uint64, lo, hi int, m []int32) {
	switch {
	case c.u8 != nil:
		mixKeysOf(keys, c.u8[lo:hi], m)
	case c.u16 != nil:
		mixKeysOf(keys, c.u16[lo:hi], m)
	default:
		mixKeysOf(keys, c.i32[lo:hi], m)
	}
}

func mixKeysOf[T uint8 | uint16 | int32](keys []uint64, col []T, m []int32) {
	keys = keys[:len(col)]
	for j, c := range col {
		keys[j] = (keys[j] ^ uint64(uint32(m[c]))) * 0xBF58476D1CE4E5B9
	}
}

// tally adds, for every record, one to counts[code].
func (c Codes) tally(counts []int64) {
	switch {
	case c.u8 != nil:
		tallyOf(counts, c.u8)
	case c.u16 != nil:
		tallyOf(counts, c.u16)
	default:
		tallyOf(counts, c.i32)
	}
}

func tallyOf[T uint8 | uint16 | int32](counts []int64, col []T) {
	for _, c := range col {
		counts[c]++
	}
}

// Map sets dst[i] to m[code lo+i] for every i of dst: the codes of a run of records
// translated by a table (nil: the codes themselves).
func (c Codes) Map(dst []int32, lo int, m []int32) {
	switch {
	case m == nil && c.u8 != nil:
		widen(dst, c.u8[lo:lo+len(dst)])
	case m == nil && c.u16 != nil:
		widen(dst, c.u16[lo:lo+len(dst)])
	case m == nil:
		copy(dst, c.i32[lo:lo+len(dst)])
	case c.u8 != nil:
		mapOf(dst, c.u8[lo:lo+len(dst)], m)
	case c.u16 != nil:
		mapOf(dst, c.u16[lo:lo+len(dst)], m)
	default:
		mapOf(dst, c.i32[lo:lo+len(dst)], m)
	}
}

func widen[T uint8 | uint16](dst []int32, col []T) {
	dst = dst[:len(col)]
	for i, x := range col {
		dst[i] = int32(x)
	}
}

func mapOf[T uint8 | uint16 | int32](dst []int32, col []T, m []int32) {
	dst = dst[:len(col)]
	for i, x := range col {
		dst[i] = m[x]
	}
}

// Slice returns codes lo … hi−1, sharing c's storage.
func (c Codes) Slice(lo, hi int) Codes {
	switch {
	case c.u8 != nil:
		return Codes{u8: c.u8[lo:hi:hi]}
	case c.u16 != nil:
		return Codes{u16: c.u16[lo:hi:hi]}
	}
	return Codes{i32: c.i32[lo:hi:hi]}
}
