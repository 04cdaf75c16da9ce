package release

import (
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"sanitizer/fault"
	"sanitizer/internal/readfile"
	"sanitizer/schema"
	"sanitizer/table"
	"sanitizer/verify"
)

// checkedTable is a table as the verification reads it (a written release, or the
// input read beside it), never through the table package's sources that wrote the
// release and read its input, so that a defect of those cannot hide itself: Parquet
// through the verifier's own decoder (verify.OpenParquet, a second Parquet
// implementation), CSV through the verifier's own reading (verify.OpenCSV, its own
// RFC 4180 parser), Arrow IPC through the verifier's own reading (verify.OpenArrow,
// which shares only the Arrow library's IPC reader with the table package).
type checkedTable interface {
	// columns returns the table's columns in file order: their names, and for a
	// column whose values cannot be read, its type.
	columns() []checkedColumn
	// records reads the columns cols (indexes into columns()) from the first record,
	// until ctx is cancelled.
	records(ctx context.Context, cols []int) (checkedRecords, error)
	// metadata returns the file's key-value (or schema) metadata; nil for CSV.
	metadata() map[string]string
	// checksums returns, once the records have been read to the end, the CRC-32C of
	// every byte of each file of a CSV table (verify.CSVFile.Checksum); nil for the
	// other formats, or before the end.
	checksums() []uint32
	// dictionaries reports, once every column's records have been read to the end, a
	// *verify.Violation when a dictionary of a release holds a value none of its
	// records holds (verify.DictionaryUse); nil for an input.
	dictionaries() error
	Close() error
}

// checkedColumn is a column of a checkedTable.
type checkedColumn struct {
	name        string
	unsupported string
}

// checkedRecords yields the records of a checkedTable as text (a null reads as "").
type checkedRecords interface {
	verify.Reader
	Close()
}

// tableRole is what a table the verification reads is: an input or a release.
type tableRole uint8

const (
	inputTable tableRole = iota
	// releaseTable is a release: every value of every dictionary it holds (Parquet's
	// dictionary pages, Arrow's dictionary batches) must be held by one of its
	// records, so that no value only a suppressed record had can travel in one.
	releaseTable
)

// openChecked opens a table of the given format for the verification, as what role
// says it is. names are the configuration's columns, in order: the header of a CSV file
// without a header row.
func openChecked(path string, format schema.Format, dialect schema.CSV, names []string, role tableRole) (checkedTable, error) {
	var use *verify.DictionaryUse // the release's, over all its parts
	if role == releaseTable {
		use = verify.NewDictionaryUse()
	}
	if table.IsParts(path) {
		return openCheckedParts(path, format, dialect, names, use)
	}
	return openCheckedFile(path, format, dialect, names, use)
}

// openCheckedFile opens one file of a table, a regular file (regularFile); use, when
// not nil, is told of its dictionaries as its records are read.
func openCheckedFile(path string, format schema.Format, dialect schema.CSV, names []string, use *verify.DictionaryUse) (checkedTable, error) {
	if err := regularFile(path); err != nil {
		return nil, err
	}
	if format == schema.FormatParquet {
		f, err := verify.OpenParquet(path)
		if err != nil {
			return nil, err
		}
		if use != nil {
			f.RequireUsedDictionaries(use)
		}
		return checkedParquet{f, use}, nil
	}
	if format == schema.FormatCSV {
		f, err := verify.OpenCSV(path, dialect.Separator, dialect.Header, names)
		if err != nil {
			return nil, fault.BadInput("%w", err)
		}
		return checkedCSV{f}, nil
	}
	if format == schema.FormatArrow || format == schema.FormatArrows {
		f, err := verify.OpenArrow(path, format == schema.FormatArrows)
		if err != nil {
			return nil, err
		}
		if use != nil {
			f.RequireUsedDictionaries(use)
		}
		return checkedArrow{f, use}, nil
	}
	return nil, fault.BadInput("%s: unknown format %q", path, format)
}

// regularFile refuses, as bad input naming it, a table file that is not a regular file
// (a device, a named pipe): one that could be read without end, or block. A path that
// does not exist is left to its opening, whose error names it.
func regularFile(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return nil
	}
	if err := readfile.Regular(path, st.Mode()); err != nil {
		return fault.BadInput("%w", err)
	}
	return nil
}

// checkedCSV is a CSV file read by the verifier's own reading.
type checkedCSV struct{ f *verify.CSVFile }

func (t checkedCSV) columns() []checkedColumn {
	var out []checkedColumn
	for _, name := range t.f.Header() {
		out = append(out, checkedColumn{name: name})
	}
	return out
}

func (t checkedCSV) records(ctx context.Context, cols []int) (checkedRecords, error) {
	return badCSV{t.f.Records(ctx, cols)}, nil
}

func (t checkedCSV) metadata() map[string]string { return nil }

func (t checkedCSV) checksums() []uint32 {
	if sum, ok := t.f.Checksum(); ok {
		return []uint32{sum}
	}
	return nil
}

func (t checkedCSV) dictionaries() error { return nil }

func (t checkedCSV) Close() error { return t.f.Close() }

// badCSV gives a malformed record of a CSV file as bad input.
type badCSV struct{ *verify.CSVRecords }

func (r badCSV) Read() ([]string, error) {
	rec, err := r.CSVRecords.Read()
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
		err = fault.BadInput("%w", err)
	}
	return rec, err
}

// checkedParquet is a Parquet file read by the verifier's decoder, and the account of
// its release's dictionaries (nil: an input).
type checkedParquet struct {
	f   *verify.ParquetFile
	use *verify.DictionaryUse
}

func (t checkedParquet) columns() []checkedColumn {
	var out []checkedColumn
	for _, c := range t.f.Columns() {
		out = append(out, checkedColumn{name: c.Name, unsupported: c.Unsupported})
	}
	return out
}

func (t checkedParquet) records(ctx context.Context, cols []int) (checkedRecords, error) {
	r, err := t.f.Records(ctx, cols)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (t checkedParquet) metadata() map[string]string { return t.f.Metadata() }

func (t checkedParquet) checksums() []uint32 { return nil }

func (t checkedParquet) dictionaries() error { return checkDictionaries(t.use) }

func (t checkedParquet) Close() error { return t.f.Close() }

// checkedArrow is an Arrow IPC file or stream read by the verifier's reading, and the
// account of its release's dictionaries (nil: an input).
type checkedArrow struct {
	f   *verify.ArrowFile
	use *verify.DictionaryUse
}

func (t checkedArrow) columns() []checkedColumn {
	var out []checkedColumn
	for _, c := range t.f.Columns() {
		out = append(out, checkedColumn{name: c.Name, unsupported: c.Unsupported})
	}
	return out
}

func (t checkedArrow) records(ctx context.Context, cols []int) (checkedRecords, error) {
	r, err := t.f.Records(ctx, cols)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (t checkedArrow) metadata() map[string]string { return t.f.Metadata() }

func (t checkedArrow) checksums() []uint32 { return nil }

func (t checkedArrow) dictionaries() error { return checkDictionaries(t.use) }

func (t checkedArrow) Close() error { return t.f.Close() }

// checkDictionaries is use.Check, nil without an account.
func checkDictionaries(use *verify.DictionaryUse) error {
	if use == nil {
		return nil
	}
	return use.Check()
}

// allColumns is the projection of every column of t.
func allColumns(t checkedTable) []int {
	cols := make([]int, len(t.columns()))
	for i := range cols {
		cols[i] = i
	}
	return cols
}

// checkedParts is a table in parts as the verification reads it: each part a
// checkedTable, their records one after another; a release's parts tell one account
// of its dictionaries.
type checkedParts struct {
	parts []checkedTable
	paths []string // the parts' files, in order
	use   *verify.DictionaryUse
}

// openCheckedParts opens every part of a table in parts for the verification; use,
// when not nil, is told of every part's dictionaries.
func openCheckedParts(path string, format schema.Format, dialect schema.CSV, names []string, use *verify.DictionaryUse) (checkedTable, error) {
	paths, err := table.PartPaths(path)
	if err != nil {
		return nil, err
	}
	t := &checkedParts{use: use}
	for _, p := range paths {
		part, err := openCheckedFile(p, format, dialect, names, use)
		if err != nil {
			t.Close()
			return nil, err
		}
		t.parts = append(t.parts, part)
		t.paths = append(t.paths, p)
	}
	return t, nil
}

func (t *checkedParts) columns() []checkedColumn { return t.parts[0].columns() }

func (t *checkedParts) records(ctx context.Context, cols []int) (checkedRecords, error) {
	return &partsRecords{ctx: ctx, cols: cols, parts: t.parts}, nil
}

// metadata is the first part's: every part of a release carries the same release
// metadata, which sameRelease checks.
func (t *checkedParts) metadata() map[string]string { return t.parts[0].metadata() }

// sameRelease checks that every part records the same release metadata as the first
// (its sanitize.* keys, all of them: the parameters Check compares and the others,
// such as the configuration's digest and the time of writing), so that a part written
// by another run, or with other parameters, cannot pass for one of the release's. A
// part that differs is a violation (fault.ErrUnattainable) naming both parts and the
// key; the values are release parameters, never data.
func (t *checkedParts) sameRelease() error {
	first := releaseKeys(t.parts[0].metadata())
	for i, part := range t.parts[1:] {
		meta := releaseKeys(part.metadata())
		keys := slices.Sorted(maps.Keys(first))
		for k := range meta {
			if _, ok := first[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			a, inFirst := first[k]
			b, inPart := meta[k]
			switch {
			case !inPart:
				return fault.Unattainable("%s lacks the metadata key %s that %s records (%q): every part of a release records the same parameters", t.paths[i+1], k, t.paths[0], a)
			case !inFirst:
				return fault.Unattainable("%s records the metadata key %s (%q) that %s lacks: every part of a release records the same parameters", t.paths[i+1], k, b, t.paths[0])
			case a != b:
				return fault.Unattainable("%s records %s %q, %s records %q: every part of a release records the same parameters", t.paths[i+1], k, b, t.paths[0], a)
			}
		}
	}
	return nil
}

// releaseKeys is the release's own keys of a file's metadata (sanitize.*).
func releaseKeys(meta map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range meta {
		if strings.HasPrefix(k, "sanitize.") {
			out[k] = v
		}
	}
	return out
}

// checksums are the parts', in order; nil unless every part has one.
func (t *checkedParts) checksums() []uint32 {
	var out []uint32
	for _, p := range t.parts {
		sums := p.checksums()
		if sums == nil {
			return nil
		}
		out = append(out, sums...)
	}
	return out
}

func (t *checkedParts) dictionaries() error { return checkDictionaries(t.use) }

func (t *checkedParts) Close() error {
	var first error
	for _, p := range t.parts {
		if err := p.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// partsRecords reads the records of the parts in turn.
type partsRecords struct {
	ctx   context.Context
	cols  []int
	parts []checkedTable
	cur   checkedRecords
}

func (r *partsRecords) Read() ([]string, error) {
	for {
		if r.cur == nil {
			if len(r.parts) == 0 {
				return nil, io.EOF
			}
			cur, err := r.parts[0].records(r.ctx, r.cols)
			if err != nil {
				return nil, err
			}
			r.cur, r.parts = cur, r.parts[1:]
		}
		rec, err := r.cur.Read()
		if !errors.Is(err, io.EOF) {
			return rec, err
		}
		r.cur.Close()
		r.cur = nil
	}
}

func (r *partsRecords) Close() {
	if r.cur != nil {
		r.cur.Close()
	}
}
