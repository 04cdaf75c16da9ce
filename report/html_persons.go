package report

import (
	"fmt"

	"sanitizer/closeness"
	"sanitizer/diversity"
)

// A release counted in persons (privacy.privacy-unit): a patient has many admissions,
// and every model counts the persons of a group, not its records. The release page
// then says so in its models, its checks and its risk figures, and gives a box of
// persons and records side by side and, with a pseudonym, what a researcher can link.
// Nothing here names an id, a key or a data value: column names and counts only.

// counted is what a page's risk figures count: records, or the persons that a privacy
// unit's column names.
type counted struct {
	unit string // the unit's column; "" counts records
}

// countedOf is what r's figures count.
func countedOf(r *Report) counted {
	if r.Persons == nil {
		return counted{}
	}
	return counted{unit: r.Persons.Column}
}

// capital is s with its first letter upper case (s an English word of ASCII letters).
func capital(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// inPersons says whether the figures count persons.
func (c counted) inPersons() bool { return c.unit != "" }

// noun is what the figures count, in the plural: "records" or "persons".
func (c counted) noun() string {
	if c.inPersons() {
		return "persons"
	}
	return "records"
}

// one is what the figures count, in the singular.
func (c counted) one() string {
	if c.inPersons() {
		return "person"
	}
	return "record"
}

// sentence is the one sentence that says how a risk section in persons counts; "" in
// records.
func (c counted) sentence() string {
	if !c.inPersons() {
		return ""
	}
	return fmt.Sprintf("Counted in persons (%s): a group's size is the number of different persons who have records in it, however many records each has, and a person with records in several groups is counted in each of them; every risk figure below is a share of those persons, not of records.", c.unit)
}

// personsView is the box of a release counted in persons: what a person is here, the
// persons and records side by side, and what the pseudonym lets a researcher link.
type personsView struct {
	Intro   string
	Rows    []personsRow
	Note    string
	Linking []string // nil: the release holds no pseudonym
}

// personsRow is one line of persons and records side by side.
type personsRow struct{ What, Persons, Records string }

// newPersonsView is the persons box of r (nil when r does not count persons).
func newPersonsView(r *Report) *personsView {
	p := r.Persons
	if p == nil {
		return nil
	}
	held := fmt.Sprintf("The ids in %s are not in the release.", p.Column)
	if p.Pseudonym != nil {
		held = fmt.Sprintf("The ids in %s are not in the release: the column holds a keyed pseudonym of each person in their place (below).", p.Pseudonym.Column)
	}
	v := &personsView{
		Intro: fmt.Sprintf("Here a person is one value of %s: every record is about the person its %s names, and one person may have many records (a patient, many admissions). Every model of this release counts persons, not records: five records of one person in a group count as one person. Only the suppression limit counts records. %s",
			p.Column, p.Column, held),
		Rows: []personsRow{
			{"In the input", fmtCount(int64(p.Input)), fmtCount(int64(r.Input.Rows))},
			{"Released (at least one record in the file)", fmtCount(int64(p.Released)), fmtCount(int64(r.Verified.Rows))},
			{"Lost at least one record (withheld)", fmtCount(int64(p.LostSome)), fmtCount(int64(r.Verified.Suppressed))},
			{"… of whom lost all their records (not in the release)", fmtCount(int64(p.LostAll)), "—"},
			{"Released with records in several groups", fmtCount(int64(p.Several)), "—"},
		},
	}
	if r.Verified.Rows > 0 {
		v.Rows = append(v.Rows,
			personsRow{"The smallest group holds", fmtCount(int64(p.MinClass)), fmtCount(int64(r.Verified.MinClass))},
			personsRow{"A group holds on average", fmtNumber(p.AvgClass), fmtNumber(r.AvgClass)})
		v.Note = "The group of fewest persons and the group of fewest records need not be the same group. A person with records in several groups is counted in each."
	}
	if ps := p.Pseudonym; ps != nil {
		v.Linking = pseudonymSentences(ps)
	}
	return v
}

// pseudonymSentences say what a released pseudonym lets a researcher link, and whether
// releases made with its key link to each other.
func pseudonymSentences(ps *PseudonymStatement) []string {
	out := []string{fmt.Sprintf("Linking records: %s holds one keyed pseudonym per person (neither the id nor the key appears in the release or in this report). What a researcher can link: %s.", ps.Column, ps.Links)}
	switch ps.Key {
	case PseudonymKeyFile:
		out = append(out, "Links to other releases: yes. Whoever holds two releases made with this key file can join a person's records across them, a person having the same pseudonym in each; each release's models are checked on that release alone, not on releases joined by their pseudonyms.")
	case PseudonymKeyRandom:
		out = append(out, "Links to other releases: none. No other release shares this run's key, not even one made again from the same input and configuration, which draws a new key.")
	default:
		out = append(out, fmt.Sprintf("The key's source is given as %q, which this page does not know: whether releases link to each other is not stated.", string(ps.Key)))
	}
	return out
}

// personsKSentence says what k-anonymity in persons guarantees, and the groups' sizes.
func personsKSentence(r *Report, qi string) string {
	p := r.Persons
	k := fmt.Sprintf("k-anonymity in persons (k = %d): every group of records that share their %s holds records of at least %d different persons, so no one can be narrowed down to fewer than %d persons by these values, however many records each person has.",
		r.Model.K, qi, r.Model.K, r.Model.K)
	if r.Model.KDefault {
		k = fmt.Sprintf("No k was configured, so k-anonymity in persons holds only as k = 1: a group of records that share their %s may hold a single person's records; the models below are what protect them.", qi)
	}
	if r.Output.Rows > 0 {
		k += fmt.Sprintf(" The release has %s groups; the group of fewest persons holds %s %s, and a group holds on average %s persons (%s records).",
			fmtCount(int64(r.Classes)), fmtCount(int64(p.MinClass)), plural(int64(p.MinClass), "person", "persons"), fmtNumber(p.AvgClass), fmtNumber(r.AvgClass))
	}
	if p.Pseudonym != nil {
		k += fmt.Sprintf(" Multirelational k-anonymity (Nergiz, Clifton and Nergiz 2009): since a person's records can be linked by their pseudonym, the persons are grouped by the set of groups their records lie in, and every such set is shared by at least %d persons, so knowing several of a person's records still leaves at least %d persons they could be.",
			r.Model.K, r.Model.K)
	}
	return k
}

// personsLSentence says what distinct l-diversity in persons guarantees.
func personsLSentence(l LDiversityIn) string {
	return fmt.Sprintf("Distinct l-diversity in persons on %s (l = %s): in every group, each value of %s is held by at most 1/%s of the group's persons (a person holds a value when one of their records in the group has it), so knowing someone's group does not tell their %s, however many records one person has: the (k,l)-diversity of Gong et al. (2017) for several records per person.",
		l.Column, fmtG(l.L), l.Column, fmtG(l.L), l.Column)
}

// personsBetaSentence says what β-likeness in persons guarantees.
func personsBetaSentence(b BetaLikenessIn) string {
	limit := "by more than β"
	if b.Variant == closeness.Enhanced {
		limit = "by more than the smaller of β and −ln of its share (enhanced: a common value may gain less)"
	}
	return fmt.Sprintf("β-likeness in persons on %s (β = %s, %s): in every group, no value of %s is held by a share of the group's persons that exceeds the share of the input's persons who hold it %s relatively (a value held by 10%% of the input's persons may be held by at most %s of a group's persons), so a group cannot make any one value much likelier for its persons. A person counts once however many of their records hold the value.",
		b.Column, fmtG(b.Beta), b.Variant, b.Column, limit, fmtPct(0.1*(1+b.Beta)))
}

// personsTSentence says what t-closeness in persons guarantees.
func personsTSentence(t TClosenessIn) string {
	return fmt.Sprintf("t-closeness in persons on %s (t = %s): in every group, the share of its persons who hold each value of %s is set beside the share of the input's persons who hold it, and half the sum of the differences over the values is at most %s (0 is identical, 1 as different as can be), so learning someone's group tells little more about their %s than the whole table does. A person counts once however many of their records hold a value.",
		t.Column, fmtG(t.T), t.Column, fmtG(t.T), t.Column)
}

// personsChecks are the verifier's rows of k-anonymity and suppression in persons,
// and of the linking a pseudonym allows.
func personsChecks(r *Report) []checkRow {
	v, p := r.Verified, r.Persons
	out := []checkRow{
		{"k-anonymity in persons", fmt.Sprintf("every group: records of at least %d persons", r.Model.K),
			fmt.Sprintf("fewest persons in a group: %s (fewest records: %s)", fmtCount(int64(p.MinClass)), fmtCount(int64(v.MinClass))), v.Rows == 0 || p.MinClass >= r.Model.K},
		{"Suppression (in records)", fmt.Sprintf("at most %s records withheld (%s)", fmtCount(int64(r.Model.MaxSuppressed)), fmtPct(r.Model.SuppressionRate)),
			fmt.Sprintf("%s withheld; %s %s lost some of their records, %s all", fmtShareOf(int64(v.Suppressed), int64(r.Input.Rows)),
				fmtCount(int64(p.LostSome)), plural(int64(p.LostSome), "person", "persons"), fmtCount(int64(p.LostAll))), v.Suppressed <= r.Model.MaxSuppressed},
	}
	if p.Pseudonym != nil {
		out = append(out,
			checkRow{"Multirelational k-anonymity", fmt.Sprintf("every set of groups a person's records lie in shared by at least %d persons", r.Model.K),
				"the verifier grouped the released persons itself and checked every set (this report holds no figure of it)", true},
			checkRow{"Pseudonyms", "each record's pseudonym is its person's, under the key",
				"the verifier recomputed the pseudonyms from the input's ids with the key", true})
	}
	return out
}

// personsLCheck is the verifier's row of distinct l-diversity in persons.
func personsLCheck(l LDiversityIn, s SensitiveSummary, ok bool) checkRow {
	row := checkRow{Model: fmt.Sprintf("%s l-diversity in persons on %s", l.Variant, l.Column),
		Required: fmt.Sprintf("every value held by at most 1/%s of a group's persons", fmtG(l.L)), Measured: "not in the verifier's figures"}
	if ok && s.Measures.Has(MeasurePersonsL) {
		row.Measured = fmt.Sprintf("weakest group: l = %s in persons (its persons ÷ the most persons holding one value)", fmtNumber(s.MinPersonsL))
		row.Holds = l.Variant == diversity.Distinct && s.MinPersonsL >= l.L-1e-9
	}
	return row
}

// personsTCheck is the verifier's row of t-closeness in persons.
func personsTCheck(t TClosenessIn, s SensitiveSummary, ok bool) checkRow {
	row := checkRow{Model: "t-closeness in persons on " + t.Column,
		Required: fmt.Sprintf("distance at most %s on the shares of persons who hold each value (½ Σ |group's share − input's share|)", fmtG(t.T)), Measured: "not in the verifier's figures"}
	if ok {
		row.Measured = fmt.Sprintf("largest distance %s (on shares of persons)", fmtNumber(s.MaxEMD))
		row.Holds = s.MaxEMD <= t.T+1e-9
	}
	return row
}

// personsBetaCheck is the verifier's row of β-likeness in persons.
func personsBetaCheck(b BetaLikenessIn, s SensitiveSummary, ok bool) checkRow {
	row := checkRow{Model: fmt.Sprintf("%s β-likeness in persons on %s", b.Variant, b.Column),
		Required: fmt.Sprintf("no value's share of a group's persons gains more than %s relatively over its share of the input's persons", fmtG(b.Beta)), Measured: "not in the verifier's figures"}
	if ok {
		row.Measured = fmt.Sprintf("largest gain %s (on shares of persons; the verifier checked every group)", fmtNumber(s.MaxGain))
		row.Holds = b.Variant != closeness.Basic || s.MaxGain <= b.Beta+1e-9
	}
	return row
}

// personsVerified is the verifier's sentence of a release counted in persons.
func personsVerified(r *Report) string {
	v, p := r.Verified, r.Persons
	return fmt.Sprintf("The written file was read back by an independent checker, with its own decoder and none of the search's code, and its persons counted from the input's %s beside it: it holds %s %s of %s %s in %s %s; the group of fewest persons holds %s %s, the group of fewest records %s %s; %s %s withheld.",
		p.Column, fmtCount(int64(v.Rows)), plural(int64(v.Rows), "record", "records"), fmtCount(int64(p.Released)), plural(int64(p.Released), "person", "persons"),
		fmtCount(int64(v.Classes)), plural(int64(v.Classes), "group", "groups"), fmtCount(int64(p.MinClass)), plural(int64(p.MinClass), "person", "persons"),
		fmtCount(int64(v.MinClass)), plural(int64(v.MinClass), "record", "records"),
		fmtShareOf(int64(v.Suppressed), int64(r.Input.Rows)), plural(int64(v.Suppressed), "was", "were"))
}

// riskPersonsLead is the risk analysis's sentences of the input's and the release's
// persons (nil without a unit).
func riskPersonsLead(a *RiskAnalysis) []string {
	p := a.Persons
	if p == nil {
		return nil
	}
	out := []string{fmt.Sprintf("Counted in persons: the input's %s records are about %s %s, each named by %s; a person may have many records, and every risk figure below counts persons.",
		fmtCount(int64(a.Input.Rows)), fmtCount(int64(p.Input)), plural(int64(p.Input), "person", "persons"), p.Column)}
	if r := p.Release; r != nil {
		out = append(out, fmt.Sprintf("The release holds records of %s of them (the verifier counted them from the file and the input): %s with records in several groups; %s lost some of their records, %s all.",
			fmtCount(int64(r.Released)), fmtCount(int64(r.Several)), fmtCount(int64(r.LostSome)), fmtCount(int64(r.LostAll))))
	}
	return out
}

// personsMeasures are the risk measures rr holds, counted in persons (a group's size
// is its persons), in the order a reader meets them.
func personsMeasures(rr *RiskReport) []measure {
	c := counted{unit: "persons"}
	out := []measure{
		{Name: "Highest prosecutor risk", Axis: riskAxis,
			Sentence: "Prosecutor risk is the chance that someone who knows a person is in the file picks out their records from the quasi-identifiers: 1 ÷ the persons of the group their records are in. The highest is that of the persons in the group of fewest persons.",
			value:    func(m *RiskMeasures) (float64, string, bool) { return m.HighestRisk, fmtRisk(m.HighestRisk), true }},
		{Name: "Average prosecutor risk", Axis: riskAxis,
			Sentence: "The prosecutor risk averaged over the groups' persons (groups ÷ persons, a person counted in each group they have records in): the share of them an attacker who tried every one would pick out correctly. The dashed lines mark 5% and 9%, average risks that regulators' guidance often accepts for releases to researchers.",
			Refs:     []refLine{{0.05, "5%"}, {0.09, "9%"}},
			value:    func(m *RiskMeasures) (float64, string, bool) { return m.AverageRisk, fmtRisk(m.AverageRisk), true }},
	}
	for i, t := range rr.Thresholds {
		out = append(out, recordsAtRisk(i, t, c))
	}
	out = append(out, measure{Name: "Sample uniqueness", Axis: c.shareAxis(),
		Sentence: "The share of persons who are alone in their group: the only person with records in it, so anyone who knows those values of a person in the file finds their records.",
		value: func(m *RiskMeasures) (float64, string, bool) {
			return m.SampleUniqueness, fmtPct(m.SampleUniqueness), true
		}})
	if hasPopulation(rr) {
		out = append(out, populationMeasures(rr)...)
	}
	return out
}
