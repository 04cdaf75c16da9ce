package release

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"

	"sanitizer/fault"
	"sanitizer/generalize"
	"sanitizer/risk"
	"sanitizer/table"
	"sanitizer/verify"
)

// subsetFlags reads the research subset's column in pass 1 (privacy.subset): whether
// each input record is in the subset. Its values are never kept nor quoted.
type subsetFlags struct {
	pos  int    // the column's input position
	name string // its name
	in   []bool // per input record
}

// newSubsetFlags returns the reader of the research subset column p's configuration
// names (nil: none).
func newSubsetFlags(p *plan) (*subsetFlags, error) {
	s := p.Config.Privacy.Subset
	if s == nil {
		return nil, nil
	}
	pos := slices.Index(p.Header, s.Column)
	if pos < 0 {
		return nil, fault.BadInput("%s: privacy.subset.column: the input has no column %q", p.Input, s.Column)
	}
	return &subsetFlags{pos: pos, name: s.Column}, nil
}

// add reads field f of the records of b.
func (s *subsetFlags) add(p *plan, b *table.Batch, f int) error {
	if need := b.First + b.N; need > len(s.in) {
		s.in = slices.Grow(s.in, need-len(s.in))[:need]
	}
	for i := range b.N {
		row := b.First + i
		if p.IsNull(b, i, f, s.pos) {
			return fault.BadInput("%s: column %q: null: the research subset (privacy.subset) needs true or false on every record", p.At(row), s.name)
		}
		in, ok := subsetFlag(b.Fields[i*b.Width+f])
		if !ok {
			return fault.BadInput("%s: column %q: not a research subset flag (privacy.subset reads true, 1 or yes; false, 0 or no)", p.At(row), s.name)
		}
		s.in[row] = in
	}
	return nil
}

// subsetFlag reads a research subset's flag: true, 1 or yes, or false, 0 or no, case
// and surrounding space ignored. (The verifier reads the flags with its own function,
// verify.InSubset: the check of a release shares no code with what wrote it.)
func subsetFlag(v string) (in, ok bool) {
	v = strings.TrimSpace(v)
	for _, w := range []string{"true", "1", "yes"} {
		if strings.EqualFold(v, w) {
			return true, true
		}
	}
	for _, w := range []string{"false", "0", "no"} {
		if strings.EqualFold(v, w) {
			return false, true
		}
	}
	return false, false
}

// rows lists the records in the subset, in input order.
func (s *subsetFlags) rows() []int {
	var out []int
	for r, in := range s.in {
		if in {
			out = append(out, r)
		}
	}
	return out
}

// selectSubset makes the run's table the research subset's records (the release and
// every model but δ-presence and k-map are about them) and keeps the whole input as
// the population; the protected columns' input distributions become the subset's.
func (r *run) selectSubset(flags *subsetFlags) error {
	if flags == nil {
		return nil
	}
	if len(flags.in) != r.t.Rows {
		return fault.Internalf("%d research subset flags for %d records", len(flags.in), r.t.Rows)
	}
	rows := flags.rows()
	if len(rows) == 0 {
		return fault.BadInput("%s: column %q: no record is in the research subset (privacy.subset): nothing to release", r.p.Input, flags.name)
	}
	sub, err := r.t.Select(rows)
	if err != nil {
		return fault.Internalf("%w", err)
	}
	r.pop, r.subsetRows, r.t = r.t, rows, sub
	for i, sc := range r.prot {
		sc.counts = make([]int64, len(sc.values))
		codes := sub.Sensitive[i].Codes
		for k := range sub.Rows {
			sc.counts[codes.At(k)]++
		}
	}
	return nil
}

// population is the search's population model (nil without a research subset).
func (r *run) populationModel() *generalize.Population {
	if r.pop == nil {
		return nil
	}
	pm := populationModel(r.cfg)
	pm.Table = r.pop
	return &pm
}

// writeSuppressed is, per input record, whether pass 2 leaves it out: suppressed, or
// outside the research subset.
func (r *run) writeSuppressed() []bool {
	if r.pop == nil {
		return r.suppressed
	}
	out := make([]bool, r.pop.Rows)
	for i := range out {
		out[i] = true
	}
	for k, row := range r.subsetRows {
		out[row] = r.suppressed != nil && r.suppressed[k]
	}
	return out
}

// subsetInput gives a research subset flag that is not one as bad input.
type subsetInput struct{ verify.Reader }

func (s subsetInput) Read() ([]string, error) {
	rec, err := s.Reader.Read()
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) && !errors.Is(err, fault.ErrBadInput) {
		err = fault.BadInput("%w", err)
	}
	return rec, err
}

// verifyPopulation counts the written release's classes and the population's records
// at the release's levels with the verifier's own readers, and checks δ-presence and
// k-map on them.
func (r *run) verifyPopulation(ctx context.Context, spec verify.Spec) (*verify.PopulationMeasured, error) {
	if r.cfg.Privacy.Subset == nil {
		return nil, nil
	}
	rel, err := releasedClasses(ctx, r.p, r.dest.path(), spec)
	if err != nil {
		return nil, err
	}
	cols := make([]int, len(r.p.Quasi))
	copy(cols, r.p.Quasi)
	in, done, err := reopenInput(ctx, r.p, cols)
	if err != nil {
		return nil, err
	}
	defer done()
	vp := verify.Population{}
	var leaves *verify.Leaves
	if g := attackGame(r.cfg, risk.JournalistAttacker); g != nil {
		if leaves, err = verify.NewLeaves(spec); err != nil {
			return nil, fault.Internalf("%w", err)
		}
		in = leaves.Reading(in) // the population's values: a built hierarchy's leaves
		vp.Profitability, vp.Loss = g, leaves.LossAt(r.res.Levels)
	}
	pop, err := verify.PopulationCounts(spec, r.res.Levels, in)
	if err != nil {
		return nil, err
	}
	if d := r.cfg.Privacy.DeltaPresence; d != nil {
		vp.DeltaMin, vp.DeltaMax = d.Min, d.Max
	}
	vp.KMap = populationKMap(r.cfg)
	m, err := verify.CheckPopulation(vp, rel, pop)
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// populationRows is the research subset's population records (0: no subset).
func (r *run) populationRows() int {
	if r.pop == nil {
		return 0
	}
	return r.pop.Rows
}

// subsetCheck is, for Check of a research subset's release, the opening of the
// subset's records of the input (projected to cols) and the population's counts the
// subset's classes are compared with.
func subsetCheck(ctx context.Context, p *plan, cols []int, spec verify.Spec) (func() (verify.Reader, func(), error), *verify.PopulationCheck) {
	cfg := p.Config
	pos := slices.Index(p.Header, cfg.Privacy.Subset.Column)
	open := func() (verify.Reader, func(), error) {
		in, done, err := reopenInput(ctx, p, append(slices.Clone(cols), pos))
		if err != nil {
			return nil, nil, err
		}
		return subsetInput{verify.SubsetRecords(in, cfg.Privacy.Subset.Column, nil)}, done, nil
	}
	model := verify.Population{}
	if d := cfg.Privacy.DeltaPresence; d != nil {
		model.DeltaMin, model.DeltaMax = d.Min, d.Max
	}
	model.KMap = populationKMap(cfg)
	var leaves *verify.Leaves
	var leavesErr error
	if spec.Profitability != nil { // the population's leaves, for the information loss
		leaves, leavesErr = verify.NewLeaves(spec) // spec has the utility domains (Check)
	}
	counts := func(levels []int) (map[string]int64, error) {
		if leavesErr != nil {
			return nil, fault.Internalf("%w", leavesErr)
		}
		var pop map[string]int64
		err := readInput(func() (verify.Reader, func(), error) { return reopenInput(ctx, p, slices.Clone(p.Quasi)) }, func(in verify.Reader) (err error) {
			if leaves != nil {
				in = leaves.Reading(in)
			}
			pop, err = verify.PopulationCounts(spec, levels, in)
			return err
		})
		return pop, err
	}
	return open, &verify.PopulationCheck{Model: model, Counts: counts, Leaves: leaves}
}
