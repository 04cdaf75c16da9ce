package generalize

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"

	"sanitizer/fault"
	"sanitizer/internal/readfile"
	"sanitizer/schema"
)

// utf8BOM is the byte order mark some editors write at the start of a UTF-8 file.
const utf8BOM = "\ufeff"

// ReadHierarchy parses a hierarchy in ARX's format from r: one row per leaf value,
// "value;level1;…;top", separator ';', no header, every row ending in the same top
// label ("*", "any disease", …). name is the file name used in messages.
//
// Fields may be quoted as in RFC 4180 (so a value may contain ';' or '"'); lines may
// end in LF or CRLF; empty lines are skipped; a UTF-8 byte order mark at the start is
// ignored. Every error matches fault.ErrBadInput and reads "<name>:<line>: <message>",
// line being the file line where the offending row starts. Messages never quote values
// (a hierarchy may list the values of a sensitive column).
func ReadHierarchy(r io.Reader, name string) (*Hierarchy, error) {
	br := bufio.NewReader(r)
	if b, err := br.Peek(len(utf8BOM)); err == nil && string(b) == utf8BOM {
		if _, err := br.Discard(len(utf8BOM)); err != nil {
			return nil, fault.BadInput("%s: %w", name, err)
		}
	}
	cr := csv.NewReader(br)
	cr.Comma = ';'
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = false
	cr.LazyQuotes = false

	var (
		rows  [][]string
		lines []int // lines[i]: file line where rows[i] starts
	)
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, parseError(name, pe)
			}
			return nil, fault.BadInput("%s: reading hierarchy: %w", name, err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) > schema.MaxHierarchyLevels {
			return nil, fault.BadInput("%s:%d: a row of %d levels: a hierarchy has at most %d, the value and the top included", name, line, len(rec), schema.MaxHierarchyLevels)
		}
		rows = append(rows, rec)
		lines = append(lines, line)
	}
	if len(rows) == 0 {
		return nil, fault.BadInput("%s:1: empty hierarchy file: it needs one row per value, \"value;…;*\"", name)
	}
	h, err := NewHierarchy(name, rows)
	if err != nil {
		var re *RowError
		if errors.As(err, &re) && re.Row >= 0 && re.Row < len(lines) {
			return nil, fault.BadInput("%s:%d: %s", name, lines[re.Row], re.Msg)
		}
		return nil, fault.BadInput("%s: %w", name, err)
	}
	return h, nil
}

// parseError reports malformed CSV (quoting) at the line where the record starts.
func parseError(name string, pe *csv.ParseError) error {
	where := fmt.Sprintf("column %d", pe.Column)
	if pe.Line != pe.StartLine {
		where = fmt.Sprintf("line %d, column %d", pe.Line, pe.Column)
	}
	return fault.BadInput("%s:%d: malformed row (%s): %v", name, pe.StartLine, where, pe.Err)
}

// LoadHierarchy reads the hierarchy file at path, a regular file of at most
// schema.MaxHierarchyBytes.
func LoadHierarchy(path string) (*Hierarchy, error) {
	data, err := readfile.Read(path, schema.MaxHierarchyBytes)
	if err != nil {
		return nil, fault.BadInput("hierarchy file: %w", err)
	}
	return ReadHierarchy(bytes.NewReader(data), path)
}
