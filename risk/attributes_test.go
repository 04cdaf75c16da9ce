package risk

import "testing"

func TestDistinctionSeparation(t *testing.T) {
	tests := []struct {
		name                    string
		sizes                   []int64
		distinction, separation float64
	}{
		{"empty", nil, 0, 1},
		{"one record", []int64{1}, 1, 1},
		{"all unique", []int64{1, 1, 1, 1, 1}, 1, 1},
		{"one combination", []int64{6}, 1.0 / 6, 0},
		// classes 2 and 3: 5 records, 10 pairs, of which 1 + 3 share a combination.
		{"two classes", []int64{2, 3}, 2.0 / 5, 1 - 4.0/10},
		// classes 1, 1, 2: 4 records, 6 pairs, 1 alike.
		{"uniques and a pair", []int64{1, 1, 2}, 3.0 / 4, 5.0 / 6},
		// classes 2, 2, 3: 7 records, 21 pairs, 1 + 1 + 3 alike.
		{"classes of one size", []int64{2, 2, 3}, 3.0 / 7, 1 - 5.0/21},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := dist(t, tt.sizes...)
			if got := Distinction(d); !near(got, tt.distinction) {
				t.Errorf("distinction %v, want %v", got, tt.distinction)
			}
			if got := Separation(d); !near(got, tt.separation) {
				t.Errorf("separation %v, want %v", got, tt.separation)
			}
		})
	}
}

// Separation counted pair by pair over records labelled with their class.
func TestSeparationByPairs(t *testing.T) {
	sizes := []int64{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5}
	var label []int
	for c, s := range sizes {
		for range s {
			label = append(label, c)
		}
	}
	var pairs, differ float64
	for i := range label {
		for j := i + 1; j < len(label); j++ {
			pairs++
			if label[i] != label[j] {
				differ++
			}
		}
	}
	if got := Separation(dist(t, sizes...)); !near(got, differ/pairs) {
		t.Errorf("separation %v, by pairs %v", got, differ/pairs)
	}
}
