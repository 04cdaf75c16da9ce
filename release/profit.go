package release

import (
	"sanitizer/generalize"
	"sanitizer/report"
	"sanitizer/risk"
	"sanitizer/schema"
	"sanitizer/verify"
)

// The game-theoretic model (privacy.profitability; risk.CostBenefit) as the search,
// the writer and the verifier take it. Without an attack it is k-anonymity
// (prosecutor) or k-map against the research subset's population (journalist) with
// the k at which no attack pays (risk.CostBenefit.NoAttackK); with one, a class is
// decided by its payout (generalize.Options.Profitability for the prosecutor,
// generalize.Population.Profitability for the journalist).

// noAttackK is the k the prosecutor's profitability without an attack asks of every
// class (0: none asked).
func noAttackK(cfg *schema.Config) int {
	if p := cfg.Privacy.Profitability; p != nil && !p.Attack && p.Attacker == risk.ProsecutorAttacker {
		return int(p.NoAttackK())
	}
	return 0
}

// populationKMap is the k of k-map the release asks of a research subset's classes
// against the population: privacy.k-map's (without an estimator), raised by the
// journalist's profitability without an attack (0: none).
func populationKMap(cfg *schema.Config) int {
	k := 0
	if km := cfg.Privacy.KMap; km != nil && km.Estimator == nil {
		k = km.K
	}
	if p := cfg.Privacy.Profitability; p != nil && !p.Attack && p.Attacker == risk.JournalistAttacker {
		k = max(k, int(p.NoAttackK()))
	}
	return k
}

// attackGame is the profitability with an attack of the given adversary (nil: none).
func attackGame(cfg *schema.Config, a risk.Attacker) *risk.Game {
	p := cfg.Privacy.Profitability
	if p == nil || !p.Attack || p.Attacker != a {
		return nil
	}
	g := p.Game()
	return &g
}

// profitOptions adds the prosecutor's profitability with an attack and the
// publisher-payout metric's amounts to the search's options.
func profitOptions(cfg *schema.Config, opt *generalize.Options) {
	opt.Profitability = attackGame(cfg, risk.ProsecutorAttacker)
	if p := cfg.Privacy.Profitability; p != nil && cfg.Search.Metric == schema.MetricPublisherPayout {
		cb := p.CostBenefit
		opt.Payout = &cb
	}
}

// populationModel is the models measured against a research subset's population,
// without the population itself (δ-presence, k-map, the journalist's profitability).
func populationModel(cfg *schema.Config) generalize.Population {
	var pm generalize.Population
	if d := cfg.Privacy.DeltaPresence; d != nil {
		pm.DeltaMin, pm.DeltaMax = d.Min, d.Max
	}
	pm.KMap = populationKMap(cfg)
	pm.Profitability = attackGame(cfg, risk.JournalistAttacker)
	return pm
}

// profitIn is the report's statement of the game-theoretic model (nil: none given).
func profitIn(cfg *schema.Config) *report.ProfitabilityIn {
	p := cfg.Privacy.Profitability
	if p == nil {
		return nil
	}
	in := &report.ProfitabilityIn{Attacker: p.Attacker.String(), Attack: p.Attack,
		PublisherBenefit: p.Benefit, PublisherLoss: p.Loss, AdversaryGain: p.Gain, AdversaryCost: p.Cost}
	if !p.Attack {
		in.NoAttackK = int(p.NoAttackK())
	}
	return in
}

// verifyProfit is the verifier's statement of the game-theoretic model with an attack
// (nil: none; without an attack the verifier checks its k as k or k-map).
func verifyProfit(cfg *schema.Config) *verify.Profitability {
	p := cfg.Privacy.Profitability
	if p == nil || !p.Attack {
		return nil
	}
	return &verify.Profitability{Game: p.Game(), Journalist: p.Attacker == risk.JournalistAttacker}
}

// prosecutorOnly is vp unless it is the journalist's, which the verifier decides
// against the population's counts, not in the Counter.
func prosecutorOnly(vp *verify.Profitability) *verify.Profitability {
	if vp != nil && vp.Journalist {
		return nil
	}
	return vp
}

// payoutSummary is the report's figure of the least payout the verifier measured
// (nil: not measured), from the Counter's (the prosecutor) or the population's (the
// journalist) measure.
func payoutSummary(m *verify.Measured, pm *verify.PopulationMeasured) *report.PayoutSummary {
	switch {
	case m != nil && m.Payout:
		return &report.PayoutSummary{LeastPayout: m.LeastPayout}
	case pm != nil && pm.Payout:
		return &report.PayoutSummary{LeastPayout: pm.LeastPayout}
	}
	return nil
}
