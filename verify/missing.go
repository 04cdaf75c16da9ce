package verify

// Missing records: a full-domain release may leave out an input record only when the
// record's class, at the release's generalization, fails the models (k, l, t); every
// record of a class that meets them must be released (ARX's semantics: the node
// suppresses exactly its failing classes). This file generalizes every input record
// with its own reading of the hierarchies (Domain) and compares the classes with the
// release's; it shares no code with package generalize.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"sanitizer/fault"
	"sanitizer/risk"
	"sanitizer/schema"
)

// ErrAmbiguousLevels reports a release that more than one node explains (see
// InferNode): the check needs the release's node from elsewhere (its metadata or
// report).
var ErrAmbiguousLevels = errors.New("the release's node cannot be told from its values")

// IntervalLevels is the interval builder's hierarchy over a column of type typ
// (integer or float) with the given widths, finest first: it measures as
// IntervalDomain does, and also writes the label of every level (level j+1 is the
// interval of width widths[j] that holds the value, then "*").
func IntervalLevels(typ schema.Type, widths []float64) *Domain {
	return &Domain{kind: domainIntervals, source: "interval hierarchy", height: len(widths) + 2, top: top, typ: typ, widths: widths}
}

// Classes is what a release holds: its records per class and, per quasi-identifier,
// the values it releases.
type Classes struct {
	count  map[string]int64
	values []map[string]bool
}

// Equal reports whether c and o hold the same classes, of the same sizes.
func (c *Classes) Equal(o *Classes) bool { return maps.Equal(c.count, o.count) }

// ReleasedClasses counts the classes of the release read from rel (records of
// spec.Columns, the header already consumed).
func ReleasedClasses(spec Spec, rel Reader) (*Classes, error) {
	pos := make([]int, len(spec.Quasi))
	for j, q := range spec.Quasi {
		pos[j] = -1
		for i, c := range spec.Columns {
			if c == q {
				pos[j] = i
			}
		}
		if pos[j] < 0 {
			return nil, &Violation{Msg: fmt.Sprintf("quasi-identifier %q missing from the release", q)}
		}
	}
	cl := &Classes{count: map[string]int64{}, values: make([]map[string]bool, len(pos))}
	var key []byte
	for n := 1; ; n++ {
		rec, err := rel.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(rec) != len(spec.Columns) {
			return nil, &Violation{Msg: fmt.Sprintf("release record %d has %d fields, the header %d", n, len(rec), len(spec.Columns))}
		}
		key = key[:0]
		for _, p := range pos {
			key = appendKey(key, rec[p])
		}
		cl.count[string(key)]++
	}
	// Each quasi-identifier's released values, from the classes' keys: every record's
	// values are its class's, and a table holds far fewer classes than records.
	for j := range cl.values {
		cl.values[j] = map[string]bool{}
	}
	for key := range cl.count {
		for j, v := range keyFields(key, len(pos)) {
			cl.values[j][v] = true
		}
	}
	return cl, nil
}

// keyFields is the n values of a class key made by appendKey.
func keyFields(key string, n int) []string {
	out := make([]string, 0, n)
	for len(key) >= 4 && len(out) < n {
		l := int(binary.LittleEndian.Uint32([]byte(key[:4])))
		out = append(out, key[4:4+l])
		key = key[4+l:]
	}
	return out
}

// appendKey appends a class key's field: its length (4 bytes), then the value, as
// Counter keys its classes by their values (appendValueKey).
func appendKey(key []byte, v string) []byte {
	key = binary.LittleEndian.AppendUint32(key, uint32(len(v)))
	return append(key, v...)
}

// labeler writes the values of one quasi-identifier at one level of its hierarchy,
// remembering the values met.
type labeler struct {
	q     Quasi
	level int
	// seen numbers the values met, labels holds their labels by number, and memo,
	// in front of seen, finds a value met again in the same string by its address
	// (strMemo): the verifier's decoders hand out a column's values as shared strings,
	// and a string map hashes and compares the bytes at every record.
	seen   map[string]int32
	labels []string
	memo   *strMemo
	// written is every value label has returned: a value's label is worked out (and
	// written here) the first time the value is met, and after seen is let go of.
	written map[string]bool
}

func newLabeler(q Quasi, level int) (*labeler, error) {
	if q.Domain == nil {
		return nil, fmt.Errorf("quasi-identifier %q has no hierarchy", q.Column)
	}
	if level < 0 || level >= q.Domain.height {
		return nil, &Violation{Msg: fmt.Sprintf("column %q: level %d outside its hierarchy's 0..%d", q.Column, level, q.Domain.height-1)}
	}
	return &labeler{q: q, level: level, seen: map[string]int32{}, memo: newStrMemo(), written: map[string]bool{}}, nil
}

// label is the value v of the input (as read, "" possibly a null) at the level.
func (l *labeler) label(v string) (string, error) {
	if i, ok := l.memo.get(v); ok {
		return l.labels[i], nil
	}
	if i, ok := l.seen[v]; ok {
		l.memo.put(v, i)
		return l.labels[i], nil
	}
	orig := v
	if v == "" && l.q.Null != nil {
		v = *l.q.Null
	}
	s, ok := l.q.Domain.Label(v, l.level)
	if !ok {
		return "", &Violation{Msg: fmt.Sprintf("column %q: an input value that its %s does not generalize", l.q.Column, l.q.Domain.source)}
	}
	if len(l.seen) >= 1<<20 {
		clear(l.seen)
		l.labels, l.memo = l.labels[:0], newStrMemo()
	}
	i := int32(len(l.labels))
	l.labels = append(l.labels, s)
	l.seen[strings.Clone(orig)] = i
	l.memo.put(orig, i)
	l.written[s] = true
	return s, nil
}

// Height is the hierarchy's number of levels, the leaves' included.
func (d *Domain) Height() int { return d.height }

// Label is leaf v's value at the given level of the hierarchy, as a full-domain
// release writes it; false when the hierarchy does not generalize v or has no such
// level.
func (d *Domain) Label(v string, level int) (string, bool) {
	if level < 0 || level >= d.height {
		return "", false
	}
	switch {
	case level == d.height-1:
		return d.top, true
	case d.kind == domainIntervals:
		if level == 0 {
			return v, true
		}
		if level > len(d.widths) {
			return "", false
		}
		return intervalLabel(v, d.typ, d.widths[level-1])
	case level == 0 && d.kind != domainFile:
		return v, true
	}
	labs, ok := d.labelsOf(v)
	if !ok || level >= len(labs) {
		return "", false
	}
	return labs[level], true
}

// intervalLabel is the interval of width w that holds v: "[lo,hi]" with lo = ⌊v/w⌋·w
// and hi = lo+w−1 for integers, "[lo,hi)" with hi = lo+w for floats, the bounds
// written as exact decimals and v lying in the half-open interval of their float64
// readings.
func intervalLabel(v string, typ schema.Type, w float64) (string, bool) {
	switch typ {
	case schema.Integer:
		x, ok := new(big.Int).SetString(v, 10)
		if !ok || w < 1 || w != math.Trunc(w) {
			return "", false
		}
		bw := big.NewInt(int64(w))
		lo := new(big.Int).Div(x, bw) // Euclidean: ⌊x/w⌋ for w > 0
		lo.Mul(lo, bw)
		hi := new(big.Int).Add(lo, bw)
		hi.Sub(hi, big.NewInt(1))
		return "[" + lo.String() + "," + hi.String() + "]", true
	case schema.Float:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || !(w > 0) {
			return "", false
		}
		text := strconv.FormatFloat(w, 'f', -1, 64)
		digits := 0
		if _, frac, ok := strings.Cut(text, "."); ok {
			digits = len(frac)
		}
		rw, _ := new(big.Rat).SetString(text)
		x := new(big.Rat).SetFloat64(f)
		x.Quo(x, rw)
		k := new(big.Int).Div(x.Num(), x.Denom())
		// the float64 reading of bound k+1 may round down to f: f then lies in cell k+1
		for range 4 {
			if next := new(big.Int).Add(k, big.NewInt(1)); ratFloat(next, rw) <= f {
				k = next
				continue
			}
			next := new(big.Int).Add(k, big.NewInt(1))
			return "[" + ratDecimal(k, rw, digits) + "," + ratDecimal(next, rw, digits) + ")", true
		}
	}
	return "", false
}

// ratFloat is the float64 nearest n·w.
func ratFloat(n *big.Int, w *big.Rat) float64 {
	f, _ := new(big.Rat).Mul(new(big.Rat).SetInt(n), w).Float64()
	return f
}

// ratDecimal writes n·w exactly, with at most digits decimals and no trailing zeros.
func ratDecimal(n *big.Int, w *big.Rat, digits int) string {
	s := new(big.Rat).Mul(new(big.Rat).SetInt(n), w).FloatString(digits)
	if digits > 0 {
		s = strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// maxCandidateNodes bounds the nodes InferNode tries.
const maxCandidateNodes = 64

// InferNode finds the node of a full-domain release that does not record it: among
// the nodes whose every level writes, for the input's values, each value the release
// holds (levels that write the input alike counted once), the one under which the
// release leaves out exactly what ExpectedSuppression requires. open opens the input
// as ExpectedSuppression reads it (it is read once, then once per node tried). It
// returns the node and the number of records its models require suppressed. When no
// node fits, it reports the *Violation found at the first (the finest); when several
// do, or too many are to be tried, ErrAmbiguousLevels.
func InferNode(spec Spec, rel *Classes, open func() (Reader, func(), error)) ([]int, int, error) {
	in, done, err := open()
	if err != nil {
		return nil, 0, err
	}
	cands, err := candidateLevels(spec, rel, in)
	done()
	if err != nil {
		return nil, 0, err
	}
	nodes := 1
	for _, c := range cands {
		nodes *= len(c)
		if nodes > maxCandidateNodes {
			return nil, 0, fmt.Errorf("more than %d nodes fit the release's values: %w", maxCandidateNodes, ErrAmbiguousLevels)
		}
	}
	var (
		found, required int
		node            []int
		first           error
	)
	for i := range nodes {
		levels := make([]int, len(cands))
		for j, x := len(cands)-1, i; j >= 0; j-- {
			levels[j], x = cands[j][x%len(cands[j])], x/len(cands[j])
		}
		if in, done, err = open(); err != nil {
			return nil, 0, err
		}
		n, err := ExpectedSuppression(spec, levels, rel, in)
		done()
		var v *Violation
		switch {
		case err == nil:
			found, node, required = found+1, levels, n
		case !errors.As(err, &v):
			return nil, 0, err
		case first == nil:
			first = err
		}
	}
	switch {
	case found > 1:
		return nil, 0, fmt.Errorf("%d nodes explain the release: %w", found, ErrAmbiguousLevels)
	case found == 0 && nodes > 1:
		return nil, 0, &Violation{Msg: fmt.Sprintf("none of the %d nodes that write the release's values explains the records it leaves out; at the finest: %v", nodes, first)}
	case found == 0:
		return nil, 0, first
	}
	return node, required, nil
}

// candidateLevels is, per quasi-identifier, the levels that write every value the
// release holds from the input's values (read from in, the quasi-identifiers first
// in spec.Quasi order), one level of those that write the input alike. A column that
// no level fits is a *Violation.
func candidateLevels(spec Spec, rel *Classes, in Reader) ([][]int, error) {
	q := len(spec.Utility)
	if q != len(spec.Quasi) {
		return nil, fmt.Errorf("%d hierarchies for %d quasi-identifiers", q, len(spec.Quasi))
	}
	distinct := make([]map[string]bool, q)
	for j := range distinct {
		distinct[j] = map[string]bool{}
	}
	for {
		rec, err := in.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(rec) < q {
			return nil, fmt.Errorf("an input record of %d fields for %d quasi-identifiers", len(rec), q)
		}
		for j := range q {
			if !distinct[j][rec[j]] {
				distinct[j][strings.Clone(rec[j])] = true
			}
		}
	}
	cands := make([][]int, q)
	for j, qu := range spec.Utility {
		var err error
		if cands[j], err = fittingLevels(qu, distinct[j], rel.values[j]); err != nil {
			return nil, err
		}
	}
	return cands, nil
}

// fittingLevels is candidateLevels for one quasi-identifier.
func fittingLevels(q Quasi, input, released map[string]bool) ([]int, error) {
	var fits []int
	var labels []map[string]string // per level kept: every input value's label
	for l := range q.Domain.height {
		lab, err := newLabeler(q, l)
		if err != nil {
			return nil, err
		}
		written := map[string]bool{}
		of := map[string]string{}
		for v := range input {
			s, err := lab.label(v)
			if err != nil {
				return nil, err
			}
			written[s], of[v] = true, s
		}
		fit := true
		for r := range released {
			fit = fit && written[r]
		}
		for _, o := range labels {
			fit = fit && !sameLabels(o, of)
		}
		if fit {
			fits, labels = append(fits, l), append(labels, of)
		}
	}
	if len(fits) == 0 {
		return nil, &Violation{Msg: fmt.Sprintf("column %q: the release's values are not those of one level of its %s", q.Column, q.Domain.source)}
	}
	return fits, nil
}

// sameLabels reports whether two levels write every input value alike.
func sameLabels(a, b map[string]string) bool {
	for v, s := range a {
		if b[v] != s {
			return false
		}
	}
	return true
}

// FitsLevels reports a *Violation naming the first quasi-identifier whose released
// values are not all labels, at its given level, of the input's values (read from in,
// the quasi-identifiers first in spec.Quasi order).
func FitsLevels(spec Spec, levels []int, rel *Classes, in Reader) error {
	labs, err := labelers(spec, levels)
	if err != nil {
		return err
	}
	for {
		rec, err := in.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		for j, lab := range labs {
			if _, err := lab.label(rec[j]); err != nil {
				return err
			}
		}
	}
	for j, q := range spec.Utility {
		for r := range rel.values[j] {
			if !labs[j].written[r] {
				return &Violation{Msg: fmt.Sprintf("column %q: a released value that level %d of its %s does not write for any input value", q.Column, levels[j], q.Domain.source)}
			}
		}
	}
	return nil
}

func labelers(spec Spec, levels []int) ([]*labeler, error) {
	if len(levels) != len(spec.Utility) || len(spec.Utility) != len(spec.Quasi) {
		return nil, fmt.Errorf("%d levels and %d hierarchies for %d quasi-identifiers", len(levels), len(spec.Utility), len(spec.Quasi))
	}
	labs := make([]*labeler, len(levels))
	for j, q := range spec.Utility {
		var err error
		if labs[j], err = newLabeler(q, levels[j]); err != nil {
			return nil, err
		}
	}
	return labs, nil
}

// inputClass is one class of the input at the release's generalization.
type inputClass struct {
	n     int64
	hists []map[int32]int64 // per sensitive column
	// counted in persons (Spec.Unit): the class's number, its persons, and why it
	// fails a model counted in persons ("": it meets them); with linkable records,
	// the records of the persons multirelational k-anonymity suppresses from it
	// when it does not fail
	id      int32
	persons int64
	why     string
	linked  int64
}

// ExpectedSuppression generalizes every input record read from in (its
// quasi-identifier values in spec.Quasi order, then the values of spec.Sensitive's
// columns in order, then, when spec names a privacy unit, the unit's value; a
// sensitive column's "" read as its Null when set) to levels, groups them into
// classes, and checks the release's classes against them: a class that meets the
// models (at least spec.K records, a prosecutor risk within spec.Risk.HighestRisk,
// every l-diversity, t-closeness and β-likeness requirement, the latter two against
// the whole input's distribution; with a privacy unit k, the risk, distinct
// l-diversity, t-closeness and β-likeness counted in persons, against the whole
// input's persons; with a research subset δ-presence and k-map against the
// population's counts; with spec.Profitability the prosecutor's profitability on the
// class's records, or the journalist's on its population count, the information loss
// of its labels counted in spec.Utility's domains as Leaves counts them, a built
// hierarchy's leaves being the input's distinct values, or with a research subset the
// population's, PopulationCheck.Leaves) must be released whole, one that fails them
// not at all, and the release may hold no other class. With linkable records (spec.Linkable) the persons
// that multirelational k-anonymity suppresses are left out too (linked.go's rounds,
// which may fail more classes): a class that meets the models must then be released
// but for exactly the number of records of its persons suppressed. A release that
// breaks this is a *Violation; it returns the number of input records the models
// require suppressed.
func ExpectedSuppression(spec Spec, levels []int, rel *Classes, in Reader) (int, error) {
	if err := checkUnitModels(spec); err != nil {
		return 0, err
	}
	labs, err := labelers(spec, levels)
	if err != nil {
		return 0, err
	}
	profit, feed, err := newClassProfit(spec, levels)
	if err != nil {
		return 0, err
	}
	if feed {
		in = profit.leaves.Reading(in) // the input's values, the built hierarchies' leaves
	}
	index := sensitiveIndex(spec)
	q, width := len(labs), len(labs)+len(spec.Sensitive)
	var persons *personTally
	var sens []int32
	if spec.Unit != "" {
		width++
		persons = newPersonTally(len(spec.Sensitive), spec.InputRows)
		persons.keepLefts(spec) // none left out: the reference is the records'
	}
	classes := map[string]*inputClass{}
	var key []byte
	for n := 1; ; n++ {
		rec, err := in.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, err
		}
		if len(rec) != width {
			return 0, fmt.Errorf("input record %d: %d fields for %d quasi-identifiers, %d sensitive columns and %d privacy unit", n, len(rec), q, len(spec.Sensitive), width-q-len(spec.Sensitive))
		}
		key = key[:0]
		for j, lab := range labs {
			s, err := lab.label(rec[j])
			if err != nil {
				return 0, err
			}
			key = appendKey(key, s)
		}
		c := classOf(classes, key, len(spec.Sensitive))
		c.n++
		for i, sc := range spec.Sensitive {
			v := rec[q+i]
			if v == "" && sc.Null != nil {
				v = *sc.Null
			}
			x, ok := index[i][v]
			if !ok {
				return 0, &Violation{Msg: fmt.Sprintf("input record %d: a value of sensitive column %q that the input's count does not hold (did the input change?)", n, sc.Column)}
			}
			c.hists[i][x]++
			sens = append(sens, x)
		}
		if persons != nil {
			if rec[q+len(spec.Sensitive)] == "" {
				return 0, fault.BadInput("input record %d: column %q, the privacy unit, is empty", n, spec.Unit)
			}
			persons.add(c.id, persons.person(rec[q+len(spec.Sensitive)]), sens)
		}
		sens = sens[:0]
	}
	if persons != nil {
		if err := judgeInputClasses(spec, classes, persons); err != nil {
			return 0, err
		}
	}
	var pop map[string]int64
	if spec.Population != nil {
		if pop, err = spec.Population.Counts(levels); err != nil {
			return 0, err
		}
	}
	return compareClasses(spec, classes, rel, pop, profit)
}

// classOf is the input class keyed key, added with its histograms of ns sensitive
// columns when new.
func classOf(classes map[string]*inputClass, key []byte, ns int) *inputClass {
	c := classes[string(key)]
	if c == nil {
		c = &inputClass{hists: make([]map[int32]int64, ns), id: int32(len(classes))}
		for i := range c.hists {
			c.hists[i] = map[int32]int64{}
		}
		classes[string(key)] = c
	}
	return c
}

// sensitiveIndex is, per sensitive column of spec, the number of each value.
func sensitiveIndex(spec Spec) []map[string]int32 {
	index := make([]map[string]int32, len(spec.Sensitive))
	for i, sc := range spec.Sensitive {
		index[i] = make(map[string]int32, len(sc.Values))
		for v, s := range sc.Values {
			index[i][s] = int32(v)
		}
	}
	return index
}

// compareClasses checks the release's classes against the input's (see
// ExpectedSuppression), profit deciding the profitability (nil: none).
func compareClasses(spec Spec, classes map[string]*inputClass, rel *Classes, pop map[string]int64, profit *classProfit) (int, error) {
	required := 0
	// With risk enforcement, the largest class left out that meets the models, and
	// the smallest released whole (−1: none).
	enforced, smallest := int64(-1), int64(-1)
	for key, c := range classes {
		got := rel.count[key]
		fails, why, err := classFails(spec, c)
		if err != nil {
			return 0, err
		}
		if !fails && spec.Population != nil {
			fails, why = spec.Population.Model.classFails(c.n, pop[key])
		}
		if !fails {
			if fails, why, err = profit.fails(key, c.n, pop[key]); err != nil {
				return 0, err
			}
		}
		kept := c.n - c.linked // the records of the persons kept
		switch {
		case fails && got > 0:
			return 0, &Violation{Msg: fmt.Sprintf("the release publishes %d records of a class that %s", got, why)}
		case fails:
			required += int(c.n)
		case c.linked > 0 && got != kept:
			return 0, &Violation{Msg: fmt.Sprintf("the release holds %d of the %d input records of a class that meets the models, multirelational k-anonymity suppressing %d of them (whole persons): it must hold %d", got, c.n, c.linked, kept)}
		case c.linked > 0:
		case got == 0 && spec.Risk.Enforced && spec.Risk.any():
			enforced = max(enforced, c.n)
			required += int(c.n)
		case got < c.n:
			return 0, &Violation{Msg: fmt.Sprintf("%d of the %d input records of a class that meets the models are missing from the release: only a class that fails them may be suppressed", c.n-got, c.n)}
		case got > c.n:
			return 0, &Violation{Msg: fmt.Sprintf("the release holds %d records of a class that has %d in the input", got, c.n)}
		}
		if !fails {
			required += int(c.linked)
		}
		if !fails && got == c.n && (smallest < 0 || c.n < smallest) {
			smallest = c.n
		}
	}
	if enforced >= 0 && smallest >= 0 && enforced > smallest {
		return 0, &Violation{Msg: fmt.Sprintf("the release leaves out a class of %d records that meets the models while it releases one of %d: the risk models' enforcement suppresses the smallest classes first", enforced, smallest)}
	}
	for key, n := range rel.count {
		if classes[key] == nil {
			return 0, &Violation{Msg: fmt.Sprintf("the release holds a class of %d records that the generalization makes of no input record", n)}
		}
	}
	return required, nil
}

// judgeInputClasses counts the input's classes in persons (the tally of their
// records) and decides them: each class's persons, why it fails a model counted in
// persons (the highest risk too), and with linkable records the persons that
// multirelational k-anonymity suppresses (linkRounds).
func judgeInputClasses(spec Spec, classes map[string]*inputClass, persons *personTally) error {
	byID := make([]*inputClass, len(classes))
	for _, c := range classes {
		byID[c.id] = c
	}
	counts, _, err := persons.judge(spec, len(classes), func(f personFailure) bool {
		c := byID[f.class]
		if f.kind == failK {
			c.why = fmt.Sprintf("has records of %d persons, k is %d", f.persons, spec.K)
		} else {
			c.why = fmt.Sprintf("has %d persons and %s", f.persons, f.why(spec))
		}
		return true
	})
	if err != nil {
		return err
	}
	failing := make([]bool, len(byID))
	for _, c := range byID {
		c.persons = counts[c.id]
		if h := spec.Risk.HighestRisk; h > 0 && c.why == "" && risk.AtRisk(c.persons, h) {
			c.why = fmt.Sprintf("has records of %d persons, a re-identification risk above the highest allowed, %g", c.persons, h)
		}
		failing[c.id] = c.why != ""
	}
	if !spec.Linkable || len(byID) == 0 {
		return nil
	}
	k := linkedK(spec)
	lost, left, err := linkRounds(persons.rows[0], slices.Clone(failing), counts, k)
	if err != nil {
		return err
	}
	for _, c := range byID {
		switch {
		case c.why != "":
		case left[c.id] < int64(k):
			c.why = fmt.Sprintf("has %d persons and %s", c.persons, personFailure{persons: left[c.id], kind: failGroup}.why(spec))
		default:
			c.linked = lost[c.id]
		}
	}
	return nil
}

// classFails decides whether an input class fails the models, and which.
func classFails(spec Spec, c *inputClass) (bool, string, error) {
	if spec.Unit != "" { // the models and the risk counted in persons (judgeInputClasses)
		return c.why != "", c.why, nil
	}
	if c.n < int64(spec.K) {
		return true, fmt.Sprintf("has %d records, k is %d", c.n, spec.K), nil
	}
	if h := spec.Risk.HighestRisk; h > 0 && risk.AtRisk(c.n, h) {
		return true, fmt.Sprintf("has %d records, a re-identification risk above the highest allowed, %g", c.n, h), nil
	}
	for i, sc := range spec.Sensitive {
		counts := make([]int64, 0, len(c.hists[i]))
		dense := make([]int64, len(sc.Values))
		for v, n := range c.hists[i] {
			counts = append(counts, n)
			dense[v] = n
		}
		for _, d := range sc.Diversity {
			if !d.Holds(counts) {
				return true, fmt.Sprintf("fails %s l-diversity (l=%g) on %q", d.Variant, d.L, sc.Column), nil
			}
		}
		for _, t := range sc.Closeness {
			emd, err := distance(t.Distance, dense, sc)
			if err != nil {
				return false, "", err
			}
			if emd > t.T {
				return true, fmt.Sprintf("lies at distance %.4g from the input's distribution of %q, t is %g", emd, sc.Column, t.T), nil
			}
		}
		var sm SensitiveMeasured
		var v *Violation
		if err := checkLikeness(sc, dense, &sm); errors.As(err, &v) {
			return true, fmt.Sprintf("gains %.4g over the input's distribution of %q, more than β-likeness allows", sm.MaxGain, sc.Column), nil
		} else if err != nil {
			return false, "", err
		}
	}
	return false, "", nil
}
