package table

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/schema"
)

// arrowNull marks a null in the expected and read tables of these tests.
const arrowNull = "\x00null"

// arrowFormats are the two IPC formats, for table-driven tests.
var arrowFormats = []struct {
	name   string
	stream bool
}{{"file", false}, {"stream", true}}

// writeArrowTable writes rows (arrowNull for a null) with an arrowSink, in writes of at most
// per records, and returns the file's path.
func writeArrowTable(t testing.TB, mem memory.Allocator, stream bool, cols []OutColumn, meta map[string]string, rows [][]string, per int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "table.arrow")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := newArrowSinkMem(f, stream, cols, meta, mem)
	if err != nil {
		t.Fatal(err)
	}
	for len(rows) > 0 {
		m := min(per, len(rows))
		var fields []string
		var nulls []bool
		for i, r := range rows[:m] {
			for j, v := range r {
				if v == arrowNull {
					if nulls == nil {
						nulls = make([]bool, m*len(cols))
					}
					nulls[i*len(cols)+j] = true
					v = ""
				}
				fields = append(fields, v)
			}
		}
		if err := s.Write(fields, nulls, m); err != nil {
			t.Fatal(err)
		}
		rows = rows[m:]
	}
	if err := s.Finish(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// arrowCollect streams the projected columns of src and returns the batches.
func arrowCollect(src *arrowSource, cols []int) ([]*Batch, error) {
	out := make(chan *Batch, 2)
	errc := make(chan error, 1)
	go func() { errc <- src.Stream(context.Background(), cols, out) }()
	var bs []*Batch
	for b := range out {
		bs = append(bs, b)
	}
	return bs, <-errc
}

// arrowRows turns batches into rows (arrowNull for a null), checking the batches' shape.
func arrowRows(t testing.TB, bs []*Batch, width int) [][]string {
	t.Helper()
	var rows [][]string
	for _, b := range bs {
		if b.Width != width || len(b.Fields) != b.N*width || b.First != len(rows) {
			t.Fatalf("batch: first %d width %d, %d fields, n %d; want first %d width %d", b.First, b.Width, len(b.Fields), b.N, len(rows), width)
		}
		for i := range b.N {
			r := slices.Clone(b.Record(i))
			for j := range r {
				if b.Null(i, j) {
					if r[j] != "" {
						t.Fatalf("null field with text %q", r[j])
					}
					r[j] = arrowNull
				}
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// readArrowTable opens path and reads the columns cols.
func readArrowTable(t testing.TB, mem memory.Allocator, path string, stream bool, cols []int) [][]string {
	t.Helper()
	src, err := openArrowMem(path, stream, mem, arrowBufferSlack)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	bs, err := arrowCollect(src, cols)
	if err != nil {
		t.Fatal(err)
	}
	rows := arrowRows(t, bs, len(cols))
	if src.Rows() != len(rows) {
		t.Fatalf("rows() = %d, read %d", src.Rows(), len(rows))
	}
	return rows
}

func arrowCheckedAlloc(t *testing.T) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

// arrowRoundTripColumns has a column of every type, with the canonical text of values
// including extremes, dates before 1970 and timestamps with nanoseconds.
var arrowRoundTripColumns = []struct {
	col  OutColumn
	vals []string
}{
	{OutColumn{Name: "s", Type: schema.String, Nullable: true}, []string{"", "plain", "héllo, \"world\"\n", "日本語", strings.Repeat("x", 1000), "null"}},
	{OutColumn{Name: "i", Type: schema.Integer, Nullable: true}, []string{"0", "-1", "42", "9223372036854775807", "-9223372036854775808"}},
	{OutColumn{Name: "f", Type: schema.Float, Nullable: true}, []string{"0", "-0", "0.1", "-2.5", "1e+21", "5e-324", "-1.7976931348623157e+308", "NaN", "+Inf", "-Inf"}},
	{OutColumn{Name: "b", Type: schema.Boolean, Nullable: true}, []string{"true", "false"}},
	{OutColumn{Name: "d", Type: schema.Date, Nullable: true}, []string{"1970-01-01", "1969-12-31", "1900-02-28", "0001-01-01", "9999-12-31", "2024-02-29"}},
	{OutColumn{Name: "ts", Type: schema.Timestamp, Nullable: true}, []string{"1970-01-01T00:00:00Z", "2024-02-29T13:05:00.5Z", "1969-12-31T23:59:59.999999999Z", "2262-04-10T00:00:00.123456789Z", "1677-09-22T00:00:00.000000001Z", "2001-02-03T04:05:06.000000007Z"}},
	{OutColumn{Name: "req", Type: schema.Integer, Nullable: false}, []string{"7", "-7"}},
}

// arrowRoundTripTable builds rows from arrowRoundTripColumns: value r mod len, some nulls.
func arrowRoundTripTable(n int) ([]OutColumn, [][]string) {
	var cols []OutColumn
	for _, c := range arrowRoundTripColumns {
		cols = append(cols, c.col)
	}
	rows := make([][]string, n)
	for r := range rows {
		for j, c := range arrowRoundTripColumns {
			v := c.vals[r%len(c.vals)]
			if c.col.Nullable && (r+j)%5 == 4 {
				v = arrowNull
			}
			rows[r] = append(rows[r], v)
		}
	}
	return cols, rows
}

func TestArrowRoundTrip(t *testing.T) {
	for _, format := range arrowFormats {
		t.Run(format.name, func(t *testing.T) {
			mem := arrowCheckedAlloc(t)
			cols, rows := arrowRoundTripTable(37)
			path := writeArrowTable(t, mem, format.stream, cols, nil, rows, 10)

			src, err := openArrowMem(path, format.stream, mem, arrowBufferSlack)
			if err != nil {
				t.Fatal(err)
			}
			var want []Column
			for _, c := range cols {
				want = append(want, Column{Name: c.Name, Type: c.Type})
			}
			if got := typesOnly(src.Columns()); !slices.EqualFunc(got, want, sameColumn) {
				t.Errorf("columns() = %v, want %v", got, want)
			}
			src.Close()

			all := make([]int, len(cols))
			for i := range all {
				all[i] = i
			}
			if got := readArrowTable(t, mem, path, format.stream, all); !slices.EqualFunc(got, rows, slices.Equal) {
				t.Errorf("read back:\n%q\nwant:\n%q", got, rows)
			}

			// Projection: columns 2 and 0, in that order.
			got := readArrowTable(t, mem, path, format.stream, []int{2, 0})
			for r, row := range rows {
				if want := []string{row[2], row[0]}; !slices.Equal(got[r], want) {
					t.Fatalf("projected row %d = %q, want %q", r, got[r], want)
				}
			}
		})
	}
}

// TestArrowSinkSchema checks the types, nullability and metadata the sink writes, read
// back with the arrow library.
func TestArrowSinkSchema(t *testing.T) {
	for _, format := range arrowFormats {
		t.Run(format.name, func(t *testing.T) {
			mem := arrowCheckedAlloc(t)
			cols, rows := arrowRoundTripTable(3)
			meta := map[string]string{"sanitizer.k": "5", "b": "2", "a": "1", "": "empty key"}
			path := writeArrowTable(t, mem, format.stream, cols, meta, rows, 10)
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var sc *arrow.Schema
			if format.stream {
				r, err := ipc.NewReader(f, ipc.WithAllocator(mem))
				if err != nil {
					t.Fatal(err)
				}
				sc = r.Schema()
				r.Release()
			} else {
				r, err := ipc.NewFileReader(f, ipc.WithAllocator(mem))
				if err != nil {
					t.Fatal(err)
				}
				sc = r.Schema()
				r.Close()
			}
			md := sc.Metadata()
			if keys := md.Keys(); !slices.Equal(keys, []string{"", "a", "b", "sanitizer.k"}) {
				t.Errorf("metadata keys %q, want sorted", keys)
			}
			for k, v := range meta {
				if got, ok := md.GetValue(k); !ok || got != v {
					t.Errorf("metadata %q = %q, %v; want %q", k, got, ok, v)
				}
			}
			wantTypes := []arrow.DataType{
				arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64,
				arrow.FixedWidthTypes.Boolean, arrow.FixedWidthTypes.Date32,
				&arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, arrow.PrimitiveTypes.Int64,
			}
			for i, fld := range sc.Fields() {
				if fld.Name != cols[i].Name || !arrow.TypeEqual(fld.Type, wantTypes[i]) || fld.Nullable != cols[i].Nullable {
					t.Errorf("field %d: %v, want %s %v nullable %v", i, fld, cols[i].Name, wantTypes[i], cols[i].Nullable)
				}
			}
		})
	}
}

func TestArrowSinkErrors(t *testing.T) {
	cols := []OutColumn{{Name: "name", Type: schema.String, Nullable: true}, {Name: "age", Type: schema.Integer, Nullable: false}, {Name: "day", Type: schema.Date, Nullable: true}}
	tests := []struct {
		name   string
		fields []string
		nulls  []bool
		want   string
	}{
		{"not an integer", []string{"x", "secret-value"}, nil, `column "age": value is not a valid integer`},
		{"null in a required column", []string{"x", ""}, []bool{false, true}, `column "age": a null`},
		{"bad date", []string{"x", "1", "2024-13-01"}, nil, `column "day": value is not a valid date`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for len(tt.fields) < len(cols) {
				tt.fields = append(tt.fields, "2024-01-01")
			}
			if tt.nulls != nil {
				tt.nulls = append(tt.nulls, false)
			}
			mem := arrowCheckedAlloc(t)
			f, err := os.Create(filepath.Join(t.TempDir(), "out.arrow"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			s, err := newArrowSinkMem(f, false, cols, nil, mem)
			if err != nil {
				t.Fatal(err)
			}
			err = s.Write(tt.fields, tt.nulls, 1)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "2024-13") {
				t.Errorf("the error quotes the value: %v", err)
			}
			// The sink is still usable.
			if err := s.Write([]string{"x", "1", "2024-01-01"}, nil, 1); err != nil {
				t.Fatal(err)
			}
			if err := s.Finish(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestArrowReadTypes reads a file written by the arrow library with types the sink
// never writes.
func TestArrowReadTypes(t *testing.T) {
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "u16", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
		{Name: "u64", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
		{Name: "f16", Type: arrow.FixedWidthTypes.Float16, Nullable: true},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "ls", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "list", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "dict", Type: dict, Nullable: true},
		{Name: "d64", Type: arrow.FixedWidthTypes.Date64, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "America/New_York"}, Nullable: true},
		{Name: "ts_s", Type: arrow.FixedWidthTypes.Timestamp_s, Nullable: true},
		{Name: "ts_us", Type: arrow.FixedWidthTypes.Timestamp_us, Nullable: true},
		{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
	}, nil)
	build := func(rb *array.RecordBuilder) {
		valid := []bool{true, true, true, false}
		rb.Field(0).(*array.Int8Builder).AppendValues([]int8{-128, 127, 0, 0}, valid)
		rb.Field(1).(*array.Int32Builder).AppendValues([]int32{-2147483648, 2147483647, -5, 0}, valid)
		rb.Field(2).(*array.Uint16Builder).AppendValues([]uint16{0, 65535, 5, 0}, valid)
		rb.Field(3).(*array.Uint64Builder).AppendValues([]uint64{0, 18446744073709551615, 5, 0}, valid)
		rb.Field(4).(*array.Float16Builder).AppendValues([]float16.Num{float16.New(1.5), float16.New(-0.25), float16.New(65504), {}}, valid)
		rb.Field(5).(*array.Float32Builder).AppendValues([]float32{0.1, -3.4028235e+38, 1e-45, 0}, valid)
		rb.Field(6).(*array.LargeStringBuilder).AppendValues([]string{"", "large", "ünï", ""}, valid)
		lb := rb.Field(7).(*array.ListBuilder)
		for range 4 {
			lb.Append(true)
			lb.ValueBuilder().(*array.Int32Builder).Append(1)
		}
		db := rb.Field(8).(*array.BinaryDictionaryBuilder)
		for _, s := range []string{"red", "green", "red"} {
			if err := db.AppendString(s); err != nil {
				t.Fatal(err)
			}
		}
		db.AppendNull()
		rb.Field(9).(*array.Date64Builder).AppendValues([]arrow.Date64{0, -86400000, 1709164800000, 0}, valid)
		rb.Field(10).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{1709211900500, -1, 0, 0}, valid)
		rb.Field(11).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{-1, 1709211900, 0, 0}, valid)
		rb.Field(12).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{1, -1500000, 0, 0}, valid)
		rb.Field(13).(*array.BinaryBuilder).AppendValues([][]byte{{1}, {2}, {3}, {4}}, nil)
	}
	wantCols := []Column{
		{Name: "i8", Type: schema.Integer, Ints: IntType{Bits: 8}}, {Name: "i32", Type: schema.Integer, Ints: IntType{Bits: 32}},
		{Name: "u16", Type: schema.Integer, Ints: IntType{Bits: 16, Unsigned: true}},
		{Name: "u64", Type: schema.Integer, Ints: IntType{Bits: 64, Unsigned: true}}, {Name: "f16", Type: schema.Float}, {Name: "f32", Type: schema.Float},
		{Name: "ls", Type: schema.String}, {Name: "list", Unsupported: "list<item: int32, nullable>"},
		{Name: "dict", Type: schema.String}, {Name: "d64", Type: schema.Date}, {Name: "ts", Type: schema.Timestamp},
		{Name: "ts_s", Type: schema.Timestamp}, {Name: "ts_us", Type: schema.Timestamp}, {Name: "bin", Unsupported: "binary", PassOnly: true},
	}
	want := [][]string{
		{"-128", "-2147483648", "0", "0", "1.5", "0.1", "", "red", "1970-01-01", "2024-02-29T13:05:00.5Z", "1969-12-31T23:59:59Z", "1970-01-01T00:00:00.000001Z"},
		{"127", "2147483647", "65535", "18446744073709551615", "-0.25", "-3.4028235e+38", "large", "green", "1969-12-31", "1969-12-31T23:59:59.999Z", "2024-02-29T13:05:00Z", "1969-12-31T23:59:58.5Z"},
		{"0", "-5", "5", "5", "65504", "1e-45", "ünï", "red", "2024-02-29", "1970-01-01T00:00:00Z", "1970-01-01T00:00:00Z", "1970-01-01T00:00:00Z"},
		{arrowNull, arrowNull, arrowNull, arrowNull, arrowNull, arrowNull, arrowNull, arrowNull, arrowNull, arrowNull, arrowNull, arrowNull},
	}
	proj := []int{0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12} // without the unsupported columns
	for _, format := range arrowFormats {
		t.Run(format.name, func(t *testing.T) {
			// Separate allocators: ipc.FileWriter keeps some dictionary memory after
			// Close (arrow v15), which is not the reader's doing.
			path := testfiles.WriteLibraryArrow(t, memory.NewGoAllocator(), format.stream, sc, build)
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			src, err := openArrowMem(path, format.stream, mem, arrowBufferSlack)
			if err != nil {
				t.Fatal(err)
			}
			if got := typesOnly(src.Columns()); !slices.EqualFunc(got, wantCols, sameColumn) {
				t.Errorf("columns() =\n%v\nwant\n%v", got, wantCols)
			}
			bs, err := arrowCollect(src, proj)
			if err != nil {
				t.Fatal(err)
			}
			if got := arrowRows(t, bs, len(proj)); !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("read:\n%q\nwant:\n%q", got, want)
			}
			// Projecting an unsupported column is an error naming it.
			if err := src.Rewind(); err != nil {
				t.Fatal(err)
			}
			_, err = arrowCollect(src, []int{0, 7})
			if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), `"list"`) {
				t.Errorf("projecting a list: %v", err)
			}
			// Close releases everything, the file reader's dictionary memo included
			// (arrow v15's ipc.FileReader kept it; arrow-go v18 clears it).
			src.Close()
			mem.AssertSize(t, 0)
		})
	}
}

// TestArrowCompressed reads compressed record batches, whose buffers are much larger
// than the file.
func TestArrowCompressed(t *testing.T) {
	const n = 200000
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "zero", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	build := func(rb *array.RecordBuilder) {
		rb.Field(0).(*array.Int64Builder).AppendValues(make([]int64, n), nil)
		sb := rb.Field(1).(*array.StringBuilder)
		for i := range n {
			if i%3 == 0 {
				sb.AppendNull()
			} else {
				sb.Append("abc")
			}
		}
	}
	for _, codec := range []struct {
		name string
		opt  ipc.Option
	}{{"zstd", ipc.WithZstd()}, {"lz4", ipc.WithLZ4()}} {
		for _, format := range arrowFormats {
			t.Run(codec.name+"/"+format.name, func(t *testing.T) {
				path := testfiles.WriteLibraryArrow(t, memory.NewGoAllocator(), format.stream, sc, build, codec.opt)
				if st, err := os.Stat(path); err != nil || st.Size() > 8*n { // less than the integers alone
					t.Fatalf("not compressed: %v %v", st.Size(), err)
				}
				mem := arrowCheckedAlloc(t)
				rows := readArrowTable(t, mem, path, format.stream, []int{1, 0})
				if len(rows) != n {
					t.Fatalf("%d rows", len(rows))
				}
				for i, r := range rows {
					want := []string{"abc", "0"}
					if i%3 == 0 {
						want[0] = arrowNull
					}
					if !slices.Equal(r, want) {
						t.Fatalf("row %d = %q, want %q", i, r, want)
					}
				}
			})
		}
	}
}

// TestArrowBatches checks the split of records into batches across record batches, and
// batches of no columns.
func TestArrowBatches(t *testing.T) {
	for _, format := range arrowFormats {
		t.Run(format.name, func(t *testing.T) {
			mem := arrowCheckedAlloc(t)
			n := 2*BatchRows + 5
			cols := []OutColumn{{Name: "row", Type: schema.Integer, Nullable: false}}
			rows := make([][]string, n)
			for i := range rows {
				rows[i] = []string{fmt.Sprint(i)}
			}
			path := writeArrowTable(t, mem, format.stream, cols, nil, rows, 1000)
			src, err := openArrowMem(path, format.stream, mem, arrowBufferSlack)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			for pass, proj := range [][]int{{0}, {}} {
				if pass == 1 {
					if err := src.Rewind(); err != nil {
						t.Fatal(err)
					}
				}
				bs, err := arrowCollect(src, proj)
				if err != nil {
					t.Fatal(err)
				}
				var firsts, ns []int
				for _, b := range bs {
					firsts, ns = append(firsts, b.First), append(ns, b.N)
				}
				if !slices.Equal(firsts, []int{0, BatchRows, 2 * BatchRows}) || !slices.Equal(ns, []int{BatchRows, BatchRows, 5}) {
					t.Errorf("projection %v: batches first %v n %v", proj, firsts, ns)
				}
				got := arrowRows(t, bs, len(proj))
				if len(proj) == 1 && !slices.EqualFunc(got, rows, slices.Equal) {
					t.Error("values differ")
				}
				if src.Rows() != n {
					t.Errorf("rows() = %d, want %d", src.Rows(), n)
				}
			}
			if err := src.Unchanged(); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestArrowEmptyTable(t *testing.T) {
	for _, format := range arrowFormats {
		t.Run(format.name, func(t *testing.T) {
			mem := arrowCheckedAlloc(t)
			path := writeArrowTable(t, mem, format.stream, []OutColumn{{Name: "a", Type: schema.String, Nullable: true}}, nil, nil, 1)
			if got := readArrowTable(t, mem, path, format.stream, []int{0}); len(got) != 0 {
				t.Errorf("read %q", got)
			}
		})
	}
}

func TestArrowCancel(t *testing.T) {
	mem := arrowCheckedAlloc(t)
	cols, rows := arrowRoundTripTable(10)
	path := writeArrowTable(t, mem, false, cols, nil, rows, 10)
	src, err := openArrowMem(path, false, mem, arrowBufferSlack)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := make(chan *Batch) // nobody reads
	if err := src.Stream(ctx, []int{0}, out); !errors.Is(err, context.Canceled) {
		t.Errorf("stream after cancel: %v", err)
	}
	if _, open := <-out; open {
		t.Error("out not closed")
	}
}

// wantArrowBadInput checks an error for a bad input file.
func wantArrowBadInput(t testing.TB, err error, path string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), path) {
		t.Fatalf("error %q: want a bad-input error naming %s", err, path)
	}
}

// readArrowFile opens path and streams its supported columns, returning the first error.
func readArrowFile(path string, stream bool) error {
	src, err := openArrowMem(path, stream, memory.DefaultAllocator, 16<<20)
	if err != nil {
		return err
	}
	defer src.Close()
	var cols []int
	for i, c := range src.Columns() {
		if c.Unsupported == "" {
			cols = append(cols, i)
		}
	}
	_, err = arrowCollect(src, cols)
	return err
}

// validArrow returns the bytes of a small table in the given format.
func validArrow(t testing.TB, stream bool) []byte {
	cols, rows := arrowRoundTripTable(7)
	path := writeArrowTable(t, memory.DefaultAllocator, stream, cols, map[string]string{"k": "v"}, rows, 3)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestArrowBadFiles(t *testing.T) {
	for _, format := range arrowFormats {
		t.Run(format.name, func(t *testing.T) {
			dir := t.TempDir()
			data := validArrow(t, format.stream)
			other := validArrow(t, !format.stream)
			r := rand.New(rand.NewPCG(1, 2))
			garbage := make([]byte, 4096)
			for i := range garbage {
				garbage[i] = byte(r.Uint32())
			}
			inputs := map[string][]byte{
				"empty":             {},
				"garbage":           garbage,
				"csv":               []byte("a,b\n1,2\n"),
				"magic and garbage": append([]byte("ARROW1\x00\x00"), garbage...),
				"continuation only": {0xff, 0xff, 0xff, 0xff},
				"huge message":      {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0},
				"the other format":  other,
			}
			for _, n := range []int{1, 4, 7, 8, 12, 64, len(data) / 3, len(data) / 2, len(data) - 16, len(data) - 9, len(data) - 8, len(data) - 4, len(data) - 1} {
				inputs[fmt.Sprintf("cut at %d", n)] = data[:n]
			}
			for name, in := range inputs {
				path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".arrow")
				if err := os.WriteFile(path, in, 0o600); err != nil {
					t.Fatal(err)
				}
				t.Run(name, func(t *testing.T) {
					wantArrowBadInput(t, readArrowFile(path, format.stream), path)
				})
			}
		})
	}
}

// TestArrowCorruptBytes flips every byte of a small valid file in turn (with
// SANITIZE_EXHAUSTIVE, as make test-exhaustive runs it; every fifth in make test, every
// seventh under the race detector): reading must fail with a bad-input error or
// succeed, never panic.
func TestArrowCorruptBytes(t *testing.T) {
	for _, format := range arrowFormats {
		t.Run(format.name, func(t *testing.T) {
			data := validArrow(t, format.stream)
			path := filepath.Join(t.TempDir(), "corrupt.arrow")
			failed := 0
			step := 5
			switch {
			case os.Getenv("SANITIZE_EXHAUSTIVE") != "":
				step = 1
			case testing.Short():
				step = 7
			}
			for i := 0; i < len(data); i += step {
				in := slices.Clone(data)
				in[i] ^= 0xff
				if err := os.WriteFile(path, in, 0o600); err != nil {
					t.Fatal(err)
				}
				if err := readArrowFile(path, format.stream); err != nil {
					failed++
					if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), path) {
						t.Fatalf("byte %d: error %q", i, err)
					}
				}
			}
			t.Logf("%d of %d corruptions detected", failed, len(data))
		})
	}
}

func TestArrowDuplicateNames(t *testing.T) {
	mem := arrowCheckedAlloc(t)
	cols := []OutColumn{{Name: "a", Type: schema.String, Nullable: true}, {Name: "a", Type: schema.Integer, Nullable: true}}
	path := writeArrowTable(t, mem, false, cols, nil, [][]string{{"x", "1"}}, 1)
	_, err := openArrowMem(path, false, mem, arrowBufferSlack)
	wantArrowBadInput(t, err, path)
	if !strings.Contains(err.Error(), "same name") {
		t.Errorf("error %v", err)
	}
}

// TestArrowChanged rewrites the input in place between or during the passes.
func TestArrowChanged(t *testing.T) {
	for _, format := range arrowFormats {
		t.Run(format.name, func(t *testing.T) {
			mem := arrowCheckedAlloc(t)
			cols, rows := arrowRoundTripTable(20)
			path := writeArrowTable(t, mem, format.stream, cols, nil, rows, 5)
			orig, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			_, fewer := arrowRoundTripTable(15)
			shorter := writeArrowTable(t, mem, format.stream, cols, nil, fewer, 5)
			changed, err := os.ReadFile(shorter)
			if err != nil {
				t.Fatal(err)
			}
			sameSize := slices.Clone(orig)
			sameSize[len(sameSize)/2] ^= 1

			// rewrite writes content into the same file (the open descriptor sees it)
			// with a later modification time.
			mtime := time.Now()
			rewrite := func(content []byte) {
				t.Helper()
				if err := os.WriteFile(path, content, 0o600); err != nil {
					t.Fatal(err)
				}
				mtime = mtime.Add(time.Minute)
				later := mtime
				if err := os.Chtimes(path, later, later); err != nil {
					t.Fatal(err)
				}
			}
			open := func() *arrowSource {
				t.Helper()
				rewrite(orig)
				src, err := openArrowMem(path, format.stream, mem, arrowBufferSlack)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := arrowCollect(src, []int{0, 1}); err != nil {
					t.Fatal(err)
				}
				return src
			}

			// Unchanged: both passes agree.
			src := open()
			if err := src.Rewind(); err != nil {
				t.Fatal(err)
			}
			if _, err := arrowCollect(src, []int{1}); err != nil {
				t.Fatal(err)
			}
			if err := src.Unchanged(); err != nil {
				t.Errorf("unchanged: %v", err)
			}
			src.Close()

			for _, content := range [][]byte{changed, sameSize} {
				// Changed between the passes: rewind refuses.
				src = open()
				rewrite(content)
				err := src.Rewind()
				wantArrowBadInput(t, err, path)
				if !strings.Contains(err.Error(), "changed") {
					t.Errorf("rewind: %v", err)
				}
				src.Close()

				// Changed during the second pass: the pass or unchanged fails.
				src = open()
				if err := src.Rewind(); err != nil {
					t.Fatal(err)
				}
				rewrite(content)
				if _, err = arrowCollect(src, []int{0}); err == nil {
					err = src.Unchanged()
				}
				wantArrowBadInput(t, err, path)
				src.Close()
			}
		})
	}
}

// FuzzReadArrow reads arbitrary bytes as an Arrow IPC file or stream: no panic, a
// bad-input error naming the file, or batches of the right shape.
func FuzzReadArrow(f *testing.F) {
	f.Add(validArrow(f, false), false)
	f.Add(validArrow(f, true), true)
	var dict bytes.Buffer
	{
		sc := arrow.NewSchema([]arrow.Field{
			{Name: "d", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Uint16, ValueType: arrow.BinaryTypes.String}, Nullable: true},
			{Name: "f", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		}, nil)
		rb := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		db := rb.Field(0).(*array.BinaryDictionaryBuilder)
		_ = db.AppendString("a")
		_ = db.AppendString("b")
		db.AppendNull()
		rb.Field(1).(*array.Float32Builder).AppendValues([]float32{1, 2, 3}, []bool{true, false, true})
		rec := rb.NewRecord()
		w := ipc.NewWriter(&dict, ipc.WithSchema(sc))
		if err := w.Write(rec); err != nil {
			f.Fatal(err)
		}
		if err := w.Close(); err != nil {
			f.Fatal(err)
		}
		rec.Release()
		rb.Release()
	}
	f.Add(dict.Bytes(), true)

	// One file, rewritten for every input: a worker runs its inputs one at a time.
	path := filepath.Join(f.TempDir(), "in.arrow")
	f.Fuzz(func(t *testing.T, data []byte, stream bool) {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		src, err := openArrowMem(path, stream, memory.DefaultAllocator, 1<<20)
		if err != nil {
			wantArrowBadInput(t, err, path)
			return
		}
		defer src.Close()
		var cols []int
		for i, c := range src.Columns() {
			if c.Unsupported == "" && len(cols) < 8 {
				cols = append(cols, i)
			}
		}
		for pass, proj := range [][]int{cols, nil} {
			if pass == 1 {
				if err := src.Rewind(); err != nil {
					t.Fatal(err)
				}
			}
			bs, err := arrowCollect(src, proj)
			for _, b := range bs {
				if len(b.Fields) != b.N*len(proj) || b.Width != len(proj) || (b.Nulls != nil && len(b.Nulls) < len(b.Fields)) {
					t.Fatalf("batch of %d records, width %d, with %d fields", b.N, b.Width, len(b.Fields))
				}
			}
			if err != nil {
				wantArrowBadInput(t, err, path)
				return
			}
		}
		if err := src.Unchanged(); err != nil {
			t.Fatal(err)
		}
		// The columns as keys where they have them read as their text does.
		var recs [2][][]cell
		for k, as := range [][]Form{nil, slices.Repeat([]Form{AsKey}, len(cols))} {
			if err := src.Rewind(); err != nil {
				t.Fatal(err)
			}
			if recs[k], err = readAllAs(t, src, cols, as); err != nil {
				t.Fatalf("read again, as %v: %v", as, err)
			}
		}
		if !slices.EqualFunc(recs[0], recs[1], slices.Equal) {
			t.Fatalf("read as keys %v, as text %v", recs[1], recs[0])
		}
	})
}

// typesOnly is cols without the file's Arrow types and their keys' text (what
// TestTypesRoundTrip checks).
func typesOnly(cols []Column) []Column {
	out := slices.Clone(cols)
	for i := range out {
		out[i].Arrow, out[i].KeyText = nil, nil
	}
	return out
}

// sameColumn compares two columns of typesOnly.
func sameColumn(a, b Column) bool {
	return a.Name == b.Name && a.Type == b.Type && a.Unsupported == b.Unsupported && a.PassOnly == b.PassOnly && a.Ints == b.Ints && a.Arrow == nil && b.Arrow == nil
}
