package generalize

import (
	"cmp"
	"fmt"
	"slices"

	"sanitizer/schema"
)

// Linkable records (Options.Linkable): when a release lets a person's records be
// linked (a keyed pseudonym of the person), an attacker who knows several of a
// person's records can intersect their classes. Multirelational k-anonymity (Nergiz,
// Clifton, Nergiz, "Multirelational k-Anonymity", IEEE TKDE 21(8), 2009) closes that:
// group the released persons by the set of published classes their records lie in;
// every group holds at least k persons.
//
// It is enforced on a node's classes, once k and the other models have decided which
// classes fail, by suppressing persons, all of their records: the persons of every
// group of fewer than k are suppressed; a class left with fewer than k persons fails
// (all of its records are suppressed), which changes its persons' sets; and so on
// until nothing changes. Every round suppresses at least one more person, so it ends.
// The suppression limit counts the records, as always.
//
// A person's records leave published classes whose other records stay: the metrics
// the search may minimize then are those whose value never falls when a record is
// suppressed, whatever its class (loss, NCP, height, precision, entropy-loss); the
// others (discernibility, DM*, AECS, the entropies) may fall when a class shrinks, so
// that their bounds would not hold: linkable records refuse them.

// checkLinkable rejects options that multirelational k-anonymity cannot be searched
// with in this version.
func checkLinkable(t *Table, opt Options) error {
	if !opt.Linkable {
		return nil
	}
	switch {
	case t.Unit == nil:
		return fmt.Errorf("linkable records need a privacy unit")
	case len(opt.Diversity)+len(opt.Closeness)+len(opt.Likeness) > 0:
		return fmt.Errorf("linkable records with l-diversity, t-closeness or β-likeness are not in this version")
	}
	switch opt.Metric {
	case "", MetricLoss, schema.MetricNCP, MetricHeight, MetricPrecision, schema.MetricEntropyLoss:
		return nil
	}
	return fmt.Errorf("metric %q may fall when a person's records leave a class, which linkable records do: use loss, ncp, height, precision or entropy-loss", opt.Metric)
}

// linked is the outcome of multirelational k-anonymity on a node's classes.
type linked struct {
	failing    []bool  // per class: fails (all of its records suppressed)
	persons    []bool  // per person: suppressed (all of their records)
	rows       []int64 // per class that does not fail: its records of suppressed persons
	left       []int32 // per class that does not fail: its persons not suppressed
	suppressed int     // records suppressed in all
}

// linkPersons enforces multirelational k-anonymity on the classes cls of a node whose
// entries (one per class and person, the person in column q) are e, entry j in class
// of[j]; failing marks the classes that fail the other models (nil: none), persons is
// the number of persons the codes may name.
func linkPersons(e *classes, of []int32, q int, cls *classes, failing []bool, k int32, persons int) *linked {
	l := &linked{failing: make([]bool, cls.n), persons: make([]bool, persons), rows: make([]int64, cls.n), left: make([]int32, cls.n)}
	for j := range cls.n {
		l.failing[j] = cls.personsOf(j) < k || (failing != nil && failing[j])
		l.left[j] = cls.personsOf(j)
	}
	byPerson := entriesByPerson(e, q, persons)
	for {
		small := l.smallGroups(byPerson, of, k)
		if len(small) == 0 {
			break
		}
		for _, p := range small {
			l.persons[p] = true
			for _, x := range byPerson.of(p) {
				if j := of[x]; !l.failing[j] {
					l.left[j]--
					l.rows[j] += int64(e.count(int(x)))
				}
			}
		}
		for j := range cls.n {
			if !l.failing[j] && l.left[j] < k {
				l.failing[j] = true
			}
		}
	}
	for j := range cls.n {
		if l.failing[j] {
			l.suppressed += int(cls.count(j))
		} else {
			l.suppressed += int(l.rows[j])
		}
	}
	return l
}

// personEntries lists the entries of every person: those of person p are
// order[start[p]:start[p+1]].
type personEntries struct {
	start, order []int32
}

func (pe personEntries) of(p int32) []int32 { return pe.order[pe.start[p]:pe.start[p+1]] }

// entriesByPerson orders the n entries of e by their person (column q), a counting
// sort.
func entriesByPerson(e *classes, q, persons int) personEntries {
	pe := personEntries{start: make([]int32, persons+1), order: make([]int32, e.n)}
	for j := range e.n {
		pe.start[e.code(q, j)+1]++
	}
	for p := range persons {
		pe.start[p+1] += pe.start[p]
	}
	next := slices.Clone(pe.start[:persons])
	for j := range e.n {
		p := e.code(q, j)
		pe.order[next[p]] = int32(j)
		next[p]++
	}
	return pe
}

// smallGroups returns the persons, not suppressed and in at least one published
// class, whose set of published classes fewer than k such persons share. A person in
// one class is counted with that class's; the sets of the others are grouped by a
// hash of the set, sorted, and compared in full within equal hashes.
func (l *linked) smallGroups(pe personEntries, of []int32, k int32) []int32 {
	single := make([]int32, len(l.failing)) // per class: its persons in that class alone
	only := make([]int32, len(pe.start)-1)  // per person in one class: the class (−1: not)
	var multi []personSet
	var sets []int32
	for p := range int32(len(pe.start) - 1) {
		only[p] = -1
		if l.persons[p] {
			continue
		}
		from := len(sets)
		for _, x := range pe.of(p) {
			if j := of[x]; !l.failing[j] {
				sets = append(sets, j)
			}
		}
		switch len(sets) - from {
		case 0: // released in no class
		case 1:
			only[p] = sets[from]
			single[sets[from]]++
			sets = sets[:from]
		default:
			set := sets[from:]
			slices.Sort(set)
			multi = append(multi, personSet{hash: setHash(set), p: p, from: int32(from), to: int32(len(sets))})
		}
	}
	var small []int32
	for p, j := range only {
		if j >= 0 && single[j] < k {
			small = append(small, int32(p))
		}
	}
	slices.SortFunc(multi, func(a, b personSet) int {
		if c := cmp.Compare(a.hash, b.hash); c != 0 {
			return c
		}
		return slices.Compare(sets[a.from:a.to], sets[b.from:b.to])
	})
	for lo := 0; lo < len(multi); {
		hi := lo + 1
		for hi < len(multi) && multi[hi].hash == multi[lo].hash && slices.Equal(sets[multi[hi].from:multi[hi].to], sets[multi[lo].from:multi[lo].to]) {
			hi++
		}
		if hi-lo < int(k) {
			for _, m := range multi[lo:hi] {
				small = append(small, m.p)
			}
		}
		lo = hi
	}
	return small
}

// personSet is a person in several published classes: sets[from:to] of smallGroups,
// sorted, and its hash.
type personSet struct {
	hash     uint64
	p        int32
	from, to int32
}

// setHash is a hash of a sorted set of classes: equal sets, equal hashes.
func setHash(set []int32) uint64 {
	h := uint64(len(set))
	for _, j := range set {
		h = mix(h^uint64(j)*0x9e3779b97f4a7c15, true)
	}
	return h
}

// split returns cls with every published class that lost suppressed persons' records
// split in two: the records left (published, with their persons) and those suppressed
// (a failing class of the same codes), with the failing flags of the result: the
// classes the metrics value, one record each as released or suppressed.
func (l *linked) split(cls *classes, q int) (*classes, []bool) {
	out := &classes{node: cls.node, cols: make([][]int32, q)}
	var failing []bool
	add := func(j int, count, persons int32, fails bool) {
		for i := range q {
			out.cols[i] = append(out.cols[i], cls.code(i, j))
		}
		out.counts = append(out.counts, count)
		out.persons = append(out.persons, persons)
		failing = append(failing, fails)
		out.n++
	}
	for j := range cls.n {
		switch {
		case l.failing[j]:
			add(j, cls.count(j), cls.personsOf(j), true)
		case l.rows[j] == 0:
			add(j, cls.count(j), l.left[j], false)
		default:
			add(j, cls.count(j)-int32(l.rows[j]), l.left[j], false)
			add(j, int32(l.rows[j]), 0, true)
		}
	}
	return out, failing
}
