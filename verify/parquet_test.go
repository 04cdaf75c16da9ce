package verify

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"sanitizer/fault"
)

// pqRow is a record of the test files written with parquet-go itself.
type pqRow struct {
	I8   int8      `parquet:"i8,int(8)"`
	U16  uint16    `parquet:"u16,uint(16)"`
	I64  int64     `parquet:"i64,delta"`
	U64  uint64    `parquet:"u64,uint(64)"`
	F32  float32   `parquet:"f32"`
	F64  float64   `parquet:"f64,split"`
	B    bool      `parquet:"b"`
	S    string    `parquet:"s"`
	D    string    `parquet:"d,dict"`
	DS   string    `parquet:"ds,delta"`
	Day  int32     `parquet:"day,date"` // days (parquet-go writes a time.Time before 1970 wrong)
	TS   time.Time `parquet:"ts,timestamp(microsecond)"`
	Opt  *string   `parquet:"opt,optional"`
	OptI *int32    `parquet:"opti,optional,dict"`
}

// pqRowText is a pqRow as the decoder reads it ("\x00" for a null).
func pqRowText(r pqRow) []string {
	opt, opti := "\x00", "\x00"
	if r.Opt != nil {
		opt = *r.Opt
	}
	if r.OptI != nil {
		opti = signedText(uint64(int64(*r.OptI)))
	}
	return []string{
		signedText(uint64(int64(r.I8))), unsignedText(uint64(r.U16)), signedText(uint64(r.I64)), unsignedText(r.U64),
		floatText(uint64(math.Float32bits(r.F32))), doubleText(math.Float64bits(r.F64)),
		map[bool]string{true: "true", false: "false"}[r.B], r.S, r.D, r.DS,
		dateText(uint64(int64(r.Day))), r.TS.UTC().Format(time.RFC3339Nano), opt, opti,
	}
}

var pqNames = []string{"i8", "u16", "i64", "u64", "f32", "f64", "b", "s", "d", "ds", "day", "ts", "opt", "opti"}

// pqRows is n records that exercise every column, nulls included.
func pqRows(n int) []pqRow {
	words := []string{"", "a", "Zürich", "日本", "x y", "0"}
	rows := make([]pqRow, n)
	for i := range rows {
		r := pqRow{
			I8: int8(i%256 - 128), U16: uint16(i * 7919), I64: int64(i)*1_000_003 - 5_000_000, U64: math.MaxUint64 - uint64(i),
			F32: float32(i) / 10, F64: float64(i) * 0.1, B: i%3 == 0,
			S: words[i%len(words)] + strings.Repeat("z", i%4), D: words[i%3], DS: "prefix-" + words[i%len(words)],
			Day: int32(i*37 - 40000),
			TS:  time.UnixMicro(int64(i)*86_400_000_123 - 1e15).UTC(),
		}
		if i%5 != 0 {
			s := words[(i/5)%len(words)]
			r.Opt = &s
		}
		if i%4 != 1 {
			v := int32(i % 9)
			r.OptI = &v
		}
		rows[i] = r
	}
	return rows
}

// writePQ writes rows with parquet-go (options: the writer's).
func writePQ(t testing.TB, path string, rows []pqRow, options ...parquet.WriterOption) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[pqRow](f, options...)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// readPQ reads columns cols of path with the verifier's decoder; "\x00" stands for a
// null.
func readPQ(t testing.TB, path string, cols []int) ([][]string, error) {
	t.Helper()
	f, err := OpenParquet(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := f.Records(context.Background(), cols)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out [][]string
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		rec = slices.Clone(rec)
		for j, null := range r.Nulls() {
			if null {
				if rec[j] != "" {
					t.Errorf("a null reads as %q", rec[j])
				}
				rec[j] = "\x00"
			}
		}
		out = append(out, rec)
	}
}

func allColumns(n int) []int {
	cols := make([]int, n)
	for i := range cols {
		cols[i] = i
	}
	return cols
}

func TestParquetReadsParquetGo(t *testing.T) {
	rows := pqRows(3000)
	cases := []struct {
		name    string
		options []parquet.WriterOption
	}{
		{"default", nil},
		{"small pages, snappy, row groups", []parquet.WriterOption{parquet.PageBufferSize(512), parquet.Compression(&parquet.Snappy), parquet.MaxRowsPerRowGroup(700)}},
		{"gzip, data page v1", []parquet.WriterOption{parquet.Compression(&parquet.Gzip), parquet.DataPageVersion(1), parquet.PageBufferSize(2048)}},
		{"zstd", []parquet.WriterOption{parquet.Compression(&parquet.Zstd), parquet.PageBufferSize(1024)}},
		{"lz4", []parquet.WriterOption{parquet.Compression(&parquet.Lz4Raw), parquet.PageBufferSize(1024)}},
		{"brotli", []parquet.WriterOption{parquet.Compression(&parquet.Brotli)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.parquet")
			writePQ(t, path, rows, tc.options...)
			f, err := OpenParquet(path)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, c := range f.Columns() {
				names = append(names, c.Name)
				if c.Unsupported != "" {
					t.Errorf("column %s: unsupported %s", c.Name, c.Unsupported)
				}
			}
			f.Close()
			if !slices.Equal(names, pqNames) {
				t.Fatalf("columns %q, want %q", names, pqNames)
			}
			got, err := readPQ(t, path, allColumns(len(pqNames)))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(rows) {
				t.Fatalf("%d records, want %d", len(got), len(rows))
			}
			for i, r := range rows {
				if want := pqRowText(r); !slices.Equal(got[i], want) {
					t.Fatalf("record %d:\n got %q\nwant %q", i, got[i], want)
				}
			}
		})
	}
}

// TestParquetProjection reads some columns, in another order, some twice.
func TestParquetProjection(t *testing.T) {
	rows := pqRows(50)
	path := filepath.Join(t.TempDir(), "t.parquet")
	writePQ(t, path, rows)
	cols := []int{12, 0, 7, 0}
	got, err := readPQ(t, path, cols)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		all := pqRowText(r)
		want := []string{all[12], all[0], all[7], all[0]}
		if !slices.Equal(got[i], want) {
			t.Fatalf("record %d: got %q, want %q", i, got[i], want)
		}
	}
	// No columns: the records are still counted.
	got, err = readPQ(t, path, nil)
	if err != nil || len(got) != len(rows) {
		t.Fatalf("empty projection: %d records, %v", len(got), err)
	}
	// A column that is not there.
	f, err := OpenParquet(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Records(context.Background(), []int{len(pqNames)}); err == nil {
		t.Error("no error for a column out of range")
	}
}

// TestParquetCancel stops a read by cancelling its context.
func TestParquetCancel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.parquet")
	writePQ(t, path, pqRows(20000))
	f, err := OpenParquet(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx, cancel := context.WithCancel(context.Background())
	r, err := f.Records(ctx, []int{0, 7})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Read(); err != nil {
		t.Fatal(err)
	}
	cancel()
	for n := 0; ; n++ {
		_, err := r.Read()
		if errors.Is(err, context.Canceled) {
			return
		}
		if err != nil || n > 20000 {
			t.Fatalf("after %d more records: %v, want context.Canceled", n, err)
		}
	}
}

// TestParquetUnsupported lists a nested column with what it is and refuses to read
// it, naming it.
func TestParquetUnsupported(t *testing.T) {
	// Nested, enum, time and repeated columns cannot be read; binary and decimals can.
	type row struct {
		A    int32    `parquet:"a"`
		List []int64  `parquet:"list,list"`
		Raw  []byte   `parquet:"raw"`
		Enum string   `parquet:"enum,enum"`
		Tm   int64    `parquet:"tm,time(microsecond)"`
		Dec  int64    `parquet:"dec,decimal(2:18)"`
		Rep  []string `parquet:"rep"`
	}
	path := filepath.Join(t.TempDir(), "t.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := parquet.Write(f, []row{{A: 1, List: []int64{1, 2}, Raw: []byte{0}, Enum: "x", Rep: []string{"a"}}}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	pf, err := OpenParquet(path)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	readable := map[string]bool{"a": true, "raw": true, "dec": true} // binary and decimals are read as they are
	for i, c := range pf.Columns() {
		if (c.Unsupported == "") != readable[c.Name] {
			t.Errorf("column %s: type %q, unsupported %q", c.Name, c.Type, c.Unsupported)
		}
		if readable[c.Name] {
			continue
		}
		_, err := pf.Records(context.Background(), []int{0, i})
		if err == nil || !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), `"`+c.Name+`"`) {
			t.Errorf("reading column %s: %v", c.Name, err)
		}
	}
}
