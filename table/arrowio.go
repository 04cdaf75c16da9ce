package table

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"sanitizer/fault"
	"sanitizer/schema"
)

// arrowSource is an open Arrow IPC input: the random-access file format (footer,
// record batches read by index) or the stream format (messages read in order). A
// second pass rereads the same open file: the file format from its first record batch,
// the stream format from byte 0 with a new reader.
//
// The arrow library trusts the lengths a file states: a corrupt file can make it panic
// or ask for any amount of memory. The source therefore recovers the library's panics
// into bad-input errors (readPanic), gives the library an allocator that refuses
// implausibly large buffers, and reads stream messages itself (arrowMessages) to check
// every length against the file's size before allocating.
type arrowSource struct {
	fileSource
	isStream bool
	mem      memory.Allocator
	schema   *arrow.Schema // read at open
	cols     []Column

	fr   *ipc.FileReader // file format
	next int             // file format: the next record batch
	sr   *ipc.Reader     // stream format

}

// Limits on what a corrupt file can make the reader do.
const (
	// arrowBufferSlack is how much larger than the file one buffer may be: an
	// uncompressed buffer lies within the file, a compressed one may expand to more.
	arrowBufferSlack = 256 << 20
	// arrowMaxBatchRows bounds the records of one record batch (Java's readers cap it
	// at 2³¹−1 too), so that a corrupt count cannot keep a reader busy for ages.
	arrowMaxBatchRows = math.MaxInt32
)

// arrowMagic starts (and ends) an Arrow IPC file; a stream has no magic.
var arrowMagic = []byte("ARROW1")

// openArrow opens an Arrow IPC file (stream false) or an Arrow IPC stream (stream true)
// and reads its schema. Columns of types this tool cannot read are reported as
// unsupported, not refused: they may be dropped.
func openArrow(path string, stream bool) (*arrowSource, error) {
	return openArrowMem(path, stream, memory.DefaultAllocator, arrowBufferSlack)
}

// openArrowMem is openArrow with the allocator the arrow library uses and the slack
// of the buffer-size limit (see arrowBufferSlack) given, for tests.
func openArrowMem(path string, stream bool, mem memory.Allocator, slack int64) (src *arrowSource, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fault.BadInput("input: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	s := &arrowSource{fileSource: fileSource{path: path, file: f}, isStream: stream}
	if s.id, err = identify(f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if s.id.size == 0 {
		return nil, fault.BadInput("%s: empty file: not an %s", path, s.kind())
	}
	if err := s.checkMagic(); err != nil {
		return nil, err
	}
	s.mem = &boundedAllocator{mem: mem, limit: min(s.id.size, math.MaxInt64-slack) + slack}
	if err := s.start(); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			s.release()
		}
	}()
	if s.isStream {
		s.schema = s.sr.Schema()
	} else {
		s.schema = s.fr.Schema()
	}
	if s.schema == nil {
		return nil, s.corrupt("", errors.New("no schema"))
	}
	seen := map[string]int{}
	for i, f := range s.schema.Fields() {
		if j, dup := seen[f.Name]; dup {
			return nil, fault.BadInput("%s: columns %d and %d have the same name %q", path, j+1, i+1, f.Name)
		}
		seen[f.Name] = i
		s.cols = append(s.cols, arrowColumn(f))
	}
	return s, nil
}

// kind names the format for messages.
func (s *arrowSource) kind() string {
	if s.isStream {
		return "Arrow IPC stream"
	}
	return "Arrow IPC file"
}

// checkMagic tells a file from a stream by the magic that starts a file, so that the
// wrong one of the two gets a helpful message rather than a decoding error.
func (s *arrowSource) checkMagic() error {
	head := make([]byte, len(arrowMagic))
	n, _ := s.file.ReadAt(head, 0)
	isFile := n == len(head) && bytes.Equal(head, arrowMagic)
	switch {
	case s.isStream && isFile:
		return fault.BadInput("%s: this is an Arrow IPC file, not an Arrow IPC stream (set the format to arrow)", s.path)
	case !s.isStream && !isFile:
		if n >= 4 && binary.LittleEndian.Uint32(head) == 0xFFFFFFFF {
			return fault.BadInput("%s: this looks like an Arrow IPC stream, not an Arrow IPC file (set the format to arrows)", s.path)
		}
		return fault.BadInput("%s: not an Arrow IPC file (it does not start with the Arrow magic)", s.path)
	}
	return nil
}

// corrupt is the error for a file the library cannot decode, naming the column when
// one is at fault. Library messages give positions and lengths, never values.
func (s *arrowSource) corrupt(col string, err error) error {
	if col != "" {
		return fault.BadInput("%s: column %q: not a readable %s (truncated or corrupt): %v", s.path, col, s.kind(), err)
	}
	return fault.BadInput("%s: not a readable %s (truncated or corrupt): %v", s.path, s.kind(), err)
}

// start opens a reader at the first record batch: the file format's reader once (it is
// reused by later passes), the stream format's at byte 0 of the file.
func (s *arrowSource) start() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = readPanic(r, func(cause error) error { return s.corrupt("", cause) })
		}
	}()
	s.read = 0
	if !s.isStream {
		if s.fr == nil {
			if err := s.checkFooter(); err != nil {
				return s.corrupt("", err)
			}
			fr, err := ipc.NewFileReader(s.file, ipc.WithAllocator(s.mem))
			if err != nil {
				return s.corrupt("", err)
			}
			s.fr = fr
		}
		s.next = 0
		return nil
	}
	if s.sr != nil {
		s.sr.Release()
		s.sr = nil
	}
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("%s: rewinding the input: %w", s.path, err)
	}
	msgs := newArrowMessages(s.file, s.id.size, s.mem)
	sr, err := ipc.NewReaderFromMessageReader(msgs, ipc.WithAllocator(s.mem))
	if err != nil {
		msgs.Release()
		return s.corrupt("", err)
	}
	s.sr = sr
	return nil
}

// checkFooter reads the file's footer as ipc.NewFileReader will and checks the
// schema in it (see checkSchema).
func (s *arrowSource) checkFooter() error {
	const tail = 4 + 6 // footer length, magic
	if s.id.size < 8+tail {
		return fmt.Errorf("the file is too short (%d bytes)", s.id.size)
	}
	var end [tail]byte
	if _, err := s.file.ReadAt(end[:], s.id.size-tail); err != nil {
		return err
	}
	if !bytes.Equal(end[4:], arrowMagic) {
		return errors.New("the file does not end with the Arrow magic")
	}
	n := int64(binary.LittleEndian.Uint32(end[:4]))
	if n <= 0 || n > s.id.size-8-tail {
		return fmt.Errorf("a footer of %d bytes in a file of %d", n, s.id.size)
	}
	footer := make([]byte, n)
	if _, err := s.file.ReadAt(footer, s.id.size-tail-n); err != nil {
		return err
	}
	fb := arrowFB(footer)
	root, err := fb.u32(0)
	if err != nil {
		return err
	}
	schemaPos, ok, err := fb.ref(root, 1) // Footer.schema
	if err != nil || !ok {
		return err
	}
	return fb.checkSchema(schemaPos)
}

// arrowColumn maps a top-level field to a column and its value type.
func arrowColumn(f arrow.Field) Column {
	c := Column{Name: f.Name}
	switch f.Type.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		c.Type = schema.Integer
		c.Ints = arrowIntType(f.Type)
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		c.Type = schema.Float
	case arrow.STRING, arrow.LARGE_STRING:
		c.Type = schema.String
	case arrow.BOOL:
		c.Type = schema.Boolean
	case arrow.DATE32, arrow.DATE64:
		c.Type = schema.Date
	case arrow.TIMESTAMP:
		c.Type = schema.Timestamp
	case arrow.DICTIONARY:
		switch f.Type.(*arrow.DictionaryType).ValueType.ID() {
		case arrow.STRING, arrow.LARGE_STRING:
			c.Type = schema.String
		}
	}
	switch {
	case c.Type != "":
		c.Arrow, c.KeyText = f.Type, keyTextOf(f.Type)
	case passOnly(f.Type):
		c.Arrow, c.PassOnly, c.Unsupported = f.Type, true, f.Type.String()
	default:
		c.Unsupported = f.Type.String()
	}
	return c
}

// passOnly reports whether values of type t, which have no text form here, can be
// passed through as arrays: decimals and binary.
func passOnly(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.DECIMAL128, arrow.DECIMAL256, arrow.BINARY, arrow.LARGE_BINARY, arrow.FIXED_SIZE_BINARY:
		return true
	}
	return false
}

// readable checks that column c can be read: as text, or as an array when asArray.
func readable(path string, c Column, asArray bool) error {
	if c.Unsupported != "" && !(c.PassOnly && asArray) {
		return fault.BadInput("%s: column %q: values of type %s cannot be read", path, c.Name, c.Unsupported)
	}
	return nil
}

// arrowIntType is the width and signedness of an arrow integer type.
func arrowIntType(t arrow.DataType) IntType {
	switch t.ID() {
	case arrow.INT8:
		return IntType{Bits: 8}
	case arrow.INT16:
		return IntType{Bits: 16}
	case arrow.INT32:
		return IntType{Bits: 32}
	case arrow.UINT8:
		return IntType{Bits: 8, Unsigned: true}
	case arrow.UINT16:
		return IntType{Bits: 16, Unsigned: true}
	case arrow.UINT32:
		return IntType{Bits: 32, Unsigned: true}
	case arrow.UINT64:
		return IntType{Bits: 64, Unsigned: true}
	}
	return IntType{}
}

func (s *arrowSource) Columns() []Column { return s.cols }

func (s *arrowSource) Metadata() map[string]string { return metadataMap(s.schema.Metadata()) }

// joinSlices gives b, per array column, its slices as one array, and empties pend.
func joinSlices(b *Batch, pend [][]arrow.Array) error {
	for j, parts := range pend {
		if len(parts) == 0 {
			continue
		}
		if b.Arrays == nil {
			b.Arrays = make([]arrow.Array, len(pend))
		}
		if len(parts) == 1 {
			b.Arrays[j] = parts[0]
		} else {
			a, err := array.Concatenate(parts, memory.DefaultAllocator)
			for _, p := range parts {
				p.Release()
			}
			if err != nil {
				return fmt.Errorf("joining record batches: %w", err)
			}
			b.Arrays[j] = a
		}
		clear(parts)
		pend[j] = parts[:0] // its room for the next batch's slices
	}
	return nil
}

// metadataMap is Arrow metadata as a map.
func metadataMap(md arrow.Metadata) map[string]string {
	out := make(map[string]string, md.Len())
	for i, k := range md.Keys() {
		out[k] = md.Values()[i]
	}
	return out
}

// nextRecord returns the next record batch, nil at the end, and the function that
// releases it.
func (s *arrowSource) nextRecord() (arrow.Record, func(), error) {
	if !s.isStream {
		if s.next >= s.fr.NumRecords() {
			return nil, nil, nil
		}
		rec, err := s.fr.RecordAt(s.next)
		if err != nil {
			return nil, nil, s.corrupt("", err)
		}
		s.next++
		return rec, rec.Release, nil
	}
	if !s.sr.Next() {
		if err := s.sr.Err(); err != nil {
			return nil, nil, s.corrupt("", err)
		}
		return nil, nil, nil
	}
	return s.sr.Record(), func() {}, nil // the reader releases it at the next Next
}

// Stream sends the records from the current position to the end, projected to cols,
// in batches of at most batchRows records. Arrow IPC has no column projection on read:
// every record batch is decoded whole, and only the projected columns are converted
// to text.
func (s *arrowSource) Stream(ctx context.Context, cols []int, out chan<- *Batch) error {
	return s.StreamAs(ctx, cols, nil, out)
}

// StreamAs is Stream, the columns cols[j] given in the form as[j]: an array as slices
// of the file's arrays (concatenated where a batch spans two record batches).
func (s *arrowSource) StreamAs(ctx context.Context, cols []int, as []Form, out chan<- *Batch) error {
	return guardStream(out, s.corrupt, func(col *string) error {
		bt, err := newRecordBatcher(ctx, out, s.path, s.cols, cols, as, col, s.corrupt)
		if err != nil {
			return err
		}
		b := NewBatch(s.read, len(cols))
		for {
			if err := ctx.Err(); err != nil {
				return err
			}
			rec, release, err := s.nextRecord()
			if err != nil {
				return err
			}
			if rec == nil {
				break
			}
			if b, err = s.putRecord(bt, cols, rec, release, b); err != nil {
				return err
			}
		}
		if b.N > 0 {
			return bt.send(b)
		}
		return nil
	})
}

// putRecord puts the records of record batch rec (released by release once read) into
// batches, b the one being filled: it sends every batch it fills and returns the one to
// fill next.
func (s *arrowSource) putRecord(bt *recordBatcher, cols []int, rec arrow.Record, release func(), b *Batch) (*Batch, error) {
	defer release()
	n := rec.NumRows()
	if n < 0 || n > arrowMaxBatchRows {
		return b, s.corrupt("", fmt.Errorf("a record batch of %d records", n))
	}
	if err := bt.take(rec, cols, int(n)); err != nil {
		return b, err
	}
	for off := 0; off < int(n); {
		m := min(int(n)-off, BatchRows-b.N)
		if err := bt.put(b, off, m); err != nil {
			return b, err
		}
		s.read += m
		off += m
		if b.N == BatchRows {
			if err := bt.send(b); err != nil {
				return b, err
			}
			b = NewBatch(s.read, len(cols))
		}
	}
	return b, nil
}

// arrowValues is an arrow array of values of type T.
type arrowValues[T any] interface {
	arrow.Array
	Value(int) T
}

// arrowTexts returns the function that gives the canonical text of the values of a, or
// reports a null.
func arrowTexts[T any](a arrowValues[T], format func(T) string) func(int) (string, bool) {
	return func(i int) (string, bool) {
		if a.IsNull(i) {
			return "", true
		}
		return format(a.Value(i)), false
	}
}

// arrowText returns the function that gives the canonical text of value i of arr (an
// array of a supported type), or reports a null. Strings are copied: the library's
// strings point into its buffers, which must not outlive the record batch. cache (nil:
// none) holds the column's recent texts across batches.
func arrowText(arr arrow.Array, cache *textCache) func(int) (string, bool) {
	uintText := func(v int64) string { return FormatUint(uint64(v)) }
	switch a := arr.(type) {
	case *array.Int8:
		return arrowTexts(a, func(v int8) string { return FormatInt(int64(v)) })
	case *array.Int16:
		return arrowTexts(a, func(v int16) string { return cache.num(int64(v), FormatInt) })
	case *array.Int32:
		return arrowTexts(a, func(v int32) string { return cache.num(int64(v), FormatInt) })
	case *array.Int64:
		return arrowTexts(a, func(v int64) string { return cache.num(v, FormatInt) })
	case *array.Uint8:
		return arrowTexts(a, func(v uint8) string { return FormatUint(uint64(v)) })
	case *array.Uint16:
		return arrowTexts(a, func(v uint16) string { return cache.num(int64(v), uintText) })
	case *array.Uint32:
		return arrowTexts(a, func(v uint32) string { return cache.num(int64(v), uintText) })
	case *array.Uint64:
		return arrowTexts(a, func(v uint64) string { return cache.num(int64(v), uintText) })
	case *array.Float16:
		return arrowTexts(a, func(v float16.Num) string { return FormatFloat32(halfToFloat32(v.Uint16())) })
	case *array.Float32:
		return arrowTexts(a, FormatFloat32)
	case *array.Float64:
		return arrowTexts(a, FormatFloat)
	case *array.String:
		return arrowTexts(a, cache.str)
	case *array.LargeString:
		return arrowTexts(a, cache.str)
	case *array.Boolean:
		return arrowTexts(a, FormatBool)
	case *array.Date32:
		return arrowTexts(a, func(v arrow.Date32) string { return cache.num(int64(v), FormatDate) })
	case *array.Date64:
		// Milliseconds since the epoch, a multiple of a day in a well-formed file.
		return arrowTexts(a, func(v arrow.Date64) string { return cache.num(arrowFloorDiv(int64(v), 86400000), FormatDate) })
	case *array.Timestamp:
		// The value counts from the Unix epoch in UTC whatever the time zone, which
		// only says how to display it.
		unit := a.DataType().(*arrow.TimestampType).Unit
		return arrowTexts(a, func(v arrow.Timestamp) string { return FormatTimestamp(arrowTime(int64(v), unit)) })
	case *array.Dictionary:
		dict, ok := a.Dictionary().(arrowValues[string])
		if !ok {
			panic(fmt.Sprintf("dictionary of %s values", a.Dictionary().DataType()))
		}
		// Each dictionary value is copied once per record batch.
		cache := make([]string, dict.Len())
		have := make([]bool, dict.Len())
		return func(i int) (string, bool) {
			if a.IsNull(i) {
				return "", true
			}
			k := a.GetValueIndex(i)
			if dict.IsNull(k) {
				return "", true
			}
			if !have[k] {
				cache[k], have[k] = strings.Clone(dict.Value(k)), true
			}
			return cache[k], false
		}
	}
	panic(fmt.Sprintf("values of type %s", arr.DataType()))
}

// arrowTime converts a timestamp in the given unit to a time.
func arrowTime(v int64, unit arrow.TimeUnit) time.Time {
	switch unit {
	case arrow.Second:
		return time.Unix(v, 0)
	case arrow.Millisecond:
		return time.UnixMilli(v)
	case arrow.Microsecond:
		return time.UnixMicro(v)
	}
	return time.Unix(0, v)
}

// arrowFloorDiv divides rounding towards negative infinity.
func arrowFloorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// Rewind starts a second pass at the first record, after checking that the open file
// still has the size and modification time it had at open (and, for a stream, the
// same schema).
func (s *arrowSource) Rewind() error {
	s.rows1 = s.read
	if err := s.same(); err != nil {
		return err
	}
	if err := s.start(); err != nil {
		return err
	}
	if s.isStream {
		sc := s.sr.Schema()
		if sc == nil || !sc.Equal(s.schema) || !sc.Metadata().Equal(s.schema.Metadata()) {
			return ChangedError(s.path)
		}
	}
	return nil
}

// release releases the readers.
func (s *arrowSource) release() {
	if s.fr != nil {
		s.fr.Close()
		s.fr = nil
	}
	if s.sr != nil {
		s.sr.Release()
		s.sr = nil
	}
}

// Close releases the readers and closes the file.
func (s *arrowSource) Close() error {
	s.release()
	return s.file.Close()
}

// boundedAllocator is the allocator the arrow library reads with: it refuses a buffer
// larger than limit (by panicking, which the reader turns into an error), so that a
// corrupt length does not make the process run out of memory.
type boundedAllocator struct {
	mem   memory.Allocator
	limit int64
}

// errBufferTooLarge is the panic of a refused allocation.
type errBufferTooLarge struct{ size, limit int64 }

func (e errBufferTooLarge) Error() string {
	if e.size < 0 {
		return fmt.Sprintf("a buffer of negative size %d", e.size)
	}
	return fmt.Sprintf("a buffer of %d bytes, more than the %d this tool reads for a file of this size", e.size, e.limit)
}

func (a *boundedAllocator) check(size int) {
	if size < 0 || int64(size) > a.limit {
		panic(errBufferTooLarge{int64(size), a.limit})
	}
}

func (a *boundedAllocator) Allocate(size int) []byte {
	a.check(size)
	return a.mem.Allocate(size)
}

func (a *boundedAllocator) Reallocate(size int, b []byte) []byte {
	a.check(size)
	return a.mem.Reallocate(size, b)
}

func (a *boundedAllocator) Free(b []byte) { a.mem.Free(b) }

// arrowMessages reads the messages of an IPC stream for ipc.Reader, as the library's
// own message reader does, but checks every length against what is left of the file
// before allocating for it, and reports a stream that ends without its end-of-stream
// marker as truncated (a stream read from a file was written to the end).
type arrowMessages struct {
	r    *bufio.Reader
	left int64 // bytes of the file not yet read
	mem  memory.Allocator
	msg  *ipc.Message // the current message, released by the next call
	refs atomic.Int64
	eos  bool
}

func newArrowMessages(f *os.File, size int64, mem memory.Allocator) *arrowMessages {
	m := &arrowMessages{r: bufio.NewReaderSize(f, 1<<16), left: size, mem: mem}
	m.refs.Store(1)
	return m
}

// errArrowNoEOS is the error for a stream that ends without its end-of-stream marker.
var errArrowNoEOS = errors.New("the stream ends without its end-of-stream marker")

// readFull reads len(p) bytes.
func (m *arrowMessages) readFull(p []byte) error {
	n, err := io.ReadFull(m.r, p)
	m.left -= int64(n)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("the stream ends inside a message")
	}
	return err
}

// Message returns the next message (valid until the next call), or io.EOF after the
// end-of-stream marker.
func (m *arrowMessages) Message() (*ipc.Message, error) {
	if m.msg != nil {
		m.msg.Release()
		m.msg = nil
	}
	if m.eos {
		return nil, io.EOF
	}
	var word [4]byte
	if err := m.readFull(word[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errArrowNoEOS
		}
		return nil, err
	}
	size := binary.LittleEndian.Uint32(word[:])
	if size == 0xFFFFFFFF { // continuation marker, then the length
		if err := m.readFull(word[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil, errors.New("the stream ends inside a message")
			}
			return nil, err
		}
		size = binary.LittleEndian.Uint32(word[:])
	} // else the format before Arrow 0.15: the length alone
	if size == 0 {
		m.eos = true
		return nil, io.EOF
	}
	if size > math.MaxInt32 || int64(size) > m.left {
		return nil, fmt.Errorf("a message of %d bytes where %d remain", size, m.left)
	}
	if size < 8 {
		return nil, fmt.Errorf("a message of %d bytes", size)
	}
	meta := make([]byte, size)
	if err := m.readFull(meta); err != nil {
		return nil, err
	}
	if err := checkArrowMessage(meta); err != nil {
		return nil, err
	}
	header := ipc.NewMessage(memory.NewBufferBytes(meta), memory.NewBufferBytes(nil))
	bodyLen := header.BodyLen()
	header.Release()
	if bodyLen < 0 || bodyLen > m.left {
		return nil, fmt.Errorf("a message body of %d bytes where %d remain", bodyLen, m.left)
	}
	body := memory.NewResizableBuffer(m.mem)
	body.Resize(int(bodyLen))
	if err := m.readFull(body.Bytes()); err != nil {
		body.Release()
		if errors.Is(err, io.EOF) {
			err = errors.New("the stream ends inside a message")
		}
		return nil, err
	}
	m.msg = ipc.NewMessage(memory.NewBufferBytes(meta), body)
	body.Release()
	return m.msg, nil
}

// Retain adds a reference.
func (m *arrowMessages) Retain() { m.refs.Add(1) }

// Release drops a reference; the last releases the current message.
func (m *arrowMessages) Release() {
	if m.refs.Add(-1) == 0 && m.msg != nil {
		m.msg.Release()
		m.msg = nil
	}
}

// arrowSink writes an Arrow IPC file or stream, one record batch per write. The
// release parameters are the schema's key-value metadata. A dictionary column (a
// release's generalized quasi-identifiers) is written with one dictionary of its
// labels for the whole file.
type arrowSink struct {
	*recordBuilder
	fw *ipc.FileWriter // file format
	sw *ipc.Writer     // stream format
}

// newArrowSink starts an Arrow IPC file (stream false) or stream (stream true) with
// the given columns and schema metadata in w.
func newArrowSink(w io.Writer, stream bool, cols []OutColumn, meta map[string]string) (*arrowSink, error) {
	return newArrowSinkMem(w, stream, cols, meta, memory.DefaultAllocator)
}

// newArrowSinkMem is newArrowSink with the allocator given, for tests.
func newArrowSinkMem(w io.Writer, stream bool, cols []OutColumn, meta map[string]string, mem memory.Allocator) (*arrowSink, error) {
	keys := make([]string, 0, len(meta))
	for k := range meta {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	vals := make([]string, len(keys))
	for i, k := range keys {
		vals[i] = meta[k]
	}
	md := arrow.NewMetadata(keys, vals)
	s := &arrowSink{recordBuilder: newRecordBuilder(cols, &md, mem, 0)}
	opts := []ipc.Option{ipc.WithSchema(s.schema), ipc.WithAllocator(mem)}
	if stream {
		s.sw = ipc.NewWriter(w, opts...)
	} else {
		fw, err := ipc.NewFileWriter(w, opts...)
		if err != nil {
			s.release()
			return nil, fmt.Errorf("writing release: %w", err)
		}
		s.fw = fw
	}
	return s, nil
}

// ArrowType is the arrow type a column of a value type (an integer: of type it) is
// written as.
func ArrowType(typ schema.Type, it IntType) arrow.DataType {
	switch typ {
	case schema.Integer:
		return arrowIntegerType(it)
	case schema.Float:
		return arrow.PrimitiveTypes.Float64
	case schema.Boolean:
		return arrow.FixedWidthTypes.Boolean
	case schema.Date:
		return arrow.FixedWidthTypes.Date32
	case schema.Timestamp:
		return &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}
	}
	return arrow.BinaryTypes.String
}

// arrowIntegerType is the arrow type of integers of type it.
func arrowIntegerType(it IntType) arrow.DataType {
	signed := map[int]arrow.DataType{8: arrow.PrimitiveTypes.Int8, 16: arrow.PrimitiveTypes.Int16, 32: arrow.PrimitiveTypes.Int32}
	unsigned := map[int]arrow.DataType{8: arrow.PrimitiveTypes.Uint8, 16: arrow.PrimitiveTypes.Uint16, 32: arrow.PrimitiveTypes.Uint32, 64: arrow.PrimitiveTypes.Uint64}
	if it.Unsigned {
		return unsigned[it.width()]
	}
	if t, ok := signed[it.width()]; ok {
		return t
	}
	return arrow.PrimitiveTypes.Int64
}

// Write writes n records as one record batch.
func (s *arrowSink) Write(fields []string, nulls []bool, n int) error {
	return writeThrough(s, fields, nulls, n)
}

// Prepare builds the record batch of r's records (recordBuilder.build); several
// goroutines may Prepare at once.
func (s *arrowSink) Prepare(r *Rows) (any, error) { return s.build(r) }

// WritePrepared writes prepare's record batch, in order; an empty one not at all.
func (s *arrowSink) WritePrepared(p any) (err error) {
	rec := p.(arrow.RecordBatch)
	defer rec.Release()
	if rec.NumRows() == 0 {
		return nil
	}
	if s.fw != nil {
		err = s.fw.Write(rec)
	} else {
		err = s.sw.Write(rec)
	}
	if err != nil {
		return fmt.Errorf("writing release: %w", err)
	}
	return nil
}

// arrowAppend appends the value of column c whose canonical text is v to b, the
// builder of c.arrowType(): of the type the input gave the column, when it has one.
func arrowAppend(b array.Builder, c OutColumn, v string) error {
	switch b := b.(type) {
	case *array.StringBuilder:
		b.Append(v)
		return nil
	case *array.LargeStringBuilder:
		b.Append(v)
		return nil
	case *array.BinaryDictionaryBuilder:
		return b.AppendString(v)
	case *array.Float32Builder, *array.Float16Builder:
		f, err := strconv.ParseFloat(v, 32)
		if err != nil {
			return errNotType(schema.Float)
		}
		if fb, ok := b.(*array.Float32Builder); ok {
			fb.Append(float32(f))
		} else {
			b.(*array.Float16Builder).Append(float16.FromBits(float32ToHalf(float32(f))))
		}
		return nil
	case *array.TimestampBuilder:
		return appendTimestamp(b, v)
	}
	if c.Type == schema.Integer {
		x, err := ParseInteger(c.Ints, v)
		if err != nil {
			return err
		}
		arrowAppendInt(b, x)
		return nil
	}
	x, err := ParseTyped(c.Type, v)
	if err != nil {
		return err
	}
	switch b := b.(type) {
	case *array.Float64Builder:
		b.Append(x.F)
	case *array.BooleanBuilder:
		b.Append(x.B)
	case *array.Date32Builder:
		if x.I < math.MinInt32 || x.I > math.MaxInt32 {
			return errors.New("date out of range")
		}
		b.Append(arrow.Date32(x.I))
	case *array.Date64Builder:
		b.Append(arrow.Date64(x.I * 86400000))
	default:
		return fault.Internalf("%s values written as %s", c.Type, b.Type())
	}
	return nil
}

// appendTimestamp appends a timestamp whose canonical text (RFC 3339, UTC) is v in
// the builder's unit (its time zone is the type's: the value counts from the epoch
// in UTC whatever the zone).
func appendTimestamp(b *array.TimestampBuilder, v string) error {
	unit := b.Type().(*arrow.TimestampType).Unit
	if unit == arrow.Nanosecond {
		x, err := ParseTyped(schema.Timestamp, v)
		if err != nil {
			return err
		}
		b.Append(arrow.Timestamp(x.I))
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return errNotType(schema.Timestamp)
	}
	switch unit {
	case arrow.Second:
		b.Append(arrow.Timestamp(t.Unix()))
	case arrow.Millisecond:
		b.Append(arrow.Timestamp(t.UnixMilli()))
	default:
		b.Append(arrow.Timestamp(t.UnixMicro()))
	}
	return nil
}

// arrowAppendInt appends an integer parsed by parseInteger, within the range of the
// builder's type, to an integer builder.
func arrowAppendInt(b array.Builder, x Typed) {
	switch b := b.(type) {
	case *array.Int8Builder:
		b.Append(int8(x.I))
	case *array.Int16Builder:
		b.Append(int16(x.I))
	case *array.Int32Builder:
		b.Append(int32(x.I))
	case *array.Int64Builder:
		b.Append(x.I)
	case *array.Uint8Builder:
		b.Append(uint8(x.U))
	case *array.Uint16Builder:
		b.Append(uint16(x.U))
	case *array.Uint32Builder:
		b.Append(uint32(x.U))
	case *array.Uint64Builder:
		b.Append(x.U)
	}
}

// Finish writes the end of the table (the stream's end-of-stream marker, the file's
// footer); it does not close the file.
func (s *arrowSink) Finish() error {
	defer s.release()
	var err error
	if s.fw != nil {
		err = s.fw.Close()
	} else {
		err = s.sw.Close()
	}
	if err != nil {
		return fmt.Errorf("writing release: %w", err)
	}
	return nil
}

// arrowFB is the flatbuffer metadata of an Arrow IPC message or footer. The arrow
// library decodes it without checks: an out-of-range offset makes it panic (which the
// source recovers), but it also sizes slices by the vector lengths it finds, before
// reading them, and follows child fields without limit, so that a few corrupt bytes
// could exhaust the memory or the stack, which no recover catches. checkSchema
// checks those lengths and nesting first, with the library's own (wrapping 32-bit)
// offset arithmetic so that it looks where the library will look.
type arrowFB []byte

// errArrowMetadata is the error for metadata that point outside themselves.
var errArrowMetadata = errors.New("malformed metadata")

// Flatbuffer limits.
const (
	arrowMaxDepth      = 64 // nesting of fields (the library's own limit when loading arrays)
	arrowBytesPerField = 8  // at least: a field's table offset and its entry in a vector
)

func (b arrowFB) u32(at uint32) (uint32, error) {
	if uint64(at)+4 > uint64(len(b)) {
		return 0, errArrowMetadata
	}
	return binary.LittleEndian.Uint32(b[at:]), nil
}

func (b arrowFB) u16(at uint32) (uint16, error) {
	if uint64(at)+2 > uint64(len(b)) {
		return 0, errArrowMetadata
	}
	return binary.LittleEndian.Uint16(b[at:]), nil
}

// field returns the position of field slot of the table at pos, 0 when the table
// does not have it.
func (b arrowFB) field(pos uint32, slot int) (uint32, error) {
	so, err := b.u32(pos)
	if err != nil {
		return 0, err
	}
	vt := uint32(int32(pos) - int32(so))
	size, err := b.u16(vt)
	if err != nil {
		return 0, err
	}
	voff := uint16(4 + 2*slot)
	if voff >= size {
		return 0, nil
	}
	off, err := b.u16(vt + uint32(voff))
	if err != nil || off == 0 {
		return 0, err
	}
	return pos + uint32(off), nil
}

// ref follows the offset in field slot of the table at pos to a table or vector.
func (b arrowFB) ref(pos uint32, slot int) (uint32, bool, error) {
	at, err := b.field(pos, slot)
	if err != nil || at == 0 {
		return 0, false, err
	}
	off, err := b.u32(at)
	if err != nil {
		return 0, false, err
	}
	return at + off, true, nil
}

// vector returns the start and length of the vector in field slot of the table at pos,
// checking that its elements, of elem bytes each, lie within the buffer.
func (b arrowFB) vector(pos uint32, slot int, elem int) (uint32, int, error) {
	at, ok, err := b.ref(pos, slot)
	if err != nil || !ok {
		return 0, 0, err
	}
	n, err := b.u32(at)
	if err != nil {
		return 0, 0, err
	}
	start := at + 4
	if uint64(start)+uint64(n)*uint64(elem) > uint64(len(b)) {
		return 0, 0, errArrowMetadata
	}
	return start, int(n), nil
}

// checkSchema checks the Schema table at pos: the lengths of the vectors the library
// allocates for (fields, children, custom metadata) and the nesting of the fields.
func (b arrowFB) checkSchema(pos uint32) error {
	budget := len(b)/arrowBytesPerField + 1
	start, n, err := b.vector(pos, 1, 4) // Schema.fields
	if err != nil {
		return err
	}
	for i := range n {
		if err := b.checkField(start+uint32(4*i), 1, &budget); err != nil {
			return err
		}
	}
	_, _, err = b.vector(pos, 2, 4) // Schema.custom_metadata
	return err
}

// checkField checks the Field table referenced at ref, at nesting depth.
func (b arrowFB) checkField(ref uint32, depth int, budget *int) error {
	if depth > arrowMaxDepth {
		return fmt.Errorf("fields nested more than %d deep", arrowMaxDepth)
	}
	if *budget--; *budget < 0 {
		return errArrowMetadata // more fields than fit: shared or cyclic tables
	}
	off, err := b.u32(ref)
	if err != nil {
		return err
	}
	pos := ref + off
	start, n, err := b.vector(pos, 5, 4) // Field.children
	if err != nil {
		return err
	}
	for i := range n {
		if err := b.checkField(start+uint32(4*i), depth+1, budget); err != nil {
			return err
		}
	}
	_, _, err = b.vector(pos, 6, 4) // Field.custom_metadata
	return err
}

// checkArrowMessage checks the metadata of a stream message: a schema as checkSchema does.
func checkArrowMessage(meta []byte) error {
	b := arrowFB(meta)
	root, err := b.u32(0)
	if err != nil {
		return err
	}
	at, err := b.field(root, 1) // Message.header_type
	if err != nil || at == 0 {
		return err
	}
	if int(at) >= len(b) {
		return errArrowMetadata
	}
	if b[at] != 1 { // MessageHeader.Schema
		return nil
	}
	pos, ok, err := b.ref(root, 2) // Message.header
	if err != nil || !ok {
		return err
	}
	return b.checkSchema(pos)
}
