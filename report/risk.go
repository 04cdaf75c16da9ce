package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// RiskReport is the re-identification risk of an input and, when there is one, of its
// release: counts and shares only. The input is measured at its original
// quasi-identifier values; the release from the written file, by the verifier.
type RiskReport struct {
	// Population is what the configuration says of the population the input was drawn
	// from (nil: nothing; then only the prosecutor model is measured).
	Population *PopulationFigures `json:"population,omitempty"`
	// Thresholds are the risks the RecordsAtRisk shares are given for.
	Thresholds []float64     `json:"thresholds"`
	Input      RiskMeasures  `json:"input"`
	Release    *RiskMeasures `json:"release,omitempty"`
	// QuasiIdentifiers is how much each quasi-identifier, and each pair of them, sets
	// the input's records apart (sanitize risk; nil in a release's report).
	QuasiIdentifiers []AttributeRisk `json:"quasi_identifiers,omitempty"`
	// Models is the configuration's risk-based models and whether the release meets
	// them (empty when it has none).
	Models []RiskModelCheck `json:"models,omitempty"`
	// Enforcement is how average-risk, records-at-risk and population-uniqueness were
	// met (privacy.risk-enforcement: suppress or measure; empty when none is given).
	Enforcement string `json:"enforcement,omitempty"`
}

// PopulationFigures is the population the input was drawn from.
type PopulationFigures struct {
	Size             float64 `json:"size"`              // N
	SamplingFraction float64 `json:"sampling_fraction"` // the input's records / N
}

// RiskMeasures is one table's re-identification risk. The prosecutor model (the
// attacker knows the target is in the table: a record's risk is 1 / its class size)
// is always measured; the journalist and marketer models and the population
// uniqueness only when the population is known.
type RiskMeasures struct {
	Records int64 `json:"records"` // in classes: suppressed records are not a class
	Classes int64 `json:"classes"`
	// HighestRisk is 1 / the smallest class; AverageRisk the records' mean risk
	// (classes / records); RecordsAtHighest the share of records at HighestRisk.
	HighestRisk      float64 `json:"highest_risk"`
	AverageRisk      float64 `json:"average_risk"`
	RecordsAtHighest float64 `json:"records_at_highest_risk"`
	// RecordsAtRisk is, for each of the report's thresholds, the share of records
	// whose risk is above it.
	RecordsAtRisk []float64 `json:"records_at_risk"`
	// SampleUniqueness is the share of records unique in the table.
	SampleUniqueness float64 `json:"sample_uniqueness"`
	// RecordRisk is how the records' risks are distributed over bands.
	RecordRisk []RiskBand `json:"record_risk"`
	// ClassSizes is how many classes, and records in them, have a size in each range.
	ClassSizes []SizeBucket `json:"class_sizes"`
	// The population-based models (nil without a population).
	Journalist           *JournalistRisk      `json:"journalist,omitempty"`
	Marketer             *MarketerRisk        `json:"marketer,omitempty"`
	PopulationUniqueness []UniquenessEstimate `json:"population_uniqueness,omitempty"`
}

// RiskBand is the share of records whose risk lies in (Above, UpTo].
type RiskBand struct {
	Above   float64 `json:"above"`
	UpTo    float64 `json:"up_to"`
	Records float64 `json:"records"`
}

// SizeBucket is the classes of Min to Max records (Max 0: no upper end).
type SizeBucket struct {
	Min     int64 `json:"min"`
	Max     int64 `json:"max"`
	Classes int64 `json:"classes"`
	Records int64 `json:"records"`
}

// JournalistRisk is the journalist model's risk (the attacker does not know whether
// the target is in the table; a record's risk is 1 / its class's size in the
// population). UpperBound says the population's class sizes were not given and the
// figures are the prosecutor model's, which bound them from above.
type JournalistRisk struct {
	Highest    float64 `json:"highest"`
	Average    float64 `json:"average"`
	UpperBound bool    `json:"upper_bound"`
}

// MarketerRisk is the marketer model's expected share of records re-identified by an
// attacker who links every record; UpperBound as for JournalistRisk.
type MarketerRisk struct {
	Share      float64 `json:"share"`
	UpperBound bool    `json:"upper_bound"`
}

// UniquenessEstimate is one model's estimate of the share of the population that is
// unique on the quasi-identifiers. Chosen is the model Dankar et al.'s rule took (for
// the "dankar" entry); Valid is false when the model has no estimate for this table.
type UniquenessEstimate struct {
	Model  string  `json:"model"`
	Share  float64 `json:"share"`
	Valid  bool    `json:"valid"`
	Chosen string  `json:"chosen,omitempty"`
}

// AttributeRisk is how much some quasi-identifiers set the input's records apart:
// Distinction is their distinct combinations / records, Separation the share of
// record pairs they tell apart (Motwani & Xu 2007).
type AttributeRisk struct {
	Columns     []string `json:"columns"`
	Distinction float64  `json:"distinction"`
	Separation  float64  `json:"separation"`
}

// RiskModelCheck is one risk-based model of the configuration, its limit, the value
// measured on the release, and whether it holds.
type RiskModelCheck struct {
	Model    string  `json:"model"` // highest-risk | average-risk | records-at-risk | population-uniqueness
	Limit    float64 `json:"limit"`
	Measured float64 `json:"measured"`
	Holds    bool    `json:"holds"`
	// Threshold is records-at-risk's threshold; Estimator population-uniqueness's model.
	Threshold float64 `json:"threshold,omitempty"`
	Estimator string  `json:"estimator,omitempty"`
}

// RiskAnalysis is what `sanitize risk` reports: the risk of an input and, when given,
// of a release of it, with no release written.
type RiskAnalysis struct {
	Tool         string `json:"tool"`
	Version      string `json:"version"`
	Dataset      string `json:"dataset,omitempty"`
	ConfigDigest string `json:"config_digest"`
	// HierarchyDigests maps every hierarchy file the configuration names to its SHA-256.
	HierarchyDigests map[string]string `json:"hierarchy_digests,omitempty"`
	CreatedUTC       string            `json:"created_utc"`
	Input            FileSummary       `json:"input"`
	Release          *FileSummary      `json:"release,omitempty"`
	Quasi            []string          `json:"quasi_identifiers"`
	Risk             RiskReport        `json:"risk"`
	// Persons, with privacy.privacy-unit, says that the risk measures count persons (a
	// class's size is its persons, a person with records in several classes counted in
	// each; the quasi-identifiers' distinction and separation stay in records) and
	// gives the release counted in persons (nil without a unit).
	Persons *RiskPersons `json:"persons,omitempty"`
}

// RiskPersons is a risk analysis counted in persons: the unit's column, the input's
// persons, and the release's as the verifier counted them (nil: no release analysed).
type RiskPersons struct {
	Column  string          `json:"column"`
	Input   int             `json:"input_persons"`
	Release *PersonsSummary `json:"release,omitempty"`
}

// Summary is the short human summary of a risk analysis printed on stdout.
func (a *RiskAnalysis) Summary(w io.Writer) {
	if p := a.Risk.Population; p != nil {
		fmt.Fprintf(w, "population: %.0f records (sampling fraction %.4g)\n", p.Size, p.SamplingFraction)
	}
	unit := "records"
	if p := a.Persons; p != nil {
		unit = "persons"
		fmt.Fprintf(w, "counted in persons (%s): %d persons in the input; a class's size is its persons, a person in several classes counted in each\n", p.Column, p.Input)
	}
	a.Risk.Input.summary(w, "input "+a.Input.Path, unit, a.Risk.Thresholds)
	if a.Release != nil && a.Risk.Release != nil {
		a.Risk.Release.summary(w, "release "+a.Release.Path, unit, a.Risk.Thresholds)
	}
	if p := a.Persons; p != nil && p.Release != nil {
		r := p.Release
		fmt.Fprintf(w, "release persons: %d released, %d with records in several classes; %d lost some of their records, %d all\n", r.Released, r.Several, r.LostSome, r.LostAll)
	}
	for _, m := range a.Risk.Models {
		verdict := "holds"
		if !m.Holds {
			verdict = "MISSED"
		}
		fmt.Fprintf(w, "model %s: limit %.4g, measured %.4g: %s\n", m.Model, m.Limit, m.Measured, verdict)
	}
	qis := slices.Clone(a.Risk.QuasiIdentifiers)
	slices.SortStableFunc(qis, func(x, y AttributeRisk) int { return cmp.Compare(y.Distinction, x.Distinction) })
	for i, q := range qis {
		if i == 5 {
			fmt.Fprintf(w, "… %d more combinations in the report\n", len(qis)-5)
			break
		}
		fmt.Fprintf(w, "quasi-identifiers %s: distinction %.4g, separation %.4g\n", strings.Join(q.Columns, "+"), q.Distinction, q.Separation)
	}
}

// summary prints one table's measures.
func (m *RiskMeasures) summary(w io.Writer, what, unit string, thresholds []float64) {
	fmt.Fprintf(w, "%s: %d %s in %d classes; prosecutor risk highest %s, average %s; %s of the %s unique\n",
		what, m.Records, unit, m.Classes, summaryPercent(m.HighestRisk), summaryPercent(m.AverageRisk), summaryPercent(m.SampleUniqueness), unit)
	var parts []string
	for i, th := range thresholds {
		if i < len(m.RecordsAtRisk) {
			parts = append(parts, fmt.Sprintf("%s above %g%%", summaryPercent(m.RecordsAtRisk[i]), 100*th))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "  %s at risk: %s\n", unit, strings.Join(parts, ", "))
	}
	if m.Journalist != nil && m.Marketer != nil {
		bound := ""
		if m.Journalist.UpperBound {
			bound = " (upper bounds: the population's class sizes are not known)"
		}
		fmt.Fprintf(w, "  journalist risk highest %s, average %s; marketer risk %s%s\n", summaryPercent(m.Journalist.Highest), summaryPercent(m.Journalist.Average), summaryPercent(m.Marketer.Share), bound)
	}
	for _, u := range m.PopulationUniqueness {
		if u.Chosen != "" && u.Valid {
			fmt.Fprintf(w, "  population uniqueness %s (%s, by Dankar et al.'s rule)\n", summaryPercent(u.Share), u.Chosen)
		}
	}
}

// summaryPercent formats a share as a percentage with enough digits that a share above 0
// never reads 0%.
func summaryPercent(x float64) string {
	switch {
	case x == 0:
		return "0%"
	case x >= 0.1:
		return strconv.FormatFloat(100*x, 'f', 1, 64) + "%"
	}
	return strconv.FormatFloat(100*x, 'g', 2, 64) + "%"
}
