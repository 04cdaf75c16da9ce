package risk

import (
	"math"
	"testing"
)

func dist(t *testing.T, sizes ...int64) Distribution {
	t.Helper()
	d, err := FromSizes(sizes)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*max(1, math.Abs(a), math.Abs(b)) }

func TestProsecutorRisk(t *testing.T) {
	tests := []struct {
		name  string
		sizes []int64
		want  Prosecutor
	}{
		{"empty", nil, Prosecutor{}},
		// one class of 10: every record 1/10.
		{"single class", []int64{10}, Prosecutor{Highest: 0.1, Average: 0.1, AtHighest: 1}},
		// four uniques: every record 1.
		{"all unique", []int64{1, 1, 1, 1}, Prosecutor{Highest: 1, Average: 1, AtHighest: 1}},
		// classes 2, 2, 3, 5 (12 records): highest 1/2; average 4/12; the two pairs hold
		// 4 of 12 records.
		{"mixed", []int64{5, 2, 3, 2}, Prosecutor{Highest: 0.5, Average: 4.0 / 12, AtHighest: 4.0 / 12}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ProsecutorRisk(dist(t, tt.sizes...))
			if !near(got.Highest, tt.want.Highest) || !near(got.Average, tt.want.Average) || !near(got.AtHighest, tt.want.AtHighest) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// The average is the mean of the records' risks, computed record by record.
func TestProsecutorAverageIsMeanOfRecords(t *testing.T) {
	sizes := []int64{1, 4, 4, 7, 2, 9, 1, 3}
	var sum, n float64
	for _, s := range sizes {
		for range s {
			sum += 1 / float64(s)
			n++
		}
	}
	if got := ProsecutorRisk(dist(t, sizes...)).Average; !near(got, sum/n) {
		t.Errorf("average %v, mean of records %v", got, sum/n)
	}
}

func TestRecordsAtRisk(t *testing.T) {
	d := dist(t, 1, 2, 2, 5, 10) // 20 records; risks 1, 1/2, 1/2, 1/5, 1/10
	tests := []struct {
		threshold, want float64
	}{
		{1, 0},            // nobody above certainty
		{0.5, 1.0 / 20},   // only the unique: 1/2 is not above 1/2
		{0.49, 5.0 / 20},  // the unique and the pairs
		{0.2, 5.0 / 20},   // 1/5 is not above 0.2
		{0.19, 10.0 / 20}, // … but above 0.19
		{0.1, 10.0 / 20},  // 1/10 not above 0.1
		{0.05, 20.0 / 20}, // everyone
		{0, 1},            // every record has some risk
	}
	for _, tt := range tests {
		if got := RecordsAtRisk(d, tt.threshold); !near(got, tt.want) {
			t.Errorf("threshold %v: %v, want %v", tt.threshold, got, tt.want)
		}
	}
	if got := RecordsAtRisk(Distribution{}, 0.1); got != 0 {
		t.Errorf("empty table: %v", got)
	}
}

func TestRiskBands(t *testing.T) {
	d := dist(t, 1, 2, 2, 5, 10) // risks 1 (1 record), 1/2 (4), 1/5 (5), 1/10 (10)
	got := RiskBands(d, []float64{0.1, 0.2, 0.5})
	want := []Band{{0, 0.1, 10.0 / 20}, {0.1, 0.2, 5.0 / 20}, {0.2, 0.5, 4.0 / 20}, {0.5, 1, 1.0 / 20}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i].Above != want[i].Above || got[i].UpTo != want[i].UpTo || !near(got[i].Records, want[i].Records) {
			t.Errorf("band %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	// The default bands: shares sum to one, every band's bounds ascend.
	for _, sizes := range [][]int64{{1}, {1, 1, 3, 1000, 7, 20, 2}, {500}} {
		var sum float64
		bands := RiskBands(dist(t, sizes...), DefaultBands)
		for i, b := range bands {
			sum += b.Records
			if b.Above >= b.UpTo || (i > 0 && bands[i-1].UpTo != b.Above) {
				t.Errorf("%v: bands %v do not ascend", sizes, bands)
			}
		}
		if !near(sum, 1) {
			t.Errorf("%v: shares sum to %v", sizes, sum)
		}
	}
	if b := RiskBands(Distribution{}, DefaultBands); len(b) != len(DefaultBands)+1 || b[0].Records != 0 {
		t.Errorf("empty table: %v", b)
	}
}

func TestSmallestClassWithin(t *testing.T) {
	tests := []struct {
		highest float64
		want    int64
	}{{1, 1}, {0.5, 2}, {0.49, 3}, {0.2, 5}, {0.3, 4}, {1.0 / 3, 3}, {0.1, 10}, {0.09, 12}, {0.001, 1000}, {1e-20, math.MaxInt64}, {5e-324, math.MaxInt64}}
	for _, tt := range tests {
		got := SmallestClassWithin(tt.highest)
		if got != tt.want {
			t.Errorf("SmallestClassWithin(%v) = %d, want %d", tt.highest, got, tt.want)
		}
		if got == math.MaxInt64 {
			continue
		}
		if AtRisk(got, tt.highest) || (got > 1 && !AtRisk(got-1, tt.highest)) {
			t.Errorf("SmallestClassWithin(%v) = %d is not the boundary", tt.highest, got)
		}
	}
}
