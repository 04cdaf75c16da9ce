package verify

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// The verifier's CSV reader (csvParser) reads exactly what encoding/csv reads when
// configured as the verifier used it (RFC 4180; a separator of the configuration's
// choosing; no lazy quotes, no comments, no trimming; every record as wide as the
// first): the same records, the same fields, and the first error at the same record,
// line and column (FuzzCSVMatchesStdlib holds it to that).
//
//   - A line ending "\r\n" reads as "\n", inside a quoted field too; a "\r" alone is
//     data, except a last one before the end of the file, which is dropped.
//   - Empty lines are skipped (they count as lines for error messages).
//   - A field starting with '"' is quoted: it ends at the quote followed by the
//     separator, a line end or the end of the file; "" inside is one quote. Anything
//     else after the closing quote, or no closing quote, is errCSVQuote.
//   - A quote inside a field that does not start with one is errCSVBareQuote.
//   - Every record has as many fields as the first one read (the header), or as the
//     width it is given, else errCSVFieldCount.

// The errors of a malformed record, as csvError.Err.
var (
	errCSVBareQuote  = errors.New(`bare " in non-quoted-field`)
	errCSVQuote      = errors.New(`extraneous or missing " in quoted-field`)
	errCSVFieldCount = errors.New("wrong number of fields")
	errCSVSeparator  = errors.New("invalid field separator")
)

// csvError is a malformed record: where it starts, where the error is (1-based lines,
// and a 1-based byte column), and what it is. Its message never quotes the record.
type csvError struct {
	StartLine, Line, Column int
	Err                     error
}

// Error words the error as encoding/csv does.
func (e *csvError) Error() string {
	if e.Err == errCSVFieldCount {
		return fmt.Sprintf("record on line %d: %v", e.Line, e.Err)
	}
	if e.StartLine != e.Line {
		return fmt.Sprintf("record on line %d; parse error on line %d, column %d: %v", e.StartLine, e.Line, e.Column, e.Err)
	}
	return fmt.Sprintf("parse error on line %d, column %d: %v", e.Line, e.Column, e.Err)
}

// Unwrap returns what is wrong: errCSVBareQuote, errCSVQuote or errCSVFieldCount.
func (e *csvError) Unwrap() error { return e.Err }

// validCSVSeparator reports whether r can separate fields: any valid rune but the
// quote, a line break, NUL and the replacement character.
func validCSVSeparator(r rune) bool {
	return r != 0 && r != '"' && r != '\r' && r != '\n' && utf8.ValidRune(r) && r != utf8.RuneError
}

// csvReadSize is the size of the parser's input buffer; it grows for a longer line.
const csvReadSize = 1 << 20

// csvParser reads the records of a CSV table one at a time.
type csvParser struct {
	r        io.Reader
	buf      []byte
	pos, end int   // the input read and not yet parsed is buf[pos:end]
	eof      bool  // r has nothing more
	rerr     error // r failed, after the input in buf

	sep    []byte // the separator, UTF-8
	width  int    // fields a record has; 0: as many as the next record
	line   int    // lines read
	fields [][]byte

	// A record with a quote is parsed a line at a time: the line with its line end
	// normalized to "\n", and the record's field values.
	lineBuf []byte
	rec     []byte
	ends    []int
}

// newCSVParser reads records separated by sep from r, each width fields wide (0: as
// wide as the first), size bytes at a time (csvReadSize; tests use fewer).
func newCSVParser(r io.Reader, sep rune, width, size int) (*csvParser, error) {
	if !validCSVSeparator(sep) {
		return nil, errCSVSeparator
	}
	return &csvParser{r: r, buf: make([]byte, max(size, 1)), sep: utf8.AppendRune(nil, sep), width: width}, nil
}

// skipPrefix skips prefix if the input starts with it.
func (p *csvParser) skipPrefix(prefix []byte) {
	for p.end-p.pos < len(prefix) && !p.eof && p.rerr == nil {
		p.fill()
	}
	if bytes.HasPrefix(p.buf[p.pos:p.end], prefix) {
		p.pos += len(prefix)
	}
}

// next returns the fields of the next record, valid until the next call; io.EOF after
// the last record; a *csvError for a malformed record.
func (p *csvParser) next() ([][]byte, error) {
	var line []byte
	var nl bool
	for {
		l, n, err := p.readLine()
		if err != nil {
			return nil, err
		}
		if len(l) > 0 {
			line, nl = l, n
			break
		}
	}
	recLine := p.line
	var fields [][]byte
	if bytes.IndexByte(line, '"') < 0 {
		fields = p.split(line)
	} else if f, ok := p.quotedLine(line); ok {
		fields = f
	} else {
		var err error
		if fields, err = p.quoted(line, nl); err != nil {
			return nil, err
		}
	}
	if p.width == 0 {
		p.width = len(fields)
	} else if len(fields) != p.width {
		return nil, &csvError{StartLine: recLine, Line: recLine, Column: 1, Err: errCSVFieldCount}
	}
	return fields, nil
}

// split cuts a line without quotes at the separators.
func (p *csvParser) split(line []byte) [][]byte {
	fields := p.fields[:0]
	if len(p.sep) == 1 {
		sep := p.sep[0]
		for {
			i := bytes.IndexByte(line, sep)
			if i < 0 {
				break
			}
			fields = append(fields, line[:i])
			line = line[i+1:]
		}
	} else {
		for {
			i := bytes.Index(line, p.sep)
			if i < 0 {
				break
			}
			fields = append(fields, line[:i])
			line = line[i+len(p.sep):]
		}
	}
	fields = append(fields, line)
	p.fields = fields
	return fields
}

// quotedLine parses, in place, a record of one line (its line end removed) whose
// quoted fields hold no quote, the common case of a record with quotes (a separator or
// a line break inside a field): its fields are slices of the line, as split's. ok is
// false for any other record, which quoted then parses (and finds malformed, if it
// is).
func (p *csvParser) quotedLine(line []byte) (fields [][]byte, ok bool) {
	fields = p.fields[:0]
	for {
		if len(line) > 0 && line[0] == '"' {
			i := bytes.IndexByte(line[1:], '"')
			if i < 0 {
				return nil, false // on further lines, or not closed
			}
			field, rest := line[1:1+i], line[2+i:]
			fields = append(fields, field)
			if len(rest) == 0 {
				break
			}
			if !bytes.HasPrefix(rest, p.sep) {
				return nil, false // a doubled quote, or something after the closing one
			}
			line = rest[len(p.sep):]
			continue
		}
		i := bytes.Index(line, p.sep)
		field := line
		if i >= 0 {
			field = line[:i]
		}
		if bytes.IndexByte(field, '"') >= 0 {
			return nil, false // a bare quote
		}
		fields = append(fields, field)
		if i < 0 {
			break
		}
		line = line[i+len(p.sep):]
	}
	p.fields = fields
	return fields, true
}

// quoted parses a record whose first line (its line end removed; nl if it had one)
// holds a quote, reading its further lines.
func (p *csvParser) quoted(first []byte, nl bool) ([][]byte, error) {
	line := p.normalLine(first, nl)
	recLine := p.line
	p.rec, p.ends = p.rec[:0], p.ends[:0]
	lineNo, col := p.line, 1
	sepLen := len(p.sep)
	var err error
parseField:
	for {
		if len(line) == 0 || line[0] != '"' {
			// An unquoted field: up to the separator or the line end.
			i := bytes.Index(line, p.sep)
			field := line
			if i >= 0 {
				field = field[:i]
			} else {
				field = field[:len(field)-endNL(field)]
			}
			if j := bytes.IndexByte(field, '"'); j >= 0 {
				err = &csvError{StartLine: recLine, Line: p.line, Column: col + j, Err: errCSVBareQuote}
				break
			}
			p.rec = append(p.rec, field...)
			p.ends = append(p.ends, len(p.rec))
			if i < 0 {
				break
			}
			line = line[i+sepLen:]
			col += i + sepLen
			continue
		}
		// A quoted field: up to a quote followed by the separator or the line end.
		line = line[1:]
		col++
		for {
			i := bytes.IndexByte(line, '"')
			switch {
			case i >= 0:
				p.rec = append(p.rec, line[:i]...)
				line = line[i+1:]
				col += i + 1
				switch {
				case len(line) > 0 && line[0] == '"': // a doubled quote
					p.rec = append(p.rec, '"')
					line = line[1:]
					col++
				case bytes.HasPrefix(line, p.sep): // the field's end
					line = line[sepLen:]
					col += sepLen
					p.ends = append(p.ends, len(p.rec))
					continue parseField
				case len(line) == endNL(line): // the record's end
					p.ends = append(p.ends, len(p.rec))
					break parseField
				default:
					err = &csvError{StartLine: recLine, Line: p.line, Column: col - 1, Err: errCSVQuote}
					break parseField
				}
			case len(line) > 0: // the field goes on on the next line
				p.rec = append(p.rec, line...)
				col += len(line)
				next, nl, rerr := p.readLine()
				if rerr != nil && !errors.Is(rerr, io.EOF) {
					return nil, rerr
				}
				line = p.normalLine(next, nl)
				if len(line) > 0 {
					lineNo++
					col = 1
				}
			default: // the end of the file inside the quotes
				err = &csvError{StartLine: recLine, Line: lineNo, Column: col, Err: errCSVQuote}
				break parseField
			}
		}
	}
	if err != nil {
		return nil, err
	}
	fields := p.fields[:0]
	start := 0
	for _, end := range p.ends {
		fields = append(fields, p.rec[start:end])
		start = end
	}
	p.fields = fields
	return fields, nil
}

// normalLine copies a line (its line end removed; nl if it had one) to lineBuf, with
// "\n" for its line end.
func (p *csvParser) normalLine(line []byte, nl bool) []byte {
	p.lineBuf = append(p.lineBuf[:0], line...)
	if nl {
		p.lineBuf = append(p.lineBuf, '\n')
	}
	return p.lineBuf
}

// endNL is the length of b's trailing "\n": 1 or 0.
func endNL(b []byte) int {
	if len(b) > 0 && b[len(b)-1] == '\n' {
		return 1
	}
	return 0
}

// readLine returns the next line without its line end ("\n" or "\r\n"; nl reports
// one), valid until the next call; a "\r" that ends the input is dropped. It returns
// io.EOF when nothing is left.
func (p *csvParser) readLine() (line []byte, nl bool, err error) {
	scan := p.pos
	for {
		if i := bytes.IndexByte(p.buf[scan:p.end], '\n'); i >= 0 {
			line = p.buf[p.pos : scan+i]
			p.pos = scan + i + 1
			p.line++
			if n := len(line); n > 0 && line[n-1] == '\r' {
				line = line[:n-1]
			}
			return line, true, nil
		}
		if p.eof || p.rerr != nil {
			if p.pos == p.end {
				if p.rerr != nil {
					return nil, false, p.rerr
				}
				return nil, false, io.EOF
			}
			line = p.buf[p.pos:p.end]
			p.pos = p.end
			p.line++
			if n := len(line); n > 0 && line[n-1] == '\r' {
				line = line[:n-1]
			}
			return line, false, nil
		}
		scan = p.end - p.pos
		p.fill()
	}
}

// fill moves the unparsed input to the start of the buffer (growing it if full) and
// reads more after it.
func (p *csvParser) fill() {
	n := copy(p.buf, p.buf[p.pos:p.end])
	p.pos, p.end = 0, n
	if p.end == len(p.buf) {
		p.buf = append(p.buf, make([]byte, len(p.buf))...)
		p.buf = p.buf[:cap(p.buf)]
	}
	for tries := 0; tries < 100; tries++ {
		m, err := p.r.Read(p.buf[p.end:])
		p.end += m
		if errors.Is(err, io.EOF) {
			p.eof = true
			return
		}
		if err != nil {
			p.rerr = err
			return
		}
		if m > 0 {
			return
		}
	}
	p.rerr = io.ErrNoProgress
}
