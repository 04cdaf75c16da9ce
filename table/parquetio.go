package table

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"golang.org/x/sync/errgroup"

	"sanitizer/fault"
	"sanitizer/internal/safe"
)

// parquetSource reads a Parquet file with the Arrow project's Parquet reader
// (github.com/apache/arrow-go/v18/parquet/pqarrow), only the column chunks of the
// projected columns, record batch by record batch, converted to text as Arrow IPC
// input is (arrowText).
//
// The output is written with pqarrow too (parquetSink, parquetsink.go).
type parquetSource struct {
	fileSource
	mem    memory.Allocator
	pf     *file.Reader
	fr     *pqarrow.FileReader
	cols   []Column
	leaves [][]int // per column: its leaf columns in the Parquet schema
	total  int64
	// direct is, per column, how it is read without pqarrow (parquetdirect.go), and
	// info what that needs of every leaf column
	direct []directKind
	info   []parquetColumnInfo
	// viaArrow makes every stream go through pqarrow (for the tests that compare the
	// two readings)
	viaArrow bool
}

// openParquet opens a Parquet file and reads its footer and schema. Columns of types
// this tool cannot read are reported as unsupported (they may only be dropped).
func openParquet(path string) (src *parquetSource, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fault.BadInput("input: %w", err)
	}
	s := &parquetSource{fileSource: fileSource{path: path, file: f}}
	defer func() {
		if r := recover(); r != nil {
			err = readPanic(r, func(cause error) error { return s.corrupt("", cause) })
		}
		if err != nil {
			s.Close()
		}
	}()
	if s.id, err = identify(f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.mem = &boundedAllocator{mem: memory.DefaultAllocator, limit: min(s.id.size, math.MaxInt64-arrowBufferSlack) + arrowBufferSlack}
	if err := s.start(); err != nil {
		return nil, err
	}
	sch, err := s.fr.Schema()
	if err != nil {
		return nil, s.corrupt("", err)
	}
	if n := len(s.fr.Manifest.Fields); n != sch.NumFields() {
		return nil, s.corrupt("", fmt.Errorf("%d fields in the manifest, %d in the schema", n, sch.NumFields()))
	}
	descr := s.pf.MetaData().Schema
	s.info = make([]parquetColumnInfo, descr.NumColumns())
	for i := range s.info {
		lc := descr.Column(i)
		s.info[i] = parquetColumnInfo{phys: lc.PhysicalType(), maxDef: lc.MaxDefinitionLevel(), maxRep: lc.MaxRepetitionLevel()}
	}
	seen := map[string]int{}
	for i, fld := range sch.Fields() {
		if j, dup := seen[fld.Name]; dup {
			return nil, fault.BadInput("%s: columns %d and %d have the same name %q", path, j+1, i+1, fld.Name)
		}
		seen[fld.Name] = i
		c := arrowColumn(fld)
		var leaves []int
		collectLeaves(&s.fr.Manifest.Fields[i], &leaves)
		if len(leaves) != 1 && (c.Unsupported == "" || c.PassOnly) {
			c.Type, c.Unsupported, c.PassOnly, c.Arrow = "", fld.Type.String(), false, nil
		}
		kind := directNone
		if len(leaves) == 1 && leaves[0] >= 0 && leaves[0] < len(s.info) && c.Unsupported == "" {
			kind = directKindOf(fld.Type, &s.info[leaves[0]])
		}
		s.cols = append(s.cols, c)
		s.leaves = append(s.leaves, leaves)
		s.direct = append(s.direct, kind)
	}
	return s, nil
}

// collectLeaves appends the leaf column indexes under a schema field.
func collectLeaves(f *pqarrow.SchemaField, out *[]int) {
	if f.IsLeaf() {
		*out = append(*out, f.ColIndex)
		return
	}
	for i := range f.Children {
		collectLeaves(&f.Children[i], out)
	}
}

// start opens the readers over the open file, at the first record.
func (s *parquetSource) start() error {
	s.release()
	props := parquet.NewReaderProperties(s.mem)
	// Column chunks are read through a buffer rather than whole: a chunk of a large row
	// group is megabytes, held twice per column read.
	props.BufferedStreamEnabled, props.BufferSize = true, pqStreamBuffer
	// A section of the open file: the reader's Close must not close it (pass 2 rereads
	// the same descriptor), and it cannot read past the size seen at open.
	pf, err := file.NewParquetReader(io.NewSectionReader(s.file, 0, s.id.size), file.WithReadProps(props))
	if err != nil {
		return s.corrupt("", err)
	}
	s.pf = pf
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: BatchRows}, s.mem)
	if err != nil {
		return s.corrupt("", err)
	}
	s.fr, s.read, s.total = fr, 0, pf.NumRows()
	if err := s.checkChunks(); err != nil {
		return s.corrupt("", err)
	}
	return nil
}

// checkChunks checks the footer's row groups and column chunks against the file's size
// before any reader goroutine of the library trusts them (a panic there, out of reach
// of recover, would end the process).
func (s *parquetSource) checkChunks() error {
	md := s.pf.MetaData()
	var sum int64
	leaves := md.Schema.NumColumns()
	for i := 0; i < s.pf.NumRowGroups(); i++ {
		rg := md.RowGroup(i)
		n := rg.NumRows()
		if n < 0 || n > s.total-sum {
			return errors.New("the row groups do not add up to the file's record count")
		}
		sum += n
		if rg.NumColumns() != leaves {
			return fmt.Errorf("row group %d has %d column chunks for %d columns", i, rg.NumColumns(), leaves)
		}
		for j := 0; j < leaves; j++ {
			cc, err := rg.ColumnChunk(j)
			if err != nil {
				return err
			}
			start := cc.DataPageOffset()
			if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 {
				start = min(start, cc.DictionaryPageOffset())
			}
			size := cc.TotalCompressedSize()
			if start < 4 || size <= 0 || size > s.id.size || start > s.id.size-size || cc.NumValues() < 0 {
				return fmt.Errorf("row group %d, column chunk %d lies outside the file", i, j)
			}
		}
	}
	if s.total < 0 || sum != s.total {
		return errors.New("the row groups do not add up to the file's record count")
	}
	return nil
}

func (s *parquetSource) release() {
	if s.pf != nil {
		s.pf.Close()
		s.pf, s.fr = nil, nil
	}
}

func (s *parquetSource) corrupt(col string, err error) error {
	var tooLarge errBufferTooLarge
	if errors.As(err, &tooLarge) {
		err = tooLarge
	}
	if col != "" {
		return fault.BadInput("%s: column %q: not a readable Parquet file (truncated or corrupt): %v", s.path, col, err)
	}
	return fault.BadInput("%s: not a readable Parquet file (truncated or corrupt): %v", s.path, err)
}

func (s *parquetSource) Columns() []Column { return s.cols }

func (s *parquetSource) Metadata() map[string]string {
	out := map[string]string{}
	kv := s.pf.MetaData().KeyValueMetadata()
	for i, k := range kv.Keys() {
		out[k] = kv.Values()[i]
	}
	return out
}

func (s *parquetSource) Close() error {
	s.release()
	return s.file.Close()
}

// Rewind checks that the open file is unchanged and starts again at the first record.
func (s *parquetSource) Rewind() error {
	s.rows1 = s.read
	if err := s.same(); err != nil {
		return err
	}
	return s.start()
}

// Stream reads the projected columns record batch by record batch.
func (s *parquetSource) Stream(ctx context.Context, cols []int, out chan<- *Batch) error {
	return s.StreamAs(ctx, cols, nil, out)
}

// StreamAs is Stream, the columns cols[j] given in the form as[j]: arrays of the file's
// type as the Arrow project's reader decodes them (the other columns are then read
// through it too).
func (s *parquetSource) StreamAs(ctx context.Context, cols []int, as []Form, out chan<- *Batch) error {
	return guardStream(out, s.corrupt, func(col *string) error {
		if len(cols) == 0 {
			return s.streamCount(ctx, out)
		}
		bt, err := newRecordBatcher(ctx, out, s.path, s.cols, cols, as, col, s.corrupt)
		if err != nil {
			return err
		}
		bt.exact = true
		for j, c := range cols {
			if formOf(as, j) == AsKey && bt.forms[j] == formText && s.dictionaryEncoded(c) {
				bt.forms[j] = formIndexes // string columns asked for as keys
			}
		}
		if kinds := s.directKinds(cols); kinds != nil && !s.viaArrow && !bt.has(formArray) && !bt.has(formIndexes) {
			return s.streamDirect(cols, kinds, bt)
		}
		return s.streamRecords(ctx, cols, bt)
	})
}

// streamCount sends the records left as batches of no columns: only the count, no
// column chunk is read.
func (s *parquetSource) streamCount(ctx context.Context, out chan<- *Batch) error {
	for int64(s.read) < s.total {
		n := int(min(int64(BatchRows), s.total-int64(s.read)))
		b := NewBatch(s.read, 0)
		b.N = n
		s.read += n
		if err := sendBatch(ctx, out, b); err != nil {
			return err
		}
	}
	return nil
}

// streamRecords sends the records of the projected columns cols through bt, decoded
// by the Arrow project's record reader. A file of several row groups is decoded on as
// many goroutines as there are cores, a row group each in turn (streamGroups): the
// decoding is most of pass 1 on a Parquet input (1.8 of 2.0 s on 10M records), and
// one goroutine left the other core idle.
func (s *parquetSource) streamRecords(ctx context.Context, cols []int, bt *recordBatcher) error {
	pr := s.projection(cols)
	groups := s.pf.NumRowGroups()
	if workers := min(runtime.GOMAXPROCS(0), groups); workers > 1 {
		return s.streamGroups(ctx, pr, bt, workers)
	}
	rr, err := s.recordReader(ctx, pr.order, pr.leaves, bt.forms, nil)
	if err != nil {
		return err
	}
	defer rr.Release()
	read, err := s.readRecords(rr, pr, bt, s.read, s.total)
	s.read += read
	if err != nil {
		return err
	}
	return s.readerDone(ctx, rr, read, s.total)
}

// projection is where a stream's projected columns are among the leaves the record
// reader returns: it returns them in schema order (order), each projected column's
// place there (at) and its leaf (leaves).
type projection struct{ order, at, leaves []int }

// projection returns the projection of cols.
func (s *parquetSource) projection(cols []int) projection {
	leaves := make([]int, len(cols))
	for j, c := range cols {
		leaves[j] = s.leaves[c][0]
	}
	order := slices.Clone(leaves)
	slices.Sort(order)
	order = slices.Compact(order)
	at := make([]int, len(cols))
	for j := range cols {
		at[j] = slices.Index(order, leaves[j])
	}
	return projection{order: order, at: at, leaves: leaves}
}

// readRecords sends the records rr decodes as batches through bt, numbered from first
// on, and returns how many it read; more than want is a corrupt file.
func (s *parquetSource) readRecords(rr pqarrow.RecordReader, pr projection, bt *recordBatcher, first int, want int64) (int, error) {
	read := 0
	for rr.Next() {
		rec := rr.Record()
		n := int(rec.NumRows())
		if int64(read+n) > want {
			return read, s.corrupt("", errors.New("more records than the footer says"))
		}
		if err := bt.take(rec, pr.at, n); err != nil {
			return read, err
		}
		b := NewBatch(first+read, len(pr.at))
		if err := bt.put(b, 0, n); err != nil {
			return read, err
		}
		read += n
		if err := bt.send(b); err != nil {
			return read, err
		}
	}
	return read, nil
}

// readerDone checks, once rr has no more records, that it ended without error and
// read as many records as the footer gives (want).
func (s *parquetSource) readerDone(ctx context.Context, rr pqarrow.RecordReader, read int, want int64) error {
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return s.corrupt("", err)
	}
	if int64(read) != want {
		return s.corrupt("", fmt.Errorf("%d records where the footer says %d", read, want))
	}
	return nil
}

// groupBatches is how many batches a row group decoded ahead of its turn may hold.
const groupBatches = 16

// streamGroups sends the records of every row group through bt in file order, the row
// groups decoded on workers goroutines: goroutine w decodes groups w, w+workers, … in
// turn, each into a channel of its own, and the records go on from those channels
// group by group. A panic in a decoding goroutine is the file's corruption, naming the
// column, as on the caller's (guardStream).
func (s *parquetSource) streamGroups(ctx context.Context, pr projection, bt *recordBatcher, workers int) error {
	groups := s.pf.NumRowGroups()
	rows := make([]int64, groups)
	firsts := make([]int, groups)
	var sum int64
	for rg := range groups {
		rows[rg] = s.pf.MetaData().RowGroup(rg).NumRows()
		firsts[rg] = int(sum)
		sum += rows[rg]
	}
	if sum != s.total {
		return s.corrupt("", fmt.Errorf("row groups of %d records where the footer says %d", sum, s.total))
	}
	chans := make([]chan *Batch, groups)
	for rg := range chans {
		chans[rg] = make(chan *Batch, groupBatches)
	}
	// whole[rg]: group rg was read to its end, set before its channel is closed; the
	// records go on past a group only when it was (else its goroutine's error ends
	// the stream, and no later group's records may follow the part of it sent).
	whole := make([]bool, groups)
	g, gctx := errgroup.WithContext(ctx)
	for w := range workers {
		wbt := bt.clone(gctx)
		g.Go(safe.Go(func() error {
			next := w // the first of this goroutine's groups whose channel is open
			defer func() {
				for rg := next; rg < groups; rg += workers {
					close(chans[rg])
				}
			}()
			return guardColumn(s.corrupt, wbt.col, func() error {
				for ; next < groups; next += workers {
					wbt.out = chans[next]
					err := s.readGroup(gctx, pr, wbt, next, firsts[next], rows[next])
					whole[next] = err == nil
					close(chans[next])
					if err != nil {
						next += workers
						return err
					}
				}
				return nil
			})
		}))
	}
	g.Go(safe.Go(func() error {
		for rg, ch := range chans {
			for b := range ch {
				s.read += b.N
				if err := sendBatch(gctx, bt.out, b); err != nil {
					return err
				}
			}
			if !whole[rg] {
				return nil // the group's goroutine returns its error
			}
		}
		return nil
	}))
	err := g.Wait()
	for _, ch := range chans {
		for b := range ch {
			b.Release()
		}
	}
	return err
}

// readGroup sends the records of row group rg, of want records from record first on,
// through bt (whose out is the group's channel).
func (s *parquetSource) readGroup(ctx context.Context, pr projection, bt *recordBatcher, rg, first int, want int64) error {
	rr, err := s.recordReader(ctx, pr.order, pr.leaves, bt.forms, []int{rg})
	if err != nil {
		return err
	}
	defer rr.Release()
	read, err := s.readRecords(rr, pr, bt, first, want)
	if err != nil {
		return err
	}
	return s.readerDone(ctx, rr, read, want)
}

// recordReader opens the Arrow project's record reader over the leaf columns order;
// the leaves of the columns asked for as dictionary indexes (forms, of the projected
// columns whose leaves are leaves) are read as dictionary arrays.
func (s *parquetSource) recordReader(ctx context.Context, order, leaves []int, forms []columnForm, groups []int) (pqarrow.RecordReader, error) {
	fr := s.fr
	if slices.Contains(forms, formIndexes) {
		props := pqarrow.ArrowReadProperties{BatchSize: BatchRows}
		for j, f := range forms {
			if f == formIndexes {
				props.SetReadDict(leaves[j], true)
			}
		}
		var err error
		if fr, err = pqarrow.NewFileReader(s.pf, props, s.mem); err != nil {
			return nil, s.corrupt("", err)
		}
	}
	rr, err := fr.GetRecordReader(ctx, order, groups)
	if err != nil {
		return nil, s.corrupt("", err)
	}
	return rr, nil
}

// dictionaryEncoded reports whether column c is a string column whose every column
// chunk has a dictionary page: pass 1 then reads it as the dictionary's indexes
// (Batch.Index), looking each value of a batch's dictionary up once instead of every
// record's (a column written without dictionaries is read directly, as text).
func (s *parquetSource) dictionaryEncoded(c int) bool {
	if s.cols[c].Arrow == nil || s.cols[c].Arrow.ID() != arrow.STRING || len(s.leaves[c]) != 1 {
		return false
	}
	leaf := s.leaves[c][0]
	if leaf < 0 || leaf >= len(s.info) || s.info[leaf].phys != parquet.Types.ByteArray {
		return false
	}
	md := s.pf.MetaData()
	for g := range md.NumRowGroups() {
		cc, err := md.RowGroup(g).ColumnChunk(leaf)
		if err != nil || !cc.HasDictionaryPage() {
			return false
		}
	}
	return md.NumRowGroups() > 0
}

// dictionaryIndexes puts a dictionary-encoded string array of a batch's n records into
// field j of b as the index of each record's value (Batch.Index) in the batch's copy of
// the dictionary (Batch.Dict: one string for all its values, so that it shares nothing
// with the reader's buffers); a null, or an index to a null value, is a null. A
// dictionary of more values than the batch has records (a column chunk whose
// dictionary outgrew its page, so that the reader keeps adding the values of the
// plain pages after it) is not copied: the records' values go as text.
func dictionaryIndexes(arr arrow.Array, b *Batch, j, n int) error {
	d, ok := arr.(*array.Dictionary)
	if !ok {
		return fmt.Errorf("a %s array where dictionary indexes were asked for", arr.DataType())
	}
	dict, ok := d.Dictionary().(*array.String)
	if !ok {
		return fmt.Errorf("a dictionary of %s", d.Dictionary().DataType())
	}
	if dict.Len() > n {
		text := arrowText(arr, nil)
		for i := range n {
			if v, null := text(i); null {
				b.SetNull(i*b.Width + j)
			} else {
				b.Fields[i*b.Width+j] = v
			}
		}
		return nil
	}
	offs := dict.ValueOffsets()
	all := string(dict.ValueBytes())
	values := make([]string, dict.Len())
	for k := range values {
		values[k] = all[offs[k]-offs[0] : offs[k+1]-offs[0]]
	}
	if arr.Len() != n {
		return fmt.Errorf("%d values in a batch of %d records", arr.Len(), n)
	}
	index := make([]int32, n)
	for i := range n {
		if d.IsNull(i) {
			b.SetNull(i*b.Width + j)
			continue
		}
		k := d.GetValueIndex(i)
		if k < 0 || k >= len(values) {
			return fmt.Errorf("dictionary index %d of %d values", k, len(values))
		}
		if dict.IsNull(k) {
			b.SetNull(i*b.Width + j)
			continue
		}
		index[i] = int32(k)
	}
	if b.Dict == nil {
		b.Dict, b.Index = make([][]string, b.Width), make([][]int32, b.Width)
	}
	b.Dict[j], b.Index[j] = values, index
	return nil
}

// pqStreamBuffer is the size of the buffer through which a column chunk is read.
const pqStreamBuffer = 1 << 20

// expectedRows is the record count the footer states, capped by the file's size (a
// hint for sizing buffers: a lying footer cannot make the caller allocate more than
// one record per byte).
func (s *parquetSource) expectedRows() int { return int(min(s.total, s.id.size)) }
