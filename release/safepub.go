package release

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"slices"
	"strconv"
	"time"

	"sanitizer/fault"
	"sanitizer/generalize"
	"sanitizer/internal/safe"
	"sanitizer/report"
	"sanitizer/safepub"
	"sanitizer/schema"
	"sanitizer/table"
	"sanitizer/verify"
)

// dpRelease is a SafePub release in progress (privacy.differential-privacy): its
// parameters, its node and how it was chosen, and the sample it releases.
type dpRelease struct {
	params   safepub.Params
	anon     float64 // the anonymization's ε: the whole ε less the search's
	chosen   report.DPChoice
	node     []int  // a level per quasi-identifier, in the table's order
	sampled  []bool // per input record: drawn into the released sample
	walk     *generalize.DPWalk
	onSample float64 // the search's ε on its sample (amplified from ε_search)
	streams  safepub.Streams
}

// cryptoSource is the operating system's cryptographic source.
var cryptoSource io.Reader = rand.Reader

// randomSource is where a SafePub release draws its samples and its choices:
// cryptoSource (a variable for the tests' own draws).
var randomSource = cryptoSource

// tamperSample, when set, changes what a SafePub release's search stage decided before
// the release is written: the tests' way to make a release that is not the sample's
// function, which the verifier must refuse. Nil outside tests.
var tamperSample func(r *run)

// sampleBlock is the records of a part one stream draws (safepub.StreamBlock; a
// variable for the test of blocks on a small table).
var sampleBlock = safepub.StreamBlock

// drawHook, when set, sees (and may change) every sample a SafePub release draws: the
// tests' way to draw an empty sample. Nil outside tests.
var drawHook func(purpose safepub.Purpose, keep []bool)

// checkDP refuses what a SafePub release cannot honour beside privacy.differential-
// privacy (the privacy section's other models are the parser's): the settings of a
// search over the lattice, and a score the data-dependent search does not have.
func checkDP(cfg *schema.Config) error {
	d := cfg.Privacy.DifferentialPrivacy
	if d == nil {
		return nil
	}
	s := cfg.Search
	for _, c := range []struct {
		given bool
		key   string
	}{
		{s.Algorithm == schema.Mondrian, "search.algorithm"},
		{s.LocalRecoding != nil, "search.local-recoding"},
		{len(s.MinLevels) > 0, "search.min-levels"},
		{len(s.MaxLevels) > 0, "search.max-levels"},
		{s.Weights != nil, "search.weights"},
		{s.Aggregate != "", "search.aggregate"},
		{s.GSFactor != nil, "search.gs-factor"},
	} {
		if c.given {
			return cfg.Errorf(c.key, "not with privacy.differential-privacy: its node is given, derived from the hierarchies, or drawn by SafePub's search (privacy.differential-privacy.search), and every class below its k is suppressed")
		}
	}
	for _, c := range cfg.Columns {
		if c.Role != schema.Quasi && c.Role != schema.Identifier {
			return cfg.Errorf("columns."+c.Name+".role", "%s: a column released as it is beside privacy.differential-privacy would make a record's class its value too, which the guarantee does not cover (a value held by one record would show whether it was drawn): make it a quasi-identifier with a hierarchy, or an identifier (dropped)", c.Role)
		}
	}
	if d.Search == nil {
		return nil
	}
	switch s.Metric {
	case "", schema.MetricLoss:
		for _, c := range cfg.Columns {
			if c.Role == schema.Quasi && c.Hierarchy != nil && c.Hierarchy.File == "" {
				return cfg.Errorf("search.metric", "loss needs a hierarchy file on every quasi-identifier under privacy.differential-privacy.search: column %q's built hierarchy counts the input's own values as its leaves, so its scores would depend on who is in the input (use precision, discernibility, entropy or aecs)", c.Name)
			}
		}
	case schema.MetricPrecision, schema.MetricDiscernibility, schema.MetricEntropy, schema.MetricAECS:
	default:
		return cfg.Errorf("search.metric", "%q has no score of bounded sensitivity in SafePub's search: use loss, precision, discernibility, entropy or aecs", s.Metric)
	}
	return nil
}

// dpScore is the score SafePub's search draws by for the configured metric.
func dpScore(m schema.Metric) generalize.DPScore {
	switch m {
	case schema.MetricPrecision:
		return generalize.ScorePrecision
	case schema.MetricDiscernibility:
		return generalize.ScoreDiscernibility
	case schema.MetricEntropy:
		return generalize.ScoreEntropy
	case schema.MetricAECS:
		return generalize.ScoreAECS
	}
	return generalize.ScoreLoss
}

// newDPRelease computes β and k for cfg's ε and δ (safepub.Compute: exact, and
// slow only for an ε near 5 with a tiny δ).
func newDPRelease(cfg *schema.Config) (*dpRelease, error) {
	d := cfg.Privacy.DifferentialPrivacy
	dr := &dpRelease{anon: d.Epsilon}
	if d.Search != nil {
		dr.anon = safepub.Remainder(d.Epsilon, d.Search.Epsilon)
	}
	var err error
	if dr.params, err = safepub.Compute(dr.anon, d.Delta); err != nil {
		return nil, cfg.Wrap("privacy.differential-privacy", fault.BadInput("%w", err))
	}
	return dr, nil
}

// fixedNode is the node a configuration gives or derives without the data
// (generalization, degree) for the quasi-identifiers names whose hierarchies have
// heights levels, a level each; a level above a hierarchy's top is bad input at its
// key.
func fixedNode(cfg *schema.Config, names []string, heights []int) ([]int, report.DPChoice, error) {
	d := cfg.Privacy.DifferentialPrivacy
	node := make([]int, len(names))
	for i, name := range names {
		top := heights[i] - 1
		if d.Degree != 0 {
			node[i] = d.Degree.Level(top, 0, top)
			continue
		}
		node[i] = d.Generalization[name]
		if node[i] > top {
			return nil, "", cfg.Errorf("privacy.differential-privacy.generalization."+name, "%d is above the hierarchy's top level, %d", node[i], top)
		}
	}
	if d.Degree != 0 {
		return node, report.DPChoice("degree " + d.Degree.String()), nil
	}
	return node, report.DPGiven, nil
}

// dpSearch is the search stage of a SafePub release: β and k, the node (given,
// derived, or drawn by the search on a sample of its own), then the released sample,
// drawn anew, generalized at the node, its classes of fewer than k records
// suppressed. It sets what the optimal search sets: the result, every record's class
// (−1: not sampled, or suppressed), the codes released.
func (r *run) dpSearch(ctx context.Context) (covers generalize.ClassCovers, err error) {
	dr, err := newDPRelease(r.cfg)
	if err != nil {
		return covers, err
	}
	r.dp = dr
	if dr.streams, err = safepub.NewStreams(randomSource); err != nil {
		return covers, fault.Internalf("%w", err)
	}
	d := r.cfg.Privacy.DifferentialPrivacy
	if d.Search == nil {
		names, heights := make([]string, len(r.t.Columns)), make([]int, len(r.t.Columns))
		for i, c := range r.t.Columns {
			names[i], heights[i] = c.Name, c.Hierarchy.Height()
		}
		if dr.node, dr.chosen, err = fixedNode(r.cfg, names, heights); err != nil {
			return covers, err
		}
	} else if err := r.dpWalk(ctx, dr); err != nil {
		return covers, err
	}
	if dr.sampled, err = r.drawSample(dr, safepub.PurposeRelease); err != nil {
		return covers, fault.Internalf("drawing the sample: %w", err)
	}
	if covers, err = r.dpClasses(ctx, dr); err != nil {
		return covers, err
	}
	r.released = releasedCodes(r.t.Columns, dr.node, covers)
	r.suppressed = make([]bool, r.t.Rows)
	for i, c := range r.class {
		r.suppressed[i] = c < 0
	}
	r.p.leftOut = slices.Clone(r.suppressed) // the run's account, which the verifier checks record by record
	if tamperSample != nil {
		tamperSample(r)
	}
	return covers, nil
}

// drawSample draws the sample of r's records for purpose with dr's parameters: part by
// part (an input in parts; else its one file), each part block by block
// (sampleBlock records), every block from its own stream of dr.streams, the
// blocks on every core. The sample does not depend on how the blocks are shared out.
func (r *run) drawSample(dr *dpRelease, purpose safepub.Purpose) ([]bool, error) {
	type block struct{ part, b, lo, hi int }
	var blocks []block
	end := 0
	for p, span := range r.spans() {
		if span[0] != end {
			return nil, fmt.Errorf("part %d starts at record %d, not %d", p, span[0], end)
		}
		for b := 0; b*sampleBlock < span[1]; b++ {
			lo := end + b*sampleBlock
			blocks = append(blocks, block{p, b, lo, min(lo+sampleBlock, end+span[1])})
		}
		end += span[1]
	}
	if end != r.t.Rows {
		return nil, fmt.Errorf("the parts hold %d records, the table %d", end, r.t.Rows)
	}
	keep := make([]bool, r.t.Rows)
	errs := make([]error, len(blocks))
	err := safe.Parallel(len(blocks), func(i int) { // a goroutine per block: the runtime shares out the cores
		b := blocks[i]
		errs[i] = dr.params.SampleBlock(keep[b.lo:b.hi], dr.streams, purpose, b.part, b.b)
	})
	if err = errors.Join(append(errs, err)...); err != nil {
		return nil, err
	}
	if drawHook != nil {
		drawHook(purpose, keep)
	}
	return keep, nil
}

// spans is where the input's parts (table.Split) start and how many records each
// holds; one span of the table's records without a source.
func (r *run) spans() [][2]int {
	if r.src == nil {
		return [][2]int{{0, r.t.Rows}}
	}
	var out [][2]int
	for _, part := range table.Split(r.src) {
		first, rows := table.Span(part)
		out = append(out, [2]int{first, rows})
	}
	return out
}

// dpWalk draws the node by SafePub's search on a sample of its own.
func (r *run) dpWalk(ctx context.Context, dr *dpRelease) error {
	d := r.cfg.Privacy.DifferentialPrivacy
	drawn, err := r.drawSample(dr, safepub.PurposeSearch)
	if err != nil {
		return fault.Internalf("drawing the search's sample: %w", err)
	}
	sample, err := r.t.Select(sampledRows(drawn))
	if err != nil {
		return fault.Internalf("%w", err)
	}
	eps, err := dr.params.Amplified(d.Search.Epsilon) // the search reads its sample alone
	if err != nil {
		return fault.Internalf("the search's ε on its sample: %w", err)
	}
	dr.onSample, _ = eps.Float64()
	beta := new(big.Rat).SetFrac(new(big.Int).SetUint64(dr.params.BetaBits), new(big.Int).Lsh(big.NewInt(1), 53))
	opt := generalize.DPWalkOptions{K: dr.params.K, Score: dpScore(r.cfg.Search.Metric), Epsilon: eps, Steps: d.Search.Steps, Beta: beta, Random: randomSource}
	if dr.walk, err = generalize.SafePubWalk(ctx, sample, opt); err != nil {
		return err
	}
	dr.node, dr.chosen = dr.walk.Node, report.DPSearched
	return nil
}

// sampledRows lists the records drawn, in order.
func sampledRows(drawn []bool) []int {
	var rows []int
	for i, in := range drawn {
		if in {
			rows = append(rows, i)
		}
	}
	return rows
}

// dpClasses generalizes the released sample at the node, suppresses its classes of
// fewer than k records, and sets every input record's class (−1: left out) and the
// result, whose Suppressed counts every record left out, sampled or not.
func (r *run) dpClasses(ctx context.Context, dr *dpRelease) (generalize.ClassCovers, error) {
	rows := sampledRows(dr.sampled)
	sub, err := r.t.Select(rows)
	if err != nil {
		return generalize.ClassCovers{}, fault.Internalf("%w", err)
	}
	sopt := r.sopt
	sopt.K, sopt.MaxSuppressed, sopt.MinLevels, sopt.MaxLevels = dr.params.K, len(rows), dr.node, dr.node
	if r.res, err = generalize.Search(ctx, sub, sopt); err != nil {
		if errors.Is(err, fault.ErrBadInput) || errors.Is(err, context.Canceled) {
			return generalize.ClassCovers{}, err
		}
		return generalize.ClassCovers{}, fault.Internalf("the sample at the node: %w", err)
	}
	class, covers, err := generalize.NodeClasses(sub, dr.node, sopt)
	if err != nil {
		return covers, fault.Internalf("the sample at the node: %w", err)
	}
	r.class = make([]int32, r.t.Rows)
	for i := range r.class {
		r.class[i] = -1
	}
	for k, row := range rows {
		r.class[row] = class[k]
	}
	r.res.Suppressed += r.t.Rows - len(rows)
	return covers, nil
}

// dpSummary is the report's account of a SafePub release (nil for any other).
func (r *run) dpSummary() *report.DPSummary {
	dr := r.dp
	if dr == nil {
		return nil
	}
	d := r.cfg.Privacy.DifferentialPrivacy
	s := &report.DPSummary{Epsilon: d.Epsilon, Delta: d.Delta, EpsilonAnonymization: dr.anon, Beta: dr.params.Beta, K: dr.params.K,
		DeltaBound: dr.params.Delta, Chosen: dr.chosen, Node: nodeLevels(r.t.Columns, dr.node), Guarantee: report.DPGuarantee}
	if d.Search != nil {
		s.EpsilonSearch, s.EpsilonOnSample, s.Steps, s.Score = d.Search.Epsilon, dr.onSample, d.Search.Steps, dpMetric(r.cfg)
		if w := dr.walk; w != nil {
			s.StepsTaken, s.Pivots = w.Steps, w.Pivots
		}
	}
	return s
}

// fileMetadata is what the release's file records, written at r.created: a SafePub
// release's guarantee (dpMetadata), or the parameters and counts of any other
// (releaseMetadata; r.p.maxSupp is the limit on r.t.Rows).
func (r *run) fileMetadata() map[string]string {
	if r.dp != nil {
		return r.dpMetadata(r.created)
	}
	return releaseMetadata(r.cfg, r.t.Columns, r.t.Rows, r.res, r.created)
}

// dpMetadata is what a SafePub release's file records (written at now): what every
// release's file records but the counts (the input's records, those suppressed, the
// metric's value: the guarantee does not cover them), the algorithm, k, and the
// guarantee with its parameters and node.
func (r *run) dpMetadata(now time.Time) map[string]string {
	s := r.dpSummary()
	node, _ := json.Marshal(s.Node)
	meta := describedMetadata(r.cfg, node, r.res.Metric, now)
	b, _ := json.Marshal(s)
	meta["sanitize.differential_privacy"] = string(b)
	meta["sanitize.k"] = strconv.Itoa(s.K)
	meta["sanitize.algorithm"] = algorithm(r.cfg).String()
	return meta
}

// dpRecorded reads a SafePub release's recorded guarantee from its metadata ("":
// none recorded).
func dpRecorded(v string) (*report.DPSummary, error) {
	if v == "" {
		return nil, nil
	}
	var s report.DPSummary
	if err := json.Unmarshal([]byte(v), &s); err != nil {
		return nil, fmt.Errorf("metadata sanitize.differential_privacy: %w", err)
	}
	return &s, nil
}

// k is the k the release's classes hold: privacy.k, or SafePub's.
func (r *run) k() int {
	if r.dp != nil {
		return r.dp.params.K
	}
	return r.cfg.Privacy.K
}

// verifySample checks the written release against the run's sample with the
// verifier's own readers and hierarchies (verify.CheckSample): the release is SafePub's
// function of the sample, every drawn class of k records or more whole, nothing else.
func (r *run) verifySample(ctx context.Context, spec verify.Spec) error {
	if r.dp == nil {
		return nil
	}
	rel, err := releasedClasses(ctx, r.p, r.dest.path(), spec)
	if err != nil {
		return err
	}
	counts, err := nodeCounts(ctx, r.p, spec, r.dp.node, r.dp.sampled)
	if err != nil {
		return err
	}
	err = verify.CheckSample(verify.Sample{K: r.dp.params.K, Drawn: r.dp.sampled, LeftOut: r.p.leftOut, Counts: counts}, rel)
	var v *verify.Violation
	if errors.As(err, &v) {
		return fault.Internalf("the written release failed verification, nothing published: %w", err)
	}
	return err
}

// nodeCounts counts the input's records at the node's levels by the verifier's
// reading of the hierarchies (spec.Utility): those drawn, or every one when drawn is
// nil.
func nodeCounts(ctx context.Context, p *plan, spec verify.Spec, node []int, drawn []bool) (map[string]int64, error) {
	in, done, err := reopenInput(ctx, p, slices.Clone(p.Quasi))
	if err != nil {
		return nil, err
	}
	defer done()
	if drawn != nil {
		in = &drawnRecords{in: in, drawn: drawn}
	}
	return verify.PopulationCounts(spec, node, in)
}

// drawnRecords reads the records of in that were drawn into a sample.
type drawnRecords struct {
	in    verify.Reader
	drawn []bool
	n     int // the records read
}

func (d *drawnRecords) Read() ([]string, error) {
	for {
		rec, err := d.in.Read()
		if err != nil {
			return nil, err
		}
		d.n++
		if d.n > len(d.drawn) {
			return nil, fault.Internalf("the input holds more than the %d records the sample was drawn from", len(d.drawn))
		}
		if d.drawn[d.n-1] {
			return rec, nil
		}
	}
}
