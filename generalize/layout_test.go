package generalize

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"sanitizer/fault"
	"sanitizer/schema"
)

// TestSearchRecordLayoutMatchesExhaustive: a search that rolls up from the records
// (bottomMaxRows lowered, and told the bottom has too many classes to count: tables of a
// few thousand records stand for the larger ones),
// every roll-up radix-partitioned and stopping once the node fails, counts the nodes it
// can through layouts of the records (recordLayout), and finds the exhaustive optimum,
// with the suppression it needs, as it does without layouts; so does a search of the
// table's class table.
func TestSearchRecordLayoutMatchesExhaustive(t *testing.T) {
	defer func(n int) { bottomMaxRows = n }(bottomMaxRows)
	bottomMaxRows = 256
	rng := rand.New(rand.NewPCG(61, 67))
	trials, laidOut := 40, 0
	if testing.Short() {
		trials = 12
	}
	for trial := range trials {
		n := 1000 + rng.IntN(2000)
		q := 3 + rng.IntN(2)
		// Wide columns: nodes have too many possible code tuples to count in an
		// array, and are radix-partitioned.
		tab, raw, hier := randomTableOf(rng, n, q, 40, 300, func(u float64) float64 { return u * u })
		k := 2 + rng.IntN(11)
		maxSupp := rng.IntN(n/4 + 1)
		metric := []schema.Metric{MetricLoss, MetricDiscernibility, MetricPrecision, MetricAECS}[rng.IntN(4)]
		workers := 1 + rng.IntN(3)
		name := fmt.Sprintf("trial%d/n=%d/q=%d/k=%d/supp=%d/%s/w=%d", trial, n, q, k, maxSupp, metric, workers)
		t.Run(name, func(t *testing.T) {
			want := newOracle(raw, hier).best(t, k, maxSupp, metric)
			// Layouts by nodes of at most one class per 4 or per 64 records, and none.
			for _, share := range []int{4, 64, 0} {
				noLayout := share == 0
				opt := Options{K: k, MaxSuppressed: maxSupp, Metric: metric, Workers: workers, BottomOver: n, radix: radixTuning{minSource: 1, abort: 1, noLayout: noLayout, layout: share}}
				got, s, err := searchRecords(tab, opt)
				if want == nil {
					if !errors.Is(err, fault.ErrUnattainable) {
						t.Fatalf("layout share %d: want unattainable, got %v, %v", share, got, err)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if s.bottom.rows == nil {
					t.Fatalf("the search counted the bottom (%d classes): it does not read the records", s.bottom.n)
				}
				if !slices.Equal(got.Levels, want.node) || got.Suppressed != want.suppressed {
					t.Fatalf("layout share %d: search chose %v suppressing %d, exhaustive optimum %v suppressing %d",
						share, got.Levels, got.Suppressed, want.node, want.suppressed)
				}
				if noLayout && s.laidOut > 0 {
					t.Fatalf("layouts off, %d counts used one", s.laidOut)
				}
				// The same from the table's classes (SearchClasses' bottom).
				gotCT, sCT, err := searchClassTable(tab, opt)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(gotCT.Levels, want.node) || gotCT.Suppressed != want.suppressed {
					t.Fatalf("layout share %d, from the class table: search chose %v suppressing %d, exhaustive optimum %v suppressing %d",
						share, gotCT.Levels, gotCT.Suppressed, want.node, want.suppressed)
				}
				laidOut += sCT.laidOut
				if !noLayout {
					laidOut += s.laidOut
					t.Logf("%d layouts, %d counts used one; %d evaluated, %d rolled up", s.layouts, s.laidOut, got.Evaluated, got.RolledUp)
				}
			}
		})
	}
	if laidOut < trials {
		t.Fatalf("%d counts used a layout in %d trials: the test does not exercise them", laidOut, trials)
	}
}

// searchClassTable is SearchClasses on tab's class table, returning its searcher too.
func searchClassTable(tab *Table, opt Options) (*Result, *searcher, error) {
	ct, err := CountClasses(tab)
	if err != nil {
		return nil, nil, err
	}
	s, err := prepareSearch(ct.meta, ct, ct.Len(), opt)
	if err != nil {
		return nil, nil, err
	}
	s.bottom = ct.bottom(s.pack)
	res, err := s.run(context.Background())
	return res, s, err
}

// searchRecords is Search, returning its searcher too.
func searchRecords(tab *Table, opt Options) (*Result, *searcher, error) {
	s, err := prepareSearch(tab, tab, tab.Rows, opt)
	if err != nil {
		return nil, nil, err
	}
	s.bottom = s.countBottom(tab)
	res, err := s.run(context.Background())
	return res, s, err
}

// TestLayoutRangesOf: the ranges of a layout hold whole classes, the smallest first,
// each but the last at least a layoutRanges-th of the records, and no more than
// layoutRanges of them.
func TestLayoutRangesOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 73))
	for _, tc := range []struct{ classes, most int }{{1, 5}, {3, 1}, {200, 1}, {300, 3}, {5000, 40}, {40, 100000}} {
		counts := make([]int32, tc.classes)
		n := 0
		for c := range counts {
			counts[c] = int32(1 + rng.IntN(tc.most))
			n += int(counts[c])
		}
		ranges, rangeOf := layoutRangesOf(counts, n)
		if ranges[0] != 0 || ranges[len(ranges)-1] != n || len(ranges)-1 > layoutRanges {
			t.Fatalf("%d classes of %d records: ranges %v", tc.classes, n, ranges)
		}
		share := (n + layoutRanges - 1) / layoutRanges
		held := make([]int, len(ranges)-1)
		largest := make([]int32, len(ranges)-1)
		for c, r := range rangeOf {
			held[r] += int(counts[c])
			largest[r] = max(largest[r], counts[c])
		}
		for r := range held {
			if held[r] != ranges[r+1]-ranges[r] {
				t.Fatalf("range %d: bounds %d..%d, classes of %d records", r, ranges[r], ranges[r+1], held[r])
			}
			if r+1 < len(held) && held[r] < share {
				t.Fatalf("range %d of %d holds %d records, under a share of %d", r, len(held), held[r], share)
			}
		}
		for c, r := range rangeOf {
			if r > 0 && counts[c] < largest[r-1] {
				t.Fatalf("class of %d records in range %d, after one of %d", counts[c], r, largest[r-1])
			}
		}
	}
}

// TestLayoutCountsMatchRecords: for random nodes, the layout that covers each (made or
// kept) counts, range by range, the classes a count of the records (or of a class
// table's classes) finds, and, stopping
// once the node fails (suppressionStop), stops only when those classes fail it, some
// counts after a part of the ranges.
func TestLayoutCountsMatchRecords(t *testing.T) {
	defer func(n int) { bottomMaxRows = n }(bottomMaxRows)
	bottomMaxRows = 256
	rng := rand.New(rand.NewPCG(79, 83))
	layouts, counts, stops := 0, 0, 0
	for trial := range 10 {
		n := 3000 + rng.IntN(3000)
		// The records of six columns; in the last four trials, the classes of their
		// class table (SearchClasses' bottom), of fewer leaves so that many classes
		// hold several records.
		classTable := trial >= 6
		lo, hi := 40, 300
		if classTable {
			lo, hi = 4, 16
		}
		tab, _, _ := randomTableOf(rng, n, 6, lo, hi, func(u float64) float64 { return u * u * u })
		k, most := 2+rng.IntN(8), rng.IntN(n/3)
		// Buckets of 4 classes in half the trials: a range of more than two is then
		// radix-partitioned, not counted in one table (rangeCounter).
		bucket := []int{0, 4}[trial%2]
		opt := Options{K: k, MaxSuppressed: most, BottomOver: n, radix: radixTuning{minSource: 1, abort: 1, layout: 1 + rng.IntN(4), bucket: bucket}}
		s, err := prepareSearch(tab, tab, n, opt)
		if classTable {
			ct, err := CountClasses(tab)
			if err != nil {
				t.Fatal(err)
			}
			if s, err = prepareSearch(ct.meta, ct, ct.Len(), opt); err != nil {
				t.Fatal(err)
			}
			if s.bottom = ct.bottom(s.pack); s.bottom.n >= tab.Rows {
				t.Fatalf("trial %d: %d records in %d classes: no class holds more than one", trial, tab.Rows, s.bottom.n)
			}
		} else if s.bottom = s.countBottom(tab); s.bottom.rows == nil {
			t.Fatalf("trial %d: the search counted the bottom (%d classes): it does not read the records", trial, s.bottom.n)
		}
		if err != nil {
			t.Fatal(err)
		}
		n = s.bottom.n // what a count reads
		g := <-s.pool
		g.par = 1 + trial%2
		counted, early := 0, 0
		// Lower nodes first, as a search counts them from the records: the later
		// ones need layouts by coarser nodes.
		nodes := make([]int, 40)
		for i := range nodes {
			nodes[i] = rng.IntN(s.lat.Size())
		}
		height := func(node int) int {
			h := 0
			for _, l := range s.lat.Levels(node, nil) {
				h += l
			}
			return h
		}
		slices.SortFunc(nodes, func(a, b int) int { return cmp.Compare(height(a), height(b)) })
		for _, node := range nodes {
			l := s.layoutFor(node, g)
			if l == nil {
				continue
			}
			if !s.covers(l, node) {
				t.Fatalf("trial %d: layout of node %v for node %v", trial, s.lat.Levels(l.node, nil), s.lat.Levels(node, nil))
			}
			levels := s.lat.Levels(node, nil)
			maps, sizes := s.keyMaps(make([]int, s.q), levels, nil)
			want, _ := g.rollUp(s.bottom, node, maps, sizes, nil, 0)
			g.ranges = l.ranges
			got, read := g.rollUp(l.src, node, maps, sizes, nil, 0)
			if diff := diffClasses(got, want, s.q); diff != "" || read != n {
				t.Fatalf("trial %d, node %v, layout %v: %s; read %d of %d", trial, levels, s.lat.Levels(l.node, nil), diff, read, n)
			}
			g.stop = suppressionStop{k: int32(k), most: most}
			stopped, read := g.rollUp(l.src, node, maps, sizes, nil, 0)
			fails := g.stop.small(want.counts) > most
			switch {
			case stopped == nil && !fails:
				t.Fatalf("trial %d, node %v: %d records in classes below %d (at most %d), the count stopped",
					trial, levels, g.stop.small(want.counts), k, most)
			case stopped != nil:
				if diff := diffClasses(stopped, want, s.q); diff != "" {
					t.Fatalf("trial %d, node %v, not stopped: %s", trial, levels, diff)
				}
			case read < n:
				early++ // stopped after some of the ranges
			}
			g.stop, g.ranges = suppressionStop{}, nil
			counted++
		}
		t.Logf("trial %d: %d layouts, %d nodes counted through one, %d stopped early", trial, s.layouts, counted, early)
		layouts, counts, stops = layouts+s.layouts, counts+counted, stops+early
	}
	if layouts < 20 || counts < 100 || stops < 20 {
		t.Fatalf("%d layouts, %d nodes counted through one, %d stopped early: the test does not exercise them", layouts, counts, stops)
	}
}

// diffClasses describes how the classes of a and b, as tuples of q codes and their records,
// differ ("" when they do not).
func diffClasses(a, b *classes, q int) string {
	tuples := func(c *classes) map[string]int32 {
		m := map[string]int32{}
		for j := range c.n {
			key := ""
			for i := range q {
				key += fmt.Sprintf("%d,", c.code(i, j))
			}
			m[key] += c.count(j)
		}
		return m
	}
	if a.n != b.n {
		return fmt.Sprintf("%d classes, want %d", a.n, b.n)
	}
	ta, tb := tuples(a), tuples(b)
	for key, c := range tb {
		if ta[key] != c {
			return fmt.Sprintf("class %s: %d records, want %d", key, ta[key], c)
		}
	}
	return ""
}
