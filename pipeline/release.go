package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"sanitizer/generalize"
	"sanitizer/schema"
	"sanitizer/verify"
)

// Options are the command line's choices for one run.
type Options struct {
	Input   string // overrides the configuration's input.path
	Output  string // overrides output.path (release) ; the release file for Check
	Report  string // where to write the JSON report ("" = none)
	Workers int    // ≤ 0: GOMAXPROCS
}

func (o Options) workers() int {
	if o.Workers > 0 {
		return o.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// paths resolves the input and output paths of a run and checks their formats.
func paths(cfg *schema.Config, opt Options) (in, out string, err error) {
	in, out = cfg.Input.Path, cfg.Output.Path
	if opt.Input != "" {
		in = opt.Input
	}
	if opt.Output != "" {
		out = opt.Output
	}
	if in == "" {
		return "", "", schema.BadInput("input: no input file (--in or input.path)")
	}
	if out == "" {
		return "", "", schema.BadInput("output: no output file (--out or output.path)")
	}
	if err := checkCSV("input", in, cfg.Input); err != nil {
		return "", "", err
	}
	if err := checkCSV("output", out, cfg.Output); err != nil {
		return "", "", err
	}
	return in, out, nil
}

// Release runs the release path end to end. Nothing is left at the output path (or
// the report path) unless the written release passed the independent verification.
// Errors match schema.ErrBadInput for bad input or configuration and
// schema.ErrUnattainable when k cannot be met within the suppression limit.
func Release(ctx context.Context, cfg *schema.Config, opt Options) (*Report, error) {
	start := time.Now()
	if err := checkReleaseConfig(cfg); err != nil {
		return nil, err
	}
	in, out, err := paths(cfg, opt)
	if err != nil {
		return nil, err
	}
	if abs(in) == abs(out) {
		return nil, schema.BadInput("output: %s is also the input", out)
	}
	if opt.Report != "" {
		for _, other := range []string{in, out, cfg.File} {
			if other != "" && abs(opt.Report) == abs(other) {
				return nil, schema.BadInput("--report: %s is also the input, the output or the configuration", opt.Report)
			}
		}
	}
	for _, path := range []string{out, opt.Report} {
		if path == "" {
			continue
		}
		if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
			return nil, schema.BadInput("%s: the folder %s does not exist", path, filepath.Dir(path))
		}
	}
	src, p, err := openInput(cfg, in, out)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	fileHier := make([]*generalize.Hierarchy, len(p.quasiCfg))
	for i, c := range p.quasiCfg {
		if c.Hierarchy.File != "" {
			if fileHier[i], err = generalize.LoadHierarchy(c.Hierarchy.File); err != nil {
				return nil, fmt.Errorf("columns.%s.hierarchy.file: %w", c.Name, err)
			}
		}
	}

	// Sensitive columns with a hierarchy file: their values must be listed too.
	listed := make([]*generalize.Hierarchy, len(p.header))
	for i, c := range p.conf {
		if c != nil && c.Role == schema.Sensitive && c.Hierarchy != nil && c.Hierarchy.File != "" {
			if listed[i], err = generalize.LoadHierarchy(c.Hierarchy.File); err != nil {
				return nil, fmt.Errorf("columns.%s.hierarchy.file: %w", c.Name, err)
			}
		}
	}

	// Pass 1: encode.
	t, err := encode(ctx, p, src, fileHier)
	if err != nil {
		return nil, err
	}
	p.maxSupp = maxSuppressed(cfg.Privacy.Suppression, t.Rows)
	encoded := time.Now()

	// Search.
	res, err := generalize.Search(ctx, t, generalize.Options{K: cfg.Privacy.K, MaxSuppressed: p.maxSupp, Metric: p.metric, Workers: opt.Workers})
	if err != nil {
		return nil, err
	}
	suppressed, err := generalize.Suppressed(t, res.Levels, cfg.Privacy.K)
	if err != nil {
		return nil, err
	}
	searched := time.Now()

	// Pass 2: the same open file again, recoded and written to a temporary file
	// beside the output.
	sum1, rows1, err := src.rewind()
	if err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	keep := false
	defer func() {
		if !keep {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	sink := newCSVSink(tmp, cfg.Output.CSV)
	header := p.releaseHeader()
	if cfg.Output.CSV.Header {
		if err := sink.Write(header); err != nil {
			return nil, fmt.Errorf("writing release: %w", err)
		}
	}
	rc := newRecoder(p, t, res.Levels, suppressed)
	rc.listed = listed
	written, err := writeRelease(ctx, src, rc, sink, opt.workers())
	if err != nil {
		return nil, err
	}
	if sum2, rows2 := src.sum.Sum32(), src.rows; sum2 != sum1 || rows2 != rows1 {
		return nil, schema.BadInput("%s: the input changed while it was being released", in)
	}
	if err := sink.Flush(); err != nil {
		return nil, err
	}
	if err := tmp.Sync(); err != nil {
		return nil, fmt.Errorf("writing release: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("writing release: %w", err)
	}
	wrote := time.Now()

	// Verify the written file, independently of the search.
	spec := verify.Spec{K: cfg.Privacy.K, MaxSuppressed: p.maxSupp, InputRows: t.Rows, Columns: header, Quasi: p.quasiNames()}
	m, err := verifyFile(tmp.Name(), cfg.Output.CSV, header, spec)
	if err != nil {
		var v *verify.Violation
		if errors.As(err, &v) {
			return nil, fmt.Errorf("internal error: the written release failed verification, nothing published: %w", err)
		}
		return nil, err
	}
	if m.Rows != written || m.Suppressed != res.Suppressed || m.Classes != res.Classes || m.MinClass != res.MinClass {
		return nil, fmt.Errorf("internal error: verification counted %d records, %d suppressed, %d classes, smallest %d; the search %d, %d, %d, %d; nothing published",
			m.Rows, m.Suppressed, m.Classes, m.MinClass, written, res.Suppressed, res.Classes, res.MinClass)
	}
	verified := time.Now()

	rep := &Report{
		Tool: "sanitize", Version: Version, Dataset: cfg.Dataset, ConfigDigest: "sha256:" + cfg.Digest,
		Input:      FileSummary{Path: in, Format: "csv", Rows: t.Rows},
		Output:     FileSummary{Path: out, Format: "csv", Rows: written},
		Model:      ModelSummary{K: cfg.Privacy.K, SuppressionRate: cfg.Privacy.Suppression, MaxSuppressed: p.maxSupp},
		Classes:    res.Classes,
		MinClass:   res.MinClass,
		AvgClass:   m.AvgClass,
		Suppressed: res.Suppressed,
		Metric:     MetricSummary{Name: res.Metric, Value: res.Value},
		Lattice:    LatticeStats{Size: res.LatticeSize, Evaluated: res.Evaluated, Tagged: res.Tagged, Bounded: res.Bounded},
		Verified:   Verification{Rows: m.Rows, Classes: m.Classes, MinClass: m.MinClass, Suppressed: m.Suppressed},
	}
	for _, c := range cfg.Columns {
		if c.Hierarchy != nil && c.Hierarchy.File != "" {
			d, err := fileDigest(c.Hierarchy.File)
			if err != nil {
				return nil, fmt.Errorf("columns.%s.hierarchy.file: %w", c.Name, err)
			}
			if rep.HierarchyDigests == nil {
				rep.HierarchyDigests = map[string]string{}
			}
			rep.HierarchyDigests[c.Hierarchy.File] = d
		}
	}
	for i, c := range t.Columns {
		rep.Node = append(rep.Node, NodeLevel{Column: c.Name, Level: res.Levels[i], Levels: c.Hierarchy.Height()})
	}
	ms := func(a, b time.Time) float64 { return float64(b.Sub(a).Microseconds()) / 1000 }
	rep.StagesMS = Stages{Encode: ms(start, encoded), Search: ms(encoded, searched), Write: ms(searched, wrote), Verify: ms(wrote, verified)}

	// Publish: the report (if any) first to a temporary file, then both renames.
	var reportTmp string
	if opt.Report != "" {
		rep.StagesMS.Total = ms(start, time.Now())
		if reportTmp, err = writeJSONTemp(opt.Report, rep); err != nil {
			return nil, err
		}
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil { // verified: readable by others
		return nil, fmt.Errorf("output: %w", err)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		if reportTmp != "" {
			os.Remove(reportTmp)
		}
		return nil, fmt.Errorf("output: %w", err)
	}
	keep = true
	if reportTmp != "" {
		if err := os.Rename(reportTmp, opt.Report); err != nil {
			os.Remove(reportTmp)
			return nil, fmt.Errorf("report: %w (the release %s was published)", err, out)
		}
	}
	rep.StagesMS.Total = ms(start, time.Now())
	return rep, nil
}

// openInput opens the input table and matches its header with the configuration.
func openInput(cfg *schema.Config, in, out string) (*csvSource, *plan, error) {
	names := make([]string, len(cfg.Columns))
	for i, c := range cfg.Columns {
		names[i] = c.Name
	}
	src, err := openCSV(in, cfg.Input.CSV, names)
	if err != nil {
		return nil, nil, err
	}
	p, err := newPlan(cfg, in, out, src.header)
	if err != nil {
		src.Close()
		return nil, nil, err
	}
	return src, p, nil
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}

// verifyFile re-reads a written CSV release and checks it against spec. Failing to
// read our own file is not bad input: its errors lose that mark.
func verifyFile(path string, dialect schema.CSV, header []string, spec verify.Spec) (*verify.Measured, error) {
	src, err := openCSV(path, dialect, header)
	if err != nil {
		return nil, fmt.Errorf("verifying the written release: %v", err)
	}
	defer src.Close()
	m, err := verify.Release(spec, src.header, src)
	var v *verify.Violation
	if err != nil && !errors.As(err, &v) {
		return nil, fmt.Errorf("verifying the written release: %v", err)
	}
	return m, err
}

// Measured is what Check found in an existing release.
type Measured = verify.Measured

// Check re-checks an existing release against its input and configuration: it counts
// the input's records, recounts the release's classes from its strings, and reports
// the measured k and suppression. A release that violates the configuration yields
// the measurements and an error matching schema.ErrUnattainable.
func Check(ctx context.Context, cfg *schema.Config, opt Options) (*Measured, error) {
	if err := checkReleaseConfig(cfg); err != nil {
		return nil, err
	}
	in, rel, err := paths(cfg, opt)
	if err != nil {
		return nil, err
	}
	src, p, err := openInput(cfg, in, rel)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	for {
		if _, err := src.Read(); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, err
		}
	}
	header := p.releaseHeader()
	spec := verify.Spec{K: cfg.Privacy.K, MaxSuppressed: maxSuppressed(cfg.Privacy.Suppression, src.rows), InputRows: src.rows, Columns: header, Quasi: p.quasiNames()}
	f, err := openCSV(rel, cfg.Output.CSV, header)
	if err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	defer f.Close()
	m, err := verify.Release(spec, f.header, f)
	var v *verify.Violation
	if errors.As(err, &v) {
		return m, schema.Unattainable("%s: %v", rel, v)
	}
	return m, err
}
