package release

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"sanitizer/fault"
	"sanitizer/internal/safe"
	"sanitizer/report"
	"sanitizer/schema"
	"sanitizer/verify"
)

// The release parameters a release records (releaseMetadata's keys) that Check
// compares with what it measures or is configured with, and what a JSON report calls
// each.
var recordedKeys = []struct{ meta, report string }{
	{"sanitize.k", "model.k"},
	{"sanitize.suppression_limit", "model.suppression_limit"},
	{"sanitize.max_suppressed", "model.max_suppressed_records"},
	{"sanitize.suppressed", "suppressed"},
	{"sanitize.input_rows", "input.rows"},
	{"sanitize.algorithm", "algorithm"},
	{"sanitize.l_diversity", "model.l_diversity"},
	{"sanitize.t_closeness", "model.t_closeness"},
	{"sanitize.node", "node"},
	{"sanitize.subset", "model.subset.column"},
	{"sanitize.delta_presence", "model.delta_presence"},
	{"sanitize.k_map", "model.k_map"},
	{"sanitize.profitability", "model.profitability"},
	{"sanitize.local_nodes", "local_recoding.nodes"},
	{"sanitize.differential_privacy", "differential_privacy"},
}

// recorded is what a release says of itself: its metadata's or its report's values
// by metadata key, and where they come from.
type recorded struct {
	where  string            // "metadata" or the report's path
	name   map[string]string // metadata key → what the source calls it
	values map[string]string
}

// releaseRecorded is the release parameters in a Parquet or Arrow release's key-value
// metadata; nil when it carries none (a CSV release). Every part of a release in parts
// must record the same (checkedParts.sameRelease), else it is a violation
// (fault.ErrUnattainable).
func releaseRecorded(rel checkedTable) (*recorded, error) {
	if parts, ok := rel.(*checkedParts); ok {
		if err := parts.sameRelease(); err != nil {
			return nil, err
		}
	}
	meta := rel.metadata()
	r := &recorded{where: "metadata", name: map[string]string{}, values: map[string]string{}}
	for _, k := range recordedKeys {
		r.name[k.meta] = k.meta
		if v, ok := meta[k.meta]; ok {
			r.values[k.meta] = v
		}
	}
	if len(r.values) == 0 {
		return nil, nil
	}
	return r, nil
}

// maxReportBytes bounds the size of a release's JSON report that check reads.
const maxReportBytes = 256 << 20

// reportRecorded reads the release parameters from a release's JSON report.
func reportRecorded(path string) (*recorded, error) {
	rep, err := readReleaseReport(path)
	if err != nil {
		return nil, err
	}
	r := &recorded{where: path, name: map[string]string{}, values: map[string]string{
		"sanitize.k":                 strconv.Itoa(rep.Model.K),
		"sanitize.suppression_limit": strconv.FormatFloat(rep.Model.SuppressionRate, 'g', -1, 64),
		"sanitize.max_suppressed":    strconv.Itoa(rep.Model.MaxSuppressed),
		"sanitize.suppressed":        strconv.Itoa(rep.Suppressed),
		"sanitize.input_rows":        strconv.Itoa(rep.Input.Rows),
		"sanitize.algorithm":         rep.Algorithm.String(),
		"sanitize.node":              mondrianNode,
	}}
	for _, k := range recordedKeys {
		r.name[k.meta] = k.report
	}
	if rep.Algorithm != schema.Mondrian {
		b, _ := json.Marshal(rep.Node)
		r.values["sanitize.node"] = string(b)
	}
	if rep.Model.LDiversity != nil {
		b, _ := json.Marshal(rep.Model.LDiversity)
		r.values["sanitize.l_diversity"] = string(b)
	}
	if rep.Model.TCloseness != nil {
		b, _ := json.Marshal(rep.Model.TCloseness)
		r.values["sanitize.t_closeness"] = string(b)
	}
	if s := rep.Model.Subset; s != nil {
		r.values["sanitize.subset"] = s.Column
	}
	if d := rep.Model.DeltaPresence; d != nil {
		b, _ := json.Marshal(d)
		r.values["sanitize.delta_presence"] = string(b)
	}
	if k := rep.Model.KMap; k != nil {
		b, _ := json.Marshal(report.KMapIn{K: k.K, Estimator: k.Estimator, Significance: k.Significance})
		r.values["sanitize.k_map"] = string(b)
	}
	if p := rep.Model.Profitability; p != nil {
		b, _ := json.Marshal(p)
		r.values["sanitize.profitability"] = string(b)
	}
	if d := rep.DifferentialPrivacy; d != nil {
		dp := *d
		dp.Ledger = nil // the report's account of the ledger, which the file's metadata predates
		b, _ := json.Marshal(&dp)
		r.values["sanitize.differential_privacy"] = string(b)
	}
	if l := rep.LocalRecoding; l != nil {
		nodes := make([][]report.NodeLevel, len(l.Nodes))
		for i, n := range l.Nodes {
			nodes[i] = n.Node
		}
		b, _ := json.Marshal(nodes)
		r.values["sanitize.local_nodes"] = string(b)
	}
	return r, nil
}

// compare reports (fault.ErrUnattainable) the first recorded parameter that
// disagrees with want, or that want has and r lacks.
func (r *recorded) compare(release string, want map[string]string) error {
	for _, k := range recordedKeys {
		w, ok := want[k.meta]
		if !ok {
			continue
		}
		got, has := r.values[k.meta]
		if !has {
			return fault.Unattainable("%s: %s lacks %s (the check measures or configures %q)", release, r.where, r.name[k.meta], w)
		}
		if got != w {
			return fault.Unattainable("%s: %s %s records %q, the check measures or configures %q", release, r.where, r.name[k.meta], got, w)
		}
	}
	if _, ok := want["sanitize.l_diversity"]; !ok && r.values["sanitize.l_diversity"] != "" {
		return fault.Unattainable("%s: %s %s records l-diversity the configuration does not ask for", release, r.where, r.name["sanitize.l_diversity"])
	}
	if _, ok := want["sanitize.t_closeness"]; !ok && r.values["sanitize.t_closeness"] != "" {
		return fault.Unattainable("%s: %s %s records t-closeness the configuration does not ask for", release, r.where, r.name["sanitize.t_closeness"])
	}
	for _, k := range []string{"sanitize.subset", "sanitize.delta_presence", "sanitize.k_map", "sanitize.profitability", "sanitize.differential_privacy"} {
		if _, ok := want[k]; !ok && r.values[k] != "" {
			return fault.Unattainable("%s: %s %s records a model the configuration does not ask for", release, r.where, r.name[k])
		}
	}
	return nil
}

// levels is the node r records for the quasi-identifiers (in order); nil when it
// records none.
func (r *recorded) levels(release string, quasi []string) ([]int, error) {
	v, ok := r.values["sanitize.node"]
	if !ok {
		return nil, nil
	}
	var node []report.NodeLevel
	if err := json.Unmarshal([]byte(v), &node); err != nil || len(node) != len(quasi) {
		return nil, fault.Unattainable("%s: %s %s is not one level per quasi-identifier of the configuration", release, r.where, r.name["sanitize.node"])
	}
	out := make([]int, len(node))
	for j, n := range node {
		if n.Column != quasi[j] {
			return nil, fault.Unattainable("%s: %s %s names column %q where the configuration's quasi-identifier %d is %q", release, r.where, r.name["sanitize.node"], n.Column, j+1, quasi[j])
		}
		out[j] = n.Level
	}
	return out, nil
}

// recordedBy is what a release records of itself: its metadata (meta; nil: none) and
// its JSON report (reportPath; "": not given).
func recordedBy(meta *recorded, reportPath string) ([]*recorded, error) {
	var recs []*recorded
	if meta != nil {
		recs = append(recs, meta)
	}
	if reportPath != "" {
		r, err := reportRecorded(reportPath)
		if err != nil {
			return nil, err
		}
		recs = append(recs, r)
	}
	return recs, nil
}

// checkMissing checks, for Check, the records the release p.output leaves out and the
// parameters it records (meta: its metadata, nil when none; reportPath: its JSON
// report, "" when not given). A Mondrian release may leave out no record; a full-domain release exactly
// the records of the classes that fail the models at its node (recorded, else
// inferred from its values). spec is the verifier's spec of the release, m what it
// measured.
func checkMissing(ctx context.Context, p *plan, reportPath string, meta *recorded, spec verify.Spec, m *Measured) error {
	cfg, rel := p.Config, p.output
	recs, err := recordedBy(meta, reportPath)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if _, ok := r.values["sanitize.local_nodes"]; ok && cfg.Search.LocalRecoding == nil {
			return fault.Unattainable("%s: %s %s records a local recoding the configuration does not ask for", rel, r.where, r.name["sanitize.local_nodes"])
		}
	}
	want := recordedParams(cfg, spec.InputRows, spec.MaxSuppressed, m.Suppressed)
	if cfg.Search.Algorithm == schema.Mondrian {
		want["sanitize.node"] = mondrianNode
	}
	for _, r := range recs {
		if err := r.compare(rel, want); err != nil {
			return err
		}
	}
	if cfg.Search.Algorithm == schema.Mondrian {
		if m.Suppressed != 0 {
			return fault.Unattainable("%s: %d input records are missing from a Mondrian release, which suppresses none", rel, m.Suppressed)
		}
		return nil
	}
	return checkFullDomain(ctx, p, recs, spec, m)
}

// checkFullDomain is checkMissing for a full-domain release.
func checkFullDomain(ctx context.Context, p *plan, recs []*recorded, spec verify.Spec, m *Measured) error {
	rel := p.output
	qs, err := utilityQuasi(p)
	if err != nil {
		return err
	}
	spec.Utility = qs
	classes := spec.Kept // a local recoding's under enforced risk models, counted already (localPlacement)
	switch {
	case classes != nil:
	case p.classes != nil:
		if classes, err = p.classes.get(); err != nil {
			return err
		}
	default:
		if classes, err = releasedClasses(ctx, p, rel, spec); err != nil {
			return err
		}
	}
	if spec.Placed != nil { // placed pass by pass (checkLocal)
		return checkPlaced(rel, spec.Placed, classes, m)
	}
	quasi := p.QuasiNames()
	var levels []int
	var from *recorded
	for _, r := range recs {
		l, err := r.levels(rel, quasi)
		if err != nil {
			return err
		}
		if l != nil && levels != nil && !slices.Equal(l, levels) {
			return fault.Unattainable("%s: %s %s and %s %s record different nodes", rel, from.where, from.name["sanitize.node"], r.where, r.name["sanitize.node"])
		}
		if l != nil {
			levels, from = l, r
		}
	}
	cols := slices.Clone(p.Quasi)
	spec.Sensitive = slices.Clone(spec.Sensitive)
	for i, sc := range p.protectedColumns() {
		cols = append(cols, sc.pos)
		spec.Sensitive[i].Null = inputNull(p, sc.pos)
	}
	if unitSpec(p, &spec); spec.Unit != "" {
		// the classes' persons, which the models count (verify.ExpectedSuppression),
		// and with linkable records the persons multirelational k suppresses
		pos := slices.Index(p.Header, spec.Unit)
		if pos < 0 {
			return fault.BadInput("%s: privacy.privacy-unit.column: the input has no column %q", p.Input, spec.Unit)
		}
		cols = append(cols, pos)
	}
	open := func() (verify.Reader, func(), error) { return reopenInput(ctx, p, cols) }
	if p.Config.Privacy.Subset != nil {
		open, spec.Population = subsetCheck(ctx, p, cols, spec)
	}
	var required int
	if levels == nil {
		levels, required, err = verify.InferNode(spec, classes, open)
		if errors.Is(err, verify.ErrAmbiguousLevels) {
			return fault.BadInput("%s: %w; the check needs the release's node: give its report with --report", rel, err)
		}
	} else {
		var fitsErr error
		if required, fitsErr, err = fitsAndSuppression(open, spec, levels, classes, p.Config.Privacy.Subset == nil); fitsErr != nil {
			var v *verify.Violation
			if errors.As(fitsErr, &v) {
				return fault.Unattainable("%s: %s %s: %w", rel, from.where, from.name["sanitize.node"], v)
			}
			err = fitsErr
		}
	}
	if err := violation(rel, err); err != nil {
		return err
	}
	if required != m.Suppressed {
		return fault.Unattainable("%s: %d input records are missing, the models require %d suppressed", rel, m.Suppressed, required)
	}
	if spec.Population == nil {
		return nil
	}
	// The released classes measured against the population (δ and the smallest
	// population class), for the report of a release checked here.
	pop, err := spec.Population.Counts(levels)
	if err != nil {
		return err
	}
	model := spec.Population.Model
	if vp := spec.Profitability; vp != nil && vp.Journalist && spec.Population.Leaves != nil {
		g := vp.Game.CostBenefit.Game()
		model.Profitability, model.Loss = &g, spec.Population.Leaves.LossAt(levels)
	}
	pm, err := verify.CheckPopulation(model, classes, pop)
	if err != nil {
		return violation(rel, err)
	}
	m.Population = &pm
	return nil
}

// checkPersons is Check's count of a release whose configuration names a privacy
// unit (spec.Unit), in place of verifyTable and checkTruth: the models count persons
// (with a pseudonym, multirelational k-anonymity too, and the pseudonyms: unitSpec),
// which the release alone does not tell, so the release t (at p.output) is read
// beside the input, every record counted with the person of the input record it
// generalizes and the records left out with theirs (the truthfulness walk), and the
// utility metrics measured in the same walk. Its errors are the walk's and the
// count's, a *verify.Violation as it is (for violation).
func checkPersons(ctx context.Context, p *plan, t checkedTable, spec verify.Spec) (*Measured, error) {
	for _, c := range t.columns() {
		if c.unsupported != "" {
			return nil, fault.BadInput("column %q: unsupported type %s", c.name, c.unsupported)
		}
	}
	if spec.Unit == "" {
		return nil, fault.Internalf("a count in persons without a privacy unit")
	}
	unitSpec(p, &spec) // linkable records and their pseudonym
	p.maxSupp = spec.MaxSuppressed
	if err := utilitySpec(p, &spec); err != nil {
		return nil, err
	}
	counter, err := verify.NewCounter(spec, spec.Columns)
	if err != nil {
		var v *verify.Violation
		if errors.As(err, &v) {
			return nil, err
		}
		return nil, fault.Internalf("%w", err)
	}
	if _, err := verifyTruth(ctx, p, p.output, spec.Columns, counter, nil); err != nil {
		return nil, err
	}
	return counter.Finish()
}

// violation turns a *verify.Violation into an error matching fault.ErrUnattainable
// that names the release; other errors pass as they are.
func violation(rel string, err error) error {
	var v *verify.Violation
	if errors.As(err, &v) {
		return fault.Unattainable("%s: %w", rel, v)
	}
	return err
}

// inputNull is what an empty field of input column pos stands for, as the utility
// measurement reads it (nil: the empty string is a value).
func inputNull(p *plan, pos int) *string {
	if p.TextIn && !p.EmptyNull[pos] {
		return nil
	}
	return p.Conf[pos].Null
}

// releasedClasses counts the classes of the release rel (in p's output format).
func releasedClasses(ctx context.Context, p *plan, rel string, spec verify.Spec) (*verify.Classes, error) {
	f, err := openChecked(rel, p.outFormat, p.Config.Output.CSV, spec.Columns, releaseTable)
	if err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	defer f.Close()
	r, err := f.records(ctx, allColumns(f))
	if err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	defer r.Close()
	c, err := verify.ReleasedClasses(spec, r)
	return c, violation(rel, err)
}

// classesPrefetch is releasedClasses run on a goroutine of its own.
type classesPrefetch struct {
	cancel  context.CancelFunc
	done    chan struct{}
	classes *verify.Classes
	err     error
}

// prefetchClasses starts releasedClasses(ctx, p, rel, spec) on a goroutine of its own;
// its panic is an internal error, which get returns.
func prefetchClasses(ctx context.Context, p *plan, rel string, spec verify.Spec) *classesPrefetch {
	ctx, cancel := context.WithCancel(ctx)
	f := &classesPrefetch{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		f.err = safe.Call(func() (err error) {
			f.classes, err = releasedClasses(ctx, p, rel, spec)
			return err
		})
	}()
	return f
}

// get waits for the classes and returns them, or the error that ended their count.
func (f *classesPrefetch) get() (*verify.Classes, error) {
	<-f.done
	return f.classes, f.err
}

// stop ends the count, if it still runs, and waits for its goroutine.
func (f *classesPrefetch) stop() {
	f.cancel()
	<-f.done
}

// reopenInput opens the input again, its records projected to cols.
func reopenInput(ctx context.Context, p *plan, cols []int) (verify.Reader, func(), error) {
	names := make([]string, len(p.Config.Columns))
	for i, c := range p.Config.Columns {
		names[i] = c.Name
	}
	in, err := openChecked(p.Input, p.InFormat, p.Config.Input.CSV, names, inputTable)
	if err != nil {
		return nil, nil, err
	}
	r, err := in.records(ctx, cols)
	if err != nil {
		in.Close()
		return nil, nil, err
	}
	return r, func() { r.Close(); in.Close() }, nil
}

// fitsAndSuppression reads the input (open) for the release's node, levels: whether
// they write every value the release holds (verify.FitsLevels, its error fitsErr)
// and, when they do, the records its models require suppressed
// (verify.ExpectedSuppression, its error err). Both read the whole input: they read
// it at once, each its own reading, when apart is set (the input is opened anew for
// each), else one after the other.
func fitsAndSuppression(open func() (verify.Reader, func(), error), spec verify.Spec, levels []int, classes *verify.Classes, apart bool) (required int, fitsErr, err error) {
	fits := func() error {
		return readInput(open, func(in verify.Reader) error { return verify.FitsLevels(spec, levels, classes, in) })
	}
	suppression := func() error {
		return readInput(open, func(in verify.Reader) (err error) {
			required, err = verify.ExpectedSuppression(spec, levels, classes, in)
			return err
		})
	}
	if !apart {
		if fitsErr = fits(); fitsErr != nil {
			return 0, fitsErr, nil
		}
		return required, nil, suppression()
	}
	if perr := safe.Parallel(2, func(i int) {
		if i == 0 {
			fitsErr = fits()
		} else {
			err = suppression()
		}
	}); perr != nil {
		return 0, nil, perr
	}
	if fitsErr != nil {
		return 0, fitsErr, nil
	}
	return required, nil, err
}

// readInput hands the input, opened by open, to read.
func readInput(open func() (verify.Reader, func(), error), read func(verify.Reader) error) error {
	in, done, err := open()
	if err != nil {
		return err
	}
	defer done()
	return read(in)
}
