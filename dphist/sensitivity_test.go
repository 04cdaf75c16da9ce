package dphist

import (
	"math"
	"sanitizer/schema"
	"testing"
)

// TestMarginalsSensitivityCovers checks, by enumerating every contribution a bounded
// unit can make, that the (L0, L∞) given to the library for a marginals output bound
// the true change of all the marginals together: L1 ≤ L0·L∞ (Laplace) and
// L2 ≤ √L0·L∞ (Gaussian).
func TestMarginalsSensitivityCovers(t *testing.T) {
	sizes := []int{2, 2, 3}
	subsets := Subsets(len(sizes), 2)
	full := 2 * 2 * 3
	for _, unit := range []schema.PrivacyUnit{
		{MaxRowsPerUnit: 3},
		{MaxCellsPerUnit: 3},
		{MaxCellsPerUnit: 2, MaxRowsPerUnit: 2},
	} {
		l0, linf := CountSensitivity(&schema.DP{PrivacyUnit: &unit}, len(subsets))
		perCell := max(unit.MaxRowsPerUnit, 1)
		cells := unit.MaxCellsPerUnit
		if cells == 0 { // rows only: up to m rows anywhere
			cells, perCell = unit.MaxRowsPerUnit, unit.MaxRowsPerUnit
		}
		worstL1, worstL2 := 0.0, 0.0
		// Every multiset of up to `cells` full cells with up to perCell rows each, within
		// the row cap when there is one: enumerate weight vectors over the full cells.
		w := make([]int, full)
		var rec func(i, used, rows int)
		rec = func(i, used, rows int) {
			if i == full {
				var l1, l2 float64
				for _, s := range subsets {
					change := map[int]int{}
					for c, n := range w {
						if n == 0 {
							continue
						}
						v := []int{c / 6, (c / 3) % 2, c % 3}
						key := 0
						for _, a := range s {
							key = key*sizes[a] + v[a]
						}
						change[key] += n
					}
					for _, d := range change {
						l1 += float64(d)
						l2 += float64(d * d)
					}
				}
				worstL1, worstL2 = max(worstL1, l1), max(worstL2, math.Sqrt(l2))
				return
			}
			rec(i+1, used, rows)
			if used == cells {
				return
			}
			for n := 1; n <= perCell; n++ {
				if unit.MaxCellsPerUnit == 0 && rows+n > unit.MaxRowsPerUnit {
					break
				}
				w[i] = n
				rec(i+1, used+1, rows+n)
				w[i] = 0
			}
		}
		rec(0, 0, 0)
		if worstL1 > float64(l0*linf)+1e-9 || worstL2 > math.Sqrt(float64(l0))*float64(linf)+1e-9 {
			t.Errorf("unit %+v: (L0, L∞) = (%d, %d) gives L1 %d, L2 %.3f; a unit can change L1 %g, L2 %.3f",
				unit, l0, linf, l0*linf, math.Sqrt(float64(l0))*float64(linf), worstL1, worstL2)
		}
	}
}
