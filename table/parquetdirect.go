package table

import (
	"errors"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
)

// directKind is how a flat Parquet column whose Arrow type is one of the plain ones
// below is read without pqarrow: straight from its column chunk reader, without the
// Arrow arrays pqarrow builds (and this tool then converts to text). 0: not directly.
type directKind uint8

const (
	directNone directKind = iota
	directString
	directInt32
	directInt64
	directDate32
	directFloat32
	directFloat64
	directBool
)

// directKindOf is the direct reading of a leaf column with the given Arrow type; the
// physical type must be the one pqarrow reads that Arrow type from, and the column flat.
func directKindOf(t arrow.DataType, leaf *parquetColumnInfo) directKind {
	if leaf == nil || leaf.maxRep != 0 || leaf.maxDef > 1 {
		return directNone
	}
	var phys parquet.Type
	var kind directKind
	switch t.ID() {
	case arrow.STRING:
		phys, kind = parquet.Types.ByteArray, directString
	case arrow.INT32:
		phys, kind = parquet.Types.Int32, directInt32
	case arrow.INT64:
		phys, kind = parquet.Types.Int64, directInt64
	case arrow.DATE32:
		phys, kind = parquet.Types.Int32, directDate32
	case arrow.FLOAT32:
		phys, kind = parquet.Types.Float, directFloat32
	case arrow.FLOAT64:
		phys, kind = parquet.Types.Double, directFloat64
	case arrow.BOOL:
		phys, kind = parquet.Types.Boolean, directBool
	default:
		return directNone
	}
	if phys != leaf.phys {
		return directNone
	}
	return kind
}

// parquetColumnInfo is what the direct reading needs of a leaf column.
type parquetColumnInfo struct {
	phys           parquet.Type
	maxDef, maxRep int16
}

// directReader reads one projected column of one row group in batches, as text.
type directReader struct {
	kind   directKind
	maxDef int16
	cache  *textCache
	defs   []int16
	bytes  []parquet.ByteArray
	strs   []string // the text of bytes, taken page by page
	i32    []int32
	i64    []int64
	f32    []float32
	f64    []float64
	bools  []bool
	// text and key give the text and the key (nil: the column has none) of value v of
	// the values read last
	text func(v int) string
	key  func(v int) int64
}

func newDirectReader(kind directKind, maxDef int16) *directReader {
	d := &directReader{kind: kind, maxDef: maxDef, cache: newTextCache()}
	if maxDef > 0 {
		d.defs = make([]int16, BatchRows)
	}
	switch kind {
	case directString:
		d.bytes = make([]parquet.ByteArray, BatchRows)
		d.strs = make([]string, BatchRows)
		d.text = func(v int) string { return d.strs[v] }
	case directInt32, directDate32:
		d.i32 = make([]int32, BatchRows)
		format := FormatInt
		if kind == directDate32 {
			format = FormatDate
		}
		d.text = func(v int) string { return d.cache.num(int64(d.i32[v]), format) }
		d.key = func(v int) int64 { return int64(d.i32[v]) }
	case directInt64:
		d.i64 = make([]int64, BatchRows)
		d.text = func(v int) string { return d.cache.num(d.i64[v], FormatInt) }
		d.key = func(v int) int64 { return d.i64[v] }
	case directFloat32:
		d.f32 = make([]float32, BatchRows)
		d.text = func(v int) string { return FormatFloat32(d.f32[v]) }
		d.key = func(v int) int64 { return int64(math.Float32bits(d.f32[v])) }
	case directFloat64:
		d.f64 = make([]float64, BatchRows)
		d.text = func(v int) string { return FormatFloat(d.f64[v]) }
		d.key = func(v int) int64 { return int64(math.Float64bits(d.f64[v])) }
	case directBool:
		d.bools = make([]bool, BatchRows)
		d.text = func(v int) string { return FormatBool(d.bools[v]) }
		d.key = func(v int) int64 {
			if d.bools[v] {
				return 1
			}
			return 0
		}
	}
	return d
}

// read reads the next n records (n ≤ batchRows) of the column chunk into field j of
// batch b (records of width fields), as keys when keyed (a column of integers, dates,
// floats or booleans, see keyTextOf), else as text. String values are read page by page
// (readStrings).
func (d *directReader) read(cr file.ColumnChunkReader, n int, b *Batch, j, width int, keyed bool) error {
	var defs []int16
	if d.maxDef > 0 {
		defs = d.defs[:n]
	}
	total, vals, err := d.values(cr, n, defs)
	if err != nil {
		return err
	}
	if total != int64(n) {
		return fmt.Errorf("%d values where the row group has %d more records", total, n)
	}
	if keyed && d.key == nil {
		return errors.New("no keys for this column")
	}
	text, key := d.text, d.key
	put := func(i, v int) { b.Fields[i*width+j] = text(v) }
	if keyed {
		keys := b.moreKeys(j, n)
		put = func(i, v int) { keys[i] = key(v) }
	}
	if defs == nil {
		if vals != n {
			return fmt.Errorf("%d values for %d records", vals, n)
		}
		for i := range n {
			put(i, i)
		}
		return nil
	}
	v := 0
	for i, def := range defs {
		if def < d.maxDef {
			b.SetNull(i*width + j)
			continue
		}
		if v >= vals {
			return fmt.Errorf("%d values for more present records", vals)
		}
		put(i, v)
		v++
	}
	if v != vals {
		return fmt.Errorf("%d values for %d present records", vals, v)
	}
	return nil
}

// directPhysical names the physical type each direct reading reads, for errors.
var directPhysical = [...]string{directString: "a byte array", directInt32: "an int32", directDate32: "an int32",
	directInt64: "an int64", directFloat32: "a float", directFloat64: "a double", directBool: "a boolean"}

// values reads the next n records of the column chunk: their definition levels into
// defs (nil for a required column) and their values into the reader's buffer (text
// and key give them). It returns how many levels and values it read.
func (d *directReader) values(cr file.ColumnChunkReader, n int, defs []int16) (int64, int, error) {
	switch d.kind {
	case directString:
		if r, is := cr.(*file.ByteArrayColumnChunkReader); is {
			return d.readStrings(r, n, defs)
		}
	case directInt32, directDate32:
		if r, is := cr.(*file.Int32ColumnChunkReader); is {
			return r.ReadBatch(int64(n), d.i32[:n], defs, nil)
		}
	case directInt64:
		if r, is := cr.(*file.Int64ColumnChunkReader); is {
			return r.ReadBatch(int64(n), d.i64[:n], defs, nil)
		}
	case directFloat32:
		if r, is := cr.(*file.Float32ColumnChunkReader); is {
			return r.ReadBatch(int64(n), d.f32[:n], defs, nil)
		}
	case directFloat64:
		if r, is := cr.(*file.Float64ColumnChunkReader); is {
			return r.ReadBatch(int64(n), d.f64[:n], defs, nil)
		}
	case directBool:
		if r, is := cr.(*file.BooleanColumnChunkReader); is {
			return r.ReadBatch(int64(n), d.bools[:n], defs, nil)
		}
	default:
		return 0, 0, errors.New("no direct reading")
	}
	return 0, 0, fmt.Errorf("not %s column", directPhysical[d.kind])
}

// readStrings reads the next n records of a string column chunk as ReadBatch would,
// page by page (ReadBatchInPage) so that the values are not copied out of the page:
// each value's text (d.strs) is taken before the next page is read, which may reuse
// the buffer the values point into. It returns the levels and the values read.
func (d *directReader) readStrings(r *file.ByteArrayColumnChunkReader, n int, defs []int16) (total int64, vals int, err error) {
	for total < int64(n) {
		var lv []int16
		if defs != nil {
			lv = defs[total:]
		}
		t, v, err := r.ReadBatchInPage(int64(n)-total, d.bytes[vals:n], lv, nil)
		for i := vals; i < vals+v; i++ {
			d.strs[i] = d.cache.bytes(d.bytes[i])
		}
		total, vals = total+t, vals+v
		if err != nil || t == 0 {
			return total, vals, err
		}
	}
	return total, vals, nil
}

// directKinds returns the direct reading of every projected column, or nil when one of
// them has none (the stream then goes through pqarrow).
func (s *parquetSource) directKinds(cols []int) []directKind {
	kinds := make([]directKind, len(cols))
	for j, c := range cols {
		if kinds[j] = s.direct[c]; kinds[j] == directNone {
			return nil
		}
	}
	return kinds
}

// streamDirect is StreamAs for columns that all have a direct reading: row group by row
// group, batchRows records at a time from each column chunk reader, the columns bt
// puts as keys as keys (the others as text), each batch sent by bt.
func (s *parquetSource) streamDirect(cols []int, kinds []directKind, bt *recordBatcher) error {
	width := len(cols)
	readers := make([]*directReader, width)
	for j, c := range cols {
		readers[j] = newDirectReader(kinds[j], s.info[s.leaves[c][0]].maxDef)
	}
	chunks := make([]file.ColumnChunkReader, width)
	for g := 0; g < s.pf.NumRowGroups(); g++ {
		rg := s.pf.RowGroup(g)
		for j, c := range cols {
			*bt.col = s.cols[c].Name
			cr, err := rg.Column(s.leaves[c][0])
			if err != nil {
				return s.corrupt(*bt.col, err)
			}
			chunks[j] = cr
		}
		rows := rg.NumRows()
		for done := int64(0); done < rows; {
			if err := bt.ctx.Err(); err != nil {
				return err
			}
			n := int(min(int64(BatchRows), rows-done))
			if int64(s.read+n) > s.total {
				return s.corrupt("", errors.New("more records than the footer says"))
			}
			b := NewBatch(s.read, width)
			b.Fields = b.Fields[:n*width]
			for j, c := range cols {
				*bt.col = s.cols[c].Name
				if err := readers[j].read(chunks[j], n, b, j, width, bt.forms[j] == formKeys); err != nil {
					return s.corrupt(*bt.col, err)
				}
			}
			*bt.col = ""
			b.N = n
			s.read += n
			done += int64(n)
			if err := bt.send(b); err != nil {
				return err
			}
		}
	}
	if int64(s.read) != s.total {
		return s.corrupt("", fmt.Errorf("%d records where the footer says %d", s.read, s.total))
	}
	return nil
}
