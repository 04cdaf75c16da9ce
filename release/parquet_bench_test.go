package release

import (
	"context"
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

	"sanitizer/gen"
	"sanitizer/job"
	"sanitizer/sample"
	"sanitizer/schema"
	"sanitizer/table"
)

// BenchmarkParquetReaders reads every column of a generated Parquet file (PARQUET_ROWS
// records, default 200,000) with the Arrow project's pqarrow record reader, without any
// conversion: the library's decoding throughput (records/s in the output).
func BenchmarkParquetReaders(b *testing.B) {
	rows := 200000
	if v, err := strconv.Atoi(os.Getenv("PARQUET_ROWS")); err == nil {
		rows = v
	}
	path := filepath.Join(b.TempDir(), "in.parquet")
	if err := gen.Hospital(path, "", rows, 1, job.Options{}); err != nil {
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
	b.Run("pqarrow", func(b *testing.B) {
		for b.Loop() {
			pf, err := file.NewParquetReader(io.NewSectionReader(f, 0, st.Size()))
			if err != nil {
				b.Fatal(err)
			}
			fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: table.BatchRows}, memory.DefaultAllocator)
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
// 200,000, already in canonical text) with this tool's Parquet sink (text columns, as
// gen and the DP outputs write) and with the pqarrow writer fed directly from Arrow
// records built by the Arrow IPC sink's conversion, one row group per batch.
func BenchmarkParquetWriters(b *testing.B) {
	rows := 200000
	if v, err := strconv.Atoi(os.Getenv("PARQUET_ROWS")); err == nil {
		rows = v
	}
	g := sample.NewHospitalGen(1)
	cols := gen.HospitalColumns()
	fields := make([]string, 0, rows*len(cols))
	row := make([]string, len(cols))
	for range rows {
		row = g.Next(row)
		fields = append(fields, row...)
	}
	dir := b.TempDir()
	b.Run("sink", func(b *testing.B) {
		for b.Loop() {
			f, err := os.Create(filepath.Join(dir, "x.parquet"))
			if err != nil {
				b.Fatal(err)
			}
			s, err := table.NewSink(f, "parquet", schema.CSV{}, cols, nil)
			if err != nil {
				b.Fatal(err)
			}
			for lo := 0; lo < rows; lo += table.BatchRows {
				n := min(table.BatchRows, rows-lo)
				if err := s.Write(fields[lo*len(cols):(lo+n)*len(cols)], nil, n); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Finish(); err != nil {
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
				fs[i] = arrow.Field{Name: c.Name, Type: table.ArrowType(c.Type, c.Ints)}
			}
			sch := arrow.NewSchema(fs, nil)
			w, err := pqarrow.NewFileWriter(sch, f, nil, pqarrow.DefaultWriterProps())
			if err != nil {
				b.Fatal(err)
			}
			rb := array.NewRecordBuilder(memory.DefaultAllocator, sch)
			for lo := 0; lo < rows; lo += table.BatchRows {
				n := min(table.BatchRows, rows-lo)
				for i := range n {
					for j, c := range cols {
						v := fields[(lo+i)*len(cols)+j]
						switch fb := rb.Field(j).(type) {
						case *array.StringBuilder:
							fb.Append(v)
						case *array.Int64Builder:
							x, _ := table.ParseTyped(c.Type, v)
							fb.Append(x.I)
						case *array.Date32Builder:
							x, _ := table.ParseTyped(c.Type, v)
							fb.Append(arrow.Date32(x.I))
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
