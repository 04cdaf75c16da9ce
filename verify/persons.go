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
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"math/bits"
	"slices"

	"sanitizer/closeness"
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
	// Groups is, with linkable records (Spec.Linkable), the groups of released
	// persons with the same set of released classes, and MinGroup the persons of the
	// smallest (multirelational k-anonymity's measured k); 0 when the records are not
	// linkable or nothing is released.
	Groups, MinGroup int
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
	// MaxEMD is the largest t-closeness distance in persons of a class (the equal
	// distance: ½ Σ_v |b(v) − B(v)|, b(v) the share of the class's persons holding v,
	// B(v) the share of the input's persons, all of them, released or not), and
	// MaxGain the largest β-likeness gain (b(v) − B(v)) / B(v) of a value with
	// b(v) > B(v) (closeness.PersonsReference); both 0 unless the column has a
	// t-closeness or β-likeness requirement.
	MaxEMD, MaxGain float64
}

// checkUnitModels reports the models of spec that have no person-level meaning in
// this version, when spec names a privacy unit: k, distinct l-diversity, t-closeness
// under the equal distance, β-likeness, the highest re-identification risk (1 / the
// persons of the smallest class) and multirelational k-anonymity (Linkable) are
// counted in persons; linkable records and a pseudonym need a unit.
func checkUnitModels(spec Spec) error {
	if spec.Unit == "" {
		switch {
		case spec.Linkable:
			return errors.New("linkable records (multirelational k-anonymity) without a privacy unit")
		case spec.Pseudonym != nil:
			return fmt.Errorf("pseudonym column %q without a privacy unit", spec.Pseudonym.Column)
		}
		return nil
	}
	for _, sc := range spec.Sensitive {
		for _, d := range sc.Diversity {
			if d.Variant != diversity.Distinct {
				return fmt.Errorf("privacy unit %q: person-level %s l-diversity (on %q) is not in this version", spec.Unit, d.Variant, sc.Column)
			}
		}
		for _, c := range sc.Closeness {
			if c.Distance != closeness.Equal {
				return fmt.Errorf("privacy unit %q: person-level t-closeness under the %q distance (on %q) has no meaning in persons: only the equal distance is counted in persons", spec.Unit, c.Distance, sc.Column)
			}
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
	case spec.Profitability != nil:
		return fmt.Errorf("privacy unit %q: a person-level profitability (the game-theoretic model) is not in this version", spec.Unit)
	}
	return nil
}

// closeInPersons reports whether a sensitive column has a t-closeness or β-likeness
// requirement, which a count in persons measures against the input's persons
// (personTally.reference).
func closeInPersons(sc Sensitive) bool { return len(sc.Closeness)+len(sc.Likeness) > 0 }

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

// personTally is the records of a count in persons.
type personTally struct {
	seed maphash.Seed
	// rows[i]: every record counted, with its value of sensitive column i (one
	// slice when there is no sensitive column)
	rows [][]personRow
	left []uint64 // the person of every input record left out
	// lefts[i]: with a t-closeness or β-likeness requirement on sensitive column i,
	// the person and value of every input record left out (class -1), for the
	// input's persons holding each value (reference); nil otherwise
	lefts [][]personRow
	// byPerson: judge sorted rows[0] by person, class and value (no sensitive
	// column), not by class
	byPerson bool
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

// addLeft counts an input record left out, of person h, for the input's persons
// holding each value: sens its value of each sensitive column, kept for the columns
// of lefts.
func (t *personTally) addLeft(h uint64, sens []int32) {
	for i := range t.lefts {
		if t.lefts[i] != nil {
			t.lefts[i] = append(t.lefts[i], personRow{h: h, c: -1, s: sens[i]})
		}
	}
}

// The orders of personRows. A row is sorted as a 128-bit key of unsigned digits
// (keyed): each order's fields moved into it, most significant first, the signed
// ones' sign bit flipped so that unsigned order is theirs; the key is a bijection, so
// that the rows are put back whole (unkeyed).
type rowOrder int8

const (
	byClass       rowOrder = iota // class, person, value
	byPerson                      // person, class, value
	byPersonValue                 // person, value, class
)

// flip flips the sign bit of v: unsigned order of the results is v's signed order.
func flip(v int32) int32 { return v ^ math.MinInt32 }

// keyed turns r into its key of order o: r.h the key's top 64 bits, then r.c's 32
// bits, then r.s's, each unsigned.
func keyed(r personRow, o rowOrder) personRow {
	switch o {
	case byClass:
		return personRow{h: uint64(uint32(flip(r.c)))<<32 | r.h>>32, c: int32(uint32(r.h)), s: flip(r.s)}
	case byPersonValue:
		return personRow{h: r.h, c: flip(r.s), s: flip(r.c)}
	}
	return personRow{h: r.h, c: flip(r.c), s: flip(r.s)}
}

// unkeyed is the row whose key of order o is k.
func unkeyed(k personRow, o rowOrder) personRow {
	switch o {
	case byClass:
		return personRow{h: k.h<<32 | uint64(uint32(k.c)), c: flip(int32(k.h >> 32)), s: flip(k.s)}
	case byPersonValue:
		return personRow{h: k.h, c: flip(k.s), s: flip(k.c)}
	}
	return personRow{h: k.h, c: flip(k.c), s: flip(k.s)}
}

// keyLess orders keys (keyed rows) as unsigned 128-bit numbers.
func keyLess(a, b personRow) bool {
	if a.h != b.h {
		return a.h < b.h
	}
	if a.c != b.c {
		return uint32(a.c) < uint32(b.c)
	}
	return uint32(a.s) < uint32(b.s)
}

// digit is byte d (0 the most significant, below 16) of key k.
func digit(k personRow, d int) int {
	if d < 8 {
		return int(k.h >> (56 - 8*d) & 0xff)
	}
	if d < 12 {
		return int(uint32(k.c) >> (88 - 8*d) & 0xff)
	}
	return int(uint32(k.s) >> (120 - 8*d) & 0xff)
}

// parallelMin is the fewest records sorted on two goroutines.
const parallelMin = 1 << 16

// insertionMax is the most keys radixSort sorts by insertion.
const insertionMax = 32

// sortRows sorts rs by order o: a radix sort of the rows' keys (keyed), most
// significant byte first, in place (American flag sort: one pass to count a byte's
// values, then each row moved once into its bucket), skipping a byte that every row
// of a bucket holds alike. Many rows are keyed, and their top buckets sorted, on two
// goroutines.
func sortRows(rs []personRow, o rowOrder) error {
	if len(rs) < parallelMin {
		keyAll(rs, o)
		radixSort(rs, firstDigit(rs))
		unkeyAll(rs, o)
		return nil
	}
	half := len(rs) / 2
	halves := [2][]personRow{rs[:half], rs[half:]}
	if err := safe.Parallel(2, func(p int) { keyAll(halves[p], o) }); err != nil {
		return err
	}
	var ends [256]int
	d := firstDigit(rs)
	if d < 16 {
		ends = countDigit(rs, d)
		placeDigit(rs, d, &ends)
	} else {
		ends[255] = len(rs) // one bucket
	}
	mid, _ := slices.BinarySearch(ends[:], half) // the bucket that holds the middle row
	return safe.Parallel(2, func(p int) {
		from, to := 0, mid // the buckets of this goroutine
		if p == 1 {
			from, to = mid, 256
		}
		start := 0
		if from > 0 {
			start = ends[from-1]
		}
		lo := start
		for b := from; b < to; b++ {
			radixSort(rs[lo:ends[b]], d+1)
			lo = ends[b]
		}
		unkeyAll(rs[start:lo], o)
	})
}

// keyAll turns every row of rs into its key of order o.
func keyAll(rs []personRow, o rowOrder) {
	for i, r := range rs {
		rs[i] = keyed(r, o)
	}
}

// unkeyAll turns every key of rs (of order o) back into its row.
func unkeyAll(rs []personRow, o rowOrder) {
	for i, k := range rs {
		rs[i] = unkeyed(k, o)
	}
}

// firstDigit is the most significant byte that some two keys of ks differ in; 16
// when they are all equal.
func firstDigit(ks []personRow) int {
	if len(ks) == 0 {
		return 16
	}
	var dh uint64
	var dc, ds uint32
	k0 := ks[0]
	for _, k := range ks {
		dh |= k.h ^ k0.h
		dc |= uint32(k.c ^ k0.c)
		ds |= uint32(k.s ^ k0.s)
	}
	switch {
	case dh != 0:
		return bits.LeadingZeros64(dh) / 8
	case dc != 0:
		return 8 + bits.LeadingZeros32(dc)/8
	case ds != 0:
		return 12 + bits.LeadingZeros32(ds)/8
	}
	return 16
}

// countDigit returns where each bucket of byte d of keys ks would end, the buckets in
// order.
func countDigit(ks []personRow, d int) (ends [256]int) {
	for _, k := range ks {
		ends[digit(k, d)]++
	}
	sum := 0
	for b, c := range ends {
		sum += c
		ends[b] = sum
	}
	return ends
}

// placeDigit moves every key of ks into the bucket of its byte d, given where each
// bucket ends (countDigit's).
func placeDigit(ks []personRow, d int, ends *[256]int) {
	var next [256]int
	for b := 1; b < 256; b++ {
		next[b] = ends[b-1]
	}
	for b := range 256 {
		for next[b] < ends[b] {
			i := next[b]
			k := ks[i]
			t := digit(k, d)
			if t == b {
				next[b]++
				continue
			}
			ks[i], ks[next[t]] = ks[next[t]], k
			next[t]++
		}
	}
}

// radixSort sorts keys ks that are equal in their bytes before d.
func radixSort(ks []personRow, d int) {
	for ; len(ks) > insertionMax && d < 16; d++ {
		ends := countDigit(ks, d)
		if b := digit(ks[0], d); ends[b]-bucketStart(&ends, b) == len(ks) {
			continue // every key holds byte d alike
		}
		placeDigit(ks, d, &ends)
		lo := 0
		for _, hi := range ends {
			if hi-lo > 1 {
				radixSort(ks[lo:hi], d+1)
			}
			lo = hi
		}
		return
	}
	if d < 16 {
		insertionSort(ks)
	}
}

// bucketStart is where bucket b starts, given where each bucket ends.
func bucketStart(ends *[256]int, b int) int {
	if b == 0 {
		return 0
	}
	return ends[b-1]
}

// insertionSort sorts a few keys.
func insertionSort(ks []personRow) {
	for i := 1; i < len(ks); i++ {
		k := ks[i]
		j := i
		for ; j > 0 && keyLess(k, ks[j-1]); j-- {
			ks[j] = ks[j-1]
		}
		ks[j] = k
	}
}

// sortByClass sorts rs by class, person and value.
func sortByClass(rs []personRow) error { return sortRows(rs, byClass) }

// sortByPerson sorts rs by person, class and value.
func sortByPerson(rs []personRow) error { return sortRows(rs, byPerson) }

// sortByPersonValue sorts rs by person, value, class.
func sortByPersonValue(rs []personRow) error { return sortRows(rs, byPersonValue) }

// keepLefts makes the tally keep the values of the input records left out for
// every sensitive column of spec that is measured against the input's persons.
func (t *personTally) keepLefts(spec Spec) {
	t.lefts = make([][]personRow, len(spec.Sensitive))
	for i, sc := range spec.Sensitive {
		if closeInPersons(sc) {
			t.lefts[i] = []personRow{}
		}
	}
}

// needsLefts reports whether the tally keeps the values of the records left out.
func (t *personTally) needsLefts() bool {
	return slices.ContainsFunc(t.lefts, func(l []personRow) bool { return l != nil })
}

// reference is the input's persons holding each value of sensitive column i (values
// numbered below values): the distinct persons among every record counted, released
// (rows[i]) or left out (lefts[i]), which it reorders; nil when there are none.
func (t *personTally) reference(i, values int) (*closeness.PersonsReference, error) {
	rs, left := t.rows[i], t.lefts[i]
	if err := sortByPersonValue(rs); err != nil {
		return nil, err
	}
	if err := sortByPersonValue(left); err != nil {
		return nil, err
	}
	holders := make([]int64, values)
	var persons int64
	var last personRow
	for a, b, n := 0, 0, 0; a < len(rs) || b < len(left); n++ {
		var r personRow
		if b >= len(left) || (a < len(rs) && !keyLess(keyed(left[b], byPersonValue), keyed(rs[a], byPersonValue))) {
			r, a = rs[a], a+1
		} else {
			r, b = left[b], b+1
		}
		if n == 0 || r.h != last.h {
			persons++
		}
		if n == 0 || r.h != last.h || r.s != last.s {
			holders[r.s]++
		}
		last = r
	}
	if persons == 0 {
		return nil, nil
	}
	ref, err := closeness.NewPersonsReference(holders, persons)
	if err != nil {
		return nil, fault.Internalf("the input's persons holding each value: %w", err)
	}
	return ref, nil
}

// classVisit is called by eachClass with a class's number, its persons and the
// values its records hold (in no order) with, per value, the persons holding it
// (nonzero); it returns false to stop.
type classVisit func(c int32, persons int64, vals []int32, holders []int64) bool

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
		if !visit(c, persons, held, holders) {
			return
		}
		held = held[:0]
	}
}

// failKind is the model a class fails counted in persons.
type failKind int8

// The models counted in persons, class by class.
const (
	failK     failKind = iota // k: too few persons
	failL                     // distinct l-diversity
	failT                     // t-closeness, equal distance
	failBeta                  // β-likeness
	failGroup                 // multirelational k: its persons left too few (ExpectedSuppression)
)

// personFailure is a class that fails a model counted in persons.
type personFailure struct {
	class   int32
	persons int64
	kind    failKind
	col     int             // the sensitive column of failL, failT, failBeta
	model   diversity.Model // failL's
	bound   float64         // failT's t, failBeta's β
	measure float64         // failT's distance, failBeta's gain
}

// why says what the class fails, after "a class of N persons that" or the like:
// its counts and the model's bounds, never a value.
func (f personFailure) why(spec Spec) string {
	switch f.kind {
	case failL:
		return fmt.Sprintf("fails l-diversity counted in persons (l=%g) on %q: a value is held by more than %d/%g of its persons", f.model.L, spec.Sensitive[f.col].Column, f.persons, f.model.L)
	case failT:
		return fmt.Sprintf("lies at distance %.4g in persons (the shares of its persons and of the input's holding each value of %q), t is %g", f.measure, spec.Sensitive[f.col].Column, f.bound)
	case failBeta:
		return fmt.Sprintf("fails β-likeness counted in persons (β=%g) on %q: the share of its persons holding a value gains %.4g over the input's", f.bound, spec.Sensitive[f.col].Column, f.measure)
	case failGroup:
		return fmt.Sprintf("is left with %d persons once the persons of groups under k are suppressed (multirelational k-anonymity), k is %d", f.persons, linkedK(spec))
	}
	return fmt.Sprintf("holds records of %d persons, k is %d", f.persons, spec.K)
}

// judge sorts the tally's records (t.rows[0] by class, person and value; with no
// sensitive column by person, class and value) and decides every class of it
// (classes: their number) against spec: persons gets each class's persons (all of
// them, whatever fails), sens per sensitive column what the weakest class holds, and
// fail is called with each class that fails k, or a column's l-diversity,
// t-closeness or β-likeness in persons (once per class: the first model it fails, k
// first), until it returns false.
func (t *personTally) judge(spec Spec, classes int, fail func(personFailure) bool) (persons []int64, sens []PersonsSensitive, err error) {
	persons = make([]int64, classes)
	if len(t.rows) == 1 && len(spec.Sensitive) == 0 {
		return persons, nil, t.judgeK(spec, persons, fail)
	}
	failed := make([]bool, classes)
	more := true
	for i, rs := range t.rows {
		cj := classJudge{spec: spec, col: i, first: true}
		values := 1
		if i < len(spec.Sensitive) {
			cj.sc = spec.Sensitive[i]
			values = len(cj.sc.Values)
			if t.lefts != nil && t.lefts[i] != nil {
				if cj.ref, err = t.reference(i, values); err != nil {
					return nil, nil, err
				}
			}
		}
		if err := sortByClass(rs); err != nil {
			return nil, nil, err
		}
		eachClass(rs, values, func(c int32, n int64, vals []int32, holders []int64) bool {
			if i == 0 {
				persons[c] = n
				if more && n < int64(spec.K) && !failed[c] {
					failed[c], more = true, fail(personFailure{class: c, persons: n, kind: failK})
				}
			}
			if i < len(spec.Sensitive) {
				if f := cj.class(n, vals, holders); f != nil && more && !failed[c] {
					f.class = c
					failed[c], more = true, fail(*f)
				}
			}
			return more || i == 0 // the persons of every class, whatever fails
		})
		if i < len(spec.Sensitive) {
			sens = append(sens, cj.m)
		}
		if !more {
			break
		}
	}
	for len(sens) < len(spec.Sensitive) { // the count stopped at a failing class
		sens = append(sens, PersonsSensitive{Column: spec.Sensitive[len(sens)].Column})
	}
	return persons, sens, nil
}

// judgeK is judge with no sensitive column: it sorts the records by person (which
// spread then needs) rather than by class, and counts each class's persons as its
// distinct pairs of a class and a person.
func (t *personTally) judgeK(spec Spec, persons []int64, fail func(personFailure) bool) error {
	rs := t.rows[0]
	if err := sortByPerson(rs); err != nil {
		return err
	}
	t.byPerson = true
	for i, r := range rs {
		if i == 0 || r.h != rs[i-1].h || r.c != rs[i-1].c {
			persons[r.c]++
		}
	}
	for c, n := range persons {
		if n > 0 && n < int64(spec.K) && !fail(personFailure{class: int32(c), persons: n, kind: failK}) {
			break
		}
	}
	return nil
}

// classJudge decides the classes of one sensitive column counted in persons, and
// measures the weakest.
type classJudge struct {
	spec  Spec
	col   int
	sc    Sensitive
	ref   *closeness.PersonsReference // nil: no t-closeness or β-likeness requirement
	m     PersonsSensitive
	first bool
	hold  []int32 // holders, for the closeness functions
}

// class measures a class of n persons whose values vals are held by holders persons
// each, and returns the first model of the column it fails (nil: none).
func (cj *classJudge) class(n int64, vals []int32, holders []int64) *personFailure {
	cj.m.Column = cj.sc.Column
	if l := diversity.PersonsL(n, holders); cj.first || l < cj.m.MinL {
		cj.m.MinL, cj.first = l, false
	}
	var bad *personFailure
	for _, d := range cj.sc.Diversity {
		if bad == nil && !diversity.PersonsHold(d.L, n, holders) {
			bad = &personFailure{persons: n, kind: failL, col: cj.col, model: d}
		}
	}
	if cj.ref == nil {
		return bad
	}
	cj.hold = cj.hold[:0]
	for _, h := range holders {
		cj.hold = append(cj.hold, int32(h))
	}
	d, g := cj.ref.Equal(vals, cj.hold, n), cj.ref.MaxGain(vals, cj.hold, n)
	cj.m.MaxEMD, cj.m.MaxGain = max(cj.m.MaxEMD, d), max(cj.m.MaxGain, g)
	for _, t := range cj.sc.Closeness {
		if bad == nil && d > t.T {
			bad = &personFailure{persons: n, kind: failT, col: cj.col, bound: t.T, measure: d}
		}
	}
	for _, l := range cj.sc.Likeness {
		if bad == nil && !cj.ref.Likeness(vals, cj.hold, n, l.Beta, l.Enhanced) {
			bad = &personFailure{persons: n, kind: failBeta, col: cj.col, bound: l.Beta, measure: g}
		}
	}
	return bad
}

// spread measures how the persons of a finished count lie: rs is the records of the
// published classes sorted by class and person, or by person and class
// (t.rows[0] once judged: t.byPerson), which it reorders. It sets every field of pm
// but MinClass, Sizes, Sensitive and the groups, and returns rs's (class, person)
// pairs, one each, sorted by person and class.
func (t *personTally) spread(rs []personRow, pm *PersonsMeasured) ([]personRow, error) {
	// one record per class and person, then ordered by person
	rs = slices.CompactFunc(rs, func(a, b personRow) bool { return a.c == b.c && a.h == b.h })
	if !t.byPerson {
		if err := sortByPerson(rs); err != nil {
			return nil, err
		}
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
	return rs, nil
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
	pc := &personCounter{tally: newPersonTally(len(spec.Sensitive), spec.InputRows)}
	pc.tally.keepLefts(spec)
	return pc, nil
}

// count counts the records p staged (their classes in batch) and the persons (and,
// when kept, the values) of the records left out.
func (pc *personCounter) count(p *pending, batch []int32, ns int) {
	for r, k := range batch {
		for int(k) >= len(pc.first) {
			pc.first = append(pc.first, 0)
		}
		if pc.first[k] == 0 {
			pc.first[k] = p.first + r + 1
		}
		if ns == 0 { // add's, without its loop
			pc.tally.rows[0] = append(pc.tally.rows[0], personRow{h: p.units[r], c: k})
			continue
		}
		pc.sens = append(pc.sens[:0], p.sens[r*ns:(r+1)*ns]...)
		pc.tally.add(k, p.units[r], pc.sens)
	}
	pc.tally.left = append(pc.tally.left, p.leftUnits...)
	if len(p.leftSens) > 0 {
		for r, h := range p.leftUnits {
			pc.tally.addLeft(h, p.leftSens[r*ns:(r+1)*ns])
		}
	}
}

// finish measures the published classes in persons into m.Persons and checks the
// models counted in persons (k, distinct l-diversity, t-closeness, β-likeness, and
// multirelational k-anonymity with linkable records): a class that fails is a
// *Violation naming it by its number and first record, never by a value or an id.
func (pc *personCounter) finish(spec Spec, m *Measured, classes int) error {
	pm := &PersonsMeasured{}
	m.Persons = pm
	var bad *personFailure
	persons, sens, err := pc.tally.judge(spec, classes, func(f personFailure) bool { bad = &f; return false })
	if err != nil {
		return err
	}
	pm.Sensitive = sens
	for _, n := range persons {
		if pm.MinClass == 0 || int(n) < pm.MinClass {
			pm.MinClass = int(n)
		}
	}
	if pm.Sizes, err = risk.FromSizes(persons); err != nil {
		return fault.Internalf("%w", err)
	}
	pairs, err := pc.tally.spread(pc.tally.rows[0], pm)
	if err != nil {
		return err
	}
	pc.tally.rows, pc.tally.lefts = nil, nil
	var small *groupFailure
	if spec.Linkable {
		if pm.Groups, pm.MinGroup, small, err = releasedGroups(pairs, linkedK(spec)); err != nil {
			return err
		}
	}
	where := func(c int32) string {
		return fmt.Sprintf("class %d (its first record is release record %d)", c+1, pc.first[c])
	}
	switch {
	case bad != nil && bad.kind == failK:
		return &Violation{Msg: where(bad.class) + " " + bad.why(spec)}
	case bad != nil:
		return &Violation{Msg: fmt.Sprintf("%s of %d persons %s", where(bad.class), bad.persons, bad.why(spec))}
	case small != nil:
		return &Violation{Msg: fmt.Sprintf("%d released persons share one set of %d released classes (the first %s), k is %d: multirelational k-anonymity fails, their records being linkable",
			small.persons, small.classes, where(small.first), linkedK(spec))}
	}
	return nil
}
