package release

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"sanitizer/fault"
	"sanitizer/generalize"
	"sanitizer/internal/build"
	"sanitizer/job"
	"sanitizer/report"
	"sanitizer/risk"
	"sanitizer/schema"
	"sanitizer/table"
	"sanitizer/verify"
)

// Risk analyses the re-identification risk of an input, and of a release of it when
// opt.Output names one, without writing a release: the risk measures of the input at
// its original quasi-identifier values, how much each quasi-identifier and each pair
// of them sets records apart, and the release's measures counted by the verifier from
// its file. A release that misses one of the configuration's risk-based models yields
// the analysis and an error matching fault.ErrUnattainable.
func Risk(ctx context.Context, cfg *schema.Config, opt job.Options) (*report.RiskAnalysis, error) {
	rp, err := planRisk(cfg, opt)
	if err != nil {
		return nil, err
	}
	src, p, err := rp.open()
	if err != nil {
		return nil, err
	}
	defer src.Close()
	one, err := loadTable(ctx, p, src, false)
	if err != nil {
		return nil, err
	}
	t := one.t
	if one.sub != nil { // the records a release would publish: the research subset's
		rows := one.sub.rows()
		if len(rows) == 0 {
			return nil, fault.BadInput("%s: column %q: no record is in the research subset (privacy.subset)", p.Input, one.sub.name)
		}
		if t, err = t.Select(rows); err != nil {
			return nil, fault.Internalf("%w", err)
		}
	}
	n, err := population(p.Config, t.Rows)
	if err != nil {
		return nil, err
	}
	a := &report.RiskAnalysis{Tool: "sanitize", Version: build.Version, Dataset: p.Config.Dataset, ConfigDigest: "sha256:" + p.Config.Digest,
		HierarchyDigests: p.Hier.Digests(), CreatedUTC: time.Now().UTC().Format(time.RFC3339),
		Input: report.FileSummary{Path: p.Input, Format: p.InFormat.String(), Rows: t.Rows}, Quasi: p.QuasiNames(),
		Risk: report.RiskReport{Population: populationFigures(n, t.Rows), Thresholds: reportThresholds(p.Config)}}
	if t.Unit != nil {
		// Counted in persons: the population figures are of records (exit 2 for the
		// models that read them with the unit), so none is measured.
		n, a.Risk.Population = 0, nil
		a.Persons = &report.RiskPersons{Column: unitColumn(p.Config), Input: t.Unit.Persons}
	}
	if err := inputRisk(t, n, &a.Risk); err != nil {
		return nil, err
	}
	if p.output != "" {
		err = releaseRisk(ctx, p, t.Rows, n, a)
		if err != nil && !errors.Is(err, fault.ErrUnattainable) {
			return nil, err
		}
	}
	if paths := rp.opt.ReportPaths(); len(paths) > 0 {
		if werr := publishRiskReports(paths, rp.opt.Force, a); werr != nil {
			return nil, werr
		}
	}
	return a, err
}

// planRisk is a risk analysis's plan, checked before anything is read: the
// configuration names a quasi-identifier, the input and its format (inputPath), and
// the reports (checkRiskReport); out is the release to analyse (opt.Output, "": none).
func planRisk(cfg *schema.Config, opt job.Options) (runPlan, error) {
	if err := checkUnit(cfg); err != nil { // what a release refuses with the unit
		return runPlan{}, err
	}
	if len(cfg.Quasi()) == 0 {
		return runPlan{}, cfg.Errorf("columns", "a risk analysis needs at least one quasi-identifier")
	}
	in, inFmt, err := inputPath(cfg, opt)
	if err != nil {
		return runPlan{}, err
	}
	if err := checkRiskReport(cfg, opt, in); err != nil {
		return runPlan{}, err
	}
	return runPlan{cfg: cfg, opt: opt, in: in, out: opt.Output, inFmt: inFmt}, nil
}

// checkRiskReport refuses, before anything is read, any report the run could not
// publish or that would overwrite one of its inputs (checkReports).
func checkRiskReport(cfg *schema.Config, opt job.Options, in string) error {
	return checkReports(cfg, opt.ReportPaths(), opt.Force, in, "the release", opt.Output)
}

// publishRiskReports writes the analysis to every path of paths, each in the format
// its name says, to temporary files first, then puts them in place.
func publishRiskReports(paths []string, force bool, a *report.RiskAnalysis) error {
	reports, err := prepareReports(paths, func(f *os.File, format ReportFormat) error {
		if format == ReportJSON {
			return report.WriteJSON(f, a)
		}
		return report.WriteRiskHTML(f, a)
	})
	if err != nil {
		return err
	}
	defer reports.Discard()
	return reports.Publish(force)
}

// inputPath is the input of a run that writes no release, and its format.
func inputPath(cfg *schema.Config, opt job.Options) (string, schema.Format, error) {
	in := cfg.Input.Path
	if opt.Input != "" {
		in = opt.Input
	}
	if in == "" {
		return "", "", fault.BadInput("input: no input file (--in or input.path)")
	}
	f, err := table.InputFormat(in, cfg.Input)
	return in, f, err
}

// inputRisk measures the input t (of a population of n, 0: unknown) into rr: its
// classes, and each quasi-identifier and pair of them alone.
func inputRisk(t *generalize.Table, n float64, rr *report.RiskReport) error {
	all := make([]int, len(t.Columns))
	for i := range all {
		all[i] = i
	}
	d, err := generalize.ClassSizes(t, all)
	if t.Unit != nil {
		d, err = generalize.PersonSizes(t, all)
	}
	if err != nil {
		return fault.Internalf("%w", err)
	}
	if rr.Input, err = riskMeasures(d, n, rr.Thresholds); err != nil {
		return fault.Internalf("the input's risk: %w", err)
	}
	rr.QuasiIdentifiers, err = attributeRisks(t)
	return err
}

// attributeRisks is the distinction and separation of every quasi-identifier of t and
// of every pair of them.
func attributeRisks(t *generalize.Table) ([]report.AttributeRisk, error) {
	var sets [][]int
	for i := range t.Columns {
		sets = append(sets, []int{i})
	}
	for i := range t.Columns {
		for j := i + 1; j < len(t.Columns); j++ {
			sets = append(sets, []int{i, j})
		}
	}
	out := make([]report.AttributeRisk, len(sets))
	for k, cols := range sets {
		d, err := generalize.ClassSizes(t, cols)
		if err != nil {
			return nil, fault.Internalf("%w", err)
		}
		out[k] = report.AttributeRisk{Distinction: risk.Distinction(d), Separation: risk.Separation(d)}
		for _, c := range cols {
			out[k].Columns = append(out[k].Columns, t.Columns[c].Name)
		}
	}
	return out, nil
}

// releaseRisk reads the release p.output of an input of rows records with the verifier's
// decoders and adds its risk, and the configuration's risk models measured on it, to a.
// A file that is not a release of this input and configuration (another header, more
// records than the input) is bad input; a release that misses a risk model matches
// fault.ErrUnattainable.
func releaseRisk(ctx context.Context, p *plan, rows int, n float64, a *report.RiskAnalysis) error {
	cfg, rel := p.Config, p.output
	relFmt, err := table.CheckFormat("release", rel, cfg.Output)
	if err != nil {
		return err
	}
	header := p.ReleaseHeader()
	spec := verify.Spec{K: 1, MaxSuppressed: rows, InputRows: rows, Columns: header, Quasi: p.QuasiNames()}
	models, err := verifyRisk(cfg, rows)
	if err != nil {
		return err
	}
	f, err := openChecked(rel, relFmt, cfg.Output.CSV, header, releaseTable)
	if err != nil {
		return fmt.Errorf("release: %w", err)
	}
	defer f.Close()
	var m *verify.Measured
	if spec.Unit = unitColumn(cfg); spec.Unit != "" {
		p.outFormat = relFmt
		m, err = releasePersons(ctx, p, spec) // the persons need the input beside the release
	} else {
		m, err = verifyTable(ctx, f, spec) // counts the classes; the models below
	}
	var v *verify.Violation
	switch {
	case errors.As(err, &v):
		return fault.BadInput("%s: not a release of %s under this configuration: %v", rel, a.Input.Path, v)
	case err != nil:
		return err
	}
	a.Release = &report.FileSummary{Path: rel, Format: relFmt.String(), Rows: m.Rows}
	sizes := m.Sizes
	if m.Persons != nil {
		sizes, a.Persons.Release = m.Persons.Sizes, personsSummary(cfg, m)
	}
	measured, err := riskMeasures(sizes, n, a.Risk.Thresholds)
	if err != nil {
		return fault.Internalf("the release's risk: %w", err)
	}
	a.Risk.Release = &measured
	a.Risk.Models = riskChecks(cfg, sizes, n)
	err = verify.CheckRisk(models, sizes)
	if errors.As(err, &v) {
		return fault.Unattainable("%s: %v", rel, v)
	}
	return err
}

// releasePersons counts the release p.output in persons for the risk analysis: read
// beside the input, every record with the person of the input record it generalizes
// (the truthfulness walk), its classes measured in persons by the verifier.
func releasePersons(ctx context.Context, p *plan, spec verify.Spec) (*verify.Measured, error) {
	p.maxSupp = spec.MaxSuppressed
	counter, err := verify.NewCounter(spec, spec.Columns)
	if err != nil {
		return nil, fault.Internalf("%w", err)
	}
	if _, err := verifyTruth(ctx, p, p.output, spec.Columns, counter, nil); err != nil {
		return nil, err
	}
	return counter.Finish()
}
