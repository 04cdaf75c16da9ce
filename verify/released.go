package verify

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// ReleasedMeasured is what a column released as it is reveals about one protected
// sensitive column. The released records are grouped by the column's value alone (an
// attacker who knows only that value of a person), and by its value within each
// published class (one who knows it besides the quasi-identifiers); each group is
// checked against the sensitive column's requirements as a published class is. A
// group that fails them tells its records' sensitive values apart where a class may
// not: a ward whose patients all have one diagnosis gives the diagnosis away. Counts
// only: never a value.
type ReleasedMeasured struct {
	Column    string // the column released as it is
	Sensitive string // the protected sensitive column
	// Groups is the number of distinct values of Column in the release (an empty
	// field is a value of its own), FailingGroups how many of them fail, and Records
	// the released records that hold one of those.
	Groups, FailingGroups, Records int
	// WithClasses is the released records whose class-and-value group fails: what the
	// column would reveal to an attacker who knew it besides the quasi-identifiers
	// (such a column is a quasi-identifier).
	WithClasses int
}

// Fails reports whether the column's values alone tell a group's sensitive values
// apart where the requirements do not allow it.
func (r ReleasedMeasured) Fails() bool { return r.FailingGroups > 0 }

// releasedCounter counts, for every column released as it is and every protected
// sensitive column but itself, the sensitive values of each value group and of each
// class-and-value group.
type releasedCounter struct {
	pos   []int              // the released columns' fields
	ids   []map[string]int32 // per released column: value → group number (staging side)
	pairs []releasedPair     // (released column, sensitive column) measured
}

// releasedPair is one released column measured against one sensitive column.
type releasedPair struct {
	col, sens int // index in releasedCounter.pos, and in Spec.Sensitive
	// alone and within count records by (group, sensitive value) and by (class,
	// group, sensitive value)
	alone  map[[2]int32]int64
	within map[[3]int32]int64
}

// newReleasedCounter sets up the measure of spec.Released against the protected
// sensitive columns, or returns nil when there is nothing to measure.
func newReleasedCounter(spec Spec, header []string) (*releasedCounter, error) {
	rc := &releasedCounter{}
	for _, name := range spec.Released {
		at := slices.Index(header, name)
		if at < 0 {
			return nil, &Violation{Msg: fmt.Sprintf("column %q, released as it is, is missing from the release", name)}
		}
		j := len(rc.pos)
		for i, sc := range spec.Sensitive {
			if sc.Column != name && sc.requires() {
				rc.pairs = append(rc.pairs, releasedPair{col: j, sens: i, alone: map[[2]int32]int64{}, within: map[[3]int32]int64{}})
			}
		}
		rc.pos = append(rc.pos, at)
		rc.ids = append(rc.ids, map[string]int32{})
	}
	if len(rc.pairs) == 0 {
		return nil, nil
	}
	return rc, nil
}

// requires reports whether the column has a requirement a group can fail.
func (sc Sensitive) requires() bool {
	return len(sc.Diversity) > 0 || len(sc.Closeness) > 0 || len(sc.Likeness) > 0
}

// stage appends the group numbers of a release record's released values to groups.
func (rc *releasedCounter) stage(rec []string, groups []int32) []int32 {
	for j, at := range rc.pos {
		v := rec[at]
		g, ok := rc.ids[j][v]
		if !ok {
			g = int32(len(rc.ids[j]))
			rc.ids[j][strings.Clone(v)] = g // not the record's: its memory may be a batch's
		}
		groups = append(groups, g)
	}
	return groups
}

// count counts the staged records whose classes are classes, group numbers groups
// (len(pos) per record) and sensitive value numbers sens (ns per record).
func (rc *releasedCounter) count(classes, groups, sens []int32, ns int) {
	nr := len(rc.pos)
	for _, p := range rc.pairs {
		for r, k := range classes {
			g, s := groups[r*nr+p.col], sens[r*ns+p.sens]
			p.alone[[2]int32{g, s}]++
			p.within[[3]int32{k, g, s}]++
		}
	}
}

// measure checks every group of every pair against its sensitive column's
// requirements.
func (rc *releasedCounter) measure(spec Spec) ([]ReleasedMeasured, error) {
	var out []ReleasedMeasured
	for _, p := range rc.pairs {
		sc := spec.Sensitive[p.sens]
		rm := ReleasedMeasured{Column: spec.Released[p.col], Sensitive: sc.Column}
		alone := make([]groupCount, 0, len(p.alone))
		for k, n := range p.alone {
			alone = append(alone, groupCount{class: -1, group: k[0], value: k[1], n: n})
		}
		within := make([]groupCount, 0, len(p.within))
		for k, n := range p.within {
			within = append(within, groupCount{class: k[0], group: k[1], value: k[2], n: n})
		}
		var err error
		if rm.Groups, rm.FailingGroups, rm.Records, err = failingGroups(sc, alone); err != nil {
			return nil, err
		}
		if _, _, rm.WithClasses, err = failingGroups(sc, within); err != nil {
			return nil, err
		}
		out = append(out, rm)
	}
	return out, nil
}

// groupCount is the records of a group (class −1: a value group) holding one
// sensitive value.
type groupCount struct {
	class, group, value int32
	n                   int64
}

// failingGroups sorts counts into their groups and checks each group's histogram
// against sc's requirements: it returns the groups, those that fail, and the records
// of those.
func failingGroups(sc Sensitive, counts []groupCount) (groups, failing, records int, err error) {
	slices.SortFunc(counts, func(a, b groupCount) int {
		return cmp.Or(cmp.Compare(a.class, b.class), cmp.Compare(a.group, b.group), cmp.Compare(a.value, b.value))
	})
	dense := make([]int64, len(sc.Values))
	var hist []int64
	for lo := 0; lo < len(counts); {
		hi, size := lo, int64(0)
		hist = hist[:0]
		for ; hi < len(counts) && counts[hi].class == counts[lo].class && counts[hi].group == counts[lo].group; hi++ {
			dense[counts[hi].value] = counts[hi].n
			hist = append(hist, counts[hi].n)
			size += counts[hi].n
		}
		slices.Sort(hist)
		fails, err := sc.groupFails(dense, hist)
		for _, c := range counts[lo:hi] {
			dense[c.value] = 0
		}
		if err != nil {
			return 0, 0, 0, err
		}
		groups++
		if fails {
			failing++
			records += int(size)
		}
		lo = hi
	}
	return groups, failing, records, nil
}

// groupFails reports whether a group of records, whose histogram over the column's
// values is dense (and its non-zero counts hist, sorted), fails one of the column's
// requirements as a published class would: an l-diversity model, a t-closeness
// distance or a β-likeness bound.
func (sc Sensitive) groupFails(dense, hist []int64) (bool, error) {
	for _, d := range sc.Diversity {
		if !d.Holds(hist) {
			return true, nil
		}
	}
	for _, t := range sc.Closeness {
		emd, err := distance(t.Distance, dense, sc)
		if err != nil {
			return false, err
		}
		if emd > t.T {
			return true, nil
		}
	}
	var m SensitiveMeasured
	if err := checkLikeness(sc, dense, &m); err != nil {
		if _, ok := err.(*Violation); ok {
			return true, nil
		}
		return false, err
	}
	return false, nil
}
