package generalize

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sanitizer/closeness"
	"sanitizer/diversity"
	"sanitizer/fault"
	"sanitizer/risk"
	"sanitizer/schema"
)

// withPersons gives the records of tab (raw, as the oracle reads them) persons: runs
// of consecutive records, 1 to most long, and, in each column chosen constant (a
// demographic), every record of a person takes the person's first record's value. It
// returns every record's person id.
func withPersons(rng *rand.Rand, tab *Table, raw [][]string, most int) []string {
	constant := make([]bool, len(tab.Columns))
	for c := range constant {
		constant[c] = rng.IntN(2) == 0
	}
	ids := make([]string, tab.Rows)
	codes := NewCodes(tab.Rows, tab.Rows)
	person, first, left := -1, 0, 0
	for r := range tab.Rows {
		if left == 0 {
			person, first, left = person+1, r, 1+rng.IntN(most)
		}
		left--
		ids[r] = "p" + strconv.Itoa(person)
		codes.Set(r, int32(person))
		for c, col := range tab.Columns {
			if constant[c] && r != first {
				col.Codes.Set(r, col.Codes.At(first))
				raw[r][c] = raw[first][c]
			}
		}
	}
	tab.Unit = &Unit{Persons: person + 1, Codes: codes}
	return ids
}

// TestSearchPersonsMatchesExhaustive: on random tables of several records per person,
// the search with a privacy unit finds the node the exhaustive oracle finds when k
// counts each class's distinct persons (and the suppression limit records), under
// every metric, with and without radix-partitioned roll-ups and a tight cache.
func TestSearchPersonsMatchesExhaustive(t *testing.T) {
	defer func(n int) { bottomMaxRows = n }(bottomMaxRows)
	bottomMaxRows = 16
	rng := rand.New(rand.NewPCG(37, 41))
	trials := 300
	if testing.Short() {
		trials = 60
	}
	metrics := []schema.Metric{MetricLoss, MetricDiscernibility, MetricHeight, MetricPrecision, MetricAECS, MetricDiscernibilityStar}
	differ := 0 // trials whose optimum counted in records is another node
	for trial := range trials {
		n := 20 + rng.IntN(400)
		q := 1 + rng.IntN(4)
		tab, raw, hier := randomTable(rng, n, q)
		most := 1 + rng.IntN(6)
		if trial%5 == 0 {
			most = 25 + rng.IntN(30) // runs long enough for a table of their entries (merger.index)
		}
		ids := withPersons(rng, tab, raw, most)
		k := 1 + rng.IntN(8)
		maxSupp := 0
		if rng.IntN(2) == 1 {
			maxSupp = rng.IntN(n/5 + 1)
		}
		metric := metrics[rng.IntN(len(metrics))]
		workers := 1 + rng.IntN(3)
		name := fmt.Sprintf("trial%d/n=%d/persons=%d/q=%d/k=%d/supp=%d/%s/w=%d", trial, n, tab.Unit.Persons, q, k, maxSupp, metric, workers)
		t.Run(name, func(t *testing.T) {
			o := newOracle(raw, hier)
			rows := o.best(t, k, maxSupp, metric)
			o.persons = ids
			want := o.best(t, k, maxSupp, metric)
			if (rows == nil) != (want == nil) || (want != nil && !slices.Equal(rows.node, want.node)) {
				differ++
			}
			// (chunk: a grouped roll-up's persons mapped a few at a time; over: the
			// search told, as the release tells it of a large table, that the bottom
			// node has more classes than it keeps, bottomMaxRows lowered to make it so)
			for _, v := range []struct{ radixMin, cache, chunk, over int }{{radixMinSource, 0, 0, 0}, {1, 0, 0, 0}, {1, 3 * n, 0, 0}, {1, 0, 5, 0}, {radixMinSource, 0, 0, n / bottomShare}} {
				opt := Options{K: k, MaxSuppressed: maxSupp, Metric: metric, Workers: workers, CacheEntries: v.cache, BottomOver: v.over, radix: radixTuning{minSource: v.radixMin, chunk: v.chunk}}
				got, err := Search(context.Background(), tab, opt)
				if want == nil {
					if !errors.Is(err, fault.ErrUnattainable) {
						t.Fatalf("radix from %d: want unattainable, got %v, %v", v.radixMin, got, err)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got.Levels, want.node) || got.Suppressed != want.suppressed {
					t.Fatalf("radix from %d: search chose %v, %d suppressed; exhaustive in persons %v, %d suppressed", v.radixMin, got.Levels, got.Suppressed, want.node, want.suppressed)
				}
				if got.MinPersons < k || got.MinPersons > got.MinClass {
					t.Errorf("smallest class: %d persons, %d records, k=%d", got.MinPersons, got.MinClass, k)
				}
			}
		})
	}
	// The tables must tell persons from records, or the test proves nothing.
	if differ < trials/10 {
		t.Errorf("only %d of %d trials have another optimum in persons than in records", differ, trials)
	}
}

// TestClassTablesPersons: with a privacy unit (and, in every other trial, l-diversity
// in persons), a table split at random into parts whose persons' records lie in several
// of them, its parts' class tables (through the codec) merged and searched choose the
// node Search chooses on the records, and the recoding of that node suppresses exactly
// the records NodeClasses suppresses, each published class holding at least k persons
// (counted here from the records).
func TestClassTablesPersons(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 47))
	searched := 0
	defer func() {
		if searched < 30 {
			t.Errorf("only %d of 60 trials had a node to publish", searched)
		}
	}()
	for trial := range 60 {
		n := 30 + rng.IntN(300)
		tab, raw, _ := randomTable(rng, n, 1+rng.IntN(3))
		withPersons(rng, tab, raw, 1+rng.IntN(6))
		k, maxSupp := 1+rng.IntN(6), rng.IntN(n/5+1)
		opt := Options{K: k, MaxSuppressed: maxSupp, Metric: MetricLoss}
		if trial%2 == 1 { // and l-diversity in persons, on the class tables' histograms
			sens, _ := skewedSensitive(rng, n, 2+rng.IntN(5))
			tab.Sensitive = []Sensitive{sens}
			opt.Diversity = []Diversity{{Column: 0, Model: diversity.Model{Variant: diversity.Distinct, L: 2}}}
		}
		t.Run(fmt.Sprintf("trial%d/n=%d/k=%d/supp=%d", trial, n, k, maxSupp), func(t *testing.T) {
			want, err := Search(context.Background(), tab, opt)
			if errors.Is(err, fault.ErrUnattainable) {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			searched++
			parts, _ := splitTable(rng, tab, 1+rng.IntN(4))
			cts := make([]*ClassTable, len(parts))
			for p, part := range parts {
				ct, err := CountClasses(part)
				if err != nil {
					t.Fatal(err)
				}
				data, err := ct.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				if cts[p], err = UnmarshalClasses(data, tab); err != nil {
					t.Fatal(err)
				}
			}
			merged, err := MergeClasses(cts...)
			if err != nil {
				t.Fatal(err)
			}
			got, err := SearchClasses(context.Background(), merged, opt)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Levels, want.Levels) || got.Suppressed != want.Suppressed || got.MinPersons != want.MinPersons {
				t.Fatalf("class tables: %v, %d suppressed, %d persons smallest; records: %v, %d, %d", got.Levels, got.Suppressed, got.MinPersons, want.Levels, want.Suppressed, want.MinPersons)
			}
			rec, err := NodeRecoding(merged, got.Levels, opt)
			if err != nil {
				t.Fatal(err)
			}
			class, _, err := NodeClasses(tab, got.Levels, opt)
			if err != nil {
				t.Fatal(err)
			}
			persons := map[int32]map[int32]bool{}
			leaves := make([]int32, len(tab.Columns))
			for r := range tab.Rows {
				c, _ := rec.Class(leavesOf(tab, r, leaves))
				if (c < 0) != (class[r] < 0) {
					t.Fatalf("record %d: recoding says class %d, NodeClasses %d", r, c, class[r])
				}
				if c >= 0 {
					if persons[c] == nil {
						persons[c] = map[int32]bool{}
					}
					persons[c][tab.Unit.Codes.At(r)] = true
				}
			}
			for c, who := range persons {
				if len(who) < k {
					t.Errorf("published class %d holds %d persons, k=%d", c, len(who), k)
				}
			}
		})
	}
}

// gongHolds decides (k,l)-diversity's l in persons (Gong et al. 2017) on a class's
// histogram of persons per value, written for the oracle: the most persons holding one
// value times l is at most the class's persons.
func gongHolds(l int) func(hist []map[string]int, persons int) bool {
	return func(hist []map[string]int, persons int) bool {
		most := 0
		for _, n := range hist[0] {
			most = max(most, n)
		}
		return most > 0 && most*l <= persons
	}
}

// TestSearchPersonsDiversityMatchesExhaustive: with a privacy unit and distinct
// l-diversity, the search finds the node the oracle finds when a class's persons must
// be k and every value be held by at most 1/l of them (counted by the oracle from the
// records and their persons), with value sets (few values) and without (more than
// maxSetValues).
func TestSearchPersonsDiversityMatchesExhaustive(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 59))
	trials := 240
	if testing.Short() {
		trials = 50
	}
	metrics := []schema.Metric{MetricLoss, MetricDiscernibility, MetricHeight, MetricAECS}
	differ := 0
	for trial := range trials {
		n := 30 + rng.IntN(300)
		q := 1 + rng.IntN(3)
		tab, raw, hier := randomTable(rng, n, q)
		ids := withPersons(rng, tab, raw, 1+rng.IntN(5))
		values := 2 + rng.IntN(6)
		if trial%8 == 7 {
			values = maxSetValues + 1 + rng.IntN(20)
		}
		sens, sraw := skewedSensitive(rng, n, values)
		tab.Sensitive = []Sensitive{sens}
		k, l := 1+rng.IntN(4), 2+rng.IntN(2)
		maxSupp := 0
		if rng.IntN(3) > 0 {
			maxSupp = rng.IntN(n/4 + 1)
		}
		metric := metrics[rng.IntN(len(metrics))]
		name := fmt.Sprintf("trial%d/n=%d/persons=%d/q=%d/values=%d/k=%d/l=%d/supp=%d/%s", trial, n, tab.Unit.Persons, q, values, k, l, maxSupp, metric)
		t.Run(name, func(t *testing.T) {
			o := newOracle(raw, hier)
			o.sens = [][]string{sraw}
			o.persons = ids
			want := o.bestMany(t, []oracleQuery{{k: k, maxSupp: maxSupp, metric: metric, personsHolds: gongHolds(l)}})[0]
			rowsDistinct := o.bestMany(t, []oracleQuery{{k: k, maxSupp: maxSupp, metric: metric, personsHolds: func(hist []map[string]int, _ int) bool { return len(hist[0]) >= l }}})[0]
			if (rowsDistinct == nil) != (want == nil) || (want != nil && !slices.Equal(rowsDistinct.node, want.node)) {
				differ++
			}
			opt := Options{K: k, MaxSuppressed: maxSupp, Metric: metric, Workers: 1 + rng.IntN(2),
				Diversity: []Diversity{{Column: 0, Model: diversity.Model{Variant: diversity.Distinct, L: float64(l)}}}}
			got, err := Search(context.Background(), tab, opt)
			if want == nil {
				if !errors.Is(err, fault.ErrUnattainable) {
					t.Fatalf("want unattainable, got %v, %v", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Levels, want.node) || got.Suppressed != want.suppressed {
				t.Fatalf("search chose %v, %d suppressed; exhaustive in persons %v, %d suppressed", got.Levels, got.Suppressed, want.node, want.suppressed)
			}
			checkNodeSuppression(t, tab, opt, got.Levels, got.Suppressed)
		})
	}
	if differ < trials/10 {
		t.Errorf("only %d of %d trials have another optimum in persons than with distinct values", differ, trials)
	}
}

// TestPersonsHomogeneity: the counterexample as a table: five persons of one
// class who all share a diagnosis, one of whom also has four others, hold five
// distinct values in rows but tell every person's diagnosis: the class is not
// 2-diverse in persons, and with no suppression allowed no node publishes it.
func TestPersonsHomogeneity(t *testing.T) {
	h, err := NewHierarchy("test", [][]string{{"a", "*"}})
	if err != nil {
		t.Fatal(err)
	}
	// rows: person, diagnosis
	rows := [][2]int32{{0, 0}, {1, 0}, {2, 0}, {3, 0}, {4, 0}, {4, 1}, {4, 2}, {4, 3}, {4, 4}}
	n := len(rows)
	tab := &Table{Rows: n, Columns: []Column{{Name: "q", Hierarchy: h, Codes: NewCodes(n, 1)}}}
	unit, diag := NewCodes(n, 5), NewCodes(n, 5)
	for r, x := range rows {
		unit.Set(r, x[0])
		diag.Set(r, x[1])
	}
	tab.Sensitive = []Sensitive{{Name: "diagnosis", Values: 5, Codes: diag}}
	opt := Options{K: 2, Diversity: []Diversity{{Column: 0, Model: diversity.Model{Variant: diversity.Distinct, L: 2}}}}
	if _, err := Search(context.Background(), tab, opt); err != nil {
		t.Fatalf("in rows, the class holds 5 distinct values and is 2-diverse: %v", err)
	}
	tab.Unit = &Unit{Persons: 5, Codes: unit}
	if res, err := Search(context.Background(), tab, opt); !errors.Is(err, fault.ErrUnattainable) {
		t.Fatalf("in persons, every person holds the first diagnosis: want unattainable, got %v, %v", res, err)
	}
}

// personShares is, for the oracle, every value's share of the persons of raw records
// (value per record sens, person per record ids) who hold it, in rationals.
func personShares(sens, ids []string) map[string]*big.Rat {
	who := map[string]map[string]bool{}
	all := map[string]bool{}
	for r, v := range sens {
		if who[v] == nil {
			who[v] = map[string]bool{}
		}
		who[v][ids[r]] = true
		all[ids[r]] = true
	}
	out := map[string]*big.Rat{}
	for v, w := range who {
		out[v] = big.NewRat(int64(len(w)), int64(len(all)))
	}
	return out
}

// closeInPersons decides, for the oracle in rationals, t-closeness under the equal
// distance (½ Σ |b − B| ≤ t) or β-likeness ((b − B)/B ≤ β for b > B; enhanced: ≤
// min(β, −ln B)) on a class's shares of persons b against the table's B.
func closeInPersons(table map[string]*big.Rat, tc, beta float64, enhanced bool) func(hist []map[string]int, persons int) bool {
	return func(hist []map[string]int, persons int) bool {
		b := func(v string) *big.Rat { return big.NewRat(int64(hist[0][v]), int64(persons)) }
		if tc >= 0 {
			sum := new(big.Rat)
			for v, q := range table {
				d := new(big.Rat).Sub(b(v), q)
				sum.Add(sum, d.Abs(d))
			}
			limit := new(big.Rat).SetFloat64(2 * tc)
			return sum.Cmp(limit) <= 0
		}
		for v := range hist[0] {
			p, q := b(v), table[v]
			if p.Cmp(q) <= 0 {
				continue
			}
			gain, _ := new(big.Rat).Quo(new(big.Rat).Sub(p, q), q).Float64()
			bound := beta
			if qf, _ := q.Float64(); enhanced {
				bound = min(beta, -math.Log(qf))
			}
			if gain > bound+1e-9 {
				return false
			}
		}
		return true
	}
}

// TestSearchPersonsClosenessMatchesExhaustive: with a privacy unit, t-closeness under
// the equal distance and β-likeness (basic and enhanced) read on the shares of persons
// holding each value: the search finds the oracle's node, the oracle deciding the
// models in rationals from the raw records and their persons.
func TestSearchPersonsClosenessMatchesExhaustive(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 67))
	trials := 200
	if testing.Short() {
		trials = 40
	}
	binding := 0 // trials whose models change the optimum over k alone
	defer func() {
		if binding < trials/10 {
			t.Errorf("the models change the optimum in only %d of %d trials", binding, trials)
		}
	}()
	for trial := range trials {
		n := 30 + rng.IntN(250)
		q := 1 + rng.IntN(3)
		tab, raw, hier := randomTable(rng, n, q)
		ids := withPersons(rng, tab, raw, 1+rng.IntN(5))
		sens, sraw := skewedSensitive(rng, n, 2+rng.IntN(5))
		tab.Sensitive = []Sensitive{sens}
		k, maxSupp := 1+rng.IntN(4), rng.IntN(n/4+1)
		opt := Options{K: k, MaxSuppressed: maxSupp, Metric: MetricLoss}
		tc, beta, enhanced := -1.0, 0.0, false
		if trial%2 == 0 {
			tc = []float64{0.1734, 0.2561, 0.3917}[rng.IntN(3)]
			opt.Closeness = []Closeness{{Column: 0, T: tc, Distance: closeness.Equal}}
		} else {
			beta, enhanced = []float64{0.731, 1.373, 2.917}[rng.IntN(3)], rng.IntN(2) == 0
			opt.Likeness = []Likeness{{Column: 0, Beta: beta, Enhanced: enhanced}}
		}
		t.Run(fmt.Sprintf("trial%d/n=%d/k=%d/supp=%d/t=%g/beta=%g/enhanced=%v", trial, n, k, maxSupp, tc, beta, enhanced), func(t *testing.T) {
			o := newOracle(raw, hier)
			o.sens = [][]string{sraw}
			o.persons = ids
			all := o.bestMany(t, []oracleQuery{{k: k, maxSupp: maxSupp, metric: MetricLoss, personsHolds: closeInPersons(personShares(sraw, ids), tc, beta, enhanced)}, {k: k, maxSupp: maxSupp, metric: MetricLoss}})
			want := all[0]
			if all[1] != nil && (want == nil || !slices.Equal(want.node, all[1].node)) {
				binding++
			}
			got, err := Search(context.Background(), tab, opt)
			if want == nil {
				if !errors.Is(err, fault.ErrUnattainable) {
					t.Fatalf("want unattainable, got %v, %v", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Levels, want.node) || got.Suppressed != want.suppressed {
				t.Fatalf("search chose %v, %d suppressed; exhaustive in persons %v, %d suppressed", got.Levels, got.Suppressed, want.node, want.suppressed)
			}
		})
	}
}

// TestPersonSizes: the distribution of the input's classes in persons is the one a
// map of each class's distinct persons gives, with the sort partitioned or not.
func TestPersonSizes(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 73))
	defer func(m int) { flagMin = m }(flagMin)
	for trial := range 40 {
		flagMin = []int{1 << 18, 16}[trial%2]
		n := 50 + rng.IntN(2000)
		tab, raw, _ := randomTable(rng, n, 1+rng.IntN(3))
		ids := withPersons(rng, tab, raw, 1+rng.IntN(8))
		cols := make([]int, len(tab.Columns))
		for i := range cols {
			cols[i] = i
		}
		got, err := PersonSizes(tab, cols)
		if err != nil {
			t.Fatal(err)
		}
		who := map[string]map[string]bool{}
		for r := range tab.Rows {
			key := strings.Join(raw[r], "\x1f")
			if who[key] == nil {
				who[key] = map[string]bool{}
			}
			who[key][ids[r]] = true
		}
		sizes := make([]int64, 0, len(who))
		for _, w := range who {
			sizes = append(sizes, int64(len(w)))
		}
		want, err := risk.FromSizes(sizes)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Counts(), want.Counts()) {
			t.Fatalf("trial %d: person sizes %v, counted %v", trial, got.Counts(), want.Counts())
		}
	}
}

// TestSearchLinkableMatchesExhaustive: with linkable records (multirelational
// k-anonymity), the search finds the oracle's node and suppresses what the oracle does,
// the oracle grouping persons by their published classes itself; NodeClasses and the
// recoding of the class table suppress the same records, and every group of released
// persons by their classes (counted here from the records) holds k.
func TestSearchLinkableMatchesExhaustive(t *testing.T) {
	rng := rand.New(rand.NewPCG(79, 83))
	trials := 240
	if testing.Short() {
		trials = 50
	}
	metrics := []schema.Metric{MetricLoss, MetricHeight, MetricPrecision, schema.MetricNCP}
	binding := 0
	defer func() {
		if binding < trials/10 {
			t.Errorf("multirelational k changes the optimum in only %d of %d trials", binding, trials)
		}
	}()
	for trial := range trials {
		n := 30 + rng.IntN(300)
		q := 1 + rng.IntN(3)
		tab, raw, hier := randomTable(rng, n, q)
		ids := withPersons(rng, tab, raw, 1+rng.IntN(6))
		k, maxSupp := 2+rng.IntN(4), rng.IntN(n/3+1)
		metric := metrics[rng.IntN(len(metrics))]
		opt := Options{K: k, MaxSuppressed: maxSupp, Metric: metric, Linkable: true, Workers: 1 + rng.IntN(2)}
		t.Run(fmt.Sprintf("trial%d/n=%d/persons=%d/q=%d/k=%d/supp=%d/%s", trial, n, tab.Unit.Persons, q, k, maxSupp, metric), func(t *testing.T) {
			o := newOracle(raw, hier)
			o.persons = ids
			all := o.bestMany(t, []oracleQuery{{k: k, maxSupp: maxSupp, metric: metric, linkable: true}, {k: k, maxSupp: maxSupp, metric: metric}})
			want := all[0]
			if all[1] != nil && (want == nil || !slices.Equal(want.node, all[1].node) || want.suppressed != all[1].suppressed) {
				binding++
			}
			got, err := Search(context.Background(), tab, opt)
			if want == nil {
				if !errors.Is(err, fault.ErrUnattainable) {
					t.Fatalf("want unattainable, got %v, %v", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Levels, want.node) || got.Suppressed != want.suppressed {
				t.Fatalf("search chose %v, %d suppressed; exhaustive %v, %d suppressed", got.Levels, got.Suppressed, want.node, want.suppressed)
			}
			class, _, err := NodeClasses(tab, got.Levels, opt)
			if err != nil {
				t.Fatal(err)
			}
			checkLinked(t, tab, class, k, got.Suppressed)
			ct, err := CountClasses(tab)
			if err != nil {
				t.Fatal(err)
			}
			rec, err := NodeRecoding(ct, got.Levels, opt)
			if err != nil {
				t.Fatal(err)
			}
			leaves := make([]int32, q)
			for r := range tab.Rows {
				c, _ := rec.Class(leavesOf(tab, r, leaves))
				if rec.PersonSuppressed(tab.Unit.Codes.At(r)) {
					c = -1
				}
				if (c < 0) != (class[r] < 0) {
					t.Fatalf("record %d: the recoding says class %d, NodeClasses %d", r, c, class[r])
				}
			}
			if rec.Suppressed != got.Suppressed {
				t.Errorf("the recoding suppresses %d records, the search %d", rec.Suppressed, got.Suppressed)
			}
		})
	}
}

// checkLinked checks a node's records' classes (class[r], −1: suppressed) for
// multirelational k: every published class holds k persons and every group of
// released persons by their set of classes holds k; suppressed records number supp.
func checkLinked(t *testing.T, tab *Table, class []int32, k, supp int) {
	t.Helper()
	persons := map[int32]map[int32]bool{} // per class
	sets := map[int32]map[int32]bool{}    // per person
	suppressed := 0
	for r, c := range class {
		if c < 0 {
			suppressed++
			continue
		}
		p := tab.Unit.Codes.At(r)
		if persons[c] == nil {
			persons[c] = map[int32]bool{}
		}
		if sets[p] == nil {
			sets[p] = map[int32]bool{}
		}
		persons[c][p], sets[p][c] = true, true
	}
	if suppressed != supp {
		t.Errorf("%d records suppressed, the search says %d", suppressed, supp)
	}
	for c, who := range persons {
		if len(who) < k {
			t.Errorf("class %d holds %d persons, k=%d", c, len(who), k)
		}
	}
	groups := map[string]int{}
	for _, set := range sets {
		var cs []int32
		for c := range set {
			cs = append(cs, c)
		}
		slices.Sort(cs)
		groups[fmt.Sprint(cs)]++
	}
	for g, n := range groups {
		if n < k {
			t.Errorf("%d persons share the classes %s, k=%d", n, g, k)
		}
	}
}
