package verify

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"

	"sanitizer/fault"
)

// ParquetRecords reads the projected columns of a ParquetFile record by record, as
// text (a Reader: Read, Nulls, Close). The records are decoded ahead on a goroutine of
// their own, which Close stops.
type ParquetRecords struct{ batchReader }

// Records starts reading the columns cols (indexes into Columns(), in the order the
// records give them) from the first record. It fails, naming the column, when one of
// them cannot be read. Reading stops when ctx is cancelled; Read then returns its
// error.
func (p *ParquetFile) Records(ctx context.Context, cols []int) (*ParquetRecords, error) {
	for _, c := range cols {
		if c < 0 || c >= len(p.cols) {
			return nil, fmt.Errorf("%s: no column %d", p.path, c)
		}
		if col := p.cols[c]; col.kind == pqNone {
			return nil, fault.BadInput("%s: column %q: values of type %s cannot be read", p.path, col.Name, col.Unsupported)
		}
	}
	r := &ParquetRecords{}
	r.start(ctx, len(cols), func(ctx context.Context, out chan<- *textBatch, free chan *textBatch) error {
		return p.produce(ctx, cols, out, free)
	})
	return r, nil
}

// produce decodes the records of columns cols, row group by row group, into batches
// sent to out (taken from free when there are). A panic of the library is an error
// naming the file, the column and the row group.
func (p *ParquetFile) produce(ctx context.Context, cols []int, out chan<- *textBatch, free chan *textBatch) (err error) {
	col, group := "", -1
	defer func() {
		if r := recover(); r != nil {
			err = readPanic(r, parquetLibrary, func(cause error) error { return p.corrupt(col, group, cause) })
		}
	}()
	width := len(cols)
	cursors := make([]*pqCursor, width)
	scratch := new([]byte) // the cursors take turns on this goroutine
	for j, c := range cols {
		cursors[j] = newCursor(p, &p.cols[c], scratch)
	}
	defer func() {
		for _, c := range cursors {
			c.close()
		}
	}()
	md := p.pf.Metadata()
	for g, rg := range p.pf.RowGroups() {
		group = g
		rows := md.RowGroups[g].NumRows
		chunks := rg.ColumnChunks()
		for _, c := range cursors {
			col = c.col.Name
			if err := c.start(g, chunks[c.col.leaf], rows); err != nil {
				return p.corrupt(col, g, err)
			}
		}
		col = ""
		for done := int64(0); done < rows; {
			if err := ctx.Err(); err != nil {
				return err
			}
			n := int(min(textBatchRecords, rows-done))
			b := takeBatch(free, n, width)
			for j, c := range cursors {
				col = c.col.Name
				if err := c.fill(b, j, width, n); err != nil {
					return p.corrupt(col, g, err)
				}
			}
			col = ""
			select {
			case out <- b:
			case <-ctx.Done():
				return ctx.Err()
			}
			done += int64(n)
		}
		for _, c := range cursors {
			if err := c.finish(); err != nil {
				return p.corrupt(c.col.Name, g, err)
			}
		}
	}
	return nil
}

// pqCursor reads one column, row group by row group, page by page.
type pqCursor struct {
	p       *ParquetFile
	col     *pqColumn
	stream  pageStream // the current column chunk's pages, checked as the library reads them
	scratch *[]byte    // for the page checks, shared by the file's cursors
	pages   parquet.Pages
	page    parquet.Page
	vals    pqValues // the current page's values (not an indexed page)
	defs    []byte   // its definition levels (nil: a required column; not an indexed page)
	rows    int      // its records
	next    int      // its next record
	v       int      // its next value
	indexed bool     // its values are indexes into dict, in one of codes8, codes16, codes32
	// An indexed page's dictionary index per record (len(dtext) for a null), in the
	// narrowest of them the dictionary allows: the page itself, whose indexes take 4
	// bytes and its levels one more, is let go as soon as it is read (a page of the
	// release's writer holds a whole row group's million records).
	codes8  []uint8
	codes16 []uint16
	codes32 []uint32
	left    int64 // the chunk's records in the pages not read yet
	drained bool  // the chunk's pages are read to their end and let go
	dict    parquet.Dictionary
	dvals   pqValues // the dictionary's values
	dtext   []string // their text, once made
	dset    []bool
	// dindex and dplain, once a plain page of a chunk with a dictionary is read (a
	// writer's fall-back, see plainUses): each entry's number by its text, and the
	// entries a plain value is
	dindex map[string]int32
	dplain []bool
	text   textCaches
}

func newCursor(p *ParquetFile, col *pqColumn, scratch *[]byte) *pqCursor {
	return &pqCursor{p: p, col: col, scratch: scratch}
}

// start moves to the column's chunk cc of row group g (rows records) and opens its
// pages, which are checked as the library reads them (pageStream).
func (c *pqCursor) start(g int, cc parquet.ColumnChunk, rows int64) error {
	c.close()
	fc, ok := cc.(*parquet.FileColumnChunk)
	if !ok {
		return errors.New("not a column chunk of a file")
	}
	m := &c.p.pf.Metadata().RowGroups[g].Columns[c.col.leaf].MetaData
	start, size := chunkStart(m), m.TotalCompressedSize // checked at open
	c.stream.reset(c.p.f, start, size, c.p.readBlock, chunkCheck{rows: rows, fileSize: c.p.size, codec: m.Codec,
		optional: c.col.optional, scratch: c.scratch, kind: c.col.kind, phys: c.col.phys})
	c.pages = fc.PagesFrom(&c.stream)
	c.dict, c.rows, c.next, c.left, c.drained = nil, 0, 0, rows, false
	c.dindex, c.dplain = nil, nil
	return nil
}

// close lets go of the current chunk's pages, and of the stream's buffer when a large
// page grew it (the next chunk's pages may be small; when they are not, the buffer is
// made again).
func (c *pqCursor) close() {
	c.stream.release()
	if c.page != nil {
		parquet.Release(c.page)
		c.page = nil
	}
	if c.pages != nil {
		c.pages.Close()
		c.pages = nil
	}
}

// fill reads the next n records of the column into field j of b's records.
func (c *pqCursor) fill(b *textBatch, j, width, n int) error {
	for k := 0; k < n; {
		if c.next == c.rows {
			if err := c.nextPage(); err != nil {
				return err
			}
			continue
		}
		m := min(n-k, c.rows-c.next)
		switch {
		case !c.indexed:
			for i := range m {
				at := (k+i)*width + j
				if c.defs != nil && c.defs[c.next+i] == 0 {
					b.setNull(at)
					continue
				}
				b.fields[at] = c.text.format(&c.vals, c.v)
				c.v++
				if c.dict != nil && c.p.use != nil {
					c.plainUses(b.fields[at])
				}
			}
		case c.codes8 != nil:
			fillIndexed(c, c.codes8[c.next:c.next+m], b, k, j, width)
		case c.codes16 != nil:
			fillIndexed(c, c.codes16[c.next:c.next+m], b, k, j, width)
		default:
			fillIndexed(c, c.codes32[c.next:c.next+m], b, k, j, width)
		}
		k += m
		c.next += m
	}
	return nil
}

// fillIndexed puts the text of the records whose dictionary indexes are codes into
// field j of b's records from record k on.
func fillIndexed[T uint8 | uint16 | uint32](c *pqCursor, codes []T, b *textBatch, k, j, width int) {
	null := T(len(c.dtext))
	for i, x := range codes {
		at := (k+i)*width + j
		if x == null {
			b.setNull(at)
			continue
		}
		if !c.dset[x] {
			c.dtext[x], c.dset[x] = c.text.format(&c.dvals, int(x)), true
		}
		b.fields[at] = c.dtext[x]
	}
}

// finish checks, at the end of a row group, that the chunk holds no more values, and
// that its records hold every value of its dictionary (dictionaryUsed).
func (c *pqCursor) finish() error {
	if c.next != c.rows {
		return errors.New("more values than the row group's records")
	}
	if err := c.drain(); err != nil {
		return err
	}
	return c.dictionaryUsed()
}

// plainUses marks the entry of the chunk's dictionary that a value of a plain page is
// (if one is), as used: a writer whose dictionary outgrew its page falls back to plain
// pages mid-chunk, and writes the values it had buffered, whose entries the dictionary
// page holds, as plain values.
func (c *pqCursor) plainUses(v string) {
	if c.dindex == nil {
		c.dindex = make(map[string]int32, len(c.dset))
		for i := range c.dset {
			c.dindex[c.entryText(i)] = int32(i)
		}
		c.dplain = make([]bool, len(c.dset))
	}
	if i, ok := c.dindex[v]; ok {
		c.dplain[i] = true
	}
}

// entryText is the text of dictionary entry i.
func (c *pqCursor) entryText(i int) string {
	if c.dset[i] {
		return c.dtext[i]
	}
	return c.text.format(&c.dvals, i)
}

// dictionaryUsed tells the file's DictionaryUse, when it has one, which values of the
// chunk's dictionary its records used and which they did not (fillIndexed marks each
// as it makes its text): the entries a dictionary page states, whether or not the
// library decoded any page through it (a dictionary no page refers to is one whose
// values were never read).
func (c *pqCursor) dictionaryUsed() error {
	entries := c.stream.check.dictValues
	u := c.p.use
	if entries == 0 || u == nil {
		return nil
	}
	if c.dict == nil {
		u.unread(c.col.Name, int(entries))
		return nil
	}
	if int64(len(c.dset)) != entries {
		return fmt.Errorf("a dictionary of %d values whose page states %d", len(c.dset), entries)
	}
	value := func(i int) (string, bool, error) { return c.entryText(i), true, nil }
	used := func(i int) bool { return c.dset[i] || (c.dplain != nil && c.dplain[i]) }
	return u.dictionary(c.col.Name, len(c.dset), value, used)
}

// drain reads the chunk's pages after the last one that holds records, checks that
// they hold no values, and lets the pages go.
func (c *pqCursor) drain() error {
	if c.drained {
		return nil
	}
	c.drained = true
	defer c.close()
	for {
		page, err := c.pages.ReadPage()
		if errors.Is(err, io.EOF) {
			return c.stream.finish()
		}
		if err != nil {
			return c.pageError(err)
		}
		n := page.NumRows()
		parquet.Release(page)
		if n > 0 {
			return errors.New("more values than the row group's records")
		}
	}
}

// pageError is the error for the library's failure err to read a page: the check that
// failed when one did (the library may have wrapped it, or lost it).
func (c *pqCursor) pageError(err error) error {
	if c.stream.err != nil {
		return c.stream.err
	}
	return err
}

// nextPage reads the next page of the chunk and checks that its levels and values
// agree.
func (c *pqCursor) nextPage() error {
	if c.page != nil {
		parquet.Release(c.page)
		c.page = nil
	}
	if c.drained {
		return errors.New("fewer values than the row group's records")
	}
	page, err := c.pages.ReadPage()
	if errors.Is(err, io.EOF) {
		if err := c.stream.finish(); err != nil {
			return err
		}
		return errors.New("fewer values than the row group's records")
	}
	if err != nil {
		return c.pageError(err)
	}
	c.page = page
	c.rows, c.next, c.v = int(page.NumRows()), 0, 0
	c.left -= int64(c.rows) // the page checks hold the values within the records
	present, err := c.levels(page)
	if err != nil {
		return err
	}
	c.indexed = page.Dictionary() != nil
	if !c.indexed {
		c.vals, err = newValues(c.col, page.Data(), present)
		return err
	}
	if err := c.useDictionary(page.Dictionary()); err != nil {
		return err
	}
	if err := c.takeIndexes(page.Data(), present); err != nil {
		return err
	}
	parquet.Release(c.page)
	c.page, c.defs = nil, nil
	if c.left == 0 {
		// The last page of records (a writer may put a row group's in one): the
		// library keeps it until the next is read, so the chunk is read to its end.
		return c.drain()
	}
	return nil
}

// takeIndexes checks that v holds n dictionary indexes below the dictionary's size
// and copies them, with the page's nulls, into one of the cursor's codes.
func (c *pqCursor) takeIndexes(v encoding.Values, n int) error {
	data, _ := v.Data()
	if v.Kind() != encoding.Int32 || len(data) != 4*n {
		return fmt.Errorf("%d bytes of dictionary indexes for %d values", len(data), n)
	}
	size := len(c.dtext)
	var err error
	c.codes8, c.codes16, c.codes32 = c.codes8[:0], c.codes16[:0], c.codes32[:0]
	switch {
	case size < 1<<8:
		c.codes8, err = takeCodes(c.codes8, data, c.defs, c.rows, size)
	case size < 1<<16:
		c.codes16, err = takeCodes(c.codes16, data, c.defs, c.rows, size)
	default:
		c.codes32, err = takeCodes(c.codes32, data, c.defs, c.rows, size)
	}
	if size >= 1<<8 {
		c.codes8 = nil
	}
	if size < 1<<8 || size >= 1<<16 {
		c.codes16 = nil
	}
	if size < 1<<16 {
		c.codes32 = nil
	}
	return err
}

// takeCodes returns codes (reused) holding, for each of rows records, its dictionary
// index from data (little-endian int32s, one per record whose definition level is 1;
// every record when defs is nil), or size for a null.
func takeCodes[T uint8 | uint16 | uint32](codes []T, data, defs []byte, rows, size int) ([]T, error) {
	if cap(codes) < rows {
		codes = make([]T, rows)
	}
	codes = codes[:rows]
	v := 0
	for i := range codes {
		if defs != nil && defs[i] == 0 {
			codes[i] = T(size)
			continue
		}
		k := binary.LittleEndian.Uint32(data[4*v:])
		if k >= uint32(size) {
			return codes, fmt.Errorf("dictionary index %d of a dictionary of %d", k, size)
		}
		codes[i] = T(k)
		v++
	}
	return codes, nil
}

// levels takes the page's definition levels (a required column has none) and returns
// how many of its records hold a value.
func (c *pqCursor) levels(page parquet.Page) (int, error) {
	defs := page.DefinitionLevels()
	c.defs = nil
	if !c.col.optional {
		if len(defs) != 0 || page.NumNulls() != 0 {
			return 0, errors.New("nulls in a required column")
		}
		return c.rows, nil
	}
	if len(defs) != c.rows {
		return 0, fmt.Errorf("%d definition levels for %d records", len(defs), c.rows)
	}
	present := 0
	for _, d := range defs {
		if d > 1 {
			return 0, errors.New("a definition level out of range")
		}
		present += int(d)
	}
	c.defs = defs
	return present, nil
}

// useDictionary takes the dictionary of an indexed page: when it is a new one, its
// values, whose text is made when first asked for.
func (c *pqCursor) useDictionary(d parquet.Dictionary) error {
	if d == c.dict {
		return nil
	}
	n := d.Len()
	vals, err := newValues(c.col, d.Page().Data(), n)
	if err != nil {
		return fmt.Errorf("dictionary: %w", err)
	}
	c.dict, c.dvals = d, vals
	c.dtext, c.dset = make([]string, n), make([]bool, n)
	c.dindex, c.dplain = nil, nil
	return nil
}
