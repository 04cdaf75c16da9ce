package verify

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/format"
)

// pqValues is the values of a page or of a dictionary as the library decoded them,
// little-endian, read by the column's kind (or as int32 dictionary indexes).
type pqValues struct {
	kind    pqKind
	data    []byte
	offsets []uint32 // strings, binary: n+1 offsets into data
	n       int
	width   int // FIXED_LEN_BYTE_ARRAY: bytes per value
	scale   int // decimals
}

// valueKind is the library's kind of the values of each physical type.
var valueKind = map[format.Type]encoding.Kind{
	format.Boolean: encoding.Boolean, format.Int32: encoding.Int32, format.Int64: encoding.Int64,
	format.Int96: encoding.Int96, format.Float: encoding.Float, format.Double: encoding.Double,
	format.ByteArray: encoding.ByteArray, format.FixedLenByteArray: encoding.FixedLenByteArray,
}

// valueSize is the bytes of one value of each kind stored at a fixed width.
var valueSize = [...]int{
	pqInt8: 4, pqInt16: 4, pqInt32: 4, pqUint8: 4, pqUint16: 4, pqUint32: 4, pqDate: 4,
	pqInt64: 8, pqUint64: 8, pqTimeMilli: 8, pqTimeMicro: 8, pqTimeNano: 8,
	pqInt96: 12, pqFloat16: 2, pqFloat: 4, pqDouble: 8,
	pqBool: 0, pqString: 0, pqNone: 0,
	pqDecimal32: 4, pqDecimal64: 8,
	pqBinary: 0, pqFixed: 0, pqDecimalBytes: 0, pqDecimalFixed: 0,
}

// newValues checks that v holds n values of column col and that each is one its
// kind can take.
func newValues(col *pqColumn, v encoding.Values, n int) (pqValues, error) {
	if v.Kind() != valueKind[col.phys] {
		return pqValues{}, fmt.Errorf("values of type %s in a column of type %s", v.Kind(), col.phys)
	}
	data, offsets := v.Data()
	out := pqValues{kind: col.kind, data: data, n: n, width: col.width, scale: col.scale}
	switch col.kind {
	case pqFixed, pqDecimalFixed:
		if col.width <= 0 || len(data) != n*col.width {
			return out, fmt.Errorf("%d bytes for %d values of %d", len(data), n, col.width)
		}
		return out, nil
	case pqBool:
		if len(data) < (n+7)/8 {
			return out, fmt.Errorf("%d bytes for %d booleans", len(data), n)
		}
		return out, nil
	case pqString, pqBinary, pqDecimalBytes:
		if len(offsets) != n+1 {
			return out, fmt.Errorf("%d offsets for %d strings", len(offsets), n)
		}
		for i := range n {
			if offsets[i] > offsets[i+1] || int(offsets[i+1]) > len(data) {
				return out, errors.New("string offsets out of order")
			}
		}
		out.offsets = offsets
		return out, nil
	}
	if w := valueSize[col.kind]; len(data) != n*w {
		return out, fmt.Errorf("%d bytes for %d values of %d", len(data), n, w)
	}
	return out, out.checkRange()
}

// checkRange checks that every value fits its kind: a narrow integer its width, an
// INT96 timestamp a nanosecond count.
func (v *pqValues) checkRange() error {
	lo, hi := int64(0), int64(0)
	switch v.kind {
	case pqInt8:
		lo, hi = math.MinInt8, math.MaxInt8
	case pqInt16:
		lo, hi = math.MinInt16, math.MaxInt16
	case pqUint8:
		hi = math.MaxUint8
	case pqUint16:
		hi = math.MaxUint16
	case pqInt96:
		for i := range v.n {
			if _, ok := int96Nanos(v.data[12*i:]); !ok {
				return errors.New("an INT96 timestamp out of range")
			}
		}
		return nil
	default:
		return nil
	}
	for i := range v.n {
		x := int64(int32(binary.LittleEndian.Uint32(v.data[4*i:])))
		if v.kind == pqUint8 || v.kind == pqUint16 {
			x = int64(uint32(x))
		}
		if x < lo || x > hi {
			return errors.New("an integer out of its type's range")
		}
	}
	return nil
}

// textCaches hold the text of a column's values, so that a value that repeats is
// converted and allocated once and handed out as one string: numbers (and dates,
// timestamps) by their bits, strings by their bytes. The first textInternValues
// distinct values of the column (textInternBytes of text at most) are interned: each
// is one string for the whole file, which lets the verification compare it by its
// address and remember what it found of it (memo.go); a direct-mapped cache in front
// remembers the recent values (a new value evicts the one in its slot), interned or
// not. A column of more values than that is not interned past them (as the CSV
// reader's), its values only cached.
type textCaches struct {
	nums *numCache
	strs *strCache
	seen int // values converted; the caches start after textCacheAfter
	// the interned values (nil once the column has more than the bound), and how
	// many more values and bytes they may take
	numInterned   map[uint64]string
	strInterned   map[string]string
	values, bytes int
}

// textCacheAfter is how many values of a column are converted before its caches are
// made (a small file does without).
const textCacheAfter = 1024

// The bound of the interned values of a column: as the CSV reader's.
const (
	textInternValues = csvInternValues
	textInternBytes  = csvInternBytes
)

const textCacheSlots = 4096 // a power of two

type numCache struct {
	keys  [textCacheSlots]uint64
	texts [textCacheSlots]string // "" in an empty slot: no number's text is empty
}

type strCache struct {
	texts [textCacheSlots]string
}

// strSlot is the slot of a string in a strCache: a quick hash of its length and its
// first and last bytes (two strings that share them only evict each other).
func strSlot(b []byte) uint64 {
	n := len(b)
	var h uint64
	switch {
	case n >= 8:
		h = binary.LittleEndian.Uint64(b) ^ binary.LittleEndian.Uint64(b[n-8:])*0x9E3779B97F4A7C15
	case n >= 4:
		h = uint64(binary.LittleEndian.Uint32(b)) | uint64(binary.LittleEndian.Uint32(b[n-4:]))<<32
	case n > 0:
		h = uint64(b[0]) | uint64(b[n/2])<<8 | uint64(b[n-1])<<16
	}
	h = (h ^ uint64(n)) * 0xff51afd7ed558ccd
	return h >> (64 - 12)
}

// intern reports whether the interned values may take one more of n bytes, and counts
// it; once they may not, the column is no longer interned.
func (t *textCaches) intern(n int) bool {
	if t.values > 0 && n <= t.bytes {
		t.values--
		t.bytes -= n
		return true
	}
	t.numInterned, t.strInterned = nil, nil
	return false
}

// number returns the text of the number with bits k, from the cache or made by format.
func (t *textCaches) number(k uint64, format func(uint64) string) string {
	if t.nums == nil {
		if t.seen++; t.seen < textCacheAfter {
			return format(k)
		}
		t.nums = new(numCache)
		t.numInterned, t.values, t.bytes = map[uint64]string{}, textInternValues, textInternBytes
	}
	i := (k * 0x9E3779B97F4A7C15) >> (64 - 12)
	if s := t.nums.texts[i]; s != "" && t.nums.keys[i] == k {
		return s
	}
	s, ok := t.numInterned[k]
	if !ok {
		s = format(k)
		if t.numInterned != nil && t.intern(len(s)) {
			t.numInterned[k] = s
		}
	}
	t.nums.keys[i], t.nums.texts[i] = k, s
	return s
}

// str returns b as a string the caller may keep, from the cache when recent.
func (t *textCaches) str(b []byte) string {
	if t.strs == nil {
		if t.seen++; t.seen < textCacheAfter {
			return string(b)
		}
		t.strs = new(strCache)
		t.strInterned, t.values, t.bytes = map[string]string{}, textInternValues, textInternBytes
	}
	i := strSlot(b)
	if t.strs.texts[i] == string(b) {
		return t.strs.texts[i]
	}
	s, ok := t.strInterned[string(b)]
	if !ok {
		s = string(b)
		if t.strInterned != nil && t.intern(len(s)) {
			t.strInterned[s] = s
		}
	}
	t.strs.texts[i] = s
	return s
}

// format returns the canonical text of value i of v.
func (t *textCaches) format(v *pqValues, i int) string {
	switch v.kind {
	case pqInt8, pqInt16, pqInt32:
		return t.number(uint64(int64(int32(binary.LittleEndian.Uint32(v.data[4*i:])))), signedText)
	case pqUint8, pqUint16, pqUint32:
		return t.number(uint64(binary.LittleEndian.Uint32(v.data[4*i:])), unsignedText)
	case pqInt64:
		return t.number(binary.LittleEndian.Uint64(v.data[8*i:]), signedText)
	case pqUint64:
		return t.number(binary.LittleEndian.Uint64(v.data[8*i:]), unsignedText)
	case pqDate:
		return t.number(uint64(int64(int32(binary.LittleEndian.Uint32(v.data[4*i:])))), dateText)
	case pqTimeMilli:
		return t.number(binary.LittleEndian.Uint64(v.data[8*i:]), milliText)
	case pqTimeMicro:
		return t.number(binary.LittleEndian.Uint64(v.data[8*i:]), microText)
	case pqTimeNano:
		return t.number(binary.LittleEndian.Uint64(v.data[8*i:]), nanoText)
	case pqInt96:
		ns, _ := int96Nanos(v.data[12*i:]) // checked by newValues
		return t.number(uint64(ns), nanoText)
	case pqFloat16:
		return t.number(uint64(binary.LittleEndian.Uint16(v.data[2*i:])), float16Text)
	case pqFloat:
		return t.number(uint64(binary.LittleEndian.Uint32(v.data[4*i:])), floatText)
	case pqDouble:
		return t.number(binary.LittleEndian.Uint64(v.data[8*i:]), doubleText)
	case pqBool:
		return strconv.FormatBool(v.data[i/8]>>(i%8)&1 == 1)
	case pqString, pqBinary:
		return t.str(v.data[v.offsets[i]:v.offsets[i+1]])
	case pqFixed:
		return t.str(v.data[i*v.width : (i+1)*v.width])
	case pqDecimal32:
		return decimalText(big.NewInt(int64(int32(binary.LittleEndian.Uint32(v.data[4*i:])))), v.scale)
	case pqDecimal64:
		return decimalText(big.NewInt(int64(binary.LittleEndian.Uint64(v.data[8*i:]))), v.scale)
	case pqDecimalBytes:
		return decimalText(twosComplement(v.data[v.offsets[i]:v.offsets[i+1]]), v.scale)
	case pqDecimalFixed:
		return decimalText(twosComplement(v.data[i*v.width:(i+1)*v.width]), v.scale)
	}
	panic("verify: no text for values of kind " + strconv.Itoa(int(v.kind)))
}

func signedText(k uint64) string   { return strconv.FormatInt(int64(k), 10) }
func unsignedText(k uint64) string { return strconv.FormatUint(k, 10) }

// dateText formats days since 1970-01-01.
func dateText(k uint64) string {
	return time.Unix(int64(k)*86400, 0).UTC().Format(time.DateOnly)
}

func milliText(k uint64) string { return timeText(time.UnixMilli(int64(k))) }
func microText(k uint64) string { return timeText(time.UnixMicro(int64(k))) }
func nanoText(k uint64) string  { return timeText(time.Unix(0, int64(k))) }

func timeText(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func floatText(k uint64) string {
	return strconv.FormatFloat(float64(math.Float32frombits(uint32(k))), 'g', -1, 32)
}

func doubleText(k uint64) string { return strconv.FormatFloat(math.Float64frombits(k), 'g', -1, 64) }

func float16Text(k uint64) string {
	return strconv.FormatFloat(float64(float16To32(uint16(k))), 'g', -1, 32)
}

// float16To32 converts an IEEE 754 half-precision number to single precision, exactly.
func float16To32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp, frac := uint32(h>>10)&0x1f, uint32(h&0x3ff)
	switch {
	case exp == 0x1f: // infinity or NaN
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp != 0: // normal
		return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
	}
	v := float32(frac) / (1 << 24) // zero or subnormal: frac × 2⁻²⁴
	if sign != 0 {
		v = -v
	}
	return v
}

// int96Nanos reads an INT96 timestamp (nanoseconds of the day, then the Julian day)
// as nanoseconds since the Unix epoch; ok is false when the nanoseconds are not of one
// day or the instant lies outside what an int64 of nanoseconds holds.
func int96Nanos(b []byte) (ns int64, ok bool) {
	const nsPerDay = 86400 * 1_000_000_000
	const julianUnixEpoch = 2440588
	nanos := binary.LittleEndian.Uint64(b)
	if nanos >= nsPerDay {
		return 0, false
	}
	days := int64(binary.LittleEndian.Uint32(b[8:])) - julianUnixEpoch
	q, r := days, int64(nanos) // days·nsPerDay + nanos = q·nsPerDay + r
	if days < 0 {
		q, r = days+1, int64(nanos)-nsPerDay
	}
	if q > math.MaxInt64/nsPerDay || q < math.MinInt64/nsPerDay {
		return 0, false
	}
	hi := q * nsPerDay
	if (r > 0 && hi > math.MaxInt64-r) || (r < 0 && hi < math.MinInt64-r) {
		return 0, false
	}
	return hi + r, true
}

// twosComplement is the integer a big-endian two's complement holds.
func twosComplement(b []byte) *big.Int {
	x := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		x.Sub(x, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return x
}

// decimalText is the exact text of the decimal unscaled·10^−scale: the digits with a
// point before the last scale of them ("-0.050" for −50 at scale 3), as the verifier
// reads decimals from every format, so that a value compares equal to itself through
// Parquet and Arrow.
func decimalText(unscaled *big.Int, scale int) string {
	digits := new(big.Int).Abs(unscaled).String()
	sign := ""
	if unscaled.Sign() < 0 {
		sign = "-"
	}
	if scale <= 0 {
		return sign + digits + strings.Repeat("0", -scale)
	}
	if len(digits) <= scale {
		digits = strings.Repeat("0", scale-len(digits)+1) + digits
	}
	return sign + digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
}
