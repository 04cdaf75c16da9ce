package verify

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"sanitizer/internal/testfiles"
)

// A release may carry only the values its records hold: a dictionary value no record
// uses may be one only a suppressed record had. These tests write files whose
// dictionaries hold such a value (as a writer that copies an input's dictionary whole
// would), and files whose dictionaries are all used, and read them as a release
// (RequireUsedDictionaries) and as an input.

// readAll reads every column of a file opened by open, as a release when release is
// set, and returns the reading's error.
func readAll(t *testing.T, records func(release bool) (Reader, func(), error), release bool) error {
	t.Helper()
	r, done, err := records(release)
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

// releaseFile is an opened file of the verifier's reading that can be held to its
// dictionaries' use.
type releaseFile[R interface {
	Reader
	Close()
}] interface {
	RequireUsedDictionaries()
	Records(ctx context.Context, cols []int) (R, error)
	Close() error
}

// opener opens a file for readAll, its columns 0 and 1 read, as a release when
// release is set.
func opener[R interface {
	Reader
	Close()
}, F releaseFile[R]](open func() (F, error)) func(bool) (Reader, func(), error) {
	return func(release bool) (Reader, func(), error) {
		f, err := open()
		if err != nil {
			return nil, nil, err
		}
		if release {
			f.RequireUsedDictionaries()
		}
		r, err := f.Records(context.Background(), []int{0, 1})
		if err != nil {
			f.Close()
			return nil, nil, err
		}
		return r, func() { r.Close(); f.Close() }, nil
	}
}

// arrowRecords opens an Arrow IPC file or stream for readAll.
func arrowRecords(path string, stream bool) func(bool) (Reader, func(), error) {
	return opener[*ArrowRecords](func() (*ArrowFile, error) { return OpenArrow(path, stream) })
}

// parquetRecords opens a Parquet file for readAll.
func parquetRecords(path string) func(bool) (Reader, func(), error) {
	return opener[*ParquetRecords](func() (*ParquetFile, error) { return OpenParquet(path) })
}

// checkUsed checks that reading as a release fails with a *Violation naming the column
// d (and never the value "secret") exactly when unused, and that reading as an input
// never fails.
func checkUsed(t *testing.T, records func(bool) (Reader, func(), error), unused bool) {
	t.Helper()
	if err := readAll(t, records, false); err != nil {
		t.Fatalf("read as an input: %v", err)
	}
	err := readAll(t, records, true)
	var v *Violation
	switch {
	case !unused && err != nil:
		t.Fatalf("read as a release: %v", err)
	case unused && !errors.As(err, &v):
		t.Fatalf("read as a release: %v, want a violation", err)
	case unused && (!strings.Contains(err.Error(), `column "d"`) && !strings.Contains(err.Error(), "dictionary batches")):
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
			checkUsed(t, arrowRecords(path, c.stream), c.unused)
		})
	}
}

// TestArrowTrailingDictionary: a dictionary batch that no record batch follows (the
// end of a stream) carries values no record holds.
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
	checkUsed(t, arrowRecords(path, true), true)
	// The same stream without the trailing dictionary reads.
	b.Reset()
	b.Write(first[:m1[2].body+m1[2].size])
	b.Write([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0})
	path = writeArrowFile(t, "plain.arrows", b.Bytes())
	checkUsed(t, arrowRecords(path, true), false)
}

// TestParquetDictionariesUsed: a Parquet release whose column chunk's dictionary page
// holds a value none of the chunk's records holds is a violation naming the column
// and the row group; one whose every chunk's dictionary is used reads, whatever the
// row groups.
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
		{"one unused", []string{"a", "secret", "c"}, []int{0, 0, 2, -1, 2, 2, 0, 0}, 8, true},
		{"unused in the second row group", []string{"a", "secret"}, []int{0, 1, 0, 1, 0, 0, 0, 0}, 4, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
			sc := arrow.NewSchema([]arrow.Field{{Name: "d", Type: dictType, Nullable: true}, {Name: "n", Type: arrow.PrimitiveTypes.Int32}}, nil)
			b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
			defer b.Release()
			values := array.NewStringBuilder(memory.DefaultAllocator)
			values.AppendValues(c.dict, nil)
			dict := values.NewArray()
			values.Release()
			defer dict.Release()
			idx := array.NewInt32Builder(memory.DefaultAllocator)
			for i, x := range c.index {
				if x < 0 {
					idx.AppendNull()
				} else {
					idx.Append(int32(x))
				}
				b.Field(1).(*array.Int32Builder).Append(int32(i))
			}
			indexes := idx.NewArray()
			idx.Release()
			defer indexes.Release()
			d := array.NewDictionaryArray(dictType, indexes, dict)
			defer d.Release()
			n := b.Field(1).NewArray()
			defer n.Release()
			rec := array.NewRecordBatch(sc, []arrow.Array{d, n}, int64(len(c.index)))
			defer rec.Release()
			path := filepath.Join(t.TempDir(), "d.parquet")
			testfiles.WriteArrowParquet(t, path, rec, []parquet.WriterProperty{parquet.WithMaxRowGroupLength(c.group)}, pqarrow.WithStoreSchema())
			checkUsed(t, parquetRecords(path), c.unused)
			if c.unused {
				err := readAll(t, parquetRecords(path), true)
				if want := "row group"; !strings.Contains(err.Error(), want) {
					t.Errorf("%v: does not name the row group", err)
				}
			}
		})
	}
}
