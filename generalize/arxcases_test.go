package generalize

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"sanitizer/diversity"
	"sanitizer/schema"
)

// TestARXCasesAdult ports ARX's published anonymization cases on Adult for the
// models issue 22 adds: the parameters and expected nodes of TestAnonymizationBLikeness
// (its Adult cases) and TestAnonymizationEntropyLDiversity (its Adult cases), written as
// cases of our own. ARX optimizes its own loss (a geometric mean) or entropy there, so
// its node need not be ours; what must hold is that:
//   - ARX's node meets our implementation of the model within ARX's suppression limit
//     (our β-likeness and Grassberger's estimator agree with ARX's on it);
//   - where ARX finds no solution, neither does our search;
//   - our search's node meets the model too, and its loss (ours: the objective) is at
//     most that of ARX's node, which the test measures and logs.
//
// Node vectors are written in ARX's column order (the file's: sex, age, race,
// marital-status, education, native-country, workclass, salary-class) and reordered
// to adultQI's.
func TestARXCasesAdult(t *testing.T) {
	if testing.Short() {
		t.Skip("searches Adult for twelve cases")
	}
	t.Parallel() // the long Adult tests run beside one another, on both cores
	tab, _, _ := loadAdult(t)
	adultOccupation(t, tab)
	likeness := func(beta float64, enhanced bool) Options {
		return Options{Likeness: []Likeness{{Column: 0, Beta: beta, Enhanced: enhanced}}}
	}
	entropy := func(l float64, est string) Options {
		return Options{Diversity: []Diversity{{0, diversity.Model{Variant: diversity.Entropy, L: l, Estimator: est}}}}
	}
	cases := []struct {
		name string
		supp float64
		opt  Options
		arx  []int // nil: ARX finds no solution
	}{
		{"BLikeness 0: basic β=3, 50%", 0.5, likeness(3, false), []int{0, 3, 0, 0, 2, 0, 1, 0}},
		{"BLikeness 1: enhanced β=2, 0%", 0, likeness(2, true), []int{1, 4, 1, 1, 3, 2, 2, 0}},
		{"BLikeness 2: basic β=1, 100%", 1, likeness(1, false), []int{1, 4, 0, 1, 3, 0, 2, 0}},
		{"BLikeness 3: enhanced β=10, 100%", 1, likeness(10, true), []int{0, 3, 0, 0, 3, 1, 2, 0}},
		{"BLikeness 4: basic β=5, 40%", 0.4, likeness(5, false), []int{0, 2, 0, 0, 2, 0, 1, 0}},
		{"EntropyLDiversity 0: Grassberger l=5, 4%", 0.04, entropy(5, diversity.Grassberger), []int{1, 0, 1, 0, 3, 2, 2, 0}},
		{"EntropyLDiversity 1: Shannon l=100, 4%", 0.04, entropy(100, diversity.Shannon), nil},
		{"EntropyLDiversity 2: Grassberger l=5, 0%", 0, entropy(5, diversity.Grassberger), []int{1, 1, 1, 1, 3, 2, 2, 1}},
		{"EntropyLDiversity 3: Grassberger l=3, 5%", 0.05, entropy(3, diversity.Grassberger), []int{0, 0, 1, 1, 2, 2, 2, 0}},
		{"EntropyLDiversity 4: Shannon l=5, 4%", 0.04, entropy(5, diversity.Shannon), []int{1, 0, 1, 1, 2, 2, 2, 1}},
		{"EntropyLDiversity 5: Grassberger l=100, 10%", 0.1, entropy(100, diversity.Grassberger), nil},
	}
	arxOrder := []string{"sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"}
	ours := func(arx []int) []int {
		out := make([]int, len(adultQI))
		for i, name := range adultQI {
			out[i] = arx[slices.Index(arxOrder, name)]
		}
		return out
	}
	values := make([][]float64, len(tab.Columns))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opt := c.opt
			opt.K = 1
			opt.MaxSuppressed = int(math.Floor(c.supp * float64(tab.Rows)))
			res, err := Search(context.Background(), tab, opt)
			if c.arx == nil {
				if !errors.Is(err, schema.ErrUnattainable) {
					t.Fatalf("ARX finds no solution; the search: %v, %v", res, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			node := ours(c.arx)
			class, covers, err := NodeClasses(tab, node, opt)
			if err != nil {
				t.Fatal(err)
			}
			suppressed := 0
			for _, cl := range class {
				if cl < 0 {
					suppressed++
				}
			}
			if suppressed > opt.MaxSuppressed {
				t.Fatalf("ARX's node %v needs %d records suppressed under our model, the limit is %d", node, suppressed, opt.MaxSuppressed)
			}
			arx, err := Utility(tab, class, covers, values, 1)
			if err != nil {
				t.Fatal(err)
			}
			if res.Value > arx.Loss+1e-12 {
				t.Errorf("our node %v has loss %.6f, ARX's %v %.6f: the search missed a better node", res.Levels, res.Value, node, arx.Loss)
			}
			t.Logf("ARX's node %v: %d suppressed, loss %.4f; ours %v: %d suppressed, loss %.4f", node, suppressed, arx.Loss, res.Levels, res.Suppressed, res.Value)
		})
	}
}
