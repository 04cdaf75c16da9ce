package stage

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"sanitizer/generalize"
	"sanitizer/job"
	"sanitizer/schema"
)

func init() {
	register.DoFn2x1[context.Context, string, error](&writePartFn{})
}

// writePartFn recodes one part at the chosen node and writes its release part: the
// records of published classes, in order, every quasi-identifier as its label at the
// node's level, the other kept columns as read. A class is suppressed as the merged
// class table's recoding says (the same for every part).
type writePartFn struct {
	Job     Job
	Levels  []int
	Classes []byte // the merged class table, encoded
	// Population is a research subset's population's class table, encoded (nil:
	// no subset).
	Population []byte
	Parts      []string // every part, in order: a part's release is named by its index
	Out        string   // the folder the release's parts are written to
}

// ProcessElement is process, its error's kind marked for the driver (workerErr).
func (f *writePartFn) ProcessElement(ctx context.Context, part string) error {
	return workerErr(f.process(ctx, part))
}

func (f *writePartFn) process(ctx context.Context, part string) error {
	cfg, like, in, err := f.Job.table()
	if err != nil {
		return err
	}
	merged, err := generalize.UnmarshalClasses(f.Classes, like)
	if err != nil {
		return fmt.Errorf("internal error: the merged class table: %w", err)
	}
	var pop *generalize.ClassTable
	if f.Population != nil {
		if pop, err = generalize.UnmarshalClasses(f.Population, populationLike(like)); err != nil {
			return fmt.Errorf("internal error: the population's class table: %w", err)
		}
	}
	opt, err := options(cfg, like, in, merged, pop)
	if err != nil {
		return err
	}
	rec, err := generalize.NodeRecoding(merged, f.Levels, opt)
	if err != nil {
		return err
	}
	index := slices.Index(f.Parts, part)
	if index < 0 {
		return fmt.Errorf("internal error: %s is not a part of the input", part)
	}
	return writePart(ctx, cfg, like, rec, f.Levels, part, filepath.Join(f.Out, fmt.Sprintf("part-%05d.csv", index)))
}

// names is the quasi-identifiers' names of t, in its order.
func names(t *generalize.Table) []string {
	out := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		out[i] = c.Name
	}
	return out
}

// writePart writes the release of one part to out, a CSV file.
func writePart(ctx context.Context, cfg *schema.Config, like *generalize.Table, rec *generalize.Recoding, levels []int, part, out string) (err error) {
	file, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := file.Close(); err == nil {
			err = cerr
		}
	}()
	w := csv.NewWriter(file)
	if d := cfg.Output.CSV; d.Separator != 0 {
		w.Comma = d.Separator
	}
	var quasiAt []int // per kept column: its quasi-identifier, or −1
	var leaves []int32
	var outRec []string
	err = eachRecord(ctx, cfg, part,
		func(p *job.Plan) ([]int, error) {
			for _, pos := range p.Kept {
				quasiAt = append(quasiAt, slices.Index(names(like), p.Header[pos]))
			}
			leaves, outRec = make([]int32, len(p.Quasi)), make([]string, len(p.Kept))
			if d := cfg.Output.CSV; d.Separator == 0 || d.Header {
				if err := w.Write(p.ReleaseHeader()); err != nil {
					return nil, err
				}
			}
			read := append(slices.Clone(p.Kept), p.Quasi...)
			if sub := cfg.Privacy.Subset; sub != nil { // its flag last
				pos, err := positions(p, part, []string{sub.Column})
				if err != nil {
					return nil, err
				}
				read = append(read, pos[0])
			}
			return read, nil
		},
		func(p *job.Plan, at func() string, fields []string) error {
			if cfg.Privacy.Subset != nil { // outside the subset: not released
				if in, err := inSubset(cfg, fields[len(fields)-1], at); !in || err != nil {
					return err
				}
			}
			k := len(p.Kept)
			for i := range leaves {
				var err error
				if leaves[i], err = leafOf(like.Columns[i], fields[k+i], at); err != nil {
					return err
				}
			}
			if rec.IsSuppressed(leaves) {
				return nil
			}
			for j := range outRec {
				if q := quasiAt[j]; q >= 0 {
					h := like.Columns[q].Hierarchy
					outRec[j] = h.Value(levels[q], h.Code(levels[q], leaves[q]))
				} else {
					outRec[j] = fields[j]
				}
			}
			return w.Write(outRec)
		})
	if err != nil {
		return err
	}
	w.Flush()
	return w.Error()
}

// WriteParts adds to the pipeline the recoding of every part into its release part in
// folder out, at levels with the merged class table's (and for a research subset, its
// population's) suppression.
func WriteParts(s beam.Scope, job Job, levels []int, classes, population []byte, parts []string, out string) {
	s = s.Scope("WriteParts")
	beam.ParDo0(s, &writePartFn{Job: job, Levels: levels, Classes: classes, Population: population, Parts: parts, Out: out}, beam.CreateList(s, parts))
}
