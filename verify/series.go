package verify

// A night of a release series (docs/series.md), checked from the written file: every
// published row becomes an entry (its row digest, and with a privacy unit its person
// digest), computed here from the release's strings and the input's unit, with no code
// shared with the release side. The previous night's classes are rolled up to
// tonight's labels with the verifier's own covers, and every class of tonight is
// compared with what rolled into it: the entries added number 0 or at least k (persons)
// and meet the sensitive models on their own; the entries removed number 0 or at least
// k unless removals are allowed.
//
// Memory: per published row its entry (16 or 32 bytes) and the numbers of its
// sensitive values (4 bytes each); per quasi-identifier whose level changed, its
// distinct input values with their label; with a privacy unit and a t-closeness or
// β-likeness requirement, 16 bytes per input record and such column, for the input's
// persons holding each value.

import (
	"bytes"
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/maphash"
	"slices"
	"strings"

	"sanitizer/closeness"
	"sanitizer/fault"
)

// The digests' prefixes (docs/series.md, "Entries").
const (
	seriesRowPrefix    = "sanitize-series/1 row\x00"
	seriesPersonPrefix = "sanitize-series/1 person\x00"
)

// SeriesCheck is what a series night is checked against.
type SeriesCheck struct {
	// Prev is the classes the night is diffed against (for a release the state's
	// classes, for a re-check the state's previous classes), at node PrevNode.
	Prev     []SeriesClass
	PrevNode []int
	// Node is tonight's node; both nodes are in Quasi's order. A quasi-identifier
	// whose level is unchanged keeps its labels; the others are rolled up.
	Node  []int
	Quasi []string
	// Key is the series key of the person digests: set exactly when the spec names a
	// privacy unit (nil: no persons).
	Key SecretKey
	// RemovalsAllowed lets a class lose between 1 and k−1 entries (then listed in
	// SeriesMeasured.Exposed).
	RemovalsAllowed bool
}

// SeriesMeasured is what a series night was found to hold.
type SeriesMeasured struct {
	// Classes is tonight's published classes with their entries, in the state's
	// order (labels ascending, entries ascending): the state's next classes.
	Classes []SeriesClass
	// Added and Removed are the entries added and removed over all classes (Removed
	// with the previous classes that tonight no longer holds).
	Added, Removed int
	// AddedClasses is tonight's classes with entries added.
	AddedClasses int
	// RemovalClasses is the groups (tonight's classes, and previous classes rolled
	// together that tonight no longer holds) that lose between 1 and k−1 units,
	// allowed or not.
	RemovalClasses int
	// Exposed is, when removals are allowed, the indexes in Classes of tonight's
	// classes that lose between 1 and k−1 units; ExposedGone the number of
	// vanished groups that did.
	Exposed     []int
	ExposedGone int
	// Gone is the groups of previous classes that tonight no longer holds, and
	// Unplaced the previous classes among them whose labels cover no value released
	// tonight (each a group of its own).
	Gone, Unplaced int
	// Failing is the classes and groups that break a rule (the error names the first).
	Failing int
}

// SeriesCounter checks a series night as the truthfulness walk reads it (Truth.Series):
// every release record with the input record it generalizes, every input record left
// out; then Finish.
type SeriesCounter struct {
	sc     SeriesCheck
	spec   Spec
	header []string
	width  int   // of an entry
	qpos   []int // release positions: the quasi-identifiers
	rest   []int // the other columns, in order (the row digest's)
	spos   []int // the sensitive columns
	index  []map[string]int32
	// bound by the walk (bind): input positions, covers
	bound   bool
	inQuasi []int
	inUnit  int
	inSens  []int
	covers  []Cover
	// leaves[j], for a quasi-identifier whose level changed: each input value with
	// its label tonight
	leaves  []map[string]string
	classes map[string]int32
	cls     []*seriesBuild
	// with persons, per sensitive column that needs it (t-closeness, β-likeness):
	// the (person, value) of every input record, released and left out
	refRows, refLeft [][]personRow
	seed             maphash.Seed
	rowHash, mac     hash.Hash
	key, in, sum     []byte
	err              error // the first: the counter counts no more
}

// seriesBuild is one of tonight's classes as it is counted.
type seriesBuild struct {
	labels  []string
	entries []byte
	sens    []int32 // per entry, its sensitive values' numbers
}

// NewSeriesCounter starts checking a series night whose release has the given header
// against spec and sc.
func NewSeriesCounter(sc SeriesCheck, spec Spec, header []string) (*SeriesCounter, error) {
	if !slices.Equal(header, spec.Columns) {
		return nil, &Violation{Msg: fmt.Sprintf("series: the release's header is not the expected %q", spec.Columns)}
	}
	if err := checkSeriesCheck(sc, spec); err != nil {
		return nil, err
	}
	if err := checkUnitModels(spec); err != nil {
		return nil, err
	}
	s := &SeriesCounter{sc: sc, spec: spec, header: header, width: seriesEntryRows, classes: map[string]int32{},
		inUnit: -1, seed: maphash.MakeSeed(), rowHash: sha256.New()}
	if sc.Key != nil {
		s.width, s.mac = seriesEntryPerson, hmac.New(sha256.New, sc.Key)
	}
	for i, c := range sc.Prev {
		if len(c.Labels) != len(sc.Quasi) || len(c.Entries) == 0 || len(c.Entries)%s.width != 0 {
			return nil, fault.BadInput("series: previous class %d: %d labels and %d bytes of entries, want %d labels and entries of %d bytes", i, len(c.Labels), len(c.Entries), len(sc.Quasi), s.width)
		}
	}
	for _, q := range spec.Quasi {
		at := slices.Index(header, q)
		if at < 0 {
			return nil, &Violation{Msg: fmt.Sprintf("series: quasi-identifier %q missing from the release", q)}
		}
		s.qpos = append(s.qpos, at)
	}
	for i, c := range header {
		if !slices.Contains(spec.Quasi, c) {
			s.rest = append(s.rest, i)
		}
	}
	for _, sv := range spec.Sensitive {
		at := slices.Index(header, sv.Column)
		if at < 0 {
			return nil, &Violation{Msg: fmt.Sprintf("series: sensitive column %q missing from the release", sv.Column)}
		}
		s.spos = append(s.spos, at)
		m := make(map[string]int32, len(sv.Values))
		for v, x := range sv.Values {
			m[x] = int32(v)
		}
		s.index = append(s.index, m)
	}
	return s, nil
}

// checkSeriesCheck reports a SeriesCheck that does not fit spec.
func checkSeriesCheck(sc SeriesCheck, spec Spec) error {
	q := len(spec.Quasi)
	switch {
	case !slices.Equal(sc.Quasi, spec.Quasi):
		return fault.BadInput("series: the state's quasi-identifiers are not the configuration's")
	case len(sc.Node) != q:
		return fault.BadInput("series: tonight's node has %d levels, there are %d quasi-identifiers", len(sc.Node), q)
	case len(sc.Prev) > 0 && len(sc.PrevNode) != q:
		return fault.BadInput("series: the previous node has %d levels, there are %d quasi-identifiers", len(sc.PrevNode), q)
	case spec.Unit != "" && len(sc.Key) == 0:
		return fault.BadInput("series: privacy unit %q: the person digests need the series key", spec.Unit)
	case spec.Unit == "" && sc.Key != nil:
		return fault.BadInput("series: a series key without a privacy unit")
	}
	for j := range sc.PrevNode {
		if sc.PrevNode[j] > sc.Node[j] {
			return &Violation{Msg: fmt.Sprintf("series: tonight's level of %q is finer than the previous night's", sc.Quasi[j])}
		}
	}
	return nil
}

// bind readies the counter for a walk of a release with header columns (its own)
// over an input with header inHeader, the release's quasi-identifiers covered by
// covers.
func (s *SeriesCounter) bind(columns, inHeader []string, covers map[string]Cover) error {
	if !slices.Equal(columns, s.header) {
		return fmt.Errorf("series: the counter's header is not the release's")
	}
	s.inQuasi, s.inSens, s.covers = nil, nil, nil
	s.leaves = make([]map[string]string, len(s.qpos))
	for j, q := range s.spec.Quasi {
		s.inQuasi = append(s.inQuasi, slices.Index(inHeader, q))
		s.covers = append(s.covers, covers[q])
		if len(s.sc.Prev) > 0 && s.sc.PrevNode[j] != s.sc.Node[j] {
			s.leaves[j] = map[string]string{}
		}
	}
	for _, sv := range s.spec.Sensitive {
		s.inSens = append(s.inSens, slices.Index(inHeader, sv.Column))
	}
	if u := s.spec.Unit; u != "" {
		if s.inUnit = slices.Index(inHeader, u); s.inUnit < 0 {
			return fmt.Errorf("series: the input read has no column %q, the privacy unit", u)
		}
		if slices.ContainsFunc(s.spec.Sensitive, closeInPersons) {
			s.refRows = make([][]personRow, len(s.spos))
			s.refLeft = make([][]personRow, len(s.spos))
		}
	}
	if slices.Contains(s.inQuasi, -1) || slices.Contains(s.inSens, -1) {
		return fmt.Errorf("series: a quasi-identifier or sensitive column is not a column of the input")
	}
	s.bound = true
	return nil
}

// add counts release record r, the generalization of input record x (in the input's
// header order). Neither is kept.
func (s *SeriesCounter) add(r, x []string) {
	if s.err != nil {
		return
	}
	id := ""
	if s.inUnit >= 0 {
		if id = x[s.inUnit]; id == "" {
			s.err = fault.BadInput("series: a release record's input record has no privacy unit (column %q is empty)", s.spec.Unit)
			return
		}
	}
	s.key = s.key[:0]
	for _, p := range s.qpos {
		s.key = appendKey(s.key, r[p])
	}
	c, ok := s.classes[string(s.key)]
	if !ok {
		c = int32(len(s.cls))
		b := &seriesBuild{}
		for _, p := range s.qpos {
			b.labels = append(b.labels, strings.Clone(r[p]))
		}
		s.cls, s.classes[string(s.key)] = append(s.cls, b), c
	}
	b := s.cls[c]
	b.entries = s.appendEntry(b.entries, r, id)
	var h uint64
	if s.refRows != nil {
		h = maphash.String(s.seed, id)
	}
	for i, p := range s.spos {
		v, ok := s.index[i][r[p]]
		if !ok {
			s.err = &Violation{Msg: fmt.Sprintf("series: a released value of sensitive column %q that the input does not hold", s.spec.Sensitive[i].Column)}
			return
		}
		b.sens = append(b.sens, v)
		if s.refRows != nil && closeInPersons(s.spec.Sensitive[i]) {
			s.refRows[i] = append(s.refRows[i], personRow{h: h, s: v})
		}
	}
	for j, m := range s.leaves {
		if m == nil {
			continue
		}
		if _, ok := m[x[s.inQuasi[j]]]; !ok {
			m[strings.Clone(x[s.inQuasi[j]])] = strings.Clone(r[s.qpos[j]])
		}
	}
}

// appendEntry appends the entry of release record r (its row digest, then with a
// key the person digest of id) to dst.
func (s *SeriesCounter) appendEntry(dst []byte, r []string, id string) []byte {
	s.in = append(s.in[:0], seriesRowPrefix...)
	for _, p := range s.rest {
		s.in = binary.AppendUvarint(s.in, uint64(len(r[p])))
		s.in = append(s.in, r[p]...)
	}
	s.rowHash.Reset()
	s.rowHash.Write(s.in)
	s.sum = s.rowHash.Sum(s.sum[:0])
	dst = append(dst, s.sum[:seriesDigestBytes]...)
	if s.mac != nil {
		s.in = append(append(s.in[:0], seriesPersonPrefix...), id...)
		s.mac.Reset()
		s.mac.Write(s.in)
		s.sum = s.mac.Sum(s.sum[:0])
		dst = append(dst, s.sum[:seriesDigestBytes]...)
	}
	return dst
}

// left counts input record x, which the release leaves out: with persons, for the
// input's persons holding each value.
func (s *SeriesCounter) left(x []string) {
	if s.err != nil || s.refLeft == nil {
		return
	}
	id := x[s.inUnit]
	if id == "" {
		s.err = fault.BadInput("series: an input record left out has no privacy unit (column %q is empty)", s.spec.Unit)
		return
	}
	h := maphash.String(s.seed, id)
	for i, sv := range s.spec.Sensitive {
		if !closeInPersons(sv) {
			continue
		}
		v := x[s.inSens[i]]
		if v == "" && sv.Null != nil {
			v = *sv.Null
		}
		n, ok := s.index[i][v]
		if !ok {
			s.err = &Violation{Msg: fmt.Sprintf("series: an input record left out holds a value of sensitive column %q that the input's count does not hold", sv.Column)}
			return
		}
		s.refLeft[i] = append(s.refLeft[i], personRow{h: h, c: -1, s: n})
	}
}

// seriesGroup is previous classes rolled up to the same labels of tonight (or one
// class that cannot be placed), their entries merged.
type seriesGroup struct {
	first    int // the first previous class in it
	classes  int
	entries  []byte
	matched  bool // tonight has its class
	unplaced bool // a class whose labels cover no value released tonight
}

// Finish compares tonight's classes with the previous ones rolled up to them and
// checks the rules of a night. A night that breaks them yields a *Violation (naming
// the first class by its index in label order, and counts; never a value) with the
// measurements.
func (s *SeriesCounter) Finish() (*SeriesMeasured, error) {
	if s.err != nil {
		return nil, s.err
	}
	if !s.bound && len(s.cls) > 0 {
		return nil, fmt.Errorf("series: counted outside a truthfulness walk")
	}
	tonight := s.tonight()
	groups, alone, err := s.rollPrevious()
	if err != nil {
		return nil, err
	}
	refs, err := s.references()
	if err != nil {
		return nil, err
	}
	m := &SeriesMeasured{Classes: make([]SeriesClass, len(tonight))}
	var first error
	fail := func(err error) {
		if m.Failing++; first == nil {
			first = err
		}
	}
	for i, b := range tonight {
		m.Classes[i] = SeriesClass{Labels: b.labels, Entries: b.entries}
		s.key = appendValueKey(s.key[:0], b.labels...)
		var prev []byte
		if g := groups[string(s.key)]; g != nil {
			prev, g.matched = g.entries, true
		}
		if err := s.compare(m, i, b, prev, refs); err != nil {
			if _, ok := err.(*Violation); !ok {
				return nil, err
			}
			fail(err)
		}
	}
	for _, g := range groups {
		if !g.matched {
			alone = append(alone, g)
		}
	}
	slices.SortFunc(alone, func(a, b *seriesGroup) int { return a.first - b.first })
	for _, g := range alone {
		m.Gone++
		if err := s.gone(m, g); err != nil {
			fail(err)
		}
	}
	if first != nil && m.Failing > 1 {
		first = &Violation{Msg: fmt.Sprintf("%s (%d classes or groups break a rule of the series)", first.Error(), m.Failing)}
	}
	return m, first
}

// tonight is tonight's classes in label order, their entries (and values) sorted.
func (s *SeriesCounter) tonight() []*seriesBuild {
	out := slices.Clone(s.cls)
	slices.SortFunc(out, func(a, b *seriesBuild) int { return slices.Compare(a.labels, b.labels) })
	for _, b := range out {
		b.entries, b.sens = sortEntries(b.entries, s.width, b.sens, len(s.spos))
	}
	s.cls, s.classes = nil, nil
	return out
}

// sortEntries sorts entries of width w in ascending byte order, the ns values per
// entry of sens with them.
func sortEntries(e []byte, w int, sens []int32, ns int) ([]byte, []int32) {
	n := len(e) / w
	at := func(i int32) []byte { return e[int(i)*w : int(i+1)*w] }
	perm := make([]int32, n)
	sorted := true
	for i := range perm {
		perm[i] = int32(i)
		if i > 0 && bytes.Compare(at(int32(i-1)), at(int32(i))) > 0 {
			sorted = false
		}
	}
	if sorted {
		return e, sens
	}
	slices.SortStableFunc(perm, func(a, b int32) int { return bytes.Compare(at(a), at(b)) })
	out := make([]byte, 0, len(e))
	var outSens []int32
	if ns > 0 {
		outSens = make([]int32, 0, len(sens))
	}
	for _, i := range perm {
		out = append(out, at(i)...)
		if ns > 0 {
			outSens = append(outSens, sens[int(i)*ns:int(i+1)*ns]...)
		}
	}
	return out, outSens
}

// rollPrevious rolls the previous classes up to tonight's labels: the groups by
// their labels tonight (key: appendValueKey), and the classes that cannot be placed,
// a group each.
func (s *SeriesCounter) rollPrevious() (map[string]*seriesGroup, []*seriesGroup, error) {
	groups := map[string]*seriesGroup{}
	var alone []*seriesGroup
	memo := make([]map[string]rolled, len(s.sc.Quasi))
	labels := make([]string, len(s.sc.Quasi))
	for i, c := range s.sc.Prev {
		placed := true
		for j, l := range c.Labels {
			labels[j] = l
			if s.leaves == nil || s.leaves[j] == nil {
				continue
			}
			if memo[j] == nil {
				memo[j] = map[string]rolled{}
			}
			r, ok := memo[j][l]
			if !ok {
				var err error
				if r, err = s.rollLabel(j, l); err != nil {
					return nil, nil, err
				}
				memo[j][l] = r
			}
			labels[j], placed = r.label, placed && r.placed
		}
		if !placed {
			alone = append(alone, &seriesGroup{first: i, classes: 1, entries: c.Entries, unplaced: true})
			continue
		}
		s.key = appendValueKey(s.key[:0], labels...)
		g := groups[string(s.key)]
		if g == nil {
			g = &seriesGroup{first: i}
			groups[string(s.key)] = g
		}
		switch g.classes++; g.classes {
		case 1: // the previous class's entries, not copied: never appended to
			g.entries = c.Entries
		case 2:
			g.entries = append(append(make([]byte, 0, 2*(len(g.entries)+len(c.Entries))), g.entries...), c.Entries...)
		default:
			g.entries = append(g.entries, c.Entries...)
		}
	}
	for _, g := range groups {
		if g.classes > 1 {
			g.entries, _ = sortEntries(g.entries, s.width, nil, 0)
		}
	}
	return groups, alone, nil
}

// rolled is a previous label rolled up: tonight's label, or not placed.
type rolled struct {
	label  string
	placed bool
}

// rollLabel rolls previous label l of quasi-identifier j up to tonight's label: the
// label of the input values it covers, which must all have the same.
func (s *SeriesCounter) rollLabel(j int, l string) (rolled, error) {
	var r rolled
	for leaf, label := range s.leaves[j] {
		in := l == leaf
		if cv := s.covers[j]; cv != nil && !in {
			var err error
			if in, err = cv(l, leaf); err != nil {
				return r, fault.BadInput("series: a label of quasi-identifier %q in the previous classes: %w", s.sc.Quasi[j], err)
			}
		}
		switch {
		case !in:
		case !r.placed:
			r = rolled{label: label, placed: true}
		case r.label != label:
			return r, &Violation{Msg: fmt.Sprintf("series: a previous label of %q covers values released tonight under two labels: tonight's node is not at least as general as the previous night's", s.sc.Quasi[j])}
		}
	}
	return r, nil
}

// references is, with persons, per sensitive column with a t-closeness or β-likeness
// requirement, the input's persons holding each value (nil elsewhere).
func (s *SeriesCounter) references() ([]*closeness.PersonsReference, error) {
	refs := make([]*closeness.PersonsReference, len(s.spos))
	if s.refRows == nil {
		return refs, nil
	}
	t := &personTally{rows: s.refRows, lefts: s.refLeft}
	for i, sv := range s.spec.Sensitive {
		if !closeInPersons(sv) {
			continue
		}
		r, err := t.reference(i, len(sv.Values))
		if err != nil {
			return nil, err
		}
		refs[i] = r
	}
	s.refRows, s.refLeft = nil, nil
	return refs, nil
}

// compare checks tonight's class i (b) against prev, the previous entries rolled
// into it (sorted), and counts what it adds and removes into m.
func (s *SeriesCounter) compare(m *SeriesMeasured, i int, b *seriesBuild, prev []byte, refs []*closeness.PersonsReference) error {
	addedIdx, removed := s.diff(b.entries, prev)
	m.Added += len(addedIdx)
	m.Removed += len(removed) / s.width
	k := s.spec.K
	var err error
	if len(addedIdx) > 0 {
		m.AddedClasses++
		if u := s.units(b.entries, addedIdx); u < k {
			err = &Violation{Msg: fmt.Sprintf("series: tonight's class %d (in label order, from 0) adds %d %s, fewer than k=%d", i, u, s.unitName(), k)}
		} else if merr := s.addedModels(b, addedIdx, refs); merr != nil {
			v, ok := merr.(*Violation)
			if !ok {
				return merr
			}
			err = &Violation{Msg: fmt.Sprintf("series: tonight's class %d (in label order, from 0): the %d %s it adds, on their own: %s", i, u, s.unitName(), v.Msg)}
		}
	}
	if err == nil && s.width > seriesDigestBytes {
		err = s.compareRows(i, b, prev, refs)
	}
	if u := s.units(removed, nil); u > 0 && u < k {
		m.RemovalClasses++
		switch {
		case s.sc.RemovalsAllowed:
			m.Exposed = append(m.Exposed, i)
		case err == nil:
			err = &Violation{Msg: fmt.Sprintf("series: tonight's class %d (in label order, from 0) removes %d %s published the night before, fewer than k=%d (removals are not allowed)", i, u, s.unitName(), k)}
		}
	}
	return err
}

// gone counts group g, which tonight no longer holds: all its entries are removed.
func (s *SeriesCounter) gone(m *SeriesMeasured, g *seriesGroup) error {
	if g.unplaced {
		m.Unplaced++
	}
	m.Removed += len(g.entries) / s.width
	u, k := s.units(g.entries, nil), s.spec.K
	if u == 0 || u >= k {
		return nil
	}
	m.RemovalClasses++
	if s.sc.RemovalsAllowed {
		m.ExposedGone++
		return nil
	}
	return &Violation{Msg: fmt.Sprintf("series: the previous classes rolled into one group that tonight no longer holds (the first is previous class %d) remove %d %s, fewer than k=%d (removals are not allowed)", g.first, u, s.unitName(), k)}
}

// compareRows is compare's check, with persons, of the rows alone, as someone
// holding both files sees them (a person's row that left and another's equal row that
// came cancel out there): the rows added number 0 or at least k and meet the models
// on their own, and the rows removed number 0 or at least k unless removals are
// allowed.
func (s *SeriesCounter) compareRows(i int, b *seriesBuild, prev []byte, refs []*closeness.PersonsReference) error {
	addedIdx, removed := s.diffPrefix(b.entries, prev, seriesDigestBytes)
	k := s.spec.K
	switch n := len(addedIdx); {
	case n > 0 && n < k:
		return &Violation{Msg: fmt.Sprintf("series: tonight's class %d (in label order, from 0) adds %d rows as the two files show them (rows alone), fewer than k=%d", i, n, k)}
	case n > 0:
		if merr := s.addedModels(b, addedIdx, refs); merr != nil {
			v, ok := merr.(*Violation)
			if !ok {
				return merr
			}
			return &Violation{Msg: fmt.Sprintf("series: tonight's class %d (in label order, from 0): the %d rows it adds as the two files show them, on their own: %s", i, n, v.Msg)}
		}
	}
	if n := len(removed) / s.width; n > 0 && n < k && !s.sc.RemovalsAllowed {
		return &Violation{Msg: fmt.Sprintf("series: tonight's class %d (in label order, from 0) removes %d rows as the two files show them (rows alone), fewer than k=%d (removals are not allowed)", i, n, k)}
	}
	return nil
}

// diff compares tonight's sorted entries t with the previous ones p: the entries
// added (t − p, as a multiset: their indexes in t) and removed (p − t).
func (s *SeriesCounter) diff(t, p []byte) (addedIdx []int32, removed []byte) {
	return s.diffPrefix(t, p, s.width)
}

// diffPrefix is diff comparing the first n bytes of each entry.
func (s *SeriesCounter) diffPrefix(t, p []byte, n int) (addedIdx []int32, removed []byte) {
	w := s.width
	a, b := 0, 0
	for a < len(t) || b < len(p) {
		c := 0
		switch {
		case b >= len(p):
			c = -1
		case a >= len(t):
			c = 1
		default:
			c = bytes.Compare(t[a:a+n], p[b:b+n])
		}
		switch {
		case c < 0:
			addedIdx = append(addedIdx, int32(a/w))
			a += w
		case c > 0:
			removed = append(removed, p[b:b+w]...)
			b += w
		default:
			a, b = a+w, b+w
		}
	}
	return addedIdx, removed
}

// units is the units of the entries of e at indexes idx (nil: all of them):
// entries, or with persons their distinct persons.
func (s *SeriesCounter) units(e []byte, idx []int32) int {
	w := s.width
	if w == seriesEntryRows && idx == nil {
		return len(e) / w
	}
	if w == seriesEntryRows {
		return len(idx)
	}
	type person struct{ hi, lo uint64 }
	n := len(idx)
	if idx == nil {
		n = len(e) / w
	}
	ps := make([]person, 0, n)
	for i := range n {
		at := i * w
		if idx != nil {
			at = int(idx[i]) * w
		}
		d := e[at+seriesDigestBytes : at+w]
		ps = append(ps, person{binary.BigEndian.Uint64(d), binary.BigEndian.Uint64(d[8:])})
	}
	slices.SortFunc(ps, func(a, b person) int {
		if a.hi != b.hi {
			return cmp.Compare(a.hi, b.hi)
		}
		return cmp.Compare(a.lo, b.lo)
	})
	return len(slices.Compact(ps))
}

// unitName is what units counts.
func (s *SeriesCounter) unitName() string {
	if s.width == seriesEntryPerson {
		return "persons"
	}
	return "records"
}

// addedModels checks the sensitive models on the entries of b added tonight (their
// indexes idx), as the Counter checks a class: in records, or in persons.
func (s *SeriesCounter) addedModels(b *seriesBuild, idx []int32, refs []*closeness.PersonsReference) error {
	ns := len(s.spos)
	for i, sv := range s.spec.Sensitive {
		if s.mac == nil {
			h := map[int32]int64{}
			for _, a := range idx {
				h[b.sens[int(a)*ns+i]]++
			}
			if _, err := checkSensitive(sv, []map[int32]int64{h}); err != nil {
				return err
			}
			continue
		}
		rows := make([]personRow, 0, len(idx))
		for _, a := range idx {
			at := int(a)*s.width + seriesDigestBytes
			rows = append(rows, personRow{h: binary.BigEndian.Uint64(b.entries[at:]), s: b.sens[int(a)*ns+i]})
		}
		if err := sortByClass(rows); err != nil {
			return err
		}
		cj := classJudge{spec: s.spec, col: i, sc: sv, ref: refs[i], first: true}
		var bad *personFailure
		eachClass(rows, len(sv.Values), func(_ int32, n int64, vals []int32, holders []int64) bool {
			bad = cj.class(n, vals, holders)
			return false
		})
		if bad != nil {
			return &Violation{Msg: fmt.Sprintf("of %d persons it %s", bad.persons, bad.why(s.spec))}
		}
	}
	return nil
}
