package safepub

import (
	"math"
	"testing"
)

// TestDegreeLevel: the levels of ARX's degrees as ARX computes them
// (Math.round(factor · maximum level) in doubles), for every top level up to 40,
// and ARX's LOW_MEDIUM node of Adult ({0, 2, 0, 1, 1, 1, 1, 1, 0} for sex, age,
// race, marital-status, education, native-country, workclass, occupation,
// salary-class, whose top levels are 1, 4, 1, 2, 3, 2, 2, 2, 1).
func TestDegreeLevel(t *testing.T) {
	factor := map[Degree]float64{Low: 0.2, LowMedium: 0.4, Medium: 0.5, MediumHigh: 0.6, High: 0.8}
	for d, f := range factor {
		for top := range 41 {
			if got, want := d.Level(top, 0, top), int(math.Floor(f*float64(top)+0.5)); got != want {
				t.Errorf("%v at top %d: level %d, ARX's %d", d, top, got, want)
			}
		}
		if got := d.Level(4, 3, 3); got != 3 {
			t.Errorf("%v bounded to 3..3: %d", d, got)
		}
	}
	tops := []int{1, 4, 1, 2, 3, 2, 2, 2, 1}
	want := []int{0, 2, 0, 1, 1, 1, 1, 1, 0}
	for i, top := range tops {
		if got := LowMedium.Level(top, 0, top); got != want[i] {
			t.Errorf("LOW_MEDIUM, column %d (top %d): level %d, ARX's %d", i, top, got, want[i])
		}
	}
	seen := map[string]bool{}
	for _, d := range AllDegrees {
		if seen[d.String()] || d.Level(10, 0, 10) != tenths[d] {
			t.Errorf("degree %v: a name given twice, or level %d of a height of 10", d, d.Level(10, 0, 10))
		}
		seen[d.String()] = true
	}
}
