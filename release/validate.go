package release

import (
	"bytes"
	"context"
	"fmt"

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
// writes nothing. Errors match schema.ErrBadInput as the runs' own do.
func Validate(ctx context.Context, cfg *schema.Config, opt job.Options) (*report.Validation, error) {
	v := &report.Validation{Release: cfg.Privacy.K > 0, Quasi: len(cfg.Quasi()), Rows: -1}
	if v.Release || cfg.DP == nil {
		if err := checkReleaseConfig(cfg); err != nil {
			return nil, err
		}
	}
	if cfg.DP != nil {
		if err := dprun.CheckConfig(cfg, opt); err != nil {
			return nil, err
		}
		v.DP = len(cfg.DP.Outputs)
	}
	hier, err := job.ReadHierFiles(cfg)
	if err != nil {
		return nil, err
	}
	if err := parseHierFiles(cfg, hier); err != nil {
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
		return nil, schema.BadInput("columns: the generalization lattice of the quasi-identifiers has more nodes than the search considers: use fewer quasi-identifiers or shallower hierarchies")
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

// parseHierFiles parses every hierarchy file the configuration names, so that a
// malformed one is found without an input.
func parseHierFiles(cfg *schema.Config, hier *job.HierFiles) error {
	for _, c := range cfg.Columns {
		if c.Hierarchy == nil || c.Hierarchy.File == "" {
			continue
		}
		f, err := hier.File(c.Hierarchy.File)
		if err != nil {
			return err
		}
		if _, err := generalize.ReadHierarchy(bytes.NewReader(f.Data), c.Hierarchy.File); err != nil {
			return fmt.Errorf("columns.%s.hierarchy.file: %w", c.Name, err)
		}
	}
	return nil
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
