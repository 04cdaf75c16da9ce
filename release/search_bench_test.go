package release

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"sanitizer/gen"
	"sanitizer/generalize"
	"sanitizer/job"
	"sanitizer/schema"
)

// encodeGenerated generates rows hospital records (Parquet) and encodes them with the
// eight-quasi-identifier benchmark configuration; SEARCH_INPUT names a table generated
// before (sanitize gen) to encode instead.
func encodeGenerated(b *testing.B, rows int) (*generalize.Table, *plan) {
	b.Helper()
	dir := b.TempDir()
	in := os.Getenv("SEARCH_INPUT")
	if in == "" {
		in = filepath.Join(dir, "in.parquet")
		if err := gen.Hospital(in, "", rows, 1, job.Options{}); err != nil {
			b.Fatal(err)
		}
	}
	cfg, err := schema.Load("../testdata/hospital-8qi.yaml")
	if err != nil {
		b.Fatal(err)
	}
	return encodeFile(b, cfg, in, "parquet")
}

// encodeFile encodes the input in (of the given format) under cfg, as pass 1 does,
// with the plan whose suppression limit it sets.
func encodeFile(b *testing.B, cfg *schema.Config, in string, format schema.Format) (*generalize.Table, *plan) {
	b.Helper()
	src, p, err := openInput(cfg, in, filepath.Join(b.TempDir(), "out."+format.String()), format)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	hier := make([]*generalize.Hierarchy, len(p.QuasiCfg))
	for i, c := range p.QuasiCfg {
		if c.Hierarchy.File != "" {
			if hier[i], err = generalize.LoadHierarchy(c.Hierarchy.File); err != nil {
				b.Fatal(err)
			}
		}
	}
	t, err := encode(context.Background(), p, src, hier, nil, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	p.maxSupp = maxSuppressed(cfg.Privacy.Suppression, t.Rows)
	return t, p
}

// BenchmarkSearchHospital8QI measures the search alone on generated tables with eight
// quasi-identifiers (lattice of 54,000 nodes), k=10, 5% (SEARCH_ROWS sets the size).
func BenchmarkSearchHospital8QI(b *testing.B) {
	rows := 200000
	if v, err := strconv.Atoi(os.Getenv("SEARCH_ROWS")); err == nil {
		rows = v
	}
	t, p := encodeGenerated(b, rows)
	b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
		var res *generalize.Result
		for b.Loop() {
			var err error
			res, err = generalize.Search(context.Background(), t, generalize.Options{K: 10, MaxSuppressed: p.maxSupp, CacheEntries: cacheEntries()})
			if err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(res.Evaluated), "evaluated")
		b.ReportMetric(float64(res.RolledUp), "rolled-up")
	})
}

// cacheEntries is SEARCH_CACHE (the search's cache bound in int32 entries), 0 if unset.
func cacheEntries() int {
	v, _ := strconv.Atoi(os.Getenv("SEARCH_CACHE"))
	return v
}

// BenchmarkMondrianHospital8QI measures Mondrian alone on generated tables with eight
// quasi-identifiers (age, admitted and stay_days numeric), k=10 (SEARCH_ROWS sets the
// size).
func BenchmarkMondrianHospital8QI(b *testing.B) {
	rows := 200000
	if v, err := strconv.Atoi(os.Getenv("SEARCH_ROWS")); err == nil {
		rows = v
	}
	t, p := encodeGenerated(b, rows)
	p.QuasiCfg = nil
	cfg, err := schema.Load("../testdata/hospital-8qi-mondrian.yaml")
	if err != nil {
		b.Fatal(err)
	}
	p.QuasiCfg = cfg.Quasi()
	values, err := mondrianValues(p, t)
	if err != nil {
		b.Fatal(err)
	}
	b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
		var res *generalize.Mondrian
		for b.Loop() {
			if res, err = generalize.MondrianSearch(context.Background(), t, values, generalize.Options{K: 10}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(res.Sizes)), "partitions")
	})
}
