package release

import (
	"bytes"
	"context"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"sanitizer/fault"
	"sanitizer/generalize"
	"sanitizer/internal/safe"
	"sanitizer/job"
	"sanitizer/schema"
	"sanitizer/series"
	"sanitizer/table"
)

// personDigests is the person digest of every id of ids under key, by code.
func personDigests(key []byte, ids *idTable) ([]byte, error) {
	const w = series.DigestBytes
	n := ids.len()
	out := make([]byte, n*w)
	err := inHalves(n, func(lo, hi int) {
		h := series.NewPersonHasher(key)
		for c := lo; c < hi; c++ {
			h.Digest(out[c*w:c*w:(c+1)*w], string(ids.id(int32(c))))
		}
	})
	return out, err
}

// seriesStage decides what each class publishes tonight (docs/series.md): every
// published record's entry (rowEntries), then, class by class against the previous
// night's classes rolled up to tonight's node, the records deferred (decide); the
// records deferred are left out of the write as suppressed ones are, and the
// release's classes and utility are counted again without them.
func (r *run) seriesStage(ctx context.Context, covers generalize.ClassCovers) error {
	sn := r.series
	r.opt.At(job.StageSeries)
	if err := r.rowEntries(ctx); err != nil {
		return err
	}
	d, err := newNightDecision(r, covers)
	if err != nil {
		return err
	}
	if err := d.decide(); err != nil {
		return err
	}
	if err := sn.bound(r); err != nil {
		return err
	}
	if sn.deferred > 0 {
		if err := r.recount(covers); err != nil {
			return err
		}
	}
	r.log.Info("stage done", "stage", job.StageSeries, "night", sn.night(), "added", sn.added, "removed", sn.removed, "deferred", sn.deferred, "exposed_classes", len(sn.exposed))
	return nil
}

// night is tonight's number in the series.
func (sn *seriesNight) night() int {
	if sn.prev == nil {
		return 1
	}
	return sn.prev.Night + 1
}

// bound fails the night when it defers more than series.max-deferred allows, or when
// a class lost 1..k−1 records and series.removals refuses that; and warns when more
// than half of the night's new records wait.
func (sn *seriesNight) bound(r *run) error {
	cfg := r.cfg.Series
	if share := float64(sn.deferred) / float64(max(r.t.Rows, 1)); share > cfg.MaxDeferred {
		return r.cfg.Wrap("series.max-deferred", fault.Unattainable("--series %s: tonight would defer %d of %d records (%.4g), more than series.max-deferred %g allows: nothing published", sn.h.Path(), sn.deferred, r.t.Rows, share, cfg.MaxDeferred))
	}
	if len(sn.exposed) > 0 && cfg.Removals != schema.RemovalsAllow {
		return r.cfg.Wrap("series.removals", fault.Unattainable("--series %s: %d classes lost between 1 and k−1 of the previous night's records (persons): someone holding both files would see which few left; nothing published (series.removals: allow publishes them and lists the classes)", sn.h.Path(), len(sn.exposed)))
	}
	if sn.deferred > 0 && 2*sn.deferred > sn.pending {
		r.log.Warn("more than half of tonight's new records wait for their class's new records to meet k and the models", "deferred", sn.deferred, "new", sn.pending)
	}
	return nil
}

// rowEntries gives every record the search publishes its entry: the digest of its
// release row's columns other than the quasi-identifiers, as pass 2 will write them,
// and with a privacy unit its person's digest.
func (r *run) rowEntries(ctx context.Context) error {
	sn := r.series
	rc := newRecoder(r.p, r.t, r.res.Levels, r.suppressed, r.held)
	rc.listed = r.listed
	var nonQuasi []int
	for j := range r.p.Kept {
		if rc.quasiAt[j] < 0 {
			nonQuasi = append(nonQuasi, j)
		}
	}
	if rc.reads() {
		if err := r.src.Rewind(); err != nil {
			return err
		}
	}
	sn.entries = make([]byte, r.t.Rows*sn.width)
	workers := r.opt.Parallel()
	g, gctx := errgroup.WithContext(ctx)
	in := make(chan *table.Batch, workers)
	g.Go(safe.Go(func() error {
		if !rc.reads() {
			first, rows := table.Span(r.src)
			return rowBatches(gctx, first, rows, in)
		}
		return table.StreamAs(gctx, r.src, rc.stream, rc.forms(), in)
	}))
	for range workers {
		g.Go(safe.Go(func() error {
			var h series.RowHasher
			cells := make([]string, len(nonQuasi))
			for b := range in {
				err := sn.digestBatch(r.t, rc, b, nonQuasi, &h, cells)
				b.Release()
				if err != nil {
					return err
				}
			}
			return nil
		}))
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if rc.reads() {
		return r.src.Unchanged()
	}
	return nil
}

// digestBatch computes the entries of the published records of batch b.
func (sn *seriesNight) digestBatch(t *generalize.Table, rc *recoder, b *table.Batch, nonQuasi []int, h *series.RowHasher, cells []string) error {
	out, err := rc.recode(b)
	if err != nil {
		return err
	}
	kept, w, ew := rc.keptRows(b), len(rc.p.Kept), sn.width
	for k := range out.N {
		i := k
		if kept != nil {
			i = kept[k]
		}
		for c, j := range nonQuasi {
			cells[c] = out.Fields[k*w+j]
			if out.Nulls != nil && out.Nulls[k*w+j] {
				cells[c] = ""
			}
		}
		row := b.First + i
		h.Digest(sn.entries[row*ew:row*ew:row*ew+series.DigestBytes], cells)
		if t.Unit != nil {
			p := int(t.Unit.Codes.At(row)) * series.DigestBytes
			copy(sn.entries[row*ew+series.DigestBytes:(row+1)*ew], sn.persons[p:p+series.DigestBytes])
		}
	}
	return nil
}

// nightDecision compares tonight's classes, as the search found them, with the
// previous night's.
type nightDecision struct {
	r      *run
	sn     *seriesNight
	covers generalize.ClassCovers
	models *generalize.RecordModels
	// members lists each class's records: class c's are rows[start[c]:start[c+1]].
	start []int32
	rows  []int32
	// before holds, per class, the previous night's entries rolled up into it (sorted),
	// and orphans the previous entries no class of tonight's holds.
	before  [][]byte
	orphans int
	// tags maps a waiting class's tag to the night it began to wait, when the node did
	// not change; since is the earliest of them (for a node that changed).
	tags  map[string]int
	since int
}

// newNightDecision lists tonight's classes' records and rolls the previous night's
// classes up to tonight's node.
func newNightDecision(r *run, covers generalize.ClassCovers) (*nightDecision, error) {
	models, err := generalize.NewRecordModels(r.t, r.sopt)
	if err != nil {
		return nil, fault.Internalf("series: %w", err)
	}
	d := &nightDecision{r: r, sn: r.series, covers: covers, models: models, tags: map[string]int{}, since: r.series.night()}
	nc := covers.Classes()
	d.start = make([]int32, nc+1)
	for _, c := range r.class {
		if c >= 0 {
			d.start[c+1]++
		}
	}
	for c := range nc {
		d.start[c+1] += d.start[c]
	}
	d.rows = make([]int32, d.start[nc])
	fill := slices.Clone(d.start[:nc])
	for i, c := range r.class {
		if c >= 0 {
			d.rows[fill[c]] = int32(i)
			fill[c]++
		}
	}
	d.before = make([][]byte, nc)
	if err := d.rollUp(); err != nil {
		return nil, err
	}
	return d, nil
}

// labels is class c's released values, in the state's order.
func (d *nightDecision) labels(c int) []string {
	out := make([]string, len(d.sn.qi))
	for k, qi := range d.sn.qi {
		col := d.r.t.Columns[qi]
		out[k] = col.Hierarchy.Value(d.r.res.Levels[qi], d.covers.At(c, qi).Code)
	}
	return out
}

// labelKey joins labels into a map key (each with its length, so that no two lists
// join alike).
func labelKey(labels []string) string {
	var b strings.Builder
	for _, l := range labels {
		b.WriteString(string(rune(len(l))))
		b.WriteString(l)
	}
	return b.String()
}

// rollUp places every previous class in tonight's class whose labels its labels roll
// up to (each label replaced by its ancestor at tonight's level, through tonight's
// hierarchies); a previous class that no class of tonight's holds is removed whole.
// It also reads what waits from the state.
func (d *nightDecision) rollUp() error {
	p := d.sn.prev
	if p == nil {
		return nil
	}
	node := d.sn.node(d.r.res.Levels)
	same := slices.Equal(node, p.Node)
	for _, w := range p.Waiting {
		if same {
			d.tags[w.Class] = w.Since
		}
		d.since = min(d.since, w.Since)
	}
	ups := make([]map[string]string, len(d.sn.qi))
	for k, qi := range d.sn.qi {
		if p.Node[k] > node[k] {
			return fault.Internalf("series: tonight's level of %q is below the previous night's", d.sn.quasi[k])
		}
		if p.Node[k] < node[k] {
			ups[k] = levelMapping(d.r.t.Columns[qi].Hierarchy, p.Node[k], node[k])
		}
	}
	index := make(map[string]int, d.covers.Classes())
	for c := range d.covers.Classes() {
		index[labelKey(d.labels(c))] = c
	}
	up := make([]string, len(d.sn.qi))
	for _, pc := range p.Classes {
		placed := true
		for k, l := range pc.Labels {
			up[k] = l
			if ups[k] != nil {
				up[k], placed = ups[k][l]
				if !placed {
					break
				}
			}
		}
		c, ok := index[labelKey(up)]
		if !placed || !ok {
			d.orphans += len(pc.Entries) / d.sn.width
			continue
		}
		d.before[c] = series.Merge(d.before[c], pc.Entries, d.sn.width)
	}
	return nil
}

// levelMapping maps every label of hierarchy h at level from to its ancestor's label
// at level to, over h's leaves.
func levelMapping(h *generalize.Hierarchy, from, to int) map[string]string {
	out := make(map[string]string)
	for leaf := range int32(h.Leaves()) {
		out[h.Value(from, h.Code(from, leaf))] = h.Value(to, h.Code(to, leaf))
	}
	return out
}

// decide decides every class: its additions published or deferred, its removals
// counted; the records deferred leave the release (class −1, suppressed).
func (d *nightDecision) decide() error {
	sn := d.sn
	sn.removed = d.orphans
	var waiting []series.Wait
	for c := range d.covers.Classes() {
		deferred, err := d.decideClass(c)
		if err != nil {
			return err
		}
		if deferred > 0 {
			tag := series.ClassTag(sn.h.Key, d.labels(c))
			since, ok := d.tags[tag]
			if !ok {
				since = d.since
			}
			waiting = append(waiting, series.Wait{Class: tag, Since: since, Records: deferred})
			sn.oldest = max(sn.oldest, sn.night()-since+1)
		}
	}
	slices.SortFunc(waiting, func(a, b series.Wait) int { return strings.Compare(a.Class, b.Class) })
	sn.waiting = waiting
	slices.SortFunc(sn.classes, func(a, b series.Class) int { return slices.Compare(a.Labels, b.Labels) })
	return nil
}

// decideClass compares class c tonight with what it held the previous night: the
// records whose entries are new are published when they meet k and the models on
// their own, else deferred; when the records left no longer meet them, the class is
// withheld whole. It returns the records deferred.
func (d *nightDecision) decideClass(c int) (int, error) {
	sn, w := d.sn, d.sn.width
	recs := d.rows[d.start[c]:d.start[c+1]]
	entry := func(i int32) []byte { return sn.entries[int(i)*w : int(i+1)*w] }
	slices.SortFunc(recs, func(a, b int32) int { return bytes.Compare(entry(a), entry(b)) })
	before := d.before[c]
	var added, kept []int32
	var removed []byte
	j := 0
	for _, i := range recs {
		for j < len(before) && bytes.Compare(before[j:j+w], entry(i)) < 0 {
			removed = append(removed, before[j:j+w]...)
			j += w
		}
		if j < len(before) && bytes.Equal(before[j:j+w], entry(i)) {
			kept = append(kept, i)
			j += w
			continue
		}
		added = append(added, i)
	}
	removed = append(removed, before[j:]...)
	sn.pending += len(added)
	withheld := added
	if len(added) > 0 && d.models.Holds(added) {
		withheld = nil
	} else if len(kept) > 0 && len(added) > 0 && !d.models.Holds(kept) {
		withheld = recs // the class cannot stay as it was: withheld whole
		removed = before
	}
	for _, i := range withheld {
		d.r.class[i], d.r.suppressed[i] = -1, true
	}
	if len(withheld) < len(recs) {
		d.publish(c, recs)
	}
	sn.deferred += len(withheld)
	if len(withheld) < len(added) {
		sn.added += len(added)
	}
	sn.removed += len(removed) / w
	if units := d.units(removed); units > 0 && units < d.r.sopt.K {
		sn.exposed = append(sn.exposed, c)
	}
	return len(withheld), nil
}

// publish records class c's published records (recs, sorted by entry, those deferred
// already out of the class) as a class of the state.
func (d *nightDecision) publish(c int, recs []int32) {
	w := d.sn.width
	entries := make([]byte, 0, len(recs)*w)
	for _, i := range recs {
		if d.r.class[i] >= 0 {
			entries = append(entries, d.sn.entries[int(i)*w:int(i+1)*w]...)
		}
	}
	d.sn.classes = append(d.sn.classes, series.Class{Labels: d.labels(c), Entries: entries})
}

// units is the records, or with a privacy unit the distinct persons, of entries.
func (d *nightDecision) units(entries []byte) int {
	if d.sn.width == series.DigestBytes {
		return len(entries) / d.sn.width
	}
	return series.Persons(entries)
}

// recount counts the release's classes, its smallest class (in records, and in
// persons with a unit), the labels it writes and its utility again after deferral.
func (r *run) recount(covers generalize.ClassCovers) error {
	sizes := make([]int32, covers.Classes())
	for _, c := range r.class {
		if c >= 0 {
			sizes[c]++
		}
	}
	r.res.Classes, r.res.MinClass = 0, 0
	for _, n := range sizes {
		if n > 0 {
			r.res.Classes++
			if r.res.MinClass == 0 || int(n) < r.res.MinClass {
				r.res.MinClass = int(n)
			}
		}
	}
	if r.t.Unit != nil {
		r.res.MinPersons = minPersons(r.t.Unit, r.class, len(sizes))
	}
	r.released = make([][]bool, len(r.t.Columns))
	for j, col := range r.t.Columns {
		r.released[j] = make([]bool, col.Hierarchy.Size(r.res.Levels[j]))
	}
	for c, n := range sizes {
		for j := range r.t.Columns {
			if n > 0 {
				r.released[j][covers.At(c, j).Code] = true
			}
		}
	}
	var err error
	if r.util, err = generalize.Utility(r.t, r.class, covers, utilityValues(r.cfg, r.t.Columns), r.cfg.Privacy.K); err != nil {
		return fault.Internalf("utility metrics: %w", err)
	}
	return nil
}

// minPersons is the fewest distinct persons of a published class (0: none published).
func minPersons(u *generalize.Unit, class []int32, classes int) int {
	last := make([]int32, classes) // the last person counted in each class, +1
	persons := make([]int32, classes)
	order := make([]int32, 0, len(class))
	for i, c := range class {
		if c >= 0 {
			order = append(order, int32(i))
		}
	}
	slices.SortFunc(order, func(a, b int32) int { return int(u.Codes.At(int(a))) - int(u.Codes.At(int(b))) })
	for _, i := range order {
		c, p := class[i], u.Codes.At(int(i))+1
		if last[c] != p {
			last[c], persons[c] = p, persons[c]+1
		}
	}
	least := 0
	for _, n := range persons {
		if n > 0 && (least == 0 || int(n) < least) {
			least = int(n)
		}
	}
	return least
}
