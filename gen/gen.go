// Package gen writes the synthetic tables the gen command makes (package sample's seeded
// hospital table, and its admissions table of several rows per patient) as CSV, Parquet
// or Arrow files, atomically.
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
	"strings"

	"sanitizer/fault"
	"sanitizer/internal/build"
	"sanitizer/job"
	"sanitizer/publish"
	"sanitizer/sample"
	"sanitizer/schema"
	"sanitizer/table"
)

// Table is a synthetic table gen writes: the gen command's --table.
type Table string

// The tables gen writes.
const (
	TableHospital   Table = "hospital"   // one row per admission, few patients readmitted (the default)
	TableAdmissions Table = "admissions" // 1 to sample.MaxAdmissions rows per patient, the patient's rows together
)

// Tables are the values of --table.
var Tables = []Table{TableHospital, TableAdmissions}

// String is the table's spelling on the command line.
func (t Table) String() string { return string(t) }

// ParseTable is the table the --table flag names; bad input naming the flag when it
// names none of Tables.
func ParseTable(flag string) (Table, error) {
	i := slices.IndexFunc(Tables, func(t Table) bool { return t.String() == flag })
	if i < 0 {
		return "", fault.BadInput("--table: %q is not one of %s", flag, tableList)
	}
	return Tables[i], nil
}

// tableList is Tables' spellings for messages: "hospital, admissions".
var tableList = func() string {
	names := make([]string, len(Tables))
	for i, t := range Tables {
		names[i] = t.String()
	}
	return strings.Join(names, ", ")
}()

// HospitalColumns are the hospital sample's columns with their value types.
func HospitalColumns() []table.OutColumn {
	return columns(sample.HospitalColumns)
}

// Columns are the columns of table t with their value types.
func Columns(t Table) []table.OutColumn {
	if t == TableAdmissions {
		return columns(sample.AdmissionsColumns)
	}
	return HospitalColumns()
}

// columns are names with hospitalTypes: the two tables' columns are alike.
func columns(names []string) []table.OutColumn {
	cols := make([]table.OutColumn, len(names))
	for i, name := range names {
		cols[i] = table.OutColumn{Name: name, Type: hospitalTypes[i]}
	}
	return cols
}

// hospitalTypes are the value types of sample.HospitalColumns (and of
// sample.AdmissionsColumns), in order.
var hospitalTypes = []schema.Type{schema.String, schema.String, schema.Integer, schema.String, schema.String, schema.Date, schema.String, schema.Integer, schema.String, schema.String}

// MaxRows is the most records a table holds: the sample's patient ids stay one
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
func HospitalContext(ctx context.Context, path, format string, rows int, seed uint64, opt job.Options) error {
	return TableContext(ctx, TableHospital, path, format, rows, seed, opt)
}

// TableContext is HospitalContext for table t: it writes rows records of t (for
// TableAdmissions, rows admissions: the last patient's admissions are cut at rows).
func TableContext(ctx context.Context, t Table, path, format string, rows int, seed uint64, opt job.Options) error {
	if !slices.Contains(Tables, t) {
		return fault.Internalf("gen: no table %q", t)
	}
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
	cols := Columns(t)
	if err := publish.CheckFile("--out", path, opt.Force); err != nil {
		return err
	}
	meta := map[string]string{"sanitize.tool": "sanitize", "sanitize.version": build.Version, "sanitize.generator": t.String(), "sanitize.seed": fmt.Sprint(seed)}
	tmp, err := publish.Prepare(path, nil, func(f *os.File) error {
		return writeTable(ctx, f, chosen, cols, meta, rows, newRows(t, seed), opt)
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

// rowSource gives a generated table's records one at a time (sample's generators).
type rowSource interface {
	// Next fills row with the next record's fields and returns it.
	Next(row []string) []string
}

// newRows is table t's generator, seeded by seed.
func newRows(t Table, seed uint64) rowSource {
	if t == TableAdmissions {
		return sample.NewAdmissionsGen(seed)
	}
	return sample.NewHospitalGen(seed)
}

// writeTable writes rows records of g as a table of the given format and columns to w.
func writeTable(ctx context.Context, w io.Writer, format schema.Format, cols []table.OutColumn, meta map[string]string, rows int, g rowSource, opt job.Options) error {
	out, err := table.NewSink(w, format, schema.CSV{Separator: ',', Header: true}, cols, meta)
	if err != nil {
		return err
	}
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
