package table

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/schema"
)

// cell is a value as the sources deliver it: canonical text, or null.
type cell struct {
	text string
	null bool
}

// readAll streams the projected columns of src and returns its records.
func readAll(t testing.TB, src Source, cols []int) ([][]cell, error) {
	return readAllAs(t, src, cols, nil)
}

// readAllAs is readAll with the columns in the forms as gives; a column given as keys
// reads as its keys' text (Column.KeyText), one given as dictionary indexes as its
// values.
func readAllAs(t testing.TB, src Source, cols []int, as []Form) ([][]cell, error) {
	t.Helper()
	out := make(chan *Batch, 2)
	errc := make(chan error, 1)
	go func() { errc <- StreamAs(context.Background(), src, cols, as, out) }()
	var recs [][]cell
	next := 0
	for b := range out {
		if b.First != next {
			t.Errorf("batch starts at record %d, want %d", b.First, next)
		}
		if len(b.Fields) != b.N*b.Width || b.Width != len(cols) {
			t.Errorf("batch of %d records, width %d, has %d fields", b.N, b.Width, len(b.Fields))
		}
		next += b.N
		for i := range b.N {
			rec := make([]cell, b.Width)
			for j := range b.Width {
				rec[j] = cell{text: b.Fields[i*b.Width+j], null: b.Null(i, j)}
				switch {
				case rec[j].null:
				case b.Dict != nil && b.Dict[j] != nil:
					rec[j].text = b.Dict[j][b.Index[j][i]]
				case b.Keys != nil && b.Keys[j] != nil:
					rec[j].text = src.Columns()[cols[j]].KeyText(b.Keys[j][i])
				}
			}
			recs = append(recs, rec)
		}
	}
	return recs, <-errc
}

// writeParquet writes records (canonical text, "\x00" for null) with the parquet sink.
func writeParquet(t testing.TB, path string, cols []OutColumn, recs [][]string, meta map[string]string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := newParquetSink(f, cols, meta)
	if err != nil {
		t.Fatal(err)
	}
	var fields []string
	var nulls []bool
	for _, r := range recs {
		for _, v := range r {
			fields = append(fields, v)
			nulls = append(nulls, v == "\x00")
		}
	}
	if err := s.Write(fields, nulls, len(recs)); err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(); err != nil {
		t.Fatal(err)
	}
}

var typedCols = []OutColumn{
	{Name: "s", Type: schema.String, Nullable: true},
	{Name: "i", Type: schema.Integer, Nullable: true},
	{Name: "f", Type: schema.Float, Nullable: true},
	{Name: "b", Type: schema.Boolean, Nullable: true},
	{Name: "d", Type: schema.Date, Nullable: true},
	{Name: "ts", Type: schema.Timestamp, Nullable: true},
	{Name: "req", Type: schema.String},
}

var typedRecs = [][]string{
	{"héllo, \"world\"\n", "-9223372036854775808", "0.1", "true", "1969-12-31", "1969-12-31T23:59:59.999999999Z", "a"},
	{"", "9223372036854775807", "-1e+300", "false", "2024-02-29", "2024-02-29T13:05:00.5Z", ""},
	{"\x00", "\x00", "\x00", "\x00", "\x00", "\x00", "c"},
	{"x", "0", "NaN", "true", "0001-01-01", "1970-01-01T00:00:00Z", "d"},
}

func TestParquetRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.parquet")
	writeParquet(t, path, typedCols, typedRecs, map[string]string{"sanitize.k": "5"})
	src, err := openParquet(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var wantCols []Column
	for _, c := range typedCols {
		wantCols = append(wantCols, Column{Name: c.Name, Type: c.Type})
	}
	if got := typesOnly(src.Columns()); !slices.EqualFunc(got, wantCols, sameColumn) {
		t.Fatalf("columns %v, want %v", got, wantCols)
	}
	all := []int{0, 1, 2, 3, 4, 5, 6}
	recs, err := readAll(t, src, all)
	if err != nil {
		t.Fatal(err)
	}
	check := func(recs [][]cell, cols []int) {
		t.Helper()
		if len(recs) != len(typedRecs) {
			t.Fatalf("%d records, want %d", len(recs), len(typedRecs))
		}
		for r, rec := range recs {
			for j, c := range cols {
				want := typedRecs[r][c]
				if got := rec[j]; got.null != (want == "\x00") || (!got.null && got.text != want) {
					t.Errorf("record %d column %s: got %+v, want %q", r, typedCols[c].Name, got, want)
				}
			}
		}
	}
	check(recs, all)
	// Second pass, projected and reordered.
	if err := src.Rewind(); err != nil {
		t.Fatal(err)
	}
	recs, err = readAll(t, src, []int{5, 0})
	if err != nil {
		t.Fatal(err)
	}
	check(recs, []int{5, 0})
	if err := src.Unchanged(); err != nil {
		t.Fatal(err)
	}

	// A second implementation reads the same file and its metadata.
	tbl := testfiles.ReadWithPqarrow(t, path)
	defer tbl.Release()
	if tbl.NumRows() != int64(len(typedRecs)) {
		t.Fatalf("pqarrow reads %d rows", tbl.NumRows())
	}
	if v := testfiles.ParquetMetadata(t, path)["sanitize.k"]; v != "5" {
		t.Errorf("metadata sanitize.k = %q", v)
	}
}

// TestParquetForeignTypes reads a file written by the Arrow project's Parquet writer
// with types this tool never writes.
func TestParquetForeignTypes(t *testing.T) {
	mem := memory.DefaultAllocator
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32},
		{Name: "u16", Type: arrow.PrimitiveTypes.Uint16},
		{Name: "u64", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32},
		{Name: "ts_ms", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}},
		{Name: "ts_us", Type: &arrow.TimestampType{Unit: arrow.Microsecond}},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32},
		{Name: "list", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64)},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, sch)
	defer b.Release()
	b.Field(0).(*array.Int32Builder).AppendValues([]int32{-7, 2147483647}, nil)
	b.Field(1).(*array.Uint16Builder).AppendValues([]uint16{65535, 0}, nil)
	b.Field(2).(*array.Uint64Builder).AppendValues([]uint64{18446744073709551615, 1}, nil)
	b.Field(3).(*array.Float32Builder).AppendValues([]float32{0.5, -2}, nil)
	b.Field(4).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{-1, 1700000000123}, nil)
	b.Field(5).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{1, 0}, nil)
	b.Field(6).(*array.Date32Builder).AppendValues([]arrow.Date32{-1, 19782}, nil)
	lb := b.Field(7).(*array.ListBuilder)
	lb.Append(true)
	lb.ValueBuilder().(*array.Int64Builder).Append(1)
	lb.Append(true)
	b.Field(8).(*array.StringBuilder).AppendValues([]string{"a", ""}, []bool{true, false})
	rec := b.NewRecord()
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "foreign.parquet")
	testfiles.WriteArrowParquet(t, path, rec, nil)

	src, err := openParquet(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	cols := src.Columns()
	wantTypes := []schema.Type{schema.Integer, schema.Integer, schema.Integer, schema.Float, schema.Timestamp, schema.Timestamp, schema.Date, "", schema.String}
	wantInts := []IntType{{Bits: 32}, {Bits: 16, Unsigned: true}, {Bits: 64, Unsigned: true}}
	for i, c := range cols {
		if c.Type != wantTypes[i] {
			t.Errorf("column %s: type %q (unsupported %q), want %q", c.Name, c.Type, c.Unsupported, wantTypes[i])
		}
		if i < len(wantInts) && c.Ints != wantInts[i] {
			t.Errorf("column %s: integer type %s, want %s", c.Name, c.Ints, wantInts[i])
		}
	}
	if cols[7].Unsupported == "" {
		t.Errorf("the list column is not marked unsupported")
	}
	recs, err := readAll(t, src, []int{0, 1, 2, 3, 4, 5, 6, 8})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"-7", "65535", "18446744073709551615", "0.5", "1969-12-31T23:59:59.999Z", "1970-01-01T00:00:00.000001Z", "1969-12-31", "a"},
		{"2147483647", "0", "1", "-2", "2023-11-14T22:13:20.123Z", "1970-01-01T00:00:00Z", "2024-02-29", "\x00"},
	}
	for r := range want {
		for j, w := range want[r] {
			got := recs[r][j]
			if got.null != (w == "\x00") || (!got.null && got.text != w) {
				t.Errorf("record %d field %d: got %+v, want %q", r, j, got, w)
			}
		}
	}
	// Asking for the unsupported column is an error naming it.
	if err := src.Rewind(); err != nil {
		t.Fatal(err)
	}
	if _, err := readAll(t, src, []int{7}); err == nil || !strings.Contains(err.Error(), `"list"`) || !errors.Is(err, fault.ErrBadInput) {
		t.Errorf("reading the list column: %v", err)
	}
}

func TestParquetBatches(t *testing.T) {
	n := 2*BatchRows + 17
	recs := make([][]string, n)
	for i := range recs {
		recs[i] = []string{FormatInt(int64(i))}
	}
	path := filepath.Join(t.TempDir(), "n.parquet")
	writeParquet(t, path, []OutColumn{{Name: "i", Type: schema.Integer}}, recs, nil)
	src, err := openParquet(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	got, err := readAll(t, src, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n || src.Rows() != n {
		t.Fatalf("%d records (rows %d), want %d", len(got), src.Rows(), n)
	}
	for i, r := range got {
		if r[0].text != FormatInt(int64(i)) {
			t.Fatalf("record %d = %q", i, r[0].text)
		}
	}
	// No columns at all: the records are still counted.
	if err := src.Rewind(); err != nil {
		t.Fatal(err)
	}
	if got, err := readAll(t, src, nil); err != nil || len(got) != n {
		t.Fatalf("empty projection: %d records, %v", len(got), err)
	}
}

func TestParquetBadFiles(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.parquet")
	writeParquet(t, good, typedCols, typedRecs, nil)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{
		"empty":   nil,
		"garbage": []byte("this is not a parquet file at all, not even close"),
		"magic":   []byte("PAR1PAR1"),
	}
	for _, cut := range []int{len(data) - 1, len(data) - 8, len(data) / 2, 12} {
		cases["truncated at "+FormatInt(int64(cut))] = data[:cut]
	}
	// Corrupt the data pages but keep the footer.
	flipped := slices.Clone(data)
	for i := 8; i < len(flipped)/2; i += 7 {
		flipped[i] ^= 0x5a
	}
	cases["corrupt pages"] = flipped
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".parquet")
			if err := os.WriteFile(path, content, 0o644); err != nil {
				t.Fatal(err)
			}
			src, err := openParquet(path)
			if err == nil {
				_, err = readAll(t, src, []int{0, 1, 2, 3, 4, 5, 6})
				src.Close()
			}
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name %s or is not bad input", err, path)
			}
		})
	}
}

func TestParquetChangedBetweenPasses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.parquet")
	writeParquet(t, path, typedCols, typedRecs, nil)
	src, err := openParquet(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, err := readAll(t, src, []int{0}); err != nil {
		t.Fatal(err)
	}
	// Rewrite the file in place (same inode), with a new modification time.
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("X"), 100); err != nil {
		t.Fatal(err)
	}
	f.Close()
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if err := src.Rewind(); err == nil || !strings.Contains(err.Error(), "changed") {
		t.Fatalf("rewind after a change: %v", err)
	}
}

// FuzzReadParquet feeds arbitrary bytes to the Parquet reader: it must return records
// or an error, never panic or hang.
func FuzzReadParquet(f *testing.F) {
	dir := f.TempDir()
	good := filepath.Join(dir, "seed.parquet")
	writeParquet(f, good, typedCols, typedRecs, map[string]string{"k": "v"})
	data, err := os.ReadFile(good)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add(data[:len(data)/2])
	f.Add([]byte("PAR1\x00\x00\x00\x00PAR1"))
	f.Fuzz(func(t *testing.T, content []byte) {
		path := filepath.Join(t.TempDir(), "f.parquet")
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		src, err := openParquet(path)
		if err != nil {
			if !errors.Is(err, fault.ErrBadInput) {
				t.Fatalf("error is not bad input: %v", err)
			}
			return
		}
		defer src.Close()
		if src.total > 1<<20 {
			return // a footer may promise any count; reading it all proves nothing more
		}
		var cols []int
		for i, c := range src.Columns() {
			if c.Unsupported == "" {
				cols = append(cols, i)
			}
		}
		text, err := readAll(t, src, cols)
		if err != nil && !errors.Is(err, fault.ErrBadInput) {
			t.Fatalf("error is not bad input: %v", err)
		}
		// The same columns as keys where they have them: the same values, or bad input.
		keyed := make([]Form, len(cols))
		for j := range keyed {
			keyed[j] = AsKey
		}
		if err := src.Rewind(); err != nil {
			if !errors.Is(err, fault.ErrBadInput) {
				t.Fatalf("error is not bad input: %v", err)
			}
			return
		}
		keys, kerr := readAllAs(t, src, cols, keyed)
		switch {
		case kerr != nil && !errors.Is(kerr, fault.ErrBadInput):
			t.Fatalf("error is not bad input: %v", kerr)
		case (err == nil) != (kerr == nil):
			t.Fatalf("read as text: %v; as keys: %v", err, kerr)
		case err == nil && !slices.EqualFunc(text, keys, slices.Equal):
			t.Fatalf("read as keys %v, as text %v", keys, text)
		}
		// The columns read straight from their column chunks (parquetdirect.go), alone.
		var direct []int
		for i := range src.Columns() {
			if src.direct[i] != directNone {
				direct = append(direct, i)
			}
		}
		if len(direct) == 0 || len(direct) == len(cols) {
			return
		}
		if err := src.Rewind(); err != nil {
			if !errors.Is(err, fault.ErrBadInput) {
				t.Fatalf("error is not bad input: %v", err)
			}
			return
		}
		if _, err := readAll(t, src, direct); err != nil && !errors.Is(err, fault.ErrBadInput) {
			t.Fatalf("error is not bad input: %v", err)
		}
	})
}

// TestParquetDictionaryStatistics: a dictionary column is written as a dictionary page
// and indexes, without min/max statistics (the writer would hash every batch's
// indexes for them); a plain column keeps its statistics.
func TestParquetDictionaryStatistics(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cols := []OutColumn{{Name: "age", Type: schema.String, Dict: []string{"[20-29]", "[30-39]", "*"}}, {Name: "note", Type: schema.String}}
	s, err := newParquetSink(f, cols, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows := &Rows{N: 4, Fields: []string{"", "b", "", "a", "", "c", "", "a"}, Keys: [][]int32{{2, 0, 1, 0}, nil}}
	x, err := s.Prepare(rows)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WritePrepared(x); err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(); err != nil {
		t.Fatal(err)
	}
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	rg := rdr.MetaData().RowGroup(0)
	for i, wantStats := range []bool{false, true} {
		cc, err := rg.ColumnChunk(i)
		if err != nil {
			t.Fatal(err)
		}
		set, err := cc.StatsSet()
		if err != nil {
			t.Fatal(err)
		}
		if set != wantStats {
			t.Errorf("column %q: statistics set %v, want %v", cols[i].Name, set, wantStats)
		}
		if i == 0 && !cc.HasDictionaryPage() {
			t.Errorf("column %q: no dictionary page", cols[i].Name)
		}
	}
	tbl := testfiles.ReadWithPqarrow(t, path)
	defer tbl.Release()
	if tbl.NumRows() != 4 {
		t.Fatalf("pqarrow reads %d rows", tbl.NumRows())
	}
}
