package verify

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math/bits"
	"os"

	"sanitizer/internal/safe"
)

// CSVFile is a CSV table as the verifier reads it: with its own RFC 4180 reader
// (csvParser), which reads exactly what encoding/csv reads, not with the code that
// wrote or first read the table, so that a defect in one cannot hide itself. A UTF-8
// byte-order mark at the start is skipped.
type CSVFile struct {
	path   string
	file   io.Closer
	p      *csvParser
	sum    hash.Hash32 // CRC-32C of the bytes read
	header []string
	// The records read ahead at once, and the distinct values and bytes of them
	// interned per column (csvBatch, csvInternValues and csvInternBytes; tests use
	// fewer).
	batch, internValues, internBytes int
}

// OpenCSV opens a CSV table with the given separator. With header, its first record
// names the columns; without, names does.
func OpenCSV(path string, sep rune, header bool, names []string) (*CSVFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	sum := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	c, err := newCSVFile(path, summed{io.TeeReader(f, sum), f}, sep, header, names, csvReadSize)
	if err != nil {
		return nil, err
	}
	c.sum = sum
	return c, nil
}

// summed is a file read through a checksum.
type summed struct {
	io.Reader
	io.Closer
}

// Checksum is the CRC-32C (Castagnoli) of every byte of the file, byte-order mark
// included, once its records have been read to the end (ok is false before, and for a
// table not opened by OpenCSV): the release compares it with its first pass's, so
// that an input changed in between is found even where the released values cover the
// old and the new alike. Call it after the records' reader returned io.EOF.
func (c *CSVFile) Checksum() (sum uint32, ok bool) {
	if c.sum == nil || !c.p.eof || c.p.rerr != nil {
		return 0, false
	}
	return c.sum.Sum32(), true
}

// newCSVFile reads a CSV table from f, named path in errors, size bytes at a time; it
// closes f if it fails.
func newCSVFile(path string, f io.ReadCloser, sep rune, header bool, names []string, size int) (*CSVFile, error) {
	width := 0 // with a header, as wide as it
	if !header {
		width = len(names)
	}
	p, err := newCSVParser(f, sep, width, size)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c := &CSVFile{path: path, file: f, p: p, batch: csvBatch, internValues: csvInternValues, internBytes: csvInternBytes}
	p.skipPrefix([]byte("\xEF\xBB\xBF"))
	if !header {
		c.header = append([]string(nil), names...)
		return c, nil
	}
	var fields [][]byte
	if err := safe.Call(func() (err error) { fields, err = p.next(); return err }); err != nil {
		f.Close()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: no header row", path)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c.header = make([]string, len(fields))
	for i, b := range fields {
		c.header[i] = string(b)
	}
	return c, nil
}

// Header is the table's column names.
func (c *CSVFile) Header() []string { return c.header }

// Close closes the file.
func (c *CSVFile) Close() error { return c.file.Close() }

// csvBatch is the number of records read ahead at once.
const csvBatch = 4096

// The values of a column are interned (each distinct value one string, shared by the
// records that hold it) until the column has csvInternValues distinct values or
// csvInternBytes bytes of them; its further values are strings of their own (the
// values of a batch sharing one allocation). That covers the domains of categorical
// columns (codes, countries, ages, generalized labels) while a column's table stays
// small (4,096 values of 16 bytes take 350 KiB) however many columns are read, and
// near enough the processor to look up quickly: a column of more distinct values (an
// identifier, free text, a fine measure) gains little from sharing them, and with
// 65,536 values interned, such a column read three times slower than with none
// (BenchmarkCSVInterning).
const (
	csvInternValues = 4096
	csvInternBytes  = 64 << 10
)

// CSVRecords reads the records of a CSVFile projected to some columns; it is a Reader.
// The records are parsed on a goroutine of their own, ahead of the reader. (The
// verification reads the input and the release at once, each on its own goroutine,
// beside the counting: parsing a file on more goroutines than one was measured to cost
// more CPU than it saves there.)
type CSVRecords struct {
	cancel context.CancelFunc
	width  int
	in     chan []string // batches of records, flat
	free   chan []string // batches read, for the reading to fill again
	errc   <-chan error
	cur    []string
	last   []string // the batch cur is the rest of
	err    error
}

// Records starts reading the records from the current position, each projected to
// cols (indexes into Header, in the order given). Close stops it.
func (c *CSVFile) Records(ctx context.Context, cols []int) *CSVRecords {
	ctx, cancel := context.WithCancel(ctx)
	rr := &CSVRecords{cancel: cancel, width: len(cols), in: make(chan []string, 2), free: make(chan []string, 4)}
	rr.errc = safe.Start(func() error { return c.readAhead(ctx, cols, rr.in, rr.free) })
	return rr
}

// readAhead sends the records, projected, in batches of fields to out, and closes out;
// it fills the batches of free again rather than allocate new ones.
func (c *CSVFile) readAhead(ctx context.Context, cols []int, out chan<- []string, free <-chan []string) error {
	defer close(out)
	for _, col := range cols {
		if col < 0 || col >= len(c.header) {
			return fmt.Errorf("%s: no column %d of %d", c.path, col, len(c.header))
		}
	}
	b := newCSVBatcher(len(cols), c.batch, c.internValues, c.internBytes)
	b.free = free
	send := func() error {
		flat := b.take()
		if len(flat) == 0 {
			return nil
		}
		select {
		case out <- flat:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for row := 1; ; row++ {
		fields, err := c.p.next()
		if errors.Is(err, io.EOF) {
			return send()
		}
		if err != nil {
			if serr := send(); serr != nil { // the records before it first
				return serr
			}
			return fmt.Errorf("%s: record %d: %w", c.path, row, err)
		}
		if b.add(fields, cols) {
			if err := send(); err != nil {
				return err
			}
		}
	}
}

// Read returns the next record, or io.EOF after the last. The record (the slice; its
// strings stay valid) is valid until the next Read: its batch is then filled again.
func (rr *CSVRecords) Read() ([]string, error) {
	for len(rr.cur) == 0 {
		if rr.err != nil {
			return nil, rr.err
		}
		if rr.last != nil {
			select { // the batch read, to be filled again
			case rr.free <- rr.last[:0]:
			default:
			}
			rr.last = nil
		}
		b, ok := <-rr.in
		if !ok {
			if rr.err = <-rr.errc; rr.err == nil {
				rr.err = io.EOF
			}
			return nil, rr.err
		}
		rr.cur, rr.last = b, b
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

// csvBatcher turns projected records into batches of strings that outlive the parser's
// buffers, interning each column's values up to a bound.
type csvBatcher struct {
	width, records int
	flat           []string        // the batch's records, flat
	free           <-chan []string // batches to fill again (nil: none)
	cols           []csvIntern
	text           []byte // the values of the batch not interned, one after another
	late           []int  // for each of them: its index in flat, its end in text
}

// csvIntern is a column's interned values (m, nil once full), the last looked up in
// each slot of a small cache in front of m, and how many more values and bytes m may
// take.
type csvIntern struct {
	m             map[string]string
	cache         *[1 << csvCacheBits]csvCached
	values, bytes int
}

// csvCached is a value in a column's cache: its key (internKey) and the interned string.
type csvCached struct {
	key csvKey
	s   string
}

// csvCacheBits sizes a column's cache: 1,024 slots, 40 KiB; a column of a hundred
// values seldom has two in one slot (BenchmarkCSVRecords, interleaved runs: 21.1,
// 21.5, 21.5 ms with 1,024 slots; 23.3, 23.9, 23.7 ms with 256).
const csvCacheBits = 10

// newCSVBatcher makes batches of records of width fields, records at a time, each
// column interning values distinct values of bytes bytes at most.
func newCSVBatcher(width, records, values, bytes int) *csvBatcher {
	b := &csvBatcher{width: width, records: records, cols: make([]csvIntern, width)}
	for j := range b.cols {
		b.cols[j] = csvIntern{m: map[string]string{}, cache: new([1 << csvCacheBits]csvCached), values: values, bytes: bytes}
	}
	return b
}

// add adds a record's fields cols to the batch; it reports whether the batch is full.
func (b *csvBatcher) add(fields [][]byte, cols []int) bool {
	if b.flat == nil {
		select {
		case f := <-b.free:
			b.flat = f[:0]
		default:
			b.flat = make([]string, 0, b.records*b.width)
		}
	}
	for j, col := range cols {
		v := fields[col]
		if len(v) == 0 {
			b.flat = append(b.flat, "")
			continue
		}
		t := &b.cols[j]
		if t.m != nil {
			key := internKey(v)
			e := &t.cache[key.slot()]
			if e.key == key && (len(v) <= 16 || e.s == string(v)) {
				b.flat = append(b.flat, e.s)
				continue
			}
			if s, ok := t.m[string(v)]; ok {
				*e = csvCached{key, s}
				b.flat = append(b.flat, s)
				continue
			}
			if t.values > 0 && len(v) <= t.bytes {
				s := string(v)
				t.m[s] = s
				*e = csvCached{key, s}
				t.values--
				t.bytes -= len(v)
				b.flat = append(b.flat, s)
				continue
			}
			t.m, t.cache = nil, nil // full: the column's values are no longer interned
		}
		b.text = append(b.text, v...)
		b.late = append(b.late, len(b.flat), len(b.text))
		b.flat = append(b.flat, "")
	}
	return len(b.flat) >= b.records*b.width
}

// csvKey is a value's length and up to its first and last 8 bytes: all of a value of
// up to 16 bytes, which it tells from every other.
type csvKey struct {
	n      int
	w0, w1 uint64
}

// internKey is v's key; v is not empty.
func internKey(v []byte) csvKey {
	n := len(v)
	switch {
	case n >= 8:
		return csvKey{n, binary.LittleEndian.Uint64(v), binary.LittleEndian.Uint64(v[n-8:])}
	case n >= 4:
		return csvKey{n, uint64(binary.LittleEndian.Uint32(v)) | uint64(binary.LittleEndian.Uint32(v[n-4:]))<<32, 0}
	default:
		return csvKey{n, uint64(v[0]) | uint64(v[n/2])<<8 | uint64(v[n-1])<<16, 0}
	}
}

// slot is the key's slot in a column's cache.
func (k csvKey) slot() uint {
	x := k.w0 ^ bits.RotateLeft64(k.w1, 31) ^ uint64(k.n)*0xff51afd7ed558ccd
	x ^= x >> 29
	return uint((x * 0x9e3779b97f4a7c15) >> (64 - csvCacheBits))
}

// take returns the batch's records, flat, and starts a new batch.
func (b *csvBatcher) take() []string {
	flat := b.flat
	if len(b.text) > 0 {
		s := string(b.text)
		start := 0
		for k := 0; k < len(b.late); k += 2 {
			flat[b.late[k]] = s[start:b.late[k+1]]
			start = b.late[k+1]
		}
		b.text, b.late = b.text[:0], b.late[:0]
	}
	b.flat = nil
	return flat
}
