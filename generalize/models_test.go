package generalize

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"sanitizer/closeness"
	"sanitizer/diversity"
)

// adultOccupation adds the sensitive column occupation to the Adult table, numbered in
// the order of adult_hierarchy_occupation.csv, with the hierarchy as a closeness tree;
// it returns the raw values too.
func adultOccupation(t *testing.T, tab *Table) []string { return adultOccupationB(t, tab) }

func adultOccupationB(t testing.TB, tab *Table) []string {
	t.Helper()
	data := readSemicolon(t, filepath.Join(adultDir, "adult.csv"))
	at := slices.Index(data[0], "occupation")
	hrows := readSemicolon(t, filepath.Join(adultDir, "adult_hierarchy_occupation.csv"))
	index := map[string]int32{}
	for i, r := range hrows {
		index[r[0]] = int32(i)
	}
	// the tree: node numbers per level, in order of first appearance
	height := len(hrows[0]) - 1
	up := make([][]int32, height)
	size := make([]int, height)
	for l := 1; l <= height; l++ {
		num := map[string]int32{}
		up[l-1] = make([]int32, len(hrows))
		for i, r := range hrows {
			n, ok := num[r[l]]
			if !ok {
				n = int32(len(num))
				num[r[l]] = n
			}
			up[l-1][i] = n
		}
		size[l-1] = len(num)
	}
	tree, err := closeness.NewTree(len(hrows), up, size)
	if err != nil {
		t.Fatal(err)
	}
	codes := NewCodes(tab.Rows, len(hrows))
	raw := make([]string, tab.Rows)
	for r, row := range data[1:] {
		v := row[at]
		i, ok := index[v]
		if !ok {
			t.Fatalf("row %d: occupation not in its hierarchy", r+1)
		}
		codes.Set(r, i)
		raw[r] = v
	}
	tab.Sensitive = []Sensitive{{Name: "occupation", Values: len(hrows), Codes: codes, Tree: tree}}
	return raw
}

// The oracle's own l-diversity checks, written from the definitions (Machanavajjhala et
// al. 2007) without the diversity package.
func oracleDistinct(l int) func(map[string]int) bool {
	return func(h map[string]int) bool { return len(h) >= l }
}

func oracleEntropy(l float64) func(map[string]int) bool {
	return func(h map[string]int) bool {
		n := 0
		for _, c := range h {
			n += c
		}
		e := 0.0
		for _, c := range h {
			p := float64(c) / float64(n)
			e -= p * math.Log(p)
		}
		return e >= math.Log(l)-1e-12
	}
}

func oracleRecursive(c float64, l int) func(map[string]int) bool {
	return func(h map[string]int) bool {
		var r []int
		for _, n := range h {
			r = append(r, n)
		}
		if len(r) < l {
			return false
		}
		slices.Sort(r)
		slices.Reverse(r)
		tail := 0
		for _, n := range r[l-1:] {
			tail += n
		}
		return float64(r[0]) < c*float64(tail)
	}
}

// oracleClose checks t-closeness on a histogram of raw values, with the closeness
// package's distances over the hierarchy file's order of values.
func oracleClose(tab *Table, raw []string, tt float64, distance string) func(map[string]int) bool {
	s := tab.Sensitive[0]
	order := map[string]int{}
	q := make([]int64, s.Values)
	for r, v := range raw {
		order[v] = int(s.Codes.At(r))
		q[s.Codes.At(r)]++
	}
	return func(h map[string]int) bool {
		p := make([]int64, s.Values)
		for v, c := range h {
			p[order[v]] = int64(c)
		}
		var d float64
		var err error
		if distance == closeness.Hierarchical {
			d, err = closeness.HierarchicalEMD(p, q, s.Tree)
		} else {
			d, err = closeness.EqualEMD(p, q)
		}
		return err == nil && d <= tt
	}
}

// TestSearchAdultModelsMatchExhaustive: k=5 on Adult with each model of the issue on
// occupation, and two combinations, at 0% and 5% suppression, gives the node an exhaustive evaluation of every
// node finds (the oracle groups the raw strings and checks the models itself).
func TestSearchAdultModelsMatchExhaustive(t *testing.T) {
	if testing.Short() {
		t.Skip("evaluates the whole Adult lattice for fourteen settings")
	}
	tab, rawQI, hier := loadAdult(t)
	raw := adultOccupation(t, tab)
	o := newOracle(rawQI, hier)
	o.sens = raw
	type setting struct {
		name  string
		div   []Diversity
		close []Closeness
		holds func(map[string]int) bool
	}
	rec43, eq25 := oracleRecursive(4, 3), oracleClose(tab, raw, 0.25, closeness.Equal)
	dist2, ent25 := oracleDistinct(2), oracleEntropy(2.5)
	settings := []setting{
		{"distinct-3", []Diversity{{0, diversity.Model{Variant: diversity.Distinct, L: 3}}}, nil, oracleDistinct(3)},
		{"entropy-3", []Diversity{{0, diversity.Model{Variant: diversity.Entropy, L: 3}}}, nil, oracleEntropy(3)},
		{"recursive-(4,3)", []Diversity{{0, diversity.Model{Variant: diversity.Recursive, L: 3, C: 4}}}, nil, oracleRecursive(4, 3)},
		{"t=0.2 equal", nil, []Closeness{{0, 0.2, closeness.Equal}}, oracleClose(tab, raw, 0.2, closeness.Equal)},
		{"t=0.2 hierarchical", nil, []Closeness{{0, 0.2, closeness.Hierarchical}}, oracleClose(tab, raw, 0.2, closeness.Hierarchical)},
		{"recursive-(4,3) and t=0.25 equal", []Diversity{{0, diversity.Model{Variant: diversity.Recursive, L: 3, C: 4}}}, []Closeness{{0, 0.25, closeness.Equal}},
			func(h map[string]int) bool { return rec43(h) && eq25(h) }},
		{"distinct-2 and entropy-2.5", []Diversity{{0, diversity.Model{Variant: diversity.Distinct, L: 2}}, {0, diversity.Model{Variant: diversity.Entropy, L: 2.5}}}, nil,
			func(h map[string]int) bool { return dist2(h) && ent25(h) }},
	}
	var queries []oracleQuery
	for _, supp := range []float64{0, 0.05} {
		for _, st := range settings {
			queries = append(queries, oracleQuery{k: 5, maxSupp: int(math.Floor(supp * float64(tab.Rows))), metric: "loss", holds: st.holds})
		}
	}
	want := o.bestMany(t, queries)
	i := 0
	for _, supp := range []float64{0, 0.05} {
		for _, st := range settings {
			qu, w := queries[i], want[i]
			i++
			t.Run(fmt.Sprintf("%s/supp=%g", st.name, supp), func(t *testing.T) {
				res, err := Search(context.Background(), tab, Options{K: 5, MaxSuppressed: qu.maxSupp, Diversity: st.div, Closeness: st.close})
				if w == nil {
					if err == nil {
						t.Fatalf("search found %v where no node qualifies", res.Levels)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(res.Levels, w.node) || res.Suppressed != w.suppressed {
					t.Fatalf("search: node %v, %d suppressed; exhaustive: node %v, %d suppressed", res.Levels, res.Suppressed, w.node, w.suppressed)
				}
				wv, _ := w.value.Float64()
				if math.Abs(res.Value-wv) > 1e-12 {
					t.Fatalf("value %v, exhaustive %v", res.Value, wv)
				}
				t.Logf("node %v, %d suppressed, loss %.4f, %d of %d nodes evaluated", res.Levels, res.Suppressed, res.Value, res.Evaluated, res.LatticeSize)
			})
		}
	}
}

// BenchmarkSearchAdultModels measures the search on Adult, k=5, with each model on
// occupation (BENCHMARKS.md compares it with k alone).
func BenchmarkSearchAdultModels(b *testing.B) {
	tab, _, _ := loadAdult(b)
	adultOccupationB(b, tab)
	for _, supp := range []float64{0, 0.05} {
		for _, st := range []struct {
			name  string
			div   []Diversity
			close []Closeness
		}{
			{"k-only", nil, nil},
			{"recursive-(4,3)", []Diversity{{0, diversity.Model{Variant: diversity.Recursive, L: 3, C: 4}}}, nil},
			{"t=0.2-equal", nil, []Closeness{{0, 0.2, closeness.Equal}}},
			{"t=0.2-hierarchical", nil, []Closeness{{0, 0.2, closeness.Hierarchical}}},
		} {
			b.Run(fmt.Sprintf("%s/supp=%g", st.name, supp), func(b *testing.B) {
				var res *Result
				for b.Loop() {
					var err error
					res, err = Search(context.Background(), tab, Options{K: 5, MaxSuppressed: int(math.Floor(supp * float64(tab.Rows))), Diversity: st.div, Closeness: st.close})
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(res.Evaluated), "evaluated")
			})
		}
	}
}
