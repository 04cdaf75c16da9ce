package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"sanitizer/internal/testfiles"
)

// A release may carry only the values its records hold: a dictionary value no record
// uses may be one only a suppressed record had. These tests write files whose
// dictionaries hold such a value (as a writer that copies an input's dictionary whole
// would), and files whose dictionaries are all used, by their own records or by
// another chunk's or file's of the release, and read them as a release (with a
// DictionaryUse) and as an input.

// opening opens a file to read its columns 0 and 1, telling use of its dictionaries
// when use is not nil.
type opening func(use *DictionaryUse) (Reader, func(), error)

// readAll reads every record of the files in turn, as one release when release is set
// (then checking its dictionaries), and returns the reading's error.
func readAll(t *testing.T, files []opening, release bool) error {
	t.Helper()
	var use *DictionaryUse
	if release {
		use = NewDictionaryUse()
	}
	for _, open := range files {
		if err := readFile(open, use); err != nil {
			return err
		}
	}
	if use == nil {
		return nil
	}
	return use.Check()
}

// readFile reads every record of one file.
func readFile(open opening, use *DictionaryUse) error {
	r, done, err := open(use)
	if err != nil {
		return err
	}
	defer done()
	for {
		if _, err := r.Read(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// releaseFile is an opened file of the verifier's reading that can tell a
// DictionaryUse of its dictionaries.
type releaseFile[R interface {
	Reader
	Close()
}] interface {
	RequireUsedDictionaries(*DictionaryUse)
	Records(ctx context.Context, cols []int) (R, error)
	Close() error
}

// opener is the opening of a file by open.
func opener[R interface {
	Reader
	Close()
}, F releaseFile[R]](open func() (F, error)) opening {
	return func(use *DictionaryUse) (Reader, func(), error) {
		f, err := open()
		if err != nil {
			return nil, nil, err
		}
		if use != nil {
			f.RequireUsedDictionaries(use)
		}
		r, err := f.Records(context.Background(), []int{0, 1})
		if err != nil {
			f.Close()
			return nil, nil, err
		}
		return r, func() { r.Close(); f.Close() }, nil
	}
}

// arrowRecords opens an Arrow IPC file or stream.
func arrowRecords(path string, stream bool) opening {
	return opener[*ArrowRecords](func() (*ArrowFile, error) { return OpenArrow(path, stream) })
}

// parquetRecords opens a Parquet file.
func parquetRecords(path string) opening {
	return opener[*ParquetRecords](func() (*ParquetFile, error) { return OpenParquet(path) })
}

// checkUsed checks that reading the files as one release fails with a *Violation
// naming the column d, or the dictionaries no record refers to (and never the value
// "secret"), exactly when unused, and that reading them as inputs never fails.
func checkUsed(t *testing.T, unused bool, files ...opening) {
	t.Helper()
	if err := readAll(t, files, false); err != nil {
		t.Fatalf("read as an input: %v", err)
	}
	err := readAll(t, files, true)
	var v *Violation
	switch {
	case !unused && err != nil:
		t.Fatalf("read as a release: %v", err)
	case unused && !errors.As(err, &v):
		t.Fatalf("read as a release: %v, want a violation", err)
	case unused && (!strings.Contains(err.Error(), `column "d"`) && !strings.Contains(err.Error(), "no record refers to")):
		t.Fatalf("the violation does not name the column: %v", err)
	case err != nil && strings.Contains(err.Error(), "secret"):
		t.Fatalf("the violation quotes the value: %v", err)
	}
}

// TestArrowDictionariesUsed: an Arrow IPC release whose dictionary holds a value no
// record uses is a violation — a dictionary of the file format, one a stream replaces
// before its records have used all its values, a delta that adds an unused value, a
// dictionary batch no record batch follows — and one whose dictionaries are all used
// (replaced or extended by deltas) reads.
func TestArrowDictionariesUsed(t *testing.T) {
	mem := memory.NewGoAllocator()
	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}
	for _, c := range []struct {
		name   string
		stream bool
		deltas bool
		dicts  [][]any // per record batch (of 4 records)
		index  []int   // per record (nil entries: -1)
		unused bool
	}{
		{"file, all used", false, false, [][]any{{"a", "b", "c"}, {"a", "b", "c"}}, []int{0, 1, 2, -1, 2, 2, 1, 0}, false},
		{"file, one unused", false, false, [][]any{{"a", "secret", "c"}, {"a", "secret", "c"}}, []int{0, 0, 2, -1, 2, 2, 0, 0}, true},
		{"file, a null value used", false, false, [][]any{{"a", nil}, {"a", nil}}, []int{0, 1, 0, 0, 0, 0, 0, 0}, false},
		{"stream, replaced once used", true, false, [][]any{{"a", "b"}, {"x", "y", "z"}}, []int{0, 1, 0, 1, 2, 1, 0, 0}, false},
		{"stream, replaced before used", true, false, [][]any{{"a", "secret"}, {"x", "y"}}, []int{0, 0, 0, 0, 1, 1, 0, 0}, true},
		{"stream, last one unused", true, false, [][]any{{"a", "b"}, {"x", "secret"}}, []int{0, 1, 0, 1, 0, 0, 0, 0}, true},
		{"stream, deltas used", true, true, [][]any{{"a"}, {"a", "b", "c"}}, []int{0, 0, 0, 0, 1, 2, 1, -1}, false},
		{"stream, a value used before its delta", true, true, [][]any{{"a", "b"}, {"a", "b", "c"}}, []int{0, 0, 0, 0, 1, 2, 2, 2}, false},
		{"stream, a delta unused", true, true, [][]any{{"a"}, {"a", "b", "secret"}}, []int{0, 0, 0, 0, 1, 1, 0, 0}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			specs := []arrowSpec{
				{name: "d", typ: dictType, val: func(i int) any {
					if c.index[i] < 0 {
						return nil
					}
					return c.index[i]
				}, dict: func(b int) []any { return c.dicts[b] }},
				{name: "n", typ: arrow.PrimitiveTypes.Int32, val: func(i int) any { return int32(i) }},
			}
			sc, recs := arrowBatches(t, mem, specs, 4, 4)
			defer func() {
				for _, r := range recs {
					r.Release()
				}
			}()
			var opts []ipc.Option
			if c.deltas {
				opts = append(opts, ipc.WithDictionaryDeltas(true))
			}
			path := writeArrowFile(t, "d.arrow", writeArrowIPC(t, mem, c.stream, sc, recs, opts...))
			checkUsed(t, c.unused, arrowRecords(path, c.stream))
		})
	}
}

// TestArrowTrailingDictionary: a dictionary batch that no record batch refers to (one
// at the end of a stream, one replaced before the first record batch) carries values
// no record holds.
func TestArrowTrailingDictionary(t *testing.T) {
	mem := memory.NewGoAllocator()
	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}
	stream := func(dict []any) []byte {
		specs := []arrowSpec{
			{name: "d", typ: dictType, val: func(i int) any { return 0 }, dict: func(int) []any { return dict }},
			{name: "n", typ: arrow.PrimitiveTypes.Int32, val: func(i int) any { return int32(i) }},
		}
		sc, recs := arrowBatches(t, mem, specs, 3)
		defer recs[0].Release()
		return writeArrowIPC(t, mem, true, sc, recs)
	}
	first, second := stream([]any{"a"}), stream([]any{"secret"})
	// The first stream's schema, dictionary and record batch, the second's dictionary
	// batch (a replacement), the end-of-stream marker.
	m1, m2 := streamMessages(t, first), streamMessages(t, second)
	if len(m1) != 3 || len(m2) != 3 {
		t.Fatalf("%d and %d messages, want schema, dictionary, record batch", len(m1), len(m2))
	}
	var b bytes.Buffer
	b.Write(first[:m1[2].body+m1[2].size])
	b.Write(second[m2[1].at : m2[1].body+m2[1].size])
	b.Write([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0})
	path := writeArrowFile(t, "trailing.arrows", b.Bytes())
	checkUsed(t, true, arrowRecords(path, true))
	// A dictionary replaced before any record batch refers to it: the second
	// stream's dictionary, then the first's (the same id, not a delta), then a record
	// batch.
	b.Reset()
	b.Write(first[:m1[1].at])
	b.Write(second[m2[1].at : m2[1].body+m2[1].size])
	b.Write(first[m1[1].at : m1[2].body+m1[2].size])
	b.Write([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0})
	path = writeArrowFile(t, "replaced.arrows", b.Bytes())
	checkUsed(t, true, arrowRecords(path, true))
	// The same stream without the trailing dictionary reads.
	b.Reset()
	b.Write(first[:m1[2].body+m1[2].size])
	b.Write([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0})
	path = writeArrowFile(t, "plain.arrows", b.Bytes())
	checkUsed(t, false, arrowRecords(path, true))
}

// dictionaryParquet writes a Parquet file of a dictionary-encoded column d, whose
// dictionary (in every row group: the writer copies a dictionary array's whole) is
// dict and whose records hold the entries index (−1: a null), in row groups of group
// records, and a column n.
func dictionaryParquet(t *testing.T, dict []string, index []int, group int64) string {
	t.Helper()
	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	sc := arrow.NewSchema([]arrow.Field{{Name: "d", Type: dictType, Nullable: true}, {Name: "n", Type: arrow.PrimitiveTypes.Int32}}, nil)
	values := array.NewStringBuilder(memory.DefaultAllocator)
	defer values.Release()
	values.AppendValues(dict, nil)
	dictValues := values.NewArray()
	defer dictValues.Release()
	idx, ns := array.NewInt32Builder(memory.DefaultAllocator), array.NewInt32Builder(memory.DefaultAllocator)
	defer idx.Release()
	defer ns.Release()
	for i, x := range index {
		if x < 0 {
			idx.AppendNull()
		} else {
			idx.Append(int32(x))
		}
		ns.Append(int32(i))
	}
	indexes, n := idx.NewArray(), ns.NewArray()
	defer indexes.Release()
	defer n.Release()
	d := array.NewDictionaryArray(dictType, indexes, dictValues)
	defer d.Release()
	rec := array.NewRecordBatch(sc, []arrow.Array{d, n}, int64(len(index)))
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "d.parquet")
	testfiles.WriteArrowParquet(t, path, rec, []parquet.WriterProperty{parquet.WithMaxRowGroupLength(group)}, pqarrow.WithStoreSchema())
	return path
}

// TestParquetDictionariesUsed: a Parquet release one of whose column chunks' dictionary
// pages holds a value no record of the release holds is a violation naming the column;
// a value a chunk's records do not use but another chunk's do, in the file or in
// another part of the release, is one the release holds.
func TestParquetDictionariesUsed(t *testing.T) {
	for _, c := range []struct {
		name   string
		dict   []string
		index  []int // per record (−1: a null)
		group  int64 // records per row group
		unused bool
	}{
		{"all used", []string{"a", "b", "c"}, []int{0, 1, 2, -1, 2, 2, 1, 0}, 8, false},
		{"all used in each row group", []string{"a", "b"}, []int{0, 1, 1, 0, 1, 0, 0, 1}, 4, false},
		{"used by the first row group only", []string{"a", "b"}, []int{0, 1, 0, 1, 0, 0, 0, 0}, 4, false},
		{"one unused", []string{"a", "secret", "c"}, []int{0, 0, 2, -1, 2, 2, 0, 0}, 8, true},
		{"unused in every row group", []string{"a", "secret"}, []int{0, 0, 0, 0, 0, 0, -1, 0}, 4, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkUsed(t, c.unused, parquetRecords(dictionaryParquet(t, c.dict, c.index, c.group)))
		})
	}
	// Parts: b is used by the second part's records only.
	first := dictionaryParquet(t, []string{"a", "b"}, []int{0, 0, 0}, 8)
	second := dictionaryParquet(t, []string{"a", "b"}, []int{1, 1, 0}, 8)
	checkUsed(t, false, parquetRecords(first), parquetRecords(second))
	checkUsed(t, true, parquetRecords(first), parquetRecords(first))
}

// TestParquetDictionaryFallback: a column whose dictionary outgrows its page after the
// writer has cut data pages falls back to plain pages mid-chunk, writing the values it
// had buffered as plain values while the dictionary page holds their entries (the Arrow
// project's writer with this tool's settings: 1 MiB pages and dictionary pages, row
// groups of 2^20 records). Every value is a record's: the release reads.
func TestParquetDictionaryFallback(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a million records")
	}
	b := array.NewStringBuilder(memory.DefaultAllocator)
	defer b.Release()
	ns := array.NewInt32Builder(memory.DefaultAllocator)
	defer ns.Release()
	const common, rare = 900_000, 60_000
	for i := range common + rare {
		if i < common {
			b.Append(fmt.Sprintf("common-value-%04d", i%1000))
		} else {
			b.Append(fmt.Sprintf("a-rare-value-%08d", i))
		}
		ns.Append(int32(i))
	}
	d, n := b.NewArray(), ns.NewArray()
	defer d.Release()
	defer n.Release()
	sc := arrow.NewSchema([]arrow.Field{{Name: "d", Type: arrow.BinaryTypes.String}, {Name: "n", Type: arrow.PrimitiveTypes.Int32}}, nil)
	rec := array.NewRecordBatch(sc, []arrow.Array{d, n}, int64(common+rare))
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "fallback.parquet")
	testfiles.WriteArrowParquet(t, path, rec, []parquet.WriterProperty{
		parquet.WithCompression(compress.Codecs.Snappy), parquet.WithMaxRowGroupLength(1 << 20),
		parquet.WithDataPageSize(1 << 20), parquet.WithDictionaryDefault(true), parquet.WithDictionaryPageSizeLimit(1 << 20),
	}, pqarrow.WithStoreSchema())
	checkUsed(t, false, parquetRecords(path))
}
