package pipeline

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"

	"sanitizer/generalize"
	"sanitizer/schema"
)

// recoder turns input records into release records. Pass 2 reads the kept columns
// only (p.kept, which holds the quasi-identifiers): field j of a record is input column
// p.kept[j].
type recoder struct {
	p          *plan
	t          *generalize.Table
	levels     []int
	suppressed []bool // per record; nil: none
	quasiAt    []int  // per kept column: index into t.Columns, or -1
	fieldOf    []int  // per quasi-identifier: its field in a pass-2 record
	// listed holds, per input column, a hierarchy that must list every value (the
	// sensitive columns' hierarchy files), or nil.
	listed []*generalize.Hierarchy
	// class and labels, for a Mondrian release: every record's partition and each
	// partition's released quasi-identifier values (levels is then nil).
	class  []int32
	labels *partLabels
	// boxes, when set (see box): every released quasi-identifier value as an interface
	// value made once, per quasi-identifier: per label of labels (Mondrian) or per code
	// at the column's level.
	boxes [][]any
}

// box makes the recoder give, beside each record's text, every quasi-identifier value
// as an interface value made once per distinct value, for a sink that would otherwise
// make one per record (preparer).
func (r *recoder) box() {
	r.boxes = make([][]any, len(r.t.Columns))
	for qi, c := range r.t.Columns {
		var vals []string
		if r.labels != nil {
			vals = r.labels.dict[qi]
		} else {
			l := r.levels[qi]
			vals = make([]string, c.Hierarchy.Size(l))
			for code := range vals {
				vals[code] = c.Hierarchy.Value(l, int32(code))
			}
		}
		r.boxes[qi] = make([]any, len(vals))
		for x, v := range vals {
			r.boxes[qi][x] = v
		}
	}
}

func newRecoder(p *plan, t *generalize.Table, levels []int, suppressed []bool) *recoder {
	r := &recoder{p: p, t: t, levels: levels, suppressed: suppressed, quasiAt: make([]int, len(p.kept)), fieldOf: make([]int, len(p.quasi)), listed: make([]*generalize.Hierarchy, len(p.header))}
	for j, i := range p.kept {
		r.quasiAt[j] = -1
		for qi, pos := range p.quasi {
			if pos == i {
				r.quasiAt[j] = qi
				r.fieldOf[qi] = j
			}
		}
	}
	return r
}

// recoded is the release records of one batch: n records of len(kept) fields.
type recoded struct {
	fields []string
	nulls  []bool // nil when none is null
	boxed  []any  // nil, or as fields: a quasi-identifier's value as an interface value
	n      int
}

// gatherLabels returns, for a Mondrian release, the place in its label dictionary of
// every record's value of every quasi-identifier (record i, quasi-identifier qi at
// i·q+qi), nil otherwise. The records' partitions lie anywhere in the label table, a
// cache miss each: in this short loop the misses of several records overlap, where
// in recode's long one they came one at a time.
func (r *recoder) gatherLabels(b *batch) []int32 {
	if r.labels == nil {
		return nil
	}
	q := len(r.t.Columns)
	xs := make([]int32, b.n*q)
	for i := range min(b.n, len(r.class)-b.first) {
		at := int(r.class[b.first+i]) * q
		copy(xs[i*q:(i+1)*q], r.labels.idx[at:at+q])
	}
	return xs
}

// recode returns the release records of batch b (suppressed records are left out).
func (r *recoder) recode(b *batch) (*recoded, error) {
	width := len(r.p.kept)
	out := &recoded{fields: make([]string, 0, b.n*width)}
	if r.boxes != nil {
		out.boxed = make([]any, b.n*width)
	}
	labeled := r.gatherLabels(b)
	q := len(r.t.Columns)
	for i := range b.n {
		row := b.first + i
		if row >= r.t.Rows {
			return nil, errChanged(r.p.input)
		}
		rec := b.record(i)
		// Pass 2 must read what pass 1 encoded.
		for qi, c := range r.t.Columns {
			f := r.fieldOf[qi]
			v := rec[f]
			if r.p.isNull(b, i, f, r.p.kept[f]) {
				nullAs := r.p.quasiCfg[qi].Null
				if nullAs == nil {
					return nil, errChanged(r.p.input) // pass 1 would have refused it
				}
				v = *nullAs
			}
			// The leaf pass 1 gave the record has this text, and no other leaf does.
			if c.Hierarchy.Value(0, c.Codes.At(row)) != v {
				return nil, errChanged(r.p.input)
			}
		}
		if r.suppressed != nil && r.suppressed[row] {
			continue
		}
		for j, pos := range r.p.kept {
			if qi := r.quasiAt[j]; qi >= 0 {
				var x int32
				if r.labels != nil {
					x = labeled[i*q+qi]
					out.fields = append(out.fields, r.labels.dict[qi][x])
				} else {
					c := r.t.Columns[qi]
					l := r.levels[qi]
					x = c.Hierarchy.Code(l, c.Codes.At(row))
					out.fields = append(out.fields, c.Hierarchy.Value(l, x))
				}
				if r.boxes != nil {
					out.boxed[out.n*width+j] = r.boxes[qi][x]
				}
				continue
			}
			v, conf, name := rec[j], r.p.conf[pos], r.p.header[pos]
			if r.p.isNull(b, i, j, pos) {
				if conf.Role != schema.Sensitive {
					if out.nulls == nil {
						out.nulls = make([]bool, b.n*width)
					}
					out.nulls[out.n*width+j] = true
					out.fields = append(out.fields, "")
					continue
				}
				if conf.Null == nil {
					return nil, nullError(r.p, row, name)
				}
				v = *conf.Null
			}
			if r.p.textIn {
				if err := checkType(conf, v); err != nil {
					return nil, schema.BadInput("%s: row %d: column %q: %v", r.p.input, row+1, name, err)
				}
			}
			if h := r.listed[pos]; h != nil {
				if _, ok := h.Leaf(v); !ok {
					return nil, schema.BadInput("%s: row %d: column %q: value not listed in hierarchy %s", r.p.input, row+1, name, h.Source())
				}
			}
			out.fields = append(out.fields, v)
		}
		out.n++
	}
	return out, nil
}

// writeRelease is pass 2: it streams the kept columns of the input again, recodes and
// suppresses batch by batch on a worker pool, and writes the batches in input order to
// sink. It returns the number of records written.
func writeRelease(ctx context.Context, src source, rc *recoder, out sink, workers int) (int, error) {
	type job struct {
		b        *batch
		out      *recoded
		prepared any // out converted by the sink, when it is a preparer
		err      error
		done     chan struct{}
	}
	g, ctx := errgroup.WithContext(ctx)
	in := make(chan *batch, workers)
	jobs := make(chan *job, 2*workers) // in input order, for the writer
	work := make(chan *job, 2*workers) // for the recoders
	g.Go(guard(func() error { return src.stream(ctx, rc.p.kept, in) }))
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
	// A sink that can convert records off its writing goroutine does so on the
	// recoders'.
	prep, _ := out.(preparer)
	if prep != nil {
		rc.box()
	}
	for range workers {
		g.Go(guard(func() error {
			for j := range work {
				j.out, j.err = rc.recode(j.b)
				if j.err == nil && prep != nil {
					if j.prepared, j.err = prep.prepare(j.out.fields, j.out.boxed, j.out.nulls, j.out.n); j.err != nil {
						j.err = fmt.Errorf("writing release: %w", j.err)
					}
				}
				close(j.done)
			}
			return nil
		}))
	}
	written := 0
	g.Go(guard(func() error {
		for j := range jobs {
			select {
			case <-j.done:
			case <-ctx.Done():
				return ctx.Err()
			}
			if j.err != nil {
				return j.err
			}
			var err error
			if prep != nil {
				err = prep.writePrepared(j.prepared)
			} else {
				err = out.write(j.out.fields, j.out.nulls, j.out.n)
			}
			if err != nil {
				return fmt.Errorf("writing release: %w", err)
			}
			written += j.out.n
			rc.p.progress.addWritten(j.out.n)
		}
		return nil
	}))
	if err := g.Wait(); err != nil {
		return 0, err
	}
	return written, nil
}
