package generalize

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"sanitizer/closeness"
	"sanitizer/diversity"
	"sanitizer/fault"
	"sanitizer/schema"
)

// cutObjectives are every metric of the search, at the default gs-factor and some
// others, and the loss's aggregates and weights.
var cutObjectives = []Options{
	{Metric: MetricLoss}, {Metric: MetricDiscernibility}, {Metric: MetricHeight}, {Metric: MetricPrecision},
	{Metric: MetricAECS}, {Metric: MetricDiscernibilityStar}, {Metric: MetricEntropy}, {Metric: MetricEntropyMonotone},
	{Metric: MetricEntropyLoss}, {Metric: MetricNCP}, {Metric: MetricNCP, Values: [][]float64{}}, // values set per table
	{Metric: MetricLoss, GSFactor: gsOf(0.3)}, {Metric: MetricLoss, GSFactor: gsOf(1)},
	{Metric: MetricEntropy, GSFactor: gsOf(0.2)}, {Metric: MetricEntropyLoss, GSFactor: gsOf(0.8)},
	{Metric: MetricLoss, Aggregate: AggregateGeometric}, {Metric: MetricLoss, Aggregate: AggregateMax, Weights: []float64{}},
}

// cutTable is a table of n records over q quasi-identifiers whose hierarchies group
// the leaves at random (a value's leaves are not contiguous codes, nor is its least
// leaf its first), 1 to 10 leaves and 2 to 5 levels each, values skewed.
func cutTable(rng *rand.Rand, n, q int) *Table {
	tab := &Table{Rows: n}
	for c := range q {
		leaves := 1 + rng.IntN(10)
		depth := 2 + rng.IntN(4)
		rows := make([][]string, leaves)
		group := make([]int, leaves) // the leaf's value at the level being made
		for l := range rows {
			rows[l] = make([]string, depth)
			rows[l][0] = fmt.Sprintf("c%d-v%d", c, l)
			rows[l][depth-1] = Top
			group[l] = l
		}
		width := leaves
		for lev := 1; lev < depth-1; lev++ {
			next := 1 + rng.IntN(max(width-1, 1)) // fewer values than below (when there are)
			parent := make([]int, width)
			for v := range parent {
				parent[v] = rng.IntN(next)
			}
			for l := range rows {
				group[l] = parent[group[l]]
				rows[l][lev] = fmt.Sprintf("c%d-L%d-%d", c, lev, group[l])
			}
			width = next
		}
		h, err := NewHierarchy(fmt.Sprintf("h%d", c), rows)
		if err != nil {
			panic(err)
		}
		codes := NewCodes(n, leaves)
		for r := range n {
			u := rng.Float64()
			codes.Set(r, int32(u*u*float64(leaves)))
		}
		tab.Columns = append(tab.Columns, Column{Name: fmt.Sprintf("q%d", c), Hierarchy: h, Codes: codes})
	}
	return tab
}

// cutOptions returns objective ob made for tab (numeric values for ncp, weights for
// the loss) with random k, suppression and models on tab's two sensitive columns.
func cutOptions(rng *rand.Rand, tab *Table, ob Options) (Options, string) {
	opt := ob
	if ob.Values != nil {
		opt.Values = make([][]float64, len(tab.Columns))
		for i, c := range tab.Columns {
			if rng.IntN(4) == 0 {
				continue
			}
			opt.Values[i] = make([]float64, c.Hierarchy.Leaves())
			for x := range opt.Values[i] {
				opt.Values[i][x] = float64(rng.IntN(100)) / 4
			}
		}
	}
	if ob.Weights != nil {
		opt.Weights = make([]float64, len(tab.Columns))
		for i := range opt.Weights {
			opt.Weights[i] = float64(1+rng.IntN(4)) / 2
		}
	}
	opt.K = 1 + rng.IntN(8)
	opt.Workers = 1 + rng.IntN(3)
	if rng.IntN(3) > 0 {
		opt.MaxSuppressed = rng.IntN(tab.Rows/4 + 1)
	}
	kind := "k"
	switch rng.IntN(4) {
	case 0:
		dm := []diversity.Model{{Variant: diversity.Distinct, L: 2}, {Variant: diversity.Entropy, L: 1.5}, {Variant: diversity.Recursive, L: 2, C: 2}}[rng.IntN(3)]
		opt.Diversity = []Diversity{{Column: 0, Model: dm}}
		kind = fmt.Sprintf("%s-%g", dm.Variant, dm.L)
	case 1:
		dist := []closeness.Distance{closeness.Equal, closeness.Ordered, closeness.Hierarchical}[rng.IntN(3)]
		opt.Closeness = []Closeness{{Column: 1, T: 0.1 + 0.4*rng.Float64(), Distance: dist}}
		kind = fmt.Sprintf("t-%s-%.2f", dist, opt.Closeness[0].T)
	case 2:
		opt.Likeness = []Likeness{{Column: 0, Beta: 0.5 + 2*rng.Float64(), Enhanced: rng.IntN(2) == 0}}
		kind = fmt.Sprintf("beta-%.2f", opt.Likeness[0].Beta)
	}
	name := string(opt.Metric)
	if opt.GSFactor != nil {
		name += fmt.Sprintf("@%g", *opt.GSFactor)
	}
	if opt.Aggregate != "" {
		name += "/" + string(opt.Aggregate)
	}
	if opt.Values != nil {
		name += "/values"
	}
	return opt, fmt.Sprintf("%s/k=%d/supp=%d/%s", name, opt.K, opt.MaxSuppressed, kind)
}

// withPopulation returns a population of tab (its records and as many again, at
// random) and its k-map or δ-presence model.
func withPopulation(rng *rand.Rand, tab *Table) *Population {
	extra := rng.IntN(tab.Rows + 1)
	pop := &Table{Rows: tab.Rows + extra}
	for _, c := range tab.Columns {
		codes := NewCodes(pop.Rows, c.Hierarchy.Leaves())
		for r := range pop.Rows {
			if r < tab.Rows {
				codes.Set(r, c.Codes.At(r))
			} else {
				codes.Set(r, int32(rng.IntN(c.Hierarchy.Leaves())))
			}
		}
		pop.Columns = append(pop.Columns, Column{Name: c.Name, Hierarchy: c.Hierarchy, Codes: codes})
	}
	p := &Population{Table: pop}
	if rng.IntN(2) == 0 {
		p.KMap = 2 + rng.IntN(6)
	} else {
		p.DeltaMin, p.DeltaMax = 0.1*rng.Float64(), 0.5+0.5*rng.Float64()
	}
	return p
}

// countCut counts the cut class table of the parts as workers would: each part cut,
// counted, encoded and decoded, with its leaf counts; the driver merges both.
func countCut(t *testing.T, cut *Cut, tables []*Table) (*ClassTable, LeafCounts) {
	t.Helper()
	parts := make([]*ClassTable, len(tables))
	counts := make([]LeafCounts, len(tables))
	for p, pt := range tables {
		ct, err := cut.Table(pt)
		if err != nil {
			t.Fatal(err)
		}
		cls, err := CountClasses(ct)
		if err != nil {
			t.Fatal(err)
		}
		b, err := cut.MarshalClasses(cls)
		if err != nil {
			t.Fatal(err)
		}
		if parts[p], err = cut.UnmarshalClasses(b, pt); err != nil {
			t.Fatal(err)
		}
		if !parts[p].Equal(cls) {
			t.Fatalf("part %d: the decoded cut class table differs from the encoded one", p)
		}
		lc, err := CountLeaves(pt)
		if err != nil {
			t.Fatal(err)
		}
		if b, err = lc.MarshalBinary(); err != nil {
			t.Fatal(err)
		}
		if counts[p], err = UnmarshalLeafCounts(b, pt); err != nil {
			t.Fatal(err)
		}
	}
	merged, err := MergeClasses(parts...)
	if err != nil {
		t.Fatal(err)
	}
	leaves, err := MergeLeafCounts(counts...)
	if err != nil {
		t.Fatal(err)
	}
	return merged, leaves
}

// sameRecoding checks that the cut's recoding of node suppresses, publishes and
// numbers what the full class table's does, record by record of tab: by the
// record's leaves and by their representatives.
func sameRecoding(t *testing.T, tab *Table, full, cutCT *ClassTable, cut *Cut, node []int, opt Options) {
	t.Helper()
	got, want := recodings(t, full, cutCT, cut, node, opt)
	var leaves []int32
	reps := make([]int32, len(tab.Columns))
	for r := range tab.Rows {
		leaves = leavesOf(tab, r, leaves)
		for i, l := range leaves {
			reps[i] = cut.Leaf(i, l)
		}
		w, _ := want.Class(leaves)
		g, counted := got.Class(leaves)
		gr, countedRep := got.Class(reps)
		if g != w || gr != w || !counted || !countedRep {
			t.Fatalf("node %v, record %d: class %d (counted %v), by representatives %d (%v); the full recoding's %d", node, r, g, counted, gr, countedRep, w)
		}
	}
}

// recodings returns the cut's recoding of node and the full class table's, after
// checking that they publish the same classes of the same sizes and suppress as many
// of as many records.
func recodings(t *testing.T, full, cutCT *ClassTable, cut *Cut, node []int, opt Options) (got, want *Recoding) {
	t.Helper()
	want, err := NodeRecoding(full, node, opt)
	if err != nil {
		t.Fatal(err)
	}
	got, err = cut.Recoding(cutCT, node, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Covers, want.Covers) || !slices.Equal(got.Sizes, want.Sizes) || got.Suppressed != want.Suppressed || got.Records != want.Records {
		t.Fatalf("node %v: cut recoding publishes %d classes %v, suppresses %d of %d; the full one %d %v, %d of %d",
			node, got.Covers.Classes(), got.Sizes, got.Suppressed, got.Records, want.Covers.Classes(), want.Sizes, want.Suppressed, want.Records)
	}
	return got, want
}

// nodeExact is the metric's exact value and value at a node of ct (metric and models
// of opt, the records per leaf of tal), its failing classes suppressed: what the
// search compares nodes by.
func nodeExact(t *testing.T, ct *ClassTable, tal tallier, levels []int, opt Options) (*big.Int, float64) {
	t.Helper()
	met, err := newMetricOf(opt, opt.Values, ct.meta, tal)
	if err != nil {
		t.Fatal(err)
	}
	mod, err := newModelsOf(ct.meta, tal, opt)
	if err != nil {
		t.Fatal(err)
	}
	q := len(levels)
	maps, sizes := make([][]int32, q), make([]int, q)
	for i, c := range ct.meta.Columns {
		maps[i], sizes[i] = c.Hierarchy.levelMap(0, levels[i]), c.Hierarchy.Size(levels[i])
	}
	src := &classes{cols: ct.cols, counts: ct.counts, n: ct.Len(), hist: ct.hist}
	assign := make([]int32, src.n)
	cls, _ := (&grouper{par: 1}).rollUp(src, 0, maps, sizes, assign, 0)
	cls.hist = mod.rollHist(src, assign, cls.n)
	failing := mod.failing(cls, opt.K)
	if err := failPopulation(ct.meta, opt, levels, cls, failing); err != nil {
		t.Fatal(err)
	}
	return met.exact(levels, cls, func(j int) bool { return int(cls.count(j)) < opt.K || failing[j] })
}

// TestCutSearchMatchesFull: on random tables (hierarchies grouping leaves at random)
// in random parts, at random minimum levels, for every objective with k, l-diversity,
// t-closeness, β-likeness, δ-presence or k-map and suppression: the cut class table,
// counted part by part through its encoding, is Cut.Classes of the full class table
// (and of itself) and has at most its classes; Cut.Search reports what SearchClasses of the full class
// table does with those minimum levels (or the same error); and, at every node at or
// above the cut (exhaustively), the recoding of the cut table suppresses and numbers
// every record's class as the full table's does and the metric's exact value is the
// full table's.
func TestCutSearchMatchesFull(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	trials := 20 * len(cutObjectives)
	if testing.Short() {
		trials = 5 * len(cutObjectives) // the race detector's run: every objective, fewer tables
	}
	found, unattainable, fewer, nodes, noLeaves := 0, 0, 0, 0, 0
	for trial := range trials {
		n := 20 + rng.IntN(1000)
		tab := cutTable(rng, n, 1+rng.IntN(4))
		withSensitive(rng, tab, 2)
		levels := make([]int, len(tab.Columns))
		for i, c := range tab.Columns {
			levels[i] = rng.IntN(c.Hierarchy.Height())
		}
		opt, name := cutOptions(rng, tab, cutObjectives[trial%len(cutObjectives)])
		if rng.IntN(5) == 0 {
			opt.Population = withPopulation(rng, tab)
			name += "/population"
		}
		t.Run(fmt.Sprintf("trial%d/n=%d/cut=%v/%s", trial, n, levels, name), func(t *testing.T) {
			cut, err := NewCut(tab.Columns, levels)
			if err != nil {
				t.Fatal(err)
			}
			tables, _ := splitTable(rng, tab, 1+rng.IntN(4))
			full := countMerged(t, tables)
			cutCT, leaves := countCut(t, cut, tables)
			if again, err := cut.Classes(full); err != nil || !again.Equal(cutCT) {
				t.Fatalf("Cut.Classes of the full class table differs from the parts' cut (%v)", err)
			}
			if again, err := cut.Classes(cutCT); err != nil || !again.Equal(cutCT) {
				t.Fatalf("Cut.Classes of the cut class table is not itself (%v)", err)
			}
			if cutCT.Len() > full.Len() {
				t.Fatalf("the cut class table has %d classes, the full one %d", cutCT.Len(), full.Len())
			}
			if cutCT.Len() < full.Len() {
				fewer++
			}
			fullOpt, cutOpt := opt, opt
			fullOpt.MinLevels = levels
			if rng.IntN(2) == 0 {
				cutOpt.MinLevels = levels // else nil: the cut's
			}
			if opt.Population != nil {
				p := *opt.Population
				if rng.IntN(2) == 0 { // the population as a class table
					pc, err := CountClasses(p.Table)
					if err != nil {
						t.Fatal(err)
					}
					p.Table, p.Classes = nil, pc
				}
				if cutOpt.Population, err = cut.Population(&p); err != nil {
					t.Fatal(err)
				}
			}
			want, wantErr := SearchClasses(context.Background(), full, fullOpt)
			got, err := cut.Search(context.Background(), cutCT, leaves, cutOpt)
			if wantErr != nil {
				if !errors.Is(wantErr, fault.ErrUnattainable) {
					t.Fatal(wantErr)
				}
				if err == nil || err.Error() != wantErr.Error() {
					t.Fatalf("full: %v; cut: %v, %v", wantErr, got, err)
				}
				unattainable++
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if diff := sameResult(got, want); diff != "" {
					t.Fatalf("cut search: %s", diff)
				}
				found++
			}
			// Without the leaf counts: the same, or refused when the metric reads them.
			bare, err := cut.Search(context.Background(), cutCT, nil, cutOpt)
			switch {
			case CutNeedsLeafCounts(opt):
				noLeaves++
				if !errors.Is(err, ErrNoLeafCounts) {
					t.Fatalf("%s without leaf counts: %v, %v", opt.Metric, bare, err)
				}
			case wantErr != nil:
				if err == nil || err.Error() != wantErr.Error() {
					t.Fatalf("without leaf counts: %v, %v; full: %v", bare, err, wantErr)
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				if diff := sameResult(bare, want); diff != "" {
					t.Fatalf("cut search without leaf counts: %s", diff)
				}
			}
			// Every node at or above the cut.
			lat := tab.lattice()
			tal := cutTally{ct: cutCT, leaves: leaves}
			for idx := range lat.Size() {
				node := lat.Levels(idx, nil)
				above := true
				for i, l := range node {
					above = above && l >= levels[i]
				}
				if !above {
					continue
				}
				nodes++
				sameRecoding(t, tab, full, cutCT, cut, node, fullOpt)
				wantEx, wantV := nodeExact(t, full, full, node, fullOpt)
				gotEx, gotV := nodeExact(t, cutCT, tal, node, cutOpt)
				if wantEx.Cmp(gotEx) != 0 || wantV != gotV {
					t.Fatalf("node %v: cut value %v (exact %v), full %v (%v)", node, gotV, gotEx, wantV, wantEx)
				}
			}
		})
	}
	t.Logf("%d trials: %d found a node, %d unattainable; the cut had fewer classes in %d; %d nodes at or above the cut compared; %d refused without leaf counts", trials, found, unattainable, fewer, nodes, noLeaves)
	if found < trials/2 || unattainable == 0 || fewer < trials/3 || noLeaves == 0 {
		t.Errorf("%d found, %d unattainable, %d with fewer classes, %d refused without leaf counts: the trials check too little", found, unattainable, fewer, noLeaves)
	}
}

// TestCutAdult: Adult's class table at its leaves and cut at some minimum levels
// (fewer classes, logged); the cut search of Adult in three parts at random minimum
// levels reports what the full search does, for every objective (and some gs-factors
// and an aggregate), with k and suppression, and with l-diversity and t-closeness on
// occupation; the chosen node's recoding is the full table's, record by record.
func TestCutAdult(t *testing.T) {
	if testing.Short() {
		t.Skip("searches Adult")
	}
	start := time.Now()
	tab, _, _ := loadAdult(t)
	adultOccupation(t, tab)
	rng := rand.New(rand.NewPCG(73, 74))
	tables, _ := splitTable(rng, tab, 3)
	full := countMerged(t, tables)
	var report []string
	for _, levels := range [][]int{
		{1, 0, 0, 0, 0, 0, 0, 0}, // age in 5-year intervals
		{1, 1, 1, 1, 0, 0, 0, 1},
		{2, 1, 1, 1, 1, 0, 0, 1},
	} {
		cut, err := NewCut(tab.Columns, levels)
		if err != nil {
			t.Fatal(err)
		}
		ct, err := cut.Classes(full)
		if err != nil {
			t.Fatal(err)
		}
		if ct.Len() >= full.Len() {
			t.Errorf("cut at %v: %d classes, the leaves' %d: not fewer", levels, ct.Len(), full.Len())
		}
		report = append(report, fmt.Sprintf("%v: %d (%d bytes)", levels, ct.Len(), ct.Bytes()))
	}
	t.Logf("Adult: %d records, %d classes at the leaves (%d bytes); cut at %s", tab.Rows, full.Len(), full.Bytes(), strings.Join(report, ", "))

	objectives := []Options{
		{Metric: MetricLoss}, {Metric: MetricDiscernibility}, {Metric: MetricHeight}, {Metric: MetricPrecision},
		{Metric: MetricAECS}, {Metric: MetricDiscernibilityStar}, {Metric: MetricEntropy}, {Metric: MetricEntropyMonotone},
		{Metric: MetricEntropyLoss}, {Metric: MetricNCP},
		{Metric: MetricLoss, GSFactor: gsOf(0.3)}, {Metric: MetricEntropy, GSFactor: gsOf(0.8)}, {Metric: MetricLoss, Aggregate: AggregateGeometric},
	}
	for c, ob := range objectives {
		levels := make([]int, len(tab.Columns))
		for i, col := range tab.Columns {
			levels[i] = rng.IntN(col.Hierarchy.Height() - 1) // not all at the top
		}
		opt := ob
		opt.K = []int{2, 5, 10}[c%3]
		opt.MaxSuppressed = []int{0, tab.Rows / 100, tab.Rows / 20}[c%3]
		if c%2 == 1 {
			opt.Diversity = []Diversity{{Column: 0, Model: diversity.Model{Variant: diversity.Distinct, L: 2}}}
			opt.Closeness = []Closeness{{Column: 0, T: 0.5, Distance: closeness.Hierarchical}}
		}
		name := string(opt.Metric)
		if opt.GSFactor != nil {
			name += fmt.Sprintf("@%g", *opt.GSFactor)
		}
		if opt.Aggregate != "" {
			name += "/" + string(opt.Aggregate)
		}
		t.Run(fmt.Sprintf("%s/k=%d/supp=%d/models=%v/cut=%v", name, opt.K, opt.MaxSuppressed, opt.Diversity != nil, levels), func(t *testing.T) {
			cut, err := NewCut(tab.Columns, levels)
			if err != nil {
				t.Fatal(err)
			}
			cutCT, leaves := countCut(t, cut, tables)
			fullOpt := opt
			fullOpt.MinLevels = levels
			want, err := SearchClasses(context.Background(), full, fullOpt)
			if err != nil {
				t.Fatal(err)
			}
			got, err := cut.Search(context.Background(), cutCT, leaves, opt)
			if err != nil {
				t.Fatal(err)
			}
			if diff := sameResult(got, want); diff != "" {
				t.Fatalf("cut search: %s", diff)
			}
			sameRecoding(t, tab, full, cutCT, cut, want.Levels, fullOpt)
			t.Logf("%d classes cut, %d full: node %v, %s %.6g, %d suppressed", cutCT.Len(), full.Len(), got.Levels, got.Metric, got.Value, got.Suppressed)
		})
	}
	t.Logf("%v", time.Since(start))
}

// TestCutRefuses: a cut refuses what it cannot answer for: a table not cut (or cut
// elsewhere), minimum levels or a node below the cut, a metric that needs leaf counts
// without them, leaf counts of other records, a population not cut, another cut's
// encoding.
func TestCutRefuses(t *testing.T) {
	rng := rand.New(rand.NewPCG(75, 76))
	var tab *Table
	for tab == nil || tab.Columns[0].Hierarchy.Size(1) < 2 || tab.Columns[0].Hierarchy.Size(1) >= tab.Columns[0].Hierarchy.Leaves() {
		tab = cutTable(rng, 300, 2)
	}
	withSensitive(rng, tab, 2)
	levels := []int{1, 0}
	cut, err := NewCut(tab.Columns, levels)
	if err != nil {
		t.Fatal(err)
	}
	full := countMerged(t, []*Table{tab})
	cutCT, leaves := countCut(t, cut, []*Table{tab})
	ctx := context.Background()
	opt := Options{K: 2, MaxSuppressed: 10}
	if _, err := cut.Search(ctx, cutCT, leaves, opt); err != nil {
		t.Fatal(err)
	}
	if _, err := cut.Search(ctx, full, leaves, opt); err == nil || !strings.Contains(err.Error(), "not a representative") {
		t.Errorf("the full class table searched as cut: %v", err)
	}
	if _, err := cut.Search(ctx, cutCT, leaves, Options{K: 2, MinLevels: []int{0, 0}}); err == nil || !strings.Contains(err.Error(), "below the cut") {
		t.Errorf("minimum levels below the cut: %v", err)
	}
	if _, err := cut.Recoding(cutCT, []int{0, 0}, opt); err == nil || !strings.Contains(err.Error(), "below the cut") {
		t.Errorf("a recoding below the cut: %v", err)
	}
	if _, err := cut.Search(ctx, cutCT, nil, Options{K: 2, Metric: MetricEntropy}); !errors.Is(err, ErrNoLeafCounts) {
		t.Errorf("entropy without leaf counts: %v", err)
	}
	other := slices.Clone(leaves)
	other[0] = slices.Clone(leaves[0])
	moved := false
	for leaf := range other[0] { // move a record to a leaf under another value at the cut
		for to := range other[0] {
			if !moved && other[0][leaf] > 0 && cut.Leaf(0, int32(to)) != cut.Leaf(0, int32(leaf)) {
				other[0][leaf]--
				other[0][to]++
				moved = true
			}
		}
	}
	if !moved {
		t.Fatal("no record to move")
	}
	if _, err := cut.Search(ctx, cutCT, other, opt); err == nil || !strings.Contains(err.Error(), "not of the class table's records") {
		t.Errorf("leaf counts of other records: %v", err)
	}
	pop := withPopulation(rng, tab)
	if _, err := cut.Search(ctx, cutCT, leaves, Options{K: 2, Population: pop}); err == nil || !strings.Contains(err.Error(), "cut the population") {
		t.Errorf("a population not cut: %v", err)
	}
	// An encoding of another cut is refused; one of this cut decodes.
	b, err := cut.MarshalClasses(cutCT)
	if err != nil {
		t.Fatal(err)
	}
	coarser, err := NewCut(tab.Columns, []int{1, 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := coarser.UnmarshalClasses(b, tab); err == nil {
		t.Errorf("another cut's encoding decoded")
	}
	if _, err := cut.MarshalClasses(full); err == nil {
		t.Errorf("a class table not cut encoded as cut")
	}
	plain, err := full.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cut.UnmarshalClasses(plain, tab); err == nil {
		t.Errorf("a class table's plain encoding decoded as cut")
	}
	if _, err := NewCut(tab.Columns, []int{0, tab.Columns[1].Hierarchy.Height()}); err == nil {
		t.Errorf("a cut above the top accepted")
	}
	lb, err := leaves.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]byte{nil, lb[:len(lb)-1], append(slices.Clone(lb), 0)} {
		if _, err := UnmarshalLeafCounts(bad, tab); err == nil {
			t.Errorf("leaf counts decoded from %d bytes of %d", len(bad), len(lb))
		}
	}
	if _, err := MergeLeafCounts(leaves, leaves[:1]); !errors.Is(err, ErrIncompatible) {
		t.Errorf("leaf counts of other columns merged: %v", err)
	}
}

// FuzzUnmarshalCut: what a worker sends beside a cut class table is decoded or
// refused, never half-read: a cut class table and leaf counts decode only from bytes
// that their encoders give back unchanged, and a decoded cut table is cut.
func FuzzUnmarshalCut(f *testing.F) {
	rng := rand.New(rand.NewPCG(77, 78))
	tab := cutTable(rng, 80, 2)
	withSensitive(rng, tab, 1)
	levels := []int{tab.Columns[0].Hierarchy.Height() / 2, 0}
	cut, err := NewCut(tab.Columns, levels)
	if err != nil {
		f.Fatal(err)
	}
	cutTab, err := cut.Table(tab)
	if err != nil {
		f.Fatal(err)
	}
	ct, err := CountClasses(cutTab)
	if err != nil {
		f.Fatal(err)
	}
	seed, err := cut.MarshalClasses(ct)
	if err != nil {
		f.Fatal(err)
	}
	lc, err := CountLeaves(tab)
	if err != nil {
		f.Fatal(err)
	}
	leaves, err := lc.MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add(leaves)
	f.Add([]byte(cutTableMagic))
	f.Add([]byte(leafCountMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, err := cut.UnmarshalClasses(data, tab); err == nil {
			if err := cut.Check(got); err != nil {
				t.Fatalf("decoded a class table that is not cut: %v", err)
			}
			if again, err := cut.MarshalClasses(got); err != nil || string(again) != string(data) {
				t.Fatalf("decoded cut table re-encodes to other bytes (%v)", err)
			}
		}
		if got, err := UnmarshalLeafCounts(data, tab); err == nil {
			if again, err := got.MarshalBinary(); err != nil || string(again) != string(data) {
				t.Fatalf("decoded leaf counts re-encode to other bytes (%v)", err)
			}
		}
	})
}

// TestCutSearchInPersons: on random tables of several records per person (a person's
// records spread over random parts, the persons numbered alike in every part), at
// random minimum levels, with k counted in persons alone, with distinct l-diversity in
// persons, and with multirelational k (linkable records): the cut class table, counted
// part by part through its encoding, keeps a person column (Cut.Classes of the full
// class table, and of itself); Cut.Search reports what SearchClasses of the full class
// table does with those minimum levels, persons included (or the same error); and the
// recoding at the chosen node suppresses every record (its class, or its whole person)
// as the full table's does.
func TestCutSearchInPersons(t *testing.T) {
	rng := rand.New(rand.NewPCG(77, 78))
	trials := 120
	if testing.Short() {
		trials = 30
	}
	found, unattainable, spread, binding := 0, 0, 0, 0
	metrics := []schema.Metric{MetricLoss, MetricHeight, MetricPrecision, MetricNCP, MetricDiscernibility, MetricEntropy}
	for trial := range trials {
		n := 30 + rng.IntN(600)
		tab := cutTable(rng, n, 1+rng.IntN(4))
		withSensitive(rng, tab, 1)
		raw := make([][]string, n)
		for r := range raw {
			raw[r] = make([]string, len(tab.Columns))
		}
		withPersons(rng, tab, raw, 1+rng.IntN(8))
		levels := make([]int, len(tab.Columns))
		for i, c := range tab.Columns {
			levels[i] = rng.IntN(c.Hierarchy.Height())
		}
		opt := Options{K: 2 + rng.IntN(4), Workers: 1 + rng.IntN(3)}
		if rng.IntN(3) > 0 {
			opt.MaxSuppressed = rng.IntN(n/4 + 1)
		}
		kind := "k"
		switch trial % 3 {
		case 1:
			opt.Diversity = []Diversity{{Column: 0, Model: diversity.Model{Variant: diversity.Distinct, L: 2}}}
			kind = "distinct-2"
		case 2:
			opt.Linkable = true
			kind = "linkable"
		}
		opt.Metric = metrics[rng.IntN(len(metrics))]
		if opt.Linkable {
			opt.Metric = metrics[rng.IntN(4)] // those multirelational k takes
		}
		t.Run(fmt.Sprintf("trial%d/n=%d/persons=%d/cut=%v/%s/k=%d/supp=%d/%s", trial, n, tab.Unit.Persons, levels, opt.Metric, opt.K, opt.MaxSuppressed, kind), func(t *testing.T) {
			cut, err := NewCut(tab.Columns, levels)
			if err != nil {
				t.Fatal(err)
			}
			tables, index := splitTable(rng, tab, 1+rng.IntN(4))
			if personInParts(tab, index) {
				spread++
			}
			full := countMerged(t, tables)
			cutCT, leaves := countCut(t, cut, tables)
			if len(cutCT.cols) != len(tab.Columns)+1 {
				t.Fatalf("the cut class table has %d columns for %d quasi-identifiers and a unit", len(cutCT.cols), len(tab.Columns))
			}
			if again, err := cut.Classes(full); err != nil || !again.Equal(cutCT) {
				t.Fatalf("Cut.Classes of the full class table differs from the parts' cut (%v)", err)
			}
			if again, err := cut.Classes(cutCT); err != nil || !again.Equal(cutCT) {
				t.Fatalf("Cut.Classes of the cut class table is not itself (%v)", err)
			}
			fullOpt := opt
			fullOpt.MinLevels = levels
			want, wantErr := SearchClasses(context.Background(), full, fullOpt)
			got, err := cut.Search(context.Background(), cutCT, leaves, opt)
			if wantErr != nil {
				if !errors.Is(wantErr, fault.ErrUnattainable) {
					t.Fatal(wantErr)
				}
				if err == nil || err.Error() != wantErr.Error() {
					t.Fatalf("full: %v; cut: %v, %v", wantErr, got, err)
				}
				unattainable++
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := sameResult(got, want); diff != "" || got.MinPersons != want.MinPersons {
				t.Fatalf("cut search: %s; smallest class %d persons, the full one's %d", diff, got.MinPersons, want.MinPersons)
			}
			found++
			rowsOnly := opt
			rowsOnly.MinLevels, rowsOnly.Linkable, rowsOnly.Diversity = levels, false, nil
			if byRows, err := SearchClasses(context.Background(), countMerged(t, withoutUnit(tables)), rowsOnly); err != nil || !slices.Equal(byRows.Levels, got.Levels) || byRows.Suppressed != got.Suppressed {
				binding++
			}
			samePersonRecoding(t, tab, full, cutCT, cut, got.Levels, fullOpt)
		})
	}
	t.Logf("%d trials: %d found a node, %d unattainable; a person's records in several parts in %d; persons changed the node or suppression in %d", trials, found, unattainable, spread, binding)
	if found < trials/2 || spread < trials/3 || binding == 0 {
		t.Errorf("%d found, %d with a person in several parts, %d where persons mattered: the trials check too little", found, spread, binding)
	}
}

// personInParts reports whether some person of tab has records in more than one of
// the parts (index[p]: part p's records).
func personInParts(tab *Table, index [][]int) bool {
	part := make([]int, tab.Unit.Persons)
	for i := range part {
		part[i] = -1
	}
	for p, rows := range index {
		for _, r := range rows {
			who := tab.Unit.Codes.At(r)
			if part[who] >= 0 && part[who] != p {
				return true
			}
			part[who] = p
		}
	}
	return false
}

// withoutUnit is the tables with no unit (the same records and codes): counted in
// rows.
func withoutUnit(tables []*Table) []*Table {
	out := make([]*Table, len(tables))
	for i, pt := range tables {
		c := *pt
		c.Unit = nil
		out[i] = &c
	}
	return out
}

// samePersonRecoding checks that the cut's recoding of node suppresses, record by
// record of tab, what the full class table's does: the record's class, or (multirelational
// k) its whole person.
func samePersonRecoding(t *testing.T, tab *Table, full, cutCT *ClassTable, cut *Cut, node []int, opt Options) {
	t.Helper()
	got, want := recodings(t, full, cutCT, cut, node, opt)
	var leaves []int32
	suppressed := 0
	for r := range tab.Rows {
		leaves = leavesOf(tab, r, leaves)
		p := tab.Unit.Codes.At(r)
		w, _ := want.Class(leaves)
		g, counted := got.Class(leaves)
		if want.PersonSuppressed(p) {
			w = -1
		}
		if got.PersonSuppressed(p) {
			g = -1
		}
		if g != w || !counted {
			t.Fatalf("node %v, record %d: class %d (counted %v); the full recoding's %d", node, r, g, counted, w)
		}
		if g < 0 {
			suppressed++
		}
	}
	if suppressed != got.Suppressed {
		t.Fatalf("node %v: %d records suppressed record by record, the recoding says %d", node, suppressed, got.Suppressed)
	}
}
