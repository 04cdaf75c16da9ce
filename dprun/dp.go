package dprun

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"sanitizer/dphist"
	"sanitizer/fault"
	"sanitizer/internal/build"
	"sanitizer/internal/safe"
	"sanitizer/job"
	"sanitizer/publish"
	"sanitizer/report"
	"sanitizer/schema"
	"sanitizer/table"
)

// dpColumn is one column the outputs read: when an output counts it (dom set), its
// cell per row (−1: outside the declared domain); when an aggregate measures it, its
// values; or both.
type dpColumn struct {
	dom        *dpDomain
	cells      []int32
	outside    int // first row outside the domain (−1: none)
	null       int // that row, when its value is a null (−1: not a null)
	aggregated bool
	values     []float64
}

// maxDPCells bounds the cells of one histogram, marginal or aggregate.
const maxDPCells = 1 << 24

// dpInput is what the outputs read: per column its cells or values, and the privacy
// unit's hash per row.
type dpInput struct {
	rows int
	outs []*Output            // the outputs, described before reading
	col  map[string]*dpColumn // fixed before reading; each column filled by one goroutine
	// unit is the privacy unit's id per row as the first 64 bits of its SHA-256;
	// unitCheck the next 64 bits, to refuse the (astronomically unlikely, or forged)
	// case of two ids sharing the first: bounding them as one unit would let one
	// change the other's kept rows.
	unit, unitCheck []uint64

	// The rows kept under a bound on rows alone, shared by the outputs.
	rowsOnce sync.Once
	rowsKeep []bool
	rowsErr  error
}

// Run runs the dp command: every output of the configuration's dp section, written as a
// file of opt.Output (a folder that must not exist or be empty) with manifest.json and
// manifest.html (the same for a person to read).
// With opt.Ledger set, the run's spend is recorded there first. Errors match
// fault.ErrBadInput for bad input or configuration and fault.ErrUnattainable when the
// budget does not allow the run; either way nothing is written. A defect of this
// program (a panic, on any of the run's goroutines) matches fault.ErrInternal.
func Run(ctx context.Context, cfg *schema.Config, opt job.Options) (man *report.Manifest, err error) {
	err = safe.Call(func() error {
		man, err = dp(ctx, cfg, opt)
		return err
	})
	if err != nil {
		return nil, err
	}
	return man, nil
}

// dp is DP, its panics not recovered.
func dp(ctx context.Context, cfg *schema.Config, opt job.Options) (*report.Manifest, error) {
	r, err := prepare(cfg, opt)
	if err != nil {
		return nil, err
	}
	log := opt.Logger()
	start := time.Now()
	p, data, err := r.readStage(ctx)
	if err != nil {
		return nil, err
	}
	read := time.Now()
	log.Info("stage done", "stage", job.StageRead, "columns", len(data.col), "ms", job.Millis(start, read)) // the record count is not DP: never logged
	man := r.newManifest()
	tables, err := r.noiseStage(ctx, p, data, man)
	if err != nil {
		return nil, err
	}
	computed := time.Now()
	log.Info("stage done", "stage", job.StageNoise, "outputs", len(tables), "ms", job.Millis(read, computed))
	opt.At(job.StageNoise)
	return man, r.finish(ctx, man, tables, computed)
}

// Prepared is a dp run's input, ledger and spend, checked before anything is read.
type Prepared struct {
	Input       string
	InputFormat schema.Format
	Ledger      string // the ledger's resolved path ("": none)
	Spend       dphist.Spend
}

// run is a dp run once planned (prepare, or Publish for one noised elsewhere): the
// configuration and the command's options, checked, and what they resolve to. The
// stages are its methods: the configuration enters a run once, at its planning.
type run struct {
	cfg  *schema.Config
	opt  job.Options
	prep *Prepared
}

// Prepare checks what a dp run on opt's input can be checked for before any record is
// read: the dp section against what this version honours, the input and output
// paths, and the run's spend against the configured totals and the ledger. Errors as
// Run's.
func Prepare(cfg *schema.Config, opt job.Options) (prep *Prepared, err error) {
	err = safe.Call(func() error {
		r, err := prepare(cfg, opt)
		if r != nil {
			prep = r.prep
		}
		return err
	})
	return prep, err
}

// prepare is a dp run's planning step: every check that needs no record, in this
// order: the dp section (CheckConfig, the same checks validate runs), the paths
// (dpPaths), the spend (plannedSpend).
func prepare(cfg *schema.Config, opt job.Options) (*run, error) {
	if err := CheckConfig(cfg, opt); err != nil {
		return nil, err
	}
	in, inFmt, ledger, err := dpPaths(cfg, opt)
	if err != nil {
		return nil, err
	}
	spend, err := plannedSpend(cfg, opt, ledger)
	if err != nil {
		return nil, err
	}
	return &run{cfg: cfg, opt: opt, prep: &Prepared{Input: in, InputFormat: inFmt, Ledger: ledger, Spend: spend}}, nil
}

// Publish finishes a dp run whose outputs were noised elsewhere (on Beam's workers):
// every output's noisy values, one per partition (noisy[i] is outs[i]'s), become its
// table with the output's post-processing; the run's spend is recorded in the ledger;
// and only then are the outputs and the manifest written into opt.Output. Errors as
// Run's; nothing is published on any.
func Publish(ctx context.Context, cfg *schema.Config, opt job.Options, prep *Prepared, outs []*Output, noisy []Noisy) (man *report.Manifest, err error) {
	err = safe.Call(func() error {
		if len(noisy) != len(outs) || len(outs) != len(cfg.DP.Outputs) {
			return fault.Internalf("%d noisy results for %d outputs", len(noisy), len(outs))
		}
		r := &run{cfg: cfg, opt: opt, prep: prep}
		man = r.newManifest()
		tables := make([]*dpTable, len(outs))
		for i, out := range outs {
			if tables[i], err = out.table(noisy[i]); err != nil {
				return err
			}
			man.Outputs = append(man.Outputs, out.Manifest)
		}
		return r.finish(ctx, man, tables, time.Now())
	})
	if err != nil {
		return nil, err
	}
	return man, nil
}

// finish records the run's spend and then writes its tables and manifest (record,
// then release: the spend is in the ledger before any noisy value reaches a file; a
// failure from here on leaves it spent and nothing published).
func (r *run) finish(ctx context.Context, man *report.Manifest, tables []*dpTable, computed time.Time) error {
	if err := r.recordStage(man); err != nil {
		return err
	}
	return r.writeStage(ctx, man, tables, computed)
}

// dpPaths resolves the run's input, its format and the ledger's path, and checks the
// output folder, before anything is read.
func dpPaths(cfg *schema.Config, opt job.Options) (in string, inFmt schema.Format, ledger string, err error) {
	in = cfg.Input.Path
	if opt.Input != "" {
		in = opt.Input
	}
	if in == "" {
		return "", "", "", fault.BadInput("input: no input file (--in or input.path)")
	}
	if inFmt, err = table.InputFormat(in, cfg.Input); err != nil {
		return "", "", "", err
	}
	if opt.Output == "" {
		return "", "", "", fault.BadInput("--out: no output folder")
	}
	if err := checkOutDir(opt.Output, in, cfg.File, opt.Ledger); err != nil {
		return "", "", "", err
	}
	if opt.Ledger != "" {
		if ledger, err = ledgerPath(opt.Ledger, opt.Output); err != nil {
			return "", "", "", err
		}
	}
	return in, inFmt, ledger, nil
}

// plannedSpend is the run's spend, refused when the outputs' ε or δ add up past the
// largest float64 (bad input: no ledger or manifest could hold it), when the run alone
// would pass the configured totals or, with a ledger, when the dataset's spending so
// far plus this run would, or when the ledger could not be written or locked (see
// dphist.Check): checked now, before reading, and the charge again under the
// ledger's lock when recording.
func plannedSpend(cfg *schema.Config, opt job.Options, ledger string) (dphist.Spend, error) {
	spend, err := CheckBudget(cfg, opt)
	if err != nil {
		return spend, err
	}
	if ledger != "" {
		if err := dphist.Check(ledger, cfg.Dataset, cfg.DP.EpsilonTotal, cfg.DP.DeltaTotal, spend); err != nil {
			return spend, err
		}
	}
	return spend, nil
}

// CheckBudget is the spend of the dp run cfg describes (its outputs' budgets composed),
// refused when dp's totals cannot hold it: the budget check that needs neither the
// input nor the ledger, which validate makes too. cfg has passed CheckConfig.
func CheckBudget(cfg *schema.Config, opt job.Options) (dphist.Spend, error) {
	spend := dphist.Spend{Time: opt.Time().UTC()}
	parts := make([]dphist.Spend, len(cfg.DP.Outputs))
	for i, o := range cfg.DP.Outputs {
		spend.Outputs = append(spend.Outputs, o.Name)
		parts[i] = dphist.Spend{Epsilon: o.Epsilon, Delta: o.Delta}
	}
	var err error
	if spend.Epsilon, spend.Delta, err = dphist.Compose(parts); err != nil {
		return spend, cfg.Errorf("dp.outputs", "the outputs' budgets: %w", err)
	}
	if err := (&dphist.Ledger{Datasets: map[string]*dphist.Account{}}).Charge(cfg.Dataset, cfg.DP.EpsilonTotal, cfg.DP.DeltaTotal, spend); err != nil {
		return spend, cfg.Wrap("dp", fmt.Errorf("the outputs need ε=%g, δ=%g: %w", spend.Epsilon, spend.Delta, err))
	}
	return spend, nil
}

// readStage opens the input and reads the columns the outputs use.
func (r *run) readStage(ctx context.Context) (*job.Plan, *dpInput, error) {
	src, p, err := job.OpenInput(r.cfg, r.prep.Input, r.prep.InputFormat)
	if err != nil {
		return nil, nil, err
	}
	defer src.Close()
	r.opt.At(job.StageRead)
	data, err := readInput(ctx, p, src)
	if err != nil {
		return nil, nil, err
	}
	return p, data, nil
}

// newManifest is the run's manifest, before its outputs.
func (r *run) newManifest() *report.Manifest {
	cfg, spend := r.cfg, r.prep.Spend
	man := &report.Manifest{
		Tool: "sanitize", Version: build.Version, Dataset: cfg.Dataset, ConfigDigest: "sha256:" + cfg.Digest,
		CreatedUTC: spend.Time.Format(time.RFC3339), Neighbours: cfg.DP.Neighbours,
		Epsilon: spend.Epsilon, Delta: spend.Delta,
	}
	if u := cfg.DP.PrivacyUnit; u != nil {
		man.PrivacyUnit = &report.ManifestUnit{Column: u.Column, MaxRowsPerUnit: u.MaxRowsPerUnit, MaxCellsPerUnit: u.MaxCellsPerUnit, Seed: u.Seed}
	}
	return man
}

// noiseStage computes every output, with its noise, into a table in memory: the
// outputs are independent, computed concurrently and reported in order.
func (r *run) noiseStage(ctx context.Context, p *job.Plan, data *dpInput, man *report.Manifest) ([]*dpTable, error) {
	tables := make([]*dpTable, len(r.cfg.DP.Outputs))
	man.Outputs = make([]report.ManifestOutput, len(r.cfg.DP.Outputs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.opt.Parallel())
	for i, out := range data.outs {
		g.Go(safe.Go(func() (err error) {
			man.Outputs[i], tables[i], err = computeOutput(gctx, p, out, data)
			return err
		}))
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return tables, nil
}

// recordStage charges the run's spend to the ledger, if there is one, and notes the
// dataset's account in the manifest.
func (r *run) recordStage(man *report.Manifest) error {
	cfg, opt, ledger, spend := r.cfg, r.opt, r.prep.Ledger, r.prep.Spend
	if ledger == "" {
		opt.Logger().Warn("no --ledger: this run's spend is not recorded; repeated runs on the same data add up unchecked", "epsilon", spend.Epsilon, "delta", spend.Delta)
		return nil
	}
	a, err := dphist.Record(ledger, cfg.Dataset, cfg.DP.EpsilonTotal, cfg.DP.DeltaTotal, spend)
	if err != nil {
		return fmt.Errorf("%s: %w", opt.Ledger, err)
	}
	e, d := a.Spent()
	ef, _ := e.Float64()
	df, _ := d.Float64()
	man.Ledger = &report.ManifestLedger{File: filepath.Base(opt.Ledger), EpsilonSpent: ef, DeltaSpent: df,
		EpsilonTotal: a.EpsilonTotal, DeltaTotal: a.DeltaTotal,
		Recorded: "before any output was written"}
	for _, sp := range a.Spends {
		man.Ledger.History = append(man.Ledger.History, report.LedgerSpend{Time: sp.Time.UTC().Format(time.RFC3339), Epsilon: sp.Epsilon, Delta: sp.Delta, Outputs: sp.Outputs})
	}
	opt.At(job.StageRecorded)
	return nil
}

// writeStage writes every output and the manifest into a temporary folder and moves
// it into place; a cancelled run publishes nothing.
func (r *run) writeStage(ctx context.Context, man *report.Manifest, tables []*dpTable, computed time.Time) error {
	cfg, opt := r.cfg, r.opt
	tmp, err := publish.CreateFolder(opt.Output)
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	defer tmp.Discard() // nothing, once published
	for i, o := range cfg.DP.Outputs {
		err := tmp.WriteFile(man.Outputs[i].File, func(f *os.File) error { return writeDPTable(f, dpFormat(o), cfg, o, tables[i]) })
		if err != nil {
			return fmt.Errorf("output %s: %w", o.Name, err)
		}
	}
	opt.Logger().Info("stage done", "stage", job.StageWrite, "outputs", len(tables), "ms", job.Millis(computed, time.Now()))
	if err := tmp.WriteFile("manifest.json", func(f *os.File) error { return report.WriteJSON(f, man) }); err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	if err := tmp.WriteFile("manifest.html", func(f *os.File) error { return report.WriteManifestHTML(f, man) }); err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	opt.At(job.StagePublish)
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := tmp.Publish(); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	return nil
}

// checkOutDir accepts an output folder that does not exist (its parent must) or is an
// empty folder, in a folder the process can write in, and that is not one of the
// run's other files; it sweeps the temporaries that killed runs left for it.
func checkOutDir(dir string, others ...string) error {
	for _, o := range others {
		if o != "" && job.Abs(o) == job.Abs(dir) {
			return fault.BadInput("--out: %s is also the input, the configuration or the ledger", dir)
		}
	}
	return publish.CheckFolder("--out", dir)
}

// CheckConfig rejects dp settings this version cannot honour, before any reading.
func CheckConfig(cfg *schema.Config, opt job.Options) error {
	d := cfg.DP
	if d == nil {
		return cfg.Errorf("dp", "the configuration has no dp section")
	}
	if len(d.Outputs) == 0 {
		return cfg.Errorf("dp.outputs", "required by sanitize dp: the outputs to compute (the dp section's totals alone serve a release's --ledger)")
	}
	if u := d.PrivacyUnit; u != nil && cfg.Column(u.Column).Null != nil {
		return cfg.Errorf("columns."+u.Column+".null-as", "the privacy unit may not stand for nulls (it would make one unit of unrelated rows)")
	}
	if opt.Ledger != "" && cfg.Dataset == "" {
		return cfg.Errorf("dataset", "required with --ledger (the ledger keeps one account per dataset)")
	}
	for i, o := range d.Outputs {
		key := fmt.Sprintf("dp.outputs[%d]", i)
		if o.Mechanism == schema.Laplace && o.Delta != 0 {
			return cfg.Errorf(key+".delta", "the laplace mechanism takes no delta (use mechanism: gaussian)")
		}
		if slices.Contains(o.Post, schema.PostConsistent) && o.Marginals == nil {
			return cfg.Errorf(key+".post", "consistent applies to marginals only")
		}
		if o.Aggregate != nil && slices.Contains(o.Post, schema.PostRound) {
			return cfg.Errorf(key+".post", "round does not apply to an aggregate (its counts are whole already)")
		}
		for _, c := range outputColumns(o) {
			if u := d.PrivacyUnit; u != nil && c == u.Column {
				return cfg.Errorf(key, "the privacy unit %q may not appear in an output", c)
			}
		}
		if a := o.Aggregate; a != nil {
			if u := d.PrivacyUnit; u != nil && a.Column == u.Column {
				return cfg.Errorf(key+".aggregate.column", "the privacy unit %q may not appear in an output", a.Column)
			}
			c := cfg.Column(a.Column)
			if c.Type != schema.Integer && c.Type != schema.Float {
				return cfg.Errorf(key+".aggregate.column", "%q needs type integer or float, not %s", a.Column, c.Type)
			}
		}
	}
	return nil
}

// maxMarginals bounds the number of marginals of one output.
const maxMarginals = 4096

// binomial is C(n, k), or maxMarginals+1 once it exceeds maxMarginals.
func binomial(n, k int) int {
	c := 1
	for i := 1; i <= k; i++ {
		c = c * (n - k + i) / i // exact: a product of i consecutive integers over i!
		if c > maxMarginals {
			return maxMarginals + 1
		}
	}
	return c
}

// checkSizes refuses, before any record is read, outputs with too many cells or
// marginals, and an other cell whose name a domain already uses.
func checkSizes(cfg *schema.Config, doms map[string]*dpDomain) error {
	for i, o := range cfg.DP.Outputs {
		key := fmt.Sprintf("dp.outputs[%d]", i)
		names := outputColumns(o)
		sizes := make([]int, len(names))
		for j, n := range names {
			labels := doms[n].labels
			sizes[j] = len(labels)
			if o.Other {
				if slices.Contains(labels, "other") {
					return cfg.Errorf(key+".other", "columns.%s.domain already has a value \"other\"", n)
				}
				sizes[j]++
			}
		}
		if o.Marginals != nil {
			if c := binomial(len(names), o.Marginals.Way); c > maxMarginals {
				return cfg.Errorf(key+".marginals", "more than %d marginals", maxMarginals)
			}
			subsets := dphist.Subsets(len(names), o.Marginals.Way)
			total := 0
			for _, sub := range subsets {
				ss := make([]int, len(sub))
				for j, a := range sub {
					ss[j] = sizes[a]
				}
				n, err := dphist.Cells(ss, maxDPCells)
				if err != nil {
					return cfg.Errorf(key+".marginals", "%w", err)
				}
				if total += n; total > maxDPCells {
					return cfg.Errorf(key+".marginals", "more than %d cells in all", maxDPCells)
				}
			}
		} else if s := o.Synthetic; s != nil {
			// The model holds every column's 1-way marginal at least.
			limit := s.MaxModelSize
			if limit == 0 {
				limit = dphist.DefaultMaxModelSize
			}
			for j, n := range sizes {
				if n > limit {
					return cfg.Errorf(key+".synthetic.max-model-size", "column %q has %d values in its domain, more than the model may hold (%d cells)", names[j], n, limit)
				}
			}
		} else if _, err := dphist.Cells(sizes, maxDPCells); err != nil {
			return cfg.Errorf(key, "%w", err)
		}
		if u := cfg.DP.PrivacyUnit; u != nil && u.MaxCellsPerUnit > 0 {
			if _, err := dphist.Cells(sizes, math.MaxInt64/2); err != nil {
				return cfg.Errorf(key, "the cells of a privacy unit cannot be told apart: %w", err)
			}
		}
	}
	return nil
}

// outputColumns is the columns whose domains an output's cells are made of.
func outputColumns(o schema.DPOutput) []string {
	switch {
	case o.Histogram != nil:
		return o.Histogram
	case o.Marginals != nil:
		return o.Marginals.Columns
	case o.Aggregate != nil:
		return o.Aggregate.GroupBy
	case o.Synthetic != nil:
		return o.Synthetic.Columns
	}
	return nil
}

// OutputColumns is every column output o reads: the columns of its cells and an
// aggregate's column.
func OutputColumns(o schema.DPOutput) []string {
	cols := outputColumns(o)
	if o.Aggregate != nil {
		cols = append(slices.Clip(cols), o.Aggregate.Column)
	}
	return cols
}

// CheckInput is what validate checks of a dp run once its input is open: it reads src
// (planned as p by job.OpenInput) as the run does and lists, for each column the
// outputs count, the first record outside its declared domain that the run would
// refuse, as the run names it. Errors match fault.ErrBadInput as the run's do.
func CheckInput(ctx context.Context, p *job.Plan, src table.Source) error {
	data, err := readInput(ctx, p, src)
	if err != nil {
		return err
	}
	return data.checkDomains(p)
}

// readInput reads the columns the outputs of p's configuration use in one streamed
// pass.
func readInput(ctx context.Context, p *job.Plan, src table.Source) (*dpInput, error) {
	cfg := p.Config
	pos := make(map[string]int, len(p.Header))
	for i, h := range p.Header {
		pos[h] = i
	}
	data := &dpInput{col: map[string]*dpColumn{}}
	var names []string // every column the outputs read once, then the unit
	column := func(name string) *dpColumn {
		c := data.col[name]
		if c == nil {
			c = &dpColumn{outside: -1, null: -1}
			data.col[name] = c
			names = append(names, name)
		}
		return c
	}
	outs, err := Describe(cfg, p)
	if err != nil {
		return nil, err
	}
	data.outs = outs
	for _, out := range outs {
		for j, name := range out.Manifest.Columns {
			column(name).dom = out.doms[j]
		}
		if a := out.Spec.Aggregate; a != nil {
			column(a.Column).aggregated = true
		}
	}
	unitCol := ""
	if u := cfg.DP.PrivacyUnit; u != nil {
		unitCol = u.Column
		names = append(names, u.Column)
	}
	cols := make([]int, len(names))
	for i, n := range names {
		cols[i] = pos[n]
	}
	if h, ok := src.(interface{ expectedRows() int }); ok {
		n := h.expectedRows()
		for _, c := range data.col {
			if c.dom != nil {
				c.cells = make([]int32, 0, n)
			}
			if c.aggregated {
				c.values = make([]float64, 0, n)
			}
		}
		if unitCol != "" {
			data.unit, data.unitCheck = make([]uint64, 0, n), make([]uint64, 0, n)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := make(chan *table.Batch, 2)
	errc := safe.Start(func() error { return src.Stream(ctx, cols, out) })
	var readErr error
	for b := range out {
		if readErr != nil {
			continue // draining what the cancelled stream still sends
		}
		if readErr = data.add(p, b, names, cols, unitCol); readErr != nil {
			cancel()
		}
	}
	if readErr != nil {
		<-errc
		return nil, readErr
	}
	if err := <-errc; err != nil {
		return nil, err
	}
	data.rows = src.Rows()
	if unitCol != "" && !dphist.SameUnits(data.unit, data.unitCheck) {
		return nil, fault.BadInput("%s: column %q: two different privacy-unit ids share the first 64 bits of their SHA-256; their contributions cannot be bounded apart", p.Input, unitCol)
	}
	data.unitCheck = nil
	return data, nil
}

// add maps one batch, its columns in parallel: every column but the unit (the last
// when unitCol is set) to its cells, its values or both.
func (d *dpInput) add(p *job.Plan, b *table.Batch, names []string, cols []int, unitCol string) error {
	var g errgroup.Group
	for f, name := range names {
		g.Go(safe.Go(func() error {
			if name == unitCol && f == len(names)-1 {
				return d.addUnits(p, b, f, cols[f], name)
			}
			c := d.col[name]
			if c.dom != nil {
				d.addCells(p, b, f, cols[f], c)
			}
			if c.aggregated {
				return d.addValues(p, b, f, cols[f], name, c)
			}
			return nil
		}))
	}
	return g.Wait()
}

// field is the text of field f of record i of b, input column pos, with a null read
// as the column's null-as value; null reports a null without one.
func field(p *job.Plan, b *table.Batch, i, f, pos int) (v string, null bool) {
	if p.IsNull(b, i, f, pos) {
		if c := p.Conf[pos]; c.Null != nil {
			return *c.Null, false
		}
		return "", true
	}
	return b.Fields[i*b.Width+f], false
}

// addCells maps field f of every record of b to its cell of c's domain.
func (d *dpInput) addCells(p *job.Plan, b *table.Batch, f, pos int, c *dpColumn) {
	for i := range b.N {
		v, null := field(p, b, i, f, pos)
		cell := int32(-1)
		if !null {
			if x, ok := c.dom.cell(v); ok {
				cell = x
			}
		}
		if cell < 0 && c.outside < 0 {
			c.outside = b.First + i
			if null {
				c.null = c.outside
			}
		}
		c.cells = append(c.cells, cell)
	}
}

// addUnits hashes the privacy unit of every record of b.
func (d *dpInput) addUnits(p *job.Plan, b *table.Batch, f, pos int, name string) error {
	for i := range b.N {
		v, null := field(p, b, i, f, pos)
		if null || v == "" {
			return p.Config.Errorf("dp.privacy-unit.column", "%s: column %q: no privacy unit (null or empty: every row must name its unit)", p.At(b.First+i), name)
		}
		// One id, one unit, whatever its spelling ("07" and "7" in an integer column).
		v, ok := table.Canonical(p.Types[pos], v)
		if !ok {
			return fault.BadInput("%s: column %q: not a valid %s", p.At(b.First+i), name, p.Types[pos])
		}
		sum := sha256.Sum256([]byte(v))
		d.unit = append(d.unit, binary.LittleEndian.Uint64(sum[:8]))
		d.unitCheck = append(d.unitCheck, binary.LittleEndian.Uint64(sum[8:16]))
	}
	return nil
}

// addValues parses the aggregated values of field f of every record of b.
func (d *dpInput) addValues(p *job.Plan, b *table.Batch, f, pos int, name string, c *dpColumn) error {
	for i := range b.N {
		v, null := field(p, b, i, f, pos)
		if null {
			return aggregatedNullError(p, b.First+i, name)
		}
		x, err := numberOf(p.Types[pos], p.Ints[pos], v)
		if err != nil || math.IsNaN(x) {
			return fault.BadInput("%s: column %q: not a valid %s", p.At(b.First+i), name, p.Types[pos])
		}
		c.values = append(c.values, x)
	}
	return nil
}

// numberOf is the value of a number of type typ (an integer: of type it) given as text.
func numberOf(typ schema.Type, it table.IntType, v string) (float64, error) {
	switch typ {
	case schema.Integer:
		t, err := table.ParseInteger(it, v)
		if it.Unsigned {
			return float64(t.U), err
		}
		return float64(t.I), err
	case schema.Float:
		t, err := table.ParseTyped(typ, v)
		return t.F, err
	}
	t, err := table.ParseTyped(typ, v)
	return float64(t.I), err
}

// dpTable is one output's rows, as canonical text, with its columns.
type dpTable struct {
	cols   []table.OutColumn
	fields []string
	n      int
}

func (t *dpTable) add(rec ...string) {
	t.fields = append(t.fields, rec...)
	t.n++
}

// checkDomains is nil when every value of the outputs' columns lies in its declared
// domain or an output maps it to its other cell; else it lists, for each column, the
// first record a run would refuse, as the run names it (validate: the run stops at the
// first output it computes).
func (d *dpInput) checkDomains(p *job.Plan) error {
	var errs schema.ErrorList
	seen := map[string]bool{}
	for _, out := range d.outs {
		for _, n := range out.Manifest.Columns {
			if c := d.col[n]; c.outside >= 0 && !out.Spec.Other && !seen[n] {
				seen[n] = true
				errs.Add(outsideError(p, c.outside, c.null >= 0, n, out.Spec.Name))
			}
		}
	}
	return errs.Err()
}

// outputCells returns the cells of out's columns per row, with values outside the
// domain mapped to the "other" cell when the output declares one, and an error naming
// the column and first row otherwise.
func outputCells(p *job.Plan, out *Output, data *dpInput) ([][]int32, error) {
	cols := make([][]int32, len(out.Sizes))
	for i, n := range out.Manifest.Columns {
		c := data.col[n]
		cols[i] = c.cells
		if c.outside < 0 {
			continue
		}
		if !out.Spec.Other {
			return nil, outsideError(p, c.outside, c.null >= 0, n, out.Spec.Name)
		}
		other := int32(out.Sizes[i] - 1)
		mapped := make([]int32, len(cols[i]))
		for r, c := range cols[i] {
			if c < 0 {
				c = other
			}
			mapped[r] = c
		}
		cols[i] = mapped
	}
	return cols, nil
}

// computeOutput computes one output: its cells' counts (or groups' statistics) over
// the rows its privacy unit's bound keeps, with noise, as its table.
func computeOutput(ctx context.Context, p *job.Plan, out *Output, data *dpInput) (report.ManifestOutput, *dpTable, error) {
	cfg := p.Config
	cols, err := outputCells(p, out, data)
	if err != nil {
		return out.Manifest, nil, err
	}
	var keep []bool
	if u := cfg.DP.PrivacyUnit; u != nil {
		b := dphist.Bound{Cells: u.MaxCellsPerUnit, Rows: u.MaxRowsPerUnit, Seed: u.Seed}
		if keep, err = boundRows(b, cols, out.Sizes, data); err != nil {
			return out.Manifest, nil, fmt.Errorf("output %s: %w", out.Spec.Name, err)
		}
	}
	var noisy Noisy
	switch out.Manifest.Kind {
	case "synthetic":
		t, err := syntheticOutput(ctx, cfg, out.Spec, &out.Manifest, cols, out.Sizes, out.Labels, keep, data)
		return out.Manifest, t, err
	case "histogram":
		noisy.Counts, err = noisyCounts(out.Mechanism, cols, seq(len(cols)), out.Sizes, keep)
	case "marginals":
		for _, s := range out.Subsets {
			c, err := noisyCounts(out.Mechanism, cols, s, out.Sizes, keep)
			if err != nil {
				return out.Manifest, nil, err
			}
			noisy.Counts = append(noisy.Counts, c...)
		}
	default:
		noisy.Groups, err = noisyGroups(out, cols, keep, data)
	}
	if err != nil {
		return out.Manifest, nil, fmt.Errorf("output %s: %w", out.Spec.Name, err)
	}
	t, err := out.table(noisy)
	return out.Manifest, t, err
}

// boundRows applies the privacy unit's bound to an output whose cells are cols. A
// bound on rows alone does not look at the cells: it is computed once for all outputs.
func boundRows(b dphist.Bound, cols [][]int32, sizes []int, data *dpInput) ([]bool, error) {
	if b.Cells == 0 {
		data.rowsOnce.Do(func() {
			data.rowsKeep = make([]bool, data.rows)
			_, data.rowsErr = b.Keep(data.unit, data.unit, data.rowsKeep)
		})
		return data.rowsKeep, data.rowsErr
	}
	// checkSizes made sure, before reading, that the cross product fits a uint64.
	cell := make([]uint64, data.rows)
	for i, c := range cols {
		sz := uint64(sizes[i])
		for r, v := range c {
			cell[r] = cell[r]*sz + uint64(v)
		}
	}
	keep := make([]bool, data.rows)
	if _, err := b.Keep(data.unit, cell, keep); err != nil {
		return nil, err
	}
	return keep, nil
}

// noisyCounts counts the kept rows (keep nil: every row) in the cells of the cross
// product of columns attrs of cols and adds m's noise to every count.
func noisyCounts(m dphist.Mechanism, cols [][]int32, attrs, sizes []int, keep []bool) ([]float64, error) {
	sub, subSizes := make([][]int32, len(attrs)), make([]int, len(attrs))
	for j, a := range attrs {
		sub[j], subSizes[j] = cols[a], sizes[a]
	}
	n, err := dphist.Cells(subSizes, maxDPCells)
	if err != nil {
		return nil, err
	}
	counts := make([]int64, n)
	if keep == nil {
		dphist.Count(counts, sub, subSizes)
	} else {
		dphist.CountKept(counts, sub, subSizes, keep)
	}
	noisy, err := dphist.Noisy(counts, m)
	if err != nil {
		return nil, err
	}
	cells := make([]float64, n)
	for i, v := range noisy {
		cells[i] = float64(v)
	}
	return cells, nil
}

// noisyGroups computes an aggregate's per-group statistics with the library's dpagg.
func noisyGroups(out *Output, cols [][]int32, keep []bool, data *dpInput) ([]dphist.GroupResult, error) {
	// The kept rows' groups and values, in one pass.
	group := make([]int32, 0, data.rows)
	all := data.col[out.Spec.Aggregate.Column].values
	values := all
	if keep != nil {
		values = make([]float64, 0, data.rows)
	}
	for r := range data.rows {
		if keep != nil {
			if !keep[r] {
				continue
			}
			values = append(values, all[r])
		}
		g := int32(0)
		for i, c := range cols {
			g = g*int32(out.Sizes[i]) + c[r]
		}
		group = append(group, g)
	}
	return out.Aggregate.Compute(group, values, int(out.Partitions()))
}

// cellLabels writes into out[a], for each column a of attrs, the label of cell c of
// the cross product of those columns' domains (mixed radix, the last varying fastest).
func cellLabels(out []string, c int, attrs, sizes []int, labels [][]string) {
	for j := len(attrs) - 1; j >= 0; j-- {
		a := attrs[j]
		out[a] = labels[a][c%sizes[a]]
		c /= sizes[a]
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func countColumn(whole bool) table.OutColumn {
	if whole {
		return table.OutColumn{Name: "count", Type: schema.Integer}
	}
	return table.OutColumn{Name: "count", Type: schema.Float}
}

func formatCount(v float64, whole bool) string {
	if whole {
		return table.FormatInt(int64(v))
	}
	return table.FormatFloat(v)
}

// postProcess applies the requested post-processing in the fixed order consistent,
// clamp, round, and returns the names applied in that order.
func postProcess(sizes []int, ms []dphist.Marginal, post []schema.PostProcess) ([]dphist.Marginal, []string, error) {
	applied := []string{}
	if slices.Contains(post, schema.PostConsistent) {
		var err error
		if ms, err = dphist.Consistent(sizes, ms); err != nil {
			return nil, nil, err
		}
		applied = append(applied, schema.PostConsistent.String())
	}
	if slices.Contains(post, schema.PostClamp) {
		for _, m := range ms {
			for i, v := range m.Cells {
				m.Cells[i] = math.Max(v, 0)
			}
		}
		applied = append(applied, schema.PostClamp.String())
	}
	if slices.Contains(post, schema.PostRound) {
		for _, m := range ms {
			for i, v := range m.Cells {
				m.Cells[i] = math.Round(v)
			}
		}
		applied = append(applied, schema.PostRound.String())
	}
	return ms, applied, nil
}

// dpFormat is an output's file format.
func dpFormat(o schema.DPOutput) schema.Format {
	if o.Format == "" {
		return schema.FormatCSV
	}
	return o.Format
}

// writeDPTable writes one output table to f.
func writeDPTable(f io.Writer, format schema.Format, cfg *schema.Config, o schema.DPOutput, t *dpTable) error {
	meta := map[string]string{
		"sanitize.version": build.Version, "sanitize.config_digest": "sha256:" + cfg.Digest, "sanitize.dp_output": o.Name,
		"sanitize.mechanism": o.Mechanism.String(), "sanitize.epsilon": table.FormatFloat(o.Epsilon), "sanitize.delta": table.FormatFloat(o.Delta),
	}
	if cfg.Dataset != "" {
		meta["sanitize.dataset"] = cfg.Dataset
	}
	dialect := cfg.Output.CSV
	if dialect.Separator == 0 {
		dialect = schema.CSV{Separator: ',', Header: true}
	}
	s, err := table.NewSink(f, format, dialect, t.cols, meta)
	if err != nil {
		return err
	}
	w := len(t.cols)
	for lo := 0; lo < t.n; lo += table.BatchRows {
		hi := min(lo+table.BatchRows, t.n)
		if err := s.Write(t.fields[lo*w:hi*w], nil, hi-lo); err != nil {
			return err
		}
	}
	return s.Finish()
}
