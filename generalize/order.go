package generalize

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

// nodeOrder hands out nodes in rank order. It is a binary heap, built in linear time:
// the search usually stops after a few percent of the lattice (its bound exceeds the
// best value found), so sorting every node would cost more than the nodes it visits.
type nodeOrder []rank

func newNodeOrder(r []rank) nodeOrder {
	h := nodeOrder(r)
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
	return h
}

// peek returns the first node, or −1 when none is left.
func (h nodeOrder) peek() int {
	if len(h) == 0 {
		return -1
	}
	return int(h[0].node)
}

// pop removes the first node.
func (h *nodeOrder) pop() {
	old := *h
	n := len(old) - 1
	old[0] = old[n]
	*h = old[:n]
	h.down(0)
}

func (h nodeOrder) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		c := l
		if r := l + 1; r < len(h) && h[r].before(h[l]) {
			c = r
		}
		if !h[c].before(h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}
