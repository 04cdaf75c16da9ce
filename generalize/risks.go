package generalize

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"sanitizer/risk"
)

// Risks are the risk-based privacy models decided on the whole release (package risk):
// once the classes that fail k, l-diversity or t-closeness are suppressed, the
// released classes' sizes must meet each model given. As ARX enforces them
// (RiskBasedCriterion.enforce, HashGroupifyDistribution.suppressWhileNotFulfilledBinary),
// a node whose released classes miss a model suppresses more of them, smallest first,
// until the models hold or the suppression limit is reached (Enforce: Suppress, the
// default); with Measure they suppress nothing of their own. (A bound on the highest
// prosecutor risk is decided class by class: it is a k, see risk.ClassRisk, and the
// caller folds it into Options.K.)
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
	// Enforce is how a node meets the models: by suppressing classes (Suppress, the
	// zero value) or not at all (Measure).
	Enforce Enforcement
	// released is the records of each class earlier passes of a local recoding
	// released (local.go): the models are decided on them together with a node's
	// classes, and only the node's own may be suppressed.
	released []int32
}

// Enforcement is how the release-wide risk models are met
// (privacy.risk-enforcement).
type Enforcement int

const (
	// Suppress meets the models as ARX does: when a node's released classes miss one,
	// the fewest of them, smallest first (ties by their codes at the node, column by
	// column), whose suppression makes every model hold within the suppression limit
	// are suppressed (Risks.enforce); a node where no such classes are found does not
	// meet the models.
	Suppress Enforcement = iota
	// Measure decides the models on the classes the other models release: a node
	// that misses one does not meet them.
	Measure
)

// String is the enforcement's name in the configuration (privacy.risk-enforcement).
func (e Enforcement) String() string {
	if e == Measure {
		return "measure"
	}
	return "suppress"
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
	records, classes, atRisk := r.base()
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
		return u.holds(n, size, r.released, classes, records)
	}
	return true, nil
}

// base is the records, classes and records at risk of the classes earlier passes
// released (Risks.released).
func (r Risks) base() (records, classes, atRisk int64) {
	for _, n := range r.released {
		c := int64(n)
		records += c
		classes++
		if r.AtRiskThreshold > 0 && risk.AtRisk(c, r.AtRiskThreshold) {
			atRisk += c
		}
	}
	return records, classes, atRisk
}

// holds reports whether the released classes (size as in Risks.hold, with those of
// earlier passes, released; classes and records all of theirs) meet the bound.
func (u *Uniqueness) holds(n int, size func(j int) int32, released []int32, classes, records int64) (bool, error) {
	if float64(records) > u.Population {
		return false, fmt.Errorf("population uniqueness: the population of %g is smaller than the %d records released", u.Population, records)
	}
	sizes := make([]int64, 0, classes)
	for _, c := range released {
		sizes = append(sizes, int64(c))
	}
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

// enforce meets the models on a node's released classes: n classes, size(j) the
// records class j releases (0: suppressed already, by the other models), before
// (a−b) the order of two classes of equal size, room the records that may still be
// suppressed. It returns the classes to suppress (none when the models hold) and
// whether the models then hold; with Measure it suppresses nothing.
//
// The classes are taken smallest first, ties in before's order. The average risk and
// the share of records at risk never rise as the smallest released class goes (it is
// no larger than the released classes' average, and a class at risk is smaller than
// one that is not), so the fewest classes that meet them are found in one pass (a
// scan of the prefixes, which finds the fewest also when earlier passes' classes,
// Risks.released, count in and a class may be larger than the average).
// Population uniqueness has no such property: as ARX does, the fewest classes from
// there that meet it are found by bisection, and the result is checked.
func (r Risks) enforce(n int, size func(j int) int32, before func(a, b int) int, room int) ([]int32, bool, error) {
	ok, err := r.hold(n, size)
	if ok || err != nil || r.Enforce == Measure {
		return nil, ok, err
	}
	order := make([]int32, 0, n)
	for j := range n {
		if size(j) > 0 {
			order = append(order, int32(j))
		}
	}
	slices.SortFunc(order, func(a, b int32) int {
		if c := cmp.Compare(size(int(a)), size(int(b))); c != 0 {
			return c
		}
		return before(int(a), int(b))
	})
	most := 0 // the longest prefix within room
	for used := 0; most < len(order) && used+int(size(int(order[most]))) <= room; most++ {
		used += int(size(int(order[most])))
	}
	m, ok := r.monotonePrefix(order, size, most)
	if !ok {
		return nil, false, nil
	}
	if r.Uniqueness != nil {
		if m, ok, err = r.uniquenessPrefix(order, size, n, m, most); !ok || err != nil {
			return nil, false, err
		}
	}
	return order[:m], true, nil
}

// monotonePrefix is the fewest classes of order (at most most) whose suppression makes
// the average risk and the records at risk hold (0 when neither is given), and
// whether there is such a prefix.
func (r Risks) monotonePrefix(order []int32, size func(j int) int32, most int) (int, bool) {
	if r.Average == 0 && r.AtRiskThreshold == 0 {
		return 0, true
	}
	records, classes, atRisk := r.base()
	for _, j := range order {
		c := int64(size(int(j)))
		records += c
		classes++
		if r.AtRiskThreshold > 0 && risk.AtRisk(c, r.AtRiskThreshold) {
			atRisk += c
		}
	}
	for m := 0; m <= most; m++ {
		if m > 0 {
			c := int64(size(int(order[m-1])))
			records -= c
			classes--
			if r.AtRiskThreshold > 0 && risk.AtRisk(c, r.AtRiskThreshold) {
				atRisk -= c
			}
		}
		if records == 0 ||
			(r.Average == 0 || float64(classes)/float64(records) <= r.Average) &&
				(r.AtRiskThreshold == 0 || float64(atRisk)/float64(records) <= r.AtRiskMax) {
			return m, true
		}
	}
	return 0, false
}

// uniquenessPrefix is the fewest classes of order, from lo to most, whose suppression
// makes every model hold, found by bisection as ARX finds it, and whether they do.
func (r Risks) uniquenessPrefix(order []int32, size func(j int) int32, n, lo, most int) (int, bool, error) {
	out := make([]bool, n)
	holdsAt := func(m int) (bool, error) {
		for i, j := range order {
			out[j] = i < m
		}
		return r.hold(n, func(j int) int32 {
			if out[j] {
				return 0
			}
			return size(j)
		})
	}
	ok, err := holdsAt(lo)
	if ok || err != nil {
		return lo, ok, err
	}
	low, high := lo+1, most
	for low < high {
		mid := low + (high-low)/2
		ok, err := holdsAt(mid)
		if err != nil {
			return 0, false, err
		}
		if ok {
			high = mid
		} else {
			low = mid + 1
		}
	}
	if low > most {
		return 0, false, nil
	}
	ok, err = holdsAt(low)
	return low, ok, err
}
