package generalize

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// classTableMagic opens an encoded class table (version 1).
const classTableMagic = "SCT1"

// MarshalBinary encodes the class table's counts: its records, every class's leaf
// codes and count, and every class's histogram of each sensitive column. The
// hierarchies are not encoded: a worker of a distributed engine sends a part's table
// to one that has the same hierarchies, which decodes it with UnmarshalClasses.
func (ct *ClassTable) MarshalBinary() ([]byte, error) {
	if err := ct.check(); err != nil {
		return nil, err
	}
	n := ct.Len()
	b := make([]byte, 0, 16+4*n*(len(ct.cols)+1))
	b = append(b, classTableMagic...)
	for _, x := range []int{ct.meta.Rows, len(ct.cols), len(ct.hist), n} {
		b = binary.AppendUvarint(b, uint64(x))
	}
	for _, col := range ct.cols {
		for _, c := range col {
			b = binary.AppendUvarint(b, uint64(c))
		}
	}
	for _, c := range ct.counts {
		b = binary.AppendUvarint(b, uint64(c))
	}
	for _, h := range ct.hist {
		for j := range n {
			k := h.off[j+1] - h.off[j]
			b = binary.AppendUvarint(b, uint64(k))
			for x := h.off[j]; x < h.off[j+1]; x++ {
				b = binary.AppendUvarint(b, uint64(h.val[x]))
				b = binary.AppendUvarint(b, uint64(h.cnt[x]))
			}
		}
	}
	return b, nil
}

// errClassTableData is the error of data that is not an encoded class table.
var errClassTableData = errors.New("not an encoded class table")

// UnmarshalClasses decodes data (ClassTable.MarshalBinary's) as a class table of the
// columns of like: its quasi-identifiers' hierarchies and its sensitive columns (like's
// codes are not read). Data that is not such a table, or whose codes or values lie
// outside like's columns, is an error; nothing in it is trusted.
func UnmarshalClasses(data []byte, like *Table) (*ClassTable, error) {
	if like == nil {
		return nil, errors.New("class table: no table to decode it for")
	}
	if len(data) < len(classTableMagic) || string(data[:len(classTableMagic)]) != classTableMagic {
		return nil, fmt.Errorf("%w: no header", errClassTableData)
	}
	d := decoder{b: data[len(classTableMagic):]}
	keys := like.keyLeaves() // the quasi-identifiers' leaves, and the persons with a unit
	rows, q, s, n := d.int(math.MaxInt32), d.int(len(keys)), d.int(len(like.Sensitive)), d.int(math.MaxInt32)
	if d.err == nil && (q != len(keys) || s != len(like.Sensitive)) {
		d.fail("%d key columns and %d sensitive columns, the table has %d and %d", q, s, len(keys), len(like.Sensitive))
	}
	if d.err == nil && n > len(d.b) { // every class takes at least a byte a column
		d.fail("%d classes in %d bytes", n, len(d.b))
	}
	if d.err != nil {
		return nil, d.err
	}
	ct := &ClassTable{meta: metaOf(like, rows), cols: make([][]int32, q), counts: make([]int32, n), hist: make([]*hist, s)}
	for i, leaves := range keys {
		ct.cols[i] = make([]int32, n)
		for j := range n {
			ct.cols[i][j] = int32(d.int(leaves - 1))
		}
	}
	if d.err == nil {
		seen := make(map[string]bool, n)
		key := make([]byte, 4*q)
		for j := 0; j < n && d.err == nil; j++ {
			for i := range q {
				binary.LittleEndian.PutUint32(key[4*i:], uint32(ct.cols[i][j]))
			}
			if seen[string(key)] {
				d.fail("class %d repeats an earlier class's codes", j)
			}
			seen[string(key)] = true
		}
	}
	var total int64
	for j := range n {
		ct.counts[j] = int32(d.int(math.MaxInt32))
		if d.err == nil && ct.counts[j] < 1 {
			d.fail("class %d has no record", j)
		}
		total += int64(ct.counts[j])
	}
	if d.err == nil && total != int64(rows) {
		d.fail("classes of %d records for %d", total, rows)
	}
	for c := range s {
		h := &hist{off: make([]int32, n+1)}
		values := like.Sensitive[c].Values
		for j := 0; j < n && d.err == nil; j++ {
			k := d.int(values)
			prev, sum := -1, int64(0)
			for range k {
				v, cnt := d.int(values-1), d.int(math.MaxInt32)
				if d.err == nil && (v <= prev || cnt < 1) {
					d.fail("class %d: sensitive column %d's values out of order or empty", j, c)
				}
				prev, sum = v, sum+int64(cnt)
				h.val, h.cnt = append(h.val, int32(v)), append(h.cnt, int32(cnt))
			}
			if d.err == nil && sum != int64(ct.counts[j]) {
				d.fail("class %d: sensitive column %d counts %d records of %d", j, c, sum, ct.counts[j])
			}
			h.off[j+1] = int32(len(h.val))
		}
		ct.hist[c] = h
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d bytes after the table", len(d.b))
	}
	if d.err != nil {
		return nil, d.err
	}
	return ct, nil
}

// decoder reads uvarints, remembering the first error.
type decoder struct {
	b   []byte
	err error
}

// int reads a number of at most most (0 after an error).
func (d *decoder) int(most int) int {
	if d.err != nil {
		return 0
	}
	x, k := binary.Uvarint(d.b)
	if k <= 0 {
		d.fail("truncated")
		return 0
	}
	if k > 1 && d.b[k-1] == 0 { // a longer encoding than the number's own
		d.fail("a number not in its shortest form")
		return 0
	}
	d.b = d.b[k:]
	if most < 0 || x > uint64(most) {
		d.fail("a number %d above %d", x, most)
		return 0
	}
	return int(x)
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{errClassTableData}, args...)...)
	}
}

// Bytes is the memory the class table's counts take: its classes' codes and counts
// and its histograms' entries (the hierarchies, shared, not counted).
func (ct *ClassTable) Bytes() int64 {
	if ct == nil {
		return 0
	}
	b := int64(ct.Len()) * int64(4*(len(ct.cols)+1))
	for _, h := range ct.hist {
		b += int64(4*len(h.off) + 8*len(h.val))
	}
	return b
}
