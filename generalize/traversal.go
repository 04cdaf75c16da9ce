package generalize

import (
	"context"
	"math"
	"math/big"

	"golang.org/x/sync/errgroup"

	"sanitizer/fault"
	"sanitizer/internal/safe"
)

// traversal is one run of the search over the lattice: the nodes' states, the nodes
// still to visit in the search's order, and the best node found so far.
type traversal struct {
	s   *searcher
	ctx context.Context // the run's: a cancelled ctx stops the counting
	res *Result         // the lattice statistics so far

	nodes *nodeStates
	order *nodeOrder // the nodes not yet taken, by rank

	inc       incumbent // the best node found so far (node < 0: none)
	bestValue float64   // its value (+Inf: none)

	inBounds func(node int) bool // whether a node lies within the level bounds
	floorOf  floorer             // the metric's floors (nil: none, and nodes.floors is nil)
	// exactBound: the metric's bound of a node is its exact value when nothing is
	// suppressed.
	exactBound bool
	// freeValue: a node whose tag says it meets every requirement, with nothing
	// suppressed, has the value of its bound (when the bound is exact then); a tag
	// that stands for the monotone part only says nothing of the rest.
	freeValue bool

	pending []int // the nodes of the batch being counted, taken from the order already
	levels  []int // scratch
}

// run searches the lattice from s.bottom, the bottom node's classes (or the records),
// which the caller has set.
func (s *searcher) run(ctx context.Context) (*Result, error) {
	if s.bottom.rows == nil && s.bottom.sets == nil && len(s.mod.setCols) > 0 {
		s.bottom.sets = s.mod.setsOf(s.bottom) // a class table's bottom
	}
	r := s.newTraversal(ctx)
	s.uses = r.uses
	defer func() { s.uses = nil }()
	for r.order.peek() >= 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		batch, err := r.collect()
		if err != nil {
			return nil, err
		}
		if err := r.evaluateBatch(batch); err != nil {
			return nil, err
		}
	}
	r.nodes.account(r.res)
	return r.finish()
}

// newTraversal returns the traversal of s's lattice, every node unknown and in the
// order, by (bound, height, index).
func (s *searcher) newTraversal(ctx context.Context) *traversal {
	ns := newNodeStates(s.lat, s.met)
	r := &traversal{
		s:         s,
		ctx:       ctx,
		res:       &Result{Metric: s.opt.Metric, LatticeSize: s.lat.Size()},
		nodes:     ns,
		order:     newNodeOrder(ns.ranks()),
		inc:       incumbent{node: -1},
		bestValue: math.Inf(1),
		inBounds:  s.levelBounds(),
		levels:    make([]int, 0, s.q),
	}
	if r.res.Metric == "" {
		r.res.Metric = MetricLoss
	}
	if f, ok := s.met.(floorer); ok {
		r.floorOf, ns.floors = f, newFloors(s.lat)
	}
	r.exactBound = s.met.boundIsExactWithoutSuppression()
	r.freeValue = s.opt.MaxSuppressed == 0 && s.monotone && r.exactBound
	return r
}

// collect takes from the order the next nodes whose value needs their classes (and,
// under models that are not monotone, their verdict), at most two per worker, and
// settles the nodes it passes over: it resolves the status of an unknown node (when
// the batch is still empty: the batch's outcome may change the bound), drops the
// nodes that cannot beat the incumbent, and values those whose value their tag gives.
// Once the next node's bound exceeds the best value, it empties the order.
func (r *traversal) collect() ([]int, error) {
	var batch []int
	ns := r.nodes
	for r.order.peek() >= 0 && len(batch) < 2*r.s.workers {
		node := r.order.peek()
		if r.pruned(ns.bound[node]) {
			r.order.clear()
			break
		}
		if r.cannotBeat(node) || !r.inBounds(node) {
			r.order.pop()
			ns.set(node, nodeSeen|nodeBeaten)
			continue
		}
		if ns.status[node] == unknown {
			if len(batch) > 0 {
				break // evaluate the batch first: it may change the bound
			}
			if err := r.resolve(node); err != nil {
				return nil, err
			}
		}
		r.order.pop()
		ns.set(node, nodeSeen)
		switch {
		case ns.settled(node):
		case ns.lower[node] != nil && r.inc.beats(node, ns.height[node], ns.lower[node]):
			// Its value is at least its lower bound, which cannot beat the incumbent
			// (nor, then, the optimum).
			ns.set(node, nodeBeaten)
		case r.freeValue:
			r.levels = r.s.lat.Levels(node, r.levels)
			ex, v := r.s.met.exact(r.levels, nil, nil)
			r.consider(node, ex, v)
		default:
			batch = append(batch, node)
		}
	}
	return batch, nil
}

// pruned reports whether a node of the given bound cannot be the optimum: the bound
// exceeds the best value, with a relative margin far above float rounding so that an
// exact tie is never pruned.
func (r *traversal) pruned(bound float64) bool {
	return r.inc.node >= 0 && bound > r.bestValue*(1+1e-9)+1e-300
}

// cannotBeat reports whether a node whose bound ties the incumbent's value (within
// float rounding) cannot beat it: when the bound is exact without suppression, the
// node's value is at least its exact value with nothing suppressed, and a tie is
// decided by height and index. So a metric whose values tie often (height) stops at
// the first node that meets the models instead of counting all of its ties. A metric
// with floors (floorer) bounds a node by the floor its counted specializations give
// it, which the same comparison decides.
func (r *traversal) cannotBeat(node int) bool {
	if r.inc.node < 0 {
		return false
	}
	ns := r.nodes
	if fl := ns.floors; fl != nil && fl.exact[node] != nil && r.inc.beats(node, ns.height[node], fl.exact[node]) {
		return true
	}
	if !r.exactBound || ns.bound[node] < r.bestValue*(1-1e-9) {
		return false
	}
	lv := r.s.lat.Levels(node, make([]int, 0, r.s.q))
	ex, _ := r.s.met.exact(lv, nil, nil)
	return r.inc.beats(node, ns.height[node], ex)
}

// consider makes node, of the given exact value and its float value, the incumbent
// when it lies within the level bounds and beats it.
func (r *traversal) consider(node int, exact *big.Int, value float64) {
	h := r.nodes.height[node]
	if !r.inBounds(node) || r.inc.beats(node, h, exact) {
		return
	}
	r.inc, r.bestValue = incumbent{node: node, height: h, exact: exact, value: value}, value
}

// boundFor is the incumbent a checkAll evaluation of the batch may stop at (bounded):
// under models that are not monotone, the evaluations stop before the histograms when
// the node cannot beat the incumbent as it is now (it only gets better, so what it
// beats the optimum beats); under monotone models, none.
func (r *traversal) boundFor() incumbent {
	if r.s.monotone {
		return incumbent{node: -1}
	}
	return r.inc
}

// evaluateBatch counts the nodes of batch and applies the outcomes in batch order.
// They are counted in parallel only when their sources are large enough to pay for
// handing them to another core (see parallelKeys), and not when one is large enough
// for a radix-partitioned count: that count uses every worker itself and holds 4 to 12
// bytes per source class, so two at once would double the search's peak memory for no
// gain in time. Counted one at a time, each node's table goes to the cache (and under
// its bound) before the next count, which evicts from the cache on this goroutine.
func (r *traversal) evaluateBatch(batch []int) error {
	if len(batch) == 0 {
		return nil
	}
	s := r.s
	work, radix := 0, false
	for _, node := range batch {
		src := s.source(node, s.withHist())
		work += src.n
		radix = radix || s.radix(src)
	}
	if work >= parallelBatch && !radix && s.workers > 1 {
		return r.evaluateInParallel(batch)
	}
	par := 1
	if radix {
		par = s.workers
	}
	for b, node := range batch {
		r.pending = batch[b+1:]
		ev, err := s.evaluate(r.ctx, node, par, checkAll, r.boundFor())
		if err != nil {
			return err
		}
		r.apply(ev, checkAll)
	}
	r.pending = nil
	return nil
}

// parallelBatch is the fewest source classes a batch's nodes must read together for
// them to be counted on several goroutines: a node's checks and its metric's sums cost
// a few times its roll-up, so handing a node to another core pays from a few thousand
// classes (the passes of a local recoding search tables of a few thousand records).
const parallelBatch = 1 << 12

// evaluateInParallel counts the nodes of batch on s.workers goroutines, all bounded
// by the incumbent as it is before the batch, and applies the outcomes in batch order.
func (r *traversal) evaluateInParallel(batch []int) error {
	results := make([]evaluation, len(batch))
	snap := r.boundFor()
	eg, ectx := errgroup.WithContext(r.ctx)
	eg.SetLimit(r.s.workers)
	for i, node := range batch {
		eg.Go(safe.Go(func() (err error) {
			results[i], err = r.s.evaluate(ectx, node, 1, checkAll, snap)
			return err
		}))
	}
	if err := eg.Wait(); err != nil {
		return err
	}
	for _, ev := range results {
		if err := r.ctx.Err(); err != nil {
			return err // the callback cancelled the run
		}
		r.apply(ev, checkAll)
	}
	return nil
}

// count evaluates node for the bisection (resolve) on par goroutines and applies the
// outcome.
func (r *traversal) count(node, par int) error {
	ev, err := r.s.evaluate(r.ctx, node, par, r.s.resolveCheck, incumbent{node: -1})
	if err != nil {
		return err
	}
	r.apply(ev, r.s.resolveCheck)
	return nil
}

// apply records an evaluation of chk's requirements: its classes for later roll-ups,
// the tags, the floors, and the node's value when it meets every requirement.
func (r *traversal) apply(ev evaluation, chk check) {
	s, ns := r.s, r.nodes
	if chk == checkAll && !ev.bounded {
		ns.set(ev.node, nodeEvaluated)
	} else {
		ns.set(ev.node, nodeChecked)
	}
	if s.opt.OnEvaluate != nil {
		s.opt.OnEvaluate(1)
	}
	r.res.RolledUp += ev.work
	s.memorize(ev, chk)
	if ns.floors != nil && ev.cls != nil {
		ex, v := r.floorOf.floor(ev.cls)
		ns.floors.raise(ev.node, ex, v)
	}
	switch {
	case ev.entries != nil:
		s.remember(ev.entries) // what roll-ups read: the classes' persons are lost in cls
	case !s.grouped: // (grouped entries not kept: the classes are no source)
		s.remember(ev.cls)
	}
	pass := ev.monotone
	if s.resolveCheck == checkAll {
		pass = ev.anonymous
	}
	st := notAnonymous
	if pass {
		st = anonymous
	}
	if ns.status[ev.node] != st {
		ns.tag(ev.node, st)
	}
	switch {
	case chk == checkMonotone:
		if ev.lower != nil {
			ns.lower[ev.node] = ev.lower
		}
	case ev.bounded:
		ns.set(ev.node, nodeBeaten)
	case !ev.anonymous:
		ns.set(ev.node, nodeFailed)
		if ev.monotone {
			r.res.rejected++
		}
	default:
		r.levels = s.lat.Levels(ev.node, r.levels)
		fails := s.fails(ev.cls, ev.failing)
		ns.set(ev.node, nodeValued)
		if ev.hasApprox && r.pruned(ev.approx) {
			break // its value exceeds the best by more than rounding: it cannot beat it
		}
		var ex *big.Int
		var v float64
		if ev.sums != nil {
			ex, v = s.met.(summer).exactOf(r.levels, ev.sums)
		} else {
			ex, v = s.met.exact(r.levels, ev.cls, fails)
		}
		r.consider(ev.node, ex, v)
	}
}

// uses gives every cached table (in bySize's order) the rank of the first node still
// to be counted whose source it would be (never: none): the batch's pending nodes,
// the nodes left in the order that may still be counted, and the chosen node, counted
// once more at the end (searcher.uses).
func (r *traversal) uses(uses []rank) {
	for i := range uses {
		uses[i] = never
	}
	hist := r.s.withHist()
	use := func(node int, rk rank) {
		if i := r.s.sourceAt(node, hist); i >= 0 && rk.before(uses[i]) {
			uses[i] = rk
		}
	}
	for _, node := range r.pending {
		use(node, r.nodes.rank(node))
	}
	// The nodes left in the order, but those the bound prunes (with all below them in
	// the heap, whose ranks are higher).
	h := r.order.ranks
	stack := []int{0}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if i >= len(h) {
			continue
		}
		rk := h[i]
		if r.pruned(rk.bound) {
			continue
		}
		if node := int(rk.node); !r.nodes.settled(node) {
			use(node, rk)
		}
		stack = append(stack, 2*i+1, 2*i+2)
	}
	if r.inc.node >= 0 {
		use(r.inc.node, last)
	}
}

// finish counts the chosen node once more and returns the search's result: its
// levels, value, classes and suppressed records, with the lattice statistics. With no
// node chosen, the error matches fault.ErrUnattainable.
func (r *traversal) finish() (*Result, error) {
	s, res, best := r.s, r.res, r.inc.node
	if best < 0 {
		return nil, s.unattainable()
	}
	memo := s.memo
	s.memo = nil // counted again, for its classes
	final, err := s.evaluate(r.ctx, best, s.workers, checkAll, incumbent{node: -1})
	s.memo = memo
	if err != nil {
		return nil, err
	}
	res.Levels = s.lat.Levels(best, nil)
	res.Value = r.bestValue
	if final.cls == nil || !final.anonymous {
		return nil, fault.Internalf("the chosen node is not anonymous on recount")
	}
	res.Suppressed = final.suppressed
	fails := s.fails(final.cls, final.failing)
	for j := 0; j < final.cls.n; j++ {
		if fails(j) {
			continue
		}
		c, p := int(final.cls.count(j)), int(final.cls.personsOf(j))
		res.Classes++
		if res.MinClass == 0 || c < res.MinClass {
			res.MinClass = c
		}
		if res.MinPersons == 0 || p < res.MinPersons {
			res.MinPersons = p
		}
	}
	return res, nil
}

// unattainable is the error of a search that found no node meeting the models.
func (s *searcher) unattainable() error {
	models := ""
	switch {
	case s.mod.any() && s.opt.Risks.any():
		models = " with the l-diversity, t-closeness, β-likeness and risk requirements"
	case s.mod.any():
		models = " with the l-diversity, t-closeness and β-likeness requirements"
	case s.opt.Risks.any():
		models = " with the risk requirements"
	}
	return fault.Unattainable("no generalization reaches k=%d%s while suppressing at most %d of %d records", s.opt.K, models, s.opt.MaxSuppressed, s.t.Rows)
}

// pivotMemory is how many recent nodes counted from the bottom pivot() considers, and
// pivotCover how many of them must lie above a meet (besides the node) to count it.
// A pivot that is not reused costs one more roll-up of the bottom: pivots are made only
// while that is cheap (pivotMaxBottom classes), where they cut the search's work by a
// quarter to a half on Adult; on a bottom of a million classes they doubled it.
const (
	pivotMemory    = 4
	pivotCover     = 1
	pivotMaxBottom = 1 << 17
)

// resolve settles the status of an unknown node (the verdict the tags carry: on every
// requirement, or on their monotone part under models that are not monotone, see
// resolveCheck) by a binary search along a path from the node up to the first node
// already known to pass (or the top), as Flash does: a node found failing tags the node
// and everything below it; a node found passing tags everything above it. It returns
// the first error of a count.
func (r *traversal) resolve(node int) error {
	status := r.nodes.status
	path := r.climb(node)
	// path[0..len) are unknown; find the border by bisection.
	lo, hi := -1, len(path) // path[lo] not anonymous, path[hi] anonymous
	for hi-lo > 1 && status[node] == unknown {
		mid := (lo + hi) / 2
		if status[path[mid]] == unknown {
			if err := r.pivot(path[mid]); err != nil {
				return err
			}
		}
		if status[path[mid]] == unknown { // the pivot may have settled it
			if err := r.count(path[mid], r.s.workers); err != nil {
				return err
			}
		}
		if status[path[mid]] == anonymous {
			hi = mid
		} else {
			lo = mid
		}
	}
	return nil
}

// climb returns resolve's path from node up to, but not including, the first node
// known to pass (or up to the top). The path climbs, at every step, in the
// quasi-identifier whose next level keeps the most distinct values, so that it stays
// below the border as long as possible.
func (r *traversal) climb(node int) []int {
	s := r.s
	path := []int{node}
	levels := s.lat.Levels(node, make([]int, 0, s.q))
	for {
		cur := path[len(path)-1]
		bestDim, bestRatio := -1, -1.0
		for i, l := range levels {
			h := s.t.Columns[i].Hierarchy
			if l+1 < h.Height() {
				ratio := float64(h.Size(l+1)) / float64(h.Size(l))
				if ratio > bestRatio {
					bestDim, bestRatio = i, ratio
				}
			}
		}
		if bestDim < 0 {
			return path
		}
		levels[bestDim]++
		next := cur + s.lat.strides[bestDim]
		if r.nodes.status[next] == anonymous {
			return path
		}
		path = append(path, next)
	}
}

// pivot prepares a cheaper source for node when its only cached specialization is the
// bottom: it counts the meet (level-wise minimum) of node and the previous node counted
// from the bottom, which is a specialization of both and, being more general than the
// bottom, has fewer classes for later roll-ups. The pivot's own outcome is applied like
// any evaluation (it is a lattice node like any other).
func (r *traversal) pivot(node int) error {
	s := r.s
	if s.bottom.n > pivotMaxBottom || s.source(node, s.withHist()) != s.bottom {
		return nil
	}
	best := s.bestMeet(node)
	s.fromBottom = append(s.fromBottom, node)
	if len(s.fromBottom) > pivotMemory {
		s.fromBottom = s.fromBottom[1:]
	}
	if best == 0 || s.cache[best] != nil {
		return nil
	}
	return r.count(best, s.workers)
}

// bestMeet returns, among the meets of node with the recent nodes counted from the
// bottom (fromBottom), the one above which most of them lie (then the most general):
// a pivot pays only if reused. It returns 0 when none has pivotCover of them above it.
func (s *searcher) bestMeet(node int) int {
	best, bestCover, bestHeight := 0, 0, 0
	for _, prev := range s.fromBottom {
		meet, height := 0, 0
		for i, st := range s.lat.strides {
			h := s.lat.Heights[i]
			l := min((node/st)%h, (prev/st)%h)
			meet += l * st
			height += l
		}
		if meet == node || height == 0 {
			continue
		}
		cover := 0
		for _, other := range s.fromBottom {
			if s.lat.Leq(meet, other) {
				cover++
			}
		}
		if cover > bestCover || (cover == bestCover && height > bestHeight) {
			best, bestCover, bestHeight = meet, cover, height
		}
	}
	if bestCover < pivotCover {
		return 0
	}
	return best
}
