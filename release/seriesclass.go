package release

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"

	"sanitizer/fault"
	"sanitizer/generalize"
	"sanitizer/internal/safe"
	"sanitizer/schema"
	"sanitizer/series"
)

// A class of a series is published cohort by cohort: a cohort is rows of the class
// first published together, at least k records (persons) that meet the models on
// their own (a class's rows on the series' first night; a night's new rows after
// that). A cohort is published whole or not at all, so that between any two nights,
// not only consecutive ones, a class gains and loses whole cohorts: at least k each,
// each meeting the models (the models' requirements hold for a union of classes that
// meet them). A cohort that loses a row (erased, or moved to another class) can never
// be whole again: with series.removals: retire its other rows are withheld from then
// on; the rows that left are remembered (retired) so that they are never published
// again should they come back.

// prior is an entry of the state rolled into one of tonight's classes: published the
// last night, or resting (its cohort withheld whole).
type prior struct {
	entry   []byte
	cohort  uint32
	resting bool
}

// past is what the state holds of one of tonight's classes, its labels rolled up to
// tonight's node.
type past struct {
	labels  []string
	items   []prior // in ascending order of entry, then cohort
	retired []byte  // retired entries, in ascending order
}

// nightDecision compares tonight's classes, as the search found them, with the state.
type nightDecision struct {
	r      *run
	sn     *seriesNight
	covers generalize.ClassCovers
	models *generalize.RecordModels
	night  uint32
	// members lists each class's records: class c's are rows[start[c]:start[c+1]].
	start []int32
	rows  []int32
	// pasts holds what the state holds of each of tonight's classes (nil: nothing),
	// orphans what it holds of classes tonight does not publish, by rolled-up labels.
	pasts   []*past
	orphans map[string]*past
	index   map[string]int // tonight's class by its labels (labelKey)
	// tags maps a waiting class's tag to the night it began to wait, when the node did
	// not change; since is the earliest of them (for a node that changed).
	tags  map[string]int
	since int
	// What the state will hold.
	classes, resting, retired []series.Class
}

// newNightDecision lists tonight's classes' records and rolls the state's classes up
// to tonight's node.
func newNightDecision(r *run, covers generalize.ClassCovers) (*nightDecision, error) {
	models, err := generalize.NewRecordModels(r.t, r.sopt)
	if err != nil {
		return nil, fault.Internalf("series: %w", err)
	}
	sn := r.series
	d := &nightDecision{r: r, sn: sn, covers: covers, models: models, night: uint32(sn.night()),
		orphans: map[string]*past{}, tags: map[string]int{}, since: sn.night()}
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
	d.pasts = make([]*past, nc)
	d.index = make(map[string]int, nc)
	for c := range nc {
		d.index[labelKey(d.labels(c))] = c
	}
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

// labelKey joins labels into a map key (each after its length, so that no two lists
// join alike).
func labelKey(labels []string) string {
	var b strings.Builder
	for _, l := range labels {
		b.WriteString(string(binary.AppendUvarint(nil, uint64(len(l)))))
		b.WriteString(l)
	}
	return b.String()
}

// rollUp places every class of the state (published, resting, retired) with tonight's
// class whose labels its labels roll up to (each label replaced by its ancestor at
// tonight's level, through tonight's hierarchies), or with the orphans. It also reads
// what waits.
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
	w := d.sn.width
	for _, list := range []struct {
		classes          []series.Class
		resting, retired bool
	}{{p.Classes, false, false}, {p.Resting, true, false}, {p.Retired, false, true}} {
		for i := range list.classes {
			pc := &list.classes[i]
			pa := d.place(pc.Labels, ups)
			switch {
			case pa == nil && !list.resting && !list.retired: // labels no leaf of tonight's has: its records are gone
				d.sn.removed += len(pc.Entries) / w
			case pa == nil:
			case list.retired:
				pa.retired = series.Merge(pa.retired, pc.Entries, w)
			default:
				for j := range len(pc.Entries) / w {
					pa.items = append(pa.items, prior{entry: pc.Entries[j*w : (j+1)*w], cohort: pc.Cohort(j), resting: list.resting})
				}
			}
		}
	}
	for _, pa := range d.pasts {
		if pa != nil {
			sortPriors(pa.items)
		}
	}
	for _, pa := range d.orphans {
		sortPriors(pa.items)
	}
	return nil
}

// sortPriors sorts items by entry, then cohort, published before resting.
func sortPriors(items []prior) { slices.SortFunc(items, comparePriors) }

// comparePriors orders priors by entry, then cohort, published before resting.
func comparePriors(a, b prior) int {
	if c := bytes.Compare(a.entry, b.entry); c != 0 {
		return c
	}
	if a.cohort != b.cohort {
		return int(a.cohort) - int(b.cohort)
	}
	if a.resting == b.resting {
		return 0
	}
	if a.resting {
		return 1
	}
	return -1
}

// place is where a state's class with labels goes: tonight's class its labels roll up
// to through ups, or the orphan of those labels; nil when a label does not roll up
// (no leaf of tonight's hierarchy lies under it).
func (d *nightDecision) place(labels []string, ups []map[string]string) *past {
	up := make([]string, len(labels))
	for k, l := range labels {
		up[k] = l
		if ups[k] != nil {
			var ok bool
			if up[k], ok = ups[k][l]; !ok {
				return nil
			}
		}
	}
	key := labelKey(up)
	if c, ok := d.index[key]; ok {
		if d.pasts[c] == nil {
			d.pasts[c] = &past{labels: up}
		}
		return d.pasts[c]
	}
	if d.orphans[key] == nil {
		d.orphans[key] = &past{labels: up}
	}
	return d.orphans[key]
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

// tally is what deciding some classes came to: counts, classes exposed, and the
// state's classes, resting and retired, and what waits.
type tally struct {
	withheld, deferred, pending, added, removed, oldest int
	exposed                                             []int
	classes, resting, retired                           []series.Class
	waiting                                             []series.Wait
}

// add adds o to t.
func (t *tally) add(o *tally) {
	t.withheld += o.withheld
	t.deferred += o.deferred
	t.pending += o.pending
	t.added += o.added
	t.removed += o.removed
	t.oldest = max(t.oldest, o.oldest)
	t.exposed = append(t.exposed, o.exposed...)
	t.classes = append(t.classes, o.classes...)
	t.resting = append(t.resting, o.resting...)
	t.retired = append(t.retired, o.retired...)
	t.waiting = append(t.waiting, o.waiting...)
}

// decide decides every class of tonight's (on the run's workers, each a range of
// classes) and every orphan, and records it all in the night.
func (d *nightDecision) decide() error {
	sn := d.sn
	nc := d.covers.Classes()
	parts := 1
	if len(d.rows) >= 1<<16 {
		parts = d.r.opt.Parallel()
	}
	tallies := make([]tally, parts)
	err := safe.Parallel(parts, func(p int) {
		for c := nc * p / parts; c < nc*(p+1)/parts; c++ {
			d.decideClass(c, &tallies[p])
		}
	})
	if err != nil {
		return err
	}
	var all tally
	for p := range tallies {
		all.add(&tallies[p])
	}
	for _, pa := range d.orphans {
		d.decideOrphan(pa, &all)
	}
	slices.SortFunc(all.waiting, func(a, b series.Wait) int { return strings.Compare(a.Class, b.Class) })
	for _, list := range [][]series.Class{all.classes, all.resting, all.retired} {
		slices.SortFunc(list, func(a, b series.Class) int { return slices.Compare(a.Labels, b.Labels) })
	}
	sn.withheld, sn.deferred, sn.pending, sn.added, sn.oldest = all.withheld, all.deferred, all.pending, all.added, all.oldest
	sn.removed += all.removed
	sn.waiting = all.waiting
	sn.classes, sn.resting, sn.retired = all.classes, all.resting, all.retired
	sn.exposed = d.labelOrder(all.exposed)
	return nil
}

// labelOrder renumbers classes of tonight's search (−1 kept) by their place among
// the night's published classes in ascending order of labels, as the state and the
// verifier number them; a class tonight withholds whole is −1.
func (d *nightDecision) labelOrder(classes []int) []int {
	if len(classes) == 0 {
		return nil
	}
	place := make(map[string]int, len(d.sn.classes))
	for i, c := range d.sn.classes {
		place[labelKey(c.Labels)] = i
	}
	out := make([]int, len(classes))
	for i, c := range classes {
		out[i] = -1
		if p, ok := place[labelKey(d.labels(c))]; c >= 0 && ok {
			out[i] = p
		}
	}
	slices.Sort(out)
	return out
}

// wait records in tl that class c (of labels) defers records tonight.
func (d *nightDecision) wait(tl *tally, labels []string, deferred int) {
	tag := series.ClassTag(d.sn.h.Key, labels)
	since, ok := d.tags[tag]
	if !ok {
		since = d.since
	}
	tl.waiting = append(tl.waiting, series.Wait{Class: tag, Since: since, Records: deferred})
	tl.oldest = max(tl.oldest, d.sn.night()-since+1)
}

// tonight is what one class's records and its past come to: the records published
// (with their cohorts), the entries that rest or retire, and the published entries
// removed since the last night.
type tonight struct {
	published []int32  // records
	cohorts   []uint32 // of published
	resting   []prior  // entries withheld whole with their cohorts
	retired   []byte   // entries never to be published again
	removed   []byte   // entries published the last night and not tonight
}

// matchPast matches class c's records (recs, in ascending order of entry) with its
// past: each record takes an entry of the past equal to its own (published, then
// resting), or else a retired one (the record is withheld), or else it is new
// (fresh). matched gives each past entry its record (−1: none tonight, the entry is
// lost).
func (d *nightDecision) matchPast(recs []int32, pa *past) (matched, fresh []int32) {
	w := d.sn.width
	entry := d.entry
	matched = make([]int32, len(pa.items))
	for j := range matched {
		matched[j] = -1
	}
	j, x := 0, 0
	for i := 0; i < len(recs); {
		e := entry(recs[i])
		end := i + 1
		for end < len(recs) && bytes.Equal(entry(recs[end]), e) {
			end++
		}
		for j < len(pa.items) && bytes.Compare(pa.items[j].entry, e) < 0 {
			j++
		}
		for x < len(pa.retired) && bytes.Compare(pa.retired[x:x+w], e) < 0 {
			x += w
		}
		for ; j < len(pa.items) && bytes.Equal(pa.items[j].entry, e); j++ {
			if i < end {
				matched[j] = recs[i]
				i++
			}
		}
		for ; x < len(pa.retired) && bytes.Equal(pa.retired[x:x+w], e); x += w {
			if i < end {
				i++ // withheld: a retired row is never published again
			}
		}
		fresh = append(fresh, recs[i:end]...)
		i = end
	}
	return matched, fresh
}

// cohortKey names a cohort of a class: its number, and whether it rested.
type cohortKey struct {
	id      uint32
	resting bool
}

// decideClass decides class c: its past matched with tonight's records, broken
// cohorts (a row lost) retired or kept as series.removals says, the new records
// published as a cohort when they meet k and the models on their own, resting cohorts
// returned, and the class withheld whole when what it would publish does not meet
// them. It records the night of the class in tl.
func (d *nightDecision) decideClass(c int, tl *tally) {
	pa := d.pasts[c]
	if pa == nil {
		pa = &past{labels: d.labels(c)}
	}
	recs := d.rows[d.start[c]:d.start[c+1]]
	entry := d.entry
	slices.SortFunc(recs, func(a, b int32) int { return bytes.Compare(entry(a), entry(b)) })
	matched, fresh := d.matchPast(recs, pa)
	var t tonight
	t.retired = slices.Clone(pa.retired)
	base, baseCohorts, back, backCohorts := d.sortPast(pa, matched, &t)
	var freshCohorts []uint32
	if len(fresh) > 0 && d.models.Holds(fresh) {
		freshCohorts = d.split(fresh)
	}
	pub, pubCohorts, rest := d.assemble(base, baseCohorts, back, backCohorts, fresh, freshCohorts)
	removed, ok := d.consecutive(pub, pa)
	if !ok {
		// New rows that cancel out against rows that left (equal entries) would make
		// the difference of the two nights smaller than k: tonight publishes only what
		// went on.
		pub, pubCohorts, rest = d.assemble(base, baseCohorts, nil, nil, nil, nil)
		rest.records, rest.cohorts = append(rest.records, back...), append(rest.cohorts, backCohorts...)
		removed, _ = d.consecutive(pub, pa)
	}
	t.published, t.cohorts, t.removed = pub, pubCohorts, removed
	for k, i := range rest.records {
		t.resting = append(t.resting, prior{entry: entry(i), cohort: rest.cohorts[k], resting: true})
	}
	deferred := 0
	if len(fresh) > 0 && !slices.Contains(pub, fresh[0]) {
		deferred = len(fresh)
	}
	d.settle(c, pa, recs, &t, tl)
	tl.pending += len(fresh)
	tl.added += len(fresh) - deferred
	tl.deferred += deferred
	if deferred > 0 {
		d.wait(tl, pa.labels, deferred)
	}
}

// sortPast sorts a class's past entries by what becomes of them tonight: lost ones
// (matched to no record) and, with series.removals: retire, those of a cohort that
// lost one retire (into t); the records of the published cohorts that go on are the
// base, those of resting cohorts may come back.
func (d *nightDecision) sortPast(pa *past, matched []int32, t *tonight) (base []int32, baseCohorts []uint32, back []int32, backCohorts []uint32) {
	broken := map[cohortKey]bool{}
	for j, it := range pa.items {
		if matched[j] < 0 {
			broken[cohortKey{it.cohort, it.resting}] = true
		}
	}
	retire := d.r.cfg.Series.Removals == schema.RemovalsRetire
	for j, it := range pa.items {
		i, key := matched[j], cohortKey{it.cohort, it.resting}
		switch {
		case i < 0 || broken[key] && retire: // never to be published again
			t.retired = append(t.retired, it.entry...)
		case it.resting:
			back, backCohorts = append(back, i), append(backCohorts, it.cohort)
		default:
			base, baseCohorts = append(base, i), append(baseCohorts, it.cohort)
		}
	}
	return base, baseCohorts, back, backCohorts
}

// consecutive compares what a class publishes tonight (pub) with what it published
// the last night, as the verifier does, entries as multisets: it returns the entries
// removed, and whether the added ones are none or meet k and the models on their own
// and (with series.removals: retire) the removed ones are none or at least k. With a
// privacy unit the rows alone are compared too, as someone holding both files sees
// them: a person's row that left and another's equal row that came cancel out there.
func (d *nightDecision) consecutive(pub []int32, pa *past) (removed []byte, ok bool) {
	w := d.sn.width
	now := slices.Clone(pub)
	slices.SortFunc(now, func(a, b int32) int { return bytes.Compare(d.entry(a), d.entry(b)) })
	added, removed := d.difference(now, pa, w)
	removals := d.r.cfg.Series.Removals
	ok = d.fits(added, d.units(removed), removals == schema.RemovalsRetire)
	if w > series.DigestBytes {
		seen, gone := d.difference(now, pa, series.DigestBytes)
		ok = ok && d.fits(seen, len(gone)/w, removals != schema.RemovalsAllow)
	}
	return removed, ok
}

// fits reports whether records added are none or meet k and the models on their own,
// and, when bound, removed units are none or at least k.
func (d *nightDecision) fits(added []int32, removed int, bound bool) bool {
	if len(added) > 0 && !d.models.Holds(added) {
		return false
	}
	return !bound || removed == 0 || removed >= d.r.sopt.K
}

// entry is record i's entry.
func (d *nightDecision) entry(i int32) []byte {
	w := d.sn.width
	return d.sn.entries[int(i)*w : int(i+1)*w]
}

// difference is the multiset difference of the records now (in ascending order of
// entry) and the last night's published entries of pa, comparing the first n bytes of
// each entry: the records added, and the entries removed.
func (d *nightDecision) difference(now []int32, pa *past, n int) (added []int32, removed []byte) {
	j := 0
	next := func() bool { // skips resting entries; whether one is left
		for j < len(pa.items) && pa.items[j].resting {
			j++
		}
		return j < len(pa.items)
	}
	for _, i := range now {
		e := d.entry(i)[:n]
		for next() && bytes.Compare(pa.items[j].entry[:n], e) < 0 {
			removed = append(removed, pa.items[j].entry...)
			j++
		}
		if next() && bytes.Equal(pa.items[j].entry[:n], e) {
			j++
			continue
		}
		added = append(added, i)
	}
	for next() {
		removed = append(removed, pa.items[j].entry...)
		j++
	}
	return added, removed
}

// split gives records new tonight (recs, which meet k and the models together) their
// cohorts: with series.removals: retire, as many as meet k and the models each, so
// that a row that leaves later retires only its own cohort's rows; else one. The
// records are taken value by value in turn (of the first protected sensitive column),
// a cohort closed as soon as it meets the models; what is left joins the last one, or,
// when that would fail them, all are one cohort.
func (d *nightDecision) split(recs []int32) []uint32 {
	ids := make([]uint32, len(recs))
	for i := range ids {
		ids[i] = series.CohortOf(int(d.night), 0)
	}
	if d.r.cfg.Series.Removals != schema.RemovalsRetire || len(recs) < 2*d.r.sopt.K {
		return ids
	}
	var cur, last []int32 // the records of the cohort being formed, and of the last one closed
	var curAt []int       // their places in recs
	part := 0
	for _, at := range d.interleave(recs) {
		cur, curAt = append(cur, recs[at]), append(curAt, at)
		if len(cur) < d.r.sopt.K || part == series.MaxParts-1 || !d.models.Holds(cur) {
			continue
		}
		for _, a := range curAt {
			ids[a] = series.CohortOf(int(d.night), part)
		}
		part++
		last, cur, curAt = cur, nil, nil
	}
	if len(cur) == 0 {
		return ids
	}
	if part > 0 && d.models.Holds(append(slices.Clone(last), cur...)) {
		for _, a := range curAt {
			ids[a] = series.CohortOf(int(d.night), part-1)
		}
		return ids
	}
	for i := range ids {
		ids[i] = series.CohortOf(int(d.night), 0)
	}
	return ids
}

// interleave is an order of recs's places that takes the values of the first
// protected sensitive column in turn (recs's own order without one).
func (d *nightDecision) interleave(recs []int32) []int {
	order := make([]int, len(recs))
	for i := range order {
		order[i] = i
	}
	if len(d.r.t.Sensitive) == 0 {
		return order
	}
	codes := d.r.t.Sensitive[0].Codes
	byValue := map[int32][]int{}
	var values []int32
	for _, i := range order {
		v := codes.At(int(recs[i]))
		if byValue[v] == nil {
			values = append(values, v)
		}
		byValue[v] = append(byValue[v], i)
	}
	slices.Sort(values)
	order = order[:0]
	for len(order) < len(recs) {
		for _, v := range values {
			if rest := byValue[v]; len(rest) > 0 {
				order, byValue[v] = append(order, rest[0]), rest[1:]
			}
		}
	}
	return order
}

// restingSet is what a class withholds whole tonight: records with their cohorts,
// and which of them the last night published.
type restingSet struct {
	records   []int32
	cohorts   []uint32
	published []int32
}

// assemble chooses what a class publishes: its published cohorts that go on (base),
// its resting cohorts (back) and its new records (fresh, in tonight's cohorts
// freshCohorts; nil when they do not meet the models), as much of it as meets k and the models together, trying without the
// resting cohorts, then without the new records, then nothing (the base withheld
// whole, resting).
func (d *nightDecision) assemble(base []int32, baseCohorts []uint32, back []int32, backCohorts []uint32, fresh []int32, freshCohorts []uint32) (pub []int32, cohorts []uint32, rest restingSet) {
	newOK := freshCohorts != nil
	for _, try := range []struct{ back, fresh bool }{{true, true}, {false, true}, {true, false}, {false, false}} {
		if (try.fresh && !newOK) || (try.back && len(back) == 0) {
			continue
		}
		pub, cohorts = slices.Clone(base), slices.Clone(baseCohorts)
		if try.back {
			pub, cohorts = append(pub, back...), append(cohorts, backCohorts...)
		}
		if try.fresh {
			pub, cohorts = append(pub, fresh...), append(cohorts, freshCohorts...)
		}
		if len(pub) == 0 || d.models.Holds(pub) {
			if !try.back {
				rest.records, rest.cohorts = back, backCohorts
			}
			return pub, cohorts, rest
		}
	}
	// Nothing the class could publish meets the models: withheld whole.
	rest.records = append(slices.Clone(base), back...)
	rest.cohorts = append(slices.Clone(baseCohorts), backCohorts...)
	rest.published = base
	return nil, nil, rest
}

// settle records class c's night in tl: its published records keep their class, the
// others are withheld (class −1, suppressed); the state's classes, resting and retired
// entries; the counts, and whether the class's removals expose records.
func (d *nightDecision) settle(c int, pa *past, recs []int32, t *tonight, tl *tally) {
	sn, w := d.sn, d.sn.width
	for _, i := range recs { // withheld, but those published
		d.r.class[i], d.r.suppressed[i] = -1, true
	}
	for _, i := range t.published {
		d.r.class[i], d.r.suppressed[i] = int32(c), false
	}
	tl.withheld += len(recs) - len(t.published)
	tl.removed += len(t.removed) / w
	if units := d.units(t.removed); units > 0 && units < d.r.sopt.K {
		tl.exposed = append(tl.exposed, c)
	}
	if len(t.published) > 0 {
		items := make([]prior, len(t.published))
		for k, i := range t.published {
			items[k] = prior{entry: sn.entries[int(i)*w : int(i+1)*w], cohort: t.cohorts[k]}
		}
		tl.classes = append(tl.classes, stateClass(pa.labels, items))
	}
	if len(t.resting) > 0 {
		tl.resting = append(tl.resting, stateClass(pa.labels, t.resting))
	}
	if len(t.retired) > 0 {
		tl.retired = append(tl.retired, retiredClass(pa.labels, t.retired, w))
	}
}

// decideOrphan decides a class of the state that tonight does not publish (its
// records suppressed by the search, or gone): its published entries are removed, all
// its entries retired.
func (d *nightDecision) decideOrphan(pa *past, tl *tally) {
	w := d.sn.width
	var removed []byte
	retired := slices.Clone(pa.retired)
	for _, it := range pa.items {
		retired = append(retired, it.entry...)
		if !it.resting {
			removed = append(removed, it.entry...)
		}
	}
	tl.removed += len(removed) / w
	if units := d.units(removed); units > 0 && units < d.r.sopt.K {
		tl.exposed = append(tl.exposed, -1)
	}
	if len(retired) > 0 {
		tl.retired = append(tl.retired, retiredClass(pa.labels, retired, w))
	}
}

// stateClass is a class of the state: items in order, their entries and cohorts.
func stateClass(labels []string, items []prior) series.Class {
	if !slices.IsSortedFunc(items, comparePriors) {
		slices.SortFunc(items, comparePriors)
	}
	c := series.Class{Labels: labels}
	for _, it := range items {
		c.Entries = append(c.Entries, it.entry...)
		c.Cohorts = binary.LittleEndian.AppendUint32(c.Cohorts, it.cohort)
	}
	return c
}

// retiredClass is a retired class of the state: entries sorted.
func retiredClass(labels []string, entries []byte, w int) series.Class {
	series.SortEntries(entries, w)
	return series.Class{Labels: labels, Entries: entries}
}

// units is the records, or with a privacy unit the distinct persons, of entries.
func (d *nightDecision) units(entries []byte) int {
	if d.sn.width == series.DigestBytes {
		return len(entries) / d.sn.width
	}
	return series.Persons(entries)
}
