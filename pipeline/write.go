package pipeline

import (
	"context"
	"strconv"
	"time"

	"golang.org/x/sync/errgroup"

	"sanitizer/generalize"
	"sanitizer/schema"
)

// recoder turns input records into release records.
type recoder struct {
	p          *plan
	t          *generalize.Table
	levels     []int
	suppressed []bool
	quasiAt    []int // per kept column: index into t.Columns, or -1
	// listed holds, per input column, a hierarchy that must list every value (the
	// sensitive columns' hierarchy files), or nil.
	listed []*generalize.Hierarchy
}

func newRecoder(p *plan, t *generalize.Table, levels []int, suppressed []bool) *recoder {
	r := &recoder{p: p, t: t, levels: levels, suppressed: suppressed, quasiAt: make([]int, len(p.kept)), listed: make([]*generalize.Hierarchy, len(p.header))}
	for j, i := range p.kept {
		r.quasiAt[j] = -1
		for qi, pos := range p.quasi {
			if pos == i {
				r.quasiAt[j] = qi
			}
		}
	}
	return r
}

// recode fills out with the release records of batch b (suppressed records are left
// out) and returns how many it wrote. out is flat, len(kept) fields per record.
func (r *recoder) recode(b *batch, out []string) ([]string, error) {
	out = out[:0]
	for i := range b.n {
		row := b.first + i
		if row >= len(r.suppressed) {
			return nil, schema.BadInput("%s: the input changed while it was being released", r.p.input)
		}
		rec := b.record(i)
		// Pass 2 must read what pass 1 encoded.
		for qi, pos := range r.p.quasi {
			c := r.t.Columns[qi]
			if leaf, ok := c.Hierarchy.Leaf(rec[pos]); !ok || leaf != c.Codes[row] {
				return nil, schema.BadInput("%s: the input changed while it was being released", r.p.input)
			}
		}
		if r.suppressed[row] {
			continue
		}
		for j, pos := range r.p.kept {
			if qi := r.quasiAt[j]; qi >= 0 {
				c := r.t.Columns[qi]
				l := r.levels[qi]
				out = append(out, c.Hierarchy.Value(l, c.Hierarchy.Code(l, c.Codes[row])))
				continue
			}
			v := rec[pos]
			if err := checkType(r.p.conf[pos], v); err != nil {
				return nil, schema.BadInput("%s: row %d: column %q: %v", r.p.input, row+1, r.p.header[pos], err)
			}
			if h := r.listed[pos]; h != nil {
				if _, ok := h.Leaf(v); !ok {
					return nil, schema.BadInput("%s: row %d: column %q: value not listed in hierarchy %s", r.p.input, row+1, r.p.header[pos], h.Source())
				}
			}
			out = append(out, v)
		}
	}
	return out, nil
}

// checkType checks a kept value against its column's declared type (nil conf: dropped
// column, never written). The error never quotes the value.
func checkType(conf *schema.Column, v string) error {
	if conf == nil {
		return nil
	}
	var err error
	switch conf.Type {
	case schema.Integer:
		_, err = strconv.ParseInt(v, 10, 64)
	case schema.Float:
		_, err = strconv.ParseFloat(v, 64)
	case schema.Boolean:
		_, err = strconv.ParseBool(v)
	case schema.Date:
		_, err = time.Parse(time.DateOnly, v)
	case schema.Timestamp:
		_, err = time.Parse(time.RFC3339Nano, v)
	default:
		return nil
	}
	if err != nil {
		return errNotType(conf.Type)
	}
	return nil
}

type errNotType schema.Type

func (e errNotType) Error() string { return "value is not a valid " + string(e) }

// writeRelease is pass 2: it streams the whole input again, recodes and suppresses
// batch by batch on a worker pool, and writes the batches in input order to sink.
// It returns the number of records written.
func writeRelease(ctx context.Context, src *csvSource, rc *recoder, sink *csvSink, workers int) (int, error) {
	all := make([]int, len(src.header))
	for i := range all {
		all[i] = i
	}
	type job struct {
		b    *batch
		out  []string
		err  error
		done chan struct{}
	}
	g, ctx := errgroup.WithContext(ctx)
	in := make(chan *batch, workers)
	jobs := make(chan *job, 2*workers) // in input order, for the writer
	work := make(chan *job, 2*workers) // for the recoders
	g.Go(guard(func() error { return src.stream(ctx, all, in) }))
	g.Go(guard(func() error {
		defer close(jobs)
		defer close(work)
		for b := range in {
			j := &job{b: b, done: make(chan struct{})}
			for _, c := range []chan *job{jobs, work} {
				select {
				case c <- j:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
		}
		return nil
	}))
	for range workers {
		g.Go(guard(func() error {
			for j := range work {
				j.out, j.err = rc.recode(j.b, nil)
				close(j.done)
			}
			return nil
		}))
	}
	written := 0
	g.Go(guard(func() error {
		width := len(rc.p.kept)
		for j := range jobs {
			select {
			case <-j.done:
			case <-ctx.Done():
				return ctx.Err()
			}
			if j.err != nil {
				return j.err
			}
			for o := 0; o < len(j.out); o += width {
				if err := sink.Write(j.out[o : o+width]); err != nil {
					return err
				}
				written++
			}
		}
		return nil
	}))
	if err := g.Wait(); err != nil {
		return 0, err
	}
	return written, nil
}
