package stage

import (
	"context"

	"golang.org/x/sync/errgroup"

	"sanitizer/fault"
	"sanitizer/job"
	"sanitizer/release"
	"sanitizer/schema"
	"sanitizer/table"
)

// eachRecord reads a part (CSV, Parquet or Arrow IPC, by input.format or its
// extension) with the release's own reader, package table, not the verifier's: the
// check of the written parts reads them and the input with decoders of its own, as in
// the CLI. cols chooses the input columns to read from the part's plan; f gets every
// record's fields (a null of an insensitive column as "", of another as the
// configuration's null-as, or an error naming the row and column) and where the record is, for messages ("part: row N", as the CLI says).
func eachRecord(ctx context.Context, cfg *schema.Config, hier *job.HierFiles, part string, cols func(p *job.Plan) ([]int, error), f func(p *job.Plan, at func() string, fields []string) error) error {
	return eachRecordNulls(ctx, cfg, hier, part, cols, func(p *job.Plan, at func() string, fields []string, _ []bool) error { return f(p, at, fields) })
}

// eachRecordNulls is eachRecord that also tells f which fields are an insensitive
// column's null (nulls[k], the field then ""), which a typed release keeps as a null.
//
// A part in a store (gs://…) is read from a copy on this worker, which messages do not
// name: they name the part.
func eachRecordNulls(ctx context.Context, cfg *schema.Config, hier *job.HierFiles, part string, cols func(p *job.Plan) ([]int, error), f func(p *job.Plan, at func() string, fields []string, nulls []bool) error) error {
	local, err := fetch(ctx, part)
	if err != nil {
		return err
	}
	defer local.done()
	return local.rename(eachLocalRecord(ctx, cfg, hier, local.path, cols, f))
}

// eachLocalRecord is eachRecordNulls of a local file.
func eachLocalRecord(ctx context.Context, cfg *schema.Config, hier *job.HierFiles, part string, cols func(p *job.Plan) ([]int, error), f func(p *job.Plan, at func() string, fields []string, nulls []bool) error) error {
	format, err := table.InputFormat(part, cfg.Input)
	if err != nil {
		return err
	}
	src, p, err := job.OpenInputWith(cfg, part, format, hier)
	if err != nil {
		return err
	}
	defer src.Close()
	pos, err := cols(p)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	batches := make(chan *table.Batch, 2)
	g.Go(func() error { return src.Stream(gctx, pos, batches) })
	g.Go(func() error {
		defer func() {
			for range batches { // let the stream end
			}
		}()
		fields, nulls := make([]string, len(pos)), make([]bool, len(pos))
		for b := range batches {
			for i := range b.N {
				row := b.First + i
				for k, c := range pos {
					fields[k], nulls[k] = b.Fields[i*b.Width+k], false
					if p.IsNull(b, i, k, c) {
						conf := p.Conf[c]
						if conf != nil && conf.Role == schema.Insensitive {
							fields[k], nulls[k] = "", true // kept as a null, as the CLI keeps it
							continue
						}
						if isUnit(cfg, p.Header[c]) { // a person's id must be there
							return unitMissing(cfg, func() string { return p.At(row) })
						}
						if conf == nil || conf.Null == nil {
							return fault.BadInput("%s: column %q: null value (set columns.%s.null-as to the value a null stands for)", p.At(row), p.Header[c], p.Header[c])
						}
						fields[k] = *conf.Null
					}
				}
				if err := f(p, func() string { return p.At(row) }, fields, nulls); err != nil {
					return err
				}
			}
			b.Release()
		}
		return nil
	})
	return g.Wait()
}

// positions is the input positions of the named columns in p.
func positions(p *job.Plan, part string, names []string) ([]int, error) {
	out := make([]int, len(names))
	for i, name := range names {
		out[i] = -1
		for pos, h := range p.Header {
			if h == name {
				out[i] = pos
			}
		}
		if out[i] < 0 {
			return nil, fault.BadInput("%s: no column %q", part, name)
		}
	}
	return out, nil
}

// inSubset reads a research subset's flag as the CLI's pass 1 does (release.Engine.SubsetFlag);
// a field that is not one is bad input naming where it is and the column, never the
// value.
func inSubset(cfg *schema.Config, flag string, at func() string) (bool, error) {
	in, ok := release.Engine{}.SubsetFlag(flag)
	if !ok {
		return false, fault.BadInput("%s: column %q: not a research subset flag (privacy.subset reads true, 1 or yes; false, 0 or no)", at(), cfg.Privacy.Subset.Column)
	}
	return in, nil
}
