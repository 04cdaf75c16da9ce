package verify

// What an Arrow IPC file states is checked here before the arrow library acts on it.
//
// The library trusts the file: it sizes Go slices by the lengths of the vectors it finds
// in a message's flatbuffer metadata (a schema's fields, a field's children, key-value
// metadata, a record batch's variadic buffer counts) before it reads them, follows
// nested fields without a limit, and copies a string out each time a table refers to
// it. A few corrupt bytes could so exhaust the memory or the stack, which no recover
// catches. Every message's metadata, and the file format's footer, is therefore checked
// on the very bytes the library then decodes (arrowStream reads a stream's messages,
// arrowFileAt watches what the library reads of a file), with the library's own 32-bit
// wrapping offset arithmetic (flatbuffers.Table), so that the checks look where the
// library will look. The buffers the library allocates come from arrowMem, which
// refuses one larger than the file can hold. What the library then does wrong with a
// corrupt file is a panic, which the reader recovers into an error naming the file.

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Limits on what a corrupt file can make the library do.
const (
	// arrowSlack is how much larger than the file a buffer the library allocates may be
	// (it rounds sizes up to 64 bytes).
	arrowSlack = 1 << 20
	// A compressed buffer states its size once decompressed, which may be any
	// multiple of the bytes it takes in the file. A file with compressed record
	// batches may have buffers up to arrowExpand times its size plus arrowExpandSlack:
	// data that compresses better than that cannot be told from a decompression bomb.
	arrowExpand      = 64
	arrowExpandSlack = 256 << 20
	// arrowMaxDepth bounds the nesting of fields (the library's own limit when it
	// loads nested arrays).
	arrowMaxDepth = 64
)

// arrowMem is the allocator the library reads a file with: it refuses a buffer larger
// than the file can hold by panicking with an arrowTooLarge, which the reader recovers.
type arrowMem struct {
	mem        memory.Allocator
	size       int64       // of the file
	compressed atomic.Bool // a message of the file has compressed buffers
}

func newArrowMem(mem memory.Allocator, size int64) *arrowMem {
	return &arrowMem{mem: mem, size: size}
}

// limit is the largest buffer the library may allocate for the file.
func (m *arrowMem) limit() int64 {
	if m.compressed.Load() {
		if m.size > (math.MaxInt64-arrowExpandSlack)/arrowExpand {
			return math.MaxInt64
		}
		return arrowExpand*m.size + arrowExpandSlack
	}
	return min(m.size, math.MaxInt64-arrowSlack) + arrowSlack
}

// arrowTooLarge is the panic of a refused allocation.
type arrowTooLarge struct{ size, limit int64 }

func (e arrowTooLarge) Error() string {
	return fmt.Sprintf("a buffer of %d bytes, more than the %d a file of this size can need", e.size, e.limit)
}

func (m *arrowMem) check(size int) {
	if limit := m.limit(); size < 0 || int64(size) > limit {
		panic(arrowTooLarge{int64(size), limit})
	}
}

func (m *arrowMem) Allocate(size int) []byte {
	m.check(size)
	return m.mem.Allocate(size)
}

func (m *arrowMem) Reallocate(size int, b []byte) []byte {
	m.check(size)
	return m.mem.Reallocate(size, b)
}

func (m *arrowMem) Free(b []byte) { m.mem.Free(b) }

// errMetadata is the error for flatbuffer metadata that point outside themselves or
// state more than they hold.
var errMetadata = errors.New("malformed metadata")

// fbCheck reads flatbuffer metadata as the library will, checking each position first.
type fbCheck struct {
	b []byte
	// The Go values the library makes from the metadata are bounded by the
	// metadata's size: tables it turns into values (fields, key-value pairs), each at
	// least an offset of 4 bytes in a vector, and bytes of strings it copies, each
	// stored once in a well-formed buffer (a corrupt one may refer to one string or
	// table again and again, or in a cycle).
	tables, copies int
}

func newFBCheck(b []byte) *fbCheck {
	return &fbCheck{b: b, tables: len(b)/4 + 1, copies: len(b)}
}

func (c *fbCheck) u32(at uint32) (uint32, error) {
	if uint64(at)+4 > uint64(len(c.b)) {
		return 0, errMetadata
	}
	return binary.LittleEndian.Uint32(c.b[at:]), nil
}

func (c *fbCheck) u16(at uint32) (uint16, error) {
	if uint64(at)+2 > uint64(len(c.b)) {
		return 0, errMetadata
	}
	return binary.LittleEndian.Uint16(c.b[at:]), nil
}

// field returns the position of field n of the table at pos, 0 when the table does not
// have it (flatbuffers.Table.Offset).
func (c *fbCheck) field(pos uint32, n int) (uint32, error) {
	back, err := c.u32(pos)
	if err != nil {
		return 0, err
	}
	vtable := uint32(int32(pos) - int32(back))
	size, err := c.u16(vtable)
	if err != nil {
		return 0, err
	}
	slot := uint16(4 + 2*n)
	if slot >= size {
		return 0, nil
	}
	off, err := c.u16(vtable + uint32(slot))
	if err != nil || off == 0 {
		return 0, err
	}
	return pos + uint32(off), nil
}

// byteField returns the byte of field n of the table at pos (0 when absent).
func (c *fbCheck) byteField(pos uint32, n int) (byte, error) {
	at, err := c.field(pos, n)
	if err != nil || at == 0 {
		return 0, err
	}
	if uint64(at) >= uint64(len(c.b)) {
		return 0, errMetadata
	}
	return c.b[at], nil
}

// int64Field returns the int64 of field n of the table at pos (0 when absent).
func (c *fbCheck) int64Field(pos uint32, n int) (int64, error) {
	at, err := c.field(pos, n)
	if err != nil || at == 0 {
		return 0, err
	}
	if uint64(at)+8 > uint64(len(c.b)) {
		return 0, errMetadata
	}
	return int64(binary.LittleEndian.Uint64(c.b[at:])), nil
}

// indirect follows the offset at at (flatbuffers.Table.Indirect).
func (c *fbCheck) indirect(at uint32) (uint32, error) {
	off, err := c.u32(at)
	return at + off, err
}

// table returns the position of the table (or union value) field n of the table at pos
// refers to; ok is false when absent.
func (c *fbCheck) table(pos uint32, n int) (at uint32, ok bool, err error) {
	f, err := c.field(pos, n)
	if err != nil || f == 0 {
		return 0, false, err
	}
	at, err = c.indirect(f)
	return at, err == nil, err
}

// vector returns where the elements of the vector in field n of the table at pos
// start and how many there are, once it has checked that they lie within the
// metadata, elem bytes each.
func (c *fbCheck) vector(pos uint32, n, elem int) (start uint32, count int, err error) {
	at, ok, err := c.table(pos, n)
	if err != nil || !ok {
		return 0, 0, err
	}
	length, err := c.u32(at)
	if err != nil {
		return 0, 0, err
	}
	start = at + 4
	if uint64(start)+uint64(length)*uint64(elem) > uint64(len(c.b)) {
		return 0, 0, errMetadata
	}
	return start, int(length), nil
}

// str checks the string in field n of the table at pos, which the library copies.
func (c *fbCheck) str(pos uint32, n int) error {
	at, ok, err := c.table(pos, n)
	if err != nil || !ok {
		return err
	}
	length, err := c.u32(at)
	if err != nil {
		return err
	}
	if uint64(at)+4+uint64(length) > uint64(len(c.b)) {
		return errMetadata
	}
	if c.copies -= int(length); c.copies < 0 {
		return errors.New("metadata that refer to their strings more often than they hold them")
	}
	return nil
}

// element returns the position of the table element i of a vector of tables.
func (c *fbCheck) element(start uint32, i int) (uint32, error) {
	if c.tables--; c.tables < 0 {
		return 0, errors.New("metadata that refer to their tables more often than they hold them")
	}
	return c.indirect(start + 4*uint32(i))
}

// keyValues checks the key-value metadata in field n of the table at pos.
func (c *fbCheck) keyValues(pos uint32, n int) error {
	start, count, err := c.vector(pos, n, 4)
	if err != nil {
		return err
	}
	for i := range count {
		kv, err := c.element(start, i)
		if err != nil {
			return err
		}
		if err := c.str(kv, 0); err != nil { // KeyValue.key
			return err
		}
		if err := c.str(kv, 1); err != nil { // KeyValue.value
			return err
		}
	}
	return nil
}

// schema checks the Schema table at pos.
func (c *fbCheck) schema(pos uint32) error {
	start, count, err := c.vector(pos, 1, 4) // Schema.fields
	if err != nil {
		return err
	}
	for i := range count {
		f, err := c.element(start, i)
		if err != nil {
			return err
		}
		if err := c.fieldTable(f, 1); err != nil {
			return err
		}
	}
	return c.keyValues(pos, 2) // Schema.custom_metadata
}

// Type union members whose tables the library copies from.
const (
	fbTypeTimestamp = 10
	fbTypeUnion     = 14
)

// fieldTable checks the Field table at pos, nested depth deep.
func (c *fbCheck) fieldTable(pos uint32, depth int) error {
	if depth > arrowMaxDepth {
		return fmt.Errorf("fields nested more than %d deep", arrowMaxDepth)
	}
	if err := c.str(pos, 0); err != nil { // Field.name
		return err
	}
	typ, err := c.byteField(pos, 2) // Field.type_type
	if err != nil {
		return err
	}
	if typ == fbTypeTimestamp || typ == fbTypeUnion {
		t, ok, err := c.table(pos, 3) // Field.type
		if err != nil {
			return err
		}
		if ok && typ == fbTypeTimestamp {
			err = c.str(t, 1) // Timestamp.timezone
		} else if ok {
			_, _, err = c.vector(t, 1, 4) // Union.typeIds
		}
		if err != nil {
			return err
		}
	}
	start, count, err := c.vector(pos, 5, 4) // Field.children
	if err != nil {
		return err
	}
	for i := range count {
		child, err := c.element(start, i)
		if err != nil {
			return err
		}
		if err := c.fieldTable(child, depth+1); err != nil {
			return err
		}
	}
	return c.keyValues(pos, 6) // Field.custom_metadata
}

// recordBatch checks the RecordBatch table at pos and reports whether its buffers are
// compressed.
func (c *fbCheck) recordBatch(pos uint32) (compressed bool, err error) {
	if _, _, err := c.vector(pos, 1, 16); err != nil { // RecordBatch.nodes
		return false, err
	}
	_, buffers, err := c.vector(pos, 2, 16) // RecordBatch.buffers
	if err != nil {
		return false, err
	}
	_, compressed, err = c.table(pos, 3) // RecordBatch.compression
	if err != nil {
		return false, err
	}
	start, count, err := c.vector(pos, 4, 8) // RecordBatch.variadicBufferCounts
	if err != nil {
		return false, err
	}
	for i := range count {
		n := int64(binary.LittleEndian.Uint64(c.b[start+8*uint32(i):]))
		if n < 0 || n > int64(buffers) {
			return false, fmt.Errorf("%d variadic buffers of %d", n, buffers)
		}
	}
	return compressed, nil
}

// Message header types.
const (
	fbSchema          = 1
	fbDictionaryBatch = 2
	fbRecordBatch     = 3
)

// messageCheck is what checkMessage learns of a message.
type messageCheck struct {
	typ        byte  // its header's type (fbSchema, fbDictionaryBatch, fbRecordBatch)
	compressed bool  // its buffers are compressed
	bodyLen    int64 // its body's length, as stated
	// a dictionary batch's: the dictionary's id, and whether it adds to the one before
	// (a delta) rather than replacing it
	dictID int64
	delta  bool
}

// checkMessage checks the metadata of an IPC message (what follows its length prefix).
func checkMessage(meta []byte) (messageCheck, error) {
	var m messageCheck
	c := newFBCheck(meta)
	root, err := c.u32(0)
	if err != nil {
		return m, err
	}
	if m.bodyLen, err = c.int64Field(root, 3); err != nil { // Message.bodyLength
		return m, err
	}
	if err := c.keyValues(root, 4); err != nil { // Message.custom_metadata
		return m, err
	}
	typ, err := c.byteField(root, 1) // Message.header_type
	if err != nil {
		return m, err
	}
	m.typ = typ
	header, ok, err := c.table(root, 2) // Message.header
	if err != nil || !ok {
		return m, err
	}
	switch typ {
	case fbSchema:
		err = c.schema(header)
	case fbDictionaryBatch:
		if m.dictID, err = c.int64Field(header, 0); err != nil { // DictionaryBatch.id
			return m, err
		}
		delta, err := c.byteField(header, 2) // DictionaryBatch.isDelta
		if err != nil {
			return m, err
		}
		m.delta = delta != 0
		var data uint32
		if data, ok, err = c.table(header, 1); ok { // DictionaryBatch.data
			m.compressed, err = c.recordBatch(data)
		}
	case fbRecordBatch:
		m.compressed, err = c.recordBatch(header)
	}
	return m, err
}

// arrowBlock is a message of an IPC file as its footer lists it.
type arrowBlock struct {
	offset, meta, body int64
}

// checkArrowFooter checks the footer of an IPC file and returns the blocks it lists.
func checkArrowFooter(footer []byte) ([]arrowBlock, error) {
	c := newFBCheck(footer)
	root, err := c.u32(0)
	if err != nil {
		return nil, err
	}
	if sc, ok, err := c.table(root, 1); err != nil { // Footer.schema
		return nil, err
	} else if ok {
		if err := c.schema(sc); err != nil {
			return nil, err
		}
	}
	if err := c.keyValues(root, 4); err != nil { // Footer.custom_metadata
		return nil, err
	}
	var blocks []arrowBlock
	for _, n := range []int{2, 3} { // Footer.dictionaries, Footer.recordBatches
		start, count, err := c.vector(root, n, 24)
		if err != nil {
			return nil, err
		}
		for i := range count {
			b := c.b[start+24*uint32(i):]
			blocks = append(blocks, arrowBlock{
				offset: int64(binary.LittleEndian.Uint64(b)),
				meta:   int64(int32(binary.LittleEndian.Uint32(b[8:]))),
				body:   int64(binary.LittleEndian.Uint64(b[16:])),
			})
		}
	}
	return blocks, nil
}

// errNoEOS is the error for a stream that ends without its end-of-stream marker.
var errNoEOS = errors.New("the stream ends without its end-of-stream marker")

// arrowStream reads the messages of an IPC stream for ipc.Reader (an
// ipc.MessageReader), checking each before the library decodes it: its length and
// its body's against what is left of the file, its metadata with checkMessage. A
// stream read from a file was written to its end: one that ends without its
// end-of-stream marker is truncated.
type arrowStream struct {
	r     *bufio.Reader
	left  int64 // bytes of the file not read yet
	mem   *arrowMem
	msg   *ipc.Message // the current message, released by the next call
	refs  atomic.Int64
	ended bool
	// pending is, per dictionary id, the dictionary batches read since the last record
	// batch; unread counts those a replacement of their dictionary, before any record
	// batch, left behind: no record batch refers to either.
	pending map[int64]int
	unread  int
}

func newArrowStream(r io.ReaderAt, size int64, mem *arrowMem) *arrowStream {
	s := &arrowStream{r: bufio.NewReaderSize(io.NewSectionReader(r, 0, size), 1<<16), left: size, mem: mem}
	s.refs.Store(1)
	return s
}

// read reads len(p) bytes; what a message lacks is io.ErrUnexpectedEOF.
func (s *arrowStream) read(p []byte) error {
	n, err := io.ReadFull(s.r, p)
	s.left -= int64(n)
	return err
}

// Message returns the next message (valid until the next call), or io.EOF after the
// end-of-stream marker.
func (s *arrowStream) Message() (*ipc.Message, error) {
	if s.msg != nil {
		s.msg.Release()
		s.msg = nil
	}
	if s.ended {
		return nil, io.EOF
	}
	var word [4]byte
	if err := s.read(word[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errNoEOS
		}
		return nil, err
	}
	length := binary.LittleEndian.Uint32(word[:])
	if length == 0xFFFFFFFF { // a continuation marker, then the length
		if err := s.read(word[:]); err != nil {
			return nil, err
		}
		length = binary.LittleEndian.Uint32(word[:])
	} // else a stream of Arrow before 0.15: the length alone
	if length == 0 {
		s.ended = true
		return nil, io.EOF
	}
	if length < 8 || int64(length) > s.left {
		return nil, fmt.Errorf("message metadata of %d bytes where %d remain", length, s.left)
	}
	meta := make([]byte, length)
	if err := s.read(meta); err != nil {
		return nil, err
	}
	m, err := checkMessage(meta)
	if err != nil {
		return nil, err
	}
	if m.bodyLen < 0 || m.bodyLen > s.left {
		return nil, fmt.Errorf("a message body of %d bytes where %d remain", m.bodyLen, s.left)
	}
	if m.compressed {
		s.mem.compressed.Store(true)
	}
	s.follow(m)
	body := memory.NewResizableBuffer(s.mem)
	body.Resize(int(m.bodyLen))
	if err := s.read(body.Bytes()); err != nil {
		body.Release()
		return nil, err
	}
	mb := memory.NewBufferBytes(meta)
	s.msg = ipc.NewMessage(mb, body)
	mb.Release()
	body.Release()
	return s.msg, nil
}

// follow takes note of the dictionary batches that no record batch refers to: those a
// replacement of their dictionary follows before any record batch does.
func (s *arrowStream) follow(m messageCheck) {
	switch m.typ {
	case fbDictionaryBatch:
		if s.pending == nil {
			s.pending = map[int64]int{}
		}
		if !m.delta {
			s.unread += s.pending[m.dictID]
			s.pending[m.dictID] = 0
		}
		s.pending[m.dictID]++
	case fbRecordBatch:
		clear(s.pending)
	}
}

// unreadDicts is, at the end of the stream, the dictionary batches no record batch
// refers to: those replaced before one did, and those after the last.
func (s *arrowStream) unreadDicts() int {
	n := s.unread
	for _, k := range s.pending {
		n += k
	}
	return n
}

// Retain adds a reference.
func (s *arrowStream) Retain() { s.refs.Add(1) }

// Release drops a reference; the last lets the current message go.
func (s *arrowStream) Release() {
	if s.refs.Add(-1) == 0 && s.msg != nil {
		s.msg.Release()
		s.msg = nil
	}
}

// arrowFileAt is an IPC file as ipc.FileReader reads it. It lets the library read
// only what the footer lists, and checks what it reads: the footer (checkArrowFooter) and
// each message's metadata (checkMessage), on the bytes it hands over. While the reader
// opens the file, reads come in turn: the file's last bytes, then the footer they
// locate; then, also once the file is open, only the messages the footer lists, their
// metadata and their body. After open it may be read from several goroutines.
type arrowFileAt struct {
	r      io.ReaderAt
	size   int64
	mem    *arrowMem
	opened bool              // the reader has opened the file: the maps no longer change
	footer int64             // the footer's length, once read (0: not yet)
	metas  map[[2]int64]bool // the messages' metadata: offset and length
	bodies map[[2]int64]bool // the messages' bodies: offset and length
}

// arrowTail is the bytes at the end of an IPC file: the footer's length and the magic.
const arrowTail = 4 + 6

func (f *arrowFileAt) ReadAt(p []byte, off int64) (int, error) {
	key := [2]int64{off, int64(len(p))}
	var check func([]byte) error
	switch {
	case f.metas[key]:
		check = f.checkMeta
	case f.bodies[key]:
	case !f.opened && off == f.size-arrowTail && len(p) == arrowTail:
		check = func(p []byte) error {
			f.footer = int64(binary.LittleEndian.Uint32(p))
			return nil
		}
	case !f.opened && f.footer > 0 && off == f.size-arrowTail-f.footer && int64(len(p)) == f.footer:
		check = f.checkFooter
	default:
		return 0, fmt.Errorf("a read of %d bytes at %d, outside the footer and the messages it lists", len(p), off)
	}
	n, err := f.r.ReadAt(p, off)
	if n < len(p) {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return n, err
	}
	if check != nil {
		if err := check(p); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// checkFooter checks the footer and takes the messages it lists.
func (f *arrowFileAt) checkFooter(p []byte) error {
	blocks, err := checkArrowFooter(p)
	if err != nil {
		return fmt.Errorf("footer: %w", err)
	}
	f.metas, f.bodies = map[[2]int64]bool{}, map[[2]int64]bool{}
	for _, b := range blocks {
		f.metas[[2]int64{b.offset, b.meta}] = true
		f.bodies[[2]int64{b.offset + b.meta, b.body}] = true
	}
	return nil
}

// checkMeta checks the metadata of a message, after its length prefix (which the
// library reads as checked here: a continuation marker and the length, or the length
// alone).
func (f *arrowFileAt) checkMeta(p []byte) error {
	prefix := 4
	if len(p) >= 4 && binary.LittleEndian.Uint32(p) == 0xFFFFFFFF {
		prefix = 8
	}
	if len(p) < prefix {
		return nil // the library refuses it
	}
	m, err := checkMessage(p[prefix:])
	if err != nil {
		return err
	}
	if m.compressed {
		f.mem.compressed.Store(true)
	}
	return nil
}

// Seek tells the library the file's size (where the footer ends); it seeks nowhere
// else.
func (f *arrowFileAt) Seek(off int64, whence int) (int64, error) {
	if off != 0 || whence != io.SeekEnd {
		return 0, errors.New("seeking other than to the end")
	}
	return f.size, nil
}

// Read refuses: the library reads a file at offsets.
func (f *arrowFileAt) Read([]byte) (int, error) {
	return 0, errors.New("reading other than at an offset")
}
