package report

import (
	"encoding/json"
	"fmt"
	"strings"

	"sanitizer/closeness"
	"sanitizer/diversity"
	"sanitizer/schema"
)

// Measures is a set of the measures of a protected sensitive column. What is printed
// of a column (check's and release's summaries, the JSON and HTML reports) is the
// measures of the models the configuration requires of it, and no other: a measure of
// a model that is not configured is left out, never printed as a figure (the verifier
// does not measure β-likeness's gain without β-likeness, and a figure of a model
// nobody asked for reads as a result).
type Measures uint8

// The measures, each of the models that use it.
const (
	MeasureDistinct Measures = 1 << iota // distinct and recursive (c,l) l-diversity: the fewest distinct values of a class
	MeasureEntropy                       // entropy l-diversity: the smallest entropy l of a class
	MeasureEMD                           // t-closeness: the largest EMD of a class
	MeasureGain                          // β-likeness: the largest relative gain of a value's share
	// MeasurePersonsL is distinct l-diversity counted in persons: the smallest, over
	// the classes, of a class's persons over the most persons holding one value.
	MeasurePersonsL
)

// Has reports whether the set holds m.
func (s Measures) Has(m Measures) bool { return s&m != 0 }

// ConfiguredMeasures is the measures the configuration's models require of column.
func ConfiguredMeasures(cfg *schema.Config, column string) Measures {
	var s Measures
	for _, l := range cfg.Privacy.LDiversity {
		switch {
		case l.Column != column:
		case cfg.Privacy.Unit != nil:
			s |= MeasurePersonsL
		default:
			s |= diversityMeasure(l.Variant)
		}
	}
	for _, t := range cfg.Privacy.TCloseness {
		if t.Column == column {
			s |= MeasureEMD
		}
	}
	for _, b := range cfg.Privacy.BetaLikeness {
		if b.Column == column {
			s |= MeasureGain
		}
	}
	return s
}

// diversityMeasure is the measure an l-diversity variant is checked by.
func diversityMeasure(variant diversity.Variant) Measures {
	if variant == diversity.Entropy {
		return MeasureEntropy
	}
	return MeasureDistinct
}

// sensitiveParts are the figures of s's measures in the set, in the words of the
// summaries printed on stdout.
func sensitiveParts(s SensitiveSummary) []string {
	var out []string
	if s.Measures.Has(MeasureDistinct) {
		out = append(out, fmt.Sprintf("weakest class holds %d distinct values", s.MinDistinct))
	}
	if s.Measures.Has(MeasureEntropy) {
		out = append(out, fmt.Sprintf("smallest entropy l %.2f", s.MinEntropyL))
	}
	if s.Measures.Has(MeasureEMD) {
		out = append(out, fmt.Sprintf("largest %s EMD %.4f", s.Distance, s.MaxEMD))
	}
	if s.Measures.Has(MeasureGain) {
		out = append(out, fmt.Sprintf("largest β-likeness gain %.4g", s.MaxGain))
	}
	if s.Measures.Has(MeasurePersonsL) {
		out = append(out, fmt.Sprintf("weakest class is %.2f-diverse in persons (its persons over the most holding one value)", s.MinPersonsL))
	}
	return out
}

// sensitiveLine is a summary's line of a protected sensitive column's measures, those
// its models require.
func sensitiveLine(prefix string, s SensitiveSummary) string {
	return prefix + strings.Join(sensitiveParts(s), "; ") + "\n"
}

// sensitiveJSON is SensitiveSummary as the JSON report holds it: a measure of a model
// the configuration does not require of the column is absent.
type sensitiveJSON struct {
	Column      string             `json:"column"`
	MinDistinct *int               `json:"min_distinct_l,omitempty"`
	MinEntropyL *float64           `json:"min_entropy_l,omitempty"`
	MaxEMD      *float64           `json:"max_emd,omitempty"`
	Distance    closeness.Distance `json:"emd_distance,omitempty"`
	MaxGain     *float64           `json:"max_gain,omitempty"`
	MinPersonsL *float64           `json:"min_persons_l,omitempty"`
}

// MarshalJSON writes the measures of s.Measures only.
func (s SensitiveSummary) MarshalJSON() ([]byte, error) {
	out := sensitiveJSON{Column: s.Column}
	if s.Measures.Has(MeasureDistinct) {
		out.MinDistinct = &s.MinDistinct
	}
	if s.Measures.Has(MeasureEntropy) {
		out.MinEntropyL = &s.MinEntropyL
	}
	if s.Measures.Has(MeasureEMD) {
		out.MaxEMD, out.Distance = &s.MaxEMD, s.Distance
	}
	if s.Measures.Has(MeasureGain) {
		out.MaxGain = &s.MaxGain
	}
	if s.Measures.Has(MeasurePersonsL) {
		out.MinPersonsL = &s.MinPersonsL
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON writes: Measures holds the measures present.
func (s *SensitiveSummary) UnmarshalJSON(data []byte) error {
	var in sensitiveJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	*s = SensitiveSummary{Column: in.Column, Distance: in.Distance}
	if in.MinDistinct != nil {
		s.MinDistinct, s.Measures = *in.MinDistinct, s.Measures|MeasureDistinct
	}
	if in.MinEntropyL != nil {
		s.MinEntropyL, s.Measures = *in.MinEntropyL, s.Measures|MeasureEntropy
	}
	if in.MaxEMD != nil {
		s.MaxEMD, s.Measures = *in.MaxEMD, s.Measures|MeasureEMD
	}
	if in.MaxGain != nil {
		s.MaxGain, s.Measures = *in.MaxGain, s.Measures|MeasureGain
	}
	if in.MinPersonsL != nil {
		s.MinPersonsL, s.Measures = *in.MinPersonsL, s.Measures|MeasurePersonsL
	}
	return nil
}
