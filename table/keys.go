package table

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Form is how a source gives one projected column's values in a batch.
type Form uint8

const (
	// AsText is the canonical text, in Batch.Fields (every source, every readable column).
	AsText Form = iota
	// AsArray is an Arrow array of the file's type, in Batch.Arrays (Parquet and Arrow
	// sources), so that a release passes the column through untouched.
	AsArray
	// AsKey is a key per record, so that pass 1 numbers values without formatting or
	// copying each: a 64-bit key in Batch.Keys for a column that has keys
	// (Column.KeyText: integers, floats, dates, timestamps and booleans of a Parquet or
	// Arrow file), an index into the batch's dictionary (Batch.Dict, Batch.Index) for
	// a dictionary-encoded string column of a Parquet file; any other column, or batch
	// of one, comes as text.
	AsKey
)

// keyTextOf returns the canonical text of a key of a column of Arrow type t (the
// function Column.KeyText holds), or nil when such a column has no keys. A key is the
// value itself for integers (an unsigned 64-bit value's bits), the days since the
// epoch for dates, the count of the type's unit since the epoch for timestamps, 0 or
// 1 for booleans and the bits of a float: equal keys are equal values, and the text
// of a key is the text the column's values have in Batch.Fields. (Two keys may have
// one text — floats whose NaNs differ in their bits — so a consumer numbers values by
// their keys' text.)
func keyTextOf(t arrow.DataType) func(int64) string {
	switch t.ID() {
	case arrow.FLOAT16:
		return func(k int64) string { return FormatFloat32(halfToFloat32(uint16(k))) }
	case arrow.FLOAT32:
		return func(k int64) string { return FormatFloat32(math.Float32frombits(uint32(k))) }
	case arrow.FLOAT64:
		return func(k int64) string { return FormatFloat(math.Float64frombits(uint64(k))) }
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32:
		return FormatInt
	case arrow.UINT64:
		return func(k int64) string { return FormatUint(uint64(k)) }
	case arrow.DATE32, arrow.DATE64:
		return FormatDate
	case arrow.TIMESTAMP:
		unit := t.(*arrow.TimestampType).Unit
		return func(k int64) string { return FormatTimestamp(arrowTime(k, unit)) }
	case arrow.BOOL:
		return func(k int64) string { return FormatBool(k != 0) }
	}
	return nil
}

// arrowKeys writes the keys of the values of arr (a column with keys, see keyTextOf)
// from offset off on into keys (len(keys) values) and marks its nulls through null
// (the index in keys).
func arrowKeys(arr arrow.Array, off int, keys []int64, null func(i int)) {
	for i := range keys {
		if arr.IsNull(off + i) {
			null(i)
		}
	}
	switch a := arr.(type) {
	case *array.Int8:
		fillKeys(keys, a.Int8Values()[off:])
	case *array.Int16:
		fillKeys(keys, a.Int16Values()[off:])
	case *array.Int32:
		fillKeys(keys, a.Int32Values()[off:])
	case *array.Int64:
		fillKeys(keys, a.Int64Values()[off:])
	case *array.Uint8:
		fillKeys(keys, a.Uint8Values()[off:])
	case *array.Uint16:
		fillKeys(keys, a.Uint16Values()[off:])
	case *array.Uint32:
		fillKeys(keys, a.Uint32Values()[off:])
	case *array.Uint64:
		fillKeys(keys, a.Uint64Values()[off:])
	case *array.Date32:
		fillKeys(keys, a.Date32Values()[off:])
	case *array.Date64:
		for i, v := range a.Date64Values()[off : off+len(keys)] {
			keys[i] = arrowFloorDiv(int64(v), 86400000) // a multiple of a day in a well-formed file
		}
	case *array.Timestamp:
		fillKeys(keys, a.TimestampValues()[off:])
	case *array.Float16:
		for i, v := range a.Values()[off : off+len(keys)] {
			keys[i] = int64(v.Uint16())
		}
	case *array.Float32:
		for i, v := range a.Float32Values()[off : off+len(keys)] {
			keys[i] = int64(math.Float32bits(v))
		}
	case *array.Float64:
		for i, v := range a.Float64Values()[off : off+len(keys)] {
			keys[i] = int64(math.Float64bits(v))
		}
	case *array.Boolean:
		for i := range keys {
			keys[i] = 0
			if a.Value(off + i) {
				keys[i] = 1
			}
		}
	default:
		panic(fmt.Sprintf("keys of values of type %s", arr.DataType()))
	}
}

// fillKeys converts the first len(keys) values of vals to keys.
func fillKeys[T ~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64](keys []int64, vals []T) {
	for i, v := range vals[:len(keys)] {
		keys[i] = int64(v)
	}
}

// moreKeys extends the keys of field j of batch b by n and returns those n.
func (b *Batch) moreKeys(j, n int) []int64 {
	if b.Keys == nil {
		b.Keys = make([][]int64, b.Width)
	}
	k := b.Keys[j]
	if k == nil {
		k = make([]int64, 0, max(n, BatchRows))
	}
	k = append(k, make([]int64, n)...)
	b.Keys[j] = k
	return k[len(k)-n:]
}

// ArrayText returns the function that gives the canonical text of value i of arr (an
// array of a column that has a text form, as a FormSource gives it AsArray), or reports
// a null: what the column would have read as text.
func ArrayText(arr arrow.Array) func(i int) (string, bool) { return arrowText(arr, nil) }

// formOf is the form asked for projected column j (AsText when as is shorter).
func formOf(as []Form, j int) Form {
	if j < len(as) {
		return as[j]
	}
	return AsText
}
