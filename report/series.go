package report

import (
	"fmt"
	"io"
)

// SeriesSummary is a night of a release series (release --series; docs/series.md):
// what it added, removed and withheld, and what someone holding every night's file
// can learn. Counts and parameters only.
type SeriesSummary struct {
	State    string `json:"state"`  // the state file
	Series   string `json:"series"` // the series' id
	Night    int    `json:"night"`
	Removals string `json:"removals"` // series.removals
	// Added and Removed are the records the night added and removed, against the
	// last night's release; Deferred the new records it withheld (they wait),
	// Withheld every record it withheld (deferred, cohorts resting whole, rows
	// retired).
	Added    int `json:"added"`
	Removed  int `json:"removed"`
	Deferred int `json:"deferred"`
	Withheld int `json:"withheld"`
	// WaitingClasses is the classes whose new records wait; OldestWait the nights the
	// oldest waiting record has waited, tonight included (0: none waits).
	WaitingClasses int `json:"waiting_classes"`
	OldestWait     int `json:"oldest_wait_nights"`
	// Retired is the rows the state keeps as never to be published again.
	Retired int `json:"retired"`
	// Exposed is the classes that lost between 1 and k−1 records (persons),
	// published because series.removals allows it: each by its number among the
	// night's published classes in ascending order of their labels (from 0), or −1
	// for a class of the last night's that tonight does not publish.
	Exposed []int `json:"exposed_classes,omitempty"`
	// Quasi names the node's levels, History every night's.
	Quasi   []string       `json:"quasi"`
	History []SeriesRecord `json:"history"`
	// Learns says in a sentence what the series' files show together.
	Learns string `json:"what_every_file_shows"`
}

// SeriesRecord is one night of a series' history.
type SeriesRecord struct {
	Night    int    `json:"night"`
	Time     string `json:"time"` // RFC 3339, UTC
	Node     []int  `json:"node"` // in SeriesSummary.Quasi's order
	Released int    `json:"released"`
	Deferred int    `json:"deferred"`
	Removed  int    `json:"removed"`
}

// SeriesLearns is the sentence of what someone holding every night's file of a series
// can learn, given the night's counts.
func SeriesLearns(s *SeriesSummary, k int, persons bool) string {
	unit := "records"
	if persons {
		unit = "persons"
	}
	text := fmt.Sprintf("Someone holding every night's file can subtract any two of them: between consecutive nights every class gained either nothing or at least %d %s whose values alone meet the privacy models", k, unit)
	if len(s.Exposed) > 0 {
		text += fmt.Sprintf(", but %s lost between 1 and %d %s tonight (series.removals: allow), which the difference shows", nounCount(len(s.Exposed), "class", "classes"), k-1, unit)
	} else {
		text += fmt.Sprintf(", and lost either nothing or at least %d %s", k, unit)
	}
	text += ". New records that could not be published so are withheld until they can"
	if s.Deferred > 0 {
		text += fmt.Sprintf(" (%d tonight; the oldest has waited %s)", s.Deferred, nounCount(s.OldestWait, "night", "nights"))
	}
	text += fmt.Sprintf(". A class's records are published in cohorts of at least %d %s, so nights further apart differ by whole cohorts too", k, unit)
	if s.Retired > 0 {
		text += fmt.Sprintf(", except across a night that retired rows (%s retired so far): a retired row and a later new row with the same values cancel out in such a difference", nounCount(s.Retired, "row", "rows"))
	}
	return text + ". Someone who knows when a person's record arrived can still tell in which night's cohort it lies."
}

// nounCount is n with its noun, singular or plural.
func nounCount(n int, one, many string) string {
	return fmt.Sprintf("%d %s", n, plural(int64(n), one, many))
}

// seriesSummary writes the series' line of the summary.
func (r *Report) seriesSummary(w io.Writer) {
	s := r.Series
	if s == nil {
		return
	}
	fmt.Fprintf(w, "series night %d (state %s): %d records added, %d removed, %d deferred", s.Night, s.State, s.Added, s.Removed, s.Deferred)
	if s.OldestWait > 0 {
		fmt.Fprintf(w, " (%d classes waiting, the oldest %d nights)", s.WaitingClasses, s.OldestWait)
	}
	if s.Withheld > s.Deferred {
		fmt.Fprintf(w, ", %d more withheld with their cohorts", s.Withheld-s.Deferred)
	}
	if len(s.Exposed) > 0 {
		fmt.Fprintf(w, "; %d classes lost 1 to k−1 records (series.removals: allow)", len(s.Exposed))
	}
	fmt.Fprintln(w)
}
