package verify

// Local recoding (ARX's iterative local recoding, ARXResult.optimizeIterative): the
// optimal search picks a node and suppresses the classes that fail the models there;
// the records suppressed are searched again on their own and released at a node of
// their own, the classes of those that still fail going on to a further pass; what
// the last pass leaves is suppressed. A release so made holds records generalized at
// several nodes, one per record. This file decides, from the input and the passes'
// nodes alone (Spec.Passes), with this package's own labels (labeler) and class
// decisions (classFails, classProfit), which pass places every input record; the
// truthfulness walk (truth.go) then checks every release record against it, and
// Placement.CheckClasses the release's classes. It shares no code with package
// generalize.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// maxPasses is the most passes a local recoding may have: a record's pass is a byte.
const maxPasses = 255

// Placement is where the passes of a local recoding (Spec.Passes) place every input
// record: the pass whose node generalizes it in the release, or none (the record is
// suppressed). ExpectedPasses decides it from the input; set as Spec.Placed, it makes
// a Counter's truthfulness walk check every release record against it.
type Placement struct {
	nodes      [][]int
	pass       []uint8 // per input record, in input order: its pass from 1, 0 suppressed
	placed     []int   // per pass, the records it places
	suppressed int
	// the classes the release must hold (records sharing all released values,
	// whichever pass placed them), keyed as Classes keys them: their records, and
	// the first pass that places records in them
	classes map[string]placedClass
}

// placedClass is a class of the release as the passes make it.
type placedClass struct {
	n    int64
	pass int
}

// Records is the number of input records placed (the input's).
func (p *Placement) Records() int { return len(p.pass) }

// Pass is the pass (from 1, in Spec.Passes order) that places input record i (from
// 0, in input order); 0 when the passes leave it suppressed or there is no such
// record.
func (p *Placement) Pass(i int) int {
	if i < 0 || i >= len(p.pass) {
		return 0
	}
	return int(p.pass[i])
}

// Placed is the number of input records that pass (from 1) places.
func (p *Placement) Placed(pass int) int {
	if pass < 1 || pass > len(p.placed) {
		return 0
	}
	return p.placed[pass-1]
}

// Passes is the number of passes.
func (p *Placement) Passes() int { return len(p.nodes) }

// Released is the number of input records the passes place, the records the release
// must hold.
func (p *Placement) Released() int { return len(p.pass) - p.suppressed }

// Suppressed is the number of input records that every pass leaves out: the records
// the release must not hold.
func (p *Placement) Suppressed() int { return p.suppressed }

// Classes is the number of classes the release must hold.
func (p *Placement) Classes() int { return len(p.classes) }

// CheckClasses reports a *Violation when the release's classes (rel, as
// ReleasedClasses counts them) are not those the passes make: every class of the
// records a pass places (their labels at its node) must be released with exactly
// its records, classes that different passes write alike counting as one, and the
// release may hold no other class. Its messages give counts and passes, never a
// value.
func (p *Placement) CheckClasses(rel *Classes) error {
	for _, key := range slices.Sorted(maps.Keys(rel.count)) { // the same message every run
		if _, ok := p.classes[key]; !ok {
			return &Violation{Msg: fmt.Sprintf("the release holds a class of %d records that none of the %d passes places: a class they suppress, or of no input record", rel.count[key], len(p.nodes))}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(p.classes)) {
		c := p.classes[key]
		switch got := rel.count[key]; {
		case got < c.n:
			return &Violation{Msg: fmt.Sprintf("%d of the %d records of a class that pass %d places are missing from the release", c.n-got, c.n, c.pass)}
		case got > c.n:
			return &Violation{Msg: fmt.Sprintf("the release holds %d records of a class that the passes place %d records in (pass %d first)", got, c.n, c.pass)}
		}
	}
	return nil
}

// checkPassesSpec reports a spec whose passes cannot be decided: a local recoding
// takes part with the models decided class by class (k, the highest risk, l, t, β,
// the prosecutor's profitability) and the whole release's risk models (enforced:
// with the release's classes, Spec.Kept); a research subset, a privacy unit and
// Mondrian's ranges are refused, as the release refuses them. A spec without passes
// (and without a placement) is fine.
func checkPassesSpec(spec Spec) error {
	if spec.Passes == nil {
		if spec.Placed != nil {
			return errors.New("local recoding: a placement (Spec.Placed) without the passes' nodes (Spec.Passes)")
		}
		return nil
	}
	switch {
	case len(spec.Passes) == 0 || len(spec.Passes) > maxPasses:
		return fmt.Errorf("local recoding: %d passes, want 1 to %d", len(spec.Passes), maxPasses)
	case spec.Unit != "":
		return fmt.Errorf("local recoding with a privacy unit (%q) is not in this version", spec.Unit)
	case spec.Population != nil:
		return errors.New("local recoding with a research subset (δ-presence, k-map) is not in this version")
	case spec.Risk.Enforcing() && spec.Kept == nil:
		return errors.New("local recoding with enforced risk models: the release's classes (Spec.Kept) tell which classes a pass withheld for them, and are missing")
	case spec.Profitability != nil && spec.Profitability.Journalist:
		return errors.New("local recoding with the journalist's profitability is not in this version")
	case len(spec.Utility) != len(spec.Quasi):
		return fmt.Errorf("local recoding: %d hierarchies (Spec.Utility) for %d quasi-identifiers", len(spec.Utility), len(spec.Quasi))
	}
	for j, q := range spec.Utility {
		switch {
		case q.Column != spec.Quasi[j]:
			return fmt.Errorf("local recoding: quasi-identifier %d is %q, the spec's is %q", j, q.Column, spec.Quasi[j])
		case q.Domain == nil:
			return fmt.Errorf("local recoding: quasi-identifier %q has no hierarchy", q.Column)
		case q.Ranges:
			return fmt.Errorf("local recoding: quasi-identifier %q is released as Mondrian's ranges; Mondrian is not a local recoding's search", q.Column)
		}
	}
	for i, node := range spec.Passes {
		if len(node) != len(spec.Quasi) {
			return fmt.Errorf("local recoding: pass %d's node has %d levels for %d quasi-identifiers", i+1, len(node), len(spec.Quasi))
		}
		for j, l := range node {
			if d := spec.Utility[j].Domain; l < 0 || l >= d.height {
				return fmt.Errorf("local recoding: pass %d's node: level %d of column %q outside its %s's 0..%d", i+1, l, spec.Quasi[j], d.source, d.height-1)
			}
		}
	}
	if p := spec.Placed; p != nil && !slices.EqualFunc(p.nodes, spec.Passes, slices.Equal) {
		return errors.New("local recoding: the placement (Spec.Placed) was decided for other passes than Spec.Passes")
	}
	return nil
}

// passInput is the input as the passes see it: the records of equal
// quasi-identifier values ("tuples") share their fate in every pass, their labels
// at any node being equal, so each is kept once with its records and its sensitive
// values' counts, and each record as its tuple's number.
type passInput struct {
	vals   [][]string // per quasi-identifier, its distinct values by number
	tuples []int32    // per tuple, its values' numbers (one per quasi-identifier)
	count  []int64    // per tuple, its records
	// per sensitive column, the records of each tuple and value:
	// tuple<<32 | value → records
	sens []map[uint64]int64
	rec  []int32 // per input record, its tuple
}

// readPassInput reads the input (see ExpectedPasses) into tuples.
func readPassInput(spec Spec, in Reader) (*passInput, error) {
	q, ns := len(spec.Quasi), len(spec.Sensitive)
	d := &passInput{vals: make([][]string, q), sens: make([]map[uint64]int64, ns)}
	dict := make([]map[string]int32, q)
	for j := range dict {
		dict[j] = map[string]int32{}
	}
	for i := range d.sens {
		d.sens[i] = map[uint64]int64{}
	}
	index := sensitiveIndex(spec)
	tuples := map[string]int32{}
	var key []byte
	codes := make([]int32, q)
	for n := 1; ; n++ {
		rec, err := in.Read()
		if errors.Is(err, io.EOF) {
			return d, nil
		}
		if err != nil {
			return nil, err
		}
		if len(rec) != q+ns {
			return nil, fmt.Errorf("input record %d: %d fields for %d quasi-identifiers and %d sensitive columns", n, len(rec), q, ns)
		}
		key = key[:0]
		for j := range q {
			x, ok := dict[j][rec[j]]
			if !ok {
				x = int32(len(d.vals[j]))
				v := strings.Clone(rec[j])
				dict[j][v], d.vals[j] = x, append(d.vals[j], v)
			}
			codes[j] = x
			key = binary.LittleEndian.AppendUint32(key, uint32(x))
		}
		t, ok := tuples[string(key)]
		if !ok {
			t = int32(len(d.count))
			tuples[string(key)] = t
			d.tuples, d.count = append(d.tuples, codes...), append(d.count, 0)
		}
		d.count[t]++
		d.rec = append(d.rec, t)
		for i, sc := range spec.Sensitive {
			v := rec[q+i]
			if v == "" && sc.Null != nil {
				v = *sc.Null
			}
			x, ok := index[i][v]
			if !ok {
				return nil, &Violation{Msg: fmt.Sprintf("input record %d: a value of sensitive column %q that the input's count does not hold (did the input change?)", n, sc.Column)}
			}
			d.sens[i][uint64(t)<<32|uint64(uint32(x))]++
		}
	}
}

// ExpectedPasses decides where the passes of a local recoding (spec.Passes) place
// every input record read from in (records as ExpectedSuppression reads them: the
// quasi-identifier values in spec.Quasi order, then the values of spec.Sensitive's
// columns in order, a sensitive column's "" read as its Null when set). Pass 1
// groups every record by its labels at spec.Passes[0] (spec.Utility's hierarchies);
// the records of the classes that fail the models go on to pass 2, grouped by their
// labels at spec.Passes[1] among themselves, and so on; the records the last pass
// leaves are suppressed. A class fails as ExpectedSuppression decides it: fewer than
// spec.K records, a prosecutor risk above spec.Risk.HighestRisk, an l-diversity,
// t-closeness or β-likeness requirement missed (the latter two against the whole
// input's distribution, Sensitive.Reference), or with spec.Profitability the
// prosecutor's payout not positive (the information loss counted in spec.Utility's
// domains, a built hierarchy's leaves being the whole input's distinct values), or,
// with enforced risk models, the release does not hold it (Spec.Kept: a *Violation
// when the pass places a smaller class). The models that a local recoding does not
// take part in are an error (see Spec.Passes); so is an input value a hierarchy does
// not generalize (a *Violation naming the column).
func ExpectedPasses(spec Spec, in Reader) (*Placement, error) {
	if spec.Passes == nil {
		return nil, errors.New("local recoding: no passes (Spec.Passes)")
	}
	spec.Placed = nil // to be decided
	if err := checkPassesSpec(spec); err != nil {
		return nil, err
	}
	profit, feed, err := newClassProfit(spec, spec.Passes[0])
	if err != nil {
		return nil, err
	}
	if feed {
		in = profit.leaves.Reading(in) // the whole input's values, the built hierarchies' leaves
	}
	d, err := readPassInput(spec, in)
	if err != nil {
		return nil, err
	}
	pl := &Placement{nodes: make([][]int, len(spec.Passes)), placed: make([]int, len(spec.Passes)), classes: map[string]placedClass{}}
	fate := make([]uint8, len(d.count)) // per tuple, its pass (0: none yet)
	active := make([]int32, len(d.count))
	for t := range active {
		active[t] = int32(t)
	}
	for p, node := range spec.Passes {
		pl.nodes[p] = slices.Clone(node)
		if profit != nil {
			profit.levels = node
		}
		if active, err = pl.runPass(spec, d, p, active, fate, profit); err != nil {
			return nil, err
		}
	}
	pl.pass = make([]uint8, len(d.rec))
	for r, t := range d.rec {
		pl.pass[r] = fate[t]
		if fate[t] == 0 {
			pl.suppressed++
		}
	}
	return pl, nil
}

// passClass is a class of one pass: its records, the tuples in it and its
// sensitive histograms.
type passClass struct {
	inputClass
	tuples []int32
}

// runPass is pass p (from 0) over the active tuples: it groups them by their labels
// at the pass's node, places the tuples of the classes that meet the models (fate),
// counts those classes among the release's, and returns the tuples of the classes
// that fail, for the next pass.
func (pl *Placement) runPass(spec Spec, d *passInput, p int, active []int32, fate []uint8, profit *classProfit) ([]int32, error) {
	classes, keys, err := passClasses(spec, d, spec.Passes[p], active)
	if err != nil {
		return nil, err
	}
	var next []int32
	// With enforced risk models, the largest class the pass withholds that meets the
	// models, and the smallest it places (−1: none).
	withheld, smallest := int64(-1), int64(-1)
	for i, c := range classes {
		fails, _, err := classFails(spec, &c.inputClass)
		if err != nil {
			return nil, err
		}
		if !fails {
			if fails, _, err = profit.fails(keys[i], c.n, 0); err != nil {
				return nil, err
			}
		}
		if !fails && spec.Risk.Enforcing() && spec.Kept.count[keys[i]] == 0 {
			fails, withheld = true, max(withheld, c.n)
		} else if !fails && (smallest < 0 || c.n < smallest) {
			smallest = c.n
		}
		if fails {
			next = append(next, c.tuples...)
			continue
		}
		for _, t := range c.tuples {
			fate[t] = uint8(p + 1)
		}
		pl.placed[p] += int(c.n)
		rc, ok := pl.classes[keys[i]]
		if !ok {
			rc.pass = p + 1
		}
		rc.n += c.n
		pl.classes[keys[i]] = rc
	}
	if withheld >= 0 && smallest >= 0 && withheld > smallest {
		return nil, &Violation{Msg: fmt.Sprintf("pass %d leaves out a class of %d records that meets the models while it places one of %d: the risk models' enforcement suppresses the smallest classes first", p+1, withheld, smallest)}
	}
	slices.Sort(next) // in input order of their first records: a deterministic pass
	return next, nil
}

// passClasses groups the active tuples by their labels at node: the classes, each
// with its records and sensitive histograms, and their keys (their labels, keyed as
// Classes keys them).
func passClasses(spec Spec, d *passInput, node []int, active []int32) ([]*passClass, []string, error) {
	q := len(spec.Quasi)
	labs, err := labelers(spec, node)
	if err != nil {
		return nil, nil, err
	}
	byKey := map[string]int32{}
	var classes []*passClass
	var keys []string
	of := make([]int32, len(d.count)) // tuple → class (-1: not active)
	for t := range of {
		of[t] = -1
	}
	var key []byte
	for _, t := range active {
		key = key[:0]
		for j, x := range d.tuples[int(t)*q : (int(t)+1)*q] {
			s, err := labs[j].label(d.vals[j][x])
			if err != nil {
				return nil, nil, err
			}
			key = appendKey(key, s)
		}
		i, ok := byKey[string(key)]
		if !ok {
			i = int32(len(classes))
			byKey[string(key)] = i
			c := &passClass{inputClass: inputClass{hists: make([]map[int32]int64, len(spec.Sensitive))}}
			for h := range c.hists {
				c.hists[h] = map[int32]int64{}
			}
			classes, keys = append(classes, c), append(keys, string(key))
		}
		c := classes[i]
		c.n += d.count[t]
		c.tuples = append(c.tuples, t)
		of[t] = i
	}
	for h, counts := range d.sens {
		for k, n := range counts {
			if i := of[k>>32]; i >= 0 {
				classes[i].hists[h][int32(uint32(k))] += n
			}
		}
	}
	return classes, keys, nil
}

// placedWalk is the truthfulness walk's check of a local recoding against the
// placement of the input records (the counter's Spec.Placed).
type placedWalk struct {
	pl    *Placement
	count *Counter
	labs  [][]*labeler // per pass, per quasi-identifier: its labels at the pass's node
	pos   []int        // per quasi-identifier, its release column
	in    []int        // per quasi-identifier, its input column
	pass  uint8        // the pass of the record matched last
}

// newPlacedWalk is the check of the walk w of the release against its counter c's
// placement.
func newPlacedWalk(t Truth, w *walker, c *Counter) (*placedWalk, error) {
	if t.LeftOut != nil || t.Series != nil {
		return nil, errors.New("truthfulness: a local recoding's passes (Spec.Placed) with the run's own account of the records left out (Truth.LeftOut) or a series night (Truth.Series) is not in this version")
	}
	pw := &placedWalk{pl: c.spec.Placed, count: c, pos: c.pos, in: make([]int, len(c.pos))}
	for j, i := range c.pos {
		pw.in[j] = w.inPos[i]
	}
	for _, node := range c.spec.Passes {
		labs, err := labelers(c.spec, node)
		if err != nil {
			return nil, err
		}
		pw.labs = append(pw.labs, labs)
	}
	return pw, nil
}

// placedStep is the walk's step for release record r (the relN-th) along the
// placement: the input records no pass places, before the next one that one does,
// are counted as suppressed (their number returned), and r must be that one
// generalized at its pass's node. inN counts the input records read.
func (w *walker) placedStep(t Truth, inHeader []string, in Reader, r []string, relN int, inN *int) (int, error) {
	pl := w.placed.pl
	skipped := 0
	for {
		x, err := in.Read()
		if errors.Is(err, io.EOF) {
			return skipped, &Violation{Msg: fmt.Sprintf("release record %d: the input has no record left that the passes place (they place %d): the release holds a record they suppress, or one invented or duplicated", relN, pl.Released())}
		}
		if err != nil {
			return skipped, err
		}
		*inN++
		if len(x) != len(inHeader) {
			return skipped, fmt.Errorf("truthfulness: input record %d has %d fields, the header %d", *inN, len(x), len(inHeader))
		}
		if *inN > pl.Records() {
			return skipped, fmt.Errorf("truthfulness: input record %d: the passes placed %d input records (did the input change?)", *inN, pl.Records())
		}
		pass := int(pl.pass[*inN-1])
		if pass == 0 {
			if t.Input != nil {
				t.Input(x, false)
			}
			w.suppressed(x)
			skipped++
			continue
		}
		if col, _ := w.mismatch(r, x); col >= 0 {
			return skipped, &Violation{Msg: fmt.Sprintf("release record %d is not the generalization of input record %d, which pass %d places (column %q differs): the release leaves out a record the passes place, holds one they suppress, or one changed or out of order", relN, *inN, pass, t.Columns[col])}
		}
		if err := w.placed.atNode(r, x, pass, relN, *inN); err != nil {
			return skipped, err
		}
		if t.Input != nil {
			t.Input(x, true)
		}
		w.placed.pass = uint8(pass)
		w.matched(r, x)
		return skipped, nil
	}
}

// atNode reports a *Violation when release record r (the relN-th) is not input
// record x (the inN-th) generalized exactly at the node of pass (from 1), which
// places it: every quasi-identifier its label at the node's level for the column.
func (pw *placedWalk) atNode(r, x []string, pass, relN, inN int) error {
	j, err := pw.differs(pass-1, r, x)
	if err != nil || j < 0 {
		return err
	}
	for p := range pw.labs {
		if k, err := pw.differs(p, r, x); p != pass-1 && err == nil && k < 0 {
			return &Violation{Msg: fmt.Sprintf("release record %d is input record %d generalized at the node of pass %d, but pass %d places it", relN, inN, p+1, pass)}
		}
	}
	lab := pw.labs[pass-1][j]
	return &Violation{Msg: fmt.Sprintf("release record %d is not input record %d generalized at the node of pass %d, which places it (column %q does not hold the label of level %d)", relN, inN, pass, lab.q.Column, lab.level)}
}

// differs is the first quasi-identifier in which release record r does not hold
// input record x's label at the node of pass p (from 0); -1 when none. An empty
// input field is labeled as its column's Null when set (labeler.label), as
// ExpectedSuppression and CheckClasses label it.
func (pw *placedWalk) differs(p int, r, x []string) (int, error) {
	for j, lab := range pw.labs[p] {
		s, err := lab.label(x[pw.in[j]])
		if err != nil {
			return j, err
		}
		if s != r[pw.pos[j]] {
			return j, nil
		}
	}
	return -1, nil
}

// leftOut reports the inN-th input record, which the walk found left out of a
// release of relN records, when a pass places it (nil for no placement).
func (pw *placedWalk) leftOut(inN, relN int) error {
	switch {
	case pw == nil:
		return nil
	case inN > pw.pl.Records():
		return fmt.Errorf("truthfulness: input record %d: the passes placed %d input records (did the input change?)", inN, pw.pl.Records())
	case pw.pl.pass[inN-1] != 0:
		return &Violation{Msg: fmt.Sprintf("input record %d, which pass %d places, is missing from the release (%d records; the passes place %d)", inN, pw.pl.pass[inN-1], relN, pw.pl.Released())}
	}
	return nil
}

// ended checks the walk's end, the whole input read (inN records): the input must be
// the one placed. The counter is then known to be checked against the placement.
func (pw *placedWalk) ended(inN int) error {
	if pw == nil {
		return nil
	}
	if inN != pw.pl.Records() {
		return fmt.Errorf("truthfulness: the input has %d records, the passes placed %d (did the input change?)", inN, pw.pl.Records())
	}
	pw.count.walked = true
	return nil
}

// errUnwalked reports a local recoding's release record counted by Add, AddMatched or
// AddMatchedBatch: only the truthfulness walk knows its pass (Spec.Placed).
var errUnwalked = errors.New("local recoding: a release record counted without the truthfulness walk (Truth.Count), which knows its pass")

// checkPlaced reports a local recoding's count that no complete truthfulness walk
// checked against the placement (Spec.Placed), or whose records are not those the
// passes place.
func (c *Counter) checkPlaced() error {
	pl := c.spec.Placed
	switch {
	case pl == nil:
		return nil
	case !c.walked:
		return errors.New("local recoding: the release was counted without a complete truthfulness walk (Truth.Count), which checks it against the passes")
	case c.spec.InputRows != pl.Records():
		return fmt.Errorf("local recoding: the input has %d records (Spec.InputRows), the passes placed %d", c.spec.InputRows, pl.Records())
	case c.m.Rows != pl.Released():
		return &Violation{Msg: fmt.Sprintf("the release holds %d records, the passes place %d", c.m.Rows, pl.Released())}
	}
	return nil
}
