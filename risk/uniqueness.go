package risk

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// ErrSamplingFraction is the error of a sampling fraction outside (0, 1].
var ErrSamplingFraction = errors.New("sampling fraction must be in (0, 1]")

// ErrNoRecords is the error of a measure that is undefined for a table without records.
var ErrNoRecords = errors.New("the table has no records")

// UniquenessModel is a statistical model that estimates how many members of the
// population are unique on the quasi-identifiers from the sample's class sizes.
type UniquenessModel int

const (
	// Dankar is the decision rule of Dankar, El Emam, Neisa & Roffey (2012, "Estimating
	// the re-identification risk of clinical data sets", BMC Medical Informatics and
	// Decision Making 12:66), as ARX applies it: for a sampling fraction up to 0.1
	// Pitman's estimate, or Zayatz's where Pitman's has none; above 0.1 the smaller of
	// Zayatz's and the SNB estimate, or Zayatz's where SNB has none. It is the zero
	// UniquenessModel.
	Dankar UniquenessModel = iota
	// Zayatz is the equivalence-class model of Zayatz (1991, "Estimation of the percent
	// of unique population elements on a microdata file using the sample", US Census
	// Bureau, Statistical Research Division report).
	Zayatz
	// Pitman is Pitman's sampling formula with parameters fitted by maximum likelihood
	// (Hoshino 2001, "Applying Pitman's sampling formula to microdata disclosure risk
	// assessment", Journal of Official Statistics 17(4)).
	Pitman
	// SNB is the slide negative binomial model (Chen & Keller-McNulty 1998, "Estimation
	// of identification disclosure risk in microdata", Journal of Official Statistics
	// 14(1)).
	SNB
)

var uniquenessModelNames = [...]string{Dankar: "dankar", Zayatz: "zayatz", Pitman: "pitman", SNB: "snb"}

// UniquenessModels are the models, in the order the configuration's messages list them.
var UniquenessModels = []UniquenessModel{Dankar, Pitman, Zayatz, SNB}

// String is the model's name as ParseUniquenessModel reads it.
func (m UniquenessModel) String() string {
	if m < 0 || int(m) >= len(uniquenessModelNames) {
		return fmt.Sprintf("UniquenessModel(%d)", int(m))
	}
	return uniquenessModelNames[m]
}

// ParseUniquenessModel is the model named "dankar", "zayatz", "pitman" or "snb" (in any
// case).
func ParseUniquenessModel(s string) (UniquenessModel, error) {
	for m, name := range uniquenessModelNames {
		if strings.EqualFold(strings.TrimSpace(s), name) {
			return UniquenessModel(m), nil
		}
	}
	return 0, fmt.Errorf("risk: unknown population uniqueness model %q (want dankar, zayatz, pitman or snb)", s)
}

// Uniqueness is an estimate of the population's uniques: the members of the population
// that no other member shares the quasi-identifier values with.
type Uniqueness struct {
	// Uniques is the estimated number of population uniques, in [0, N].
	Uniques float64
	// Share is Uniques / N, the share of the population that is unique (ARX's
	// "population uniqueness").
	Share float64
	// Model is the model whose estimate this is; for Dankar, the model its rule chose
	// (Dankar itself when the sample has no unique, where every model gives 0).
	Model UniquenessModel
	// Valid is false when the model has no estimate for this sample (its equations have
	// no solution the solver finds, or the result is not a number in [0, N]); Uniques and
	// Share are then 0 and mean nothing.
	Valid bool
}

// SampleUniqueness is the share of the table's records that are unique in it: records
// in classes of size 1 over all records; 0 for the empty table.
func SampleUniqueness(d Distribution) float64 {
	if d.records == 0 {
		return 0
	}
	return float64(d.ClassesOfSize(1)) / float64(d.records)
}

// PopulationUniqueness estimates how many members of the population are unique, by
// model m, from the class sizes d of a sample drawn at random from the population with
// the sampling fraction n/N (n the sample's records, N the population's). A fraction
// of 1 makes the sample the population: the estimate is then the sample's uniques, by
// every model. A sample without a class of size 1 gives 0 uniques, as ARX does. The
// error reports a fraction outside (0, 1], an unknown model, or a table without
// records; a model without an estimate is not an error but Valid=false.
func PopulationUniqueness(d Distribution, fraction float64, m UniquenessModel) (Uniqueness, error) {
	if math.IsNaN(fraction) || fraction <= 0 || fraction > 1 {
		return Uniqueness{}, fmt.Errorf("risk: population uniqueness: fraction %v: %w", fraction, ErrSamplingFraction)
	}
	if m < 0 || int(m) >= len(uniquenessModelNames) {
		return Uniqueness{}, fmt.Errorf("risk: population uniqueness: unknown model %d", int(m))
	}
	if d.records == 0 {
		return Uniqueness{}, fmt.Errorf("risk: population uniqueness: %w", ErrNoRecords)
	}
	s := sampleOf(d, fraction)
	return s.estimate(m), nil
}

// sample is what the uniqueness models read of a sample.
type sample struct {
	d       Distribution
	n       float64 // records
	u       float64 // classes
	s1, s2  float64 // classes of size 1 and 2
	pi      float64 // sampling fraction
	popSize float64 // N = n / π
}

func sampleOf(d Distribution, fraction float64) sample {
	s := sample{
		d:  d,
		n:  float64(d.records),
		u:  float64(d.classes),
		s1: float64(d.ClassesOfSize(1)),
		s2: float64(d.ClassesOfSize(2)),
		pi: fraction,
	}
	s.popSize = s.n / fraction
	if fraction == 1 {
		s.popSize = s.n
	}
	return s
}

// result turns an estimate of the number of population uniques into a Uniqueness,
// invalid unless it is a number in [0, N].
func (s sample) result(m UniquenessModel, uniques float64) Uniqueness {
	if !finite(uniques) || uniques < 0 || uniques > s.popSize {
		return Uniqueness{Model: m}
	}
	return Uniqueness{Uniques: uniques, Share: uniques / s.popSize, Model: m, Valid: true}
}

func (s sample) estimate(m UniquenessModel) Uniqueness {
	if s.s1 == 0 {
		return Uniqueness{Model: m, Valid: true} // no sample unique, no population unique
	}
	if s.pi == 1 {
		// The sample is the population. Every model gives its uniques (Zayatz's and the
		// SNB's equations do so exactly, Pitman's only asymptotically); Dankar's rule
		// (fraction > 0.1) takes the smaller of Zayatz's and SNB's, which are equal, and
		// is reported as Zayatz's.
		if m == Dankar {
			m = Zayatz
		}
		return s.result(m, s.s1)
	}
	switch m {
	case Zayatz:
		return s.result(Zayatz, s.zayatz())
	case Pitman:
		return s.result(Pitman, s.pitman())
	case SNB:
		return s.result(SNB, s.snb())
	}
	return s.dankar()
}

// dankar applies Dankar et al.'s decision rule (see Dankar) as ARX does: its threshold
// on the sampling fraction is 0.1, and a tie between Zayatz and SNB goes to SNB.
func (s sample) dankar() Uniqueness {
	if s.pi <= 0.1 {
		if p := s.result(Pitman, s.pitman()); p.Valid && p.Uniques > 0 {
			return p
		}
		return s.result(Zayatz, s.zayatz())
	}
	z := s.result(Zayatz, s.zayatz())
	if b := s.result(SNB, s.snb()); b.Valid && b.Uniques > 0 && b.Uniques <= z.Uniques {
		return b
	}
	return z
}

// zayatz is Zayatz's estimate of the population uniques. By Bayes' rule, the chance
// that a sample unique is a population unique is
//
//	P(F=1 | f=1) = p₁·P(f=1 | F=1) / Σ_j p_j·P(f=1 | F=j)
//
// where p_j, the share of the population's classes that have j members, is estimated
// by the share of the sample's classes of size j, s_j/u, and P(f=1 | F=j) is the
// hypergeometric chance that a sample of n from N holds exactly one of a class's j
// members. The estimate is S₁ = s₁·P(F=1 | f=1)·N/n. Only the ratios
// r_j = P(f=1 | F=j)/P(f=1 | F=1) = j·Π_{k=1}^{j−1} (N−n−k+1)/(N−k) matter, so
//
//	S₁ = s₁² / Σ_j s_j·r_j · N/n.
func (s sample) zayatz() float64 {
	N, n := s.popSize, s.n
	var denom float64
	logProd := 0.0 // ln Π_{k=1}^{size−1} (N−n−k+1)/(N−k), for the current size
	k := int64(1)  // the next k to multiply in
	zero := false  // the product has reached 0: the class cannot have a single member in the sample
	for _, c := range s.d.counts {
		for ; k < c.Size && !zero; k++ {
			num := N - n - float64(k) + 1
			if num <= 0 {
				zero = true
				break
			}
			logProd += math.Log1p(-(n - 1) / (N - float64(k)))
		}
		if zero {
			break // sizes ascend: every larger class has r_j = 0
		}
		denom += float64(c.Classes) * float64(c.Size) * math.Exp(logProd)
	}
	return s.s1 * s.s1 / denom * N / n
}
