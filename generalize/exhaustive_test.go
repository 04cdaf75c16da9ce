package generalize

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/schema"
)

// oracle finds the optimal node by evaluating every node of the lattice from the raw
// strings. It shares no code with the search: it has its own grouping, its own
// suppression rule and its own (rational) metric arithmetic.
type oracle struct {
	rows   [][]string            // quasi-identifier values per record
	sens   [][]string            // per sensitive column, the value of every record
	levels []map[string][]string // per column: leaf -> value at every level
	under  []map[string]int      // per column: "level\x00value" -> leaves under it
	height []int
	// numeric, when not nil, gives ncp the numeric value of each leaf of a column
	// (nil for a column measured by its leaves).
	numeric []map[string]float64
	// persons, when not nil, is every record's person (its privacy unit's id): k
	// then counts a class's distinct persons.
	persons []string
	// order, per column, numbers each "level\x00value" by its first row in the
	// hierarchy: the order in which the risk models' enforcement takes classes of
	// equal size (Risks.enforce: by their codes).
	order []map[string]int
}

func newOracle(rows [][]string, hier [][][]string) *oracle {
	o := &oracle{rows: rows}
	for _, h := range hier {
		lv := map[string][]string{}
		un := map[string]int{}
		ord := map[string]int{}
		seen := map[int]int{}
		for _, row := range h {
			lv[row[0]] = row
			for l, v := range row {
				key := string(rune('0'+l)) + "\x00" + v
				un[key]++
				if _, ok := ord[key]; !ok {
					ord[key] = seen[l]
					seen[l]++
				}
			}
		}
		o.order = append(o.order, ord)
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
	// nodes, when the query asks for all, is every qualifying node's result by its
	// levels (fmt.Sprint of the node).
	nodes map[string]*oracleResult
	// columns is loss's value per column, in column order (before weights).
	columns []*big.Rat
	// enforced is the classes the risk models' enforcement suppressed at the node,
	// by their labels there (each followed by "\x1f", in column order).
	enforced map[string]bool
}

// oracleQuery is one privacy setting to optimise for.
type oracleQuery struct {
	k, maxSupp int
	metric     schema.Metric        // "loss", "discernibility", "discernibility-star", "height", "precision", "aecs", "entropy", "entropy-monotone", "entropy-loss" or "ncp"
	aggregate  schema.LossAggregate // loss's aggregate: "" (arithmetic), "sum", "max" or "geometric"
	weights    []float64            // loss's weight per column (nil: all 1), taken as the decimals they print as
	gs         *float64             // ARX's gs-factor of loss and the entropies (nil: 0.5), taken as the decimal it prints as
	// all asks for every qualifying node's result (oracleResult.nodes): the float
	// objectives' search is checked against the optimum up to rounding.
	all bool
	// holds, when not nil, decides the l-diversity / t-closeness model on a class's
	// histogram of sensitive values (with persons, the class's persons holding each
	// value) and its persons (with persons; else its records).
	holds func(hist []map[string]int) bool
	// personsHolds is holds for a table with persons: it is given the class's persons.
	personsHolds func(hist []map[string]int, persons int) bool
	// linkable asks, with persons, for multirelational k-anonymity too (persons
	// grouped by their published classes; groups under k suppressed, with every class
	// left under k persons, until nothing changes).
	linkable bool
	// release, when not nil, decides the models of the whole release on the sizes of
	// the released classes (the risk-based models); uniqueness is population
	// uniqueness, decided so too. With enforce, a node whose released classes miss
	// them suppresses the fewest of its released classes, smallest first (ties by
	// their values' first rows in the hierarchies, column by column), for release;
	// then, for uniqueness, the fewest found by bisection; within maxSupp.
	release, uniqueness func(sizes []int) bool
	enforce             bool
	// profit, when not nil, is the game-theoretic model with an attack, the
	// prosecutor's chance: a class fails when its records' payout is not positive.
	// With metric publisher-payout it gives the game's amounts.
	profit *oracleGame
	// allow, when not nil, says which nodes the query may choose (the others are
	// not evaluated for it).
	allow func(node []int) bool
}

// best evaluates every node for one query; nil when no node qualifies.
func (o *oracle) best(t *testing.T, k, maxSupp int, metric schema.Metric) *oracleResult {
	t.Helper()
	return o.bestMany(t, []oracleQuery{{k: k, maxSupp: maxSupp, metric: metric}})[0]
}

// bestMany evaluates every node of the lattice once and returns the optimum of each
// query. It numbers the values of every level itself (independently of Hierarchy).
func (o *oracle) bestMany(t *testing.T, queries []oracleQuery) []*oracleResult {
	t.Helper()
	return o.run(t, queries, nil)
}

// at evaluates the one node given for each query: its result, nil where it does not
// qualify.
func (o *oracle) at(t *testing.T, node []int, queries []oracleQuery) []*oracleResult {
	t.Helper()
	return o.run(t, queries, node)
}

// run is bestMany over every node, or over the node only when only is not nil.
func (o *oracle) run(t *testing.T, queries []oracleQuery, only []int) []*oracleResult {
	t.Helper()
	q := len(o.height)
	// distinct records with their multiplicity
	distinct := map[string]int{}
	var dvals [][]string
	var dcount []int
	// The sensitive values numbered per column (their names in names), so that a
	// class's histogram is summed in an array and made a map of names once.
	names := make([][]string, len(o.sens))
	number := make([]map[string]int, len(o.sens))
	for c, col := range o.sens {
		number[c] = map[string]int{}
		for _, v := range col {
			if _, ok := number[c][v]; !ok {
				number[c][v] = len(names[c])
				names[c] = append(names[c], v)
			}
		}
	}
	var dsens [][][]int  // per distinct record, per sensitive column: its count of each value
	var dperson []string // per distinct record, its person (with persons)
	for r, vals := range o.rows {
		key := strings.Join(vals, "\x1f")
		if o.persons != nil {
			key += "\x1e" + o.persons[r]
		}
		i, ok := distinct[key]
		if ok {
			dcount[i]++
		} else {
			i = len(dvals)
			distinct[key] = i
			dvals = append(dvals, vals)
			dcount = append(dcount, 1)
			if o.persons != nil {
				dperson = append(dperson, o.persons[r])
			}
			h := make([][]int, len(o.sens))
			for c := range h {
				h[c] = make([]int, len(names[c]))
			}
			dsens = append(dsens, h)
		}
		for c, col := range o.sens {
			dsens[i][c][number[c][col[r]]]++
		}
	}
	withModels := false
	for _, qu := range queries {
		withModels = withModels || qu.holds != nil || qu.personsHolds != nil
	}
	// ids[c][l][d]: number of the value at level l of distinct record d's column c
	ids := make([][][]uint64, q)
	card := make([][]uint64, q)
	under := make([][][]int64, q) // under[c][l][id]: leaves under the value
	for c := range q {
		ids[c] = make([][]uint64, o.height[c])
		card[c] = make([]uint64, o.height[c])
		under[c] = make([][]int64, o.height[c])
		for l := range o.height[c] {
			num := map[string]uint64{}
			ids[c][l] = make([]uint64, len(dvals))
			for d, vals := range dvals {
				v := o.levels[c][vals[c]][l]
				id, ok := num[v]
				if !ok {
					id = uint64(len(num))
					num[v] = id
					under[c][l] = append(under[c][l], int64(o.under[c][string(rune('0'+l))+"\x00"+v]))
				}
				ids[c][l][d] = id
			}
			card[c][l] = uint64(len(num))
		}
	}
	N := len(o.rows)
	bests := make([]*oracleResult, len(queries))
	node := make([]int, q)
	type class struct {
		n     int
		rep   int // a distinct record of the class
		dense [][]int
		hist  []map[string]int
		idx   int             // in the node's list of classes
		who   map[string]bool // its persons (with persons)
		// rowsOf, with persons: each person's records in the class
		rowsOf map[string]int
		// holders, with persons: per sensitive column and value, the persons holding it
		holders []map[int]map[string]bool
	}
	ev := o.newObjectiveEval(t, queries)
	var walk func(i int)
	walk = func(i int) {
		if i < q {
			if only != nil {
				node[i] = only[i]
				walk(i + 1)
				return
			}
			for l := 0; l < o.height[i]; l++ {
				node[i] = l
				walk(i + 1)
			}
			return
		}
		groups := map[uint64]*class{}
		for d := range dvals {
			var key uint64
			for c := range q {
				key = key*card[c][node[c]] + ids[c][node[c]][d]
			}
			cl, ok := groups[key]
			if ok {
				cl.n += dcount[d]
			} else {
				cl = &class{n: dcount[d], rep: d, dense: make([][]int, len(o.sens))}
				for c := range cl.dense {
					cl.dense[c] = make([]int, len(names[c]))
				}
				groups[key] = cl
			}
			if o.persons != nil {
				if cl.who == nil {
					cl.who, cl.rowsOf = map[string]bool{}, map[string]int{}
				}
				cl.who[dperson[d]] = true
				cl.rowsOf[dperson[d]] += dcount[d]
			}
			if withModels {
				for c, h := range dsens[d] {
					for v, n := range h {
						cl.dense[c][v] += n
						if o.persons != nil && n > 0 {
							if cl.holders == nil {
								cl.holders = make([]map[int]map[string]bool, len(o.sens))
							}
							if cl.holders[c] == nil {
								cl.holders[c] = map[int]map[string]bool{}
							}
							if cl.holders[c][v] == nil {
								cl.holders[c][v] = map[string]bool{}
							}
							cl.holders[c][v][dperson[d]] = true
						}
					}
				}
			}
		}
		if withModels {
			for _, cl := range groups {
				cl.hist = make([]map[string]int, len(o.sens))
				for c, h := range cl.dense {
					cl.hist[c] = map[string]int{}
					for v, n := range h {
						if o.persons != nil {
							n = len(cl.holders[c][v])
						}
						if n > 0 {
							cl.hist[c][names[c][v]] = n
						}
					}
				}
			}
		}
		// The classes in a slice, each query's verdict on each decided once.
		list := make([]*class, 0, len(groups))
		for _, cl := range groups {
			cl.idx = len(list)
			list = append(list, cl)
		}
		bad := make([]bool, len(list))
		for qi, qu := range queries {
			if qu.allow != nil && !qu.allow(node) {
				continue
			}
			for i, cl := range list {
				n := cl.n
				if o.persons != nil {
					n = len(cl.who)
				}
				bad[i] = n < qu.k || (qu.holds != nil && !qu.holds(cl.hist)) || (qu.personsHolds != nil && !qu.personsHolds(cl.hist, n)) ||
					(qu.profit != nil && !qu.profit.journalist && !qu.profit.pays(ev.il(node, dvals[cl.rep]), n))
			}
			fails := func(cl *class) bool { return bad[cl.idx] }
			groups := groups
			if qu.linkable {
				// Multirelational k: every round suppresses the persons of the groups
				// (by their published classes) of fewer than k, then fails the classes
				// left with fewer than k persons; a class that lost persons but not
				// all is two: its records kept and its records suppressed.
				failing := slices.Clone(bad)
				left, lost := make([]int, len(list)), make([]int, len(list))
				for i, cl := range list {
					left[i] = len(cl.who)
				}
				gone := map[string]bool{}
				for {
					sets := map[string][]int{}
					for i, cl := range list {
						for p := range cl.who {
							if !failing[i] && !gone[p] {
								sets[p] = append(sets[p], i)
							}
						}
					}
					byKey := map[string][]string{}
					for p, set := range sets {
						slices.Sort(set)
						byKey[fmt.Sprint(set)] = append(byKey[fmt.Sprint(set)], p)
					}
					var small []string
					for _, ps := range byKey {
						if len(ps) < qu.k {
							small = append(small, ps...)
						}
					}
					if len(small) == 0 {
						break
					}
					for _, p := range small {
						gone[p] = true
						for _, i := range sets[p] {
							left[i]--
							lost[i] += list[i].rowsOf[p]
						}
					}
					for i := range list {
						failing[i] = failing[i] || left[i] < qu.k
					}
				}
				split, sbad := map[uint64]*class{}, []bool{}
				add := func(cl *class, n int, f bool) {
					c := *cl
					c.n, c.idx = n, len(sbad)
					sbad = append(sbad, f)
					split[uint64(len(split))] = &c
				}
				for i, cl := range list {
					switch {
					case failing[i]:
						add(cl, cl.n, true)
					case lost[i] == 0:
						add(cl, cl.n, false)
					default:
						add(cl, cl.n-lost[i], false)
						add(cl, lost[i], true)
					}
				}
				groups, fails = split, func(cl *class) bool { return sbad[cl.idx] }
			}
			supp := 0
			for _, cl := range groups {
				if fails(cl) {
					supp += cl.n
				}
			}
			if supp > qu.maxSupp {
				continue
			}
			var enforced map[string]bool
			if qu.release != nil || qu.uniqueness != nil {
				var passing []*class
				for _, cl := range groups {
					if !fails(cl) {
						passing = append(passing, cl)
					}
				}
				key := func(cl *class) []int {
					out := make([]int, q)
					for c := range q {
						out[c] = o.order[c][string(rune('0'+node[c]))+"\x00"+o.levels[c][dvals[cl.rep][c]][node[c]]]
					}
					return out
				}
				slices.SortFunc(passing, func(a, b *class) int {
					if a.n != b.n {
						return a.n - b.n
					}
					return slices.Compare(key(a), key(b))
				})
				sizes := make([]int, len(passing))
				for i, cl := range passing {
					sizes[i] = cl.n
				}
				m, ok := oracleEnforce(qu, sizes, qu.maxSupp-supp)
				if !ok {
					continue
				}
				taken := map[*class]bool{}
				enforced = map[string]bool{}
				for _, cl := range passing[:m] {
					taken[cl] = true
					supp += cl.n
					key := ""
					for c := range q {
						key += o.levels[c][dvals[cl.rep][c]][node[c]] + "\x1f"
					}
					enforced[key] = true
				}
				before := fails
				fails = func(cl *class) bool { return before(cl) || taken[cl] }
			}
			val := new(big.Rat)
			var columns []*big.Rat
			switch qu.metric {
			case "loss":
				// ARX's loss at the gs-factor (MetricMDNMLoss), in rationals: per
				// column, a record's share s = leaves under its value / leaves;
				// agg = Σ published gFactor·s + Σ suppressed (sFactor = 1 ? 1 :
				// s + sFactor·(1 − s)); v = (agg − min) / (N − min), min =
				// gFactor·N/leaves (a column of one leaf with gFactor 1: sFactor
				// per suppressed record, over N); then the aggregate (the
				// geometric mean by Π (v + 1), which orders nodes as it does).
				gF, sF := ev.gFactor[qi], ev.sFactor[qi]
				one := big.NewRat(1, 1)
				per := make([]*big.Rat, q)
				for c := range q {
					leaves := int64(len(o.levels[c]))
					// The records' leaves under their values, published (pub) and
					// suppressed (sup), summed in integers: agg = gFactor·pub/leaves
					// + (sFactor = 1 ? supp : sup/leaves + sFactor·(supp − sup/leaves)).
					var pub, sup int64
					for _, cl := range groups {
						u := int64(cl.n) * under[c][node[c]][ids[c][node[c]][cl.rep]]
						if fails(cl) {
							sup += u
						} else {
							pub += u
						}
					}
					agg := new(big.Rat).Mul(gF, big.NewRat(pub, leaves))
					if sF.Cmp(one) == 0 {
						agg.Add(agg, big.NewRat(int64(supp), 1))
					} else {
						share := big.NewRat(sup, leaves)
						rest := new(big.Rat).Sub(big.NewRat(int64(supp), 1), share)
						agg.Add(agg, share)
						agg.Add(agg, rest.Mul(rest, sF))
					}
					lo := new(big.Rat).Mul(gF, big.NewRat(int64(N), leaves))
					span := new(big.Rat).Sub(big.NewRat(int64(N), 1), lo)
					if span.Sign() == 0 {
						per[c] = new(big.Rat).Mul(sF, big.NewRat(int64(supp), int64(N)))
						continue
					}
					per[c] = new(big.Rat).Quo(agg.Sub(agg, lo), span)
				}
				for _, v := range per {
					columns = append(columns, new(big.Rat).Set(v))
				}
				if qu.weights != nil && qu.aggregate != "geometric" { // the geometric mean's order is the unweighted one
					for c := range per {
						w, _ := new(big.Rat).SetString(strconv.FormatFloat(qu.weights[c], 'g', -1, 64))
						per[c].Mul(per[c], w)
					}
				}
				switch qu.aggregate {
				case "", "arithmetic", "sum":
					for _, v := range per {
						val.Add(val, v)
					}
					if qu.aggregate != "sum" {
						val.Quo(val, big.NewRat(int64(q), 1))
					}
				case "max":
					for _, v := range per {
						if v.Cmp(val) > 0 {
							val.Set(v)
						}
					}
				case "geometric":
					val.SetInt64(1)
					for _, v := range per {
						val.Mul(val, new(big.Rat).Add(v, big.NewRat(1, 1)))
					}
				}
			case "discernibility":
				var dm int64
				for _, cl := range groups {
					if fails(cl) {
						dm += int64(cl.n) * int64(N)
					} else {
						dm += int64(cl.n) * int64(cl.n)
					}
				}
				val.SetInt64(dm)
			case "discernibility-star":
				// DM*: every class, suppressed or not, counts its size squared.
				var dm int64
				for _, cl := range groups {
					dm += int64(cl.n) * int64(cl.n)
				}
				val.SetInt64(dm)
			case "height":
				for c := range q {
					val.Add(val, big.NewRat(int64(node[c]), 1))
				}
			case "precision":
				// Per column: a published record counts level/(levels−1) (0 for a
				// column of one level), a suppressed one 1; the sum over records
				// and columns divided by N·q.
				for _, cl := range groups {
					for c := range q {
						switch {
						case fails(cl):
							val.Add(val, big.NewRat(int64(cl.n), 1))
						case o.height[c] > 1:
							val.Add(val, big.NewRat(int64(cl.n*node[c]), int64(o.height[c]-1)))
						}
					}
				}
				val.Quo(val, big.NewRat(int64(N*q), 1))
			case "aecs":
				// N over the published classes, the suppressed records (if any)
				// making one more.
				published := 0
				for _, cl := range groups {
					if !fails(cl) {
						published++
					}
				}
				if supp > 0 {
					published++
				}
				val.SetFrac64(int64(N), int64(published))
			case "entropy", "entropy-monotone", "entropy-loss", "ncp", "publisher-payout":
				var failing []int // distinct records standing for the failing classes
				var counts []int
				var pub []*class
				for _, cl := range groups {
					if fails(cl) {
						failing = append(failing, cl.rep)
						counts = append(counts, cl.n)
					} else {
						pub = append(pub, cl)
					}
				}
				// The classes in a fixed order, so that the float sums are the same
				// every time.
				slices.SortFunc(pub, func(a, b *class) int { return a.rep - b.rep })
				var v float64
				switch qu.metric {
				case "entropy", "entropy-monotone":
					v = ev.entropy(qi, node, dvals, failing, counts, qu.metric == "entropy")
				case "entropy-loss":
					for _, cl := range pub {
						v += float64(cl.n) * ev.gFloat[qi] * ev.il(node, dvals[cl.rep])
					}
					v += float64(supp) * ev.sFloat[qi]
				case "publisher-payout":
					// Per published class gFactor·(B·n·IL + L when attacked), per
					// suppressed record sFactor·B.
					g := qu.profit
					for _, cl := range pub {
						c := float64(cl.n) * g.b * ev.il(node, dvals[cl.rep])
						if g.attacks(cl.n) {
							c += g.l
						}
						v += ev.gFloat[qi] * c
					}
					v += float64(supp) * ev.sFloat[qi] * g.b
				case "ncp":
					for _, cl := range pub {
						for c := range q {
							v += float64(cl.n) * ev.ncp(c, node[c], dvals[cl.rep][c])
						}
					}
					v = (v + float64(supp*q)) / float64(N*q)
				}
				val.SetFloat64(v)
			default:
				t.Fatalf("oracle: unknown metric %q", qu.metric)
			}
			cand := &oracleResult{node: append([]int(nil), node...), value: val, suppressed: supp, columns: columns, enforced: enforced}
			if only != nil {
				bests[qi] = cand
				continue
			}
			if bests[qi] == nil || oracleBetter(cand, bests[qi]) {
				nodes := map[string]*oracleResult(nil)
				if bests[qi] != nil {
					nodes = bests[qi].nodes
				}
				bests[qi] = &oracleResult{node: cand.node, value: cand.value, suppressed: cand.suppressed, nodes: nodes, columns: cand.columns, enforced: cand.enforced}
			}
			if qu.all {
				if bests[qi].nodes == nil {
					bests[qi].nodes = map[string]*oracleResult{}
				}
				bests[qi].nodes[fmt.Sprint(cand.node)] = cand
			}
		}
	}
	walk(0)
	return bests
}

// objectiveEval is the oracle's own arithmetic of the gs-factor and of the entropy,
// entropy-loss and ncp objectives, written from their definitions (objective.go,
// entropy.go, and ARX's sources they cite) over the raw strings.
type objectiveEval struct {
	o                *oracle
	gFactor, sFactor []*big.Rat // per query
	gFloat, sFloat   []float64
	leafFreq         []map[string]int // per column: records per leaf
	base             map[[2]int]float64
	maxIL            float64 // Σ_c ln(leaves of column c)
	lo, hi           []map[string]float64
	spread           []float64
}

func (o *oracle) newObjectiveEval(t *testing.T, queries []oracleQuery) *objectiveEval {
	t.Helper()
	ev := &objectiveEval{o: o, base: map[[2]int]float64{}}
	half := big.NewRat(1, 2)
	for _, qu := range queries {
		gs := big.NewRat(1, 2)
		if qu.gs != nil {
			if _, ok := gs.SetString(strconv.FormatFloat(*qu.gs, 'g', -1, 64)); !ok {
				t.Fatalf("oracle: gs-factor %v", *qu.gs)
			}
		}
		// ARX's Metric: sFactor = gs < 0.5 ? 2·gs : 1; gFactor = gs ≤ 0.5 ? 1 : 1 − 2·(gs − 0.5).
		sF, gF := big.NewRat(1, 1), big.NewRat(1, 1)
		if gs.Cmp(half) < 0 {
			sF.Mul(gs, big.NewRat(2, 1))
		}
		if gs.Cmp(half) > 0 {
			gF.Sub(gF, new(big.Rat).Mul(big.NewRat(2, 1), new(big.Rat).Sub(gs, half)))
		}
		g, _ := gF.Float64()
		sf, _ := sF.Float64()
		ev.gFactor, ev.sFactor = append(ev.gFactor, gF), append(ev.sFactor, sF)
		ev.gFloat, ev.sFloat = append(ev.gFloat, g), append(ev.sFloat, sf)
	}
	q := len(o.height)
	ev.leafFreq = make([]map[string]int, q)
	for c := range q {
		ev.leafFreq[c] = map[string]int{}
		ev.maxIL += math.Log(float64(len(o.levels[c])))
	}
	for _, row := range o.rows {
		for c, v := range row {
			ev.leafFreq[c][v]++
		}
	}
	ev.lo, ev.hi, ev.spread = make([]map[string]float64, q), make([]map[string]float64, q), make([]float64, q)
	for c := range q {
		if o.numeric == nil || o.numeric[c] == nil {
			continue
		}
		ev.lo[c], ev.hi[c] = map[string]float64{}, map[string]float64{}
		a, b := math.Inf(1), math.Inf(-1)
		for leaf, row := range o.levels[c] {
			x := o.numeric[c][leaf]
			if ev.leafFreq[c][leaf] > 0 {
				a, b = min(a, x), max(b, x)
			}
			for l, v := range row {
				key := fmt.Sprint(l, "\x00", v)
				if cur, ok := ev.lo[c][key]; !ok || x < cur {
					ev.lo[c][key] = x
				}
				if cur, ok := ev.hi[c][key]; !ok || x > cur {
					ev.hi[c][key] = x
				}
			}
		}
		ev.spread[c] = b - a
	}
	return ev
}

// under is the number of leaves under leaf's value at level l of column c.
func (ev *objectiveEval) under(c, l int, leaf string) int {
	v := ev.o.levels[c][leaf][l]
	return ev.o.under[c][string(rune('0'+l))+"\x00"+v]
}

// entropy is the non-uniform entropy of node: gFactor·Σ_c Σ_leaves a·log2(b/a) (a the
// leaf's records, b its level value's, every record counted) plus, when suppressed
// counts, sFactor·Σ_c Σ_v c_v·log2(S/c_v) over the failing classes' values.
func (ev *objectiveEval) entropy(qi int, node []int, dvals [][]string, failing, counts []int, suppressed bool) float64 {
	o := ev.o
	base := 0.0
	for c, l := range node {
		b, ok := ev.base[[2]int{c, l}]
		if !ok {
			freq := map[string]int{}
			for leaf, a := range ev.leafFreq[c] {
				freq[o.levels[c][leaf][l]] += a
			}
			for _, leaf := range slices.Sorted(maps.Keys(ev.leafFreq[c])) { // a fixed order: the same sum every time
				a := ev.leafFreq[c][leaf]
				b += float64(a) * math.Log2(float64(freq[o.levels[c][leaf][l]])/float64(a))
			}
			ev.base[[2]int{c, l}] = b
		}
		base += b
	}
	v := ev.gFloat[qi] * base
	if !suppressed || len(failing) == 0 {
		return v
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	sup := 0.0
	for c, l := range node {
		per := map[string]int{}
		for i, d := range failing {
			per[o.levels[c][dvals[d][c]][l]] += counts[i]
		}
		for _, v := range slices.Sorted(maps.Keys(per)) {
			sup += float64(per[v]) * math.Log2(float64(total)/float64(per[v]))
		}
	}
	return v + ev.sFloat[qi]*sup
}

// il is ARX's entropy-based information loss of a published record: Σ_c ln(leaves under
// its value) / Σ_c ln(leaves of column c), 0 when every column has one leaf.
func (ev *objectiveEval) il(node []int, vals []string) float64 {
	if ev.maxIL == 0 {
		return 0
	}
	s := 0.0
	for c, l := range node {
		s += math.Log(float64(ev.under(c, l, vals[c])))
	}
	return s / ev.maxIL
}

// ncp is the NCP of leaf's value at level l of column c: by value, the range of the
// leaves under it over the range of the values present (capped at 1, 0 when that is
// 0); by leaves, leaves under / leaves when more than one.
func (ev *objectiveEval) ncp(c, l int, leaf string) float64 {
	if ev.lo[c] != nil {
		if ev.spread[c] == 0 {
			return 0
		}
		key := fmt.Sprint(l, "\x00", ev.o.levels[c][leaf][l])
		return min(1, (ev.hi[c][key]-ev.lo[c][key])/ev.spread[c])
	}
	if u := ev.under(c, l, leaf); u > 1 {
		return float64(u) / float64(len(ev.o.levels[c]))
	}
	return 0
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
	return loadAdultQI(t, adultQI)
}

// loadAdultQI is loadAdult with the quasi-identifiers given, in their order.
func loadAdultQI(t testing.TB, adultQI []string) (*Table, [][]string, [][][]string) {
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
		codes := NewCodes(tab.Rows, h.Leaves())
		for r, row := range data[1:] {
			v := row[col[name]]
			leaf, ok := h.Leaf(v)
			if !ok {
				t.Fatalf("%s row %d: value not in hierarchy", name, r+1)
			}
			codes.Set(r, leaf)
			raw[r] = append(raw[r], v)
		}
		tab.Columns = append(tab.Columns, Column{Name: name, Hierarchy: h, Codes: codes})
	}
	return tab, raw, hier
}

// matchOracle runs one trial of a model against the exhaustive optimum: the search
// with opt and the oracle with q (its models) must agree on the node and the records
// suppressed, or both find none. It reports whether the models change the optimum of
// k and the suppression limit alone, and the nodes the search rejected after their
// monotone part.
func matchOracle(t *testing.T, o *oracle, tab *Table, q oracleQuery, opt Options) (binding bool, rejected int) {
	t.Helper()
	plain := oracleQuery{k: q.k, maxSupp: q.maxSupp, metric: q.metric}
	want := o.bestMany(t, []oracleQuery{q, plain})
	got, err := Search(context.Background(), tab, opt)
	binding = want[1] != nil && (want[0] == nil || !slices.Equal(want[0].node, want[1].node))
	if want[0] == nil {
		if !errors.Is(err, fault.ErrUnattainable) {
			t.Fatalf("want unattainable, got %v, %v", got, err)
		}
		return binding, 0
	}
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Levels, want[0].node) || got.Suppressed != want[0].suppressed {
		t.Fatalf("search: node %v, %d suppressed; exhaustive: node %v, %d suppressed", got.Levels, got.Suppressed, want[0].node, want[0].suppressed)
	}
	return binding, got.rejected
}

// skewedSensitive is a sensitive column of n records over values values, value v of a
// record at ⌊u²·values⌋ for a uniform u (skewed towards small values), with the
// records' raw values "s0", "s1", … for the oracle.
func skewedSensitive(rng *rand.Rand, n, values int) (Sensitive, []string) {
	codes := NewCodes(n, values)
	raw := make([]string, n)
	for r := range n {
		u := rng.Float64()
		v := int(u * u * float64(values))
		codes.Set(r, int32(v))
		raw[r] = fmt.Sprintf("s%d", v)
	}
	return Sensitive{Name: "s", Values: values, Codes: codes}, raw
}

// oracleEnforce decides qu's release-wide models on the sizes of the released
// classes (in the order enforcement takes them): the number of them to suppress (0
// when the models hold), within room records, and whether the models then hold.
// Without qu.enforce it suppresses none.
func oracleEnforce(qu oracleQuery, passing []int, room int) (int, bool) {
	holds := func(f func([]int) bool, m int) bool {
		return f == nil || f(slices.Clone(passing[m:]))
	}
	both := func(m int) bool { return holds(qu.release, m) && holds(qu.uniqueness, m) }
	if both(0) {
		return 0, true
	}
	if !qu.enforce {
		return 0, false
	}
	most, used := 0, 0
	for most < len(passing) && used+passing[most] <= room {
		used += passing[most]
		most++
	}
	m0 := -1
	for m := 0; m <= most; m++ {
		if holds(qu.release, m) {
			m0 = m
			break
		}
	}
	if m0 < 0 {
		return 0, false
	}
	if both(m0) {
		return m0, true
	}
	lo, hi := m0+1, most
	for lo < hi {
		mid := (lo + hi) / 2
		if both(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if lo > most || !both(lo) {
		return 0, false
	}
	return lo, true
}
