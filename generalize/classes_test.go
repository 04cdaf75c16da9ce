package generalize

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/internal/safe"
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
		if !codes.below(int32(c.leaves)) || (c.leaves > 1 && codes.below(int32(c.leaves-1))) {
			t.Errorf("%d leaves: below(%d) %v, below(%d) %v", c.leaves, c.leaves, codes.below(int32(c.leaves)), c.leaves-1, codes.below(int32(c.leaves-1)))
		}
	}
}

// TestBytesBelow: the eight-bytes-at-a-time check agrees with a plain one for every
// bound and every byte value, at every position of the last word and in the tail.
func TestBytesBelow(t *testing.T) {
	for n := 1; n <= 128; n++ {
		for _, length := range []int{0, 1, 15, 16, 17, 40} {
			for pos := range length {
				for v := range 256 {
					s := make([]uint8, length)
					s[pos] = uint8(v)
					if got, want := bytesBelow(s, uint8(n)), v < n; got != want {
						t.Fatalf("n=%d, %d bytes, %d at %d: %v, want %v", n, length, v, pos, got, want)
					}
				}
			}
		}
	}
}

// TestCodesMap: Map translates a run of codes of every width through a table, or
// copies them.
func TestCodesMap(t *testing.T) {
	for _, leaves := range []int{200, 60000, 70000} {
		codes := NewCodes(50, leaves)
		m := make([]int32, leaves)
		for c := range m {
			m[c] = int32(leaves - c) // every code to another
		}
		for i := range 50 {
			codes.Set(i, int32(i*(leaves/50)))
		}
		dst, same := make([]int32, 20), make([]int32, 20)
		codes.Map(dst, 17, m)
		codes.Map(same, 17, nil)
		for i, got := range dst {
			if want := m[codes.At(17+i)]; got != want || same[i] != codes.At(17+i) {
				t.Fatalf("%d leaves: code %d maps to %d and %d, want %d and itself", leaves, 17+i, got, same[i], want)
			}
		}
	}
}

// TestRollUpPaths groups the same records by every path of rollUp (direct array or
// open addressing; exact or hashed keys; one chunk or several; 8-, 16- and 32-bit
// codes; with assign; 1 to 3 goroutines)
// and compares with grouping by a map of the code tuples.
func TestRollUpPaths(t *testing.T) {
	for _, c := range []struct {
		name      string
		n         int
		sizes     []int // leaves per column (the key space decides exact or hashed keys)
		fromTable bool  // roll up a class table (with counts) rather than the records
		drawn     int   // codes drawn per column (0: all), so that records repeat
		hashed    bool  // the node's key space exceeds 64 bits: keys are hashes
	}{
		{"direct", 5000, []int{7, 3, 11}, false, 0, false},
		{"table", 20000, []int{300, 200, 100}, false, 0, false},
		{"several chunks", 2*chunkRows + 1234, []int{300, 200, 100, 7}, false, 0, false},
		{"hashed keys", 40000, []int{1 << 12, 1 << 12, 1 << 12, 1 << 12, 1 << 12, 1 << 12, 1 << 12, 3}, false, 0, true},
		{"wide codes", 70001, []int{70000, 5}, false, 0, false},
		{"class table", 60000, []int{300, 200, 100}, true, 40, false},
		{"class table, hashed keys", 40000, []int{1 << 12, 1 << 12, 1 << 12, 1 << 12, 1 << 12, 1 << 12, 1 << 12, 6}, true, 6, true},
		{"class table, several chunks", chunkRows + 20000, []int{1 << 10, 1 << 10, 1 << 10, 5}, true, 1000, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if testing.Short() && c.n > chunkRows {
				t.Skip("several chunks of records: not in -short (the race detector's run)")
			}
			if c.n > chunkRows && !c.fromTable {
				exhaustiveOnly(t, "several chunks of records (the class table's several chunks stay)")
			}
			rng := rand.New(rand.NewPCG(uint64(c.n), 7))
			rows := &classes{rows: make([]Codes, len(c.sizes)), n: c.n}
			maps := make([][]int32, len(c.sizes))
			identity := make([][]int32, len(c.sizes))
			outSizes := make([]int, len(c.sizes))
			for i, sz := range c.sizes {
				drawn := sz
				if c.drawn > 0 {
					drawn = min(sz, c.drawn)
				}
				rows.rows[i] = NewCodes(c.n, sz)
				for r := range c.n {
					u := rng.Float64()
					rows.rows[i].Set(r, int32(u*u*float64(drawn)))
				}
				// generalize column i by halving its codes (identity for the first)
				maps[i] = make([]int32, sz)
				identity[i] = make([]int32, sz)
				outSizes[i] = sz
				for v := range maps[i] {
					maps[i][v], identity[i][v] = int32(v), int32(v)
					if i > 0 {
						maps[i][v] = int32(v / 2)
					}
				}
				if i > 0 {
					outSizes[i] = (sz + 1) / 2
				}
			}
			if _, exact := keySpace(outSizes); exact == c.hashed {
				t.Fatalf("the node's keys are exact %v: not the case's key kind", exact)
			}
			want := map[tuple]int32{}
			for r := range c.n {
				want[tupleOf(rows, maps, r)]++
			}
			var first []int32
			for _, layout := range []struct {
				name string
				pack *packing
			}{{"columns", nil}, {"packed", newPacking(c.sizes)}} {
				if layout.name == "packed" && layout.pack == nil {
					continue // the codes do not fit in 64 bits
				}
				src := rows
				if c.fromTable {
					src, _ = (&grouper{par: 1, pack: layout.pack}).rollUp(rows, 0, identity, c.sizes, nil, 0)
					if src.n >= c.n || src.n < 1000 || (layout.pack != nil) != (src.packed != nil) {
						t.Fatalf("%s: the class table has %d classes of %d records (packed: %v): not a test of grouping a table", layout.name, src.n, c.n, src.packed != nil)
					}
				}
				for par := 1; par <= 3; par++ {
					if testing.Short() && par == 2 {
						continue // the race detector's run: 1 and 3 goroutines suffice
					}
					where := fmt.Sprintf("%s, par %d", layout.name, par)
					g := &grouper{par: par, pack: layout.pack}
					assign := make([]int32, src.n)
					out, read := g.rollUp(src, 1, maps, outSizes, assign, 0)
					if read != src.n {
						t.Fatalf("%s: read %d of %d", where, read, src.n)
					}
					if (layout.pack != nil) != (out.packed != nil) {
						t.Fatalf("%s: output packed %v", where, out.packed != nil)
					}
					if cut, _ := g.rollUp(src, 1, maps, outSizes, nil, len(want)-1); cut != nil {
						t.Fatalf("%s: a limit below the class count did not stop the count", where)
					}
					if full, _ := g.rollUp(src, 1, maps, outSizes, nil, len(want)); full == nil || full.n != len(want) {
						t.Fatalf("%s: a limit equal to the class count stopped the count", where)
					}
					if out.n != len(want) {
						t.Fatalf("%s: %d classes, want %d", where, out.n, len(want))
					}
					got := map[tuple]int32{}
					for j := range out.n {
						var key tuple
						for i := range maps {
							key[i] = out.code(i, j)
						}
						got[key] += out.counts[j]
					}
					for k, v := range want {
						if got[k] != v {
							t.Fatalf("%s: class %v counts %d, want %d", where, k, got[k], v)
						}
					}
					for r := range src.n {
						a := int(assign[r])
						for i := range maps {
							if out.code(i, a) != maps[i][src.code(i, r)] {
								t.Fatalf("%s: class %d of the source assigned to a class with other codes", where, r)
							}
						}
					}
					col0 := make([]int32, out.n)
					for j := range col0 {
						col0[j] = out.code(0, j)
					}
					if first == nil {
						first = col0
					} else if !slices.Equal(first, col0) {
						t.Fatalf("%s: class order differs from the columns on one goroutine", where)
					}
				}
			}
		})
	}
}

func TestPacking(t *testing.T) {
	for _, c := range []struct {
		leaves []int
		fits   bool
	}{
		{[]int{74, 16, 7, 41, 5, 2, 2, 7}, true},
		{[]int{1, 1, 2}, true},
		{[]int{1 << 32, 1 << 32}, true},
		{[]int{1 << 32, 1 << 32, 2}, false},
		{[]int{1 << 12, 1 << 12, 1 << 12, 1 << 12, 1 << 12, 1 << 12}, false},
	} {
		p := newPacking(c.leaves)
		if (p != nil) != c.fits {
			t.Errorf("leaves %v: packing %v, want fits %v", c.leaves, p != nil, c.fits)
			continue
		}
		if p == nil {
			continue
		}
		// The largest code of every column survives a round trip next to the others'.
		var w uint64
		for i, l := range c.leaves {
			w |= uint64(l-1) << p.shift[i]
		}
		cls := &classes{packed: []uint64{w}, pack: p, n: 1}
		for i, l := range c.leaves {
			if got := cls.code(i, 0); int64(got) != int64(int32(l-1)) {
				t.Errorf("leaves %v: column %d reads %d, want %d", c.leaves, i, got, l-1)
			}
		}
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

// Radix-partitioned counting finds the classes and counts of grouping by a map, from
// the records and from a packed class table, in the same order on 1 to 3 goroutines,
// and stops at the limit.
// TestRollUpRadix counts records and class tables (packed and narrow) by radixCount
// with 64-bit keys and 32-bit keys (power-of-two fields, and mixed radix) on 1 to 3
// goroutines, and compares with a map of the code tuples: in one chunk; in several
// chunks with buckets whose tables grow; in 4,096 buckets; for a node whose codes fit
// 32 bits in mixed radix only.
func TestRollUpRadix(t *testing.T) {
	for _, c := range []struct {
		name   string
		n      int
		sizes  []int
		bucket int // radixBucket for the case
	}{
		{"one chunk", 200000, []int{50, 40, 30, 7}, radixBucket},
		{"several chunks, tables grow", 2*chunkRows + 1234, []int{300, 200, 100, 7}, radixBucket},
		{"4096 buckets", 300000, []int{50, 40, 30, 7}, 64},
		// A node of 257, 257, 257 and 60 codes: 33 bits in power-of-two fields, 30
		// in mixed radix.
		{"32 bits in mixed radix only", 200000, []int{257, 771, 771, 180}, radixBucket},
	} {
		t.Run(c.name, func(t *testing.T) {
			if testing.Short() && c.n > chunkRows {
				t.Skip("several chunks of records: not in -short")
			}
			if c.n > chunkRows {
				exhaustiveOnly(t, "several chunks of records (TestRollUpPaths's class table of several chunks stays)")
			}
			n := c.n
			if testing.Short() { // still more than parallelKeys: the keys on every core
				n = min(n, parallelKeys+4096)
			}
			testRollUpRadix(t, n, c.sizes, radixTuning{minSource: 1, bucket: c.bucket})
		})
	}
}

func testRollUpRadix(t *testing.T, n int, sizes []int, tune radixTuning) {
	rng := rand.New(rand.NewPCG(9, 9))
	rows := &classes{rows: make([]Codes, len(sizes)), n: n}
	maps := make([][]int32, len(sizes))
	identity := make([][]int32, len(sizes))
	for i, sz := range sizes {
		rows.rows[i] = NewCodes(n, sz)
		for r := range n {
			u := rng.Float64()
			rows.rows[i].Set(r, int32(u*u*float64(sz)))
		}
		maps[i], identity[i] = make([]int32, sz), make([]int32, sz)
		for v := range sz {
			maps[i][v], identity[i][v] = int32(v/3), int32(v)
		}
	}
	maps[0] = identity[0] // one column unchanged
	pack := newPacking(sizes)
	want := map[tuple]int32{}
	for r := range n {
		want[tupleOf(rows, maps, r)]++
	}
	table, _ := (&grouper{par: 1, pack: pack}).rollUpPacked(rows, 0, identity, sizes, nil, n+1)
	if table.counts == nil || table.n >= n {
		t.Fatalf("the class table has %d classes of %d records", table.n, n)
	}
	if buckets := 1 << radixWidth(n, tune.bucketSize()); tune.bucketSize() == radixBucket && n > chunkRows && len(want)/buckets <= radixTableMin/2 {
		t.Fatalf("%d classes in %d buckets: no bucket's table grows", len(want), buckets)
	}
	outSizes := make([]int, len(sizes))
	for i, m := range maps {
		outSizes[i] = int(slices.Max(m)) + 1
	}
	radix := narrowRadix(outSizes)
	if !mixed32(outSizes) {
		t.Fatal("the test's node does not fit 32-bit keys")
	}
	modes := []string{"64-bit"}
	if radix != nil {
		modes = append(modes, "narrow")
	}
	if radix == nil || n <= chunkRows {
		modes = append(modes, "mixed") // the count of narrow keys, with other keys
	}
	// The records in classes of fewer than smallK records of the node (the suppression
	// stop's).
	const smallK = 4
	small := 0
	for _, c := range want {
		if c < smallK {
			small += int(c)
		}
	}
	if small == 0 {
		t.Fatalf("no class below %d records", smallK)
	}
	sources := []*classes{rows, table}
	if narrowRadix(sizes) != nil {
		// The same classes as a narrow table (its own fields) and, below, as a source.
		narrowTable, _ := (&grouper{par: 2, pack: pack, tune: tune}).rollUpNarrow(rows, 0, identity, narrowRadix(sizes), n+1)
		if narrowTable == nil || narrowTable.narrow == nil || narrowTable.n != table.n {
			t.Fatalf("the narrow class table: %v", narrowTable)
		}
		sources = append(sources, narrowTable)
	}
	for _, src := range sources {
		for _, mode := range modes {
			narrow := mode == "narrow"
			var first []uint64
			for par := 1; par <= 3; par++ {
				if testing.Short() && par == 2 {
					continue // the race detector's run: 1 and 3 goroutines suffice
				}
				g := &grouper{par: par, pack: pack, tune: tune}
				keysOf := func(keys []uint64, lo, hi int) { computeKeys(keys, src, lo, hi, maps, pack.radix, true) }
				switch {
				case src.narrow != nil:
					keysOf = func(keys []uint64, lo, hi int) { widenNarrow(keys, src.narrow[lo:hi], maps, src.npack, pack) }
				case src.rows == nil:
					keysOf = func(keys []uint64, lo, hi int) { repack(keys, src.packed[lo:hi], maps, pack, []int{1, 2, 3}) }
				}
				roll := func(limit int) (*classes, int) {
					switch mode {
					case "narrow":
						return g.rollUpNarrow(src, 1, maps, radix, limit)
					case "mixed":
						return g.rollUpMixed(src, 1, maps, outSizes, limit)
					}
					return g.rollUpRadix(src, 1, keysOf, limit)
				}
				name := fmt.Sprintf("%s keys, par %d, source of %d", mode, par, src.n)
				out, read := roll(n + 1)
				if out == nil {
					t.Fatalf("%s: the count stopped below its limit", name)
				}
				if read != src.n || out.n != len(want) {
					t.Fatalf("%s: read %d, %d classes, want %d", name, read, out.n, len(want))
				}
				got := map[tuple]int32{}
				for j := range out.n {
					var key tuple
					for i := range sizes {
						key[i] = out.code(i, j)
					}
					if _, dup := got[key]; dup {
						t.Fatalf("%s: class %v twice", name, key)
					}
					got[key] = out.counts[j]
				}
				for k, v := range want {
					if got[k] != v {
						t.Fatalf("%s: class %v counts %d, want %d", name, k, got[k], v)
					}
				}
				words := out.packed
				if out.narrow != nil {
					if !narrow || out.packed != nil {
						t.Fatalf("%s: narrow words from a count of 64-bit keys", name)
					}
					words = make([]uint64, out.n)
					for j, w := range out.narrow {
						words[j] = uint64(w)
					}
				}
				if first == nil {
					first = words
				} else if !slices.Equal(first, words) {
					t.Fatalf("%s: class order differs from one goroutine", name)
				}
				if cut, _ := roll(len(want) - 1); cut != nil {
					t.Fatalf("%s: a limit below the class count did not stop the count", name)
				}
				if full, _ := roll(len(want)); full == nil {
					t.Fatalf("%s: a limit equal to the class count stopped it", name)
				}
				// The suppression stop: more records in classes below k than most
				// stops the count, as many does not.
				g.stop = suppressionStop{k: smallK, most: small - 1}
				if cut, _ := roll(n + 1); cut != nil {
					t.Fatalf("%s: %d records in classes below %d, most %d: the count did not stop", name, small, smallK, small-1)
				}
				g.stop.most = small
				if full, _ := roll(n + 1); full == nil || full.n != len(want) {
					t.Fatalf("%s: %d records in classes below %d, most %d: the count stopped", name, small, smallK, small)
				}
				g.stop = suppressionStop{}
			}
		}
	}
}

// TestNarrowKeysOneCodeColumns: narrowKeys skips the columns of one code at the node
// (the first one too, and all of them) and still writes every record's mixed-radix key.
func TestNarrowKeysOneCodeColumns(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	leaves := []int{7, 300, 5}
	const n = 1000
	rows := &classes{rows: make([]Codes, len(leaves)), n: n}
	for i, l := range leaves {
		rows.rows[i] = NewCodes(n, l)
		for r := range n {
			rows.rows[i].Set(r, int32(rng.IntN(l)))
		}
	}
	toOne := func(l int) []int32 { return make([]int32, l) }
	half := func(l int) []int32 {
		m := make([]int32, l)
		for c := range m {
			m[c] = int32(c / 2)
		}
		return m
	}
	for _, maps := range [][][]int32{
		{toOne(7), half(300), toOne(5)},
		{half(7), toOne(300), half(5)},
		{toOne(7), toOne(300), toOne(5)},
	} {
		sizes := make([]int, len(maps))
		for i, m := range maps {
			sizes[i] = int(slices.Max(m)) + 1
		}
		radix := narrowRadix(sizes)
		keys := make([]uint32, n)
		for j := range keys {
			keys[j] = 0xdeadbeef // whatever was there before
		}
		narrowKeys(keys, rows, 0, n, maps, radix, nil)
		for r := range n {
			var want uint32
			for i, m := range maps {
				want = want*uint32(radix[i]) + uint32(m[rows.rows[i].At(r)])
			}
			if keys[r] != want {
				t.Fatalf("sizes %v: record %d has key %d, want %d", sizes, r, keys[r], want)
			}
		}
	}
}

// TestFanOutPanicIsAnError: a roll-up worker that panics does not crash the process:
// the panic reaches the caller's goroutine as a safe.PanicError with the worker's stack,
// which the search's recovery returns as an error.
func TestFanOutPanicIsAnError(t *testing.T) {
	for _, parts := range []int{2, 4} {
		ran := make([]bool, parts)
		err := safe.Call(func() error {
			fanOut(parts, func(p int) {
				ran[p] = true
				if p == parts-1 {
					var codes []int32
					_ = codes[p] // a worker's index out of range
				}
			})
			return nil
		})
		var pe *safe.PanicError
		if !errors.As(err, &pe) || !errors.Is(err, fault.ErrInternal) || !strings.Contains(string(pe.Stack), "TestFanOutPanicIsAnError") {
			t.Fatalf("%d parts: got %v, want an internal error with the worker's stack", parts, err)
		}
		if slices.Contains(ran, false) {
			t.Fatalf("%d parts: ran %v: fanOut returned before every worker ended", parts, ran)
		}
	}
}

// TestCountInPartsMatchesOneCount: counting the records in parts on several goroutines
// gives the table, the records' indexes and the records read that one goroutine's count
// gives, with more parts than records too, and says so exactly when the records hold
// more classes than the limit.
func TestCountInPartsMatchesOneCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(83, 84))
	for trial := range 60 {
		n := 1 + rng.IntN(3000)
		if trial%4 == 0 {
			n = 1 + rng.IntN(50)
		}
		tab, _, _ := randomTableOf(rng, n, 1+rng.IntN(5), 2, 40, func(u float64) float64 { return u * u })
		q := len(tab.Columns)
		src := &classes{rows: make([]Codes, q), n: n}
		maps, leaves := make([][]int32, q), make([]int, q)
		for i, c := range tab.Columns {
			src.rows[i], maps[i], leaves[i] = c.Codes, c.Hierarchy.levelMap(0, 0), c.Hierarchy.Leaves()
		}
		pack := newPacking(leaves)
		keysOf := func(keys []uint64, lo, hi int) { computeKeys(keys, src, lo, hi, maps, pack.radix, true) }
		one := &grouper{par: 1, pack: pack}
		want, wantAssign := one.table(0), make([]int32, n)
		want.reset(n)
		one.eachChunk(src, keysOf, func(lo int, keys []uint64) bool {
			return want.count(src, maps, keys, lo, true, wantAssign, n+1)
		})
		classes := len(want.held)
		parts := []int{2, 3, 7}
		if n < 200 {
			parts = append(parts, n+3) // parts without records
		}
		for _, par := range parts {
			for _, limit := range []int{n + 1, classes, classes - 1, classes / 2} {
				if limit < 1 {
					continue
				}
				g := &grouper{par: par, pack: pack}
				assign := make([]int32, n)
				got, over, read := g.countInParts(src, maps, keysOf, assign, limit)
				where := fmt.Sprintf("trial %d, %d records, %d classes, %d parts, limit %d", trial, n, classes, par, limit)
				if over != (classes > limit) {
					t.Fatalf("%s: over %v", where, over)
				}
				if over {
					continue
				}
				if read != n || !slices.Equal(got.held, want.held) || !slices.Equal(got.counts, want.counts) || !slices.Equal(got.rep, want.rep) || !slices.Equal(assign, wantAssign) {
					t.Fatalf("%s: %d read, %d classes; one goroutine's count differs", where, read, len(got.held))
				}
			}
		}
	}
}
