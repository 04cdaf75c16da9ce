package table

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"sanitizer/fault"
	"sanitizer/internal/safe"
	"sanitizer/schema"
)

// An input may be a table in parts, as Spark, Hive and DuckDB write them: a folder
// (its files with a table's extension; names starting with "." or "_", such as
// _SUCCESS and .crc files, are not parts; sub-folders are not read) or a glob pattern
// ("in/part-*.parquet"). The parts are read as one table, in the lexical order of
// their paths; every part must have the same columns, of the same types. A part named
// by a symbolic link is the file the link names, wherever it is, the same whether the
// folder or a pattern names it; a name that is not a regular file once followed (a
// broken link, a FIFO, a device) and two names of one file (a link beside its target,
// a hard link) are bad input: a table read either way is the same table, every record
// once.

// IsParts reports whether an input path names a table in parts: a folder or a pattern.
func IsParts(path string) bool {
	if isPattern(path) {
		return true
	}
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// isPattern reports whether path is a glob pattern.
func isPattern(path string) bool { return strings.ContainsAny(path, "*?[") }

// PartPaths lists the files an input in parts names, sorted.
func PartPaths(path string) ([]string, error) {
	names, err := partNames(path)
	if err != nil {
		return nil, err
	}
	var parts []string
	seen := map[fileKey][]string{} // the parts so far, by size and time
	for _, name := range names {
		st, err := os.Stat(name) // a symbolic link followed
		switch {
		case err != nil:
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return nil, fault.BadInput("input: %s: %w", name, err)
		case st.IsDir():
			continue // a sub-folder is not read
		case !st.Mode().IsRegular():
			return nil, fault.BadInput("input: %s is not a regular file (%s): a part must be one", name, st.Mode().Type())
		}
		k := fileKey{st.Size(), st.ModTime().UnixNano()}
		for _, other := range seen[k] {
			if ot, err := os.Stat(other); err == nil && os.SameFile(st, ot) {
				return nil, fault.BadInput("input: %s and %s are the same file: a part is read once", other, name)
			}
		}
		seen[k] = append(seen[k], name)
		parts = append(parts, name)
	}
	if len(parts) == 0 {
		return nil, fault.BadInput("input: %s names no table files", path)
	}
	sort.Strings(parts)
	return parts, nil
}

// fileKey is what two names of one file share without being asked about the file.
type fileKey struct{ size, mtime int64 }

// partNames is what could be a part of the input in parts at path: what its pattern
// matches, or the names in its folder with a table's extension, not starting with "."
// or "_".
func partNames(path string) ([]string, error) {
	if isPattern(path) {
		matches, err := filepath.Glob(path)
		if err != nil {
			return nil, fault.BadInput("input: %s: %w", path, err)
		}
		return matches, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fault.BadInput("input: %w", err)
	}
	var names []string
	for _, e := range entries {
		name := e.Name()
		if partName(name) {
			names = append(names, filepath.Join(path, name))
		}
	}
	return names, nil
}

// partName reports whether a folder of parts lists the file of that name: one of a
// table's extensions, not hidden (".") nor a writer's marker ("_SUCCESS").
func partName(name string) bool {
	return !strings.HasPrefix(name, ".") && !strings.HasPrefix(name, "_") && Format(schema.IO{}, name) != ""
}

// InsideParts reports whether out would be a part of the input in parts in: a file
// in its folder that the folder's listing takes (partName), or one its pattern
// matches, once both are resolved (Resolve: a symbolic link to the input's folder, or
// a ".." after one, does not hide it).
func InsideParts(in, out string) bool {
	dir, name := splitPath(out)
	if isPattern(in) {
		_, pattern := splitPath(in)
		if ok, err := filepath.Match(pattern, name); err != nil || !ok {
			return false
		}
	} else if !partName(name) {
		return false
	}
	return PartsFolder(in, dir)
}

// PartsFolder reports whether the folder dir, resolved, is one the input in parts in
// reads its parts from: its folder, or one its pattern's folders match.
func PartsFolder(in, dir string) bool {
	if !isPattern(in) {
		st, err := os.Stat(in)
		return err == nil && st.IsDir() && Resolve(dir) == Resolve(in)
	}
	inDir, _ := splitPath(in)
	dirs, err := filepath.Glob(inDir)
	if err != nil {
		return false
	}
	for _, d := range dirs {
		if Resolve(d) == Resolve(dir) {
			return true
		}
	}
	return false
}

// splitPath is path's folder and name as written ("." for a bare name's folder):
// unlike filepath.Dir it does not take "link/.." away before the file system does.
func splitPath(path string) (dir, name string) {
	i := strings.LastIndexAny(path, `/`+string(filepath.Separator))
	switch {
	case i < 0:
		return ".", path
	case i == 0:
		return path[:1], path[1:]
	}
	return path[:i], path[i+1:]
}

// InputFormat is the format of an input, a file or a table in parts: the
// configuration's, which every file's extension must agree with, or else the
// extension's, the same for every part.
func InputFormat(path string, io schema.IO) (schema.Format, error) {
	if !IsParts(path) {
		return CheckFormat("input", path, io)
	}
	parts, err := PartPaths(path)
	if err != nil {
		return "", err
	}
	var format schema.Format
	for _, part := range parts {
		f, err := CheckFormat("input", part, io)
		if err != nil {
			return "", err
		}
		if format != "" && f != format {
			return "", fault.BadInput("input: %s is %s, %s is %s: the parts of a table share one format", parts[0], format, part, f)
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
func openParts(path string, format schema.Format, dialect schema.CSV, names []string) (_ *partsSource, err error) {
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
			return nil, fault.BadInput("input: %s: its columns or their types differ from those of %s", p, paths[0])
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
		return fault.Internalf("%T gives no arrays", src)
	}
	in := make(chan *Batch, 2)
	errc := safe.Start(func() error { return StreamAs(ctx, src, cols, as, in) })
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
