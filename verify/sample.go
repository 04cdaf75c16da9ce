package verify

import (
	"fmt"
	"sort"
)

// Sample is what a SafePub release (privacy.differential-privacy) holds against the
// sample it was drawn from: Li, Qardaji and Su's guarantee is for a release that is a
// function of the sample alone, every class of the sample at the node released whole
// when it holds at least K records and left out otherwise.
type Sample struct {
	K int
	// Drawn and LeftOut are the run's account of the input records (by their place in
	// the input, from 0): drawn into the sample, and left out of the release. A
	// release from a sample must leave out every record not drawn; the truthfulness
	// walk (Truth.LeftOut) holds the release to LeftOut record by record.
	Drawn, LeftOut []bool
	// Counts is the drawn records' classes at the release's node, keyed as Classes
	// are (PopulationCounts over the drawn records); nil for a check that has no
	// sample (sanitize check): every released class then needs only an input class
	// at the node of at least as many records.
	Counts map[string]int64
	// Input is the input's classes at the node (PopulationCounts over every record),
	// for a check without Counts.
	Input map[string]int64
}

// CheckSample checks the release's classes rel against the sample s: with the run's
// sample, that every record not drawn was left out and that the release's classes
// are exactly the drawn classes of K records or more, each whole; without it, that
// every released class has K records or more and is one of the input's classes at the
// node, no larger. A failure is a *Violation that quotes no value.
func CheckSample(s Sample, rel *Classes) error {
	if s.Counts == nil {
		for key, c := range rel.count {
			if c < int64(s.K) {
				return &Violation{Msg: fmt.Sprintf("a released class has %d records, below the k %d of the differential privacy", c, s.K)}
			}
			if n, ok := s.Input[key]; !ok || n < c {
				return &Violation{Msg: fmt.Sprintf("a released class of %d records is not one of the input's classes at the release's node (it holds %d there)", c, n)}
			}
		}
		return nil
	}
	if len(s.Drawn) != len(s.LeftOut) {
		return &Violation{Msg: fmt.Sprintf("the run's account of the sample holds %d records, of the records left out %d", len(s.Drawn), len(s.LeftOut))}
	}
	for i, in := range s.Drawn {
		if !in && !s.LeftOut[i] {
			return &Violation{Msg: fmt.Sprintf("input record %d is released but was not drawn into the sample", i+1)}
		}
	}
	for key, c := range rel.count {
		if c < int64(s.K) {
			return &Violation{Msg: fmt.Sprintf("a released class has %d records, below the k %d of the differential privacy", c, s.K)}
		}
		if n := s.Counts[key]; n != c {
			return &Violation{Msg: fmt.Sprintf("a released class holds %d records of the %d its class of the sample holds at the node: a sample's class is released whole or not at all", c, n)}
		}
	}
	var missing []int64
	for key, n := range s.Counts {
		if _, ok := rel.count[key]; !ok && n >= int64(s.K) {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		sort.Slice(missing, func(a, b int) bool { return missing[a] > missing[b] })
		return &Violation{Msg: fmt.Sprintf("%d classes of the sample of k=%d records or more are left out (the largest holds %d): only classes below k may be", len(missing), s.K, missing[0])}
	}
	return nil
}
