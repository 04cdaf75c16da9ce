package release

import (
	"fmt"

	"sanitizer/internal/build"
	"sanitizer/publish"
	"sanitizer/sample"
	"sanitizer/schema"
	"sanitizer/table"
)

// hospitalTypes are the value types of sample.HospitalColumns, in order.
var hospitalTypes = []schema.Type{schema.String, schema.String, schema.Integer, schema.String, schema.String, schema.Date, schema.String, schema.Integer, schema.String, schema.String}

// Generate writes the synthetic hospital sample of rows records, seeded by seed, to
// path in the given format ("" = the extension's), atomically: the file appears
// complete or not at all, and an existing file at path is replaced only with
// opt.Force. Records are generated and written batch by batch, so memory does not
// grow with rows; the same seed gives the same table. Of opt, only Force and AtStage
// are used.
func Generate(path, format string, rows int, seed uint64, opt Options) (err error) {
	if rows < 0 {
		return schema.BadInput("--rows: must not be negative")
	}
	switch format {
	case "", "csv", "parquet", "arrow", "arrows":
	default:
		return schema.BadInput("--format: %q is not one of csv, parquet, arrow, arrows", format)
	}
	if format, err = table.CheckFormat("--format", path, schema.IO{Format: format}); err != nil {
		return err
	}
	cols := make([]table.OutColumn, len(sample.HospitalColumns))
	for i, name := range sample.HospitalColumns {
		cols[i] = table.OutColumn{Name: name, Type: hospitalTypes[i]}
	}
	if err := publish.CheckFile("--out", path, opt.Force); err != nil {
		return err
	}
	tmp, err := publish.Create(path)
	if err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	defer tmp.Discard() // nothing, once published
	meta := map[string]string{"sanitize.tool": "sanitize", "sanitize.version": build.Version, "sanitize.generator": "hospital", "sanitize.seed": fmt.Sprint(seed)}
	out, err := table.NewSink(tmp.File, format, schema.CSV{Separator: ',', Header: true}, cols, meta)
	if err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	g := sample.NewHospitalGen(seed)
	width := len(cols)
	fields := make([]string, 0, table.BatchRows*width)
	row := make([]string, width)
	for done := 0; done < rows; {
		n := min(table.BatchRows, rows-done)
		fields = fields[:0]
		for range n {
			row = g.Next(row)
			fields = append(fields, row...)
		}
		if err := out.Write(fields, nil, n); err != nil {
			return fmt.Errorf("gen: %w", err)
		}
		if done == 0 {
			opt.at(StageWrite)
		}
		done += n
	}
	if err := out.Finish(); err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	opt.at(StagePublish)
	if err := tmp.Publish(opt.Force); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	return nil
}
