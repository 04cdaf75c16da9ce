package generalize

import (
	"context"
	"fmt"
	"math/bits"
	"runtime"

	"sanitizer/fault"
	"sanitizer/internal/safe"
	"sanitizer/risk"
	"sanitizer/schema"
)

// Options configures the optimal full-domain search.
type Options struct {
	K             int                  // every published class has at least K records
	MaxSuppressed int                  // at most this many records may be suppressed
	Metric        schema.Metric        // MetricLoss (default), MetricDiscernibility or an objective of objective.go
	Aggregate     schema.LossAggregate // MetricLoss's aggregate over the quasi-identifiers (AggregateArithmetic when "")
	Weights       []float64            // MetricLoss's weight of each quasi-identifier, in table order (nil: all 1)
	// GSFactor is ARX's generalization/suppression factor in [0, 1] of MetricLoss and
	// the entropy objectives (nil: 0.5, ARX's default, under which generalized and
	// suppressed values weigh alike).
	GSFactor *float64
	// MinLevels and MaxLevels bound the level chosen for each quasi-identifier, in
	// table order (nil, or a negative maximum: 0 and the top level): a node outside the bounds is never
	// chosen, though it may be counted to settle others (ARX's minimum and maximum
	// generalization).
	MinLevels, MaxLevels []int
	// choosable, when not nil, bounds the nodes the search may choose further: a
	// node whose levels it refuses is never chosen, as one outside MinLevels and
	// MaxLevels (a cell suppression's pass, local.go).
	choosable func(levels []int) bool
	// Values gives MetricNCP the numeric value of each leaf of every quasi-identifier
	// measured by value, as Utility takes them (nil, or a nil column: by its leaves).
	Values  [][]float64
	Workers int // node evaluations in parallel; ≤ 0 means GOMAXPROCS
	// CacheEntries bounds, in int32 entries, the class tables kept for roll-ups
	// together with the scratch of a radix-partitioned roll-up of a large source,
	// which evicts tables to make room (≤ 0: a default of 8 Mi entries, 32 MiB,
	// plus 2 entries per record when the records are counted that way).
	CacheEntries int
	// OnEvaluate, when not nil, is called with 1 each time a node has been counted,
	// from the goroutine that called Search (for progress displays).
	OnEvaluate func(n int)
	// Diversity and Closeness are the l-diversity and t-closeness requirements on the
	// table's sensitive columns: a class that fails any of them (or k) is suppressed.
	Diversity []Diversity
	Closeness []Closeness
	Likeness  []Likeness // β-likeness, class by class as t-closeness
	// Risks are the risk-based models decided on the released classes as a whole.
	Risks Risks
	// Population, when not nil, is the population the table was drawn from and the
	// models measured against it (δ-presence, k-map), decided class by class.
	Population *Population
	// Profitability, when not nil, is the game-theoretic model with the prosecutor's
	// chance (ARX's ProfitabilityProsecutor, profit.go), decided class by class: a
	// class whose records' expected payout to the publisher is not positive fails.
	Profitability *risk.Game
	// Payout is the game's amounts for MetricPublisherPayout (required with it).
	Payout *risk.CostBenefit
	// memo, when not nil, is what earlier searches of the same table under the same
	// models (but the gs-factor) found at each node (memo.go).
	memo *nodeMemo
	// References, when not nil, is per sensitive column the distribution t-closeness
	// and β-likeness compare a class with (records per value), in place of the
	// table's own: a pass of a local recoding compares with the whole table's.
	References [][]int64
	// Linkable says that the release lets a person's records be linked (a pseudonym
	// of the table's unit): it must then also meet multirelational k-anonymity, which
	// suppresses persons (linked.go).
	Linkable bool
	// BottomOver, when positive, is a number of classes the table's most specific node
	// is known, or judged (ManyClasses), to have more of (a count that stopped there,
	// as CountRecordClasses's with that limit): Search does not count them again where
	// it would keep them only up to that many (see bottomMaxRows). A wrong judgement
	// costs time, not the result: the search then rolls up from the records.
	BottomOver int
	// radix says which roll-ups are radix-partitioned (zero: the default); tests set it.
	radix radixTuning
}

// Result is the node the search chose and what it took to find it.
type Result struct {
	Levels   []int         // chosen level per quasi-identifier, in table order
	Metric   schema.Metric // metric name
	Value    float64       // metric value of the chosen node
	Classes  int           // published classes
	MinClass int           // size of the smallest published class (0 if none)
	// MinPersons is the persons of the published class of fewest persons (with a
	// privacy unit; without one, MinClass: every record is a person).
	MinPersons int
	Suppressed int // records suppressed

	LatticeSize int // nodes in the lattice
	Evaluated   int // nodes whose classes were counted and checked against every requirement
	// MonotoneOnly is the nodes whose classes were counted and checked against the
	// monotone part of the requirements only (k-anonymity and what the value sets of
	// the classes decide, see models.go): under a model that is not monotone with the
	// suppression limit, a node that fails that part, or whose value with the classes
	// failing it suppressed cannot beat the best node, needs no more.
	MonotoneOnly int
	Tagged       int // nodes examined whose verdict was inferred by monotonicity, not counted
	Bounded      int // nodes never examined nor counted: their lower bound exceeded the optimum
	// RolledUp is the source classes read by all roll-ups: the search's work. A count
	// of a laid-out table's records (recordLayout) that stops reads a part of them that
	// varies with its goroutines' timing, so that this number does too.
	RolledUp int

	// rejected is the nodes evaluated in full that failed a requirement after passing
	// its monotone part (the tests check that the search meets them).
	rejected int
}

// Search returns the node of least information loss among all full-domain
// generalizations where k-anonymity holds after suppressing the records of classes
// smaller than K, provided at most MaxSuppressed records are suppressed.
//
// Ties in the metric are broken deterministically: the node with the smaller sum of
// levels wins, then the node whose level vector is lexicographically smaller (in the
// table's column order).
//
// The search visits nodes in increasing order of a lower bound of the metric and stops
// once the bound exceeds the best value found, which is exact because the bound never
// exceeds the value. Anonymity is monotone under generalization (merging classes never
// makes a class smaller, so the suppressed count never grows): a node found anonymous
// tags all its generalizations anonymous and a node found not anonymous tags all its
// specializations, which are then never counted. Under l-diversity or t-closeness
// models that are not monotone with the suppression limit, the tags are those of the
// monotone part of the requirements (models.go), and only the nodes that pass it are
// checked against the rest. A node is counted by rolling up the classes of the least
// populated cached specialization, not the records. If no node meets the model, the
// error matches fault.ErrUnattainable. A cancelled ctx stops
// the counting of nodes (the error matches ctx's); a panic, on any of its goroutines,
// is returned as a safe.PanicError.
func Search(ctx context.Context, t *Table, opt Options) (res *Result, err error) {
	err = safe.Call(func() error {
		res, err = search(ctx, t, opt)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// search is Search, its panics not recovered.
func search(ctx context.Context, t *Table, opt Options) (*Result, error) {
	if err := t.validate(); err != nil {
		return nil, err
	}
	s, err := prepareSearch(t, t, t.Rows, opt)
	if err != nil {
		return nil, err
	}
	s.bottom = s.countBottom(t)
	return s.run(ctx)
}

// prepareSearch checks opt and returns the searcher of table t, whose records per value
// tal counts (t itself, or its class table: t's per-record codes are not read) and
// whose bottom node's classes will be a source of sourceClasses classes (the records,
// or the class table); the caller sets its bottom.
func prepareSearch(t *Table, tal tallier, sourceClasses int, opt Options) (*searcher, error) {
	if opt.K < 1 {
		return nil, fmt.Errorf("k must be at least 1, got %d", opt.K)
	}
	if err := checkUnit(t, opt); err != nil {
		return nil, err
	}
	if err := checkLinkable(t, opt); err != nil {
		return nil, err
	}
	if err := checkLevelBounds(t, opt); err != nil {
		return nil, err
	}
	met, err := newMetricOf(opt, opt.Values, t, tal)
	if err != nil {
		return nil, err
	}
	mod, err := newModelsOf(t, tal, opt)
	if err != nil {
		return nil, err
	}
	if err := opt.Risks.check(t.Rows); err != nil {
		return nil, err
	}
	if opt.Population != nil {
		if err := opt.Population.check(t); err != nil {
			return nil, err
		}
	}
	if t.lattice().Size() > maxLatticeSize {
		return nil, fault.BadInput("the generalization lattice has more than %d nodes: use fewer quasi-identifiers or shallower hierarchies", maxLatticeSize)
	}
	s := newSearcher(t, opt, met, sourceClasses)
	s.mod = mod
	s.memo = memoFor(opt, met, s.lat)
	if opt.Profitability != nil || (opt.Population != nil && opt.Population.Profitability != nil) {
		s.loss = newClassLoss(t)
	}
	if opt.Population != nil {
		if s.pop, err = newPopIndex(opt.Population, s.lat, s.workers); err != nil {
			return nil, err
		}
	}
	s.monotone = mod.monotone(opt.MaxSuppressed) && opt.Risks.monotone(opt.MaxSuppressed) && (opt.Population == nil || opt.Population.monotone(opt.MaxSuppressed)) && !opt.Linkable && opt.Profitability == nil
	s.resolveCheck = checkAll
	if !s.monotone {
		s.resolveCheck = checkMonotone
	}
	return s, nil
}

// searcher is the search of one table's lattice: the table, the metric and models
// it is searched for, and the cache of class tables its roll-ups read.
type searcher struct {
	t      *Table
	pop    *popIndex // the population's counts (nil: no model reads them)
	opt    Options
	met    metric
	lat    *Lattice
	q      int
	maps   [][][][]int32 // maps[i][from][to]
	bottom *classes
	cache  map[int]*classes
	fifo   []int
	// bySize is the cached tables in increasing order of their classes (in the order
	// they came among equals), with their nodes' levels in the fields of levelKey.
	bySize  []cachedTable
	entries int
	// uses, when set (by run), gives every cached table (in bySize's order) the place in
	// the search's order of the first node still to be counted whose source it would
	// be (never: none), so that evict drops the tables needed last, as an optimal
	// cache would; without it, evict drops the oldest first.
	uses func(uses []rank)
	// The fields of levelKey: level i from bit keyShift[i] up, with a guard bit above
	// it in keyGuard (keyShift nil: the levels do not fit in 64 bits, which no lattice
	// of at most maxLatticeSize nodes needs: a column of h levels takes at most twice
	// the bits it multiplies the lattice's size by).
	keyShift []uint
	keyGuard uint64
	pool     chan *grouper
	workers  int
	// fromBottom are the last nodes the bisection counted from the bottom (see pivot).
	fromBottom []int
	mod        *models
	loss       *classLoss // the classes' information loss, for the game-theoretic model (nil: none)
	memo       *nodeMemo  // Options.memo when the metric reads it (nil: none)
	unit       *unitMaps  // the person column's maps (nil: no privacy unit, or grouped entries)
	grouped    bool       // the class tables are entries grouped by person (unitgroup.go)
	// scatter is the scatter scratch of grouped roll-ups of large sources (countGrouped).
	scatter  []*groupScratch
	monotone bool // every model is monotone for the suppression limit (models.go)
	// resolveCheck is what the tags stand for and the bisection (resolve) checks: every
	// requirement when they are monotone, their monotone part otherwise.
	resolveCheck check
	packed       bool     // class tables are packed (then large roll-ups are radix-partitioned)
	pack         *packing // how, when packed
	// reserve is the room, in int32 entries, that the cache leaves free within its
	// bound for the scratch of a radix-partitioned roll-up of the records with 32-bit
	// keys (0: none).
	reserve int
	// layout, when set, is the records laid out for counting them range by range
	// (recordLayout); layouts is the number made, laidOut the counts that used one.
	layout           *recordLayout
	layouts, laidOut int
}

// newSearcher returns the searcher of table t whose bottom node's classes will be a
// source of sourceClasses classes (which sizes the room the cache keeps for the scratch
// of a radix-partitioned count of it).
func newSearcher(t *Table, opt Options, met metric, sourceClasses int) *searcher {
	q := len(t.Columns)
	s := &searcher{t: t, opt: opt, met: met, lat: t.lattice(), q: q, cache: map[int]*classes{}}
	s.workers = opt.Workers
	if s.workers <= 0 {
		s.workers = runtime.GOMAXPROCS(0)
	}
	pack := newPacking(t.keyLeaves())
	if gp := groupedPacking(t, opt); gp != nil {
		pack, s.grouped = gp, true
	}
	if t.Unit != nil && !s.grouped { // grouped entries hold no person's code to map
		s.unit = newUnitMaps(t.Unit.Persons)
	}
	s.packed, s.pack = pack != nil, pack
	switch {
	case s.opt.CacheEntries > 0:
	case s.grouped:
		// Room for two tables of entries of one and a half entries per person (a
		// word and a count each) beside 8 Mi entries, and, when the source is
		// radix-partitioned, for the buckets' words and counts (rollUpGrouped).
		s.opt.CacheEntries = 8<<20 + 9*t.Unit.Persons
		if sourceClasses >= opt.radix.min() {
			s.reserve = 3 * sourceClasses
			s.opt.CacheEntries += s.reserve
		}
	default:
		s.opt.CacheEntries = 8 << 20
		if s.packed && sourceClasses >= opt.radix.min() && len(opt.Diversity)+len(opt.Closeness) == 0 {
			// The radix count of the records needs 2 entries per record with 64-bit
			// keys: the cache has room for it beside 8 Mi entries and, while the
			// count needs only one (32-bit keys), keeps tables in the other. (A
			// count of a large class table, with its counts, may need 3 per class:
			// it evicts tables to make the room.) A bound set by the caller keeps
			// no such reserve: the cache may fill it, and a count evicts.
			s.reserve = sourceClasses
			s.opt.CacheEntries += 2 * s.reserve
		}
	}
	s.pool = make(chan *grouper, s.workers)
	for range s.workers {
		s.pool <- &grouper{pack: pack, tune: opt.radix}
	}
	s.keyShift, s.keyGuard = levelKeyFields(s.lat.Heights)
	s.maps = levelMaps(t)
	return s
}

// levelKeyFields returns the fields of levelKey for the lattice of the given heights:
// level i from bit shift[i] up, with a guard bit above it in guard (shift nil: the
// levels do not fit in 64 bits).
func levelKeyFields(heights []int) (shift []uint, guard uint64) {
	var used uint
	shift = make([]uint, len(heights))
	for i, h := range heights {
		w := uint(bits.Len(uint(h - 1)))
		if w == 0 {
			continue // one level: always 0
		}
		if used+w+1 > 64 {
			return nil, 0
		}
		shift[i] = used
		guard |= 1 << (used + w)
		used += w + 1
	}
	return shift, guard
}

// levelMaps returns, for every quasi-identifier i of t and levels from ≤ to,
// maps[i][from][to]: the code at level to of each code at level from.
func levelMaps(t *Table) [][][][]int32 {
	maps := make([][][][]int32, len(t.Columns))
	for i, c := range t.Columns {
		h := c.Hierarchy
		maps[i] = make([][][]int32, h.Height())
		for from := range h.Height() {
			maps[i][from] = make([][]int32, h.Height())
			for to := from; to < h.Height(); to++ {
				maps[i][from][to] = h.levelMap(from, to)
			}
		}
	}
	return maps
}

// bottomMaxRows is the largest table whose bottom node's classes are counted up front
// and kept as the first source of every roll-up, whatever their number. A larger
// table's bottom is kept only when it has at most one class per bottomShare records,
// which the count decides as it goes (it stops at the first class past that);
// otherwise the records themselves are the source (the bottom node is then counted
// only if the search needs it): such a bottom would cost 4 bytes per quasi-identifier
// and class where the records cost one or two, and with many quasi-identifiers it has
// nearly as many classes as records. With few classes, every roll-up from the bottom
// costs what it costs on those classes, not on the records (Adult repeated 100 times
// searches as fast as Adult, plus the one count).
// (bottomMaxRows is a variable for the tests of larger tables.)
var bottomMaxRows = 1 << 21

const bottomShare = 16

// abortMinSource is the smallest source whose roll-ups stop at the class count no
// anonymous node can exceed.
const abortMinSource = 1 << 17

// countBottom returns the first source of the search of the records of t: the bottom
// node's classes, counted from the records, or, for a table of more than bottomMaxRows
// records with more than one class per bottomShare records, the records themselves
// (without counting when opt.BottomOver says so); or, for a search on grouped
// entries, the records grouped by person (groupRecords).
func (s *searcher) countBottom(t *Table) *classes {
	if s.grouped {
		identity := make([][]int32, s.q)
		for i := range identity {
			identity[i] = s.maps[i][0][0]
		}
		return groupRecords(t, s.pack, identity)
	}
	rows := &classes{node: 0, rows: t.keyCodes(), n: t.Rows}
	limit := 0 // no limit
	if t.Rows > bottomMaxRows {
		limit = t.Rows / bottomShare
	}
	if limit > 0 && s.opt.BottomOver >= limit {
		return rows // more classes than limit, the caller found
	}
	g := <-s.pool
	defer func() { s.pool <- g }()
	g.par = s.workers
	bottom := make([]int, s.q)
	identity, sizes := s.keyMaps(bottom, bottom, nil)
	var assign []int32
	if s.mod.any() {
		assign = make([]int32, rows.n)
	}
	cls, _ := g.rollUp(rows, 0, identity, sizes, assign, limit)
	if cls == nil {
		return rows // more classes than limit
	}
	if s.mod.any() {
		cls.hist = s.mod.rollHists(rows, assign, cls.n, s.mod.histCols, &g.hist)
		cls.sets = s.mod.rollSets(rows, assign, cls.n)
	}
	return cls
}

// Suppressed returns, for every record of t, whether it lies in a class of the node
// with the given levels that fails the models of opt (fewer than opt.K records, or an
// l-diversity or t-closeness requirement) and so is suppressed.
func Suppressed(t *Table, levels []int, opt Options) ([]bool, error) {
	class, _, err := NodeClasses(t, levels, opt)
	if err != nil {
		return nil, err
	}
	out := make([]bool, t.Rows)
	for r, c := range class {
		out[r] = c < 0
	}
	return out, nil
}

// NodeClasses returns what the node with the given levels publishes: every record's
// class (−1 when its class fails the models of opt and is suppressed) and what every
// published class releases: the dictionary of quasi-identifier j holds every node of
// its level, in code order.
func NodeClasses(t *Table, levels []int, opt Options) (class []int32, covers ClassCovers, err error) {
	err = safe.Call(func() error {
		class, covers, err = nodeClasses(t, levels, opt)
		return err
	})
	if err != nil {
		return nil, ClassCovers{}, err
	}
	return class, covers, nil
}

// nodeClasses is NodeClasses, its panics not recovered.
func nodeClasses(t *Table, levels []int, opt Options) ([]int32, ClassCovers, error) {
	if err := t.validate(); err != nil {
		return nil, ClassCovers{}, err
	}
	if len(levels) != len(t.Columns) {
		return nil, ClassCovers{}, fmt.Errorf("node has %d levels for %d quasi-identifiers", len(levels), len(t.Columns))
	}
	if err := checkUnit(t, opt); err != nil {
		return nil, ClassCovers{}, err
	}
	mod, err := newModels(t, opt)
	if err != nil {
		return nil, ClassCovers{}, err
	}
	rows := &classes{rows: t.keyCodes(), n: t.Rows}
	maps := make([][]int32, len(t.Columns))
	sizes := make([]int, len(t.Columns))
	for i, c := range t.Columns {
		if levels[i] < 0 || levels[i] >= c.Hierarchy.Height() {
			return nil, ClassCovers{}, fmt.Errorf("column %q: level %d outside 0..%d", c.Name, levels[i], c.Hierarchy.Height()-1)
		}
		maps[i] = c.Hierarchy.levelMap(0, levels[i])
		sizes[i] = c.Hierarchy.Size(levels[i])
	}
	assign := make([]int32, t.Rows)
	var u *unitClasses
	if pack := groupedPacking(t, opt); pack != nil {
		u = recordPersons(t, pack, maps, sizes, assign)
	} else {
		keyMaps, keySizes := t.withUnit(maps, sizes)
		g := &grouper{par: runtime.GOMAXPROCS(0)}
		counted, _ := g.rollUp(rows, 0, keyMaps, keySizes, assign, 0)
		u = nodeClassesOf(g, mod, t, levels, rows, counted, assign)
	}
	cls := u.cls
	failing, l, err := u.failing(mod, t, levels, opt)
	if err != nil {
		return nil, ClassCovers{}, err
	}
	// Published classes numbered densely, in class order.
	number := make([]int32, cls.n)
	q := len(t.Columns)
	covers := ClassCovers{Dict: make([][]Cover, q)}
	for i := range q {
		covers.Dict[i] = make([]Cover, sizes[i])
		for code := range covers.Dict[i] {
			covers.Dict[i][code] = Cover{Level: int32(levels[i]), Code: int32(code)}
		}
	}
	published := int32(0)
	for j := range cls.n {
		if int(cls.personsOf(j)) < opt.K || failing[j] {
			number[j] = -1
			continue
		}
		number[j] = published
		published++
		for i := range q {
			covers.Index = append(covers.Index, cls.code(i, j))
		}
	}
	for r, a := range assign {
		assign[r] = number[a]
		if l != nil && l.persons[t.Unit.Codes.At(r)] {
			assign[r] = -1 // a person suppressed (linkable records)
		}
	}
	return assign, covers, nil
}

// levelBounds reports, for a node, whether its levels lie within Options.MinLevels and
// MaxLevels and Options.choosable takes them.
func (s *searcher) levelBounds() func(node int) bool {
	lo, hi, only := s.opt.MinLevels, s.opt.MaxLevels, s.opt.choosable
	if lo == nil && hi == nil && only == nil {
		return func(int) bool { return true }
	}
	levels := make([]int, 0, s.q)
	return func(node int) bool {
		levels = s.lat.Levels(node, levels)
		for i, l := range levels {
			if (lo != nil && l < lo[i]) || (hi != nil && hi[i] >= 0 && l > hi[i]) {
				return false
			}
		}
		return only == nil || only(levels)
	}
}

// checkLevelBounds rejects bounds that do not fit t's quasi-identifiers.
func checkLevelBounds(t *Table, opt Options) error {
	for name, b := range map[string][]int{"minimum": opt.MinLevels, "maximum": opt.MaxLevels} {
		if b == nil {
			continue
		}
		if len(b) != len(t.Columns) {
			return fmt.Errorf("%d %s levels for %d quasi-identifiers", len(b), name, len(t.Columns))
		}
		for i, l := range b {
			if name == "maximum" && l < 0 {
				continue // no bound
			}
			if l < 0 || l >= t.Columns[i].Hierarchy.Height() {
				return fault.BadInput("column %q: %s level %d outside its hierarchy's 0..%d", t.Columns[i].Name, name, l, t.Columns[i].Hierarchy.Height()-1)
			}
			if opt.MinLevels != nil && opt.MaxLevels != nil && opt.MaxLevels[i] >= 0 && opt.MinLevels[i] > opt.MaxLevels[i] {
				return fault.BadInput("column %q: minimum level %d above the maximum %d", t.Columns[i].Name, opt.MinLevels[i], opt.MaxLevels[i])
			}
		}
	}
	return nil
}
