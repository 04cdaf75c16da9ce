package dphist

import "sanitizer/schema"

// CountSensitivity is the (L0, L∞) of a count in an output made of `parts` histograms
// over the same rows (1, or the number of marginals), under the neighbours and the
// privacy unit's bound of the configuration's dp section.
func CountSensitivity(dp *schema.DP, parts int) (l0, linf int64) {
	l0, linf = UnitSensitivity(dp)
	if parts > 1 {
		// A unit's cells are cells of the cross product of all the marginals' columns:
		// several of them may fall into one cell of a marginal, which then changes by
		// up to L0·L∞. Each marginal changes by at most L0·L∞ in L1 (and so in L2).
		l0, linf = int64(parts), l0*linf
	}
	if dp.Neighbours == schema.ReplaceOne {
		// Replacing a unit removes its contribution and adds another's: twice the
		// cells, each still changed by at most L∞ (counts only grow by contributions).
		l0 *= 2
	}
	return l0, linf
}

// UnitSensitivity is the (L0, L∞) of one histogram's counts under add-remove
// neighbours: (1, 1) without a privacy unit, else what the unit's bound gives.
func UnitSensitivity(dp *schema.DP) (l0, linf int64) {
	if u := dp.PrivacyUnit; u != nil {
		return Bound{Cells: u.MaxCellsPerUnit, Rows: u.MaxRowsPerUnit}.Sensitivity()
	}
	return 1, 1
}
