package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"slices"

	"sanitizer/internal/safe"
	"sanitizer/schema"
)

// csvSource is an open CSV input positioned after its header. It checksums the bytes
// it reads, so that a second pass can prove it read the same input as the first.
type csvSource struct {
	path    string
	dialect schema.CSV
	names   []string
	file    *os.File
	r       *csv.Reader
	sum     hash.Hash32 // CRC-32C of the bytes read since the last rewind
	header  []string
	read    int    // records read so far in this pass
	pass1   uint32 // checksum of the first pass
	rows1   int    // records of the first pass
}

func (s *csvSource) columns() []column {
	out := make([]column, len(s.header))
	for i, h := range s.header {
		out[i] = column{name: h}
	}
	return out
}

func (s *csvSource) rows() int { return s.read }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// openCSV opens a CSV table. Without a header row, the columns are named by names
// (the configuration's columns, in order).
func openCSV(path string, dialect schema.CSV, names []string) (*csvSource, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, schema.BadInput("input: %w", err)
	}
	s := &csvSource{path: path, dialect: dialect, names: names, file: f}
	if err := s.start(); err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

// start reads from the file's current position (its start): the header, then records.
func (s *csvSource) start() error {
	s.sum = crc32.New(castagnoli)
	s.read = 0
	br := bufio.NewReaderSize(io.TeeReader(s.file, s.sum), 1<<20)
	if err := skipBOM(br); err != nil {
		return s.wrap(err)
	}
	r := csv.NewReader(br)
	r.Comma = s.dialect.Separator
	r.ReuseRecord = true
	s.r = r
	if !s.dialect.Header {
		s.header = append([]string(nil), s.names...)
		r.FieldsPerRecord = len(s.names)
		return nil
	}
	h, err := r.Read()
	if errors.Is(err, io.EOF) {
		return schema.BadInput("%s: empty file: no header row", s.path)
	}
	if err != nil {
		return s.wrap(err)
	}
	s.header = append([]string(nil), h...)
	seen := map[string]int{}
	for i, name := range s.header {
		// Positions only: a file without a header row would put data here.
		if j, dup := seen[name]; dup {
			return schema.BadInput("%s: header: columns %d and %d have the same name", s.path, j+1, i+1)
		}
		if name == "" {
			return schema.BadInput("%s: header: column %d has no name", s.path, i+1)
		}
		seen[name] = i
	}
	return nil
}

// utf8BOM is the byte-order mark some programs (Excel's "CSV UTF-8") start a file with.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// skipBOM skips one UTF-8 byte-order mark at the reader's position: it is not part of
// the first field.
func skipBOM(br *bufio.Reader) error {
	head, err := br.Peek(len(utf8BOM))
	if !bytes.Equal(head, utf8BOM) {
		if errors.Is(err, io.EOF) {
			err = nil // a file shorter than a mark
		}
		return err
	}
	_, err = br.Discard(len(utf8BOM))
	return err
}

// rewind starts a second pass over the same open file and checks that its header is
// the one read before; the first pass's checksum and record count are kept for
// unchanged.
func (s *csvSource) rewind() error {
	s.pass1, s.rows1 = s.sum.Sum32(), s.read
	before := s.header
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("%s: rewinding the input: %w", s.path, err)
	}
	if err := s.start(); err != nil {
		return err
	}
	if !slices.Equal(before, s.header) {
		return errChanged(s.path)
	}
	return nil
}

// unchanged compares the second pass's checksum (CRC-32C of every byte) and record
// count with the first pass's.
func (s *csvSource) unchanged() error {
	if s.sum.Sum32() != s.pass1 || s.read != s.rows1 {
		return errChanged(s.path)
	}
	return nil
}

// errChanged is the error for an input that changed between the two passes.
func errChanged(path string) error {
	return schema.BadInput("%s: the input changed while it was being released", path)
}

func (s *csvSource) Close() error { return s.file.Close() }

// wrap turns a CSV error into a bad-input error naming the file and the record.
func (s *csvSource) wrap(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return schema.BadInput("%s: row %d (line %d): malformed CSV: %v", s.path, s.read+1, pe.StartLine, pe.Err)
	}
	return schema.BadInput("%s: row %d: %w", s.path, s.read+1, err)
}

// Read returns the next record (valid until the next call), or io.EOF.
func (s *csvSource) Read() ([]string, error) {
	rec, err := s.r.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, s.wrap(err)
	}
	s.read++
	return rec, nil
}

// stream sends batches of the records projected to cols to out, closing out at the end.
func (s *csvSource) stream(ctx context.Context, cols []int, out chan<- *batch) error {
	defer close(out)
	b := newBatch(s.read, len(cols))
	for {
		rec, err := s.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if len(rec) != len(s.header) {
			return schema.BadInput("%s: row %d: %d fields, the header has %d", s.path, s.read, len(rec), len(s.header))
		}
		for _, c := range cols {
			b.fields = append(b.fields, rec[c])
		}
		b.n++
		if b.n == batchRows {
			select {
			case out <- b:
			case <-ctx.Done():
				return ctx.Err()
			}
			b = newBatch(s.read, len(cols))
		}
	}
	if b.n > 0 {
		select {
		case out <- b:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// csvSink writes CSV records to a file. A null is written as an empty field.
type csvSink struct {
	w     *csv.Writer
	b     *bufio.Writer
	width int
}

// newCSVSink starts a CSV table with the given columns (their names are the header
// row when the dialect has one).
func newCSVSink(f io.Writer, dialect schema.CSV, cols []outColumn) (*csvSink, error) {
	b := bufio.NewWriterSize(f, 1<<20)
	w := csv.NewWriter(b)
	w.Comma = dialect.Separator
	s := &csvSink{w: w, b: b, width: len(cols)}
	if dialect.Header {
		names := make([]string, len(cols))
		for i, c := range cols {
			names[i] = c.name
		}
		if err := s.record(names); err != nil {
			return nil, fmt.Errorf("writing the header: %w", err)
		}
	}
	return s, nil
}

func (s *csvSink) write(fields []string, nulls []bool, n int) error {
	for i := range n {
		rec := fields[i*s.width : (i+1)*s.width]
		if nulls != nil {
			for j := range rec {
				if nulls[i*s.width+j] {
					rec[j] = ""
				}
			}
		}
		if err := s.record(rec); err != nil {
			return err
		}
	}
	return nil
}

// record writes one record. A record of one empty field is written as "" (encoding/csv
// would write an empty line, which readers skip).
func (s *csvSink) record(rec []string) error {
	if len(rec) == 1 && rec[0] == "" {
		s.w.Flush()
		if err := s.w.Error(); err != nil {
			return err
		}
		_, err := s.b.WriteString("\"\"\n")
		return err
	}
	return s.w.Write(rec)
}

// finish flushes the table.
func (s *csvSink) finish() error {
	s.w.Flush()
	if err := s.w.Error(); err != nil {
		return fmt.Errorf("writing release: %w", err)
	}
	if err := s.b.Flush(); err != nil {
		return fmt.Errorf("writing release: %w", err)
	}
	return nil
}

// guard runs f and turns a panic into an error (safe.PanicError), so that a failing
// stage goroutine cancels the others and the run cleans up instead of crashing with
// files left behind.
func guard(f func() error) func() error { return safe.Go(f) }
