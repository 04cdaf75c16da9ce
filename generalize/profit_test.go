package generalize

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"

	"sanitizer/fault"
	"sanitizer/risk"
	"sanitizer/schema"
)

// oracleGame is the game-theoretic model's arithmetic for the exhaustive oracles,
// written from Wan et al. 2015 and ARX's RiskModelCostBenefit: the adversary attacks a
// record it re-identifies with probability 1/n when G/n > C (compared exactly, the
// amounts as the decimals written); the publisher's payout per record is B·(1 − IL),
// less L/n when attacked; a class passes when it is positive.
type oracleGame struct {
	b, l, g, c float64
	journalist bool // the chance is 1/the class's population count
}

func (o *oracleGame) attacks(n int) bool {
	dec := func(x float64) *big.Rat {
		r, _ := new(big.Rat).SetString(strconv.FormatFloat(x, 'g', -1, 64))
		return r
	}
	cn := new(big.Rat).Mul(dec(o.c), big.NewRat(int64(n), 1))
	return n > 0 && dec(o.g).Cmp(cn) > 0
}

func (o *oracleGame) pays(il float64, n int) bool {
	p := o.b * (1 - il)
	if o.attacks(n) {
		p -= o.l * (1 / float64(n)) // as ARX: loss × success probability
	}
	return p > 0
}

// randomGame is amounts where attacks and payouts both decide classes of a few
// records to a few hundred.
func randomGame(rng *rand.Rand) risk.CostBenefit {
	return risk.CostBenefit{
		Benefit: []float64{1200, 120, 50, 0.5}[rng.IntN(4)],
		Loss:    []float64{300, 3000, 40}[rng.IntN(3)],
		Gain:    []float64{120, 300, 1000, 0.3}[rng.IntN(4)],
		Cost:    []float64{2, 4, 20, 0.1}[rng.IntN(4)],
	}
}

func gameOf(cb risk.CostBenefit, journalist bool) *oracleGame {
	return &oracleGame{b: cb.Benefit, l: cb.Loss, g: cb.Gain, c: cb.Cost, journalist: journalist}
}

// TestSearchRandomProfitMatchesExhaustive: under the prosecutor's profitability with
// an attack (ARX's ProfitabilityProsecutor), with and without k and suppression, by
// loss and by the publisher's payout at several gs-factors, the search returns the
// exhaustive optimum (the payout, a real number, up to rounding).
func TestSearchRandomProfitMatchesExhaustive(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 67))
	trials := 200
	if testing.Short() {
		trials = 80
	}
	binding, attained := 0, 0
	for trial := range trials {
		n := 20 + rng.IntN(250)
		q := 1 + rng.IntN(3)
		tab, raw, hier := randomTable(rng, n, q)
		k := 1 + rng.IntN(4)
		maxSupp := 0
		if rng.IntN(3) > 0 {
			maxSupp = rng.IntN(n/3 + 1)
		}
		cb := randomGame(rng)
		game := cb.Game()
		metric := []schema.Metric{MetricLoss, MetricPublisherPayout, MetricPublisherPayout}[rng.IntN(3)]
		var gs *float64
		if metric == MetricPublisherPayout && rng.IntN(2) == 0 {
			gs = gsOf([]float64{0.5, 0.7, 1}[rng.IntN(3)])
		}
		withModel := rng.IntN(4) > 0 // else the payout metric alone, under k
		opt := Options{K: k, MaxSuppressed: maxSupp, Metric: metric, GSFactor: gs, Payout: &cb, Workers: 1 + rng.IntN(2)}
		qu := oracleQuery{k: k, maxSupp: maxSupp, metric: metric, gs: gs, all: metric == MetricPublisherPayout}
		if withModel {
			opt.Profitability = &game
			qu.profit = gameOf(cb, false)
		}
		o := newOracle(raw, hier)
		t.Run(fmt.Sprintf("trial%d/n=%d/q=%d/k=%d/supp=%d/%+v/%s/model=%v", trial, n, q, k, maxSupp, cb, metric, withModel), func(t *testing.T) {
			if metric == MetricLoss {
				b, _ := matchOracle(t, o, tab, qu, opt)
				if b {
					binding++
				}
				if want := o.bestMany(t, []oracleQuery{qu})[0]; want != nil {
					checkNodeSuppression(t, tab, opt, want.node, want.suppressed)
				}
				return
			}
			if !withModel {
				qu = withoutModel(qu, cb)
			}
			want := o.bestMany(t, []oracleQuery{qu})[0]
			got, err := Search(context.Background(), tab, opt)
			if want == nil {
				if !errors.Is(err, fault.ErrUnattainable) {
					t.Fatalf("want unattainable, got %v, %v", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			attained++
			checkFloatOptimum(t, want, got)
			checkNodeSuppression(t, tab, opt, want.node, want.suppressed)
		})
	}
	t.Logf("%d trials where the model changes loss's optimum; %d by the payout attained", binding, attained)
	if binding < trials/20 || attained < trials/5 {
		t.Errorf("the model binds in %d trials, the payout is attained in %d: the test checks too little", binding, attained)
	}
}

// withoutModel is qu with the game's amounts cb for the payout metric, the
// profitability model not decided (the prosecutor's oracle decides no class by a
// journalist's game).
func withoutModel(qu oracleQuery, cb risk.CostBenefit) oracleQuery {
	qu.profit = gameOf(cb, true)
	return qu
}

// checkNodeSuppression: what the release recodes at node (NodeClasses) suppresses
// exactly suppressed records.
func checkNodeSuppression(t *testing.T, tab *Table, opt Options, node []int, suppressed int) {
	t.Helper()
	class, _, err := NodeClasses(tab, node, opt)
	if err != nil {
		t.Fatal(err)
	}
	supp := 0
	for _, c := range class {
		if c < 0 {
			supp++
		}
	}
	if supp != suppressed {
		t.Errorf("NodeClasses at %v suppresses %d records, want %d", node, supp, suppressed)
	}
}
