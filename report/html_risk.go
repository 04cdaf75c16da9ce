package report

import (
	"fmt"
	"math"

	"sanitizer/risk"
)

// The risk section, shared by the release report and the risk analysis: each risk
// measure before (the input, at its original values) and after (the release, as
// written), the class sizes and the records' risks, and the risk models' checks.

// riskView is the risk section of a page.
type riskView struct {
	Before, After string // the series' names; After "" when there is no release
	Population    string
	Counted       string    // how figures in persons are counted ("" in records)
	Noun          string    // what the figures count: "records" or "persons"
	Glance        []riskRow // the few figures a custodian signs off on
	Measures      []figure
	Table         []riskRow
	Sizes, Bands  figure
	Checks        []checkRow
	Failed        []string // the risk models the release misses
}

// riskRow is one measure in the table of figures.
type riskRow struct{ Measure, Before, After string }

// checkRow is one privacy model and what the verifier measured of it.
type checkRow struct {
	Model, Required, Measured string
	Holds                     bool
}

// measure is one risk measure: its name, what it means, and its value in a table.
type measure struct {
	Name, Sentence, Axis string
	Refs                 []refLine
	// value is the measure of m, its label, and whether m has it.
	value func(m *RiskMeasures) (float64, string, bool)
}

const riskAxis = "chance of re-identification"

// shareAxis is the axis of a chart of shares of what c counts: "share of the records".
func (c counted) shareAxis() string { return "share of the " + c.noun() }

// newRiskView is the risk section of rr, whose figures count what c says; the
// release's series is left out when rr has no release.
func newRiskView(rr *RiskReport, c counted) riskView {
	v := riskView{Before: "Input", Population: populationSentence(rr.Population, c), Counted: c.sentence(), Noun: c.noun()}
	if rr.Release != nil {
		v.After = "Release"
	}
	ms := measures(rr, c)
	charts := make([]barChart, len(ms))
	for i, m := range ms {
		charts[i] = v.measureChart(rr, m)
		v.Table = append(v.Table, v.row(rr, m.Name, m.value))
	}
	alignCharts(charts)
	for i, ch := range charts {
		v.Measures = append(v.Measures, ch.figure(ms[i].Sentence))
	}
	if f, rows := v.uniqueness(rr); len(rows) > 0 {
		v.Measures = append(v.Measures, f)
		v.Table = append(v.Table, rows...)
	}
	v.Table = append(v.Table, v.countRows(rr, c)...)
	v.Glance = v.glance(rr, ms)
	v.Sizes = sizesFigure(rr, v.Before, v.After, c)
	v.Bands = bandsFigure(rr, v.Before, v.After, c)
	v.Checks = riskChecks(rr.Models, c)
	for _, c := range v.Checks {
		if !c.Holds {
			v.Failed = append(v.Failed, c.Model+" ("+c.Required+"; measured "+c.Measured+")")
		}
	}
	return v
}

// row is one measure's row in the table of figures.
func (v riskView) row(rr *RiskReport, name string, value func(*RiskMeasures) (float64, string, bool)) riskRow {
	cell := func(m *RiskMeasures) string {
		if m.Records == 0 {
			return "no record"
		}
		if _, t, ok := value(m); ok {
			return t
		}
		return "—"
	}
	row := riskRow{Measure: name, Before: cell(&rr.Input), After: "—"}
	if rr.Release != nil {
		row.After = cell(rr.Release)
	}
	return row
}

// glance is the figures of the table a custodian reads first: the highest and average
// risk, the first threshold's records at risk, and the sample uniqueness.
func (v riskView) glance(rr *RiskReport, ms []measure) []riskRow {
	var out []riskRow
	for i, m := range ms {
		if i < 3 || m.Name == "Sample uniqueness" {
			out = append(out, v.row(rr, m.Name, m.value))
		}
	}
	return out
}

// countRows are the records (or persons) and classes each side's figures are measured
// on.
func (v riskView) countRows(rr *RiskReport, c counted) []riskRow {
	rows := []riskRow{
		{"Records in groups (withheld records are in none)", fmtCount(rr.Input.Records), "—"},
		{"Groups (records that share their quasi-identifier values)", fmtCount(rr.Input.Classes), "—"},
		{"Share of records at the highest risk", fmtPct(rr.Input.RecordsAtHighest), "—"},
	}
	if c.inPersons() {
		rows[0].Measure = "Persons in groups (a person counted in each group they have records in; withheld records are in none)"
		rows[2].Measure = "Share of persons at the highest risk"
	}
	if r := rr.Release; r != nil {
		rows[0].After, rows[1].After, rows[2].After = fmtCount(r.Records), fmtCount(r.Classes), fmtPct(r.RecordsAtHighest)
	}
	return rows
}

// measureChart is the chart of one measure: a bar for the input, one for the release.
func (v riskView) measureChart(rr *RiskReport, ms measure) barChart {
	c := barChart{Title: ms.Name, Axis: ms.Axis, Max: 1, Tick: fmtPct, Refs: ms.Refs, Width: gridWidth}
	sides := []*RiskMeasures{&rr.Input, rr.Release}
	names := []string{v.Before, v.After}
	for i, m := range sides {
		if m == nil {
			continue
		}
		val, text, ok := ms.value(m)
		switch {
		case m.Records == 0:
			val, text = 0, "no record"
		case !ok:
			val, text = 0, "not measured"
		}
		c.Rows = append(c.Rows, barRow{Label: names[i], Bars: []bar{{Value: val, Text: text, Series: i}}})
	}
	return c
}

// uniqueness is the population uniqueness by every model rr holds an estimate of, as
// one chart and as rows of the table of figures.
func (v riskView) uniqueness(rr *RiskReport) (figure, []riskRow) {
	c := barChart{Title: "Population uniqueness", Axis: "share of the population unique on the quasi-identifiers", Max: 1, Tick: fmtPct, Width: gridWidth}
	c.Legend = legend(rr, v.Before, v.After)
	var rows []riskRow
	for _, model := range uniquenessModels(rr) {
		m := uniquenessMeasure(model)
		rows = append(rows, v.row(rr, m.Name, m.value))
		row := barRow{Label: shortModel(model)}
		for i, side := range []*RiskMeasures{&rr.Input, rr.Release} {
			if side == nil || side.Records == 0 {
				continue
			}
			row.Bars = append(row.Bars, uniquenessBar(side, model, i))
		}
		c.Rows = append(c.Rows, row)
	}
	return c.figure("The estimated share of the whole population that is unique on the quasi-identifiers, from the file's group sizes and the sampling fraction, by each statistical model. Dankar's rule is the estimate to rely on: it picks the model suited to the sampling fraction (named in brackets)."), rows
}

// measures are the risk measures rr holds, in the order a reader meets them, in the
// words of what c counts.
func measures(rr *RiskReport, c counted) []measure {
	if c.inPersons() {
		return personsMeasures(rr)
	}
	out := []measure{
		{Name: "Highest prosecutor risk", Axis: riskAxis,
			Sentence: "Prosecutor risk is the chance that someone who knows a person is in the file picks out their record from the quasi-identifiers: 1 ÷ the size of the record's group. The highest is that of the records in the smallest group.",
			value:    func(m *RiskMeasures) (float64, string, bool) { return m.HighestRisk, fmtRisk(m.HighestRisk), true }},
		{Name: "Average prosecutor risk", Axis: riskAxis,
			Sentence: "The prosecutor risk averaged over all records (groups ÷ records): the share of records an attacker who tried every record would pick out correctly. The dashed lines mark 5% and 9%, average risks that regulators' guidance often accepts for releases to researchers.",
			Refs:     []refLine{{0.05, "5%"}, {0.09, "9%"}},
			value:    func(m *RiskMeasures) (float64, string, bool) { return m.AverageRisk, fmtRisk(m.AverageRisk), true }},
	}
	for i, t := range rr.Thresholds {
		out = append(out, recordsAtRisk(i, t, c))
	}
	out = append(out, measure{Name: "Sample uniqueness", Axis: c.shareAxis(),
		Sentence: "The share of records that are alone in their group: unique in the file on the quasi-identifiers, so anyone who knows those values of a person in the file finds their record.",
		value: func(m *RiskMeasures) (float64, string, bool) {
			return m.SampleUniqueness, fmtPct(m.SampleUniqueness), true
		}})
	if hasPopulation(rr) {
		out = append(out, populationMeasures(rr)...)
	}
	return out
}

// recordsAtRisk is the measure of the share of records (or persons, as c counts)
// above the i-th threshold t.
func recordsAtRisk(i int, t float64, c counted) measure {
	groups := "no group is that small"
	switch n := maxClassAbove(t); {
	case t <= 0:
		groups = "every " + c.one()
	case n >= 1:
		groups = fmt.Sprintf("those in groups of %s or fewer %s", fmtCount(n), c.noun())
		if n == 1 {
			groups = "those alone in their group"
		}
	}
	return measure{Name: capital(c.noun()) + " at risk above " + fmtPct(t), Axis: c.shareAxis(),
		Sentence: fmt.Sprintf("The share of %s whose prosecutor risk is above %s: %s.", c.noun(), fmtPct(t), groups),
		value: func(m *RiskMeasures) (float64, string, bool) {
			if i >= len(m.RecordsAtRisk) {
				return 0, "", false
			}
			return m.RecordsAtRisk[i], fmtPct(m.RecordsAtRisk[i]), true
		}}
}

// hasPopulation says whether rr holds population-based figures.
func hasPopulation(rr *RiskReport) bool {
	return rr.Input.Journalist != nil || (rr.Release != nil && rr.Release.Journalist != nil)
}

const upperBoundNote = " Marked ≤: an upper bound, because the population's group sizes were not given and the prosecutor figure, which can only be higher, stands in."

// populationMeasures are the measures that need the population.
func populationMeasures(rr *RiskReport) []measure {
	bound := func(up bool, s string) string {
		if up {
			return "≤ " + s
		}
		return s
	}
	upper := false
	for _, m := range []*RiskMeasures{&rr.Input, rr.Release} {
		if m != nil && ((m.Journalist != nil && m.Journalist.UpperBound) || (m.Marketer != nil && m.Marketer.UpperBound)) {
			upper = true
		}
	}
	note := ""
	if upper {
		note = upperBoundNote
	}
	out := []measure{
		{Name: "Highest journalist risk", Axis: riskAxis,
			Sentence: "Journalist risk is the chance that someone who does not know whether a person is in the file, but knows them, links a record to them: 1 ÷ the size of the record's group in the population. The highest over all records." + note,
			value: func(m *RiskMeasures) (float64, string, bool) {
				if m.Journalist == nil {
					return 0, "", false
				}
				return m.Journalist.Highest, bound(m.Journalist.UpperBound, fmtRisk(m.Journalist.Highest)), true
			}},
		{Name: "Average journalist risk", Axis: riskAxis,
			Sentence: "The journalist risk averaged over all records." + note,
			value: func(m *RiskMeasures) (float64, string, bool) {
				if m.Journalist == nil {
					return 0, "", false
				}
				return m.Journalist.Average, bound(m.Journalist.UpperBound, fmtRisk(m.Journalist.Average)), true
			}},
		{Name: "Marketer risk", Axis: counted{}.shareAxis(),
			Sentence: "The expected share of records re-identified by an attacker who links every record of the file to the population at once." + note,
			value: func(m *RiskMeasures) (float64, string, bool) {
				if m.Marketer == nil {
					return 0, "", false
				}
				return m.Marketer.Share, bound(m.Marketer.UpperBound, fmtPct(m.Marketer.Share)), true
			}},
	}
	return out
}

// uniquenessModels are the population-uniqueness models rr holds estimates of.
func uniquenessModels(rr *RiskReport) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range []*RiskMeasures{&rr.Input, rr.Release} {
		if m == nil {
			continue
		}
		for _, e := range m.PopulationUniqueness {
			if !seen[e.Model] {
				seen[e.Model] = true
				out = append(out, e.Model)
			}
		}
	}
	return out
}

// uniquenessModelNames are the estimators' names in prose.
var uniquenessModelNames = map[risk.UniquenessModel]string{risk.Dankar: "Dankar's rule", risk.Zayatz: "Zayatz's model", risk.Pitman: "Pitman's model", risk.SNB: "the SNB model"}

// uniquenessShort are the estimators' names in a chart.
var uniquenessShort = map[risk.UniquenessModel]string{risk.Dankar: "Dankar's rule", risk.Zayatz: "Zayatz", risk.Pitman: "Pitman", risk.SNB: "SNB"}

// modelName is the name names gives the population-uniqueness model the report calls
// model (its String), or model itself when it is none of them.
func modelName(names map[risk.UniquenessModel]string, model string) string {
	for _, m := range risk.UniquenessModels {
		if m.String() == model && names[m] != "" {
			return names[m]
		}
	}
	return model
}

// shortModel is a population-uniqueness model's name in a chart.
func shortModel(model string) string { return modelName(uniquenessShort, model) }

// uniquenessBar is the estimate of model on side, in a chart, as series i.
func uniquenessBar(side *RiskMeasures, model string, i int) bar {
	for _, e := range side.PopulationUniqueness {
		switch {
		case e.Model != model:
		case !e.Valid:
			return bar{Text: "no estimate", Series: i}
		case e.Chosen != "":
			return bar{Value: e.Share, Text: fmtPct(e.Share) + " (" + shortModel(e.Chosen) + ")", Series: i}
		default:
			return bar{Value: e.Share, Text: fmtPct(e.Share), Series: i}
		}
	}
	return bar{Text: "not measured", Series: i}
}

// uniquenessName is a population-uniqueness model's name in prose.
func uniquenessName(model string) string { return modelName(uniquenessModelNames, model) }

// uniquenessMeasure is the population uniqueness by model.
func uniquenessMeasure(model string) measure {
	return measure{Name: "Population uniqueness, " + uniquenessName(model),
		value: func(m *RiskMeasures) (float64, string, bool) {
			for _, e := range m.PopulationUniqueness {
				if e.Model != model {
					continue
				}
				if !e.Valid {
					return 0, "no estimate for this table", true
				}
				t := fmtPct(e.Share)
				if e.Chosen != "" {
					t += " (" + uniquenessName(e.Chosen) + ")"
				}
				return e.Share, t, true
			}
			return 0, "", false
		}}
}

// populationSentence says what the population figures are, or that there are none
// (and, counted in persons, why).
func populationSentence(p *PopulationFigures, c counted) string {
	if p == nil && c.inPersons() {
		return "Counted in persons, only the prosecutor model is measured: the journalist and marketer risks and the population uniqueness rest on a population of records, which this version does not count in persons."
	}
	if p == nil {
		return "No population size was configured, so only the prosecutor model is measured: the journalist and marketer risks and the population uniqueness need to know how large a population the input was drawn from (risk: {population: N} in the configuration)."
	}
	return fmt.Sprintf("The input is taken to be a sample of %s of a population of %s people: the journalist, marketer and population-uniqueness figures rest on this.",
		fmtPct(p.SamplingFraction), fmtCount(int64(math.Round(p.Size))))
}

// sizesFigure is the class-size distribution, before and after, of what u counts.
func sizesFigure(rr *RiskReport, before, after string, u counted) figure {
	c := barChart{Title: capital(u.noun()) + " by the size of their group", Axis: u.shareAxis(), Tick: fmtPct, Width: wideWidth,
		Empty: "no record, so no group to chart."}
	sides := []*RiskMeasures{&rr.Input, rr.Release}
	c.Legend = legend(rr, before, after)
	buckets := rr.Input.ClassSizes
	if len(buckets) == 0 && rr.Release != nil {
		buckets = rr.Release.ClassSizes
	}
	if !anyRecords(rr) {
		buckets = nil
	}
	for _, b := range buckets {
		row := barRow{Label: "groups of " + bucketLabel(b)}
		for i, m := range sides {
			if m == nil || m.Records == 0 {
				continue
			}
			n := bucketRecords(m.ClassSizes, b)
			share := float64(n) / float64(m.Records)
			text := fmtPct(share) + " · " + fmtCount(n)
			if n == 0 {
				text = "0"
			}
			row.Bars = append(row.Bars, bar{Value: share, Text: text, Series: i})
		}
		c.Rows = append(c.Rows, row)
	}
	caption := "How many records sit in groups of each size (the bar's label: share of the records · records). A record in a group of 1 is unique on the quasi-identifiers; the smaller its group, the likelier it is re-identified. Groups smaller than k are what k-anonymity generalizes or withholds."
	if u.inPersons() {
		c.Title = "Persons by the size of their group, in persons"
		caption = "How many persons sit in groups of each size, a group's size being its persons (the bar's label: share of the persons · persons; a person counted in each group they have records in). A person alone in a group is unique on the quasi-identifiers; the fewer the persons of a group, the likelier each of them is re-identified. Groups of fewer than k persons are what k-anonymity in persons generalizes or withholds."
	}
	return c.figure(caption + releaseEmptyNote(rr))
}

// bandsFigure is the distribution of the risk of what u counts, before and after.
func bandsFigure(rr *RiskReport, before, after string, u counted) figure {
	c := barChart{Title: capital(u.noun()) + " by their re-identification risk", Axis: u.shareAxis(), Tick: fmtPct, Width: wideWidth,
		Empty: "no record, so no risk to chart."}
	c.Legend = legend(rr, before, after)
	bands := rr.Input.RecordRisk
	if len(bands) == 0 && rr.Release != nil {
		bands = rr.Release.RecordRisk
	}
	if !anyRecords(rr) {
		bands = nil
	}
	sides := []*RiskMeasures{&rr.Input, rr.Release}
	for j := len(bands) - 1; j >= 0; j-- { // the riskiest first
		b := bands[j]
		row := barRow{Label: bandLabel(b)}
		for i, m := range sides {
			if m == nil || m.Records == 0 {
				continue
			}
			share := bandRecords(m.RecordRisk, b)
			row.Bars = append(row.Bars, bar{Value: share, Text: fmtPct(share), Series: i})
		}
		c.Rows = append(c.Rows, row)
	}
	caption := "How the records' prosecutor risk is spread: each band gives its risks and the group sizes that have them. Records at the top are the likeliest to be re-identified."
	if u.inPersons() {
		caption = "How the persons' prosecutor risk is spread, a person counted in each group they have records in: each band gives its risks and the group sizes, in persons, that have them. Persons at the top are the likeliest to be re-identified."
	}
	return c.figure(caption + releaseEmptyNote(rr))
}

// releaseEmptyNote says, in a distribution's caption, that the release is left out for
// holding no record.
func releaseEmptyNote(rr *RiskReport) string {
	if rr.Release != nil && rr.Release.Records == 0 {
		return " The release holds no record, so only the input is shown."
	}
	return ""
}

// legend is the distributions' series names: the sides that hold records.
func legend(rr *RiskReport, before, after string) []string {
	if rr.Release == nil || rr.Release.Records == 0 {
		return []string{before}
	}
	if rr.Input.Records == 0 {
		return []string{before + " (no record)", after}
	}
	return []string{before, after}
}

// anyRecords says whether either side holds a record.
func anyRecords(rr *RiskReport) bool {
	return rr.Input.Records > 0 || (rr.Release != nil && rr.Release.Records > 0)
}

// bucketRecords is the records of buckets in the size range of b.
func bucketRecords(buckets []SizeBucket, b SizeBucket) int64 {
	for _, x := range buckets {
		if x.Min == b.Min && x.Max == b.Max {
			return x.Records
		}
	}
	return 0
}

// bandRecords is the share of records of bands in the risk band of b.
func bandRecords(bands []RiskBand, b RiskBand) float64 {
	for _, x := range bands {
		if x.Above == b.Above && x.UpTo == b.UpTo {
			return x.Records
		}
	}
	return 0
}

// bucketLabel names a size range: "1 (unique)", "3–4", "1,000 or more".
func bucketLabel(b SizeBucket) string {
	switch {
	case b.Max == 0:
		return fmtCount(b.Min) + " or more"
	case b.Min == 1 && b.Max == 1:
		return "1 (unique)"
	case b.Min == b.Max:
		return fmtCount(b.Min)
	}
	return fmtCount(b.Min) + "–" + fmtCount(b.Max)
}

// bandLabel names a risk band and the group sizes in it: "20%–33.3% (groups of 3–4)".
func bandLabel(b RiskBand) string {
	lo := int64(1)
	if b.UpTo < 1 {
		lo = maxClassAbove(b.UpTo) + 1
	}
	groups := ""
	switch hi := maxClassAbove(b.Above); {
	case b.Above <= 0:
		groups = fmt.Sprintf("groups of %s or more", fmtCount(lo))
	case hi < lo:
		groups = "no group size"
	case hi == lo:
		groups = fmt.Sprintf("groups of %s", fmtCount(lo))
	default:
		groups = fmt.Sprintf("groups of %s–%s", fmtCount(lo), fmtCount(hi))
	}
	return fmt.Sprintf("%s–%s (%s)", fmtPct(b.Above), fmtPct(b.UpTo), groups)
}

// riskChecks are the risk models' rows in a table of checks, in the words of what c
// counts.
func riskChecks(models []RiskModelCheck, c counted) []checkRow {
	var out []checkRow
	for _, m := range models {
		row := checkRow{Model: m.Model, Measured: fmtPct(m.Measured), Holds: m.Holds}
		switch m.Model {
		case "highest-risk":
			row.Model, row.Required = "Highest risk", "every "+c.one()+"'s risk at most "+fmtRisk(m.Limit)
			row.Measured = fmtRisk(m.Measured)
		case "average-risk":
			row.Model, row.Required = "Average risk", "average risk at most "+fmtRisk(m.Limit)
			row.Measured = fmtRisk(m.Measured)
		case "records-at-risk":
			row.Model, row.Required = capital(c.noun())+" at risk", fmt.Sprintf("at most %s of %s with a risk above %s", fmtPct(m.Limit), c.noun(), fmtPct(m.Threshold))
		case "population-uniqueness":
			row.Model, row.Required = "Population uniqueness", fmt.Sprintf("at most %s of the population unique (%s)", fmtPct(m.Limit), uniquenessName(m.Estimator))
		}
		out = append(out, row)
	}
	return out
}

const riskHTML = `
{{define "risk"}}
<p>{{.Population}}</p>
<p><strong>{{.Before}}</strong>: the records as given, at their original values: the risk if someone knew every quasi-identifier of a person exactly, to the day and the digit, which is the worst case and why the input's figures are often near 100%.{{if .After}} <strong>{{.After}}</strong>: the file as written, read back and counted by the verifier.{{else}} No release was given: only the input is measured.{{end}} A <em>group</em> is the records that share all their quasi-identifier values.</p>
{{if .Counted}}<p><strong>{{.Counted}}</strong></p>
{{end}}<div class="figs">
{{range .Measures}}<figure>{{.Chart}}<figcaption>{{.Caption}}</figcaption></figure>
{{end}}</div>
<h3>The figures</h3>
<table>
<tr><th>Measure</th><th class="n">{{.Before}}</th>{{if .After}}<th class="n">{{.After}}</th>{{end}}</tr>
{{range .Table}}<tr><td>{{.Measure}}</td><td class="n">{{.Before}}</td>{{if $.After}}<td class="n">{{.After}}</td>{{end}}</tr>
{{end}}</table>
<h3>Group sizes and the {{.Noun}}' risk</h3>
<figure>{{.Sizes.Chart}}<figcaption>{{.Sizes.Caption}}</figcaption></figure>
<figure>{{.Bands.Chart}}<figcaption>{{.Bands.Caption}}</figcaption></figure>
{{end}}

{{define "glance"}}
{{if .Failed}}<p class="warn">The release does NOT meet: {{range $i, $f := .Failed}}{{if $i}}; {{end}}{{$f}}{{end}}.</p>{{end}}
<table class="glance">
<tr><th>Re-identification risk at a glance</th>{{if .After}}<th class="n">{{.Before}} (before)</th><th class="n">{{.After}} (after)</th>{{else}}<th class="n">{{.Before}}</th>{{end}}</tr>
{{range .Glance}}<tr><td>{{.Measure}}</td><td class="n">{{.Before}}</td>{{if $.After}}<td class="n">{{.After}}</td>{{end}}</tr>
{{end}}</table>
{{end}}

{{define "checks"}}
<table>
<tr><th>Model</th><th>Required</th><th>Measured on the written file</th><th>Result</th></tr>
{{range .}}<tr><td>{{.Model}}</td><td>{{.Required}}</td><td>{{.Measured}}</td><td>{{if .Holds}}<span class="holds">holds</span>{{else}}<span class="fails">does not hold</span>{{end}}</td></tr>
{{end}}</table>
{{end}}
`
