package table

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
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"golang.org/x/sync/errgroup"

	"sanitizer/fault"
	"sanitizer/internal/safe"
	"sanitizer/schema"
)

// csvSource is an open CSV input positioned after its header. It checksums the bytes
// it reads, so that a second pass can prove it read the same input as the first. Its
// records are parsed in blocks on several goroutines (csvparse.go).
type csvSource struct {
	path    string
	dialect schema.CSV
	names   []string
	file    *os.File
	split   *csvSplitter
	block   int         // the splitter's block size
	pending []byte      // what the first block holds after the header
	line    int         // line ends before the records not yet streamed
	sum     hash.Hash32 // CRC-32C of the bytes read since the last rewind
	header  []string
	read    int    // records read so far in this pass
	pass1   uint32 // checksum of the first pass
	rows1   int    // records of the first pass
	rewound bool   // a second pass started
}

func (s *csvSource) Columns() []Column {
	out := make([]Column, len(s.header))
	for i, h := range s.header {
		out[i] = Column{Name: h}
	}
	return out
}

func (s *csvSource) Rows() int { return s.read }

func (s *csvSource) Metadata() map[string]string { return nil }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// OpenCSV opens a CSV table. Without a header row, the columns are named by names
// (the configuration's columns, in order).
func OpenCSV(path string, dialect schema.CSV, names []string) (*csvSource, error) {
	return openCSVBlocks(path, dialect, names, csvBlockBytes)
}

// openCSVBlocks is openCSV reading blocks of the given size.
func openCSVBlocks(path string, dialect schema.CSV, names []string, block int) (*csvSource, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fault.BadInput("input: %w", err)
	}
	s := &csvSource{path: path, dialect: dialect, names: names, file: f, block: block}
	if err := s.start(); err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

// start reads from the file's current position (its start): the header, then records.
func (s *csvSource) start() error {
	s.sum = crc32.New(castagnoli)
	s.read, s.line, s.pending = 0, 0, nil
	br := bufio.NewReaderSize(io.TeeReader(s.file, s.sum), 1<<16)
	if err := skipBOM(br); err != nil {
		return s.wrap(err, 0)
	}
	s.split = &csvSplitter{r: br, size: s.block}
	if !s.dialect.Header {
		s.header = append([]string(nil), s.names...)
		return nil
	}
	h, err := s.readHeader()
	if err != nil {
		return err
	}
	s.header = h
	seen := map[string]int{}
	for i, name := range s.header {
		// Positions only: a file without a header row would put data here.
		if j, dup := seen[name]; dup {
			return fault.BadInput("%s: header: columns %d and %d have the same name", s.path, j+1, i+1)
		}
		if name == "" {
			return fault.BadInput("%s: header: column %d has no name", s.path, i+1)
		}
		seen[name] = i
	}
	return nil
}

// readHeader reads the first record, and keeps what follows it in its block.
func (s *csvSource) readHeader() ([]string, error) {
	p := newCSVParser(s.dialect.Separator, 0, nil)
	lines := 0 // the empty lines of the blocks before
	for {
		block, err := s.split.next()
		if errors.Is(err, io.EOF) {
			return nil, fault.BadInput("%s: empty file: no header row", s.path)
		}
		if err != nil {
			return nil, s.wrap(err, 0)
		}
		pos, line := skipEmpty(block, 0, 0)
		if pos == len(block) {
			lines += line
			continue
		}
		h, pos, after, err := p.record(block, pos, line, nil)
		if err != nil {
			return nil, s.wrap(err, lines+line+1)
		}
		s.pending, s.line = block[pos:], lines+after
		return h, nil
	}
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

// Rewind starts a second pass over the same open file and checks that its header is
// the one read before; the first pass's checksum and record count are kept for
// unchanged.
func (s *csvSource) Rewind() error {
	s.pass1, s.rows1, s.rewound = s.sum.Sum32(), s.read, true
	before := s.header
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("%s: rewinding the input: %w", s.path, err)
	}
	if err := s.start(); err != nil {
		return err
	}
	if !slices.Equal(before, s.header) {
		return ChangedError(s.path)
	}
	return nil
}

// Unchanged compares the second pass's checksum (CRC-32C of every byte) and record
// count with the first pass's.
func (s *csvSource) Unchanged() error {
	if s.sum.Sum32() != s.pass1 || s.read != s.rows1 {
		return ChangedError(s.path)
	}
	return nil
}

// firstSum is the checksum of the first pass.
func (s *csvSource) firstSum() uint32 {
	if s.rewound {
		return s.pass1
	}
	return s.sum.Sum32()
}

// Checksums is, for a CSV input (or one in CSV parts) after its first pass, the CRC-32C
// (Castagnoli) of every byte of each of its files as that pass read them, in order;
// nil for the other formats. A reader of the files later compares its own.
func Checksums(src Source) []uint32 {
	switch s := src.(type) {
	case *csvSource:
		return []uint32{s.firstSum()}
	case *partsSource:
		var out []uint32
		for _, p := range s.parts {
			c, ok := p.(*csvSource)
			if !ok {
				return nil
			}
			out = append(out, c.firstSum())
		}
		return out
	}
	return nil
}

// ChangedError is the error for an input that changed between the two passes.
func ChangedError(path string) error {
	return fault.BadInput("%s: the input changed while it was being released", path)
}

func (s *csvSource) Close() error { return s.file.Close() }

// wrap turns an error reading the record that starts on the given line (0: none
// known) into a bad-input error naming the file and the record.
func (s *csvSource) wrap(err error, line int) error {
	if errors.Is(err, csv.ErrQuote) || errors.Is(err, csv.ErrBareQuote) || errors.Is(err, csv.ErrFieldCount) {
		return fault.BadInput("%s: row %d (line %d): malformed CSV: %v", s.path, s.read+1, line, err)
	}
	return fault.BadInput("%s: row %d: %w", s.path, s.read+1, err)
}

// csvJob is one block of records, parsed by a worker.
type csvJob struct {
	data   []byte
	parsed csvParsed
	done   chan struct{}
}

// Stream sends batches of the records projected to cols to out, closing out at the end.
// Blocks are parsed on GOMAXPROCS goroutines and sent in file order.
func (s *csvSource) Stream(ctx context.Context, cols []int, out chan<- *Batch) error {
	defer close(out)
	workers := runtime.GOMAXPROCS(0)
	p := newCSVParser(s.dialect.Separator, len(s.header), cols)
	g, ctx := errgroup.WithContext(ctx)
	todo := make(chan *csvJob, workers)
	order := make(chan *csvJob, workers)
	g.Go(guard(func() error { return s.splitBlocks(ctx, todo, order) }))
	for range workers {
		g.Go(guard(func() error {
			for j := range todo {
				j.parsed = p.parse(j.data)
				close(j.done)
			}
			return nil
		}))
	}
	g.Go(guard(func() error { return s.sendParsed(ctx, order, len(cols), out) }))
	return g.Wait()
}

// splitBlocks hands every block of the input, in order, to the parsers (todo) and to
// the sender (order).
func (s *csvSource) splitBlocks(ctx context.Context, todo, order chan<- *csvJob) error {
	defer close(order)
	defer close(todo)
	for {
		data := s.pending
		s.pending = nil
		if len(data) == 0 {
			var err error
			if data, err = s.split.next(); errors.Is(err, io.EOF) {
				return nil
			} else if err != nil {
				return s.wrap(err, 0)
			}
		}
		j := &csvJob{data: data, done: make(chan struct{})}
		for _, c := range []chan<- *csvJob{order, todo} {
			select {
			case c <- j:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
}

// sendParsed sends the parsed blocks' records, in order, as batches of at most
// batchRows records of width fields, and stops at the first malformed record.
func (s *csvSource) sendParsed(ctx context.Context, order <-chan *csvJob, width int, out chan<- *Batch) error {
	for j := range order {
		select {
		case <-j.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		r := j.parsed
		for lo := 0; lo < r.n; lo += BatchRows {
			n := min(BatchRows, r.n-lo)
			b := &Batch{First: s.read, Width: width, Fields: r.fields[lo*width : (lo+n)*width : (lo+n)*width], N: n}
			select {
			case out <- b:
			case <-ctx.Done():
				return ctx.Err()
			}
			s.read += n
		}
		if r.err != nil {
			return s.wrap(r.err, s.line+r.errLine+1)
		}
		s.line += r.lines
	}
	return nil
}

// csvSink writes CSV records to a file, formatted as encoding/csv's Writer formats
// them (appendCSVField). A null is written as an empty field. It is a preparer: the
// records of a batch are formatted on the recoders' goroutines, a dictionary column's
// labels once for the whole file.
type csvSink struct {
	w      io.Writer // the file, under b
	b      *bufio.Writer
	cols   []OutColumn
	comma  rune
	labels [][][]byte // per column with a dictionary: each label, formatted
	// spare holds the buffers of batches written (*[]byte), for Prepare to fill
	// again: a batch's text is megabytes, which a new allocation would clear first.
	spare sync.Pool
}

// newCSVSink starts a CSV table with the given columns (their names are the header
// row when the dialect has one).
func newCSVSink(f io.Writer, dialect schema.CSV, cols []OutColumn) (*csvSink, error) {
	s := &csvSink{w: f, b: bufio.NewWriterSize(f, 1<<20), cols: cols, comma: dialect.Separator, labels: make([][][]byte, len(cols))}
	for j, c := range cols {
		for _, l := range c.Dict {
			s.labels[j] = append(s.labels[j], appendCSVField(nil, l, s.comma))
		}
	}
	if dialect.Header {
		names := make([]string, len(cols))
		for i, c := range cols {
			names[i] = c.Name
		}
		if _, err := s.b.Write(s.appendRecord(nil, names)); err != nil {
			return nil, fmt.Errorf("writing the header: %w", err)
		}
	}
	return s, nil
}

func (s *csvSink) Write(fields []string, nulls []bool, n int) error {
	return writeThrough(s, fields, nulls, n)
}

// Prepare formats the records of r. It only reads s, so several goroutines may
// Prepare at once.
func (s *csvSink) Prepare(r *Rows) (any, error) {
	if slices.ContainsFunc(r.Arrays, func(a arrow.Array) bool { return a != nil }) {
		return nil, fault.Internalf("the CSV sink takes text, not arrays")
	}
	w := len(s.cols)
	var out []byte
	if b, ok := s.spare.Get().(*[]byte); ok {
		out = (*b)[:0]
	} else {
		out = make([]byte, 0, r.N*16*w)
	}
	rec := make([]string, w)
	for i := range r.N {
		if r.Keys == nil {
			copy(rec, r.Fields[i*w:(i+1)*w])
			for j := range rec {
				if r.Nulls != nil && r.Nulls[i*w+j] {
					rec[j] = ""
				}
			}
			out = s.appendRecord(out, rec)
			continue
		}
		start := len(out)
		for j := range w {
			if j > 0 {
				out = utf8.AppendRune(out, s.comma)
			}
			switch {
			case r.Keys[j] != nil:
				out = append(out, s.labels[j][r.Keys[j][i]]...)
			case r.Nulls == nil || !r.Nulls[i*w+j]:
				out = appendCSVField(out, r.Fields[i*w+j], s.comma)
			}
		}
		if w == 1 && len(out) == start {
			out = append(out, `""`...) // as appendRecord
		}
		out = append(out, '\n')
	}
	return out, nil
}

// WritePrepared writes prepare's records, in order: a batch as large as the buffer's
// half goes to the file as it is, after what the buffer holds, rather than copied
// through the buffer.
func (s *csvSink) WritePrepared(p any) error {
	b := p.([]byte)
	defer s.spare.Put(&b) // written (or failed): Prepare may fill it again
	if len(b) < s.b.Size()/2 {
		_, err := s.b.Write(b)
		return err
	}
	if err := s.b.Flush(); err != nil {
		return err
	}
	_, err := s.w.Write(b)
	return err
}

// appendRecord appends one record and its line end. A record of one empty field is
// written as "" (as an empty line it would be skipped by readers).
func (s *csvSink) appendRecord(out []byte, rec []string) []byte {
	if len(rec) == 1 && rec[0] == "" {
		return append(out, `""`+"\n"...)
	}
	for j, f := range rec {
		if j > 0 {
			out = utf8.AppendRune(out, s.comma)
		}
		out = appendCSVField(out, f, s.comma)
	}
	return append(out, '\n')
}

// appendCSVField appends a field as encoding/csv's Writer (without UseCRLF) writes it:
// quoted when it holds the separator, a quote, "\r" or "\n", starts with a space
// character, or is `\.`; a quote inside doubled.
func appendCSVField(out []byte, f string, comma rune) []byte {
	if !csvNeedsQuotes(f, comma) {
		return append(out, f...)
	}
	out = append(out, '"')
	for {
		i := strings.IndexByte(f, '"')
		if i < 0 {
			out = append(out, f...)
			break
		}
		out = append(out, f[:i+1]...)
		out = append(out, '"')
		f = f[i+1:]
	}
	return append(out, '"')
}

// csvNeedsQuotes is encoding/csv's rule for quoting a field.
func csvNeedsQuotes(f string, comma rune) bool {
	if f == "" {
		return false
	}
	if f == `\.` {
		return true
	}
	if comma < utf8.RuneSelf {
		for i := 0; i < len(f); i++ {
			if c := f[i]; c == '\n' || c == '\r' || c == '"' || c == byte(comma) {
				return true
			}
		}
	} else if strings.ContainsRune(f, comma) || strings.ContainsAny(f, "\"\r\n") {
		return true
	}
	r, _ := utf8.DecodeRuneInString(f)
	return unicode.IsSpace(r)
}

// Finish flushes the table.
func (s *csvSink) Finish() error {
	if err := s.b.Flush(); err != nil {
		return fmt.Errorf("writing release: %w", err)
	}
	return nil
}

// guard runs f and turns a panic into an error (safe.PanicError), so that a failing
// stage goroutine cancels the others and the run cleans up instead of crashing with
// files left behind.
func guard(f func() error) func() error { return safe.Go(f) }
