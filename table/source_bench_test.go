package table

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"sanitizer/sample"
	"sanitizer/schema"
)

// BenchmarkFileSources reads every column of a generated hospital table (SOURCE_ROWS
// records, default 200,000) from a Parquet file and an Arrow IPC file, in each form a
// stage asks for: text (Parquet: straight from the column chunks, and through pqarrow),
// keys (Parquet's strings as dictionary indexes) and arrays. Records/s in the output,
// and the processor time of an op (cpu-ms/op, all goroutines), which other processes
// on the machine disturb less than the elapsed time.
func BenchmarkFileSources(b *testing.B) {
	rows := 200000
	if v, err := strconv.Atoi(os.Getenv("SOURCE_ROWS")); err == nil {
		rows = v
	}
	types := map[string]schema.Type{"age": schema.Integer, "stay_days": schema.Integer, "admitted": schema.Date}
	var cols []OutColumn
	for _, name := range sample.HospitalColumns {
		typ := types[name]
		if typ == "" {
			typ = schema.String
		}
		cols = append(cols, OutColumn{Name: name, Type: typ})
	}
	g := sample.NewHospitalGen(1)
	recs := make([][]string, rows)
	for i := range recs {
		recs[i] = g.Next(nil)
	}
	pq := filepath.Join(b.TempDir(), "in.parquet")
	writeParquet(b, pq, cols, recs, nil)
	ipc := writeArrowTable(b, memory.DefaultAllocator, false, cols, nil, recs, BatchRows)
	all := make([]int, len(cols))
	for i := range all {
		all[i] = i
	}
	forms := func(f Form) []Form {
		as := make([]Form, len(cols))
		for i := range as {
			as[i] = f
		}
		return as
	}
	cases := []struct {
		name     string
		open     func() (Source, error)
		as       []Form
		viaArrow bool
	}{
		{"parquet/text", func() (Source, error) { return openParquet(pq) }, nil, false},
		{"parquet/text-pqarrow", func() (Source, error) { return openParquet(pq) }, nil, true},
		{"parquet/keys", func() (Source, error) { return openParquet(pq) }, forms(AsKey), false},
		{"parquet/arrays", func() (Source, error) { return openParquet(pq) }, forms(AsArray), false},
		{"arrow/text", func() (Source, error) { return openArrow(ipc, false) }, nil, false},
		{"arrow/keys", func() (Source, error) { return openArrow(ipc, false) }, forms(AsKey), false},
		{"arrow/arrays", func() (Source, error) { return openArrow(ipc, false) }, forms(AsArray), false},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			cpu := cpuTime()
			for b.Loop() {
				src, err := tc.open()
				if err != nil {
					b.Fatal(err)
				}
				if ps, ok := src.(*parquetSource); ok {
					ps.viaArrow = tc.viaArrow
				}
				out := make(chan *Batch, 2)
				errc := make(chan error, 1)
				go func() { errc <- StreamAs(context.Background(), src, all, tc.as, out) }()
				n := 0
				for bt := range out {
					n += bt.N
					bt.Release()
				}
				if err := <-errc; err != nil || n != rows {
					b.Fatalf("%d records, %v", n, err)
				}
				src.Close()
			}
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
			b.ReportMetric(float64(cpuTime()-cpu)/1e6/float64(b.N), "cpu-ms/op")
		})
	}
}
