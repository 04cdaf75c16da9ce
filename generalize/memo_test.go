package generalize

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"sanitizer/diversity"
	"sanitizer/fault"
)

// TestSearchMemoMatchesFresh: on random tables, under k alone and with entropy
// l-diversity (whose monotone part decides some nodes and whose full check others), a
// search at each gs-factor of a rising sequence that reads and writes one memo
// (nodeMemo: full verdicts, failing monotone parts, and the lower bounds of nodes a
// search stopped at) returns what a search without a memo returns at that gs-factor.
func TestSearchMemoMatchesFresh(t *testing.T) {
	rng := rand.New(rand.NewPCG(91, 97))
	trials := 60
	if testing.Short() {
		trials = 20
	}
	for trial := range trials {
		n := 40 + rng.IntN(160)
		tab, _, _ := randomTable(rng, n, 2+rng.IntN(2))
		opt := Options{K: 1 + rng.IntN(3), MaxSuppressed: n, Metric: MetricLoss, Aggregate: AggregateGeometric, Workers: 1 + rng.IntN(2)}
		if rng.IntN(2) == 0 {
			values := 3 + rng.IntN(4)
			s, _ := skewedSensitive(rng, n, values)
			tab.Sensitive = []Sensitive{s}
			opt.Diversity = []Diversity{{0, diversity.Model{Variant: diversity.Entropy, L: 1.5 + rng.Float64()}}}
		}
		memo := &nodeMemo{}
		for step := range 12 {
			gs := 0.05 + 0.05*float64(step)
			t.Run(fmt.Sprintf("trial%d/gs=%.2f", trial, gs), func(t *testing.T) {
				fresh, withMemo := opt, opt
				g1, g2 := gs, gs
				fresh.GSFactor, withMemo.GSFactor = &g1, &g2
				withMemo.memo = memo
				want, werr := Search(context.Background(), tab, fresh)
				got, gerr := Search(context.Background(), tab, withMemo)
				if errors.Is(werr, fault.ErrUnattainable) && errors.Is(gerr, fault.ErrUnattainable) {
					return
				}
				if werr != nil || gerr != nil {
					t.Fatalf("fresh %v, with the memo %v", werr, gerr)
				}
				if !slices.Equal(got.Levels, want.Levels) || got.Suppressed != want.Suppressed || got.Value != want.Value {
					t.Fatalf("with the memo %v (%d suppressed, %v), fresh %v (%d, %v)", got.Levels, got.Suppressed, got.Value, want.Levels, want.Suppressed, want.Value)
				}
			})
		}
	}
}
