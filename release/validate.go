package release

import (
	"context"

	"sanitizer/job"
	"sanitizer/schema"
	"sanitizer/table"
)

// CheckInput is what validate checks of a release once its input is open: it reads
// src (planned as p by job.OpenInput) as pass 1 of a release does, each column to its
// first error (a CSV's other kept columns too, as far as pass 1 holds them), and, with
// models, checks the release's models against it (validateModels). rows is the
// input's record count and heights each quasi-identifier's number of levels; rows is
// −1 and heights nil when no quasi-identifier could be read.
func CheckInput(ctx context.Context, p *job.Plan, src table.Source, models bool) (rows int, heights []int, err error) {
	if len(p.Quasi) == 0 {
		return -1, nil, nil // every quasi-identifier is at fault: validate reports it
	}
	rp := releasePlan(p, "")
	rp.collect = true
	one, err := loadTable(ctx, rp, src, true) // held: a CSV's other kept columns checked as pass 2 would
	if one == nil {
		return -1, nil, err
	}
	var errs schema.ErrorList
	errs.Add(err)
	t := one.t
	heights = make([]int, len(t.Columns))
	for i, c := range t.Columns {
		heights[i] = c.Hierarchy.Height()
	}
	if models {
		errs.Add(validateModels(rp, one))
	}
	return t.Rows, heights, errs.Err()
}

// validateModels checks, once the input is read, what the release checks of its
// models before the search (the population a sampling fraction implies, the level
// bounds against the hierarchies' heights, an estimated k-map's k): over the research
// subset's records when there is one, as the release counts them. The level bounds
// are checked when the population is wrong too.
func validateModels(p *plan, one *pass1) error {
	cfg := p.Config
	rows := one.t.Rows
	if one.sub != nil {
		rows = len(one.sub.rows())
	}
	_, err := population(cfg, rows)
	switch {
	case cfg.Search.Algorithm == schema.Mondrian:
		return err
	case err != nil:
		var errs schema.ErrorList
		errs.Add(err)
		_, _, err = levelBounds(cfg, one.t.Columns)
		errs.Add(err)
		return errs.Err()
	}
	_, err = modelOptions(cfg, one.t.Columns, rows)
	return err
}

// hierarchyKey is the configuration's key path of the named column's hierarchy: its
// file's key when it has one.
func hierarchyKey(cfg *schema.Config, name string) string {
	if c := cfg.Column(name); c != nil && c.Hierarchy != nil && c.Hierarchy.File != "" {
		return job.HierFileKey(name)
	}
	return "columns." + name + ".hierarchy"
}
