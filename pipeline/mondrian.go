package pipeline

import (
	"context"

	"sanitizer/generalize"
	"sanitizer/schema"
)

// mondrianValues gives every numeric quasi-identifier (type integer, float, date) the
// value of each leaf of its hierarchy; categorical ones get nil.
func mondrianValues(p *plan, t *generalize.Table) ([][]float64, error) {
	values := make([][]float64, len(t.Columns))
	for j, c := range t.Columns {
		switch p.quasiCfg[j].Type {
		case schema.Integer, schema.Float, schema.Date:
		default:
			continue
		}
		h := c.Hierarchy
		values[j] = make([]float64, h.Leaves())
		for l := range values[j] {
			v, ok := orderKey(p.quasiCfg[j].Type, h.Value(0, int32(l)))
			if !ok {
				return nil, schema.BadInput("columns.%s: a value of its hierarchy (%s) is not a %s: Mondrian splits it as a number", c.Name, h.Source(), p.quasiCfg[j].Type)
			}
			values[j][l] = v
		}
	}
	return values, nil
}

// mondrianRelease partitions the table (values: see mondrianValues) and returns what the rest of the release path
// needs: a Result for the report and metadata (no node: Levels nil), every record's
// partition, and each partition's released quasi-identifier values.
func mondrianRelease(ctx context.Context, t *generalize.Table, values [][]float64, metric string, opt generalize.Options) (*generalize.Result, *generalize.Mondrian, [][]string, error) {
	mres, err := generalize.MondrianSearch(ctx, t, values, opt)
	if err != nil {
		return nil, nil, nil, err
	}
	res := &generalize.Result{Metric: metric, Classes: len(mres.Sizes)}
	labels := make([][]string, len(mres.Covers))
	for i, covers := range mres.Covers {
		if res.MinClass == 0 || mres.Sizes[i] < res.MinClass {
			res.MinClass = mres.Sizes[i]
		}
		labels[i] = make([]string, len(covers))
		for j, cv := range covers {
			h := t.Columns[j].Hierarchy
			if cv.Level < 0 {
				labels[i][j] = "[" + h.Value(0, cv.Lo) + "," + h.Value(0, cv.Hi) + "]"
			} else {
				labels[i][j] = h.Value(cv.Level, cv.Code)
			}
		}
	}
	return res, mres, labels, nil
}
