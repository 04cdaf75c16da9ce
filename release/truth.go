package release

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"sanitizer/fault"
	"sanitizer/job"
	"sanitizer/schema"
	"sanitizer/table"
	"sanitizer/verify"
)

// truthCovers is, per release column, how the truthfulness check relates a released
// value to the input's: quasi-identifiers by the cover of their hierarchy (or, under
// Mondrian, the numeric range), typed columns by their canonical text (a CSV field
// "07" is the integer written 7), a configured null by its value, the privacy unit
// released as a pseudonym by pseudonymCover.
func truthCovers(p *plan) (map[string]verify.Cover, error) {
	covers := map[string]verify.Cover{}
	mondrian := p.Config.Search.Algorithm == schema.Mondrian
	pseudonym := p.PseudonymAt()
	for _, pos := range p.Kept {
		c := p.Conf[pos]
		if pos == pseudonym { // the privacy unit's id, released as its pseudonym
			covers[c.Name] = pseudonymCover(p.key)
			continue
		}
		var cv verify.Cover
		switch {
		case c.Role == schema.Quasi && mondrian && (c.Type == schema.Integer || c.Type == schema.Float || c.Type == schema.Date):
			cv = verify.CoverRange(c.Type)
		case c.Role == schema.Quasi && c.Hierarchy.File != "":
			h, err := p.Hier.Cover(c.Hierarchy.File)
			if err != nil {
				return nil, p.Config.Wrap(job.HierFileKey(c.Name), err)
			}
			cv = h
		case c.Role == schema.Quasi && c.Hierarchy.Mask != nil:
			cv = verify.CoverMask(c.Hierarchy.Mask.FromRight)
		case c.Role == schema.Quasi && len(c.Hierarchy.Date) > 0:
			cv = verify.CoverDate()
		case c.Role == schema.Quasi:
			cv = verify.CoverRange(c.Type)
		case p.Types[pos] != schema.String && p.Types[pos] != "":
			typ := p.Types[pos]
			cv = func(released, original string) (bool, error) {
				a, ok1 := table.Canonical(typ, released)
				b, ok2 := table.Canonical(typ, original)
				return ok1 && ok2 && a == b, nil
			}
		}
		if c.Null != nil {
			if cv == nil {
				cv = func(released, original string) (bool, error) { return released == original, nil }
			}
			cv = verify.NullAs(cv, *c.Null)
		}
		if cv != nil {
			covers[c.Name] = cv
		}
	}
	return covers, nil
}

// utilityQuasi is what the verifier's utility measurement needs of every
// quasi-identifier (in configuration order): its hierarchy as the verifier reads it
// (the file, or the builder's description), its type, whether Mondrian released it as
// ranges of values, and what an empty input field stands for. It uses package verify
// only, never the search's hierarchies.
func utilityQuasi(p *plan) ([]verify.Quasi, error) {
	mondrian := p.Config.Search.Algorithm == schema.Mondrian
	out := make([]verify.Quasi, len(p.QuasiCfg))
	for j, c := range p.QuasiCfg {
		pos := p.Quasi[j]
		q := verify.Quasi{Column: c.Name, Type: c.Type, Null: c.Null}
		if p.TextIn && !p.EmptyNull[pos] {
			q.Null = nil // a text column without a type: the empty field is a value
		}
		q.Ranges = mondrian && (c.Type == schema.Integer || c.Type == schema.Float || c.Type == schema.Date)
		var err error
		switch h := c.Hierarchy; {
		case h == nil:
			return nil, fault.BadInput("columns.%s.hierarchy: a quasi-identifier needs a hierarchy", c.Name)
		case h.File != "":
			if q.Domain, err = p.Hier.Domain(h.File); err != nil {
				return nil, p.Config.Wrap(job.HierFileKey(c.Name), err)
			}
		case h.Intervals != nil:
			q.Domain = verify.IntervalLevels(c.Type, h.Intervals)
		case h.Mask != nil:
			if q.Domain, err = verify.MaskDomain(h.Mask.FromRight, h.Mask.Max); err != nil {
				return nil, fmt.Errorf("columns.%s.hierarchy.mask: %w", c.Name, err)
			}
		case h.Date != nil:
			if q.Domain, err = verify.DateDomain(h.Date); err != nil {
				return nil, fmt.Errorf("columns.%s.hierarchy.date: %w", c.Name, err)
			}
		default:
			return nil, fault.BadInput("columns.%s.hierarchy: no hierarchy", c.Name)
		}
		out[j] = q
	}
	return out, nil
}

// utilitySpec adds to spec what the verifier needs to measure loss, NCP and
// non-uniform entropy.
func utilitySpec(p *plan, spec *verify.Spec) error {
	qs, err := utilityQuasi(p)
	if err != nil {
		return err
	}
	spec.Utility, spec.FullDomain = qs, p.Config.Search.Algorithm != schema.Mondrian
	return nil
}

// populationLeaves is, for the walk of a research subset's release, what is done with each
// input record outside the subset (inHeader's columns): its quasi-identifier values
// made leaves of count's utility measurement (verify.Counter.AddPopulation), since a
// built hierarchy's leaves are the whole input's values, as the search's are. Nil
// without a counter.
func populationLeaves(p *plan, inHeader []string, count *verify.Counter) func([]string) error {
	if count == nil {
		return nil
	}
	at := make([]int, len(p.Quasi))
	for j, name := range p.QuasiNames() {
		at[j] = slices.Index(inHeader, name)
	}
	orig := make([]string, len(at))
	return func(rec []string) error {
		for j, i := range at {
			orig[j] = rec[i]
		}
		return count.AddPopulation(orig)
	}
}

// verifyTruth reads the input again beside the written release (the file release, in
// p's output format) and checks that every released record generalizes one input
// record, in order, none invented or duplicated, and that the records left out are at
// most the limit. It returns how many were left out. With count set, every release
// record read is counted there too (the k, l and t check, and the utility metrics when
// its spec asks for them: every release record is then counted with the input record
// it generalizes, and the input records left out too), so that the release is read
// once for both. With a privacy unit (unitColumn), the walk also reads the input's
// unit column, which a counter whose spec names it counts persons by.
//
// sums, when not nil, are the checksums of the input's files as pass 1 read them
// (table.Checksums): an input the walk read otherwise changed since, which is bad input
// whatever the walk found.
func verifyTruth(ctx context.Context, p *plan, release string, header []string, count *verify.Counter, sums []uint32) (int, error) {
	cfg := p.Config
	covers, err := truthCovers(p)
	if err != nil {
		return 0, err
	}
	names := make([]string, len(cfg.Columns))
	for i, c := range cfg.Columns {
		names[i] = c.Name
	}
	in, err := openChecked(p.Input, p.InFormat, cfg.Input.CSV, names, inputTable)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	rel, err := openChecked(release, p.outFormat, cfg.Output.CSV, header, releaseTable)
	if err != nil {
		return 0, fmt.Errorf("verifying the written release: %w", err)
	}
	defer rel.Close()
	// The input's columns that the release keeps, in input order.
	var cols []int
	var inHeader []string
	for i, c := range in.columns() {
		if slices.Contains(header, c.name) {
			cols, inHeader = append(cols, i), append(inHeader, c.name)
		}
	}
	for i, c := range rel.columns() {
		if i >= len(header) || c.name != header[i] || len(rel.columns()) != len(header) {
			// The expected names only: a release without a header would put data here.
			return 0, &verify.Violation{Msg: fmt.Sprintf("the release's header is not the expected %q", header)}
		}
	}
	if u := unitColumn(cfg); u != "" && !slices.Contains(inHeader, u) {
		// the person of every record, for a count in persons (the release lacks it)
		pos := slices.IndexFunc(in.columns(), func(c checkedColumn) bool { return c.name == u })
		if pos < 0 {
			return 0, fault.BadInput("%s: privacy.privacy-unit.column: the input has no column %q", p.Input, u)
		}
		cols, inHeader = append(cols, pos), append(inHeader, u)
	}
	if sub := cfg.Privacy.Subset; sub != nil { // its flag last: the walk reads the subset only
		pos := slices.IndexFunc(in.columns(), func(c checkedColumn) bool { return c.name == sub.Column })
		if pos < 0 {
			return 0, fault.BadInput("%s: privacy.subset.column: the input has no column %q", p.Input, sub.Column)
		}
		cols = append(cols, pos)
	}
	cr, err := in.records(ctx, cols)
	if err != nil {
		return 0, err
	}
	defer cr.Close()
	var ir verify.Reader = cr
	if sub := cfg.Privacy.Subset; sub != nil {
		ir = subsetInput{verify.SubsetRecords(cr, sub.Column, populationLeaves(p, inHeader, count))}
	}
	rr, err := rel.records(ctx, allColumns(rel))
	if err != nil {
		return 0, fmt.Errorf("verifying the written release: %w", err)
	}
	defer rr.Close()
	// With count, the walk counts every release record with the input record it
	// generalizes, and the input records left out.
	truth := verify.Truth{Columns: header, Covers: covers, MaxSuppressed: p.maxSupp, Count: count, Series: p.seriesCheck, LeftOut: p.leftOut}
	n, err := verify.Truthful(truth, inHeader, ir, rr)
	if err == nil {
		// A walk that ended while the run was being cancelled may have seen the
		// readers stop early: it verified nothing.
		err = ctx.Err()
	}
	if err == nil {
		err = rel.dictionaries() // every record of every column has been read
	}
	// The input's reading stopped (a walk that failed may end before it does), so that
	// its checksum is not read while it is made.
	cr.Close()
	if got := in.checksums(); sums != nil && ctx.Err() == nil && (err == nil || got != nil) && !slices.Equal(got, sums) {
		return n, table.ChangedError(p.Input)
	}
	var v *verify.Violation
	if err != nil && !errors.As(err, &v) {
		return n, fmt.Errorf("verifying the written release: %w", err)
	}
	return n, err
}
