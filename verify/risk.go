package verify

import (
	"fmt"

	"sanitizer/risk"
)

// Risk is what a release must meet of the risk-based models (each 0 when not
// required), measured on its published classes.
type Risk struct {
	HighestRisk float64 // no record's prosecutor risk above this
	AverageRisk float64 // the records' average prosecutor risk at most this
	// At most AtRiskMax of the records have a prosecutor risk above AtRiskThreshold
	// (AtRiskThreshold 0: not required).
	AtRiskThreshold, AtRiskMax float64
	// Uniqueness, when not nil, bounds the share of the population estimated to be
	// unique on the published classes.
	Uniqueness *Uniqueness
	// Enforced says that the release met AverageRisk, AtRisk and Uniqueness by
	// suppressing classes, smallest first (privacy.risk-enforcement: suppress): a class
	// that meets the other models may then be left out whole, if it is no larger than
	// any class released.
	Enforced bool
}

// any reports whether a model decided on the whole release is given (average risk,
// records at risk, population uniqueness).
func (r Risk) any() bool { return r.AverageRisk > 0 || r.AtRiskThreshold > 0 || r.Uniqueness != nil }

// Enforcing reports whether a model decided on the whole release is given and met by
// suppressing classes (Enforced): a local recoding's placement then needs the
// release's classes (Spec.Kept).
func (r Risk) Enforcing() bool { return r.Enforced && r.any() }

// Uniqueness bounds the estimated population uniqueness of a release: the published
// classes are a sample of Population records (its sampling fraction: the released
// records / Population); a model without an estimate fails it.
type Uniqueness struct {
	Max        float64
	Population float64
	Model      risk.UniquenessModel
}

// classSizes is the distribution of the published classes' sizes.
func (c *Counter) classSizes() (risk.Distribution, error) {
	sizes := make([]int64, 0, len(c.cls)/c.stride)
	for i := 0; i < len(c.cls); i += c.stride {
		sizes = append(sizes, int64(c.cls[i]))
	}
	return risk.FromSizes(sizes)
}

// CheckRisk checks the risk-based models r on the published classes d (as Release
// does): a release that misses one is a *Violation.
func CheckRisk(r Risk, d risk.Distribution) error {
	if d.Records() == 0 {
		return nil // nothing published, nobody at risk
	}
	p := risk.ProsecutorRisk(d)
	switch {
	case r.HighestRisk > 0 && p.Highest > r.HighestRisk:
		return &Violation{Msg: fmt.Sprintf("highest re-identification risk %.4g (smallest class %d), the limit is %g", p.Highest, d.Smallest(), r.HighestRisk)}
	case r.AverageRisk > 0 && p.Average > r.AverageRisk:
		return &Violation{Msg: fmt.Sprintf("average re-identification risk %.4g, the limit is %g", p.Average, r.AverageRisk)}
	}
	if r.AtRiskThreshold > 0 {
		if at := risk.RecordsAtRisk(d, r.AtRiskThreshold); at > r.AtRiskMax {
			return &Violation{Msg: fmt.Sprintf("%.4g of the records have a re-identification risk above %g, the limit is %g", at, r.AtRiskThreshold, r.AtRiskMax)}
		}
	}
	if u := r.Uniqueness; u != nil {
		return checkUniqueness(*u, d)
	}
	return nil
}

// checkUniqueness checks the population uniqueness of the published classes d.
func checkUniqueness(u Uniqueness, d risk.Distribution) error {
	if float64(d.Records()) > u.Population {
		return &Violation{Msg: fmt.Sprintf("%d records released, more than the population's %g", d.Records(), u.Population)}
	}
	est, err := risk.PopulationUniqueness(d, float64(d.Records())/u.Population, u.Model)
	switch {
	case err != nil:
		return fmt.Errorf("population uniqueness: %w", err)
	case !est.Valid:
		return &Violation{Msg: fmt.Sprintf("the %s model has no estimate of the population uniqueness", u.Model)}
	case est.Share > u.Max:
		return &Violation{Msg: fmt.Sprintf("estimated population uniqueness %.4g (%s), the limit is %g", est.Share, est.Model, u.Max)}
	}
	return nil
}
