package release

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"sanitizer/generalize"
	"sanitizer/job"
	"sanitizer/sample"
	"sanitizer/schema"
)

// encodeAdmissions generates rows admissions (several per patient) and encodes them
// with testdata/admissions-persons.yaml (k=5 in persons, its l-diversity dropped):
// the table with its unit.
func encodeAdmissions(b *testing.B, rows int) (*generalize.Table, *plan) {
	b.Helper()
	in := writeAdmissions(b, b.TempDir(), rows)
	cfg, err := schema.Load("../testdata/admissions-persons.yaml")
	if err != nil {
		b.Fatal(err)
	}
	cfg.Privacy.LDiversity = nil
	return encodeFile(b, cfg, in, "csv")
}

// BenchmarkSearchAdmissionsPersons measures the search alone on generated admissions
// (SEARCH_ROWS, default 200,000), k=5, 5%, counting records, persons, and persons with
// linkable records (multirelational k).
func BenchmarkSearchAdmissionsPersons(b *testing.B) {
	rows := 200000
	if v, err := strconv.Atoi(os.Getenv("SEARCH_ROWS")); err == nil {
		rows = v
	}
	t, p := encodeAdmissions(b, rows)
	unit := t.Unit
	for _, v := range []struct {
		name              string
		persons, linkable bool
	}{{"records", false, false}, {"persons", true, false}, {"linkable", true, true}} {
		b.Run(v.name, func(b *testing.B) {
			t.Unit = nil
			if v.persons {
				t.Unit = unit
			}
			opt := generalize.Options{K: 5, MaxSuppressed: p.maxSupp, Linkable: v.linkable}
			var res *generalize.Result
			for b.Loop() {
				var err error
				if res, err = generalize.Search(context.Background(), t, opt); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(res.RolledUp), "rolled-up")
			b.ReportMetric(float64(res.Evaluated+res.MonotoneOnly), "counted")
		})
	}
}

// BenchmarkReleaseAdmissionsPersons measures a whole release (encode, search, write,
// verify) of generated admissions (SEARCH_ROWS, default 200,000) to CSV, k=5, 5%,
// counting records and counting persons.
func BenchmarkReleaseAdmissionsPersons(b *testing.B) {
	rows := 200000
	if v, err := strconv.Atoi(os.Getenv("SEARCH_ROWS")); err == nil {
		rows = v
	}
	dir := b.TempDir()
	in := writeAdmissions(b, dir, rows)
	for _, persons := range []bool{false, true} {
		name := "records"
		if persons {
			name = "persons"
		}
		b.Run(name, func(b *testing.B) {
			cfg, err := schema.Load("../testdata/admissions-persons.yaml")
			if err != nil {
				b.Fatal(err)
			}
			cfg.Privacy.LDiversity = nil
			if !persons {
				cfg.Privacy.Unit = nil
			}
			out := filepath.Join(dir, name+".csv")
			for b.Loop() {
				if _, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out, Force: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// writeAdmissions writes rows generated admissions (seed 1) to dir/in.csv and returns
// its path.
func writeAdmissions(b *testing.B, dir string, rows int) string {
	b.Helper()
	in := filepath.Join(dir, "in.csv")
	f, err := os.Create(in)
	if err != nil {
		b.Fatal(err)
	}
	if err := sample.Admissions(f, rows, 1); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return in
}
