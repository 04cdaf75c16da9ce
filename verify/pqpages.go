package verify

// The checks of a column chunk's pages before the library decodes them. The library
// trusts the sizes and counts a page states: it allocates the compressed and the
// uncompressed size, a level and an offset per value, and whatever the runs of a
// run-length encoding or the header of a delta encoding promise. Each is held here
// against what the file and the row group can hold.

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

const (
	// pageSlack is how much larger than the file a page may be once decompressed.
	pageSlack = 64 << 20
	// minPageValues is how many values a page may state whatever its size (a page
	// of nulls or of one repeated value takes a few bytes for any number of them).
	minPageValues = 1 << 24
	// levelSlack is how many more levels or dictionary indexes than values a
	// run-length encoding may hold (the last bit-packed group is padded to 8).
	levelSlack = 8
)

// pageHeader is what the checks read of a page header.
type pageHeader struct {
	typ                      format.PageType
	uncompressed, compressed int32
	numValues                int32 // data or dictionary page
	numNulls, numRows        int32 // data page v2
	encoding                 format.Encoding
	defEncoding              format.Encoding // data page v1
	defLen, repLen           int32           // data page v2
	compressedV2             bool            // data page v2: the values are compressed
}

// readPageHeader reads a PageHeader struct.
func readPageHeader(r *thriftReader) (pageHeader, error) {
	h := pageHeader{typ: -1, compressedV2: true}
	i32 := func(dst *int32, typ byte) (bool, error) {
		if typ != thriftI32 {
			return false, nil
		}
		v, err := r.i32()
		*dst = v
		return true, err
	}
	enc := func(dst *format.Encoding, typ byte) (bool, error) {
		var v int32
		ok, err := i32(&v, typ)
		*dst = format.Encoding(v)
		return ok, err
	}
	sub := func(visit func(id int16, typ byte) (bool, error)) func(id int16, typ byte) (bool, error) {
		return func(id int16, typ byte) (bool, error) {
			if typ != thriftStruct {
				return false, nil
			}
			return true, r.structFields(visit)
		}
	}
	v1 := sub(func(id int16, typ byte) (bool, error) {
		switch id {
		case 1:
			return i32(&h.numValues, typ)
		case 2:
			return enc(&h.encoding, typ)
		case 3:
			return enc(&h.defEncoding, typ)
		}
		return false, nil
	})
	dict := sub(func(id int16, typ byte) (bool, error) {
		switch id {
		case 1:
			return i32(&h.numValues, typ)
		case 2:
			return enc(&h.encoding, typ)
		}
		return false, nil
	})
	v2 := sub(func(id int16, typ byte) (bool, error) {
		switch id {
		case 1:
			return i32(&h.numValues, typ)
		case 2:
			return i32(&h.numNulls, typ)
		case 3:
			return i32(&h.numRows, typ)
		case 4:
			return enc(&h.encoding, typ)
		case 5:
			return i32(&h.defLen, typ)
		case 6:
			return i32(&h.repLen, typ)
		case 7:
			if typ == thriftTrue || typ == thriftFalse {
				h.compressedV2 = typ == thriftTrue
			}
		}
		return false, nil
	})
	err := r.structFields(func(id int16, typ byte) (bool, error) {
		switch id {
		case 1:
			var v int32
			ok, err := i32(&v, typ)
			h.typ = format.PageType(v)
			return ok, err
		case 2:
			return i32(&h.uncompressed, typ)
		case 3:
			return i32(&h.compressed, typ)
		case 5:
			return v1(id, typ)
		case 7:
			return dict(id, typ)
		case 8:
			return v2(id, typ)
		}
		return false, nil
	})
	return h, err
}

// chunkCheck is what the page checks of one column chunk need to know.
type chunkCheck struct {
	rows     int64 // records of the row group
	fileSize int64
	codec    format.CompressionCodec
	optional bool    // one definition level per record, bit width 1
	scratch  *[]byte // for decompressing a page, reused
	values   int64   // data values (records) of the pages so far
	kind     pqKind  // of the column
	phys     format.Type
	// dictValues is how many values the chunk's dictionary pages state (a valid chunk
	// has one at most).
	dictValues int64
}

// pageStream hands the library a column chunk's bytes page by page, each page checked
// before the library can read a byte of it. The library reads a chunk through an
// io.ReaderAt, front to back (its buffered reader reads ahead of the page it decodes):
// a read past the pages checked so far reads and checks the next ones from the file
// first. Only the pages not yet read by the library are held, in a buffer that grows
// to the largest page (plus a read-ahead block), not to the chunk.
type pageStream struct {
	f       io.ReaderAt
	start   int64 // where the chunk starts in the file
	size    int64 // its length
	buf     []byte
	base    int64 // the chunk offset of buf[0]
	low     int64 // the chunk offset the library last read from: it reads no earlier one
	checked int64 // the pages before this chunk offset are checked
	block   int64 // how much it reads from the file at a time, at least
	check   chunkCheck
	err     error // the first failure: every later read fails with it
}

// pageBlock is how much of a chunk a stream reads from the file at a time, at least.
const pageBlock = 64 << 10

// reset points s at the chunk of size bytes at start in f, to be checked by c and read
// block bytes at a time (0: pageBlock). The buffer is kept.
func (s *pageStream) reset(f io.ReaderAt, start, size int64, block int, c chunkCheck) {
	if block <= 0 {
		block = pageBlock
	}
	s.f, s.start, s.size, s.block, s.check, s.err = f, start, size, int64(block), c, nil
	s.buf, s.base, s.low, s.checked = s.buf[:0], 0, 0, 0
}

// release lets go of the buffer when it is larger than a chunk of small pages needs.
func (s *pageStream) release() {
	if int64(cap(s.buf)) > 2*s.block {
		s.buf = nil
	}
}

// ReadAt reads the chunk's bytes at file offset off for the library, checking the pages
// they reach into first.
func (s *pageStream) ReadAt(p []byte, off int64) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	o := off - s.start
	if o < s.low || o > s.size {
		// The library reads a chunk once, in order; it reads back only to look for a
		// dictionary page that did not come first, which no valid chunk lacks.
		s.err = errors.New("a dictionary-encoded page before the column chunk's dictionary")
		return 0, s.err
	}
	s.low = o
	end := min(o+int64(len(p)), s.size)
	for s.checked < end {
		if err := s.next(); err != nil {
			s.err = err
			return 0, err
		}
	}
	n := copy(p, s.buf[o-s.base:end-s.base])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// next reads and checks the page at s.checked.
func (s *pageStream) next() error {
	pos := s.checked
	if err := s.fill(pos + min(s.block, s.size-pos)); err != nil {
		return err
	}
	var h pageHeader
	var hlen int
	for {
		// The header's lengths are held against the rest of the chunk: a header that
		// fails against the bytes read so far is read again with more of them.
		r := &thriftReader{b: s.buf[pos-s.base:]}
		var err error
		if h, err = readPageHeader(r); err == nil {
			hlen = r.pos
			break
		}
		buffered := s.base + int64(len(s.buf))
		if buffered == s.size {
			return fmt.Errorf("page header at byte %d of the column chunk: %w", pos, err)
		}
		if err := s.fill(buffered + max(buffered-pos, s.block)); err != nil {
			return err
		}
	}
	left := s.size - pos - int64(hlen)
	if h.compressed < 0 || int64(h.compressed) > left {
		return fmt.Errorf("a page of %d bytes where the column chunk has %d left", h.compressed, left)
	}
	end := pos + int64(hlen) + int64(h.compressed)
	if err := s.fill(end); err != nil {
		return err
	}
	if err := s.check.checkPage(&h, s.buf[pos+int64(hlen)-s.base:end-s.base]); err != nil {
		return err
	}
	s.checked = end
	return nil
}

// fill reads the chunk up to chunk offset end at least (and up to a block more, within
// the chunk) into the buffer, dropping the bytes the library has read past and that
// are checked.
func (s *pageStream) fill(end int64) error {
	have := s.base + int64(len(s.buf))
	if end <= have {
		return nil
	}
	end = min(max(end, have+s.block), s.size)
	if keep := min(s.low, s.checked); keep > s.base {
		s.buf = s.buf[:copy(s.buf, s.buf[keep-s.base:])]
		s.base = keep
	}
	n := int(end - s.base)
	if n > cap(s.buf) { // a block more, so that the next pages seldom grow it again
		b := make([]byte, n, n+int(s.block))
		copy(b, s.buf)
		s.buf = b
	}
	s.buf = s.buf[:n]
	if _, err := s.f.ReadAt(s.buf[have-s.base:], s.start+have); err != nil {
		s.buf = s.buf[:have-s.base]
		return fmt.Errorf("reading the column chunk: %w", err)
	}
	return nil
}

// finish checks, once the library has read the chunk's pages, the pages after them and
// that the pages held a value for each record of the row group.
func (s *pageStream) finish() error {
	if s.err != nil {
		return s.err
	}
	s.low = s.checked
	for s.checked < s.size {
		if err := s.next(); err != nil {
			s.err = err
			return err
		}
	}
	if c := &s.check; c.values != c.rows {
		return fmt.Errorf("the pages hold %d values for %d records", c.values, c.rows)
	}
	return nil
}

// maxValues is how many values a page of the given uncompressed size may state.
func maxValues(uncompressed int32) int64 { return max(minPageValues, 8*int64(uncompressed)) }

// checkPage checks one page.
func (c *chunkCheck) checkPage(h *pageHeader, body []byte) error {
	if h.uncompressed < 0 || int64(h.uncompressed) > c.fileSize+pageSlack {
		return fmt.Errorf("a page of %d bytes uncompressed in a file of %d", h.uncompressed, c.fileSize)
	}
	if h.numValues < 0 || int64(h.numValues) > maxValues(h.uncompressed) {
		return fmt.Errorf("a page of %d bytes that states %d values", h.uncompressed, h.numValues)
	}
	switch h.typ {
	case format.DictionaryPage:
		c.dictValues += int64(h.numValues)
		_, err := c.decompress(body, int(h.uncompressed), false)
		return err
	case format.DataPage:
		if err := c.countValues(int64(h.numValues)); err != nil {
			return err
		}
		need := (c.optional && h.defEncoding == format.RLE) || checkedEncoding(h.encoding)
		data, err := c.decompress(body, int(h.uncompressed), need)
		if err != nil {
			return err
		}
		return c.checkDataV1(h, data)
	case format.DataPageV2:
		return c.checkDataV2(h, body)
	}
	return nil // the library refuses pages of other types
}

// countValues adds a data page's values to those of the chunk, which may not exceed
// the row group's records (one value or null per record: the column is flat).
func (c *chunkCheck) countValues(n int64) error {
	if n > c.rows-c.values {
		return fmt.Errorf("the pages hold more values than the row group's %d records", c.rows)
	}
	c.values += n
	return nil
}

// checkDataV1 checks a data page (version 1) once decompressed: its definition levels
// and its values.
func (c *chunkCheck) checkDataV1(h *pageHeader, data []byte) error {
	if data == nil {
		return nil // not decompressed here (see decompress)
	}
	n := int(h.numValues)
	if c.optional {
		switch h.defEncoding {
		case format.RLE:
			if len(data) < 4 {
				return io.ErrUnexpectedEOF
			}
			m := int(binary.LittleEndian.Uint32(data))
			if m > len(data)-4 {
				return errors.New("definition levels longer than their page")
			}
			if err := checkHybrid(data[4:4+m], 1, n+levelSlack); err != nil {
				return fmt.Errorf("definition levels: %w", err)
			}
			data = data[4+m:]
		case format.BitPacked: // one bit per value, no length
			if (n+7)/8 > len(data) {
				return io.ErrUnexpectedEOF
			}
			data = data[(n+7)/8:]
		default:
			return nil // the library refuses other level encodings
		}
	}
	return c.checkValues(h.encoding, data, n)
}

// checkDataV2 checks a data page (version 2): its definition levels, which are never
// compressed, then its values.
func (c *chunkCheck) checkDataV2(h *pageHeader, body []byte) error {
	n := int(h.numValues)
	if h.numRows < 0 || h.numNulls < 0 || h.numNulls > h.numValues || h.defLen < 0 || h.repLen < 0 ||
		int64(h.defLen)+int64(h.repLen) > int64(len(body)) || int64(h.defLen)+int64(h.repLen) > int64(h.uncompressed) {
		return errors.New("a data page (v2) whose counts or level lengths do not fit it")
	}
	if err := c.countValues(int64(h.numRows)); err != nil {
		return err
	}
	if h.numRows != h.numValues {
		return fmt.Errorf("a data page (v2) of %d records and %d values in a flat column", h.numRows, h.numValues)
	}
	levels := body[h.repLen : h.repLen+h.defLen]
	if c.optional && len(levels) > 0 {
		if err := checkHybrid(levels, 1, n+levelSlack); err != nil {
			return fmt.Errorf("definition levels: %w", err)
		}
	}
	values := body[h.repLen+h.defLen:]
	if h.compressedV2 {
		var err error
		if values, err = c.decompress(values, int(h.uncompressed-h.repLen-h.defLen), checkedEncoding(h.encoding)); err != nil {
			return err
		}
	}
	return c.checkValues(h.encoding, values, n-int(h.numNulls))
}

// checkValues checks the encoded values of a data page (n of them at most).
func (c *chunkCheck) checkValues(enc format.Encoding, data []byte, n int) error {
	if data == nil {
		return nil
	}
	var err error
	switch enc {
	case format.PlainDictionary, format.RLEDictionary:
		if len(data) < 1 || data[0] > 32 {
			return errors.New("dictionary indexes without a valid bit width")
		}
		err = checkHybrid(data[1:], int(data[0]), n+levelSlack)
	case format.RLE:
		if c.phys != format.Boolean {
			return fmt.Errorf("RLE-encoded values of type %s", c.phys)
		}
		if len(data) < 4 || int(binary.LittleEndian.Uint32(data)) > len(data)-4 {
			return io.ErrUnexpectedEOF
		}
		err = checkHybrid(data[4:4+int(binary.LittleEndian.Uint32(data))], 1, n+levelSlack)
	case format.DeltaBinaryPacked, format.DeltaLengthByteArray:
		err = deltaTotal(data, n)
	case format.DeltaByteArray:
		err = checkDeltaByteArray(data, n, c.fileSize+pageSlack)
	}
	if err != nil {
		return fmt.Errorf("values (%s): %w", enc, err)
	}
	return nil
}

// checkHybrid checks a run-length / bit-packed hybrid encoding of values of width bits:
// its repeated-value runs may decode to at most limit values. A bit-packed run's values
// are all in b (8 per width bytes), so it cannot make a decoder allocate more than b
// holds: writers pad the last one, some (DuckDB) by more than a group of 8, and it is
// not counted.
func checkHybrid(b []byte, width, limit int) error {
	total := 0
	for i := 0; i < len(b); {
		h, n := binary.Uvarint(b[i:])
		if n <= 0 {
			return errors.New("a malformed run header")
		}
		i += n
		count := h >> 1
		if h&1 == 1 { // bit-packed groups of 8 values
			if count > uint64(len(b)) {
				return io.ErrUnexpectedEOF
			}
			size := int(count) * width
			if size > len(b)-i {
				return io.ErrUnexpectedEOF
			}
			i += size
			continue
		}
		i += (width + 7) / 8 // one value repeated
		if count > uint64(limit-total) {
			return fmt.Errorf("runs of more than %d values", limit)
		}
		total += int(count)
	}
	return nil
}

// deltaTotal reads the header of a DELTA_BINARY_PACKED encoding, which may state at
// most n values.
func deltaTotal(data []byte, n int) error {
	var hdr [3]uint64 // block size, miniblocks per block, total values
	pos := 0
	for k := range hdr {
		v, m := binary.Uvarint(data[pos:])
		if m <= 0 {
			return errors.New("a malformed delta header")
		}
		hdr[k], pos = v, pos+m
	}
	if hdr[2] > uint64(n) {
		return fmt.Errorf("a delta encoding of %d values in a page of %d", hdr[2], n)
	}
	return nil
}

// checkDeltaByteArray checks a DELTA_BYTE_ARRAY encoding of at most n values: each
// value repeats a prefix of the one before, so the values may take far more bytes
// than the page; they may take at most limit.
func checkDeltaByteArray(data []byte, n int, limit int64) error {
	prefixes, rest, err := decodeDelta(data, n)
	if err != nil {
		return fmt.Errorf("prefix lengths: %w", err)
	}
	suffixes, _, err := decodeDelta(rest, n)
	if err != nil {
		return fmt.Errorf("suffix lengths: %w", err)
	}
	var last, total int64
	for i, p := range prefixes {
		var s int64
		if i < len(suffixes) {
			s = suffixes[i]
		}
		if p < 0 || s < 0 || p > last {
			return errors.New("a prefix or suffix length out of range")
		}
		last = p + s
		if total += last; total > limit {
			return fmt.Errorf("values of more than %d bytes", limit)
		}
	}
	return nil
}

// decodeDelta decodes a DELTA_BINARY_PACKED encoding of at most n values and returns
// them and the bytes after it.
func decodeDelta(data []byte, n int) ([]int64, []byte, error) {
	pos := 0
	var hdr [3]uint64 // block size, miniblocks per block, total values
	for k := range hdr {
		v, m := binary.Uvarint(data[pos:])
		if m <= 0 {
			return nil, nil, errors.New("a malformed delta header")
		}
		hdr[k], pos = v, pos+m
	}
	block, minis, total := hdr[0], hdr[1], hdr[2]
	first, m := binary.Varint(data[pos:])
	if m <= 0 {
		return nil, nil, errors.New("a malformed delta header")
	}
	pos += m
	if total > uint64(n) {
		return nil, nil, fmt.Errorf("a delta encoding of %d values in a page of %d", total, n)
	}
	if block == 0 || block%128 != 0 || block > 1<<24 || minis == 0 || block%minis != 0 || (block/minis)%32 != 0 {
		return nil, nil, errors.New("a malformed delta block size")
	}
	if total == 0 {
		return nil, data[pos:], nil
	}
	out := make([]int64, 1, total)
	out[0] = first
	per := int(block / minis)
	for uint64(len(out)) < total {
		minDelta, m := binary.Varint(data[pos:])
		if m <= 0 || int(minis) > len(data)-pos-m {
			return nil, nil, io.ErrUnexpectedEOF
		}
		pos += m
		widths := data[pos : pos+int(minis)]
		pos += int(minis)
		for _, w := range widths {
			if uint64(len(out)) >= total {
				break
			}
			if w > 64 {
				return nil, nil, errors.New("a delta bit width over 64")
			}
			size := per * int(w) / 8
			if size > len(data)-pos {
				return nil, nil, io.ErrUnexpectedEOF
			}
			unpackDeltas(data[pos:pos+size], int(w), per, minDelta, &out, int(total))
			pos += size
		}
	}
	return out, data[pos:], nil
}

// unpackDeltas appends the values of one miniblock (per deltas of w bits, LSB first)
// to out, up to total values.
func unpackDeltas(b []byte, w, per int, minDelta int64, out *[]int64, total int) {
	for k := 0; k < per && len(*out) < total; k++ {
		var d uint64
		for bit := 0; bit < w; bit++ {
			at := k*w + bit
			d |= uint64(b[at/8]>>(at%8)&1) << bit
		}
		prev := (*out)[len(*out)-1]
		*out = append(*out, prev+minDelta+int64(d))
	}
}

// checkedEncoding reports whether values in encoding enc state counts or run lengths
// that checkValues checks.
func checkedEncoding(enc format.Encoding) bool {
	switch enc {
	case format.PlainDictionary, format.RLEDictionary, format.RLE, format.DeltaBinaryPacked,
		format.DeltaLengthByteArray, format.DeltaByteArray:
		return true
	}
	return false
}

// decompress checks that a page's body (or a v2 page's values) decompresses to at
// most size bytes, before the library allocates for it, and returns the decompressed
// bytes when need asks for them (to check its content) or when it had to decompress
// to know: GZIP, whose output size is known only once decoded, and LZ4, which the
// library must never see corrupt. It returns nil when it did not decompress, or
// cannot bound the codec's output before decoding it (ZSTD without a content size,
// BROTLI), or the codec is one the library refuses anyway. An uncompressed body is
// returned as it is.
func (c *chunkCheck) decompress(body []byte, size int, need bool) ([]byte, error) {
	if size < 0 {
		return nil, errors.New("a negative uncompressed size")
	}
	switch c.codec {
	case format.Uncompressed:
		return body, nil
	case format.Snappy:
		n, m := binary.Uvarint(body)
		if m <= 0 || n > uint64(size) {
			return nil, fmt.Errorf("a Snappy page of %d bytes uncompressed stating %d", size, n)
		}
		if !need {
			return nil, nil
		}
		out, err := parquet.Snappy.Decode(c.buffer(int(n)), body)
		if err != nil {
			return nil, fmt.Errorf("decompressing a page: %w", err)
		}
		return out, nil
	case format.Gzip:
		return c.gunzip(body, size)
	case format.Lz4Raw:
		return lz4Block(c.buffer(size), body)
	case format.Zstd:
		fcs, ok, err := zstdContentSize(body)
		if err != nil || !ok {
			return nil, err
		}
		if fcs > uint64(size) {
			return nil, fmt.Errorf("a ZSTD page of %d bytes uncompressed stating %d", size, fcs)
		}
		if !need {
			return nil, nil
		}
		out, err := parquet.Zstd.Decode(c.buffer(int(fcs)), body)
		if err != nil {
			return nil, fmt.Errorf("decompressing a page: %w", err)
		}
		return out, nil
	}
	return nil, nil
}

// buffer returns the scratch buffer with room for n bytes, empty.
func (c *chunkCheck) buffer(n int) []byte {
	if cap(*c.scratch) < n {
		*c.scratch = make([]byte, 0, n)
	}
	return (*c.scratch)[:0]
}

// gunzip decompresses a GZIP body of at most size bytes.
func (c *chunkCheck) gunzip(body []byte, size int) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("decompressing a page: %w", err)
	}
	out := bytes.NewBuffer(c.buffer(size))
	if _, err := io.Copy(out, io.LimitReader(zr, int64(size)+1)); err != nil {
		return nil, fmt.Errorf("decompressing a page: %w", err)
	}
	if out.Len() > size {
		return nil, fmt.Errorf("a GZIP page larger than the %d bytes it states", size)
	}
	return out.Bytes(), nil
}

// lz4Block decompresses an LZ4 block into dst, failing when it would exceed cap(dst).
// (The library's LZ4 decoder doubles its buffer for as long as a block fails to
// decode, so a corrupt block must never reach it.)
func lz4Block(dst, src []byte) ([]byte, error) {
	limit := cap(dst)
	bad := errors.New("a malformed LZ4 block")
	length := func(i *int, n int) (int, error) {
		if n != 15 {
			return n, nil
		}
		for {
			if *i >= len(src) {
				return 0, bad
			}
			c := src[*i]
			*i++
			n += int(c)
			if n > limit+len(src) {
				return 0, bad
			}
			if c != 255 {
				return n, nil
			}
		}
	}
	for i := 0; i < len(src); {
		token := src[i]
		i++
		lit, err := length(&i, int(token>>4))
		if err != nil {
			return nil, err
		}
		if lit > len(src)-i || lit > limit-len(dst) {
			return nil, bad
		}
		dst = append(dst, src[i:i+lit]...)
		i += lit
		if i == len(src) {
			return dst, nil // the last sequence has literals only
		}
		if i+2 > len(src) {
			return nil, bad
		}
		off := int(binary.LittleEndian.Uint16(src[i:]))
		i += 2
		ml, err := length(&i, int(token&15))
		if err != nil {
			return nil, err
		}
		ml += 4
		if off == 0 || off > len(dst) || ml > limit-len(dst) {
			return nil, bad
		}
		for k := 0; k < ml; k++ { // the match may overlap what it copies
			dst = append(dst, dst[len(dst)-off])
		}
	}
	return dst, nil
}

// zstdContentSize reads the content size a ZSTD frame header states (ok false when
// it states none).
func zstdContentSize(b []byte) (uint64, bool, error) {
	if len(b) < 5 || binary.LittleEndian.Uint32(b) != 0xFD2FB528 {
		return 0, false, errors.New("not a ZSTD frame")
	}
	fhd := b[4]
	fcsFlag, single, dictFlag := fhd>>6, fhd>>5&1, fhd&3
	pos := 5
	if single == 0 {
		pos++ // window descriptor
	}
	pos += [4]int{0, 1, 2, 4}[dictFlag]
	size := [4]int{0, 2, 4, 8}[fcsFlag]
	if fcsFlag == 0 && single == 1 {
		size = 1
	}
	if size == 0 {
		return 0, false, nil
	}
	if pos+size > len(b) {
		return 0, false, errors.New("a truncated ZSTD frame header")
	}
	var v uint64
	for k := size - 1; k >= 0; k-- {
		v = v<<8 | uint64(b[pos+k])
	}
	if size == 2 {
		v += 256
	}
	return v, true, nil
}
