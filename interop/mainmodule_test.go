package interop

// This file is the only one that uses the main module's Go API (the release and
// schema packages): it makes the releases and turns a configuration into the plain
// setup the checks read. When those packages change, only this file changes.

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"sanitizer/gen"
	"sanitizer/job"
	"sanitizer/release"
	"sanitizer/schema"
)

// releaseTime is the release time the tests give the pipeline; the release records it
// as sanitize.created_utc.
var releaseTime = time.Date(2024, 3, 1, 12, 30, 0, 0, time.UTC)

// setup is what a release's configuration says, in the terms the checks use.
type setup struct {
	K          int
	Columns    []column // as the configuration lists them
	LDiversity []lRequirement
	TCloseness []tRequirement
	CSVSep     rune // the input's CSV separator
}

// column is one configured column.
type column struct {
	Name      string
	Role      string // identifier | quasi | sensitive | insensitive
	Type      string // the declared type; "" when the configuration declares none
	Hierarchy hierarchy
}

// hierarchy is a quasi-identifier's hierarchy: a file, or one of the builders.
type hierarchy struct {
	File      string    // absolute path of an ARX hierarchy file
	Intervals []float64 // interval widths, finest first
	Mask      *maskSpec
	Date      []string // month | quarter | year | decade, finest first
}

// maskSpec is a masking hierarchy: level j replaces j characters with '*'.
type maskSpec struct {
	FromRight bool
	Max       int
}

// lRequirement is an l-diversity requirement of the configuration.
type lRequirement struct {
	Column, Variant string
	L               float64
}

// tRequirement is a t-closeness requirement of the configuration.
type tRequirement struct {
	Column, Distance string
	T                float64
}

// released is a Parquet release the pipeline wrote for a test, with its JSON report.
type released struct {
	setup
	Input, Output, Report string
}

// releaseParquet releases input under the configuration at cfgPath, as Parquet
// whatever the configuration's output format, into a new temporary folder with its
// JSON report beside it. The pipeline itself verifies the release before it publishes.
func releaseParquet(t testing.TB, cfgPath, input string) *released {
	t.Helper()
	cfg, err := schema.Load(cfgPath)
	if err != nil {
		t.Fatalf("loading %s: %v", cfgPath, err)
	}
	cfg.Output.Format = "parquet"
	dir := t.TempDir()
	r := &released{setup: setupOf(cfg), Input: input,
		Output: filepath.Join(dir, "release.parquet"), Report: filepath.Join(dir, "report.json")}
	opt := job.Options{Input: input, Output: r.Output, Report: r.Report, Now: func() time.Time { return releaseTime }}
	if _, err := release.Release(context.Background(), cfg, opt); err != nil {
		t.Fatalf("releasing %s with %s: %v", input, cfgPath, err)
	}
	return r
}

// generateHospital writes the main module's synthetic hospital table of rows records,
// seeded by seed, to path (the format from its extension).
func generateHospital(t testing.TB, path string, rows int, seed uint64) {
	t.Helper()
	if err := gen.Hospital(path, "", rows, seed, job.Options{}); err != nil {
		t.Fatalf("generating %s: %v", path, err)
	}
}

// setupOf translates a loaded configuration.
func setupOf(cfg *schema.Config) setup {
	s := setup{K: cfg.Privacy.K, CSVSep: cfg.Input.CSV.Separator}
	for _, c := range cfg.Columns {
		col := column{Name: c.Name, Role: string(c.Role)}
		if c.TypeDeclared {
			col.Type = string(c.Type)
		}
		if h := c.Hierarchy; h != nil {
			col.Hierarchy = hierarchy{Intervals: h.Intervals}
			for _, u := range h.Date {
				col.Hierarchy.Date = append(col.Hierarchy.Date, u.String())
			}
			if h.File != "" { // already resolved against the configuration's folder
				col.Hierarchy.File, _ = filepath.Abs(h.File)
			}
			if h.Mask != nil {
				col.Hierarchy.Mask = &maskSpec{FromRight: h.Mask.FromRight, Max: h.Mask.Max}
			}
		}
		s.Columns = append(s.Columns, col)
	}
	for _, l := range cfg.Privacy.LDiversity {
		s.LDiversity = append(s.LDiversity, lRequirement{Column: l.Column, Variant: string(l.Variant), L: l.L})
	}
	for _, tc := range cfg.Privacy.TCloseness {
		s.TCloseness = append(s.TCloseness, tRequirement{Column: tc.Column, Distance: string(tc.Distance), T: tc.T})
	}
	return s
}
