// Package testfiles writes and reads Parquet, Arrow IPC and CSV files with their
// libraries alone, for tests that must not trust this tool's own readers and
// writers; holds a column of every integer width for type round-trip tests; edits
// configuration and fixture templates with a check that the edit took place (Replace);
// lists a folder's names; and splits Markdown table rows for the tests of the
// documentation. Tests alone import it (the beam and interop modules' too).
package testfiles

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// ParquetMetadata reads a Parquet file's key-value metadata with the Arrow project's reader.
func ParquetMetadata(t testing.TB, path string) map[string]string {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	kv := rdr.MetaData().KeyValueMetadata()
	out := map[string]string{}
	for i, k := range kv.Keys() {
		out[k] = kv.Values()[i]
	}
	return out
}

// ReadWithPqarrow reads a whole Parquet file with the Arrow project's reader.
func ReadWithPqarrow(t testing.TB, path string) arrow.Table {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// WriteArrowParquet writes rec with the Arrow project's Parquet writer.
func WriteArrowParquet(t testing.TB, path string, rec arrow.RecordBatch, props []parquet.WriterProperty, aprops ...pqarrow.WriterOption) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(rec.Schema(), f, parquet.NewWriterProperties(props...), pqarrow.NewArrowWriterProperties(aprops...))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// WriteLibraryArrow writes a record batch built with the arrow library.
func WriteLibraryArrow(t *testing.T, mem memory.Allocator, stream bool, sc *arrow.Schema, build func(*array.RecordBuilder), opts ...ipc.Option) string {
	t.Helper()
	rb := array.NewRecordBuilder(mem, sc)
	defer rb.Release()
	build(rb)
	rec := rb.NewRecord()
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "lib.arrow")
	WriteArrowRecord(t, path, stream, rec, append(opts, ipc.WithAllocator(mem))...)
	return path
}

// WriteArrowRecord writes rec to path as an Arrow IPC file (stream false) or stream
// with the library's writer.
func WriteArrowRecord(t testing.TB, path string, stream bool, rec arrow.RecordBatch, opts ...ipc.Option) {
	t.Helper()
	WriteArrowBatches(t, path, stream, []arrow.RecordBatch{rec}, opts...)
}

// IntColumns are one column of every integer width and signedness, with its extremes
// and the values either side of a sign bit.
var IntColumns = []struct {
	Name string
	Type arrow.DataType
	Vals []string // as decimal text, one per record
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

// AppendInt appends the decimal s to an integer builder of any width, parsed here
// without the package's code.
func AppendInt(t testing.TB, b array.Builder, s string) {
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

// IntText is value i of an integer array of any width as decimal text.
func IntText(t testing.TB, a arrow.Array, i int) string {
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

// ReadCSV reads a written output: its header and records.
func ReadCSV(t testing.TB, path string) ([]string, [][]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs[0], recs[1:]
}

// RewriteParquetMetadata writes a Parquet file again with the Arrow project's reader
// and writer: the same records, and its key-value metadata as edit leaves them (the
// stored Arrow schema aside, which the writer stores anew).
func RewriteParquetMetadata(t testing.TB, path string, edit func(map[string]string)) {
	t.Helper()
	RewriteParquet(t, path, edit, nil)
}

// RewriteParquet writes a Parquet file again with the Arrow project's reader and
// writer: its records as editTable leaves them (nil: the same), and its key-value
// metadata as editMeta leaves them (nil: the same; the stored Arrow schema aside,
// which the writer stores anew).
func RewriteParquet(t testing.TB, path string, editMeta func(map[string]string), editTable func(arrow.Table) arrow.Table) {
	t.Helper()
	meta := ParquetMetadata(t, path)
	delete(meta, "ARROW:schema")
	if editMeta != nil {
		editMeta(meta)
	}
	tbl := ReadWithPqarrow(t, path)
	if editTable != nil {
		edited := editTable(tbl)
		tbl.Release()
		tbl = edited
	}
	defer tbl.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := pqarrow.NewFileWriter(tbl.Schema(), f, parquet.NewWriterProperties(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range meta {
		if err := w.AppendKeyValueMetadata(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteTable(tbl, max(tbl.NumRows(), 1)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// WriteArrowBatches writes the record batches (of one schema) to path as an Arrow IPC
// file (stream false) or stream with the library's writer.
func WriteArrowBatches(t testing.TB, path string, stream bool, batches []arrow.RecordBatch, opts ...ipc.Option) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	opts = append(opts, ipc.WithSchema(batches[0].Schema()))
	type writer interface {
		Write(arrow.RecordBatch) error
		Close() error
	}
	var w writer
	if stream {
		w = ipc.NewWriter(f, opts...)
	} else if w, err = ipc.NewFileWriter(f, opts...); err != nil {
		t.Fatal(err)
	}
	for _, b := range batches {
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// ParquetPageBytes is every page of a Parquet file (dictionary and data pages) once
// decompressed, one after another, read with the Arrow project's page reader: what a
// search of the file's bytes for a value must look in besides the file itself.
func ParquetPageBytes(t testing.TB, path string) []byte {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	var out []byte
	for g := range rdr.NumRowGroups() {
		rg := rdr.RowGroup(g)
		for c := range rg.NumColumns() {
			pages, err := rg.GetColumnPageReader(c)
			if err != nil {
				t.Fatal(err)
			}
			for pages.Next() {
				out = append(out, pages.Page().Data()...)
			}
			if err := pages.Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out
}

// SkipIfWritable skips the test when this process can create a file in dir anyway
// (root writes in a read-only folder; /sys may be missing, or writable elsewhere).
func SkipIfWritable(t testing.TB, dir string) {
	t.Helper()
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Skipf("no folder %s here", dir)
	}
	f, err := os.CreateTemp(dir, ".probe")
	if err == nil {
		f.Close()
		os.Remove(f.Name())
		t.Skipf("this process can write in %s", dir)
	}
}
