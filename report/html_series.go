package report

import (
	"fmt"
	"strings"
	"time"
)

// The release page's section of a release series' night (release --series;
// docs/series.md): which night of which series, what tonight added, removed and
// withheld, what waits and for how long, the rows retired and the groups exposed, every
// night's node, and what someone holding every night's file can learn. Counts,
// levels and column names only: no label of a class, no data value.

// seriesView is the section of a series' night.
type seriesView struct {
	Num      int // the section's number on the page
	Lead     string
	Removals string
	Warning  string // groups exposed tonight (series.removals: allow)
	Counts   []seriesCount
	Notes    []string
	Quasi    []seriesColumn
	Nights   []seriesNightRow
	Changes  string
	Learns   string
}

// seriesColumn is a quasi-identifier of the history table: its name and its
// hierarchy's levels ("" when the report lacks them).
type seriesColumn struct{ Name, Levels string }

// seriesLevel is a night's level of one quasi-identifier, and whether it changed from
// the night before.
type seriesLevel struct {
	Text    string
	Changed bool
}

// seriesCount is one line of tonight's counts.
type seriesCount struct{ What, Value string }

// seriesNightRow is one night of the history table: its levels in the order of the
// view's Quasi, each with the level before it when it changed.
type seriesNightRow struct {
	Night, Date                 string
	Levels                      []seriesLevel
	Released, Deferred, Removed string
	Node                        string
}

// exposedListed is the most group numbers the page lists; the JSON report has them
// all.
const exposedListed = 40

// isolateSeries is a copy of s with its user-supplied strings (the state file's path,
// the quasi-identifiers' names) isolated (nil stays nil); the series' id, the removals
// policy, the times and the sentence are the program's.
func isolateSeries(s *SeriesSummary) *SeriesSummary {
	if s == nil {
		return nil
	}
	c := *s
	c.State, c.Quasi = isolate(s.State), isolateAll(s.Quasi)
	return &c
}

// newSeriesView is the section of r's series night s (nil without a series). s's
// strings are isolated as r's are (isolateSeries).
func newSeriesView(r *Report, s *SeriesSummary) *seriesView {
	if s == nil {
		return nil
	}
	c := countedOf(r)
	v := &seriesView{
		Lead:     seriesLead(s),
		Removals: removalsSentence(s.Removals, r.Model.K, c),
		Counts:   seriesCounts(s, r.Model.K, c),
		Notes:    seriesNotes(s, r.Model.K, c),
		Learns:   s.Learns,
	}
	if len(s.Exposed) > 0 {
		v.Warning = fmt.Sprintf("%s lost between 1 and %d %s tonight, and were published all the same (series.removals: allow): whoever holds last night's file and tonight's can see which few %s left them.",
			countOf(len(s.Exposed), "group", "groups"), r.Model.K-1, c.noun(), c.noun())
	}
	seriesNights(v, r, s)
	return v
}

// seriesLead says which night of which series this release is, and where its state is.
func seriesLead(s *SeriesSummary) string {
	night := fmt.Sprintf("night %d", s.Night)
	if s.Night == 1 {
		night = "the first night"
	}
	return fmt.Sprintf("This release is %s of the release series %s, whose state (what every night published, kept as digests, and the nights' history) is the file %s. A series publishes the table again every night as it stands; anyone who keeps every night's file can set them side by side, so each night publishes only what keeps that comparison safe.",
		night, s.Series, s.State)
}

// removalsSentence says what the series does when a group loses fewer than k records.
func removalsSentence(policy string, k int, c counted) string {
	few := fmt.Sprintf("between 1 and %d %s", k-1, c.noun())
	switch policy {
	case "refuse":
		return fmt.Sprintf("Records that leave (series.removals: refuse): a night on which a group would lose %s is refused and publishes nothing, since comparing the two nights' files would show which few left.", few)
	case "retire":
		return fmt.Sprintf("Records that leave (series.removals: retire): when a group loses %s, the records first published together with them are withheld from then on, so that consecutive nights differ only by whole cohorts of at least %d; the records that left are retired, never to be published again even if they come back.", few, k)
	case "allow":
		return fmt.Sprintf("Records that leave (series.removals: allow): a group may lose %s and still be published; comparing last night's file with tonight's then shows which few left. Such groups are counted below.", few)
	}
	return fmt.Sprintf("Records that leave: series.removals is %q, which this page does not know.", policy)
}

// seriesCounts are tonight's counts.
func seriesCounts(s *SeriesSummary, k int, c counted) []seriesCount {
	wait := "none waits"
	if s.OldestWait > 0 {
		wait = countOf(s.OldestWait, "night", "nights") + " (tonight included)"
	}
	out := []seriesCount{
		{"Records added (in tonight's file, not in last night's)", fmtCount(int64(s.Added))},
		{"Records removed (in last night's file, not in tonight's)", fmtCount(int64(s.Removed))},
		{"New records deferred (withheld tonight, to be published later)", fmtCount(int64(s.Deferred))},
		{"Records withheld by the series (deferred, and cohorts withheld whole)", fmtCount(int64(s.Withheld))},
		{"Groups with records waiting", fmtCount(int64(s.WaitingClasses))},
		{"The oldest waiting record has waited", wait},
		{"Records retired (never to be published again)", fmtCount(int64(s.Retired))},
	}
	if s.Removals == "allow" || len(s.Exposed) > 0 {
		out = append(out, seriesCount{fmt.Sprintf("Groups that lost between 1 and %d %s tonight", k-1, c.noun()), fmtCount(int64(len(s.Exposed)))})
	}
	return out
}

// seriesNotes say what the counts mean: deferral, withholding, retirement and the
// exposed groups by number.
func seriesNotes(s *SeriesSummary, k int, c counted) []string {
	var out []string
	if s.Deferred > 0 || s.WaitingClasses > 0 {
		out = append(out, fmt.Sprintf("Deferred records are not lost: a group's new records are published only as a batch of at least %d %s that meets the privacy models on its own; until they make one they wait, and the group's later new records join them.", k, c.noun()))
	}
	if more := s.Withheld - s.Deferred; more > 0 {
		out = append(out, fmt.Sprintf("Besides the deferred records, %s published on earlier nights %s withheld tonight with the cohort they were first published in (a cohort is published whole or not at all).",
			countOf(more, "record", "records"), plural(int64(more), "was", "were")))
	}
	if len(s.Exposed) > 0 {
		out = append(out, exposedSentence(s.Exposed))
	}
	return out
}

// exposedSentence lists the exposed groups by number (numbers only: never a label).
func exposedSentence(exposed []int) string {
	var nums []string
	gone := 0
	for _, e := range exposed {
		if e < 0 {
			gone++
			continue
		}
		nums = append(nums, fmt.Sprint(e))
	}
	var parts []string
	if len(nums) > 0 {
		list := nums
		if len(list) > exposedListed {
			list = append(list[:exposedListed:exposedListed], fmt.Sprintf("%d more", len(nums)-exposedListed))
		}
		parts = append(parts, fmt.Sprintf("tonight's %s %s (numbered from 0 in the release's order of labels)", plural(int64(len(nums)), "group", "groups"), joinWords(list)))
	}
	if gone > 0 {
		parts = append(parts, fmt.Sprintf("%s of last night's release that tonight's does not publish", countOf(gone, "group", "groups")))
	}
	return "The groups that lost so few: " + joinWords(parts) + ". The JSON report lists every one."
}

// seriesNights sets v's history: its columns, its rows, oldest first, and the
// sentence of how the node changed over the nights.
func seriesNights(v *seriesView, r *Report, s *SeriesSummary) {
	heights := map[string]int{}
	for _, n := range r.Node {
		heights[n.Column] = n.Levels
	}
	for _, name := range s.Quasi {
		c := seriesColumn{Name: name}
		if h := heights[name]; h > 0 {
			c.Levels = fmt.Sprintf("0–%d", h-1)
		}
		v.Quasi = append(v.Quasi, c)
	}
	var rows []seriesNightRow
	var changes []string
	finer := false
	for i, h := range s.History {
		row := seriesNightRow{Night: fmt.Sprint(h.Night), Date: seriesDate(h.Time), Released: fmtCount(int64(h.Released)),
			Deferred: fmtCount(int64(h.Deferred)), Removed: fmtCount(int64(h.Removed)), Node: "first night"}
		if h.Night == s.Night {
			row.Night += " (tonight)"
		}
		var prev []int
		if i > 0 {
			prev, row.Node = s.History[i-1].Node, "unchanged"
		}
		var coarser, finerIn []string
		for q, name := range s.Quasi {
			level := seriesLevel{Text: "—"}
			if q < len(h.Node) {
				level.Text = fmt.Sprint(h.Node[q])
				if q < len(prev) && prev[q] != h.Node[q] {
					level.Text += fmt.Sprintf(" (was %d)", prev[q])
					level.Changed = true
					if prev[q] < h.Node[q] {
						coarser = append(coarser, name)
					} else {
						finerIn = append(finerIn, name)
					}
				}
			}
			row.Levels = append(row.Levels, level)
		}
		if len(coarser) > 0 || len(finerIn) > 0 {
			row.Node = nodeChange(coarser, finerIn)
			changes = append(changes, fmt.Sprintf("night %d (%s)", h.Night, row.Node))
			finer = finer || len(finerIn) > 0
		}
		rows = append(rows, row)
	}
	v.Nights, v.Changes = rows, changesSentence(changes, finer)
}

// nodeChange says in which quasi-identifiers a night's node differs from the night
// before's.
func nodeChange(coarser, finer []string) string {
	var parts []string
	if len(coarser) > 0 {
		parts = append(parts, "coarser in "+joinWords(coarser))
	}
	if len(finer) > 0 {
		parts = append(parts, "FINER in "+joinWords(finer)+", which a series forbids")
	}
	return "changed: " + strings.Join(parts, "; ")
}

// changesSentence says what the node history shows.
func changesSentence(changes []string, finer bool) string {
	out := "The node (the level each quasi-identifier is generalized to) can only become coarser from one night to the next, never finer, so that no two nights' groups intersect in a group finer than either file shows. "
	switch {
	case len(changes) == 0:
		out += "It has not changed since the series' first night."
	case len(changes) == 1:
		out += "It changed once: on " + changes[0] + "."
	default:
		out += fmt.Sprintf("It changed on %d nights: %s.", len(changes), strings.Join(changes, "; "))
	}
	if finer {
		out += " The history shows a node finer than the night before's: the series' guarantee does not hold across that night."
	}
	return out
}

// seriesDate is an RFC 3339 time as a date and time in UTC, or as it is when it is
// not one.
func seriesDate(s string) string {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return s
	}
	return t.UTC().Format("2006-01-02 15:04")
}

// countOf is n and its noun: "1 group", "3 groups".
func countOf(n int, one, many string) string {
	return fmtCount(int64(n)) + " " + plural(int64(n), one, many)
}

const seriesHTML = `
{{define "series"}}
<section aria-labelledby="series-night">
<h2 id="series-night">{{.Num}}. This night of the series</h2>
<p class="lead">{{.Lead}}</p>
{{if .Warning}}<p class="warn">{{.Warning}}</p>
{{end}}<table class="glance">
<tr><th scope="col">Tonight</th><th scope="col" class="n">Number</th></tr>
{{range .Counts}}<tr><td>{{.What}}</td><td class="n">{{.Value}}</td></tr>
{{end}}</table>
<p>{{.Removals}}</p>
{{range .Notes}}<p>{{.}}</p>
{{end}}
<h3>The series' nights</h3>
<p>{{.Changes}}</p>
<p class="note">Each quasi-identifier's column gives the level of its hierarchy that the night's release used (0 the original values, the highest every value as *); a level that changed from the night before is in bold, with the level it was.</p>
<table>
<tr><th scope="col">Night</th><th scope="col">Date (UTC)</th>{{range .Quasi}}<th scope="col"><code>{{.Name}}</code>{{if .Levels}} ({{.Levels}}){{end}}</th>{{end}}<th scope="col" class="n">Records released</th><th scope="col" class="n">Deferred</th><th scope="col" class="n">Removed</th><th scope="col">Node</th></tr>
{{range .Nights}}<tr><td>{{.Night}}</td><td class="n">{{.Date}}</td>{{range .Levels}}<td>{{if .Changed}}<strong>{{.Text}}</strong>{{else}}{{.Text}}{{end}}</td>{{end}}<td class="n">{{.Released}}</td><td class="n">{{.Deferred}}</td><td class="n">{{.Removed}}</td><td>{{.Node}}</td></tr>
{{end}}</table>
<h3>What every night's file shows together</h3>
<p>{{.Learns}}</p>
</section>
{{end}}
`
