package verify

// Linkable records (Spec.Linkable): a release whose records of one person may be
// linked (a pseudonym of the person) lets an attacker who knows several of a person's
// records intersect their classes. Multirelational k-anonymity (Nergiz, Clifton,
// Nergiz, "Multirelational k-Anonymity", IEEE TKDE 21(8), 2009): group the released
// persons by the set of released classes their released records lie in; every group
// holds at least k persons, k being Spec.K raised, as a class's is, by
// Risk.HighestRisk (a linked person's risk is 1 / their group's persons).
//
// The Counter groups the released persons of the release it counts. ExpectedSuppression
// works out which records a release at a node must leave out, as the search decides
// it: the classes that fail the other models are suppressed; then the persons of
// every group of fewer than k are suppressed, all of their records; a class left with
// fewer than k persons fails (all of its records suppressed), which changes its
// persons' sets; and so on until no group is under k. This file does it from the
// input's records, with no code of the search.
//
// The second round never suppresses anyone: the persons of a group share its set, so
// a class that fails moves a whole group to a smaller set (groups merge, never split)
// or out of the release; and a class with persons left lies in the set of a group of
// at least k of them, so that only a class left with none fails. The rounds are run
// as the search defines them all the same, and the tests hold them to maps of ids.
//
// Persons are the 64-bit hashes of their ids (persons.go). Two persons whose ids hash
// alike count as one with the union of their classes: every group they were in loses
// a person, and a group of their union (one person) may appear, so the groups the
// Counter measures are never larger than they are and the check fails closed. In
// ExpectedSuppression a collision may change which persons the rounds suppress, so
// that a right release fails or a wrong one passes. The chance of any collision among
// P persons is at most P²/2⁶⁵ per count.

import (
	"cmp"
	"math"
	"slices"

	"sanitizer/fault"
	"sanitizer/risk"
)

// linkedK is the least persons of a group of linked persons: spec.K, raised by the
// highest risk allowed.
func linkedK(spec Spec) int {
	k := spec.K
	if h := spec.Risk.HighestRisk; h > 0 {
		k = max(k, int(min(risk.SmallestClassWithin(h), math.MaxInt32)))
	}
	return k
}

// personSet is one person's set of classes, flat[lo:hi] of a flat list of classes
// (ascending), and its hash.
type personSet struct {
	key    uint64
	lo, hi int32
	p      int32 // the person's number, for ExpectedSuppression's rounds
}

// setKey hashes a set of classes (FNV-1a over the numbers, then mixed): equal sets
// hash alike; the sets are compared whole where their hashes are equal.
func setKey(cs []int32) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range cs {
		h = (h ^ uint64(uint32(c))) * 1099511628211
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	return h ^ h>>33
}

// groupSets orders sets by their classes in flat and calls group with each run of
// equal sets (a group of persons), in no particular order.
func groupSets(flat []int32, sets []personSet, group func(run []personSet)) {
	classes := func(s personSet) []int32 { return flat[s.lo:s.hi] }
	slices.SortFunc(sets, func(a, b personSet) int {
		return cmp.Or(cmp.Compare(a.key, b.key), slices.Compare(classes(a), classes(b)))
	})
	for lo := 0; lo < len(sets); {
		hi := lo + 1
		for hi < len(sets) && sets[hi].key == sets[lo].key && slices.Equal(classes(sets[hi]), classes(sets[lo])) {
			hi++
		}
		group(sets[lo:hi])
		lo = hi
	}
}

// groupFailure is a group of linked persons under k.
type groupFailure struct {
	persons, classes int
	first            int32 // the lowest class of its set
}

// releasedGroups groups the released persons of pairs (one per class and person,
// sorted by person and class) by their set of classes: the number of groups, the
// persons of the smallest, and the first group found under k (nil: none).
func releasedGroups(pairs []personRow, k int) (groups, smallest int, small *groupFailure, err error) {
	if len(pairs) >= math.MaxInt32 {
		return 0, 0, nil, fault.Internalf("multirelational k-anonymity: %d pairs of a class and a person, more than can be counted", len(pairs))
	}
	flat := make([]int32, len(pairs))
	var sets []personSet
	for i := 0; i < len(pairs); {
		j := i
		for ; j < len(pairs) && pairs[j].h == pairs[i].h; j++ {
			flat[j] = pairs[j].c
		}
		sets = append(sets, personSet{key: setKey(flat[i:j]), lo: int32(i), hi: int32(j)})
		i = j
	}
	groupSets(flat, sets, func(run []personSet) {
		groups++
		if smallest == 0 || len(run) < smallest {
			smallest = len(run)
		}
		if len(run) < k && small == nil {
			s := run[0]
			small = &groupFailure{persons: len(run), classes: int(s.hi - s.lo), first: flat[s.lo]}
		}
	})
	return groups, smallest, small, nil
}

// linkEntry is a person's records in one class of the input.
type linkEntry struct {
	h uint64
	c int32
	n int32
}

// linkRounds runs ExpectedSuppression's rounds (see the top of this file) on the
// input's classes: rows the tally's records (one per record: t.rows[0]), sorted by
// class and person or by person and class (as judge leaves them); failing per class
// whether it fails the other models, which it sets for the classes the rounds fail;
// persons per class its persons. It returns, per class that does not fail, the
// records of the persons the rounds suppress, and the persons left in each class.
func linkRounds(rows []personRow, failing []bool, persons []int64, k int) (lost, left []int64, err error) {
	entries := make([]linkEntry, 0, len(rows)/2+1)
	for i := 0; i < len(rows); {
		j := i + 1
		for j < len(rows) && rows[j].c == rows[i].c && rows[j].h == rows[i].h {
			j++
		}
		if j-i > math.MaxInt32 {
			return nil, nil, fault.Internalf("multirelational k-anonymity: a person with more records in a class than can be counted")
		}
		entries = append(entries, linkEntry{h: rows[i].h, c: rows[i].c, n: int32(j - i)})
		i = j
	}
	if len(entries) >= math.MaxInt32 {
		return nil, nil, fault.Internalf("multirelational k-anonymity: %d pairs of a class and a person, more than can be counted", len(entries))
	}
	slices.SortFunc(entries, func(a, b linkEntry) int { return cmp.Or(cmp.Compare(a.h, b.h), cmp.Compare(a.c, b.c)) })
	var start []int32 // person p's entries: entries[start[p]:start[p+1]]
	for i := range entries {
		if i == 0 || entries[i].h != entries[i-1].h {
			start = append(start, int32(i))
		}
	}
	start = append(start, int32(len(entries)))
	lost, left = make([]int64, len(failing)), slices.Clone(persons)
	gone := make([]bool, len(start)-1)
	flat := make([]int32, 0, len(entries))
	for {
		flat = flat[:0]
		var sets []personSet
		for p := range gone {
			if gone[p] {
				continue
			}
			lo := len(flat)
			for _, e := range entries[start[p]:start[p+1]] {
				if !failing[e.c] {
					flat = append(flat, e.c)
				}
			}
			if len(flat) > lo { // released in some class
				sets = append(sets, personSet{key: setKey(flat[lo:]), lo: int32(lo), hi: int32(len(flat)), p: int32(p)})
			}
		}
		var small []int32
		groupSets(flat, sets, func(run []personSet) {
			if len(run) < k {
				for _, s := range run {
					small = append(small, s.p)
				}
			}
		})
		if len(small) == 0 {
			return lost, left, nil
		}
		for _, p := range small {
			gone[p] = true
			for _, e := range entries[start[p]:start[p+1]] {
				if !failing[e.c] {
					left[e.c]--
					lost[e.c] += int64(e.n)
				}
			}
		}
		for c := range failing {
			if !failing[c] && left[c] < int64(k) {
				failing[c] = true
			}
		}
	}
}
