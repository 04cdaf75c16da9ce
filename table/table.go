package table

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"sanitizer/fault"
	"sanitizer/internal/readfile"
	"sanitizer/internal/safe"
	"sanitizer/schema"
)

// Values travel between the stages as text in one canonical form per type, so that the
// hierarchies, the dictionaries and the verifier see the same strings whatever the file
// format; the sinks turn the text back into the column's type:
//
//	integer    decimal, no leading zeros or '+'      ("-42")
//	float      shortest representation that reads back exactly ("0.1", "1e+21", "NaN")
//	boolean    "true" / "false"
//	date       YYYY-MM-DD                                  ("2024-02-29")
//	timestamp  RFC 3339 in UTC with nanoseconds if any     ("2024-02-29T13:05:00.5Z")
//	string     the value itself
//
// A null travels as a set bit in the batch's nulls (its text is empty).

// Column is one column of an input table: its name and the type the file gives it
// ("" for CSV, whose fields are text of no stated type).
type Column struct {
	Name string
	Type schema.Type
	// Unsupported, when not empty, names a file type this tool cannot read as text:
	// the column may only be dropped, or, when PassOnly, passed through.
	Unsupported string
	// PassOnly says that the column's values (decimals, binary), which have no text
	// form here, can be read as Arrow arrays (FormSource, AsArray) and written
	// untouched into a Parquet or Arrow release.
	PassOnly bool
	Ints     IntType // for typ Integer: the width and signedness the file gives
	// Arrow is the file's type of the column (Parquet, Arrow), which the release
	// keeps; nil for CSV.
	Arrow arrow.DataType
	// KeyText, when not nil, says that the column can be given as keys (AsKey) and
	// returns a key's canonical text.
	KeyText func(key int64) string
}

// Batch is a run of consecutive input records, projected to some columns.
type Batch struct {
	First int // 0-based index of the first record in the input
	Width int // fields per record
	// Fields holds the records' fields, len = n × width. A CSV source's fields point
	// into the block of the file they were read from: a consumer that keeps one past
	// the batch copies it (else it keeps the whole block).
	Fields []string
	Nulls  []bool // nil when no field is null, else len = n × width
	N      int
	// Arrays, when not nil, holds per projected column the column's values as an
	// Arrow array of the file's type (N values), for the columns a FormSource was
	// asked for AsArray; their fields are then empty and their nulls unset. Release
	// lets them go.
	Arrays []arrow.Array
	// Keys, when not nil, holds per projected column the keys of its N values (see
	// Column.KeyText) for the columns a FormSource was asked for AsKey and gives so
	// (nil for the others); their fields are then empty, their nulls marked as for
	// text, and a null's key is meaningless.
	Keys [][]int64
	// Dict and Index, when not nil, hold per projected column nil or, for a
	// dictionary-encoded string column of a Parquet file asked for AsKey, the values of
	// the batch's dictionary (each once; values no record uses may be among them) and
	// each record's index into it (a null's is meaningless). Their fields are then
	// empty, their nulls marked as for text.
	Dict  [][]string
	Index [][]int32
}

// Release lets go of the batch's arrays.
func (b *Batch) Release() {
	for j, a := range b.Arrays {
		if a != nil {
			a.Release()
			b.Arrays[j] = nil
		}
	}
}

// Record is the fields of record i of the batch.
func (b *Batch) Record(i int) []string { return b.Fields[i*b.Width : (i+1)*b.Width] }

// Null reports whether field col of record i is null.
func (b *Batch) Null(i, col int) bool { return b.Nulls != nil && b.Nulls[i*b.Width+col] }

// SetNull marks field k (an index into fields) null.
func (b *Batch) SetNull(k int) {
	if b.Nulls == nil {
		b.Nulls = make([]bool, cap(b.Fields))
	}
	b.Nulls[k] = true
}

// NewBatch is an empty batch of width-field records, the first numbered first, with
// room for BatchRows of them.
func NewBatch(first, width int) *Batch {
	return &Batch{First: first, Width: width, Fields: make([]string, 0, BatchRows*width)}
}

// BatchRows is the number of records per batch between stages.
const BatchRows = 4096

// Source is an open input table.
type Source interface {
	// Columns returns the table's columns in file order.
	Columns() []Column
	// Stream sends the records from the current position to the end, projected to
	// cols (indexes into columns()), in batches to out, and closes out.
	Stream(ctx context.Context, cols []int, out chan<- *Batch) error
	// Rewind starts a second pass over the same open file, after checking that the
	// file is still the one the first pass read.
	Rewind() error
	// Unchanged checks, after the second pass, that both passes read the same table.
	Unchanged() error
	// Rows is the number of records read by the current pass.
	Rows() int
	// Metadata is the file's key-value metadata (Parquet) or schema metadata (Arrow
	// IPC): nil for CSV; a table in parts gives its first part's.
	Metadata() map[string]string
	Close() error
}

// FormSource is a source that can give some of the projected columns in another form
// than text: StreamAs is Stream, column cols[j] given in the form as[j] (AsText when as
// is shorter).
type FormSource interface {
	Source
	StreamAs(ctx context.Context, cols []int, as []Form, out chan<- *Batch) error
}

// StreamAs is src's StreamAs when src is a FormSource, else its Stream (every column
// then comes as text): a column asked for AsArray from a source that has no arrays is
// an internal error.
func StreamAs(ctx context.Context, src Source, cols []int, as []Form, out chan<- *Batch) error {
	if fs, ok := src.(FormSource); ok {
		return fs.StreamAs(ctx, cols, as, out)
	}
	if slices.Contains(as, AsArray) {
		close(out)
		return fault.Internalf("%T gives no arrays", src)
	}
	return src.Stream(ctx, cols, out)
}

// Arrays reports whether src gives columns as Arrow arrays: an Arrow IPC or Parquet
// file, or a table in parts of them.
func Arrays(src Source) bool {
	switch s := src.(type) {
	case *partsSource:
		return Arrays(s.parts[0])
	case offsetSource:
		return Arrays(s.Source)
	}
	_, ok := src.(FormSource)
	return ok
}

// OutColumn is one column of a release or generated table.
type OutColumn struct {
	Name     string
	Type     schema.Type
	Nullable bool
	Ints     IntType // for typ Integer: the width and signedness written
	// Arrow, when not nil, is the type a Parquet or Arrow sink writes the column as
	// (the input's type of a column passed through); else arrowType(typ, ints).
	Arrow arrow.DataType
	// Dict, when not nil, is every value the column may hold (a release's generalized
	// quasi-identifier at its level): a sink that is a preparer writes the column as
	// a dictionary of these labels and the records' indexes into it.
	Dict []string
}

// IntType is the width and signedness of the values of an integer column. The zero
// value is a signed 64-bit integer: the type of an integer column whose input states
// no width (CSV).
type IntType struct {
	Bits     uint8 // 8, 16, 32 or 64; 0 stands for 64
	Unsigned bool
}

// width is the number of bits of the type.
func (t IntType) width() int {
	if t.Bits == 0 {
		return 64
	}
	return int(t.Bits)
}

// String names the type as Go does (int8 … uint64).
func (t IntType) String() string {
	if t.Unsigned {
		return "uint" + strconv.Itoa(t.width())
	}
	return "int" + strconv.Itoa(t.width())
}

// Sink writes a table to a writer it was given (the file's key-value metadata, where
// the format has them, are given when the sink is made). Write takes n records of
// len(columns) fields each in canonical text (nulls nil when none is null); Finish
// writes what is buffered and the format's trailer, and closes nothing it did not open.
type Sink interface {
	Write(fields []string, nulls []bool, n int) error
	Finish() error
}

// Preparer is a sink whose Write splits into a conversion that may run on several
// goroutines at once (Prepare, which writes nothing) and the writing of its result, in
// order, on one (WritePrepared): Write(f, nulls, n) is
// WritePrepared(Prepare(&Rows{Fields: f, Nulls: nulls, N: n})). A preparer takes the
// columns that have a dictionary (OutColumn.Dict) as the records' indexes into it
// (Rows.Keys), and their text not at all.
type Preparer interface {
	Prepare(r *Rows) (any, error)
	WritePrepared(any) error
}

// writeThrough writes n records of text through a preparer's two steps: a sink that
// is a preparer writes so.
func writeThrough(p Preparer, fields []string, nulls []bool, n int) error {
	x, err := p.Prepare(&Rows{Fields: fields, Nulls: nulls, N: n})
	if err != nil {
		return err
	}
	return p.WritePrepared(x)
}

// fileIdentity is what the second pass compares to prove that a binary input was not
// replaced or modified between the passes: the open file's size and modification time
// (the file descriptor itself is the same, so a rename over the path does not matter).
type fileIdentity struct {
	size  int64
	mtime time.Time
}

// fileSource is what the Parquet and Arrow sources share: the open file, its identity
// at open, and the record counts of the passes.
type fileSource struct {
	path  string
	file  *os.File
	id    fileIdentity // at open
	read  int          // records read in this pass
	rows1 int          // records of the first pass
}

func (s *fileSource) Rows() int { return s.read }

// same checks the open file's identity against the one at open.
func (s *fileSource) same() error {
	id, err := identify(s.file)
	if err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	if id.size != s.id.size || !id.mtime.Equal(s.id.mtime) {
		return ChangedError(s.path)
	}
	return nil
}

// Unchanged checks, after the second pass, the file's identity and that both passes
// read the same number of records.
func (s *fileSource) Unchanged() error {
	if s.read != s.rows1 {
		return ChangedError(s.path)
	}
	return s.same()
}

func identify(f *os.File) (fileIdentity, error) {
	st, err := f.Stat()
	if err != nil {
		return fileIdentity{}, err
	}
	return fileIdentity{size: st.Size(), mtime: st.ModTime()}, nil
}

// FormatInt is the canonical text of a signed integer.
func FormatInt(v int64) string { return strconv.FormatInt(v, 10) }

// FormatUint is the canonical text of an unsigned integer.
func FormatUint(v uint64) string { return strconv.FormatUint(v, 10) }

// FormatFloat is the canonical text of a float: the shortest that reads back exactly.
func FormatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// FormatBool is the canonical text of a boolean.
func FormatBool(v bool) string { return strconv.FormatBool(v) }

// FormatFloat32 writes a narrow float in the shortest form that reads back as the same
// float32 ("0.1", not the float64 expansion "0.10000000149011612").
func FormatFloat32(v float32) string { return strconv.FormatFloat(float64(v), 'g', -1, 32) }

// FormatDate formats days since 1970-01-01.
func FormatDate(days int64) string {
	return time.Unix(days*86400, 0).UTC().Format(time.DateOnly)
}

// FormatTimestamp formats nanoseconds since the epoch, in UTC.
func FormatTimestamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// Typed is a value parsed from its canonical text for a typed sink.
type Typed struct {
	I int64   // integer; date: days since the epoch; timestamp: nanoseconds since the epoch
	U uint64  // unsigned integer (ParseInteger)
	F float64 // float
	B bool    // boolean
}

// ParseTyped parses the text of a value of type typ. Text read from a CSV input in any
// reasonable spelling is accepted (ParseInt, ParseFloat, ParseBool; dates as
// YYYY-MM-DD; timestamps as RFC 3339). The error never quotes the value.
func ParseTyped(typ schema.Type, s string) (Typed, error) {
	var (
		v   Typed
		err error
	)
	switch typ {
	case schema.Integer:
		v.I, err = strconv.ParseInt(s, 10, 64)
	case schema.Float:
		v.F, err = strconv.ParseFloat(s, 64)
	case schema.Boolean:
		v.B, err = strconv.ParseBool(s)
	case schema.Date:
		var t time.Time
		if t, err = time.Parse(time.DateOnly, s); err == nil {
			v.I = t.Unix() / 86400 // midnight UTC: an exact multiple
		}
	case schema.Timestamp:
		var t time.Time
		if t, err = time.Parse(time.RFC3339Nano, s); err == nil {
			var ok bool
			if v.I, ok = UnixNano(t); !ok {
				err = errNotType(typ)
			}
		}
	}
	if err != nil {
		return Typed{}, errNotType(typ)
	}
	return v, nil
}

// UnixNano is t in nanoseconds since the epoch, and whether that fits in an int64
// (from 1677-09-21T00:12:43.145224192Z to 2262-04-11T23:47:16.854775807Z).
func UnixNano(t time.Time) (int64, bool) {
	sec, nsec := t.Unix(), int64(t.Nanosecond())
	if sec >= 0 {
		if sec > (math.MaxInt64-nsec)/1e9 {
			return 0, false
		}
		return sec*1e9 + nsec, true
	}
	// sec·10⁹ + nsec as (sec+1)·10⁹ + (nsec−10⁹), whose terms do not overflow; Go's
	// division rounds a negative quotient up, which is the bound wanted.
	s, n := sec+1, nsec-1e9
	if s < (math.MinInt64-n)/1e9 {
		return 0, false
	}
	return s*1e9 + n, true
}

// ParseInteger parses the text of a value of an integer column of type it: a signed
// type into i, an unsigned one into u, each within the type's range. The error never
// quotes the value.
func ParseInteger(it IntType, s string) (Typed, error) {
	var (
		v   Typed
		err error
	)
	if it.Unsigned {
		v.U, err = strconv.ParseUint(s, 10, it.width())
	} else {
		v.I, err = strconv.ParseInt(s, 10, it.width())
	}
	if err != nil {
		return Typed{}, errNotInt(it)
	}
	return v, nil
}

// errNotInt is the error for a value that is not one of an integer type.
type errNotInt IntType

func (e errNotInt) Error() string {
	return "value is not a valid integer of type " + IntType(e).String()
}

// CheckType checks a value against its column's declared type (nil conf: a dropped
// column, never written). The error never quotes the value.
func CheckType(conf *schema.Column, v string) error {
	if conf == nil {
		return nil
	}
	_, err := ParseTyped(conf.Type, v)
	return err
}

type errNotType schema.Type

func (e errNotType) Error() string { return "value is not a valid " + string(e) }

// Open opens an input table of the given format. names are the configuration's
// columns, in order: the header of a CSV file without a header row.
func Open(path string, format schema.Format, dialect schema.CSV, names []string) (Source, error) {
	if IsParts(path) {
		return openParts(path, format, dialect, names)
	}
	return openFile(path, format, dialect, names)
}

// openFile opens one file of an input table: a regular file (checkInputFile).
func openFile(path string, format schema.Format, dialect schema.CSV, names []string) (Source, error) {
	if err := checkInputFile(path); err != nil {
		return nil, err
	}
	switch format {
	case schema.FormatCSV:
		return OpenCSV(path, dialect, names)
	case schema.FormatParquet:
		return openParquet(path)
	case schema.FormatArrow:
		return openArrow(path, false)
	case schema.FormatArrows:
		return openArrow(path, true)
	}
	return nil, fault.BadInput("%s: unknown format %q", path, format)
}

// checkInputFile refuses an input that is not a regular file (symbolic links
// followed): a run reads its input twice and the verifier reads it a third time, each
// time checking that it is the same file with the same bytes, which a named pipe or a
// device (/dev/stdin, /dev/zero) cannot be; a device could also be read without end. A
// path that does not exist is left to the opening, whose error names it.
func checkInputFile(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return nil
	}
	if err := readfile.Regular(path, st.Mode()); err != nil {
		return fault.BadInput("input: %w: an input is read more than once, and must be a regular file", err)
	}
	return nil
}

// NewSink starts a table of the given format in f. meta is written as the file's
// key-value metadata where the format has them (Parquet, Arrow).
func NewSink(f io.Writer, format schema.Format, dialect schema.CSV, cols []OutColumn, meta map[string]string) (Sink, error) {
	switch format {
	case schema.FormatCSV:
		return newCSVSink(f, dialect, cols)
	case schema.FormatParquet:
		return newParquetSink(f, cols, meta)
	case schema.FormatArrow:
		return newArrowSink(f, false, cols, meta)
	case schema.FormatArrows:
		return newArrowSink(f, true, cols, meta)
	}
	return nil, fmt.Errorf("unknown output format %q", format)
}

// RecordReader reads the records of a source one by one, as text (a null reads as "").
// It streams in a goroutine that Close stops.
type RecordReader struct {
	cancel   context.CancelFunc
	in       chan *Batch
	streamed <-chan error // the stream's result
	end      error        // what Read returns after the last record, once streamed gave it
	cur      *Batch
	i        int
}

// ReadColumns reads the records of src projected to cols (indexes into src.Columns()).
func ReadColumns(ctx context.Context, src Source, cols []int) *RecordReader {
	ctx, cancel := context.WithCancel(ctx)
	r := &RecordReader{cancel: cancel, in: make(chan *Batch, 2)}
	r.streamed = safe.Start(func() error { return src.Stream(ctx, cols, r.in) })
	return r
}

// Read returns the next record (valid until the next call), or io.EOF.
func (r *RecordReader) Read() ([]string, error) {
	for r.cur == nil || r.i >= r.cur.N {
		b, ok := <-r.in
		if !ok {
			if r.end == nil {
				if r.end = <-r.streamed; r.end == nil {
					r.end = io.EOF
				}
			}
			return nil, r.end
		}
		r.cur, r.i = b, 0
	}
	rec := r.cur.Record(r.i)
	r.i++
	return rec, nil
}

// Close stops the stream and waits for it.
func (r *RecordReader) Close() {
	r.cancel()
	for range r.in {
	}
}

// Rows is N records for a sink, one field per output column in canonical text, or, for
// a column with a dictionary (OutColumn.Dict), as indexes into it, or, for a column
// passed through, as an Arrow array of the column's type.
type Rows struct {
	Fields []string // N × columns; a column with keys or an array has empty fields
	Nulls  []bool   // nil when none is null
	// Keys, when not nil, has per column the records' indexes into the column's
	// dictionary, or nil for a column written from its text.
	Keys [][]int32
	// Arrays, when not nil, has per column the records' values as an array of the
	// column's Arrow type (OutColumn.Arrow), or nil; a preparer that builds Arrow
	// records takes them as they are. Release lets them go.
	Arrays []arrow.Array
	N      int
}

// Release lets go of the rows' arrays.
func (r *Rows) Release() {
	for j, a := range r.Arrays {
		if a != nil {
			a.Release()
			r.Arrays[j] = nil
		}
	}
}

// Format returns the format of a table: the configured one, else the extension's.
func Format(io schema.IO, path string) schema.Format {
	if io.Format != "" {
		return io.Format
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv", ".txt":
		return schema.FormatCSV
	case ".parquet":
		return schema.FormatParquet
	case ".arrow", ".feather":
		return schema.FormatArrow
	case ".arrows":
		return schema.FormatArrows
	}
	return ""
}

// CheckFormat returns the format of a table and rejects a configured format that the
// file's extension contradicts.
func CheckFormat(key, path string, io schema.IO) (schema.Format, error) {
	if ext := Format(schema.IO{}, path); io.Format != "" && ext != "" && ext != io.Format {
		return "", fault.BadInput("%s: %s has the extension of %s but %s.format is %s", key, path, ext, key, io.Format)
	}
	f := Format(io, path)
	if f == "" {
		return "", fault.BadInput("%s: cannot tell the format of %q: set %s.format", key, path, key)
	}
	return f, nil
}

// Canonical is the canonical text of a value of type typ given in any spelling the
// readers accept; false when it is not a value of that type.
func Canonical(typ schema.Type, s string) (string, bool) {
	if typ == schema.String || typ == "" {
		return s, true
	}
	if typ == schema.Integer {
		// any width: a uint64 column holds values above the int64 range
		if u, err := ParseInteger(IntType{Unsigned: true}, s); err == nil {
			return FormatUint(u.U), true
		}
	}
	t, err := ParseTyped(typ, s)
	if err != nil {
		return "", false
	}
	switch typ {
	case schema.Integer:
		return FormatInt(t.I), true
	case schema.Float:
		return FormatFloat(t.F), true
	case schema.Boolean:
		return FormatBool(t.B), true
	case schema.Date:
		return FormatDate(t.I), true
	case schema.Timestamp:
		return FormatTimestamp(time.Unix(0, t.I)), true
	}
	return s, true
}
