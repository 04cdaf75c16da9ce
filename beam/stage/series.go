package stage

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"sanitizer/fault"
	"sanitizer/job"
	"sanitizer/release"
	"sanitizer/report"
	"sanitizer/schema"
	"sanitizer/table"
)

// ReleaseSeries runs a night of a release series (opt.Series; docs/series.md) with
// its parts written on the workers: this process locks and reads the series' state,
// reads the input, searches from the last night's node and decides what each class
// publishes tonight, exactly as sanitize release --series does (release.ReleaseWith);
// the workers then write every part's release, the records this process left out
// (suppressed, or withheld by the series' rules) named to them by number
// (partsWriter); this process verifies the written parts against the input and the
// state, commits the night and puts the folder in place. The series' decision needs
// every record's published row against the state, which is one machine's: the
// workers share the write, not the decision. The input and the output are local (the
// state commits a night by renaming its folder into place); the output is a folder of
// CSV parts, one per input part; a privacy unit released as a pseudonym needs its key
// file (the workers read it).
func ReleaseSeries(ctx context.Context, j Job, opt job.Options, run Execute) (*report.Report, error) {
	return releaseOnDriver(ctx, j, opt, run, "--series", "a series night reads and writes local files (its state commits a night by renaming its release into place)")
}

// ReleaseDP runs a release under privacy.differential-privacy (SafePub) with its parts
// written on the workers, as ReleaseSeries runs a night: this process reads the input,
// draws the sample (and the search's) part by part, each part's blocks from streams of
// their own under a secret drawn from the operating system's cryptographic source,
// chooses the node and the classes of k drawn records or more, exactly as
// sanitize release does (release.ReleaseWith); the workers write every part's release,
// the records left out (not drawn, or suppressed) named to them by number; this
// process verifies the parts against the run's account of the sample, charges the
// spend to the ledger (opt.Ledger) and puts the folder in place. The input and the
// output are local.
func ReleaseDP(ctx context.Context, j Job, opt job.Options, run Execute) (*report.Report, error) {
	return releaseOnDriver(ctx, j, opt, run, "privacy.differential-privacy", "its sample is drawn and its release verified on this machine")
}

// releaseOnDriver is ReleaseSeries and ReleaseDP: the release decided here, its parts
// written by the workers. what and why say, of an input or output in a store, what
// needs local files and why.
func releaseOnDriver(ctx context.Context, j Job, opt job.Options, run Execute, what, why string) (*report.Report, error) {
	cfg, err := schema.Parse(j.Config, j.Name, j.Dir)
	if err != nil {
		return nil, err
	}
	in, out, err := (release.Engine{Config: cfg}).InputOutput(opt)
	if err != nil {
		return nil, err
	}
	for key, p := range map[string]string{"input": in, "output": out} {
		if isObject(p) {
			return nil, fault.BadInput("%s: %s: %s is in a store; %s", what, key, p, why)
		}
	}
	if !strings.HasSuffix(out, string(filepath.Separator)) {
		out += string(filepath.Separator) // a folder of parts, as on Beam always
	}
	opt.Input, opt.Output = in, out
	rt, err := newRunTemp(ctx, j.Temp)
	if err != nil {
		return nil, err
	}
	log := opt.Logger()
	defer func() {
		if err := rt.discard(context.WithoutCancel(ctx)); err != nil {
			log.Warn("the run's temporary folder was not removed", "error", err.Error())
		}
	}()
	if j.Errors, err = rt.folder("errors"); err != nil {
		return nil, err
	}
	work, err := rt.folder("work")
	if err != nil {
		return nil, err
	}
	if u := cfg.Privacy.Unit; u != nil && u.Pseudonym != nil {
		j.KeyFile = u.Pseudonym.KeyFile // the workers write the pseudonyms under the key the run uses
	}
	parts := []string{in}
	if table.IsParts(in) {
		if parts, err = table.PartPaths(in); err != nil {
			return nil, err
		}
	}
	return release.ReleaseWith(ctx, cfg, opt, "sanitize-beam", partsWriter(j, parts, work, run))
}

// partsWriter writes the parts of a release decided on the driver (a series night, a
// differentially private release; both CSV) on the workers (release.PartsWriter):
// the values of the hierarchies built from the data are gathered (Values), every
// part's records left out and the labels released go into files in work, which the
// workers read, then a pipeline writes each part.
func partsWriter(j Job, parts []string, work string, run Execute) release.PartsWriter {
	return func(ctx context.Context, pj release.PartsJob) error {
		if len(pj.Names) != len(parts) {
			return fault.Internalf("the release read %d parts of the input, the workers are given %d", len(pj.Names), len(parts))
		}
		if pj.Format != schema.FormatCSV {
			return fault.Internalf("a release decided on the driver is written as CSV parts, not %s", pj.Format)
		}
		for i, rows := range pj.LeftOut {
			data := make([]byte, 0, 4*len(rows))
			for _, r := range rows {
				data = binary.LittleEndian.AppendUint32(data, uint32(r))
			}
			if err := writeFile(ctx, leftOutPath(work, i), data); err != nil {
				return err
			}
		}
		released, err := json.Marshal(pj.Labels)
		if err != nil {
			return fault.Internalf("%w", err)
		}
		if err := writeFile(ctx, joinPath(work, "released.json"), released); err != nil {
			return err
		}
		// The hierarchies built from the data (intervals, masks, dates) take the
		// values the workers gather, as the CLI's take the values it read.
		j, err := Values(ctx, j, parts, work, run)
		if err != nil {
			return err
		}
		p, s := beam.NewPipelineWithRoot()
		s = s.Scope("WriteGivenParts")
		beam.ParDo0(s, &writePartFn{Job: j, Levels: pj.Levels, Given: work, Rows: pj.Rows, Parts: parts, Out: pj.Dir, Format: pj.Format, Meta: pj.Meta}, beam.CreateList(s, parts))
		return runMarked(ctx, run, p, j)
	}
}

// leftOutPath is the file in work naming part i's records left out: each a
// little-endian uint32, ascending.
func leftOutPath(work string, i int) string {
	return joinPath(work, fmt.Sprintf("left-out-%05d.bin", i))
}

// readGiven reads, on a worker, what the driver gave for part index: the records it
// leaves out, and per quasi-identifier the labels at its level released.
func readGiven(ctx context.Context, work string, index int) (leftOut []int32, released [][]string, err error) {
	data, err := readFile(ctx, leftOutPath(work, index))
	if err != nil {
		return nil, nil, err
	}
	if len(data)%4 != 0 {
		return nil, nil, fault.Internalf("%s: %d bytes, not records' numbers", leftOutPath(work, index), len(data))
	}
	leftOut = make([]int32, len(data)/4)
	for i := range leftOut {
		leftOut[i] = int32(binary.LittleEndian.Uint32(data[4*i:]))
	}
	if data, err = readFile(ctx, joinPath(work, "released.json")); err != nil {
		return nil, nil, err
	}
	if err := json.Unmarshal(data, &released); err != nil {
		return nil, nil, fault.Internalf("the released labels: %w", err)
	}
	return leftOut, released, nil
}
