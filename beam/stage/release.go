package stage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"sanitizer/job"
	"sanitizer/release"
	"sanitizer/schema"
	"sanitizer/table"
)

// Released is what a release on Beam did.
type Released struct {
	Searched
	Parts    int               // release parts written, one per input part
	Measured *release.Measured // the check of the written parts
	// Write and Check are the wall time of the pipeline that wrote the parts and of
	// their check.
	Write, Check time.Duration
}

// Release releases the input's parts on the runner into the folder out: the search
// (Search), then every part recoded and written on the workers into a folder beside
// out (part-00000.csv, .parquet or .arrow…: output.format, else the input's format,
// as the CLI's release in parts; a Parquet or Arrow part carries the CLI's release
// metadata, release.ReleaseMetadata, the same in every part), then the written parts checked by the CLI's independent check (release.Check:
// truthfulness against the input's parts, k, the suppression, the records left out
// exactly those of the failing classes), and only then the folder renamed to out. A
// run that cannot meet the models, fails on a part, or whose parts fail the check
// publishes nothing. With force an existing out is replaced.
func Release(ctx context.Context, j Job, in, out string, force bool, run Execute) (*Released, error) {
	out = job.Abs(out) // the workers write beside it, from their own working folders
	if _, err := os.Stat(out); err == nil && !force {
		return nil, schema.BadInput("%s exists (use --force to replace it)", out)
	}
	cfg, err := schema.Parse(j.Config, j.Name, j.Dir)
	if err != nil {
		return nil, err
	}
	if cfg.Search.Algorithm == "mondrian" {
		return nil, schema.BadInput("%s: search.algorithm: mondrian does not run on Beam (its recursion is not a combine): use optimal", j.Name)
	}
	inParts, err := Parts(in)
	if err != nil {
		return nil, err
	}
	format, err := outputFormat(cfg, in, inParts[0])
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(out), "."+filepath.Base(out)+".sanitize-beam-")
	if err != nil {
		return nil, err
	}
	published := false
	defer func() {
		if !published {
			os.RemoveAll(tmp)
		}
	}()
	work := filepath.Join(tmp, "work")
	parts := filepath.Join(tmp, "release")
	for _, d := range []string{work, parts} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, err
		}
	}
	searched, err := Search(ctx, j, in, work, run)
	if err != nil {
		return nil, err
	}
	classes, population, err := nodeTables(searched, work)
	if err != nil {
		return nil, err
	}
	p, s := beam.NewPipelineWithRoot()
	// The release's metadata, made here once: every part carries the same, as every
	// part of the CLI's release in parts does.
	meta := release.ReleaseMetadata(cfg, searched.Classes.Columns(), searched.Classes.Records(), searched.Result, time.Now())
	WriteParts(s, searched.Job, searched.Result.Levels, classes, population, inParts, parts, format, meta)
	start := time.Now()
	if err := runMarked(ctx, run, p); err != nil {
		return nil, err
	}
	written := time.Now()
	m, err := release.Check(ctx, cfg, job.Options{Input: in, Output: parts})
	checked := time.Now()
	if errors.Is(err, schema.ErrUnattainable) {
		return nil, fmt.Errorf("internal error: the written parts failed the check, nothing published: %w", err)
	}
	if err != nil {
		return nil, err
	}
	if m.Suppressed != searched.Result.Suppressed {
		return nil, fmt.Errorf("internal error: the check counted %d records left out, the search %d; nothing published", m.Suppressed, searched.Result.Suppressed)
	}
	if force {
		if err := os.RemoveAll(out); err != nil {
			return nil, err
		}
	}
	if err := os.Rename(parts, out); err != nil {
		return nil, err
	}
	published = true
	os.RemoveAll(tmp)
	return &Released{Searched: *searched, Parts: len(inParts), Measured: m, Write: written.Sub(start), Check: checked.Sub(written)}, nil
}

// outputFormat is the release's format: output.format, else the input's, as the CLI's
// release into a folder of parts has it. A kept column whose values have no text form
// (decimals, binary), which the CLI's release passes through as arrays, is refused
// before anything runs: a release on Beam writes every value from its text. first is
// the input's first part, whose columns every part shares.
func outputFormat(cfg *schema.Config, in, first string) (string, error) {
	inFmt, err := table.InputFormat(in, cfg.Input)
	if err != nil {
		return "", err
	}
	src, p, err := job.OpenInput(cfg, first, inFmt)
	if err != nil {
		return "", err
	}
	src.Close()
	if len(p.PassOnly) > 0 {
		pos := p.PassOnly[0]
		return "", schema.BadInput("%s: column %q: values of type %s have no text form, and sanitize-beam writes a release from its values' text: drop the column (role identifier), or release it with sanitize release, which passes it through", first, p.Header[pos], p.ArrowTypes[pos])
	}
	if f := cfg.Output.Format; f != "" {
		return f, nil
	}
	return inFmt, nil
}
