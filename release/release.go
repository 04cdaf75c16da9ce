package release

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"sanitizer/generalize"
	"sanitizer/internal/build"
	"sanitizer/internal/safe"
	"sanitizer/job"
	"sanitizer/publish"
	"sanitizer/report"
	"sanitizer/schema"
	"sanitizer/table"
	"sanitizer/verify"
)

// Release runs the release path end to end. Nothing is left at the output path (or
// the report path) unless the written release passed the independent verification.
// Errors match schema.ErrBadInput for bad input or configuration and
// schema.ErrUnattainable when k cannot be met within the suppression limit.
func Release(ctx context.Context, cfg *schema.Config, opt job.Options) (*report.Report, error) {
	start := time.Now()
	if err := checkReleaseConfig(cfg); err != nil {
		return nil, err
	}
	in, out, inFmt, outFmt, err := job.Paths(cfg, opt)
	if err != nil {
		return nil, err
	}
	if job.Abs(in) == job.Abs(out) || table.InsideParts(in, out) {
		return nil, schema.BadInput("output: %s is also the input, or one of its parts", out)
	}
	if opt.Report != "" {
		for _, other := range []string{in, out, cfg.File} {
			if other != "" && job.Abs(opt.Report) == job.Abs(other) {
				return nil, schema.BadInput("--report: %s is also the input, the output or the configuration", opt.Report)
			}
		}
	}
	if err := checkOutput(out, opt.Force); err != nil {
		return nil, err
	}
	if opt.Report != "" {
		if err := publish.CheckFile("--report", opt.Report, opt.Force); err != nil {
			return nil, err
		}
	}
	src, p, err := openInput(cfg, in, out, inFmt)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	p.outFormat, p.progress = outFmt, opt.Progress
	log := opt.Logger()
	for i, c := range p.Conf {
		if c == nil {
			log.Warn("input column dropped: not in the configuration (unlisted: drop)", "file", in, "column", p.Header[i])
		}
	}
	// Pass 1: encode.
	opt.At(job.StageRead)
	t, listed, prot, err := loadTable(ctx, p, src)
	if err != nil {
		return nil, err
	}
	p.maxSupp = maxSuppressed(cfg.Privacy.Suppression, t.Rows)
	encoded := time.Now()
	log.Info("stage done", "stage", job.StageRead, "records", t.Rows, "quasi_identifiers", len(t.Columns), "ms", job.Millis(start, encoded))

	// Search.
	p.progress.Enter(job.StageSearch)
	opt.At(job.StageSearch)
	sopt := generalize.Options{K: cfg.Privacy.K, MaxSuppressed: p.maxSupp, Metric: p.metric, Workers: opt.Workers, OnEvaluate: p.progress.AddEvaluated}
	for i, sc := range prot {
		for _, d := range sc.diversity {
			sopt.Diversity = append(sopt.Diversity, generalize.Diversity{Column: i, Model: d})
		}
		for _, c := range sc.closeness {
			sopt.Closeness = append(sopt.Closeness, generalize.Closeness{Column: i, T: c.T, Distance: c.Distance})
		}
	}
	var (
		res        *generalize.Result
		suppressed []bool // per record; nil: none
		mres       *generalize.Mondrian
		labels     *partLabels
		class      []int32                // per record: its published class, −1 suppressed
		released   [][]bool               // per quasi-identifier: the codes at its level released
		covers     generalize.ClassCovers // what every published class releases
	)
	// Numeric quasi-identifiers by their values (Mondrian splits them at medians; the
	// utility metrics measure ranges by them), when their hierarchy's leaves are
	// numbers; an optimal release measures the others by their leaves.
	values, valuesErr := mondrianValues(p, t)
	if cfg.Search.Algorithm == "mondrian" {
		if valuesErr != nil {
			return nil, valuesErr
		}
		if res, mres, labels, err = mondrianRelease(ctx, t, values, p.metric, sopt); err != nil {
			return nil, err
		}
		class, covers = mres.Class, mres.Covers
		// Mondrian suppresses nothing: suppressed stays nil
	} else {
		if res, err = generalize.Search(ctx, t, sopt); err != nil {
			return nil, err
		}
		if class, covers, err = generalize.NodeClasses(t, res.Levels, sopt); err != nil {
			return nil, err
		}
		released = releasedCodes(t, res.Levels, covers)
		suppressed = make([]bool, t.Rows)
		for r, c := range class {
			suppressed[r] = c < 0
		}
	}
	// The utility metrics of the release, the same for both algorithms. In an optimal
	// release, a numeric column with a leaf that is not a finite number is measured by
	// its leaves, the others by value.
	if mres == nil {
		values = utilityValues(p, t)
	}
	util, err := generalize.Utility(t, class, covers, values, cfg.Privacy.K)
	class, covers = nil, generalize.ClassCovers{}
	if mres != nil {
		mres.Covers = generalize.ClassCovers{} // the labels hold what the release writes
	}
	if err != nil {
		return nil, fmt.Errorf("internal error: utility metrics: %w", err)
	}
	if mres != nil {
		res.Value = util.Loss
		if p.metric == generalize.MetricDiscernibility {
			res.Value = util.Discernibility
		}
	}
	searched := time.Now()
	log.Info("stage done", "stage", job.StageSearch, "lattice", res.LatticeSize, "evaluated", res.Evaluated, "suppressed", res.Suppressed, "ms", job.Millis(encoded, searched))

	// Pass 2: the same open file again, recoded and written to a temporary file
	// beside the output.
	p.progress.Enter(job.StageWrite)
	if err := src.Rewind(); err != nil {
		return nil, err
	}
	opt.At(job.StageWrite)
	header := p.ReleaseHeader()
	meta := releaseMetadata(cfg, p, t, res, opt.Time())
	rc := newRecoder(p, t, res.Levels, suppressed)
	rc.listed = listed
	if mres != nil {
		rc.class, rc.labels = mres.Class, labels
	}
	cols := p.OutColumns()
	rc.dictionaries(cols, released)
	w := releaseWriter{out: out, format: outFmt, dialect: cfg.Output.CSV, cols: cols, meta: meta, workers: opt.Parallel()}
	dest, written, err := w.write(ctx, src, rc)
	if err != nil {
		return nil, err
	}
	defer dest.discard() // nothing, once published
	if err := src.Unchanged(); err != nil {
		return nil, err
	}
	wrote := time.Now()
	log.Info("stage done", "stage", job.StageWrite, "records", written, "format", outFmt, "ms", job.Millis(searched, wrote))

	// What the verification does not need is let go before it reads two files again:
	// the codes, the partitions and their labels.
	rc, labels = nil, nil
	for i := range t.Columns {
		t.Columns[i].Codes = generalize.Codes{}
	}
	t.Sensitive = nil
	if mres != nil {
		mres = &generalize.Mondrian{Sizes: mres.Sizes, Splits: mres.Splits}
	}

	// Verify the written file, independently of the search.
	p.progress.Enter(job.StageVerify)
	opt.At(job.StageVerify)
	spec := verify.Spec{K: cfg.Privacy.K, MaxSuppressed: p.maxSupp, InputRows: t.Rows, Columns: header, Quasi: p.QuasiNames()}
	for _, sc := range prot {
		spec.Sensitive = append(spec.Sensitive, sc.spec())
	}
	if err := utilitySpec(cfg, p, &spec); err != nil {
		return nil, err
	}
	// One read of the written file, beside the input, checks truthfulness and counts
	// the classes for the models (k, l, t) and the utility metrics.
	counter, err := verify.NewCounter(spec, header)
	if err != nil {
		return nil, fmt.Errorf("internal error: %w", err)
	}
	skipped, err := verifyTruth(ctx, cfg, p, inFmt, dest.path(), outFmt, header, counter)
	if err != nil {
		var v *verify.Violation
		if errors.As(err, &v) {
			return nil, fmt.Errorf("internal error: the written release failed verification, nothing published: %w", err)
		}
		return nil, err
	}
	m, err := counter.Finish()
	if err != nil {
		return nil, fmt.Errorf("internal error: the written release failed verification, nothing published: %w", err)
	}
	if m.Rows != written || m.Suppressed != res.Suppressed || m.Classes != res.Classes || m.MinClass != res.MinClass || m.Discernibility != util.Discernibility {
		return nil, fmt.Errorf("internal error: verification counted %d records, %d suppressed, %d classes, smallest %d, discernibility %g; the search %d, %d, %d, %d, %g; nothing published",
			m.Rows, m.Suppressed, m.Classes, m.MinClass, m.Discernibility, written, res.Suppressed, res.Classes, res.MinClass, util.Discernibility)
	}
	if skipped != res.Suppressed {
		return nil, fmt.Errorf("internal error: the truthfulness check found %d records left out, the search suppressed %d; nothing published", skipped, res.Suppressed)
	}
	if !m.Utility || !sameUtility(m, util, t.Rows) {
		return nil, fmt.Errorf("internal error: verification measured loss %g, NCP %g, non-uniform entropy %g; the search %g, %g, %g; nothing published",
			m.Loss, m.NCP, m.NonUniformEntropy, util.Loss, util.NCP, util.NonUniformEntropy)
	}
	verified := time.Now()
	if m.Rows == 0 {
		log.Warn(report.EmptyRelease, "suppressed", m.Suppressed)
	}
	log.Info("stage done", "stage", job.StageVerify, "records", m.Rows, "classes", m.Classes, "min_class", m.MinClass, "ms", job.Millis(wrote, verified))

	rep := &report.Report{
		Tool: "sanitize", Version: build.Version, Dataset: cfg.Dataset, ConfigDigest: "sha256:" + cfg.Digest,
		Input:      report.FileSummary{Path: in, Format: inFmt, Rows: t.Rows},
		Output:     report.FileSummary{Path: out, Format: outFmt, Rows: written},
		Model:      report.ModelSummary{K: cfg.Privacy.K, SuppressionRate: cfg.Privacy.Suppression, MaxSuppressed: p.maxSupp},
		Classes:    res.Classes,
		MinClass:   res.MinClass,
		AvgClass:   m.AvgClass,
		Suppressed: res.Suppressed,
		Metric:     report.MetricSummary{Name: res.Metric, Value: res.Value},
		Lattice:    report.LatticeStats{Size: res.LatticeSize, Evaluated: res.Evaluated, Tagged: res.Tagged, Bounded: res.Bounded},
		Verified:   report.Verification{Rows: m.Rows, Classes: m.Classes, MinClass: m.MinClass, Suppressed: m.Suppressed},
	}
	for _, l := range cfg.Privacy.LDiversity {
		rep.Model.LDiversity = append(rep.Model.LDiversity, report.LDiversityIn{Column: l.Column, Variant: l.Variant, L: l.L, C: l.C})
	}
	for _, t := range cfg.Privacy.TCloseness {
		rep.Model.TCloseness = append(rep.Model.TCloseness, report.TClosenessIn{Column: t.Column, T: t.T, Distance: t.Distance})
	}
	for _, s := range m.Sensitive {
		rep.Verified.Sensitive = append(rep.Verified.Sensitive, report.SensitiveSummary{Column: s.Column, MinDistinct: s.MinDistinct, MinEntropyL: s.MinEntropyL, MaxEMD: s.MaxEMD, Distance: s.Distance})
	}
	rep.HierarchyDigests = p.Hier.Digests()
	rep.Algorithm, rep.Utility = algorithm(cfg), util
	if mres != nil {
		rep.Partitions = &report.PartitionStats{Partitions: len(mres.Sizes), Splits: mres.Splits}
	} else {
		for i, c := range t.Columns {
			rep.Node = append(rep.Node, report.NodeLevel{Column: c.Name, Level: res.Levels[i], Levels: c.Hierarchy.Height()})
		}
	}
	rep.StagesMS = report.Stages{Encode: job.Millis(start, encoded), Search: job.Millis(encoded, searched), Write: job.Millis(searched, wrote), Verify: job.Millis(wrote, verified)}

	// Publish: the report (if any) first to a temporary file, then both renames.
	var reportTmp *publish.File
	if opt.Report != "" {
		rep.StagesMS.Total = job.Millis(start, time.Now())
		if reportTmp, err = writeJSONTemp(opt.Report, rep); err != nil {
			return nil, err
		}
		defer reportTmp.Discard() // nothing, once published
	}
	opt.At(job.StagePublish)
	if err := ctx.Err(); err != nil { // a cancelled run publishes nothing
		return nil, err
	}
	if err := dest.publish(opt.Force); err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	if reportTmp != nil {
		if err := reportTmp.Publish(opt.Force); err != nil {
			return nil, fmt.Errorf("--report: %w (the release %s was published)", err, out)
		}
	}
	rep.StagesMS.Total = job.Millis(start, time.Now())
	return rep, nil
}

// sameUtility reports whether the verifier's loss, NCP and non-uniform entropy agree
// with the search's: loss and NCP within a relative 1e-9, the entropy (a total in
// bits) within 1e-6 bits per record.
func sameUtility(m *verify.Measured, u generalize.Metrics, records int) bool {
	rel := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(math.Abs(a), math.Abs(b)) }
	return rel(m.Loss, u.Loss) && rel(m.NCP, u.NCP) &&
		math.Abs(m.NonUniformEntropy-u.NonUniformEntropy) <= 1e-6*float64(records)
}

// utilityValues gives the utility metrics every numeric quasi-identifier's leaf values
// (leafValues; a column with a leaf that is not a finite value of its type is measured
// by leaves).
func utilityValues(p *plan, t *generalize.Table) [][]float64 {
	values, _ := leafValues(p, t, true)
	return values
}

// loadTable is pass 1 of a release: it parses the hierarchy files, finds the protected
// sensitive columns and encodes the quasi-identifiers of src. listed holds, per input
// column, the hierarchy file of a sensitive column (nil for the others).
func loadTable(ctx context.Context, p *plan, src table.Source) (t *generalize.Table, listed []*generalize.Hierarchy, prot []*protected, err error) {
	fileHier := make([]*generalize.Hierarchy, len(p.QuasiCfg))
	for i, c := range p.QuasiCfg {
		if c.Hierarchy.File != "" {
			if fileHier[i], err = p.Hier.Hierarchy(c.Hierarchy.File); err != nil {
				return nil, nil, nil, fmt.Errorf("columns.%s.hierarchy.file: %w", c.Name, err)
			}
		}
	}
	// Sensitive columns with a hierarchy file: their values must be listed too.
	listed = make([]*generalize.Hierarchy, len(p.Header))
	for i, c := range p.Conf {
		if c != nil && c.Role == schema.Sensitive && c.Hierarchy != nil && c.Hierarchy.File != "" {
			if listed[i], err = p.Hier.Hierarchy(c.Hierarchy.File); err != nil {
				return nil, nil, nil, fmt.Errorf("columns.%s.hierarchy.file: %w", c.Name, err)
			}
		}
	}
	// The sensitive columns l-diversity and t-closeness protect.
	prot = p.protectedColumns()
	for _, sc := range prot {
		sc.hier = listed[sc.pos] // a built hierarchy is built from the values in pass 1
	}
	p.progress.Enter(job.StageRead)
	if t, err = encode(ctx, p, src, fileHier, prot); err != nil {
		return nil, nil, nil, err
	}
	return t, listed, prot, nil
}

// verifyTable runs the independent check over the records of t.
func verifyTable(ctx context.Context, t checkedTable, spec verify.Spec) (*verify.Measured, error) {
	cols := t.columns()
	names := make([]string, len(cols))
	for i, c := range cols {
		if c.unsupported != "" {
			return nil, schema.BadInput("column %q: unsupported type %s", c.name, c.unsupported)
		}
		names[i] = c.name
	}
	r, err := t.records(ctx, allColumns(t))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return verify.Release(spec, names, r)
}

// readProtected reads a whole input for Check: it counts the records and numbers the
// values of the protected sensitive columns (as the release did) with the input's
// count of each.
func readProtected(ctx context.Context, p *plan, src table.Source, prot []*protected) (int, error) {
	cols := make([]int, len(prot))
	dicts := make([]*dictionary, len(prot))
	for i, sc := range prot {
		cols[i] = sc.pos
		dicts[i] = newDictionary()
		if sc.conf.Hierarchy != nil && sc.conf.Hierarchy.File != "" {
			h, err := p.Hier.Hierarchy(sc.conf.Hierarchy.File)
			if err != nil {
				return 0, fmt.Errorf("columns.%s.hierarchy.file: %w", sc.conf.Name, err)
			}
			sc.hier = h
		}
	}
	out := make(chan *table.Batch, 2)
	errc := make(chan error, 1)
	go func() { errc <- safe.Go(func() error { return src.Stream(ctx, cols, out) })() }()
	var addErr error
	for b := range out {
		for i, sc := range prot {
			if addErr == nil {
				if err := dicts[i].add(b, i, sc.conf.Null, p.EmptyNull[sc.pos]); err != nil {
					var en errNull
					if errors.As(err, &en) {
						err = nullError(p, int(en), sc.conf.Name)
					}
					addErr = err
				}
			}
		}
	}
	if err := <-errc; err != nil {
		return 0, err
	}
	if addErr != nil {
		return 0, addErr
	}
	for i, sc := range prot {
		d := dicts[i]
		if err := sc.buildHierarchy(p, d); err != nil {
			return 0, err
		}
		if err := sc.number(p, d.values, d.first); err != nil {
			return 0, err
		}
		sc.counts = make([]int64, len(sc.values))
		for r := range d.n {
			sc.counts[sc.index[d.values[d.code(r)]]]++
		}
	}
	return src.Rows(), nil
}

// Measured is what Check found in an existing release.
type Measured = verify.Measured

// Check re-checks an existing release against its input and configuration: it counts
// the input's records, recounts the release's classes from its strings, and reports
// the measured k and suppression; then it reads the release beside the input for
// truthfulness and measures loss, NCP and non-uniform entropy; last, it checks that
// the release leaves out only the input records its models require (none under
// Mondrian; under the optimal search, exactly the classes that fail the models at the
// release's node) and that the parameters it records (Parquet or Arrow metadata, the
// report opt.Report when given) agree with the configuration and the measurements. A
// release that violates the configuration yields the measurements and an error
// matching schema.ErrUnattainable.
func Check(ctx context.Context, cfg *schema.Config, opt job.Options) (*Measured, error) {
	if err := checkReleaseConfig(cfg); err != nil {
		return nil, err
	}
	in, rel, inFmt, relFmt, err := job.Paths(cfg, opt)
	if err != nil {
		return nil, err
	}
	src, p, err := openInput(cfg, in, rel, inFmt)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	prot := p.protectedColumns()
	rows, err := readProtected(ctx, p, src, prot)
	if err != nil {
		return nil, err
	}
	header := p.ReleaseHeader()
	spec := verify.Spec{K: cfg.Privacy.K, MaxSuppressed: maxSuppressed(cfg.Privacy.Suppression, rows), InputRows: rows, Columns: header, Quasi: p.QuasiNames()}
	for _, sc := range prot {
		spec.Sensitive = append(spec.Sensitive, sc.spec())
	}
	f, err := openChecked(rel, relFmt, cfg.Output.CSV, header)
	if err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	defer f.Close()
	meta := releaseRecorded(f)
	m, err := verifyTable(ctx, f, spec)
	var v *verify.Violation
	if errors.As(err, &v) {
		return m, schema.Unattainable("%s: %v", rel, v)
	}
	if err != nil {
		return m, err
	}
	// Truthfulness: the release read beside the input, every release record counted
	// with the input record it generalizes for the utility metrics (the models were
	// checked above).
	p.maxSupp = spec.MaxSuppressed
	uspec := spec
	uspec.Sensitive = nil
	if err := utilitySpec(cfg, p, &uspec); err != nil {
		return m, err
	}
	counter, err := verify.NewCounter(uspec, header)
	if err != nil {
		return m, fmt.Errorf("internal error: %w", err)
	}
	if _, err := verifyTruth(ctx, cfg, p, inFmt, rel, relFmt, header, counter); err != nil {
		if errors.As(err, &v) {
			return m, schema.Unattainable("%s: %v", rel, v)
		}
		return m, err
	}
	um, err := counter.Finish()
	if err != nil {
		if errors.As(err, &v) {
			return m, schema.Unattainable("%s: %v", rel, v)
		}
		return m, err
	}
	m.Loss, m.NCP, m.NonUniformEntropy, m.Utility = um.Loss, um.NCP, um.NonUniformEntropy, um.Utility
	// The records left out: only those the models require, and the parameters the
	// release records.
	if err := checkMissing(ctx, cfg, p, opt, rel, relFmt, inFmt, meta, spec, m); err != nil {
		return m, err
	}
	return m, nil
}
