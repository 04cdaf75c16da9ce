package dprun

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"sanitizer/dphist"
	"sanitizer/fault"
	"sanitizer/job"
	"sanitizer/report"
	"sanitizer/schema"
	"sanitizer/table"
)

// Output is one dp output as known before any record is read: the columns its cells
// are made of with their cells' labels (the declared domain, and "other" when the
// output asks for it), how it is noised, and its manifest entry. Whoever counts it,
// this machine or Beam's workers, maps every record to its partitions (Partition) and
// turns the noisy values into its table with the same post-processing (Result).
type Output struct {
	Spec   schema.DPOutput
	Sizes  []int      // per column of Manifest.Columns, its number of cells
	Labels [][]string // per column, its cells' labels
	// Subsets is a marginals output's marginals, as column indices, in order.
	Subsets [][]int
	// Mechanism is the noise of every count of a histogram or marginals output.
	Mechanism dphist.Mechanism
	// Aggregate is an aggregate output's statistics and their budgets.
	Aggregate dphist.Aggregate
	// Manifest is the output's entry; Post is set once its table is made.
	Manifest report.ManifestOutput
	doms     []*dpDomain
	offsets  []int64 // marginals: each marginal's first partition
}

// Describe is every output of the configuration's dp section, described from the
// configuration, the declared domains and the column types of p, never from the
// data. Outputs with too many cells or marginals are refused as bad input.
func Describe(cfg *schema.Config, p *job.Plan) ([]*Output, error) {
	pos := make(map[string]int, len(p.Header))
	for i, h := range p.Header {
		pos[h] = i
	}
	doms := map[string]*dpDomain{}
	for _, o := range cfg.DP.Outputs {
		for _, name := range outputColumns(o) {
			if doms[name] != nil {
				continue
			}
			at, ok := pos[name]
			if !ok {
				return nil, fault.BadInput("%s: column %q: not in the input", p.Input, name)
			}
			dom, err := newDPDomain(cfg, cfg.Column(name), p.Types[at], p.Hier)
			if err != nil {
				return nil, err
			}
			doms[name] = dom
		}
	}
	if err := checkSizes(cfg, doms); err != nil {
		return nil, err
	}
	outs := make([]*Output, len(cfg.DP.Outputs))
	for i, o := range cfg.DP.Outputs {
		out, err := describe(cfg, o, doms)
		if err != nil {
			return nil, err
		}
		outs[i] = out
	}
	return outs, nil
}

// describe is output o, its columns' domains in doms.
func describe(cfg *schema.Config, o schema.DPOutput, doms map[string]*dpDomain) (*Output, error) {
	out := &Output{Spec: o, Manifest: report.ManifestOutput{Name: o.Name, File: o.Name + "." + dpFormat(o).String(), Mechanism: o.Mechanism.String(),
		Epsilon: o.Epsilon, Delta: o.Delta, Neighbours: cfg.DP.Neighbours, Other: o.Other, Columns: outputColumns(o), Post: []string{}}}
	mo := &out.Manifest
	for _, name := range mo.Columns {
		dom := doms[name]
		labels := dom.labels
		if o.Other {
			labels = append(slices.Clip(labels), "other")
		}
		out.doms = append(out.doms, dom)
		out.Sizes = append(out.Sizes, len(labels))
		out.Labels = append(out.Labels, labels)
	}
	if u := cfg.DP.PrivacyUnit; u != nil {
		mo.Contributions = &report.ManifestContributed{CellsPerUnit: u.MaxCellsPerUnit}
		if u.MaxCellsPerUnit > 0 {
			mo.Contributions.RowsPerCell = max(u.MaxRowsPerUnit, 1)
		} else {
			mo.Contributions.RowsPerUnit = u.MaxRowsPerUnit
		}
	}
	var err error
	switch {
	case o.Histogram != nil:
		mo.Kind = "histogram"
		err = out.describeHistogram(cfg)
	case o.Marginals != nil:
		mo.Kind = "marginals"
		err = out.describeMarginals(cfg)
	case o.Synthetic != nil:
		mo.Kind = "synthetic" // described by its run (syntheticOutput)
	default:
		mo.Kind = "aggregate"
		err = out.describeAggregate(cfg)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (out *Output) describeHistogram(cfg *schema.Config) error {
	n, err := dphist.Cells(out.Sizes, maxDPCells)
	if err != nil {
		return cfg.Errorf(outputKey(cfg, out.Spec.Name), "%w", err)
	}
	out.Manifest.Cells = n
	out.Mechanism, err = mechanismFor(cfg, out.Spec, &out.Manifest, 1)
	return err
}

func (out *Output) describeMarginals(cfg *schema.Config) error {
	o, mo := out.Spec, &out.Manifest
	for i, l := range out.Labels {
		if slices.Contains(l, "*") {
			return cfg.Errorf("columns."+mo.Columns[i]+".domain", "the value \"*\" stands for a column outside a marginal in output %q", o.Name)
		}
	}
	out.Subsets = dphist.Subsets(len(out.Sizes), o.Marginals.Way)
	var err error
	if out.Mechanism, err = mechanismFor(cfg, o, mo, len(out.Subsets)); err != nil {
		return err
	}
	for _, s := range out.Subsets {
		subSizes, names := make([]int, len(s)), make([]string, len(s))
		for j, a := range s {
			subSizes[j], names[j] = out.Sizes[a], mo.Columns[a]
		}
		n, err := dphist.Cells(subSizes, maxDPCells)
		if err != nil {
			return cfg.Errorf(outputKey(cfg, o.Name)+".marginals", "marginal %v: %w", names, err)
		}
		out.offsets = append(out.offsets, int64(mo.Cells))
		mo.Cells += n
		mo.Marginals = append(mo.Marginals, names)
	}
	return nil
}

func (out *Output) describeAggregate(cfg *schema.Config) error {
	o, mo := out.Spec, &out.Manifest
	a := o.Aggregate
	groups, err := dphist.Cells(out.Sizes, maxDPCells)
	if err != nil {
		return cfg.Errorf(outputKey(cfg, o.Name), "%w", err)
	}
	mo.Cells, mo.Value, mo.Bounds, mo.Ranks = groups, a.Column, a.Bounds[:], a.Quantiles
	// The library's sensitivity arguments are per group; a unit capped to L0 groups
	// and L∞ rows in each changes the groups' results by at most what they assume. With
	// rows capped in total (no cell cap) a unit's rows may spread over groups, but
	// every statistic's noise is calibrated to a total (L1 or L2) over the groups that
	// the one-group bound (1, rows) already covers.
	l0, linf := dphist.UnitSensitivity(cfg.DP)
	out.Aggregate = dphist.Aggregate{Kind: o.Mechanism, Epsilon: o.Epsilon, Delta: o.Delta, L0: l0, LInf: linf,
		ReplaceOne: cfg.DP.Neighbours == schema.ReplaceOne, Stats: a.Stats, Lower: a.Bounds[0], Upper: a.Bounds[1], Ranks: a.Quantiles}
	if mo.Stats, err = out.Aggregate.Budgets(); err != nil {
		return cfg.Errorf(outputKey(cfg, o.Name), "%w", err)
	}
	return nil
}

// Partitions is the number of the output's partitions, numbered from 0: its cells
// (a histogram), its groups (an aggregate) or every marginal's cells, the marginals one
// after the other.
func (out *Output) Partitions() int64 { return int64(out.Manifest.Cells) }

// Cell is the cell of value v (canonical text; null: a null without a null-as value)
// in column c of the output: the declared domain's, or "other" when the output has it;
// false when v is outside and the output has no "other".
func (out *Output) Cell(c int, v string, null bool) (int32, bool) {
	if !null {
		if x, ok := out.doms[c].cell(v); ok {
			return x, true
		}
	}
	if out.Spec.Other {
		return int32(out.Sizes[c] - 1), true
	}
	return 0, false
}

// Keys calls emit with every partition a record whose columns fall in cells belongs
// to: one for a histogram or an aggregate, one per marginal for marginals.
func (out *Output) Keys(cells []int32, emit func(int64)) {
	if out.Subsets == nil {
		emit(mixedRadix(cells, seq(len(cells)), out.Sizes))
		return
	}
	for k, s := range out.Subsets {
		emit(out.offsets[k] + mixedRadix(cells, s, out.Sizes))
	}
}

// mixedRadix is the index of the cell of columns attrs in their cross product, the
// last varying fastest.
func mixedRadix(cells []int32, attrs, sizes []int) int64 {
	var key int64
	for _, a := range attrs {
		key = key*int64(sizes[a]) + int64(cells[a])
	}
	return key
}

// Noisy is an output's noisy values, one per partition: Counts for a histogram or
// marginals, Groups for an aggregate.
type Noisy struct {
	Counts []float64
	Groups []dphist.GroupResult
}

// table is the output's table of noisy values, post-processed as the output asks.
func (out *Output) table(n Noisy) (*dpTable, error) {
	if want := out.Partitions(); int64(len(n.Counts)+len(n.Groups)) != want {
		return nil, fault.Internalf("output %s: %d noisy values for %d partitions", out.Spec.Name, len(n.Counts)+len(n.Groups), want)
	}
	switch out.Manifest.Kind {
	case "histogram":
		return out.histogramTable(n.Counts)
	case "marginals":
		return out.marginalsTable(n.Counts)
	case "aggregate":
		return out.aggregateTable(n.Groups)
	}
	return nil, fault.Internalf("output %s: no table for a %s output", out.Spec.Name, out.Manifest.Kind)
}

// histogramTable is a histogram's table: a row per cell, its labels and count.
func (out *Output) histogramTable(counts []float64) (*dpTable, error) {
	sizes, labels := out.Sizes, out.Labels
	ms, applied, err := postProcess(sizes, []dphist.Marginal{{Attrs: seq(len(sizes)), Cells: counts}}, out.Spec.Post)
	if err != nil {
		return nil, err
	}
	out.Manifest.Post = applied
	whole := !slices.Contains(applied, schema.PostConsistent.String()) || slices.Contains(applied, schema.PostRound.String())
	t := &dpTable{}
	for _, name := range out.Manifest.Columns {
		t.cols = append(t.cols, table.OutColumn{Name: name, Type: schema.String})
	}
	t.cols = append(t.cols, countColumn(whole))
	rec := make([]string, len(sizes)+1)
	for c, v := range ms[0].Cells {
		cellLabels(rec[:len(sizes)], c, seq(len(sizes)), sizes, labels)
		rec[len(sizes)] = formatCount(v, whole)
		t.add(rec...)
	}
	return t, nil
}

// marginalsTable is a marginals output's table: one row per cell of every marginal,
// the columns outside the marginal written "*". counts holds every marginal's cells,
// the marginals in order.
func (out *Output) marginalsTable(counts []float64) (*dpTable, error) {
	sizes, labels, mo := out.Sizes, out.Labels, &out.Manifest
	ms := make([]dphist.Marginal, len(out.Subsets))
	for k, s := range out.Subsets {
		end := int64(len(counts))
		if k+1 < len(out.offsets) {
			end = out.offsets[k+1]
		}
		ms[k] = dphist.Marginal{Attrs: s, Cells: counts[out.offsets[k]:end]}
	}
	ms, applied, err := postProcess(sizes, ms, out.Spec.Post)
	if err != nil {
		return nil, err
	}
	mo.Post = applied
	whole := !slices.Contains(applied, schema.PostConsistent.String()) || slices.Contains(applied, schema.PostRound.String())
	t := &dpTable{cols: []table.OutColumn{{Name: "marginal", Type: schema.String}}}
	for _, name := range mo.Columns {
		t.cols = append(t.cols, table.OutColumn{Name: name, Type: schema.String})
	}
	t.cols = append(t.cols, countColumn(whole))
	rec := make([]string, len(sizes)+2)
	for k, mg := range ms {
		rec[0] = strings.Join(mo.Marginals[k], ",")
		for c, v := range mg.Cells {
			for i := range sizes {
				rec[i+1] = "*"
			}
			cellLabels(rec[1:], c, mg.Attrs, sizes, labels)
			rec[len(sizes)+1] = formatCount(v, whole)
			t.add(rec...)
		}
	}
	return t, nil
}

// aggregateTable is an aggregate's table: a row per group, its labels and statistics.
func (out *Output) aggregateTable(res []dphist.GroupResult) (*dpTable, error) {
	a, sizes := out.Spec.Aggregate, out.Sizes
	clamp := slices.Contains(out.Spec.Post, schema.PostClamp)
	if clamp {
		out.Manifest.Post = []string{schema.PostClamp.String()}
	}
	t := &dpTable{}
	for _, name := range out.Manifest.Columns {
		t.cols = append(t.cols, table.OutColumn{Name: name, Type: schema.String})
	}
	for _, s := range a.Stats {
		switch s {
		case schema.StatCount:
			t.cols = append(t.cols, table.OutColumn{Name: "count", Type: schema.Integer})
		case schema.StatSum, schema.StatMean:
			t.cols = append(t.cols, table.OutColumn{Name: s.String(), Type: schema.Float})
		case schema.StatQuantiles:
			for _, r := range a.Quantiles {
				t.cols = append(t.cols, table.OutColumn{Name: "quantile_" + table.FormatFloat(r), Type: schema.Float})
			}
		default:
			return nil, fault.Internalf("output %s: statistic %q", out.Spec.Name, s)
		}
	}
	rec := make([]string, 0, len(t.cols))
	for g, gr := range res {
		rec = rec[:len(sizes)]
		cellLabels(rec, g, seq(len(sizes)), sizes, out.Labels)
		for _, s := range a.Stats {
			switch s {
			case schema.StatCount:
				c := gr.Count
				if clamp && c < 0 {
					c = 0
				}
				rec = append(rec, table.FormatInt(c))
			case schema.StatSum:
				rec = append(rec, table.FormatFloat(gr.Sum))
			case schema.StatMean:
				rec = append(rec, table.FormatFloat(gr.Mean))
			case schema.StatQuantiles:
				for _, q := range gr.Quantiles {
					rec = append(rec, table.FormatFloat(q))
				}
			}
		}
		t.add(rec...)
	}
	return t, nil
}

// mechanismFor fills the manifest's sensitivity and noise fields for counts.
func mechanismFor(cfg *schema.Config, o schema.DPOutput, mo *report.ManifestOutput, parts int) (dphist.Mechanism, error) {
	l0, linf := dphist.CountSensitivity(cfg.DP, parts)
	m := dphist.Mechanism{Kind: o.Mechanism, Epsilon: o.Epsilon, Delta: o.Delta, L0: l0, LInf: linf}
	if err := m.Check(); err != nil {
		return m, cfg.Errorf(outputKey(cfg, o.Name), "%w", err)
	}
	hw, err := m.HalfWidth95()
	if err != nil {
		return m, fmt.Errorf("output %s: %w", o.Name, err)
	}
	mo.L0, mo.LInf = l0, linf
	mo.L1, mo.L2 = float64(l0*linf), math.Sqrt(float64(l0))*float64(linf)
	mo.NoiseScale, mo.HalfWidth95 = m.Scale(), hw
	return m, nil
}

// outputKey is the configuration's key path of the dp output named name:
// "dp.outputs[i]" ("dp.outputs" when no output has the name).
func outputKey(cfg *schema.Config, name string) string {
	for i, o := range cfg.DP.Outputs {
		if o.Name == name {
			return fmt.Sprintf("dp.outputs[%d]", i)
		}
	}
	return "dp.outputs"
}

// outsideError names the first record (row) of column name whose value lies outside
// its declared domain (a null when null), never the value, at the configuration's
// FILE:LINE of the column's domain.
func outsideError(p *job.Plan, row int, null bool, name, output string) error {
	what := "a value outside the declared domain"
	if null {
		what = "a null, which is outside the declared domain"
	}
	return p.Config.Errorf("columns."+name+".domain", "%s: column %q: %s (declare it in columns.%s.domain, or set other: true on output %q)", p.At(row), name, what, name, output)
}

// aggregatedNullError names the record (row) of aggregated column name that holds a
// null, at the configuration's FILE:LINE of the column.
func aggregatedNullError(p *job.Plan, row int, name string) error {
	return p.Config.Errorf("columns."+name+".null-as", "%s: column %q: null value in an aggregated column (set columns.%s.null-as, or drop the rows before the run)", p.At(row), name, name)
}
