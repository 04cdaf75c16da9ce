package verify

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// readPQBlock reads every column of path as readPQ does, the column chunks read from
// the file block bytes at a time.
func readPQBlock(t *testing.T, path string, block int) [][]string {
	t.Helper()
	f, err := OpenParquet(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.readBlock = block
	r, err := f.Records(context.Background(), allColumns(len(pqNames)))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out [][]string
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		rec = slices.Clone(rec)
		for j, null := range r.Nulls() {
			if null {
				rec[j] = "\x00"
			}
		}
		out = append(out, rec)
	}
}

// TestParquetReadBlocks reads files whose column chunks span many pages with blocks
// from one byte (every page header read again and again as its bytes come in) to
// larger than the chunks: the same records.
func TestParquetReadBlocks(t *testing.T) {
	rows := pqRows(3000)
	cases := map[string][]parquet.WriterOption{
		"v2 snappy":  {parquet.PageBufferSize(512), parquet.Compression(&parquet.Snappy), parquet.MaxRowsPerRowGroup(1100)},
		"v1 gzip":    {parquet.DataPageVersion(1), parquet.Compression(&parquet.Gzip), parquet.PageBufferSize(700)},
		"v2 default": nil,
	}
	for name, options := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.parquet")
			writePQ(t, path, rows, options...)
			for _, block := range []int{1, 5, 100, 4096, 0} {
				got := readPQBlock(t, path, block)
				if len(got) != len(rows) {
					t.Fatalf("block %d: %d records, want %d", block, len(got), len(rows))
				}
				for i, r := range rows {
					if want := pqRowText(r); !slices.Equal(got[i], want) {
						t.Fatalf("block %d, record %d:\n got %q\nwant %q", block, i, got[i], want)
					}
				}
			}
		})
	}
}

// TestPageStreamHoldsPages reads column chunks of many pages through a pageStream as
// the decoder does: it holds a few pages and a read-ahead block, never the chunk.
func TestPageStreamHoldsPages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.parquet")
	writePQ(t, path, pqRows(40000), parquet.PageBufferSize(2048), parquet.Compression(&parquet.Snappy))
	f, err := OpenParquet(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const block = 4096
	md := f.pf.Metadata()
	chunks := f.pf.RowGroups()[0].ColumnChunks()
	largest := int64(0)
	for _, c := range f.cols {
		m := &md.RowGroups[0].Columns[c.leaf].MetaData
		start, size := chunkStart(m), m.TotalCompressedSize
		largest = max(largest, size)
		// The largest page, header included.
		chunk := make([]byte, size)
		if _, err := f.f.ReadAt(chunk, start); err != nil {
			t.Fatal(err)
		}
		maxPage, pages := 0, 0
		for pos := 0; pos < len(chunk); pages++ {
			r := &thriftReader{b: chunk[pos:]}
			h, err := readPageHeader(r)
			if err != nil {
				t.Fatal(err)
			}
			maxPage = max(maxPage, r.pos+int(h.compressed))
			pos += r.pos + int(h.compressed)
		}
		var s pageStream
		scratch := []byte(nil)
		s.reset(f.f, start, size, block, chunkCheck{rows: md.RowGroups[0].NumRows, fileSize: f.size, codec: m.Codec,
			optional: c.optional, scratch: &scratch, kind: c.kind, phys: c.phys})
		pp := chunks[c.leaf].(*parquet.FileColumnChunk).PagesFrom(&s)
		held := 0
		for {
			page, err := pp.ReadPage()
			held = max(held, cap(s.buf))
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("column %s: %v", c.Name, err)
			}
			parquet.Release(page)
		}
		pp.Close()
		if err := s.finish(); err != nil {
			t.Fatalf("column %s: %v", c.Name, err)
		}
		// The library reads 4096 bytes at a time, or a page's body at once.
		if bound := 4096 + 3*maxPage + 3*block; held > bound {
			t.Errorf("column %s (%d pages, %d bytes, the largest %d): the stream held %d bytes, more than %d",
				c.Name, pages, size, maxPage, held, bound)
		}
	}
	if largest < 20*block {
		t.Fatalf("the largest column chunk has %d bytes: too few for the test", largest)
	}
}

// TestPageStreamReadsForward: the stream serves the chunk front to back, and once a
// check failed, it fails every read.
func TestPageStreamReadsForward(t *testing.T) {
	data := goodParquet(t, 300, parquet.PageBufferSize(256), parquet.DataPageVersion(1))
	f, err := openParquet("t.parquet", bytes.NewReader(data), int64(len(data)), io.NopCloser(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := f.cols[0]
	m := &f.pf.Metadata().RowGroups[0].Columns[c.leaf].MetaData
	start, size := chunkStart(m), m.TotalCompressedSize
	var s pageStream
	s.reset(f.f, start, size, 16, chunkCheck{rows: f.pf.Metadata().RowGroups[0].NumRows, fileSize: f.size,
		codec: m.Codec, optional: c.optional, scratch: new([]byte), kind: c.kind, phys: c.phys})
	p := make([]byte, 10)
	if _, err := s.ReadAt(p, start+20); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(p, data[start+20:start+30]) {
		t.Fatalf("read %q, want %q", p, data[start+20:start+30])
	}
	if _, err := s.ReadAt(p, start+19); err == nil {
		t.Fatal("no error reading back")
	}
	if _, err := s.ReadAt(p, start+30); err == nil {
		t.Fatal("no error after a failure")
	}
	// Reading the end of the chunk checks every page.
	s.reset(f.f, start, size, 16, s.check)
	s.check.values = 0
	n, err := s.ReadAt(p, start+size-4)
	if n != 4 || err != io.EOF || s.checked != size {
		t.Fatalf("at the end: %d bytes, %v, %d of %d checked", n, err, s.checked, size)
	}
}

// TestParquetCorruptLargeChunks changes bytes throughout files whose column chunks are
// many times the read block (400 places in each, 80 but with SANITIZE_EXHAUSTIVE):
// every reading ends in records or an error naming the file, never a panic.
func TestParquetCorruptLargeChunks(t *testing.T) {
	if testing.Short() {
		t.Skip("reads hundreds of files")
	}
	files := map[string][]byte{
		"v2 snappy": goodParquet(t, 5000, parquet.PageBufferSize(1024), parquet.Compression(&parquet.Snappy)),
		"v1 plain":  goodParquet(t, 5000, parquet.DataPageVersion(1), parquet.PageBufferSize(1024), parquet.Compression(&parquet.Uncompressed)),
	}
	for name, good := range files {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			places := 80
			if exhaustive {
				places = 400
			}
			step := max(1, len(good)/places)
			for i := 4; i < len(good); i += step {
				bad := slices.Clone(good)
				bad[i] ^= 0xa5
				path := filepath.Join(dir, "f"+strconv.Itoa(i)+".parquet")
				if err := os.WriteFile(path, bad, 0o644); err != nil {
					t.Fatal(err)
				}
				for _, block := range []int{0, 512} {
					f, err := OpenParquet(path)
					if err == nil {
						f.readBlock = block
						_, err = readAllColumns(f)
					}
					checkBadFileError(t, path, err)
				}
				os.Remove(path)
			}
		})
	}
}

// dictRow has dictionary-encoded columns whose dictionaries (in a row group of 150,000
// records) need one, two and four bytes per index, with nulls.
type dictRow struct {
	Small *string `parquet:"small,optional,dict"`
	Mid   string  `parquet:"mid,dict"`
	Large *int64  `parquet:"large,optional,dict"`
}

func dictRows(n int) []dictRow {
	rows := make([]dictRow, n)
	for i := range rows {
		r := dictRow{Mid: "m" + strconv.Itoa(i%300)}
		if i%7 != 0 {
			s := "s" + strconv.Itoa(i%255)
			r.Small = &s
		}
		if i%5 != 0 {
			v := int64(i % 90000)
			r.Large = &v
		}
		rows[i] = r
	}
	return rows
}

// TestParquetIndexedPages reads dictionary-encoded pages whose indexes the cursor
// keeps in one, two and four bytes, nulls among them, row groups of one page and of
// many.
func TestParquetIndexedPages(t *testing.T) {
	rows := dictRows(150000)
	for name, options := range map[string][]parquet.WriterOption{
		"one page per chunk": {parquet.PageBufferSize(64 << 20)},
		"many pages":         {parquet.PageBufferSize(4096), parquet.MaxRowsPerRowGroup(40000)},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "d.parquet")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			w := parquet.NewGenericWriter[dictRow](f, options...)
			if _, err := w.Write(rows); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			f.Close()
			got, err := readPQ(t, path, []int{0, 1, 2})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(rows) {
				t.Fatalf("%d records, want %d", len(got), len(rows))
			}
			for i, r := range rows {
				want := []string{"\x00", r.Mid, "\x00"}
				if r.Small != nil {
					want[0] = *r.Small
				}
				if r.Large != nil {
					want[2] = strconv.FormatInt(*r.Large, 10)
				}
				if !slices.Equal(got[i], want) {
					t.Fatalf("record %d: got %q, want %q", i, got[i], want)
				}
			}
		})
	}
}

// TestIndexedPageLetGo: a cursor keeps an indexed page's indexes, not the page, and
// once it has read the last page of records of a chunk, it has read the chunk to its
// end and let its pages go.
func TestIndexedPageLetGo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.parquet")
	rows := dictRows(150000)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[dictRow](f, parquet.PageBufferSize(64<<20))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	pf, err := OpenParquet(path)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	if len(pf.pf.RowGroups()) != 1 {
		t.Fatalf("%d row groups", len(pf.pf.RowGroups()))
	}
	for j := range pf.cols {
		c := newCursor(pf, &pf.cols[j], new([]byte))
		n := int64(len(rows))
		if err := c.start(0, pf.pf.RowGroups()[0].ColumnChunks()[pf.cols[j].leaf], n); err != nil {
			t.Fatal(err)
		}
		b := takeBatch(make(chan *textBatch), 10, 1)
		if err := c.fill(b, 0, 1, 10); err != nil {
			t.Fatal(err)
		}
		if !c.indexed || c.page != nil || c.pages != nil || !c.drained {
			t.Errorf("column %s after its first records: indexed %v, page held %v, pages open %v, drained %v",
				pf.cols[j].Name, c.indexed, c.page != nil, c.pages != nil, c.drained)
		}
		if widths := [3]bool{c.codes8 != nil, c.codes16 != nil, c.codes32 != nil}; !widths[j] || widths[(j+1)%3] || widths[(j+2)%3] {
			t.Errorf("column %s (dictionary of %d): indexes in 1, 2, 4 bytes: %v", pf.cols[j].Name, len(c.dtext), widths)
		}
		for done := int64(10); done < n; {
			m := int(min(4096, n-done))
			b = takeBatch(make(chan *textBatch), m, 1)
			if err := c.fill(b, 0, 1, m); err != nil {
				t.Fatal(err)
			}
			done += int64(m)
		}
		if err := c.finish(); err != nil {
			t.Fatal(err)
		}
		c.close()
	}
}
