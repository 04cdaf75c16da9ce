// Package validate checks a configuration as a release and a dp run would check it,
// and, when it names an input, the input against it, writing nothing (sanitize
// validate). It runs the runs' own checks: release.CheckConfig, dprun.CheckConfig and
// dprun.CheckBudget on the configuration, release.CheckInput and dprun.CheckInput on the
// input. It imports
// the packages of the runs (release, dprun) and what they share (job, table,
// generalize, report, schema); nothing imports it but cmd/sanitize.
package validate

import (
	"bytes"
	"context"
	"maps"
	"slices"

	"sanitizer/dprun"
	"sanitizer/generalize"
	"sanitizer/job"
	"sanitizer/release"
	"sanitizer/report"
	"sanitizer/schema"
	"sanitizer/table"
)

// Validate checks a configuration as a release and a dp run would: its settings, its
// hierarchy files and, when opt.Input (or input.path) names an input, the input's
// columns and types, that every quasi-identifier and listed sensitive value is covered
// by its hierarchy, and that every dp column value lies in its declared domain. It
// writes nothing. cfgErr is the error of a configuration parsed as a draft
// (schema.ParseDraft): with it, the draft's hierarchy files are checked and nothing
// else. The error lists every error found before the input is read (cfgErr's, the
// hierarchy files', the release's and dp run's checks of the configuration), each
// at its configuration line; when those pass, every error the input shows that
// validateInput can collect, each at the line of the key it is about. Errors match
// fault.ErrBadInput as the runs' own do.
func Validate(ctx context.Context, cfg *schema.Config, cfgErr error, opt job.Options) (*report.Validation, error) {
	var errs schema.ErrorList
	errs.Add(cfgErr)
	hier, err := job.ReadHierFiles(cfg)
	errs.Add(err)
	parseHierFiles(cfg, hier, &errs)
	if cfgErr != nil {
		return nil, errs.Err()
	}
	v := &report.Validation{Release: cfg.Privacy.K > 0 || cfg.Privacy.DifferentialPrivacy != nil, Quasi: len(cfg.Quasi()), Rows: -1}
	if v.Release || cfg.DP == nil {
		errs.Add(release.CheckConfig(cfg))
	}
	if cfg.DP != nil && (len(cfg.DP.Outputs) > 0 || cfg.Privacy.DifferentialPrivacy == nil) { // else the totals of a release's --ledger
		if err := dprun.CheckConfig(cfg, opt); err != nil {
			errs.Add(err)
		} else {
			_, err := dprun.CheckBudget(cfg, opt)
			errs.Add(err)
		}
		v.DP = len(cfg.DP.Outputs)
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	in := cfg.Input.Path
	if opt.Input != "" {
		in = opt.Input
	}
	if in == "" {
		v.Heights = fileHeights(cfg, hier)
		setLattice(v)
		return v, nil
	}
	if err := validateInput(ctx, cfg, in, v); err != nil {
		return nil, err
	}
	setLattice(v)
	if v.Release && v.LatticeTooLarge && cfg.Search.Algorithm != schema.Mondrian {
		return nil, cfg.Errorf("columns", "the generalization lattice of the quasi-identifiers has more nodes than the search considers: use fewer quasi-identifiers or shallower hierarchies")
	}
	return v, nil
}

// validateInput reads the input as pass 1 of a release (and, for a dp section, as the
// dp run) does, and fills in the lattice's heights and the record count. It reports
// what it can in one reading: every column the input lacks or holds in another type
// (the checks of the other columns go on without it), each column's first value its
// hierarchy or null-as does not allow, each protected column's distinct values against
// its requirements, the level bounds and the population, and each dp column's first
// value outside its domain.
func validateInput(ctx context.Context, cfg *schema.Config, in string, v *report.Validation) error {
	inFmt, err := table.InputFormat(in, cfg.Input)
	if err != nil {
		return err
	}
	var errs schema.ErrorList
	work, err := usableConfig(cfg, in, inFmt)
	if errs.Add(err); work == nil {
		return errs.Err()
	}
	src, p, err := job.OpenInput(work, in, inFmt)
	if err != nil {
		errs.Add(err)
		return errs.Err()
	}
	defer src.Close()
	if v.Release || cfg.DP == nil {
		var err error
		v.Rows, v.Heights, err = release.CheckInput(ctx, p, src, v.Release)
		errs.Add(err)
		if err := src.Rewind(); err != nil {
			errs.Add(err)
			return errs.Err()
		}
	}
	if work.DP != nil {
		errs.Add(dprun.CheckInput(ctx, p, src))
	}
	if err := errs.Err(); err != nil {
		return err
	}
	v.Input = true
	return nil
}

// usableConfig checks the input's columns against cfg (job.CheckColumns) and returns
// cfg, or, when some are at fault, cfg without them (withoutColumns) and their errors:
// nil when no configured column is usable.
func usableConfig(cfg *schema.Config, in string, inFmt schema.Format) (*schema.Config, error) {
	names := make([]string, len(cfg.Columns))
	for i, c := range cfg.Columns {
		names[i] = c.Name
	}
	src, err := table.Open(in, inFmt, cfg.Input.CSV, names)
	if err != nil {
		return nil, err
	}
	cols := src.Columns()
	src.Close()
	faulty, err := job.CheckColumns(cfg, in, cols)
	switch {
	case err == nil:
		return cfg, nil
	case len(faulty) == len(cfg.Columns):
		return nil, err
	}
	return withoutColumns(cfg, faulty), err
}

// withoutColumns is cfg without the columns gone, for validate to check the others
// against the input: what names one of them goes too (a level bound or weight, the
// research subset and the population models measured against it; the dp section when
// an output or the privacy unit names one); input columns it does not name are
// dropped. The requirements on a column that is gone stay (their list indexes name
// the keys): the release's checks skip them (protectedColumns).
func withoutColumns(cfg *schema.Config, gone []string) *schema.Config {
	out := *cfg
	out.Unlisted = schema.UnlistedDrop
	isGone := func(name string) bool { return slices.Contains(gone, name) }
	out.Columns = slices.DeleteFunc(slices.Clone(cfg.Columns), func(c schema.Column) bool { return isGone(c.Name) })
	without := func(m map[string]int) map[string]int {
		if m == nil {
			return nil
		}
		m = maps.Clone(m)
		maps.DeleteFunc(m, func(k string, _ int) bool { return isGone(k) })
		return m
	}
	out.Search.MinLevels, out.Search.MaxLevels = without(cfg.Search.MinLevels), without(cfg.Search.MaxLevels)
	if w := cfg.Search.Weights; w != nil {
		out.Search.Weights = maps.Clone(w)
		maps.DeleteFunc(out.Search.Weights, func(k string, _ float64) bool { return isGone(k) })
	}
	if pr := &out.Privacy; pr.Subset != nil && isGone(pr.Subset.Column) {
		pr.Subset, pr.DeltaPresence = nil, nil
		if pr.KMap != nil && pr.KMap.Estimator == nil {
			pr.KMap = nil
		}
	}
	if d := cfg.DP; d != nil {
		if d.PrivacyUnit != nil && isGone(d.PrivacyUnit.Column) {
			out.DP = nil
		}
		for _, o := range d.Outputs {
			if slices.ContainsFunc(dprun.OutputColumns(o), isGone) {
				out.DP = nil
			}
		}
	}
	return &out
}

// parseHierFiles parses every hierarchy file of hier (those that could be read), so
// that a malformed one is found without an input; errs gets each one's error at the
// line of its columns.<name>.hierarchy.file key.
func parseHierFiles(cfg *schema.Config, hier *job.HierFiles, errs *schema.ErrorList) {
	parsed := map[string]bool{}
	for _, c := range cfg.Columns {
		if c.Hierarchy == nil || c.Hierarchy.File == "" || parsed[c.Hierarchy.File] {
			continue
		}
		parsed[c.Hierarchy.File] = true
		f, err := hier.File(c.Hierarchy.File)
		if err != nil {
			continue // ReadHierFiles has reported it
		}
		if _, err := generalize.ReadHierarchy(bytes.NewReader(f.Data), c.Hierarchy.File); err != nil {
			errs.Add(cfg.Wrap(job.HierFileKey(c.Name), err))
		}
	}
}

// fileHeights is every quasi-identifier's number of levels when all of them have a
// hierarchy file; nil when one is built from the data.
func fileHeights(cfg *schema.Config, hier *job.HierFiles) []int {
	quasi := cfg.Quasi()
	heights := make([]int, len(quasi))
	for i, c := range quasi {
		if c.Hierarchy == nil || c.Hierarchy.File == "" {
			return nil
		}
		h, err := hier.Hierarchy(c.Hierarchy.File)
		if err != nil {
			return nil // parseHierFiles has reported it
		}
		heights[i] = h.Height()
	}
	return heights
}

// setLattice sets v's lattice size from its heights.
func setLattice(v *report.Validation) {
	if len(v.Heights) == 0 {
		return
	}
	l := generalize.NewLattice(v.Heights)
	v.Lattice, v.LatticeTooLarge = l.Size(), l.TooLarge()
}
