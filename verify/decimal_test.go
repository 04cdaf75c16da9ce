package verify

import (
	"math/big"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"sanitizer/internal/testfiles"
)

// TestDecimalText: the exact text of a decimal at every scale, both signs, and the
// two's complement of big-endian bytes of any length.
func TestDecimalText(t *testing.T) {
	for _, tc := range []struct {
		unscaled string
		scale    int
		want     string
	}{
		{"0", 0, "0"}, {"0", 3, "0.000"}, {"5", 3, "0.005"}, {"-50", 3, "-0.050"},
		{"1234567", 3, "1234.567"}, {"-999999999999", 3, "-999999999.999"},
		{"99999999999999999999999999999999999999", 0, "99999999999999999999999999999999999999"},
		{"-1", 38, "-0.00000000000000000000000000000000000001"},
		{"7", -2, "700"},
	} {
		u, _ := new(big.Int).SetString(tc.unscaled, 10)
		if got := decimalText(u, tc.scale); got != tc.want {
			t.Errorf("%s at scale %d: %q, want %q", tc.unscaled, tc.scale, got, tc.want)
		}
	}
	for _, tc := range []struct {
		b    []byte
		want int64
	}{
		{nil, 0}, {[]byte{0x7f}, 127}, {[]byte{0x80}, -128}, {[]byte{0xff, 0xff}, -1},
		{[]byte{0x00, 0xff}, 255}, {[]byte{0xff, 0x00}, -256}, {[]byte{0x01, 0x00, 0x00}, 65536},
	} {
		if got := twosComplement(tc.b); got.Int64() != tc.want {
			t.Errorf("%x: %s, want %d", tc.b, got, tc.want)
		}
	}
}

// TestParquetDecimalsAndBinary reads decimals stored as INT32, INT64 and
// FIXED_LEN_BYTE_ARRAY, and binary and fixed-size binary, written by the Arrow
// project's writer, as the exact decimal text and the bytes as they are.
func TestParquetDecimalsAndBinary(t *testing.T) {
	fields := []arrow.Field{
		{Name: "d9", Type: &arrow.Decimal128Type{Precision: 9, Scale: 2}, Nullable: true},
		{Name: "d18", Type: &arrow.Decimal128Type{Precision: 18, Scale: 4}, Nullable: true},
		{Name: "d30", Type: &arrow.Decimal128Type{Precision: 30, Scale: 5}, Nullable: true},
		{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "fix", Type: &arrow.FixedSizeBinaryType{ByteWidth: 2}, Nullable: true},
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	big30, _ := decimal128.FromString("-1234567890123456789012345.67891", 30, 5)
	b.Field(0).(*array.Decimal128Builder).AppendValues([]decimal128.Num{decimal128.FromI64(-5), decimal128.FromI64(999999999), decimal128.FromI64(0)}, []bool{true, true, false})
	b.Field(1).(*array.Decimal128Builder).AppendValues([]decimal128.Num{decimal128.FromI64(-1), decimal128.FromI64(123456789012345678), decimal128.FromI64(10)}, nil)
	b.Field(2).(*array.Decimal128Builder).AppendValues([]decimal128.Num{big30, big30.Negate(), decimal128.FromI64(1)}, nil)
	b.Field(3).(*array.BinaryBuilder).AppendValues([][]byte{{0, 1, 0xff}, {}, nil}, []bool{true, true, false})
	b.Field(4).(*array.FixedSizeBinaryBuilder).AppendValues([][]byte{{0xff, 0}, []byte("ab"), {0, 0}}, nil)
	rec := b.NewRecord()
	defer rec.Release()
	want := [][]string{
		{"-0.05", "-0.0001", "-1234567890123456789012345.67891", "\x00\x01\xff", "\xff\x00"},
		{"9999999.99", "12345678901234.5678", "1234567890123456789012345.67891", "", "ab"},
		{"\x00", "0.0010", "0.00001", "\x00", "\x00\x00"},
	}
	for _, asInt := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "d.parquet")
		var aprops []pqarrow.WriterOption
		var props []parquet.WriterProperty
		if asInt {
			props = append(props, parquet.WithStoreDecimalAsInteger(true))
		}
		testfiles.WriteArrowParquet(t, path, rec, props, aprops...)
		if got := physicalTypes(t, path); asInt && !slices.Equal(got[:3], []string{"INT32", "INT64", "FIXED_LEN_BYTE_ARRAY"}) ||
			!asInt && !slices.Equal(got[:3], []string{"FIXED_LEN_BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"}) {
			t.Fatalf("decimals as integers %v: stored as %v", asInt, got)
		}
		f, err := OpenParquet(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range f.Columns() {
			if c.Unsupported != "" {
				t.Errorf("column %s: unsupported %s", c.Name, c.Unsupported)
			}
		}
		f.Close()
		got, err := readPQ(t, path, allColumns(len(fields)))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("decimals as integers %v:\n got %q\nwant %q", asInt, got, want)
		}
	}
}

// physicalTypes is the physical type of every leaf column of a Parquet file, as the
// Arrow project's reader reads the footer.
func physicalTypes(t *testing.T, path string) []string {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	sc := rdr.MetaData().Schema
	out := make([]string, sc.NumColumns())
	for i := range out {
		out[i] = sc.Column(i).PhysicalType().String()
	}
	return out
}
