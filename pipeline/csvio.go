package pipeline

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"

	"sanitizer/schema"
)

// batchRows is the number of records per batch between stages.
const batchRows = 4096

// batch is a run of consecutive input records, projected to some columns.
type batch struct {
	first  int      // 0-based index of the first record in the input
	width  int      // fields per record
	fields []string // len = n × width
	n      int
}

func (b *batch) record(i int) []string { return b.fields[i*b.width : (i+1)*b.width] }

// csvSource is an open CSV input positioned after its header.
type csvSource struct {
	path   string
	file   *os.File
	r      *csv.Reader
	header []string
	rows   int // records read so far
}

// openCSV opens a CSV table. Without a header row, the columns are named by names
// (the configuration's columns, in order).
func openCSV(path string, dialect schema.CSV, names []string) (*csvSource, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, schema.BadInput("input: %w", err)
	}
	r := csv.NewReader(bufio.NewReaderSize(f, 1<<20))
	r.Comma = dialect.Separator
	r.ReuseRecord = true
	s := &csvSource{path: path, file: f, r: r}
	if dialect.Header {
		h, err := r.Read()
		if errors.Is(err, io.EOF) {
			f.Close()
			return nil, schema.BadInput("%s: empty file: no header row", path)
		}
		if err != nil {
			f.Close()
			return nil, s.wrap(err)
		}
		s.header = append([]string(nil), h...)
		seen := map[string]bool{}
		for i, name := range s.header {
			if seen[name] {
				f.Close()
				return nil, schema.BadInput("%s: header: column %q appears twice", path, name)
			}
			if name == "" {
				f.Close()
				return nil, schema.BadInput("%s: header: column %d has no name", path, i+1)
			}
			seen[name] = true
		}
	} else {
		s.header = append([]string(nil), names...)
		r.FieldsPerRecord = len(names)
	}
	return s, nil
}

func (s *csvSource) Close() error { return s.file.Close() }

// wrap turns a CSV error into a bad-input error naming the file and the record.
func (s *csvSource) wrap(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return schema.BadInput("%s: row %d (line %d): malformed CSV: %v", s.path, s.rows+1, pe.StartLine, pe.Err)
	}
	return schema.BadInput("%s: row %d: %w", s.path, s.rows+1, err)
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
	s.rows++
	return rec, nil
}

// stream sends batches of the records projected to cols to out, closing out at the end.
func (s *csvSource) stream(ctx context.Context, cols []int, out chan<- *batch) error {
	defer close(out)
	b := &batch{width: len(cols), fields: make([]string, 0, batchRows*len(cols))}
	for {
		rec, err := s.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if len(rec) != len(s.header) {
			return schema.BadInput("%s: row %d: %d fields, the header has %d", s.path, s.rows, len(rec), len(s.header))
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
			b = &batch{first: s.rows, width: len(cols), fields: make([]string, 0, batchRows*len(cols))}
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

// csvSink writes CSV records to a file.
type csvSink struct {
	w *csv.Writer
	b *bufio.Writer
}

func newCSVSink(f io.Writer, dialect schema.CSV) *csvSink {
	b := bufio.NewWriterSize(f, 1<<20)
	w := csv.NewWriter(b)
	w.Comma = dialect.Separator
	return &csvSink{w: w, b: b}
}

func (s *csvSink) Write(rec []string) error { return s.w.Write(rec) }

func (s *csvSink) Flush() error {
	s.w.Flush()
	if err := s.w.Error(); err != nil {
		return err
	}
	if err := s.b.Flush(); err != nil {
		return fmt.Errorf("writing release: %w", err)
	}
	return nil
}
