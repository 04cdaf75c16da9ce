package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/schema"
	"sanitizer/table"
)

// The verifier reads Arrow IPC with its own code on the arrow library's IPC reader
// (arrowread.go). These tests write files of every type the pipeline reads with the
// arrow library's writer, read them with the verifier and with the table package's
// source (the code the release's passes read with), and check that both read the same
// text and the same nulls.

// arrowFormats are the two IPC formats.
var arrowFormats = []struct {
	name   string // the format's name in a configuration
	stream bool
}{{"arrow", false}, {"arrows", true}}

// arrowSpec is a column of a test table: its name and type, and its value in record i
// (nil: a null) in its builder's Go type; for a dictionary, the index.
type arrowSpec struct {
	name string
	typ  arrow.DataType
	val  func(i int) any
	// dict, for a dictionary column, is the dictionary of record batch b: the
	// values (nil: a null) of its value type.
	dict func(b int) []any
}

// pick returns vals[i % len(vals)], or nil (a null) for every nullEvery-th record.
func pick(vals []any, nullEvery int) func(int) any {
	return func(i int) any {
		if nullEvery > 0 && i%nullEvery == nullEvery-1 {
			return nil
		}
		return vals[i%len(vals)]
	}
}

// everyTypeSpecs is a column of every type the readers read, with the edge values of
// each, and nulls.
func everyTypeSpecs() []arrowSpec {
	var specs []arrowSpec
	for k, c := range testfiles.IntColumns {
		var vals []any
		for _, s := range c.Vals {
			var i int64
			var u uint64
			fmt.Sscan(s, &i)
			fmt.Sscan(s, &u)
			switch c.Type.ID() {
			case arrow.INT8:
				vals = append(vals, int8(i))
			case arrow.INT16:
				vals = append(vals, int16(i))
			case arrow.INT32:
				vals = append(vals, int32(i))
			case arrow.INT64:
				vals = append(vals, i)
			case arrow.UINT8:
				vals = append(vals, uint8(u))
			case arrow.UINT16:
				vals = append(vals, uint16(u))
			case arrow.UINT32:
				vals = append(vals, uint32(u))
			case arrow.UINT64:
				vals = append(vals, u)
			}
		}
		specs = append(specs, arrowSpec{c.Name, c.Type, pick(vals, 3+k%4), nil})
	}
	f16 := func(bits ...uint16) []any {
		var out []any
		for _, b := range bits {
			out = append(out, float16.FromBits(b))
		}
		return out
	}
	f32 := func(fs ...float32) []any {
		var out []any
		for _, f := range fs {
			out = append(out, f)
		}
		return out
	}
	f64 := func(fs ...float64) []any {
		var out []any
		for _, f := range fs {
			out = append(out, f)
		}
		return out
	}
	negZero32, negZero64 := float32(math.Copysign(0, -1)), math.Copysign(0, -1)
	specs = append(specs,
		// 0.1, −0, the largest, the smallest subnormal and normal, NaN, +Inf, −Inf, 1/3
		arrowSpec{"f16", arrow.FixedWidthTypes.Float16, pick(f16(0x2e66, 0x8000, 0x7bff, 0x0001, 0x0400, 0x7e00, 0x7c00, 0xfc00, 0x3555), 5), nil},
		arrowSpec{"f32", arrow.PrimitiveTypes.Float32, pick(f32(0.1, negZero32, math.MaxFloat32, math.SmallestNonzeroFloat32,
			float32(math.NaN()), float32(math.Inf(1)), 16777217, 1.0/3, 1e-7, 123456.79), 4), nil},
		arrowSpec{"f64", arrow.PrimitiveTypes.Float64, pick(f64(0.1, negZero64, 1e21, 1e20, 1e-7, math.SmallestNonzeroFloat64,
			math.NaN(), math.Inf(-1), 123456789.123, math.MaxFloat64), 6), nil},
		arrowSpec{"b", arrow.FixedWidthTypes.Boolean, pick([]any{true, false, false}, 4), nil},
		arrowSpec{"s", arrow.BinaryTypes.String, pick([]any{"", "a", "Zürich", "日本", "x y", "0", "\x00\xff"}, 5), nil},
		arrowSpec{"ls", arrow.BinaryTypes.LargeString, pick([]any{"large", "", "ß"}, 3), nil},
		arrowSpec{"d32", arrow.FixedWidthTypes.Date32, pick([]any{arrow.Date32(0), arrow.Date32(-1), arrow.Date32(19782),
			arrow.Date32(2932896), arrow.Date32(-719162), arrow.Date32(11016)}, 4), nil},
		// whole days, and milliseconds within a day either side of the epoch
		arrowSpec{"d64", arrow.FixedWidthTypes.Date64, pick([]any{arrow.Date64(0), arrow.Date64(-1), arrow.Date64(86_400_000),
			arrow.Date64(-86_400_000), arrow.Date64(-86_400_001), arrow.Date64(1_709_164_800_000), arrow.Date64(86_399_999)}, 5), nil},
	)
	units := []struct {
		unit arrow.TimeUnit
		vals []any
	}{
		{arrow.Second, []any{arrow.Timestamp(0), arrow.Timestamp(-1), arrow.Timestamp(1_709_211_900), arrow.Timestamp(253402300799), arrow.Timestamp(-62135596800)}},
		{arrow.Millisecond, []any{arrow.Timestamp(1), arrow.Timestamp(-1), arrow.Timestamp(1_709_211_900_500), arrow.Timestamp(-86_400_001)}},
		{arrow.Microsecond, []any{arrow.Timestamp(1), arrow.Timestamp(-1), arrow.Timestamp(1_709_211_900_000_001), arrow.Timestamp(math.MaxInt64)}},
		{arrow.Nanosecond, []any{arrow.Timestamp(1), arrow.Timestamp(-1), arrow.Timestamp(1_709_211_900_123_456_789), arrow.Timestamp(math.MinInt64),
			arrow.Timestamp(math.MaxInt64)}},
	}
	for k, u := range units {
		for z, zone := range []string{"", "UTC", "America/New_York", "+05:30"} {
			specs = append(specs, arrowSpec{fmt.Sprintf("ts_%s_%d", u.unit, z), &arrow.TimestampType{Unit: u.unit, TimeZone: zone},
				pick(u.vals, 3+(k+z)%3), nil})
		}
	}
	words := []any{"zeta", "", "Zürich", nil, "a"} // a null among the dictionary's values
	for k, index := range []arrow.DataType{arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32,
		arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32,
		arrow.PrimitiveTypes.Uint64} {
		value := arrow.DataType(arrow.BinaryTypes.String)
		if k%3 == 2 {
			value = arrow.BinaryTypes.LargeString
		}
		specs = append(specs, arrowSpec{
			name: "dict_" + index.String(), typ: &arrow.DictionaryType{IndexType: index, ValueType: value},
			val:  func(i int) any { return []any{0, 4, 2, 1, 3, 2, nil}[(i+k)%7] },
			dict: func(int) []any { return words },
		})
	}
	return specs
}

// arrowBatches builds record batches of rows records each (the last one shorter)
// from specs.
func arrowBatches(t testing.TB, mem memory.Allocator, specs []arrowSpec, rows ...int) (*arrow.Schema, []arrow.RecordBatch) {
	t.Helper()
	fields := make([]arrow.Field, len(specs))
	for j, s := range specs {
		fields[j] = arrow.Field{Name: s.name, Type: s.typ, Nullable: true}
	}
	md := arrow.NewMetadata([]string{"sanitize.k", "note"}, []string{"5", "ü"})
	sc := arrow.NewSchema(fields, &md)
	var recs []arrow.RecordBatch
	first := 0
	for b, n := range rows {
		cols := make([]arrow.Array, len(specs))
		for j, s := range specs {
			cols[j] = buildArray(t, mem, s, b, first, n)
		}
		recs = append(recs, array.NewRecordBatch(sc, cols, int64(n)))
		for _, c := range cols {
			c.Release()
		}
		first += n
	}
	return sc, recs
}

// buildArray builds the array of column s for records first to first+n−1, of record
// batch b.
func buildArray(t testing.TB, mem memory.Allocator, s arrowSpec, b, first, n int) arrow.Array {
	t.Helper()
	if dt, ok := s.typ.(*arrow.DictionaryType); ok {
		var dict []any
		if s.dict != nil {
			dict = s.dict(b)
		}
		values := buildValues(t, mem, dt.ValueType, dict)
		defer values.Release()
		var idx []any
		for i := range n {
			v := s.val(first + i)
			if v != nil {
				v = indexValue(dt.IndexType, v.(int))
			}
			idx = append(idx, v)
		}
		indexes := buildValues(t, mem, dt.IndexType, idx)
		defer indexes.Release()
		return array.NewDictionaryArray(dt, indexes, values)
	}
	vals := make([]any, n)
	for i := range vals {
		vals[i] = s.val(first + i)
	}
	return buildValues(t, mem, s.typ, vals)
}

// indexValue is k as a value of an index type's builder.
func indexValue(typ arrow.DataType, k int) any {
	switch typ.ID() {
	case arrow.INT8:
		return int8(k)
	case arrow.INT16:
		return int16(k)
	case arrow.INT32:
		return int32(k)
	case arrow.INT64:
		return int64(k)
	case arrow.UINT8:
		return uint8(k)
	case arrow.UINT16:
		return uint16(k)
	case arrow.UINT32:
		return uint32(k)
	}
	return uint64(k)
}

// buildValues builds an array of type typ holding vals (nil: a null).
func buildValues(t testing.TB, mem memory.Allocator, typ arrow.DataType, vals []any) arrow.Array {
	t.Helper()
	b := array.NewBuilder(mem, typ)
	defer b.Release()
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
			continue
		}
		switch b := b.(type) {
		case *array.Int8Builder:
			b.Append(v.(int8))
		case *array.Int16Builder:
			b.Append(v.(int16))
		case *array.Int32Builder:
			b.Append(v.(int32))
		case *array.Int64Builder:
			b.Append(v.(int64))
		case *array.Uint8Builder:
			b.Append(v.(uint8))
		case *array.Uint16Builder:
			b.Append(v.(uint16))
		case *array.Uint32Builder:
			b.Append(v.(uint32))
		case *array.Uint64Builder:
			b.Append(v.(uint64))
		case *array.Float16Builder:
			b.Append(v.(float16.Num))
		case *array.Float32Builder:
			b.Append(v.(float32))
		case *array.Float64Builder:
			b.Append(v.(float64))
		case *array.BooleanBuilder:
			b.Append(v.(bool))
		case *array.StringBuilder:
			b.Append(v.(string))
		case *array.LargeStringBuilder:
			b.Append(v.(string))
		case *array.Date32Builder:
			b.Append(v.(arrow.Date32))
		case *array.Date64Builder:
			b.Append(v.(arrow.Date64))
		case *array.TimestampBuilder:
			b.Append(v.(arrow.Timestamp))
		case *array.BinaryBuilder:
			b.Append(v.([]byte))
		case *array.Decimal128Builder:
			b.Append(v.(decimal128.Num))
		case *array.ListBuilder:
			b.Append(true)
			b.ValueBuilder().(*array.Int32Builder).Append(v.(int32))
		case *array.StructBuilder:
			b.Append(true)
			b.FieldBuilder(0).(*array.Int32Builder).Append(v.(int32))
		default:
			t.Fatalf("no test values for %s", typ)
		}
	}
	return b.NewArray()
}

// writeArrowIPC writes the record batches in an IPC file or stream and returns its
// bytes.
func writeArrowIPC(t testing.TB, mem memory.Allocator, stream bool, sc *arrow.Schema, recs []arrow.RecordBatch, opts ...ipc.Option) []byte {
	t.Helper()
	var buf bytes.Buffer
	opts = append(opts, ipc.WithSchema(sc), ipc.WithAllocator(mem))
	var w interface {
		Write(arrow.RecordBatch) error
		Close() error
	}
	if stream {
		w = ipc.NewWriter(&buf, opts...)
	} else {
		fw, err := ipc.NewFileWriter(&buf, opts...)
		if err != nil {
			t.Fatal(err)
		}
		w = fw
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writeArrowFile writes content to a file in a new temporary folder.
func writeArrowFile(t testing.TB, name string, content []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// nullText stands for a null in the records the tests compare.
const nullText = "\x00null"

// readArrowRecords reads columns cols of f (nil: every readable one) and closes f;
// nulls read as nullText.
func readArrowRecords(f *ArrowFile, cols []int, limit int) ([][]string, error) {
	defer f.Close()
	if cols == nil {
		cols = []int{}
		for i, c := range f.Columns() {
			if c.Unsupported == "" {
				cols = append(cols, i)
			}
		}
	}
	r, err := f.Records(context.Background(), cols)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out [][]string
	for len(out) < limit {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if len(rec) != len(cols) {
			return out, fmt.Errorf("a record of %d fields, not %d", len(rec), len(cols))
		}
		rec = slices.Clone(rec)
		nulls := r.Nulls()
		if nulls != nil && len(nulls) != len(cols) {
			return out, fmt.Errorf("%d null flags for %d fields", len(nulls), len(cols))
		}
		for j, null := range nulls {
			if null {
				if rec[j] != "" {
					return out, fmt.Errorf("a null reads as %q", rec[j])
				}
				rec[j] = nullText
			}
		}
		out = append(out, rec)
	}
	return out, nil
}

// readVerifyArrow reads columns cols (nil: every readable one) of path with the
// verifier's reader.
func readVerifyArrow(path string, stream bool, cols []int) ([][]string, error) {
	f, err := OpenArrow(path, stream)
	if err != nil {
		return nil, err
	}
	return readArrowRecords(f, cols, math.MaxInt)
}

// readTableArrow reads columns cols of path with the table package's source, with its
// columns.
func readTableArrow(t *testing.T, path, format string, cols []int) ([]table.Column, [][]string) {
	t.Helper()
	src, err := table.Open(path, schema.Format(format), schema.CSV{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	out := make(chan *table.Batch, 4)
	errc := make(chan error, 1)
	go func() { errc <- src.Stream(context.Background(), cols, out) }()
	var recs [][]string
	for b := range out {
		for i := range b.N {
			rec := slices.Clone(b.Record(i))
			for j := range rec {
				if b.Null(i, j) {
					rec[j] = nullText
				}
			}
			recs = append(recs, rec)
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	return src.Columns(), recs
}

// checkedMem is an allocator that tracks what the library allocates; the test fails
// if anything is still allocated at its end.
func checkedMem(t *testing.T) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

// readArrowMem reads every readable column of an IPC file in memory with the
// verifier's reader, its buffers from mem.
func readArrowMem(content []byte, stream bool, mem memory.Allocator) ([][]string, error) {
	f, err := openArrow("mem.arrow", bytes.NewReader(content), int64(len(content)), io.NopCloser(nil), stream, mem)
	if err != nil {
		return nil, err
	}
	return readArrowRecords(f, nil, math.MaxInt)
}

// TestArrowReadsLikeTable: files of every type the pipeline reads, in both formats,
// uncompressed and compressed, in several record batches, read the same with the
// verifier's reader as with the table package's source: the same columns, the same
// text, the same nulls.
func TestArrowReadsLikeTable(t *testing.T) {
	mem := checkedMem(t)
	specs := everyTypeSpecs()
	sc, recs := arrowBatches(t, mem, specs, 7, 11, 1, 0, 9)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for _, codec := range []struct {
		name string
		opts []ipc.Option
	}{{"plain", nil}, {"lz4", []ipc.Option{ipc.WithLZ4()}}, {"zstd", []ipc.Option{ipc.WithZstd()}}} {
		for _, format := range arrowFormats {
			t.Run(codec.name+"/"+format.name, func(t *testing.T) {
				content := writeArrowIPC(t, mem, format.stream, sc, recs, codec.opts...)
				path := writeArrowFile(t, "every."+format.name, content)
				f, err := openArrow(path, bytes.NewReader(content), int64(len(content)), io.NopCloser(nil), format.stream, mem)
				if err != nil {
					t.Fatal(err)
				}
				all := allColumns(len(specs))
				got, err := readArrowRecords(f, all, math.MaxInt)
				if err != nil {
					t.Fatal(err)
				}
				tcols, want := readTableArrow(t, path, format.name, all)
				for j, c := range f.Columns() {
					if c.Name != tcols[j].Name || c.Type != tcols[j].Type || c.Unsupported != tcols[j].Unsupported {
						t.Errorf("column %d: %+v, the table package reads %+v", j, c, tcols[j])
					}
				}
				if len(got) != 28 || len(want) != 28 {
					t.Fatalf("%d records, the table package reads %d, of 28", len(got), len(want))
				}
				diffs := 0
				for i := range want {
					for j := range want[i] {
						if got[i][j] != want[i][j] && diffs < 20 {
							diffs++
							t.Errorf("record %d, column %s: %q, the table package reads %q", i, specs[j].name, got[i][j], want[i][j])
						}
					}
				}
			})
		}
	}
}

// TestArrowDictionaryChanges: a stream may replace a dictionary between record
// batches, or add to it (a delta); each batch reads with its own, as the table
// package reads it.
func TestArrowDictionaryChanges(t *testing.T) {
	mem := checkedMem(t)
	dicts := [][]any{{"a", "b", "c"}, {"x", nil, "y", "z"}, {"a", "b", "c"}}
	specs := []arrowSpec{
		{name: "d", typ: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Uint16, ValueType: arrow.BinaryTypes.String},
			val: func(i int) any { return i % 3 }, dict: func(b int) []any { return dicts[b] }},
		{name: "n", typ: arrow.PrimitiveTypes.Int32, val: func(i int) any { return int32(i) }},
	}
	sc, recs := arrowBatches(t, mem, specs, 4, 5, 3)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	content := writeArrowIPC(t, mem, true, sc, recs)
	path := writeArrowFile(t, "dicts.arrows", content)
	got, err := readVerifyArrow(path, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, want := readTableArrow(t, path, "arrows", []int{0, 1})
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("got %q\nthe table package reads %q", got, want)
	}
	if got[4][0] != nullText || got[5][0] != "y" || got[6][0] != "x" || got[0][0] != "a" || got[11][0] != "c" {
		t.Fatalf("got %q", got)
	}

	// Deltas: each batch's dictionary extends the one before.
	grow := [][]any{{"a"}, {"a", "b"}, {"a", "b", "c", "d"}}
	specs[0].dict = func(b int) []any { return grow[b] }
	specs[0].val = func(i int) any { return []int{0, 0, 0, 0, 1, 0, 1, 0, 0, 3, 2, 1}[i] }
	sc, recs2 := arrowBatches(t, mem, specs, 4, 5, 3)
	defer func() {
		for _, r := range recs2 {
			r.Release()
		}
	}()
	content = writeArrowIPC(t, mem, true, sc, recs2, ipc.WithDictionaryDeltas(true))
	got, err = readArrowMem(content, true, mem)
	if err != nil {
		t.Fatal(err)
	}
	var col []string
	for _, r := range got {
		col = append(col, r[0])
	}
	if want := []string{"a", "a", "a", "a", "b", "a", "b", "a", "a", "d", "c", "b"}; !slices.Equal(col, want) {
		t.Fatalf("got %q, want %q", col, want)
	}
}

// TestArrowText checks some values' text against what it must be, not only against
// the table package's reading.
func TestArrowText(t *testing.T) {
	mem := checkedMem(t)
	specs := []arrowSpec{
		{name: "f32", typ: arrow.PrimitiveTypes.Float32, val: pick([]any{float32(0.1), float32(16777217)}, 0)},
		{name: "f16", typ: arrow.FixedWidthTypes.Float16, val: pick([]any{float16.FromBits(0x2e66), float16.FromBits(0x0001)}, 0)},
		{name: "d64", typ: arrow.FixedWidthTypes.Date64, val: pick([]any{arrow.Date64(-1), arrow.Date64(86_400_000)}, 0)},
		{name: "ts", typ: &arrow.TimestampType{Unit: arrow.Second, TimeZone: "America/New_York"},
			val: pick([]any{arrow.Timestamp(1_709_211_900), arrow.Timestamp(-1)}, 0)},
		{name: "tsn", typ: &arrow.TimestampType{Unit: arrow.Nanosecond}, val: pick([]any{arrow.Timestamp(1_500_000_000), arrow.Timestamp(1)}, 0)},
		{name: "u64", typ: arrow.PrimitiveTypes.Uint64, val: pick([]any{uint64(math.MaxUint64), uint64(0)}, 0)},
		{name: "i8", typ: arrow.PrimitiveTypes.Int8, val: pick([]any{int8(-128), int8(0)}, 0)},
	}
	sc, recs := arrowBatches(t, mem, specs, 2)
	defer recs[0].Release()
	for _, format := range arrowFormats {
		got, err := readArrowMem(writeArrowIPC(t, mem, format.stream, sc, recs), format.stream, mem)
		if err != nil {
			t.Fatal(err)
		}
		want := [][]string{
			{"0.1", "0.099975586", "1969-12-31", "2024-02-29T13:05:00Z", "1970-01-01T00:00:01.5Z", "18446744073709551615", "-128"},
			{"1.6777216e+07", "5.9604645e-08", "1970-01-02", "1969-12-31T23:59:59Z", "1970-01-01T00:00:00.000000001Z", "0", "0"},
		}
		if !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("%s: got %q\nwant %q", format.name, got, want)
		}
	}
}

// unsupportedSpecs are columns of types the readers do not read.
func unsupportedSpecs() []arrowSpec {
	return []arrowSpec{
		{name: "list", typ: arrow.ListOf(arrow.PrimitiveTypes.Int32), val: pick([]any{int32(7)}, 0)},
		{name: "struct", typ: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32}), val: pick([]any{int32(7)}, 0)},
		{name: "idict", typ: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.PrimitiveTypes.Int32},
			val: pick([]any{0}, 0), dict: func(int) []any { return []any{int32(5)} }},
	}
}

// TestArrowUnsupported: columns of other types are listed with their type, as the
// table package lists them; reading one is bad input naming it, the others read,
// decimals and binary (which the table package only passes through) included.
func TestArrowUnsupported(t *testing.T) {
	mem := checkedMem(t)
	passed := []arrowSpec{
		{name: "bin", typ: arrow.BinaryTypes.Binary, val: pick([]any{[]byte("x")}, 0)},
		{name: "dec", typ: &arrow.Decimal128Type{Precision: 10, Scale: 2}, val: pick([]any{decimal128.FromI64(1234)}, 0)},
	}
	specs := append(unsupportedSpecs(), append(passed, arrowSpec{name: "ok", typ: arrow.BinaryTypes.String, val: pick([]any{"yes"}, 2)})...)
	readable := map[string]bool{"bin": true, "dec": true, "ok": true}
	sc, recs := arrowBatches(t, mem, specs, 3)
	defer recs[0].Release()
	for _, format := range arrowFormats {
		path := writeArrowFile(t, "u."+format.name, writeArrowIPC(t, mem, format.stream, sc, recs))
		f, err := OpenArrow(path, format.stream)
		if err != nil {
			t.Fatal(err)
		}
		tcols, _ := readTableArrow(t, path, format.name, nil)
		for j, c := range f.Columns() {
			if c.Name != tcols[j].Name || c.Type != tcols[j].Type || (c.Unsupported != tcols[j].Unsupported) != tcols[j].PassOnly {
				t.Errorf("column %d: %+v, the table package reads %+v", j, c, tcols[j])
			}
			if (c.Unsupported == "") != readable[c.Name] {
				t.Errorf("column %+v", c)
			}
		}
		for j := range len(specs) - 3 {
			_, err := f.Records(context.Background(), []int{len(specs) - 1, j})
			if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), specs[j].name) {
				t.Errorf("reading column %s: %v", specs[j].name, err)
			}
		}
		got, err := readArrowRecords(f, []int{len(specs) - 3, len(specs) - 2, len(specs) - 1}, math.MaxInt)
		if err != nil || !slices.EqualFunc(got, [][]string{{"x", "12.34", "yes"}, {"x", "12.34", nullText}, {"x", "12.34", "yes"}}, slices.Equal) {
			t.Errorf("%s: got %q, %v", format.name, got, err)
		}
	}
}

// TestArrowProjection: the records give the columns asked for, in the order asked for,
// a column twice if asked twice; the file reads again from its start each time; the
// schema's metadata reads as written.
func TestArrowProjection(t *testing.T) {
	mem := checkedMem(t)
	specs := everyTypeSpecs()
	sc, recs := arrowBatches(t, mem, specs, 6, 6)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for _, format := range arrowFormats {
		content := writeArrowIPC(t, mem, format.stream, sc, recs)
		all, err := readArrowMem(content, format.stream, mem)
		if err != nil {
			t.Fatal(err)
		}
		f, err := openArrow("p", bytes.NewReader(content), int64(len(content)), io.NopCloser(nil), format.stream, mem)
		if err != nil {
			t.Fatal(err)
		}
		if md := f.Metadata(); len(md) != 2 || md["sanitize.k"] != "5" || md["note"] != "ü" {
			t.Errorf("metadata %v", md)
		}
		cols := []int{len(specs) - 1, 3, 17, 3}
		for range 2 {
			r, err := f.Records(context.Background(), cols)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; ; i++ {
				rec, err := r.Read()
				if errors.Is(err, io.EOF) {
					if i != 12 {
						t.Errorf("%d records", i)
					}
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				for j, c := range cols {
					want := all[i][c]
					if nulls := r.Nulls(); nulls != nil && nulls[j] {
						rec[j] = nullText
					}
					if rec[j] != want {
						t.Errorf("record %d, column %d: %q, want %q", i, c, rec[j], want)
					}
				}
			}
			r.Close()
		}
		if _, err := f.Records(context.Background(), []int{len(specs)}); err == nil {
			t.Error("a column past the last")
		}
		f.Close()
	}
}

// TestArrowCancel: a cancelled context stops the reading with its error; closing the
// records early stops it too.
func TestArrowCancel(t *testing.T) {
	mem := checkedMem(t)
	specs := []arrowSpec{{name: "n", typ: arrow.PrimitiveTypes.Int64, val: func(i int) any { return int64(i) }}}
	sc, recs := arrowBatches(t, mem, specs, 20000, 20000, 20000)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for _, format := range arrowFormats {
		content := writeArrowIPC(t, mem, format.stream, sc, recs)
		f, err := openArrow("c", bytes.NewReader(content), int64(len(content)), io.NopCloser(nil), format.stream, mem)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		r, err := f.Records(ctx, []int{0})
		if err != nil {
			t.Fatal(err)
		}
		if rec, err := r.Read(); err != nil || rec[0] != "0" {
			t.Fatalf("%q, %v", rec, err)
		}
		cancel()
		for {
			if _, err = r.Read(); err != nil {
				break
			}
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v, want cancelled", format.name, err)
		}
		r.Close()
		r, err = f.Records(context.Background(), []int{0})
		if err != nil {
			t.Fatal(err)
		}
		r.Read()
		r.Close()
		f.Close()
	}
}

// checkArrowError fails unless err is nil or a bad-input error that names path.
func checkArrowError(t testing.TB, path string, err error) {
	t.Helper()
	if err != nil && (!errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), path)) {
		t.Fatalf("error %q is not bad input naming %s", err, path)
	}
}

// smallArrow is a small IPC file or stream of a few types, with a dictionary column.
func smallArrow(t testing.TB, mem memory.Allocator, stream bool, opts ...ipc.Option) []byte {
	t.Helper()
	specs := []arrowSpec{
		{name: "i", typ: arrow.PrimitiveTypes.Int32, val: pick([]any{int32(-7), int32(1)}, 3)},
		{name: "s", typ: arrow.BinaryTypes.String, val: pick([]any{"ab", ""}, 4)},
		{name: "d", typ: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String},
			val: pick([]any{0, 1}, 3), dict: func(int) []any { return []any{"x", "yz"} }},
		{name: "t", typ: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, val: pick([]any{arrow.Timestamp(5)}, 2)},
	}
	sc, recs := arrowBatches(t, mem, specs, 3, 2)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	return writeArrowIPC(t, mem, stream, sc, recs, opts...)
}

func TestArrowBadFiles(t *testing.T) {
	mem := checkedMem(t)
	for _, format := range arrowFormats {
		good := smallArrow(t, mem, format.stream)
		other := smallArrow(t, mem, !format.stream)
		cases := map[string][]byte{
			"empty":        nil,
			"garbage":      []byte("this is not an arrow file at all, not even close"),
			"other format": other,
			"magic only":   []byte("ARROW1\x00\x00ARROW1"),
		}
		for _, cut := range []int{len(good) - 1, len(good) - 8, len(good) - 10, len(good) / 2, 100, 12, 4} {
			cases[fmt.Sprintf("truncated at %d", cut)] = good[:cut]
		}
		if !format.stream {
			long := slices.Clone(good)
			long[len(long)-10] = 0xff // the footer's length
			cases["footer longer than the file"] = long
		}
		for name, content := range cases {
			t.Run(format.name+"/"+name, func(t *testing.T) {
				path := writeArrowFile(t, "bad."+format.name, content)
				_, err := readVerifyArrow(path, format.stream, nil)
				if err == nil {
					t.Fatal("no error")
				}
				checkArrowError(t, path, err)
				t.Log(err)
			})
		}
	}
	_, err := OpenArrow(filepath.Join(t.TempDir(), "gone.arrow"), false)
	if !errors.Is(err, fault.ErrBadInput) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}

// TestArrowEveryByteCorrupt changes each byte of small files in turn: every reading
// ends in records of the declared width or an error naming the file, never a panic.
// (Its buffers come from Go's allocator, as the reader's do outside the tests: when
// the library panics halfway through building an array it loses track of some of the
// buffers it has taken, which the garbage collector then frees.)
func TestArrowEveryByteCorrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("reads thousands of files")
	}
	for _, format := range arrowFormats {
		for _, codec := range []struct {
			name string
			opts []ipc.Option
		}{{"plain", nil}, {"lz4", []ipc.Option{ipc.WithLZ4()}}} {
			t.Run(format.name+"/"+codec.name, func(t *testing.T) {
				mem := memory.NewGoAllocator()
				good := smallArrow(t, mem, format.stream, codec.opts...)
				flips := []byte{0xff, 0x01, 0x80}
				for i := range good {
					for k, flip := range flips {
						if !exhaustive && k != i%len(flips) {
							continue // make test: one flip a byte, in turn
						}
						bad := slices.Clone(good)
						bad[i] ^= flip
						_, err := readArrowMem(bad, format.stream, mem)
						checkArrowError(t, "mem.arrow", err)
					}
				}
			})
		}
	}
}

// fbMessages returns where the messages of an IPC stream start (at their length
// prefix), with their metadata and body.
type fbMessage struct {
	at         int
	meta       []byte // after the prefix
	metaAt     int
	body, size int // where the body starts, how long it is
}

func streamMessages(t *testing.T, content []byte) []fbMessage {
	t.Helper()
	var out []fbMessage
	for at := 0; at+8 <= len(content); {
		n := int(uint32(content[at+4]) | uint32(content[at+5])<<8 | uint32(content[at+6])<<16 | uint32(content[at+7])<<24)
		if n == 0 {
			break
		}
		meta := content[at+8 : at+8+n]
		m, err := checkMessage(meta)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fbMessage{at: at, meta: meta, metaAt: at + 8, body: at + 8 + n, size: int(m.bodyLen)})
		at += 8 + n + int(m.bodyLen)
	}
	return out
}

// TestArrowBoundedMemory: lengths in a corrupt stream that would make the library
// allocate far more than the file holds are refused before, or by the allocator, as
// errors naming the file.
func TestArrowBoundedMemory(t *testing.T) {
	mem := checkedMem(t)
	specs := []arrowSpec{{name: "n", typ: arrow.PrimitiveTypes.Int64, val: func(i int) any { return int64(i) }}}
	sc, recs := arrowBatches(t, mem, specs, 100)
	defer recs[0].Release()

	patch := func(t *testing.T, content []byte, at int, v uint64, size int) []byte {
		out := slices.Clone(content)
		for k := range size {
			out[at+k] = byte(v >> (8 * k))
		}
		return out
	}
	// A compressed buffer that states a size of a terabyte once decompressed.
	lz4 := writeArrowIPC(t, mem, true, sc, recs, ipc.WithLZ4())
	msgs := streamMessages(t, lz4)
	if len(msgs) != 2 {
		t.Fatalf("%d messages", len(msgs))
	}
	c := newFBCheck(msgs[1].meta)
	root, _ := c.u32(0)
	header, _, _ := c.table(root, 2)
	start, n, err := c.vector(header, 2, 16) // buffers
	if err != nil || n != 2 {
		t.Fatalf("%d buffers, %v", n, err)
	}
	off := int(ne.Uint64(msgs[1].meta[start+16:])) // the values' buffer
	bomb := patch(t, lz4, msgs[1].body+off, 1<<40, 8)
	_, err = readArrowMem(bomb, true, mem)
	if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "a buffer of 1099511627776 bytes") {
		t.Errorf("a terabyte buffer: %v", err)
	}

	plain := writeArrowIPC(t, mem, true, sc, recs)
	msgs = streamMessages(t, plain)
	c = newFBCheck(msgs[0].meta)
	root, _ = c.u32(0)
	header, _, _ = c.table(root, 2)
	fieldsAt, _ := c.field(header, 1)
	vec, _ := c.indirect(fieldsAt)
	cases := map[string][]byte{
		// The schema's fields vector stating two billion fields.
		"fields": patch(t, plain, msgs[0].metaAt+int(vec), math.MaxInt32, 4),
		// A message's metadata and body longer than the file.
		"metadata": patch(t, plain, msgs[1].at+4, 1<<31-8, 4),
	}
	c = newFBCheck(msgs[1].meta)
	root, _ = c.u32(0)
	bodyAt, _ := c.field(root, 3)
	cases["body"] = patch(t, plain, msgs[1].metaAt+int(bodyAt), 1<<50, 8)
	for name, content := range cases {
		_, err := readArrowMem(content, true, mem)
		if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "mem.arrow") {
			t.Errorf("%s: %v", name, err)
		}
		t.Logf("%s: %v", name, err)
	}
}

// TestArrowNesting: fields nested deeper than the library loads arrays are refused
// before the library follows them (it would follow them without a limit).
func TestArrowNesting(t *testing.T) {
	mem := checkedMem(t)
	typ := arrow.DataType(arrow.PrimitiveTypes.Int32)
	for range arrowMaxDepth + 2 {
		typ = arrow.StructOf(arrow.Field{Name: "x", Type: typ, Nullable: true})
	}
	sc := arrow.NewSchema([]arrow.Field{{Name: "deep", Type: typ, Nullable: true}}, nil)
	for _, format := range arrowFormats {
		content := writeArrowIPC(t, mem, format.stream, sc, nil)
		_, err := readArrowMem(content, format.stream, mem)
		if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "nested more than") {
			t.Errorf("%s: %v", format.name, err)
		}
	}
}

// TestArrowMem: the allocator refuses a buffer larger than the file can need.
func TestArrowMem(t *testing.T) {
	m := newArrowMem(memory.NewGoAllocator(), 1000)
	m.Free(m.Reallocate(2000, m.Allocate(1000)))
	refused := func(size int) (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = p.(arrowTooLarge)
			}
		}()
		m.check(size) // what Allocate and Reallocate check before they allocate
		return nil
	}
	if err := refused(1000 + arrowSlack); err != nil {
		t.Error(err)
	}
	for _, size := range []int{1001 + arrowSlack, -1, math.MaxInt} {
		if err := refused(size); err == nil {
			t.Errorf("%d bytes allowed", size)
		}
	}
	m.compressed.Store(true)
	if err := refused(arrowExpand*1000 + arrowExpandSlack); err != nil {
		t.Error(err)
	}
	if err := refused(arrowExpand*1000 + arrowExpandSlack + 1); err == nil {
		t.Error("allowed")
	}
	huge := newArrowMem(memory.NewGoAllocator(), math.MaxInt64)
	huge.compressed.Store(true)
	if huge.limit() != math.MaxInt64 {
		t.Error(huge.limit())
	}
}

// FuzzVerifyArrow feeds arbitrary bytes to the verifier's Arrow IPC reader, as a file
// and as a stream: it must return records of the declared width or an error naming
// the file, never panic, hang or allocate without bound.
func FuzzVerifyArrow(f *testing.F) {
	mem := memory.NewGoAllocator()
	for _, stream := range []bool{false, true} {
		for _, opts := range [][]ipc.Option{nil, {ipc.WithZstd()}, {ipc.WithLZ4()}} {
			s := smallArrow(f, mem, stream, opts...)
			f.Add(s)
			f.Add(s[:len(s)/2])
		}
	}
	f.Add([]byte("ARROW1\x00\x00ARROW1"))
	f.Fuzz(func(t *testing.T, content []byte) {
		for _, stream := range []bool{false, true} {
			const path = "fuzz.arrow"
			a, err := openArrow(path, bytes.NewReader(content), int64(len(content)), io.NopCloser(nil), stream, mem)
			if err == nil {
				_, err = readArrowRecords(a, nil, 1<<16)
			}
			checkArrowError(t, path, err)
		}
	})
}

// TestArrowCyclicFields: a field that is its own child (a corrupt offset) would have the
// library follow it until the stack overflows ("fatal error: stack overflow", which no
// recover catches); the checks refuse it first (here by the count of tables, else by
// the nesting).
func TestArrowCyclicFields(t *testing.T) {
	mem := checkedMem(t)
	typ := arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true})
	sc := arrow.NewSchema([]arrow.Field{{Name: "s", Type: typ, Nullable: true}}, nil)
	content := writeArrowIPC(t, mem, true, sc, nil)
	msgs := streamMessages(t, content)
	c := newFBCheck(msgs[0].meta)
	root, _ := c.u32(0)
	header, _, _ := c.table(root, 2)
	fields, n, err := c.vector(header, 1, 4)
	if err != nil || n != 1 {
		t.Fatal(n, err)
	}
	parent, _ := c.indirect(fields)
	children, n, err := c.vector(parent, 5, 4)
	if err != nil || n != 1 {
		t.Fatal(n, err)
	}
	bad := slices.Clone(content)
	ne.PutUint32(bad[msgs[0].metaAt+int(children):], parent-children) // the child is the parent
	if child, _ := newFBCheck(bad[msgs[0].metaAt:]).indirect(children); child != parent {
		t.Fatalf("the child at %d, not %d", child, parent)
	}
	_, err = readArrowMem(bad, true, mem)
	if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "refer to their tables more often") {
		t.Errorf("%v", err)
	}
	t.Log(err)
}

// TestArrowConcurrentRecords: two readings of one open file at once read the same.
func TestArrowConcurrentRecords(t *testing.T) {
	mem := checkedMem(t)
	sc, recs := arrowBatches(t, mem, everyTypeSpecs(), 300, 200, 100)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for _, format := range arrowFormats {
		content := writeArrowIPC(t, mem, format.stream, sc, recs, ipc.WithLZ4())
		want, err := readArrowMem(content, format.stream, mem)
		if err != nil {
			t.Fatal(err)
		}
		f, err := openArrow("c", bytes.NewReader(content), int64(len(content)), io.NopCloser(nil), format.stream, mem)
		if err != nil {
			t.Fatal(err)
		}
		got := make([][][]string, 2)
		errs := make([]error, 2)
		done := make(chan int)
		for k := range 2 {
			go func() {
				cols := allColumns(len(sc.Fields()))
				r, err := f.Records(context.Background(), cols)
				if err != nil {
					errs[k] = err
					done <- k
					return
				}
				defer r.Close()
				for {
					rec, err := r.Read()
					if err != nil {
						if !errors.Is(err, io.EOF) {
							errs[k] = err
						}
						break
					}
					rec = slices.Clone(rec)
					for j, null := range r.Nulls() {
						if null {
							rec[j] = nullText
						}
					}
					got[k] = append(got[k], rec)
				}
				done <- k
			}()
		}
		<-done
		<-done
		f.Close()
		for k := range 2 {
			if errs[k] != nil || !slices.EqualFunc(got[k], want, slices.Equal) {
				t.Errorf("%s, reading %d: %d records of %d, %v", format.name, k, len(got[k]), len(want), errs[k])
			}
		}
	}
}

// TestArrowDuplicateNames: two columns of one name are bad input naming both.
func TestArrowDuplicateNames(t *testing.T) {
	mem := checkedMem(t)
	specs := []arrowSpec{
		{name: "a", typ: arrow.PrimitiveTypes.Int32, val: pick([]any{int32(1)}, 0)},
		{name: "b", typ: arrow.PrimitiveTypes.Int32, val: pick([]any{int32(2)}, 0)},
		{name: "a", typ: arrow.BinaryTypes.String, val: pick([]any{"x"}, 0)},
	}
	sc, recs := arrowBatches(t, mem, specs, 2)
	defer recs[0].Release()
	for _, format := range arrowFormats {
		_, err := readArrowMem(writeArrowIPC(t, mem, format.stream, sc, recs), format.stream, mem)
		if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), `columns 1 and 3 have the same name "a"`) {
			t.Errorf("%s: %v", format.name, err)
		}
	}
}
