package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// The risk analysis's page (sanitize risk): the input's risk and its release's, the
// risk models' checks, and how much each quasi-identifier sets the records apart.

// analysisView is the risk analysis's page.
type analysisView struct {
	Title  string
	Lead   []string
	Risk   riskView
	Checks []checkRow
	Quasi  quasiView
	Prov   provenance
}

// quasiView is the quasi-identifier analysis: a table, charts, and what drives the
// risk.
type quasiView struct {
	Rows                    []quasiRow
	Distinction, Separation figure
	Drivers                 string
	Records                 string // counted in persons: that these figures count records
}

// quasiRow is one quasi-identifier or pair.
type quasiRow struct{ Columns, Distinction, Separation string }

// maxQuasiBars is the most quasi-identifiers and pairs a chart shows (the table shows
// them all).
const maxQuasiBars = 15

// riskPage is the view of a.
func riskPage(a *RiskAnalysis) analysisView {
	v := analysisView{
		Title: "Re-identification risk" + titleSuffix(a.Dataset),
		Risk:  newRiskView(&a.Risk, riskCounted(a)),
		Quasi: newQuasiView(a.Risk.QuasiIdentifiers),
		Prov:  newProvenance(a.Tool, a.Version, a.ConfigDigest, a.HierarchyDigests, a.CreatedUTC),
	}
	v.Checks = v.Risk.Checks
	if a.Persons != nil {
		v.Quasi.Records = "Unlike the risk figures above, distinction and separation count records, not persons: a person with many records weighs as many."
	}
	v.Lead = append(v.Lead, fmt.Sprintf("%s holds %s %s. Its quasi-identifiers, the columns an attacker could know about a person, are %s.",
		a.Input.Path, fmtCount(int64(a.Input.Rows)), plural(int64(a.Input.Rows), "record", "records"), orNone(joinWords(a.Quasi))))
	if r := a.Release; r != nil {
		v.Lead = append(v.Lead, fmt.Sprintf("Its release %s (%s) holds %s %s, counted from the file by the verifier.",
			r.Path, r.Format, fmtCount(int64(r.Rows)), plural(int64(r.Rows), "record", "records")))
	} else {
		v.Lead = append(v.Lead, "No release was given: the figures are the input's alone.")
	}
	v.Lead = append(v.Lead, riskPersonsLead(a)...)
	return v
}

// riskCounted is what a's risk figures count.
func riskCounted(a *RiskAnalysis) counted {
	if a.Persons == nil {
		return counted{}
	}
	return counted{unit: a.Persons.Column}
}

// orNone is s, or "none" when empty.
func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// newQuasiView sorts qs by distinction, highest first, and says which drive the risk.
func newQuasiView(qs []AttributeRisk) quasiView {
	sorted := slices.Clone(qs)
	slices.SortStableFunc(sorted, func(a, b AttributeRisk) int { return cmp.Compare(b.Distinction, a.Distinction) })
	var v quasiView
	const empty = "no quasi-identifier was analysed."
	dist := barChart{Title: "Distinction: distinct values per record", Axis: "distinct values ÷ records (100% = every record its own value)", Tick: fmtPct, Width: wideWidth, Empty: empty}
	sep := barChart{Title: "Separation: pairs of records told apart", Axis: "share of all pairs of records whose values differ", Max: 1, Tick: fmtPct, Width: wideWidth, Empty: empty}
	for i, q := range sorted {
		name := strings.Join(q.Columns, " + ")
		v.Rows = append(v.Rows, quasiRow{name, fmtPct(q.Distinction), fmtPct(q.Separation)})
		if i < maxQuasiBars {
			dist.Rows = append(dist.Rows, barRow{Label: name, Bars: []bar{{Value: q.Distinction, Text: fmtPct(q.Distinction), Series: 0}}})
			sep.Rows = append(sep.Rows, barRow{Label: name, Bars: []bar{{Value: q.Separation, Text: fmtPct(q.Separation), Series: 1}}})
		}
	}
	order := "Highest distinction first."
	if len(sorted) > maxQuasiBars {
		order = fmt.Sprintf("The %d with the highest distinction, highest first; the table gives all %d.", maxQuasiBars, len(sorted))
	}
	v.Distinction = dist.figure(order + " The scale ends at a round number above the largest bar, not at 100%.")
	v.Separation = sep.figure("In the same order as above, on a scale of 0 to 100%.")
	v.Drivers = drivers(sorted)
	return v
}

// drivers says which quasi-identifiers drive the risk: the single column and the pair
// with the highest distinction.
func drivers(sorted []AttributeRisk) string {
	var single, pair *AttributeRisk
	for i := range sorted {
		switch n := len(sorted[i].Columns); {
		case n == 1 && single == nil:
			single = &sorted[i]
		case n == 2 && pair == nil:
			pair = &sorted[i]
		}
	}
	if single == nil {
		return ""
	}
	s := fmt.Sprintf("The column that drives the risk most is %s: on its own it has %s distinct values per 100 records and tells apart %s of all pairs of records.",
		single.Columns[0], strings.TrimSuffix(fmtPct(single.Distinction), "%"), fmtPct(single.Separation))
	if pair != nil {
		s += fmt.Sprintf(" Of the pairs, %s and %s together set records apart the most (%s distinct combinations per 100 records).",
			pair.Columns[0], pair.Columns[1], strings.TrimSuffix(fmtPct(pair.Distinction), "%"))
	}
	return s + " Columns at the top of the table are the first to generalize, or to leave out of the quasi-identifiers a recipient could know."
}

const analysisHTML = `
{{define "analysis"}}{{template "head" .Title}}
<h1>{{.Title}}</h1>
<p class="sub">For the data custodian: how likely re-identification is in the input{{if .Risk.After}} and in its release{{end}}, and which columns make it so.</p>
<h2>1. What was measured</h2>
{{range .Lead}}<p class="lead">{{.}}</p>
{{end}}{{template "glance" .Risk}}
<h2>2. Re-identification risk{{if .Risk.After}} before and after{{end}}</h2>
{{template "risk" .Risk}}
{{if .Checks}}<h3>The configuration's risk models, on the release</h3>
{{template "checks" .Checks}}{{end}}

<h2>3. Which quasi-identifiers drive the risk</h2>
<p><strong>Distinction</strong>: a column's (or pair's) distinct values divided by the records, so 100% means every record has a value of its own. <strong>Separation</strong>: the share of all pairs of records whose values differ, so 100% means no two records look alike.</p>
{{if .Quasi.Records}}<p>{{.Quasi.Records}}</p>
{{end}}{{if .Quasi.Drivers}}<p class="lead">{{.Quasi.Drivers}}</p>{{end}}
<figure>{{.Quasi.Distinction.Chart}}<figcaption>{{.Quasi.Distinction.Caption}}</figcaption></figure>
<figure>{{.Quasi.Separation.Chart}}<figcaption>{{.Quasi.Separation.Caption}}</figcaption></figure>
{{if .Quasi.Rows}}<table>
<tr><th>Quasi-identifiers</th><th class="n">Distinction</th><th class="n">Separation</th></tr>
{{range .Quasi.Rows}}<tr><td><code>{{.Columns}}</code></td><td class="n">{{.Distinction}}</td><td class="n">{{.Separation}}</td></tr>
{{end}}</table>{{end}}
{{template "provenance" .Prov}}
{{template "foot" .Prov}}{{end}}
`
