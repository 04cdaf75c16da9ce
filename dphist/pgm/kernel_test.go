package pgm

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// naiveIndex returns the row-major index over layout of the assignment x.
func naiveIndex(dom Domain, layout []int, x []int) int {
	k := 0
	for _, a := range layout {
		k = k*dom[a] + x[a]
	}
	return k
}

// TestMprojPermuted checks the run/odometer map against direct indexing for
// random layouts (permuted big tables, permuted factor tables).
func TestMprojPermuted(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for trial := 0; trial < 300; trial++ {
		n := 1 + rng.IntN(6)
		dom := make(Domain, n)
		for i := range dom {
			dom[i] = 1 + rng.IntN(4)
		}
		big := rng.Perm(n)
		if trial%3 == 0 {
			slices.Sort(big)
		}
		var subs [][]int
		for j := 0; j < 1+rng.IntN(4); j++ {
			var s []int
			for _, a := range big {
				if rng.IntN(2) == 0 {
					s = append(s, a)
				}
			}
			if rng.IntN(2) == 0 {
				slices.Sort(s)
			} else {
				rng.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
			}
			subs = append(subs, s)
		}
		p := newMproj(dom, big, subs)
		size := int(dom.cells(big))
		if p.size != size {
			t.Fatalf("size %d want %d", p.size, size)
		}
		// prodKernel of all but the last factor into the last, vs naive.
		vals := make([][]float64, len(subs)-1)
		for j := range vals {
			vals[j] = make([]float64, dom.cells(subs[j]))
			for i := range vals[j] {
				vals[j][i] = rng.Float64()
			}
		}
		got := make([]float64, dom.cells(subs[len(subs)-1]))
		sc := newScratch(len(subs))
		p.prodKernel(vals, got, sc)
		want := make([]float64, len(got))
		x := make([]int, n)
		for idx := 0; idx < size; idx++ {
			r := idx
			for i := len(big) - 1; i >= 0; i-- {
				x[big[i]] = r % dom[big[i]]
				r /= dom[big[i]]
			}
			v := 1.0
			for j := range vals {
				v *= vals[j][naiveIndex(dom, subs[j], x)]
			}
			want[naiveIndex(dom, subs[len(subs)-1], x)] += v
		}
		for i := range got {
			if math.Abs(got[i]-want[i]) > 1e-12*math.Max(1, math.Abs(want[i])) {
				t.Fatalf("trial %d dom %v big %v subs %v: cell %d got %v want %v", trial, dom, big, subs, i, got[i], want[i])
			}
		}
		// upKernel: same products stored cell by cell, same sums, split
		// over two run ranges.
		dst := make([]float64, size)
		got2 := make([]float64, len(got))
		mid := p.nouter / 2
		p.upKernel(dst, vals, got2, 0, mid, sc)
		p.upKernel(dst, vals, got2, mid, p.nouter, sc)
		total := p.upKernel(nil, vals, nil, 0, p.nouter, sc)
		wantTotal := 0.0
		for i := range got {
			wantTotal += want[i]
			if math.Abs(got2[i]-want[i]) > 1e-12*math.Max(1, math.Abs(want[i])) {
				t.Fatalf("upKernel trial %d: cell %d got %v want %v", trial, i, got2[i], want[i])
			}
		}
		if math.Abs(total-wantTotal) > 1e-12*math.Max(1, wantTotal) {
			t.Fatalf("upKernel total %v want %v", total, wantTotal)
		}
		// downKernel: scale by the last factor's table, sum into the others.
		scale := make([]float64, dom.cells(subs[len(subs)-1]))
		for i := range scale {
			scale[i] = rng.Float64()
		}
		tg := make([][]float64, len(vals))
		for j := range tg {
			tg[j] = make([]float64, len(vals[j]))
		}
		orig := append([]float64(nil), dst...)
		p.downKernel(dst, tg, scale, 0, 0, p.nouter, sc)
		wantT := make([][]float64, len(vals))
		for j := range wantT {
			wantT[j] = make([]float64, len(vals[j]))
		}
		for idx := 0; idx < size; idx++ {
			r := idx
			for i := len(big) - 1; i >= 0; i-- {
				x[big[i]] = r % dom[big[i]]
				r /= dom[big[i]]
			}
			k := naiveIndex(dom, big, x)
			v := orig[k] * scale[naiveIndex(dom, subs[len(subs)-1], x)]
			if math.Abs(dst[k]-v) > 1e-12*math.Max(1, v) {
				t.Fatalf("downKernel trial %d cell %d: %v want %v", trial, k, dst[k], v)
			}
			for j := range wantT {
				wantT[j][naiveIndex(dom, subs[j], x)] += v
			}
		}
		for j := range tg {
			for i := range tg[j] {
				if math.Abs(tg[j][i]-wantT[j][i]) > 1e-12*math.Max(1, wantT[j][i]) {
					t.Fatalf("downKernel trial %d target %d cell %d: %v want %v", trial, j, i, tg[j][i], wantT[j][i])
				}
			}
		}
	}
}
