package generalize

import (
	"context"
	"math"
	"slices"
	"testing"

	"sanitizer/risk"
	"sanitizer/schema"
)

// TestARXProfitabilityCasesAdult ports ARX's six Adult cases of the game-theoretic
// model (TestAnonymizationProfitability: ProfitabilityProsecutor,
// ProfitabilityJournalist and their NoAttack forms, with the publisher-payout, loss,
// entropy and entropy-based information loss metrics), written as cases of our own
// from their parameters, expected nodes and scores. The journalist's cases run on
// ARX's research subset of Adult with the whole of Adult as its population; the
// NoAttack form is k-map with the k above G/C (601 for config1's 1200/2, 7 for
// 120/20), as release/profit.go sets it. For each, our optimum's value is ARX's
// score (to 1e-9 relatively: the entropy-based metrics sum logarithms in another
// order than ARX's), and ARX's listed node meets our models within ARX's limit (a
// share of the subset's records) with that value, but in case 4 (see there).
func TestARXProfitabilityCasesAdult(t *testing.T) {
	if testing.Short() {
		t.Skip("searches Adult and its subset for six cases")
	}
	exhaustiveOnly(t, "ARX's profitability cases on Adult")
	t.Parallel()
	sub, pop := arxSubset(t)
	config1 := risk.CostBenefit{Cost: 2, Gain: 1200, Loss: 300, Benefit: 1200}
	config2 := risk.CostBenefit{Cost: 20, Gain: 120, Loss: 3000, Benefit: 1200}
	config3 := risk.CostBenefit{Cost: 20, Gain: 120, Loss: 3000, Benefit: 120}
	config4 := risk.CostBenefit{Cost: 20, Gain: 1000, Loss: 3000, Benefit: 120}
	noAttack := func(cb risk.CostBenefit) *Population {
		return &Population{Table: pop, KMap: int(cb.NoAttackK())}
	}
	journalist := func(cb risk.CostBenefit) *Population {
		g := cb.Game()
		return &Population{Table: pop, Profitability: &g}
	}
	game := func(cb risk.CostBenefit) *risk.Game { g := cb.Game(); return &g }
	cases := []struct {
		name     string
		whole    bool // the whole of Adult (no subset)
		supp     float64
		metric   schema.Metric
		agg      schema.LossAggregate
		payout   risk.CostBenefit
		pop      *Population
		prof     *risk.Game
		arxValue float64 // ARX's score, which its test asserts
		arx      []int   // the transformation ARX's test lists (a mismatch is only a note there)
		// listedOff: ARX's listed transformation does not meet the models within the
		// limit (the score is another node's)
		listedOff bool
	}{
		{"Profitability 0: journalist no attack, payout", false, 0.04, MetricPublisherPayout, "", config1, noAttack(config1), nil, 2974380.2122727702, []int{1, 3, 1, 1, 3, 2, 1, 1}, false},
		{"Profitability 1: journalist, loss", false, 0.04, MetricLoss, AggregateGeometric, config2, journalist(config2), nil, 0.20171471140567654, []int{0, 4, 0, 0, 2, 1, 0, 0}, false},
		{"Profitability 2: prosecutor, entropy", true, 0, MetricEntropy, "", config1, nil, game(config1), 0, []int{0, 0, 0, 0, 0, 0, 0, 0}, false},
		{"Profitability 3: journalist no attack, payout, 100%", false, 1, MetricPublisherPayout, "", config3, noAttack(config3), nil, 289703.2817537615, []int{0, 1, 1, 2, 3, 2, 1, 1}, false},
		// ARX's score 2095548.2581994554 is that of [1,3,0,1,3,0,1,0] (workclass 1,
		// salary-class 0), our optimum and the only node of the lattice of that value
		// (2095548.2581994492); the listed [1,3,0,1,3,0,0,1] has workclass and
		// salary-class swapped, suppresses 129 records under k-map 7, beyond the 120
		// allowed, and would score 2022528.95.
		{"Profitability 4: journalist no attack, payout", false, 0.04, MetricPublisherPayout, "", config2, noAttack(config2), nil, 2095548.2581994554, []int{1, 3, 0, 1, 3, 0, 0, 1}, true},
		{"Profitability 5: journalist, entropy-loss", false, 0.04, MetricEntropyLoss, "", config4, journalist(config4), nil, 1982.8859574224414, []int{1, 3, 1, 0, 3, 1, 1, 0}, false},
	}
	same := 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tab := sub
			if c.whole {
				tab = pop
			}
			cb := c.payout
			opt := Options{K: 1, MaxSuppressed: int(math.Floor(c.supp * float64(tab.Rows))), Metric: c.metric, Aggregate: c.agg, Population: c.pop, Profitability: c.prof}
			if c.metric == MetricPublisherPayout {
				opt.Payout = &cb
			}
			res, err := Search(context.Background(), tab, opt)
			if err != nil {
				t.Fatalf("ARX has a solution; the search: %v", err)
			}
			if math.Abs(res.Value-c.arxValue) > 1e-9*max(1, c.arxValue) {
				t.Errorf("our optimum %v has %s %.17g, ARX's score is %.17g", res.Levels, c.metric, res.Value, c.arxValue)
			}
			node := arxNode(c.arx)
			v, suppressed := valueAt(t, tab, opt, node)
			t.Logf("ARX's listed node %v: %d suppressed, %s %.10g (ARX's score %.10g); ours %v: %d suppressed, %.10g", node, suppressed, c.metric, v, c.arxValue, res.Levels, res.Suppressed, res.Value)
			if c.listedOff {
				if suppressed <= opt.MaxSuppressed {
					t.Errorf("ARX's listed node %v now meets the models within the limit: drop listedOff", node)
				}
				return
			}
			if suppressed > opt.MaxSuppressed {
				t.Fatalf("ARX's node %v needs %d records suppressed under our models, the limit is %d", node, suppressed, opt.MaxSuppressed)
			}
			if math.Abs(v-c.arxValue) > 1e-9*max(1, c.arxValue) {
				t.Errorf("our value at ARX's node %v is %.17g, ARX's %.17g", node, v, c.arxValue)
			}
			if slices.Equal(res.Levels, node) {
				same++
			}
		})
	}
	t.Logf("%d ARX cases: our optimum has ARX's score in all, and is ARX's listed node in %d", len(cases), same)
}
