package release

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"sanitizer/fault"
	"sanitizer/publish"
	"sanitizer/schema"
	"sanitizer/table"
	"sanitizer/verify"
)

// checkDPFormat refuses a SafePub release in a format other than CSV: its records are
// put in the order of their values once verified (dpOrdered), which this version does
// for CSV only; a Parquet or Arrow release would keep the input's order, which tells
// where a record was among the others.
func checkDPFormat(cfg *schema.Config, outFmt schema.Format) error {
	if cfg.Privacy.DifferentialPrivacy == nil || outFmt == schema.FormatCSV {
		return nil
	}
	return cfg.Errorf("output.format", "%s: a release under privacy.differential-privacy is written as CSV in this version, its records in the order of their values (in the input's order they would tell where a record stood among the others)", outFmt)
}

// releasedRow is one distinct record of a release and how many times it is there.
type releasedRow struct {
	fields []string
	n      int
}

// dpOrdered rewrites a SafePub release once it is verified (spec: the verifier's)
// with its records in the order of their values, each distinct record as many times
// as it was released, so that their order says nothing of the input's: every released
// column is a quasi-identifier (checkDP), so the records of a class are alike and the
// release is its classes and their sizes. A release in parts keeps its number of
// parts, the records spread over them evenly in that order. The rewritten release is
// read again by the verifier's readers: the same classes of the same sizes, in order.
func (r *run) dpOrdered(ctx context.Context, spec verify.Spec) error {
	if r.dp == nil {
		return nil
	}
	before, err := releasedClasses(ctx, r.p, r.dest.path(), spec)
	if err != nil {
		return err
	}
	header, rows, err := distinctRows(r.dest.path(), r.cfg.Output.CSV)
	if err != nil {
		return fault.Internalf("reading the verified release: %w", err)
	}
	dest, err := r.writeOrdered(header, rows)
	if err != nil {
		return err
	}
	if err := checkOrdered(ctx, r.p, dest.path(), spec, before); err != nil {
		dest.discard()
		return err
	}
	r.dest.discard()
	r.dest = dest
	return nil
}

// distinctRows reads a CSV release (a file, or a folder of parts) written in dialect:
// its header (nil without one) and its distinct records, in the order of their values
// (field by field), each with its count.
func distinctRows(path string, dialect schema.CSV) ([]string, []releasedRow, error) {
	files := []string{path}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		var err error
		if files, err = table.PartPaths(path + string(os.PathSeparator)); err != nil {
			return nil, nil, err
		}
	}
	count := map[string]*releasedRow{}
	var header []string
	for _, name := range files {
		h, err := countRows(name, dialect, count)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		header = h
	}
	rows := make([]releasedRow, 0, len(count))
	for _, row := range count {
		rows = append(rows, *row)
	}
	slices.SortFunc(rows, func(a, b releasedRow) int { return slices.Compare(a.fields, b.fields) })
	return header, rows, nil
}

// countRows adds the records of one CSV file to count, by their fields, and returns
// its header (nil without one).
func countRows(name string, dialect schema.CSV, count map[string]*releasedRow) ([]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.Comma = dialect.Separator
	var header []string
	if dialect.Header {
		if header, err = cr.Read(); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
	}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return header, nil
		}
		if err != nil {
			return nil, err
		}
		key := strings.Join(rec, "\x00")
		if count[key] == nil {
			count[key] = &releasedRow{fields: rec}
		}
		count[key].n++
	}
}

// writeOrdered writes rows, in order, each as many times as it counts, into a new
// temporary destination of the release's kind: a file, or as many parts as the input
// has, the records spread over them evenly.
func (r *run) writeOrdered(header []string, rows []releasedRow) (releaseDest, error) {
	sep := r.cfg.Output.CSV.Separator
	if !folderOutput(r.out) {
		tmp, err := publish.Prepare(r.out, nil, func(f *os.File) error { return writeRows(f, sep, header, rows, 0, r.written) })
		if err != nil {
			return nil, fmt.Errorf("output: %w", err)
		}
		return fileDest{tmp}, nil
	}
	tmp, err := publish.CreateFolder(r.out)
	if err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	parts := len(table.Split(r.src))
	for i := range parts {
		lo, hi := i*r.written/parts, (i+1)*r.written/parts
		if err := tmp.WriteFile(partName(i, parts, schema.FormatCSV), func(f *os.File) error { return writeRows(f, sep, header, rows, lo, hi) }); err != nil {
			tmp.Discard()
			return nil, fmt.Errorf("output: %w", err)
		}
	}
	return folderDest{tmp}, nil
}

// writeRows writes the header (when there is one) and records lo … hi−1 of the
// sequence rows stands for (each row as many times as it counts) to f.
func writeRows(f *os.File, sep rune, header []string, rows []releasedRow, lo, hi int) error {
	w := csv.NewWriter(f)
	w.Comma = sep
	if header != nil {
		if err := w.Write(header); err != nil {
			return err
		}
	}
	at := 0
	for _, row := range rows {
		from, to := max(at, lo), min(at+row.n, hi)
		for range max(to-from, 0) {
			if err := w.Write(row.fields); err != nil {
				return err
			}
		}
		at += row.n
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return f.Sync()
}

// checkOrdered reads the rewritten release rel with the verifier's readers: its
// classes must be before's, their sizes too, and its records in the order of their
// values.
func checkOrdered(ctx context.Context, p *plan, rel string, spec verify.Spec, before *verify.Classes) error {
	after, err := releasedClasses(ctx, p, rel, spec)
	if err != nil {
		return err
	}
	if !after.Equal(before) {
		return fault.Internalf("the release put in the order of its values holds other classes than the verified one; nothing published")
	}
	if err := inValueOrder(ctx, p, rel, spec); err != nil {
		return fault.Internalf("the release put in the order of its values: %w; nothing published", err)
	}
	return nil
}

// inValueOrder reads the release rel with the verifier's readers and reports a
// *verify.Violation at the first record that comes before the one above it in the
// order of their values (field by field).
func inValueOrder(ctx context.Context, p *plan, rel string, spec verify.Spec) error {
	f, err := openChecked(rel, p.outFormat, p.Config.Output.CSV, spec.Columns, releaseTable)
	if err != nil {
		return err
	}
	defer f.Close()
	recs, err := f.records(ctx, allColumns(f))
	if err != nil {
		return err
	}
	defer recs.Close()
	var last []string
	for n := 1; ; n++ {
		rec, err := recs.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if last != nil && slices.Compare(rec, last) < 0 {
			return &verify.Violation{Msg: fmt.Sprintf("release record %d comes before the one above it: the records of a differentially private release are in the order of their values", n)}
		}
		last = last[:0]
		for _, v := range rec { // the reader's strings live until its next read
			last = append(last, strings.Clone(v))
		}
	}
}
