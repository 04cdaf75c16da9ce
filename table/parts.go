package table

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

// IsParts reports whether an input path names a table in parts: a folder or a pattern.
func IsParts(path string) bool {
	if strings.ContainsAny(path, "*?[") {
		return true
	}
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// PartPaths lists the files an input in parts names, sorted.
func PartPaths(path string) ([]string, error) {
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
			if e.Type().IsRegular() && !strings.HasPrefix(name, ".") && !strings.HasPrefix(name, "_") && Format(schema.IO{}, name) != "" {
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

// InsideParts reports whether out would be a part of the input in parts in: a file
// in its folder, or one its pattern matches.
func InsideParts(in, out string) bool {
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

// InputFormat is the format of an input, a file or a table in parts: the
// configuration's, which every file's extension must agree with, or else the
// extension's, the same for every part.
func InputFormat(path string, io schema.IO) (string, error) {
	if !IsParts(path) {
		return CheckFormat("input", path, io)
	}
	parts, err := PartPaths(path)
	if err != nil {
		return "", err
	}
	format := ""
	for _, part := range parts {
		f, err := CheckFormat("input", part, io)
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
	parts  []Source
	names  []string // the parts' paths
	mu     sync.Mutex
	starts []int // the first record of each part streamed so far (mu)
}

// openParts opens every part of an input in parts and checks that their columns
// agree.
func openParts(path, format string, dialect schema.CSV, names []string) (_ *partsSource, err error) {
	paths, err := PartPaths(path)
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
		if !sameColumns(s.parts[0].Columns(), src.Columns()) {
			return nil, schema.BadInput("input: %s: its columns or their types differ from those of %s", p, paths[0])
		}
	}
	return s, nil
}

// sameColumns reports whether two parts have the same columns, of the same types.
func sameColumns(a, b []Column) bool {
	return slices.EqualFunc(a, b, func(x, y Column) bool {
		return x.Name == y.Name && x.Type == y.Type && x.Ints == y.Ints && x.Unsupported == y.Unsupported &&
			(x.Arrow == nil) == (y.Arrow == nil) && (x.Arrow == nil || arrow.TypeEqual(x.Arrow, y.Arrow))
	})
}

func (s *partsSource) Columns() []Column { return s.parts[0].Columns() }

func (s *partsSource) Metadata() map[string]string { return s.parts[0].Metadata() }

// Stream sends every part's records in turn, numbered from the first part's first.
func (s *partsSource) Stream(ctx context.Context, cols []int, out chan<- *Batch) error {
	return s.StreamAs(ctx, cols, nil, out)
}

// StreamAs is Stream with the columns in the forms as gives (the parts must be
// FormSources when one is asked for AsArray).
func (s *partsSource) StreamAs(ctx context.Context, cols []int, as []Form, out chan<- *Batch) error {
	defer close(out)
	s.mu.Lock()
	s.starts = s.starts[:0]
	s.mu.Unlock()
	first := 0
	for _, part := range s.parts {
		s.mu.Lock()
		s.starts = append(s.starts, first)
		s.mu.Unlock()
		if err := relay(ctx, part, cols, as, first, out); err != nil {
			return err
		}
		first += part.Rows()
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

func (s *partsSource) Rewind() error {
	for _, p := range s.parts {
		if err := p.Rewind(); err != nil {
			return err
		}
	}
	return nil
}

func (s *partsSource) Unchanged() error {
	for _, p := range s.parts {
		if err := p.Unchanged(); err != nil {
			return err
		}
	}
	return nil
}

func (s *partsSource) Rows() int {
	n := 0
	for _, p := range s.parts {
		n += p.Rows()
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

// offsetSource is a part of an input whose records are numbered from base.
type offsetSource struct {
	Source
	base int
}

func (s offsetSource) Stream(ctx context.Context, cols []int, out chan<- *Batch) error {
	return s.StreamAs(ctx, cols, nil, out)
}

// StreamAs is Stream with the columns in the forms as gives.
func (s offsetSource) StreamAs(ctx context.Context, cols []int, as []Form, out chan<- *Batch) error {
	defer close(out)
	return relay(ctx, s.Source, cols, as, s.base, out)
}

// relay sends the batches of src (projected to cols, in the forms as gives) to out,
// their records numbered from base, and leaves out open.
func relay(ctx context.Context, src Source, cols []int, as []Form, base int, out chan<- *Batch) error {
	if _, ok := src.(FormSource); !ok && slices.Contains(as, AsArray) {
		return fmt.Errorf("internal error: %T gives no arrays", src)
	}
	in := make(chan *Batch, 2)
	errc := make(chan error, 1)
	go func() { errc <- guard(func() error { return StreamAs(ctx, src, cols, as, in) })() }()
	for b := range in {
		b.First += base
		select {
		case out <- b:
		case <-ctx.Done():
			b.Release()
			for b := range in {
				b.Release()
			}
			<-errc
			return ctx.Err()
		}
	}
	return <-errc
}

// Split returns the parts of a table in parts, or the table itself when it is one
// file, each part numbering its records from its first record's place in the whole
// table (as the whole's last pass counted them).
func Split(src Source) []Source {
	ps, ok := src.(*partsSource)
	if !ok {
		return []Source{src}
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	out := make([]Source, len(ps.parts))
	for i, part := range ps.parts {
		out[i] = offsetSource{part, ps.starts[i]}
	}
	return out
}

// Span is the records of src, a table or one of Split's parts: the whole table's
// number of its first record, and how many it has (after a pass over it).
func Span(src Source) (first, rows int) {
	if s, ok := src.(offsetSource); ok {
		return s.base, s.Rows()
	}
	return 0, src.Rows()
}

// Locator returns, for a table in parts, a function that names the part holding
// record row (0-based, of the whole table) and its 1-based row there; nil for a
// table of one file.
func Locator(src Source) func(row int) (string, int) {
	if ps, ok := src.(*partsSource); ok {
		return ps.locate
	}
	return nil
}

// abs is p made absolute, or p itself when that fails.
func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}
