package table

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// The CSV input is read in blocks of whole records (csvSplitter) that are parsed on
// several goroutines at once (parseCSVBlock) and handed on in file order. The parser
// reads exactly what encoding/csv reads with its defaults (RFC 4180, a separator of
// the configuration's choosing, no lazy quotes, no comments, no trimming): the same
// records, the same fields, and the first error at the same record (FuzzCSVMatchesStdlib
// holds it to that).
//
//   - A line ending "\r\n" reads as "\n", inside a quoted field too; a "\r" alone is
//     data, except a last one before the end of the file, which is dropped.
//   - Empty lines are skipped (they count as lines for error messages).
//   - A field starting with '"' is quoted: it ends at the quote followed by the
//     separator, a line end or the end of the file; "" inside is one quote. Anything
//     else after the closing quote, or no closing quote, is csv.ErrQuote.
//   - A quote inside a field that does not start with one is csv.ErrBareQuote.
//   - Every record has as many fields as the first one (the header), else
//     csv.ErrFieldCount.

// csvBlockBytes is the size of the blocks the splitter reads: a few thousand records
// of a typical table, worth handing to a goroutine, few enough that the blocks in
// flight (one per worker waiting, one per worker parsing) stay a few megabytes (with
// 1 MiB blocks, Adult ×100 peaked at 142 MB instead of 102).
const csvBlockBytes = 1 << 18

// csvSplitter cuts a CSV input into blocks of whole records.
type csvSplitter struct {
	r     io.Reader
	size  int    // bytes read at once (csvBlockBytes; tests use fewer)
	carry []byte // the start of a record read with the previous block
	eof   bool
}

// next returns the next block: whole records, the last of the file possibly without
// its line end; io.EOF after the last. A block is never written to again.
func (sp *csvSplitter) next() ([]byte, error) {
	size := sp.size
	for {
		if sp.eof {
			if len(sp.carry) == 0 {
				return nil, io.EOF
			}
			b := sp.carry
			sp.carry = nil
			return b, nil
		}
		size = max(size, 2*len(sp.carry))
		buf := make([]byte, size)
		n := copy(buf, sp.carry)
		m, err := io.ReadFull(sp.r, buf[n:])
		buf = buf[:n+m]
		switch {
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			sp.eof = true
		case err != nil:
			return nil, err
		}
		if sp.eof {
			sp.carry = buf
			continue
		}
		if cut := csvRecordsEnd(buf); cut > 0 {
			sp.carry = buf[cut:]
			return buf[:cut], nil
		}
		sp.carry = buf // one record longer than the block: read on
	}
}

// csvRecordsEnd is the position after the last line end of data that lies outside
// quotes, counting from a record's start (0 when there is none). In a well-formed
// file every quoted field holds an even number of quotes; a stray quote makes the
// records after it misread here, but the parser stops at that quote first.
func csvRecordsEnd(data []byte) int {
	end, pos, quoted := 0, 0, false
	for pos < len(data) {
		q := bytes.IndexByte(data[pos:], '"')
		stop := len(data)
		if q >= 0 {
			stop = pos + q
		}
		if !quoted {
			if nl := bytes.LastIndexByte(data[pos:stop], '\n'); nl >= 0 {
				end = pos + nl + 1
			}
		}
		if q < 0 {
			break
		}
		quoted = !quoted
		pos = stop + 1
	}
	return end
}

// csvParser reads records from blocks. width is the number of fields every record
// must have (0: not known yet, the first record sets it); cols are the fields kept
// (nil: all).
type csvParser struct {
	sep   []byte
	width int
	cols  []int
}

func newCSVParser(sep rune, width int, cols []int) *csvParser {
	return &csvParser{sep: utf8.AppendRune(nil, sep), width: width, cols: cols}
}

// csvParsed is what parsing a block found: n records of the kept fields (flat), the
// lines the block spans, and the first malformed record, if any.
type csvParsed struct {
	fields []string
	n      int
	lines  int // line ends in the block
	err    error
	errRec int // the malformed record's index in the block
	// errLine is the line, counted from the block's first, on which the malformed
	// record starts
	errLine int
}

// parse reads every record of a block.
func (p *csvParser) parse(data []byte) csvParsed {
	var out csvParsed
	kept := p.kept()
	out.fields = make([]string, 0, kept*(len(data)/64+1))
	var rec []string
	pos, line := 0, 0
	for {
		if pos, line = skipEmpty(data, pos, line); pos >= len(data) {
			out.lines = line
			return out
		}
		var err error
		start := line
		rec, pos, line, err = p.record(data, pos, line, rec[:0])
		if err == nil && p.width != 0 && len(rec) != p.width {
			err = csv.ErrFieldCount
		}
		if err != nil {
			out.err, out.errRec, out.errLine = err, out.n, start
			return out
		}
		out.fields = p.keep(out.fields, rec)
		out.n++
	}
}

// kept is the number of fields kept per record.
func (p *csvParser) kept() int {
	if p.cols == nil {
		return p.width
	}
	return len(p.cols)
}

// keep appends the kept fields of rec to fields.
func (p *csvParser) keep(fields, rec []string) []string {
	if p.cols == nil {
		return append(fields, rec...)
	}
	for _, c := range p.cols {
		fields = append(fields, rec[c])
	}
	return fields
}

// skipEmpty steps over the empty lines at pos, and returns the position and line
// count after them.
func skipEmpty(data []byte, pos, line int) (int, int) {
	for pos < len(data) {
		switch {
		case data[pos] == '\n':
			pos, line = pos+1, line+1
		case data[pos] == '\r' && pos+1 < len(data) && data[pos+1] == '\n':
			pos, line = pos+2, line+1
		case data[pos] == '\r' && pos+1 == len(data):
			pos++ // a last "\r" before the end of the file is dropped
		default:
			return pos, line
		}
	}
	return pos, line
}

// record reads the record at pos (after skipEmpty, before the end of data) and
// returns its fields (appended to rec), the position after it and the line count
// after it. The fields of a record without quotes point into data; those of a record
// with quotes share one string.
func (p *csvParser) record(data []byte, pos, line int, rec []string) ([]string, int, int, error) {
	end := len(data)
	if nl := bytes.IndexByte(data[pos:], '\n'); nl >= 0 {
		end = pos + nl
	}
	lineBytes := data[pos:end]
	if bytes.IndexByte(lineBytes, '"') < 0 {
		rec = p.plainRecord(lineBytes, rec)
		next := end
		if end < len(data) {
			next, line = end+1, line+1
		}
		return rec, next, line, nil
	}
	return p.quotedRecord(data, pos, line, rec)
}

// plainRecord splits a line without quotes (its line end left out) at the separator.
func (p *csvParser) plainRecord(b []byte, rec []string) []string {
	// "\r\n" reads as "\n"; a last "\r" before the end of the file is dropped.
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	// The fields point into the block, which is never written again (csvSplitter):
	// a consumer that keeps a field copies it, or it keeps the block.
	s := unsafe.String(unsafe.SliceData(b), len(b))
	for {
		i := p.index(s)
		if i < 0 {
			return append(rec, s)
		}
		rec = append(rec, s[:i])
		s = s[i+len(p.sep):]
	}
}

// index is the position of the separator in s, or −1.
func (p *csvParser) index(s string) int {
	if len(p.sep) == 1 {
		return strings.IndexByte(s, p.sep[0])
	}
	return strings.Index(s, string(p.sep))
}

// quotedRecord reads a record that holds a quote, field by field, across lines.
func (p *csvParser) quotedRecord(data []byte, pos, line int, rec []string) ([]string, int, int, error) {
	var buf []byte // the record's fields, unquoted, one after another
	var ends []int // where each field ends in buf
	for {
		var err error
		var endRec bool
		if pos < len(data) && data[pos] == '"' {
			buf, pos, line, endRec, err = p.quotedField(data, pos+1, line, buf)
		} else {
			buf, pos, line, endRec, err = p.plainField(data, pos, line, buf)
		}
		if err != nil {
			return nil, pos, line, err
		}
		ends = append(ends, len(buf))
		if endRec {
			break
		}
	}
	s, from := string(buf), 0
	for _, e := range ends {
		rec = append(rec, s[from:e])
		from = e
	}
	return rec, pos, line, nil
}

// plainField reads an unquoted field at pos into buf: up to the separator (endRec
// false) or the line end or the end of the file (endRec true), which it steps over.
func (p *csvParser) plainField(data []byte, pos, line int, buf []byte) ([]byte, int, int, bool, error) {
	end := len(data)
	if nl := bytes.IndexByte(data[pos:], '\n'); nl >= 0 {
		end = pos + nl
	}
	field := data[pos:end]
	if i := bytes.Index(field, p.sep); i >= 0 {
		field = field[:i]
		if bytes.IndexByte(field, '"') >= 0 {
			return buf, pos, line, false, csv.ErrBareQuote
		}
		return append(buf, field...), pos + i + len(p.sep), line, false, nil
	}
	if bytes.IndexByte(field, '"') >= 0 {
		return buf, pos, line, false, csv.ErrBareQuote
	}
	if n := len(field); n > 0 && field[n-1] == '\r' {
		field = field[:n-1]
	}
	if end < len(data) {
		end, line = end+1, line+1
	}
	return append(buf, field...), end, line, true, nil
}

// quotedField reads a quoted field whose opening quote is just before pos into buf,
// and steps over what follows its closing quote: the separator (endRec false), or a
// line end or the end of the file (endRec true).
func (p *csvParser) quotedField(data []byte, pos, line int, buf []byte) ([]byte, int, int, bool, error) {
	for {
		q := bytes.IndexByte(data[pos:], '"')
		if q < 0 {
			return buf, len(data), line, false, csv.ErrQuote
		}
		buf, line = appendQuoted(buf, data[pos:pos+q], line)
		pos += q + 1
		switch rest := data[pos:]; {
		case len(rest) > 0 && rest[0] == '"': // "" is one quote
			buf = append(buf, '"')
			pos++
		case bytes.HasPrefix(rest, p.sep):
			return buf, pos + len(p.sep), line, false, nil
		case len(rest) == 0 || (len(rest) == 1 && rest[0] == '\r'):
			return buf, len(data), line, true, nil
		case rest[0] == '\n':
			return buf, pos + 1, line + 1, true, nil
		case rest[0] == '\r' && len(rest) > 1 && rest[1] == '\n':
			return buf, pos + 2, line + 1, true, nil
		default:
			return buf, pos, line, false, csv.ErrQuote
		}
	}
}

// appendQuoted appends the text of a quoted field to buf, reading "\r\n" as "\n",
// and counts its line ends.
func appendQuoted(buf, text []byte, line int) ([]byte, int) {
	for {
		nl := bytes.IndexByte(text, '\n')
		if nl < 0 {
			return append(buf, text...), line
		}
		seg := text[:nl]
		if n := len(seg); n > 0 && seg[n-1] == '\r' {
			seg = seg[:n-1]
		}
		buf = append(append(buf, seg...), '\n')
		text, line = text[nl+1:], line+1
	}
}
