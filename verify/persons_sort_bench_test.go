package verify

import (
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
)

// admissionsRows is n rows (10M, or BENCH_ROWS) of about n·29/100 persons counted
// in persons as the admissions release is: 1 to 20 records a person (most have few),
// about 65k classes, a person's records mostly in one class or its neighbours, the
// records in no order; no sensitive value. Made once per size.
var admissionsRows = sync.OnceValues(func() ([]personRow, int) {
	n := 10_000_000
	if v, err := strconv.Atoi(os.Getenv("BENCH_ROWS")); err == nil && v > 0 {
		n = v
	}
	const classes = 65_536
	rng := rand.New(rand.NewPCG(37, 10))
	rs := make([]personRow, 0, n)
	for p := 0; len(rs) < n; p++ {
		h := uint64(p)*0x9e3779b97f4a7c15 ^ 0xdeadbeefcafe
		h ^= h >> 29
		h *= 0xbf58476d1ce4e5b9
		home := int(float64(classes) * math.Pow(rng.Float64(), 1.5)) // some classes larger
		k := 1 + int(19*math.Pow(rng.Float64(), 5.5))
		for range min(k, n-len(rs)) {
			c := home
			if rng.IntN(10) >= 7 {
				c = (home + rng.IntN(64)) % classes
			}
			rs = append(rs, personRow{h: h, c: int32(c)})
		}
	}
	rng.Shuffle(len(rs), func(i, j int) { rs[i], rs[j] = rs[j], rs[i] })
	return rs, classes
})

// BenchmarkPersonsSortByClass sorts the admissions' rows by class, person and value:
//
//	go test ./verify -run '^$' -bench PersonsSortByClass -benchtime 3x -count 3
func BenchmarkPersonsSortByClass(b *testing.B) {
	rows, _ := admissionsRows()
	rs := make([]personRow, len(rows))
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		copy(rs, rows)
		b.StartTimer()
		if err := sortByClass(rs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPersonsJudge counts the admissions' rows in persons as a Counter's finish
// does with k = 5 and no sensitive column: judge (each class's persons), then spread
// (the persons released, in several classes):
//
//	go test ./verify -run '^$' -bench PersonsJudge -benchtime 3x -count 3
func BenchmarkPersonsJudge(b *testing.B) {
	rows, classes := admissionsRows()
	spec := Spec{K: 5, Unit: "pid"}
	t := newPersonTally(0, len(rows))
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		t.rows[0] = append(t.rows[0][:0], rows...)
		b.StartTimer()
		persons, _, err := t.judge(spec, classes, func(personFailure) bool { return true })
		if err != nil {
			b.Fatal(err)
		}
		pm := &PersonsMeasured{}
		if _, err := t.spread(t.rows[0], pm); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(pm.Released), "persons")
		b.ReportMetric(float64(pm.InSeveralClasses), "in-several")
		b.ReportMetric(float64(slices.Max(persons)), "largest")
	}
}
