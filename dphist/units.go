package dphist

import (
	"cmp"
	"math/bits"
	"runtime"
	"slices"

	"sanitizer/internal/safe"
)

// SameUnits reports whether the 64-bit unit hashes name units exactly: every two rows
// with equal unit[r] also have equal check[r] (a second, independent 64 bits of the
// id's hash). When it is false two different ids share a unit hash, and bounding them
// as one unit would let one change the other's kept rows; the caller must refuse.
func SameUnits(unit, check []uint64) bool {
	n := len(unit)
	if n == 0 {
		return true
	}
	// Scatter (hash, check) pairs into buckets by the top bits of the mixed hash, then
	// sort each bucket (a few thousand pairs, in cache) and compare neighbours.
	topBits := min(boundBits, max(bits.Len(uint(n))-12, 0))
	shift := 64 - topBits
	count := make([]int, 1<<topBits+1)
	for _, u := range unit {
		count[boundMix(u)>>shift+1]++
	}
	for d := 1; d < len(count); d++ {
		count[d] += count[d-1]
	}
	type pair struct{ g, check uint64 }
	pairs := make([]pair, n)
	next := slices.Clone(count[:len(count)-1])
	for r, u := range unit {
		g := boundMix(u)
		j := &next[g>>shift]
		pairs[*j] = pair{g, check[r]}
		*j++
	}
	// The buckets are independent: shared out among the processors.
	parts := min(runtime.GOMAXPROCS(0), 1<<topBits)
	same := make([]bool, parts)
	safe.MustParallel(parts, func(p int) {
		same[p] = true
		for d := (1 << topBits) * p / parts; d < (1<<topBits)*(p+1)/parts; d++ {
			b := pairs[count[d]:count[d+1]]
			slices.SortFunc(b, func(x, y pair) int { return cmp.Compare(x.g, y.g) })
			for i := 1; i < len(b); i++ {
				if b[i].g == b[i-1].g && b[i].check != b[i-1].check {
					same[p] = false
					return
				}
			}
		}
	})
	return !slices.Contains(same, false)
}
