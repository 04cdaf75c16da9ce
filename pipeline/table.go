package pipeline

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

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

// column is one column of an input table: its name and the type the file gives it
// ("" for CSV, whose fields are text of no stated type).
type column struct {
	name string
	typ  schema.Type
	// unsupported, when not empty, names a file type this tool cannot read: the
	// column may only be dropped.
	unsupported string
	ints        intType // for typ Integer: the width and signedness the file gives
	// arrow is the file's type of the column (Parquet, Arrow), which the release
	// keeps; nil for CSV.
	arrow arrow.DataType
}

// batch is a run of consecutive input records, projected to some columns.
type batch struct {
	first  int      // 0-based index of the first record in the input
	width  int      // fields per record
	fields []string // len = n × width
	nulls  []bool   // nil when no field is null, else len = n × width
	n      int
}

func (b *batch) record(i int) []string { return b.fields[i*b.width : (i+1)*b.width] }

// null reports whether field col of record i is null.
func (b *batch) null(i, col int) bool { return b.nulls != nil && b.nulls[i*b.width+col] }

// setNull marks field k (an index into fields) null.
func (b *batch) setNull(k int) {
	if b.nulls == nil {
		b.nulls = make([]bool, cap(b.fields))
	}
	b.nulls[k] = true
}

func newBatch(first, width int) *batch {
	return &batch{first: first, width: width, fields: make([]string, 0, batchRows*width)}
}

// batchRows is the number of records per batch between stages.
const batchRows = 4096

// source is an open input table.
type source interface {
	// columns returns the table's columns in file order.
	columns() []column
	// stream sends the records from the current position to the end, projected to
	// cols (indexes into columns()), in batches to out, and closes out.
	stream(ctx context.Context, cols []int, out chan<- *batch) error
	// rewind starts a second pass over the same open file, after checking that the
	// file is still the one the first pass read.
	rewind() error
	// unchanged checks, after the second pass, that both passes read the same table.
	unchanged() error
	// rows is the number of records read by the current pass.
	rows() int
	Close() error
}

// outColumn is one column of a release or generated table.
type outColumn struct {
	name     string
	typ      schema.Type
	nullable bool
	ints     intType // for typ Integer: the width and signedness written
	// arrow, when not nil, is the type a Parquet or Arrow sink writes the column as
	// (the input's type of a column passed through); else arrowType(typ, ints).
	arrow arrow.DataType
	// dict, when not nil, is every value the column may hold (a release's generalized
	// quasi-identifier at its level): a sink that is a preparer writes the column as
	// a dictionary of these labels and the records' indexes into it.
	dict []string
}

// intType is the width and signedness of the values of an integer column. The zero
// value is a signed 64-bit integer: the type of an integer column whose input states
// no width (CSV).
type intType struct {
	bits     uint8 // 8, 16, 32 or 64; 0 stands for 64
	unsigned bool
}

// width is the number of bits of the type.
func (t intType) width() int {
	if t.bits == 0 {
		return 64
	}
	return int(t.bits)
}

// String names the type as Go does (int8 … uint64).
func (t intType) String() string {
	if t.unsigned {
		return "uint" + strconv.Itoa(t.width())
	}
	return "int" + strconv.Itoa(t.width())
}

// sink writes a table to a file it was given (the file's key-value metadata, where the
// format has them, are given when the sink is made). write takes n records of
// len(columns) fields each in canonical text (nulls nil when none is null); finish
// writes what is buffered and the format's trailer, and closes nothing it did not open.
type sink interface {
	write(fields []string, nulls []bool, n int) error
	finish() error
}

// preparer is a sink whose write splits into a conversion that may run on several
// goroutines at once (prepare, which writes nothing) and the writing of its result, in
// order, on one (writePrepared): write(f, nulls, n) is
// writePrepared(prepare(&recoded{fields: f, nulls: nulls, n: n})). A preparer takes
// the columns that have a dictionary (outColumn.dict) as the records' indexes into it
// (recoded.keys), and their text not at all.
type preparer interface {
	prepare(r *recoded) (any, error)
	writePrepared(any) error
}

// writeThrough writes n records of text through a preparer's two steps: a sink that
// is a preparer writes so.
func writeThrough(p preparer, fields []string, nulls []bool, n int) error {
	x, err := p.prepare(&recoded{fields: fields, nulls: nulls, n: n})
	if err != nil {
		return err
	}
	return p.writePrepared(x)
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

func (s *fileSource) rows() int { return s.read }

// same checks the open file's identity against the one at open.
func (s *fileSource) same() error {
	id, err := identify(s.file)
	if err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	if id.size != s.id.size || !id.mtime.Equal(s.id.mtime) {
		return errChanged(s.path)
	}
	return nil
}

// unchanged checks, after the second pass, the file's identity and that both passes
// read the same number of records.
func (s *fileSource) unchanged() error {
	if s.read != s.rows1 {
		return errChanged(s.path)
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

// Canonical text of typed values.

func formatInt(v int64) string     { return strconv.FormatInt(v, 10) }
func formatUint(v uint64) string   { return strconv.FormatUint(v, 10) }
func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
func formatBool(v bool) string     { return strconv.FormatBool(v) }

// formatFloat32 writes a narrow float in the shortest form that reads back as the same
// float32 ("0.1", not the float64 expansion "0.10000000149011612").
func formatFloat32(v float32) string { return strconv.FormatFloat(float64(v), 'g', -1, 32) }

// formatDate formats days since 1970-01-01.
func formatDate(days int64) string {
	return time.Unix(days*86400, 0).UTC().Format(time.DateOnly)
}

// formatTimestamp formats nanoseconds since the epoch, in UTC.
func formatTimestamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// typed is a value parsed from its canonical text for a typed sink.
type typed struct {
	i int64   // integer; date: days since the epoch; timestamp: nanoseconds since the epoch
	u uint64  // unsigned integer (parseInteger)
	f float64 // float
	b bool    // boolean
}

// parseTyped parses the text of a value of type typ. Text read from a CSV input in any
// reasonable spelling is accepted (ParseInt, ParseFloat, ParseBool; dates as
// YYYY-MM-DD; timestamps as RFC 3339). The error never quotes the value.
func parseTyped(typ schema.Type, s string) (typed, error) {
	var (
		v   typed
		err error
	)
	switch typ {
	case schema.Integer:
		v.i, err = strconv.ParseInt(s, 10, 64)
	case schema.Float:
		v.f, err = strconv.ParseFloat(s, 64)
	case schema.Boolean:
		v.b, err = strconv.ParseBool(s)
	case schema.Date:
		var t time.Time
		if t, err = time.Parse(time.DateOnly, s); err == nil {
			v.i = t.Unix() / 86400 // midnight UTC: an exact multiple
		}
	case schema.Timestamp:
		var t time.Time
		if t, err = time.Parse(time.RFC3339Nano, s); err == nil {
			var ok bool
			if v.i, ok = unixNano(t); !ok {
				err = errNotType(typ)
			}
		}
	}
	if err != nil {
		return typed{}, errNotType(typ)
	}
	return v, nil
}

// unixNano is t in nanoseconds since the epoch, and whether that fits in an int64
// (from 1677-09-21T00:12:43.145224192Z to 2262-04-11T23:47:16.854775807Z).
func unixNano(t time.Time) (int64, bool) {
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

// parseInteger parses the text of a value of an integer column of type it: a signed
// type into i, an unsigned one into u, each within the type's range. The error never
// quotes the value.
func parseInteger(it intType, s string) (typed, error) {
	var (
		v   typed
		err error
	)
	if it.unsigned {
		v.u, err = strconv.ParseUint(s, 10, it.width())
	} else {
		v.i, err = strconv.ParseInt(s, 10, it.width())
	}
	if err != nil {
		return typed{}, errNotInt(it)
	}
	return v, nil
}

// errNotInt is the error for a value that is not one of an integer type.
type errNotInt intType

func (e errNotInt) Error() string {
	return "value is not a valid integer of type " + intType(e).String()
}

// checkType checks a value against its column's declared type (nil conf: a dropped
// column, never written). The error never quotes the value.
func checkType(conf *schema.Column, v string) error {
	if conf == nil {
		return nil
	}
	_, err := parseTyped(conf.Type, v)
	return err
}

type errNotType schema.Type

func (e errNotType) Error() string { return "value is not a valid " + string(e) }

// openSource opens an input table of the given format. names are the configuration's
// columns, in order: the header of a CSV file without a header row.
func openSource(path, format string, dialect schema.CSV, names []string) (source, error) {
	if isParts(path) {
		return openParts(path, format, dialect, names)
	}
	return openFile(path, format, dialect, names)
}

// openFile opens one file of an input table.
func openFile(path, format string, dialect schema.CSV, names []string) (source, error) {
	switch format {
	case "csv":
		return openCSV(path, dialect, names)
	case "parquet":
		return openParquet(path)
	case "arrow":
		return openArrow(path, false)
	case "arrows":
		return openArrow(path, true)
	}
	return nil, schema.BadInput("%s: unknown format %q", path, format)
}

// newSink starts a table of the given format in f. meta is written as the file's
// key-value metadata where the format has them (Parquet, Arrow).
func newSink(f *os.File, format string, dialect schema.CSV, cols []outColumn, meta map[string]string) (sink, error) {
	switch format {
	case "csv":
		return newCSVSink(f, dialect, cols)
	case "parquet":
		return newParquetSink(f, cols, meta)
	case "arrow":
		return newArrowSink(f, false, cols, meta)
	case "arrows":
		return newArrowSink(f, true, cols, meta)
	}
	return nil, fmt.Errorf("unknown output format %q", format)
}

// recordReader reads the records of a source one by one, as text (a null reads as "").
// It streams in a goroutine that Close stops.
type recordReader struct {
	cancel context.CancelFunc
	in     chan *batch
	errc   chan error
	cur    *batch
	i      int
}

// readColumns reads the records of src projected to cols (indexes into src.columns()).
func readColumns(ctx context.Context, src source, cols []int) *recordReader {
	ctx, cancel := context.WithCancel(ctx)
	r := &recordReader{cancel: cancel, in: make(chan *batch, 2), errc: make(chan error, 1)}
	go func() { r.errc <- guard(func() error { return src.stream(ctx, cols, r.in) })() }()
	return r
}

// Read returns the next record (valid until the next call), or io.EOF.
func (r *recordReader) Read() ([]string, error) {
	for r.cur == nil || r.i >= r.cur.n {
		b, ok := <-r.in
		if !ok {
			if err := <-r.errc; err != nil {
				r.errc <- err
				return nil, err
			}
			r.errc <- nil
			return nil, io.EOF
		}
		r.cur, r.i = b, 0
	}
	rec := r.cur.record(r.i)
	r.i++
	return rec, nil
}

// Close stops the stream and waits for it.
func (r *recordReader) Close() {
	r.cancel()
	for range r.in {
	}
}
