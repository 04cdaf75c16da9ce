package table

import (
	"context"
	"errors"
	"fmt"

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
	i32    []int32
	i64    []int64
	f32    []float32
	f64    []float64
	bools  []bool
}

func newDirectReader(kind directKind, maxDef int16) *directReader {
	d := &directReader{kind: kind, maxDef: maxDef, cache: newTextCache()}
	if maxDef > 0 {
		d.defs = make([]int16, BatchRows)
	}
	switch kind {
	case directString:
		d.bytes = make([]parquet.ByteArray, BatchRows)
	case directInt32, directDate32:
		d.i32 = make([]int32, BatchRows)
	case directInt64:
		d.i64 = make([]int64, BatchRows)
	case directFloat32:
		d.f32 = make([]float32, BatchRows)
	case directFloat64:
		d.f64 = make([]float64, BatchRows)
	case directBool:
		d.bools = make([]bool, BatchRows)
	}
	return d
}

// read reads the next n records (n ≤ batchRows) of the column chunk into field j of
// batch b (records of width fields). The string values point into the chunk's page
// buffers, which the Go allocator the file is read with never hands out again while
// they are referenced; they are copied (textCache) before the next read.
func (d *directReader) read(cr file.ColumnChunkReader, n int, b *Batch, j, width int) error {
	var defs []int16
	if d.maxDef > 0 {
		defs = d.defs[:n]
	}
	var (
		total int64
		vals  int
		err   error
		text  func(v int) string
	)
	switch d.kind {
	case directString:
		r, ok := cr.(*file.ByteArrayColumnChunkReader)
		if !ok {
			return errors.New("not a byte array column")
		}
		total, vals, err = r.ReadBatch(int64(n), d.bytes[:n], defs, nil)
		text = func(v int) string { return d.cache.bytes(d.bytes[v]) }
	case directInt32, directDate32:
		r, ok := cr.(*file.Int32ColumnChunkReader)
		if !ok {
			return errors.New("not an int32 column")
		}
		total, vals, err = r.ReadBatch(int64(n), d.i32[:n], defs, nil)
		format := FormatInt
		if d.kind == directDate32 {
			format = FormatDate
		}
		text = func(v int) string { return d.cache.num(int64(d.i32[v]), format) }
	case directInt64:
		r, ok := cr.(*file.Int64ColumnChunkReader)
		if !ok {
			return errors.New("not an int64 column")
		}
		total, vals, err = r.ReadBatch(int64(n), d.i64[:n], defs, nil)
		text = func(v int) string { return d.cache.num(d.i64[v], FormatInt) }
	case directFloat32:
		r, ok := cr.(*file.Float32ColumnChunkReader)
		if !ok {
			return errors.New("not a float column")
		}
		total, vals, err = r.ReadBatch(int64(n), d.f32[:n], defs, nil)
		text = func(v int) string { return FormatFloat32(d.f32[v]) }
	case directFloat64:
		r, ok := cr.(*file.Float64ColumnChunkReader)
		if !ok {
			return errors.New("not a double column")
		}
		total, vals, err = r.ReadBatch(int64(n), d.f64[:n], defs, nil)
		text = func(v int) string { return FormatFloat(d.f64[v]) }
	case directBool:
		r, ok := cr.(*file.BooleanColumnChunkReader)
		if !ok {
			return errors.New("not a boolean column")
		}
		total, vals, err = r.ReadBatch(int64(n), d.bools[:n], defs, nil)
		text = func(v int) string { return FormatBool(d.bools[v]) }
	default:
		return errors.New("no direct reading")
	}
	if err != nil {
		return err
	}
	if total != int64(n) {
		return fmt.Errorf("%d values where the row group has %d more records", total, n)
	}
	if defs == nil {
		if vals != n {
			return fmt.Errorf("%d values for %d records", vals, n)
		}
		for i := range n {
			b.Fields[i*width+j] = text(i)
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
		b.Fields[i*width+j] = text(v)
		v++
	}
	if v != vals {
		return fmt.Errorf("%d values for %d present records", vals, v)
	}
	return nil
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

// streamDirect is stream for columns that all have a direct reading: row group by row
// group, batchRows records at a time from each column chunk reader. col names the
// column being read, for the caller's messages.
func (s *parquetSource) streamDirect(ctx context.Context, cols []int, kinds []directKind, col *string, send func(*Batch) error) error {
	width := len(cols)
	readers := make([]*directReader, width)
	for j, c := range cols {
		readers[j] = newDirectReader(kinds[j], s.info[s.leaves[c][0]].maxDef)
	}
	chunks := make([]file.ColumnChunkReader, width)
	for g := 0; g < s.pf.NumRowGroups(); g++ {
		rg := s.pf.RowGroup(g)
		for j, c := range cols {
			*col = s.cols[c].Name
			cr, err := rg.Column(s.leaves[c][0])
			if err != nil {
				return s.corrupt(*col, err)
			}
			chunks[j] = cr
		}
		rows := rg.NumRows()
		for done := int64(0); done < rows; {
			if err := ctx.Err(); err != nil {
				return err
			}
			n := int(min(int64(BatchRows), rows-done))
			if int64(s.read+n) > s.total {
				return s.corrupt("", errors.New("more records than the footer says"))
			}
			b := NewBatch(s.read, width)
			b.Fields = b.Fields[:n*width]
			for j, c := range cols {
				*col = s.cols[c].Name
				if err := readers[j].read(chunks[j], n, b, j, width); err != nil {
					return s.corrupt(*col, err)
				}
			}
			*col = ""
			b.N = n
			s.read += n
			done += int64(n)
			if err := send(b); err != nil {
				return err
			}
		}
	}
	if int64(s.read) != s.total {
		return s.corrupt("", fmt.Errorf("%d records where the footer says %d", s.read, s.total))
	}
	return nil
}
