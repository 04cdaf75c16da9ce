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
	"sanitizer/schema"
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

// TestLossAllSuppressed: at a gs-factor of at least 0.5 (sFactor 1), a node that
// suppresses every record has the same exact loss at every level, which exactOf
// takes once (loss.allSuppressed): on random tables, under every aggregate, with and
// without weights, exactOf of every node's all-suppressed sums equals the value
// computed from them.
func TestLossAllSuppressed(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	for trial := range 30 {
		tab, _, _ := randomTable(rng, 20+rng.IntN(80), 1+rng.IntN(3))
		gs := []float64{0.5, 0.6, 0.75, 1}[rng.IntN(4)]
		agg := []schema.LossAggregate{AggregateArithmetic, AggregateGeometric, AggregateMax, AggregateSum}[rng.IntN(4)]
		var weights []float64
		if rng.IntN(2) == 0 {
			for range tab.Columns {
				weights = append(weights, []float64{0.5, 1, 2}[rng.IntN(3)])
			}
		}
		met, err := newMetricOf(Options{Metric: MetricLoss, GSFactor: &gs, Aggregate: agg, Weights: weights}, nil, tab, tab)
		if err != nil {
			t.Fatal(err)
		}
		m := met.(*loss)
		lat := tab.lattice()
		for node := range lat.Size() {
			levels := lat.Levels(node, nil)
			s := &lossSums{supp: m.n}
			for i, l := range levels {
				under := m.sum[i][l] + m.n
				s.lv, s.rest = append(s.lv, under), append(s.rest, m.size[i]*m.n-under)
			}
			got, _ := m.exactOf(levels, s)
			want, _ := m.exactOfSums(levels, s)
			if got.Cmp(want) != 0 {
				t.Fatalf("trial %d, gs %g, %s, weights %v, node %v: exactOf %v, computed %v", trial, gs, agg, weights, levels, got, want)
			}
		}
	}
}
