package verify

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"sanitizer/closeness"
	"sanitizer/diversity"
)

// BenchmarkPersonsCounter counts a release of 4M records of 800k persons (5 records
// each on average, in several of 5000 classes, one sensitive column of 20 values)
// with and without a privacy unit, with linkable records (multirelational k), and
// with t-closeness and β-likeness in persons, and reports the memory the Counter
// holds per record before Finish (live heap after a collection) and Finish's time
// (BENCH_ROWS sets the records, the persons a fifth of them):
//
//	go test ./verify -run '^$' -bench PersonsCounter -benchtime 1x
func BenchmarkPersonsCounter(b *testing.B) {
	const classes, values = 5000, 20
	rows := 4_000_000
	if n, err := strconv.Atoi(os.Getenv("BENCH_ROWS")); err == nil && n > 0 {
		rows = n
	}
	persons := rows / 5
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
	for _, mode := range []string{"", "pid", "pid+linkable", "pid+t+β"} {
		unit := strings.TrimSuffix(strings.Split(mode, "+")[0], "+")
		b.Run("unit="+mode, func(b *testing.B) {
			spec := Spec{K: 1, MaxSuppressed: rows, InputRows: rows, Columns: []string{"q", "s"}, Quasi: []string{"q"},
				Sensitive: []Sensitive{sc}, Unit: unit, Linkable: strings.HasSuffix(mode, "linkable")}
			if strings.HasSuffix(mode, "β") {
				spec.Sensitive = []Sensitive{sc}
				spec.Sensitive[0].Closeness = []Closeness{{T: 1e9, Distance: closeness.Equal}}
				spec.Sensitive[0].Likeness = []Likeness{{Beta: 1e9}}
			}
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
				b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(rows), "live-B/record")
				b.ReportMetric(done.Sub(f).Seconds(), "finish-s")
				b.ReportMetric(fed.Sub(start).Seconds(), "feed-s")
				if m.Persons != nil {
					b.ReportMetric(float64(m.Persons.Released), "persons")
				}
			}
		})
	}
}

// BenchmarkPseudonymMAC is the keyed pseudonym's check of one record.
func BenchmarkPseudonymMAC(b *testing.B) {
	m := newMacer(pseudoKey)
	p := pseudoOf["patient-1"]
	for b.Loop() {
		if !m.is(p, "patient-1") {
			b.Fatal("not the pseudonym")
		}
	}
}
