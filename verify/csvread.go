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

// csvBatch is the number of records read ahead at once.
const csvBatch = 4096

// CSVRecords reads the records of a CSVFile projected to some columns; it is a Reader.
// The records are parsed by encoding/csv on a goroutine of their own, ahead of the
// reader. (The verification reads the input and the release at once, each on its own
// goroutine, beside the counting: parsing a file on more goroutines than one was
// measured to cost more CPU than it saves there.)
type CSVRecords struct {
	cancel context.CancelFunc
	width  int
	in     chan []string // batches of records, flat
	errc   chan error
	cur    []string
	err    error
}

// Records starts reading the records from the current position, each projected to
// cols (indexes into Header, in the order given). Close stops it.
func (c *CSVFile) Records(ctx context.Context, cols []int) *CSVRecords {
	ctx, cancel := context.WithCancel(ctx)
	rr := &CSVRecords{cancel: cancel, width: len(cols), in: make(chan []string, 2), errc: make(chan error, 1)}
	go func() {
		rr.errc <- safe.Call(func() error { return c.readAhead(ctx, cols, rr.in) })
	}()
	return rr
}

// readAhead sends the records, projected, in batches of fields to out, and closes out.
func (c *CSVFile) readAhead(ctx context.Context, cols []int, out chan<- []string) error {
	defer close(out)
	c.r.ReuseRecord = true
	flat := make([]string, 0, csvBatch*len(cols))
	send := func() error {
		if len(flat) == 0 {
			return nil
		}
		select {
		case out <- flat:
			flat = make([]string, 0, csvBatch*len(cols))
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for row := 1; ; row++ {
		rec, err := c.r.Read()
		if errors.Is(err, io.EOF) {
			return send()
		}
		if err != nil {
			if serr := send(); serr != nil { // the records before it first
				return serr
			}
			return fmt.Errorf("%s: record %d: %w", c.path, row, err)
		}
		for _, col := range cols {
			flat = append(flat, rec[col])
		}
		if len(flat) == cap(flat) {
			if err := send(); err != nil {
				return err
			}
		}
	}
}

// Read returns the next record (valid until the reader is closed), or io.EOF after the
// last.
func (rr *CSVRecords) Read() ([]string, error) {
	for len(rr.cur) == 0 {
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
		rr.cur = b
	}
	rec := rr.cur[:rr.width:rr.width]
	rr.cur = rr.cur[rr.width:]
	return rec, nil
}

// Close stops the reading and waits for it.
func (rr *CSVRecords) Close() {
	rr.cancel()
	for range rr.in {
	}
}
