package verify

// Persons: with a privacy unit (Spec.Unit) every model counts persons, not records. A
// class holds records of at least K distinct persons; a sensitive value's share of a
// class is the share of the class's persons who have a record in the class holding it
// (diversity.PersonsHold). The persons come from the input's unit column, read beside
// the release by the truthfulness walk (or from the input alone, ExpectedSuppression);
// the release never holds them.
//
// Memory. A person is kept as a 64-bit hash of its id (hash/maphash, a seed drawn per
// count), never as the id: per record, one (class, person, value) triple of 16 bytes
// per protected sensitive column (one triple when there is none), and 8 bytes per
// input record left out; at the end the triples are sorted and deduplicated, on two
// goroutines when they are many. No id string is kept.
//
// Collisions. Two persons whose ids hash alike count as one. For k and for every
// person count measured that only makes the counts smaller: a class is found with
// fewer persons than it has, never more, so the check of k fails closed. For
// l-diversity counted in persons it is not so: two colliding persons of one class who
// both hold a value lower both the class's persons and the value's holders by one,
// which can pass a class that fails (l=2: 2 of 3 persons fail, 1 of 2 passes). The
// chance of any collision among P persons is at most P²/2⁶⁵ per count (about 1e-7
// for two million persons), over a seed no input can aim at.

import (
	"cmp"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"

	"sanitizer/diversity"
	"sanitizer/fault"
	"sanitizer/internal/safe"
	"sanitizer/risk"
)

// PersonsMeasured is what a release holds counted in persons (Spec.Unit).
type PersonsMeasured struct {
	InputPersons int // distinct persons among the input records read
	Released     int // persons with at least one record released
	MinClass     int // smallest published class in persons (the measured k); 0 when nothing is released
	// InSeveralClasses is the released persons whose released records lie in more
	// than one class.
	InSeveralClasses int
	LostSome         int // persons with at least one record suppressed
	LostAll          int // persons all of whose records were suppressed
	// Sizes is the published classes' sizes in persons (as Measured.Sizes is in
	// records).
	Sizes risk.Distribution
	// Sensitive is, per sensitive column of the spec (in order), the weakest class
	// counted in persons.
	Sensitive []PersonsSensitive
}

// PersonsSensitive is what the published classes hold on one sensitive column,
// counted in persons.
type PersonsSensitive struct {
	Column string
	// MinL is the smallest, over the published classes, of the class's persons over
	// the most persons holding one value (diversity.PersonsL): the largest l every
	// class meets in persons.
	MinL float64
}

// checkUnitModels reports the models of spec that have no person-level meaning in
// this version, when spec names a privacy unit: only k, distinct l-diversity and the
// highest re-identification risk (1 / the persons of the smallest class) are counted
// in persons.
func checkUnitModels(spec Spec) error {
	if spec.Unit == "" {
		return nil
	}
	for _, sc := range spec.Sensitive {
		for _, d := range sc.Diversity {
			if d.Variant != diversity.Distinct {
				return fmt.Errorf("privacy unit %q: person-level %s l-diversity (on %q) is not in this version", spec.Unit, d.Variant, sc.Column)
			}
		}
		if len(sc.Closeness) > 0 {
			return fmt.Errorf("privacy unit %q: person-level t-closeness (on %q) is not in this version", spec.Unit, sc.Column)
		}
		if len(sc.Likeness) > 0 {
			return fmt.Errorf("privacy unit %q: person-level β-likeness (on %q) is not in this version", spec.Unit, sc.Column)
		}
	}
	r := spec.Risk
	switch {
	case r.AverageRisk > 0:
		return fmt.Errorf("privacy unit %q: person-level average re-identification risk is not in this version", spec.Unit)
	case r.AtRiskThreshold > 0:
		return fmt.Errorf("privacy unit %q: a person-level share of records at risk is not in this version", spec.Unit)
	case r.Uniqueness != nil:
		return fmt.Errorf("privacy unit %q: person-level population uniqueness is not in this version", spec.Unit)
	case spec.Population != nil:
		return fmt.Errorf("privacy unit %q: person-level δ-presence and k-map are not in this version", spec.Unit)
	}
	return nil
}

// errNoPerson reports a release record counted in persons without the input record
// it generalizes.
var errNoPerson = errors.New("privacy unit: a release record was counted without the input record it generalizes")

// personRow is one record counted in persons: its class, its person's hash and its
// value of one sensitive column (0 when there is none). 16 bytes.
type personRow struct {
	h uint64
	c int32
	s int32
}

// byClass orders personRows by class, person, value.
func byClass(a, b personRow) int {
	if a.c != b.c {
		return cmp.Compare(a.c, b.c)
	}
	if a.h != b.h {
		return cmp.Compare(a.h, b.h)
	}
	return cmp.Compare(a.s, b.s)
}

// byPerson orders personRows by person, class.
func byPerson(a, b personRow) int {
	if a.h != b.h {
		return cmp.Compare(a.h, b.h)
	}
	return cmp.Compare(a.c, b.c)
}

// personTally is the records of a count in persons.
type personTally struct {
	seed maphash.Seed
	// rows[i]: every record counted, with its value of sensitive column i (one
	// slice when there is no sensitive column)
	rows [][]personRow
	left []uint64 // the person of every input record left out
}

// newPersonTally is a tally for ns sensitive columns, room made for about n records
// (n ≤ 0: none).
func newPersonTally(ns, n int) *personTally {
	t := &personTally{seed: maphash.MakeSeed(), rows: make([][]personRow, max(ns, 1))}
	if n > 0 {
		for i := range t.rows {
			t.rows[i] = make([]personRow, 0, n)
		}
	}
	return t
}

// person is the hash that stands for the person of id.
func (t *personTally) person(id string) uint64 { return maphash.String(t.seed, id) }

// add counts a record of class c and person h, its sensitive values given by sens
// (one per column).
func (t *personTally) add(c int32, h uint64, sens []int32) {
	if len(sens) == 0 {
		t.rows[0] = append(t.rows[0], personRow{h: h, c: c})
		return
	}
	for i, s := range sens {
		t.rows[i] = append(t.rows[i], personRow{h: h, c: c, s: s})
	}
}

// parallelMin is the fewest records sorted in buckets, on two goroutines.
const parallelMin = 1 << 16

// maxBuckets is the most buckets bucketSort places records in: their counts and
// the records' places stay in the processor's caches.
const maxBuckets = 1 << 11

// bucketSort sorts rs by order, bucket(r) < n numbering every record's bucket in
// order's order (a record of a lower bucket orders first). It moves every record
// into its bucket in place (American flag sort: one pass to count them, then each
// record moved once; buckets taken maxBuckets at most, neighbours merged), then
// sorts each bucket, the buckets shared between two goroutines. Few records it sorts
// as a whole.
func bucketSort(rs []personRow, n int, bucket func(personRow) int, order func(a, b personRow) int) error {
	if len(rs) < parallelMin {
		slices.SortFunc(rs, order)
		return nil
	}
	shift := 0
	for (n-1)>>shift >= maxBuckets {
		shift++
	}
	n = (n-1)>>shift + 1
	var ends, next [maxBuckets]int
	for _, r := range rs {
		ends[bucket(r)>>shift]++
	}
	sum := 0
	for b, c := range ends[:n] {
		next[b] = sum
		sum += c
		ends[b] = sum
	}
	for b := range n {
		for next[b] < ends[b] {
			i := next[b]
			d := bucket(rs[i]) >> shift
			if d == b {
				next[b]++
				continue
			}
			rs[i], rs[next[d]] = rs[next[d]], rs[i]
			next[d]++
		}
	}
	mid, _ := slices.BinarySearch(ends[:n], len(rs)/2) // the bucket that holds the middle record
	parts := [2][2]int{{0, mid}, {mid, n}}
	return safe.Parallel(2, func(p int) {
		for b := parts[p][0]; b < parts[p][1]; b++ {
			lo := 0
			if b > 0 {
				lo = ends[b-1]
			}
			slices.SortFunc(rs[lo:ends[b]], order)
		}
	})
}

// sortByClass sorts rs by class, person and value; classes is the number of classes.
func sortByClass(rs []personRow, classes int) error {
	return bucketSort(rs, classes, func(r personRow) int { return int(r.c) }, byClass)
}

// sortByPerson sorts rs by person, class: its buckets are the hashes' top bits.
func sortByPerson(rs []personRow) error {
	const b = 11 // maxBuckets
	return bucketSort(rs, 1<<b, func(r personRow) int { return int(r.h >> (64 - b)) }, byPerson)
}

// classVisit is called by eachClass with a class's number, its persons and, per
// value its records hold, the persons holding it (nonzero, in no order); it returns
// false to stop.
type classVisit func(c int32, persons int64, holders []int64) bool

// eachClass calls visit for every class of rs, sorted by class, person and value,
// whose values are numbered below values.
func eachClass(rs []personRow, values int, visit classVisit) {
	dense := make([]int64, max(values, 1))
	var held []int32 // the values counted in dense
	var holders []int64
	for i := 0; i < len(rs); {
		c := rs[i].c
		var persons int64
		for ; i < len(rs) && rs[i].c == c; i++ {
			r := rs[i]
			if i == 0 || rs[i-1].c != c || rs[i-1].h != r.h {
				persons++
			}
			if i > 0 && rs[i-1].c == c && rs[i-1].h == r.h && rs[i-1].s == r.s {
				continue // the person holds the value already
			}
			if dense[r.s] == 0 {
				held = append(held, r.s)
			}
			dense[r.s]++
		}
		holders = holders[:0]
		for _, s := range held {
			holders = append(holders, dense[s])
			dense[s] = 0
		}
		held = held[:0]
		if !visit(c, persons, holders) {
			return
		}
	}
}

// personFailure is a class that fails a model counted in persons.
type personFailure struct {
	class   int32
	persons int64
	col     int // the sensitive column whose l-diversity it fails; -1: k
	model   diversity.Model
}

// judge sorts the tally's records and decides every class of it (classes: their
// number) against spec: persons gets each class's persons (all of them, whatever
// fails), minL per sensitive column the smallest diversity.PersonsL of a class, and
// fail is called with each class that fails k or a column's l-diversity in persons
// (once per class: the first model it fails, k first), until it returns false.
func (t *personTally) judge(spec Spec, classes int, fail func(personFailure) bool) (persons []int64, minL []float64, err error) {
	persons = make([]int64, classes)
	minL = make([]float64, len(spec.Sensitive))
	failed := make([]bool, classes)
	more := true
	for i, rs := range t.rows {
		if err := sortByClass(rs, classes); err != nil {
			return nil, nil, err
		}
		values, first := 1, true
		var sc Sensitive
		if i < len(spec.Sensitive) {
			sc = spec.Sensitive[i]
			values = len(sc.Values)
		}
		eachClass(rs, values, func(c int32, n int64, holders []int64) bool {
			if i == 0 {
				persons[c] = n
				if more && n < int64(spec.K) && !failed[c] {
					failed[c], more = true, fail(personFailure{class: c, persons: n, col: -1})
				}
			}
			if i < len(spec.Sensitive) {
				if l := diversity.PersonsL(n, holders); first || l < minL[i] {
					minL[i], first = l, false
				}
				for _, d := range sc.Diversity {
					if more && !failed[c] && !diversity.PersonsHold(d.L, n, holders) {
						failed[c], more = true, fail(personFailure{class: c, persons: n, col: i, model: d})
					}
				}
			}
			return more || i == 0 // the persons of every class, whatever fails
		})
		if !more {
			break
		}
	}
	return persons, minL, nil
}

// spread measures how the persons of a finished count lie: rs is the records of the
// published classes sorted by class and person (t.rows[0] once judged), which it
// reorders. It sets every field of pm but MinClass, Sizes and Sensitive.
func (t *personTally) spread(rs []personRow, pm *PersonsMeasured) error {
	// one record per class and person, then ordered by person
	rs = slices.CompactFunc(rs, func(a, b personRow) bool { return a.c == b.c && a.h == b.h })
	if err := sortByPerson(rs); err != nil {
		return err
	}
	slices.Sort(t.left)
	left := slices.Compact(t.left)
	pm.LostSome = len(left)
	k := 0 // the persons left out, walked beside the released
	for i := 0; i < len(rs); {
		h, j := rs[i].h, i+1
		for j < len(rs) && rs[j].h == h {
			j++
		}
		pm.Released++
		if j-i > 1 {
			pm.InSeveralClasses++
		}
		for k < len(left) && left[k] < h {
			pm.LostAll++
			k++
		}
		if k < len(left) && left[k] == h {
			k++
		}
		i = j
	}
	pm.LostAll += len(left) - k
	pm.InputPersons = pm.Released + pm.LostAll
	return nil
}

// personCounter counts a release's classes in persons, for a Counter whose spec names
// a privacy unit.
type personCounter struct {
	tally *personTally
	first []int   // per class, the release record it first holds (1 the first)
	sens  []int32 // add's
}

// newPersonCounter is the person count of a release of spec.
func newPersonCounter(spec Spec) (*personCounter, error) {
	if err := checkUnitModels(spec); err != nil {
		return nil, err
	}
	return &personCounter{tally: newPersonTally(len(spec.Sensitive), spec.InputRows)}, nil
}

// count counts the records p staged (their classes in batch) and the persons of the
// records left out.
func (pc *personCounter) count(p *pending, batch []int32, ns int) {
	for r, k := range batch {
		for int(k) >= len(pc.first) {
			pc.first = append(pc.first, 0)
		}
		if pc.first[k] == 0 {
			pc.first[k] = p.first + r + 1
		}
		pc.sens = append(pc.sens[:0], p.sens[r*ns:(r+1)*ns]...)
		pc.tally.add(k, p.units[r], pc.sens)
	}
	pc.tally.left = append(pc.tally.left, p.leftUnits...)
}

// finish measures the published classes in persons into m.Persons and checks k and
// l-diversity counted in persons: a class that fails is a *Violation naming it by its
// number and first record, never by a value or an id.
func (pc *personCounter) finish(spec Spec, m *Measured, classes int) error {
	pm := &PersonsMeasured{}
	m.Persons = pm
	var bad *personFailure
	persons, minL, err := pc.tally.judge(spec, classes, func(f personFailure) bool { bad = &f; return false })
	if err != nil {
		return err
	}
	for i, sc := range spec.Sensitive {
		pm.Sensitive = append(pm.Sensitive, PersonsSensitive{Column: sc.Column, MinL: minL[i]})
	}
	for _, n := range persons {
		if pm.MinClass == 0 || int(n) < pm.MinClass {
			pm.MinClass = int(n)
		}
	}
	if pm.Sizes, err = risk.FromSizes(persons); err != nil {
		return fault.Internalf("%w", err)
	}
	if err := pc.tally.spread(pc.tally.rows[0], pm); err != nil {
		return err
	}
	pc.tally.rows = nil
	if bad == nil {
		return nil
	}
	where := fmt.Sprintf("class %d (its first record is release record %d)", bad.class+1, pc.first[bad.class])
	if bad.col < 0 {
		return &Violation{Msg: fmt.Sprintf("%s holds records of %d persons, k is %d", where, bad.persons, spec.K)}
	}
	return &Violation{Msg: fmt.Sprintf("%s of %d persons fails l-diversity counted in persons (l=%g) on %q: a value is held by more than %d/%g of its persons",
		where, bad.persons, bad.model.L, spec.Sensitive[bad.col].Column, bad.persons, bad.model.L)}
}
