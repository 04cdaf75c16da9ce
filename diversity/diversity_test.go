package diversity

import (
	"math"
	"testing"
)

func TestValuesAndEntropy(t *testing.T) {
	for _, c := range []struct {
		counts  []int64
		values  int
		entropy float64
	}{
		{nil, 0, 0},
		{[]int64{0, 0}, 0, 0},
		{[]int64{7}, 1, 0},
		{[]int64{1, 1}, 2, math.Ln2},
		{[]int64{5, 0, 5}, 2, math.Ln2},
		{[]int64{1, 1, 1, 1}, 4, math.Log(4)},
		// p = (1/2, 1/4, 1/4): 1.5 ln 2
		{[]int64{2, 1, 1}, 3, 1.5 * math.Ln2},
		// p = (0.9, 0.1)
		{[]int64{9, 1}, 2, -(0.9*math.Log(0.9) + 0.1*math.Log(0.1))},
	} {
		if got := Values(c.counts); got != c.values {
			t.Errorf("Values(%v) = %d, want %d", c.counts, got, c.values)
		}
		if got := EntropyOf(c.counts); math.Abs(got-c.entropy) > 1e-12 {
			t.Errorf("EntropyOf(%v) = %.15g, want %.15g", c.counts, got, c.entropy)
		}
	}
}

// TestHolds checks every variant on both sides of its boundary, with hand-computed
// cases.
func TestHolds(t *testing.T) {
	for _, c := range []struct {
		name   string
		m      Model
		counts []int64
		want   bool
	}{
		{"distinct 3 of 3", Model{Variant: Distinct, L: 3}, []int64{5, 1, 1}, true},
		{"distinct 2 of 3", Model{Variant: Distinct, L: 3}, []int64{6, 0, 1}, false},
		{"distinct 1 of 1", Model{Variant: Distinct, L: 1}, []int64{4}, true},
		// l equally frequent values: entropy exactly ln l, for many sizes.
		{"entropy uniform 3", Model{Variant: Entropy, L: 3}, []int64{7, 7, 7}, true},
		{"entropy uniform 3 large", Model{Variant: Entropy, L: 3}, []int64{1000003, 1000003, 1000003}, true},
		{"entropy uniform 7", Model{Variant: Entropy, L: 7}, []int64{3, 3, 3, 3, 3, 3, 3}, true},
		{"entropy 3 values not uniform", Model{Variant: Entropy, L: 3}, []int64{3, 2, 2}, false},
		// (2,1,1): 1.5 ln 2 ≈ 1.0397 ≥ ln 2.8 ≈ 1.0296 but < ln 2.9 ≈ 1.0647
		{"entropy 2.8", Model{Variant: Entropy, L: 2.8}, []int64{2, 1, 1}, true},
		{"entropy 2.9", Model{Variant: Entropy, L: 2.9}, []int64{2, 1, 1}, false},
		// recursive (c,l): r1 < c·(r_l + … + r_m)
		// (4,3,2,1), l=3: tail 2+1 = 3; c=2: 4 < 6 holds; c=4/3: 4 < 4 fails
		{"recursive (2,3)", Model{Variant: Recursive, L: 3, C: 2}, []int64{1, 3, 4, 2}, true},
		{"recursive (4/3,3) equality fails", Model{Variant: Recursive, L: 3, C: 4.0 / 3}, []int64{4, 3, 2, 1}, false},
		{"recursive (1.34,3)", Model{Variant: Recursive, L: 3, C: 1.34}, []int64{4, 3, 2, 1}, true},
		// (4,3) of the issue: (5,3,2,2): tail from r3 = 2+2 = 4, 5 < 16
		{"recursive (4,3)", Model{Variant: Recursive, L: 3, C: 4}, []int64{5, 3, 2, 2}, true},
		// (9,1,1): tail 1; 9 < 4 fails
		{"recursive (4,3) skewed", Model{Variant: Recursive, L: 3, C: 4}, []int64{9, 1, 1}, false},
		// (8,1,1,1): tail r3+r4 = 2; 8 < 8 fails; (7,1,1,1): 7 < 8 holds
		{"recursive (4,3) boundary fails", Model{Variant: Recursive, L: 3, C: 4}, []int64{8, 1, 1, 1}, false},
		{"recursive (4,3) boundary holds", Model{Variant: Recursive, L: 3, C: 4}, []int64{7, 1, 1, 1}, true},
		{"recursive too few values", Model{Variant: Recursive, L: 3, C: 100}, []int64{1, 1, 0}, false},
		// l = 1: r1 < c·(r1 + … + rm), holds for c > 1
		{"recursive l=1", Model{Variant: Recursive, L: 1, C: 1.5}, []int64{3}, true},
		{"recursive l=1 c=1", Model{Variant: Recursive, L: 1, C: 1}, []int64{3}, false},
	} {
		if err := c.m.Check(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := c.m.Holds(c.counts); got != c.want {
			t.Errorf("%s: Holds(%v) = %v, want %v", c.name, c.counts, got, c.want)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		m  Model
		ok bool
	}{
		{Model{Variant: Distinct, L: 2}, true},
		{Model{Variant: Distinct, L: 2.5}, false},
		{Model{Variant: Entropy, L: 2.5}, true},
		{Model{Variant: Entropy, L: 0.5}, false},
		{Model{Variant: Entropy, L: math.NaN()}, false},
		{Model{Variant: Entropy, L: math.Inf(1)}, false},
		{Model{Variant: Recursive, L: 3, C: 4}, true},
		{Model{Variant: Recursive, L: 3, C: 0}, false},
		{Model{Variant: Recursive, L: 3, C: -1}, false},
		{Model{Variant: "probabilistic", L: 3}, false},
	} {
		if err := c.m.Check(); (err == nil) != c.ok {
			t.Errorf("Check(%+v) = %v, want ok %v", c.m, err, c.ok)
		}
	}
}
