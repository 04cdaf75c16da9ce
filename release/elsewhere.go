package release

import (
	"context"
	"fmt"
	"time"

	"sanitizer/fault"
	"sanitizer/job"
	"sanitizer/publish"
	"sanitizer/report"
	"sanitizer/schema"
	"sanitizer/table"
)

// PartsWriter writes the parts of a release that this process decided and verifies,
// but does not write itself (sanitize-beam's workers, for a series night: Beam's
// release --series). It writes every part of job.Parts into job.Dir and returns when
// all are written; any error fails the release, and nothing is published.
type PartsWriter func(ctx context.Context, job PartsJob) error

// PartsJob is what a PartsWriter writes: for every input part, in order, its release
// part in the release's format, the records of the part other than those left out,
// in order, each quasi-identifier as its label at the node's level, the other kept
// columns as the CLI's release writes them. The verification then reads the parts as
// it reads the CLI's own, so that a writer that writes anything else fails the
// release.
type PartsJob struct {
	Dir    string        // the temporary folder the parts are written into
	Format schema.Format // the release's format
	// Names is the file name of every part's release (Engine.PartName), Rows the
	// records of every input part as this process read them.
	Names []string
	Rows  []int
	// Levels is the node: per quasi-identifier, in the configuration's order, its level.
	Levels []int
	// Labels is, per quasi-identifier, the labels at its level that a written record
	// holds, in the order of its hierarchy's codes here: a part's dictionary of labels
	// lists those.
	Labels [][]string
	// LeftOut is, per part, the records not written (numbered from 0 within the part,
	// ascending): those the models suppress and those a series night withholds.
	LeftOut [][]int32
	// Meta is the release's metadata (Engine.ReleaseMetadata), for a format that holds
	// it.
	Meta map[string]string
}

// ReleaseWith is Release, with the release's parts written by write instead of this
// process's pass 2: the input is read, encoded and searched here, a series night
// decided here, and the parts write wrote verified here before anything is
// published; the report names tool as its maker. The output must be a folder of
// parts (a path ending in a separator); a research subset and Mondrian are bad input
// (their records are not told apart by a part's record numbers alone), and so is a
// privacy unit released as a pseudonym without a key file (the writer must use the
// same key).
func ReleaseWith(ctx context.Context, cfg *schema.Config, opt job.Options, tool string, write PartsWriter) (*report.Report, error) {
	if write == nil || tool == "" {
		return nil, fault.Internalf("ReleaseWith without a writer or a tool's name")
	}
	return release(ctx, cfg, opt, &elsewhere{tool: tool, write: write})
}

// elsewhere is who writes a release's parts instead of pass 2, and the tool whose
// report it is.
type elsewhere struct {
	tool  string
	write PartsWriter
}

// checkElsewhere refuses what a release written by a PartsWriter cannot be (out, in
// the format outFmt).
func checkElsewhere(cfg *schema.Config, out string, outFmt schema.Format) error {
	switch u := cfg.Privacy.Unit; {
	case !folderOutput(out):
		return fault.BadInput("output: %s: a release written by workers is a folder of parts (end the path with %q)", out, "/")
	case cfg.Search.Algorithm == schema.Mondrian:
		return cfg.Errorf("search.algorithm", "a release written by workers needs the optimal search, not mondrian")
	case cfg.Privacy.Subset != nil:
		return cfg.Errorf("privacy.subset", "a release of a research subset is not written by workers in this version")
	case cfg.Search.LocalRecoding != nil:
		return cfg.Errorf("search.local-recoding", "a release placed pass by pass is not written by workers in this version")
	case cfg.Privacy.DifferentialPrivacy != nil && outFmt != schema.FormatCSV:
		return cfg.Errorf("output.format", "%s: a differentially private release written by workers is a folder of CSV parts in this version (sanitize release writes it as %s)", outFmt, outFmt)
	case u != nil && u.Pseudonym != nil && u.Pseudonym.KeyFile == "":
		return cfg.Errorf("privacy.privacy-unit.pseudonym.key-file", "a privacy unit released as a pseudonym is written by workers only under a key file they read too (a run's own random key is nowhere they can)")
	}
	return nil
}

// writeElsewhere is the write stage of ReleaseWith: the records every part leaves
// out, then the parts written by r.elsewhere into a temporary folder beside the
// output.
func (r *run) writeElsewhere(ctx context.Context) error {
	r.class = nil
	r.p.progress.Enter(job.StageWrite)
	r.opt.At(job.StageWrite)
	parts := table.Split(r.src)
	pj := PartsJob{Format: r.outFmt, Levels: r.res.Levels, Labels: make([][]string, len(r.t.Columns))}
	for q, col := range r.t.Columns {
		pj.Labels[q] = []string{}
		for code, ok := range r.released[q] {
			if ok {
				pj.Labels[q] = append(pj.Labels[q], col.Hierarchy.Value(r.res.Levels[q], int32(code)))
			}
		}
	}
	written := 0
	for i, part := range parts {
		first, rows := table.Span(part)
		var out []int32
		for row := range rows {
			if r.suppressed != nil && r.suppressed[first+row] {
				out = append(out, int32(row))
			}
		}
		pj.Names = append(pj.Names, partName(i, len(parts), r.outFmt))
		pj.Rows = append(pj.Rows, rows)
		pj.LeftOut = append(pj.LeftOut, out)
		written += rows - len(out)
	}
	r.created = r.opt.Time()
	pj.Meta = r.fileMetadata()
	tmp, err := publish.CreateFolder(r.out)
	if err != nil {
		return fmt.Errorf("output: %w", err)
	}
	pj.Dir = tmp.Path
	if err := r.elsewhere.write(ctx, pj); err != nil {
		tmp.Discard()
		return err
	}
	r.dest, r.written = folderDest{tmp}, written
	r.wrote, r.cpu.wrote = time.Now(), job.ProcessCPU()
	r.log.Info("stage done", append([]any{"stage", job.StageWrite, "records", r.written, "format", r.outFmt.String(), "ms", job.Millis(r.searched, r.wrote)},
		job.CPUAttrs(r.searched, r.wrote, r.cpu.searched, r.cpu.wrote)...)...)
	return nil
}
