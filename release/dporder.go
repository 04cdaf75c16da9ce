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
	rows, err := distinctRows(ctx, r.p, r.dest.path(), spec)
	if err != nil {
		return fault.Internalf("reading the verified release: %w", err)
	}
	dest, err := r.writeOrdered(spec.Columns, rows)
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

// distinctRows reads a release (a file, or a folder of parts; its columns spec's) with
// the verifier's readers: its distinct records, in the order of their values (field by
// field), each with its count.
func distinctRows(ctx context.Context, p *plan, rel string, spec verify.Spec) ([]releasedRow, error) {
	f, err := openChecked(rel, p.outFormat, p.Config.Output.CSV, spec.Columns, releaseTable)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := f.records(ctx, allColumns(f))
	if err != nil {
		return nil, err
	}
	defer recs.Close()
	count := map[string]*releasedRow{}
	for {
		rec, err := recs.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		key := strings.Join(rec, "\x00")
		if count[key] == nil { // the reader's strings live until its next read
			fields := make([]string, len(rec))
			for i, v := range rec {
				fields[i] = strings.Clone(v)
			}
			count[key] = &releasedRow{fields: fields}
		}
		count[key].n++
	}
	rows := make([]releasedRow, 0, len(count))
	for _, row := range count {
		rows = append(rows, *row)
	}
	slices.SortFunc(rows, func(a, b releasedRow) int { return slices.Compare(a.fields, b.fields) })
	return rows, nil
}

// writeOrdered writes rows, in order, each as many times as it counts, into a new
// temporary destination of the release's kind and format: a file, or as many parts as
// the input has, the records spread over them evenly. header is the release's columns.
func (r *run) writeOrdered(header []string, rows []releasedRow) (releaseDest, error) {
	write := func(f *os.File, lo, hi int) error { return r.writeOrderedRows(f, header, rows, lo, hi) }
	if !folderOutput(r.out) {
		tmp, err := publish.Prepare(r.out, nil, func(f *os.File) error { return write(f, 0, r.written) })
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
		if err := tmp.WriteFile(partName(i, parts, r.outFmt), func(f *os.File) error { return write(f, lo, hi) }); err != nil {
			tmp.Discard()
			return nil, fmt.Errorf("output: %w", err)
		}
	}
	return folderDest{tmp}, nil
}

// writeOrderedRows writes records lo … hi−1 of the sequence rows stands for (each row
// as many times as it counts) to f: as CSV (header first when the dialect has one), or
// through the release's sink of its format, its columns (r.outCols) and metadata.
func (r *run) writeOrderedRows(f *os.File, header []string, rows []releasedRow, lo, hi int) error {
	if r.outFmt == schema.FormatCSV {
		if !r.cfg.Output.CSV.Header {
			header = nil
		}
		return writeRows(f, r.cfg.Output.CSV.Separator, header, rows, lo, hi)
	}
	sink, err := table.NewSink(f, r.outFmt, r.cfg.Output.CSV, r.outCols, r.fileMetadata())
	if err != nil {
		return err
	}
	if err := writeKeyed(sink, r.outCols, rows, lo, hi); err != nil {
		return err
	}
	if err := sink.Finish(); err != nil {
		return err
	}
	return f.Sync()
}

// orderedBatch is the records writeKeyed hands its sink at once.
const orderedBatch = 1 << 16

// writeKeyed writes records lo … hi−1 of the sequence rows stands for to sink, a
// preparer, every column by its index into its dictionary (cols[j].Dict: every
// released column is a quasi-identifier, written with one).
func writeKeyed(sink table.Sink, cols []table.OutColumn, rows []releasedRow, lo, hi int) error {
	prep, ok := sink.(table.Preparer)
	if !ok {
		return fmt.Errorf("a %T writes no dictionaries", sink)
	}
	index := make([]map[string]int32, len(cols))
	for j, c := range cols {
		if c.Dict == nil {
			return fmt.Errorf("column %q has no dictionary", c.Name)
		}
		index[j] = make(map[string]int32, len(c.Dict))
		for k, v := range c.Dict {
			index[j][v] = int32(k)
		}
	}
	keys := make([][]int32, len(cols))
	empty := make([]string, orderedBatch*len(cols)) // the rows' text: none, every column keyed
	flush := func() error {
		n := len(keys[0])
		if n == 0 {
			return nil
		}
		x, err := prep.Prepare(&table.Rows{Fields: empty[:n*len(cols)], Keys: keys, N: n})
		if err != nil {
			return err
		}
		if err := prep.WritePrepared(x); err != nil {
			return err
		}
		for j := range keys {
			keys[j] = keys[j][:0]
		}
		return nil
	}
	at := 0
	for _, row := range rows {
		from, to := max(at, lo), min(at+row.n, hi)
		for range max(to-from, 0) {
			for j, v := range row.fields {
				k, ok := index[j][v]
				if !ok {
					return fmt.Errorf("column %q: a released value not in its dictionary", cols[j].Name)
				}
				keys[j] = append(keys[j], k)
			}
			if len(keys[0]) == orderedBatch {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		at += row.n
	}
	return flush()
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
