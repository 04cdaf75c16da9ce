package risk

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// ErrPopulation is the error of population figures that cannot hold for the table: a
// population smaller than the sample, a population class smaller than its sample
// class, or population classes that are not the table's classes.
var ErrPopulation = errors.New("population does not fit the sample")

// Matched is one of the table's classes with the size of the class of the population
// that shares its quasi-identifier values.
type Matched struct {
	Sample     int64 // f_j: the class's records in the table, ≥ 1
	Population int64 // F_j: the population's members with the class's values, ≥ Sample
}

// Population is what is known of the population the table was drawn from: its size,
// as a number or as the sampling fraction, or the size of the population class of each
// of the table's classes. The zero Population is not valid.
type Population struct {
	kind     populationKind
	fraction float64   // sampling fraction n/N, for byFraction
	size     int64     // N, for bySize
	classes  []Matched // for byClasses
}

type populationKind int

const (
	notGiven populationKind = iota
	byFraction
	bySize
	byClasses
)

// PopulationFromFraction is a population from which the table is a random sample of
// the given fraction of its members (n/N, in (0, 1]; 1 means the table is the
// population).
func PopulationFromFraction(f float64) (Population, error) {
	if math.IsNaN(f) || f <= 0 || f > 1 {
		return Population{}, fmt.Errorf("risk: population: fraction %v: %w", f, ErrSamplingFraction)
	}
	return Population{kind: byFraction, fraction: f}, nil
}

// PopulationFromSize is a population of n members from which the table is a random
// sample; n must be at least the table's records, which is checked when it is used.
func PopulationFromSize(n int64) (Population, error) {
	if n < 1 {
		return Population{}, fmt.Errorf("risk: population: size %d: %w", n, ErrPopulation)
	}
	return Population{kind: bySize, size: n}, nil
}

// PopulationFromClasses is a population whose class sizes are known for each of the
// table's classes (from a population register, or the whole data set of which the
// table is a subset): one Matched per class of the table, in any order, each with
// 1 ≤ Sample ≤ Population.
func PopulationFromClasses(classes []Matched) (Population, error) {
	for i, c := range classes {
		if c.Sample < 1 || c.Population < c.Sample {
			return Population{}, fmt.Errorf("risk: population: class %d has %d records in the sample and %d in the population: %w",
				i, c.Sample, c.Population, ErrPopulation)
		}
	}
	return Population{kind: byClasses, classes: slices.Clone(classes)}, nil
}

// SamplingFraction is the share n/N of the population that the table d is: the given
// fraction, or d's records over the given size. Matched classes do not give the
// population's size, and the error says so; it also reports a size below d's records.
func (p Population) SamplingFraction(d Distribution) (float64, error) {
	switch p.kind {
	case notGiven:
		return 0, fmt.Errorf("risk: population: not given: %w", ErrPopulation)
	case byClasses:
		return 0, fmt.Errorf("risk: population given by its classes has no size: %w", ErrPopulation)
	case byFraction:
		return p.fraction, nil
	}
	if p.size < d.records {
		return 0, fmt.Errorf("risk: population of %d is smaller than the sample's %d records: %w", p.size, d.records, ErrPopulation)
	}
	if d.records == 0 {
		return 0, fmt.Errorf("risk: sampling fraction: %w", ErrNoRecords)
	}
	return float64(d.records) / float64(p.size), nil
}

// matched is the population class size F_j of each of d's classes, and whether they were
// given (false: each is the sample class's own size, see Journalist).
func (p Population) matched(d Distribution) ([]Matched, bool, error) {
	if p.kind == notGiven {
		return nil, false, fmt.Errorf("risk: population: not given: %w", ErrPopulation)
	}
	if p.kind != byClasses {
		if p.kind == bySize && p.size < d.records {
			return nil, false, fmt.Errorf("risk: population of %d is smaller than the sample's %d records: %w", p.size, d.records, ErrPopulation)
		}
		m := make([]Matched, 0, len(d.counts))
		for _, c := range d.counts {
			// One entry per size stands for all classes of that size: the measures below
			// weigh each entry by its count (see weights).
			m = append(m, Matched{Sample: c.Size, Population: c.Size})
		}
		return m, false, nil
	}
	sizes := make([]int64, len(p.classes))
	for i, c := range p.classes {
		sizes[i] = c.Sample
	}
	got, err := FromSizes(sizes)
	if err != nil {
		return nil, true, fmt.Errorf("risk: population classes: %w", err)
	}
	if !slices.Equal(got.counts, d.counts) {
		return nil, true, fmt.Errorf("risk: the population's %d matched classes (%d records) are not the table's %d classes (%d records): %w",
			got.classes, got.records, d.classes, d.records, ErrPopulation)
	}
	return p.classes, true, nil
}

// Journalist is the re-identification risk under the journalist model (El Emam &
// Dankar 2008, "Protecting privacy using k-anonymity", JAMIA 15(5)): the attacker
// does not know whether the target is in the table, and matches the table against an
// identification database of the population, so a record's risk is 1/F_j, F_j the
// size of the population class that shares its quasi-identifier values.
//
// Without the population's class sizes (a Population from a fraction or a size),
// each F_j is taken to be the sample class's own size f_j, as ARX does when it has no
// population table (its RiskModelSampleSummary measures the table against itself).
// Since F_j ≥ f_j always, the measures are then upper bounds (UpperBound=true), equal
// to the prosecutor risk. No point estimate of F_j is used because each of them can
// understate the risk: f_j/π, the expected population class size, makes a sample
// unique at π = 0.01 a class of 100 (risk 0.01) when it may well be a population unique
// (risk 1); E[1/F_j | f_j] under a superpopulation model (Benedetti & Franconi 1998)
// is an average over populations, not a bound for this one. PopulationUniqueness
// gives the model-based estimate of how many members of the population are unique.
type Journalist struct {
	// Highest is the largest risk of any record: 1 / min_j F_j (El Emam & Dankar 2008).
	Highest float64
	// Average is the journalist's average risk as ARX computes it
	// (RiskModelSampleSummary), after El Emam (Guide to the De-Identification of
	// Personal Health Information, 2013): the larger of the two ways the attack can
	// go, a member of the population chosen at random among those matching one of the
	// table's classes and looked up in the table, J / Σ_j F_j (J the table's classes),
	// and a record of the table chosen at random and looked up in the population,
	// (1/n)·Σ_j f_j/F_j.
	Average float64
	// UpperBound is true when the population's class sizes were not given and the
	// sample's stand in for them.
	UpperBound bool
}

// Marketer is the re-identification risk under the marketer model (Dankar & El Emam
// 2010, "A method for evaluating marketer re-identification risk", EDBT/ICDT
// Workshops, PAIS): the attacker matches every record of the table against the
// population and is content to re-identify many, not one.
type Marketer struct {
	// Share is the expected share of the table's records re-identified: each record of
	// class j is linked to the right member with probability 1/F_j, so
	// (1/n)·Σ_j f_j/F_j.
	Share float64
	// UpperBound is true when the population's class sizes were not given and the
	// sample's stand in for them (Share is then classes / records, an upper bound).
	UpperBound bool
}

// JournalistRisk measures the table d under the journalist model against the
// population p (see Journalist). The empty table has no risk. The error reports a
// population that does not fit d.
func JournalistRisk(d Distribution, p Population) (Journalist, error) {
	m, given, err := p.matched(d)
	if err != nil {
		return Journalist{}, fmt.Errorf("risk: journalist risk: %w", err)
	}
	if d.records == 0 {
		return Journalist{UpperBound: !given}, nil
	}
	w := weights(d, m, given)
	minF := int64(math.MaxInt64)
	var classes, popRecords, share float64
	for i, c := range m {
		minF = min(minF, c.Population)
		classes += w[i]
		popRecords += w[i] * float64(c.Population)
		share += w[i] * float64(c.Sample) / float64(c.Population)
	}
	return Journalist{
		Highest:    1 / float64(minF),
		Average:    max(classes/popRecords, share/float64(d.records)),
		UpperBound: !given,
	}, nil
}

// MarketerRisk measures the table d under the marketer model against the population p
// (see Marketer). The empty table has no risk. The error reports a population that
// does not fit d.
func MarketerRisk(d Distribution, p Population) (Marketer, error) {
	m, given, err := p.matched(d)
	if err != nil {
		return Marketer{}, fmt.Errorf("risk: marketer risk: %w", err)
	}
	if d.records == 0 {
		return Marketer{UpperBound: !given}, nil
	}
	w := weights(d, m, given)
	var share float64
	for i, c := range m {
		share += w[i] * float64(c.Sample) / float64(c.Population)
	}
	return Marketer{Share: share / float64(d.records), UpperBound: !given}, nil
}

// weights is how many classes each entry of m stands for: one each when the classes
// were given, the number of classes of that size when m has one entry per size.
func weights(d Distribution, m []Matched, given bool) []float64 {
	w := make([]float64, len(m))
	for i := range m {
		if given {
			w[i] = 1
		} else {
			w[i] = float64(d.counts[i].Classes)
		}
	}
	return w
}
