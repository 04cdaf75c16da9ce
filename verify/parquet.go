package verify

// The verifier's own Parquet decoder. It reads a release (and the input beside it) with
// github.com/parquet-go/parquet-go, a second Parquet implementation: the tool writes
// and reads Parquet with the Arrow project's library (pqarrow), so a defect of the
// writer or of one reader cannot hide itself from the check. Values come out as the canonical text every stage uses:
//
//	integer    decimal, no leading zeros or '+'; unsigned types as unsigned
//	float      shortest text that reads back as the same float32 (FLOAT, FLOAT16)
//	           or float64 (DOUBLE): "0.1", "1e+21", "NaN", "+Inf"
//	boolean    "true" / "false"
//	date       YYYY-MM-DD
//	timestamp  RFC 3339 in UTC with nanoseconds if any (INT64 TIMESTAMP in any unit,
//	           INT96 as nanoseconds)
//	string     the value's bytes (BYTE_ARRAY annotated STRING or UTF8)
//
// A null reads as "" (ParquetRecords.Nulls tells it from an empty string). Only flat
// columns (required or optional, not nested, not repeated) of those types can be read;
// others are listed with what they are and may only be left unread.
//
// A file is a user's: before the library allocates for a length the file states, the
// decoder checks it (the footer, every column chunk, every page header, the run
// lengths inside a page, pqfooter.go and pqpages.go), and a panic inside the library is
// turned into an error naming the file.

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"

	"sanitizer/fault"
	"sanitizer/schema"
)

// ParquetFile is a Parquet file opened by the verifier's decoder.
type ParquetFile struct {
	path    string
	f       io.ReaderAt
	closer  io.Closer
	size    int64 // of the file at open
	dataEnd int64 // where the footer starts
	pf      *parquet.File
	cols    []pqColumn
	// readBlock is how much of a column chunk is read from the file at a time, at
	// least (0: pageBlock; the tests make it small).
	readBlock int
	// use, when not nil, is told of every column chunk's dictionary as its records are
	// read (RequireUsedDictionaries).
	use *DictionaryUse
}

// RequireUsedDictionaries makes the reading of the records tell u, column chunk by
// column chunk, which values of the chunk's dictionary its records used and which they
// did not, so that u.Check can hold the release to carrying only values its records
// hold. An input is not held to this: its dictionaries are the writer's business.
func (p *ParquetFile) RequireUsedDictionaries(u *DictionaryUse) { p.use = u }

// ParquetColumn describes a top-level column of a Parquet file: its name, the type
// its values are read as, and, for a column the decoder cannot read, what it is.
type ParquetColumn struct {
	Name        string
	Type        schema.Type // "" when unsupported, or for decimals and binary (text of no configured type)
	Unsupported string      // the column's type when it cannot be read
}

// pqColumn is a top-level column and how it is read.
type pqColumn struct {
	ParquetColumn
	leaf     int    // its leaf column (chunk) index, -1 for a group
	kind     pqKind // how its values turn into text
	optional bool
	phys     format.Type
	width    int // FIXED_LEN_BYTE_ARRAY: bytes per value
	scale    int // decimals: digits after the point
}

// pqKind is how the values of a column are turned into text.
type pqKind uint8

const (
	pqNone pqKind = iota
	pqInt8
	pqInt16
	pqInt32
	pqUint8
	pqUint16
	pqUint32
	pqInt64
	pqUint64
	pqDate
	pqTimeMilli
	pqTimeMicro
	pqTimeNano
	pqInt96
	pqFloat16
	pqFloat
	pqDouble
	pqBool
	pqString
	pqBinary       // BYTE_ARRAY without annotation: the bytes as they are
	pqFixed        // FIXED_LEN_BYTE_ARRAY without annotation: the bytes as they are
	pqDecimal32    // INT32 DECIMAL
	pqDecimal64    // INT64 DECIMAL
	pqDecimalBytes // BYTE_ARRAY DECIMAL: big-endian two's complement
	pqDecimalFixed // FIXED_LEN_BYTE_ARRAY DECIMAL: big-endian two's complement
)

// OpenParquet opens a Parquet file and reads its footer and schema. A file that is
// not a readable Parquet file is an error matching fault.ErrBadInput that names it.
func OpenParquet(path string) (*ParquetFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fault.BadInput("%w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fault.BadInput("%s: %w", path, err)
	}
	return openParquet(path, f, st.Size(), f)
}

// openParquet is OpenParquet for the file named path, of the given size, read through
// r and closed by closer.
func openParquet(path string, r io.ReaderAt, size int64, closer io.Closer) (pf *ParquetFile, err error) {
	p := &ParquetFile{path: path, f: r, closer: closer, size: size}
	defer func() {
		if r := recover(); r != nil {
			err = readPanic(r, parquetLibrary, func(cause error) error { return p.corrupt("", -1, cause) })
		}
		if err != nil {
			closer.Close()
		}
	}()
	footer, err := checkFooter(r, p.size)
	if err != nil {
		return nil, p.corrupt("", -1, err)
	}
	p.dataEnd = p.size - 8 - footer
	p.pf, err = parquet.OpenFile(r, p.size,
		parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true),
		parquet.FileReadMode(parquet.ReadModeSync), parquet.OptimisticRead(false))
	if err != nil {
		return nil, p.corrupt("", -1, err)
	}
	if err := p.readSchema(); err != nil {
		return nil, err
	}
	if err := p.checkChunks(); err != nil {
		return nil, err
	}
	return p, nil
}

// corrupt is the error for a file that cannot be read: it names the file, and the
// column and row group when known (col "" and group -1 when not). A *Violation found
// while reading (a dictionary value no record holds) stays one, named so.
func (p *ParquetFile) corrupt(col string, group int, err error) error {
	where := p.path
	if col != "" {
		where += fmt.Sprintf(": column %q", col)
	}
	if group >= 0 {
		where += fmt.Sprintf(", row group %d", group)
	}
	var v *Violation
	if errors.As(err, &v) {
		return &Violation{Msg: where + ": " + v.Msg}
	}
	return fault.BadInput("%s: not a readable Parquet file (truncated or corrupt): %w", where, err)
}

// Columns returns the file's top-level columns, in file order.
func (p *ParquetFile) Columns() []ParquetColumn {
	out := make([]ParquetColumn, len(p.cols))
	for i, c := range p.cols {
		out[i] = c.ParquetColumn
	}
	return out
}

// NumRows is the number of records the footer states.
func (p *ParquetFile) NumRows() int64 { return p.pf.NumRows() }

// Metadata returns the file's key-value metadata.
func (p *ParquetFile) Metadata() map[string]string {
	md := map[string]string{}
	for _, kv := range p.pf.Metadata().KeyValueMetadata {
		md[kv.Key] = kv.Value
	}
	return md
}

// Close closes the file.
func (p *ParquetFile) Close() error { return p.closer.Close() }

// readSchema finds the top-level columns: their names (which must differ), their leaf
// columns and how their values are read.
func (p *ParquetFile) readSchema() error {
	elems := p.pf.Metadata().Schema
	top := p.pf.Root().Columns()
	seen := map[string]int{}
	at := 1 // the schema element of the next top-level column
	for i, c := range top {
		if at >= len(elems) || elems[at].Name != c.Name() {
			return p.corrupt("", -1, errors.New("the schema does not match its columns"))
		}
		e := &elems[at]
		if j, dup := seen[e.Name]; dup {
			return fault.BadInput("%s: columns %d and %d have the same name %q", p.path, j+1, i+1, e.Name)
		}
		seen[e.Name] = i
		col := pqColumn{ParquetColumn: ParquetColumn{Name: e.Name}, leaf: -1}
		if c.Leaf() {
			col.leaf = c.Index()
			col.optional = c.Optional()
			col.phys = e.Type.V
			col.width = int(e.TypeLength.V)
			col.kind = leafKind(e)
			col.scale = decimalScale(e)
			// The library decodes by its own reading of the type: it must be the
			// physical type the column is stored as.
			if col.kind != pqNone && (c.Repeated() || c.MaxRepetitionLevel() != 0 || c.MaxDefinitionLevel() > 1 ||
				format.Type(c.Type().Kind()) != col.phys) {
				col.kind = pqNone
			}
		}
		col.Type = kindType[col.kind]
		if col.kind == pqNone {
			col.Unsupported = describe(e, c)
		}
		p.cols = append(p.cols, col)
		at = skipElement(elems, at)
	}
	return nil
}

// skipElement returns the index of the schema element after element i and its
// descendants.
func skipElement(elems []format.SchemaElement, i int) int {
	open := 1
	for ; open > 0 && i < len(elems); i++ {
		open += int(max(elems[i].NumChildren.V, 0)) - 1
	}
	return i
}

// describe names the type of a column the decoder does not read.
func describe(e *format.SchemaElement, c *parquet.Column) string {
	switch {
	case !c.Leaf():
		return "group"
	case c.Repeated():
		return "repeated " + e.Type.V.String()
	}
	if s := e.LogicalType.String(); s != "" {
		return e.Type.V.String() + " " + s
	}
	if c := e.ConvertedType; c.Valid {
		if int(c.V) >= 0 && int(c.V) < len(convertedNames) {
			return e.Type.V.String() + " " + convertedNames[c.V]
		}
		return fmt.Sprintf("%s (converted type %d)", e.Type.V, c.V)
	}
	return e.Type.V.String()
}

// convertedNames names the converted types, by number.
var convertedNames = []string{"UTF8", "MAP", "MAP_KEY_VALUE", "LIST", "ENUM", "DECIMAL", "DATE", "TIME_MILLIS",
	"TIME_MICROS", "TIMESTAMP_MILLIS", "TIMESTAMP_MICROS", "UINT_8", "UINT_16", "UINT_32", "UINT_64", "INT_8",
	"INT_16", "INT_32", "INT_64", "JSON", "BSON", "INTERVAL"}

// kindType is the type of the values of each kind.
var kindType = [...]schema.Type{
	pqInt8: schema.Integer, pqInt16: schema.Integer, pqInt32: schema.Integer,
	pqUint8: schema.Integer, pqUint16: schema.Integer, pqUint32: schema.Integer,
	pqInt64: schema.Integer, pqUint64: schema.Integer,
	pqDate:      schema.Date,
	pqTimeMilli: schema.Timestamp, pqTimeMicro: schema.Timestamp, pqTimeNano: schema.Timestamp, pqInt96: schema.Timestamp,
	pqFloat16: schema.Float, pqFloat: schema.Float, pqDouble: schema.Float,
	pqBool:   schema.Boolean,
	pqString: schema.String,
	pqNone:   "",
	pqBinary: "", pqFixed: "", pqDecimal32: "", pqDecimal64: "", pqDecimalBytes: "", pqDecimalFixed: "",
}

// decimalScale is the scale of a DECIMAL column (0 for any other).
func decimalScale(e *format.SchemaElement) int {
	if d, ok := e.LogicalType.Value.(*format.DecimalType); ok {
		return int(d.Scale)
	}
	if e.ConvertedType.Valid && e.ConvertedType.V == deprecated.Decimal && e.Scale.Valid {
		return int(e.Scale.V)
	}
	return 0
}

// isDecimal reports whether a schema element is annotated DECIMAL (with a scale that
// its precision can hold).
func isDecimal(e *format.SchemaElement) bool {
	if d, ok := e.LogicalType.Value.(*format.DecimalType); ok {
		return d.Scale >= 0 && d.Precision > 0 && d.Scale <= d.Precision
	}
	return e.LogicalType.Value == nil && e.ConvertedType.Valid && e.ConvertedType.V == deprecated.Decimal &&
		e.Scale.Valid && e.Precision.Valid && e.Scale.V >= 0 && e.Precision.V > 0 && e.Scale.V <= e.Precision.V
}

// leafKind is how the values of a leaf column with schema element e are read (pqNone:
// not at all). The logical type decides when there is one, else the converted type.
func leafKind(e *format.SchemaElement) pqKind {
	if !e.Type.Valid {
		return pqNone
	}
	switch e.Type.V {
	case format.Boolean:
		return plainKind(e, pqBool)
	case format.Float:
		return plainKind(e, pqFloat)
	case format.Double:
		return plainKind(e, pqDouble)
	case format.Int96:
		return plainKind(e, pqInt96)
	case format.Int32:
		return int32Kind(e)
	case format.Int64:
		return int64Kind(e)
	case format.ByteArray:
		if _, ok := e.LogicalType.Value.(*format.StringType); ok {
			return pqString
		}
		if e.LogicalType.Value == nil && e.ConvertedType.Valid && e.ConvertedType.V == deprecated.UTF8 {
			return pqString
		}
		if isDecimal(e) {
			return pqDecimalBytes
		}
		return plainKind(e, pqBinary)
	case format.FixedLenByteArray:
		if _, ok := e.LogicalType.Value.(*format.Float16Type); ok && e.TypeLength.V == 2 {
			return pqFloat16
		}
		if !e.TypeLength.Valid || e.TypeLength.V <= 0 {
			return pqNone
		}
		if isDecimal(e) {
			return pqDecimalFixed
		}
		return plainKind(e, pqFixed)
	}
	return pqNone
}

// plainKind is k for a column of a physical type that takes no annotation.
func plainKind(e *format.SchemaElement, k pqKind) pqKind {
	if e.LogicalType.Value != nil || e.ConvertedType.Valid {
		return pqNone
	}
	return k
}

// int32Kind reads the annotation of an INT32 column.
func int32Kind(e *format.SchemaElement) pqKind {
	if isDecimal(e) {
		return pqDecimal32
	}
	switch lt := e.LogicalType.Value.(type) {
	case nil:
	case *format.IntType:
		return intKind(lt.BitWidth, lt.IsSigned, 32)
	case *format.DateType:
		return pqDate
	default:
		return pqNone
	}
	if !e.ConvertedType.Valid {
		return pqInt32
	}
	switch e.ConvertedType.V {
	case deprecated.Int8:
		return pqInt8
	case deprecated.Int16:
		return pqInt16
	case deprecated.Int32:
		return pqInt32
	case deprecated.Uint8:
		return pqUint8
	case deprecated.Uint16:
		return pqUint16
	case deprecated.Uint32:
		return pqUint32
	case deprecated.Date:
		return pqDate
	}
	return pqNone
}

// int64Kind reads the annotation of an INT64 column.
func int64Kind(e *format.SchemaElement) pqKind {
	if isDecimal(e) {
		return pqDecimal64
	}
	switch lt := e.LogicalType.Value.(type) {
	case nil:
	case *format.IntType:
		return intKind(lt.BitWidth, lt.IsSigned, 64)
	case *format.TimestampType:
		switch lt.Unit.Value.(type) {
		case *format.MilliSeconds:
			return pqTimeMilli
		case *format.MicroSeconds:
			return pqTimeMicro
		case *format.NanoSeconds:
			return pqTimeNano
		}
		return pqNone
	default:
		return pqNone
	}
	if !e.ConvertedType.Valid {
		return pqInt64
	}
	switch e.ConvertedType.V {
	case deprecated.Int64:
		return pqInt64
	case deprecated.Uint64:
		return pqUint64
	case deprecated.TimestampMillis:
		return pqTimeMilli
	case deprecated.TimestampMicros:
		return pqTimeMicro
	}
	return pqNone
}

// intKind is the kind of INT(bits, signed) stored as a physical integer of phys bits:
// the widths up to 32 annotate INT32, 64 annotates INT64.
func intKind(bits int8, signed bool, phys int) pqKind {
	if (bits == 64) != (phys == 64) {
		return pqNone
	}
	kinds := map[int8][2]pqKind{8: {pqUint8, pqInt8}, 16: {pqUint16, pqInt16}, 32: {pqUint32, pqInt32}, 64: {pqUint64, pqInt64}}
	k, ok := kinds[bits]
	if !ok {
		return pqNone
	}
	if signed {
		return k[1]
	}
	return k[0]
}

// checkChunks checks the row groups and their column chunks against the file before
// any page is read: the row counts add up, every chunk lies between the magic number
// and the footer, is in this file, not encrypted, of its column's physical type, and
// compressed with the codec of the column's first chunk (the library decodes every
// chunk of a column with that one).
func (p *ParquetFile) checkChunks() error {
	md := p.pf.Metadata()
	var sum int64
	for g, rg := range md.RowGroups {
		if rg.NumRows < 0 || rg.NumRows > md.NumRows-sum {
			return p.corrupt("", g, errors.New("the row groups do not add up to the file's record count"))
		}
		sum += rg.NumRows
		for _, c := range p.cols {
			if c.kind == pqNone {
				continue
			}
			if c.leaf >= len(rg.Columns) {
				return p.corrupt(c.Name, g, errors.New("no column chunk"))
			}
			if err := p.checkChunk(&rg.Columns[c.leaf], &md.RowGroups[0].Columns[c.leaf], c); err != nil {
				return p.corrupt(c.Name, g, err)
			}
		}
	}
	if md.NumRows < 0 || sum != md.NumRows {
		return p.corrupt("", -1, errors.New("the row groups do not add up to the file's record count"))
	}
	return nil
}

// checkChunk checks one column chunk of column c (first: the column's chunk in the
// first row group).
func (p *ParquetFile) checkChunk(cc, first *format.ColumnChunk, c pqColumn) error {
	m := &cc.MetaData
	switch {
	case cc.FilePath != "":
		return errors.New("a column chunk in another file")
	case cc.CryptoMetadata.Value != nil || len(cc.EncryptedColumnMetadata) > 0:
		return errors.New("encrypted column chunks are not supported")
	case m.Type != c.phys:
		return fmt.Errorf("a column chunk of type %s in a column of type %s", m.Type, c.phys)
	case m.Codec != first.MetaData.Codec:
		return errors.New("column chunks compressed with different codecs")
	case m.NumValues < 0:
		return errors.New("a negative value count")
	}
	start, size := chunkStart(m), m.TotalCompressedSize
	if start < 4 || size < 0 || size > p.dataEnd || start > p.dataEnd-size {
		return errors.New("the column chunk lies outside the file's data")
	}
	return nil
}

// chunkStart is where the library starts reading a column chunk: at its dictionary
// page when it records one.
func chunkStart(m *format.ColumnMetaData) int64 {
	if m.DictionaryPageOffset != 0 {
		return m.DictionaryPageOffset
	}
	return m.DataPageOffset
}
