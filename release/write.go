package release

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"golang.org/x/sync/errgroup"

	"sanitizer/fault"
	"sanitizer/generalize"
	"sanitizer/internal/safe"
	"sanitizer/schema"
	"sanitizer/table"
)

// recoder turns input records into release records. Pass 2 reads the kept columns
// that are not quasi-identifiers only (stream): a quasi-identifier's release value
// follows from the leaf pass 1 gave the record, and an input that changed between
// the passes is caught by the source (Unchanged: a checksum of every byte of a CSV
// file, the identity and record count of a binary one) and by the verification,
// which compares the release with the input record by record.
type recoder struct {
	p          *plan
	t          *generalize.Table
	levels     []int
	suppressed []bool // per record; nil: none
	quasiAt    []int  // per kept column: index into t.Columns, or -1
	stream     []int  // the input columns pass 2 reads
	fieldAt    []int  // per kept column that is not a quasi-identifier: its field in a pass-2 record
	arrays     []bool // per column of stream: read as an Arrow array and passed through (nil: none)
	// listed holds, per input column, a hierarchy that must list every value (the
	// sensitive columns' hierarchy files), or nil.
	listed []*generalize.Hierarchy
	// class and labels, for a Mondrian release: every record's partition and each
	// partition's released quasi-identifier values (levels is then nil).
	class  []int32
	labels *partLabels
	// keyed makes recode give each quasi-identifier's values as indexes into its
	// dictionary instead of as text: set by dictionaries, cleared by writeRelease for
	// a sink that takes text only.
	keyed bool
	// held has, per kept column, the column pass 1 numbered for pass 2 (nil: read by
	// pass 2); heldKeyed says which of them have a dictionary (their values) and are
	// given by index when keyed.
	held      []*heldColumn
	heldKeyed []bool
	// leafAt maps, per quasi-identifier of a full-domain release, each leaf to its code
	// at the column's level; leafKey, once dictionaries has run, to that code's place
	// in the column's dictionary (−1: not released).
	leafAt, leafKey [][]int32
	// pseudonymAt is the kept column of the privacy unit released as a pseudonym (−1:
	// none): pass 2 reads its ids as text and writes each one's pseudonym under key
	// (pseudonymColumn), never the id; it is neither held nor passed through.
	pseudonymAt int
	key         secret
}

// dictionaries gives every quasi-identifier column of cols (the release's columns,
// p.outColumns()) its dictionary: every value it may be released as, which recode
// gives by index when keyed (per label of labels for Mondrian, per code at the
// column's level for a full-domain release).
//
// released, for a full-domain release, says per quasi-identifier which codes at its
// level some published class holds: the dictionary holds those labels only, so that
// a label only suppressed records have is never written (nil: every label is
// released, as in Mondrian, which suppresses nothing).
func (r *recoder) dictionaries(cols []table.OutColumn, released [][]bool) {
	for j, qi := range r.quasiAt {
		if qi < 0 {
			continue
		}
		if r.labels != nil {
			cols[j].Dict = r.labels.dict[qi]
			continue
		}
		c, l := r.t.Columns[qi], r.levels[qi]
		index := make([]int32, c.Hierarchy.Size(l))
		vals := []string{}
		for code := range index {
			index[code] = -1
			if released == nil || released[qi][code] {
				index[code] = int32(len(vals))
				vals = append(vals, c.Hierarchy.Value(l, int32(code)))
			}
		}
		if r.leafKey == nil {
			r.leafKey = make([][]int32, len(r.t.Columns))
		}
		r.leafKey[qi] = make([]int32, len(r.leafAt[qi]))
		for leaf, code := range r.leafAt[qi] {
			r.leafKey[qi][leaf] = index[code]
		}
		cols[j].Dict = vals
	}
	for j, h := range r.held {
		// A CSV release writes a held text column's values from its dictionary, each
		// formatted once; the other formats keep the column's type (no dictionary).
		if h != nil && h.null < 0 && r.p.outFormat == schema.FormatCSV {
			cols[j].Dict, r.heldKeyed[j] = h.values, true
		}
	}
	r.keyed = true
}

// releasedCodes is, per quasi-identifier (cols, in the search's order), which codes at
// its level the published classes of covers (generalize.NodeClasses or a
// generalize.Recoding's: a full-domain release) hold: a release's dictionary of a
// column holds those labels only, so that a label only suppressed records have is
// never written.
func releasedCodes(cols []generalize.Column, levels []int, covers generalize.ClassCovers) [][]bool {
	out := make([][]bool, len(cols))
	for j, c := range cols {
		out[j] = make([]bool, c.Hierarchy.Size(levels[j]))
		for k := range covers.Classes() {
			out[j][covers.At(k, j).Code] = true
		}
	}
	return out
}

// forms is the form pass 2 reads each column of stream in: an array where arrays says
// so, text elsewhere.
func (r *recoder) forms() []table.Form {
	as := make([]table.Form, len(r.stream))
	for f := range as {
		if r.arrays != nil && r.arrays[f] {
			as[f] = table.AsArray
		}
	}
	return as
}

// newRecoder recodes the records of t at levels (nil suppressed: none suppressed);
// the kept columns pass 1 held (see heldColumn; nil: none) are written from their
// numbers, the others read by pass 2.
func newRecoder(p *plan, t *generalize.Table, levels []int, suppressed []bool, held []*heldColumn) *recoder {
	r := &recoder{p: p, t: t, levels: levels, suppressed: suppressed, quasiAt: make([]int, len(p.Kept)), fieldAt: make([]int, len(p.Kept)), listed: make([]*generalize.Hierarchy, len(p.Header)),
		held: make([]*heldColumn, len(p.Kept)), heldKeyed: make([]bool, len(p.Kept)), pseudonymAt: -1, key: p.key}
	pseudonym := p.PseudonymAt()
	for j, i := range p.Kept {
		r.quasiAt[j], r.fieldAt[j] = -1, -1
		if i == pseudonym {
			r.pseudonymAt, r.fieldAt[j] = j, len(r.stream)
			r.stream = append(r.stream, i)
			continue
		}
		for qi, pos := range p.Quasi {
			if pos == i {
				r.quasiAt[j] = qi
			}
		}
		for _, h := range held {
			if h.pos == i && h.held {
				r.held[j] = h
			}
		}
		if r.quasiAt[j] < 0 && r.held[j] == nil {
			r.fieldAt[j] = len(r.stream)
			r.stream = append(r.stream, i)
		}
	}
	if levels != nil {
		r.leafAt = make([][]int32, len(t.Columns))
		for qi, c := range t.Columns {
			r.leafAt[qi] = make([]int32, c.Hierarchy.Leaves())
			for leaf := range r.leafAt[qi] {
				r.leafAt[qi][leaf] = c.Hierarchy.Code(levels[qi], int32(leaf))
			}
		}
	}
	if len(r.stream) == 0 && !p.TextIn {
		// Every kept column is a quasi-identifier: one is read, for the records' count
		// and the source's check that it did not change. (A text input is not read
		// again: the verification checks that it did not change.)
		r.stream = p.Kept[:1]
	}
	return r
}

// reads reports whether pass 2 reads the input.
func (r *recoder) reads() bool { return len(r.stream) > 0 }

// passThrough makes pass 2 read the insensitive and sensitive columns of a Parquet or
// Arrow input as Arrow arrays and write them untouched, when the release is written as
// Parquet or Arrow: their values are never turned into text. A dictionary-encoded
// column goes as its kept records' values (passed), never with its input dictionary.
// Not passed: a sensitive column whose values its hierarchy file must list. A
// sensitive column's batch whose kept records hold a null goes as text (nullsAsText),
// where the null reads as the column's null-as value.
func (r *recoder) passThrough(src table.Source, outFmt schema.Format) {
	if !table.Arrays(src) || (outFmt != schema.FormatParquet && outFmt != schema.FormatArrow && outFmt != schema.FormatArrows) {
		return
	}
	for f, pos := range r.stream {
		t, c := r.p.ArrowTypes[pos], r.p.Conf[pos]
		if c == nil || t == nil || (r.pseudonymAt >= 0 && pos == r.p.Kept[r.pseudonymAt]) {
			continue // the ids are read as text: their pseudonyms are written
		}
		sensitive := c.Role == schema.Sensitive && r.listed[pos] == nil && !slices.Contains(r.p.PassOnly, pos)
		if c.Role != schema.Insensitive && !sensitive {
			continue
		}
		if r.arrays == nil {
			r.arrays = make([]bool, len(r.stream))
		}
		r.arrays[f] = true
	}
}

// passing checks that every column without a text form is passed through.
func (r *recoder) passing() error {
	for _, pos := range r.p.PassOnly {
		if f := slices.Index(r.stream, pos); f < 0 || r.arrays == nil || !r.arrays[f] {
			return fault.Internalf("column %q of type %s is not passed through", r.p.Header[pos], r.p.ArrowTypes[pos])
		}
	}
	return nil
}

// nullsAsText turns, in batch b, the array of each sensitive column passed through
// whose kept records (kept; nil: every record) hold a null into text and nulls, as
// pass 2 reads a column without arrays; it reports per kept column whether it did.
func (r *recoder) nullsAsText(b *table.Batch, kept []int) []bool {
	var asText []bool
	for j, pos := range r.p.Kept {
		f := r.fieldAt[j]
		if f < 0 || r.arrays == nil || !r.arrays[f] || r.p.Conf[pos].Role != schema.Sensitive || b.Arrays == nil || b.Arrays[f] == nil {
			continue
		}
		a := b.Arrays[f]
		if a.NullN() == 0 || (kept != nil && !slices.ContainsFunc(kept, a.IsNull)) {
			continue
		}
		text := table.ArrayText(a)
		for i := range b.N {
			if v, null := text(i); null {
				b.SetNull(i*b.Width + f)
			} else {
				b.Fields[i*b.Width+f] = v
			}
		}
		if asText == nil {
			asText = make([]bool, len(r.p.Kept))
		}
		asText[j] = true
	}
	return asText
}

// passed is, per kept column, the array of the records of b that recode kept (kept
// lists them, in order; nil: every record), for the columns read as arrays but those
// asText says go as text; nil when there are none. A dictionary array's records go as
// their values (table.Undictionary): its dictionary may hold values only suppressed
// records hold.
func (r *recoder) passed(b *table.Batch, kept []int, asText []bool) ([]arrow.Array, error) {
	if r.arrays == nil {
		return nil, nil
	}
	out := make([]arrow.Array, len(r.p.Kept))
	for j := range r.p.Kept {
		f := r.fieldAt[j]
		if f < 0 || !r.arrays[f] || (asText != nil && asText[j]) {
			continue
		}
		if b.Arrays == nil || b.Arrays[f] == nil || b.Arrays[f].Len() != b.N {
			return nil, fault.Internalf("column %q: pass 2 gave no array", r.p.Header[r.p.Kept[j]])
		}
		var a arrow.Array
		var err error
		if b.Arrays[f].DataType().ID() == arrow.DICTIONARY {
			a, err = table.Undictionary(b.Arrays[f], kept)
		} else {
			a, err = selectRows(b.Arrays[f], kept)
		}
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", r.p.Header[r.p.Kept[j]], err)
		}
		out[j] = a
	}
	return out, nil
}

// selectRows is the rows of a (ascending indexes; nil: all of them) as one array: a
// itself, a slice of it, or the slices of its runs of selected rows joined.
func selectRows(a arrow.Array, rows []int) (arrow.Array, error) {
	if rows == nil {
		a.Retain()
		return a, nil
	}
	var runs []arrow.Array
	defer func() {
		for _, x := range runs {
			x.Release()
		}
	}()
	for i := 0; i < len(rows); {
		j := i + 1
		for j < len(rows) && rows[j] == rows[j-1]+1 {
			j++
		}
		runs = append(runs, array.NewSlice(a, int64(rows[i]), int64(rows[j-1]+1)))
		i = j
	}
	switch len(runs) {
	case 0:
		return array.MakeArrayOfNull(memory.DefaultAllocator, a.DataType(), 0), nil
	case 1:
		runs[0].Retain()
		return runs[0], nil
	}
	return array.Concatenate(runs, memory.DefaultAllocator)
}

// gatherLabels returns, for a Mondrian release, the place in its label dictionary of
// every record's value of every quasi-identifier (record i, quasi-identifier qi at
// i·q+qi), nil otherwise. The records' partitions lie anywhere in the label table, a
// cache miss each: in this short loop the misses of several records overlap, where
// in recode's long one they came one at a time.
func (r *recoder) gatherLabels(b *table.Batch) []int32 {
	if r.labels == nil {
		return nil
	}
	q := len(r.t.Columns)
	xs := make([]int32, b.N*q)
	for i := range min(b.N, len(r.class)-b.First) {
		if c := r.class[b.First+i]; c >= 0 { // a suppressed record (−1) is left out: no labels
			at := int(c) * q
			copy(xs[i*q:(i+1)*q], r.labels.idx[at:at+q])
		}
	}
	return xs
}

// recode returns the release records of batch b (suppressed records are left out),
// column by column.
func (r *recoder) recode(b *table.Batch) (*table.Rows, error) {
	if b.First+b.N > r.t.Rows {
		return nil, table.ChangedError(r.p.Input)
	}
	kept := r.keptRows(b)
	n := b.N
	if kept != nil {
		n = len(kept)
	}
	width := len(r.p.Kept)
	out := &table.Rows{N: n, Fields: make([]string, n*width)}
	if r.keyed {
		out.Keys = make([][]int32, width)
	}
	labeled := r.gatherLabels(b)
	asText := r.nullsAsText(b, kept)
	for j := range r.p.Kept {
		var err error
		switch {
		case j == r.pseudonymAt:
			err = r.pseudonymColumn(out, j, b, kept)
		case r.quasiAt[j] >= 0:
			err = r.quasiColumn(out, j, b, kept, labeled)
		case r.held[j] != nil:
			r.heldColumn(out, j, b, kept)
		case r.arrays != nil && r.arrays[r.fieldAt[j]] && (asText == nil || !asText[j]):
			// passed through as an array (passed)
		default:
			err = r.textColumn(out, j, b, kept)
		}
		if err != nil {
			return nil, err
		}
	}
	var err error
	if out.Arrays, err = r.passed(b, kept, asText); err != nil {
		return nil, err
	}
	return out, nil
}

// keptRows lists the records of b that are not suppressed (indexes into b), nil when
// none is.
func (r *recoder) keptRows(b *table.Batch) []int {
	if r.suppressed == nil || !slices.Contains(r.suppressed[b.First:b.First+b.N], true) {
		return nil
	}
	kept := make([]int, 0, b.N)
	for i := range b.N {
		if !r.suppressed[b.First+i] {
			kept = append(kept, i)
		}
	}
	return kept
}

// pick keeps the values of xs at kept (nil: all), in place.
func pick(xs []int32, kept []int) []int32 {
	if kept == nil {
		return xs
	}
	for k, i := range kept {
		xs[k] = xs[i]
	}
	return xs[:len(kept)]
}

// quasiColumn fills kept column j, a quasi-identifier, of out: its keys into the
// column's dictionary when keyed, else its labels.
func (r *recoder) quasiColumn(out *table.Rows, j int, b *table.Batch, kept []int, labeled []int32) error {
	qi, w := r.quasiAt[j], len(r.p.Kept)
	xs := make([]int32, b.N)
	switch {
	case r.labels != nil: // Mondrian: the place of each record's label in the dictionary
		q := len(r.t.Columns)
		for i := range xs {
			xs[i] = labeled[i*q+qi]
		}
	case r.keyed:
		r.t.Columns[qi].Codes.Map(xs, b.First, r.leafKey[qi])
	default:
		r.t.Columns[qi].Codes.Map(xs, b.First, r.leafAt[qi])
	}
	xs = pick(xs, kept)
	if r.keyed {
		if slices.ContainsFunc(xs, func(x int32) bool { return x < 0 }) {
			return fault.Internalf("column %q: a published record's label is not in the dictionary", r.p.Header[r.p.Kept[j]])
		}
		out.Keys[j] = xs
		return nil
	}
	for k, x := range xs {
		if r.labels != nil {
			out.Fields[k*w+j] = r.labels.dict[qi][x]
		} else {
			out.Fields[k*w+j] = r.t.Columns[qi].Hierarchy.Value(r.levels[qi], x)
		}
	}
	return nil
}

// heldColumn fills kept column j of out from the numbers pass 1 held.
func (r *recoder) heldColumn(out *table.Rows, j int, b *table.Batch, kept []int) {
	h, w := r.held[j], len(r.p.Kept)
	xs := make([]int32, b.N)
	h.codes.Map(xs, b.First, nil)
	xs = pick(xs, kept)
	if r.keyed && r.heldKeyed[j] { // no null: see dictionaries
		out.Keys[j] = xs
		return
	}
	for k, c := range xs {
		if c == h.null {
			setNull(out, k*w+j)
			continue
		}
		out.Fields[k*w+j] = h.values[c]
	}
}

// pseudonymColumn fills kept column j, the privacy unit released as a pseudonym, of
// out: each kept record's pseudonym of the id pass 2 read, never the id. The batch's
// pseudonyms are one string, each field a part of it.
func (r *recoder) pseudonymColumn(out *table.Rows, j int, b *table.Batch, kept []int) error {
	if len(r.key) < keyBytes {
		return fault.Internalf("column %q: no pseudonym key", r.p.Header[r.p.Kept[j]])
	}
	w, f := len(r.p.Kept), r.fieldAt[j]
	z := newPseudonymizer(r.key)
	buf := make([]byte, 0, out.N*pseudonymLen)
	for k := range out.N {
		i := k
		if kept != nil {
			i = kept[k]
		}
		id := b.Fields[i*b.Width+f]
		if b.Null(i, f) || id == "" {
			// pass 1 found every record's id: the input changed since
			return table.ChangedError(r.p.Input)
		}
		buf = z.append(buf, id)
	}
	all := string(buf)
	for k := range out.N {
		out.Fields[k*w+j] = all[k*pseudonymLen : (k+1)*pseudonymLen]
	}
	return nil
}

// setNull marks field f of out null.
func setNull(out *table.Rows, f int) {
	if out.Nulls == nil {
		out.Nulls = make([]bool, len(out.Fields))
	}
	out.Nulls[f] = true
}

// textColumn fills kept column j of out from the fields pass 2 read, checked: a null
// where the column may not hold one, a typed value of a text input, a value its
// hierarchy file does not list.
func (r *recoder) textColumn(out *table.Rows, j int, b *table.Batch, kept []int) error {
	w, f, pos := len(r.p.Kept), r.fieldAt[j], r.p.Kept[j]
	conf, name := r.p.Conf[pos], r.p.Header[pos]
	for k := range out.N {
		i := k
		if kept != nil {
			i = kept[k]
		}
		row, v := b.First+i, b.Fields[i*b.Width+f]
		if r.p.IsNull(b, i, f, pos) {
			if conf.Role != schema.Sensitive {
				setNull(out, k*w+j)
				continue
			}
			if conf.Null == nil {
				return nullError(r.p, row, name)
			}
			v = *conf.Null
		}
		if r.p.TextIn {
			if err := table.CheckType(conf, v); err != nil {
				return r.p.Config.Wrap("columns."+name+".type", fault.BadInput("%s: column %q: %w", r.p.At(row), name, err))
			}
		}
		if h := r.listed[pos]; h != nil {
			if _, ok := h.Leaf(v); !ok {
				return r.p.Config.Errorf(hierarchyKey(r.p.Config, name), "%s: column %q: value not listed in hierarchy %s", r.p.At(row), name, h.Source())
			}
		}
		out.Fields[k*w+j] = v
	}
	return nil
}

// writeRelease is pass 2: it streams the kept columns of the input again, recodes and
// suppresses batch by batch on a worker pool, and writes the batches in input order to
// sink. It returns the number of records written.
func writeRelease(ctx context.Context, src table.Source, rc *recoder, out table.Sink, workers int) (int, error) {
	type job struct {
		b        *table.Batch
		out      *table.Rows
		prepared any // out converted by the sink, when it is a preparer
		err      error
		done     chan struct{}
	}
	g, ctx := errgroup.WithContext(ctx)
	in := make(chan *table.Batch, workers)
	jobs := make(chan *job, 2*workers) // in input order, for the writer
	work := make(chan *job, 2*workers) // for the recoders
	g.Go(safe.Go(func() error {
		if !rc.reads() {
			first, rows := table.Span(src)
			return rowBatches(ctx, first, rows, in)
		}
		return table.StreamAs(ctx, src, rc.stream, rc.forms(), in)
	}))
	g.Go(safe.Go(func() error {
		defer close(jobs)
		defer close(work)
		for b := range in {
			j := &job{b: b, done: make(chan struct{})}
			for _, c := range []chan *job{jobs, work} {
				select {
				case c <- j:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
		}
		return nil
	}))
	// A sink that can convert records off its writing goroutine does so on the
	// recoders'.
	prep, _ := out.(table.Preparer)
	rc.keyed = rc.keyed && prep != nil
	for range workers {
		g.Go(safe.Go(func() error {
			for j := range work {
				j.out, j.err = rc.recode(j.b)
				j.b.Release()
				if j.err == nil && prep != nil {
					if j.prepared, j.err = prep.Prepare(j.out); j.err != nil {
						j.err = fmt.Errorf("writing release: %w", j.err)
					}
					j.out.Release() // the prepared record holds what it needs
				}
				close(j.done)
			}
			return nil
		}))
	}
	written := 0
	g.Go(safe.Go(func() error {
		for j := range jobs {
			select {
			case <-j.done:
			case <-ctx.Done():
				return ctx.Err()
			}
			if j.err != nil {
				return j.err
			}
			var err error
			if prep != nil {
				err = prep.WritePrepared(j.prepared)
			} else {
				err = out.Write(j.out.Fields, j.out.Nulls, j.out.N)
			}
			if err != nil {
				return fmt.Errorf("writing release: %w", err)
			}
			written += j.out.N
			rc.p.progress.AddWritten(j.out.N)
		}
		return nil
	}))
	if err := g.Wait(); err != nil {
		return 0, err
	}
	return written, nil
}

// rowBatches sends batches without fields of the rows records from first on (pass 2
// of an input whose kept columns pass 1 holds) to out, and closes out.
func rowBatches(ctx context.Context, first, rows int, out chan<- *table.Batch) error {
	defer close(out)
	for at := first; at < first+rows; at += table.BatchRows {
		select {
		case out <- &table.Batch{First: at, N: min(table.BatchRows, first+rows-at)}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
