package table

import (
	"errors"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"sanitizer/fault"
)

// recordBuilder makes Arrow record batches of a table's columns for the Parquet and
// Arrow sinks. A column with a dictionary (OutColumn.Dict: a release's generalized
// quasi-identifiers) is an Arrow dictionary array over one array of its labels, shared
// by every batch (so that a writer keeps one dictionary per column chunk or file),
// indexed by the records' keys; every other column is parsed from its canonical text
// into an array of its type.
type recordBuilder struct {
	cols   []OutColumn
	schema *arrow.Schema
	mem    memory.Allocator
	dicts  []arrow.Array // per column: its labels, or nil
	plain  []int         // the columns with a dictionary too large to write as one
}

// labelBytes is the size of a dictionary's labels.
func labelBytes(labels []string) int {
	n := 0
	for _, l := range labels {
		n += len(l)
	}
	return n
}

// newRecordBuilder makes the schema of cols (with metadata md, nil for none) and the
// dictionaries' label arrays. A dictionary whose labels take more than maxDict bytes
// (0: no limit) is not one in the batches: its column is plain strings, the labels
// looked up by key.
func newRecordBuilder(cols []OutColumn, md *arrow.Metadata, mem memory.Allocator, maxDict int) *recordBuilder {
	rb := &recordBuilder{cols: cols, mem: mem, dicts: make([]arrow.Array, len(cols))}
	fields := make([]arrow.Field, len(cols))
	for j, c := range cols {
		fields[j] = arrow.Field{Name: c.Name, Type: c.arrowType(), Nullable: c.Nullable}
		if c.Dict != nil && maxDict > 0 && labelBytes(c.Dict) > maxDict {
			rb.plain = append(rb.plain, j)
			continue
		}
		if c.Dict != nil {
			fields[j].Type = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
			b := array.NewStringBuilder(mem)
			b.AppendValues(c.Dict, nil)
			rb.dicts[j] = b.NewArray()
			b.Release()
		}
	}
	rb.schema = arrow.NewSchema(fields, md)
	return rb
}

// release lets go of the dictionaries.
func (rb *recordBuilder) release() {
	for j, d := range rb.dicts {
		if d != nil {
			d.Release()
			rb.dicts[j] = nil
		}
	}
}

// build makes one record batch of the n records of r. It only reads rb, so several
// goroutines may build at once.
func (rb *recordBuilder) build(r *Rows) (arrow.RecordBatch, error) {
	arrs := make([]arrow.Array, len(rb.cols))
	defer func() {
		for _, a := range arrs {
			if a != nil {
				a.Release()
			}
		}
	}()
	for j, c := range rb.cols {
		var err error
		switch {
		case r.Arrays != nil && r.Arrays[j] != nil:
			arrs[j], err = passedColumn(c, r.Arrays[j], r.N)
		case rb.dicts[j] != nil:
			arrs[j], err = rb.dictColumn(j, r)
		case slices.Contains(rb.plain, j):
			arrs[j], err = rb.labelColumn(j, r)
		default:
			arrs[j], err = textColumn(rb.mem, c, j, len(rb.cols), r)
		}
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", c.Name, err)
		}
	}
	return array.NewRecordBatch(rb.schema, arrs, int64(r.N)), nil
}

// passedColumn is an array passed through from the input, checked against the column.
func passedColumn(c OutColumn, a arrow.Array, n int) (arrow.Array, error) {
	switch {
	case a.Len() != n:
		return nil, fault.Internalf("an array of %d values for %d records", a.Len(), n)
	case !arrow.TypeEqual(a.DataType(), c.arrowType()):
		return nil, fault.Internalf("an array of %s for a column of %s", a.DataType(), c.arrowType())
	case a.NullN() > 0 && !c.Nullable:
		return nil, errors.New("a null in a column that is not nullable")
	}
	a.Retain()
	return a, nil
}

// dictColumn is column j of r as a dictionary array over the column's labels.
func (rb *recordBuilder) dictColumn(j int, r *Rows) (arrow.Array, error) {
	if r.Keys == nil || r.Keys[j] == nil || len(r.Keys[j]) != r.N {
		return nil, fault.Internalf("a dictionary column given without its keys")
	}
	size := int32(rb.dicts[j].Len())
	for _, x := range r.Keys[j] {
		if x < 0 || x >= size {
			return nil, fault.Internalf("dictionary index %d of %d", x, size)
		}
	}
	data := array.NewData(arrow.PrimitiveTypes.Int32, r.N, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(r.Keys[j]))}, nil, 0, 0)
	defer data.Release()
	idx := array.MakeFromData(data)
	defer idx.Release()
	return array.NewDictionaryArray(rb.schema.Field(j).Type, idx, rb.dicts[j]), nil
}

// arrowType is the Arrow type the column is written as by the Parquet and Arrow sinks
// (a dictionary column's labels aside).
func (c OutColumn) arrowType() arrow.DataType {
	if c.Arrow != nil {
		return c.Arrow
	}
	return ArrowType(c.Type, c.Ints)
}

// labelColumn is column j of r as plain strings, the labels of its dictionary.
func (rb *recordBuilder) labelColumn(j int, r *Rows) (arrow.Array, error) {
	labels := rb.cols[j].Dict
	if r.Keys == nil || r.Keys[j] == nil || len(r.Keys[j]) != r.N {
		return nil, fault.Internalf("a dictionary column given without its keys")
	}
	b := array.NewStringBuilder(rb.mem)
	defer b.Release()
	b.Reserve(r.N)
	for _, x := range r.Keys[j] {
		if x < 0 || int(x) >= len(labels) {
			return nil, fault.Internalf("dictionary index %d of %d", x, len(labels))
		}
		b.Append(labels[x])
	}
	return b.NewArray(), nil
}

// textColumn is column j of the w-wide records of r, parsed from their canonical text
// into an array of the column's type.
func textColumn(mem memory.Allocator, c OutColumn, j, w int, r *Rows) (arrow.Array, error) {
	b := array.NewBuilder(mem, c.arrowType())
	defer b.Release()
	b.Reserve(r.N)
	for i := range r.N {
		k := i*w + j
		if r.Nulls != nil && r.Nulls[k] {
			if !c.Nullable {
				return nil, errors.New("a null in a column that is not nullable")
			}
			b.AppendNull()
			continue
		}
		if err := arrowAppend(b, c, r.Fields[k]); err != nil {
			return nil, err
		}
	}
	return b.NewArray(), nil
}
