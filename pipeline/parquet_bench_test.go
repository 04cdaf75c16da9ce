package pipeline

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/xitongsys/parquet-go/reader"
	xsource "github.com/xitongsys/parquet-go/source"

	"sanitizer/sample"
)

// xFile is a read-only xitongsys source.ParquetFile over an open file.
type xFile struct {
	f   *os.File
	off int64
}

func (x *xFile) Read(b []byte) (int, error) {
	n, err := x.f.ReadAt(b, x.off)
	x.off += int64(n)
	if n > 0 && errors.Is(err, io.EOF) {
		err = nil
	}
	return n, err
}

func (x *xFile) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		off += x.off
	case io.SeekEnd:
		st, err := x.f.Stat()
		if err != nil {
			return 0, err
		}
		off += st.Size()
	}
	x.off = off
	return off, nil
}

func (x *xFile) Write([]byte) (int, error)                  { return 0, errors.ErrUnsupported }
func (x *xFile) Close() error                               { return nil }
func (x *xFile) Open(string) (xsource.ParquetFile, error)   { return &xFile{f: x.f}, nil }
func (x *xFile) Create(string) (xsource.ParquetFile, error) { return nil, errors.ErrUnsupported }

// BenchmarkParquetReaders reads every column of the same generated Parquet file
// (PARQUET_ROWS records, default 200,000) with xitongsys/parquet-go's column reader and
// with the Arrow project's pqarrow record reader, without any conversion, to compare
// the two libraries' decoding throughput (records/s in the output).
func BenchmarkParquetReaders(b *testing.B) {
	rows := 200000
	if v, err := strconv.Atoi(os.Getenv("PARQUET_ROWS")); err == nil {
		rows = v
	}
	path := filepath.Join(b.TempDir(), "in.parquet")
	if err := Generate(path, "", rows, 1, Options{}); err != nil {
		b.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("xitongsys", func(b *testing.B) {
		for b.Loop() {
			r, err := reader.NewParquetColumnReader(&xFile{f: f}, 1)
			if err != nil {
				b.Fatal(err)
			}
			total := r.GetNumRows()
			for _, path := range r.SchemaHandler.ValueColumns {
				for read := int64(0); read < total; {
					vals, _, _, err := r.ReadColumnByPath(path, batchRows)
					if err != nil || len(vals) == 0 {
						b.Fatalf("column %s: %d values, %v", path, len(vals), err)
					}
					read += int64(len(vals))
				}
			}
		}
		b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	})
	b.Run("pqarrow", func(b *testing.B) {
		for b.Loop() {
			pf, err := file.NewParquetReader(io.NewSectionReader(f, 0, st.Size()))
			if err != nil {
				b.Fatal(err)
			}
			fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: batchRows}, memory.DefaultAllocator)
			if err != nil {
				b.Fatal(err)
			}
			rr, err := fr.GetRecordReader(context.Background(), nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for rr.Next() {
				n += int(rr.Record().NumRows())
			}
			rr.Release()
			pf.Close()
			if n != rows {
				b.Fatalf("%d records", n)
			}
		}
		b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	})
}

// BenchmarkParquetWriters writes the same generated records (PARQUET_ROWS, default
// 200,000, already in canonical text) with this tool's Parquet sink
// (xitongsys/parquet-go) and with the Arrow project's pqarrow writer from Arrow records
// built by the Arrow IPC sink's conversion, to compare the libraries' write throughput.
func BenchmarkParquetWriters(b *testing.B) {
	rows := 200000
	if v, err := strconv.Atoi(os.Getenv("PARQUET_ROWS")); err == nil {
		rows = v
	}
	g := sample.NewHospitalGen(1)
	cols := make([]outColumn, len(sample.HospitalColumns))
	for i, name := range sample.HospitalColumns {
		cols[i] = outColumn{name: name, typ: hospitalTypes[i]}
	}
	fields := make([]string, 0, rows*len(cols))
	row := make([]string, len(cols))
	for range rows {
		row = g.Next(row)
		fields = append(fields, row...)
	}
	dir := b.TempDir()
	b.Run("xitongsys", func(b *testing.B) {
		for b.Loop() {
			f, err := os.Create(filepath.Join(dir, "x.parquet"))
			if err != nil {
				b.Fatal(err)
			}
			s, err := newParquetSink(f, cols, nil)
			if err != nil {
				b.Fatal(err)
			}
			for lo := 0; lo < rows; lo += batchRows {
				n := min(batchRows, rows-lo)
				if err := s.write(fields[lo*len(cols):(lo+n)*len(cols)], nil, n); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.finish(); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
		b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	})
	b.Run("pqarrow", func(b *testing.B) {
		for b.Loop() {
			f, err := os.Create(filepath.Join(dir, "a.parquet"))
			if err != nil {
				b.Fatal(err)
			}
			fs := make([]arrow.Field, len(cols))
			for i, c := range cols {
				fs[i] = arrow.Field{Name: c.name, Type: arrowType(c.typ, c.ints)}
			}
			sch := arrow.NewSchema(fs, nil)
			w, err := pqarrow.NewFileWriter(sch, f, nil, pqarrow.DefaultWriterProps())
			if err != nil {
				b.Fatal(err)
			}
			rb := array.NewRecordBuilder(memory.DefaultAllocator, sch)
			for lo := 0; lo < rows; lo += batchRows {
				n := min(batchRows, rows-lo)
				for i := range n {
					for j, c := range cols {
						v := fields[(lo+i)*len(cols)+j]
						switch fb := rb.Field(j).(type) {
						case *array.StringBuilder:
							fb.Append(v)
						case *array.Int64Builder:
							x, _ := parseTyped(c.typ, v)
							fb.Append(x.i)
						case *array.Date32Builder:
							x, _ := parseTyped(c.typ, v)
							fb.Append(arrow.Date32(x.i))
						}
					}
				}
				rec := rb.NewRecord()
				if err := w.Write(rec); err != nil {
					b.Fatal(err)
				}
				rec.Release()
			}
			rb.Release()
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	})
}
