package stage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"sanitizer/fault"
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
// node's level, the privacy unit released as a pseudonym as its pseudonym (whole
// persons suppressed as the recoding says, with multirelational k-anonymity), the
// other kept columns as read, in the release's format with the
// release's metadata (Meta), through the CLI's sinks (package table). A class is
// suppressed as the recoding of the merged class table at the node says (the same for
// every part; generalize.Cut.Recoding, which takes a record's leaves).
type writePartFn struct {
	Job    Job
	Levels []int
	// Classes is the file holding the merged class table rolled up to the node
	// (nodeTables), Population the population's ("": no research subset).
	Classes, Population string
	Parts               []string      // every part, in order: a part's release is named by its index
	Out                 string        // the folder the release's parts are written to
	Format              schema.Format // the release's format: csv, parquet, arrow or arrows
	// Meta is the release's key-value metadata (release.Engine.ReleaseMetadata), written into
	// every Parquet or Arrow part alike.
	Meta map[string]string
	// Given is, when the driver decided which records each part leaves out (a series
	// night, ReleaseSeries), the folder of the files naming them and the labels
	// released (readGiven), and Rows the records of every part as the driver read
	// them; the class tables are then not read ("": the class tables decide).
	Given string
	Rows  []int
}

// ProcessElement is process, its error's kind marked for the driver (Job.workerErr).
func (f *writePartFn) ProcessElement(ctx context.Context, part string) error {
	return f.Job.workerErr(ctx, f.process(ctx, part))
}

func (f *writePartFn) process(ctx context.Context, part string) error {
	cfg, like, in, err := f.Job.table()
	if err != nil {
		return err
	}
	index := slices.Index(f.Parts, part)
	if index < 0 {
		return fault.Internalf("%s is not a part of the input", part)
	}
	w := partWriter{hier: in.hier, cfg: cfg, like: like, levels: f.Levels, format: f.Format, meta: f.Meta, rows: -1}
	if f.Given != "" {
		if w.leftOut, w.labels, err = readGiven(ctx, f.Given, index); err != nil {
			return err
		}
		w.rows = f.Rows[index]
	} else if err := f.recoding(ctx, &w, in); err != nil {
		return err
	}
	if err := w.linked(ctx, f.Job); err != nil {
		return err
	}
	name := release.Engine{}.PartName(index, len(f.Parts), f.Format)
	if !isObject(f.Out) {
		return w.write(ctx, part, filepath.Join(f.Out, name))
	}
	// A release in a store: written here, then copied there whole.
	tmp, err := workerTemp(ctx)
	if err != nil {
		return err
	}
	defer tmp.Discard()
	local := filepath.Join(tmp.Path, name)
	if err := w.write(ctx, part, local); err != nil {
		return err
	}
	return copyFile(ctx, local, joinPath(f.Out, name))
}

// recoding gives w the recoding at the node of the merged class table (and the
// population's) in the files f names: the classes and persons suppressed, and the
// labels released.
func (f *writePartFn) recoding(ctx context.Context, w *partWriter, in *input) error {
	like := w.like
	node, err := generalize.NewCut(like.Columns, f.Levels)
	if err != nil {
		return fault.Internalf("%w", err)
	}
	merged, err := readMerged(ctx, f.Classes, "class table at the node", func(b []byte) (*generalize.ClassTable, error) { return node.UnmarshalClasses(b, like) })
	if err != nil {
		return err
	}
	var pop *generalize.ClassTable
	if f.Population != "" {
		popLike := populationLike(like)
		if pop, err = readMerged(ctx, f.Population, "population's class table at the node", func(b []byte) (*generalize.ClassTable, error) { return node.UnmarshalClasses(b, popLike) }); err != nil {
			return err
		}
	}
	opt, err := options(w.cfg, like, in, merged, pop)
	if err != nil {
		return err
	}
	w.rec, err = node.Recoding(merged, f.Levels, opt)
	return err
}

// names is the quasi-identifiers' names of t, in its order.
func names(t *generalize.Table) []string {
	out := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		out[i] = c.Name
	}
	return out
}

// partWriter writes the release of one part.
type partWriter struct {
	hier   *job.HierFiles
	cfg    *schema.Config
	like   *generalize.Table
	rec    *generalize.Recoding
	levels []int
	format schema.Format
	meta   map[string]string
	// With the privacy unit released as a pseudonym (linked): every id's pseudonym
	// under the run's key, and every id's code in the numbering of the persons, which
	// the recoding's suppressed persons are named by (nil: no pseudonym).
	pseudonyms *release.Pseudonymizer
	persons    map[string]int32
	// With the records left out given by the driver (writePartFn.Given; rec nil): the
	// part's records left out, ascending, the labels at each quasi-identifier's level
	// released, and the part's records as the driver read them (−1: not given).
	leftOut []int32
	labels  [][]string
	rows    int
}

// linked readies w, when the configuration releases the privacy unit as a pseudonym,
// for writing it: the key read from the file job names (Job.KeyFile, as the CLI reads
// a key file: never from the pipeline) and the numbering of the persons, by which
// the recoding says which persons multirelational k-anonymity suppresses.
func (w *partWriter) linked(ctx context.Context, job Job) error {
	if !linkable(w.cfg) {
		return nil
	}
	if w.rec == nil { // the driver left out the persons suppressed: the pseudonyms alone
		if job.KeyFile == "" {
			return fault.Internalf("a pseudonym of the privacy unit without its key's file")
		}
		var err error
		w.pseudonyms, err = (release.Engine{Config: w.cfg}).Pseudonymizer(job.KeyFile)
		return err
	}
	if job.KeyFile == "" || job.PersonsFile == "" {
		return fault.Internalf("a pseudonym of the privacy unit without its key's file or the numbering of the persons")
	}
	var err error
	if w.pseudonyms, err = (release.Engine{Config: w.cfg}).Pseudonymizer(job.KeyFile); err != nil {
		return err
	}
	w.persons, err = job.personCodes(ctx)
	return err
}

// dictionaries gives every quasi-identifier column of cols (the release's columns, in
// kept order; quasiAt[j] the quasi-identifier of column j, or −1) the CLI's dictionary
// of its labels at the node's level: those some published class holds
// (release.Engine.ReleasedCodes), in code order, so that no label only suppressed records
// have is written. It returns, per quasi-identifier, every leaf's place in its
// column's dictionary (−1: not released).
func (w *partWriter) dictionaries(cols []table.OutColumn, quasiAt []int) [][]int32 {
	var released [][]bool
	if w.rec != nil {
		released = release.Engine{}.ReleasedCodes(w.like.Columns, w.levels, w.rec.Covers)
	} else {
		released = w.givenCodes()
	}
	keyOf := make([][]int32, len(w.like.Columns))
	for j, qi := range quasiAt {
		if qi < 0 {
			continue
		}
		h, l := w.like.Columns[qi].Hierarchy, w.levels[qi]
		at := make([]int32, h.Size(l))
		labels := []string{}
		for code := range at {
			at[code] = -1
			if released[qi][code] {
				at[code] = int32(len(labels))
				labels = append(labels, h.Value(l, int32(code)))
			}
		}
		cols[j].Dict = labels
		keyOf[qi] = make([]int32, h.Leaves())
		for leaf := range keyOf[qi] {
			keyOf[qi][leaf] = at[h.Code(l, int32(leaf))]
		}
	}
	return keyOf
}

// givenCodes is, per quasi-identifier, which codes at its level hold a label the
// driver released (partWriter.labels).
func (w *partWriter) givenCodes() [][]bool {
	out := make([][]bool, len(w.like.Columns))
	for q, col := range w.like.Columns {
		h, l := col.Hierarchy, w.levels[q]
		out[q] = make([]bool, h.Size(l))
		if q >= len(w.labels) {
			continue // nothing released: every record of the part is left out, or the write fails
		}
		given := make(map[string]bool, len(w.labels[q]))
		for _, label := range w.labels[q] {
			given[label] = true
		}
		for code := range out[q] {
			out[q][code] = given[h.Value(l, int32(code))]
		}
	}
	return out
}

// write writes the release of part to out, a new file: the records batch by batch
// through the format's sink, a quasi-identifier as its key into its dictionary, the
// other kept columns as text (the sink types them as the CLI's release does: the
// input's type, an insensitive null a null). A CSV input's typed value that is not
// one, and a released sensitive value its hierarchy file does not list, are bad input
// naming where they are and the column, never the value, as in the CLI.
func (w *partWriter) write(ctx context.Context, part, out string) (err error) {
	file, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := file.Close(); err == nil {
			err = cerr
		}
	}()
	pw := &partWrite{w: w, part: part, out: out, file: file, leaves: make([]int32, len(w.like.Columns)), unitAt: -1}
	if err := eachRecordNulls(ctx, w.cfg, w.hier, part, pw.start, pw.add); err != nil {
		return err
	}
	if w.rows >= 0 && (pw.read != w.rows || pw.next != len(w.leftOut)) { // not the part the driver read
		return table.ChangedError(part)
	}
	if err := pw.flush(); err != nil {
		return err
	}
	if err := pw.sink.Finish(); err != nil {
		return fmt.Errorf("writing release part %s: %w", out, err)
	}
	return nil
}

// partWrite is the writing of one part's release (partWriter.write): what start
// learns of the part's columns, and the batch of records add gathers for flush.
type partWrite struct {
	w         *partWriter
	part, out string
	file      *os.File
	quasiAt   []int // per kept column: its quasi-identifier, or −1
	keyOf     [][]int32
	listed    []*generalize.Hierarchy // per kept column: a sensitive column's hierarchy file, which must list its values
	unitAt    int                     // the kept column of the privacy unit released as a pseudonym (−1: none)
	pseudonym []byte                  // the current record's
	sink      table.Sink
	prep      table.Preparer
	read      int // records read, when the driver gave those left out
	next      int // the next of partWriter.leftOut
	rows      *table.Rows
	hasNull   bool    // some field of rows is null
	leaves    []int32 // the current record's, per quasi-identifier
}

// start takes the part's plan: the release's columns, their dictionaries, the
// hierarchy files sensitive columns must be listed in, and the sink; it returns the
// columns to read (the kept ones, the quasi-identifiers, a research subset's flag
// last).
func (pw *partWrite) start(p *job.Plan) ([]int, error) {
	w, cfg := pw.w, pw.w.cfg
	for _, pos := range p.Kept {
		pw.quasiAt = append(pw.quasiAt, slices.Index(names(w.like), p.Header[pos]))
	}
	if w.pseudonyms != nil {
		if pw.unitAt = slices.Index(p.Kept, p.PseudonymAt()); pw.unitAt < 0 {
			return nil, fault.Internalf("%s: the privacy unit's column is not kept for its pseudonym", pw.part)
		}
	}
	cols := p.OutColumns()
	pw.keyOf = w.dictionaries(cols, pw.quasiAt)
	pw.listed = make([]*generalize.Hierarchy, len(p.Kept))
	for j, pos := range p.Kept {
		if c := p.Conf[pos]; c.Role == schema.Sensitive && c.Hierarchy != nil && c.Hierarchy.File != "" {
			h, err := p.Hier.Hierarchy(c.Hierarchy.File)
			if err != nil {
				return nil, fmt.Errorf("columns.%s.hierarchy.file: %w", c.Name, err)
			}
			pw.listed[j] = h
		}
	}
	var err error
	if pw.sink, err = table.NewSink(pw.file, w.format, cfg.Output.CSV, cols, w.meta); err != nil {
		return nil, fmt.Errorf("writing release part %s: %w", pw.out, err)
	}
	var ok bool
	if pw.prep, ok = pw.sink.(table.Preparer); !ok {
		return nil, fault.Internalf("the %s sink does not take keys", w.format)
	}
	read := append(slices.Clone(p.Kept), p.Quasi...)
	if sub := cfg.Privacy.Subset; sub != nil { // its flag last
		pos, err := positions(p, pw.part, []string{sub.Column})
		if err != nil {
			return nil, err
		}
		read = append(read, pos[0])
	}
	return read, nil
}

// add adds a record (fields, nulls: the columns start asked for; at names it) to the
// batch unless it is suppressed or outside a research subset, and writes the batch
// when it is full.
func (pw *partWrite) add(p *job.Plan, at func() string, fields []string, nulls []bool) error {
	cfg, like := pw.w.cfg, pw.w.like
	if cfg.Privacy.Subset != nil { // outside the subset: not released
		if in, err := inSubset(cfg, fields[len(fields)-1], at); !in || err != nil {
			return err
		}
	}
	width := len(p.Kept)
	for i := range pw.leaves {
		var err error
		if pw.leaves[i], err = leafOf(like.Columns[i], fields[width+i], at); err != nil {
			return err
		}
	}
	if pw.w.rec == nil {
		if pw.givenOut() {
			return nil
		}
	} else if pw.w.rec.IsSuppressed(pw.leaves) {
		return nil
	}
	if pw.unitAt >= 0 {
		if out, err := pw.personOut(at, fields[pw.unitAt], nulls[pw.unitAt]); out || err != nil {
			return err
		}
	}
	if pw.rows == nil {
		pw.rows = &table.Rows{Fields: make([]string, 0, table.BatchRows*width), Nulls: make([]bool, 0, table.BatchRows*width), Keys: make([][]int32, width)}
		for j, qi := range pw.quasiAt {
			if qi >= 0 {
				pw.rows.Keys[j] = make([]int32, 0, table.BatchRows)
			}
		}
	}
	for j := range pw.quasiAt {
		if err := pw.field(p, j, at, fields[j], nulls[j]); err != nil {
			return err
		}
	}
	if pw.rows.N++; pw.rows.N == table.BatchRows {
		return pw.flush()
	}
	return nil
}

// givenOut counts the record just read and reports whether the driver left it out
// (partWriter.leftOut).
func (pw *partWrite) givenOut() bool {
	row, lo := pw.read, pw.w.leftOut
	pw.read++
	if pw.next < len(lo) && int(lo[pw.next]) == row {
		pw.next++
		return true
	}
	return false
}

// personOut reports whether the person of a record of a published class, whose id
// is id, is suppressed by multirelational k-anonymity (all of their records), and
// takes the id's pseudonym for the record when not. A record without an id is the
// CLI's error; an id the numbering of the persons does not hold means that the part
// changed since it was numbered.
func (pw *partWrite) personOut(at func() string, id string, null bool) (bool, error) {
	if null || id == "" {
		return true, unitMissing(pw.w.cfg, at)
	}
	if pw.w.rec == nil { // the driver left out the persons suppressed
		pw.pseudonym = pw.w.pseudonyms.Append(pw.pseudonym[:0], id)
		return false, nil
	}
	code, ok := pw.w.persons[id]
	if !ok {
		return true, table.ChangedError(pw.part)
	}
	if pw.w.rec.PersonSuppressed(code) {
		return true, nil
	}
	pw.pseudonym = pw.w.pseudonyms.Append(pw.pseudonym[:0], id)
	return false, nil
}

// field adds kept column j of a record (v, null) to the batch: a quasi-identifier's
// key, or the value once checked as the CLI checks it.
func (pw *partWrite) field(p *job.Plan, j int, at func() string, v string, null bool) error {
	rows := pw.rows
	if qi := pw.quasiAt[j]; qi >= 0 {
		key := pw.keyOf[qi][pw.leaves[qi]]
		if key < 0 { // a record of no published class: the recoding, or the driver, left it out
			return fault.Internalf("%s: column %q: a record written whose label no published class holds", at(), p.Header[p.Kept[j]])
		}
		rows.Keys[j] = append(rows.Keys[j], key)
		rows.Fields, rows.Nulls = append(rows.Fields, ""), append(rows.Nulls, false)
		return nil
	}
	if j == pw.unitAt { // the id's pseudonym (personOut), never the id
		rows.Fields, rows.Nulls = append(rows.Fields, string(pw.pseudonym)), append(rows.Nulls, false)
		return nil
	}
	pos := p.Kept[j]
	if !null && p.TextIn {
		if err := table.CheckType(p.Conf[pos], v); err != nil {
			return fault.BadInput("%s: column %q: %w", at(), p.Header[pos], err)
		}
	}
	if h := pw.listed[j]; h != nil {
		if _, ok := h.Leaf(v); !ok {
			return fault.BadInput("%s: column %q: value not listed in hierarchy %s", at(), p.Header[pos], h.Source())
		}
	}
	rows.Fields = append(rows.Fields, strings.Clone(v)) // not the batch's block
	rows.Nulls = append(rows.Nulls, null)
	pw.hasNull = pw.hasNull || null
	return nil
}

// flush writes the batch gathered.
func (pw *partWrite) flush() error {
	if pw.rows == nil || pw.rows.N == 0 {
		return nil
	}
	if !pw.hasNull {
		pw.rows.Nulls = nil
	}
	x, err := pw.prep.Prepare(pw.rows)
	if err == nil {
		err = pw.prep.WritePrepared(x)
	}
	if err != nil {
		return fmt.Errorf("writing release part %s: %w", pw.out, err)
	}
	pw.rows, pw.hasNull = nil, false
	return nil
}

// nodeTables writes into folder work, for the workers, the merged class table rolled up
// to the chosen node (generalize.Cut at the node's levels: one class per class of the
// node, all the recoding of a part reads, and no more than the merged table holds) and,
// with a research subset, the population's; it returns their paths (population "":
// none). A worker reads them from a folder it shares with the driver, rather than from
// the pipeline's description, which every worker is sent whole.
func nodeTables(ctx context.Context, searched *Searched, work string) (classes, population string, err error) {
	node, err := generalize.NewCut(searched.Classes.Columns(), searched.Result.Levels)
	if err != nil {
		return "", "", fault.Internalf("%w", err)
	}
	write := func(ct *generalize.ClassTable, name string) (string, error) {
		at, err := node.Classes(ct)
		if err != nil {
			return "", fault.Internalf("%w", err)
		}
		data, err := node.MarshalClasses(at)
		if err != nil {
			return "", fault.Internalf("%w", err)
		}
		path := joinPath(work, name)
		return path, writeFile(ctx, path, data)
	}
	if classes, err = write(searched.Classes, "node-classes.bin"); err != nil || searched.Population == nil {
		return classes, "", err
	}
	population, err = write(searched.Population, "node-population.bin")
	return classes, population, err
}

// WriteParts adds to the pipeline the recoding of every part into its release part in
// folder out, at levels with the suppression of the class tables at the node in the
// files classes and population (nodeTables), in format (csv, parquet, arrow or arrows)
// with the release's metadata meta (release.Engine.ReleaseMetadata) in every Parquet or Arrow
// part.
func WriteParts(s beam.Scope, job Job, levels []int, classes, population string, parts []string, out string, format schema.Format, meta map[string]string) {
	s = s.Scope("WriteParts")
	beam.ParDo0(s, &writePartFn{Job: job, Levels: levels, Classes: classes, Population: population, Parts: parts, Out: out, Format: format, Meta: meta}, beam.CreateList(s, parts))
}
