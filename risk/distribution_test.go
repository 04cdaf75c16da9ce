package risk

import (
	"slices"
	"testing"
)

func TestFromSizes(t *testing.T) {
	tests := []struct {
		name             string
		sizes            []int64
		records, classes int64
		counts           []SizeCount
		smallest, larges int64
	}{
		{"empty", nil, 0, 0, []SizeCount{}, 0, 0},
		{"zeros are no class", []int64{0, 0}, 0, 0, []SizeCount{}, 0, 0},
		{"one class", []int64{7}, 7, 1, []SizeCount{{7, 1}}, 7, 7},
		{"mixed", []int64{3, 1, 3, 0, 2, 1, 1}, 11, 6, []SizeCount{{1, 3}, {2, 1}, {3, 2}}, 1, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := FromSizes(tt.sizes)
			if err != nil {
				t.Fatal(err)
			}
			if d.Records() != tt.records || d.Classes() != tt.classes || d.Smallest() != tt.smallest || d.Largest() != tt.larges {
				t.Errorf("records %d classes %d smallest %d largest %d, want %d %d %d %d", d.Records(), d.Classes(), d.Smallest(), d.Largest(), tt.records, tt.classes, tt.smallest, tt.larges)
			}
			if !slices.Equal(d.Counts(), tt.counts) {
				t.Errorf("counts %v, want %v", d.Counts(), tt.counts)
			}
			for _, c := range tt.counts {
				if got := d.ClassesOfSize(c.Size); got != c.Classes {
					t.Errorf("ClassesOfSize(%d) = %d, want %d", c.Size, got, c.Classes)
				}
			}
			if got := d.ClassesOfSize(1000); got != 0 {
				t.Errorf("ClassesOfSize(1000) = %d", got)
			}
		})
	}
}

func TestFromCountsMergesAndRefuses(t *testing.T) {
	d, err := FromCounts([]SizeCount{{2, 1}, {1, 4}, {2, 3}, {5, 0}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []SizeCount{{1, 4}, {2, 4}}; !slices.Equal(d.Counts(), want) || d.Records() != 12 || d.Classes() != 8 {
		t.Errorf("got %v (%d records, %d classes), want %v (12, 8)", d.Counts(), d.Records(), d.Classes(), want)
	}
	for _, bad := range [][]SizeCount{{{0, 1}}, {{-1, 1}}, {{3, -1}}} {
		if _, err := FromCounts(bad); err == nil {
			t.Errorf("FromCounts(%v): no error", bad)
		}
	}
	if _, err := FromSizes([]int64{1, -2}); err == nil {
		t.Error("FromSizes with a negative size: no error")
	}
}
