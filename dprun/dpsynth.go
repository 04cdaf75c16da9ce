package dprun

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"

	"sanitizer/dphist"
	"sanitizer/report"
	"sanitizer/schema"
	"sanitizer/table"
)

// syntheticOutput draws synthetic records (AIM or MST) from the output's columns.
func syntheticOutput(ctx context.Context, cfg *schema.Config, o schema.DPOutput, mo *report.ManifestOutput, cols [][]int32, sizes []int, labels [][]string, keep []bool, data *dpInput) (*dpTable, error) {
	s := o.Synthetic
	workload, err := syntheticWorkload(s)
	if err != nil {
		return nil, cfg.Errorf(outputKey(cfg, o.Name)+".synthetic.workload", "%w", err)
	}
	l1, l2 := syntheticSensitivity(cfg)
	var seed [8]byte
	if _, err := rand.Read(seed[:]); err != nil {
		return nil, err
	}
	syn := dphist.Synth{
		Method: s.Method, Sizes: sizes, Workload: workload, Epsilon: o.Epsilon, Delta: o.Delta,
		L1: l1, L2: l2, MaxModelSize: int64(s.MaxModelSize), Rows: s.Rows,
		Seed: binary.LittleEndian.Uint64(seed[:]),
	}
	recs, rep, err := dphist.Synthesize(ctx, syn, cols, keep)
	if err != nil {
		return nil, fmt.Errorf("output %s: %w", o.Name, err)
	}
	for i := range rep.Measured {
		m := &rep.Measured[i]
		for _, a := range m.Columns {
			m.Names = append(m.Names, mo.Columns[a])
		}
	}
	mo.Synthetic = rep
	mo.Mechanism = "exponential selection + gaussian measurements (" + s.Method.String() + ", zCDP)"
	mo.L1, mo.L2 = l1, l2
	mo.Cells = rep.Rows
	mo.Post = []string{"graphical-model estimation", "sampling", "refinement towards the model's workload marginals"}

	t := &dpTable{}
	outLabels := make([][]string, len(cols))
	for i, name := range mo.Columns {
		var typ schema.Type
		outLabels[i], typ = syntheticLabels(cfg.Column(name), labels[i], o.Other)
		t.cols = append(t.cols, table.OutColumn{Name: name, Type: typ})
	}
	rec := make([]string, len(cols))
	for r := range rep.Rows {
		for i := range cols {
			rec[i] = outLabels[i][recs[i][r]]
		}
		t.add(rec...)
	}
	return t, nil
}

// syntheticWorkload is the output's workload as ascending column-index cliques.
func syntheticWorkload(s *schema.Synthetic) ([][]int, error) {
	if s.Way > 0 {
		if binomial(len(s.Columns), s.Way) > maxMarginals {
			return nil, fmt.Errorf("more than %d marginals", maxMarginals)
		}
		return dphist.Subsets(len(s.Columns), s.Way), nil
	}
	var out [][]int
	for _, w := range s.Workload {
		c := make([]int, len(w))
		for j, name := range w {
			c[j] = slices.Index(s.Columns, name)
		}
		slices.Sort(c)
		out = append(out, c)
	}
	return out, nil
}

// syntheticSensitivity bounds how much one privacy unit changes one marginal's counts,
// in L1 and L2. A unit contributes c rows (1 without a privacy unit; else its kept rows,
// L0·L∞ of its bound), which may all fall into one cell: L1 = L2 = c when it is added or
// removed. Replacing it removes c rows and adds c others, both non-negative vectors:
// L1 ≤ 2c, and L2 ≤ √2·c (‖u − v‖² ≤ ‖u‖² + ‖v‖² when u, v ≥ 0).
func syntheticSensitivity(cfg *schema.Config) (l1, l2 float64) {
	l0, linf := dphist.UnitSensitivity(cfg.DP)
	c := float64(l0 * linf)
	if cfg.DP.Neighbours == schema.ReplaceOne {
		return 2 * c, math.Sqrt2 * c
	}
	return c, c
}

// syntheticLabels is how a synthetic column's values are written and typed: a list
// domain of a typed column keeps its type, an integer range of width 1 is written as
// its integers; bins, hierarchy levels and domains with an "other" cell are strings.
func syntheticLabels(c *schema.Column, labels []string, other bool) ([]string, schema.Type) {
	d := c.Domain
	switch {
	case other:
		return labels, schema.String
	case len(d.Values) > 0:
		return labels, c.Type
	case d.Range != nil && c.Type == schema.Integer && d.Width == 1:
		out := make([]string, len(labels))
		for i, l := range labels {
			lo, _, _ := strings.Cut(strings.TrimPrefix(l, "["), ",")
			out[i] = lo
		}
		return out, schema.Integer
	}
	return labels, schema.String
}
