package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"sanitizer/schema"
)

// intColumns are one column of every integer width and signedness, with its extremes
// and the values either side of a sign bit.
var intColumns = []struct {
	name string
	typ  arrow.DataType
	vals []string // as decimal text, one per record
}{
	{"i8", arrow.PrimitiveTypes.Int8, []string{"-128", "127", "0", "-1"}},
	{"i16", arrow.PrimitiveTypes.Int16, []string{"-32768", "32767", "0", "-1"}},
	{"i32", arrow.PrimitiveTypes.Int32, []string{"-2147483648", "2147483647", "0", "-1"}},
	{"i64", arrow.PrimitiveTypes.Int64, []string{"-9223372036854775808", "9223372036854775807", "0", "-1"}},
	{"u8", arrow.PrimitiveTypes.Uint8, []string{"0", "255", "128", "127"}},
	{"u16", arrow.PrimitiveTypes.Uint16, []string{"0", "65535", "32768", "32767"}},
	{"u32", arrow.PrimitiveTypes.Uint32, []string{"0", "4294967295", "2147483648", "2147483647"}},
	{"u64", arrow.PrimitiveTypes.Uint64, []string{"0", "18446744073709551615", "9223372036854775808", "9223372036854775807"}},
}

// appendInt appends the decimal s to an integer builder of any width, parsed here
// without the package's code.
func appendInt(t testing.TB, b array.Builder, s string) {
	t.Helper()
	var i int64
	var u uint64
	if _, err := fmt.Sscan(s, &i); err != nil {
		if _, err := fmt.Sscan(s, &u); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
	}
	switch b := b.(type) {
	case *array.Int8Builder:
		b.Append(int8(i))
	case *array.Int16Builder:
		b.Append(int16(i))
	case *array.Int32Builder:
		b.Append(int32(i))
	case *array.Int64Builder:
		b.Append(i)
	case *array.Uint8Builder:
		b.Append(uint8(i))
	case *array.Uint16Builder:
		b.Append(uint16(i))
	case *array.Uint32Builder:
		b.Append(uint32(i))
	case *array.Uint64Builder:
		if u == 0 {
			u = uint64(i)
		}
		b.Append(u)
	default:
		t.Fatalf("builder %T", b)
	}
}

// intText is value i of an integer array of any width as decimal text.
func intText(t testing.TB, a arrow.Array, i int) string {
	t.Helper()
	switch a := a.(type) {
	case *array.Int8:
		return fmt.Sprint(a.Value(i))
	case *array.Int16:
		return fmt.Sprint(a.Value(i))
	case *array.Int32:
		return fmt.Sprint(a.Value(i))
	case *array.Int64:
		return fmt.Sprint(a.Value(i))
	case *array.Uint8:
		return fmt.Sprint(a.Value(i))
	case *array.Uint16:
		return fmt.Sprint(a.Value(i))
	case *array.Uint32:
		return fmt.Sprint(a.Value(i))
	case *array.Uint64:
		return fmt.Sprint(a.Value(i))
	}
	t.Fatalf("array of %s", a.DataType())
	return ""
}

// intRecord is a table of a quasi-identifier zip (one value) and every integer column.
func intRecord(t testing.TB) arrow.Record {
	fields := []arrow.Field{{Name: "zip", Type: arrow.BinaryTypes.String}}
	for _, c := range intColumns {
		fields = append(fields, arrow.Field{Name: c.name, Type: c.typ})
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	for r := range intColumns[0].vals {
		b.Field(0).(*array.StringBuilder).Append("02139")
		for j, c := range intColumns {
			appendInt(t, b.Field(j+1), c.vals[r])
		}
	}
	return b.NewRecord()
}

// intConfig is a release of the integer table: zip the quasi-identifier, the integer
// columns insensitive.
func intConfig(t *testing.T) *schema.Config {
	text := "columns:\n  zip: {role: quasi, hierarchy: {mask: {max: 5}}}\n"
	for _, c := range intColumns {
		text += "  " + c.name + ": {role: insensitive}\n"
	}
	return loadConfigText(t, text+"privacy: {k: 2}\n")
}

// TestIntegerTypesKept: every integer width and signedness, at its extremes (2⁶⁴−1 and
// 2⁶³ in a uint64), is released from Parquet and Arrow inputs into Parquet, Arrow and
// CSV with its values and, where the format has types, its type exactly; the release
// verifies and Check passes.
func TestIntegerTypesKept(t *testing.T) {
	dir := t.TempDir()
	rec := intRecord(t)
	defer rec.Release()
	inputs := map[string]string{
		"parquet": filepath.Join(dir, "in.parquet"),
		"arrow":   writeArrowRecord(t, dir, rec),
	}
	writeArrowParquet(t, inputs["parquet"], rec, nil)
	cfg := intConfig(t)
	for inFmt, in := range inputs {
		for _, outFmt := range []string{"parquet", "arrow", "csv"} {
			t.Run(inFmt+"→"+outFmt, func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "r."+outFmt)
				if _, err := Release(context.Background(), cfg, Options{Input: in, Output: out}); err != nil {
					t.Fatalf("release: %v", err)
				}
				if _, err := Check(context.Background(), cfg, Options{Input: in, Output: out}); err != nil {
					t.Fatalf("check: %v", err)
				}
				checkIntRelease(t, out, outFmt)
			})
		}
	}
}

// writeArrowRecord writes rec as an Arrow IPC file with the library's writer.
func writeArrowRecord(t testing.TB, dir string, rec arrow.Record) string {
	t.Helper()
	path := filepath.Join(dir, "in.arrow")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(rec.Schema()))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkIntRelease reads a release of the integer table with the Arrow project's
// readers (CSV: as text) and compares every integer column's type and values.
func checkIntRelease(t *testing.T, out, format string) {
	t.Helper()
	if format == "csv" {
		header, recs := readCSV(t, out)
		for j, c := range intColumns {
			if header[j+1] != c.name {
				t.Fatalf("header %q", header)
			}
			for r, want := range c.vals {
				if got := recs[r][j+1]; got != want {
					t.Errorf("%s record %d: %q, want %q", c.name, r, got, want)
				}
			}
		}
		return
	}
	var tbl arrow.Table
	if format == "parquet" {
		tbl = readWithPqarrow(t, out)
	} else {
		tbl, _ = readArrowIPC(t, out, false)
	}
	defer tbl.Release()
	for j, c := range intColumns {
		col := tbl.Column(j + 1)
		if col.Name() != c.name || !arrow.TypeEqual(col.DataType(), c.typ) {
			t.Errorf("column %d: %s of type %s, want %s of type %s", j+1, col.Name(), col.DataType(), c.name, c.typ)
			continue
		}
		r := 0
		for _, chunk := range col.Data().Chunks() {
			for i := range chunk.Len() {
				if got := intText(t, chunk, i); got != c.vals[r] {
					t.Errorf("%s record %d: %s, want %s", c.name, r, got, c.vals[r])
				}
				r++
			}
		}
		if r != len(c.vals) {
			t.Errorf("%s: %d records, want %d", c.name, r, len(c.vals))
		}
	}
}

// TestUnsignedQuasiIntervals: a uint64 quasi-identifier generalizes through an interval
// hierarchy while its values fit in 63 bits; a value of 2⁶³ or more, which interval
// hierarchies do not reach, is bad input naming the column and row, and nothing is
// written.
func TestUnsignedQuasiIntervals(t *testing.T) {
	cases := []struct {
		name string
		vals []uint64
		bad  int // 1-based row of the value out of reach, 0: none
	}{
		{"fits", []uint64{0, 7, 9223372036854775800, 9223372036854775807}, 0},
		{"2^63", []uint64{0, 7, 9223372036854775808, 9}, 3},
		{"2^64-1", []uint64{18446744073709551615, 7, 1, 9}, 1},
	}
	for _, tc := range cases {
		for _, format := range []string{"parquet", "arrow"} {
			t.Run(tc.name+"/"+format, func(t *testing.T) {
				dir := t.TempDir()
				sch := arrow.NewSchema([]arrow.Field{{Name: "u", Type: arrow.PrimitiveTypes.Uint64}, {Name: "n", Type: arrow.PrimitiveTypes.Uint64}}, nil)
				b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
				defer b.Release()
				b.Field(0).(*array.Uint64Builder).AppendValues(tc.vals, nil)
				b.Field(1).(*array.Uint64Builder).AppendValues(tc.vals, nil)
				rec := b.NewRecord()
				defer rec.Release()
				in := filepath.Join(dir, "in.parquet")
				if format == "parquet" {
					writeArrowParquet(t, in, rec, nil)
				} else {
					in = writeArrowRecord(t, dir, rec)
				}
				cfg := loadConfigText(t, "columns:\n  u: {role: quasi, type: integer, hierarchy: {intervals: [10, 100]}}\n  n: {role: insensitive}\nprivacy: {k: 2}\n")
				outDir := filepath.Join(dir, "out")
				if err := os.Mkdir(outDir, 0o755); err != nil {
					t.Fatal(err)
				}
				out := filepath.Join(outDir, "r.parquet")
				_, err := Release(context.Background(), cfg, Options{Input: in, Output: out})
				if tc.bad == 0 {
					if err != nil {
						t.Fatalf("release: %v", err)
					}
					tbl := readWithPqarrow(t, out)
					defer tbl.Release()
					if typ := tbl.Column(1).DataType(); !arrow.TypeEqual(typ, arrow.PrimitiveTypes.Uint64) {
						t.Errorf("insensitive column of type %s", typ)
					}
					return
				}
				if !errors.Is(err, schema.ErrBadInput) || !strings.Contains(err.Error(), `"u"`) || !strings.Contains(err.Error(), fmt.Sprintf("row %d", tc.bad)) {
					t.Fatalf("got %v, want bad input naming column u and row %d", err, tc.bad)
				}
				if !strings.Contains(err.Error(), "interval hierarchies") {
					t.Errorf("the error does not say why: %v", err)
				}
				if strings.Contains(err.Error(), fmt.Sprint(tc.vals[tc.bad-1])) {
					t.Errorf("the error quotes the value: %v", err)
				}
				if entries, _ := os.ReadDir(outDir); len(entries) != 0 {
					t.Errorf("output folder holds %v", entries)
				}
			})
		}
	}
}

// TestDPUnsignedAggregate: a uint64 column at and above 2⁶³ is aggregated as the
// numbers it holds (clamped to the bounds), not refused as an invalid integer.
func TestDPUnsignedAggregate(t *testing.T) {
	dir := t.TempDir()
	sch := arrow.NewSchema([]arrow.Field{{Name: "g", Type: arrow.BinaryTypes.String}, {Name: "n", Type: arrow.PrimitiveTypes.Uint64}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues([]string{"a", "a", "a"}, nil)
	b.Field(1).(*array.Uint64Builder).AppendValues([]uint64{18446744073709551615, 9223372036854775808, 5}, nil)
	rec := b.NewRecord()
	defer rec.Release()
	in := writeArrowRecord(t, dir, rec)
	cfg := loadConfigText(t, `dataset: u
columns:
  g: {role: insensitive, domain: [a]}
  n: {role: insensitive, type: integer}
dp:
  epsilon-total: 20000
  outputs:
    - {name: s, aggregate: {group-by: [g], column: n, stats: [sum], bounds: [0, 9]}, epsilon: 20000}
`)
	out := filepath.Join(dir, "out")
	if _, err := DP(context.Background(), cfg, Options{Input: in, Output: out}); err != nil {
		t.Fatal(err)
	}
	header, recs := readCSV(t, filepath.Join(out, "s.csv"))
	col := slices.Index(header, "sum")
	if col < 0 || len(recs) != 1 {
		t.Fatalf("aggregate %q %v", header, recs)
	}
	var sum float64
	if _, err := fmt.Sscan(recs[0][col], &sum); err != nil || math.Abs(sum-23) > 0.5 {
		t.Errorf("sum %q, want about 23 (9 + 9 + 5)", recs[0][col])
	}
}
