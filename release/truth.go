package release

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"sanitizer/internal/safe"
	"sanitizer/schema"
	"sanitizer/table"
	"sanitizer/verify"
)

// truthCovers is, per release column, how the truthfulness check relates a released
// value to the input's: quasi-identifiers by the cover of their hierarchy (or, under
// Mondrian, the numeric range), typed columns by their canonical text (a CSV field
// "07" is the integer written 7), a configured null by its value.
func truthCovers(cfg *schema.Config, p *plan) (map[string]verify.Cover, error) {
	covers := map[string]verify.Cover{}
	mondrian := cfg.Search.Algorithm == "mondrian"
	for _, pos := range p.Kept {
		c := p.Conf[pos]
		var cv verify.Cover
		switch {
		case c.Role == schema.Quasi && mondrian && (c.Type == schema.Integer || c.Type == schema.Float || c.Type == schema.Date):
			cv = verify.CoverRange(c.Type)
		case c.Role == schema.Quasi && c.Hierarchy.File != "":
			h, err := p.Hier.Cover(c.Hierarchy.File)
			if err != nil {
				return nil, fmt.Errorf("columns.%s.hierarchy.file: %w", c.Name, err)
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
func utilityQuasi(cfg *schema.Config, p *plan) ([]verify.Quasi, error) {
	mondrian := cfg.Search.Algorithm == "mondrian"
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
			return nil, schema.BadInput("columns.%s.hierarchy: a quasi-identifier needs a hierarchy", c.Name)
		case h.File != "":
			if q.Domain, err = p.Hier.Domain(h.File); err != nil {
				return nil, fmt.Errorf("columns.%s.hierarchy.file: %w", c.Name, err)
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
			return nil, schema.BadInput("columns.%s.hierarchy: no hierarchy", c.Name)
		}
		out[j] = q
	}
	return out, nil
}

// utilitySpec adds to spec what the verifier needs to measure loss, NCP and
// non-uniform entropy.
func utilitySpec(cfg *schema.Config, p *plan, spec *verify.Spec) error {
	qs, err := utilityQuasi(cfg, p)
	if err != nil {
		return err
	}
	spec.Utility, spec.FullDomain = qs, cfg.Search.Algorithm != "mondrian"
	return nil
}

// verifyTruth reads the input again beside the written release and checks that every
// released record generalizes one input record, in order, none invented or duplicated,
// and that the records left out are at most the limit. It returns how many were left
// out. With count set, every release record read is counted there too (the k, l and t
// check, and the utility metrics when its spec asks for them: every release record is
// then counted with the input record it generalizes, and the input records left out
// too), so that the release is read once for both.
//
// sums, when not nil, are the checksums of the input's files as pass 1 read them
// (table.Checksums): an input the walk read otherwise changed since, which is bad input
// whatever the walk found.
func verifyTruth(ctx context.Context, cfg *schema.Config, p *plan, inFmt, release, outFmt string, header []string, count *verify.Counter, sums []uint32) (int, error) {
	covers, err := truthCovers(cfg, p)
	if err != nil {
		return 0, err
	}
	names := make([]string, len(cfg.Columns))
	for i, c := range cfg.Columns {
		names[i] = c.Name
	}
	in, err := openChecked(p.Input, inFmt, cfg.Input.CSV, names)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	rel, err := openChecked(release, outFmt, cfg.Output.CSV, header)
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
	ir, err := in.records(ctx, cols)
	if err != nil {
		return 0, err
	}
	defer ir.Close()
	rr, err := rel.records(ctx, allColumns(rel))
	if err != nil {
		return 0, fmt.Errorf("verifying the written release: %w", err)
	}
	defer rr.Close()
	truth := verify.Truth{Columns: header, Covers: covers, MaxSuppressed: p.maxSupp}
	var relReader verify.Reader = rr
	var counting *countingReader
	if count != nil {
		// The quasi-identifiers' fields in the input records the walk reads.
		qpos := make([]int, len(p.Quasi))
		for j, name := range p.QuasiNames() {
			if qpos[j] = slices.Index(inHeader, name); qpos[j] < 0 {
				return 0, fmt.Errorf("internal error: quasi-identifier %q is not a release column", name)
			}
		}
		counting = newCountingReader(rr, count, len(header), qpos)
		relReader = counting
		truth.Input = counting.input
	}
	n, err := verify.Truthful(truth, inHeader, ir, relReader)
	if counting != nil {
		if cerr := counting.close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		// A walk that ended while the run was being cancelled may have seen the
		// readers stop early: it verified nothing.
		err = ctx.Err()
	}
	if got := in.checksums(); sums != nil && ctx.Err() == nil && (err == nil || got != nil) && !slices.Equal(got, sums) {
		return n, table.ChangedError(p.Input)
	}
	var v *verify.Violation
	if err != nil && !errors.As(err, &v) {
		return n, fmt.Errorf("verifying the written release: %w", err)
	}
	return n, err
}

// countingReader hands every release record it reads to a Counter as well, with the
// quasi-identifier values of the input record it generalizes (and those of every input
// record left out), in batches counted on a goroutine of their own while the
// truthfulness walk goes on.
type countingReader struct {
	r     verify.Reader
	width int
	qpos  []int    // the quasi-identifiers' fields in an input record
	buf   []string // copies of the release records since the last batch, flat
	orig  []string // the quasi-identifier values of their input records, flat
	supp  []string // those of the input records left out since the last batch, flat
	out   chan countBatch
	free  chan countBatch // batches counted, their slices for reuse
	done  chan error
}

// countBatch is records of the header's width, flat, with the quasi-identifier values
// of their input records, flat, and of input records left out; or one record of
// another width (odd), which the counter reports.
type countBatch struct {
	fields, orig, supp []string
	odd                bool
}

const countingBatch = 1024 // records

func newCountingReader(r verify.Reader, count *verify.Counter, width int, qpos []int) *countingReader {
	c := &countingReader{r: r, width: width, qpos: qpos, out: make(chan countBatch, 4), free: make(chan countBatch, 6), done: make(chan error, 1)}
	q := len(qpos)
	c.buf, c.orig = make([]string, 0, countingBatch*width), make([]string, 0, countingBatch*q)
	go func() {
		err := safe.Go(func() error {
			var err error
			for b := range c.out {
				if b.odd && err == nil {
					err = count.Add(b.fields)
				}
				if !b.odd && err == nil && len(b.fields) > 0 {
					err = count.AddMatchedBatch(b.fields, b.orig)
				}
				for k := 0; err == nil && k+q <= len(b.supp) && q > 0; k += q {
					err = count.AddSuppressed(b.supp[k : k+q])
				}
				if !b.odd && cap(b.fields) > 0 {
					select { // the slices, for the reader to fill again
					case c.free <- countBatch{fields: b.fields[:0], orig: b.orig[:0]}:
					default:
					}
				}
			}
			return err
		})()
		for range c.out { // after a panic, the reader must never block
		}
		c.done <- err
	}()
	return c
}

// Read reads the next record and keeps a copy for the counter.
func (c *countingReader) Read() ([]string, error) {
	// Every record kept so far has its input record: the walk reads the next release
	// record only once it has matched the last.
	if len(c.buf) >= countingBatch*c.width {
		c.flush()
	}
	rec, err := c.r.Read()
	if err != nil {
		return rec, err
	}
	if len(rec) != c.width {
		// The counter reports a record of the wrong width: hand it over alone.
		c.flush()
		c.out <- countBatch{fields: slices.Clone(rec), odd: true}
		return rec, nil
	}
	c.buf = append(c.buf, rec...)
	return rec, nil
}

// input takes an input record read by the truthfulness walk (verify.Truth.Input): the
// quasi-identifier values of the record the last release record generalizes, or of a
// record left out.
func (c *countingReader) input(rec []string, matched bool) {
	if matched {
		for _, p := range c.qpos {
			c.orig = append(c.orig, rec[p])
		}
		return
	}
	for _, p := range c.qpos {
		c.supp = append(c.supp, rec[p])
	}
	if len(c.supp) >= countingBatch*len(c.qpos) {
		c.out <- countBatch{supp: c.supp}
		c.supp = make([]string, 0, countingBatch*len(c.qpos))
	}
}

// flush hands the records kept so far to the counter and takes empty slices for the
// next batch: counted ones when there are, else new.
func (c *countingReader) flush() {
	if len(c.buf) == 0 && len(c.supp) == 0 {
		return
	}
	c.out <- countBatch{fields: c.buf, orig: c.orig, supp: c.supp}
	c.supp = nil
	select {
	case b := <-c.free:
		c.buf, c.orig = b.fields, b.orig
	default:
		c.buf = make([]string, 0, countingBatch*c.width)
		c.orig = make([]string, 0, countingBatch*len(c.qpos))
	}
}

// close counts what is left and returns the counter's first error.
func (c *countingReader) close() error {
	c.flush()
	close(c.out)
	return <-c.done
}
