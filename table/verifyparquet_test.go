package table

import (
	"context"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"sanitizer/internal/testfiles"
	"sanitizer/schema"
	"sanitizer/verify"
)

// The verifier decodes Parquet with its own decoder (verify.OpenParquet, on
// github.com/parquet-go/parquet-go). These tests write files of every type the
// pipeline reads, with the Arrow project's writer, with the table package's own sink
// (github.com/xitongsys/parquet-go) and with annotations only older writers use, and
// check that the two decoders read the same text and the same nulls.

// pqCol is a column of a test table: its values (nil for a null) in its builder's Go
// type.
type pqCol struct {
	name string
	typ  arrow.DataType
	vals []any
}

// pqRecord builds a record of the columns (all as long as the first).
func pqRecord(t testing.TB, cols []pqCol) arrow.Record {
	t.Helper()
	fields := make([]arrow.Field, len(cols))
	for j, c := range cols {
		fields[j] = arrow.Field{Name: c.name, Type: c.typ, Nullable: slices.Contains(c.vals, nil)}
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	for j, c := range cols {
		for _, v := range c.vals {
			appendAny(t, b.Field(j), v)
		}
	}
	return b.NewRecord()
}

// appendAny appends v (nil: a null) to b.
func appendAny(t testing.TB, b array.Builder, v any) {
	t.Helper()
	if v == nil {
		b.AppendNull()
		return
	}
	switch b := b.(type) {
	case *array.Int8Builder:
		b.Append(int8(v.(int)))
	case *array.Int16Builder:
		b.Append(int16(v.(int)))
	case *array.Int32Builder:
		b.Append(int32(v.(int)))
	case *array.Int64Builder:
		b.Append(int64(v.(int)))
	case *array.Uint8Builder:
		b.Append(uint8(v.(int)))
	case *array.Uint16Builder:
		b.Append(uint16(v.(int)))
	case *array.Uint32Builder:
		b.Append(uint32(v.(int)))
	case *array.Uint64Builder:
		b.Append(v.(uint64))
	case *array.Float16Builder:
		b.Append(float16.FromBits(v.(uint16)))
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
	case *array.BinaryDictionaryBuilder:
		if err := b.AppendString(v.(string)); err != nil {
			t.Fatal(err)
		}
	case *array.Date32Builder:
		b.Append(arrow.Date32(v.(int)))
	case *array.Date64Builder:
		b.Append(arrow.Date64(v.(int)))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(v.(int)))
	default:
		t.Fatalf("builder %T", b)
	}
}

// readVerifier reads columns cols of path with the verifier's decoder.
func readVerifier(t testing.TB, path string, cols []int) ([]verify.ParquetColumn, [][]cell, error) {
	t.Helper()
	f, err := verify.OpenParquet(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	r, err := f.Records(context.Background(), cols)
	if err != nil {
		return f.Columns(), nil, err
	}
	defer r.Close()
	var recs [][]cell
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return f.Columns(), recs, nil
		}
		if err != nil {
			return f.Columns(), recs, err
		}
		nulls := r.Nulls()
		out := make([]cell, len(rec))
		for j, v := range rec {
			out[j] = cell{text: v, null: nulls != nil && nulls[j]}
		}
		recs = append(recs, out)
	}
}

// sameAsPipeline reads every column the pipeline can read of the file at path with
// both decoders and fails where they differ: in the columns, their types, a value or a
// null. It returns the records read.
func sameAsPipeline(t *testing.T, path string) [][]cell {
	t.Helper()
	src, err := Open(path, "parquet", schema.CSV{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var cols []int
	for i, c := range src.Columns() {
		if c.Unsupported == "" {
			cols = append(cols, i)
		}
	}
	want, err := readAll(t, src, cols)
	if err != nil {
		t.Fatal(err)
	}
	vcols, got, err := readVerifier(t, path, cols)
	if err != nil {
		t.Fatal(err)
	}
	if len(vcols) != len(src.Columns()) {
		t.Fatalf("the verifier sees %d columns, the pipeline %d", len(vcols), len(src.Columns()))
	}
	for i, c := range src.Columns() {
		v := vcols[i]
		if v.Name != c.Name || (v.Unsupported == "") != (c.Unsupported == "") || (c.Unsupported == "" && v.Type != c.Type) {
			t.Errorf("column %d: verifier %+v, pipeline %+v", i, v, c)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("the verifier reads %d records, the pipeline %d", len(got), len(want))
	}
	bad := 0
	for r := range want {
		for j := range want[r] {
			if got[r][j] != want[r][j] {
				if bad++; bad <= 10 {
					t.Errorf("record %d, column %q: verifier %+v, pipeline %+v", r, src.Columns()[cols[j]].Name, got[r][j], want[r][j])
				}
			}
		}
	}
	return want
}

// nullEvery returns vals with every k-th value null.
func nullEvery(k int, vals []any) []any {
	out := slices.Clone(vals)
	for i := 0; i < len(out); i += k {
		out[i] = nil
	}
	return out
}

// repeat returns n values cycling through vals.
func repeat(n int, vals ...any) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = vals[i%len(vals)]
	}
	return out
}

// Values of every type at their extremes, one column per type (each as long as
// pqN).
const pqN = 12

func pqInts() []pqCol {
	return []pqCol{
		{"i8", arrow.PrimitiveTypes.Int8, repeat(pqN, math.MinInt8, math.MaxInt8, 0, -1)},
		{"i16", arrow.PrimitiveTypes.Int16, repeat(pqN, math.MinInt16, math.MaxInt16, 0, -1)},
		{"i32", arrow.PrimitiveTypes.Int32, repeat(pqN, math.MinInt32, math.MaxInt32, 0, -1)},
		{"i64", arrow.PrimitiveTypes.Int64, repeat(pqN, math.MinInt64, math.MaxInt64, 0, -1)},
		{"u8", arrow.PrimitiveTypes.Uint8, repeat(pqN, 0, math.MaxUint8, 128, 127)},
		{"u16", arrow.PrimitiveTypes.Uint16, repeat(pqN, 0, math.MaxUint16, 32768, 32767)},
		{"u32", arrow.PrimitiveTypes.Uint32, repeat(pqN, 0, math.MaxUint32, 1<<31, 1<<31-1)},
		{"u64", arrow.PrimitiveTypes.Uint64, repeat(pqN, uint64(0), uint64(math.MaxUint64), uint64(1<<63), uint64(1<<63-1))},
		{"i8n", arrow.PrimitiveTypes.Int8, nullEvery(3, repeat(pqN, math.MinInt8, math.MaxInt8, 0))},
		{"u64n", arrow.PrimitiveTypes.Uint64, nullEvery(2, repeat(pqN, uint64(math.MaxUint64), uint64(1<<63)))},
	}
}

func pqFloats() []pqCol {
	nan32, inf32 := float32(math.NaN()), float32(math.Inf(1))
	return []pqCol{
		{"f32", arrow.PrimitiveTypes.Float32, repeat(pqN, float32(0.1), nan32, inf32, -inf32, float32(0), float32(math.Copysign(0, -1)),
			float32(math.MaxFloat32), float32(math.SmallestNonzeroFloat32), float32(1.17549435e-38), float32(1e21), float32(-123.456))},
		{"f64", arrow.PrimitiveTypes.Float64, repeat(pqN, 0.1, math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1),
			math.MaxFloat64, math.SmallestNonzeroFloat64, 1e21, 123456789.125, 1.0/3)},
		// half precision: 0.1 (0x2e66), 65504, -2, NaN, +Inf, -Inf, 0, -0, the smallest normal
		{"f16", arrow.FixedWidthTypes.Float16, repeat(pqN, uint16(0x2e66), uint16(0x7bff), uint16(0xc000), uint16(0x7e00),
			uint16(0x7c00), uint16(0xfc00), uint16(0), uint16(0x8000), uint16(0x0400), uint16(0x3c01))},
		{"f64n", arrow.PrimitiveTypes.Float64, nullEvery(4, repeat(pqN, 2.5, math.NaN()))},
	}
}

func pqTimes() []pqCol {
	ts := func(unit arrow.TimeUnit, tz string) arrow.DataType {
		return &arrow.TimestampType{Unit: unit, TimeZone: tz}
	}
	return []pqCol{
		{"b", arrow.FixedWidthTypes.Boolean, repeat(pqN, true, false, false)},
		{"bn", arrow.FixedWidthTypes.Boolean, nullEvery(5, repeat(pqN, true, false))},
		{"d32", arrow.FixedWidthTypes.Date32, repeat(pqN, -719162, -1, 0, 19782, 2932896, 11016)},
		{"d64", arrow.FixedWidthTypes.Date64, repeat(pqN, -86400000, 0, 1709164800000)},
		{"ts_ms_utc", ts(arrow.Millisecond, "UTC"), repeat(pqN, -1, 0, 1700000000123, -62135596800000)},
		{"ts_ms", ts(arrow.Millisecond, ""), repeat(pqN, -1, 1, 253402300799999)},
		{"ts_us_utc", ts(arrow.Microsecond, "UTC"), repeat(pqN, -1, 1, 1700000000123456)},
		{"ts_us", ts(arrow.Microsecond, ""), repeat(pqN, math.MinInt64/1000, 0, 1700000000000001)},
		{"ts_ns_utc", ts(arrow.Nanosecond, "UTC"), repeat(pqN, math.MinInt64, math.MaxInt64, -1, 1)},
		{"ts_ns", ts(arrow.Nanosecond, ""), repeat(pqN, 1700000000123456789, -1, 0)},
		{"ts_s_zurich", ts(arrow.Second, "Europe/Zurich"), repeat(pqN, -1, 1700000000)},
		{"tsn", ts(arrow.Millisecond, "UTC"), nullEvery(2, repeat(pqN, 5))},
	}
}

func pqStrings() []pqCol {
	long := strings.Repeat("long value ", 1000)
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	return []pqCol{
		{"s", arrow.BinaryTypes.String, repeat(pqN, "", "héllo, \"world\"\n", "日本語", long, "a", " ")},
		{"sn", arrow.BinaryTypes.String, nullEvery(3, repeat(pqN, "", "x", "Zürich"))},
		{"ls", arrow.BinaryTypes.LargeString, repeat(pqN, "large", "", "ß")},
		{"dict", dict, repeat(pqN, "F", "M", "", "F")},
		{"dictn", dict, nullEvery(2, repeat(pqN, "a", "b"))},
	}
}

// pqRandom is n pseudo-random records of several types, with repeats and nulls, for
// files of many pages and row groups.
func pqRandom(n int) []pqCol {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"", "a", "b", "Zürich", "日本", strings.Repeat("w", 300)}
	cols := []pqCol{
		{"i32", arrow.PrimitiveTypes.Int32, nil}, {"u64", arrow.PrimitiveTypes.Uint64, nil},
		{"i64n", arrow.PrimitiveTypes.Int64, nil}, {"f32", arrow.PrimitiveTypes.Float32, nil},
		{"f64", arrow.PrimitiveTypes.Float64, nil}, {"b", arrow.FixedWidthTypes.Boolean, nil},
		{"d", arrow.FixedWidthTypes.Date32, nil}, {"ts", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, nil},
		{"s", arrow.BinaryTypes.String, nil}, {"sn", arrow.BinaryTypes.String, nil},
	}
	for range n {
		var i64 any = rng.Int()
		if rng.IntN(7) == 0 {
			i64 = nil
		}
		var sn any = words[rng.IntN(len(words))] + words[rng.IntN(len(words))]
		if rng.IntN(3) == 0 {
			sn = nil
		}
		vals := []any{rng.IntN(1000) - 500, rng.Uint64(), i64, float32(rng.NormFloat64()), float64(rng.IntN(100)) / 8,
			rng.IntN(2) == 0, rng.IntN(40000) - 20000, rng.IntN(1 << 52), words[rng.IntN(len(words))], sn}
		for j := range cols {
			cols[j].vals = append(cols[j].vals, vals[j])
		}
	}
	return cols
}

// TestVerifierParquetSameAsPipeline writes every type the pipeline reads, in the ways
// the Arrow project's writer can, and reads each file with both decoders.
func TestVerifierParquetSameAsPipeline(t *testing.T) {
	all := slices.Concat(pqInts(), pqFloats(), pqTimes(), pqStrings())
	random := pqRandom(3000)
	v2 := parquet.WithDataPageVersion(parquet.DataPageV2)
	noDict := parquet.WithDictionaryDefault(false)
	cases := []struct {
		name   string
		cols   []pqCol
		props  []parquet.WriterProperty
		aprops []pqarrow.WriterOption
		uses   []string // what the file must hold (chunkFeatures)
	}{
		{name: "integers", cols: pqInts()},
		{name: "floats", cols: pqFloats()},
		{name: "booleans, dates, timestamps", cols: pqTimes()},
		{name: "strings", cols: pqStrings()},
		{name: "with the Arrow schema", cols: all, aprops: []pqarrow.WriterOption{pqarrow.WithStoreSchema()}},
		{name: "INT96 timestamps", cols: pqTimes(), aprops: []pqarrow.WriterOption{pqarrow.WithDeprecatedInt96Timestamps(true)}, uses: []string{"INT96"}},
		{name: "plain, snappy, v1", cols: all, props: []parquet.WriterProperty{noDict, parquet.WithCompression(compress.Codecs.Snappy)}, uses: []string{"SNAPPY", "PLAIN"}},
		{name: "dictionary, zstd, v2", cols: all, props: []parquet.WriterProperty{v2, parquet.WithCompression(compress.Codecs.Zstd)}, uses: []string{"dictionary", "ZSTD", "FIXED_LEN_BYTE_ARRAY"}},
		{name: "gzip, v2, no dictionary", cols: all, props: []parquet.WriterProperty{v2, noDict, parquet.WithCompression(compress.Codecs.Gzip)}},
		{name: "lz4 raw", cols: all, props: []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Lz4Raw)}, uses: []string{"LZ4_RAW"}},
		{name: "brotli", cols: all, props: []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Brotli)}, uses: []string{"BROTLI"}},
		{name: "random, small pages and row groups", cols: random, props: []parquet.WriterProperty{
			parquet.WithDataPageSize(512), parquet.WithMaxRowGroupLength(700), parquet.WithCompression(compress.Codecs.Snappy)}},
		{name: "random, v2, small pages, dictionary page limit", cols: random, props: []parquet.WriterProperty{
			v2, parquet.WithDataPageSize(300), parquet.WithDictionaryPageSizeLimit(200), parquet.WithMaxRowGroupLength(1000)}},
		{name: "random, delta and byte stream split encodings", cols: random, props: []parquet.WriterProperty{
			noDict, v2, parquet.WithDataPageSize(1000),
			parquet.WithEncodingFor("i32", parquet.Encodings.DeltaBinaryPacked), parquet.WithEncodingFor("u64", parquet.Encodings.DeltaBinaryPacked),
			parquet.WithEncodingFor("i64n", parquet.Encodings.DeltaBinaryPacked), parquet.WithEncodingFor("d", parquet.Encodings.DeltaBinaryPacked),
			parquet.WithEncodingFor("ts", parquet.Encodings.DeltaBinaryPacked), parquet.WithEncodingFor("s", parquet.Encodings.DeltaByteArray),
			parquet.WithEncodingFor("sn", parquet.Encodings.DeltaLengthByteArray), parquet.WithEncodingFor("f32", parquet.Encodings.ByteStreamSplit),
			parquet.WithEncodingFor("f64", parquet.Encodings.ByteStreamSplit)},
			uses: []string{"DELTA_BINARY_PACKED", "DELTA_BYTE_ARRAY", "DELTA_LENGTH_BYTE_ARRAY", "BYTE_STREAM_SPLIT"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := pqRecord(t, tc.cols)
			defer rec.Release()
			path := filepath.Join(t.TempDir(), "t.parquet")
			testfiles.WriteArrowParquet(t, path, rec, tc.props, tc.aprops...)
			if got := sameAsPipeline(t, path); len(got) != int(rec.NumRows()) {
				t.Fatalf("%d records, want %d", len(got), rec.NumRows())
			}
			have := chunkFeatures(t, path)
			for _, u := range tc.uses {
				if !have[u] {
					t.Errorf("the file has no %s (it has %v)", u, have)
				}
			}
		})
	}
}

// chunkFeatures is what the column chunks of a Parquet file use, as the Arrow
// project's reader sees them: physical types, codecs, encodings, and "dictionary".
func chunkFeatures(t *testing.T, path string) map[string]bool {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	have := map[string]bool{}
	for g := range rdr.NumRowGroups() {
		rg := rdr.MetaData().RowGroup(g)
		for j := range rg.NumColumns() {
			cc, err := rg.ColumnChunk(j)
			if err != nil {
				t.Fatal(err)
			}
			have[cc.Type().String()], have[strings.ToUpper(cc.Compression().String())] = true, true
			for _, e := range cc.Encodings() {
				have[e.String()] = true
			}
			if cc.HasDictionaryPage() {
				have["dictionary"] = true
			}
		}
	}
	return have
}

// TestVerifierParquetReleases reads files of the table package's own Parquet sink: the
// types a release writes (every integer width and signedness, floats, booleans, dates,
// timestamps, strings; nullable or not) over many pages.
func TestVerifierParquetReleases(t *testing.T) {
	cols := slices.Clone(typedCols)
	recs := slices.Clone(typedRecs)
	for _, c := range testfiles.IntColumns {
		it := arrowIntType(c.Type)
		cols = append(cols, OutColumn{Name: c.Name, Type: schema.Integer, Ints: it}, OutColumn{Name: c.Name + "n", Type: schema.Integer, Ints: it, Nullable: true})
		for r := range recs {
			v := c.Vals[r%len(c.Vals)]
			recs[r] = append(slices.Clone(recs[r]), v, map[bool]string{true: "\x00", false: v}[r%2 == 1])
		}
	}
	// Enough records for many pages.
	for len(recs) < 60000 {
		r := slices.Clone(recs[len(recs)%len(typedRecs)])
		r[0] = strings.Repeat("s", len(recs)%50) + FormatInt(int64(len(recs)))
		r[1] = FormatInt(int64(len(recs)) * 7919)
		recs = append(recs, r)
	}
	path := filepath.Join(t.TempDir(), "release.parquet")
	writeParquet(t, path, cols, recs, map[string]string{"sanitize.k": "5"})
	got := sameAsPipeline(t, path)
	if len(got) != len(recs) {
		t.Fatalf("%d records, want %d", len(got), len(recs))
	}
	f, err := verify.OpenParquet(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if md := f.Metadata(); md["sanitize.k"] != "5" {
		t.Errorf("metadata %v", md)
	}
}

// TestVerifierParquetConvertedTypes reads a file whose columns carry only the
// converted types older writers give them (INT_8 … UINT_64, DATE, TIMESTAMP_MILLIS and
// _MICROS, UTF8), no logical type: testdata/converted-types.parquet, written once by
// github.com/xitongsys/parquet-go v1.6.2 (which this tool used to write Parquet with;
// the Arrow project's writer always adds the logical type). Its columns, all REQUIRED,
// and three records:
//
//	int8    INT32 INT_8      -128, 127, 0
//	int16   INT32 INT_16     -32768, 32767, 1
//	int32   INT32 INT_32     MinInt32, MaxInt32, 2
//	int64   INT64 INT_64     MinInt64, MaxInt64, 3
//	uint8   INT32 UINT_8     255, 0, 4
//	uint16  INT32 UINT_16    65535, 0, 5
//	uint32  INT32 UINT_32    bits of -1, MinInt32, 6
//	uint64  INT64 UINT_64    bits of -1, MinInt64, 7
//	plain32 INT32            -5, 5, 0
//	plain64 INT64            -5, 5, 0
//	date    INT32 DATE       -719162, 0, 19782
//	ts_ms   INT64 TIMESTAMP_MILLIS  -1, 1700000000123, 0
//	ts_us   INT64 TIMESTAMP_MICROS  -1, 1700000000123456, 0
//	utf8    BYTE_ARRAY UTF8  "", "héllo", "x"
//	float   FLOAT            0.1, -1, +Inf
func TestVerifierParquetConvertedTypes(t *testing.T) {
	got := sameAsPipeline(t, filepath.Join("testdata", "converted-types.parquet"))
	want := [][]string{
		{"-128", "-32768", "-2147483648", "-9223372036854775808", "255", "65535", "4294967295",
			"18446744073709551615", "-5", "-5", "0001-01-01", "1969-12-31T23:59:59.999Z", "1969-12-31T23:59:59.999999Z", "", "0.1"},
		{"127", "32767", "2147483647", "9223372036854775807", "0", "0", "2147483648",
			"9223372036854775808", "5", "5", "1970-01-01", "2023-11-14T22:13:20.123Z", "2023-11-14T22:13:20.123456Z", "héllo", "-1"},
	}
	for r, rec := range want {
		for j, w := range rec {
			if got[r][j].text != w {
				t.Errorf("record %d column %d: %q, want %q", r, j, got[r][j].text, w)
			}
		}
	}
}

// TestVerifierParquetFloat16Subnormals: half-precision numbers too small to be normal
// read as their exact value, by the verifier's decoder and by the table package's reader
// (which converts them itself: the Arrow project's float16 conversion maps them to
// other numbers).
func TestVerifierParquetFloat16Subnormals(t *testing.T) {
	bits := []any{uint16(0x0001), uint16(0x03ff), uint16(0x8001), uint16(0x0200)}
	want := []string{"5.9604645e-08", "6.097555e-05", "-5.9604645e-08", "3.0517578e-05"}
	rec := pqRecord(t, []pqCol{{"f16", arrow.FixedWidthTypes.Float16, bits}})
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "f16.parquet")
	testfiles.WriteArrowParquet(t, path, rec, nil)
	_, got, err := readVerifier(t, path, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	src, err := Open(path, "parquet", schema.CSV{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	arrowRead, err := readAll(t, src, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		if got[i][0].text != w {
			t.Errorf("0x%04x: %q, want %q", bits[i], got[i][0].text, w)
		}
		if arrowRead[i][0].text != w {
			t.Errorf("0x%04x: the table package's reader gives %q, want %q", bits[i], arrowRead[i][0].text, w)
		}
	}
}
