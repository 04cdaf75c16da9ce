package generalize

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"sanitizer/closeness"
	"sanitizer/diversity"
	"sanitizer/fault"
	"sanitizer/schema"
)

// withSensitive adds sensitive columns of 2 to 9 values, skewed, to tab: the second
// one with a closeness tree (values in pairs under one root).
func withSensitive(rng *rand.Rand, tab *Table, columns int) {
	for c := range columns {
		values := 2 + rng.IntN(8)
		codes := NewCodes(tab.Rows, values)
		for r := range tab.Rows {
			u := rng.Float64()
			codes.Set(r, int32(u*u*float64(values)))
		}
		s := Sensitive{Name: fmt.Sprintf("s%d", c), Values: values, Codes: codes}
		if c == 1 {
			s.Tree = pairTree(values)
		}
		tab.Sensitive = append(tab.Sensitive, s)
	}
}

// pairTree is the closeness tree over values that puts values 2i and 2i+1 under one
// node, and those nodes under the root.
func pairTree(values int) *closeness.Tree {
	up := [][]int32{make([]int32, values), make([]int32, values)}
	for v := range values {
		up[0][v] = int32(v / 2)
	}
	tree, err := closeness.NewTree(values, up, []int{(values + 1) / 2, 1})
	if err != nil {
		panic(err)
	}
	return tree
}

// splitTable deals the records of t at random into parts tables (some may be empty)
// and returns them with, per part, the index in t of each of its records.
func splitTable(rng *rand.Rand, t *Table, parts int) ([]*Table, [][]int) {
	index := make([][]int, parts)
	for r := range t.Rows {
		p := rng.IntN(parts)
		index[p] = append(index[p], r)
	}
	out := make([]*Table, parts)
	for p, rows := range index {
		pt := &Table{Rows: len(rows)}
		for _, c := range t.Columns {
			codes := NewCodes(len(rows), c.Hierarchy.Leaves())
			for k, r := range rows {
				codes.Set(k, c.Codes.At(r))
			}
			pt.Columns = append(pt.Columns, Column{Name: c.Name, Hierarchy: c.Hierarchy, Codes: codes})
		}
		for _, s := range t.Sensitive {
			codes := NewCodes(len(rows), s.Values)
			for k, r := range rows {
				codes.Set(k, s.Codes.At(r))
			}
			pt.Sensitive = append(pt.Sensitive, Sensitive{Name: s.Name, Values: s.Values, Tree: s.Tree, Codes: codes})
		}
		if u := t.Unit; u != nil {
			codes := NewCodes(len(rows), u.Persons)
			for k, r := range rows {
				codes.Set(k, u.Codes.At(r))
			}
			pt.Unit = &Unit{Persons: u.Persons, Codes: codes}
		}
		out[p] = pt
	}
	return out, index
}

// leavesOf returns the leaf codes of record r of t.
func leavesOf(t *Table, r int, dst []int32) []int32 {
	dst = dst[:0]
	for _, c := range t.Columns {
		dst = append(dst, c.Codes.At(r))
	}
	return dst
}

// checkCounted checks ct against the records of t, counted here with a map: the same
// classes, counts and histograms, in canonical order (strictly increasing codes,
// histogram values strictly increasing).
func checkCounted(t *testing.T, ct *ClassTable, tab *Table) {
	t.Helper()
	type class struct {
		n    int
		hist []map[int32]int
	}
	want := map[string]*class{}
	var leaves []int32
	for r := range tab.Rows {
		leaves = leavesOf(tab, r, leaves)
		key := fmt.Sprint(leaves)
		c := want[key]
		if c == nil {
			c = &class{hist: make([]map[int32]int, len(tab.Sensitive))}
			for s := range c.hist {
				c.hist[s] = map[int32]int{}
			}
			want[key] = c
		}
		c.n++
		for s, col := range tab.Sensitive {
			c.hist[s][col.Codes.At(r)]++
		}
	}
	if ct.Len() != len(want) || ct.Records() != tab.Rows {
		t.Fatalf("%d classes of %d records, want %d of %d", ct.Len(), ct.Records(), len(want), tab.Rows)
	}
	q := len(tab.Columns)
	codes, prev := make([]int32, q), make([]int32, q)
	for j := range ct.Len() {
		for i := range q {
			codes[i] = ct.Code(i, j)
		}
		if j > 0 && slices.Compare(prev, codes) >= 0 {
			t.Fatalf("class %d %v after %v: not in canonical order", j, codes, prev)
		}
		copy(prev, codes)
		c := want[fmt.Sprint(codes)]
		if c == nil || c.n != ct.Count(j) {
			t.Fatalf("class %d %v: %d records, want %v", j, codes, ct.Count(j), c)
		}
		for s := range tab.Sensitive {
			vals, cnts := ct.Histogram(s, j)
			if !slices.IsSorted(vals) || len(vals) != len(c.hist[s]) {
				t.Fatalf("class %d sensitive %d: values %v, want %v (increasing)", j, s, vals, c.hist[s])
			}
			for k, v := range vals {
				if k > 0 && vals[k-1] == v || c.hist[s][v] != int(cnts[k]) {
					t.Fatalf("class %d sensitive %d: histogram %v %v, want %v", j, s, vals, cnts, c.hist[s])
				}
			}
		}
	}
}

// TestMergeClassesEqualsWhole: the class tables of random parts of random tables,
// merged in any order and grouping, equal the class table of the whole table, which
// equals a count of the records by a map.
func TestMergeClassesEqualsWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for trial := range 40 {
		n := []int{0, 1, 2, 30, 300, 3000}[rng.IntN(6)]
		q := 1 + rng.IntN(4)
		tab, _, _ := randomTable(rng, n, q)
		withSensitive(rng, tab, rng.IntN(3))
		nparts := 1 + rng.IntN(5)
		t.Run(fmt.Sprintf("trial%d/n=%d/q=%d/sensitive=%d/parts=%d", trial, n, q, len(tab.Sensitive), nparts), func(t *testing.T) {
			whole, err := CountClasses(tab)
			if err != nil {
				t.Fatal(err)
			}
			checkCounted(t, whole, tab)
			tables, _ := splitTable(rng, tab, nparts)
			parts := make([]*ClassTable, nparts)
			for p, pt := range tables {
				if parts[p], err = CountClasses(pt); err != nil {
					t.Fatal(err)
				}
				checkCounted(t, parts[p], pt)
			}
			merged, err := MergeClasses(parts...)
			if err != nil {
				t.Fatal(err)
			}
			shuffled := slices.Clone(parts)
			rng.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
			reordered, err := MergeClasses(shuffled...)
			if err != nil {
				t.Fatal(err)
			}
			folded := shuffled[0] // one part at a time, from the left
			for _, p := range shuffled[1:] {
				if folded, err = MergeClasses(p, folded); err != nil {
					t.Fatal(err)
				}
			}
			for name, got := range map[string]*ClassTable{"merged": merged, "shuffled": reordered, "folded": folded} {
				if !got.Equal(whole) || !whole.Equal(got) {
					t.Errorf("%s parts: %d classes of %d records, not equal to the whole's %d of %d", name, got.Len(), got.Records(), whole.Len(), whole.Records())
				}
				if !reflect.DeepEqual(got, whole) {
					t.Errorf("%s parts: not deeply equal to the whole", name)
				}
			}
			if nparts > 1 && n > 30 && parts[0].Equal(whole) {
				t.Errorf("a part equals the whole")
			}
		})
	}
}

// searchCase is a table and options for the search on a class table.
type searchCase struct {
	name string
	tab  *Table
	opt  Options
}

// randomSearchCases are random tables with two sensitive columns and options: k alone
// (either metric), and k with l-diversity and t-closeness of every kind, with and
// without a suppression limit, any number of workers, radix-partitioned roll-ups or not.
func randomSearchCases(rng *rand.Rand, trials int) []searchCase {
	var out []searchCase
	for trial := range trials {
		n := 20 + rng.IntN(1500)
		q := 1 + rng.IntN(4)
		tab, _, _ := randomTable(rng, n, q)
		withSensitive(rng, tab, 2)
		opt := Options{K: 1 + rng.IntN(8), Workers: 1 + rng.IntN(3)}
		if rng.IntN(8) == 0 {
			opt.K = n/2 + rng.IntN(n) // often more than any node can publish
		}
		if rng.IntN(2) == 1 {
			opt.MaxSuppressed = rng.IntN(n/4 + 1)
		}
		if rng.IntN(3) == 0 {
			opt.radix = radixTuning{minSource: 1, bucket: 16}
		}
		kind := "k"
		switch rng.IntN(3) {
		case 0:
			opt.Metric = []schema.Metric{MetricLoss, MetricDiscernibility}[rng.IntN(2)]
		default:
			kind = "models"
			dm := []diversity.Model{
				{Variant: diversity.Distinct, L: 2},
				{Variant: diversity.Entropy, L: 1.5},
				{Variant: diversity.Recursive, L: 2, C: 2},
			}[rng.IntN(3)]
			dist := []closeness.Distance{closeness.Equal, closeness.Ordered, closeness.Hierarchical}[rng.IntN(3)]
			opt.Diversity = []Diversity{{Column: 0, Model: dm}}
			opt.Closeness = []Closeness{{Column: 1, T: 0.1 + 0.4*rng.Float64(), Distance: dist}}
			kind = fmt.Sprintf("%s-%g/%s-%.2f", dm.Variant, dm.L, dist, opt.Closeness[0].T)
		}
		out = append(out, searchCase{
			name: fmt.Sprintf("trial%d/n=%d/q=%d/k=%d/supp=%d/%s/%s", trial, n, q, opt.K, opt.MaxSuppressed, opt.Metric, kind),
			tab:  tab, opt: opt,
		})
	}
	return out
}

// sameResult reports how got (SearchClasses) differs from want (Search) in what both
// must report alike; "" when it does not.
func sameResult(got, want *Result) string {
	switch {
	case !slices.Equal(got.Levels, want.Levels):
		return fmt.Sprintf("node %v, Search's %v", got.Levels, want.Levels)
	case got.Metric != want.Metric || got.Value != want.Value:
		return fmt.Sprintf("%s %v, Search's %s %v", got.Metric, got.Value, want.Metric, want.Value)
	case got.Classes != want.Classes || got.MinClass != want.MinClass || got.Suppressed != want.Suppressed:
		return fmt.Sprintf("%d classes (smallest %d), %d suppressed; Search's %d (%d), %d", got.Classes, got.MinClass, got.Suppressed, want.Classes, want.MinClass, want.Suppressed)
	case got.LatticeSize != want.LatticeSize:
		return fmt.Sprintf("lattice of %d nodes, Search's %d", got.LatticeSize, want.LatticeSize)
	}
	return ""
}

// TestSearchClassesMatchesSearch: on random tables split into random parts, the search
// of the merged class table reports what Search on the whole table does, and the
// recoding of the chosen node (and of another node) suppresses the records Suppressed
// does, and numbers the classes NodeClasses publishes.
func TestSearchClassesMatchesSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	found, unattainable, binding := 0, 0, 0 // binding: the models change the k-only node
	for _, sc := range randomSearchCases(rng, 150) {
		t.Run(sc.name, func(t *testing.T) {
			tables, index := splitTable(rng, sc.tab, 1+rng.IntN(5))
			merged := countMerged(t, tables)
			want, wantErr := Search(context.Background(), sc.tab, sc.opt)
			got, err := SearchClasses(context.Background(), merged, sc.opt)
			if wantErr != nil {
				if !errors.Is(wantErr, fault.ErrUnattainable) {
					t.Fatal(wantErr)
				}
				unattainable++
				if !errors.Is(err, fault.ErrUnattainable) || err.Error() != wantErr.Error() {
					t.Fatalf("Search: %v; SearchClasses: %v, %v", wantErr, got, err)
				}
				return
			}
			found++
			if err != nil {
				t.Fatal(err)
			}
			if diff := sameResult(got, want); diff != "" {
				t.Fatalf("SearchClasses: %s", diff)
			}
			if len(sc.opt.Diversity) > 0 {
				kOnly := sc.opt
				kOnly.Diversity, kOnly.Closeness = nil, nil
				if k, err := SearchClasses(context.Background(), merged, kOnly); err != nil || sameResult(k, want) != "" {
					binding++
				}
			}
			levels := make([]int, len(want.Levels))
			for i, c := range sc.tab.Columns {
				levels[i] = rng.IntN(c.Hierarchy.Height())
			}
			for _, node := range [][]int{want.Levels, levels} {
				checkRecoding(t, sc.tab, tables, index, merged, node, sc.opt, slices.Equal(node, want.Levels), want)
			}
		})
	}
	t.Logf("%d searches found a node (%d where the models change it), %d unattainable", found, binding, unattainable)
	if found < 80 || unattainable < 5 || binding < 20 {
		t.Errorf("%d found (%d the models change), %d unattainable: the cases check too little", found, binding, unattainable)
	}
}

// checkRecoding checks the recoding of node of the merged class table against
// Suppressed and NodeClasses on the whole table tab, record by record of every part;
// when chosen, against the search's result too.
func checkRecoding(t *testing.T, tab *Table, tables []*Table, index [][]int, merged *ClassTable, node []int, opt Options, chosen bool, res *Result) {
	t.Helper()
	supp, err := Suppressed(tab, node, opt)
	if err != nil {
		t.Fatal(err)
	}
	class, covers, err := NodeClasses(tab, node, opt)
	if err != nil {
		t.Fatal(err)
	}
	q := len(tab.Columns)
	for _, packed := range []bool{true, false} {
		rec, err := nodeRecoding(merged, node, opt, packed)
		if err != nil {
			t.Fatal(err)
		}
		if packed != (rec.byKey != nil) {
			t.Fatalf("packed %v: looked up by key %v", packed, rec.byKey != nil)
		}
		if rec.Covers.Classes() != covers.Classes() || len(rec.Sizes) != covers.Classes() {
			t.Fatalf("node %v: %d published classes (%d sizes), NodeClasses %d", node, rec.Covers.Classes(), len(rec.Sizes), covers.Classes())
		}
		if !reflect.DeepEqual(rec.Covers.Dict, covers.Dict) {
			t.Fatalf("node %v: dictionaries differ from NodeClasses'", node)
		}
		sizes := make([]int, len(rec.Sizes))
		suppressed := 0
		var leaves []int32
		for p, pt := range tables {
			for k, r := range index[p] {
				leaves = leavesOf(pt, k, leaves)
				c, counted := rec.Class(leaves)
				if !counted {
					t.Fatalf("node %v: record %d (part %d) not counted", node, r, p)
				}
				if rec.IsSuppressed(leaves) != supp[r] || (c < 0) != (class[r] < 0) {
					t.Fatalf("node %v: record %d (part %d) class %d suppressed %v; Suppressed says %v, NodeClasses %d", node, r, p, c, rec.IsSuppressed(leaves), supp[r], class[r])
				}
				if c < 0 {
					suppressed++
					continue
				}
				sizes[c]++
				for i := range q {
					if covers.At(int(class[r]), i) != rec.Covers.At(int(c), i) {
						t.Fatalf("node %v: record %d releases %v for column %d, NodeClasses %v", node, r, rec.Covers.At(int(c), i), i, covers.At(int(class[r]), i))
					}
				}
			}
		}
		if !slices.Equal(sizes, rec.Sizes) || suppressed != rec.Suppressed || rec.Records != tab.Rows {
			t.Fatalf("node %v: sizes %v and %d of %d suppressed, the records say %v and %d of %d", node, rec.Sizes, rec.Suppressed, rec.Records, sizes, suppressed, tab.Rows)
		}
		for c := 1; c < rec.Covers.Classes(); c++ {
			if slices.Compare(rec.Covers.Index[(c-1)*q:c*q], rec.Covers.Index[c*q:(c+1)*q]) >= 0 {
				t.Fatalf("node %v: published classes %d and %d out of order", node, c-1, c)
			}
		}
		if chosen {
			minClass := 0
			if len(rec.Sizes) > 0 {
				minClass = slices.Min(rec.Sizes)
			}
			if rec.Suppressed != res.Suppressed || len(rec.Sizes) != res.Classes || minClass != res.MinClass {
				t.Fatalf("chosen node %v: %d classes (smallest %d), %d suppressed; the search says %d (%d), %d", node, len(rec.Sizes), minClass, rec.Suppressed, res.Classes, res.MinClass, res.Suppressed)
			}
		}
		// Codes the class table never counted, and malformed ones.
		for _, bad := range [][]int32{nil, make([]int32, q+1), slices.Repeat([]int32{-1}, q), slices.Repeat([]int32{1 << 20}, q)} {
			if c, counted := rec.Class(bad); counted || c != -1 || !rec.IsSuppressed(bad) {
				t.Fatalf("node %v: codes %v give class %d, counted %v", node, bad, c, counted)
			}
		}
	}
}

// TestSearchClassesAdultModels: Adult in three parts, k=5 at 0% and 5% suppression,
// alone and with recursive diversity and hierarchical t-closeness on occupation.
func TestSearchClassesAdultModels(t *testing.T) {
	if testing.Short() {
		t.Skip("searches Adult")
	}
	tab, _, _ := loadAdult(t)
	adultOccupation(t, tab)
	rng := rand.New(rand.NewPCG(41, 42))
	tables, index := splitTable(rng, tab, 3)
	merged := countMerged(t, tables)
	for _, supp := range []int{0, tab.Rows / 20} {
		for _, models := range []bool{false, true} {
			opt := Options{K: 5, MaxSuppressed: supp}
			if models {
				opt.Diversity = []Diversity{{Column: 0, Model: diversity.Model{Variant: diversity.Recursive, L: 3, C: 4}}}
				opt.Closeness = []Closeness{{Column: 0, T: 0.3, Distance: closeness.Hierarchical}}
			}
			t.Run(fmt.Sprintf("supp=%d/models=%v", supp, models), func(t *testing.T) {
				want, err := Search(context.Background(), tab, opt)
				if err != nil {
					t.Fatal(err)
				}
				got, err := SearchClasses(context.Background(), merged, opt)
				if err != nil {
					t.Fatal(err)
				}
				if diff := sameResult(got, want); diff != "" {
					t.Fatalf("SearchClasses: %s", diff)
				}
				checkRecoding(t, tab, tables, index, merged, want.Levels, opt, true, want)
				t.Logf("node %v, %d classes, %d suppressed; evaluated %d (Search %d), rolled up %d (Search %d)",
					got.Levels, got.Classes, got.Suppressed, got.Evaluated, want.Evaluated, got.RolledUp, want.RolledUp)
			})
		}
	}
}

// TestSearchClassesBeyondBottomRows: a table of more records than the search always
// counts the bottom node of (bottomMaxRows), where Search rolls up from the records
// (many classes) or from the bottom it counted (few: at most one per bottomShare
// records), and SearchClasses from the class table.
func TestSearchClassesBeyondBottomRows(t *testing.T) {
	defer func(n int) { bottomMaxRows = n }(bottomMaxRows)
	bottomMaxRows = 4096 // tables of 20,000 records stand for the larger ones
	rng := rand.New(rand.NewPCG(51, 52))
	n := 20000
	if testing.Short() {
		n = 10000 // the race detector's run: still more than bottomMaxRows
	}
	for _, q := range []int{8, 2} { // nearly every record a class of its own; a few dozen classes
		tab, _, _ := randomTable(rng, n, q)
		searchClassesAsRecords(t, tab)
		// Told that the bottom has more classes than the search would keep (true with
		// 8 quasi-identifiers, not with 2), Search does not count them and rolls up
		// from the records, to the same node.
		for _, opt := range []Options{{K: 10, MaxSuppressed: 100}, {K: 50, Metric: MetricDiscernibility}} {
			told := opt
			told.BottomOver = tab.Rows / bottomShare
			s, err := prepareSearch(tab, tab, tab.Rows, told)
			if err != nil {
				t.Fatal(err)
			}
			if b := s.countBottom(tab); b.rows == nil {
				t.Fatalf("q=%d: told the bottom is too large, the search counted %d classes", q, b.n)
			}
			want, err := Search(context.Background(), tab, opt)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Search(context.Background(), tab, told)
			if err != nil {
				t.Fatal(err)
			}
			if diff := sameResult(got, want); diff != "" {
				t.Fatalf("q=%d, k=%d, told the bottom is too large: %s", q, opt.K, diff)
			}
		}
	}
}

// searchClassesAsRecords checks that SearchClasses on the class table of tab finds what
// Search on its records finds.
func searchClassesAsRecords(t *testing.T, tab *Table) {
	t.Helper()
	ct, err := CountClasses(tab)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d records, %d classes", tab.Rows, ct.Len())
	for _, opt := range []Options{{K: 10, MaxSuppressed: 100}, {K: 50, Metric: MetricDiscernibility}} {
		want, err := Search(context.Background(), tab, opt)
		if err != nil {
			t.Fatal(err)
		}
		got, err := SearchClasses(context.Background(), ct, opt)
		if err != nil {
			t.Fatal(err)
		}
		if diff := sameResult(got, want); diff != "" {
			t.Fatalf("k=%d: SearchClasses: %s", opt.K, diff)
		}
	}
}

// TestMergeClassesRefuses: parts whose columns differ, and what is not a class table,
// are refused with an error, never a panic; parts with equal hierarchies built apart
// are not.
func TestMergeClassesRefuses(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	base, _, hier := randomTable(rng, 200, 3)
	withSensitive(rng, base, 2)
	count := func(tab *Table) *ClassTable {
		ct, err := CountClasses(tab)
		if err != nil {
			t.Fatal(err)
		}
		return ct
	}
	// change returns a copy of base's columns with f applied (codes shared).
	change := func(f func(tab *Table)) *ClassTable {
		tab := &Table{Rows: base.Rows, Columns: slices.Clone(base.Columns), Sensitive: slices.Clone(base.Sensitive)}
		f(tab)
		return count(tab)
	}
	rebuilt := func(c int, edit func(rows [][]string)) *Hierarchy {
		rows := make([][]string, len(hier[c]))
		for r, row := range hier[c] {
			rows[r] = slices.Clone(row)
		}
		if edit != nil {
			edit(rows)
		}
		h, err := NewHierarchy("rebuilt", rows)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	ok := count(base)
	tests := []struct {
		name  string
		other *ClassTable
	}{
		{"quasi-identifier renamed", change(func(tab *Table) { tab.Columns[1].Name = "other" })},
		{"quasi-identifier missing", change(func(tab *Table) { tab.Columns = tab.Columns[:2] })},
		{"hierarchy with another leaf name", change(func(tab *Table) {
			tab.Columns[0].Hierarchy = rebuilt(0, func(rows [][]string) { rows[0][0] = "renamed" })
		})},
		{"hierarchy one level higher", change(func(tab *Table) {
			tab.Columns[2].Hierarchy = rebuilt(2, func(rows [][]string) {
				for r := range rows {
					rows[r] = slices.Insert(rows[r], len(rows[r])-1, "mid")
				}
			})
		})},
		{"sensitive column missing", change(func(tab *Table) { tab.Sensitive = tab.Sensitive[:1] })},
		{"sensitive column renamed", change(func(tab *Table) { tab.Sensitive[0].Name = "other" })},
		{"sensitive column with more values", change(func(tab *Table) { tab.Sensitive[0].Values++ })},
		{"sensitive column without its tree", change(func(tab *Table) { tab.Sensitive[1].Tree = nil })},
		{"sensitive column with another tree", change(func(tab *Table) {
			flat, err := closeness.NewTree(tab.Sensitive[1].Values, [][]int32{make([]int32, tab.Sensitive[1].Values)}, []int{1})
			if err != nil {
				t.Fatal(err)
			}
			tab.Sensitive[1].Tree = flat
		})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, parts := range [][]*ClassTable{{ok, tc.other}, {tc.other, ok, ok}} {
				got, err := MergeClasses(parts...)
				if !errors.Is(err, ErrIncompatible) || got != nil {
					t.Fatalf("merged: %v, %v; want ErrIncompatible", got, err)
				}
			}
			if ok.Equal(tc.other) || tc.other.Equal(ok) {
				t.Fatalf("equal")
			}
		})
	}
	t.Run("equal hierarchies built apart", func(t *testing.T) {
		other := change(func(tab *Table) {
			for c := range tab.Columns {
				tab.Columns[c].Hierarchy = rebuilt(c, nil)
			}
			tab.Sensitive[1].Tree = pairTree(tab.Sensitive[1].Values)
		})
		if !ok.Equal(other) {
			t.Fatal("not equal")
		}
		if _, err := MergeClasses(ok, other); err != nil {
			t.Fatal(err)
		}
	})
	var none *ClassTable
	if none.Len() != 0 || none.Records() != 0 || none.Columns() != nil || (&ClassTable{}).Sensitive() != nil || !none.Equal(nil) || none.Equal(ok) || ok.Equal(&ClassTable{}) {
		t.Error("a nil or zero class table is not empty, or equals a class table")
	}
	if c, counted := (*Recoding)(nil).Class([]int32{0}); counted || c != -1 {
		t.Error("a nil recoding counted a class")
	}
	for name, parts := range map[string][]*ClassTable{"no parts": nil, "a nil part": {ok, nil}, "a zero part": {{}, ok}} {
		t.Run(name, func(t *testing.T) {
			if got, err := MergeClasses(parts...); err == nil || got != nil || errors.Is(err, ErrIncompatible) {
				t.Fatalf("merged: %v, %v", got, err)
			}
		})
	}
	t.Run("more records than 32 bits count", func(t *testing.T) {
		big := *ok
		big.meta = metaOf(ok.meta, math.MaxInt32/2+1)
		_, err := MergeClasses(&big, &big)
		if err == nil || !strings.Contains(err.Error(), "at most") {
			t.Fatalf("merged %d records twice: %v", big.Records(), err)
		}
		if _, err := MergeClasses(&big, ok); err != nil {
			t.Fatalf("merged %d and %d records: %v", big.Records(), ok.Records(), err)
		}
	})
}

// TestClassTableRefusesBadInput: nil tables, a zero class table, bad options and bad
// levels are errors.
func TestClassTableRefusesBadInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	tab, _, _ := randomTable(rng, 100, 2)
	ct, err := CountClasses(tab)
	if err != nil {
		t.Fatal(err)
	}
	bad := *tab
	bad.Rows++
	ctx := context.Background()
	for name, f := range map[string]func() error{
		"count nil":             func() error { _, err := CountClasses(nil); return err },
		"count malformed":       func() error { _, err := CountClasses(&bad); return err },
		"search nil":            func() error { _, err := SearchClasses(ctx, nil, Options{K: 2}); return err },
		"search zero":           func() error { _, err := SearchClasses(ctx, &ClassTable{}, Options{K: 2}); return err },
		"search k=0":            func() error { _, err := SearchClasses(ctx, ct, Options{}); return err },
		"search unknown metric": func() error { _, err := SearchClasses(ctx, ct, Options{K: 2, Metric: "x"}); return err },
		"search missing column": func() error {
			_, err := SearchClasses(ctx, ct, Options{K: 2, Diversity: []Diversity{{Column: 0}}})
			return err
		},
		"recode nil":            func() error { _, err := NodeRecoding(nil, []int{0, 0}, Options{K: 2}); return err },
		"recode too few levels": func() error { _, err := NodeRecoding(ct, []int{0}, Options{K: 2}); return err },
		"recode level too high": func() error { _, err := NodeRecoding(ct, []int{0, 9}, Options{K: 2}); return err },
		"recode negative level": func() error { _, err := NodeRecoding(ct, []int{-1, 0}, Options{K: 2}); return err },
		"recode missing column": func() error {
			_, err := NodeRecoding(ct, []int{0, 0}, Options{K: 2, Closeness: []Closeness{{Column: 0}}})
			return err
		},
		"search cancelled context": func() error {
			ctx, cancel := context.WithCancel(ctx)
			cancel()
			_, err := SearchClasses(ctx, ct, Options{K: 2})
			if !errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		},
	} {
		if err := f(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestLexOrderWide: classes whose codes do not fit in 64 bits are put in the same
// order, column by column, as when they do.
func TestLexOrderWide(t *testing.T) {
	rng := rand.New(rand.NewPCG(81, 82))
	q, n := 5, 2000
	cls := &classes{cols: make([][]int32, q), n: n}
	for i := range q {
		cls.cols[i] = make([]int32, n)
		for j := range n {
			cls.cols[i][j] = int32(rng.IntN(3))
		}
	}
	narrow := slices.Repeat([]int{3}, q)
	wide := slices.Repeat([]int{1 << 20}, q)
	if newPacking(wide) != nil || newPacking(narrow) == nil {
		t.Fatal("the widths do not test both orders")
	}
	a, b := lexOrder(cls, narrow), lexOrder(cls, wide)
	key := func(j int32) []int32 {
		k := make([]int32, q)
		for i := range q {
			k[i] = cls.cols[i][j]
		}
		return k
	}
	for c := range n {
		if !slices.Equal(key(a[c]), key(b[c])) {
			t.Fatalf("class %d: %v packed, %v column by column", c, key(a[c]), key(b[c]))
		}
		if c > 0 && slices.Compare(key(a[c-1]), key(a[c])) > 0 {
			t.Fatalf("classes %d and %d out of order", c-1, c)
		}
	}
}

// uniformTable is a table of n records with uniform leaves over quasi-identifiers of
// the given leaf counts, each with a hierarchy that groups 2 to 4 values per level.
func uniformTable(rng *rand.Rand, n int, leaves []int) *Table {
	tab := &Table{Rows: n}
	for c, l := range leaves {
		var divs []int // leaves per value, level by level
		for div := 2 + rng.IntN(3); div < l; div *= 2 + rng.IntN(3) {
			divs = append(divs, div)
		}
		rows := make([][]string, l)
		for leaf := range l {
			rows[leaf] = []string{fmt.Sprint(leaf)}
			for _, div := range divs {
				rows[leaf] = append(rows[leaf], fmt.Sprintf("g%d", leaf/div))
			}
			rows[leaf] = append(rows[leaf], Top)
		}
		h, err := NewHierarchy(fmt.Sprintf("u%d", c), rows)
		if err != nil {
			panic(err)
		}
		codes := NewCodes(n, l)
		for r := range n {
			codes.Set(r, int32(rng.IntN(l)))
		}
		tab.Columns = append(tab.Columns, Column{Name: fmt.Sprintf("q%d", c), Hierarchy: h, Codes: codes})
	}
	return tab
}

// BenchmarkSearchClasses compares Search on a large table with CountClasses and
// SearchClasses of it, whole and in four parts: few classes (a random table of skewed
// values on small hierarchies), and many (uniform values on larger ones, as the
// hospital benchmark's).
func BenchmarkSearchClasses(b *testing.B) {
	rng := rand.New(rand.NewPCG(91, 92))
	n := 3 << 20
	few, _, _ := randomTable(rng, n, 6)
	many := uniformTable(rng, n, []int{105, 2, 297, 25, 42, 4})
	for name, tab := range map[string]*Table{"few": few, "many": many} {
		benchSearchClasses(b, name, tab)
	}
}

func benchSearchClasses(b *testing.B, name string, tab *Table) {
	rng := rand.New(rand.NewPCG(93, 94))
	n := tab.Rows
	opt := Options{K: 10, MaxSuppressed: n / 100}
	tables, _ := splitTable(rng, tab, 4)
	ct, err := CountClasses(tab)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s: %d records, %d classes at the bottom", name, n, ct.Len())
	b.Run(fmt.Sprintf("%s/Search/rows=%d", name, n), func(b *testing.B) {
		for b.Loop() {
			if _, err := Search(context.Background(), tab, opt); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run(fmt.Sprintf("%s/CountClasses+SearchClasses/rows=%d", name, n), func(b *testing.B) {
		for b.Loop() {
			ct, err := CountClasses(tab)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := SearchClasses(context.Background(), ct, opt); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run(fmt.Sprintf("%s/CountClasses-4-parts+MergeClasses+SearchClasses/rows=%d", name, n), func(b *testing.B) {
		for b.Loop() {
			parts := make([]*ClassTable, len(tables))
			for p, pt := range tables {
				var err error
				if parts[p], err = CountClasses(pt); err != nil {
					b.Fatal(err)
				}
			}
			ct, err := MergeClasses(parts...)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := SearchClasses(context.Background(), ct, opt); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// countMerged is the merge of the class tables of the parts.
func countMerged(t *testing.T, tables []*Table) *ClassTable {
	t.Helper()
	parts := make([]*ClassTable, len(tables))
	for p, pt := range tables {
		var err error
		if parts[p], err = CountClasses(pt); err != nil {
			t.Fatal(err)
		}
	}
	merged, err := MergeClasses(parts...)
	if err != nil {
		t.Fatal(err)
	}
	return merged
}

// TestCountRecordClasses: every record's class in the table holds the record's codes,
// the counts are the records assigned, no two classes hold the same codes, and a limit
// below the number of classes stops the count. The last trials are large enough to be
// counted in parts on two goroutines (countInParts); not under -short, the race
// detector's run, where TestCountInPartsMatchesOneCount runs countInParts's goroutines
// on small tables.
func TestCountRecordClasses(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	rng := rand.New(rand.NewPCG(61, 62))
	trials := 34
	if testing.Short() {
		trials = 30
	}
	for trial := range trials {
		n := 1 + rng.IntN(3000)
		tab, _, _ := randomTable(rng, n, 1+rng.IntN(4))
		if trial >= 30 {
			n = partsMinRecords + rng.IntN(partsMinRecords)
			// Six columns of 20 or more leaves: too many combinations to count in an
			// array, so the count is a table's, in parts.
			tab, _, _ = randomTableOf(rng, n, 6-trial%3*2, 20, 40, func(u float64) float64 { return u * u })
		}
		distinct := map[string]bool{}
		for r := range n {
			key := make([]byte, 0, 4*len(tab.Columns))
			for _, c := range tab.Columns {
				key = binary.LittleEndian.AppendUint32(key, uint32(c.Codes.At(r)))
			}
			distinct[string(key)] = true
		}
		ct, assign, err := CountRecordClasses(tab, 0)
		if err != nil {
			t.Fatal(err)
		}
		want, err := CountClasses(tab)
		if err != nil {
			t.Fatal(err)
		}
		if !ct.Equal(want) || len(assign) != n {
			t.Fatalf("trial %d: a table other than CountClasses's, or %d classes for %d records", trial, len(assign), n)
		}
		if ct.Len() != len(distinct) {
			t.Fatalf("trial %d: %d classes, the records hold %d distinct combinations", trial, ct.Len(), len(distinct))
		}
		counts := make([]int, ct.Len())
		for r, j := range assign {
			counts[j]++
			for i, c := range tab.Columns {
				if c.Codes.At(r) != ct.Code(i, int(j)) {
					t.Fatalf("trial %d: record %d in class %d, whose code %d is %d, not %d", trial, r, j, i, ct.Code(i, int(j)), c.Codes.At(r))
				}
			}
		}
		for j, c := range counts {
			if c != ct.Count(j) {
				t.Fatalf("trial %d: class %d counts %d records, %d are in it", trial, j, ct.Count(j), c)
			}
		}
		if got, _, err := CountRecordClasses(tab, ct.Len()); err != nil || got == nil {
			t.Fatalf("trial %d: a limit of all %d classes: %v, %v", trial, ct.Len(), got, err)
		}
		if ct.Len() > 1 {
			for _, limit := range []int{ct.Len() - 1, ct.Len() / 2, 1} {
				if got, as, err := CountRecordClasses(tab, limit); err != nil || got != nil || as != nil {
					t.Fatalf("trial %d: a limit of %d below %d classes gave a table (%v)", trial, limit, ct.Len(), err)
				}
			}
		}
	}
}

// TestUtilityClassesMatchesRecords: the utility of a release measured on its class
// table is Utility's on the records, bit for bit.
func TestUtilityClassesMatchesRecords(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	for trial := range 40 {
		n := 50 + rng.IntN(2000)
		tab, _, _ := randomTable(rng, n, 1+rng.IntN(4))
		values := randomValues(rng, tab)
		opt := Options{K: 1 + rng.IntN(6), MaxSuppressed: rng.IntN(n/10 + 1)}
		res, err := Search(context.Background(), tab, opt)
		if errors.Is(err, fault.ErrUnattainable) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		class, covers, err := NodeClasses(tab, res.Levels, opt)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Utility(tab, class, covers, values, opt.K)
		if err != nil {
			t.Fatal(err)
		}
		ct, assign, err := CountRecordClasses(tab, 0)
		if err != nil {
			t.Fatal(err)
		}
		classOf := make([]int32, ct.Len())
		for r, j := range assign {
			classOf[j] = class[r]
		}
		got, err := UtilityClasses(ct, classOf, covers, values, opt.K)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("trial %d: from the class table %+v, from the records %+v", trial, got, want)
		}
	}
}

// TestManyClasses: a sample judges nearly unique records, in any order, to have many
// classes, and records of at most limit classes not to, in random order or in order of
// their classes; a table too small to sample is never judged.
func TestManyClasses(t *testing.T) {
	n := 3 << 20 // enough records for a sample of 1,024 blocks
	if testing.Short() {
		t.Skip("tables of 3 Mi records")
	}
	h := func(leaves int) *Hierarchy {
		rows := make([][]string, leaves)
		for l := range rows {
			rows[l] = []string{fmt.Sprint(l), Top}
		}
		hier, err := NewHierarchy("h", rows)
		if err != nil {
			t.Fatal(err)
		}
		return hier
	}
	rng := rand.New(rand.NewPCG(89, 97))
	limit := n / 16
	for _, tc := range []struct {
		name    string
		class   func(r int) int // the class of record r, below 4 Mi
		classes int
		want    bool
	}{
		{"unique", func(r int) int { return r }, n, true},
		{"unique, shuffled", func(int) int { return rng.IntN(1 << 22) }, n, true},
		{"limit classes, shuffled", func(int) int { return rng.IntN(limit) }, limit, false},
		{"limit classes, in order", func(r int) int { return r / 16 }, limit, false},
		{"a tenth of limit", func(int) int { return rng.IntN(limit / 10) }, limit / 10, false},
	} {
		tab := &Table{Rows: n}
		for c := range 2 { // a class is two codes of 2 Ki leaves
			codes := NewCodes(n, 2048)
			for r := range n {
				codes.Set(r, int32(tc.class(r)>>(11*c)&2047))
			}
			tab.Columns = append(tab.Columns, Column{Name: fmt.Sprintf("q%d", c), Hierarchy: h(2048), Codes: codes})
		}
		if got := ManyClasses(tab, limit); got != tc.want {
			t.Errorf("%s: ManyClasses %v, want %v", tc.name, got, tc.want)
		}
	}
	small := &Table{Rows: 1 << 20} // every record a class of its own
	for c := range 2 {
		codes := NewCodes(small.Rows, 2048)
		for r := range small.Rows {
			codes.Set(r, int32(r>>(11*c)&2047))
		}
		small.Columns = append(small.Columns, Column{Name: fmt.Sprintf("q%d", c), Hierarchy: h(2048), Codes: codes})
	}
	if ManyClasses(small, small.Rows/16) {
		t.Error("a table of 1 Mi records was judged from a sample too small")
	}
}
