package verify

import "sanitizer/risk"

// Profitability is the game-theoretic model with an attack (Wan et al. 2015, "A Game
// Theoretic Framework for Analyzing Re-Identification Risk", PLOS ONE; ARX's
// ProfitabilityProsecutor and ProfitabilityJournalist): a class of the release meets
// it when the publisher's expected payout for each of its records is positive,
// Game.Pays(IL, n), IL the records' entropy-based information loss
// (risk.EntropyLoss: the leaves under each released value over each hierarchy's
// leaves, as Spec.Utility's domains count them) and 1/n the adversary's chance: n the
// class's records for the prosecutor, its population count for the journalist
// (Journalist, with Spec.Population). The forms without an attack are k-anonymity
// and k-map with risk.CostBenefit.NoAttackK, given as Spec.K and Population.KMap.
type Profitability struct {
	Game       risk.Game
	Journalist bool
}
