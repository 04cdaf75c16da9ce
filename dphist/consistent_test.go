package dphist

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The helpers below work cell by cell on the definitions (digits of the mixed-radix
// index), sharing no code with Consistent.

// consDigits writes into d the digits of cell index i over the given domain sizes, the
// last varying fastest.
func consDigits(d []int, i int, dims []int) {
	for j := len(dims) - 1; j >= 0; j-- {
		d[j] = i % dims[j]
		i /= dims[j]
	}
}

// consSumDown sums a table over attrs down to the attributes sub ⊆ attrs.
func consSumDown(sizes, attrs []int, cells []float64, sub []int) []float64 {
	dims := make([]int, len(attrs))
	for j, a := range attrs {
		dims[j] = sizes[a]
	}
	n := 1
	for _, a := range sub {
		n *= sizes[a]
	}
	out := make([]float64, n)
	d := make([]int, len(attrs))
	for i, v := range cells {
		consDigits(d, i, dims)
		o := 0
		for _, a := range sub {
			j := slices.Index(attrs, a)
			o = o*sizes[a] + d[j]
		}
		out[o] += v
	}
	return out
}

// consAll is the list 0 … n−1.
func consAll(n int) []int {
	a := make([]int, n)
	for i := range a {
		a[i] = i
	}
	return a
}

// consPairs is every 2-attribute subset of n attributes.
func consPairs(n int) [][]int {
	var ps [][]int
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			ps = append(ps, []int{i, j})
		}
	}
	return ps
}

// consIntTable is a random table of small nonnegative integers over all attributes.
func consIntTable(r *rand.Rand, sizes []int) []float64 {
	n := 1
	for _, s := range sizes {
		n *= s
	}
	t := make([]float64, n)
	for i := range t {
		t[i] = float64(r.IntN(20))
	}
	return t
}

// consExact is the exact marginals over the given attribute sets of a full table.
func consExact(sizes []int, full []float64, sets [][]int) []Marginal {
	ms := make([]Marginal, len(sets))
	for i, a := range sets {
		ms[i] = Marginal{Attrs: a, Cells: consSumDown(sizes, consAll(len(sizes)), full, a)}
	}
	return ms
}

// consNoisy is a copy of ms with Gaussian noise of standard deviation sd on every cell.
func consNoisy(r *rand.Rand, ms []Marginal, sd float64) []Marginal {
	out := make([]Marginal, len(ms))
	for i, m := range ms {
		c := make([]float64, len(m.Cells))
		for j, v := range m.Cells {
			c[j] = v + sd*r.NormFloat64()
		}
		out[i] = Marginal{Attrs: m.Attrs, Cells: c}
	}
	return out
}

// consSqDist is Σ over marginals and cells of (a−b)².
func consSqDist(a, b []Marginal) float64 {
	d := 0.0
	for i := range a {
		for j := range a[i].Cells {
			e := a[i].Cells[j] - b[i].Cells[j]
			d += e * e
		}
	}
	return d
}

// consCompare fails t for the first cell of got that differs from want by more than tol.
func consCompare(t *testing.T, got, want []Marginal, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d marginals, want %d", len(got), len(want))
	}
	for i := range want {
		if !slices.Equal(got[i].Attrs, want[i].Attrs) {
			t.Fatalf("marginal %d: attrs %v, want %v", i, got[i].Attrs, want[i].Attrs)
		}
		if len(got[i].Cells) != len(want[i].Cells) {
			t.Fatalf("marginal %d: %d cells, want %d", i, len(got[i].Cells), len(want[i].Cells))
		}
		for j := range want[i].Cells {
			if d := math.Abs(got[i].Cells[j] - want[i].Cells[j]); !(d <= tol) {
				t.Fatalf("marginal %d %v cell %d: %v, want %v", i, want[i].Attrs, j, got[i].Cells[j], want[i].Cells[j])
			}
		}
	}
}

// TestConsistentFixedPoint: exact marginals of one table are already consistent, so they
// come back unchanged.
func TestConsistentFixedPoint(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sizes []int
		sets  [][]int
	}{
		{"all 2-way of 3", []int{3, 2, 4}, consPairs(3)},
		{"all 2-way of 4", []int{2, 5, 3, 4}, consPairs(4)},
		{"3-way, 2-way, 1-way", []int{4, 3, 2, 5}, [][]int{{0, 1, 3}, {1, 2}, {2, 3}, {0}, {2}}},
		{"total, repeats, full", []int{2, 3, 2}, [][]int{{}, {0, 2}, {0, 2}, {0, 1, 2}, {1}}},
		{"size-1 attribute", []int{3, 1, 4, 2}, [][]int{{0, 1}, {1, 2}, {0, 3}, {2, 3}}},
		{"16 attributes", []int{2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, [][]int{consAll(16), {3}, {0, 15}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			full := consIntTable(r, tc.sizes)
			in := consExact(tc.sizes, full, tc.sets)
			got, err := Consistent(tc.sizes, in)
			if err != nil {
				t.Fatal(err)
			}
			consCompare(t, got, in, 1e-9)
		})
	}
}

// TestConsistentOutputIsConsistent: from noisy marginals, every two outputs agree on
// their sums down to the attributes they share (the grand total when none).
func TestConsistentOutputIsConsistent(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sizes []int
		sets  [][]int
	}{
		{"all 2-way of 4", []int{3, 4, 2, 5}, consPairs(4)},
		{"mixed", []int{3, 4, 2, 5}, [][]int{{0, 1, 2}, {1, 3}, {2, 3}, {3}, {}, {0}}},
		{"disjoint", []int{3, 4, 2, 5}, [][]int{{0, 1}, {2, 3}, {0, 1}}},
		{"all 2-way of 6", []int{2, 3, 4, 5, 3, 2}, consPairs(6)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, 4))
			in := consNoisy(r, consExact(tc.sizes, consIntTable(r, tc.sizes), tc.sets), 5)
			got, err := Consistent(tc.sizes, in)
			if err != nil {
				t.Fatal(err)
			}
			// The noise moved the inputs off the consistent set: the test is not vacuous.
			if consSqDist(got, in) < 1 {
				t.Fatalf("output within %g of the noisy input", consSqDist(got, in))
			}
			for i := range got {
				for j := range i {
					var shared []int
					for _, a := range got[i].Attrs {
						if slices.Contains(got[j].Attrs, a) {
							shared = append(shared, a)
						}
					}
					for _, s := range [][]int{shared, {}} {
						x := consSumDown(tc.sizes, got[i].Attrs, got[i].Cells, s)
						y := consSumDown(tc.sizes, got[j].Attrs, got[j].Cells, s)
						for c := range x {
							if math.Abs(x[c]-y[c]) > 1e-9 {
								t.Fatalf("marginals %v and %v summed to %v differ at cell %d: %v, %v",
									got[i].Attrs, got[j].Attrs, s, c, x[c], y[c])
							}
						}
					}
				}
			}
		})
	}
}

// consMarginalMatrix is the matrix (rows: the cells of all marginals stacked; columns:
// the cells of the full table) that maps a full table to its marginals.
func consMarginalMatrix(sizes []int, sets [][]int) [][]float64 {
	all := consAll(len(sizes))
	n := 1
	for _, s := range sizes {
		n *= s
	}
	var rows [][]float64
	for _, a := range sets {
		m := 1
		for _, x := range a {
			m *= sizes[x]
		}
		block := make([][]float64, m)
		for i := range block {
			block[i] = make([]float64, n)
		}
		unit := make([]float64, n)
		for c := range n {
			unit[c] = 1
			for i, v := range consSumDown(sizes, all, unit, a) {
				block[i][c] = v
			}
			unit[c] = 0
		}
		rows = append(rows, block...)
	}
	return rows
}

// consSolveNormal returns one least-squares solution of M x ≈ y, by Gauss–Jordan
// elimination with full pivoting on the normal equations MᵀM x = Mᵀy; unknowns left
// free by a rank-deficient M are set to zero. It also returns the rank of M.
func consSolveNormal(t *testing.T, m [][]float64, y []float64) ([]float64, int) {
	t.Helper()
	n := len(m[0])
	a := make([][]float64, n)
	b := make([]float64, n)
	scale := 0.0
	for i := range n {
		a[i] = make([]float64, n)
		for j := range n {
			for k := range m {
				a[i][j] += m[k][i] * m[k][j]
			}
			scale = max(scale, math.Abs(a[i][j]))
		}
		for k := range m {
			b[i] += m[k][i] * y[k]
		}
	}
	perm := consAll(n) // perm[j]: the unknown in column j
	rank := 0
	for ; rank < n; rank++ {
		pi, pj, best := rank, rank, 0.0
		for i := rank; i < n; i++ {
			for j := rank; j < n; j++ {
				if v := math.Abs(a[i][j]); v > best {
					pi, pj, best = i, j, v
				}
			}
		}
		if best <= 1e-10*scale {
			break
		}
		a[rank], a[pi] = a[pi], a[rank]
		b[rank], b[pi] = b[pi], b[rank]
		for i := range n {
			a[i][rank], a[i][pj] = a[i][pj], a[i][rank]
		}
		perm[rank], perm[pj] = perm[pj], perm[rank]
		for i := range n {
			if i == rank {
				continue
			}
			f := a[i][rank] / a[rank][rank]
			for j := rank; j < n; j++ {
				a[i][j] -= f * a[rank][j]
			}
			b[i] -= f * b[rank]
		}
	}
	// The normal equations are always solvable: what is left of b must vanish.
	for i := rank; i < n; i++ {
		if math.Abs(b[i]) > 1e-8*(1+scale) {
			t.Fatalf("normal equations inconsistent after elimination: b[%d] = %g", i, b[i])
		}
	}
	x := make([]float64, n)
	for i := range rank {
		x[perm[i]] = b[i] / a[i][i]
	}
	return x, rank
}

// consApply is M x, cut into the marginals over sets.
func consApply(sizes []int, m [][]float64, x []float64, sets [][]int) []Marginal {
	out := make([]Marginal, len(sets))
	row := 0
	for i, a := range sets {
		n := 1
		for _, v := range a {
			n *= sizes[v]
		}
		c := make([]float64, n)
		for j := range c {
			for k, xv := range x {
				c[j] += m[row][k] * xv
			}
			row++
		}
		out[i] = Marginal{Attrs: a, Cells: c}
	}
	return out
}

// TestConsistentLeastSquares: Consistent's output equals the marginals of a brute-force
// least-squares fit of a full table to the noisy marginals, and its residual is
// orthogonal to every direction in which the marginals of a full table can move.
func TestConsistentLeastSquares(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sizes []int
		sets  [][]int
	}{
		{"all 2-way", []int{2, 3, 2}, consPairs(3)},
		{"1-way and 2-way", []int{2, 3, 2}, [][]int{{0}, {1, 2}, {0, 1}, {2}}},
		{"identical", []int{2, 3, 2}, [][]int{{0, 1}, {0, 1}, {2}}},
		{"total, full and 1-way", []int{2, 3, 2}, [][]int{{}, {0, 1, 2}, {1}}},
		{"all 2-way and total of 4", []int{2, 2, 3, 2}, append(consPairs(4), []int{})},
		{"chain with 3-way", []int{3, 2, 2, 2}, [][]int{{0, 1, 2}, {2, 3}, {3}, {0, 3}}},
		{"size-1 attribute", []int{3, 1, 4}, [][]int{{0, 1}, {1, 2}, {0, 2}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(5, 6))
			in := consNoisy(r, consExact(tc.sizes, consIntTable(r, tc.sizes), tc.sets), 3)
			got, err := Consistent(tc.sizes, in)
			if err != nil {
				t.Fatal(err)
			}
			m := consMarginalMatrix(tc.sizes, tc.sets)
			var y []float64
			for _, mg := range in {
				y = append(y, mg.Cells...)
			}
			x, _ := consSolveNormal(t, m, y)
			consCompare(t, got, consApply(tc.sizes, m, x, tc.sets), 1e-8)

			// Optimality directly: Mᵀ(output − input) = 0.
			var res []float64
			for i := range got {
				for j := range got[i].Cells {
					res = append(res, got[i].Cells[j]-in[i].Cells[j])
				}
			}
			for c := range m[0] {
				g := 0.0
				for k := range m {
					g += m[k][c] * res[k]
				}
				if math.Abs(g) > 1e-8 {
					t.Fatalf("residual not orthogonal to full-table cell %d: %g", c, g)
				}
			}
		})
	}
}

// TestConsistentReducesError: the output is the orthogonal projection of the noisy
// marginals onto a subspace that holds the true ones, so it is never farther from them;
// on average the squared error shrinks by the factor rank/cells.
func TestConsistentReducesError(t *testing.T) {
	sizes := []int{3, 2, 4, 3}
	sets := consPairs(4)
	const runs = 200
	var before, after float64
	cells := 0
	for seed := range uint64(runs) {
		r := rand.New(rand.NewPCG(seed, 7))
		truth := consExact(sizes, consIntTable(r, sizes), sets)
		noisy := consNoisy(r, truth, 2)
		got, err := Consistent(sizes, noisy)
		if err != nil {
			t.Fatal(err)
		}
		b, a := consSqDist(noisy, truth), consSqDist(got, truth)
		if a > b+1e-9 {
			t.Fatalf("seed %d: squared error %g after, %g before", seed, a, b)
		}
		before += b
		after += a
		cells = 0
		for _, m := range truth {
			cells += len(m.Cells)
		}
	}
	if !(after < before) {
		t.Fatalf("total squared error %g after, %g before", after, before)
	}
	// Noise e projects to P e with E‖P e‖² = rank·σ²: compare the ratio with rank/cells.
	// Over 200 runs the ratio has a relative standard error of about 2%; allow 10%.
	m := consMarginalMatrix(sizes, sets)
	_, rank := consSolveNormal(t, m, make([]float64, len(m)))
	want := float64(rank) / float64(cells)
	t.Logf("error ratio %.4f, rank/cells = %d/%d = %.4f", after/before, rank, cells, want)
	if got := after / before; math.Abs(got/want-1) > 0.1 {
		t.Errorf("error ratio %.4f, want about rank/cells = %d/%d = %.4f", got, rank, cells, want)
	}
}

// TestConsistentErrors: malformed input is reported, not panicked on.
func TestConsistentErrors(t *testing.T) {
	many := make([]int, 17)
	for i := range many {
		many[i] = 1
	}
	for _, tc := range []struct {
		name  string
		sizes []int
		ms    []Marginal
	}{
		{"index too large", []int{2, 3}, []Marginal{{Attrs: []int{2}, Cells: make([]float64, 2)}}},
		{"negative index", []int{2, 3}, []Marginal{{Attrs: []int{-1}, Cells: make([]float64, 2)}}},
		{"descending", []int{2, 3}, []Marginal{{Attrs: []int{1, 0}, Cells: make([]float64, 6)}}},
		{"repeated", []int{2, 3}, []Marginal{{Attrs: []int{0, 0}, Cells: make([]float64, 4)}}},
		{"too few cells", []int{2, 3}, []Marginal{{Attrs: []int{0, 1}, Cells: make([]float64, 5)}}},
		{"too many cells", []int{2, 3}, []Marginal{{Attrs: []int{}, Cells: make([]float64, 2)}}},
		{"bad second marginal", []int{2, 3}, []Marginal{
			{Attrs: []int{0}, Cells: make([]float64, 2)},
			{Attrs: []int{1}, Cells: make([]float64, 2)}}},
		{"zero size", []int{2, 0}, []Marginal{{Attrs: []int{0}, Cells: make([]float64, 2)}}},
		{"negative size", []int{-3, 2}, []Marginal{{Attrs: []int{1}, Cells: make([]float64, 2)}}},
		{"table too large", []int{1 << 13, 1 << 14}, []Marginal{{Attrs: []int{0, 1}}}},
		{"too many attributes", many, []Marginal{{Attrs: consAll(17), Cells: []float64{1}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Consistent(tc.sizes, tc.ms)
			if err == nil {
				t.Fatalf("no error; returned %v", got)
			}
			if got != nil {
				t.Errorf("returned %v with error %v", got, err)
			}
		})
	}
}

// TestConsistentInputUnchanged: the input marginals are left as they were, and the
// output shares no memory with them.
func TestConsistentInputUnchanged(t *testing.T) {
	sizes := []int{3, 4, 2}
	r := rand.New(rand.NewPCG(8, 9))
	in := consNoisy(r, consExact(sizes, consIntTable(r, sizes), consPairs(3)), 4)
	keep := make([]Marginal, len(in))
	for i, m := range in {
		keep[i] = Marginal{Attrs: slices.Clone(m.Attrs), Cells: slices.Clone(m.Cells)}
	}
	got, err := Consistent(sizes, in)
	if err != nil {
		t.Fatal(err)
	}
	consCompare(t, in, keep, 0)
	for i := range got {
		got[i].Cells[0] += 100
		got[i].Attrs[0] = 99
	}
	consCompare(t, in, keep, 0)

	if got, err := Consistent(sizes, nil); err != nil || len(got) != 0 {
		t.Errorf("no marginals: got %v, %v", got, err)
	}
}

// BenchmarkConsistent: all 2-way marginals of 8 attributes with 10–16 values each.
func BenchmarkConsistent(b *testing.B) {
	sizes := []int{10, 12, 14, 16, 11, 13, 15, 10}
	r := rand.New(rand.NewPCG(10, 11))
	var ms []Marginal
	cells := 0
	for _, a := range consPairs(len(sizes)) {
		c := make([]float64, sizes[a[0]]*sizes[a[1]])
		for i := range c {
			c[i] = 100 + 10*r.NormFloat64()
		}
		ms = append(ms, Marginal{Attrs: a, Cells: c})
		cells += len(c)
	}
	b.ReportMetric(float64(cells), "cells")
	for b.Loop() {
		if _, err := Consistent(sizes, ms); err != nil {
			b.Fatal(err)
		}
	}
}
