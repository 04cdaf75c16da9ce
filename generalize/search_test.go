package generalize

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"sanitizer/fault"
	"sanitizer/schema"
)

func TestSearchAdultMatchesExhaustive(t *testing.T) {
	if testing.Short() {
		t.Skip("exhaustive evaluation of the Adult lattice is slow")
	}
	t.Parallel() // the long Adult tests run beside one another, on both cores
	tab, raw, hier := loadAdult(t)
	type setting struct {
		k    int
		supp float64
	}
	var settings []setting
	var queries []oracleQuery
	for _, k := range []int{2, 5, 10, 100} {
		for _, supp := range []float64{0, 0.05} {
			settings = append(settings, setting{k, supp})
			queries = append(queries, oracleQuery{k: k, maxSupp: int(math.Floor(supp * float64(tab.Rows))), metric: "loss"})
		}
	}
	wants := newOracle(raw, hier).bestMany(t, queries)
	for i, st := range settings {
		t.Run(fmt.Sprintf("k=%d/supp=%g", st.k, st.supp), func(t *testing.T) {
			want := wants[i]
			got, err := Search(context.Background(), tab, Options{K: st.k, MaxSuppressed: queries[i].maxSupp})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Levels, want.node) {
				t.Fatalf("search chose %v (loss %.6f), exhaustive optimum is %v (loss %s)", got.Levels, got.Value, want.node, want.value.FloatString(6))
			}
			wv, _ := want.value.Float64()
			if math.Abs(got.Value-wv) > 1e-12 {
				t.Errorf("loss %.15f, exhaustive %.15f", got.Value, wv)
			}
			if got.Suppressed != want.suppressed {
				t.Errorf("suppressed %d, exhaustive %d", got.Suppressed, want.suppressed)
			}
			if got.Evaluated+got.MonotoneOnly+got.Tagged+got.Bounded != got.LatticeSize {
				t.Errorf("accounting: %d evaluated + %d monotone only + %d tagged + %d bounded != %d nodes", got.Evaluated, got.MonotoneOnly, got.Tagged, got.Bounded, got.LatticeSize)
			}
			t.Logf("node %v loss %.4f suppressed %d classes %d; lattice %d evaluated %d tagged %d bounded %d",
				got.Levels, got.Value, got.Suppressed, got.Classes, got.LatticeSize, got.Evaluated, got.Tagged, got.Bounded)
		})
	}
}

// randomTable builds a table of n records over q quasi-identifiers with random
// hierarchies (random trees of random depth) and skewed values.
func randomTable(rng *rand.Rand, n, q int) (*Table, [][]string, [][][]string) {
	return randomTableOf(rng, n, q, 1, 12, func(u float64) float64 { return u * u })
}

// randomTableOf is randomTable with lo to hi leaves per quasi-identifier, the leaf
// of a record at skew(u) of them for a uniform u.
func randomTableOf(rng *rand.Rand, n, q, lo, hi int, skew func(u float64) float64) (*Table, [][]string, [][][]string) {
	tab := &Table{Rows: n}
	raw := make([][]string, n)
	var hier [][][]string
	for c := range q {
		leaves := lo + rng.IntN(hi-lo+1)
		depth := 2 + rng.IntN(3) // levels including leaf and top
		rows := make([][]string, leaves)
		for l := range leaves {
			rows[l] = make([]string, depth)
			rows[l][0] = fmt.Sprintf("c%d-v%d", c, l)
			rows[l][depth-1] = Top
		}
		// intermediate levels: group by integer division with growing fan-in
		div := 1
		for lev := 1; lev < depth-1; lev++ {
			div *= 2 + rng.IntN(2)
			for l := range leaves {
				rows[l][lev] = fmt.Sprintf("c%d-L%d-%d", c, lev, l/div)
			}
		}
		h, err := NewHierarchy(fmt.Sprintf("h%d", c), rows)
		if err != nil {
			panic(err)
		}
		hier = append(hier, rows)
		codes := NewCodes(n, leaves)
		for r := range n {
			// skewed: the square of a uniform (randomTable) favours small leaf indexes
			leaf := int(skew(rng.Float64()) * float64(leaves))
			codes.Set(r, int32(leaf))
			raw[r] = append(raw[r], rows[leaf][0])
		}
		tab.Columns = append(tab.Columns, Column{Name: fmt.Sprintf("q%d", c), Hierarchy: h, Codes: codes})
	}
	return tab, raw, hier
}

func TestSearchRandomMatchesExhaustive(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := range 120 {
		n := 20 + rng.IntN(400)
		q := 1 + rng.IntN(4)
		tab, raw, hier := randomTable(rng, n, q)
		k := 1 + rng.IntN(12)
		maxSupp := 0
		if rng.IntN(2) == 1 {
			maxSupp = rng.IntN(n/5 + 1)
		}
		metric := []schema.Metric{MetricLoss, MetricDiscernibility, MetricHeight, MetricPrecision, MetricAECS, MetricDiscernibilityStar}[rng.IntN(6)]
		workers := 1 + rng.IntN(4)
		name := fmt.Sprintf("trial%d/n=%d/q=%d/k=%d/supp=%d/%s/w=%d", trial, n, q, k, maxSupp, metric, workers)
		t.Run(name, func(t *testing.T) {
			want := newOracle(raw, hier).best(t, k, maxSupp, metric)
			// Once as the search runs, once with every roll-up of a packed source
			// counted by radix partitioning (which large tables use), once more so
			// with a cache bound that the radix counts' scratch crowds out, and once
			// with every roll-up stopping where a large source's would (at the
			// class count, and once its classes fail the suppression limit).
			for _, v := range []struct{ radixMin, cache, abort int }{{radixMinSource, 0, 0}, {1, 0, 0}, {1, 3 * n, 0}, {1, 0, 1}} {
				radixMin := v.radixMin
				got, err := Search(context.Background(), tab, Options{K: k, MaxSuppressed: maxSupp, Metric: metric, Workers: workers, CacheEntries: v.cache, radix: radixTuning{minSource: radixMin, abort: v.abort}})
				if want == nil {
					if !errors.Is(err, fault.ErrUnattainable) {
						t.Fatalf("radix from %d: want unattainable, got %v, %v", radixMin, got, err)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got.Levels, want.node) {
					t.Fatalf("radix from %d: search chose %v (%g), exhaustive optimum %v (%s)", radixMin, got.Levels, got.Value, want.node, want.value.FloatString(6))
				}
				if got.Suppressed != want.suppressed {
					t.Errorf("radix from %d: suppressed %d, exhaustive %d", radixMin, got.Suppressed, want.suppressed)
				}
			}
		})
	}
}

// TestSearchWideNodesMatchExhaustive: tables of four quasi-identifiers of 257 to 400
// leaves, whose nodes' codes take 64-bit keys (the bottom), 32-bit keys in mixed radix
// only, or 32-bit keys in power-of-two fields, every roll-up radix-partitioned (with
// and without a cache bound the scratch crowds out): the search finds the exhaustive
// optimum.
func TestSearchWideNodesMatchExhaustive(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 17))
	for trial := range 6 {
		n := 1500 + rng.IntN(1500)
		// Most records on a few leaves, so that the nodes near the bottom have
		// classes of k records and more: their tables are sources and their values
		// count.
		tab, raw, hier := randomTableOf(rng, n, 4, 257, 400, func(u float64) float64 { return math.Pow(u, 30) })
		kinds := map[string]bool{}
		lat := tab.lattice()
		for node := range lat.Size() {
			levels := lat.Levels(node, nil)
			sizes := make([]int, len(levels))
			for i, l := range levels {
				sizes[i] = tab.Columns[i].Hierarchy.Size(l)
			}
			switch {
			case narrowRadix(sizes) != nil:
				kinds["narrow"] = true
			case mixed32(sizes):
				kinds["mixed"] = true
			default:
				kinds["64-bit"] = true
			}
		}
		if len(kinds) != 3 {
			t.Fatalf("trial %d: the lattice's nodes take %v keys only", trial, kinds)
		}
		k := 2 + rng.IntN(4)
		maxSupp := rng.IntN(n/2 + 1)
		metric := []schema.Metric{MetricLoss, MetricDiscernibility}[rng.IntN(2)]
		want := newOracle(raw, hier).best(t, k, maxSupp, metric)
		for _, cache := range []int{0, 3 * n} {
			got, err := Search(context.Background(), tab, Options{K: k, MaxSuppressed: maxSupp, Metric: metric, CacheEntries: cache, radix: radixTuning{minSource: 1}})
			switch {
			case want == nil:
				if !errors.Is(err, fault.ErrUnattainable) {
					t.Fatalf("trial %d: want unattainable, got %v, %v", trial, got, err)
				}
				continue
			case err != nil:
				t.Fatal(err)
			case !slices.Equal(got.Levels, want.node) || got.Suppressed != want.suppressed:
				t.Fatalf("trial %d (k=%d, %d suppressed at most, %s): search chose %v (%g, %d suppressed), exhaustive optimum %v (%s, %d)", trial, k, maxSupp, metric, got.Levels, got.Value, got.Suppressed, want.node, want.value.FloatString(6), want.suppressed)
			}
		}
	}
}

func TestSearchUnattainable(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tab, _, _ := randomTable(rng, 10, 2)
	_, err := Search(context.Background(), tab, Options{K: 11})
	if !errors.Is(err, fault.ErrUnattainable) {
		t.Fatalf("k above the row count: got %v, want ErrUnattainable", err)
	}
}

func TestSuppressedMatchesSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	tab, raw, hier := randomTable(rng, 300, 3)
	res, err := Search(context.Background(), tab, Options{K: 6, MaxSuppressed: 40})
	if err != nil {
		t.Fatal(err)
	}
	supp, err := Suppressed(tab, res.Levels, Options{K: 6})
	if err != nil {
		t.Fatal(err)
	}
	// recount from the raw strings
	counts := map[string]int{}
	keys := make([]string, len(raw))
	for r, vals := range raw {
		key := ""
		for c, v := range vals {
			for _, hr := range hier[c] {
				if hr[0] == v {
					key += hr[res.Levels[c]] + "\x1f"
				}
			}
		}
		keys[r] = key
		counts[key]++
	}
	n := 0
	for r := range raw {
		if want := counts[keys[r]] < 6; supp[r] != want {
			t.Fatalf("row %d: suppressed %v, want %v", r, supp[r], want)
		}
		if supp[r] {
			n++
		}
	}
	if n != res.Suppressed {
		t.Fatalf("%d rows flagged, search reported %d", n, res.Suppressed)
	}
}

// TestSearchDeterministicAcrossWorkers: the chosen node and the search's accounting do
// not depend on the number of workers.
func TestSearchDeterministicAcrossWorkers(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	tab, _, _ := randomTable(rng, 3000, 5)
	var first *Result
	for _, w := range []int{1, 2, 3, 8} {
		got, err := Search(context.Background(), tab, Options{K: 7, MaxSuppressed: 150, Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = got
			continue
		}
		if !slices.Equal(got.Levels, first.Levels) || got.Value != first.Value || got.Suppressed != first.Suppressed {
			t.Fatalf("workers=%d chose %v (%g, %d suppressed), workers=1 chose %v (%g, %d)", w, got.Levels, got.Value, got.Suppressed, first.Levels, first.Value, first.Suppressed)
		}
	}
}

func TestEvictKeepsTheSource(t *testing.T) {
	s := &searcher{cache: map[int]*classes{}}
	tables := []*classes{
		{node: 1, packed: make([]uint64, 10), n: 10}, // 30 entries
		{node: 2, packed: make([]uint64, 20), n: 20}, // 60
		{node: 3, packed: make([]uint64, 5), n: 5},   // 15
	}
	for _, c := range tables {
		s.cache[c.node] = c
		s.fifo = append(s.fifo, c.node)
		s.entries += c.entries()
	}
	s.evict(50, tables[0]) // the oldest is kept, the next goes
	if !slices.Equal(s.fifo, []int{1, 3}) || s.entries != 45 || s.cache[2] != nil || len(s.cache) != 2 {
		t.Fatalf("after evict(50): fifo %v, entries %d, %d tables", s.fifo, s.entries, len(s.cache))
	}
	s.evict(45, nil) // within the bound: nothing goes
	if len(s.fifo) != 2 || s.entries != 45 {
		t.Fatalf("after evict(45): fifo %v, entries %d", s.fifo, s.entries)
	}
	s.evict(0, nil)
	if len(s.fifo) != 0 || s.entries != 0 || len(s.cache) != 0 {
		t.Fatalf("after evict(0): fifo %v, entries %d, %d tables", s.fifo, s.entries, len(s.cache))
	}
}

// TestRememberEmptiesTheCacheToThreeQuarters: within its bound the cache keeps every
// table remembered; past it, it drops tables until it holds three quarters of the bound.
func TestRememberEmptiesTheCacheToThreeQuarters(t *testing.T) {
	s := &searcher{cache: map[int]*classes{}, opt: Options{CacheEntries: 100}}
	for node := 1; node <= 4; node++ {
		s.remember(&classes{node: node, packed: make([]uint64, 10), n: 10}) // 30 entries
		want := []int{1, 2, 3, 4}[:node]
		if node == 4 { // 120 entries: the oldest go until 75 or fewer are left
			want = []int{3, 4}
		}
		if !slices.Equal(s.fifo, want) || s.entries != 30*len(want) || len(s.bySize) != len(want) {
			t.Fatalf("after remembering %d: fifo %v, %d entries, %d by size; want %v", node, s.fifo, s.entries, len(s.bySize), want)
		}
	}
}

// TestEvictDropsTheTablesNeededLast: with the search's next uses, evict drops the
// tables no node will read first, then those read last (the larger first among tables
// of the same next use), and never the one kept.
func TestEvictDropsTheTablesNeededLast(t *testing.T) {
	s := &searcher{cache: map[int]*classes{}}
	next := map[int]rank{1: {bound: 5}, 2: never, 3: {bound: 2}, 4: {bound: 5}}
	tables := []*classes{
		{node: 1, packed: make([]uint64, 10), n: 10}, // 30 entries
		{node: 2, packed: make([]uint64, 20), n: 20}, // 60
		{node: 3, packed: make([]uint64, 5), n: 5},   // 15
		{node: 4, packed: make([]uint64, 12), n: 12}, // 36
	}
	for _, c := range tables {
		s.cache[c.node] = c
		s.fifo = append(s.fifo, c.node)
		s.entries += c.entries()
		s.bySize = append(s.bySize, cachedTable{c: c})
	}
	slices.SortStableFunc(s.bySize, func(a, b cachedTable) int { return cmp.Compare(a.c.n, b.c.n) })
	s.uses = func(uses []rank) {
		for i, e := range s.bySize {
			uses[i] = next[e.c.node]
		}
	}
	for _, step := range []struct {
		limit int
		keep  *classes
		left  []int
	}{
		{100, nil, []int{1, 3, 4}},   // no node reads 2
		{60, tables[3], []int{3, 4}}, // 4, the larger of two read next, is kept: 1 goes, not 3
		{40, nil, []int{3}},          // then 4
		{10, tables[2], []int{3}},    // the kept table stays over the limit
	} {
		s.evict(step.limit, step.keep)
		left := slices.Sorted(maps.Keys(s.cache))
		if !slices.Equal(left, step.left) || !slices.Equal(s.fifo, step.left) || len(s.bySize) != len(step.left) {
			t.Fatalf("evict(%d): cache %v, fifo %v, %d by size, want %v", step.limit, left, s.fifo, len(s.bySize), step.left)
		}
	}
}

func TestScratchEntries(t *testing.T) {
	rows := &classes{n: 100}
	table := &classes{n: 100, counts: make([]int32, 100)}
	narrow, wide := []int{1 << 16, 1 << 16}, []int{1 << 16, 1<<16 + 1}
	for _, c := range []struct {
		src   *classes
		sizes []int
		want  int
	}{{rows, narrow, 100}, {rows, wide, 200}, {table, narrow, 200}, {table, wide, 300}} {
		if got := scratchEntries(c.src, c.sizes); got != c.want {
			t.Errorf("scratch of %d classes (counts %v) to sizes %v: %d, want %d", c.src.n, c.src.counts != nil, c.sizes, got, c.want)
		}
	}
}

// TestSearchCancelStopsEvaluating cancels the context from the progress callback after
// a few nodes have been counted: the search returns context.Canceled and counts no
// node after the cancel, whatever the number of workers (a batch of nodes in flight
// included).
func TestSearchCancelStopsEvaluating(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	n, q := 20000, 9
	if testing.Short() {
		n, q = 4000, 7 // the race detector's run: a smaller table, about 150 nodes
	}
	tab, _, _ := randomTable(rng, n, q)
	for _, workers := range []int{1, 4} {
		for _, supp := range []int{0, n * 7 / 200} { // 700 of 20,000
			opt := Options{K: 8, MaxSuppressed: supp, Workers: workers}
			all := 0
			opt.OnEvaluate = func(n int) { all += n }
			if _, err := Search(context.Background(), tab, opt); err != nil && !errors.Is(err, fault.ErrUnattainable) {
				t.Fatal(err)
			}
			if all < 40 {
				t.Fatalf("workers %d: the search counts %d nodes: too few to cancel in the middle", workers, all)
			}
			ctx, cancel := context.WithCancel(context.Background())
			counted, at := 0, all/4
			opt.OnEvaluate = func(n int) {
				counted += n
				if counted == at {
					cancel()
				}
			}
			_, err := Search(ctx, tab, opt)
			cancel()
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("workers %d, suppression %d: got %v, want context.Canceled", workers, supp, err)
			}
			if counted != at {
				t.Errorf("workers %d, suppression %d: %d nodes counted after the cancel (of %d in all)", workers, supp, counted-at, all)
			}
		}
	}
}

// TestLeqPacked: the comparison of nodes on their packed levels agrees with the
// lattice's. Every lattice the search accepts packs: a column of h levels takes
// bits.Len(h−1)+1 bits, at most twice the bits h adds to the lattice's size (2^24).
func TestLeqPacked(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 29))
	for _, heights := range [][]int{{2}, {2, 7, 3}, {5, 4, 3, 2, 2, 4, 3, 2}, {9, 2, 17, 2}, slices.Repeat([]int{2}, 24), slices.Repeat([]int{3}, 15), {32, 2, 2, 2, 2, 2, 2}} {
		var cols []Column
		for i, h := range heights {
			row := []string{"v"}
			for l := 1; l < h-1; l++ {
				row = append(row, fmt.Sprint(l))
			}
			hier, err := NewHierarchy(fmt.Sprint(i), [][]string{append(row, "*")})
			if err != nil {
				t.Fatal(err)
			}
			cols = append(cols, Column{Name: fmt.Sprint(i), Hierarchy: hier, Codes: NewCodes(0, 1)})
		}
		s := newSearcher(&Table{Columns: cols}, Options{K: 1}, nil, 0)
		if s.keyShift == nil || s.lat.TooLarge() {
			t.Fatalf("heights %v: levels not packed", heights)
		}
		for range 2000 {
			a, b := rng.IntN(s.lat.Size()), rng.IntN(s.lat.Size())
			if rng.IntN(2) == 0 { // b a generalization of a, often
				lv := s.lat.Levels(a, nil)
				b = 0
				for i, l := range lv {
					b += min(l+rng.IntN(2), heights[i]-1) * s.lat.strides[i]
				}
			}
			if got, want := s.leq(a, b, s.levelKey(a), s.levelKey(b)), s.lat.Leq(a, b); got != want {
				t.Fatalf("heights %v: leq(%v, %v) = %v, want %v", heights, s.lat.Levels(a, nil), s.lat.Levels(b, nil), got, want)
			}
		}
	}
}
