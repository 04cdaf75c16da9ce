package release

import (
	"sanitizer/generalize"
	"sanitizer/risk"
	"sanitizer/schema"
	"sanitizer/verify"
)

// effectiveK is the k the search enforces on an input of rows records: the
// configuration's, or the class size a bound on the highest prosecutor risk or an
// estimated k-map amounts to when that is larger.
func effectiveK(cfg *schema.Config, rows int) (int, error) {
	pr := cfg.Privacy
	k := pr.K
	if pr.HighestRisk > 0 {
		k = max(k, int(min(risk.SmallestClassWithin(pr.HighestRisk), int64(1<<31-1))))
	}
	km, _, err := kmapK(cfg, rows)
	return max(k, km, noAttackK(cfg)), err
}

// kmapK is the k of k-anonymity an estimated k-map (privacy.k-map with an estimator)
// stands for on an input of rows records, and its type I error (0, 0 without one).
func kmapK(cfg *schema.Config, rows int) (int, float64, error) {
	km := cfg.Privacy.KMap
	if km == nil || km.Estimator == nil {
		return 0, 0, nil
	}
	n, err := population(cfg, rows)
	if err != nil {
		return 0, 0, err
	}
	k, typeI, err := risk.KMapK(km.K, min(1, float64(rows)/n), km.Significance, *km.Estimator, rows)
	if err != nil {
		return 0, 0, cfg.Errorf("privacy.k-map", "%w", err)
	}
	return k, typeI, nil
}

// population is the number of records of the population the input of rows records
// was drawn from (0 when the configuration does not say): risk.population, or
// rows / risk.sampling-fraction.
func population(cfg *schema.Config, rows int) (float64, error) {
	switch {
	case cfg.Risk.Population > 0:
		if cfg.Risk.Population < int64(rows) {
			return 0, cfg.Errorf("risk.population", "%d is fewer than the input's %d records", cfg.Risk.Population, rows)
		}
		return float64(cfg.Risk.Population), nil
	case cfg.Risk.SamplingFraction > 0:
		n := float64(rows) / cfg.Risk.SamplingFraction
		if n > schema.MaxPopulation {
			return 0, cfg.Errorf("risk.sampling-fraction", "%g of the input's %d records is a population of %.4g records, more than the %d the risk models compute with", cfg.Risk.SamplingFraction, rows, n, int64(schema.MaxPopulation))
		}
		return n, nil
	}
	return 0, nil
}

// searchRisks is the search's view of the release-wide risk models, for an input of
// rows records.
func searchRisks(cfg *schema.Config, rows int) (generalize.Risks, error) {
	pr := cfg.Privacy
	r := generalize.Risks{Average: pr.AverageRisk}
	if pr.RiskEnforcement == schema.RiskMeasure {
		r.Enforce = generalize.Measure
	}
	if a := pr.RecordsAtRisk; a != nil {
		r.AtRiskThreshold, r.AtRiskMax = a.Threshold, a.Max
	}
	if u := pr.PopulationUniqueness; u != nil {
		n, err := population(cfg, rows)
		if err != nil {
			return r, err
		}
		r.Uniqueness = &generalize.Uniqueness{Max: u.Max, Population: n, Model: u.Model}
	}
	return r, nil
}

// verifyRisk is what the verifier checks of the risk models on the written release
// of an input of rows records.
func verifyRisk(cfg *schema.Config, rows int) (verify.Risk, error) {
	s, err := searchRisks(cfg, rows)
	if err != nil {
		return verify.Risk{}, err
	}
	r := verify.Risk{HighestRisk: cfg.Privacy.HighestRisk, AverageRisk: s.Average, AtRiskThreshold: s.AtRiskThreshold, AtRiskMax: s.AtRiskMax, Enforced: s.Enforce == generalize.Suppress}
	if u := s.Uniqueness; u != nil {
		r.Uniqueness = &verify.Uniqueness{Max: u.Max, Population: u.Population, Model: u.Model}
	}
	return r, nil
}
