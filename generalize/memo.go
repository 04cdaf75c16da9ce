package generalize

import (
	"math/big"
	"sync/atomic"
)

// summer is a metric whose value at a node follows from sums its failing classes give
// (loss's lossSums) and its levels: a search that knows a node's sums needs no count.
type summer interface {
	approximator
	sumsOf(levels []int, cls *classes, fails func(j int) bool) *lossSums
	exactOf(levels []int, s *lossSums) (*big.Int, float64)
	approxOf(levels []int, s *lossSums) float64
}

// nodeMemo holds what the searches of one table under one set of models found at the
// nodes they counted: each node's verdicts and, where it meets the models, its metric's
// sums. A search of the same table under another gs-factor (a local recoding's pass
// that placed nothing is searched again so, LocalRecode) reads them instead of counting
// the node again: the models do not read the gs-factor, and the metric's value at a
// node is a function of its sums. Its entries are written by the traversal's goroutine
// once a node is counted and read by the workers of later searches.
type nodeMemo struct {
	at []atomic.Pointer[memoEntry] // per node of the lattice (nil until a search sizes it)
}

// memoEntry is what a search found at a node: whether the monotone part and every
// model hold within the limit, the records suppressed (see evaluation), and the
// metric's sums when every model holds.
type memoEntry struct {
	monotone, anonymous bool
	suppressed          int
	sums                *lossSums
	// partial says that only the monotone part was decided (it holds): the entry
	// answers a monotone check with the lower bound lowerSums give (the sums with the
	// classes found failing then), and a full check that this bound settles; another
	// full check counts the node again.
	partial   bool
	lowerSums *lossSums
}

// memoFor is the memo s reads and writes (nil: none): Options's, when the metric is a
// summer, sized to the lattice on first use.
func memoFor(opt Options, met metric, lat *Lattice) *nodeMemo {
	if opt.memo == nil {
		return nil
	}
	if _, ok := met.(summer); !ok {
		return nil
	}
	if opt.memo.at == nil {
		opt.memo.at = make([]atomic.Pointer[memoEntry], lat.Size())
	}
	if len(opt.memo.at) != lat.Size() {
		return nil
	}
	return opt.memo
}

// fromMemo is the evaluation of node that a memo entry gives, for chk (inc the
// incumbent a full check may stop at), and whether it gives one: for the monotone
// check, the node's value stands as its lower bound; a partial entry gives a full
// check only the verdict that its lower bound cannot beat inc.
func (s *searcher) fromMemo(node int, levels []int, chk check, e *memoEntry, inc incumbent) (evaluation, bool) {
	ev := evaluation{node: node, suppressed: e.suppressed, monotone: e.monotone, memoized: true}
	sm := s.met.(summer)
	if e.partial {
		if chk == checkMonotone {
			ev.lower, _ = sm.exactOf(levels, e.lowerSums)
			return ev, true
		}
		if inc.node < 0 || sm.approxOf(levels, e.lowerSums) < inc.value*(1-1e-9) {
			return ev, false
		}
		lower, _ := sm.exactOf(levels, e.lowerSums)
		ev.bounded = inc.beats(node, s.height(levels), lower)
		return ev, ev.bounded
	}
	if e.sums == nil {
		return ev, true
	}
	if chk == checkMonotone {
		ev.lower, _ = sm.exactOf(levels, e.sums)
		return ev, true
	}
	ev.anonymous, ev.sums = e.anonymous, e.sums
	ev.approx, ev.hasApprox = sm.approxOf(levels, e.sums), true
	return ev, true
}

// memorize records in s's memo what a count of chk found (ev): a full verdict, the
// monotone part failing, which settles the node for every gs-factor, or the monotone
// part holding with the sums of its lower bound (a partial entry, which a full
// verdict replaces).
func (s *searcher) memorize(ev evaluation, chk check) {
	if s.memo == nil || ev.memoized || ev.cls == nil && ev.entries == nil {
		return
	}
	switch {
	case chk == checkAll && !ev.bounded:
		s.memo.at[ev.node].Store(&memoEntry{monotone: ev.monotone, anonymous: ev.anonymous, suppressed: ev.suppressed, sums: ev.sums})
	case !ev.monotone:
		s.memo.at[ev.node].Store(&memoEntry{suppressed: ev.suppressed})
	case ev.lowerSums != nil && s.memo.at[ev.node].Load() == nil:
		s.memo.at[ev.node].Store(&memoEntry{monotone: true, partial: true, suppressed: ev.suppressed, lowerSums: ev.lowerSums})
	}
}

// plus is s and o added up (both of the same node).
func (s *lossSums) plus(o *lossSums) *lossSums {
	out := &lossSums{rest: make([]int64, len(s.rest)), supp: s.supp + o.supp}
	for i := range s.rest {
		out.rest[i] = s.rest[i] + o.rest[i]
	}
	if s.lv != nil {
		out.lv = make([]int64, len(s.lv))
		for i := range s.lv {
			out.lv[i] = s.lv[i] + o.lv[i]
		}
	}
	return out
}
