package pgm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"

	"golang.org/x/sync/errgroup"

	"sanitizer/internal/safe"
)

// Model is a discrete graphical model over a whole domain, fitted to noisy
// marginal measurements: a junction tree over the maximal cliques of the
// triangulated interaction graph of its measured cliques, the log-potential
// of each measured clique, and the calibrated clique and separator
// marginals. A Model is immutable and safe for concurrent use.
type Model struct {
	// Total is the number of records the model stands for: its marginals
	// are probabilities times Total.
	Total float64

	e   *engine
	eta float64 // last accepted step size, reused by warm starts
}

// newModel builds a model over the distinct, validated measured cliques
// with the given log-potentials (nil for zero) and runs belief propagation.
func newModel(dom Domain, meas [][]int, theta [][]float64, total float64) (*Model, error) {
	e, err := newEngine(dom, meas)
	if err != nil {
		return nil, err
	}
	for m := range meas {
		if theta != nil && theta[m] != nil {
			copy(e.theta[m], theta[m])
		}
	}
	e.bp()
	return &Model{Total: total, e: e}, nil
}

// Cliques returns the distinct measured cliques the model was built for.
func (m *Model) Cliques() [][]int {
	if m == nil || m.e == nil {
		return nil
	}
	out := make([][]int, len(m.e.meas))
	for i, c := range m.e.meas {
		out[i] = append([]int(nil), c...)
	}
	return out
}

// Size returns the number of float64 cells of the model's junction tree.
func (m *Model) Size() int64 {
	if m == nil || m.e == nil {
		return 0
	}
	return int64(m.e.jt.total)
}

// margPlan is how a marginal is computed: from one clique, or by variable
// elimination over a subtree of the junction tree.
type margPlan struct {
	single int     // clique holding the whole set, or -1
	sub    []int   // subtree cliques
	keep   [][]int // per subtree clique: attributes kept before elimination
	edges  []int   // child cliques of the subtree's edges
	steps  [][]int // elimination order: variables eliminated together
	cost   int64
	maxTab int64   // largest table allocated
	in     []bool  // subtree membership
	scopes [][]int // factor scopes: kept clique sets, then separators
}

// plan works out how to compute the marginal over attrs (validated).
func (m *Model) plan(attrs []int) margPlan {
	jt := m.e.jt
	dom := m.e.dom
	pl := margPlan{single: -1}
	for c, cl := range jt.cliques {
		if isSubset(attrs, cl) && (pl.single < 0 || jt.size[c] < jt.size[pl.single]) {
			pl.single = c
		}
	}
	if pl.single >= 0 {
		pl.cost = int64(jt.size[pl.single])
		pl.maxTab = dom.cells(attrs)
		return pl
	}
	pl.in = pruneLeaves(jt, attrs)
	pl.factor(jt, dom, attrs)
	pl.chooseOrder(jt, dom, attrs)
	return pl
}

// pruneLeaves returns the subtree of the junction tree left after pruning, again and
// again, the leaves whose query attributes all lie in their neighbour: whether each
// clique is in it.
func pruneLeaves(jt *jtree, attrs []int) []bool {
	k := len(jt.cliques)
	in := make([]bool, k)
	deg := make([]int, k)
	for c := 0; c < k; c++ {
		in[c] = true
		deg[c] = len(jt.children[c])
		if jt.parent[c] >= 0 {
			deg[c]++
		}
	}
	neighbour := func(c int) int {
		if p := jt.parent[c]; p >= 0 && in[p] {
			return p
		}
		for _, ch := range jt.children[c] {
			if in[ch] {
				return ch
			}
		}
		return -1
	}
	queue := []int{}
	for c := 0; c < k; c++ {
		if deg[c] == 1 {
			queue = append(queue, c)
		}
	}
	left := k
	for len(queue) > 0 && left > 1 {
		c := queue[0]
		queue = queue[1:]
		if !in[c] || deg[c] != 1 {
			continue
		}
		n := neighbour(c)
		if !isSubset(intersect(jt.cliques[c], attrs), jt.cliques[n]) {
			continue
		}
		in[c] = false
		left--
		deg[n]--
		if deg[n] == 1 {
			queue = append(queue, n)
		}
	}
	return in
}

// factor sets the plan's subtree (from pl.in), its edges, the attributes each of its
// cliques keeps (the query's and its separators), the factor scopes and the cost of
// making the factors.
func (pl *margPlan) factor(jt *jtree, dom Domain, attrs []int) {
	in := pl.in
	for c := range jt.cliques {
		if !in[c] {
			continue
		}
		pl.sub = append(pl.sub, c)
		if p := jt.parent[c]; p >= 0 && in[p] {
			pl.edges = append(pl.edges, c)
		}
	}
	var scopes [][]int
	for _, c := range pl.sub {
		keepSet := intersect(jt.cliques[c], attrs)
		if p := jt.parent[c]; p >= 0 && in[p] {
			keepSet = union(keepSet, jt.sep[c])
		}
		for _, ch := range jt.children[c] {
			if in[ch] {
				keepSet = union(keepSet, jt.sep[ch])
			}
		}
		pl.keep = append(pl.keep, keepSet)
		if len(keepSet) != len(jt.cliques[c]) {
			pl.cost = satAdd(pl.cost, int64(jt.size[c]))
		}
		scopes = append(scopes, keepSet)
	}
	for _, ch := range pl.edges {
		pl.cost = satAdd(pl.cost, dom.cells(jt.sep[ch]))
		scopes = append(scopes, jt.sep[ch])
	}
	pl.scopes = scopes
}

// chooseOrder sets the plan's elimination order to the cheapest of the candidates:
// greedy (smallest joint table first), and message passing towards each subtree
// clique in turn (each clique's private variables leave when its message is sent).
func (pl *margPlan) chooseOrder(jt *jtree, dom Domain, attrs []int) {
	base := pl.cost
	order := greedyOrder(dom, pl.scopes, attrs)
	pl.cost, pl.maxTab = simulateElim(dom, pl.scopes, attrs, order, base)
	pl.steps = order
	for _, r := range pl.sub {
		o := treeOrder(jt, pl.in, r, attrs)
		if c, mt := simulateElim(dom, pl.scopes, attrs, o, base); c < pl.cost {
			pl.steps, pl.cost, pl.maxTab = o, c, mt
		}
	}
}

// greedyOrder chooses an elimination order for the variables of the
// factor scopes outside attrs: at each step the variable whose factors'
// joint scope is smallest (ties to the lowest index).
func greedyOrder(dom Domain, scopes [][]int, attrs []int) [][]int {
	scopes = slices.Clone(scopes)
	var all []int
	for _, s := range scopes {
		all = union(all, s)
	}
	var vars []int
	for _, v := range all {
		if !contains(attrs, v) {
			vars = append(vars, v)
		}
	}
	var steps [][]int
	for len(vars) > 0 {
		bestI := -1
		var bestCells int64
		var bestU []int
		for i, v := range vars {
			var u []int
			for _, s := range scopes {
				if contains(s, v) {
					u = union(u, s)
				}
			}
			if cells := dom.cells(u); bestI < 0 || cells < bestCells {
				bestI, bestCells, bestU = i, cells, u
			}
		}
		v := vars[bestI]
		steps = append(steps, []int{v})
		vars = append(vars[:bestI], vars[bestI+1:]...)
		kept := scopes[:0]
		for _, s := range scopes {
			if !contains(s, v) {
				kept = append(kept, s)
			}
		}
		scopes = append(kept, without(bestU, v))
	}
	return steps
}

// treeOrder is the elimination order of message passing over the subtree
// (cliques with in set) towards root r: cliques in post-order, each
// eliminating at once its variables outside attrs and outside the
// separator with its parent.
func treeOrder(jt *jtree, in []bool, r int, attrs []int) [][]int {
	var post []int
	parent := map[int]int{r: -1}
	var visit func(c int)
	visit = func(c int) {
		nbrs := slices.Clone(jt.children[c])
		if p := jt.parent[c]; p >= 0 {
			nbrs = append(nbrs, p)
		}
		for _, n := range nbrs {
			if _, seen := parent[n]; !in[n] || seen {
				continue
			}
			parent[n] = c
			visit(n)
		}
		post = append(post, c)
	}
	visit(r)
	done := map[int]bool{}
	for _, a := range attrs {
		done[a] = true
	}
	var order [][]int
	for _, c := range post {
		var keep, step []int
		if p := parent[c]; p >= 0 {
			keep = intersect(jt.cliques[c], jt.cliques[p])
		}
		for _, v := range jt.cliques[c] {
			if !done[v] && !contains(keep, v) {
				done[v] = true
				step = append(step, v)
			}
		}
		if len(step) > 0 {
			order = append(order, step)
		}
	}
	return order
}

// simulateElim returns the estimated cell operations (plus base) and the
// largest table allocated when eliminating the variable groups in order
// from the factors with the given scopes (each group in one fused
// multiply-and-sum pass over the joint scope of the factors it touches),
// then multiplying the rest into a table over attrs.
func simulateElim(dom Domain, scopes [][]int, attrs []int, order [][]int, base int64) (cost, maxTab int64) {
	scopes = slices.Clone(scopes)
	cost = base
	for _, vs := range order {
		u, kept, n := gather(scopes, vs)
		if n == 0 {
			continue
		}
		ns := minus(u, vs)
		cost = satAdd(cost, satMul(dom.cells(u), int64(n)))
		maxTab = max(maxTab, dom.cells(ns))
		scopes = append(kept, ns)
	}
	final := dom.cells(attrs)
	maxTab = max(maxTab, final)
	cost = satAdd(cost, satMul(final, int64(len(scopes))))
	return cost, maxTab
}

// gather splits scopes into those touching vs (returning their union and
// count) and the others (kept, reusing the slice).
func gather(scopes [][]int, vs []int) (u []int, kept [][]int, n int) {
	kept = scopes[:0]
	for _, s := range scopes {
		if len(intersect(s, vs)) > 0 {
			u = union(u, s)
			n++
		} else {
			kept = append(kept, s)
		}
	}
	return u, kept, n
}

// minus returns sorted set a without the members of sorted set b.
func minus(a, b []int) []int {
	out := make([]int, 0, len(a))
	for _, x := range a {
		if !contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// MarginalCost estimates, in cell operations, what Marginal(attrs) costs,
// without computing it. It returns math.MaxInt64 for an invalid set.
func (m *Model) MarginalCost(attrs []int) int64 {
	if m == nil || m.e == nil || m.e.dom.checkSet(attrs) != nil {
		return math.MaxInt64
	}
	return m.plan(attrs).cost
}

// maxMarginalCost bounds the cell operations of one Marginal call (it also
// keeps every table the kernels walk within int and maxCliqueAttrs).
const maxMarginalCost = 1 << 40

// factor is a table over a sorted attribute set, laid out in the order of
// layout (nil: sorted).
type factor struct {
	scope  []int
	val    []float64
	layout []int
}

// Marginal returns the model's marginal counts (summing to Total) over the
// sorted, distinct attributes attrs, laid out row-major with the first
// attribute most significant.
func (m *Model) Marginal(attrs []int) ([]float64, error) {
	if m == nil || m.e == nil {
		return nil, errors.New("pgm: nil model")
	}
	e := m.e
	dom := e.dom
	if err := dom.checkSet(attrs); err != nil {
		return nil, err
	}
	pl := m.plan(attrs)
	if pl.maxTab > maxModelCells {
		return nil, fmt.Errorf("pgm: marginal over %v needs a table of %d cells", attrs, pl.maxTab)
	}
	if pl.cost > maxMarginalCost {
		return nil, fmt.Errorf("pgm: marginal over %v costs about %d cell operations", attrs, pl.cost)
	}
	return m.run(pl, attrs), nil
}

// run computes the marginal over attrs by plan pl.
func (m *Model) run(pl margPlan, attrs []int) []float64 {
	e := m.e
	dom := e.dom
	jt := e.jt
	sc := newScratch(8)
	out := make([]float64, dom.cells(attrs))
	if pl.single >= 0 {
		c := pl.single
		mp := newMproj(dom, e.nodes[c].layout, [][]int{attrs})
		mp.sumKernel(e.clique(c), out, sc)
	} else {
		var facs []factor
		for i, c := range pl.sub {
			lay := e.nodes[c].layout
			if len(pl.keep[i]) == len(jt.cliques[c]) {
				facs = append(facs, factor{jt.cliques[c], e.clique(c), lay})
				continue
			}
			kl := restrict(lay, pl.keep[i])
			val := make([]float64, dom.cells(kl))
			newMproj(dom, lay, [][]int{kl}).sumKernel(e.clique(c), val, sc)
			facs = append(facs, factor{pl.keep[i], val, kl})
		}
		for _, ch := range pl.edges {
			inv := make([]float64, len(e.sepP[ch]))
			for i, p := range e.sepP[ch] {
				// A separator cell of (nearly) zero mass has cliques' cells of at
				// most that mass: their ratio counts as 0, never 0/0 or x/subnormal.
				if p > minSepMass {
					inv[i] = 1 / p
				}
			}
			facs = append(facs, factor{jt.sep[ch], inv, nil})
		}
		for _, vs := range pl.steps {
			var in []factor
			var u []int
			kept := facs[:0:0]
			for _, f := range facs {
				if len(intersect(f.scope, vs)) > 0 {
					in = append(in, f)
					u = union(u, f.scope)
				} else {
					kept = append(kept, f)
				}
			}
			if len(in) == 0 {
				continue
			}
			// The new factor takes the walk's attribute order, so the
			// kernel sums into it contiguously.
			ns := minus(u, vs)
			walk := chooseLayout(dom, u, layouts(in))
			alignFactors(dom, walk, in, sc)
			nl := restrict(walk, ns)
			out := factor{ns, make([]float64, dom.cells(ns)), nl}
			multiply(dom, walk, in, out, sc)
			facs = append(kept, out)
		}
		walk := chooseLayout(dom, attrs, append(layouts(facs), attrs))
		alignFactors(dom, walk, facs, sc)
		multiply(dom, walk, facs, factor{attrs, out, nil}, sc)
	}
	for i := range out {
		out[i] *= m.Total
	}
	return out
}

// alignFactors re-lays out, in the order of walk, each factor that is
// small next to the walked table and laid out in another order, so the
// kernel reads it contiguously.
func alignFactors(dom Domain, walk []int, facs []factor, sc *scratch) {
	size := dom.cells(walk)
	for i, f := range facs {
		l := f.layout
		if l == nil {
			l = f.scope
		}
		want := restrict(walk, f.scope)
		if slices.Equal(l, want) || int64(len(f.val))*4 > size {
			continue
		}
		val := make([]float64, len(f.val))
		newMproj(dom, l, [][]int{want}).sumKernel(f.val, val, sc)
		facs[i] = factor{f.scope, val, want}
	}
}

// layouts returns the factors' table layouts.
func layouts(facs []factor) [][]int {
	out := make([][]int, len(facs))
	for i, f := range facs {
		out[i] = f.layout
		if out[i] == nil {
			out[i] = f.scope
		}
	}
	return out
}

// multiply walks the joint table over walk (the factors' scopes' union, in
// the order to walk it) and sums the product of the factors into out.
func multiply(dom Domain, walk []int, facs []factor, out factor, sc *scratch) {
	subs := append(layouts(facs), out.layout)
	if out.layout == nil {
		subs[len(facs)] = out.scope
	}
	vals := make([][]float64, len(facs))
	for i, f := range facs {
		vals[i] = f.val
	}
	if len(sc.base) < len(subs) {
		sc.base = make([]int, len(subs))
	}
	newMproj(dom, walk, subs).prodKernel(vals, out.val, sc)
}

// Marginals computes Marginal for every set on up to workers goroutines
// (GOMAXPROCS when workers <= 0) and returns the results in input order.
func (m *Model) Marginals(ctx context.Context, sets [][]int, workers int) ([][]float64, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	out := make([][]float64, len(sets))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for i := range sets {
		if gctx.Err() != nil {
			break
		}
		g.Go(safe.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			r, err := m.Marginal(sets[i])
			if err != nil {
				return fmt.Errorf("pgm: marginal %d: %w", i, err)
			}
			out[i] = r
			return nil
		}))
	}
	if err := g.Wait(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// minSepMass is the separator probability below which a separator cell is treated as
// empty when dividing by it (1/p would overflow below about 5.6e-309).
const minSepMass = 1e-300
