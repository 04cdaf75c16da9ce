package report

import (
	"fmt"
	"math"
	"strings"

	"sanitizer/closeness"
	"sanitizer/diversity"
	"sanitizer/generalize"
	"sanitizer/schema"
)

// The release report's page: what was released under which models, the risk before
// and after, what was generalized, the utility, what the verifier found, and the
// provenance.

// releaseView is the release report's page.
type releaseView struct {
	Title      string
	Lead       string
	Warning    string
	Persons    *personsView // nil: the release counts records
	Series     *seriesView  // nil: the release is no night of a series
	Sec        sectionNumbers
	Models     []string
	Risk       *riskView
	NoRisk     string
	Generalize generalizeView
	Utility    []utilityRow
	Metric     string
	LossChart  figure
	Verified   []string
	Checks     []checkRow
	Search     []string
	Prov       provenance
}

// releasePage is the view of r.
func releasePage(r *Report) releaseView {
	v := releaseView{
		Title:      "Release report" + titleSuffix(r.Dataset),
		Lead:       releaseLead(r),
		Persons:    newPersonsView(r),
		Series:     newSeriesView(r, r.Series),
		Models:     modelSentences(r),
		Generalize: newGeneralizeView(r),
		Utility:    utilityRows(r),
		Metric:     metricSentence(r.Metric),
		LossChart:  lossFigure(r.Utility),
		Verified:   verifiedSentences(r),
		Checks:     modelChecks(r),
		Search:     searchSentences(r),
		Prov:       newProvenance(r.Tool, r.Version, r.ConfigDigest, r.HierarchyDigests, r.CreatedUTC),
	}
	v.Sec = numberSections(v.Series != nil)
	if v.Series != nil {
		v.Series.Num = v.Sec.Series
	}
	if r.Output.Rows == 0 {
		v.Warning = "The release holds no record: every record was suppressed. Nothing of the input is published; the figures below describe an empty file."
	}
	if r.Risk != nil {
		rv := newRiskView(r.Risk, countedOf(r)) // in persons, the risk is measured on the classes' persons
		v.Risk = &rv
	} else {
		v.NoRisk = "This report holds no risk figures: it was written without them."
	}
	return v
}

// sectionNumbers are the numbers of the release page's sections after the first.
type sectionNumbers struct{ Series, Risk, Generalize, Utility, Verifier int }

// numberSections numbers the page's sections: a series' night is the second when
// there is one.
func numberSections(series bool) sectionNumbers {
	if series {
		return sectionNumbers{Series: 2, Risk: 3, Generalize: 4, Utility: 5, Verifier: 6}
	}
	return sectionNumbers{Risk: 2, Generalize: 3, Utility: 4, Verifier: 5}
}

// metricSentence says what the search optimized: the objective, its value, what it
// measures in words for the objectives that need them, and the
// generalization/suppression factor when one was configured.
func metricSentence(m MetricSummary) string {
	v := fmtNumber(m.Value)
	switch m.Name {
	case schema.MetricLoss, schema.MetricNCP:
		v = fmtPct(m.Value)
	case schema.MetricEntropy, schema.MetricEntropyMonotone:
		v += " bits"
	}
	out := fmt.Sprintf("The search chose, among the releases that meet every model, the one with the least %s: %s.", m.Name, v)
	switch m.Name {
	case schema.MetricEntropy:
		out += " The entropy measures, in bits summed over records and quasi-identifiers, how unsure a reader of the release is left about each record's original values (the non-uniform entropy, as ARX computes it): coarsening a value that many records share costs more than one that few share, and withheld records add the uncertainty among their own values."
	case schema.MetricEntropyMonotone:
		out += " The entropy measures, in bits summed over records and quasi-identifiers, how unsure a reader of the release is left about each record's original values (the non-uniform entropy, as ARX's monotonic variant computes it): coarsening a value that many records share costs more than one that few share; withheld records are not counted."
	case schema.MetricEntropyLoss:
		out += " The entropy-based loss (Wan et al. 2015, as ARX computes it) charges each released record the share of its information that its coarsened values hide, from 0 (every value exact) to 1 (every value hidden), and each withheld record 1; the figure is the sum over the records, so it reads as a number of records' worth of information."
	case schema.MetricNCP:
		out += " The NCP (normalized certainty penalty) charges each released value the share of its column's range, or of its categories, that it spans (0 for an exact value), and each withheld record 1 per column; the figure is the average over records and quasi-identifiers."
	}
	if m.GSFactor != nil {
		gs := *m.GSFactor
		switch {
		case gs < 0.5:
			out += fmt.Sprintf(" The configuration set the generalization/suppression factor to %s (ARX's; 0.5 weighs the two alike): a withheld record counted only %s of what it does by default, which favours withholding records over coarsening values.", fmtG(gs), fmtPct(2*gs))
		case gs > 0.5:
			out += fmt.Sprintf(" The configuration set the generalization/suppression factor to %s (ARX's; 0.5 weighs the two alike): a coarsened value counted only %s of what it does by default, which favours coarsening values over withholding records.", fmtG(gs), fmtPct(2-2*gs))
		default:
			out += " The configuration set the generalization/suppression factor to its default, 0.5: coarsening values and withholding records weigh alike."
		}
	}
	return out
}

// titleSuffix is ": dataset", or nothing when unnamed.
func titleSuffix(dataset string) string {
	if dataset == "" {
		return ""
	}
	return ": " + dataset
}

// releaseLead is the opening sentence: what was released and what was withheld.
func releaseLead(r *Report) string {
	if r.DifferentialPrivacy != nil {
		return dpLead(r)
	}
	if r.Suppressed == 0 && r.Model.MaxSuppressed == 0 {
		return fmt.Sprintf("%s %s of %s were released as %s (%s); none was withheld, and the configuration allowed none to be.",
			fmtCount(int64(r.Output.Rows)), plural(int64(r.Output.Rows), "record", "records"), r.Input.Path, r.Output.Path, r.Output.Format)
	}
	return fmt.Sprintf("%s %s of %s were released as %s (%s); %s were withheld (suppressed), the most allowed being %s (%s of the input).",
		fmtCount(int64(r.Output.Rows)), plural(int64(r.Output.Rows), "record", "records"), r.Input.Path, r.Output.Path, r.Output.Format,
		fmtShareOf(int64(r.Suppressed), int64(r.Input.Rows)), fmtCount(int64(r.Model.MaxSuppressed)), fmtPct(r.Model.SuppressionRate))
}

// quasiNames are the release's quasi-identifiers.
func quasiNames(r *Report) []string {
	var out []string
	for _, g := range r.Generalized {
		out = append(out, g.Column)
	}
	if len(out) == 0 {
		for _, n := range r.Node {
			out = append(out, n.Column)
		}
	}
	return out
}

// modelSentences say in words what each privacy model of the release guarantees.
func modelSentences(r *Report) []string {
	qi := joinWords(quasiNames(r))
	if qi == "" {
		qi = "quasi-identifiers"
	}
	if r.Persons != nil {
		return append(personsModelSentences(r, qi), riskModelSentences(r)...)
	}
	if r.DifferentialPrivacy != nil {
		return dpModelSentences(r, qi)
	}
	k := fmt.Sprintf("k-anonymity (k = %d): every group of records that share their %s holds at least %d records, so no one can be narrowed down to fewer than %d records by these values.",
		r.Model.K, qi, r.Model.K, r.Model.K)
	if r.Model.KDefault {
		k = fmt.Sprintf("No k was configured, so k-anonymity holds only as k = 1: a group of records that share their %s may be a single record; the models below are what protect them.", qi)
	}
	if r.Output.Rows > 0 {
		k += fmt.Sprintf(" The release has %s groups; the smallest holds %s records, the average %s.", fmtCount(int64(r.Classes)), fmtCount(int64(r.MinClass)), fmtNumber(r.AvgClass))
	}
	out := []string{k}
	for _, l := range r.Model.LDiversity {
		out = append(out, lSentence(l))
	}
	for _, b := range r.Model.BetaLikeness {
		limit := "by more than β"
		if b.Variant == closeness.Enhanced {
			limit = "by more than the smaller of β and −ln of its share (enhanced: a common value may gain less)"
		}
		out = append(out, fmt.Sprintf("β-likeness on %s (β = %s, %s): in every group, no value of %s is more frequent than in the whole input %s relatively (a value held by 10%% of the input may be held by at most %s of a group), so a group cannot make any one value much likelier.",
			b.Column, fmtG(b.Beta), b.Variant, b.Column, limit, fmtPct(0.1*(1+b.Beta))))
	}
	for _, t := range r.Model.TCloseness {
		out = append(out, fmt.Sprintf("t-closeness on %s (t = %s): in every group, the distribution of %s differs from its distribution in the whole input by at most %s (Earth Mover's Distance, %s ground distance; 0 is identical, 1 as different as can be), so learning someone's group tells little more about their %s than the whole table does.",
			t.Column, fmtG(t.T), t.Column, fmtG(t.T), t.Distance, t.Column))
	}
	out = append(out, populationSentences(r)...)
	out = append(out, profitSentences(r)...)
	out = append(out, localSentences(r)...)
	return append(out, riskModelSentences(r)...)
}

// personsModelSentences say in words what each model of a release counted in persons
// guarantees (distinct l-diversity, t-closeness and β-likeness are the models of
// sensitive columns that have a reading in persons).
func personsModelSentences(r *Report, qi string) []string {
	out := []string{personsKSentence(r, qi)}
	for _, l := range r.Model.LDiversity {
		if l.Variant == diversity.Distinct {
			out = append(out, personsLSentence(l))
		} else {
			out = append(out, lSentence(l))
		}
	}
	for _, b := range r.Model.BetaLikeness {
		out = append(out, personsBetaSentence(b))
	}
	for _, t := range r.Model.TCloseness {
		out = append(out, personsTSentence(t))
	}
	return append(out, populationSentences(r)...)
}

// riskModelSentences say what the release's risk-based models guarantee.
func riskModelSentences(r *Report) []string {
	if r.Risk == nil {
		return nil
	}
	var out []string
	for _, m := range r.Risk.Models {
		out = append(out, riskModelSentence(m, countedOf(r)))
	}
	switch r.Risk.Enforcement {
	case "suppress":
		out = append(out, "The average risk, the records at risk and the population uniqueness were met as ARX meets them: where the chosen generalization missed one, its smallest groups were suppressed too, as few as made it hold, within the suppression limit.")
	case "measure":
		out = append(out, "The average risk, the records at risk and the population uniqueness were measured on the groups the other requirements release: the generalization was chosen among those that meet them, and no group was suppressed for them.")
	}
	return out
}

// populationSentences say what the research subset, δ-presence and k-map guarantee.
func populationSentences(r *Report) []string {
	var out []string
	m := r.Model
	if s := m.Subset; s != nil {
		out = append(out, fmt.Sprintf("Research subset: the input (%s records) is the population, and only the %s records marked in %s were released; the models below compare each released group with the population's records that share its values.",
			fmtCount(int64(s.Population)), fmtCount(int64(s.Records)), s.Column))
	}
	if d := m.DeltaPresence; d != nil {
		least := "."
		if d.Min > 0 {
			least = fmt.Sprintf(" (and at least %s).", fmtPct(d.Min))
		}
		out = append(out, fmt.Sprintf("δ-presence (δ from %s to %s): every released group holds between %s and %s of the population's records with its values, so whoever knows that a person is in the population can conclude that they are in this release with a probability of at most %s%s",
			fmtG(d.Min), fmtG(d.Max), fmtPct(d.Min), fmtPct(d.Max), fmtPct(d.Max), least))
	}
	if k := m.KMap; k != nil {
		if k.Estimator == "" {
			out = append(out, fmt.Sprintf("k-map (k = %d): every released group's values are shared by at least %d people of the population, counted in the input, so a released record could be any of at least %d people.", k.K, k.K, k.K))
		} else {
			out = append(out, fmt.Sprintf("k-map (k = %d), estimated: the population's records are not at hand, so the %s estimator turns k-map into k-anonymity with k = %d in the release (the chance that a group is in fact shared by fewer than %d people is estimated at %s per group).",
				k.K, strings.ReplaceAll(k.Estimator, "-", " "), k.DerivedK, k.K, fmtPct(k.TypeIError)))
		}
	}
	return out
}

// lSentence says what an l-diversity requirement guarantees.
func lSentence(l LDiversityIn) string {
	switch l.Variant {
	case diversity.Distinct:
		return fmt.Sprintf("Distinct l-diversity on %s (l = %s): in every group, %s takes at least %s different values, so knowing someone's group does not tell their %s.",
			l.Column, fmtG(l.L), l.Column, fmtG(l.L), l.Column)
	case diversity.Entropy:
		switch l.Estimator {
		case diversity.Grassberger:
			return fmt.Sprintf("Entropy l-diversity on %s (l = %s, Grassberger's estimator): in every group, the values of %s are estimated to be drawn from a distribution at least as evenly spread as %s equally frequent values. The estimate corrects for small groups, so it is more lenient than the plain entropy on them.",
				l.Column, fmtG(l.L), l.Column, fmtG(l.L))
		case diversity.GrassbergerARX:
			return fmt.Sprintf("Entropy l-diversity on %s (l = %s, Grassberger's estimator as ARX computes it): every group holds at least %s different values of %s, which are estimated to be drawn from a distribution at least as evenly spread as %s equally frequent values. The estimate corrects for small groups, so it is more lenient than the plain entropy on them.",
				l.Column, fmtG(l.L), fmtG(math.Ceil(l.L)), l.Column, fmtG(l.L))
		}
		return fmt.Sprintf("Entropy l-diversity on %s (l = %s): in every group, the values of %s are at least as evenly spread as %s equally frequent values, so no value dominates a group.",
			l.Column, fmtG(l.L), l.Column, fmtG(l.L))
	case diversity.Recursive:
		return fmt.Sprintf("Recursive (c,l)-diversity on %s (c = %s, l = %s): in every group, the most frequent value of %s occurs less than %s times as often as all the values but the %s most frequent together, so no value dominates a group.",
			l.Column, fmtG(l.C), fmtG(l.L), l.Column, fmtG(l.C), fmtG(l.L-1))
	}
	return fmt.Sprintf("l-diversity (%s) on %s, l = %s.", l.Variant, l.Column, fmtG(l.L))
}

// riskModelSentence says what a risk-based model guarantees and what was measured.
func riskModelSentence(m RiskModelCheck, c counted) string {
	var s string
	switch m.Model {
	case "highest-risk":
		s = fmt.Sprintf("Highest risk: no %s's re-identification risk exceeds %s; measured %s.", c.one(), fmtRisk(m.Limit), fmtRisk(m.Measured))
	case "average-risk":
		s = fmt.Sprintf("Average risk: the %s' average re-identification risk is at most %s; measured %s.", c.noun(), fmtRisk(m.Limit), fmtRisk(m.Measured))
	case "records-at-risk":
		s = fmt.Sprintf("%s at risk: at most %s of the %s have a re-identification risk above %s; measured %s.", capital(c.noun()), fmtPct(m.Limit), c.noun(), fmtPct(m.Threshold), fmtPct(m.Measured))
	case "population-uniqueness":
		s = fmt.Sprintf("Population uniqueness: at most %s of the population is estimated (by %s) to be unique on the quasi-identifiers; measured %s.", fmtPct(m.Limit), uniquenessName(m.Estimator), fmtPct(m.Measured))
	default:
		s = fmt.Sprintf("%s: limit %s; measured %s.", m.Model, fmtG(m.Limit), fmtG(m.Measured))
	}
	if !m.Holds {
		s += " It does NOT hold."
	}
	return s
}

// generalizeView is what the release publishes of each quasi-identifier.
type generalizeView struct {
	Rows  []QuasiRelease
	Chart figure
}

// newGeneralizeView is r's quasi-identifiers as released, and a chart of how far each
// was generalized.
func newGeneralizeView(r *Report) generalizeView {
	v := generalizeView{Rows: r.Generalized}
	if len(v.Rows) == 0 {
		for _, n := range r.Node {
			v.Rows = append(v.Rows, QuasiRelease{Column: n.Column, Level: n.Level, Levels: n.Levels, Distinct: -1})
		}
	}
	c := barChart{Title: "How far each quasi-identifier was generalized", Axis: "share of the hierarchy climbed (0% = original values, 100% = *)",
		Max: 1, Tick: fmtPct, Width: wideWidth, Empty: "Mondrian generalizes each partition on its own, so no column has one level: the table gives what the release holds."}
	for _, q := range v.Rows {
		if q.Level < 0 || q.Levels < 1 {
			continue
		}
		top := q.Levels - 1
		share := 1.0
		if top > 0 {
			share = float64(q.Level) / float64(top)
		}
		c.Rows = append(c.Rows, barRow{Label: q.Column, Bars: []bar{{Value: share, Text: levelShort(q), Series: 1}}})
	}
	if len(r.Generalized) == 0 && len(r.Node) == 0 {
		c.Empty = "the report names no quasi-identifier."
	}
	v.Chart = c.figure("Each quasi-identifier's hierarchy goes from the original values (level 0) to * (nothing published). The longer the bar, the coarser the released values.")
	return v
}

// levelShort is a quasi-identifier's level in a chart (LevelOf, as everywhere).
func levelShort(q QuasiRelease) string {
	switch top := q.Levels - 1; {
	case q.Level == 0:
		return LevelOf(q.Level, q.Levels) + ": original"
	case q.Level >= top:
		return LevelOf(q.Level, q.Levels) + ": *"
	default:
		return LevelOf(q.Level, q.Levels)
	}
}

// levelText says a quasi-identifier's level in words (LevelOf, as everywhere).
func levelText(q QuasiRelease) string {
	switch top := q.Levels - 1; {
	case q.Level < 0:
		return "Mondrian: each partition its own range or group"
	case q.Levels < 1:
		return fmt.Sprintf("level %d", q.Level)
	case q.Level == 0:
		return LevelOf(q.Level, q.Levels) + ": original values"
	case q.Level >= top:
		return LevelOf(q.Level, q.Levels) + ": every value is *"
	default:
		return LevelOf(q.Level, q.Levels)
	}
}

// utilityRow is one utility figure and what it means.
type utilityRow struct {
	Name, Value, Meaning, Better string
}

// utilityRows are r's utility figures, each with what it measures.
func utilityRows(r *Report) []utilityRow {
	u := r.Utility
	q := max(len(quasiNames(r)), 1)
	perCell := ""
	if r.Input.Rows > 0 {
		perCell = fmt.Sprintf(" Here %s bits per record and quasi-identifier.", fmtNumber(u.NonUniformEntropy/float64(r.Input.Rows*q)))
	}
	return []utilityRow{
		{"Generalization intensity (loss)", fmtPct(u.Loss),
			"How much of the quasi-identifiers' detail was generalized away: per record and column, the share of the column's values its released value stands for; withheld records count as fully lost.",
			"Lower is better: 0% keeps the original values, 100% publishes only *."},
		{"Global certainty penalty (NCP)", fmtPct(u.NCP),
			"How wide each released range or group is against the column's whole range or all of its values, averaged over records and columns; withheld records count as 100%.",
			"Lower is better: 0% is exact values."},
		{"Discernibility", fmtNumber(u.Discernibility),
			"Each record is charged the size of its group (a withheld record: the input's size): large groups and suppression both cost.",
			fmt.Sprintf("Lower is better; the least possible is %s (every record alone).", fmtCount(int64(r.Input.Rows)))},
		cavgRow(r),
		{"Non-uniform entropy", fmtNumber(u.NonUniformEntropy) + " bits",
			"The information a reader lacks about each record's original values given the released ones, summed over records and quasi-identifiers." + perCell,
			"Lower is better: 0 bits is no loss."},
	}
}

// cavgRow is C_AVG's row: in persons, k counts persons while the average size counts
// records, so 1 is no longer what the model needs.
func cavgRow(r *Report) utilityRow {
	if r.Persons != nil {
		return utilityRow{"Average group size ÷ k (C_AVG)", fmtNumber(r.Utility.CAvg),
			"The released groups' average number of records divided by k. Here k counts persons and a person may have several records in a group, so C_AVG can be above 1 when every group holds exactly k persons.",
			"Lower is better."}
	}
	return utilityRow{"Average group size ÷ k (C_AVG)", fmtNumber(r.Utility.CAvg),
		"The released groups' average size divided by k.",
		"Lower is better: 1 means every group has exactly k records; above 1, groups are larger than the model needs."}
}

// lossFigure charts the two utility figures that are shares.
func lossFigure(u generalize.Metrics) figure {
	c := barChart{Title: "Detail lost to generalization and suppression", Axis: "share of the quasi-identifiers' detail lost (lower is better)", Max: 1, Tick: fmtPct,
		Rows: []barRow{
			{Label: "Generalization intensity", Bars: []bar{{Value: u.Loss, Text: fmtPct(u.Loss), Series: 1}}},
			{Label: "Certainty penalty (NCP)", Bars: []bar{{Value: u.NCP, Text: fmtPct(u.NCP), Series: 1}}},
		}}
	return c.figure("0% would be the original values; 100% would be nothing but *.")
}

// verifiedSentences say what the verifier read back from the written file.
func verifiedSentences(r *Report) []string {
	v := r.Verified
	out := []string{fmt.Sprintf("The written file was read back by an independent checker, with its own decoder and none of the search's code: it holds %s %s in %s %s, the smallest of %s records; %s %s withheld.",
		fmtCount(int64(v.Rows)), plural(int64(v.Rows), "record", "records"), fmtCount(int64(v.Classes)), plural(int64(v.Classes), "group", "groups"),
		fmtCount(int64(v.MinClass)), fmtShareOf(int64(v.Suppressed), int64(r.Input.Rows)), plural(int64(v.Suppressed), "was", "were"))}
	if r.Persons != nil {
		out[0] = personsVerified(r)
	}
	if v.Rows != r.Output.Rows || v.Suppressed != r.Suppressed || v.Classes != r.Classes {
		out = append(out, fmt.Sprintf("The search's own figures differ: %s records, %s groups, %s withheld.",
			fmtCount(int64(r.Output.Rows)), fmtCount(int64(r.Classes)), fmtCount(int64(r.Suppressed))))
	}
	return out
}

// modelChecks are the table of every model against what the verifier measured.
func modelChecks(r *Report) []checkRow {
	v := r.Verified
	if r.Persons != nil {
		return append(personsModelChecks(r), otherChecks(r)...)
	}
	if r.DifferentialPrivacy != nil {
		return append(dpChecks(r), otherChecks(r)...)
	}
	out := []checkRow{
		{"k-anonymity", fmt.Sprintf("every group at least %d records", r.Model.K), fmt.Sprintf("smallest group %s records", fmtCount(int64(v.MinClass))), v.Rows == 0 || v.MinClass >= r.Model.K},
		{"Suppression", fmt.Sprintf("at most %s records withheld (%s)", fmtCount(int64(r.Model.MaxSuppressed)), fmtPct(r.Model.SuppressionRate)), fmtShareOf(int64(v.Suppressed), int64(r.Input.Rows)) + " withheld", v.Suppressed <= r.Model.MaxSuppressed},
	}
	for _, l := range r.Model.LDiversity {
		s, ok := sensitiveOf(v, l.Column)
		row := checkRow{Model: fmt.Sprintf("%s l-diversity on %s", l.Variant, l.Column), Holds: ok}
		switch l.Variant {
		case diversity.Entropy:
			row.Required = "entropy l at least " + fmtG(l.L)
			row.Measured = fmt.Sprintf("weakest group: entropy l %s", fmtNumber(s.MinEntropyL))
			row.Holds = ok && s.MinEntropyL >= l.L-1e-9
			if l.Estimator.IsGrassberger() { // the measured figure is the plain entropy's
				row.Required = "Grassberger's entropy l at least " + fmtG(l.L)
				if l.Estimator == diversity.GrassbergerARX {
					row.Required += " (as ARX computes it)"
				}
				row.Measured = fmt.Sprintf("the verifier checked Grassberger's estimate on every group (plain entropy l of the weakest: %s)", fmtNumber(s.MinEntropyL))
				row.Holds = ok
			}
		case diversity.Recursive:
			row.Required = fmt.Sprintf("c = %s, l = %s", fmtG(l.C), fmtG(l.L))
			row.Measured = fmt.Sprintf("weakest group: %d distinct values (the verifier checked (c,l) on every group)", s.MinDistinct)
		default:
			row.Required = "at least " + fmtG(l.L) + " distinct values per group"
			row.Measured = fmt.Sprintf("weakest group: %d distinct values", s.MinDistinct)
			row.Holds = ok && float64(s.MinDistinct) >= l.L
		}
		if !ok {
			row.Measured = "not in the verifier's figures"
		}
		out = append(out, row)
	}
	for _, t := range r.Model.TCloseness {
		s, ok := sensitiveOf(v, t.Column)
		row := checkRow{Model: "t-closeness on " + t.Column, Required: fmt.Sprintf("EMD at most %s (%s)", fmtG(t.T), t.Distance),
			Measured: fmt.Sprintf("largest EMD %s", fmtNumber(s.MaxEMD)), Holds: ok && s.MaxEMD <= t.T+1e-9}
		if !ok {
			row.Measured = "not in the verifier's figures"
		}
		out = append(out, row)
	}
	for _, b := range r.Model.BetaLikeness {
		s, ok := sensitiveOf(v, b.Column)
		row := checkRow{Model: fmt.Sprintf("%s β-likeness on %s", b.Variant, b.Column), Required: fmt.Sprintf("no value's share gains more than %s relatively", fmtG(b.Beta)),
			Measured: fmt.Sprintf("largest gain %s (the verifier checked every group)", fmtNumber(s.MaxGain)), Holds: ok}
		if b.Variant == closeness.Basic {
			row.Holds = ok && s.MaxGain <= b.Beta+1e-9
		}
		if !ok {
			row.Measured = "not in the verifier's figures"
		}
		out = append(out, row)
	}
	return append(out, otherChecks(r)...)
}

// personsModelChecks are the table's rows of a release counted in persons: k,
// suppression and linking (personsChecks), then each sensitive column's models.
func personsModelChecks(r *Report) []checkRow {
	out := personsChecks(r)
	for _, l := range r.Model.LDiversity {
		s, ok := sensitiveOf(r.Verified, l.Column)
		out = append(out, personsLCheck(l, s, ok))
	}
	for _, t := range r.Model.TCloseness {
		s, ok := sensitiveOf(r.Verified, t.Column)
		out = append(out, personsTCheck(t, s, ok))
	}
	for _, b := range r.Model.BetaLikeness {
		s, ok := sensitiveOf(r.Verified, b.Column)
		out = append(out, personsBetaCheck(b, s, ok))
	}
	return out
}

// otherChecks are the table's rows after the sensitive columns' models: the
// population's, the released columns' and the risk models'.
func otherChecks(r *Report) []checkRow {
	out := populationChecks(r)
	out = append(out, profitChecks(r)...)
	out = append(out, releasedChecks(r.Verified.Released)...)
	if r.Risk != nil {
		out = append(out, riskChecks(r.Risk.Models, countedOf(r))...)
	}
	return out
}

// populationChecks are the verifier's rows for δ-presence and k-map.
func populationChecks(r *Report) []checkRow {
	var out []checkRow
	p := r.Verified.Population
	if d := r.Model.DeltaPresence; d != nil {
		row := checkRow{Model: "δ-presence", Required: fmt.Sprintf("every group's share of its population records from %s to %s", fmtPct(d.Min), fmtPct(d.Max)), Measured: "not in the verifier's figures"}
		if p != nil {
			row.Measured = fmt.Sprintf("shares from %s to %s (the verifier counted the population)", fmtPct(p.DeltaMin), fmtPct(p.DeltaMax))
			row.Holds = p.DeltaMin >= d.Min && p.DeltaMax <= d.Max
		}
		out = append(out, row)
	}
	if k := r.Model.KMap; k != nil && k.Estimator == "" {
		row := checkRow{Model: "k-map", Required: fmt.Sprintf("every group shared by at least %d population records", k.K), Measured: "not in the verifier's figures"}
		if p != nil {
			row.Measured = fmt.Sprintf("smallest: %s population records", fmtCount(p.SmallestPopulation))
			row.Holds = p.SmallestPopulation >= int64(k.K)
		}
		out = append(out, row)
	}
	return out
}

// sensitiveOf is the verifier's figures of a sensitive column.
func sensitiveOf(v Verification, column string) (SensitiveSummary, bool) {
	for _, s := range v.Sensitive {
		if s.Column == column {
			return s, true
		}
	}
	return SensitiveSummary{}, false
}

// searchSentences say what the search did.
func searchSentences(r *Report) []string {
	if p := r.Partitions; p != nil || r.Algorithm == schema.Mondrian {
		s := "Mondrian multidimensional partitioning: the records were split recursively"
		if p != nil {
			s = fmt.Sprintf("Mondrian multidimensional partitioning: the records were split %s times into %s partitions, each released as one group with its own ranges or hierarchy groups", fmtCount(int64(p.Splits)), fmtCount(int64(p.Partitions)))
		}
		return []string{s + ".", stagesSentence(r)}
	}
	if r.DifferentialPrivacy != nil {
		return dpSearchSentences(r)
	}
	l := r.Lattice
	var node []string
	for _, n := range r.Node {
		node = append(node, n.Column+" at "+LevelOf(n.Level, n.Levels))
	}
	s := fmt.Sprintf("Optimal full-domain generalization: the search looked over a lattice of %s combinations of levels, one level per quasi-identifier. %s were counted and checked against every model",
		fmtCount(int64(l.Size)), fmtCount(int64(l.Evaluated)))
	if l.MonotoneOnly > 0 {
		s += fmt.Sprintf(", %s against the models that only get easier with coarser levels", fmtCount(int64(l.MonotoneOnly)))
	}
	s += fmt.Sprintf("; %s were settled without counting, from a neighbour's result (a coarser combination of one that passes passes too); %s were skipped because they could not have less %s than the best found.",
		fmtCount(int64(l.Tagged)), fmtCount(int64(l.Bounded)), r.Metric.Name)
	out := []string{s}
	if len(node) > 0 {
		out = append(out, "It chose: "+strings.Join(node, ", ")+".")
	}
	return append(out, stagesSentence(r))
}

// stagesSentence says how long the release took.
func stagesSentence(r *Report) string {
	st := r.StagesMS
	return fmt.Sprintf("The release took %s ms: reading and encoding %s ms, search %s ms, writing %s ms, verifying %s ms.",
		fmtNumber(math.Round(st.Total)), fmtNumber(math.Round(st.Encode)), fmtNumber(math.Round(st.Search)), fmtNumber(math.Round(st.Write)), fmtNumber(math.Round(st.Verify)))
}

const releaseHTML = `
{{define "release"}}{{template "head" .Title}}
<h1>{{.Title}}</h1>
<p class="sub">For the data custodian: how likely re-identification is, before and after this release, and what the release gave up to get there.</p>

<h2>1. What was released, and under which models</h2>
<p class="lead">{{.Lead}}</p>
{{if .Warning}}<p class="warn">{{.Warning}}</p>{{end}}
{{with .Persons}}{{template "persons" .}}
{{end}}{{with .Risk}}{{template "glance" .}}{{end}}
<p>The privacy models the release meets:</p>
<ul class="models">
{{range .Models}}<li>{{.}}</li>
{{end}}</ul>
{{with .Series}}{{template "series" .}}{{end}}
<h2>{{.Sec.Risk}}. Re-identification risk before and after</h2>
{{with .Risk}}{{template "risk" .}}{{else}}<p class="empty">{{.NoRisk}}</p>{{end}}

<h2>{{.Sec.Generalize}}. What was generalized</h2>
<p>What the release publishes of each quasi-identifier: how far up its hierarchy it went, how many distinct values the release holds, and a few of them. Nothing else of the data appears in this report.</p>
<table>
<tr><th>Quasi-identifier</th><th>Generalization</th><th class="n">Distinct values released</th><th>Examples of released values</th></tr>
{{range .Generalize.Rows}}<tr><td><code>{{.Column}}</code></td><td>{{levelText .}}</td><td class="n">{{if ge .Distinct 0}}{{count .Distinct}}{{else}}—{{end}}</td><td>{{range .Examples}}<code class="ex">{{.}}</code> {{end}}</td></tr>
{{end}}</table>
<figure>{{.Generalize.Chart.Chart}}<figcaption>{{.Generalize.Chart.Caption}}</figcaption></figure>

<h2>{{.Sec.Utility}}. Utility: what the release keeps</h2>
<p>{{.Metric}}</p>
<table>
<tr><th>Figure</th><th class="n">Value</th><th>What it measures</th><th>Which way is better</th></tr>
{{range .Utility}}<tr><td>{{.Name}}</td><td class="n">{{.Value}}</td><td class="why">{{.Meaning}}</td><td class="why">{{.Better}}</td></tr>
{{end}}</table>
<figure>{{.LossChart.Chart}}<figcaption>{{.LossChart.Caption}}</figcaption></figure>

<h2>{{.Sec.Verifier}}. What the verifier checked and found</h2>
{{range .Verified}}<p>{{.}}</p>
{{end}}{{template "checks" .Checks}}
<h3>The search</h3>
{{range .Search}}<p>{{.}}</p>
{{end}}
{{template "provenance" .Prov}}
{{template "foot" .Prov}}{{end}}

{{define "persons"}}
<div class="persons">
<h3>Counted in persons</h3>
<p>{{.Intro}}</p>
<table>
<tr><th>In this release</th><th class="n">Persons</th><th class="n">Records</th></tr>
{{range .Rows}}<tr><td>{{.What}}</td><td class="n">{{.Persons}}</td><td class="n">{{.Records}}</td></tr>
{{end}}</table>
{{if .Note}}<p class="note">{{.Note}}</p>{{end}}
{{range .Linking}}<p>{{.}}</p>
{{end}}</div>
{{end}}
` + seriesHTML
