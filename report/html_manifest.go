package report

import (
	"fmt"
	"strconv"
	"strings"

	"sanitizer/schema"
)

// The DP manifest's page: the run's budget, each output's budget, mechanism and noise,
// the aggregates' statistics and the synthetic records, and the dataset's budget
// spent over time.

// manifestView is the DP manifest's page.
type manifestView struct {
	Title      string
	Lead       []string
	Outputs    []outputRow
	EpsChart   figure
	Aggregates []aggregateView
	Synthetic  []string
	Ledger     *ledgerView
	NoLedger   string
	Prov       provenance
}

// outputRow is one output in the table of outputs.
type outputRow struct {
	Name, File, Kind, Columns, Cells, Mechanism, Epsilon, Delta, Scale, HalfWidth, Post string
}

// aggregateView is an aggregate output's statistics.
type aggregateView struct {
	Name, Sentence string
	Stats          []statRow
}

// statRow is one statistic of an aggregate.
type statRow struct{ Stat, Epsilon, Delta, HalfWidth string }

// ledgerView is the dataset's account.
type ledgerView struct {
	Sentences  []string
	Eps, Delta figure
	History    []spendRow
}

// spendRow is one run's spend.
type spendRow struct{ Time, Epsilon, Delta, Outputs string }

// manifestPage is the view of m.
func manifestPage(m *Manifest) manifestView {
	v := manifestView{
		Title:    "Differentially private outputs" + titleSuffix(m.Dataset),
		Lead:     manifestLead(m),
		EpsChart: epsilonFigure(m),
		Prov:     newProvenance(m.Tool, m.Version, m.ConfigDigest, nil, m.CreatedUTC),
	}
	for _, o := range m.Outputs {
		v.Outputs = append(v.Outputs, newOutputRow(o))
		if o.Kind == "aggregate" {
			v.Aggregates = append(v.Aggregates, newAggregateView(o))
		}
		if s := o.Synthetic; s != nil {
			v.Synthetic = append(v.Synthetic, fmt.Sprintf("%s (%s): %s synthetic records made by %s from %s noisy marginals measured in %s rounds (zCDP ρ = %s). The records are drawn from a model fitted to the noisy marginals: none is a real person's record.",
				o.Name, o.File, fmtCount(int64(s.Rows)), strings.ToUpper(s.Method.String()), fmtCount(int64(len(s.Measured))), fmtCount(int64(s.Rounds)), fmtScale(s.Rho)))
		}
	}
	if m.Ledger != nil {
		l := newLedgerView(m)
		v.Ledger = &l
	} else {
		v.NoLedger = "This run kept no ledger: nothing here says what else has been spent on this dataset. Without one, the budget of repeated runs adds up unchecked."
	}
	return v
}

// manifestLead says what the run published and what its budget means.
func manifestLead(m *Manifest) []string {
	out := []string{
		fmt.Sprintf("This run published %s %s, spending ε = %s and δ = %s in all: the outputs' budgets add up (sequential composition), while the cells of one output, which hold different people's records, share theirs.",
			fmtCount(int64(len(m.Outputs))), plural(int64(len(m.Outputs)), "output", "outputs"), fmtG(m.Epsilon), fmtSci(m.Delta)),
		"ε bounds how much one person's records can change what is published: the smaller, the more private (at ε = 1, one person changes the odds of any published result by at most a factor of e ≈ 2.7). δ is the small chance that this bound fails; 0 is pure ε-differential privacy.",
	}
	switch m.Neighbours {
	case schema.AddRemove:
		out = append(out, "Neighbours: add-remove. The guarantee holds between any two datasets that differ by one person's records, added or removed.")
	case schema.ReplaceOne:
		out = append(out, "Neighbours: replace-one. The guarantee holds between any two datasets that differ by one person's records replaced by someone else's.")
	case "":
	default:
		out = append(out, "Neighbours: "+m.Neighbours.String()+".")
	}
	if u := m.PrivacyUnit; u != nil {
		s := fmt.Sprintf("The privacy unit is %s: the guarantee protects everything one %s contributes", u.Column, u.Column)
		var bounds []string
		if u.MaxRowsPerUnit > 0 {
			bounds = append(bounds, fmt.Sprintf("at most %s rows", fmtCount(int64(u.MaxRowsPerUnit))))
		}
		if u.MaxCellsPerUnit > 0 {
			bounds = append(bounds, fmt.Sprintf("at most %s cells of an output", fmtCount(int64(u.MaxCellsPerUnit))))
		}
		if len(bounds) > 0 {
			s += fmt.Sprintf(", which is bounded to %s (rows beyond are dropped at random, seed %d)", joinWords(bounds), u.Seed)
		}
		out = append(out, s+".")
	}
	return out
}

// newOutputRow is o in the table of outputs.
func newOutputRow(o ManifestOutput) outputRow {
	r := outputRow{Name: o.Name, File: o.File, Kind: o.Kind, Columns: strings.Join(o.Columns, ", "), Cells: fmtCount(int64(o.Cells)),
		Mechanism: o.Mechanism, Epsilon: fmtG(o.Epsilon), Delta: fmtSci(o.Delta), Scale: "—", HalfWidth: "—", Post: strings.Join(o.Post, ", ")}
	if o.NoiseScale > 0 {
		sym := "b"
		if strings.Contains(o.Mechanism, "gauss") {
			sym = "σ"
		}
		r.Scale = sym + " = " + fmtScale(o.NoiseScale)
	}
	switch {
	case o.Kind == "aggregate":
		r.HalfWidth = aggregateHalfWidth(o)
	case o.HalfWidth95 > 0:
		r.HalfWidth = "± " + fmtScale(o.HalfWidth95)
	}
	if r.Post == "" {
		r.Post = "none"
	}
	if len(o.Marginals) > 0 {
		var ms []string
		for _, m := range o.Marginals {
			ms = append(ms, strings.Join(m, " × "))
		}
		r.Columns = strings.Join(ms, "; ")
	}
	return r
}

// aggregateHalfWidth is an aggregate's half-widths per statistic.
func aggregateHalfWidth(o ManifestOutput) string {
	var parts []string
	for _, s := range o.Stats {
		if s.HalfWidth95 > 0 {
			parts = append(parts, s.Stat.String()+" ± "+fmtScale(s.HalfWidth95))
		}
	}
	if len(parts) == 0 {
		return "depends on the data"
	}
	return strings.Join(parts, "; ")
}

// newAggregateView is an aggregate's statistics.
func newAggregateView(o ManifestOutput) aggregateView {
	s := fmt.Sprintf("%s (%s): statistics of %s", o.Name, o.File, orNone(o.Value))
	if len(o.Bounds) == 2 {
		s += fmt.Sprintf(", each value clamped to [%s, %s]", fmtG(o.Bounds[0]), fmtG(o.Bounds[1]))
	}
	if len(o.Columns) > 0 {
		s += ", per group of " + joinWords(o.Columns)
	}
	if len(o.Ranks) > 0 {
		var rs []string
		for _, r := range o.Ranks {
			rs = append(rs, fmtG(r))
		}
		s += "; quantile ranks " + strings.Join(rs, ", ")
	}
	v := aggregateView{Name: o.Name, Sentence: s + ". A mean's or a quantile's error depends on the data, so it has no fixed half-width."}
	for _, st := range o.Stats {
		hw := "depends on the data"
		if st.HalfWidth95 > 0 {
			hw = "± " + fmtScale(st.HalfWidth95)
		}
		v.Stats = append(v.Stats, statRow{st.Stat.String(), fmtG(st.Epsilon), fmtSci(st.Delta), hw})
	}
	return v
}

// epsilonFigure charts each output's ε.
func epsilonFigure(m *Manifest) figure {
	c := barChart{Title: "Privacy budget (ε) spent per output", Axis: "ε (smaller is more private)", Tick: fmtTick, Width: wideWidth, Empty: "the run published no output."}
	for _, o := range m.Outputs {
		text := "ε = " + fmtG(o.Epsilon)
		if m.Epsilon > 0 {
			text += " (" + fmtPct(o.Epsilon/m.Epsilon) + " of the run)"
		}
		c.Rows = append(c.Rows, barRow{Label: o.Name, Bars: []bar{{Value: o.Epsilon, Text: text, Series: 1}}})
	}
	return c.figure(fmt.Sprintf("The outputs' ε add up to the run's ε = %s.", fmtG(m.Epsilon)))
}

// fmtTick is an axis tick's number: at most four significant digits.
func fmtTick(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }

// newLedgerView is the dataset's account and its history.
func newLedgerView(m *Manifest) ledgerView {
	l := m.Ledger
	v := ledgerView{Sentences: []string{
		fmt.Sprintf("The ledger %s records every spend on the dataset%s and refuses a run that would exceed its total. With this run (recorded %s), it has spent ε = %s of %s (%s) and δ = %s of %s.",
			l.File, titleSuffixQuoted(m.Dataset), l.Recorded, fmtG(l.EpsilonSpent), fmtG(l.EpsilonTotal), pctOf(l.EpsilonSpent, l.EpsilonTotal), fmtSci(l.DeltaSpent), fmtSci(l.DeltaTotal)),
	}}
	if l.EpsilonTotal > l.EpsilonSpent {
		v.Sentences = append(v.Sentences, fmt.Sprintf("ε = %s is left for later releases of this dataset.", fmtTick(l.EpsilonTotal-l.EpsilonSpent)))
	} else if l.EpsilonTotal > 0 {
		v.Sentences = append(v.Sentences, "The budget is spent: the ledger will refuse any further release of this dataset.")
	}
	var times []string
	var eps, delta []float64
	anyDelta := l.DeltaTotal > 0
	for _, h := range l.History {
		times, eps, delta = append(times, h.Time), append(eps, h.Epsilon), append(delta, h.Delta)
		anyDelta = anyDelta || h.Delta > 0
		v.History = append(v.History, spendRow{h.Time, fmtG(h.Epsilon), fmtSci(h.Delta), strings.Join(h.Outputs, ", ")})
	}
	const empty = "the ledger holds no spend on this dataset."
	v.Eps = figure{Chart: stepChart{Title: "ε spent on the dataset over time", Axis: "ε spent so far", Times: times, Spends: eps,
		Limit: l.EpsilonTotal, Fmt: fmtTick, Empty: empty}.html(),
		Caption: "Each step is one run's spend; the dashed line is the dataset's total ε, which no run may cross."}
	v.Delta = figure{Chart: stepChart{Title: "δ spent on the dataset over time", Axis: "δ spent so far", Times: times, Spends: delta,
		Limit: l.DeltaTotal, Fmt: fmtSci, Empty: empty}.html(),
		Caption: "The same for δ, against the dataset's total δ."}
	if len(times) == 0 {
		v.Eps.Caption, v.Delta.Caption = "", ""
	}
	if !anyDelta {
		v.Delta = figure{Chart: emptyChart("δ spent on the dataset over time", "no δ was spent: every output is pure ε-differentially private.")}
	}
	return v
}

// titleSuffixQuoted is ` "dataset"`, or nothing when unnamed. The name is isolated
// already: strconv.Quote would show its isolate's marks as escapes.
func titleSuffixQuoted(dataset string) string {
	if dataset == "" {
		return ""
	}
	return ` "` + dataset + `"`
}

// pctOf is part / whole as a percentage ("n/a" for no whole).
func pctOf(part, whole float64) string {
	if whole <= 0 {
		return "no total set"
	}
	return fmtPct(part/whole) + " of the total"
}

const manifestHTML = `
{{define "manifest"}}{{template "head" .Title}}
<h1>{{.Title}}</h1>
<p class="sub">For the data custodian: how much privacy budget each published output spent, how noisy it is, and what is left.</p>
<h2>1. What was published, and the guarantee</h2>
{{range .Lead}}<p>{{.}}</p>
{{end}}
<h2>2. The outputs</h2>
<p><strong>Noise scale</strong>: the Laplace b or Gaussian σ of the noise added to every cell. <strong>95% half-width</strong>: 95% of the published cells lie within ± this many of their true value (before post-processing such as rounding or clamping).</p>
{{if .Outputs}}<table>
<tr><th>Output</th><th>File</th><th>Kind</th><th>Columns</th><th class="n">Cells</th><th>Mechanism</th><th class="n">ε</th><th class="n">δ</th><th class="n">Noise scale</th><th class="n">95% half-width</th><th>Post-processing</th></tr>
{{range .Outputs}}<tr><td>{{.Name}}</td><td><code>{{.File}}</code></td><td>{{.Kind}}</td><td>{{.Columns}}</td><td class="n">{{.Cells}}</td><td>{{.Mechanism}}</td><td class="n">{{.Epsilon}}</td><td class="n">{{.Delta}}</td><td class="n">{{.Scale}}</td><td class="n">{{.HalfWidth}}</td><td>{{.Post}}</td></tr>
{{end}}</table>{{end}}
<figure>{{.EpsChart.Chart}}<figcaption>{{.EpsChart.Caption}}</figcaption></figure>
{{range .Aggregates}}<h3>Aggregate {{.Name}}</h3>
<p>{{.Sentence}}</p>
<table>
<tr><th>Statistic</th><th class="n">ε</th><th class="n">δ</th><th class="n">95% half-width</th></tr>
{{range .Stats}}<tr><td>{{.Stat}}</td><td class="n">{{.Epsilon}}</td><td class="n">{{.Delta}}</td><td class="n">{{.HalfWidth}}</td></tr>
{{end}}</table>
{{end}}{{if .Synthetic}}<h3>Synthetic records</h3>
{{range .Synthetic}}<p>{{.}}</p>
{{end}}{{end}}
<h2>3. The dataset's budget over time</h2>
{{with .Ledger}}{{range .Sentences}}<p>{{.}}</p>
{{end}}<div class="figs">
<figure>{{.Eps.Chart}}<figcaption>{{.Eps.Caption}}</figcaption></figure>
<figure>{{.Delta.Chart}}{{if .Delta.Caption}}<figcaption>{{.Delta.Caption}}</figcaption>{{end}}</figure>
</div>
{{if .History}}<table>
<tr><th>Run (UTC)</th><th class="n">ε</th><th class="n">δ</th><th>Outputs</th></tr>
{{range .History}}<tr><td>{{.Time}}</td><td class="n">{{.Epsilon}}</td><td class="n">{{.Delta}}</td><td>{{.Outputs}}</td></tr>
{{end}}</table>{{end}}{{else}}<p class="empty">{{.NoLedger}}</p>{{end}}
{{template "provenance" .Prov}}
{{template "foot" .Prov}}{{end}}
`
