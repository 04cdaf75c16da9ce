package table

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"

	"sanitizer/fault"
	"sanitizer/schema"
)

// RecordsAtMost bounds the records of one table file without reading them: a Parquet
// file's count from its footer and an Arrow IPC file's from its record batches'
// headers (both exact); a CSV file's from its size, for records of at least minRecord
// bytes each, their line end included (a header row, when there is one, only makes
// the bound looser). known is false where the format gives no bound so cheaply: an
// Arrow IPC stream, which has no footer. A file that cannot be opened, or whose footer
// is corrupt, is an error as when it is read.
func RecordsAtMost(path string, format schema.Format, minRecord int64) (n int64, known bool, err error) {
	switch format {
	case schema.FormatCSV:
		st, err := os.Stat(path)
		if err != nil {
			return 0, false, fault.BadInput("input: %w", err)
		}
		// n records of at least minRecord bytes, all but the last one's line end
		// given: n·minRecord − 1 ≤ size.
		return (st.Size() + 1) / max(minRecord, 1), true, nil
	case schema.FormatParquet:
		s, err := openParquet(path)
		if err != nil {
			return 0, false, err
		}
		defer s.Close()
		return s.total, true, nil
	case schema.FormatArrow:
		s, err := openArrow(path, false)
		if err != nil {
			return 0, false, err
		}
		defer s.Close()
		n, err := s.batchRows()
		if err != nil {
			return 0, false, s.corrupt("", err)
		}
		return n, true, nil
	case schema.FormatArrows:
		return 0, false, nil
	}
	return 0, false, fault.BadInput("%s: unknown format %q", path, format)
}

// batchRows is the records of an Arrow IPC file: the lengths of its record batches,
// read from the footer's blocks and each batch's message header (not its body).
func (s *arrowSource) batchRows() (int64, error) {
	const tail = 4 + 6 // footer length, magic
	var end [tail]byte
	if _, err := s.file.ReadAt(end[:], s.id.size-tail); err != nil {
		return 0, err
	}
	n := int64(binary.LittleEndian.Uint32(end[:4]))
	if n <= 0 || n > s.id.size-8-tail {
		return 0, fmt.Errorf("a footer of %d bytes in a file of %d", n, s.id.size)
	}
	footer := make([]byte, n)
	if _, err := s.file.ReadAt(footer, s.id.size-tail-n); err != nil {
		return 0, err
	}
	fb := arrowFB(footer)
	root, err := fb.u32(0)
	if err != nil {
		return 0, err
	}
	const block = 24                                // Block: offset (int64), metaDataLength (int32), padding, bodyLength (int64)
	start, blocks, err := fb.vector(root, 3, block) // Footer.recordBatches
	if err != nil {
		return 0, err
	}
	var rows int64
	for i := range blocks {
		at := start + uint32(i*block)
		offset := int64(binary.LittleEndian.Uint64(fb[at:]))
		metaLen := int64(int32(binary.LittleEndian.Uint32(fb[at+8:])))
		if offset < 0 || metaLen < 8 || metaLen > s.id.size || offset > s.id.size-metaLen {
			return 0, fmt.Errorf("record batch %d: a message of %d bytes at %d in a file of %d", i, metaLen, offset, s.id.size)
		}
		meta := make([]byte, metaLen)
		if _, err := s.file.ReadAt(meta, offset); err != nil {
			return 0, err
		}
		n, err := messageRows(meta)
		if err != nil {
			return 0, fmt.Errorf("record batch %d: %w", i, err)
		}
		if rows > math.MaxInt64-n {
			return 0, errors.New("more records than fit in 64 bits")
		}
		rows += n
	}
	return rows, nil
}

// messageRows is the length of the record batch whose encapsulated message (its
// continuation marker, when there is one, its metadata's size and its metadata)
// starts msg.
func messageRows(msg []byte) (int64, error) {
	if binary.LittleEndian.Uint32(msg) == 0xFFFFFFFF { // the continuation marker
		msg = msg[4:]
	}
	size := int64(binary.LittleEndian.Uint32(msg))
	if size > int64(len(msg)-4) {
		return 0, errArrowMetadata
	}
	fb := arrowFB(msg[4 : 4+size])
	root, err := fb.u32(0)
	if err != nil {
		return 0, err
	}
	at, err := fb.field(root, 1) // Message.header_type
	if err != nil {
		return 0, err
	}
	if at == 0 || int(at) >= len(fb) || fb[at] != 3 { // MessageHeader.RecordBatch
		return 0, errors.New("a block that is not a record batch")
	}
	pos, ok, err := fb.ref(root, 2) // Message.header
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, errArrowMetadata
	}
	at, err = fb.field(pos, 0) // RecordBatch.length
	if err != nil || at == 0 {
		return 0, err // absent: 0, the default
	}
	if uint64(at)+8 > uint64(len(fb)) {
		return 0, errArrowMetadata
	}
	n := int64(binary.LittleEndian.Uint64(fb[at:]))
	if n < 0 || n > arrowMaxBatchRows {
		return 0, fmt.Errorf("a record batch of %d records", n)
	}
	return n, nil
}
