package generalize

import (
	"fmt"
	"math"

	"sanitizer/risk"
)

// Risks are the risk-based privacy models decided on the whole release (package risk):
// once the classes that fail k, l-diversity or t-closeness are suppressed, the
// released classes' sizes must meet each model given. They suppress nothing of their
// own. (A bound on the highest prosecutor risk is decided class by class: it is a k,
// see risk.ClassRisk, and the caller folds it into Options.K.)
//
// Monotonicity under generalization (see models.go for what the search needs). Without
// suppression, generalizing merges classes: a record's class only grows, so its
// prosecutor risk only falls, and the average risk (classes / records) and the share
// of records above a threshold never rise. With suppression they may: a generalization
// can release a small class that the more specific node suppressed (records at risk
// 0 → some, average 1/10 → 2/12). The population-uniqueness estimators are
// statistical models of the class-size frequencies with no such guarantee, with or
// without suppression. The search tags by a model only where it is monotone.
type Risks struct {
	// Average bounds the released records' average prosecutor risk (0: no bound).
	Average float64
	// AtRisk bounds the share of released records whose prosecutor risk is above
	// AtRiskThreshold to at most AtRiskMax (AtRiskThreshold 0: no bound).
	AtRiskThreshold, AtRiskMax float64
	// Uniqueness bounds the share of the population estimated to be unique (nil: no
	// bound).
	Uniqueness *Uniqueness
}

// Uniqueness bounds the estimated population uniqueness of a release: a release whose
// model has no estimate (risk.Uniqueness.Valid false) does not meet it.
type Uniqueness struct {
	Max        float64
	Population float64 // N: the release's sampling fraction is its records / N
	Model      risk.UniquenessModel
}

// any reports whether a risk-based model is given.
func (r Risks) any() bool { return r.Average > 0 || r.AtRiskThreshold > 0 || r.Uniqueness != nil }

// monotone reports whether every risk-based model given is monotone under
// generalization with the suppression limit (see Risks).
func (r Risks) monotone(maxSuppressed int) bool {
	if r.Uniqueness != nil {
		return false
	}
	return maxSuppressed == 0 || (r.Average == 0 && r.AtRiskThreshold == 0)
}

// check rejects settings the models cannot be decided with on a table of rows
// records.
func (r Risks) check(rows int) error {
	switch {
	case r.Average < 0 || r.Average > 1 || math.IsNaN(r.Average):
		return fmt.Errorf("average risk %g: must be in (0, 1]", r.Average)
	case r.AtRiskThreshold < 0 || r.AtRiskThreshold > 1 || math.IsNaN(r.AtRiskThreshold):
		return fmt.Errorf("records at risk: threshold %g: must be in (0, 1]", r.AtRiskThreshold)
	case r.AtRiskThreshold > 0 && !(r.AtRiskMax >= 0 && r.AtRiskMax <= 1):
		return fmt.Errorf("records at risk: share %g: must be in [0, 1]", r.AtRiskMax)
	case r.Uniqueness != nil && !(r.Uniqueness.Population >= max(1, float64(rows))):
		return fmt.Errorf("population uniqueness: a population of %g is smaller than the table's %d records", r.Uniqueness.Population, rows)
	case r.Uniqueness != nil && !(r.Uniqueness.Max >= 0 && r.Uniqueness.Max <= 1):
		return fmt.Errorf("population uniqueness: share %g: must be in [0, 1]", r.Uniqueness.Max)
	}
	return nil
}

// hold reports whether the released classes meet every model: size(j) is class j's
// released records (0 for a suppressed class), for j in 0 … n−1.
func (r Risks) hold(n int, size func(j int) int32) (bool, error) {
	var records, classes, atRisk int64
	for j := range n {
		c := int64(size(j))
		if c == 0 {
			continue
		}
		records += c
		classes++
		if r.AtRiskThreshold > 0 && risk.AtRisk(c, r.AtRiskThreshold) {
			atRisk += c
		}
	}
	if records == 0 {
		return true, nil // nothing released, nobody at risk
	}
	if r.Average > 0 && float64(classes)/float64(records) > r.Average {
		return false, nil
	}
	if r.AtRiskThreshold > 0 && float64(atRisk)/float64(records) > r.AtRiskMax {
		return false, nil
	}
	if u := r.Uniqueness; u != nil {
		return u.holds(n, size, classes, records)
	}
	return true, nil
}

// holds reports whether the released classes (size as in Risks.hold; classes and
// records theirs) meet the bound.
func (u *Uniqueness) holds(n int, size func(j int) int32, classes, records int64) (bool, error) {
	if float64(records) > u.Population {
		return false, fmt.Errorf("population uniqueness: the population of %g is smaller than the %d records released", u.Population, records)
	}
	sizes := make([]int64, 0, classes)
	for j := range n {
		if c := size(j); c > 0 {
			sizes = append(sizes, int64(c))
		}
	}
	d, err := risk.FromSizes(sizes)
	if err != nil {
		return false, err
	}
	est, err := risk.PopulationUniqueness(d, float64(records)/u.Population, u.Model)
	if err != nil {
		return false, err
	}
	return est.Valid && est.Share <= u.Max, nil
}
