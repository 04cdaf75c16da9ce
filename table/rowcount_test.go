package table

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/schema"
)

// TestRecordsAtMost: a Parquet file's and an Arrow IPC file's records are counted
// exactly from their metadata (batches written by the Arrow library, one of them
// empty), a CSV file's bounded from its size (never below its records, and exact for
// records of the least size), an Arrow IPC stream's not at all; a corrupt footer is
// bad input.
func TestRecordsAtMost(t *testing.T) {
	dir := t.TempDir()
	sc := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	batch := func(n int) arrow.RecordBatch {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		defer b.Release()
		for i := range n {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.StringBuilder).Append("x")
		}
		return b.NewRecordBatch()
	}
	sizes := []int{1000, 0, 4096, 7}
	for _, stream := range []bool{false, true} {
		path := filepath.Join(dir, "t.arrow")
		if stream {
			path += "s"
		}
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		var w interface {
			Write(arrow.RecordBatch) error
			Close() error
		}
		if stream {
			w = ipc.NewWriter(f, ipc.WithSchema(sc))
		} else if w, err = ipc.NewFileWriter(f, ipc.WithSchema(sc)); err != nil {
			t.Fatal(err)
		}
		for _, n := range sizes {
			rec := batch(n)
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
			rec.Release()
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		format := map[bool]schema.Format{false: schema.FormatArrow, true: schema.FormatArrows}[stream]
		n, known, err := RecordsAtMost(path, format, 1)
		if err != nil || known == stream || (!stream && n != 5103) {
			t.Errorf("%s: %d records, known %v, %v", format, n, known, err)
		}
	}

	rec := batch(5103)
	pq := filepath.Join(dir, "t.parquet")
	testfiles.WriteArrowParquet(t, pq, rec, nil)
	rec.Release()
	if n, known, err := RecordsAtMost(pq, "parquet", 1); n != 5103 || !known || err != nil {
		t.Errorf("parquet: %d records, known %v, %v", n, known, err)
	}

	csv := filepath.Join(dir, "t.csv")
	os.WriteFile(csv, []byte("a,s\n"+strings.Repeat("12,xy\n", 99)+"12,xy"), 0o600)
	for _, tc := range []struct {
		min  int64
		want int64
	}{{6, 100}, {1, 604}, {0, 604}, {100, 6}} { // a header of 4 bytes and 100 records: 603 bytes
		if n, known, err := RecordsAtMost(csv, "csv", tc.min); n != tc.want || !known || err != nil {
			t.Errorf("csv, records of %d bytes or more: %d records, known %v, %v", tc.min, n, known, err)
		}
	}

	// A footer whose first block points past the end of the file.
	raw, err := os.ReadFile(filepath.Join(dir, "t.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	n := int(binary.LittleEndian.Uint32(raw[len(raw)-10:]))
	footer := arrowFB(raw[len(raw)-10-n : len(raw)-10])
	root, _ := footer.u32(0)
	start, blocks, err := footer.vector(root, 3, 24)
	if err != nil || blocks != len(sizes) {
		t.Fatalf("%d blocks, %v", blocks, err)
	}
	binary.LittleEndian.PutUint64(footer[start:], uint64(len(raw)))
	bad := filepath.Join(dir, "bad.arrow")
	os.WriteFile(bad, raw, 0o600)
	if _, _, err := RecordsAtMost(bad, "arrow", 1); !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "record batch 0") {
		t.Errorf("a corrupt Arrow IPC file: %v", err)
	}
}
