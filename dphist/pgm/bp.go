package pgm

import (
	"math"
	"runtime"
	"slices"

	"sanitizer/internal/safe"
)

// parThreshold is the clique size from which a clique's kernels are split
// across workers.
const parThreshold = 1 << 15

// mergeDiv: two blocks of a clique merge while building the merged table
// (cells × items) costs at most 1/mergeDiv of the clique's cells per BP.
const mergeDiv = 16

// tinySum is the smallest slot sum accepted from the fast (linear-space)
// upward kernel; below it the message is recomputed in log space with a
// shift per separator cell.
const tinySum = 1e-250

// item is one table attached to a clique: a measured clique's potential or
// a child's up message.
type item struct {
	scope []int
	log   []float64 // θ_m, or the child's log up message
	lin   []float64 // exp(log − max log)
	marg  []float64 // where the item's marginal goes after BP
	maxp  *float64  // the max its lin table was normalised by
}

// block groups a clique's items under a scope holding all of theirs (the
// largest item's, or a union after merging), so the clique's kernels touch
// one table per block: t, the product of the items' lin tables, on the way
// up, and p, the block's marginal, on the way down.
type block struct {
	scope []int
	items []int  // indices into the clique's items
	prod  *mproj // scope -> [item scopes..., scope]
	srcs  [][]float64
	red   []*mproj // per item: scope -> [item scope]
	t, p  []float64
	alias bool // a single item over the block's own scope: t and p are its lin and marg
}

// node is a clique of the junction tree with its kernel maps.
type node struct {
	layout []int // attribute order of the clique's table
	items  []item
	blocks []block
	mp     *mproj // layout -> [block scopes..., parent separator]
	full   *mproj // layout -> [item scopes..., parent separator] (exact fallback)
	logs   [][]float64
	t      [][]float64 // block tables, upward sources
	p      [][]float64 // block marginals, downward targets
	exact  bool        // the last BP took the log-space fallback here
}

// engine holds a junction tree over a set of measured cliques together with
// every buffer belief propagation needs, allocated once.
//
// Belief propagation works on the potentials Θ_C = Σ_{m assigned to C} θ_m.
// On the way up, clique C's table becomes e_C(x) = exp(acc_C(x) − shift_C(s)),
// where acc_C = Θ_C + Σ_children up messages, s is x's cell in the separator
// with the parent and S_C(s) = Σ_{x~s} e_C(x); the up message is
// shift_C(s) + log S_C(s), and e_C/S_C is the conditional of C's subtree
// given the separator. The fast path computes e_C in linear space as a
// product of exponentiated, max-normalised small tables with one shift for
// the whole clique; if some S_C(s) is tiny (possible underflow) the clique
// is redone in log space with shift_C(s) = max_{x~s} acc_C(x). On the way
// down, μ_C(x) = μ_sep(s)·e_C(x)/S_C(s) is written in place, so the buffer
// ends up holding the clique marginals (probabilities).
type engine struct {
	dom    Domain
	tri    *triangulation
	jt     *jtree
	meas   [][]int // distinct measured cliques
	mcells []int   // cells per measured clique
	nodes  []node

	work []float64 // clique tables: e_C during BP, probabilities after

	upLog   [][]float64 // per non-root clique: log up message over the separator
	upLin   [][]float64 // exp(upLog − upMax)
	upSum   [][]float64 // S_C
	upShift [][]float64 // shift_C
	sepP    [][]float64 // separator marginal (probabilities)
	fscale  [][]float64 // μ_sep / S_C
	upMax   []float64
	upLogOK []bool // upLog is up to date

	theta    [][]float64 // per measured clique: θ for the next BP
	lin      [][]float64 // exp(θ − max θ)
	thetaMax []float64
	pm       [][]float64 // per measured clique: marginal probabilities after BP

	logZ    float64
	rootSum float64
	nbp     int // belief propagation passes run (for benchmarks)

	workers int
	sc      []*scratch
	totals  []float64
	priv    [][]float64   // per worker: private reduction space
	privT   [][][]float64 // per worker: private target headers
}

// newEngine builds the junction tree for the measured cliques (validated,
// distinct) and allocates the buffers.
func newEngine(dom Domain, meas [][]int) (*engine, error) {
	tri := triangulate(dom, meas)
	jt, err := buildJTree(dom, tri)
	if err != nil {
		return nil, err
	}
	k := len(jt.cliques)
	e := &engine{
		dom:      dom,
		tri:      tri,
		jt:       jt,
		meas:     meas,
		mcells:   make([]int, len(meas)),
		nodes:    make([]node, k),
		work:     make([]float64, jt.total),
		upLog:    make([][]float64, k),
		upLin:    make([][]float64, k),
		upSum:    make([][]float64, k),
		upShift:  make([][]float64, k),
		sepP:     make([][]float64, k),
		fscale:   make([][]float64, k),
		upMax:    make([]float64, k),
		upLogOK:  make([]bool, k),
		theta:    make([][]float64, len(meas)),
		lin:      make([][]float64, len(meas)),
		thetaMax: make([]float64, len(meas)),
		pm:       make([][]float64, len(meas)),
	}
	e.allocSeparators()
	e.assignMeasured()
	maxF, maxPriv, large := e.layoutNodes()
	e.allocWorkers(maxF, maxPriv, large)
	return e, nil
}

// allocSeparators allocates the tables over each non-root clique's separator with
// its parent.
func (e *engine) allocSeparators() {
	jt := e.jt
	for c := range jt.cliques {
		if jt.parent[c] >= 0 {
			n := int(e.dom.cells(jt.sep[c]))
			e.upLog[c] = make([]float64, n)
			e.upLin[c] = make([]float64, n)
			e.upSum[c] = make([]float64, n)
			e.upShift[c] = make([]float64, n)
			e.sepP[c] = make([]float64, n)
			e.fscale[c] = make([]float64, n)
		}
	}
}

// assignMeasured allocates each measured clique's tables and assigns it, as an item,
// to the smallest junction-tree clique that holds it.
func (e *engine) assignMeasured() {
	jt := e.jt
	for m, c := range e.meas {
		best := -1
		for i, mc := range jt.cliques {
			if isSubset(c, mc) && (best < 0 || jt.size[i] < jt.size[best]) {
				best = i
			}
		}
		n := int(e.dom.cells(c))
		e.mcells[m] = n
		e.theta[m] = make([]float64, n)
		e.lin[m] = make([]float64, n)
		e.pm[m] = make([]float64, n)
		nd := &e.nodes[best]
		nd.items = append(nd.items, item{scope: c, log: e.theta[m], lin: e.lin[m], marg: e.pm[m], maxp: &e.thetaMax[m]})
	}
}

// layoutNodes adds to each clique's items its children's up messages, groups the
// items into blocks and chooses the clique's table layout and projections. It returns
// the most factors of a clique (+2), the most private reduction space a worker needs,
// and whether a clique is large enough to be done in parallel.
func (e *engine) layoutNodes() (maxF, maxPriv int, large bool) {
	jt, dom := e.jt, e.dom
	maxF = 1
	for c := range jt.cliques {
		nd := &e.nodes[c]
		for _, ch := range jt.children[c] {
			nd.items = append(nd.items, item{scope: jt.sep[ch], log: e.upLog[ch], lin: e.upLin[ch], marg: e.sepP[ch], maxp: &e.upMax[ch]})
		}
		e.buildBlocks(c, nd)
		var bsubs, isubs [][]int
		for _, b := range nd.blocks {
			bsubs = append(bsubs, b.scope)
		}
		for _, it := range nd.items {
			isubs = append(isubs, it.scope)
			nd.logs = append(nd.logs, it.log)
		}
		if jt.parent[c] >= 0 {
			bsubs = append(bsubs, jt.sep[c])
			isubs = append(isubs, jt.sep[c])
		}
		nd.layout = chooseLayout(dom, jt.cliques[c], bsubs)
		nd.mp = newMproj(dom, nd.layout, bsubs)
		nd.full = newMproj(dom, nd.layout, isubs)
		maxF = max(maxF, len(nd.items)+2)
		if jt.size[c] >= parThreshold {
			large = true
			priv := 0
			for _, p := range nd.p {
				priv += len(p)
			}
			if jt.parent[c] >= 0 {
				priv = max(priv, len(e.upSum[c]))
			}
			maxPriv = max(maxPriv, priv)
		}
	}
	return maxF, maxPriv, large
}

// allocWorkers allocates the workers' scratch: two workers when a clique is large,
// else one.
func (e *engine) allocWorkers(maxF, maxPriv int, large bool) {
	e.workers = min(runtime.GOMAXPROCS(0), 2)
	if !large {
		e.workers = 1
	}
	e.sc = make([]*scratch, e.workers)
	e.totals = make([]float64, e.workers)
	e.priv = make([][]float64, e.workers)
	e.privT = make([][][]float64, e.workers)
	for w := range e.sc {
		e.sc[w] = newScratch(maxF)
		if w > 0 {
			e.priv[w] = make([]float64, maxPriv)
			e.privT[w] = make([][]float64, maxF)
		}
	}
}

// buildBlocks groups the items of clique c: larger scopes first, each item
// joins the first block whose scope holds it; then blocks are merged while
// their joint tables stay small.
func (e *engine) buildBlocks(c int, nd *node) {
	dom := e.dom
	idx := make([]int, len(nd.items))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		return len(nd.items[b].scope) - len(nd.items[a].scope)
	})
	for _, i := range idx {
		sc := nd.items[i].scope
		placed := false
		for bi := range nd.blocks {
			if isSubset(sc, nd.blocks[bi].scope) {
				nd.blocks[bi].items = append(nd.blocks[bi].items, i)
				placed = true
				break
			}
		}
		if !placed {
			nd.blocks = append(nd.blocks, block{scope: sc, items: []int{i}})
		}
	}
	// Merge blocks whose joint table is small next to the clique: each
	// merge saves two operations per clique cell and costs a pass over the
	// joint table per item.
	csize := dom.cells(e.jt.cliques[c])
	for len(nd.blocks) > 1 {
		bi, bj := -1, -1
		var bestU []int
		var bestCost int64
		for i := range nd.blocks {
			for j := i + 1; j < len(nd.blocks); j++ {
				u := union(nd.blocks[i].scope, nd.blocks[j].scope)
				cost := satMul(dom.cells(u), int64(len(nd.blocks[i].items)+len(nd.blocks[j].items)+1))
				if bi < 0 || cost < bestCost {
					bi, bj, bestU, bestCost = i, j, u, cost
				}
			}
		}
		if bestCost > csize/mergeDiv {
			break
		}
		nd.blocks[bi].scope = bestU
		nd.blocks[bi].items = append(nd.blocks[bi].items, nd.blocks[bj].items...)
		nd.blocks = append(nd.blocks[:bj], nd.blocks[bj+1:]...)
	}
	for bi := range nd.blocks {
		b := &nd.blocks[bi]
		if len(b.items) == 1 && len(b.scope) == len(nd.items[b.items[0]].scope) {
			it := nd.items[b.items[0]]
			b.alias = true
			b.t, b.p = it.lin, it.marg
		} else {
			n := int(dom.cells(b.scope))
			b.t = make([]float64, n)
			b.p = make([]float64, n)
			var subs [][]int
			for _, i := range b.items {
				it := nd.items[i]
				subs = append(subs, it.scope)
				b.srcs = append(b.srcs, it.lin)
				b.red = append(b.red, newMproj(dom, b.scope, [][]int{it.scope}))
			}
			subs = append(subs, b.scope)
			b.prod = newMproj(dom, b.scope, subs)
		}
		nd.t = append(nd.t, b.t)
		nd.p = append(nd.p, b.p)
	}
}

// chooseLayout orders the attributes of a table (a clique's, or the joint
// scope a kernel walks) so that the innermost run of the kernels is long
// and indexes every factor contiguously or not at all: it tries moving to
// the end each group of attributes with the same factor membership, each
// single attribute, and each factor's own order, and keeps the best.
func chooseLayout(dom Domain, set []int, subs [][]int) []int {
	score := func(l []int) int {
		p := newMproj(dom, l, subs)
		strided := 0
		for _, is := range p.istr {
			if is > 1 {
				strided++
			}
		}
		return p.inner / (1 + 3*strided)
	}
	best := set
	bestScore := score(set)
	try := func(last []int) {
		if len(last) == 0 {
			return
		}
		l := make([]int, 0, len(set))
		for _, a := range set {
			if !slices.Contains(last, a) {
				l = append(l, a)
			}
		}
		l = append(l, last...)
		if sc := score(l); sc > bestScore {
			best, bestScore = l, sc
		}
	}
	sig := func(a int) string {
		b := make([]byte, len(subs))
		for j, s := range subs {
			if slices.Contains(s, a) {
				b[j] = 1
			}
		}
		return string(b)
	}
	groups := map[string][]int{}
	var keys []string
	for _, a := range set {
		if dom[a] == 1 {
			continue
		}
		k := sig(a)
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], a)
	}
	for _, k := range keys {
		try(groups[k])
	}
	for _, a := range set {
		try([]int{a})
	}
	for _, s := range subs {
		try(s)
	}
	return slices.Clone(best)
}

// restrict returns the members of layout that are in the sorted set s, in
// layout order.
func restrict(layout, s []int) []int {
	out := make([]int, 0, len(s))
	for _, a := range layout {
		if contains(s, a) {
			out = append(out, a)
		}
	}
	return out
}

// clique returns clique c's table in the work buffer.
func (e *engine) clique(c int) []float64 {
	return e.work[e.jt.off[c] : e.jt.off[c]+e.jt.size[c]]
}

// split returns the run range of worker w out of nw.
func split(n, w, nw int) (int, int) {
	return n * w / nw, n * (w + 1) / nw
}

// runUp runs the upward kernel of clique c, in parallel when large.
func (e *engine) runUp(c int, dst, tgt []float64) float64 {
	nd := &e.nodes[c]
	p := nd.mp
	srcs := nd.t
	if e.workers == 1 || p.size < parThreshold || p.nouter < 2 {
		return p.upKernel(dst, srcs, tgt, 0, p.nouter, e.sc[0])
	}
	nw := e.workers
	totals := e.totals[:nw]
	// Worker 0 adds into tgt, the others into their own tables, summed below.
	safe.MustParallel(nw, func(w int) {
		lo, hi := split(p.nouter, w, nw)
		t := tgt
		if w > 0 && tgt != nil {
			t = e.priv[w][:len(tgt)]
			clear(t)
		}
		totals[w] = p.upKernel(dst, srcs, t, lo, hi, e.sc[w])
	})
	total := totals[0]
	for w := 1; w < nw; w++ {
		total += totals[w]
		if tgt != nil {
			for i, x := range e.priv[w][:len(tgt)] {
				tgt[i] += x
			}
		}
	}
	return total
}

// runDown runs the downward kernel of clique c, in parallel when large:
// on the stored table (exact fallback) or fused with the recomputation of
// the clique's product, storing the result into dst when dst is not nil.
func (e *engine) runDown(c int, dst, scale []float64, scalar float64) {
	nd := &e.nodes[c]
	p := nd.mp
	tgts := nd.p
	kernel := func(tg [][]float64, lo, hi int, sc *scratch) {
		p.downKernel(dst, tg, scale, scalar, lo, hi, sc)
	}
	if e.workers == 1 || p.size < parThreshold || p.nouter < 2 {
		kernel(tgts, 0, p.nouter, e.sc[0])
		return
	}
	nw := e.workers
	// Worker 0 adds into the targets, the others into their own tables, summed below.
	safe.MustParallel(nw, func(w int) {
		lo, hi := split(p.nouter, w, nw)
		if w == 0 {
			kernel(tgts, lo, hi, e.sc[0])
			return
		}
		pt := e.privT[w][:len(tgts)]
		buf := e.priv[w]
		for j, t := range tgts {
			pt[j] = buf[:len(t)]
			clear(pt[j])
			buf = buf[len(t):]
		}
		kernel(pt, lo, hi, e.sc[w])
	})
	for w := 1; w < nw; w++ {
		for j, t := range tgts {
			for i, x := range e.privT[w][j] {
				t[i] += x
			}
		}
	}
}

// normExp writes exp(src − max src) into dst and returns max src.
func normExp(dst, src []float64) float64 {
	mx := math.Inf(-1)
	for _, x := range src {
		mx = max(mx, x)
	}
	for i, x := range src {
		dst[i] = fastExp(x - mx)
	}
	return mx
}

// normExpPar is normExp split across the workers for large tables.
func (e *engine) normExpPar(dst, src []float64) float64 {
	nw := e.workers
	if nw == 1 || len(src) < parThreshold {
		return normExp(dst, src)
	}
	mx := e.totals[:nw]
	par := func(f func(w, lo, hi int)) {
		safe.MustParallel(nw, func(w int) {
			lo, hi := split(len(src), w, nw)
			f(w, lo, hi)
		})
	}
	par(func(w, lo, hi int) {
		m := math.Inf(-1)
		for _, x := range src[lo:hi] {
			m = max(m, x)
		}
		mx[w] = m
	})
	m := math.Inf(-1)
	for _, x := range mx {
		m = max(m, x)
	}
	par(func(_, lo, hi int) {
		d := dst[lo:hi]
		for i, x := range src[lo:hi] {
			d[i] = fastExp(x - m)
		}
	})
	return m
}

// bp runs belief propagation on the current θ. Afterwards the work buffer
// holds each clique's marginal probabilities, sepP each separator's, pm
// each measured clique's, and logZ the log partition function.
func (e *engine) bp() {
	e.nbp++
	jt := e.jt
	for m, t := range e.theta {
		e.thetaMax[m] = e.normExpPar(e.lin[m], t)
	}
	for i := len(jt.order) - 1; i >= 0; i-- {
		e.up(jt.order[i])
	}
	for _, c := range jt.order {
		e.down(c)
	}
}

// up is clique c's step of the upward pass, its children's done: it makes its table
// e_C and sends its up message (or, at the root, sets logZ), in linear space, or in
// log space when a sum is tiny.
func (e *engine) up(c int) {
	nd := &e.nodes[c]
	shift := 0.0
	for _, it := range nd.items {
		shift += *it.maxp
	}
	for bi := range nd.blocks {
		b := &nd.blocks[bi]
		if !b.alias {
			clear(b.t)
			b.prod.prodKernel(b.srcs, b.t, e.sc[0])
		}
	}
	dst := e.clique(c)
	nd.exact = false
	if e.jt.parent[c] < 0 {
		total := e.runUp(c, dst, nil)
		if !(total >= tinySum && total <= math.MaxFloat64) {
			total, shift = e.exactRoot(c, dst)
			nd.exact = true
		}
		e.rootSum = total
		e.logZ = shift + math.Log(total)
		return
	}
	s := e.upSum[c]
	clear(s)
	e.runUp(c, dst, s)
	for _, x := range s {
		if !(x >= tinySum && x <= math.MaxFloat64) {
			e.exactUp(c, dst)
			nd.exact = true
			e.upLogOK[c] = false
			e.fillUpLog(c)
			e.upMax[c] = normExp(e.upLin[c], e.upLog[c])
			return
		}
	}
	// upLin = exp(upLog − upMax) = S/max S; upLog itself is
	// only needed by a log-space fallback of the parent.
	sh := e.upShift[c]
	mx := 0.0
	for i, x := range s {
		sh[i] = shift
		mx = max(mx, x)
	}
	inv := 1 / mx
	for i, x := range s {
		e.upLin[c][i] = x * inv
	}
	e.upMax[c] = shift + math.Log(mx)
	e.upLogOK[c] = false
}

// down is clique c's step of the downward pass, its parent's done: it writes the
// clique's marginal in place and sums the marginals of its items out of it.
func (e *engine) down(c int) {
	nd := &e.nodes[c]
	for _, t := range nd.p {
		clear(t)
	}
	dst := e.clique(c)
	if e.jt.parent[c] < 0 {
		e.runDown(c, dst, nil, 1/e.rootSum)
	} else {
		f := e.fscale[c]
		for i, s := range e.upSum[c] {
			f[i] = e.sepP[c][i] / s
		}
		e.runDown(c, dst, f, 0)
	}
	for bi := range nd.blocks {
		b := &nd.blocks[bi]
		if b.alias {
			continue
		}
		for k, i := range b.items {
			mg := nd.items[i].marg
			clear(mg)
			b.red[k].sumKernel(b.p, mg, e.sc[0])
		}
	}
}

// fillUpLog brings clique c's log up message up to date.
func (e *engine) fillUpLog(c int) {
	if e.upLogOK[c] {
		return
	}
	lg, sh := e.upLog[c], e.upShift[c]
	for i, x := range e.upSum[c] {
		lg[i] = sh[i] + math.Log(x)
	}
	e.upLogOK[c] = true
}

// exactUp recomputes clique c's upward table in log space with a shift per
// separator cell (its maximum), which cannot underflow.
func (e *engine) exactUp(c int, dst []float64) {
	nd := &e.nodes[c]
	for _, ch := range e.jt.children[c] {
		e.fillUpLog(ch)
	}
	p := nd.full
	sc := e.sc[0]
	p.accKernel(dst, nd.logs, 0, p.nouter, sc)
	fi := p.nf - 1
	sh := e.upShift[c]
	for i := range sh {
		sh[i] = math.Inf(-1)
	}
	p.maxKernel(dst, sh, fi, sc)
	s := e.upSum[c]
	clear(s)
	p.expShiftKernel(dst, sh, s, fi, sc)
}

// exactRoot recomputes the root's table in log space with its exact
// maximum as shift.
func (e *engine) exactRoot(c int, dst []float64) (total, shift float64) {
	nd := &e.nodes[c]
	for _, ch := range e.jt.children[c] {
		e.fillUpLog(ch)
	}
	p := nd.full
	p.accKernel(dst, nd.logs, 0, p.nouter, e.sc[0])
	shift = math.Inf(-1)
	for _, x := range dst {
		shift = max(shift, x)
	}
	for i, x := range dst {
		dst[i] = math.Exp(x - shift)
		total += dst[i]
	}
	return total, shift
}
