package generalize

import "math/big"

// status is what the search knows of a node's verdict on the requirements its tags
// stand for: every requirement when they are monotone, their monotone part otherwise
// (searcher.resolveCheck).
type status uint8

const (
	unknown      status = iota // neither counted nor tagged
	anonymous                  // meets them, as does every generalization
	notAnonymous               // fails them, as does every specialization
)

// nodeFlag is one fact the search has recorded about a node; a node's flags are a
// bitset.
type nodeFlag uint8

const (
	// nodeSeen: taken from the search's order and examined.
	nodeSeen nodeFlag = 1 << iota
	// nodeEvaluated: counted, and every requirement decided.
	nodeEvaluated
	// nodeChecked: counted, and only the monotone part decided (or the evaluation
	// stopped at the bound, see evaluation.bounded).
	nodeChecked
	// nodeValued: meets every requirement, and its value was weighed against the
	// incumbent.
	nodeValued
	// nodeFailed: fails a model that is not monotone. Such a verdict says nothing of
	// other nodes, so it is kept out of the status, whose tags propagate.
	nodeFailed
	// nodeBeaten: cannot beat the incumbent (by its bound, its floor or the lower
	// bound of its value), so it is not the optimum.
	nodeBeaten
)

// nodeStates is the search's state of every node of the lattice: its place in the
// search's order (the metric's bound and its height), its status, its flags and, for
// a node where the monotone part holds, a lower bound of its value.
type nodeStates struct {
	lat    *Lattice
	bound  []float64 // the metric's lower bound of the node's value
	height []int     // the node's sum of levels
	status []status
	flags  []nodeFlag
	// lower is evaluation.lower of the nodes counted on the monotone part only.
	lower map[int]*big.Int
	// floors is the floors (floorer) the counted nodes give the nodes above them (nil:
	// the metric has none).
	floors *floors
	stack  []int // tag's scratch
}

// newNodeStates returns the states of the nodes of lat, bounded by met, all unknown.
func newNodeStates(lat *Lattice, met metric) *nodeStates {
	n := lat.Size()
	ns := &nodeStates{
		lat:    lat,
		bound:  make([]float64, n),
		height: make([]int, n),
		status: make([]status, n),
		flags:  make([]nodeFlag, n),
		lower:  map[int]*big.Int{},
	}
	levels := make([]int, 0, len(lat.Heights))
	for node := range n {
		levels = lat.Levels(node, levels)
		ns.bound[node] = met.bound(levels)
		h := 0
		for _, l := range levels {
			h += l
		}
		ns.height[node] = h
	}
	return ns
}

// rank is node's place in the search's order.
func (ns *nodeStates) rank(node int) rank {
	return rank{ns.bound[node], int32(ns.height[node]), int32(node)}
}

// ranks returns every node's rank, in node order.
func (ns *nodeStates) ranks() []rank {
	r := make([]rank, len(ns.bound))
	for node := range r {
		r[node] = ns.rank(node)
	}
	return r
}

// has reports whether node has flag f.
func (ns *nodeStates) has(node int, f nodeFlag) bool { return ns.flags[node]&f != 0 }

// set gives node the flags f.
func (ns *nodeStates) set(node int, f nodeFlag) { ns.flags[node] |= f }

// settled reports whether counting node could teach the search nothing more: it fails
// the requirements, or its value is known or cannot beat the incumbent.
func (ns *nodeStates) settled(node int) bool {
	return ns.status[node] == notAnonymous || ns.has(node, nodeFailed|nodeValued|nodeBeaten)
}

// tag gives node the status st, and with it, transitively, its generalizations (st ==
// anonymous) or its specializations (st == notAnonymous), stopping where the status
// is already st.
func (ns *nodeStates) tag(node int, st status) {
	ns.stack = append(ns.stack[:0], node)
	ns.status[node] = st
	visit := func(m int) {
		if ns.status[m] != st {
			ns.status[m] = st
			ns.stack = append(ns.stack, m)
		}
	}
	for len(ns.stack) > 0 {
		n := ns.stack[len(ns.stack)-1]
		ns.stack = ns.stack[:len(ns.stack)-1]
		if st == anonymous {
			ns.lat.Up(n, visit)
		} else {
			ns.lat.Down(n, visit)
		}
	}
}

// account counts the nodes into res's lattice statistics: evaluated in full, on the
// monotone part only, examined without counting (tagged), or never examined (bounded).
func (ns *nodeStates) account(res *Result) {
	for _, f := range ns.flags {
		switch {
		case f&nodeEvaluated != 0:
			res.Evaluated++
		case f&nodeChecked != 0:
			res.MonotoneOnly++
		case f&nodeSeen != 0:
			res.Tagged++
		default:
			res.Bounded++
		}
	}
}
