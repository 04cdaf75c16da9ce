package verify

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"

	"sanitizer/internal/safe"
)

// CSVFile is a CSV table as the verifier reads it: with the standard library's reader
// (encoding/csv, RFC 4180), not with the code that wrote or first read the table, so
// that a defect in one cannot hide itself. A UTF-8 byte-order mark at the start is
// skipped.
type CSVFile struct {
	path   string
	file   *os.File
	r      *csv.Reader
	header []string
}

// OpenCSV opens a CSV table with the given separator. With header, its first record
// names the columns; without, names does.
func OpenCSV(path string, sep rune, header bool, names []string) (*CSVFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(f, 1<<20)
	if head, _ := br.Peek(3); bytes.Equal(head, []byte("\xEF\xBB\xBF")) {
		br.Discard(3)
	}
	c := &CSVFile{path: path, file: f, r: csv.NewReader(br)}
	c.r.Comma = sep
	if !header {
		c.header = append([]string(nil), names...)
		c.r.FieldsPerRecord = len(names)
		return c, nil
	}
	if c.header, err = c.r.Read(); err != nil {
		f.Close()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: no header row", path)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Header is the table's column names.
func (c *CSVFile) Header() []string { return c.header }

// Close closes the file.
func (c *CSVFile) Close() error { return c.file.Close() }

// csvBatch is the number of records a CSVRecords reads ahead at once.
const csvBatch = 1024

// CSVRecords reads the records of a CSVFile projected to some columns, on a goroutine
// of its own that reads ahead; it is a Reader.
type CSVRecords struct {
	cancel context.CancelFunc
	in     chan [][]string
	errc   chan error
	cur    [][]string
	i      int
	err    error
}

// Records starts reading the records from the current position, each projected to
// cols (indexes into Header, in the order given). Close stops it.
func (c *CSVFile) Records(ctx context.Context, cols []int) *CSVRecords {
	ctx, cancel := context.WithCancel(ctx)
	rr := &CSVRecords{cancel: cancel, in: make(chan [][]string, 4), errc: make(chan error, 1)}
	go func() {
		rr.errc <- safe.Call(func() error { return c.readAhead(ctx, cols, rr.in) })
	}()
	return rr
}

// readAhead sends the records, projected, in batches to out, and closes out.
func (c *CSVFile) readAhead(ctx context.Context, cols []int, out chan<- [][]string) error {
	defer close(out)
	batch := make([][]string, 0, csvBatch)
	send := func() error {
		select {
		case out <- batch:
			batch = make([][]string, 0, csvBatch)
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for row := 1; ; row++ {
		rec, err := c.r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err == nil && len(rec) != len(c.header) {
			err = fmt.Errorf("%d fields, the header has %d", len(rec), len(c.header))
		}
		if err != nil {
			// The records before it first.
			if serr := send(); serr != nil {
				return serr
			}
			return fmt.Errorf("%s: record %d: %w", c.path, row, err)
		}
		kept := make([]string, len(cols))
		for j, col := range cols {
			kept[j] = rec[col]
		}
		if batch = append(batch, kept); len(batch) == csvBatch {
			if err := send(); err != nil {
				return err
			}
		}
	}
	if len(batch) > 0 {
		return send()
	}
	return nil
}

// Read returns the next record, or io.EOF after the last.
func (rr *CSVRecords) Read() ([]string, error) {
	for rr.i >= len(rr.cur) {
		if rr.err != nil {
			return nil, rr.err
		}
		b, ok := <-rr.in
		if !ok {
			if rr.err = <-rr.errc; rr.err == nil {
				rr.err = io.EOF
			}
			return nil, rr.err
		}
		rr.cur, rr.i = b, 0
	}
	rec := rr.cur[rr.i]
	rr.i++
	return rec, nil
}

// Close stops the reading and waits for it.
func (rr *CSVRecords) Close() {
	rr.cancel()
	for range rr.in {
	}
}
