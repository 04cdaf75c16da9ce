package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"sanitizer/schema"
	"sanitizer/verify"
)

// truthCovers is, per release column, how the truthfulness check relates a released
// value to the input's: quasi-identifiers by the cover of their hierarchy (or, under
// Mondrian, the numeric range), typed columns by their canonical text (a CSV field
// "07" is the integer written 7), a configured null by its value.
func truthCovers(cfg *schema.Config, p *plan) (map[string]verify.Cover, error) {
	covers := map[string]verify.Cover{}
	mondrian := cfg.Search.Algorithm == "mondrian"
	for _, pos := range p.kept {
		c := p.conf[pos]
		var cv verify.Cover
		switch {
		case c.Role == schema.Quasi && mondrian && (c.Type == schema.Integer || c.Type == schema.Float || c.Type == schema.Date):
			cv = verify.CoverRange(c.Type)
		case c.Role == schema.Quasi && c.Hierarchy.File != "":
			h, err := verify.CoverHierarchyFile(c.Hierarchy.File)
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
		case p.types[pos] != schema.String && p.types[pos] != "":
			typ := p.types[pos]
			cv = func(released, original string) (bool, error) {
				a, ok1 := canonical(typ, released)
				b, ok2 := canonical(typ, original)
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

// verifyTruth reads the input again beside the written release and checks that every
// released record generalizes one input record, in order, none invented or duplicated,
// and that the records left out are at most the limit. It returns how many were left
// out. With count set, every release record read is counted there too (the k, l and t
// check), so that the release is read once for both.
func verifyTruth(ctx context.Context, cfg *schema.Config, p *plan, inFmt, release, outFmt string, header []string, count *verify.Counter) (int, error) {
	covers, err := truthCovers(cfg, p)
	if err != nil {
		return 0, err
	}
	names := make([]string, len(cfg.Columns))
	for i, c := range cfg.Columns {
		names[i] = c.Name
	}
	in, err := openSource(p.input, inFmt, cfg.Input.CSV, names)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	rel, err := openSource(release, outFmt, cfg.Output.CSV, header)
	if err != nil {
		return 0, fmt.Errorf("verifying the written release: %v", err)
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
	ir, rr := readColumns(ctx, in, cols), readRecords(ctx, rel)
	defer ir.Close()
	defer rr.Close()
	var relReader verify.Reader = rr
	var counting *countingReader
	if count != nil {
		counting = newCountingReader(rr, count, len(header))
		relReader = counting
	}
	n, err := verify.Truthful(verify.Truth{Columns: header, Covers: covers, MaxSuppressed: p.maxSupp}, inHeader, ir, relReader)
	if counting != nil {
		if cerr := counting.close(); err == nil {
			err = cerr
		}
	}
	var v *verify.Violation
	if err != nil && !errors.As(err, &v) {
		return n, fmt.Errorf("verifying the written release: %v", err)
	}
	return n, err
}

// countingReader hands every release record it reads to a Counter as well, in
// batches counted on a goroutine of their own while the truthfulness walk goes on.
type countingReader struct {
	r     verify.Reader
	width int
	buf   []string // copies of the records since the last batch, flat
	out   chan countBatch
	done  chan error
}

// countBatch is records of the header's width, flat, or one record of another width
// (odd), which the counter reports.
type countBatch struct {
	fields []string
	odd    bool
}

const countingBatch = 1024 // records

func newCountingReader(r verify.Reader, count *verify.Counter, width int) *countingReader {
	c := &countingReader{r: r, width: width, out: make(chan countBatch, 4), done: make(chan error, 1)}
	go func() {
		err := guard(func() error {
			var err error
			for b := range c.out {
				if b.odd && err == nil {
					err = count.Add(b.fields)
				}
				for i := 0; !b.odd && err == nil && i+width <= len(b.fields); i += width {
					err = count.Add(b.fields[i : i+width])
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
	if len(c.buf) >= countingBatch*c.width {
		c.flush()
	}
	return rec, nil
}

func (c *countingReader) flush() {
	if len(c.buf) > 0 {
		c.out <- countBatch{fields: c.buf}
		c.buf = make([]string, 0, countingBatch*c.width)
	}
}

// close counts what is left and returns the counter's first error.
func (c *countingReader) close() error {
	c.flush()
	close(c.out)
	return <-c.done
}
