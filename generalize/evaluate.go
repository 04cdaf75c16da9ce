package generalize

import (
	"cmp"
	"context"
	"math/big"
	"slices"
)

// check is how much of the requirements an evaluation decides.
type check uint8

const (
	checkAll      check = iota // every requirement
	checkMonotone              // k-anonymity and the monotone part (models.go) only
)

// evaluation is the outcome of counting one node.
type evaluation struct {
	node int
	cls  *classes
	// entries, with a privacy unit, is the node's classes keyed by person too (what
	// later roll-ups read: see collapse); cls is nil.
	entries *classes
	// failing marks, per class of at least k records, those found failing a
	// requirement other than k (nil: there is none); every class is decided when the
	// node is anonymous.
	failing []bool
	// suppressed is the records of the classes found failing: all of them when the
	// node is anonymous, otherwise more than the limit (or -1: not counted).
	suppressed int
	monotone   bool // k-anonymity and the monotone part hold within the suppression limit
	anonymous  bool // every requirement holds within the limit (checkAll only)
	// bounded: the monotone part holds, but the node's value with the classes failing
	// it suppressed, a lower bound of its value, cannot beat the incumbent (checkAll
	// with an incumbent only): the other requirements were not checked.
	bounded bool
	// lower is that lower bound when the monotone part holds (checkMonotone only).
	lower *big.Int
	work  int // source classes read
	// approx, when hasApprox, is the node's value as the metric's approximator gives
	// it (an anonymous node's, computed on the worker that counted it).
	approx    float64
	hasApprox bool
	// sums, when not nil, is an anonymous node's metric sums (summer), with a memo;
	// memoized says the evaluation came from the memo, not from a count.
	sums     *lossSums
	memoized bool
	// lowerSums, when not nil, is a node's metric sums (summer) with the classes found
	// failing when the monotone part held (checkMonotone, or checkAll bounded): its
	// lower bound at any gs-factor, for the memo.
	lowerSums *lossSums
}

// incumbent is the best node found so far, for the bounds of evaluations (node < 0:
// none).
type incumbent struct {
	node, height int
	exact        *big.Int
	value        float64 // exact's float value
}

// beats reports whether the incumbent is better than a node of the given height whose
// exact value is exact, by the search's order: smaller value, then smaller sum of
// levels, then smaller index. Given a lower bound of a node's value instead, it reports
// that no value of the node at or above the bound beats the incumbent.
func (b incumbent) beats(node, height int, exact *big.Int) bool {
	if b.node < 0 {
		return false
	}
	c := exact.Cmp(b.exact)
	return c > 0 || (c == 0 && (height > b.height || (height == b.height && node > b.node)))
}

// fails reports whether class j of cls violates a model (and is suppressed); failing
// marks the classes that fail a model other than k (nil: none).
func (s *searcher) fails(cls *classes, failing []bool) func(j int) bool {
	k := int32(s.opt.K)
	if failing == nil {
		return func(j int) bool { return cls.personsOf(j) < k }
	}
	return func(j int) bool { return cls.personsOf(j) < k || failing[j] }
}

// withHist reports whether class tables carry histograms: when a requirement is
// decided on them (see evaluate).
func (s *searcher) withHist() bool { return len(s.mod.histCols) > 0 }

// evaluate counts the classes of node and checks chk's requirements on them; par
// goroutines compute the keys of large tables. A checkAll evaluation given an
// incumbent (inc.node ≥ 0) stops, before it reads the histograms, when the node's value
// cannot beat it (bounded). Once ctx is cancelled it counts nothing and returns ctx's
// error.
//
// When the requirements read histograms, every evaluation rolls them up, a checkMonotone
// one too: its table is then a source for the full evaluations of the nodes above it,
// which would otherwise roll up from the farther tables that have them, and cost more
// than the histograms cost here (Adult, t=0.2 with 5% suppression: twice the time). A
// node whose own table is cached is not counted again.
//
// The classes are checked in order until the records of the failing ones exceed the
// suppression limit: the node is then not anonymous, whatever the others' verdicts (an
// anonymous node's value needs every class's verdict, and it gets them). A class is
// checked against k, then its value sets (the monotone part, cheap), then the models
// read on its histograms, each stopping at the first requirement that fails.
func (s *searcher) evaluate(ctx context.Context, node, par int, chk check, inc incumbent) (evaluation, error) {
	if err := ctx.Err(); err != nil {
		return evaluation{}, err
	}
	g := <-s.pool
	g.par = par
	defer func() { s.pool <- g }()
	if s.memo != nil {
		if e := s.memo.at[node].Load(); e != nil {
			g.node.levels = s.lat.Levels(node, g.node.levels[:0])
			if ev, ok := s.fromMemo(node, g.node.levels, chk, e, inc); ok {
				return ev, nil
			}
		}
	}
	c, work := s.countNode(node, g)
	ev := evaluation{node: node, cls: c.cls, entries: c.entries, suppressed: -1, work: work}
	if c.cls == nil {
		return ev, nil // more classes than an anonymous node can have
	}
	if s.mod.any() || s.pop != nil || s.opt.Risks.any() || s.opt.Profitability != nil {
		c.failing = make([]bool, c.cls.n)
	}
	if chk == checkMonotone || inc.node < 0 {
		s.rollHists(&c, g) // now, since no bound may spare them
	}
	ok := s.checkSets(&c)
	ev.suppressed = c.supp
	if !ok {
		return ev, nil
	}
	ev.monotone = true
	if chk == checkMonotone {
		ev.lower, ev.lowerSums = s.lowerWithSums(&c)
		return ev, nil
	}
	ev, err := s.checkRest(ev, &c, g, inc)
	if ev.bounded && s.memo != nil {
		ev.lowerSums = c.partial // the sums its bound was decided on, when a summer's
	}
	if err == nil && ev.anonymous && !ev.bounded {
		if sm, ok := s.met.(summer); ok {
			ev.sums = s.sumsAt(sm, &c, ev)
			ev.approx, ev.hasApprox = sm.approxOf(c.levels, ev.sums), true
		} else if a, ok := s.met.(approximator); ok {
			ev.approx, ev.hasApprox = a.approx(c.levels, ev.cls, s.fails(ev.cls, ev.failing)), true
		}
	}
	return ev, err
}

// sumsAt is the metric's sums of an anonymous node (ev, counted as c): those of the
// classes failing when its bound was last checked (c.partial), plus those of the
// classes found failing since, when its classes are still c's; else counted whole.
func (s *searcher) sumsAt(sm summer, c *nodeCount, ev evaluation) *lossSums {
	if c.partial == nil || ev.cls != c.cls {
		return sm.sumsOf(c.levels, ev.cls, s.fails(ev.cls, ev.failing))
	}
	k := int32(s.opt.K)
	since := func(j int) bool {
		return ev.cls.personsOf(j) >= k && ev.failing != nil && ev.failing[j] && (c.partialFailing == nil || !c.partialFailing[j])
	}
	return c.partial.plus(sm.sumsOf(c.levels, ev.cls, since))
}

// nodeCount is an evaluation's node, its classes and the verdicts found so far.
type nodeCount struct {
	node   int
	levels []int
	cls    *classes
	// entries, with a privacy unit, is the node's classes keyed by person too, which
	// cls collapses (nil: no unit, the classes are the entries)
	entries *classes
	of      []int32  // with a unit: the class of every entry
	src     *classes // the table the entries were rolled up from (nil: they were cached)
	assign  []int32  // the class of each of src's classes (when a model reads its classes)
	// failing marks the classes of at least k records found failing another
	// requirement (nil: there is none).
	failing []bool
	supp    int // the records of the classes found failing
	// partial, when not nil, is the metric's sums (summer) of the classes failing when
	// the node's bound was last checked, and partialFailing what failing was then.
	partial        *lossSums
	partialFailing []bool
}

// suppress marks class j of c failing and counts its records suppressed.
func (c *nodeCount) suppress(j int) {
	c.failing[j] = true
	c.supp += int(c.cls.count(j))
}

// countNode returns node's classes: its cached table when that has what the
// requirements read, otherwise a roll-up of its source (the cached specialization of
// fewest classes) on g, with the number of source classes read. The classes are nil
// when the roll-up of a large source stopped at more classes than an anonymous node can
// have.
func (s *searcher) countNode(node int, g *grouper) (nodeCount, int) {
	hist := s.withHist()
	g.node.levels = s.lat.Levels(node, g.node.levels[:0])
	c := nodeCount{node: node, levels: g.node.levels}
	if s.grouped {
		return s.countGrouped(c, g)
	}
	if t := s.cache[node]; t != nil && (!hist || t.hist != nil) {
		c.cls = t
		s.collapse(&c, g)
		return c, 0
	}
	c.src = s.source(node, hist)
	g.node.srcLevels = s.lat.Levels(c.src.node, g.node.srcLevels[:0])
	maps, sizes := s.keyMaps(g.node.srcLevels, c.levels, &g.node)
	// A node with more classes than limit is not anonymous: every class of k records
	// or more takes k of the rows, every smaller class at least one of the records
	// that may be suppressed. On a large source, counting stops there: the table is
	// not kept for later roll-ups, which on a small source costs more than it saves.
	// Nor does a radix-partitioned count go on once the classes it has counted whole
	// put more records in classes below k than may be suppressed (suppressionStop):
	// of the nodes a search counts from millions of records, most fail, and the first
	// tenth to half of the classes show it. (A node's entries, one per class and
	// person, have no such bound.)
	limit, stop := 0, suppressionStop{}
	if c.src.n >= s.opt.radix.abortFrom() && s.t.Unit == nil {
		limit = s.t.Rows/s.opt.K + s.opt.MaxSuppressed
		stop = suppressionStop{k: int32(s.opt.K), most: s.opt.MaxSuppressed}
	}
	if s.radix(c.src) {
		// Room for the count's scratch within the cache's bound: cached tables go
		// (never the source). Only the search's goroutine gets here: a batch with a
		// source this large is counted one node at a time (evaluateBatch), so no
		// other evaluation reads the cache meanwhile.
		s.evict(s.opt.CacheEntries-scratchEntries(c.src, sizes), c.src)
	}
	if s.mod.any() {
		if cap(g.assign) < c.src.n {
			g.assign = make([]int32, c.src.n)
		}
		c.assign = g.assign[:c.src.n]
	}
	// Most nodes counted from the records fail, and a layout of them shows it in a
	// fraction of a pass (recordLayout).
	src := c.src
	if stop.k > 0 && c.src == s.bottom && (c.src.rows != nil || c.src.packed != nil) && c.assign == nil && s.radix(c.src) {
		if l := s.layoutFor(node, g); l != nil {
			src, g.ranges = l.src, l.ranges
			s.laidOut++
		}
	}
	var work int
	g.stop = stop
	c.cls, work = g.rollUp(src, node, maps, sizes, c.assign, limit)
	g.stop, g.ranges = suppressionStop{}, nil
	if c.cls != nil && s.mod.any() {
		c.cls.sets = s.mod.rollSets(c.src, c.assign, c.cls.n)
	}
	s.collapse(&c, g)
	return c, work
}

// rollHists gives c's classes their histograms, when the requirements read them and
// they have none yet.
func (s *searcher) rollHists(c *nodeCount, g *grouper) {
	if s.withHist() && c.cls.hist == nil {
		c.cls.hist = s.mod.rollHists(c.src, c.assign, c.cls.n, s.mod.histCols, &g.hist)
	}
}

// checkSets decides the monotone part, k and the value sets, class by class, and
// reports whether it holds within the suppression limit (it stops past the limit).
func (s *searcher) checkSets(c *nodeCount) bool {
	k, most := int32(s.opt.K), s.opt.MaxSuppressed
	sets := len(s.mod.setCols) > 0
	for j := 0; j < c.cls.n && c.supp <= most; j++ {
		switch {
		case c.cls.personsOf(j) < k:
			c.supp += int(c.cls.count(j))
		case sets && s.mod.setFails(c.cls, j):
			c.suppress(j)
		}
	}
	return c.supp <= most
}

// lowerBound is the node's value with the classes found failing suppressed: once the
// monotone part is decided, a lower bound of its value. The requirements suppress
// those classes and perhaps more, and suppressing a class never lowers a metric's
// value (a suppressed record's loss is the largest; discernibility charges it the
// table's size, at least its class's).
func (s *searcher) lowerBound(c *nodeCount) *big.Int {
	if pb, ok := s.met.(partialBounder); ok {
		return pb.lowerGiven(c.levels, c.cls, s.fails(c.cls, c.failing))
	}
	lower, _ := s.met.exact(c.levels, c.cls, s.fails(c.cls, c.failing))
	return lower
}

// lowerWithSums is lowerBound, and with a memo and a summer metric (whose value falls
// with no more failing classes: not a partialBounder) the sums it is the value of.
func (s *searcher) lowerWithSums(c *nodeCount) (*big.Int, *lossSums) {
	sm, ok := s.met.(summer)
	if _, pb := s.met.(partialBounder); !ok || pb || s.memo == nil {
		return s.lowerBound(c), nil
	}
	sums := sm.sumsOf(c.levels, c.cls, s.fails(c.cls, c.failing))
	lower, _ := sm.exactOf(c.levels, sums)
	return lower, sums
}

// checkRest decides, on a node where the monotone part holds (ev), the requirements
// read on the histograms, the population and the released classes as a whole, in
// that order, each class stopping at the first that fails; before the first of them
// that needs more than the classes, it stops (bounded) when the node's lower bound
// cannot beat inc.
func (s *searcher) checkRest(ev evaluation, c *nodeCount, g *grouper, inc incumbent) (evaluation, error) {
	hist := s.withHist()
	if hist {
		if s.boundedBy(c, inc) {
			ev.bounded = true
			return ev, nil
		}
		s.rollHists(c, g)
		ok := s.checkHists(c, g)
		ev.suppressed = c.supp
		if !ok {
			return ev, nil
		}
	}
	if s.pop != nil {
		if !hist && s.boundedBy(c, inc) {
			ev.bounded = true
			return ev, nil
		}
		ok := s.checkPopulation(c)
		ev.suppressed = c.supp
		if !ok {
			return ev, nil
		}
	}
	if s.opt.Profitability != nil {
		if !hist && s.pop == nil && s.boundedBy(c, inc) {
			ev.bounded = true
			return ev, nil
		}
		ok := s.checkProfit(c)
		ev.suppressed = c.supp
		if !ok {
			return ev, nil
		}
	}
	if s.opt.Linkable {
		return s.checkLinked(ev, c, inc), nil
	}
	if s.opt.Risks.any() {
		ok, err := s.enforceRisks(c)
		ev.suppressed = c.supp
		if err != nil || !ok {
			return ev, err
		}
	}
	ev.failing, ev.anonymous = c.failing, true
	return ev, nil
}

// enforceRisks decides the release-wide risk models on c's released classes,
// suppressing the classes their enforcement takes (riskChoice), and reports whether
// they hold within the suppression limit.
func (s *searcher) enforceRisks(c *nodeCount) (bool, error) {
	if c.failing == nil {
		c.failing = make([]bool, c.cls.n)
	}
	chosen, ok, err := riskChoice(c.cls, c.failing, s.q, s.opt)
	for _, j := range chosen {
		c.suppress(int(j))
	}
	return ok, err
}

// byCodes orders two classes of cls by their codes, column by column (q columns).
func byCodes(cls *classes, q int) func(a, b int) int {
	return func(a, b int) int {
		for i := range q {
			if c := cmp.Compare(cls.code(i, a), cls.code(i, b)); c != 0 {
				return c
			}
		}
		return 0
	}
}

// checkLinked decides multirelational k-anonymity (linked.go) on a node where the
// other requirements hold (ev, c): unless its lower bound cannot beat inc, the persons
// it suppresses, and the node's classes split into the records kept and suppressed.
func (s *searcher) checkLinked(ev evaluation, c *nodeCount, inc incumbent) evaluation {
	if s.boundedBy(c, inc) {
		ev.bounded = true
		return ev
	}
	l := linkPersons(c.entries, c.of, s.q, c.cls, c.failing, int32(s.opt.K), s.t.Unit.Persons)
	ev.suppressed = l.suppressed
	if l.suppressed > s.opt.MaxSuppressed {
		return ev
	}
	ev.cls, ev.failing = l.split(c.cls, s.q)
	ev.anonymous = true
	return ev
}

// boundedBy reports whether the incumbent (inc.node ≥ 0) beats c's node at its lower
// bound, and so at its value.
func (s *searcher) boundedBy(c *nodeCount, inc incumbent) bool {
	if inc.node < 0 {
		return false
	}
	if a, ok := s.met.(approximator); ok { // decided in float64 unless within rounding
		var v float64
		if sm, ok := a.(summer); ok {
			c.partial, c.partialFailing = sm.sumsOf(c.levels, c.cls, s.fails(c.cls, c.failing)), slices.Clone(c.failing)
			v = sm.approxOf(c.levels, c.partial)
		} else {
			v = a.approx(c.levels, c.cls, s.fails(c.cls, c.failing))
		}
		switch {
		case v < inc.value*(1-1e-9):
			return false
		case v > inc.value*(1+1e-9)+1e-300:
			return true
		}
	}
	return inc.beats(c.node, s.height(c.levels), s.lowerBound(c))
}

// checkHists decides the models read on the classes' histograms, class by class, and
// reports whether they hold within the suppression limit (it stops past the limit).
func (s *searcher) checkHists(c *nodeCount, g *grouper) bool {
	if g.check == nil {
		g.check = s.mod.checker()
	}
	k, most := int32(s.opt.K), s.opt.MaxSuppressed
	for j := 0; j < c.cls.n && c.supp <= most; j++ {
		if !c.failing[j] && c.cls.personsOf(j) >= k && g.check.histFails(c.cls, j) {
			c.suppress(j)
		}
	}
	return c.supp <= most
}

// checkPopulation decides the models measured against the population, class by
// class, and reports whether they hold within the suppression limit (it stops past
// the limit).
func (s *searcher) checkPopulation(c *nodeCount) bool {
	pop := s.pop.countsOf(c.node, c.levels, c.cls)
	k, most := int32(s.opt.K), s.opt.MaxSuppressed
	for j := 0; j < c.cls.n && c.supp <= most; j++ {
		if !c.failing[j] && c.cls.personsOf(j) >= k && (s.pop.model.fails(c.cls.count(j), pop[j]) || s.journalistFails(c, j, pop[j])) {
			c.suppress(j)
		}
	}
	return c.supp <= most
}

// height is the sum of levels.
func (s *searcher) height(levels []int) int {
	h := 0
	for _, l := range levels {
		h += l
	}
	return h
}
