// Package gen writes the synthetic tables the gen command makes (the seeded hospital
// sample of package sample) as CSV, Parquet or Arrow files, atomically.
//
// It may import schema, fault, sample, table, publish, job and internal/build
// (docs/design.md's package table); nothing of the search, the verifier or the DP run.
package gen

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"

	"sanitizer/fault"
	"sanitizer/internal/build"
	"sanitizer/job"
	"sanitizer/publish"
	"sanitizer/sample"
	"sanitizer/schema"
	"sanitizer/table"
)

// HospitalColumns are the hospital sample's columns with their value types.
func HospitalColumns() []table.OutColumn {
	cols := make([]table.OutColumn, len(sample.HospitalColumns))
	for i, name := range sample.HospitalColumns {
		cols[i] = table.OutColumn{Name: name, Type: hospitalTypes[i]}
	}
	return cols
}

// hospitalTypes are the value types of sample.HospitalColumns, in order.
var hospitalTypes = []schema.Type{schema.String, schema.String, schema.Integer, schema.String, schema.String, schema.Date, schema.String, schema.Integer, schema.String, schema.String}

// MaxRows is the most records Hospital writes: the sample's patient ids stay one
// patient's each up to there (10,000,000 new patients), and the file stays under a
// gigabyte of CSV.
const MaxRows = 10_000_000

// Hospital is HospitalContext that nothing cancels.
func Hospital(path, format string, rows int, seed uint64, opt job.Options) error {
	return HospitalContext(context.Background(), path, format, rows, seed, opt)
}

// HospitalContext writes the synthetic hospital sample of rows records (1 to MaxRows),
// seeded by seed, to path in the given format ("" = the extension's), atomically: the
// file appears complete or not at all, and an existing file at path is replaced only
// with opt.Force. Records are generated and written batch by batch, so memory does not
// grow with rows; the same seed gives the same table. A cancelled ctx stops the run
// between batches and before it publishes, with ctx's error and nothing left. Of opt,
// only Force and AtStage are used.
func HospitalContext(ctx context.Context, path, format string, rows int, seed uint64, opt job.Options) (err error) {
	if rows < 1 || rows > MaxRows {
		return fault.BadInput("--rows: %d is not between 1 and %d", rows, MaxRows)
	}
	given, ok := formatNamed(format)
	if !ok {
		return fault.BadInput("--format: %q is not one of csv, parquet, arrow, arrows", format)
	}
	chosen, err := table.CheckFormat("--format", path, schema.IO{Format: given})
	if err != nil {
		return err
	}
	cols := HospitalColumns()
	if err := publish.CheckFile("--out", path, opt.Force); err != nil {
		return err
	}
	meta := map[string]string{"sanitize.tool": "sanitize", "sanitize.version": build.Version, "sanitize.generator": "hospital", "sanitize.seed": fmt.Sprint(seed)}
	tmp, err := publish.Prepare(path, nil, func(f *os.File) error {
		return writeHospital(ctx, f, chosen, cols, meta, rows, seed, opt)
	})
	if err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	defer tmp.Discard() // nothing, once published
	opt.At(job.StagePublish)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	if err := tmp.Publish(opt.Force); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	return nil
}

// formatNamed is the format the --format flag names (one of schema.Formats, by its
// spelling), "" for none; false when it names none of them.
func formatNamed(flag string) (schema.Format, bool) {
	if flag == "" {
		return "", true
	}
	i := slices.IndexFunc(schema.Formats, func(f schema.Format) bool { return f.String() == flag })
	if i < 0 {
		return "", false
	}
	return schema.Formats[i], true
}

// writeHospital writes rows records of the hospital sample, seeded by seed, as a table
// of the given format and columns to w.
func writeHospital(ctx context.Context, w io.Writer, format schema.Format, cols []table.OutColumn, meta map[string]string, rows int, seed uint64, opt job.Options) error {
	out, err := table.NewSink(w, format, schema.CSV{Separator: ',', Header: true}, cols, meta)
	if err != nil {
		return err
	}
	g := sample.NewHospitalGen(seed)
	width := len(cols)
	fields := make([]string, 0, table.BatchRows*width)
	row := make([]string, width)
	for done := 0; done < rows; {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(table.BatchRows, rows-done)
		fields = fields[:0]
		for range n {
			row = g.Next(row)
			fields = append(fields, row...)
		}
		if err := out.Write(fields, nil, n); err != nil {
			return err
		}
		if done == 0 {
			opt.At(job.StageWrite)
		}
		done += n
	}
	return out.Finish()
}
