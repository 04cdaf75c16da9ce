package release

import (
	"bytes"
	"context"

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
// at its configuration line; the input's checks stop at the first. Errors match
// schema.ErrBadInput as the runs' own do.
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
// dp run) does, and fills in the lattice's heights and the record count.
func validateInput(ctx context.Context, cfg *schema.Config, in string, v *report.Validation) error {
	inFmt, err := table.InputFormat(in, cfg.Input)
	if err != nil {
		return err
	}
	src, p, err := openInput(cfg, in, "", inFmt)
	if err != nil {
		return err
	}
	defer src.Close()
	if v.Release || cfg.DP == nil {
		one, err := loadTable(ctx, p, src, false)
		if err != nil {
			return err
		}
		t := one.t
		v.Rows = t.Rows
		v.Heights = make([]int, len(t.Columns))
		for i, c := range t.Columns {
			v.Heights[i] = c.Hierarchy.Height()
		}
		if v.Release {
			if err := validateModels(cfg, one); err != nil {
				return err
			}
		}
		if err := src.Rewind(); err != nil {
			return err
		}
	}
	if cfg.DP != nil {
		if _, err := dprun.ReadInput(ctx, cfg, p.Plan, src); err != nil {
			return err
		}
	}
	v.Input = true
	return nil
}

// validateModels checks, once the input is read, what the release checks of its
// models before the search (the population a sampling fraction implies, the level
// bounds against the hierarchies' heights, an estimated k-map's k): over the research
// subset's records when there is one, as the release counts them.
func validateModels(cfg *schema.Config, one *pass1) error {
	rows := one.t.Rows
	if one.sub != nil {
		rows = len(one.sub.rows())
	}
	if cfg.Search.Algorithm == "mondrian" {
		_, err := population(cfg, rows)
		return err
	}
	_, err := ModelOptions(cfg, one.t.Columns, rows)
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
