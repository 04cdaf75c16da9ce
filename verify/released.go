package verify

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// ReleasedMeasured is what a column released as it is reveals about one protected
// sensitive column. The released records are grouped by the column's value alone (what
// an attacker who knows only that value of a person learns), and each group is checked
// against the sensitive column's requirements as a published class is. A group that
// fails them tells its records' sensitive values apart where a class may not: a ward
// whose patients all have one diagnosis gives the diagnosis away. Counts only: never a
// value.
type ReleasedMeasured struct {
	Column    string // the column released as it is
	Sensitive string // the protected sensitive column
	// Groups is the number of distinct values of Column in the release (an empty
	// field is a value of its own), FailingGroups how many of them fail, and Records
	// the released records that hold one of those.
	Groups, FailingGroups, Records int
}

// Fails reports whether the column's values alone tell a group's sensitive values
// apart where the requirements do not allow it.
func (r ReleasedMeasured) Fails() bool { return r.FailingGroups > 0 }

// releasedCounter counts, for every column released as it is and every protected
// sensitive column but itself, the sensitive values of each value group.
type releasedCounter struct {
	names []string           // the released columns measured against some column
	pos   []int              // their fields
	ids   []map[string]int32 // per released column: value → group number (staging side)
	memo  []*strMemo         // in front of ids
	pairs []*releasedPair    // (released column, sensitive column) measured
}

// releasedPair is one released column measured against one sensitive column: the
// records of each (group, sensitive value).
type releasedPair struct {
	col, sens int   // index in releasedCounter.pos, and in Spec.Sensitive
	nv        int64 // the sensitive column's values
	// alone is dense, by group × nv + value, while it is at most denseMax long;
	// then aloneMap
	alone    []int64
	aloneMap map[uint64]int64
}

// denseMax bounds a pair's dense counts (8 bytes each); a variable for the tests.
var denseMax int64 = 1 << 20

// newReleasedCounter sets up the measure of spec.Released against the protected
// sensitive columns, or returns nil when there is nothing to measure.
func newReleasedCounter(spec Spec, header []string) (*releasedCounter, error) {
	rc := &releasedCounter{}
	for _, name := range spec.Released {
		at := slices.Index(header, name)
		if at < 0 {
			return nil, &Violation{Msg: fmt.Sprintf("column %q, released as it is, is missing from the release", name)}
		}
		j, before := len(rc.pos), len(rc.pairs)
		for i, sc := range spec.Sensitive {
			if sc.Column != name && sc.requires() {
				rc.pairs = append(rc.pairs, &releasedPair{col: j, sens: i, nv: int64(max(len(sc.Values), 1))})
			}
		}
		if len(rc.pairs) == before {
			continue // the only protected column: nothing to measure it against
		}
		rc.names, rc.pos = append(rc.names, name), append(rc.pos, at)
		rc.ids = append(rc.ids, map[string]int32{})
		rc.memo = append(rc.memo, newStrMemo())
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
		g, ok := rc.memo[j].get(v)
		if !ok {
			if g, ok = rc.ids[j][v]; !ok {
				g = int32(len(rc.ids[j]))
				rc.ids[j][strings.Clone(v)] = g // not the record's: its memory may be a batch's
			}
			rc.memo[j].put(v, g)
		}
		groups = append(groups, g)
	}
	return groups
}

// count counts n staged records whose group numbers are groups (len(pos) per record)
// and sensitive value numbers sens (ns per record).
func (rc *releasedCounter) count(n int, groups, sens []int32, ns int) {
	nr := len(rc.pos)
	for _, p := range rc.pairs {
		for r := range n {
			p.add(groups[r*nr+p.col], sens[r*ns+p.sens])
		}
	}
}

// add counts a record of group g and sensitive value s.
func (p *releasedPair) add(g, s int32) {
	at := int64(g)*p.nv + int64(s)
	switch {
	case p.aloneMap != nil:
		p.aloneMap[uint64(at)]++
	case at < int64(len(p.alone)):
		p.alone[at]++
	case at < denseMax:
		p.alone = append(p.alone, make([]int64, int(at)+1-len(p.alone))...)
		p.alone = p.alone[:cap(p.alone)]
		p.alone[at]++
	default:
		p.aloneMap = make(map[uint64]int64, len(p.alone))
		for i, n := range p.alone {
			if n > 0 {
				p.aloneMap[uint64(i)] = n
			}
		}
		p.alone = nil
		p.aloneMap[uint64(at)]++
	}
}

// counts returns the pair's counts by group, unsorted.
func (p *releasedPair) counts() []groupCount {
	var out []groupCount
	add := func(at uint64, n int64) {
		out = append(out, groupCount{group: int32(int64(at) / p.nv), value: int32(int64(at) % p.nv), n: n})
	}
	for at, n := range p.alone {
		if n > 0 {
			add(uint64(at), n)
		}
	}
	for at, n := range p.aloneMap {
		add(at, n)
	}
	return out
}

// measure checks every group of every pair against its sensitive column's
// requirements.
func (rc *releasedCounter) measure(spec Spec) ([]ReleasedMeasured, error) {
	var out []ReleasedMeasured
	for _, p := range rc.pairs {
		sc := spec.Sensitive[p.sens]
		rm := ReleasedMeasured{Column: rc.names[p.col], Sensitive: sc.Column}
		var err error
		if rm.Groups, rm.FailingGroups, rm.Records, err = failingGroups(sc, p.counts()); err != nil {
			return nil, err
		}
		out = append(out, rm)
	}
	return out, nil
}

// groupCount is the records of a group holding one sensitive value.
type groupCount struct {
	group, value int32
	n            int64
}

// failingGroups sorts counts into their groups and checks each group's histogram
// against sc's requirements: it returns the groups, those that fail, and the records
// of those.
func failingGroups(sc Sensitive, counts []groupCount) (groups, failing, records int, err error) {
	slices.SortFunc(counts, func(a, b groupCount) int {
		return cmp.Or(cmp.Compare(a.group, b.group), cmp.Compare(a.value, b.value))
	})
	dense := make([]int64, len(sc.Values))
	var hist []int64
	for lo := 0; lo < len(counts); {
		hi, size := lo, int64(0)
		hist = hist[:0]
		for ; hi < len(counts) && counts[hi].group == counts[lo].group; hi++ {
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
