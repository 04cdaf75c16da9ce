package verify

// A reader of the Thrift compact protocol, for the checks the verifier's Parquet
// decoder makes before it lets the library decode a footer or a page header: every
// length, list size and nesting depth is held against the bytes that are left, so
// that a corrupt file cannot make the library allocate for more than the file holds.

import (
	"errors"
	"fmt"
)

// Thrift compact protocol type codes.
const (
	thriftStop   = 0
	thriftTrue   = 1
	thriftFalse  = 2
	thriftByte   = 3
	thriftI16    = 4
	thriftI32    = 5
	thriftI64    = 6
	thriftDouble = 7
	thriftBinary = 8
	thriftList   = 9
	thriftSet    = 10
	thriftMap    = 11
	thriftStruct = 12
)

// maxThriftDepth bounds the nesting of structs, lists and maps.
const maxThriftDepth = 64

var errThriftTruncated = errors.New("metadata cut short")

// thriftReader reads Thrift compact protocol values from b.
type thriftReader struct {
	b     []byte
	pos   int
	depth int
}

func (r *thriftReader) left() int { return len(r.b) - r.pos }

func (r *thriftReader) byte() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, errThriftTruncated
	}
	c := r.b[r.pos]
	r.pos++
	return c, nil
}

// uvarint reads an unsigned LEB128 varint of at most 64 bits.
func (r *thriftReader) uvarint() (uint64, error) {
	var x uint64
	for shift := uint(0); shift < 64; shift += 7 {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		x |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return x, nil
		}
	}
	return 0, errors.New("malformed metadata: varint too long")
}

// varint reads a zigzag-encoded signed varint.
func (r *thriftReader) varint() (int64, error) {
	u, err := r.uvarint()
	return int64(u>>1) ^ -int64(u&1), err
}

// i32 reads a 32-bit integer (zigzag varint), refusing one out of range.
func (r *thriftReader) i32() (int32, error) {
	v, err := r.varint()
	if err != nil {
		return 0, err
	}
	if v < -1<<31 || v >= 1<<31 {
		return 0, errors.New("malformed metadata: integer out of range")
	}
	return int32(v), nil
}

// length reads a length or count that the bytes left must be able to hold, at
// perItem bytes at least per item.
func (r *thriftReader) length(perItem int) (int, error) {
	u, err := r.uvarint()
	if err != nil {
		return 0, err
	}
	if u > uint64(r.left()/perItem) {
		return 0, fmt.Errorf("malformed metadata: a length of %d where %d bytes are left", u, r.left())
	}
	return int(u), nil
}

// field reads a field header after the field numbered last; typ is thriftStop at the
// end of the struct.
func (r *thriftReader) field(last int16) (id int16, typ byte, err error) {
	c, err := r.byte()
	if err != nil || c == thriftStop {
		return 0, thriftStop, err
	}
	typ = c & 0x0f
	if delta := c >> 4; delta != 0 {
		return last + int16(delta), typ, nil
	}
	v, err := r.varint()
	if err != nil {
		return 0, 0, err
	}
	if v < -1<<15 || v >= 1<<15 {
		return 0, 0, errors.New("malformed metadata: field id out of range")
	}
	return int16(v), typ, nil
}

// structFields reads a struct's fields, handing each to visit, which reads the value
// itself and returns true, or returns false to have it skipped.
func (r *thriftReader) structFields(visit func(id int16, typ byte) (bool, error)) error {
	if r.depth++; r.depth > maxThriftDepth {
		return errors.New("malformed metadata: nested too deep")
	}
	defer func() { r.depth-- }()
	var last int16
	for {
		id, typ, err := r.field(last)
		if err != nil {
			return err
		}
		if typ == thriftStop {
			return nil
		}
		last = id
		done := false
		if visit != nil {
			if done, err = visit(id, typ); err != nil {
				return err
			}
		}
		if !done {
			if err := r.skip(typ); err != nil {
				return err
			}
		}
	}
}

// list reads a list (or set) header: the elements' type and their number.
func (r *thriftReader) list() (elem byte, n int, err error) {
	c, err := r.byte()
	if err != nil {
		return 0, 0, err
	}
	elem, n = c&0x0f, int(c>>4)
	if n == 15 {
		if n, err = r.length(1); err != nil {
			return 0, 0, err
		}
	} else if n > r.left() {
		return 0, 0, errThriftTruncated
	}
	return elem, n, nil
}

// skip reads past a value of type typ, checking it.
func (r *thriftReader) skip(typ byte) error {
	switch typ {
	case thriftTrue, thriftFalse:
		return nil // a field's value is in its header
	case thriftByte:
		_, err := r.byte()
		return err
	case thriftI16, thriftI32, thriftI64:
		_, err := r.uvarint()
		return err
	case thriftDouble:
		if r.left() < 8 {
			return errThriftTruncated
		}
		r.pos += 8
		return nil
	case thriftBinary:
		n, err := r.length(1)
		r.pos += n
		return err
	case thriftList, thriftSet:
		elem, n, err := r.list()
		if err != nil {
			return err
		}
		return r.skipElements(elem, n)
	case thriftMap:
		return r.skipMap()
	case thriftStruct:
		return r.structFields(nil)
	}
	return fmt.Errorf("malformed metadata: unknown type %d", typ)
}

// skipElements reads past n list elements of type elem (a boolean element is one
// byte).
func (r *thriftReader) skipElements(elem byte, n int) error {
	if r.depth++; r.depth > maxThriftDepth {
		return errors.New("malformed metadata: nested too deep")
	}
	defer func() { r.depth-- }()
	for range n {
		var err error
		if elem == thriftTrue || elem == thriftFalse {
			_, err = r.byte()
		} else {
			err = r.skip(elem)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *thriftReader) skipMap() error {
	n, err := r.length(2)
	if err != nil || n == 0 {
		return err
	}
	kv, err := r.byte()
	if err != nil {
		return err
	}
	for range n {
		if err := r.skipElements(kv>>4, 1); err != nil {
			return err
		}
		if err := r.skipElements(kv&0x0f, 1); err != nil {
			return err
		}
	}
	return nil
}
