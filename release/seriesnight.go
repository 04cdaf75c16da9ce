package release

import (
	"context"
	"slices"
	"time"

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
	start := time.Now()
	sn.persons, r.p.persons = r.p.persons, nil // pass 1's digests of the persons, by code
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
	sn.entries = nil // the classes hold the published ones
	// The verification walks the input along the records left out: of records a
	// release writes alike, it then knows which one's person each is.
	r.p.leftOut = slices.Clone(r.suppressed)
	if err := sn.bound(r); err != nil {
		return err
	}
	if sn.prev != nil {
		sn.readForVerifier() // while the night is written
	}
	if sn.withheld > 0 {
		if err := r.recount(covers); err != nil {
			return err
		}
	}
	r.log.Info("stage done", "stage", job.StageSeries, "night", sn.night(), "added", sn.added, "removed", sn.removed, "deferred", sn.deferred, "withheld", sn.withheld, "exposed_classes", len(sn.exposed), "ms", job.Millis(start, time.Now()))
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
	if len(sn.exposed) > 0 && cfg.Removals != schema.RemovalsAllow { // retire never exposes: whole cohorts leave
		return r.cfg.Wrap("series.removals", fault.Unattainable("--series %s: %d classes lost between 1 and k−1 of the previous night's records (persons): someone holding both files would see which few left; nothing published (series.removals: retire withholds the rest of their cohorts from now on; allow publishes them and lists the classes)", sn.h.Path(), len(sn.exposed)))
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
