package risk

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
)

// The game-theoretic model of re-identification (Wan, Vorobeychik, Xia, Clayton,
// Kantarcioglu, Malin 2015, "A Game Theoretic Framework for Analyzing Re-Identification
// Risk", PLOS ONE 10(3)), as ARX implements it (ARXCostBenefitConfiguration,
// RiskModelCostBenefit, the ProfitabilityProsecutor and ProfitabilityJournalist
// criteria and their NoAttack forms): a publisher earns a benefit for every record it
// publishes, less what it loses when an adversary re-identifies one; an adversary
// attacks a record when its expected gain exceeds its cost.

// Attacker is who the adversary of the game-theoretic model is: what it knows decides
// its chance of re-identifying a record.
type Attacker int

const (
	// ProsecutorAttacker knows that its target is in the release: it succeeds with
	// probability 1 / the released records (persons) of the target's class.
	ProsecutorAttacker Attacker = iota
	// JournalistAttacker does not know whether its target is in the release (a
	// research subset of a population): it succeeds with probability 1 / the
	// population's records in the class.
	JournalistAttacker
)

var attackerNames = [...]string{ProsecutorAttacker: "prosecutor", JournalistAttacker: "journalist"}

// Attackers are the adversaries, in the order the configuration's messages list them.
var Attackers = []Attacker{ProsecutorAttacker, JournalistAttacker}

// String is the adversary's configuration spelling.
func (a Attacker) String() string {
	if a < 0 || int(a) >= len(attackerNames) {
		return fmt.Sprintf("Attacker(%d)", int(a))
	}
	return attackerNames[a]
}

// CostBenefit is the game's parameters (ARX's ARXCostBenefitConfiguration), each a
// non-negative finite amount of money taken as the decimal it prints as (0.1 is 1/10).
type CostBenefit struct {
	Benefit float64 // the publisher's benefit for one published record (B)
	Loss    float64 // the publisher's loss for one re-identified record (L)
	Gain    float64 // the adversary's gain for one re-identified record (G)
	Cost    float64 // the adversary's cost of one attempt (C)
}

// DefaultCostBenefit is ARX's default parameters.
var DefaultCostBenefit = CostBenefit{Benefit: 1200, Loss: 300, Gain: 300, Cost: 4}

// Check rejects parameters that are negative, NaN or infinite.
func (cb CostBenefit) Check() error {
	for _, p := range []struct {
		name string
		v    float64
	}{{"benefit", cb.Benefit}, {"loss", cb.Loss}, {"gain", cb.Gain}, {"cost", cb.Cost}} {
		if !(p.v >= 0) || math.IsInf(p.v, 0) {
			return fmt.Errorf("cost-benefit: %s %g: must be a finite amount of at least 0", p.name, p.v)
		}
	}
	return nil
}

// decimal is x as the decimal it prints as.
func decimal(x float64) *big.Rat {
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(x, 'g', -1, 64))
	if !ok {
		return new(big.Rat)
	}
	return r
}

// MaxNoAttackK is the k NoAttackK gives when an attempt costs nothing.
const MaxNoAttackK = math.MaxInt32

// NoAttackK is the smallest class size at which the adversary's expected payout G/n − C
// is negative, so that it attacks no record (ARX's ProfitabilityProsecutorNoAttack,
// computed exactly): the least integer above G/C; 1 when G is 0, MaxNoAttackK when C is
// 0 and G is not. At n = G/C exactly the payout is 0, which ARX counts as unsafe too.
func (cb CostBenefit) NoAttackK() int64 {
	g, c := decimal(cb.Gain), decimal(cb.Cost)
	switch {
	case g.Sign() == 0:
		return 1
	case c.Sign() == 0:
		return MaxNoAttackK
	}
	t := new(big.Rat).Quo(g, c)
	k := new(big.Int).Quo(t.Num(), t.Denom()) // ⌊G/C⌋
	k.Add(k, big.NewInt(1))
	if !k.IsInt64() || k.Int64() > MaxNoAttackK {
		return MaxNoAttackK
	}
	return k.Int64()
}

// AttackBelow is the class size below which the adversary attacks: it attacks a
// record it re-identifies with probability 1/n when its expected payout G/n − C is
// positive (G > C·n, decided exactly), as ARX's RiskModelCostBenefit decides, that is
// when n < ⌈G/C⌉; 1 (never) when G is 0, math.MaxInt64 (always) when C is 0 and G is
// not.
func (cb CostBenefit) AttackBelow() int64 {
	g, c := decimal(cb.Gain), decimal(cb.Cost)
	switch {
	case g.Sign() == 0:
		return 1
	case c.Sign() == 0:
		return math.MaxInt64
	}
	t := new(big.Rat).Quo(g, c)
	q, r := new(big.Int).QuoRem(t.Num(), t.Denom(), new(big.Int))
	if r.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	if !q.IsInt64() {
		return math.MaxInt64
	}
	return q.Int64()
}

// Game is the parameters ready for deciding many classes.
type Game struct {
	CostBenefit
	attackBelow int64
}

// Game returns cb ready for deciding many classes.
func (cb CostBenefit) Game() Game { return Game{CostBenefit: cb, attackBelow: cb.AttackBelow()} }

// Attacks reports whether the adversary attacks a record it re-identifies with
// probability 1/n (see AttackBelow); n ≤ 0 is never attacked.
func (g Game) Attacks(n int64) bool { return n >= 1 && n < g.attackBelow }

// Payout is the publisher's expected payout for one record published with
// information loss il (in [0, 1]) that the adversary re-identifies with probability
// 1/n: B·(1 − il), less L/n when the adversary attacks it, in float64 as ARX computes
// it.
func (g Game) Payout(il float64, n int64) float64 {
	p := g.Benefit * (1 - il)
	if g.Attacks(n) {
		p -= g.Loss * (1 / float64(n))
	}
	return p
}

// Pays reports whether publishing a record of information loss il that the adversary
// re-identifies with probability 1/n leaves the publisher a positive expected payout
// (ARX's ProfitabilityProsecutor and ProfitabilityJournalist: a class passes when its
// records' payout is above 0).
func (g Game) Pays(il float64, n int64) bool { return g.Payout(il, n) > 0 }

// EntropyLoss is the entropy-based information loss of a record (ARX's
// MetricSDNMEntropyBasedInformationLoss, after Wan et al. 2015) whose released value of
// quasi-identifier i covers under[i] of the leaves[i] leaves of its hierarchy:
// Σ log under[i] / Σ log leaves[i], in [0, 1]; 0 when every hierarchy has one leaf.
func EntropyLoss(under, leaves []int64) float64 {
	var num, den float64
	for i := range leaves {
		num += math.Log(float64(under[i]))
		den += math.Log(float64(leaves[i]))
	}
	if den == 0 || math.IsNaN(den) || math.IsInf(den, 0) {
		return 0
	}
	return min(1, max(0, num/den))
}
