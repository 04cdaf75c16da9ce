package release

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/table"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// typedRecord is a table of a quasi-identifier zip and one insensitive column of each
// non-integer type the readers accept (TestIntegerTypesKept has the integers), with
// extreme values and nulls: decimals and binary included, which are passed through.
func typedRecord(t testing.TB) arrow.Record {
	t.Helper()
	paris := "Europe/Paris"
	fields := []arrow.Field{
		{Name: "zip", Type: arrow.BinaryTypes.String},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "f16", Type: arrow.FixedWidthTypes.Float16, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "d32", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "d64", Type: arrow.FixedWidthTypes.Date64, Nullable: true},
		{Name: "ts_s", Type: &arrow.TimestampType{Unit: arrow.Second, TimeZone: "UTC"}, Nullable: true},
		{Name: "ts_ms", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: paris}, Nullable: true},
		{Name: "ts_us", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
		{Name: "ts_ns", Type: &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "ls", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "dict", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, Nullable: true},
		{Name: "dec", Type: &arrow.Decimal128Type{Precision: 12, Scale: 3}, Nullable: true},
		{Name: "dec38", Type: &arrow.Decimal128Type{Precision: 38, Scale: 0}, Nullable: true},
		{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "lbin", Type: arrow.BinaryTypes.LargeBinary, Nullable: true},
		{Name: "fbin", Type: &arrow.FixedSizeBinaryType{ByteWidth: 3}, Nullable: true},
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	day := int64(86400000)
	for r := range 4 {
		b.Field(0).(*array.StringBuilder).Append("02139")
		if r == 3 { // a record of nulls
			for j := 1; j < len(fields); j++ {
				b.Field(j).AppendNull()
			}
			continue
		}
		f32 := []float32{0.1, -math.MaxFloat32, float32(math.Inf(1))}[r]
		b.Field(1).(*array.Float32Builder).Append(f32)
		b.Field(2).(*array.Float64Builder).Append([]float64{0.1, -1e300, math.SmallestNonzeroFloat64}[r])
		b.Field(3).(*array.Float16Builder).Append(float16.FromBits([]uint16{0x3800, 0xfbff, 0x0001}[r])) // 0.5, -65504, 2⁻²⁴
		b.Field(4).(*array.BooleanBuilder).Append(r == 1)
		b.Field(5).(*array.Date32Builder).Append(arrow.Date32([]int32{0, -719162, 2932896}[r]))
		b.Field(6).(*array.Date64Builder).Append(arrow.Date64([]int64{0, -719162 * day, 19000 * day}[r]))
		b.Field(7).(*array.TimestampBuilder).Append(arrow.Timestamp([]int64{0, -62135596800, 253402300799}[r]))
		b.Field(8).(*array.TimestampBuilder).Append(arrow.Timestamp([]int64{1, -62135596800000, 1700000000123}[r]))
		b.Field(9).(*array.TimestampBuilder).Append(arrow.Timestamp([]int64{-1, 1700000000123456, 42}[r]))
		b.Field(10).(*array.TimestampBuilder).Append(arrow.Timestamp([]int64{math.MinInt64 + 1, math.MaxInt64, 1700000000123456789}[r]))
		b.Field(11).(*array.StringBuilder).Append([]string{"", "é\"x,y\n", "plain"}[r])
		b.Field(12).(*array.LargeStringBuilder).Append([]string{"large", "", "ü"}[r])
		if err := b.Field(13).(*array.BinaryDictionaryBuilder).AppendString([]string{"red", "green", "red"}[r]); err != nil {
			t.Fatal(err)
		}
		b.Field(14).(*array.Decimal128Builder).Append(decimal128.FromI64([]int64{0, -999999999999, 1234567}[r])) // 0, −999999999.999, 1234.567
		max38, _ := decimal128.FromString("99999999999999999999999999999999999999", 38, 0)
		b.Field(15).(*array.Decimal128Builder).Append([]decimal128.Num{max38, max38.Negate(), decimal128.FromI64(1)}[r])
		b.Field(16).(*array.BinaryBuilder).Append([][]byte{{}, {0, 0xff, '\n', ','}, []byte("text")}[r])
		b.Field(17).(*array.BinaryBuilder).Append([][]byte{{0x80}, {}, {1, 2, 3}}[r])
		b.Field(18).(*array.FixedSizeBinaryBuilder).Append([][]byte{{0, 0, 0}, {0xff, 0xfe, 0xfd}, []byte("abc")}[r])
	}
	return b.NewRecord()
}

// TestTypesRoundTrip: every non-integer type the readers accept, nulls included, is
// released from Parquet and Arrow inputs into Parquet and Arrow with its type (unit and
// time zone, width, string kind; a dictionary-encoded column as its values) and its values exactly, as the
// Arrow project's readers read them (through Parquet, date64 is a date32 and a
// timestamp in seconds one in milliseconds: Parquet has neither); the release verifies
// and Check passes.
func TestTypesRoundTrip(t *testing.T) {
	dir := t.TempDir()
	rec := typedRecord(t)
	defer rec.Release()
	inputs := map[string]string{"parquet": filepath.Join(dir, "in.parquet"), "arrow": writeArrowRecord(t, dir, rec)}
	testfiles.WriteArrowParquet(t, inputs["parquet"], rec, nil, pqarrow.WithStoreSchema()) // the types read back are rec's
	text := "columns:\n  zip: {role: quasi, hierarchy: {mask: {max: 5}}}\n"
	for _, f := range rec.Schema().Fields()[1:] {
		text += "  " + f.Name + ": {role: insensitive}\n"
	}
	cfg := loadConfigText(t, text+"privacy: {k: 2}\n")
	for inFmt, in := range inputs {
		for _, outFmt := range []string{"parquet", "arrow"} {
			t.Run(inFmt+"→"+outFmt, func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "r."+outFmt)
				if _, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
					t.Fatalf("release: %v", err)
				}
				if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
					t.Fatalf("check: %v", err)
				}
				var tbl arrow.Table
				if outFmt == "parquet" {
					tbl = testfiles.ReadWithPqarrow(t, out)
				} else {
					tbl, _ = readArrowIPC(t, out, false)
				}
				defer tbl.Release()
				// Parquet has neither date64 nor seconds: through Parquet, the table is
				// what the Arrow project's reader reads of it in Parquet.
				want := array.NewTableFromRecords(rec.Schema(), []arrow.Record{rec})
				if inFmt == "parquet" || outFmt == "parquet" {
					want = testfiles.ReadWithPqarrow(t, inputs["parquet"])
				}
				defer want.Release()
				compareColumns(t, want, tbl)
			})
		}
	}
}

// compareColumns checks that every column of want but the first has got's column of
// the same position's name, type and values; a dictionary-encoded column of want is
// released as its values (its dictionary may hold values no released record holds).
func compareColumns(t *testing.T, want, got arrow.Table) {
	t.Helper()
	for j := 1; j < int(want.NumCols()); j++ {
		wc, gc := want.Column(j), got.Column(j)
		wt := wc.DataType()
		if d, ok := wt.(*arrow.DictionaryType); ok {
			wt = d.ValueType
		}
		if gc.Name() != wc.Name() || !arrow.TypeEqual(gc.DataType(), wt) {
			t.Errorf("column %d: %s of type %s, want %s of type %s", j, gc.Name(), gc.DataType(), wc.Name(), wt)
			continue
		}
		g, err := array.Concatenate(gc.Data().Chunks(), memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		w, err := array.Concatenate(wc.Data().Chunks(), memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := w.(*array.Dictionary); ok {
			w = dictionaryValues(t, d)
		}
		if !array.Equal(g, w) {
			t.Errorf("column %s: %v, want %v", wc.Name(), g, w)
		}
		g.Release()
		w.Release()
	}
}

// dictionaryValues is the string values of a dictionary array of strings, a null
// where the index or the value is one.
func dictionaryValues(t *testing.T, d *array.Dictionary) arrow.Array {
	t.Helper()
	dict, ok := d.Dictionary().(*array.String)
	if !ok {
		t.Fatalf("a dictionary of %s", d.Dictionary().DataType())
	}
	b := array.NewStringBuilder(memory.DefaultAllocator)
	defer b.Release()
	for i := range d.Len() {
		if d.IsNull(i) || dict.IsNull(d.GetValueIndex(i)) {
			b.AppendNull()
			continue
		}
		b.Append(dict.Value(d.GetValueIndex(i)))
	}
	return b.NewArray()
}

// TestUnixNano: the nanosecond count of a time reaches both ends of the int64 range
// and no further.
func TestUnixNano(t *testing.T) {
	for _, c := range []struct {
		t    time.Time
		want int64
		ok   bool
	}{
		{time.Unix(0, math.MaxInt64), math.MaxInt64, true},
		{time.Unix(0, math.MinInt64), math.MinInt64, true},
		{time.Unix(0, math.MaxInt64).Add(1), 0, false},
		{time.Unix(0, math.MinInt64).Add(-1), 0, false},
		{time.Unix(-1, 5), -999999995, true},
		{time.Unix(1, 5), 1000000005, true},
		{time.Unix(-9223372037, 0), 0, false},
		{time.Unix(9223372037, 0), 0, false},
	} {
		if got, ok := table.UnixNano(c.t); got != c.want || ok != c.ok {
			t.Errorf("unixNano(%v) = %d, %v; want %d, %v", c.t, got, ok, c.want, c.ok)
		}
	}
}

// TestPassOnlyNeedsBinaryRelease: a column whose values have no text form (decimals,
// binary) cannot go into a CSV release: bad input naming the column, nothing written;
// as a quasi-identifier it is refused whatever the output.
func TestPassOnlyNeedsBinaryRelease(t *testing.T) {
	dir := t.TempDir()
	rec := typedRecord(t)
	defer rec.Release()
	in := writeArrowRecord(t, dir, rec)
	text := "columns:\n  zip: {role: quasi, hierarchy: {mask: {max: 5}}}\n"
	for _, f := range rec.Schema().Fields()[1:] {
		text += "  " + f.Name + ": {role: insensitive}\n"
	}
	cfg := loadConfigText(t, text+"privacy: {k: 2}\n")
	out := filepath.Join(dir, "r.csv")
	_, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
	if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), `"dec"`) || !strings.Contains(err.Error(), "Parquet or Arrow") {
		t.Errorf("a decimal into CSV: %v, want bad input naming the column", err)
	}
	if _, serr := os.Stat(out); !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("%s was written", out)
	}
	cfg = loadConfigText(t, testfiles.Replace(t, text, "bin: {role: insensitive}", "bin: {role: quasi, hierarchy: {mask: {max: 2}}}")+"privacy: {k: 2}\n")
	_, err = Release(context.Background(), cfg, job.Options{Input: in, Output: filepath.Join(dir, "r.parquet")})
	if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), `"bin"`) || !strings.Contains(err.Error(), "only be passed through") {
		t.Errorf("a binary quasi-identifier: %v, want bad input naming the column", err)
	}
}
