package generalize

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestCodesWidth(t *testing.T) {
	for _, c := range []struct {
		leaves, bytes int
	}{{1, 1}, {256, 1}, {257, 2}, {65536, 2}, {65537, 4}} {
		codes := NewCodes(10, c.leaves)
		if got := codes.Bytes(); got != 10*c.bytes {
			t.Errorf("%d leaves: %d bytes for 10 codes, want %d", c.leaves, got, 10*c.bytes)
		}
		codes.Set(9, int32(c.leaves-1))
		if got := codes.At(9); got != int32(c.leaves-1) || codes.Len() != 10 {
			t.Errorf("%d leaves: At(9) = %d, Len %d", c.leaves, got, codes.Len())
		}
		if lo, hi := codes.minMax(); lo != 0 || hi != int32(c.leaves-1) {
			t.Errorf("%d leaves: minMax %d..%d", c.leaves, lo, hi)
		}
	}
}

// TestRollUpPaths groups the same records by every path of rollUp (direct array or
// open addressing; exact or hashed keys; one chunk or several; 8-, 16- and 32-bit
// codes; with assign; 1 to 3 goroutines)
// and compares with grouping by a map of the code tuples.
func TestRollUpPaths(t *testing.T) {
	for _, c := range []struct {
		name  string
		n     int
		sizes []int // leaves per column (the key space decides exact or hashed keys)
	}{
		{"direct", 5000, []int{7, 3, 11}},
		{"table", 20000, []int{300, 200, 100}},
		{"several chunks", 2*chunkRows + 1234, []int{300, 200, 100, 7}},
		{"hashed keys", 40000, []int{1 << 12, 1 << 12, 1 << 12, 1 << 12, 1 << 12, 1 << 12, 1 << 12, 3}},
		{"wide codes", 70001, []int{70000, 5}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(c.n), 7))
			src := &classes{rows: make([]Codes, len(c.sizes)), n: c.n}
			maps := make([][]int32, len(c.sizes))
			outSizes := make([]int, len(c.sizes))
			for i, sz := range c.sizes {
				src.rows[i] = NewCodes(c.n, sz)
				for r := range c.n {
					u := rng.Float64()
					src.rows[i].Set(r, int32(u*u*float64(sz)))
				}
				// generalize column i by halving its codes (identity for the first)
				maps[i] = make([]int32, sz)
				outSizes[i] = sz
				for v := range maps[i] {
					maps[i][v] = int32(v)
					if i > 0 {
						maps[i][v] = int32(v / 2)
					}
				}
				if i > 0 {
					outSizes[i] = (sz + 1) / 2
				}
			}
			want := map[tuple]int32{}
			for r := range c.n {
				want[tupleOf(src, maps, r)]++
			}
			var first []int32
			for par := 1; par <= 3; par++ {
				if testing.Short() && par == 2 {
					continue // the race detector's run: 1 and 3 goroutines suffice
				}
				g := &grouper{par: par}
				assign := make([]int32, c.n)
				out, read := g.rollUp(src, 1, maps, outSizes, assign, 0)
				if read != c.n {
					t.Fatalf("par %d: read %d of %d", par, read, c.n)
				}
				if cut, _ := g.rollUp(src, 1, maps, outSizes, nil, len(want)-1); cut != nil {
					t.Fatalf("par %d: a limit below the class count did not stop the count", par)
				}
				if full, _ := g.rollUp(src, 1, maps, outSizes, nil, len(want)); full == nil || full.n != len(want) {
					t.Fatalf("par %d: a limit equal to the class count stopped the count", par)
				}
				if out.n != len(want) {
					t.Fatalf("par %d: %d classes, want %d", par, out.n, len(want))
				}
				got := map[tuple]int32{}
				for j := range out.n {
					var key tuple
					for i := range maps {
						key[i] = out.cols[i][j]
					}
					got[key] += out.counts[j]
				}
				for k, v := range want {
					if got[k] != v {
						t.Fatalf("par %d: class %v counts %d, want %d", par, k, got[k], v)
					}
				}
				for r := range c.n {
					a := assign[r]
					for i := range maps {
						if out.cols[i][a] != maps[i][src.code(i, r)] {
							t.Fatalf("par %d: record %d assigned to a class with other codes", par, r)
						}
					}
				}
				if first == nil {
					first = slices.Clone(out.cols[0])
				} else if !slices.Equal(first, out.cols[0]) {
					t.Fatalf("par %d: class order differs from par 1", par)
				}
			}
		})
	}
}

// tuple is the codes of a class, computed by the test itself.
type tuple [8]int32

func tupleOf(src *classes, maps [][]int32, r int) tuple {
	var key tuple
	for i, m := range maps {
		key[i] = m[src.code(i, r)]
	}
	return key
}

func TestRollUpPathsKeyKinds(t *testing.T) {
	for _, c := range []struct {
		sizes []int
		exact bool
	}{
		{[]int{300, 400, 100, 14}, true},
		{[]int{1 << 12, 1 << 11, 1 << 11, 1 << 11, 1 << 11, 1 << 11, 1 << 11, 2}, false},
	} {
		space, exact := uint64(1), true
		for _, sz := range c.sizes {
			if space > ^uint64(0)/uint64(sz) {
				exact = false
				break
			}
			space *= uint64(sz)
		}
		if exact != c.exact {
			t.Errorf("sizes %v: exact keys %v, the test above relies on %v", c.sizes, exact, c.exact)
		}
	}
}
