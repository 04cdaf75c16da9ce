package verify

// The research subset and the models measured against its population (δ-presence,
// k-map): the release holds generalizations of the subset's records only, and each of
// its classes is compared with the number of the population's records (every input
// record) that the release's generalization puts in it. This file reads the subset's
// flags and generalizes the population with its own reading of the hierarchies
// (Domain, as missing.go); it shares no code with package generalize.

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"sanitizer/risk"
)

// InSubset reads a research subset's flag: true, 1 or yes (in), false, 0 or no (out),
// case and surrounding space ignored; anything else is not a flag.
func InSubset(v string) (in, ok bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "yes":
		return true, true
	case "false", "0", "no":
		return false, true
	}
	return false, false
}

// subsetReader is SubsetRecords' Reader.
type subsetReader struct {
	in      Reader
	col     int
	name    string
	n       int // records read from in
	outside func([]string) error
}

// SubsetRecords reads the records of in (which carry the subset's flag as their last
// field) that are in the research subset, without the flag. A flag that is not one
// (InSubset) is an error naming the column and the input record, never the value.
// outside, when not nil, is given each record outside the subset (without the flag,
// valid until it returns) as it is passed over; its error ends the reading.
func SubsetRecords(in Reader, name string, outside func(rec []string) error) Reader {
	return &subsetReader{in: in, name: name, outside: outside}
}

func (s *subsetReader) Read() ([]string, error) {
	for {
		rec, err := s.in.Read()
		if err != nil {
			return nil, err
		}
		s.n++
		if len(rec) == 0 {
			return nil, fmt.Errorf("input record %d: no field for the research subset's column %q", s.n, s.name)
		}
		in, ok := InSubset(rec[len(rec)-1])
		if !ok {
			return nil, fmt.Errorf("input record %d: column %q: not a research subset flag (true, 1, yes; false, 0, no)", s.n, s.name)
		}
		if in {
			return rec[:len(rec)-1], nil
		}
		if s.outside != nil {
			if err := s.outside(rec[:len(rec)-1]); err != nil {
				return nil, err
			}
		}
	}
}

// Population is what the release must meet against the population (each 0 when not
// given): δ-presence's bounds and k-map's k, and the journalist's profitability.
type Population struct {
	DeltaMin, DeltaMax float64
	KMap               int
	// Profitability, when set, is the journalist's profitability (the game-theoretic
	// model with an attack, see Profitability): a class fails when the publisher's
	// expected payout per record, Game.Pays(IL, its population count), is not
	// positive, IL its records' information loss as Loss gives it.
	Profitability *risk.Game
	// Loss gives the entropy-based information loss of a class by its key, at the
	// release's levels (Leaves.LossAt, its leaves counted over the population);
	// CheckPopulation needs it with Profitability. ExpectedSuppression does not read
	// it: it counts the loss at the levels it checks, with PopulationCheck.Leaves.
	Loss func(key string) (float64, error)
}

// PopulationCheck is the population a check of a research subset's release compares
// the subset's classes with (Spec.Population).
type PopulationCheck struct {
	Model Population
	// Counts returns the population's class counts at the given levels, keyed as
	// Classes are (PopulationCounts over the whole input).
	Counts func(levels []int) (map[string]int64, error)
	// Leaves, when set, is the population's leaves (every input record added, subset
	// or not: NewLeaves, Add or Reading), for the profitability's information loss;
	// needed with Spec.Profitability or Model.Profitability when a quasi-identifier
	// has a built hierarchy (a hierarchy file's leaves are its rows).
	Leaves *Leaves
}

// classFails decides whether a class of c subset records and pop population records
// breaks the model, and says how.
func (p Population) classFails(c, pop int64) (bool, string) {
	if pop < c {
		return true, fmt.Sprintf("has %d records but %d population records", c, pop)
	}
	if p.KMap > 0 && pop < int64(p.KMap) {
		return true, fmt.Sprintf("has %d population records, k-map's k is %d", pop, p.KMap)
	}
	if d := float64(c) / float64(pop); p.DeltaMax > 0 && (d < p.DeltaMin || d > p.DeltaMax) {
		return true, fmt.Sprintf("holds %d of its %d population records, outside δ-presence's [%g, %g]", c, pop, p.DeltaMin, p.DeltaMax)
	}
	return false, ""
}

// PopulationMeasured is what CheckPopulation measured over the released classes.
type PopulationMeasured struct {
	// DeltaMin and DeltaMax are the least and greatest share of a released class's
	// population records that the release holds (0 when nothing is released).
	DeltaMin, DeltaMax float64
	// SmallestPopulation is the least population count of a released class (0 when
	// nothing is released).
	SmallestPopulation int64
	// LeastPayout is the least expected payout per record over the released classes
	// under the journalist's profitability (Population.Profitability); Payout says
	// that it was measured.
	LeastPayout float64
	Payout      bool
}

// PopulationCounts generalizes every input record read from in (its
// quasi-identifier values in spec.Quasi order: the whole population, subset or not) to
// levels and counts the records of each class, keyed as Classes are.
func PopulationCounts(spec Spec, levels []int, in Reader) (map[string]int64, error) {
	labs, err := labelers(spec, levels)
	if err != nil {
		return nil, err
	}
	counts := map[string]int64{}
	var key []byte
	for n := 1; ; n++ {
		rec, err := in.Read()
		if errors.Is(err, io.EOF) {
			return counts, nil
		}
		if err != nil {
			return nil, err
		}
		if len(rec) < len(labs) {
			return nil, fmt.Errorf("input record %d: %d fields for %d quasi-identifiers", n, len(rec), len(labs))
		}
		key = key[:0]
		for j, lab := range labs {
			s, err := lab.label(rec[j])
			if err != nil {
				return nil, err
			}
			key = appendKey(key, s)
		}
		counts[string(key)]++
	}
}

// CheckPopulation checks every class of the release against its population count
// (pop, from PopulationCounts at the release's levels): a class with fewer population
// records than released ones is not a generalization of the population (a
// *Violation); one whose share released / population lies outside [DeltaMin,
// DeltaMax] (each side in float64, as the search decides it), whose population count
// is below KMap, or that leaves the publisher no positive expected payout per record
// under the journalist's profitability (Profitability, with Loss) breaks the model (a
// *Violation). It returns what it measured.
func CheckPopulation(p Population, rel *Classes, pop map[string]int64) (PopulationMeasured, error) {
	var m PopulationMeasured
	if p.Profitability != nil && p.Loss == nil {
		return m, errors.New("the journalist's profitability needs the released classes' information loss (Population.Loss)")
	}
	first := true
	for key, c := range rel.count {
		n := pop[key]
		if bad, why := p.classFails(c, n); bad {
			return m, &Violation{Msg: "a released class " + why + " (at the release's levels)"}
		}
		if err := p.checkPayout(key, n, &m); err != nil {
			return m, err
		}
		d := float64(c) / float64(n)
		if first {
			m.DeltaMin, m.DeltaMax, m.SmallestPopulation = d, d, n
			first = false
		}
		m.DeltaMin, m.DeltaMax, m.SmallestPopulation = math.Min(m.DeltaMin, d), math.Max(m.DeltaMax, d), min(m.SmallestPopulation, n)
	}
	return m, nil
}

// checkPayout decides the journalist's profitability (when p has it) on the released
// class keyed key, of pop population records, and measures its payout into m.
func (p Population) checkPayout(key string, pop int64, m *PopulationMeasured) error {
	if p.Profitability == nil {
		return nil
	}
	il, err := p.Loss(key)
	if err != nil {
		return err
	}
	g := p.Profitability.CostBenefit.Game()
	pay := g.Payout(il, pop)
	if !m.Payout || pay < m.LeastPayout {
		m.LeastPayout, m.Payout = pay, true
	}
	if !g.Pays(il, pop) {
		return &Violation{Msg: fmt.Sprintf("a released class of %d population records leaves the publisher an expected payout of %.6g per record, not above 0 (the journalist's profitability; information loss %.4g)", pop, pay, il)}
	}
	return nil
}
