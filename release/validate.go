package release

import (
	"bytes"
	"context"
	"maps"
	"slices"

	"sanitizer/dprun"
	"sanitizer/generalize"
	"sanitizer/job"
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
	v := &report.Validation{Release: cfg.Privacy.K > 0, Quasi: len(cfg.Quasi()), Rows: -1}
	if v.Release || cfg.DP == nil {
		errs.Add(checkReleaseConfig(cfg))
	}
	if cfg.DP != nil {
		errs.Add(dprun.CheckConfig(cfg, opt))
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
	if v.Release && v.LatticeTooLarge && cfg.Search.Algorithm != "mondrian" {
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
	src, p, err := openInput(work, in, "", inFmt)
	if err != nil {
		errs.Add(err)
		return errs.Err()
	}
	defer src.Close()
	p.collect = true
	if v.Release || cfg.DP == nil {
		errs.Add(validateRelease(ctx, p, src, v))
		if err := src.Rewind(); err != nil {
			errs.Add(err)
			return errs.Err()
		}
	}
	if work.DP != nil {
		data, err := dprun.ReadInput(ctx, work, p.Plan, src)
		if errs.Add(err); err == nil {
			errs.Add(data.CheckDomains(p.Plan))
		}
	}
	if err := errs.Err(); err != nil {
		return err
	}
	v.Input = true
	return nil
}

// validateRelease reads the input as pass 1 of a release does, each column to its
// first error (a CSV's other kept columns too, as far as pass 1 holds them), and checks
// the release's models against it.
func validateRelease(ctx context.Context, p *plan, src table.Source, v *report.Validation) error {
	if len(p.Quasi) == 0 {
		return nil // every quasi-identifier is at fault: reported by usableConfig
	}
	one, err := loadTable(ctx, p, src, true) // held: a CSV's other kept columns checked as pass 2 would
	if one == nil {
		return err
	}
	var errs schema.ErrorList
	errs.Add(err)
	t := one.t
	v.Rows = t.Rows
	v.Heights = make([]int, len(t.Columns))
	for i, c := range t.Columns {
		v.Heights[i] = c.Hierarchy.Height()
	}
	if v.Release {
		errs.Add(validateModels(p.Config, one))
	}
	return errs.Err()
}

// usableConfig checks the input's columns against cfg (job.CheckColumns) and returns
// cfg, or, when some are at fault, cfg without them (withoutColumns) and their errors:
// nil when no configured column is usable.
func usableConfig(cfg *schema.Config, in, inFmt string) (*schema.Config, error) {
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
	out.Unlisted = "drop"
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
		if pr.KMap != nil && pr.KMap.Estimator == "" {
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

// validateModels checks, once the input is read, what the release checks of its
// models before the search (the population a sampling fraction implies, the level
// bounds against the hierarchies' heights, an estimated k-map's k): over the research
// subset's records when there is one, as the release counts them. The level bounds
// are checked when the population is wrong too.
func validateModels(cfg *schema.Config, one *pass1) error {
	rows := one.t.Rows
	if one.sub != nil {
		rows = len(one.sub.rows())
	}
	_, err := population(cfg, rows)
	switch {
	case cfg.Search.Algorithm == "mondrian":
		return err
	case err != nil:
		var errs schema.ErrorList
		errs.Add(err)
		_, _, err = LevelBounds(cfg, one.t.Columns)
		errs.Add(err)
		return errs.Err()
	}
	_, err = ModelOptions(cfg, one.t.Columns, rows)
	return err
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

// hierarchyKey is the configuration's key path of the named column's hierarchy: its
// file's key when it has one.
func hierarchyKey(cfg *schema.Config, name string) string {
	if c := cfg.Column(name); c != nil && c.Hierarchy != nil && c.Hierarchy.File != "" {
		return job.HierFileKey(name)
	}
	return "columns." + name + ".hierarchy"
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
