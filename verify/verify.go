// Package verify re-checks a written release from its strings alone. It shares no
// code with the search: it does not know the search's hierarchies, codes, lattices or
// the chosen node, only what a recipient of the file, its input and its configuration
// could count; what a released value covers it re-derives from the value formats and
// the configuration's hierarchy files (truth.go, utility.go). It decides l-diversity
// and t-closeness with the same pure functions as the search (packages diversity and
// closeness) on histograms it counts itself. With a privacy unit (Spec.Unit) it counts
// the models in persons, read from the input beside the release (persons.go).
//
// It imports, of this module, only schema (column types), fault (the error kinds), the
// models' arithmetic (diversity, closeness, risk) and internal/safe: never generalize
// or table, whose code it checks, nor anything above them (docs/design.md's package
// table). It reads files with its own decoders (CSV, Parquet, Arrow IPC).
package verify

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"sync/atomic"

	"sanitizer/closeness"
	"sanitizer/diversity"
	"sanitizer/fault"
	"sanitizer/internal/safe"
	"sanitizer/risk"
)

// Spec is what a release of a given input must satisfy.
type Spec struct {
	K             int      // every published class has at least K records
	MaxSuppressed int      // at most this many input records may be missing
	InputRows     int      // records of the input
	Columns       []string // the release's header, in order
	Quasi         []string // the quasi-identifier columns (a subset of Columns)
	Sensitive     []Sensitive
	// Utility, when set (one entry per quasi-identifier, in Quasi's order), makes a
	// Counter measure loss, NCP and non-uniform entropy too: it then needs, with every
	// release record, the input record it generalizes (AddMatched), and every input
	// record the release leaves out (AddSuppressed).
	Utility []Quasi
	// Risk is the risk-based models the published classes must meet.
	Risk Risk
	// FullDomain says that every quasi-identifier is generalized to one level of its
	// hierarchy across the whole release (the optimal search), which decides the level
	// of a hierarchy value that several levels write alike.
	FullDomain bool
	// Population, when set, is the research subset's population: the input records
	// read are the subset's, and a class also fails when its population count breaks
	// δ-presence or k-map.
	Population *PopulationCheck
	// Profitability, when set, is the game-theoretic model with an attack, which every
	// released class must meet (profit.go); it needs Utility, whose domains count the
	// leaves a released value covers. A Counter decides the prosecutor's form (and
	// measures Measured.LeastPayout); the journalist's (Journalist) needs the
	// population's counts: ExpectedSuppression decides it with Population, and
	// CheckPopulation with Population.Profitability.
	Profitability *Profitability
	// Released names the columns the release holds as they are (insensitive columns,
	// and sensitive ones), each measured against every sensitive column of Sensitive
	// but itself (ReleasedMeasured). A group that fails is a measurement, not a
	// Violation: what to do about it is the caller's.
	Released []string
	// Unit, when set, is the input column whose value identifies the person a record
	// is about (the privacy unit; "": one record is one person): K, distinct
	// l-diversity, t-closeness (equal distance), β-likeness and Risk.HighestRisk are
	// then counted in persons (persons.go), t-closeness and β-likeness against the
	// input's persons holding each value, and a Counter needs, with every release
	// record, the input record it generalizes (AddMatched, its unit value after the
	// quasi-identifiers) and every input record the release leaves out
	// (AddSuppressed, its unit value and sensitive values after the
	// quasi-identifiers), as it does for Utility. Models without a person-level
	// meaning in this version are an error of NewCounter.
	Unit string
	// Linkable says that the release lets a person's records be linked (a released
	// pseudonym): the released persons grouped by the set of released classes their
	// records lie in, every group must hold at least K persons (multirelational
	// k-anonymity, linked.go). Only with Unit.
	Linkable bool
	// Pseudonym, when set, is the release's column that holds the privacy unit as a
	// keyed pseudonym of the id (pseudonym.go); only with Unit and Linkable.
	Pseudonym *PseudonymCheck
	// Passes, when set, are the nodes of a local recoding (ARX's iterative local
	// recoding), in the order of its passes: one level per quasi-identifier each, in
	// Quasi's (and Utility's, which it needs) order. Every release record is then its
	// input record generalized at the node of the pass that places it, and the
	// records no pass places are the ones left out (passes.go). FullDomain is
	// ignored: the utility is measured for each record at its own pass's node; a
	// released class's information loss for Profitability is its most general
	// part's (per column, the most leaves its value covers at any of its records'
	// levels). The released classes (the records sharing all released values,
	// whichever passes place them) meet the models as any release's. Only the models
	// decided class by class take part (K, Risk.HighestRisk, l-diversity,
	// t-closeness, β-likeness, the prosecutor's Profitability), and the whole
	// release's risk models, measured on the release as any release's (enforced,
	// they need Kept); Population, Unit and Mondrian's ranges are an error of
	// NewCounter and ExpectedPasses. nil: not a local recoding.
	Passes [][]int
	// Kept is, for a local recoding whose risk models are enforced (Risk.Enforced),
	// the classes the release holds (ReleasedClasses): a class of a pass that meets
	// the models and that the release does not hold was withheld by the pass for
	// the risk models, which ExpectedPasses accepts only when the pass releases no
	// smaller class, and sends on to the next pass.
	Kept *Classes
	// Placed is where the passes place every input record (ExpectedPasses, over the
	// same input and Spec); a Counter with Passes needs it, and must then be fed by
	// the truthfulness walk (Truth.Count), which checks every release record against
	// it: the record of its input record's pass, generalized exactly at that pass's
	// node, and the input records left out exactly those no pass places.
	Placed *Placement
}

// Sensitive is what a release must satisfy on one sensitive column: every published
// class meets each l-diversity model, and its distribution lies within T of the
// input's for each t-closeness requirement.
type Sensitive struct {
	Column    string
	Values    []string        // every value the column may hold; value i is numbered i
	Reference []int64         // the input's number of records holding each value
	Tree      *closeness.Tree // over the numbered values, for the hierarchical distance
	Diversity []diversity.Model
	Closeness []Closeness
	Likeness  []Likeness
	// Null is the value an empty input field is read as (nil: the empty string is a
	// value of its own); only the input is read with it.
	Null *string
}

// Likeness is one β-likeness requirement (closeness.LikenessOf), against the input's
// distribution (Reference).
type Likeness struct {
	Beta     float64
	Enhanced bool
}

// Closeness is one t-closeness requirement.
type Closeness struct {
	T        float64
	Distance closeness.Distance
}

// SensitiveMeasured is what the published classes hold on one sensitive column.
type SensitiveMeasured struct {
	Column      string
	MinDistinct int                // fewest distinct values in a class (the measured distinct l)
	MinEntropyL float64            // exp of the smallest class entropy (the measured entropy l)
	MaxEMD      float64            // largest distance to the input's distribution
	Distance    closeness.Distance // the distance MaxEMD uses (the requirement's, else equal)
	// MaxGain is the largest relative gain of a value's share in a class over its
	// share in the input (β-likeness's measure; +Inf for a value the input lacks).
	MaxGain float64
}

// Measured is what the release was found to hold.
type Measured struct {
	RequiredK  int     // the k the spec required of every class (Spec.K)
	Rows       int     // records released
	Suppressed int     // input records not released
	Classes    int     // equivalence classes (distinct quasi-identifier tuples)
	MinClass   int     // smallest class (the measured k); 0 when nothing is released
	AvgClass   float64 // average class size
	// Discernibility is Σ |class|² over the published classes plus, for every
	// suppressed record, the input's record count (Bayardo & Agrawal 2005).
	Discernibility float64
	// CAvg is the average class size over k (LeFevre et al. 2006); 0 when nothing is
	// published.
	CAvg float64
	// Loss is the loss metric as generalize.Metrics's Loss defines it (per record and
	// quasi-identifier, (covered leaves − 1) / (leaves of the column − 1), 1 for a
	// suppressed record, averaged), measured from the written file beside the input
	// and the configuration's hierarchies; 0 unless the Spec asks for it (Utility).
	Loss float64
	// NCP is the global certainty penalty as generalize.Metrics's NCP defines it,
	// measured from the written file beside the input; 0 unless the Spec asks for it.
	NCP float64
	// NonUniformEntropy is the non-uniform entropy in bits as generalize.Metrics's
	// NonUniformEntropy defines it, measured from the written file beside the input;
	// 0 unless the Spec asks for it.
	NonUniformEntropy float64
	// Utility says that Loss, NCP and NonUniformEntropy were measured.
	Utility   bool
	Sensitive []SensitiveMeasured
	// Sizes is the published classes' size distribution, for the risk measures.
	Sizes risk.Distribution
	// Population is the published classes measured against a research subset's
	// population (nil: no subset, or a check that does not measure it).
	Population *PopulationMeasured
	// Released is what each column released as it is reveals about each protected
	// sensitive column (Spec.Released).
	Released []ReleasedMeasured
	// Persons is the release counted in persons (nil unless the Spec names a
	// privacy unit); the fields above count records.
	Persons *PersonsMeasured
	// LeastPayout is the least expected payout per record over the published classes
	// under the prosecutor's profitability (Spec.Profitability); Payout says that it
	// was measured (the journalist's is measured in PopulationMeasured).
	LeastPayout float64
	Payout      bool
}

// Violation reports a release that breaks its Spec.
type Violation struct{ Msg string }

func (v *Violation) Error() string { return v.Msg }

// Reader yields the records of a release, returning io.EOF after the last.
type Reader interface {
	Read() ([]string, error)
}

// Release counts the equivalence classes of the release read from r (header already
// consumed and given) and checks them against spec. A release that breaks spec yields a
// *Violation together with the measurements; a read failure yields the reader's error.
func Release(spec Spec, header []string, r Reader) (*Measured, error) {
	c, err := NewCounter(spec, header)
	if err != nil {
		return nil, err
	}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if err := c.Add(rec); err != nil {
			return nil, err
		}
	}
	return c.Finish()
}

// Counter is Release fed one record at a time, for a caller that reads the release
// for another check too: Add every record, then Finish.
type Counter struct {
	spec   Spec
	header []string
	pos    []int // the quasi-identifiers' fields
	spos   []int // the sensitive columns' fields
	index  []map[string]int32
	smemo  []*strMemo // in front of index
	// rel numbers the released values of each quasi-identifier; a class is keyed by
	// their numbers, or once a column has too many by the values (classTable)
	rel     []*valueNumbers
	classes *classTable // class key → class number
	// per class, stride values: its record count, then (when utility is measured) the
	// candidate levels of its labeled quasi-identifiers (see utilityCounter.add), so
	// that counting a record touches one place (a power of two, up to 8: one cache
	// line)
	cls    []uint64
	stride int
	// hists[i][class]: the histogram of sensitive column i in the class
	hists [][]map[int32]int64
	m     *Measured
	util  *utilityCounter // nil: loss, NCP and entropy are not measured
	// persons counts the classes in persons (nil: the spec names no privacy unit)
	persons *personCounter
	// pseud checks the released pseudonyms (nil: the spec has none); the staging's
	pseud *pseudonymCounter
	// released measures the columns released as they are (nil: none to measure)
	released *releasedCounter
	// walked says that a truthfulness walk fed the Counter and checked the release
	// against spec.Placed (a local recoding's counter needs one)
	walked bool
	// passAt is where a class's slots in cls hold its records of each pass of a
	// local recoding, in order (0: not counted), for the utility measurement at each
	// record's own node
	passAt int
	p      *pending   // the records staged, counted by flush
	loop   *countLoop // the counting goroutine, if one runs
	// the classes are keyed by their values (classTable.values): the staging
	// need not number the values of a column whose utility does not need them
	byValues atomic.Bool
	// flush's: the classes of the records it counts, their keys by values (one
	// after another, and where each ends), and the sum of the memory it reads ahead
	batch []int32
	key   []byte
	ends  []int
	sink  uint64
}

// NewCounter starts counting a release with the given header against spec.
func NewCounter(spec Spec, header []string) (*Counter, error) {
	if !slices.Equal(header, spec.Columns) {
		// The expected names only: a release without a header would put data here.
		return nil, &Violation{Msg: fmt.Sprintf("the release's header is not the expected %q", spec.Columns)}
	}
	c := &Counter{spec: spec, header: header, pos: make([]int, len(spec.Quasi)), classes: newClassTable(len(spec.Quasi)), m: &Measured{}, stride: 1, p: &pending{}}
	for i, q := range spec.Quasi {
		c.pos[i] = slices.Index(header, q)
		if c.pos[i] < 0 {
			return nil, &Violation{Msg: fmt.Sprintf("quasi-identifier %q missing from the release", q)}
		}
		c.rel = append(c.rel, newValueNumbers())
	}
	c.spos = make([]int, len(spec.Sensitive))
	c.index = make([]map[string]int32, len(spec.Sensitive))
	c.smemo = make([]*strMemo, len(spec.Sensitive))
	for i, sc := range spec.Sensitive {
		c.spos[i] = slices.Index(header, sc.Column)
		if c.spos[i] < 0 {
			return nil, &Violation{Msg: fmt.Sprintf("sensitive column %q missing from the release", sc.Column)}
		}
		c.index[i] = make(map[string]int32, len(sc.Values))
		c.smemo[i] = newStrMemo()
		for v, s := range sc.Values {
			c.index[i][s] = int32(v)
		}
	}
	c.hists = make([][]map[int32]int64, len(spec.Sensitive))
	if err := checkPassesSpec(spec); err != nil {
		return nil, err
	}
	if spec.Passes != nil && spec.Placed == nil {
		return nil, errors.New("local recoding: the Counter needs where the passes place every input record (Spec.Placed, from ExpectedPasses)")
	}
	if err := c.withUtility(spec); err != nil {
		return nil, err
	}
	var err error
	if c.released, err = newReleasedCounter(spec, header); err != nil {
		return nil, err
	}
	if err := checkUnitModels(spec); err != nil {
		return nil, err
	}
	if err := checkProfitSpec(spec); err != nil {
		return nil, err
	}
	if p := spec.Profitability; p != nil && !p.Journalist {
		c.util.keepUnder = true // the leaves each class's values cover (checkProfit)
	}
	if err := checkPseudonymSpec(spec, header); err != nil {
		return nil, err
	}
	if spec.Unit != "" {
		if c.persons, err = newPersonCounter(spec); err != nil {
			return nil, err
		}
	}
	if spec.Pseudonym != nil {
		c.pseud = newPseudonymCounter(spec.Pseudonym, header, c.persons.tally.seed)
	}
	return c, nil
}

// withUtility sets c up to measure the utility when spec asks for it (Spec.Utility):
// its utility counter, and a class's slots in cls (its candidate levels, and with a
// local recoding its records per pass).
func (c *Counter) withUtility(spec Spec) error {
	if spec.Utility == nil {
		return nil
	}
	if len(spec.Utility) != len(spec.Quasi) {
		return fmt.Errorf("utility: %d quasi-identifiers described, the spec has %d", len(spec.Utility), len(spec.Quasi))
	}
	for j, q := range spec.Utility {
		if q.Column != spec.Quasi[j] {
			return fmt.Errorf("utility: quasi-identifier %d is %q, the spec's is %q", j, q.Column, spec.Quasi[j])
		}
	}
	u, err := newUtilityCounter(spec.Utility, spec.FullDomain && spec.Passes == nil)
	if err != nil {
		return err
	}
	c.util, c.stride = u, 1+u.labeled
	if spec.Passes != nil { // a class's records per pass, after the levels
		c.passAt, u.passAt, u.nodes = c.stride, c.stride, spec.Passes
		c.stride += len(spec.Passes)
	}
	if c.stride <= 8 {
		// a power of two: a class's values in one cache line (a large slice is
		// aligned to one)
		c.stride = 1 << bits.Len(uint(c.stride-1))
	}
	return nil
}

// leftWidth is how many input values AddSuppressed takes: the quasi-identifiers',
// then, when the spec names a privacy unit, the unit's and the sensitive columns'.
func (c *Counter) leftWidth() int {
	if c.persons != nil {
		return len(c.pos) + 1 + len(c.spos)
	}
	return len(c.pos)
}

// origWidth is how many input values AddMatched and AddSuppressed take: the
// quasi-identifiers', then the privacy unit's when the spec names one.
func (c *Counter) origWidth() int {
	if c.persons != nil {
		return len(c.pos) + 1
	}
	return len(c.pos)
}

// noOriginal is the error of a release record counted without the input record it
// generalizes, by a Counter that needs it (nil when it does not).
func (c *Counter) noOriginal() error {
	switch {
	case c.util != nil:
		return errNoOriginal
	case c.persons != nil:
		return errNoPerson
	}
	return nil
}

// Add counts one release record (it is not kept). A Counter that measures utility
// takes AddMatched instead.
func (c *Counter) Add(rec []string) error { return c.AddMatched(rec, nil) }

// AddMatched counts one release record as Add does, and, when the spec measures
// utility or names a privacy unit, orig: the quasi-identifier values (in spec.Quasi
// order, as read from the input) of the input record it generalizes, then its value
// of the unit column when the spec names one. Neither is kept.
func (c *Counter) AddMatched(rec, orig []string) error {
	if c.passAt > 0 {
		return errUnwalked
	}
	if err := c.noOriginal(); len(rec) == len(c.header) && err != nil && orig == nil {
		return err
	}
	if err := c.stage(rec, orig); err != nil {
		return err
	}
	return c.flushFull()
}

// AddMatchedBatch is AddMatched for several records at once: recs holds them flat,
// each as wide as the header, and origs the values AddMatched takes of their input
// records, flat (nil when the spec neither measures utility nor names a privacy
// unit).
func (c *Counter) AddMatchedBatch(recs, origs []string) error {
	w, q := len(c.header), c.origWidth()
	if w == 0 || len(recs)%w != 0 {
		return fmt.Errorf("a batch of %d fields for records of %d", len(recs), w)
	}
	n := len(recs) / w
	need := c.noOriginal()
	if need != nil && len(origs) != n*q {
		return need
	}
	for i := range n {
		var orig []string
		if need != nil {
			orig = origs[i*q : (i+1)*q]
		}
		if err := c.stage(recs[i*w:(i+1)*w], orig); err != nil {
			return err
		}
		if err := c.flushFull(); err != nil {
			return err
		}
	}
	return nil
}

// pending is the records staged to be counted: per record and quasi-identifier the
// number of its released value (Counter.rel; -1 for none), and the value itself when
// the record is to be classed by its values (stageValues), and when utility is
// measured the leaf number of the input value and the levels of its hierarchy at
// which the leaf is the released value (utilityColumn.naming); per record and
// sensitive column, the value's number.
type pending struct {
	n      int
	strs   []string
	rids   []int32
	leaves []int32
	masks  []uint32
	sens   []int32
	// per record and column released as it is measured, its value's group number
	groups []int32
	// per record, the local recoding's pass that places it (Counter.passAt)
	passes []uint8
	// the leaf numbers of the quasi-identifier values of input records left out,
	// flat
	left []int32
	// with a privacy unit: the person of every record staged, and of every input
	// record left out, with (when the count keeps them: personTally.lefts) the
	// latter's sensitive values' numbers, flat
	units, leftUnits []uint64
	leftSens         []int32
	// when flushed: the records counted before these, and each quasi-identifier's
	// numbered values (Counter.rel's, which only grow)
	first int
	vals  [][]string
}

// mark is where the staged values end, for undo.
func (p *pending) mark() [7]int {
	return [7]int{len(p.strs), len(p.rids), len(p.leaves), len(p.masks), len(p.sens), len(p.groups), len(p.units)}
}

// undo takes back a record that failed to be staged: the values staged after mark m.
func (c *Counter) undo(m [7]int) {
	p := c.p
	if c.pseud != nil {
		c.pseud.unstage(c.m.Rows)
	}
	p.strs, p.rids, p.leaves, p.masks, p.sens, p.groups = p.strs[:m[0]], p.rids[:m[1]], p.leaves[:m[2]], p.masks[:m[3]], p.sens[:m[4]], p.groups[:m[5]]
	p.units = p.units[:m[6]]
	c.m.Rows--
}

// reset empties p, for the next records.
func (p *pending) reset() {
	clear(p.strs) // not to keep the values' memory
	p.n, p.strs, p.rids, p.leaves, p.masks, p.sens, p.groups, p.left = 0, p.strs[:0], p.rids[:0], p.leaves[:0], p.masks[:0], p.sens[:0], p.groups[:0], p.left[:0]
	p.units, p.leftUnits, p.leftSens, p.passes = p.units[:0], p.leftUnits[:0], p.leftSens[:0], p.passes[:0]
	p.vals = p.vals[:0]
}

// pendingMax is how many records are staged before they are counted.
const pendingMax = 1024

// stage checks a release record (and orig, as AddMatched takes it) and stages it to
// be counted.
func (c *Counter) stage(rec, orig []string) error {
	if c.passAt > 0 {
		return errUnwalked
	}
	if len(rec) != len(c.header) {
		return &Violation{Msg: fmt.Sprintf("release record %d has %d fields, the header %d", c.m.Rows+1, len(rec), len(c.header))}
	}
	if c.noOriginal() != nil && len(orig) != c.origWidth() {
		return fmt.Errorf("an input record with %d values, want %d (the quasi-identifiers', then the privacy unit's)", len(orig), c.origWidth())
	}
	c.m.Rows++
	mark := c.p.mark()
	if c.persons != nil {
		if err := c.stageUnit(rec, orig[len(c.pos)], false); err != nil {
			c.undo(mark)
			return err
		}
	}
	for j, at := range c.pos {
		o := ""
		if c.util != nil {
			o = orig[j]
		}
		ids, err := c.pairIDs(j, rec[at], o)
		if err != nil {
			c.undo(mark)
			return err
		}
		c.stageIDs(ids)
	}
	if err := c.stageSensitive(rec); err != nil {
		c.undo(mark)
		return err
	}
	if c.released != nil {
		c.p.groups = c.released.stage(rec, c.p.groups)
	}
	c.stageValues(rec)
	c.p.n++
	return nil
}

// pairIDs numbers the released value r of quasi-identifier j, and when utility is
// measured, the input value o it covers.
func (c *Counter) pairIDs(j int, r, o string) (pairIDs, error) {
	var u *utilityColumn
	if c.util != nil {
		u = c.util.cols[j]
	}
	rid := int32(-1)
	if !c.byValues.Load() || (u != nil && u.labeled) {
		rid = c.rel[j].id(r) // for the class key, or the levels naming it
	}
	if u == nil {
		return pairIDs{rid: rid}, nil
	}
	x, err := u.leafOf(o)
	if err != nil {
		return pairIDs{}, err
	}
	return pairIDs{rid: rid, leaf: x, mask: u.naming(rid, x, r)}, nil
}

// stageIDs stages the numbers of a quasi-identifier of the record being staged.
func (c *Counter) stageIDs(ids pairIDs) {
	p := c.p
	p.rids = append(p.rids, ids.rid)
	if c.util != nil {
		p.leaves, p.masks = append(p.leaves, ids.leaf), append(p.masks, ids.mask)
	}
}

// stageValues stages the released quasi-identifier values of the record being staged
// when its class will be keyed by them: when the classes are, or a value has no
// number (the records staged before it then get theirs from their numbers).
// Otherwise the numbers key it, and no value is staged.
func (c *Counter) stageValues(rec []string) {
	p, q := c.p, len(c.pos)
	rids := p.rids[len(p.rids)-q:]
	if len(p.strs) == 0 && !c.byValues.Load() && !slices.ContainsFunc(rids, func(id int32) bool { return id < 0 }) {
		return
	}
	for r := len(p.strs) / max(q, 1); r < p.n; r++ {
		for j, id := range p.rids[r*q : (r+1)*q] {
			p.strs = append(p.strs, c.rel[j].vals[id])
		}
	}
	for _, at := range c.pos {
		p.strs = append(p.strs, rec[at])
	}
}

// stageUnit stages the person of the record rec being staged, id its input record's
// value of the privacy unit (the spec names one), and checks its pseudonym when the
// spec has one (paired: the walk paired rec and its input record by it already).
func (c *Counter) stageUnit(rec []string, id string, paired bool) error {
	if id == "" {
		return fault.BadInput("release record %d: the input record it generalizes has no privacy unit (column %q is empty)", c.m.Rows, c.spec.Unit)
	}
	h := c.persons.tally.person(id)
	if c.pseud != nil {
		if err := c.pseud.stage(c.m.Rows, rec[c.pseud.at], id, h, paired); err != nil {
			return err
		}
	}
	c.p.units = append(c.p.units, h)
	return nil
}

// stageMatched stages a release record of the header's width whose quasi-identifiers
// the truthfulness walk numbered (ids, by pairIDs), with unit, its input record's
// value of the privacy unit (when the spec names one), and pass, the local recoding's
// pass (from 1) that places its input record (when the spec has passes), and counts
// the staged records when they are many.
func (c *Counter) stageMatched(rec []string, ids []pairIDs, unit string, pass uint8) error {
	c.m.Rows++
	mark := c.p.mark()
	if c.persons != nil {
		if err := c.stageUnit(rec, unit, true); err != nil {
			c.undo(mark)
			return err
		}
	}
	for _, x := range ids {
		c.stageIDs(x)
	}
	if err := c.stageSensitive(rec); err != nil {
		c.undo(mark)
		return err
	}
	if c.released != nil {
		c.p.groups = c.released.stage(rec, c.p.groups)
	}
	c.stageValues(rec)
	if c.passAt > 0 {
		c.p.passes = append(c.p.passes, pass)
	}
	c.p.n++
	return c.flushFull()
}

// stageSensitive stages the numbers of the sensitive values of a release record.
func (c *Counter) stageSensitive(rec []string) error {
	for i, at := range c.spos {
		v, ok := c.sensitive(i, rec[at])
		if !ok {
			return &Violation{Msg: fmt.Sprintf("release record %d: a value of sensitive column %q that the input does not hold", c.m.Rows, c.spec.Sensitive[i].Column)}
		}
		c.p.sens = append(c.p.sens, v)
	}
	return nil
}

// flushFull counts the staged records when they are pendingMax.
func (c *Counter) flushFull() error {
	if c.p.n < pendingMax && len(c.p.left) < pendingMax*len(c.pos) && len(c.p.leftUnits) < pendingMax {
		return nil
	}
	return c.flush()
}

// flush counts the staged records: on the counting goroutine when one runs (see
// counting), else at once.
func (c *Counter) flush() error {
	p := c.p
	if p.n == 0 && len(p.left) == 0 && len(p.leftUnits) == 0 {
		return nil
	}
	p.first = c.m.Rows - p.n
	for _, r := range c.rel {
		p.vals = append(p.vals, r.vals)
	}
	if c.loop == nil {
		err := c.count(p)
		p.reset()
		return err
	}
	c.loop.out <- p
	c.p = <-c.loop.free // once one is counted, when all are staged
	return nil
}

// countLoop is a goroutine that counts the records the Counter staged, while the
// truthfulness walk (which stages them) goes on: the staging needs the values and
// their numbers (Counter.rel, the utility's leaves and levels), the counting the
// classes and what they count (Counter.count), which neither shares.
type countLoop struct {
	out  chan *pending // staged records, to count
	free chan *pending // counted, to stage again
	done <-chan error
}

// countBuffers is how many pendings a Counter stages and counts in turn.
const countBuffers = 4

// counting starts counting the staged records on a goroutine of their own, until
// drain.
func (c *Counter) counting() {
	l := &countLoop{out: make(chan *pending, countBuffers), free: make(chan *pending, countBuffers)}
	for range countBuffers - 1 {
		l.free <- &pending{}
	}
	c.loop = l
	l.done = safe.Start(func() error {
		var err error
		for p := range l.out {
			if err == nil { // after a failure (a panic too), the pendings still go back to the staging
				err = safe.Call(func() error { return c.count(p) })
			}
			p.reset()
			l.free <- p // never blocks: there are countBuffers
		}
		return err
	})
}

// drain counts what is staged, stops the counting goroutine, if one runs, and returns
// the counting's first error.
func (c *Counter) drain() error {
	err := c.flush()
	if l := c.loop; l != nil {
		c.loop = nil
		close(l.out)
		if cerr := <-l.done; err == nil {
			err = cerr
		}
	}
	return err
}

// count counts the records p staged. It goes over them in steps, each over every
// record: their classes (classTable), then the classes' counts, then what they count;
// so that the memory of the classes, far from the processor when they are many, is
// read for many records at once rather than for one after another. It touches what
// the staging does not: the classes, their counts, the utility's counts.
func (c *Counter) count(p *pending) error {
	if c.util != nil {
		c.util.left(p.left)
	}
	n := p.n
	if n == 0 {
		if c.persons != nil {
			c.persons.count(p, nil, len(c.spos))
		}
		return nil
	}
	before := c.classes.len()
	c.batch = slices.Grow(c.batch[:0], n)[:n]
	i, err := c.classify(p)
	if err != nil {
		return fmt.Errorf("release record %d: more classes than can be counted", p.first+i+1)
	}
	for range c.classes.len() - before {
		c.cls = append(c.cls, 0)
		for s := 1; s < c.stride; s++ {
			if c.passAt > 0 && s >= c.passAt {
				c.cls = append(c.cls, 0) // the records of a pass
				continue
			}
			c.cls = append(c.cls, newSlot) // every level, until a record rules it out
		}
		for i := range c.hists {
			c.hists[i] = append(c.hists[i], map[int32]int64{})
		}
	}
	var sink uint64
	for _, k := range c.batch {
		sink += c.cls[int(k)*c.stride]
	}
	c.sink += sink // read, so that the reads are made
	for _, k := range c.batch {
		c.cls[int(k)*c.stride]++
	}
	ns := len(c.spos)
	for r, k := range c.batch {
		for i := range ns {
			c.hists[i][k][p.sens[r*ns+i]]++
		}
	}
	if c.util != nil {
		c.util.add(c.cls, c.stride, c.batch, p.leaves, p.masks)
	}
	if c.passAt > 0 {
		for r, k := range c.batch {
			c.cls[int(k)*c.stride+c.passAt+int(p.passes[r])-1]++
		}
	}
	if c.released != nil {
		c.released.count(n, p.groups, p.sens, ns)
	}
	if c.persons != nil {
		c.persons.count(p, c.batch, ns)
	}
	return nil
}

// classify sets c.batch to the classes of the records p staged: by their values'
// numbers while they have them (and they fit in a class key of 64 bits), else by
// their values from then on. On an error, it returns the record at fault.
func (c *Counter) classify(p *pending) (int, error) {
	if c.classes.values == nil && !slices.ContainsFunc(p.rids, func(id int32) bool { return id < 0 }) {
		i, fits, err := c.classes.byNumbers(p.rids, p.n, c.batch)
		if fits {
			return i, err
		}
	}
	if c.classes.values == nil {
		fields := make([]string, len(c.pos))
		err := c.classes.toValues(func(cl int32) []byte {
			for j, id := range c.classes.idsOf(cl) {
				fields[j] = p.vals[j][id]
			}
			c.key = appendValueKey(c.key[:0], fields...)
			return c.key
		})
		if err != nil {
			return 0, err
		}
		c.byValues.Store(true)
	}
	q := len(c.pos)
	keys, ends := c.key[:0], c.ends[:0]
	for r := range p.n {
		if len(p.strs) > 0 {
			keys = appendValueKey(keys, p.strs[r*q:(r+1)*q]...)
		} else { // staged with numbers only
			for j, id := range p.rids[r*q : (r+1)*q] {
				keys = appendKey(keys, p.vals[j][id])
			}
		}
		ends = append(ends, len(keys))
	}
	c.key, c.ends = keys, ends
	return c.classes.byValues(keys, ends, c.batch)
}

// sensitive returns the number of value v of sensitive column i (ok false when the
// column has no such value).
func (c *Counter) sensitive(i int, v string) (int32, bool) {
	if x, ok := c.smemo[i].get(v); ok {
		return x, true
	}
	x, ok := c.index[i][v]
	if ok {
		c.smemo[i].put(v, x)
	}
	return x, ok
}

// classFields sets fields to the released quasi-identifier values of class i; false
// for a malformed class key.
func (c *Counter) classFields(i int32, fields []string) bool {
	if c.classes.values != nil {
		return c.classes.valuesOf(i, fields)
	}
	for j, id := range c.classes.idsOf(i) {
		fields[j] = c.rel[j].vals[id]
	}
	return true
}

// AddSuppressed counts an input record that the release leaves out, for the utility
// measurement and the persons who lost records: orig holds its quasi-identifier
// values in spec.Quasi order, then, when the spec names a privacy unit, its value of
// the unit and its values of spec.Sensitive's columns in order (as read from the
// input: "" is a column's Null when it has one), for the input's persons holding
// each value. A Counter that neither measures utility nor names a privacy unit
// ignores it.
func (c *Counter) AddSuppressed(orig []string) error {
	if c.noOriginal() == nil {
		return nil
	}
	if len(orig) != c.leftWidth() {
		return fmt.Errorf("an input record left out with %d values, want %d (the quasi-identifiers', then the privacy unit's and the sensitive columns')", len(orig), c.leftWidth())
	}
	var person uint64
	if c.persons != nil {
		id := orig[len(c.pos)]
		if id == "" {
			return fault.BadInput("an input record left out of the release has no privacy unit (column %q is empty)", c.spec.Unit)
		}
		person = c.persons.tally.person(id)
	}
	smark := len(c.p.leftSens)
	if c.persons != nil && c.persons.tally.needsLefts() {
		for i, sc := range c.spec.Sensitive {
			v := orig[len(c.pos)+1+i]
			if v == "" && sc.Null != nil {
				v = *sc.Null
			}
			x, ok := c.sensitive(i, v)
			if !ok {
				c.p.leftSens = c.p.leftSens[:smark]
				return &Violation{Msg: fmt.Sprintf("an input record left out holds a value of sensitive column %q that the input's count does not hold (did the input change?)", sc.Column)}
			}
			c.p.leftSens = append(c.p.leftSens, x)
		}
	}
	if c.util != nil {
		mark := len(c.p.left)
		for j, u := range c.util.cols {
			x, err := u.leafOf(orig[j])
			if err != nil {
				c.p.left, c.p.leftSens = c.p.left[:mark], c.p.leftSens[:smark]
				return err
			}
			c.p.left = append(c.p.left, x)
		}
	}
	if c.persons != nil {
		c.p.leftUnits = append(c.p.leftUnits, person)
	}
	return c.flushFull()
}

// AddPopulation makes the quasi-identifier values of an input record outside a
// research subset leaves of their columns' domains, for the utility measurement,
// without counting the record: a built hierarchy's leaves are the values of every
// input record (the population), as a hierarchy file's are its rows whichever records
// hold them, so that a generalized value covers the same leaves whatever the subset.
// orig holds the record's quasi-identifier values in spec.Quasi order. A Counter that
// does not measure utility ignores it.
func (c *Counter) AddPopulation(orig []string) error {
	if c.util == nil {
		return nil
	}
	if len(orig) != len(c.pos) {
		return fmt.Errorf("utility: an input record with %d quasi-identifier values, want %d", len(orig), len(c.pos))
	}
	for j, u := range c.util.cols {
		if _, err := u.leafOf(orig[j]); err != nil {
			return err
		}
	}
	return nil
}

// Finish measures the classes counted and checks them against the spec.
func (c *Counter) Finish() (*Measured, error) {
	if err := c.drain(); err != nil {
		return c.m, err
	}
	spec, m, classes := c.spec, c.m, c.classes
	m.RequiredK = spec.K
	c.measureSizes()
	if err := c.checkPlaced(); err != nil {
		return m, err
	}
	switch {
	case m.Suppressed < 0:
		return m, &Violation{Msg: fmt.Sprintf("release has %d records, more than the input's %d", m.Rows, spec.InputRows)}
	case m.Suppressed > spec.MaxSuppressed:
		return m, &Violation{Msg: fmt.Sprintf("%d records suppressed, the limit is %d", m.Suppressed, spec.MaxSuppressed)}
	case c.persons == nil && m.Rows > 0 && m.MinClass < spec.K:
		return m, &Violation{Msg: fmt.Sprintf("smallest class has %d records, k is %d", m.MinClass, spec.K)}
	}
	var err error
	if m.Sizes, err = c.classSizes(); err != nil {
		return m, fault.Internalf("%w", err)
	}
	sizes := m.Sizes
	if c.persons != nil { // the models counted in persons, the risk on the persons' classes
		if err := c.persons.finish(spec, m, classes.len()); err != nil {
			return m, err
		}
		sizes = m.Persons.Sizes
	}
	if c.pseud != nil {
		if err := c.pseud.finish(); err != nil {
			return m, err
		}
	}
	if err := CheckRisk(spec.Risk, sizes); err != nil {
		return m, err
	}
	for i, sc := range spec.Sensitive {
		if c.persons != nil {
			// decided in persons: the records' histograms are measured only
			sc.Diversity, sc.Closeness, sc.Likeness = nil, nil, nil
		}
		sm, err := checkSensitive(sc, c.hists[i])
		m.Sensitive = append(m.Sensitive, sm)
		if err != nil {
			return m, err
		}
	}
	if c.released != nil {
		if m.Released, err = c.released.measure(spec); err != nil {
			return m, err
		}
	}
	if c.util != nil {
		var err error
		if m.Loss, m.NCP, m.NonUniformEntropy, err = c.util.measure(classes.len(), c.classFields, c.cls, c.stride, spec.InputRows); err != nil {
			return m, err
		}
		m.Utility = true
	}
	if err := c.checkProfit(m); err != nil {
		return m, err
	}
	return m, nil
}

// measureSizes measures the classes' sizes into c.m: their number, the smallest,
// the average, the records suppressed, the discernibility and C_avg.
func (c *Counter) measureSizes() {
	spec, m := c.spec, c.m
	m.Classes = c.classes.len()
	for i := 0; i < len(c.cls); i += c.stride {
		if n := int(c.cls[i]); m.MinClass == 0 || n < m.MinClass {
			m.MinClass = n
		}
	}
	if m.Classes > 0 {
		m.AvgClass = float64(m.Rows) / float64(m.Classes)
	}
	m.Suppressed = spec.InputRows - m.Rows
	for i := 0; i < len(c.cls); i += c.stride {
		m.Discernibility += float64(c.cls[i]) * float64(c.cls[i])
	}
	if m.Suppressed > 0 {
		m.Discernibility += float64(m.Suppressed) * float64(spec.InputRows)
	}
	if m.Classes > 0 && spec.K > 0 {
		m.CAvg = m.AvgClass / float64(spec.K)
	}
}

// checkSensitive checks the models of one sensitive column on every class's histogram
// and measures the weakest class.
func checkSensitive(sc Sensitive, hists []map[int32]int64) (SensitiveMeasured, error) {
	sm := SensitiveMeasured{Column: sc.Column, Distance: closeness.Equal}
	if len(sc.Closeness) > 0 {
		sm.Distance = sc.Closeness[0].Distance
	}
	if len(hists) == 0 {
		return sm, nil
	}
	first := true
	dense := make([]int64, len(sc.Values))
	counts := make([]int64, 0, len(sc.Values))
	for _, h := range hists {
		counts = counts[:0]
		for v, c := range h {
			dense[v] = c
			counts = append(counts, c)
		}
		slices.Sort(counts) // the entropy summed in one order whatever the map's: the same figure every run
		distinct, entropyL := diversity.Values(counts), math.Exp(diversity.EntropyOf(counts))
		emd, err := distance(sm.Distance, dense, sc)
		likeErr := checkLikeness(sc, dense, &sm)
		for v := range h {
			dense[v] = 0
		}
		if err != nil {
			return sm, err
		}
		if first || distinct < sm.MinDistinct {
			sm.MinDistinct = distinct
		}
		if first || entropyL < sm.MinEntropyL {
			sm.MinEntropyL = entropyL
		}
		sm.MaxEMD = max(sm.MaxEMD, emd)
		first = false
		if likeErr != nil {
			return sm, likeErr
		}
		for _, d := range sc.Diversity {
			if !d.Holds(counts) {
				return sm, &Violation{Msg: fmt.Sprintf("a class fails %s l-diversity (l=%g) on %q", d.Variant, d.L, sc.Column)}
			}
		}
		for _, t := range sc.Closeness {
			if emd > t.T {
				return sm, &Violation{Msg: fmt.Sprintf("a class lies at distance %.4g from the input's distribution of %q, t is %g", emd, sc.Column, t.T)}
			}
		}
	}
	return sm, nil
}

// distance is a class's EMD to the input's distribution.
func distance(kind closeness.Distance, p []int64, sc Sensitive) (float64, error) {
	switch kind {
	case closeness.Equal:
		return closeness.EqualEMD(p, sc.Reference)
	case closeness.Ordered:
		return closeness.OrderedEMD(p, sc.Reference)
	case closeness.Hierarchical:
		if sc.Tree == nil {
			return 0, fmt.Errorf("column %q: the hierarchical distance needs a hierarchy", sc.Column)
		}
		return closeness.HierarchicalEMD(p, sc.Reference, sc.Tree)
	}
	return 0, fault.Internalf("column %q: unknown t-closeness distance %q", sc.Column, kind)
}

// checkLikeness measures the largest gain of the class's dense histogram p over the
// input's distribution into sm and checks every β-likeness requirement on it.
func checkLikeness(sc Sensitive, p []int64, sm *SensitiveMeasured) error {
	if len(sc.Likeness) == 0 {
		return nil
	}
	for _, l := range sc.Likeness {
		gain, holds, err := closeness.LikenessOf(p, sc.Reference, l.Beta, l.Enhanced)
		if err != nil {
			return fmt.Errorf("β-likeness on %q: %w", sc.Column, err)
		}
		sm.MaxGain = max(sm.MaxGain, gain)
		if !holds {
			variant := closeness.Basic
			if l.Enhanced {
				variant = closeness.Enhanced
			}
			return &Violation{Msg: fmt.Sprintf("a class fails %s β-likeness (β=%g) on %q: a value's share gains %.4g over the input's", variant, l.Beta, sc.Column, gain)}
		}
	}
	return nil
}
