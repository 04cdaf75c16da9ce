package generalize

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// The heap hands out every node once, in the order a full sort by (bound, height,
// index) gives, ties in the bound included.
func TestNodeOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 2, 7, 100, 4320} {
		ranks := make([]rank, n)
		for i := range ranks {
			ranks[i] = rank{bound: float64(rng.IntN(20)) / 7, height: int32(rng.IntN(5)), node: int32(i)}
		}
		want := slices.Clone(ranks)
		slices.SortFunc(want, func(a, b rank) int {
			switch {
			case a.before(b):
				return -1
			case b.before(a):
				return 1
			}
			return 0
		})
		h := newNodeOrder(ranks)
		for i, w := range want {
			if got := h.peek(); got != int(w.node) {
				t.Fatalf("n=%d: position %d is node %d, want %d", n, i, got, w.node)
			}
			h.pop()
		}
		if h.peek() != -1 {
			t.Fatalf("n=%d: nodes left after %d", n, n)
		}
	}
}
