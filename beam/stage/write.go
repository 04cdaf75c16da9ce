package stage

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"sanitizer/generalize"
	"sanitizer/job"
	"sanitizer/release"
	"sanitizer/schema"
	"sanitizer/table"
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
	Classes []byte   // the merged class table, encoded
	Parts   []string // every part, in order: a part's release is named by its index
	Out     string   // the folder the release's parts are written to
}

func (f *writePartFn) ProcessElement(ctx context.Context, part string) error {
	cfg, like, in, err := f.Job.table()
	if err != nil {
		return err
	}
	merged, err := generalize.UnmarshalClasses(f.Classes, like)
	if err != nil {
		return fmt.Errorf("internal error: the merged class table: %w", err)
	}
	opt, err := release.ModelOptions(cfg, names(like), merged.Records())
	if err != nil {
		return err
	}
	rec, err := generalize.NodeRecoding(merged, f.Levels, in.withModels(opt))
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

// writePart writes the release of one CSV part to out.
func writePart(ctx context.Context, cfg *schema.Config, like *generalize.Table, rec *generalize.Recoding, levels []int, part, out string) error {
	in, err := openPart(cfg, part)
	if err != nil {
		return err
	}
	defer in.Close()
	cols := make([]table.Column, len(in.Header()))
	for i, h := range in.Header() {
		cols[i] = table.Column{Name: h}
	}
	p, err := job.NewPlan(cfg, part, cols)
	if err != nil {
		return err
	}
	quasiAt := make([]int, len(p.Kept)) // per kept column: its quasi-identifier, or −1
	for j, pos := range p.Kept {
		quasiAt[j] = slices.Index(names(like), p.Header[pos])
	}
	read := append(slices.Clone(p.Kept), p.Quasi...)
	r := in.Records(ctx, read)
	defer r.Close()

	file, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	w := csv.NewWriter(file)
	if d := cfg.Output.CSV; d.Separator != 0 {
		w.Comma = d.Separator
	}
	if d := cfg.Output.CSV; d.Separator == 0 || d.Header {
		if err := w.Write(p.ReleaseHeader()); err != nil {
			file.Close()
			return err
		}
	}
	leaves := make([]int32, len(p.Quasi))
	outRec := make([]string, len(p.Kept))
	k := len(p.Kept)
	for row := 1; ; row++ {
		fields, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			file.Close()
			return schema.BadInput("%s: %w", part, err)
		}
		for i := range leaves {
			if leaves[i], err = leafOf(like.Columns[i], fields[k+i], part, row); err != nil {
				file.Close()
				return err
			}
		}
		if rec.IsSuppressed(leaves) {
			continue
		}
		for j := range outRec {
			if q := quasiAt[j]; q >= 0 {
				h := like.Columns[q].Hierarchy
				outRec[j] = h.Value(levels[q], h.Code(levels[q], leaves[q]))
			} else {
				outRec[j] = fields[j]
			}
		}
		if err := w.Write(outRec); err != nil {
			file.Close()
			return err
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		file.Close()
		return err
	}
	return file.Close()
}

// WriteParts adds to the pipeline the recoding of every part into its release part in
// folder out.
func WriteParts(s beam.Scope, job Job, levels []int, classes []byte, parts []string, out string) {
	s = s.Scope("WriteParts")
	beam.ParDo0(s, &writePartFn{Job: job, Levels: levels, Classes: classes, Parts: parts, Out: out}, beam.CreateList(s, parts))
}
