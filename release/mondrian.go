package release

import (
	"context"
	"math"
	"slices"

	"sanitizer/fault"
	"sanitizer/generalize"
	"sanitizer/schema"
)

// mondrianValues gives every numeric quasi-identifier (type integer, float, date) the
// value of each leaf of its hierarchy; categorical ones get nil. A leaf that is not a
// value of its column's type is bad input: Mondrian splits the column as numbers.
func mondrianValues(p *plan, t *generalize.Table) ([][]float64, error) {
	values, bad := leafValues(p.Config, t.Columns, false)
	if bad >= 0 {
		c := t.Columns[bad]
		return nil, p.Config.Errorf(hierarchyKey(p.Config, c.Name), "a value of its hierarchy (%s) is not a %s: Mondrian splits it as a number", c.Hierarchy.Source(), p.Config.Column(c.Name).Type)
	}
	return values, nil
}

// leafValues gives every numeric quasi-identifier of cols (type integer, float, date in
// cfg) the value of each leaf of its hierarchy, and nil to the others. A numeric column
// with a leaf that is not a value of its type (or, when finite is set, is infinite)
// gets nil too; bad is the first such column (−1: none).
func leafValues(cfg *schema.Config, cols []generalize.Column, finite bool) (values [][]float64, bad int) {
	values, bad = make([][]float64, len(cols)), -1
	for j, c := range cols {
		typ := cfg.Column(c.Name).Type
		switch typ {
		case schema.Integer, schema.Float, schema.Date:
		default:
			continue
		}
		h := c.Hierarchy
		v := make([]float64, h.Leaves())
		for l := range v {
			f, ok := orderKey(typ, h.Value(0, int32(l)))
			if !ok || (finite && math.IsInf(f, 0)) {
				v = nil
				if bad < 0 {
					bad = j
				}
				break
			}
			v[l] = f
		}
		values[j] = v
	}
	return values, bad
}

// mondrianRelease partitions the table (values: see mondrianValues) and returns what the rest of the release path
// needs: a Result for the report and metadata (no node: Levels nil), every record's
// partition, and each partition's released quasi-identifier values.
func mondrianRelease(ctx context.Context, t *generalize.Table, values [][]float64, metric schema.Metric, opt generalize.Options) (*generalize.Result, *generalize.Mondrian, *partLabels, error) {
	mres, err := generalize.MondrianSearch(ctx, t, values, opt)
	if err != nil {
		return nil, nil, nil, err
	}
	res := &generalize.Result{Metric: metric, Classes: len(mres.Sizes)}
	for _, n := range mres.Sizes {
		if res.MinClass == 0 || n < res.MinClass {
			res.MinClass = n
		}
	}
	res.MinPersons = res.MinClass
	if mres.Persons != nil {
		res.MinPersons = slices.Min(mres.Persons)
	}
	labels := &partLabels{dict: make([][]string, len(t.Columns)), idx: mres.Covers.Index}
	for j, dict := range mres.Covers.Dict {
		h := t.Columns[j].Hierarchy
		labels.dict[j] = make([]string, len(dict))
		for x, cv := range dict {
			if cv.Level < 0 {
				labels.dict[j][x] = "[" + h.Value(0, cv.Lo) + "," + h.Value(0, cv.Hi) + "]"
			} else {
				labels.dict[j][x] = h.Value(int(cv.Level), cv.Code)
			}
		}
	}
	return res, mres, labels, nil
}

// partLabels is every partition's released quasi-identifier values, each distinct
// value held once: at 10M records Mondrian makes about 750,000 partitions, and a string
// per partition and column took about as much memory as the records' codes.
type partLabels struct {
	dict [][]string // per quasi-identifier: its distinct released values
	idx  []int32    // idx[p·len(dict)+j]: partition p's value of quasi-identifier j in dict[j]
}

// mondrianValue is a Mondrian release's value under metric: its utility's loss,
// discernibility or NCP, or, as it suppresses nothing, DM* (which then equals DM), the
// average class size over its partitions, and the non-uniform entropy for both
// entropies (ARX's non-monotonic entropy adds only the suppressed records' entropy,
// and the base both share is the utility measures' NonUniformEntropy with nothing
// suppressed: Σ f(x)·log2(F/f(x)) over the records, F the records of the leaves their
// released value covers; plan.go refuses a gs-factor with Mondrian). A metric Mondrian
// does not report (plan.go refuses them) is an internal error.
func mondrianValue(metric schema.Metric, u generalize.Metrics, rows, partitions int) (float64, error) {
	switch metric {
	case schema.MetricLoss:
		return u.Loss, nil
	case schema.MetricDiscernibility, schema.MetricDiscernibilityStar:
		return u.Discernibility, nil
	case schema.MetricEntropy, schema.MetricEntropyMonotone:
		return u.NonUniformEntropy, nil
	case schema.MetricNCP:
		return u.NCP, nil
	case schema.MetricAECS:
		if partitions == 0 {
			return 0, nil
		}
		return float64(rows) / float64(partitions), nil
	}
	return 0, fault.Internalf("a Mondrian release has no value of metric %q", metric)
}
