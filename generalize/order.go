package generalize

import (
	"container/heap"
	"math"
)

// rank is a node's place in the search's order: by the metric's lower bound, then by
// height, then by index.
type rank struct {
	bound  float64
	height int32
	node   int32
}

func (a rank) before(b rank) bool {
	if a.bound != b.bound {
		return a.bound < b.bound
	}
	if a.height != b.height {
		return a.height < b.height
	}
	return a.node < b.node
}

// never is a rank after every node's, and last a rank after every node's but never.
var (
	never = rank{math.Inf(1), math.MaxInt32, math.MaxInt32}
	last  = rank{math.Inf(1), math.MaxInt32, math.MaxInt32 - 1}
)

// nodeOrder hands out nodes in rank order. It is a binary heap, built in linear time:
// the search usually stops after a few percent of the lattice (its bound exceeds the
// best value found), so sorting every node would cost more than the nodes it visits.
type nodeOrder struct{ ranks []rank }

func newNodeOrder(r []rank) *nodeOrder {
	h := &nodeOrder{r}
	heap.Init(h)
	return h
}

// peek returns the first node, or −1 when none is left.
func (h *nodeOrder) peek() int {
	if len(h.ranks) == 0 {
		return -1
	}
	return int(h.ranks[0].node)
}

// pop removes the first node (as heap.Pop, without boxing it in an interface).
func (h *nodeOrder) pop() {
	n := len(h.ranks) - 1
	h.Swap(0, n)
	h.ranks = h.ranks[:n]
	if n > 0 {
		heap.Fix(h, 0)
	}
}

// clear removes every node.
func (h *nodeOrder) clear() { h.ranks = nil }

// The heap.Interface methods.
func (h *nodeOrder) Len() int           { return len(h.ranks) }
func (h *nodeOrder) Less(i, j int) bool { return h.ranks[i].before(h.ranks[j]) }
func (h *nodeOrder) Swap(i, j int)      { h.ranks[i], h.ranks[j] = h.ranks[j], h.ranks[i] }
func (h *nodeOrder) Push(x any)         { h.ranks = append(h.ranks, x.(rank)) }
func (h *nodeOrder) Pop() any {
	last := h.ranks[len(h.ranks)-1]
	h.ranks = h.ranks[:len(h.ranks)-1]
	return last
}
