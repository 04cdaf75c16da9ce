package verify

// The verifier's own reading of Arrow IPC files (the file format, "arrow", and the
// stream format, "arrows"). The arrow library's IPC reader decodes the messages into
// record batches; everything after that is done here, on the arrays' raw buffers: the
// checks that the buffers hold what the batch states, and the turning of values into
// the canonical text every stage uses (the same as the Parquet decoder's, parquet.go):
//
//	integer    decimal, every width, unsigned types as unsigned
//	float      shortest text that reads back as the same float32 (float16 by its
//	           exact float32 value, float32) or float64
//	boolean    "true" / "false"
//	date       YYYY-MM-DD (date32 days; date64 milliseconds, floored to the day)
//	timestamp  RFC 3339 in UTC with nanoseconds if any, in any unit; the time zone
//	           only says how to display the instant, which counts from the epoch in UTC
//	string     the value's bytes (string, large string, a dictionary of either with
//	           indexes of any integer type)
//
// A null reads as "" (ArrowRecords.Nulls tells it from an empty string). Columns of
// other types are listed with what they are and may only be left unread.
//
// A file is a user's: what it states is checked before the library acts on it
// (arrowcheck.go), and a panic inside the library is turned into an error naming the
// file.

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"sanitizer/fault"
	"sanitizer/schema"
)

// ArrowFile is an Arrow IPC file or stream opened by the verifier's reader.
type ArrowFile struct {
	path   string
	r      io.ReaderAt
	closer io.Closer
	size   int64 // of the file at open
	stream bool
	mem    *arrowMem
	fr     *ipc.FileReader // the file format's reader
	// frMu serializes the readings of record batches through fr: the library says
	// they may run at once, but its dictionaries' bookkeeping (a shared hash) races.
	frMu   sync.Mutex
	schema *arrow.Schema
	cols   []arrowColumn
	// use, when not nil, is told of every dictionary as the records are read
	// (RequireUsedDictionaries).
	use *DictionaryUse
}

// RequireUsedDictionaries makes the reading of the records tell u which values of each
// dictionary (each one a stream replaces, and the last of each column) its records
// used and which they did not, and of dictionaries no record batch refers to, so that
// u.Check can hold the release to carrying only values its records hold. The records
// must be read to their end, every dictionary-encoded column among them. An input is
// not held to this.
func (a *ArrowFile) RequireUsedDictionaries(u *DictionaryUse) { a.use = u }

// ArrowColumn describes a top-level column of an Arrow IPC file: its name, the type
// its values are read as, and, for a column the reader cannot read, what it is.
type ArrowColumn struct {
	Name        string
	Type        schema.Type // "" when unsupported
	Unsupported string      // the column's type when it cannot be read
}

// arrowColumn is a top-level column and how its values turn into text.
type arrowColumn struct {
	ArrowColumn
	kind  arrowKind
	index arrowKind // a dictionary's indexes
	dict  arrowKind // a dictionary's values
	width int       // fixed-size binary: bytes per value
	scale int       // decimals: digits after the point
}

// arrowKind is how the values of an array are turned into text.
type arrowKind uint8

const (
	arNone arrowKind = iota
	arInt8
	arInt16
	arInt32
	arInt64
	arUint8
	arUint16
	arUint32
	arUint64
	arFloat16
	arFloat32
	arFloat64
	arBool
	arDate32
	arDate64
	arTimeSecond
	arTimeMilli
	arTimeMicro
	arTimeNano
	arString
	arLargeString
	arDictionary
	arBinary      // the bytes as they are
	arLargeBinary // the bytes as they are
	arFixed       // fixed-size binary: the bytes as they are
	arDecimal128  // the exact decimal text
	arDecimal256  // the exact decimal text
)

// arrowWidth is the bytes of one value of each fixed-width kind (0: bits, or not of a
// fixed width).
var arrowWidth = [...]int{
	arInt8: 1, arUint8: 1,
	arInt16: 2, arUint16: 2, arFloat16: 2,
	arInt32: 4, arUint32: 4, arFloat32: 4, arDate32: 4,
	arInt64: 8, arUint64: 8, arFloat64: 8, arDate64: 8,
	arTimeSecond: 8, arTimeMilli: 8, arTimeMicro: 8, arTimeNano: 8,
	arNone: 0, arBool: 0, arString: 0, arLargeString: 0, arDictionary: 0,
	arDecimal128: 16, arDecimal256: 32, arBinary: 0, arLargeBinary: 0, arFixed: 0,
}

// arrowKinds is the kind of the values of each type that is read without a parameter.
var arrowKinds = map[arrow.Type]arrowKind{
	arrow.INT8: arInt8, arrow.INT16: arInt16, arrow.INT32: arInt32, arrow.INT64: arInt64,
	arrow.UINT8: arUint8, arrow.UINT16: arUint16, arrow.UINT32: arUint32, arrow.UINT64: arUint64,
	arrow.FLOAT16: arFloat16, arrow.FLOAT32: arFloat32, arrow.FLOAT64: arFloat64,
	arrow.BOOL: arBool, arrow.DATE32: arDate32, arrow.DATE64: arDate64,
	arrow.STRING: arString, arrow.LARGE_STRING: arLargeString,
	arrow.BINARY: arBinary, arrow.LARGE_BINARY: arLargeBinary,
}

// arrowKindType is the type of the values of each kind.
func arrowKindType(k arrowKind) schema.Type {
	switch {
	case k == arNone, k >= arBinary: // decimals and binary: text of no configured type
		return ""
	case k <= arUint64:
		return schema.Integer
	case k <= arFloat64:
		return schema.Float
	case k == arBool:
		return schema.Boolean
	case k <= arDate64:
		return schema.Date
	case k <= arTimeNano:
		return schema.Timestamp
	}
	return schema.String
}

// columnOf is how the values of a top-level field are read.
func columnOf(f arrow.Field) arrowColumn {
	c := arrowColumn{ArrowColumn: ArrowColumn{Name: f.Name}}
	switch t := f.Type.(type) {
	case *arrow.TimestampType:
		c.kind = map[arrow.TimeUnit]arrowKind{arrow.Second: arTimeSecond, arrow.Millisecond: arTimeMilli,
			arrow.Microsecond: arTimeMicro, arrow.Nanosecond: arTimeNano}[t.Unit]
	case *arrow.FixedSizeBinaryType:
		if t.ByteWidth > 0 {
			c.kind, c.width = arFixed, t.ByteWidth
		}
	case *arrow.Decimal128Type:
		c.kind, c.scale = arDecimal128, int(t.Scale)
	case *arrow.Decimal256Type:
		c.kind, c.scale = arDecimal256, int(t.Scale)
	case *arrow.DictionaryType:
		c.index = arrowKinds[t.IndexType.ID()]
		c.dict = arrowKinds[t.ValueType.ID()]
		if c.index <= arUint64 && c.index != arNone && (c.dict == arString || c.dict == arLargeString) {
			c.kind = arDictionary
		}
	default:
		c.kind = arrowKinds[f.Type.ID()]
	}
	if c.kind == arNone {
		c.Unsupported = f.Type.String()
	}
	c.Type = arrowKindType(c.kind)
	return c
}

// OpenArrow opens an Arrow IPC file (stream false) or stream (stream true) and reads its
// schema. A file that is not a readable one of the format is an error matching
// fault.ErrBadInput that names it.
func OpenArrow(path string, stream bool) (*ArrowFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fault.BadInput("%w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fault.BadInput("%s: %w", path, err)
	}
	return openArrow(path, f, st.Size(), f, stream, memory.DefaultAllocator)
}

// openArrow is OpenArrow for the file named path, of the given size, read through r
// and closed by closer, with the library's buffers from mem (bounded by arrowMem).
func openArrow(path string, r io.ReaderAt, size int64, closer io.Closer, stream bool, mem memory.Allocator) (_ *ArrowFile, err error) {
	a := &ArrowFile{path: path, r: r, closer: closer, size: size, stream: stream, mem: newArrowMem(mem, size)}
	defer func() {
		if p := recover(); p != nil {
			err = readPanic(p, arrowLibrary, func(cause error) error { return a.corrupt("", cause) })
		}
		if err != nil {
			a.Close()
		}
	}()
	if err := a.checkMagic(); err != nil {
		return nil, err
	}
	if stream {
		sr, _, err := a.newStreamReader()
		if err != nil {
			return nil, err
		}
		a.schema = sr.Schema()
		sr.Release()
	} else {
		at := &arrowFileAt{r: r, size: size, mem: a.mem}
		// The library's own limits on the sizes of a message are the file's: the
		// checks bound them.
		fr, err := ipc.NewFileReader(at, ipc.WithAllocator(a.mem),
			ipc.WithMetadataSizeLimit(max(size, 1)), ipc.WithBodySizeLimit(max(size, 1)))
		if err != nil {
			return nil, a.corrupt("", err)
		}
		at.opened = true
		a.fr, a.schema = fr, fr.Schema()
	}
	if a.schema == nil {
		return nil, a.corrupt("", errors.New("no schema"))
	}
	seen := map[string]int{}
	for i, f := range a.schema.Fields() {
		if j, dup := seen[f.Name]; dup {
			return nil, fault.BadInput("%s: columns %d and %d have the same name %q", path, j+1, i+1, f.Name)
		}
		seen[f.Name] = i
		a.cols = append(a.cols, columnOf(f))
	}
	return a, nil
}

// format names the file's format for messages.
func (a *ArrowFile) format() string {
	if a.stream {
		return "Arrow IPC stream"
	}
	return "Arrow IPC file"
}

// corrupt is the error for a file that cannot be read: it names the file, and the
// column when known (col "" when not). A *Violation found while reading (a dictionary
// value no record holds) stays one, named so.
func (a *ArrowFile) corrupt(col string, err error) error {
	where := a.path
	if col != "" {
		where += fmt.Sprintf(": column %q", col)
	}
	var v *Violation
	if errors.As(err, &v) {
		return &Violation{Msg: where + ": " + v.Msg}
	}
	return fault.BadInput("%s: not a readable %s (truncated or corrupt): %w", where, a.format(), err)
}

// arrowMagic starts and ends an IPC file (a stream has none).
var arrowMagic = []byte("ARROW1")

// checkMagic tells a file from a stream by the magic a file starts with, so that a file
// given as the other format gets a message that says so rather than a decoding error.
func (a *ArrowFile) checkMagic() error {
	if a.size == 0 {
		return fault.BadInput("%s: an empty file, not an %s", a.path, a.format())
	}
	head := make([]byte, len(arrowMagic))
	n, _ := a.r.ReadAt(head, 0)
	isFile := n == len(head) && bytes.Equal(head, arrowMagic)
	switch {
	case a.stream && isFile:
		return fault.BadInput("%s: an Arrow IPC file, not an Arrow IPC stream (its format is arrow, not arrows)", a.path)
	case !a.stream && !isFile && n >= 4 && binary.LittleEndian.Uint32(head) == 0xFFFFFFFF:
		return fault.BadInput("%s: an Arrow IPC stream, not an Arrow IPC file (its format is arrows, not arrow)", a.path)
	case !a.stream && !isFile:
		return fault.BadInput("%s: not an Arrow IPC file (it does not start with the Arrow magic)", a.path)
	}
	return nil
}

// newStreamReader starts the library's reader at the first message of a stream; it
// reads the schema. It returns the messages it reads too.
func (a *ArrowFile) newStreamReader() (*ipc.Reader, *arrowStream, error) {
	msgs := newArrowStream(a.r, a.size, a.mem)
	sr, err := ipc.NewReaderFromMessageReader(msgs, ipc.WithAllocator(a.mem))
	if err != nil {
		msgs.Release()
		return nil, nil, a.corrupt("", err)
	}
	return sr, msgs, nil
}

// Columns returns the file's top-level columns, in file order.
func (a *ArrowFile) Columns() []ArrowColumn {
	out := make([]ArrowColumn, len(a.cols))
	for i, c := range a.cols {
		out[i] = c.ArrowColumn
	}
	return out
}

// Metadata returns the schema's key-value metadata.
func (a *ArrowFile) Metadata() map[string]string {
	md := a.schema.Metadata()
	out := make(map[string]string, md.Len())
	for i, k := range md.Keys() {
		out[k] = md.Values()[i]
	}
	return out
}

// Close lets the reader go and closes the file.
func (a *ArrowFile) Close() error {
	if a.fr != nil {
		a.fr.Close()
		a.fr = nil
	}
	return a.closer.Close()
}

// ArrowRecords reads the projected columns of an ArrowFile record by record, as text
// (a Reader: Read, Nulls, Close). The records are decoded ahead on a goroutine of
// their own, which Close stops.
type ArrowRecords struct{ batchReader }

// arrowMaxRows bounds the records of one record batch (as Java's readers do), so that a
// corrupt count cannot keep the reader busy for ages.
const arrowMaxRows = math.MaxInt32

// Records starts reading the columns cols (indexes into Columns(), in the order the
// records give them) from the first record. It fails, naming the column, when one of
// them cannot be read. Reading stops when ctx is cancelled; Read then returns its
// error.
func (a *ArrowFile) Records(ctx context.Context, cols []int) (*ArrowRecords, error) {
	for _, c := range cols {
		if c < 0 || c >= len(a.cols) {
			return nil, fmt.Errorf("%s: no column %d", a.path, c)
		}
		if col := a.cols[c]; col.kind == arNone {
			return nil, fault.BadInput("%s: column %q: values of type %s cannot be read", a.path, col.Name, col.Unsupported)
		}
	}
	r := &ArrowRecords{}
	r.start(ctx, len(cols), func(ctx context.Context, out chan<- *textBatch, free chan *textBatch) error {
		return a.produce(ctx, cols, out, free)
	})
	return r, nil
}

// batches returns the function that gives the file's record batches in turn (nil after
// the last) with the function that lets each go, and the function that lets the
// reader go. When the file is held to it, the last call of next tells its
// DictionaryUse of dictionaries no record batch refers to (RequireUsedDictionaries).
func (a *ArrowFile) batches() (next func() (arrow.RecordBatch, func(), error), done func(), err error) {
	if !a.stream {
		i := 0
		next = func() (arrow.RecordBatch, func(), error) {
			if i >= a.fr.NumRecords() {
				if n := a.fr.NumDictionaries(); a.use != nil && i == 0 && n > 0 {
					a.use.unread("", n) // read by no record batch
				}
				return nil, nil, nil
			}
			rec, err := a.recordBatch(i)
			if err != nil {
				return nil, nil, a.corrupt("", fmt.Errorf("record batch %d: %w", i, err))
			}
			i++
			return rec, rec.Release, nil
		}
		return next, func() {}, nil
	}
	sr, msgs, err := a.newStreamReader()
	if err != nil {
		return nil, nil, err
	}
	if sc := sr.Schema(); sc == nil || !sc.Equal(a.schema) || !sc.Metadata().Equal(a.schema.Metadata()) {
		sr.Release()
		return nil, nil, a.corrupt("", errors.New("its schema changed after it was opened"))
	}
	next = func() (arrow.RecordBatch, func(), error) {
		if !sr.Next() {
			if err := sr.Err(); err != nil {
				return nil, nil, a.corrupt("", err)
			}
			if n := msgs.unreadDicts(); a.use != nil && n > 0 {
				a.use.unread("", n) // replaced before, or after, every record batch
			}
			return nil, nil, nil
		}
		return sr.RecordBatch(), func() {}, nil // the reader lets it go at the next Next
	}
	return next, sr.Release, nil
}

// recordBatch reads record batch i of the file format (a panic of the library leaves
// the reader unlocked for the next reading).
func (a *ArrowFile) recordBatch(i int) (arrow.RecordBatch, error) {
	a.frMu.Lock()
	defer a.frMu.Unlock()
	return a.fr.RecordBatchAt(i)
}

// produce turns the records of columns cols, record batch by record batch, into
// batches of text sent to out (taken from free when there are). A panic of the library
// is an error naming the file and the column.
func (a *ArrowFile) produce(ctx context.Context, cols []int, out chan<- *textBatch, free chan *textBatch) (err error) {
	col := ""
	defer func() {
		if p := recover(); p != nil {
			err = readPanic(p, arrowLibrary, func(cause error) error { return a.corrupt(col, cause) })
		}
	}()
	next, done, err := a.batches()
	if err != nil {
		return err
	}
	defer done()
	width := len(cols)
	texts := make([]*arrowText, width)
	for j, c := range cols {
		texts[j] = &arrowText{col: &a.cols[c], dictUse: a.use}
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, release, err := next()
		if err != nil {
			return err
		}
		if rec == nil {
			for _, t := range texts {
				if err := t.dictionaryUsed(); err != nil {
					return a.corrupt(t.col.Name, err)
				}
			}
			return nil
		}
		err = func() error {
			defer release()
			rows := rec.NumRows()
			if rows < 0 || rows > arrowMaxRows {
				return a.corrupt("", fmt.Errorf("a record batch of %d records", rows))
			}
			n := int(rows)
			if rec.NumCols() != int64(len(a.cols)) {
				return a.corrupt("", fmt.Errorf("a record batch of %d columns in a file of %d", rec.NumCols(), len(a.cols)))
			}
			for j, c := range cols {
				col = a.cols[c].Name
				if err := texts[j].use(rec.Column(c).Data(), n); err != nil {
					return a.corrupt(col, err)
				}
			}
			col = ""
			for from := 0; from < n; {
				m := min(textBatchRecords, n-from)
				b := takeBatch(free, m, width)
				for j, t := range texts {
					col = t.col.Name
					if err := t.fill(b, j, width, from, m); err != nil {
						return a.corrupt(col, err)
					}
				}
				col = ""
				select {
				case out <- b:
				case <-ctx.Done():
					return ctx.Err()
				}
				from += m
			}
			return nil
		}()
		if err != nil {
			return err
		}
	}
}

// arrowText turns the values of one column of the current record batch into text,
// from the array's buffers, once use has checked them. A column keeps its text caches
// across the batches, and a dictionary column the text of its dictionary's values
// while the batches share the dictionary.
type arrowText struct {
	col   *arrowColumn
	kind  arrowKind // of the array's values (a dictionary's: of its indexes)
	valid []byte    // the validity bitmap, nil when every value is present
	data  []byte    // fixed-width values, booleans, indexes, or the bytes of strings
	offs  []byte    // strings: their offsets
	off   int       // the array's first value in its buffers
	text  textCaches
	// A dictionary column: the values, the array they come from (which the next
	// batch's is compared with), and their text, made when first asked for (so that
	// a value's state says whether a record has used it).
	dict     *arrowText
	dictFrom arrow.ArrayData
	dtext    []string
	dstate   []uint8 // dtext[i] is: 0 not made yet, 1 made, 2 a null
	// dictUse, when not nil, is told which values of each dictionary the records used
	// (ArrowFile.RequireUsedDictionaries).
	dictUse *DictionaryUse
}

// bufferBytes returns buffer i of bufs, nil when it is absent.
func bufferBytes(bufs []*memory.Buffer, i int) []byte {
	if i >= len(bufs) || bufs[i] == nil {
		return nil
	}
	return bufs[i].Bytes()
}

// use takes the array d of the next record batch, whose first n values the batch's
// records hold, once it has checked that its buffers hold them.
func (t *arrowText) use(d arrow.ArrayData, n int) error {
	t.kind = t.col.kind
	if t.kind == arDictionary {
		t.kind = t.col.index
	}
	return t.take(d, n, t.col.dict)
}

// take takes the array d of values of kind t.kind (strings of kind str when t.kind is
// the index of a dictionary), of which n are read.
func (t *arrowText) take(d arrow.ArrayData, n int, str arrowKind) error {
	if n < 0 || n > arrowMaxRows {
		return fmt.Errorf("an array of %d values", n)
	}
	if d == nil || d.Len() < n {
		return fmt.Errorf("fewer values than the record batch's records")
	}
	t.off = d.Offset()
	if t.off < 0 || t.off > math.MaxInt32 {
		return fmt.Errorf("an array at offset %d", t.off)
	}
	end := int64(t.off) + int64(n) // n ≤ arrowMaxRows
	bufs := d.Buffers()
	t.valid = bufferBytes(bufs, 0)
	if len(t.valid) == 0 {
		t.valid = nil
	} else if int64(len(t.valid)) < (end+7)/8 {
		return fmt.Errorf("a validity bitmap of %d bytes for %d values", len(t.valid), end)
	}
	t.data = bufferBytes(bufs, 1)
	switch t.kind {
	case arBool:
		if n > 0 && int64(len(t.data)) < (end+7)/8 {
			return fmt.Errorf("%d bytes for %d booleans", len(t.data), end)
		}
	case arString, arLargeString, arBinary, arLargeBinary:
		t.offs, t.data = t.data, bufferBytes(bufs, 2)
		w := int64(4)
		if t.kind == arLargeString || t.kind == arLargeBinary {
			w = 8
		}
		if n > 0 && int64(len(t.offs)) < (end+1)*w {
			return fmt.Errorf("%d bytes of offsets for %d strings", len(t.offs), end)
		}
	case arFixed:
		if w := int64(t.col.width); n > 0 && int64(len(t.data)) < end*w {
			return fmt.Errorf("%d bytes for %d values of %d", len(t.data), end, w)
		}
	default:
		if w := int64(arrowWidth[t.kind]); n > 0 && int64(len(t.data)) < end*w {
			return fmt.Errorf("%d bytes for %d values of %d", len(t.data), end, w)
		}
	}
	if t.col.kind != arDictionary || str == arNone {
		return nil
	}
	dict := d.Dictionary()
	if dict == nil {
		return errors.New("a dictionary array without its dictionary")
	}
	if dict != t.dictFrom {
		next := &arrowText{col: t.col, kind: str}
		if err := next.take(dict, dict.Len(), arNone); err != nil {
			return fmt.Errorf("dictionary: %w", err)
		}
		if err := t.nextDictionary(next, dict.Len()); err != nil {
			return err
		}
		t.dictFrom = dict
	}
	return nil
}

// nextDictionary makes next, of n values, the dictionary of the column's arrays from
// now on. One that extends the last (a delta, or the same values again) keeps what is
// known of the last one's values; one that replaces it leaves the last one's values
// behind, of which the file's DictionaryUse, when it has one, is told (dictionaryUsed).
func (t *arrowText) nextDictionary(next *arrowText, n int) error {
	last := len(t.dstate)
	if t.dict != nil && n >= last {
		extends, err := t.dict.samePrefix(next, last)
		if err != nil {
			return err
		}
		if extends {
			t.dict = next
			t.dtext = append(t.dtext, make([]string, n-last)...)
			t.dstate = append(t.dstate, make([]uint8, n-last)...)
			return nil
		}
	}
	if err := t.dictionaryUsed(); err != nil {
		return err
	}
	t.dict = next
	t.dtext, t.dstate = make([]string, n), make([]uint8, n)
	return nil
}

// samePrefix reports whether the first n values of t and u (dictionaries) are the same.
func (t *arrowText) samePrefix(u *arrowText, n int) (bool, error) {
	for i := range n {
		if t.null(i) != u.null(i) {
			return false, nil
		}
		if t.null(i) {
			continue
		}
		a, err := t.value(i)
		if err != nil {
			return false, fmt.Errorf("dictionary: %w", err)
		}
		b, err := u.value(i)
		if err != nil {
			return false, fmt.Errorf("dictionary: %w", err)
		}
		if a != b {
			return false, nil
		}
	}
	return true, nil
}

// dictionaryUsed tells the file's DictionaryUse, when it has one, which values of the
// column's current dictionary the records used (their state says so: made, or a null
// entry met) and which they did not.
func (t *arrowText) dictionaryUsed() error {
	if t.dictUse == nil || t.dict == nil {
		return nil
	}
	value := func(i int) (string, bool, error) {
		switch {
		case t.dstate[i] == 1:
			return t.dtext[i], true, nil
		case t.dict.null(i):
			return "", false, nil
		}
		v, err := t.dict.value(i)
		return v, err == nil, err
	}
	return t.dictUse.dictionary(t.col.Name, len(t.dstate), value, func(i int) bool { return t.dstate[i] != 0 })
}

// null reports whether value i of the array (counted from its offset) is null.
func (t *arrowText) null(i int) bool {
	k := t.off + i
	return t.valid != nil && t.valid[k>>3]>>(k&7)&1 == 0
}

// fill puts the text of the values from, …, from+n−1 into field j of b's records.
func (t *arrowText) fill(b *textBatch, j, width, from, n int) error {
	for i := range n {
		at := i*width + j
		if t.null(from + i) {
			b.setNull(at)
			continue
		}
		if t.col.kind != arDictionary {
			s, err := t.value(from + i)
			if err != nil {
				return err
			}
			b.fields[at] = s
			continue
		}
		x, err := t.index(from + i)
		if err != nil {
			return err
		}
		if x >= uint64(len(t.dtext)) {
			return fmt.Errorf("dictionary index %d of a dictionary of %d", x, len(t.dtext))
		}
		switch t.dstate[x] {
		case 0:
			if t.dict.null(int(x)) {
				t.dstate[x] = 2
				b.setNull(at)
				continue
			}
			s, err := t.dict.value(int(x))
			if err != nil {
				return fmt.Errorf("dictionary: %w", err)
			}
			t.dtext[x], t.dstate[x] = s, 1
		case 2:
			b.setNull(at)
			continue
		}
		b.fields[at] = t.dtext[x]
	}
	return nil
}

// Values are read in the machine's byte order: the library puts them in it.
var ne = binary.NativeEndian

// index returns dictionary index i (counted from the array's offset).
func (t *arrowText) index(i int) (uint64, error) {
	k := t.off + i
	var x int64
	switch t.kind {
	case arInt8:
		x = int64(int8(t.data[k]))
	case arInt16:
		x = int64(int16(ne.Uint16(t.data[2*k:])))
	case arInt32:
		x = int64(int32(ne.Uint32(t.data[4*k:])))
	case arInt64:
		x = int64(ne.Uint64(t.data[8*k:]))
	case arUint8:
		return uint64(t.data[k]), nil
	case arUint16:
		return uint64(ne.Uint16(t.data[2*k:])), nil
	case arUint32:
		return uint64(ne.Uint32(t.data[4*k:])), nil
	case arUint64:
		return ne.Uint64(t.data[8*k:]), nil
	}
	if x < 0 {
		return 0, fmt.Errorf("a negative dictionary index %d", x)
	}
	return uint64(x), nil
}

// value returns the text of value i (counted from the array's offset), not a null.
func (t *arrowText) value(i int) (string, error) {
	k := t.off + i
	d := t.data
	switch t.kind {
	case arInt8:
		return t.text.number(uint64(int64(int8(d[k]))), signedText), nil
	case arInt16:
		return t.text.number(uint64(int64(int16(ne.Uint16(d[2*k:])))), signedText), nil
	case arInt32:
		return t.text.number(uint64(int64(int32(ne.Uint32(d[4*k:])))), signedText), nil
	case arInt64:
		return t.text.number(ne.Uint64(d[8*k:]), signedText), nil
	case arUint8:
		return t.text.number(uint64(d[k]), unsignedText), nil
	case arUint16:
		return t.text.number(uint64(ne.Uint16(d[2*k:])), unsignedText), nil
	case arUint32:
		return t.text.number(uint64(ne.Uint32(d[4*k:])), unsignedText), nil
	case arUint64:
		return t.text.number(ne.Uint64(d[8*k:]), unsignedText), nil
	case arFloat16:
		return t.text.number(uint64(ne.Uint16(d[2*k:])), float16Text), nil
	case arFloat32:
		return t.text.number(uint64(ne.Uint32(d[4*k:])), floatText), nil
	case arFloat64:
		return t.text.number(ne.Uint64(d[8*k:]), doubleText), nil
	case arBool:
		return strconv.FormatBool(d[k>>3]>>(k&7)&1 == 1), nil
	case arDate32:
		return t.text.number(uint64(int64(int32(ne.Uint32(d[4*k:])))), dateText), nil
	case arDate64:
		days := floorDiv(int64(ne.Uint64(d[8*k:])), 86_400_000)
		return t.text.number(uint64(days), dateText), nil
	case arTimeSecond:
		return t.text.number(ne.Uint64(d[8*k:]), secondText), nil
	case arTimeMilli:
		return t.text.number(ne.Uint64(d[8*k:]), milliText), nil
	case arTimeMicro:
		return t.text.number(ne.Uint64(d[8*k:]), microText), nil
	case arTimeNano:
		return t.text.number(ne.Uint64(d[8*k:]), nanoText), nil
	case arString, arBinary:
		lo, hi := int64(int32(ne.Uint32(t.offs[4*k:]))), int64(int32(ne.Uint32(t.offs[4*k+4:])))
		return t.str(lo, hi)
	case arLargeString, arLargeBinary:
		lo, hi := int64(ne.Uint64(t.offs[8*k:])), int64(ne.Uint64(t.offs[8*k+8:]))
		return t.str(lo, hi)
	case arFixed:
		w := t.col.width
		return t.text.str(d[k*w : (k+1)*w]), nil
	case arDecimal128:
		return decimalText(wordsInt(d[16*k:16*k+16]), t.col.scale), nil
	case arDecimal256:
		return decimalText(wordsInt(d[32*k:32*k+32]), t.col.scale), nil
	}
	return "", fmt.Errorf("no text for values of kind %d", t.kind)
}

// str returns the string of the bytes lo to hi of the array's string data.
func (t *arrowText) str(lo, hi int64) (string, error) {
	if lo < 0 || lo > hi || hi > int64(len(t.data)) {
		return "", fmt.Errorf("a string at bytes %d to %d of %d", lo, hi, len(t.data))
	}
	return t.text.str(t.data[lo:hi]), nil
}

// wordsInt is the signed integer of a decimal's 64-bit words, least significant
// first, each in the machine's byte order (as the library lays decimals out).
func wordsInt(b []byte) *big.Int {
	be := make([]byte, len(b))
	for w := 0; w < len(b)/8; w++ {
		binary.BigEndian.PutUint64(be[len(b)-8*(w+1):], ne.Uint64(b[8*w:]))
	}
	return twosComplement(be)
}

func secondText(k uint64) string { return timeText(time.Unix(int64(k), 0)) }

// floorDiv divides rounding towards negative infinity (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}
