package risk

import (
	"math"
	"testing"
)

func TestNoAttackKAndAttackBelow(t *testing.T) {
	for _, c := range []struct {
		name        string
		cb          CostBenefit
		k, below    int64
		attackedMax int64 // the largest class attacked (0: none)
	}{
		{"ARX default", DefaultCostBenefit, 76, 75, 74},
		{"ARX config1", CostBenefit{Benefit: 1200, Loss: 300, Gain: 1200, Cost: 2}, 601, 600, 599},
		{"ARX config2", CostBenefit{Benefit: 1200, Loss: 3000, Gain: 120, Cost: 20}, 7, 6, 5},
		{"ARX config4", CostBenefit{Benefit: 120, Loss: 3000, Gain: 1000, Cost: 20}, 51, 50, 49},
		// 0.3/0.1 is 2.9999999999999996 in float64: exactly 3, so 3 is not safe.
		{"decimal ratio", CostBenefit{Gain: 0.3, Cost: 0.1}, 4, 3, 2},
		{"not an integer", CostBenefit{Gain: 10, Cost: 3}, 4, 4, 3},
		{"no gain", CostBenefit{Gain: 0, Cost: 5}, 1, 1, 0},
		{"no gain no cost", CostBenefit{}, 1, 1, 0},
		{"free attempts", CostBenefit{Gain: 1, Cost: 0}, MaxNoAttackK, math.MaxInt64, math.MaxInt64 - 1},
		{"huge ratio", CostBenefit{Gain: 1e300, Cost: 1e-300}, MaxNoAttackK, math.MaxInt64, math.MaxInt64 - 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.cb.Check(); err != nil {
				t.Fatal(err)
			}
			if got := c.cb.NoAttackK(); got != c.k {
				t.Errorf("NoAttackK = %d, want %d", got, c.k)
			}
			if got := c.cb.AttackBelow(); got != c.below {
				t.Errorf("AttackBelow = %d, want %d", got, c.below)
			}
			g := c.cb.Game()
			if c.attackedMax > 0 && !g.Attacks(c.attackedMax) {
				t.Errorf("a class of %d is not attacked", c.attackedMax)
			}
			if g.Attacks(c.attackedMax + 1) {
				t.Errorf("a class of %d is attacked", c.attackedMax+1)
			}
			// At NoAttackK the adversary's payout G/k − C is negative.
			if k := c.cb.NoAttackK(); k < MaxNoAttackK && !(c.cb.Gain/float64(k) < c.cb.Cost) && c.cb.Gain > 0 {
				t.Errorf("at k=%d the adversary's payout %g is not negative", k, c.cb.Gain/float64(k)-c.cb.Cost)
			}
			if g.Attacks(0) || g.Attacks(-1) {
				t.Error("an empty class is attacked")
			}
		})
	}
}

func TestCostBenefitCheck(t *testing.T) {
	for _, cb := range []CostBenefit{{Benefit: -1}, {Loss: math.NaN()}, {Gain: math.Inf(1)}, {Cost: -0.5}} {
		if cb.Check() == nil {
			t.Errorf("%+v accepted", cb)
		}
	}
}

func TestPayout(t *testing.T) {
	g := CostBenefit{Benefit: 1200, Loss: 3000, Gain: 120, Cost: 20}.Game() // attacked below 6
	for _, c := range []struct {
		il   float64
		n    int64
		want float64
		pays bool
	}{
		{0, 1, 1200 - 3000, false},       // attacked: 3000/1
		{0, 5, 1200 - 600, true},         // attacked: 3000/5
		{0.5, 5, 600 - 600, false},       // payout exactly 0 does not pay
		{0.9, 6, 1200 * (1 - 0.9), true}, // not attacked (120/6 = 20 = C)
		{1, 100, 0, false},               // everything lost
	} {
		if got := g.Payout(c.il, c.n); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("Payout(%g, %d) = %g, want %g", c.il, c.n, got, c.want)
		}
		if got := g.Pays(c.il, c.n); got != c.pays {
			t.Errorf("Pays(%g, %d) = %v, want %v", c.il, c.n, got, c.pays)
		}
	}
}

func TestEntropyLoss(t *testing.T) {
	leaves := []int64{2, 100, 5}
	for _, c := range []struct {
		under []int64
		want  float64
	}{
		{[]int64{1, 1, 1}, 0},
		{[]int64{2, 100, 5}, 1},
		{[]int64{2, 1, 1}, math.Log(2) / math.Log(1000)},
		{[]int64{1, 10, 5}, (math.Log(10) + math.Log(5)) / math.Log(1000)},
	} {
		if got := EntropyLoss(c.under, leaves); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("EntropyLoss(%v) = %g, want %g", c.under, got, c.want)
		}
	}
	if got := EntropyLoss([]int64{1, 1}, []int64{1, 1}); got != 0 {
		t.Errorf("single leaves: %g", got)
	}
}
