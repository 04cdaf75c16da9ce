package release

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"sanitizer/generalize"
	"sanitizer/report"
	"sanitizer/risk"
	"sanitizer/schema"
)

// reportThresholds are the risks a report gives the share of records above: 20%, 10%
// and 5%, the thresholds of guidance for releases to researchers, and the
// configuration's records-at-risk threshold.
func reportThresholds(cfg *schema.Config) []float64 {
	th := []float64{0.2, 0.1, 0.05}
	if a := cfg.Privacy.RecordsAtRisk; a != nil && !slices.Contains(th, a.Threshold) {
		th = append(th, a.Threshold)
	}
	slices.SortFunc(th, func(a, b float64) int { return cmp.Compare(b, a) }) // descending
	return th
}

// sizeBuckets are the class-size ranges a report charts: [lo, hi], hi 0 open.
var sizeBuckets = [][2]int64{{1, 1}, {2, 2}, {3, 4}, {5, 9}, {10, 19}, {20, 49}, {50, 99}, {100, 999}, {1000, 0}}

// riskMeasures measures the table of class sizes d: the prosecutor model, and with a
// population of n records (0: unknown) the journalist and marketer models and the
// population uniqueness by every model.
func riskMeasures(d risk.Distribution, n float64, thresholds []float64) (report.RiskMeasures, error) {
	p := risk.ProsecutorRisk(d)
	m := report.RiskMeasures{
		Records: d.Records(), Classes: d.Classes(),
		HighestRisk: p.Highest, AverageRisk: p.Average, RecordsAtHighest: p.AtHighest,
		SampleUniqueness: risk.SampleUniqueness(d),
	}
	for _, th := range thresholds {
		m.RecordsAtRisk = append(m.RecordsAtRisk, risk.RecordsAtRisk(d, th))
	}
	for _, b := range risk.RiskBands(d, risk.DefaultBands) {
		m.RecordRisk = append(m.RecordRisk, report.RiskBand{Above: b.Above, UpTo: b.UpTo, Records: b.Records})
	}
	m.ClassSizes = bucketSizes(d)
	if n == 0 || d.Records() == 0 {
		return m, nil
	}
	return m, populationMeasures(&m, d, n)
}

// bucketSizes counts d's classes and records in each of sizeBuckets.
func bucketSizes(d risk.Distribution) []report.SizeBucket {
	out := make([]report.SizeBucket, len(sizeBuckets))
	for i, b := range sizeBuckets {
		out[i] = report.SizeBucket{Min: b[0], Max: b[1]}
	}
	for _, c := range d.Counts() {
		i := len(sizeBuckets) - 1
		for j, b := range sizeBuckets {
			if c.Size <= b[1] {
				i = j
				break
			}
		}
		out[i].Classes += c.Classes
		out[i].Records += c.Size * c.Classes
	}
	return out
}

// populationMeasures adds to m the measures of d that need its population of n
// records.
func populationMeasures(m *report.RiskMeasures, d risk.Distribution, n float64) error {
	pop, err := risk.PopulationFromSize(int64(math.Round(n)))
	if err != nil {
		return err
	}
	j, err := risk.JournalistRisk(d, pop)
	if err != nil {
		return err
	}
	mk, err := risk.MarketerRisk(d, pop)
	if err != nil {
		return err
	}
	m.Journalist = &report.JournalistRisk{Highest: j.Highest, Average: j.Average, UpperBound: j.UpperBound}
	m.Marketer = &report.MarketerRisk{Share: mk.Share, UpperBound: mk.UpperBound}
	fraction := min(1, float64(d.Records())/n)
	for _, model := range []risk.UniquenessModel{risk.Dankar, risk.Zayatz, risk.Pitman, risk.SNB} {
		u, err := risk.PopulationUniqueness(d, fraction, model)
		if err != nil {
			return err
		}
		e := report.UniquenessEstimate{Model: model.String(), Share: u.Share, Valid: u.Valid}
		if model == risk.Dankar {
			e.Chosen = u.Model.String()
		}
		m.PopulationUniqueness = append(m.PopulationUniqueness, e)
	}
	return nil
}

// populationFigures is the report's account of the population of an input of rows
// records (nil when the configuration gives none).
func populationFigures(n float64, rows int) *report.PopulationFigures {
	if n == 0 {
		return nil
	}
	return &report.PopulationFigures{Size: n, SamplingFraction: float64(rows) / n}
}

// riskChecks is the configuration's risk-based models measured on the release d
// (measured by the verifier, which has already failed a release that misses one).
func riskChecks(cfg *schema.Config, d risk.Distribution, n float64) []report.RiskModelCheck {
	pr := cfg.Privacy
	var out []report.RiskModelCheck
	p := risk.ProsecutorRisk(d)
	if pr.HighestRisk > 0 {
		out = append(out, report.RiskModelCheck{Model: "highest-risk", Limit: pr.HighestRisk, Measured: p.Highest, Holds: p.Highest <= pr.HighestRisk})
	}
	if pr.AverageRisk > 0 {
		out = append(out, report.RiskModelCheck{Model: "average-risk", Limit: pr.AverageRisk, Measured: p.Average, Holds: p.Average <= pr.AverageRisk})
	}
	if a := pr.RecordsAtRisk; a != nil {
		at := risk.RecordsAtRisk(d, a.Threshold)
		out = append(out, report.RiskModelCheck{Model: "records-at-risk", Limit: a.Max, Measured: at, Holds: at <= a.Max, Threshold: a.Threshold})
	}
	if u := pr.PopulationUniqueness; u != nil {
		c := report.RiskModelCheck{Model: "population-uniqueness", Limit: u.Max, Estimator: u.Model.String()}
		if d.Records() > 0 && n > 0 {
			if est, err := risk.PopulationUniqueness(d, min(1, float64(d.Records())/n), u.Model); err == nil && est.Valid {
				c.Measured, c.Holds = est.Share, est.Share <= u.Max
			}
		} else if d.Records() == 0 {
			c.Holds = true
		}
		out = append(out, c)
	}
	return out
}

// inputSizes is the class-size distribution of the input at its original
// quasi-identifier values: from the class table the search counted when there is one
// (ct), else counted from the records; with a privacy unit, the classes' persons.
func inputSizes(t *generalize.Table, ct *generalize.ClassTable) (risk.Distribution, error) {
	all := make([]int, len(t.Columns))
	for i := range all {
		all[i] = i
	}
	if t.Unit != nil { // in persons (a class table's entries are per class and person)
		return generalize.PersonSizes(t, all)
	}
	if ct != nil {
		sizes := make([]int64, ct.Len())
		for j := range sizes {
			sizes[j] = int64(ct.Count(j))
		}
		return risk.FromSizes(sizes)
	}
	return generalize.ClassSizes(t, all)
}

// examplesShown is how many released values of a quasi-identifier a report shows.
const examplesShown = 5

// generalized is, per quasi-identifier, what the release publishes of it: the chosen
// level and the values released at it (those of published classes only), or under
// Mondrian the partitions' values.
func (r *run) generalized() []report.QuasiRelease {
	if r.labels == nil {
		return generalizedColumns(r.t.Columns, r.res.Levels, r.released)
	}
	out := make([]report.QuasiRelease, len(r.t.Columns))
	for i, c := range r.t.Columns {
		vals := slices.Clone(r.labels.dict[i])
		slices.SortFunc(vals, naturalCompare)
		out[i] = report.QuasiRelease{Column: c.Name, Level: -1, Levels: c.Hierarchy.Height(), Distinct: len(vals), Examples: vals[:min(len(vals), examplesShown)]}
	}
	return out
}

// generalizedColumns is, per quasi-identifier (cols, in the search's order), what a
// full-domain release at levels publishes of it: its level, and the values of it that
// released holds (releasedCodes: those of published classes only), the first few in
// natural order (numbers within the labels compared as numbers: [5,9] before [10,14])
// as examples, whatever order the hierarchy numbers them in; with no levels (a
// Mondrian release), level −1 and no values.
func generalizedColumns(cols []generalize.Column, levels []int, released [][]bool) []report.QuasiRelease {
	out := make([]report.QuasiRelease, len(cols))
	for i, c := range cols {
		q := report.QuasiRelease{Column: c.Name, Level: -1, Levels: c.Hierarchy.Height()}
		if i >= len(levels) || i >= len(released) { // none released (Mondrian's empty release)
			out[i] = q
			continue
		}
		q.Level = levels[i]
		for code, ok := range released[i] {
			if ok {
				q.Distinct++
				q.Examples = keepFirst(q.Examples, c.Hierarchy.Value(q.Level, int32(code)))
			}
		}
		out[i] = q
	}
	return out
}

// keepFirst adds v to first, the examplesShown first values seen in natural order
// (sorted), keeping only those: a column may release millions of values.
func keepFirst(first []string, v string) []string {
	i, _ := slices.BinarySearchFunc(first, v, naturalCompare)
	if i >= examplesShown {
		return first
	}
	first = slices.Insert(first, i, v)
	return first[:min(len(first), examplesShown)]
}

// naturalCompare orders a and b as text, except that runs of digits compare as the
// numbers they write; labels equal so ("01", "1") as text.
func naturalCompare(a, b string) int {
	if c := natural(a, b); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// natural is naturalCompare without the tie-break.
func natural(a, b string) int {
	for a != "" && b != "" {
		da, db := digitRun(a), digitRun(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := cmp.Compare(len(na), len(nb)); c != 0 {
				return c
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

// digitRun is the length of the run of ASCII digits s begins with.
func digitRun(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}
