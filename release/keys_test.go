package release

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"

	"sanitizer/internal/testfiles"
	"sanitizer/schema"
	"sanitizer/table"
)

// keyedRecord is a table of one column of each type that a source gives as keys
// (integers of every width and signedness, dates, timestamps of every unit, with and
// without a zone, booleans, floats of every width): repeating values, the types'
// extremes (NaNs of two payloads, whose text is one, and both zeros) and nulls, in n
// records.
func keyedRecord(t testing.TB, n int) arrow.RecordBatch {
	t.Helper()
	fields := []arrow.Field{
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
		{Name: "i16", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "i64", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "u8", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
		{Name: "u16", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
		{Name: "u32", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
		{Name: "u64", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
		{Name: "d32", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "d64", Type: arrow.FixedWidthTypes.Date64, Nullable: true},
		{Name: "ts_s", Type: &arrow.TimestampType{Unit: arrow.Second, TimeZone: "UTC"}, Nullable: true},
		{Name: "ts_ms", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "Europe/Paris"}, Nullable: true},
		{Name: "ts_us", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
		{Name: "ts_ns", Type: &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "f16", Type: arrow.FixedWidthTypes.Float16, Nullable: true},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}, // dictionary-encoded in Parquet
		{Name: "u", Type: arrow.BinaryTypes.String, Nullable: true}, // every value once: dictionaries larger than a batch
	}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer rb.Release()
	for r := range n {
		v := int64(r*7919%37 - 18) // 37 values that repeat, negative ones included
		for j := range fields {
			b := rb.Field(j)
			if (r+j)%13 == 0 {
				b.AppendNull()
				continue
			}
			switch b := b.(type) {
			case *array.Int8Builder:
				b.Append([]int8{math.MinInt8, math.MaxInt8, int8(v)}[min(r, 2)])
			case *array.Int16Builder:
				b.Append([]int16{math.MinInt16, math.MaxInt16, int16(v)}[min(r, 2)])
			case *array.Int32Builder:
				b.Append([]int32{math.MinInt32, math.MaxInt32, int32(v)}[min(r, 2)])
			case *array.Int64Builder:
				b.Append([]int64{math.MinInt64, math.MaxInt64, v}[min(r, 2)])
			case *array.Uint8Builder:
				b.Append([]uint8{0, math.MaxUint8, uint8(v + 18)}[min(r, 2)])
			case *array.Uint16Builder:
				b.Append([]uint16{0, math.MaxUint16, uint16(v + 18)}[min(r, 2)])
			case *array.Uint32Builder:
				b.Append([]uint32{0, math.MaxUint32, uint32(v + 18)}[min(r, 2)])
			case *array.Uint64Builder:
				b.Append([]uint64{math.MaxUint64, 1 << 63, uint64(v + 18)}[min(r, 2)])
			case *array.Date32Builder:
				b.Append(arrow.Date32(v * 400))
			case *array.Date64Builder:
				b.Append(arrow.Date64(v * 400 * 86400000))
			case *array.TimestampBuilder:
				b.Append(arrow.Timestamp(v * 1_000_003))
			case *array.BooleanBuilder:
				b.Append(v%3 == 0)
			case *array.Float16Builder: // NaNs of two payloads, ±0, ±∞
				b.Append(float16.FromBits([]uint16{0x7e00, 0x7e01, 0x8000, 0, 0x7c00, 0xfc00, float16.New(float32(v) / 4).Uint16()}[min(r, 6)]))
			case *array.Float32Builder:
				b.Append([]float32{math.Float32frombits(0x7fc00000), math.Float32frombits(0x7fc00001), float32(math.Copysign(0, -1)), 0, float32(math.Inf(1)), math.SmallestNonzeroFloat32, float32(v) / 3}[min(r, 6)])
			case *array.StringBuilder:
				if fields[j].Name == "u" {
					b.Append(fmt.Sprintf("u%d", r))
					continue
				}
				b.Append(fmt.Sprintf("s%d", (v+int64(r/1000)*7)%37)) // each row group meets them in another order
			case *array.Float64Builder:
				b.Append([]float64{math.Float64frombits(0x7ff8000000000000), math.Float64frombits(0x7ff8000000000001), math.Copysign(0, -1), 0, math.Inf(-1), math.MaxFloat64, float64(v) / 7}[min(r, 6)])
			default:
				t.Fatalf("no value for %T", b)
			}
		}
	}
	return rb.NewRecordBatch()
}

// textOnly is a source that gives every column as text (it hides StreamAs).
type textOnly struct{ table.Source }

// numbered is what pass 1's dictionary made of one column: its values in order of
// first appearance, the record of each one's first appearance and every record's number.
type numbered struct {
	values []string
	first  []int
	codes  []int32
}

// numberColumns numbers every column of src as pass 1 does, each column asked for as
// a key; a null reads as nullAs[j]. It also counts the batches that held keys.
func numberColumns(t *testing.T, src table.Source, cols []int, nullAs []string) (out []numbered, keyed int) {
	t.Helper()
	dicts := make([]*dictionary, len(cols))
	forms := make([]table.Form, len(cols))
	for j, c := range cols {
		dicts[j] = newDictionary()
		dicts[j].keyText = src.Columns()[c].KeyText
		forms[j] = table.AsKey
	}
	in := make(chan *table.Batch, 2)
	errc := make(chan error, 1)
	go func() { errc <- table.StreamAs(context.Background(), src, cols, forms, in) }()
	for b := range in {
		if b.Keys != nil || b.Dict != nil {
			keyed++
		}
		for j := range cols {
			if err := dicts[j].add(b, j, &nullAs[j], false); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	for _, d := range dicts {
		nb := numbered{values: d.values, first: d.first}
		for r := range d.n {
			nb.codes = append(nb.codes, d.code(r))
		}
		out = append(out, nb)
	}
	return out, keyed
}

// TestKeysNumberAsText: pass 1 numbering a Parquet or Arrow column of every type that
// has keys from its keys (table.AsKey), and a dictionary-encoded Parquet string column
// from its dictionaries' indexes, gives the values, first appearances and numbers
// that numbering its text gives, a null read as one of the column's values included;
// all columns at once (pqarrow's path for Parquet) and each alone (the direct reading
// where the column has one), over pages and row groups smaller than a batch.
func TestKeysNumberAsText(t *testing.T) {
	modelsOnly(t)
	const n = 3 * table.BatchRows / 2 // a batch and a half
	rec := keyedRecord(t, n)
	defer rec.Release()
	dir := t.TempDir()
	pq, arr := filepath.Join(dir, "in.parquet"), filepath.Join(dir, "in.arrow")
	// Small pages and row groups: a batch spans pages and row groups, nulls included.
	testfiles.WriteArrowParquet(t, pq, rec, []parquet.WriterProperty{parquet.WithDataPageSize(512), parquet.WithMaxRowGroupLength(2500)})
	testfiles.WriteArrowRecord(t, arr, false, rec)
	for _, in := range []struct{ path, format string }{{pq, "parquet"}, {arr, "arrow"}} {
		path := in.path
		src, err := table.Open(path, schema.Format(in.format), schema.CSV{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		all := make([]int, len(src.Columns()))
		for c, col := range src.Columns() {
			if col.KeyText == nil && col.Name != "s" && col.Name != "u" {
				t.Fatalf("%s: column %q (%s) has no keys", filepath.Base(path), col.Name, col.Arrow)
			}
			all[c] = c
		}
		projections := [][]int{all}
		for c := range all {
			projections = append(projections, []int{c})
		}
		for _, cols := range projections {
			where := fmt.Sprintf("%s, columns %v", filepath.Base(path), cols)
			nullAs := make([]string, len(cols))
			for j := range cols {
				nullAs[j] = "none"
			}
			want, _ := numberColumns(t, textOnly{src}, cols, nullAs)
			for j := range cols { // a null now reads as the column's first value
				nullAs[j] = want[j].values[slices.IndexFunc(want[j].values, func(v string) bool { return v != "none" })]
			}
			if err := src.Rewind(); err != nil {
				t.Fatal(err)
			}
			want, _ = numberColumns(t, textOnly{src}, cols, nullAs)
			if err := src.Rewind(); err != nil {
				t.Fatal(err)
			}
			got, keyed := numberColumns(t, src, cols, nullAs)
			// Every column alone has keys or indexes but the strings of Arrow IPC and
			// "u", whose dictionaries hold more values than a batch's records.
			if name := src.Columns()[cols[0]].Name; keyed == 0 && name != "u" && (in.format == "parquet" || name != "s") {
				t.Fatalf("%s: no batch held keys or dictionary indexes", where)
			}
			for j, c := range cols {
				g, w := got[j], want[j]
				if !slices.Equal(g.values, w.values) || !slices.Equal(g.first, w.first) || !slices.Equal(g.codes, w.codes) {
					t.Fatalf("%s: column %q: from keys %d values %q, from text %d values %q (or other numbers)", where, src.Columns()[c].Name, len(g.values), g.values[:min(5, len(g.values))], len(w.values), w.values[:min(5, len(w.values))])
				}
			}
			if err := src.Rewind(); err != nil {
				t.Fatal(err)
			}
		}
		src.Close()
	}
}

// TestDictionaryCopiesValues: the values pass 1 keeps (a column's dictionary, a held
// column's) are copies, not the input's fields, which may point into a block of the
// file (table.Batch.Fields).
func TestDictionaryCopiesValues(t *testing.T) {
	field := strings.Repeat("ward 7;", 3)[:6]
	b := &table.Batch{First: 0, Width: 1, N: 1, Fields: []string{field}}
	d := newDictionary()
	if err := d.add(b, 0, nil, false); err != nil {
		t.Fatal(err)
	}
	if d.values[0] != field || unsafe.StringData(d.values[0]) == unsafe.StringData(field) {
		t.Fatalf("the dictionary keeps %q at %p, the field is at %p", d.values[0], unsafe.StringData(d.values[0]), unsafe.StringData(field))
	}
}
