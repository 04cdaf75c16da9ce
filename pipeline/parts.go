package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"sanitizer/schema"
)

// An input may be a table in parts, as Spark, Hive and DuckDB write them: a folder
// (its files with a table's extension; names starting with "." or "_", such as
// _SUCCESS and .crc files, are not parts; sub-folders are not read) or a glob pattern
// ("in/part-*.parquet"). The parts are read as one table, in the lexical order of
// their paths; every part must have the same columns, of the same types.

// isParts reports whether an input path names a table in parts: a folder or a pattern.
func isParts(path string) bool {
	if strings.ContainsAny(path, "*?[") {
		return true
	}
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// inputParts lists the files an input in parts names, sorted.
func inputParts(path string) ([]string, error) {
	var parts []string
	if strings.ContainsAny(path, "*?[") {
		matches, err := filepath.Glob(path)
		if err != nil {
			return nil, schema.BadInput("input: %s: %w", path, err)
		}
		for _, m := range matches {
			if st, err := os.Stat(m); err == nil && st.Mode().IsRegular() {
				parts = append(parts, m)
			}
		}
	} else {
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, schema.BadInput("input: %w", err)
		}
		for _, e := range entries {
			name := e.Name()
			if e.Type().IsRegular() && !strings.HasPrefix(name, ".") && !strings.HasPrefix(name, "_") && tableFormat(schema.IO{}, name) != "" {
				parts = append(parts, filepath.Join(path, name))
			}
		}
	}
	if len(parts) == 0 {
		return nil, schema.BadInput("input: %s names no table files", path)
	}
	sort.Strings(parts)
	return parts, nil
}

// insideParts reports whether out would be a part of the input in parts in: a file
// in its folder, or one its pattern matches.
func insideParts(in, out string) bool {
	if strings.ContainsAny(in, "*?[") {
		ok, _ := filepath.Match(in, out)
		return ok || matchAbs(in, out)
	}
	if st, err := os.Stat(in); err != nil || !st.IsDir() {
		return false
	}
	return filepath.Dir(abs(out)) == abs(in)
}

// matchAbs reports whether the absolute forms of pattern and path match.
func matchAbs(pattern, path string) bool {
	ok, _ := filepath.Match(abs(pattern), abs(path))
	return ok
}

// inputFormat is the format of an input, a file or a table in parts: the
// configuration's, which every file's extension must agree with, or else the
// extension's, the same for every part.
func inputFormat(path string, io schema.IO) (string, error) {
	if !isParts(path) {
		return checkFormat("input", path, io)
	}
	parts, err := inputParts(path)
	if err != nil {
		return "", err
	}
	format := ""
	for _, part := range parts {
		f, err := checkFormat("input", part, io)
		if err != nil {
			return "", err
		}
		if format != "" && f != format {
			return "", schema.BadInput("input: %s is %s, %s is %s: the parts of a table share one format", parts[0], format, part, f)
		}
		format = f
	}
	return format, nil
}

// partsSource is a table in parts read as one: each part is a source of its own.
type partsSource struct {
	path   string
	parts  []source
	names  []string // the parts' paths
	mu     sync.Mutex
	starts []int // the first record of each part streamed so far (mu)
}

// openParts opens every part of an input in parts and checks that their columns
// agree.
func openParts(path, format string, dialect schema.CSV, names []string) (_ *partsSource, err error) {
	paths, err := inputParts(path)
	if err != nil {
		return nil, err
	}
	s := &partsSource{path: path, names: paths}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	for _, p := range paths {
		src, err := openFile(p, format, dialect, names)
		if err != nil {
			return nil, err
		}
		s.parts = append(s.parts, src)
		if !sameColumns(s.parts[0].columns(), src.columns()) {
			return nil, schema.BadInput("input: %s: its columns or their types differ from those of %s", p, paths[0])
		}
	}
	return s, nil
}

// sameColumns reports whether two parts have the same columns, of the same types.
func sameColumns(a, b []column) bool {
	return slices.EqualFunc(a, b, func(x, y column) bool {
		return x.name == y.name && x.typ == y.typ && x.ints == y.ints && x.unsupported == y.unsupported &&
			(x.arrow == nil) == (y.arrow == nil) && (x.arrow == nil || arrow.TypeEqual(x.arrow, y.arrow))
	})
}

func (s *partsSource) columns() []column { return s.parts[0].columns() }

// stream sends every part's records in turn, numbered from the first part's first.
func (s *partsSource) stream(ctx context.Context, cols []int, out chan<- *batch) error {
	defer close(out)
	s.mu.Lock()
	s.starts = s.starts[:0]
	s.mu.Unlock()
	first := 0
	for _, part := range s.parts {
		s.mu.Lock()
		s.starts = append(s.starts, first)
		s.mu.Unlock()
		if err := relay(ctx, part, cols, first, out); err != nil {
			return err
		}
		first += part.rows()
	}
	return nil
}

// locate names the part that holds record row (0-based, of the whole table) and its
// 1-based row there.
func (s *partsSource) locate(row int) (string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := sort.SearchInts(s.starts, row+1) - 1
	if i < 0 {
		return s.path, row + 1
	}
	return s.names[i], row - s.starts[i] + 1
}

func (s *partsSource) rewind() error {
	for _, p := range s.parts {
		if err := p.rewind(); err != nil {
			return err
		}
	}
	return nil
}

func (s *partsSource) unchanged() error {
	for _, p := range s.parts {
		if err := p.unchanged(); err != nil {
			return err
		}
	}
	return nil
}

func (s *partsSource) rows() int {
	n := 0
	for _, p := range s.parts {
		n += p.rows()
	}
	return n
}

func (s *partsSource) Close() error {
	var first error
	for _, p := range s.parts {
		if err := p.Close(); err != nil && first == nil {
			first = fmt.Errorf("%s: %w", s.path, err)
		}
	}
	return first
}
