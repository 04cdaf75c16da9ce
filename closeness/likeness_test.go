package closeness

import (
	"math"
	"testing"
)

// TestLikeness: a table of 100 records, values a, b, c held by 50, 40 and 10; classes
// on both sides of each bound, by hand.
func TestLikeness(t *testing.T) {
	ref, err := NewReference([]int64{50, 40, 10}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		vals, cnts []int32
		gain       float64 // the largest relative gain
		beta       float64
		basic, enh bool // β-likeness holds, basic and enhanced
	}{
		// 4 of 5 hold a: 0.8 vs 0.5, gain 0.6.
		{"a gains 0.6, beta 0.6", []int32{0, 1}, []int32{4, 1}, 0.6, 0.6, true, true},
		{"a gains 0.6, beta 0.59", []int32{0, 1}, []int32{4, 1}, 0.6, 0.59, false, false},
		// c in 1 of 5: 0.2 vs 0.1, gain 1. −ln 0.1 = 2.30: enhanced's limit is β.
		{"c gains 1, beta 1", []int32{0, 2}, []int32{4, 1}, 1, 1, true, true},
		{"c gains 1, beta 0.99", []int32{0, 2}, []int32{4, 1}, 1, 0.99, false, false},
		// a in 9 of 10: 0.9 vs 0.5, gain 0.8; −ln 0.5 = 0.693 < 0.8: basic holds with
		// β = 1, enhanced does not.
		{"a gains 0.8, beta 1", []int32{0, 1}, []int32{9, 1}, 0.8, 1, true, false},
		// the class's shares below the table's: nothing gains.
		{"no gain", []int32{0, 1, 2}, []int32{5, 4, 1}, 0, 0, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ref.MaxGain(tt.vals, tt.cnts); math.Abs(got-tt.gain) > 1e-12 {
				t.Errorf("gain %v, want %v", got, tt.gain)
			}
			if got := ref.Likeness(tt.vals, tt.cnts, tt.beta, false); got != tt.basic {
				t.Errorf("basic: %v, want %v", got, tt.basic)
			}
			if got := ref.Likeness(tt.vals, tt.cnts, tt.beta, true); got != tt.enh {
				t.Errorf("enhanced: %v, want %v", got, tt.enh)
			}
			// The dense form agrees.
			p := make([]int64, 3)
			for k, v := range tt.vals {
				p[v] = int64(tt.cnts[k])
			}
			for _, enhanced := range []bool{false, true} {
				gain, holds, err := LikenessOf(p, []int64{50, 40, 10}, tt.beta, enhanced)
				want := tt.basic
				if enhanced {
					want = tt.enh
				}
				if err != nil || math.Abs(gain-tt.gain) > 1e-12 || holds != want {
					t.Errorf("dense, enhanced %v: gain %v holds %v (%v), want %v %v", enhanced, gain, holds, err, tt.gain, want)
				}
			}
		})
	}
	// A value the table does not hold gains without bound.
	zero, err := NewReference([]int64{5, 0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if g := zero.MaxGain([]int32{1}, []int32{1}); !math.IsInf(g, 1) || zero.Likeness([]int32{1}, []int32{1}, 100, false) {
		t.Errorf("a value the table lacks: gain %v", g)
	}
}

// TestLikenessUnionOfPassingClasses: the union of two classes that meet β-likeness
// meets it (each value's share in the union lies between its shares in the parts),
// which is what makes the model monotone under generalization without suppression.
func TestLikenessUnionOfPassingClasses(t *testing.T) {
	ref, err := NewReference([]int64{30, 30, 25, 10, 5}, nil)
	if err != nil {
		t.Fatal(err)
	}
	classes := [][]int32{{3, 3, 2, 1, 0}, {1, 2, 3, 1, 1}, {4, 2, 2, 1, 0}, {2, 3, 2, 0, 1}, {0, 1, 1, 1, 0}}
	bothPass := 0
	for _, beta := range []float64{0.5, 1, 2} {
		for _, enhanced := range []bool{false, true} {
			for i, a := range classes {
				for _, b := range classes[i+1:] {
					vals := []int32{0, 1, 2, 3, 4}
					u := make([]int32, 5)
					for v := range u {
						u[v] = a[v] + b[v]
					}
					if !ref.Likeness(vals, a, beta, enhanced) || !ref.Likeness(vals, b, beta, enhanced) {
						continue
					}
					bothPass++
					if !ref.Likeness(vals, u, beta, enhanced) {
						t.Errorf("β=%g enhanced=%v: %v and %v pass, their union %v fails", beta, enhanced, a, b, u)
					}
				}
			}
		}
	}
	if bothPass < 10 {
		t.Errorf("only %d pairs of passing classes: the test checks too little", bothPass)
	}
}
