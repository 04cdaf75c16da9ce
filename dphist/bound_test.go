package dphist

import (
	"errors"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"sanitizer/fault"
	"sanitizer/internal/safe"
)

// boundTable is a table of rows with a unit hash and a cell each, its rows shuffled.
type boundTable struct {
	unit, cell []uint64
}

// randomBoundTable makes units units: most with 1–8 rows, every tenth with up to 60, a
// few with hundreds; cells are drawn from a small domain (up to 12 cells, 40 for the
// largest units) so units repeat cells. With smallHashes the unit hashes are 0, 1, 2, …
// (as from an identity "hash"), else random.
func randomBoundTable(rng *rand.Rand, units int, smallHashes bool) boundTable {
	var t boundTable
	for u := range units {
		h := rng.Uint64()
		if smallHashes {
			h = uint64(u)
		}
		n := 1 + rng.IntN(8)
		switch {
		case u%50 == 7:
			n = 200 + rng.IntN(400)
		case u%10 == 3:
			n = 1 + rng.IntN(60)
		}
		domain := uint64(1 + rng.IntN(12))
		if n > 100 {
			domain = uint64(1 + rng.IntN(40))
		}
		for range n {
			t.unit = append(t.unit, h)
			t.cell = append(t.cell, rng.Uint64N(domain)*0x1000_0000_0001)
		}
	}
	rng.Shuffle(len(t.unit), func(i, j int) {
		t.unit[i], t.unit[j] = t.unit[j], t.unit[i]
		t.cell[i], t.cell[j] = t.cell[j], t.cell[i]
	})
	return t
}

// boundUnitStats is what a unit has and what it kept: rows per cell.
type boundUnitStats struct {
	rows, kept map[uint64]int
}

// boundSum is the number of rows over all cells.
func boundSum(m map[uint64]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func boundStats(t boundTable, keep []bool) map[uint64]boundUnitStats {
	st := map[uint64]boundUnitStats{}
	for r, u := range t.unit {
		s, ok := st[u]
		if !ok {
			s = boundUnitStats{map[uint64]int{}, map[uint64]int{}}
			st[u] = s
		}
		s.rows[t.cell[r]]++
		if keep[r] {
			s.kept[t.cell[r]]++
		}
	}
	return st
}

var boundConfigs = []Bound{
	{Cells: 1},
	{Cells: 2},
	{Cells: 3, Rows: 2},
	{Cells: 1, Rows: 4},
	{Cells: 5, Rows: 100},
	{Rows: 1},
	{Rows: 3},
	{Rows: 50},
}

func boundRunKeep(t *testing.T, b Bound, tab boundTable) []bool {
	t.Helper()
	keep := make([]bool, len(tab.unit))
	for i := range keep {
		keep[i] = i%3 == 0 // Keep must overwrite every flag
	}
	n, err := b.Keep(tab.unit, tab.cell, keep)
	if err != nil {
		t.Fatalf("%+v: %v", b, err)
	}
	kept := 0
	for _, k := range keep {
		if k {
			kept++
		}
	}
	if n != kept {
		t.Fatalf("%+v: Keep returned %d, but %d rows are flagged", b, n, kept)
	}
	return keep
}

// TestBoundCaps: after Keep no unit has more kept cells than Cells, more kept rows in a
// cell than Rows (1 when 0) with Cells set, or more kept rows than Rows without; a unit
// already within the caps keeps every row.
func TestBoundCaps(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, small := range []bool{false, true} {
		tab := randomBoundTable(rng, 3000, small)
		for _, b := range boundConfigs {
			b.Seed = rng.Uint64()
			keep := boundRunKeep(t, b, tab)
			within := 0
			for u, s := range boundStats(tab, keep) {
				capped := false
				if b.Cells > 0 {
					if len(s.kept) > b.Cells {
						t.Fatalf("%+v: unit %x keeps %d cells", b, u, len(s.kept))
					}
					for c, k := range s.kept {
						if k > max(b.Rows, 1) {
							t.Fatalf("%+v: unit %x keeps %d rows in cell %x", b, u, k, c)
						}
					}
					capped = len(s.rows) > b.Cells
					for _, k := range s.rows {
						capped = capped || k > max(b.Rows, 1)
					}
				} else {
					if k := boundSum(s.kept); k > b.Rows {
						t.Fatalf("%+v: unit %x keeps %d rows", b, u, k)
					}
					capped = boundSum(s.rows) > b.Rows
				}
				if !capped {
					within++
					if boundSum(s.kept) != boundSum(s.rows) {
						t.Fatalf("%+v: unit %x is within the caps but keeps %d of %d rows", b, u, boundSum(s.kept), boundSum(s.rows))
					}
				}
			}
			if within == 0 && b.Rows < 100 {
				t.Fatalf("%+v: no unit within the caps; the test checks nothing", b)
			}
		}
	}
}

// TestBoundMaximal: a unit over the caps keeps exactly the caps: min(Cells, distinct)
// cells and min(Rows or 1, rows there) rows in each kept cell; min(Rows, rows) rows
// without Cells.
func TestBoundMaximal(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, small := range []bool{false, true} {
		tab := randomBoundTable(rng, 3000, small)
		for _, b := range boundConfigs {
			b.Seed = rng.Uint64()
			keep := boundRunKeep(t, b, tab)
			for u, s := range boundStats(tab, keep) {
				if b.Cells == 0 {
					if got, want := boundSum(s.kept), min(b.Rows, boundSum(s.rows)); got != want {
						t.Fatalf("%+v: unit %x keeps %d rows, want %d", b, u, got, want)
					}
					continue
				}
				if got, want := len(s.kept), min(b.Cells, len(s.rows)); got != want {
					t.Fatalf("%+v: unit %x keeps %d of %d cells, want %d", b, u, got, len(s.rows), want)
				}
				for c, k := range s.kept {
					if want := min(max(b.Rows, 1), s.rows[c]); k != want {
						t.Fatalf("%+v: unit %x keeps %d of %d rows in cell %x, want %d", b, u, k, s.rows[c], c, want)
					}
				}
			}
		}
	}
}

// TestBoundStable: inserting a new unit's rows at random positions and removing some
// rows of a third unit leaves every decision about every other unit's rows as it was.
// (The tables are about 30,000 rows, and the changed ones over 2¹⁵ = boundParallel,
// where Keep starts cutting the work into parts: that must not matter either.)
func TestBoundStable(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, small := range []bool{false, true} {
		tab := randomBoundTable(rng, 2000, small)
		// The removed unit: one with many rows, so its removal shifts a lot.
		count := map[uint64]int{}
		for _, u := range tab.unit {
			count[u]++
		}
		var third uint64
		for u, c := range count {
			if c > count[third] {
				third = u
			}
		}
		inserted := rng.Uint64()
		if small {
			inserted = 5000 // also small
		}
		if count[inserted] > 0 {
			t.Fatal("the inserted unit is already there")
		}
		var mod boundTable
		var from []int // row of tab, or -1 for an inserted row
		for r := range tab.unit {
			for rng.IntN(10) == 0 {
				mod.unit = append(mod.unit, inserted)
				mod.cell = append(mod.cell, rng.Uint64N(6)*0x1000_0000_0001)
				from = append(from, -1)
			}
			if tab.unit[r] == third && rng.IntN(3) == 0 {
				continue
			}
			mod.unit = append(mod.unit, tab.unit[r])
			mod.cell = append(mod.cell, tab.cell[r])
			from = append(from, r)
		}
		t.Logf("%d rows, %d once changed", len(tab.unit), len(mod.unit))
		for _, b := range boundConfigs {
			b.Seed = rng.Uint64()
			before, after := boundRunKeep(t, b, tab), boundRunKeep(t, b, mod)
			checked := 0
			for i, r := range from {
				if r < 0 || tab.unit[r] == third {
					continue
				}
				checked++
				if before[r] != after[i] {
					t.Fatalf("%+v: row %d of unit %x: kept %v, and %v once other units changed", b, r, tab.unit[r], before[r], after[i])
				}
			}
			if checked < len(tab.unit)/2 {
				t.Fatalf("checked only %d rows", checked)
			}
		}
	}
}

// boundChiSquare is Pearson's statistic for counts against equal expected frequencies.
func boundChiSquare(counts map[uint64]int, categories, total int) float64 {
	e := float64(total) / float64(categories)
	x := 0.0
	for _, c := range counts {
		x += (float64(c) - e) * (float64(c) - e) / e
	}
	return x + float64(categories-len(counts))*e // unseen categories
}

// The chi-square critical values below are the upper 10⁻⁶ quantiles of the
// chi-square distribution with categories − 1 degrees of freedom (computed from the
// regularized incomplete gamma function): 44.81 for 9, 54.64 for 14 and 96.13 for 39.
// With 30,000 seeds every category expects at least 750 draws, far into the range where
// Pearson's statistic follows that distribution. A uniform sampler exceeds them with
// probability 10⁻⁶ (and the seeds are fixed: a passing test passes every time), while a
// bias of a few percent fails: 10% too many draws for 5 of the 15 pairs and 5% too few
// for the other 10 give 5·200²/2000 + 10·100²/2000 = 150.
const boundSeeds = 30000

// boundKeptMask runs Keep on a table of at most 64 rows and returns the kept rows as a
// bit mask.
func boundKeptMask(t *testing.T, b Bound, unit, cell []uint64) uint64 {
	t.Helper()
	keep := make([]bool, len(unit))
	if _, err := b.Keep(unit, cell, keep); err != nil {
		t.Fatal(err)
	}
	var m uint64
	for r, k := range keep {
		if k {
			m |= 1 << r
		}
	}
	return m
}

// TestBoundUniformRows: one unit of 6 rows, 2 kept: each of the 15 pairs is kept about
// equally often over 30,000 seeds, with Rows alone and with the rows in one cell.
func TestBoundUniformRows(t *testing.T) {
	for _, c := range []struct {
		b          Bound
		unit, cell []uint64
	}{
		{Bound{Rows: 2}, slices.Repeat([]uint64{0x5eed}, 6), []uint64{1, 2, 3, 1, 2, 3}},
		{Bound{Cells: 1, Rows: 2}, slices.Repeat([]uint64{0xfeed}, 6), []uint64{7, 7, 7, 7, 7, 7}},
	} {
		counts := map[uint64]int{}
		for s := range uint64(boundSeeds) {
			b := c.b
			b.Seed = s
			m := boundKeptMask(t, b, c.unit, c.cell)
			if bits.OnesCount64(m) != 2 {
				t.Fatalf("%+v: kept rows %06b", b, m)
			}
			counts[m]++
		}
		x := boundChiSquare(counts, 15, boundSeeds)
		if x > 54.64 {
			t.Errorf("%+v: chi-square %.1f over the 15 pairs > 54.64 (p = 10⁻⁶): %v", c.b, x, counts)
		}
		t.Logf("%+v: chi-square %.1f (14 degrees of freedom)", c.b, x)
	}
}

// TestBoundUniformCells: one unit with 5 distinct cells of 2 rows each, Cells 2 and one
// row a cell: each of the 10 pairs of cells is kept about equally often over 30,000
// seeds, and so is each of the 40 choices of a pair of cells and a row in each.
func TestBoundUniformCells(t *testing.T) {
	unit := slices.Repeat([]uint64{0xc0ffee}, 10)
	cell := []uint64{50, 40, 30, 20, 10, 10, 20, 30, 40, 50}
	cellCounts, rowCounts := map[uint64]int{}, map[uint64]int{}
	for s := range uint64(boundSeeds) {
		b := Bound{Cells: 2, Seed: s}
		m := boundKeptMask(t, b, unit, cell)
		var cells uint64
		for r := range cell {
			if m&(1<<r) != 0 {
				cells |= 1 << (cell[r] / 10)
			}
		}
		if bits.OnesCount64(m) != 2 || bits.OnesCount64(cells) != 2 {
			t.Fatalf("%+v: kept rows %010b", b, m)
		}
		cellCounts[cells]++
		rowCounts[m]++
	}
	x, y := boundChiSquare(cellCounts, 10, boundSeeds), boundChiSquare(rowCounts, 40, boundSeeds)
	if x > 44.81 {
		t.Errorf("chi-square %.1f over the 10 pairs of cells > 44.81 (p = 10⁻⁶): %v", x, cellCounts)
	}
	if y > 96.13 {
		t.Errorf("chi-square %.1f over the 40 choices of rows > 96.13 (p = 10⁻⁶): %v", y, rowCounts)
	}
	t.Logf("chi-square %.1f for cells (9 degrees of freedom), %.1f for rows (39)", x, y)
}

// TestBoundDeterministic: the same seed gives the same choice; another seed changes
// some choice on a large input.
func TestBoundDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	tab := randomBoundTable(rng, 5000, false)
	for _, b := range boundConfigs {
		b.Seed = 12345
		a1, a2 := boundRunKeep(t, b, tab), boundRunKeep(t, b, tab)
		if !slices.Equal(a1, a2) {
			t.Errorf("%+v: two runs with the same seed differ", b)
		}
		b.Seed++
		if c := boundRunKeep(t, b, tab); slices.Equal(a1, c) {
			t.Errorf("%+v: seeds 12345 and 12346 make the same choice", b)
		}
	}
}

// TestKeepReference: Keep agrees with a plain implementation of the same rule (rows
// grouped with a map, candidates sorted by priority), so the radix grouping, the
// ordinals and the heap selection are what the documentation says.
func TestKeepReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, small := range []bool{false, true} {
		tab := randomBoundTable(rng, 3000, small)
		for _, b := range boundConfigs {
			b.Seed = rng.Uint64()
			got := boundRunKeep(t, b, tab)
			want := boundReference(b, tab)
			if !slices.Equal(got, want) {
				t.Fatalf("%+v (small hashes %v): Keep differs from the reference", b, small)
			}
		}
	}
}

func boundReference(b Bound, tab boundTable) []bool {
	rowsOf := map[uint64][]int{}
	for r, u := range tab.unit {
		rowsOf[u] = append(rowsOf[u], r)
	}
	keep := make([]bool, len(tab.unit))
	lowest := func(h uint64, xs []uint64, k int) map[uint64]bool {
		slices.SortFunc(xs, func(a, c uint64) int {
			pa, pc := boundPrio(h, a), boundPrio(h, c)
			switch {
			case pa < pc || pa == pc && a < c:
				return -1
			case pa == pc && a == c:
				return 0
			}
			return 1
		})
		set := map[uint64]bool{}
		for _, x := range xs[:min(k, len(xs))] {
			set[x] = true
		}
		return set
	}
	for u, rows := range rowsOf {
		hr := boundMix(boundMix(b.Seed^boundRowTag) ^ boundMix(u))
		hc := boundMix(boundMix(b.Seed^boundCellTag) ^ boundMix(u))
		if b.Cells == 0 {
			var ords []uint64
			for o := range rows {
				ords = append(ords, uint64(o))
			}
			set := lowest(hr, ords, b.Rows)
			for o, r := range rows {
				keep[r] = set[uint64(o)]
			}
			continue
		}
		ordsIn := map[uint64][]uint64{}
		var cells []uint64
		for o, r := range rows {
			c := tab.cell[r]
			if ordsIn[c] == nil {
				cells = append(cells, c)
			}
			ordsIn[c] = append(ordsIn[c], uint64(o))
		}
		for c := range lowest(hc, cells, b.Cells) {
			for o := range lowest(hr, ordsIn[c], max(b.Rows, 1)) {
				keep[rows[o]] = true
			}
		}
	}
	return keep
}

// TestBoundSensitivity: the sensitivities of valid bounds, and (0, 0) for invalid ones.
func TestBoundSensitivity(t *testing.T) {
	for _, c := range []struct {
		b        Bound
		l0, linf int64
	}{
		{Bound{Cells: 3}, 3, 1},
		{Bound{Cells: 3, Rows: 1}, 3, 1},
		{Bound{Cells: 2, Rows: 5}, 2, 5},
		{Bound{Rows: 4}, 1, 4},
		{Bound{Rows: 1, Seed: 9}, 1, 1},
		{Bound{}, 0, 0},
		{Bound{Cells: -1, Rows: 2}, 0, 0},
		{Bound{Cells: 2, Rows: -1}, 0, 0},
	} {
		if l0, linf := c.b.Sensitivity(); l0 != c.l0 || linf != c.linf {
			t.Errorf("%+v: sensitivity (%d, %d), want (%d, %d)", c.b, l0, linf, c.l0, c.linf)
		}
	}
}

// TestKeepErrors: bounds that cap nothing or have negative caps, and slices of
// different lengths, are refused; an empty table keeps nothing.
func TestKeepErrors(t *testing.T) {
	u3, c3, k3 := make([]uint64, 3), make([]uint64, 3), make([]bool, 3)
	for _, c := range []struct {
		b          Bound
		unit, cell []uint64
		keep       []bool
	}{
		{Bound{}, u3, c3, k3},
		{Bound{Seed: 1}, u3, c3, k3},
		{Bound{Cells: -1}, u3, c3, k3},
		{Bound{Rows: -2}, u3, c3, k3},
		{Bound{Cells: 1, Rows: -1}, u3, c3, k3},
		{Bound{Rows: 1}, u3, c3[:2], k3},
		{Bound{Rows: 1}, u3, c3, k3[:2]},
		{Bound{Cells: 1}, u3[:2], c3, k3},
		{Bound{Cells: 1}, u3, nil, k3},
	} {
		if n, err := c.b.Keep(c.unit, c.cell, c.keep); err == nil {
			t.Errorf("%+v with %d, %d, %d entries: kept %d, no error", c.b, len(c.unit), len(c.cell), len(c.keep), n)
		}
		if c.b.Check() == nil && len(c.unit) == len(c.cell) && len(c.cell) == len(c.keep) {
			t.Errorf("%+v: Check accepts it", c.b)
		}
	}
	if n, err := (Bound{Rows: 1}).Keep(nil, nil, nil); n != 0 || err != nil {
		t.Errorf("empty table: %d, %v", n, err)
	}
}

// boundBench runs Keep on 10⁷ rows of about 3·10⁶ units (ids drawn uniformly, so a unit
// has Poisson(3.3) rows) in 100 cells.
func boundBench(b *testing.B, bound Bound) {
	const n, units = 10_000_000, 3_000_000
	rng := rand.New(rand.NewPCG(11, 12))
	unit, cell, keep := make([]uint64, n), make([]uint64, n), make([]bool, n)
	for r := range unit {
		unit[r] = boundMix(rng.Uint64N(units) ^ 0xabcdef)
		cell[r] = rng.Uint64N(100)
	}
	kept := 0
	for b.Loop() {
		var err error
		if kept, err = bound.Keep(unit, cell, keep); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/row")
	b.ReportMetric(float64(kept)/n, "kept/row")
}

// BenchmarkKeep: 10⁷ rows, about 3·10⁶ units, at most 3 rows a unit.
func BenchmarkKeep(b *testing.B) { boundBench(b, Bound{Rows: 3, Seed: 1}) }

// BenchmarkKeepCells: the same table, at most 2 cells a unit and 1 row a cell.
func BenchmarkKeepCells(b *testing.B) { boundBench(b, Bound{Cells: 2, Seed: 1}) }

func TestSameUnits(t *testing.T) {
	const n = 100000
	unit, check := make([]uint64, n), make([]uint64, n)
	for r := range n {
		unit[r] = boundMix(uint64(r % 7919))
		check[r] = boundMix(uint64(r%7919) + 1<<40)
	}
	if !SameUnits(unit, check) {
		t.Fatal("consistent hashes reported as a collision")
	}
	// Two ids that share the first 64 bits but not the second.
	check[n-1] ^= 1
	if SameUnits(unit, check) {
		t.Fatal("a collision went unnoticed")
	}
	if !SameUnits(nil, nil) {
		t.Fatal("empty input")
	}
}

// TestBoundEachPanicIsAnError: a bounding worker that panics does not crash the process:
// its panic reaches the caller's goroutine, where a recovery returns it as an internal
// error, after every other worker has ended.
func TestBoundEachPanicIsAnError(t *testing.T) {
	for _, parts := range []int{2, boundMaxParts} {
		var ended atomic.Int32
		err := safe.Call(func() error {
			boundEach(parts, func(p int) {
				defer ended.Add(1)
				if p == 1 {
					var rows []int
					_ = rows[p]
				}
			})
			return nil
		})
		if !errors.Is(err, fault.ErrInternal) || int(ended.Load()) != parts {
			t.Fatalf("%d parts: got %v with %d workers ended, want an internal error after all", parts, err, ended.Load())
		}
	}
}
