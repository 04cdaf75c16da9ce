package verify

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// maxSchemaDepth bounds the nesting of a Parquet schema (the library's bookkeeping
// grows with the number of columns times their depth).
const maxSchemaDepth = 64

// parquetMagic starts and ends a Parquet file.
const parquetMagic = "PAR1"

// checkFooter reads the magic numbers and the footer of a Parquet file of the given
// size and checks them before the library decodes the footer: the footer lies within
// the file, every length and list size in it fits in the bytes left, structs nest at
// most maxThriftDepth deep and the schema at most maxSchemaDepth. It returns the
// footer's length.
func checkFooter(r io.ReaderAt, size int64) (int64, error) {
	if size < 12 {
		return 0, errors.New("too short for a Parquet file")
	}
	var head, tail [8]byte
	if _, err := r.ReadAt(head[:4], 0); err != nil {
		return 0, err
	}
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return 0, err
	}
	if string(head[:4]) == "PARE" || string(tail[4:]) == "PARE" {
		return 0, errors.New("encrypted Parquet files are not supported")
	}
	if string(head[:4]) != parquetMagic || string(tail[4:]) != parquetMagic {
		return 0, errors.New("no Parquet magic number at its start and end")
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n == 0 || n > size-12 {
		return 0, fmt.Errorf("a footer of %d bytes in a file of %d", n, size)
	}
	footer := make([]byte, n)
	if _, err := r.ReadAt(footer, size-8-n); err != nil {
		return 0, err
	}
	if err := checkFileMetaData(footer); err != nil {
		return 0, err
	}
	return n, nil
}

// checkFileMetaData walks a FileMetaData struct: fields 2 (the schema) and 8 (an
// encryption algorithm) are looked at, the others only checked.
func checkFileMetaData(b []byte) error {
	r := &thriftReader{b: b}
	var children []int32 // per schema element: its number of children
	return r.structFields(func(id int16, typ byte) (bool, error) {
		switch {
		case id == 2 && typ == thriftList:
			elem, n, err := r.list()
			if err != nil {
				return true, err
			}
			if elem != thriftStruct {
				return true, errors.New("malformed metadata: a schema that is not a list of elements")
			}
			for range n {
				c, err := schemaElementChildren(r)
				if err != nil {
					return true, err
				}
				children = append(children, c)
			}
			return true, checkSchemaDepth(children)
		case id == 8:
			return true, errors.New("encrypted Parquet files are not supported")
		}
		return false, nil
	})
}

// schemaElementChildren reads a SchemaElement and returns its num_children (field 5).
func schemaElementChildren(r *thriftReader) (int32, error) {
	var n int32
	err := r.structFields(func(id int16, typ byte) (bool, error) {
		if id != 5 || typ != thriftI32 {
			return false, nil
		}
		v, err := r.i32()
		n = v
		return true, err
	})
	return n, err
}

// checkSchemaDepth checks the depth of the schema tree that the elements' child counts
// (in depth-first order) describe.
func checkSchemaDepth(children []int32) error {
	var open []int32 // children still to come at each level
	for _, n := range children {
		if n > 0 {
			if len(open) >= maxSchemaDepth {
				return fmt.Errorf("a schema nested more than %d deep", maxSchemaDepth)
			}
			open = append(open, n)
			continue
		}
		for len(open) > 0 {
			open[len(open)-1]--
			if open[len(open)-1] > 0 {
				break
			}
			open = open[:len(open)-1]
		}
	}
	return nil
}
