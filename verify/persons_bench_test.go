package verify

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"sanitizer/diversity"
)

// BenchmarkPersonsCounter counts a release of 4M records of 800k persons (5 records
// each on average, in several of 5000 classes, one sensitive column of 20 values)
// with and without a privacy unit, and reports the memory the Counter holds per
// record before Finish (live heap after a collection) and Finish's time:
//
//	go test ./verify -run '^$' -bench PersonsCounter -benchtime 1x
func BenchmarkPersonsCounter(b *testing.B) {
	const rows, persons, classes, values = 4_000_000, 800_000, 5000, 20
	ids := make([]string, persons)
	for i := range ids {
		ids[i] = fmt.Sprintf("P%09d", i)
	}
	qs := make([]string, classes)
	for i := range qs {
		qs[i] = fmt.Sprintf("q%d", i)
	}
	sc := Sensitive{Column: "s", Reference: make([]int64, values), Diversity: []diversity.Model{{Variant: diversity.Distinct, L: 1}}}
	for v := range values {
		sc.Values = append(sc.Values, fmt.Sprintf("v%d", v))
		sc.Reference[v] = 1
	}
	for _, unit := range []string{"", "pid"} {
		b.Run("unit="+unit, func(b *testing.B) {
			spec := Spec{K: 1, MaxSuppressed: rows, InputRows: rows, Columns: []string{"q", "s"}, Quasi: []string{"q"},
				Sensitive: []Sensitive{sc}, Unit: unit}
			for range b.N {
				rng := rand.New(rand.NewPCG(1, 2))
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				start := time.Now()
				c, err := NewCounter(spec, spec.Columns)
				if err != nil {
					b.Fatal(err)
				}
				rec, orig := make([]string, 2), make([]string, 1, 2)
				if unit != "" {
					orig = orig[:2]
				}
				for r := range rows {
					p := (r / 5) % persons // a person's records together, as an input holds them
					if r%5 == 0 {
						p = rng.IntN(persons)
					}
					rec[0], rec[1] = qs[(p*7+rng.IntN(3))%classes], sc.Values[rng.IntN(values)]
					orig[0] = rec[0]
					if unit != "" {
						orig[1] = ids[p]
					}
					if err := c.AddMatched(rec, orig); err != nil {
						b.Fatal(err)
					}
				}
				fed := time.Now()
				if err := c.drain(); err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				f := time.Now()
				m, err := c.Finish()
				if err != nil {
					b.Fatal(err)
				}
				done := time.Now()
				b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/rows, "live-B/record")
				b.ReportMetric(done.Sub(f).Seconds(), "finish-s")
				b.ReportMetric(fed.Sub(start).Seconds(), "feed-s")
				if m.Persons != nil {
					b.ReportMetric(float64(m.Persons.Released), "persons")
				}
			}
		})
	}
}
