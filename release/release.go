package release

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"slices"
	"time"

	"sanitizer/fault"
	"sanitizer/generalize"
	"sanitizer/internal/safe"
	"sanitizer/job"
	"sanitizer/publish"
	"sanitizer/report"
	"sanitizer/risk"
	"sanitizer/schema"
	"sanitizer/table"
	"sanitizer/verify"
)

// Release runs the release path end to end, stage by stage: open the input, encode
// it (pass 1), search, write the release to a temporary destination (pass 2), verify
// the written release independently, then publish the release and the report. Nothing
// is left at the output path (or the report path) unless the written release passed
// the verification. Errors match fault.ErrBadInput for bad input or configuration and
// fault.ErrUnattainable when k cannot be met within the suppression limit.
func Release(ctx context.Context, cfg *schema.Config, opt job.Options) (*report.Report, error) {
	return release(ctx, cfg, opt, nil)
}

// release is Release, its parts written by write when it is not nil (ReleaseWith).
func release(ctx context.Context, cfg *schema.Config, opt job.Options, write *elsewhere) (*report.Report, error) {
	start := time.Now()
	if opt.SeriesRestart && opt.Series == "" {
		return nil, fault.BadInput("--series-restart: starts a series, so it needs --series STATE.json")
	}
	var sn *seriesNight
	if opt.Series != "" { // locked, and a committed night put in place, before the output is looked at
		var err error
		if sn, err = openSeries(cfg, opt); err != nil {
			return nil, err
		}
		defer sn.close()
	}
	rp, err := planRelease(cfg, opt)
	if err != nil {
		return nil, err
	}
	if write != nil {
		if err := checkElsewhere(cfg, rp.out, rp.outFmt); err != nil {
			return nil, err
		}
	}
	r, err := openRun(rp, start)
	if err != nil {
		return nil, err
	}
	defer r.src.Close()
	r.elsewhere = write
	if err := r.joinSeries(sn); err != nil {
		return nil, err
	}
	if err := r.encodeStage(ctx); err != nil {
		return nil, err
	}
	if err := r.searchStage(ctx); err != nil {
		return nil, err
	}
	if sn != nil {
		if err := r.seriesStage(ctx, r.covers); err != nil {
			return nil, err
		}
	}
	if err := r.recordSpend(); err != nil { // charged before anything is written
		return nil, err
	}
	if err := r.writeStage(ctx); err != nil {
		return nil, err
	}
	defer func() { r.dest.discard() }() // nothing, once published (the last dest: dpOrdered replaces it)
	if err := r.verifyStage(ctx); err != nil {
		return nil, err
	}
	if err := r.dpOrdered(ctx, r.vspec); err != nil {
		return nil, err
	}
	rep, err := r.report()
	if err != nil {
		return nil, err
	}
	if err := r.publishStage(ctx, rep); err != nil {
		return nil, err
	}
	return rep, nil
}

// run is one release in progress: what each stage hands the next.
type run struct {
	runPlan // the configuration and the flags, checked (planRelease)
	log     *slog.Logger
	src     table.Source
	outCols []table.OutColumn // the columns the release was written with (writeStage)
	p       *plan             // the input's columns planned against the configuration (openRun)

	// pass 1
	t *generalize.Table // the records to release (with privacy.subset, the subset's)
	// pop is the whole input, the population, and subsetRows the input record of each
	// record of t, when privacy.subset names a research subset (nil otherwise).
	pop        *generalize.Table
	subsetRows []int
	listed     []*generalize.Hierarchy // per input column: a sensitive column's hierarchy file
	prot       []*protected
	held       []*heldColumn
	series     *seriesNight // a night of a release series (nil: a release on its own)
	elsewhere  *elsewhere   // writes the release's parts instead of pass 2 (nil: pass 2 does)
	// search
	sopt       generalize.Options
	covers     generalize.ClassCovers // optimal: what every published class releases
	res        *generalize.Result
	mres       *generalize.Mondrian   // nil: an optimal release
	labels     *partLabels            // Mondrian, local recoding: the classes' released values
	placement  *generalize.Placement  // search.local-recoding: the passes (nil: none)
	localFirst int                    // search.local-recoding: the records the first node suppressed
	class      []int32                // per record: its published class, −1 suppressed
	suppressed []bool                 // optimal: per record
	classes    *generalize.ClassTable // optimal, when searched from it: the records' class table
	classOf    []int32                // the published class of each class of classes (−1: suppressed)
	released   [][]bool               // optimal: per quasi-identifier, the codes at its level released
	util       generalize.Metrics
	inputSizes risk.Distribution      // the input's classes at its original values
	dp         *dpRelease             // privacy.differential-privacy: the sample, the node (nil: none)
	ledger     *report.ManifestLedger // the dataset's account once a SafePub release was charged (nil: none)
	// pass 2
	dest    releaseDest
	written int
	created time.Time // when the release was written (its metadata's created_utc)
	// verification
	vspec       verify.Spec // what the verification checked the release against
	m           *verify.Measured
	popMeasured *verify.PopulationMeasured // δ-presence and k-map, measured (nil: none)

	start, encoded, searched, wrote, verified time.Time
	// cpu is the process's CPU time at those moments (job.ProcessCPU).
	cpu struct{ start, encoded, searched, wrote, verified time.Duration }
}

// openRun is the data-dependent step of a release planned as rp (started at start):
// it opens the input and plans its columns against the configuration (rp.open:
// job.NewPlan's checks of the header and types, the hierarchy files), and refuses the
// columns only a Parquet or Arrow release can hold (checkPassOnly).
func openRun(rp runPlan, start time.Time) (*run, error) {
	r := &run{runPlan: rp, log: rp.opt.Logger(), start: start}
	r.cpu.start = job.ProcessCPU()
	var err error
	if r.src, r.p, err = rp.open(); err != nil {
		return nil, err
	}
	r.p.progress = r.opt.Progress
	if err := r.checkPassOnly(); err != nil {
		r.src.Close()
		return nil, err
	}
	for i, c := range r.p.Conf {
		if c == nil {
			r.log.Warn("input column dropped: not in the configuration (unlisted: drop)", "file", r.in, "column", r.p.Header[i])
		}
	}
	for _, name := range unprotected(r.cfg) {
		r.log.Warn("sensitive column released as it is: no l-diversity, t-closeness or β-likeness requirement protects it", "column", name)
	}
	return r, nil
}

// checkPassOnly refuses a release that would have to write a column whose values
// have no text form (decimals, binary) into a format that holds only text.
func (r *run) checkPassOnly() error {
	if len(r.p.PassOnly) == 0 || (r.outFmt != schema.FormatCSV && table.Arrays(r.src)) {
		return nil
	}
	pos := r.p.PassOnly[0]
	return fault.BadInput("%s: column %q: values of type %s can only be passed through into a Parquet or Arrow release (or dropped: role identifier)", r.in, r.p.Header[pos], r.p.ArrowTypes[pos])
}

// checkReport refuses, before anything is read, any report (opt.ReportPaths) the run
// could not publish (checkReports: it exists, without opt.Force; its name says no
// format; another names the same file) or that would overwrite what the run reads
// (checkDestination) or its output out (a file, or a folder of parts).
func checkReport(cfg *schema.Config, opt job.Options, in, out string) error {
	return checkReports(cfg, opt.ReportPaths(), opt.Force, in, "the output", out)
}

// encodeStage is pass 1: the quasi-identifiers encoded, the protected sensitive
// columns numbered, the suppression limit in records.
func (r *run) encodeStage(ctx context.Context) (err error) {
	r.opt.At(job.StageRead)
	one, err := loadTable(ctx, r.p, r.src, true)
	if err != nil {
		return err
	}
	r.t, r.listed, r.prot, r.held = one.t, one.listed, one.prot, one.held
	if err := r.selectSubset(one.sub); err != nil {
		return err
	}
	r.p.maxSupp = maxSuppressed(r.cfg.Privacy.Suppression, r.t.Rows)
	r.encoded, r.cpu.encoded = time.Now(), job.ProcessCPU()
	r.log.Info("stage done", append([]any{"stage", job.StageRead, "records", r.t.Rows, "quasi_identifiers", len(r.t.Columns), "ms", job.Millis(r.start, r.encoded)},
		job.CPUAttrs(r.start, r.encoded, r.cpu.start, r.cpu.encoded)...)...)
	return nil
}

// searchOptions is the search's model: k, the suppression limit, the metric and the
// protected columns' l-diversity and t-closeness.
func (r *run) searchOptions() (generalize.Options, error) {
	sopt, err := modelOptions(r.cfg, r.t.Columns, r.t.Rows)
	if err != nil {
		return sopt, err
	}
	sopt.MaxSuppressed, sopt.Workers, sopt.OnEvaluate, sopt.Population = r.p.maxSupp, r.opt.Workers, r.p.progress.AddEvaluated, r.populationModel()
	addModels(&sopt, r.prot)
	sopt.Linkable = linkable(r.cfg)
	sopt.MinLevels = r.series.minLevels(sopt.MinLevels, len(r.t.Columns))
	return sopt, nil
}

// modelOptions is the part of the search's options that the configuration decides for
// a table of rows records whose quasi-identifiers are cols (in the table's order; their
// codes are not read): k (raised by highest-risk and an estimated k-map), the
// suppression limit, the metric with its aggregate, weights, gs-factor and, for ncp,
// the numeric columns' leaf values, the bounds on each column's level (levelBounds),
// and the risk-based models. The caller adds the protected columns' models and the
// population, which need the records; a release on another engine (the beam module)
// takes the same options.
func modelOptions(cfg *schema.Config, cols []generalize.Column, rows int) (generalize.Options, error) {
	if _, err := population(cfg, rows); err != nil { // before the search, not at the report
		return generalize.Options{}, err
	}
	risks, err := searchRisks(cfg, rows)
	if err != nil {
		return generalize.Options{}, err
	}
	k, err := effectiveK(cfg, rows)
	if err != nil {
		return generalize.Options{}, err
	}
	metric := cfg.Search.Metric
	if metric == "" {
		metric = generalize.MetricLoss
	}
	sopt := generalize.Options{K: k, MaxSuppressed: maxSuppressed(cfg.Privacy.Suppression, rows), Metric: metric, Aggregate: cfg.Search.Aggregate, GSFactor: cfg.Search.GSFactor, Risks: risks}
	profitOptions(cfg, &sopt)
	if sopt.MinLevels, sopt.MaxLevels, err = levelBounds(cfg, cols); err != nil {
		return generalize.Options{}, err
	}
	if w := cfg.Search.Weights; w != nil { // in table order, 1 for a quasi-identifier not named
		sopt.Weights = make([]float64, len(cols))
		for i, c := range cols {
			sopt.Weights[i] = 1
			if x, ok := w[c.Name]; ok {
				sopt.Weights[i] = x
			}
		}
	}
	if metric == generalize.MetricNCP { // numeric columns by their values, as the utility measures
		sopt.Values = utilityValues(cfg, cols)
	}
	return sopt, nil
}

// levelBounds is search.min-levels and search.max-levels (ARX's minimum and maximum
// generalization) in the order of the quasi-identifiers cols: a level per column, 0
// and −1 (the top) where a column has no bound; nil, nil when the configuration sets
// neither. A bound above a column's hierarchy's top level is bad input at its key's
// FILE:LINE; the error lists every such bound.
func levelBounds(cfg *schema.Config, cols []generalize.Column) (lo, hi []int, err error) {
	atLeast, atMost := cfg.Search.MinLevels, cfg.Search.MaxLevels
	if atLeast == nil && atMost == nil {
		return nil, nil, nil
	}
	var errs schema.ErrorList
	lo, hi = make([]int, len(cols)), make([]int, len(cols))
	for i, c := range cols {
		hi[i] = -1
		top := c.Hierarchy.Height() - 1
		for _, b := range []struct {
			key   string
			set   map[string]int
			level *int
		}{{"min-levels", atLeast, &lo[i]}, {"max-levels", atMost, &hi[i]}} {
			l, ok := b.set[c.Name]
			if !ok {
				continue
			}
			if l > top {
				errs.Add(cfg.Errorf("search."+b.key+"."+c.Name, "%d is above the hierarchy's top level, %d", l, top))
			}
			*b.level = l
		}
	}
	if err := errs.Err(); err != nil {
		return nil, nil, err
	}
	return lo, hi, nil
}

// searchStage chooses what the release publishes (a node of the lattice, or Mondrian's
// partitions) and measures its utility.
func (r *run) searchStage(ctx context.Context) (err error) {
	r.p.progress.Enter(job.StageSearch)
	r.opt.At(job.StageSearch)
	if r.sopt, err = r.searchOptions(); err != nil {
		return err
	}
	var covers generalize.ClassCovers // what every published class releases
	// Numeric quasi-identifiers by their values (Mondrian splits them at medians; the
	// utility metrics measure ranges by them), when their hierarchy's leaves are
	// numbers; an optimal release measures the others by their leaves.
	values, valuesErr := mondrianValues(r.p, r.t)
	if r.cfg.Search.Algorithm == schema.Mondrian {
		if valuesErr != nil {
			return valuesErr
		}
		if r.res, r.mres, r.labels, err = mondrianRelease(ctx, r.t, values, r.p.metric, r.sopt); err != nil {
			return r.explainK(err)
		}
		r.class, covers = r.mres.Class, r.mres.Covers // Mondrian suppresses nothing
	} else if r.cfg.Privacy.DifferentialPrivacy != nil {
		if covers, err = r.dpSearch(ctx); err != nil {
			return err
		}
		r.covers = covers
		values = utilityValues(r.cfg, r.t.Columns)
	} else {
		if covers, err = r.optimalSearch(ctx); err != nil {
			return r.explainK(err)
		}
		if r.cfg.Search.LocalRecoding != nil {
			if covers, err = r.localRecoding(ctx); err != nil {
				return err
			}
		}
		r.covers = covers
		// A numeric column with a leaf that is not a finite number is measured by its
		// leaves, the others by value.
		values = utilityValues(r.cfg, r.t.Columns)
	}
	if r.inputSizes, err = inputSizes(r.t, r.classes); err != nil {
		return fault.Internalf("the input's classes: %w", err)
	}
	// The utility metrics of the release, the same for both algorithms.
	if r.classes != nil {
		r.util, err = generalize.UtilityClasses(r.classes, r.classOf, covers, values, r.k())
		r.classes, r.classOf = nil, nil
	} else {
		r.util, err = generalize.Utility(r.t, r.class, covers, values, r.k())
	}
	if err != nil {
		return fault.Internalf("utility metrics: %w", err)
	}
	if r.mres != nil {
		r.mres.Covers = generalize.ClassCovers{} // the labels hold what the release writes
		if r.res.Value, err = mondrianValue(r.p.metric, r.util, r.t.Rows, len(r.mres.Sizes)); err != nil {
			return err
		}
	}
	r.searched, r.cpu.searched = time.Now(), job.ProcessCPU()
	r.log.Info("stage done", append([]any{"stage", job.StageSearch, "lattice", r.res.LatticeSize, "evaluated", r.res.Evaluated, "monotone_only", r.res.MonotoneOnly, "tagged", r.res.Tagged, "bounded", r.res.Bounded, "rolled_up", r.res.RolledUp, "suppressed", r.res.Suppressed, "ms", job.Millis(r.encoded, r.searched)},
		job.CPUAttrs(r.encoded, r.searched, r.cpu.encoded, r.cpu.searched)...)...)
	return nil
}

// explainK says, of a search that found no node, where its k came from when
// privacy.highest-risk raised it above privacy.k.
func (r *run) explainK(err error) error {
	if !errors.Is(err, fault.ErrUnattainable) || r.sopt.K == r.cfg.Privacy.K {
		return err
	}
	return fault.Unattainable("%v (k=%d: the smallest class whose records' risk is within privacy.highest-risk %g)", err, r.sopt.K, r.cfg.Privacy.HighestRisk)
}

// optimalSearch finds the optimal node and every record's class there.
func (r *run) optimalSearch(ctx context.Context) (covers generalize.ClassCovers, err error) {
	if parts := table.Split(r.src); len(parts) > 1 && r.pop == nil {
		covers, err = r.partsSearch(ctx, parts)
	} else {
		covers, err = r.wholeSearch(ctx)
	}
	if err != nil {
		return covers, err
	}
	r.released = releasedCodes(r.t.Columns, r.res.Levels, covers)
	r.suppressed = make([]bool, r.t.Rows)
	err = inHalves(r.t.Rows, func(lo, hi int) {
		for i, c := range r.class[lo:hi] {
			r.suppressed[lo+i] = c < 0
		}
	})
	return covers, err
}

// wholeSearch searches the encoded table and classes its records at the chosen node:
// from its class table when the records fall in few classes (at most
// maxPartClasses; the count stops past that), so that the search, the classes of the
// records and the utility cost what the classes cost; else from the records, the
// search told that the count stopped, or that a sample of the records found nearly
// all distinct (it does not count them again to find it out).
func (r *run) wholeSearch(ctx context.Context) (covers generalize.ClassCovers, err error) {
	var ct *generalize.ClassTable
	var assign []int32
	limit := maxPartClasses(r.t.Rows)
	// A sample that finds nearly every record distinct spares the count its stop
	// (10M nearly unique records: 0.27 s).
	if limit > 0 && !generalize.ManyClasses(r.t, limit) {
		if ct, assign, err = generalize.CountRecordClasses(r.t, limit); err != nil {
			return covers, fault.Internalf("%w", err)
		}
	}
	if ct == nil {
		sopt := r.sopt
		sopt.BottomOver = limit // more classes than limit, when limit > 0
		if r.res, err = generalize.Search(ctx, r.t, sopt); err != nil {
			return covers, err
		}
		r.class, covers, err = generalize.NodeClasses(r.t, r.res.Levels, r.sopt)
		return covers, err
	}
	if r.res, err = generalize.SearchClasses(ctx, ct, r.sopt); err != nil {
		return covers, err
	}
	rec, err := generalize.NodeRecoding(ct, r.res.Levels, r.sopt)
	if err != nil {
		return covers, err
	}
	r.classes, r.classOf = ct, make([]int32, ct.Len())
	leaves := make([]int32, len(r.t.Columns))
	for j := range r.classOf {
		for i := range leaves {
			leaves[i] = ct.Code(i, j)
		}
		r.classOf[j], _ = rec.Class(leaves)
		if r.t.Unit != nil && rec.PersonSuppressed(ct.Code(len(leaves), j)) { // an entry: its person's
			r.classOf[j] = -1
		}
	}
	err = inHalves(r.t.Rows, func(lo, hi int) { // in place: assign becomes r.class
		for row, j := range assign[lo:hi] {
			assign[lo+row] = r.classOf[j]
		}
	})
	r.class = assign
	return rec.Covers, err
}

// inHalves runs f over records 0 … n−1 in two halves at once (f(lo, hi) for each), or
// in one when n is small; a panic in f is returned as a *safe.PanicError (an internal
// error).
func inHalves(n int, f func(lo, hi int)) error {
	parts := 1
	if n >= 1<<18 && runtime.GOMAXPROCS(0) > 1 {
		parts = 2
	}
	return safe.Parallel(parts, func(p int) { f(n*p/parts, n*(p+1)/parts) })
}

// partsSearch searches an input in parts as a distributed engine will: each part's
// class table (the most specific node's classes of its records, with their counts and
// sensitive histograms), merged into the whole's, searched; then every record's class
// at the chosen node looked up, part by part, in the merged table's recoding (the
// node and its suppressed classes).
//
// The parts' class tables cost about 4 bytes per quasi-identifier and class besides the
// encoded records: when they hold more than maxPartClasses classes together, the
// search runs on the records as for one file.
func (r *run) partsSearch(ctx context.Context, parts []table.Source) (covers generalize.ClassCovers, err error) {
	tables := make([]*generalize.ClassTable, len(parts))
	lo, classes, limit := 0, 0, maxPartClasses(r.t.Rows)
	if limit < 1 || generalize.ManyClasses(r.t, limit) {
		return r.wholeSearch(ctx) // which judges them the same, and does not count them
	}
	for i, part := range parts {
		hi := lo + part.Rows()
		// The count stops once the parts' tables would hold more than limit classes.
		if tables[i], err = generalize.CountClassesUpTo(r.t.Records(lo, hi), limit-classes); err != nil {
			return covers, fault.Internalf("part %d: %w", i, err)
		}
		if tables[i] == nil {
			return r.wholeSearch(ctx)
		}
		classes += tables[i].Len()
		lo = hi
	}
	if lo != r.t.Rows {
		return covers, fault.Internalf("the parts hold %d records, pass 1 read %d", lo, r.t.Rows)
	}
	merged, err := generalize.MergeClasses(tables...)
	if err != nil {
		return covers, fault.Internalf("%w", err)
	}
	if r.res, err = generalize.SearchClasses(ctx, merged, r.sopt); err != nil {
		return covers, err
	}
	rec, err := generalize.NodeRecoding(merged, r.res.Levels, r.sopt)
	if err != nil {
		return covers, err
	}
	r.class = make([]int32, r.t.Rows)
	leaves := make([]int32, len(r.t.Columns))
	for row := range r.class {
		for j, c := range r.t.Columns {
			leaves[j] = c.Codes.At(row)
		}
		r.class[row], _ = rec.Class(leaves)
		if r.t.Unit != nil && rec.PersonSuppressed(r.t.Unit.Codes.At(row)) {
			r.class[row] = -1
		}
	}
	return rec.Covers, nil
}

// maxPartClasses is how many classes the class tables of an input of rows records in
// parts may hold together: a sixteenth of the records, where a class table is smaller
// than the records and its search faster than theirs (a variable, for the test of the
// other way). Measured on 10M generated records in four parts (BENCHMARKS.md): with
// a quarter, the search took 4–9 s longer and the peak doubled.
var maxPartClasses = func(rows int) int { return rows / 16 }

// writeStage is pass 2: the same open input again, recoded and written to a
// temporary destination beside the output.
func (r *run) writeStage(ctx context.Context) (err error) {
	if r.elsewhere != nil {
		if err := r.writeElsewhere(ctx); err != nil {
			return err
		}
		r.letGo()
		return nil
	}
	r.class = nil
	r.p.progress.Enter(job.StageWrite)
	wt := r.t
	if r.pop != nil {
		wt = r.pop // pass 2 reads every input record: those outside the subset are left out
	}
	rc := newRecoder(r.p, wt, r.res.Levels, r.writeSuppressed(), r.held)
	if rc.reads() {
		if err := r.src.Rewind(); err != nil {
			return err
		}
	}
	r.opt.At(job.StageWrite)
	rc.listed = r.listed
	if r.mres != nil {
		rc.class, rc.labels = r.mres.Class, r.labels
	}
	if r.placement != nil {
		rc.class, rc.labels = r.placement.Class, r.labels
	}
	cols := r.p.OutColumns()
	rc.dictionaries(cols, r.released)
	r.outCols = cols
	rc.passThrough(r.src, r.outFmt)
	if err := rc.passing(); err != nil {
		return err
	}
	r.created = r.opt.Time()
	meta := r.fileMetadata()
	if r.placement != nil {
		meta["sanitize.local_nodes"] = localNodesJSON(r.t.Columns, r.placement.Nodes)
	}
	w := releaseWriter{out: r.out, format: r.outFmt, dialect: r.cfg.Output.CSV, cols: cols, meta: meta, workers: r.opt.Parallel()}
	if r.dest, r.written, err = w.write(ctx, r.src, rc); err != nil {
		return err
	}
	if rc.reads() {
		if err := r.src.Unchanged(); err != nil {
			r.dest.discard()
			return err
		}
	}
	r.wrote, r.cpu.wrote = time.Now(), job.ProcessCPU()
	r.log.Info("stage done", append([]any{"stage", job.StageWrite, "records", r.written, "format", r.outFmt.String(), "ms", job.Millis(r.searched, r.wrote)},
		job.CPUAttrs(r.searched, r.wrote, r.cpu.searched, r.cpu.wrote)...)...)
	r.letGo()
	return nil
}

// tool is the name of the tool whose report this release's is.
func (r *run) tool() string {
	if r.elsewhere != nil {
		return r.elsewhere.tool
	}
	return "sanitize"
}

// letGo lets go, once the release is written, of what the verification does not
// need before it reads two files again: the codes, the partitions and their labels.
func (r *run) letGo() {
	r.labels, r.suppressed = nil, nil
	for i := range r.t.Columns {
		r.t.Columns[i].Codes = generalize.Codes{}
	}
	r.t.Sensitive, r.held = nil, nil
	if r.pop != nil {
		for i := range r.pop.Columns {
			r.pop.Columns[i].Codes = generalize.Codes{}
		}
		r.pop.Sensitive, r.subsetRows = nil, nil
	}
	if r.mres != nil {
		r.mres = &generalize.Mondrian{Sizes: r.mres.Sizes, Splits: r.mres.Splits}
	}
	if r.placement != nil {
		r.placement.Class = nil
	}
}

// verifyStage reads the written release once, beside the input, with the verifier's
// own decoders: it checks truthfulness and counts the classes for the models (k, l,
// t) and the utility metrics, which must agree with what the search found.
func (r *run) verifyStage(ctx context.Context) error {
	r.p.progress.Enter(job.StageVerify)
	r.opt.At(job.StageVerify)
	header := r.p.ReleaseHeader()
	km, _, err := kmapK(r.cfg, r.t.Rows)
	if err != nil {
		return err
	}
	r.p.maxSupp += r.deferred() // the records a series night withholds are left out too
	spec := verify.Spec{K: max(r.k(), km, noAttackK(r.cfg)), MaxSuppressed: r.p.maxSupp, InputRows: r.t.Rows, Columns: header, Quasi: r.p.QuasiNames()}
	if r.dp != nil { // every record may be left out; the run's account of which is checked record by record
		spec.MaxSuppressed = r.t.Rows
		r.p.maxSupp = r.t.Rows
	}
	unitSpec(r.p, &spec)
	if spec.Risk, err = verifyRisk(r.cfg, r.t.Rows); err != nil {
		return err
	}
	for _, sc := range r.prot {
		spec.Sensitive = append(spec.Sensitive, sc.spec())
	}
	spec.Released = releasedAsIs(r.p)
	if err := utilitySpec(r.p, &spec); err != nil {
		return err
	}
	spec.Profitability = prosecutorOnly(verifyProfit(r.cfg))
	if r.placement != nil { // every record checked at the node of its pass, placed by the verifier
		if err := localPlacement(ctx, r.p, &spec, r.placement.Nodes, r.dest.path()); err != nil {
			return err
		}
	}
	counter, err := verify.NewCounter(spec, header)
	if err != nil {
		return fault.Internalf("%w", err)
	}
	if r.p.seriesCheck, err = r.series.verifier(r, spec, header); err != nil {
		return err
	}
	r.vspec = spec
	skipped, err := verifyTruth(ctx, r.p, r.dest.path(), header, counter, table.Checksums(r.src))
	if err != nil {
		var v *verify.Violation
		if errors.As(err, &v) {
			return fault.Internalf("the written release failed verification, nothing published: %w", err)
		}
		return err
	}
	if r.m, err = counter.Finish(); err != nil {
		return fault.Internalf("the written release failed verification, nothing published: %w", err)
	}
	if err := r.agrees(skipped); err != nil {
		return err
	}
	if r.series != nil {
		if err := r.series.verified(r.p.seriesCheck); err != nil {
			return err
		}
		r.p.seriesCheck = nil
	}
	if err := releasedDisclosure(r.cfg, r.m, r.log); err != nil {
		return err
	}
	if err := r.verifySample(ctx, spec); err != nil {
		return err
	}
	if r.popMeasured, err = r.verifyPopulation(ctx, spec); err != nil {
		var v *verify.Violation
		if errors.As(err, &v) {
			return fault.Internalf("the written release failed verification, nothing published: %w", err)
		}
		return err
	}
	r.verified, r.cpu.verified = time.Now(), job.ProcessCPU()
	if r.m.Rows == 0 {
		r.log.Warn(report.EmptyRelease, "suppressed", r.m.Suppressed)
	}
	r.log.Info("stage done", append([]any{"stage", job.StageVerify, "records", r.m.Rows, "classes", r.m.Classes, "min_class", r.m.MinClass, "ms", job.Millis(r.wrote, r.verified)},
		job.CPUAttrs(r.wrote, r.verified, r.cpu.wrote, r.cpu.verified)...)...)
	return nil
}

// agrees checks that the verification measured what the search and the write
// reported: records, suppressed records (skipped by the truthfulness check), classes,
// the smallest class and the utility metrics.
func (r *run) agrees(skipped int) error {
	m, res, util := r.m, r.res, r.util
	left := res.Suppressed + r.deferred() // the records the search suppressed, and those a series night defers
	if m.Rows != r.written || m.Suppressed != left || m.Classes != res.Classes || m.MinClass != res.MinClass || m.Discernibility != util.Discernibility {
		return fault.Internalf("verification counted %d records, %d suppressed, %d classes, smallest %d, discernibility %g; the search %d, %d, %d, %d, %g; nothing published",
			m.Rows, m.Suppressed, m.Classes, m.MinClass, m.Discernibility, r.written, left, res.Classes, res.MinClass, util.Discernibility)
	}
	if skipped != left {
		return fault.Internalf("the truthfulness check found %d records left out, the search suppressed (and the series deferred) %d; nothing published", skipped, left)
	}
	if p := m.Persons; r.t.Unit != nil && (p == nil || p.MinClass != res.MinPersons) {
		return fault.Internalf("verification counted the smallest class in persons as %v, the search %d; nothing published", p, res.MinPersons)
	}
	if !m.Utility || !sameUtility(m, util, r.t.Rows) {
		return fault.Internalf("verification measured loss %g, NCP %g, non-uniform entropy %g; the search %g, %g, %g; nothing published",
			m.Loss, m.NCP, m.NonUniformEntropy, util.Loss, util.NCP, util.NonUniformEntropy)
	}
	return nil
}

// report is the release's report, from what the stages found.
func (r *run) report() (*report.Report, error) {
	rep, err := newReport(r.cfg, Facts{
		Tool: r.tool(), Created: r.created, HierarchyDigests: r.p.Hier.Digests(),
		Input:   report.FileSummary{Path: r.in, Format: r.inFmt.String(), Rows: r.t.Rows},
		Output:  report.FileSummary{Path: r.out, Format: r.outFmt.String(), Rows: r.written},
		Columns: r.t.Columns, Result: r.res, Measured: r.m, Utility: r.util, InputSizes: r.inputSizes,
		PopulationMeasured: r.popMeasured, Generalized: r.generalized(),
		Population: r.populationRows(),
		Stages:     report.Stages{Encode: job.Millis(r.start, r.encoded), Search: job.Millis(r.encoded, r.searched), Write: job.Millis(r.searched, r.wrote), Verify: job.Millis(r.wrote, r.verified)},
	})
	if err != nil {
		return nil, err
	}
	if r.mres != nil {
		rep.Partitions = &report.PartitionStats{Partitions: len(r.mres.Sizes), Splits: r.mres.Splits}
	}
	rep.LocalRecoding = localSummary(r.cfg, r.t.Columns, r.placement, r.localFirst)
	rep.Series = r.series.summary(r)
	if rep.DifferentialPrivacy = r.dpSummary(); rep.DifferentialPrivacy != nil {
		rep.Model.K, rep.Model.MaxSuppressed = r.dp.params.K, r.t.Rows
		rep.DifferentialPrivacy.Ledger = r.ledger
	}
	return rep, nil
}

// publishStage writes the reports (if any), with the release's digests, to temporary
// files, then puts the release and the reports in place; a cancelled run publishes
// nothing. Reports it replaces (--force) are removed before the release is put in
// place: a kill between the steps leaves the old release with no report, or the new
// release with none, never a release beside a report of another.
func (r *run) publishStage(ctx context.Context, rep *report.Report) error {
	var reports *Reports
	if paths := r.opt.ReportPaths(); len(paths) > 0 {
		rep.StagesMS.Total = job.Millis(r.start, time.Now())
		if err := r.digests(&rep.Output); err != nil {
			return err
		}
		var err error
		if reports, err = prepareReleaseReports(paths, rep); err != nil {
			return err
		}
		defer reports.Discard() // nothing, once published
	}
	r.opt.At(job.StagePublish)
	if err := ctx.Err(); err != nil {
		return err
	}
	if r.series != nil { // the commit point: from here on the night is published, or finished by the next
		if err := r.series.commit(r); err != nil {
			return err
		}
		r.dest = committedDest{r.dest}
	}
	replaced := reports.Len() > 0 && r.opt.Force
	if replaced {
		if err := reports.RemoveReplaced(); err != nil {
			return fmt.Errorf("%w (nothing published)", err)
		}
		r.opt.At(job.StageReportRemoved)
	}
	if err := r.dest.publish(r.opt.Force); err != nil {
		if replaced {
			return fmt.Errorf("output: %w (not published; the reports it would have replaced are removed: %s)", err, reports.Paths())
		}
		return fmt.Errorf("output: %w", err)
	}
	if reports.Len() > 0 {
		r.opt.At(job.StageReleasePublished)
		if err := reports.Publish(r.opt.Force); err != nil {
			return fmt.Errorf("%w (the release %s was published)", err, r.out)
		}
	}
	if r.series != nil {
		if err := r.series.published(); err != nil {
			return err
		}
	}
	rep.StagesMS.Total = job.Millis(r.start, time.Now())
	return nil
}

// digests records in out the digest of the written release: the file's, or every
// part's in the folder.
func (r *run) digests(out *report.FileSummary) error {
	var err error
	if folderOutput(r.out) {
		out.PartDigests, err = publish.FolderDigests(r.dest.path())
	} else {
		out.Digest, err = publish.Digest(r.dest.path())
	}
	if err != nil {
		return fmt.Errorf("output: the written release's digest: %w", err)
	}
	return nil
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
func utilityValues(cfg *schema.Config, cols []generalize.Column) [][]float64 {
	values, _ := leafValues(cfg, cols, true)
	return values
}

// pass1 is what pass 1 of a release gives the stages after it.
type pass1 struct {
	t *generalize.Table
	// listed holds, per input column, the hierarchy file of a sensitive column (nil
	// for the others).
	listed []*generalize.Hierarchy
	prot   []*protected  // the sensitive columns l-diversity and t-closeness protect
	held   []*heldColumn // the kept columns numbered for pass 2 (when hold is set)
	sub    *subsetFlags  // the research subset's flags (nil: none)
}

// loadTable is pass 1 of a release: it parses the hierarchy files, finds the protected
// sensitive columns and encodes the quasi-identifiers of src; with hold, it numbers
// the other kept columns of a text input for pass 2 too.
func loadTable(ctx context.Context, p *plan, src table.Source, hold bool) (*pass1, error) {
	fileHier := make([]*generalize.Hierarchy, len(p.QuasiCfg))
	var err error
	for i, c := range p.QuasiCfg {
		if c.Hierarchy.File != "" {
			if fileHier[i], err = p.Hier.Hierarchy(c.Hierarchy.File); err != nil {
				return nil, p.Config.Wrap(job.HierFileKey(c.Name), err)
			}
		}
	}
	// Sensitive columns with a hierarchy file: their values must be listed too.
	out := &pass1{listed: make([]*generalize.Hierarchy, len(p.Header))}
	for i, c := range p.Conf {
		if c != nil && c.Role == schema.Sensitive && c.Hierarchy != nil && c.Hierarchy.File != "" {
			if out.listed[i], err = p.Hier.Hierarchy(c.Hierarchy.File); err != nil {
				return nil, p.Config.Wrap(job.HierFileKey(c.Name), err)
			}
		}
	}
	out.prot = p.protectedColumns()
	for _, sc := range out.prot {
		sc.hier = out.listed[sc.pos] // a built hierarchy is built from the values in pass 1
	}
	if hold {
		out.held = heldColumns(p, out.listed)
	}
	if out.sub, err = newSubsetFlags(p); err != nil {
		return nil, err
	}
	if u := p.Config.Privacy.Unit; u != nil && !slices.Contains(p.Header, u.Column) {
		return nil, fault.BadInput("%s: privacy.privacy-unit.column: the input has no column %q", p.Input, u.Column)
	}
	p.progress.Enter(job.StageRead)
	if out.t, err = encode(ctx, p, src, fileHier, out.prot, out.held, out.sub); err != nil {
		if p.collect && out.t != nil {
			return out, err // validate: the columns read without error, and each one's error
		}
		return nil, err
	}
	return out, nil
}

// verifyTable runs the independent check over the records of t.
func verifyTable(ctx context.Context, t checkedTable, spec verify.Spec) (*verify.Measured, error) {
	cols := t.columns()
	names := make([]string, len(cols))
	for i, c := range cols {
		if c.unsupported != "" {
			return nil, fault.BadInput("column %q: unsupported type %s", c.name, c.unsupported)
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
// count of each; with a research subset (sub), the subset's records and counts.
func readProtected(ctx context.Context, p *plan, src table.Source, prot []*protected, sub *subsetFlags) (int, error) {
	cols := make([]int, len(prot))
	dicts := make([]*dictionary, len(prot))
	for i, sc := range prot {
		cols[i] = sc.pos
		dicts[i] = newDictionary()
		if sc.conf.Hierarchy != nil && sc.conf.Hierarchy.File != "" {
			h, err := p.Hier.Hierarchy(sc.conf.Hierarchy.File)
			if err != nil {
				return 0, p.Config.Wrap(job.HierFileKey(sc.conf.Name), err)
			}
			sc.hier = h
		}
	}
	out := make(chan *table.Batch, 2)
	if sub != nil {
		cols = append(cols, sub.pos)
	}
	errc := safe.Start(func() error { return src.Stream(ctx, cols, out) })
	var addErr error
	for b := range out {
		if sub != nil && addErr == nil {
			addErr = sub.add(p, b, len(prot))
		}
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
		if err := sc.number(func(i int) string { return p.At(d.first[i]) }, d.values); err != nil {
			return 0, err
		}
		sc.counts = make([]int64, len(sc.values))
		for r := range d.n {
			if sub == nil || sub.in[r] {
				sc.counts[sc.index[d.values[d.code(r)]]]++
			}
		}
	}
	if sub != nil {
		n := len(sub.rows())
		if n == 0 {
			return 0, fault.BadInput("%s: column %q: no record is in the research subset (privacy.subset)", p.Input, sub.name)
		}
		return n, nil
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
// matching fault.ErrUnattainable.
func Check(ctx context.Context, cfg *schema.Config, opt job.Options) (*Measured, error) {
	rp, err := planCheck(cfg, opt)
	if err != nil {
		return nil, err
	}
	src, p, err := rp.open()
	if err != nil {
		return nil, err
	}
	defer src.Close()
	spec, err := checkSpec(ctx, p, src)
	if err != nil {
		return nil, err
	}
	dr, err := dpCheckSpec(cfg, &spec)
	if err != nil {
		return nil, err
	}
	var night *seriesChecked
	if opt.Series != "" { // a series night leaves out, besides what the models require, what the series withholds
		if night, err = readSeriesCheck(cfg, opt.Series); err != nil {
			return nil, err
		}
		spec.MaxSuppressed += night.withheld()
	}
	rel := p.output
	f, err := openChecked(rel, p.outFormat, p.Config.Output.CSV, spec.Columns, releaseTable)
	if err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	defer f.Close()
	if cfg.Search.Algorithm != schema.Mondrian && dr == nil && cfg.Search.LocalRecoding == nil {
		// The missing records' check (checkFullDomain) counts the release's classes
		// once more: on the other core, while the models and truthfulness are checked.
		p.classes = prefetchClasses(ctx, p, rel, spec)
		defer p.classes.stop()
	}
	meta, metaErr := releaseRecorded(f)
	var m *Measured
	if spec.Unit == "" {
		m, err = verifyTable(ctx, f, spec)
	} else { // the models in persons, which only the input tells: counted beside it
		m, err = checkPersons(ctx, p, f, spec)
	}
	if err != nil {
		return m, violation(rel, err)
	}
	if err := releasedDisclosure(p.Config, m, nil); err != nil {
		return m, fmt.Errorf("%s: %w", rel, err)
	}
	if metaErr != nil { // parts that record different parameters, with the measurements
		return m, metaErr
	}
	if spec.Profitability = verifyProfit(cfg); spec.Profitability != nil {
		// decided on the leaves the utility domains count (checkTruth's and
		// checkMissing's specs have them)
		if err := utilitySpec(p, &spec); err != nil {
			return m, err
		}
	}
	if cfg.Search.LocalRecoding != nil { // the nodes it records, every record checked at its pass's (and the passes decided by every model)
		if err := checkLocal(ctx, p, rp.opt.Report, meta, &spec); err != nil {
			return m, err
		}
	}
	if spec.Unit == "" && dr == nil { // checkPersons measured the utility in its walk; a SafePub release is in the order of its values, checked by its classes
		if err := checkTruth(ctx, p, spec, m); err != nil {
			return m, err
		}
	}
	if night != nil { // the records left out: the series' rules decide, and checked
		return m, night.check(ctx, p, spec)
	}
	if dr != nil { // the records left out: the sample decides, which check does not know
		return m, checkDPRelease(ctx, p, dr, rp.opt.Report, meta, spec)
	}
	// The records left out: only those the models require, and the parameters the
	// release records.
	if err := checkMissing(ctx, p, rp.opt.Report, meta, spec, m); err != nil {
		return m, err
	}
	return m, nil
}

// planCheck is Check's plan: its input and release, and their formats, once it has
// checked what it can before reading them: the configuration (CheckConfig), that the
// release is a regular file or parts, and, with a report, that the report is the
// release's (checkPair).
func planCheck(cfg *schema.Config, opt job.Options) (runPlan, error) {
	if err := CheckConfig(cfg); err != nil {
		return runPlan{}, err
	}
	in, rel, inFmt, relFmt, err := paths(cfg, opt)
	if err != nil {
		return runPlan{}, err
	}
	if !table.IsParts(rel) {
		if err := regularFile(rel); err != nil {
			return runPlan{}, fmt.Errorf("release: %w", err)
		}
	}
	if opt.Report != "" {
		if err := checkPair(opt.Report, rel); err != nil {
			return runPlan{}, err
		}
	}
	var key secret
	if linkable(cfg) && cfg.Privacy.Unit.Pseudonym.KeyFile != "" { // a random key is not known
		if key, err = pseudonymKey(cfg); err != nil {
			return runPlan{}, err
		}
	}
	return runPlan{cfg: cfg, opt: opt, in: in, out: rel, inFmt: inFmt, outFmt: relFmt, key: key}, nil
}

// checkSpec reads the input src's protected columns (and a research subset's flags)
// and returns what its release must satisfy.
func checkSpec(ctx context.Context, p *plan, src table.Source) (verify.Spec, error) {
	cfg := p.Config
	prot := p.protectedColumns()
	sub, err := newSubsetFlags(p)
	if err != nil {
		return verify.Spec{}, err
	}
	rows, err := readProtected(ctx, p, src, prot, sub)
	if err != nil {
		return verify.Spec{}, err
	}
	km, _, err := kmapK(cfg, rows)
	if err != nil {
		return verify.Spec{}, err
	}
	spec := verify.Spec{K: max(cfg.Privacy.K, km, noAttackK(cfg)), MaxSuppressed: maxSuppressed(cfg.Privacy.Suppression, rows), InputRows: rows, Columns: p.ReleaseHeader(), Quasi: p.QuasiNames()}
	if spec.Risk, err = verifyRisk(cfg, rows); err != nil {
		return verify.Spec{}, err
	}
	for _, sc := range prot {
		spec.Sensitive = append(spec.Sensitive, sc.spec())
	}
	spec.Released = releasedAsIs(p)
	spec.Unit = unitColumn(cfg)
	return spec, nil
}

// checkTruth reads the release p.output beside the input for truthfulness, every
// release record counted with the input record it generalizes, and puts the utility
// metrics it measures into m (the models were checked by verifyTable).
func checkTruth(ctx context.Context, p *plan, spec verify.Spec, m *Measured) error {
	rel := p.output
	p.maxSupp = spec.MaxSuppressed
	uspec := spec
	uspec.Sensitive, uspec.Released = nil, nil
	uspec.Profitability = prosecutorOnly(spec.Profitability)
	if err := utilitySpec(p, &uspec); err != nil {
		return err
	}
	counter, err := verify.NewCounter(uspec, spec.Columns)
	if err != nil {
		return fault.Internalf("%w", err)
	}
	if _, err := verifyTruth(ctx, p, rel, spec.Columns, counter, nil); err != nil {
		return violation(rel, err)
	}
	um, err := counter.Finish()
	if err != nil {
		return violation(rel, err)
	}
	m.Loss, m.NCP, m.NonUniformEntropy, m.Utility = um.Loss, um.NCP, um.NonUniformEntropy, um.Utility
	m.LeastPayout, m.Payout = um.LeastPayout, um.Payout
	return nil
}
