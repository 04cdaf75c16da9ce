package risk

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func TestPopulationConstructors(t *testing.T) {
	for _, f := range []float64{0, -1, 1.5, math.NaN(), math.Inf(1)} {
		if _, err := PopulationFromFraction(f); !errors.Is(err, ErrSamplingFraction) {
			t.Errorf("PopulationFromFraction(%v): error %v", f, err)
		}
	}
	for _, n := range []int64{0, -3} {
		if _, err := PopulationFromSize(n); !errors.Is(err, ErrPopulation) {
			t.Errorf("PopulationFromSize(%d): error %v", n, err)
		}
	}
	for _, m := range [][]Matched{
		{{Sample: 0, Population: 3}},
		{{Sample: 2, Population: 1}},
		{{Sample: 1, Population: 1}, {Sample: -1, Population: 5}},
	} {
		if _, err := PopulationFromClasses(m); !errors.Is(err, ErrPopulation) {
			t.Errorf("PopulationFromClasses(%v): error %v", m, err)
		}
	}
	// The constructor keeps its own copy.
	m := []Matched{{1, 2}, {2, 5}}
	p, err := PopulationFromClasses(m)
	if err != nil {
		t.Fatal(err)
	}
	m[0].Population = 1000
	d := uqDist(t, SizeCount{1, 1}, SizeCount{2, 1})
	if j, _ := JournalistRisk(d, p); j.Highest != 0.5 {
		t.Errorf("changing the caller's slice changed the population: %+v", j)
	}
}

func TestSamplingFraction(t *testing.T) {
	d := uqDist(t, SizeCount{1, 2}, SizeCount{3, 1}) // 5 records
	byFraction, _ := PopulationFromFraction(0.25)
	bySize, _ := PopulationFromSize(20)
	tooSmall, _ := PopulationFromSize(4)
	byClasses, _ := PopulationFromClasses([]Matched{{1, 1}, {1, 3}, {3, 9}})
	if f, err := byFraction.SamplingFraction(d); err != nil || f != 0.25 {
		t.Errorf("by fraction: %v, %v", f, err)
	}
	if f, err := bySize.SamplingFraction(d); err != nil || f != 0.25 {
		t.Errorf("by size 20 for 5 records: %v, %v; want 0.25", f, err)
	}
	for name, p := range map[string]Population{"size 4 < 5 records": tooSmall, "classes": byClasses, "zero": {}} {
		if _, err := p.SamplingFraction(d); !errors.Is(err, ErrPopulation) {
			t.Errorf("%s: error %v", name, err)
		}
	}
	if _, err := bySize.SamplingFraction(Distribution{}); !errors.Is(err, ErrNoRecords) {
		t.Errorf("empty table: error %v", err)
	}
}

// TestJournalistMarketerByHand checks the measures on population class sizes given
// with the table's classes.
func TestJournalistMarketerByHand(t *testing.T) {
	for _, tc := range []struct {
		name                string
		classes             []Matched
		highest, average, m float64
	}{
		{
			// f = 1, 2, 3 with F = 2, 5, 3: n = 6, J = 3, ΣF = 10.
			// Highest = 1/min F = 1/2.
			// Σ f/F = 1/2 + 2/5 + 3/3 = 1.9, so marketer = 1.9/6 = 19/60.
			// Average = max(J/ΣF, marketer) = max(3/10, 19/60) = 19/60.
			"record-drawn attack larger", []Matched{{1, 2}, {2, 5}, {3, 3}}, 0.5, 19.0 / 60, 19.0 / 60,
		},
		{
			// f = 1, 20 with F = 10, 20: n = 21, J = 2, ΣF = 30.
			// Highest = 1/10. Σ f/F = 0.1 + 1 = 1.1, marketer = 1.1/21 = 11/210.
			// Average = max(2/30, 11/210) = 1/15: here the population-drawn attack wins.
			"population-drawn attack larger", []Matched{{1, 10}, {20, 20}}, 0.1, 1.0 / 15, 11.0 / 210,
		},
		{
			// The population is the sample: every measure is the prosecutor's,
			// highest 1/1, average = marketer = J/n = 3/6.
			"population = sample", []Matched{{1, 1}, {2, 2}, {3, 3}}, 1, 0.5, 0.5,
		},
		{
			// One class: f = 4 of F = 400. Highest = average = 1/400 (J/ΣF = 1/400 and
			// (1/4)·4/400 = 1/400); marketer = 1/400.
			"single class", []Matched{{4, 400}}, 1.0 / 400, 1.0 / 400, 1.0 / 400,
		},
	} {
		p, err := PopulationFromClasses(tc.classes)
		if err != nil {
			t.Fatal(err)
		}
		sizes := make([]int64, len(tc.classes))
		for i, c := range tc.classes {
			sizes[i] = c.Sample
		}
		d, _ := FromSizes(sizes)
		j, err := JournalistRisk(d, p)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if j.UpperBound || !uqClose(j.Highest, tc.highest, 1e-15) || !uqClose(j.Average, tc.average, 1e-15) {
			t.Errorf("%s: journalist %+v, want highest %v, average %v", tc.name, j, tc.highest, tc.average)
		}
		m, err := MarketerRisk(d, p)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if m.UpperBound || !uqClose(m.Share, tc.m, 1e-15) {
			t.Errorf("%s: marketer %+v, want %v", tc.name, m, tc.m)
		}
	}
}

// TestJournalistMarketerBound checks the measures when only the population's size or
// the sampling fraction is known: the sample's class sizes stand in for the
// population's, which makes them upper bounds equal to the prosecutor's measures.
func TestJournalistMarketerBound(t *testing.T) {
	// Sizes 2, 2, 3, 5: n = 12, 4 classes. Highest = 1/2; average = marketer = 4/12.
	d := uqDist(t, SizeCount{2, 2}, SizeCount{3, 1}, SizeCount{5, 1})
	byFraction, _ := PopulationFromFraction(0.01)
	bySize, _ := PopulationFromSize(12)
	all, _ := PopulationFromFraction(1)
	for name, p := range map[string]Population{"fraction 0.01": byFraction, "size = n": bySize, "fraction 1": all} {
		j, err := JournalistRisk(d, p)
		if err != nil || !j.UpperBound || j.Highest != 0.5 || !uqClose(j.Average, 1.0/3, 1e-15) {
			t.Errorf("%s: journalist %+v, %v; want highest 1/2, average 1/3, upper bound", name, j, err)
		}
		m, err := MarketerRisk(d, p)
		if err != nil || !m.UpperBound || !uqClose(m.Share, 1.0/3, 1e-15) {
			t.Errorf("%s: marketer %+v, %v; want 1/3, upper bound", name, m, err)
		}
	}
	// Every record unique: risk 1 everywhere.
	u := uqDist(t, SizeCount{1, 5})
	if j, _ := JournalistRisk(u, byFraction); j.Highest != 1 || j.Average != 1 {
		t.Errorf("all unique: %+v", j)
	}
	if m, _ := MarketerRisk(u, byFraction); m.Share != 1 {
		t.Errorf("all unique: %+v", m)
	}
}

func TestJournalistMarketerErrors(t *testing.T) {
	d := uqDist(t, SizeCount{1, 2}, SizeCount{3, 1}) // 5 records, sizes 1, 1, 3
	small, _ := PopulationFromSize(4)
	missing, _ := PopulationFromClasses([]Matched{{1, 4}, {3, 3}})
	other, _ := PopulationFromClasses([]Matched{{1, 4}, {2, 3}, {2, 2}})
	for name, p := range map[string]Population{"size below n": small, "a class missing": missing, "other sizes": other, "zero": {}} {
		if _, err := JournalistRisk(d, p); !errors.Is(err, ErrPopulation) {
			t.Errorf("journalist, %s: error %v", name, err)
		}
		if _, err := MarketerRisk(d, p); !errors.Is(err, ErrPopulation) {
			t.Errorf("marketer, %s: error %v", name, err)
		}
	}
	// The empty table has no risk, against any population that fits it.
	none, _ := PopulationFromClasses(nil)
	frac, _ := PopulationFromFraction(0.5)
	for name, p := range map[string]Population{"no classes": none, "fraction": frac} {
		j, err := JournalistRisk(Distribution{}, p)
		m, err2 := MarketerRisk(Distribution{}, p)
		if err != nil || err2 != nil || j.Highest != 0 || j.Average != 0 || m.Share != 0 {
			t.Errorf("empty table, %s: %+v %+v %v %v", name, j, m, err, err2)
		}
	}
	if _, err := JournalistRisk(d, none); !errors.Is(err, ErrPopulation) {
		t.Errorf("no population classes for a table with classes: error %v", err)
	}
}

// TestJournalistMarketerProperties checks on random populations: every measure is in
// (0, 1]; highest ≥ average ≥ marketer; and none exceeds the upper bound computed
// from the sample alone.
func TestJournalistMarketerProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		classes := make([]Matched, 1+r.IntN(50))
		sizes := make([]int64, len(classes))
		for i := range classes {
			f := int64(1 + r.IntN(10))
			classes[i] = Matched{Sample: f, Population: f + int64(r.IntN(100))}
			sizes[i] = f
		}
		d, _ := FromSizes(sizes)
		p, err := PopulationFromClasses(classes)
		if err != nil {
			t.Fatal(err)
		}
		j, err := JournalistRisk(d, p)
		m, err2 := MarketerRisk(d, p)
		if err != nil || err2 != nil {
			t.Fatal(err, err2)
		}
		frac, _ := PopulationFromFraction(0.1)
		jb, _ := JournalistRisk(d, frac)
		mb, _ := MarketerRisk(d, frac)
		ok := j.Highest > 0 && j.Highest <= 1 && j.Average > 0 && m.Share > 0 &&
			j.Highest >= j.Average && j.Average >= m.Share &&
			j.Highest <= jb.Highest && j.Average <= jb.Average*(1+1e-15) && m.Share <= mb.Share*(1+1e-15)
		if !ok {
			t.Errorf("%v: journalist %+v, marketer %+v; bounds %+v, %+v", classes, j, m, jb, mb)
		}
	}
}
