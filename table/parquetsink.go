package table

import (
	"bufio"
	"fmt"
	"io"
	"sanitizer/internal/build"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Row groups and pages of the Parquet files this tool writes. A row group holds at most
// pqRowGroupRows records: large enough that a column chunk of a dictionary-encoded
// quasi-identifier is a few hundred kilobytes and a reader's per-group overhead is
// small, small enough that an engine reading in parallel gets one task per group on a
// table of a few million records and the writer buffers one group (its encoded,
// compressed pages) at a time. Pages are the library's default of 1 MiB.
//
// A column chunk's dictionary page holds at most pqDictBytes of values; past that the
// writer falls back to plain pages. A generalized quasi-identifier whose labels take
// more (Mondrian's ranges on a large table) is therefore given to the writer as plain
// strings, not as a dictionary array: the writer would hash and fall back anyway, at a
// cost of hundreds of megabytes on the 10M-record benchmark.
const (
	pqRowGroupRows = 1 << 20
	pqPageBytes    = 1 << 20
	pqDictBytes    = 1 << 20
)

// parquetSink writes a Parquet file with the Arrow project's writer
// (github.com/apache/arrow-go/v18/parquet/pqarrow): Snappy compression, row groups of
// pqRowGroupRows records, the release parameters in the footer's key-value metadata,
// and the Arrow schema stored beside them, so that Arrow-based readers get back the
// column types as written. A dictionary column (a release's generalized
// quasi-identifiers) is written as a Parquet dictionary page of its labels and the
// records' indexes, without min/max statistics: the writer computes them by hashing
// every batch's indexes (compute.Unique), which took half of the write stage on the
// 10M-record benchmark (1.7 of 3.1 s), and a release's row groups each hold nearly
// every value of a generalized column, so those statistics would let a reader skip
// nothing.
type parquetSink struct {
	*recordBuilder
	w    *pqarrow.FileWriter
	buf  *bufio.Writer // over the file given: the writer's Close must not close it
	meta map[string]string
}

// newParquetSink starts a Parquet file with the given columns in w.
func newParquetSink(w io.Writer, cols []OutColumn, meta map[string]string) (*parquetSink, error) {
	seen := map[string]bool{}
	for _, c := range cols {
		if seen[c.Name] {
			return nil, fmt.Errorf("output: two columns are named %q", c.Name)
		}
		seen[c.Name] = true
	}
	mem := memory.DefaultAllocator
	s := &parquetSink{recordBuilder: newRecordBuilder(cols, nil, mem, pqDictBytes), meta: meta}
	opts := []parquet.WriterProperty{
		parquet.WithAllocator(mem),
		parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithMaxRowGroupLength(pqRowGroupRows),
		parquet.WithDataPageSize(pqPageBytes),
		parquet.WithDictionaryDefault(true),
		parquet.WithDictionaryPageSizeLimit(pqDictBytes),
		parquet.WithCreatedBy("sanitize version " + build.Version),
	}
	for j, d := range s.dicts {
		if d != nil {
			opts = append(opts, parquet.WithStatsFor(cols[j].Name, false))
		}
	}
	props := parquet.NewWriterProperties(opts...)
	s.buf = bufio.NewWriterSize(w, pqPageBytes)
	fw, err := pqarrow.NewFileWriter(s.schema, s.buf, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema(), pqarrow.WithAllocator(mem)))
	if err != nil {
		s.release()
		return nil, err
	}
	s.w = fw
	return s, nil
}

func (s *parquetSink) Write(fields []string, nulls []bool, n int) error {
	return writeThrough(s, fields, nulls, n)
}

// Prepare builds the record batch of r's records (recordBuilder.build); several
// goroutines may Prepare at once.
func (s *parquetSink) Prepare(r *Rows) (any, error) { return s.build(r) }

// WritePrepared writes prepare's record batch into the current row group, in order.
func (s *parquetSink) WritePrepared(p any) error {
	rec := p.(arrow.RecordBatch)
	defer rec.Release()
	if rec.NumRows() == 0 {
		return nil
	}
	return s.w.WriteBuffered(rec)
}

// Finish writes the last row group, the key-value metadata (in key order) and the
// footer; it does not close the underlying file.
func (s *parquetSink) Finish() (err error) {
	defer s.release()
	keys := make([]string, 0, len(s.meta))
	for k := range s.meta {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := s.w.AppendKeyValueMetadata(k, s.meta[k]); err != nil {
			return err
		}
	}
	if err := s.w.Close(); err != nil {
		return err
	}
	return s.buf.Flush()
}
