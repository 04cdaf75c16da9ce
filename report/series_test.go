package report

import (
	"bytes"
	"html"
	"html/template"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// seriesSection is the series' section of r's release page as a reader sees it
// (without isolates), "" when the page has none.
func seriesSection(t *testing.T, r *Report) string {
	t.Helper()
	return sectionOf(t, plainPage(t, r))
}

// sectionOf is the series' section of page, "" when it has none.
func sectionOf(t *testing.T, page string) string {
	t.Helper()
	i := strings.Index(page, `<section aria-labelledby="series-night">`)
	if i < 0 {
		return ""
	}
	j := strings.Index(page[i:], "</section>")
	if j < 0 {
		t.Fatal("the series' section is not closed")
	}
	return page[i : i+j]
}

var (
	tableRE = regexp.MustCompile(`(?s)<table[^>]*>(.*?)</table>`)
	rowRE   = regexp.MustCompile(`(?s)<tr>(.*?)</tr>`)
	cellRE  = regexp.MustCompile(`(?s)<t[hd][^>]*>(.*?)</t[hd]>`)
	tagRE   = regexp.MustCompile(`<[^>]*>`)
)

// tableCells is the text of every cell of the n-th table of html, row by row, header
// row first, tags left out.
func tableCells(t *testing.T, html string, n int) [][]string {
	t.Helper()
	tables := tableRE.FindAllStringSubmatch(html, -1)
	if len(tables) <= n {
		t.Fatalf("%d tables, want table %d", len(tables), n)
	}
	var out [][]string
	for _, row := range rowRE.FindAllStringSubmatch(tables[n][1], -1) {
		var cells []string
		for _, c := range cellRE.FindAllStringSubmatch(row[1], -1) {
			cells = append(cells, tagRE.ReplaceAllString(c[1], ""))
		}
		out = append(out, cells)
	}
	return out
}

// adultLevels are the cells of adultSeries' levels, night 1 and 2 (node(1, 1)) and
// night 4 (node(2, 2)); adultQuasi the history's headers of its quasi-identifiers,
// with adultReport's hierarchies.
var (
	adultLevels11 = []string{"1", "0", "1", "1", "1", "2", "1"}
	adultLevels22 = []string{"2", "0", "1", "1", "2", "2", "1"}
	adultQuasi    = []string{"age (0–4)", "sex (0–1)", "race (0–1)", "marital-status (0–2)", "education (0–3)", "native-country (0–2)", "workclass (0–2)"}
)

// night is a row of the history table: night, date, levels, released, deferred,
// removed, node.
func night(n, date string, levels []string, rest ...string) []string {
	return slices.Concat([]string{n, date}, levels, rest)
}

// TestHTMLSeries: a series' night shows its night and series, the state file, the
// removals policy in words, tonight's counts each beside its label, the node history
// one row per night with the nights the node changed marked, the exposed groups by
// number under allow (with a warning), and the report's sentence of what every file
// shows together.
func TestHTMLSeries(t *testing.T) {
	changed := slices.Clone(adultLevels22)
	changed[0], changed[4] = "2 (was 1)", "2 (was 1)"
	adultNights := [][]string{
		night("1", "2026-11-22 02:00", adultLevels11, "28,190", "41", "0", "first night"),
		night("2", "2026-11-23 02:00", adultLevels11, "28,413", "58", "5", "unchanged"),
		night("3", "2026-11-24 02:00", changed, "28,631", "44", "12", "changed: coarser in age and education"),
		night("4 (tonight)", "2026-11-25 02:00", adultLevels22, "28,816", "37", "9", "unchanged"),
	}
	for _, tc := range []struct {
		name   string
		r      *Report
		quasi  []string
		counts map[string]string // a count's label's start → its value
		nights [][]string
		want   []string
		absent []string
	}{
		{"retire", seriesReport("retire"), adultQuasi,
			map[string]string{"Records added": "212", "Records removed": "9", "New records deferred": "37", "Records withheld": "51",
				"Groups with records waiting": "6", "The oldest waiting record": "3 nights (tonight included)", "Records retired": "23"},
			adultNights,
			[]string{"This release is night 4 of the release series 5f0c2a9e41d87b36a0e4c1f9d2b7e8a3", "is the file nightly/adult.series.json.",
				"Records that leave (series.removals: retire): when a group loses between 1 and 4 records", "at least 5 records that meets the privacy models",
				"Besides the deferred records, 14 records published on earlier nights were withheld tonight", "It changed once: on night 3 (changed: coarser in age and education)."},
			[]string{`class="warn"`, "Groups that lost", "The groups that lost so few", "persons", "FINER"}},
		{"allow", seriesReport("allow"), adultQuasi,
			map[string]string{"Records added": "212", "Records removed": "9", "Records retired": "0", "Groups that lost between 1 and 4 records tonight": "3"},
			adultNights,
			[]string{"Records that leave (series.removals: allow): a group may lose between 1 and 4 records and still be published",
				`<p class="warn">3 groups lost between 1 and 4 records tonight, and were published all the same (series.removals: allow)`,
				"The groups that lost so few: tonight&#39;s groups 3 and 17 (numbered from 0 in the release&#39;s order of labels) and 1 group of last night&#39;s release that tonight&#39;s does not publish."},
			[]string{"persons", "series.removals: retire", "rows retired so far"}},
		{"persons", personsSeriesReport(), []string{"age (0–3)", "sex (0–1)", "admitted (0–3)"},
			map[string]string{"Records added": "64", "Records removed": "0", "New records deferred": "0", "Groups with records waiting": "0",
				"The oldest waiting record": "none waits", "Records retired": "0"},
			[][]string{
				night("1", "2026-11-23 01:30", []string{"2", "0", "1"}, "8,990", "12", "0", "first night"),
				night("2", "2026-11-24 01:30", []string{"2", "0", "2 (was 1)"}, "9,037", "0", "0", "changed: coarser in admitted"),
				night("3 (tonight)", "2026-11-25 01:30", []string{"2", "0", "2"}, "9,101", "0", "0", "unchanged"),
			},
			[]string{"This release is night 3 of the release series 0d9be1f2a3c4b5d6e7f8091a2b3c4d5e", "/var/lib/sanitize/admissions.json",
				"Records that leave (series.removals: refuse): a night on which a group would lose between 1 and 4 persons is refused and publishes nothing"},
			[]string{`class="warn"`, "Groups that lost", "Deferred records are not lost", "Besides the deferred records", "between 1 and 4 records"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sec := seriesSection(t, tc.r)
			if sec == "" {
				t.Fatal("the page has no series section")
			}
			counts := tableCells(t, sec, 0)
			for label, value := range tc.counts {
				found := false
				for _, row := range counts[1:] {
					if strings.HasPrefix(row[0], label) {
						found = true
						if row[1] != value {
							t.Errorf("%q: %q, want %q", row[0], row[1], value)
						}
					}
				}
				if !found {
					t.Errorf("no count %q", label)
				}
			}
			history := tableCells(t, sec, 1)
			head := slices.Concat([]string{"Night", "Date (UTC)"}, tc.quasi, []string{"Records released", "Deferred", "Removed", "Node"})
			if !reflect.DeepEqual(history[0], head) {
				t.Errorf("history's header %q, want %q", history[0], head)
			}
			if got := history[1:]; !reflect.DeepEqual(got, tc.nights) {
				t.Errorf("history:\n%q\nwant\n%q", got, tc.nights)
			}
			for _, w := range append(tc.want, template.HTMLEscapeString(tc.r.Series.Learns)) {
				if !strings.Contains(sec, w) {
					t.Errorf("section lacks %q", w)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(sec, a) {
					t.Errorf("section says %q", a)
				}
			}
		})
	}
}

// TestHTMLSeriesSentenceAsReported: the page shows the report's sentence of what every
// file shows, as the report holds it.
func TestHTMLSeriesSentenceAsReported(t *testing.T) {
	r := seriesReport("retire")
	r.Series.Learns = "A sentence the report holds & no other."
	if sec := seriesSection(t, r); !strings.Contains(sec, "<p>A sentence the report holds &amp; no other.</p>") {
		t.Errorf("the section does not show the report's sentence:\n%s", sec)
	}
}

var h2RE = regexp.MustCompile(`<h2[^>]*>(\d+)\. ([^<]*)</h2>`)

// TestHTMLSeriesAbsent: a release that is no night of a series has no series section
// and speaks of no series; with or without one, the page's sections are numbered 1, 2,
// 3… in order, the series' the second.
func TestHTMLSeriesAbsent(t *testing.T) {
	for _, tc := range []struct {
		r      *Report
		series bool
	}{{adultReport(true), false}, {personsReport(""), false}, {seriesReport("retire"), true}, {personsSeriesReport(), true}} {
		page := plainPage(t, tc.r)
		if got := seriesSection(t, tc.r) != ""; got != tc.series {
			t.Errorf("series %v: the page has a series section: %v", tc.series, got)
		}
		if !tc.series {
			for _, bad := range []string{"series", "night", "deferred", "cohort"} {
				if strings.Contains(strings.ToLower(page), bad) {
					t.Errorf("a release without a series says %q", bad)
				}
			}
		}
		var titles []string
		for i, m := range h2RE.FindAllStringSubmatch(page, -1) {
			if n, _ := strconv.Atoi(m[1]); n != i+1 {
				t.Errorf("section %q is numbered %s, the %d-th", m[2], m[1], i+1)
			}
			titles = append(titles, m[2])
		}
		if tc.series != (len(titles) > 1 && titles[1] == "This night of the series") || len(titles) != 5+btoi(tc.series) {
			t.Errorf("series %v: sections %q", tc.series, titles)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

var numberRE = regexp.MustCompile(`\d[\d,]*`)

// TestHTMLSeriesFiguresFromReport: every number the series' section shows (outside
// the names it isolates and the series' id) is one of the report's: a count of the
// series, a night, a date of the history, a level or a hierarchy's top, k or k − 1,
// or a count derived from them (withheld besides the deferred, the groups exposed).
func TestHTMLSeriesFiguresFromReport(t *testing.T) {
	for name, r := range map[string]*Report{"retire": seriesReport("retire"), "allow": seriesReport("allow"), "persons": personsSeriesReport()} {
		t.Run(name, func(t *testing.T) {
			s := r.Series
			allowed := map[int]bool{0: true, 1: true, r.Model.K: true, r.Model.K - 1: true}
			for _, n := range []int{s.Night, s.Added, s.Removed, s.Deferred, s.Withheld, s.WaitingClasses, s.OldestWait, s.Retired,
				s.Withheld - s.Deferred, len(s.Exposed)} {
				allowed[n] = true
			}
			gone := 0
			for _, e := range s.Exposed {
				allowed[e] = e >= 0 || allowed[e]
				if e < 0 {
					gone++
				}
			}
			allowed[gone], allowed[len(s.Exposed)-gone] = true, true
			for _, h := range s.History {
				tm, err := time.Parse(time.RFC3339, h.Time)
				if err != nil {
					t.Fatal(err)
				}
				for _, n := range slices.Concat([]int{h.Night, h.Released, h.Deferred, h.Removed, tm.Year(), int(tm.Month()), tm.Day(), tm.Hour(), tm.Minute()}, h.Node) {
					allowed[n] = true
				}
			}
			for _, n := range r.Node {
				allowed[n.Levels-1] = true
			}
			var b bytes.Buffer
			if err := WriteReleaseHTML(&b, r); err != nil {
				t.Fatal(err)
			}
			sec := sectionOf(t, b.String())
			sec = regexp.MustCompile(`(?s)<bdi>.*?</bdi>|<code>.*?</code>`).ReplaceAllString(sec, "")
			sec = strings.ReplaceAll(html.UnescapeString(tagRE.ReplaceAllString(sec, " ")), s.Series, "")
			shown := 0
			for _, m := range numberRE.FindAllString(sec, -1) {
				n, err := strconv.Atoi(strings.ReplaceAll(m, ",", ""))
				if err != nil || !allowed[n] {
					t.Errorf("the section shows %s, not a figure of the report", m)
				}
				shown++
			}
			if shown < 10 {
				t.Errorf("the section shows %d numbers", shown)
			}
		})
	}
}

// TestHTMLSeriesIsolatesUserStrings: the state file's path and the quasi-identifiers'
// names, as the series' section shows them (the lead, the history's header, the
// nights the node changed), are isolated like every other user-supplied string
// (TestHTMLIsolatesUserStrings); with every string of the series poisoned, its id, its
// policy, its times and its sentence too, no bidi control strays outside an isolate.
func TestHTMLSeriesIsolatesUserStrings(t *testing.T) {
	for _, removals := range []string{"retire", "allow"} {
		r := seriesReport(removals)
		s := r.Series
		r.Series = nil
		poisonAll(reflect.ValueOf(r), false) // the report's own names, as elsewhere
		s.State = poison(s.State)
		for i := range s.Quasi {
			s.Quasi[i] = poison(s.Quasi[i])
		}
		r.Series = s
		var b bytes.Buffer
		if err := WriteReleaseHTML(&b, r); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		shownBefore := checkIsolates(t, page, true)
		sec := sectionOf(t, page)
		// the state, the 7 quasi-identifiers' headers, and the 2 that changed on night 3
		// in the sentence and in the night's row
		if shown := strings.Count(sec, token); shown != 1+7+2+2 || shownBefore < 12 {
			t.Errorf("%s: the section shows %d user-supplied strings, want 12", removals, shown)
		}
		if !strings.Contains(sec, "</code> (0–4)</th>") {
			t.Errorf("%s: the poisoned names no longer find their hierarchies' heights", removals)
		}
	}
	r := seriesReport("allow")
	poisonAll(reflect.ValueOf(r), true)
	var b bytes.Buffer
	if err := WriteReleaseHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	checkIsolates(t, b.String(), false)
}

// TestHTMLSeriesNodeHistory: a history whose node became finer says so in its row and
// its sentence; a night with fewer levels than quasi-identifiers shows a dash, and a
// report without the hierarchies' heights shows the levels alone. A level that a night
// lacks is no change.
func TestHTMLSeriesNodeHistory(t *testing.T) {
	r := seriesReport("retire")
	r.Series.History[3].Node = []int{1, 0, 1, 1, 2, 2, 1} // age finer than night 3's
	r.Series.History[1].Node = []int{1, 0}
	sec := seriesSection(t, r)
	history := tableCells(t, sec, 1)
	if got := history[4][2]; got != "1 (was 2)" {
		t.Errorf("night 4's age: %q", got)
	}
	if got := history[4][len(history[4])-1]; got != "changed: FINER in age, which a series forbids" {
		t.Errorf("night 4's node: %q", got)
	}
	if got := history[2][2:9]; !reflect.DeepEqual(got, []string{"1", "0", "—", "—", "—", "—", "—"}) {
		t.Errorf("night 2's levels: %q", got)
	}
	for _, w := range []string{"It changed on 2 nights: night 3 (changed: coarser in age); night 4 (changed: FINER in age, which a series forbids).",
		"The history shows a node finer than the night before&#39;s: the series&#39; guarantee does not hold across that night."} {
		if !strings.Contains(sec, w) {
			t.Errorf("section lacks %q", w)
		}
	}
	r = seriesReport("retire")
	r.Node, r.Generalized = nil, nil
	if got := tableCells(t, seriesSection(t, r), 1); got[0][2] != "age" || got[1][2] != "1" {
		t.Errorf("a level without its hierarchy's height: header %q, night 1 %q", got[0][2], got[1][2])
	}
}

// TestSeriesLearns: the sentence of what every night's file shows counts in the
// release's unit, with k; says the removals of 1 to k − 1 only when classes were
// exposed (and then that the difference shows them, with their number), the deferred
// records only when there are some (and the oldest's wait), and the retired rows' caveat
// only when rows were retired.
func TestSeriesLearns(t *testing.T) {
	const head = "Someone holding every night's file can subtract any two of them: between consecutive nights every class gained either nothing or at least "
	const tail = ". Someone who knows when a person's record arrived can still tell in which night's cohort it lies."
	for _, tc := range []struct {
		name    string
		s       SeriesSummary
		k       int
		persons bool
		want    []string
		absent  []string
	}{
		{"nothing to say", SeriesSummary{}, 5, false,
			[]string{head + "5 records whose values alone meet the privacy models, and lost either nothing or at least 5 records.", "withheld until they can. A class's"},
			[]string{"tonight", "retired", "series.removals", "persons"}},
		{"deferred", SeriesSummary{Deferred: 37, OldestWait: 3, WaitingClasses: 6}, 5, false,
			[]string{"withheld until they can (37 tonight; the oldest has waited 3 nights)."},
			[]string{"retired", "series.removals"}},
		{"retired", SeriesSummary{Retired: 23}, 5, false,
			[]string{"nights further apart differ by whole cohorts too, except across a night that retired rows (23 rows retired so far): a retired row and a later new row with the same values cancel out in such a difference."},
			[]string{"tonight", "series.removals"}},
		{"exposed", SeriesSummary{Exposed: []int{3, 17, -1}}, 5, false,
			[]string{", but 3 classes lost between 1 and 4 records tonight (series.removals: allow), which the difference shows."},
			[]string{"lost either nothing", "retired", "oldest"}},
		{"persons", SeriesSummary{Exposed: []int{0}, Deferred: 2, OldestWait: 1}, 3, true,
			[]string{head + "3 persons whose values alone meet", "1 class lost between 1 and 2 persons tonight", "(2 tonight; the oldest has waited 1 night)", "cohorts of at least 3 persons"},
			[]string{"lost either nothing", "records whose values", "retired"}},
		{"all", SeriesSummary{Exposed: []int{1, 2}, Deferred: 9, OldestWait: 2, Retired: 4}, 10, false,
			[]string{"2 classes lost between 1 and 9 records", "(9 tonight; the oldest has waited 2 nights)", "(4 rows retired so far)"},
			[]string{"lost either nothing"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := SeriesLearns(&tc.s, tc.k, tc.persons)
			if !strings.HasPrefix(got, head) || !strings.HasSuffix(got, tail) {
				t.Errorf("sentence does not open and close as every night's does: %q", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("sentence lacks %q:\n%s", w, got)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(got, a) {
					t.Errorf("sentence says %q:\n%s", a, got)
				}
			}
		})
	}
}
