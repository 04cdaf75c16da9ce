package generalize

import (
	"bufio"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// oracle finds the optimal node by evaluating every node of the lattice from the raw
// strings. It shares no code with the search: it has its own grouping, its own
// suppression rule and its own (rational) metric arithmetic.
type oracle struct {
	rows   [][]string            // quasi-identifier values per record
	levels []map[string][]string // per column: leaf -> value at every level
	under  []map[string]int      // per column: "level\x00value" -> leaves under it
	height []int
}

func newOracle(rows [][]string, hier [][][]string) *oracle {
	o := &oracle{rows: rows}
	for _, h := range hier {
		lv := map[string][]string{}
		un := map[string]int{}
		for _, row := range h {
			lv[row[0]] = row
			for l, v := range row {
				un[string(rune('0'+l))+"\x00"+v]++
			}
		}
		o.levels = append(o.levels, lv)
		o.under = append(o.under, un)
		o.height = append(o.height, len(h[0]))
	}
	return o
}

type oracleResult struct {
	node       []int
	value      *big.Rat
	suppressed int
}

// best evaluates every node; metric is "loss" or "discernibility".
func (o *oracle) best(t *testing.T, k, maxSupp int, metric string) *oracleResult {
	t.Helper()
	q := len(o.height)
	// distinct records with their multiplicity
	type rec struct {
		vals []string
		n    int
	}
	distinct := map[string]*rec{}
	var order []string
	for _, r := range o.rows {
		key := strings.Join(r, "\x1f")
		if d, ok := distinct[key]; ok {
			d.n++
		} else {
			distinct[key] = &rec{vals: r, n: 1}
			order = append(order, key)
		}
	}
	N := len(o.rows)
	var best *oracleResult
	node := make([]int, q)
	var walk func(i int)
	walk = func(i int) {
		if i < q {
			for l := 0; l < o.height[i]; l++ {
				node[i] = l
				walk(i + 1)
			}
			return
		}
		type class struct {
			n    int
			vals []string
		}
		groups := map[string]*class{}
		for _, key := range order {
			d := distinct[key]
			g := make([]string, q)
			for c := range q {
				g[c] = o.levels[c][d.vals[c]][node[c]]
			}
			gk := strings.Join(g, "\x1f")
			if cl, ok := groups[gk]; ok {
				cl.n += d.n
			} else {
				groups[gk] = &class{n: d.n, vals: g}
			}
		}
		supp := 0
		for _, cl := range groups {
			if cl.n < k {
				supp += cl.n
			}
		}
		if supp > maxSupp {
			return
		}
		val := new(big.Rat)
		switch metric {
		case "loss":
			for c := range q {
				leaves := len(o.levels[c])
				var a int64
				for _, cl := range groups {
					if cl.n < k {
						a += int64(cl.n) * int64(leaves-1)
						continue
					}
					u := o.under[c][string(rune('0'+node[c]))+"\x00"+cl.vals[c]]
					a += int64(cl.n) * int64(u-1)
				}
				if leaves > 1 {
					val.Add(val, big.NewRat(a, int64(leaves-1)))
				} else {
					val.Add(val, big.NewRat(int64(supp), 1))
				}
			}
			val.Quo(val, big.NewRat(int64(N*q), 1))
		case "discernibility":
			var dm int64
			for _, cl := range groups {
				if cl.n < k {
					dm += int64(cl.n) * int64(N)
				} else {
					dm += int64(cl.n) * int64(cl.n)
				}
			}
			val.SetInt64(dm)
		}
		cand := &oracleResult{node: append([]int(nil), node...), value: val, suppressed: supp}
		if best == nil || oracleBetter(cand, best) {
			best = cand
		}
	}
	walk(0)
	return best
}

// oracleBetter: smaller value, then smaller level sum, then lexicographically smaller.
func oracleBetter(a, b *oracleResult) bool {
	if c := a.value.Cmp(b.value); c != 0 {
		return c < 0
	}
	sa, sb := 0, 0
	for i := range a.node {
		sa += a.node[i]
		sb += b.node[i]
	}
	if sa != sb {
		return sa < sb
	}
	for i := range a.node {
		if a.node[i] != b.node[i] {
			return a.node[i] < b.node[i]
		}
	}
	return false
}

// adultQI are the quasi-identifiers of the usual Adult setting.
var adultQI = []string{"age", "education", "marital-status", "native-country", "race", "salary-class", "sex", "workclass"}

const adultDir = "../../shared/data/adult"

func readSemicolon(t testing.TB, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("Adult data not available: %v", err)
	}
	defer f.Close()
	var out [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" {
			continue
		}
		out = append(out, strings.Split(line, ";"))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// loadAdult returns the encoded table, the raw quasi-identifier rows and the raw
// hierarchy rows of the Adult benchmark.
func loadAdult(t testing.TB) (*Table, [][]string, [][][]string) {
	t.Helper()
	data := readSemicolon(t, filepath.Join(adultDir, "adult.csv"))
	header := data[0]
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	tab := &Table{Rows: len(data) - 1}
	var raw [][]string
	for range data[1:] {
		raw = append(raw, make([]string, 0, len(adultQI)))
	}
	var hier [][][]string
	for _, name := range adultQI {
		hrows := readSemicolon(t, filepath.Join(adultDir, "adult_hierarchy_"+name+".csv"))
		h, err := NewHierarchy(name, hrows)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		hier = append(hier, hrows)
		codes := make([]int32, tab.Rows)
		for r, row := range data[1:] {
			v := row[col[name]]
			leaf, ok := h.Leaf(v)
			if !ok {
				t.Fatalf("%s row %d: value not in hierarchy", name, r+1)
			}
			codes[r] = leaf
			raw[r] = append(raw[r], v)
		}
		tab.Columns = append(tab.Columns, Column{Name: name, Hierarchy: h, Codes: codes})
	}
	return tab, raw, hier
}
