package dprun

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"sanitizer/gen"
	"sanitizer/job"
	"sanitizer/schema"
	"sanitizer/table"
)

// BenchmarkDP compares the whole dp run of testdata/hospital-dp.yaml on a generated
// Parquet table (DP_ROWS records, default 1,000,000) with reading the same columns
// alone: the run should be bounded by reading. DP_INPUT names an existing generated
// Parquet file to use instead (its record count is then what DP_ROWS says).
func BenchmarkDP(b *testing.B) {
	rows := 1000000
	if v, err := strconv.Atoi(os.Getenv("DP_ROWS")); err == nil {
		rows = v
	}
	dir := b.TempDir()
	in := os.Getenv("DP_INPUT")
	if in == "" {
		in = filepath.Join(dir, "in.parquet")
		if err := gen.Hospital(in, "", rows, 1, job.Options{}); err != nil {
			b.Fatal(err)
		}
	}
	cfg, err := schema.Load("../testdata/hospital-dp.yaml")
	if err != nil {
		b.Fatal(err)
	}
	b.Run(fmt.Sprintf("read/rows=%d", rows), func(b *testing.B) {
		for b.Loop() {
			src, p, err := job.OpenInput(cfg, in, "parquet")
			if err != nil {
				b.Fatal(err)
			}
			var cols []int
			for i, h := range p.Header {
				switch h {
				case "patient_id", "age", "sex", "diagnosis", "stay_days", "insurance":
					cols = append(cols, i)
				}
			}
			out := make(chan *table.Batch, 2)
			errc := make(chan error, 1)
			go func() { errc <- src.Stream(context.Background(), cols, out) }()
			for range out {
			}
			if err := <-errc; err != nil {
				b.Fatal(err)
			}
			src.Close()
		}
	})
	b.Run(fmt.Sprintf("dp/rows=%d", rows), func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			out := filepath.Join(dir, fmt.Sprintf("out%d", i))
			if _, err := Run(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
				b.Fatal(err)
			}
			os.RemoveAll(out)
		}
	})
}
