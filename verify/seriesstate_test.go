package verify

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
)

// entryBytes is entries of width bytes, entry i made of byte bs[i].
func entryBytes(width int, bs ...byte) []byte {
	var e []byte
	for _, b := range bs {
		e = append(e, bytes.Repeat([]byte{b}, width)...)
	}
	return e
}

func b64(e []byte) string { return base64.StdEncoding.EncodeToString(e) }

var (
	stateE1 = entryBytes(16, 1, 1, 2) // an entry repeated: its row published twice
	stateE2 = entryBytes(16, 3)
	stateE3 = entryBytes(16, 1)
	hexA    = strings.Repeat("a", 64)
	hexB    = strings.Repeat("b", 64)
	hexC    = strings.Repeat("c", 64)
)

// cohortsOf is the cohorts of entries (width bytes each), all night, as the state
// writes them (base64 of a little-endian uint32 per entry).
func cohortsOf(entries []byte, width int, night uint32) string {
	var c []byte
	for range len(entries) / width {
		c = binary.LittleEndian.AppendUint32(c, night<<16) // the night's first cohort
	}
	return base64.StdEncoding.EncodeToString(c)
}

// handState is a state written by hand (docs/series.md's keys), night 2.
func handState() string {
	return `{
 "format": "sanitize-series/1",
 "series": "0123456789abcdef0123456789abcdef",
 "night": 2,
 "columns": ["age", "zip", "diag"],
 "quasi": ["age", "zip"],
 "persons": false,
 "key_check": "0011223344556677",
 "digests": {"models": "sha256:` + hexA + `", "hierarchies": {"zip": "sha256:` + hexB + `"}},
 "node": [1, 2],
 "classes": [{"labels": ["[20,29]", "123**"], "entries": "` + b64(stateE1) + `", "cohorts": "` + cohortsOf(stateE1, 16, 1) + `"},
  {"labels": ["[30,39]", "123**"], "entries": "` + b64(stateE2) + `", "cohorts": "` + cohortsOf(stateE2, 16, 2) + `"}],
 "resting": [],
 "retired": [],
 "previous": {"night": 1, "node": [1, 1], "classes": [{"labels": ["[20,29]", "1234*"], "entries": "` + b64(stateE3) + `", "cohorts": "` + cohortsOf(stateE3, 16, 1) + `"}]},
 "waiting": [{"class": "00112233445566778899aabbccddeeff", "since": 2, "records": 3}],
 "history": [{"night": 1, "time": "2026-12-01T02:00:00Z", "node": [1, 1], "released": 1, "deferred": 0, "withheld": 0, "removed": 0, "output": "out/n1.csv", "digest": "sha256:` + hexC + `"},
  {"night": 2, "time": "2026-12-02T02:00:00.5Z", "node": [1, 2], "released": 4, "deferred": 3, "withheld": 3, "removed": 0, "output": "out/n2.csv", "digest": "sha256:` + hexA + `"}],
 "pending": null
}`
}

// handStateWant is handState as a SeriesState.
func handStateWant() *SeriesState {
	return &SeriesState{
		Series: "0123456789abcdef0123456789abcdef", Night: 2, KeyCheck: "0011223344556677",
		Resting: []SeriesClass{}, Retired: []SeriesClass{},
		Columns: []string{"age", "zip", "diag"}, Quasi: []string{"age", "zip"},
		Digests: SeriesDigests{Models: "sha256:" + hexA, Hierarchies: map[string]string{"zip": "sha256:" + hexB}},
		Node:    []int{1, 2},
		Classes: []SeriesClass{{Labels: []string{"[20,29]", "123**"}, Entries: stateE1}, {Labels: []string{"[30,39]", "123**"}, Entries: stateE2}},
		Previous: &SeriesNight{Night: 1, Node: []int{1, 1},
			Classes: []SeriesClass{{Labels: []string{"[20,29]", "1234*"}, Entries: stateE3}}},
		Waiting: []SeriesWaiting{{Class: "00112233445566778899aabbccddeeff", Since: 2, Records: 3}},
		History: []SeriesHistory{
			{Night: 1, Time: time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC), Node: []int{1, 1}, Released: 1, Output: "out/n1.csv", Digest: "sha256:" + hexC},
			{Night: 2, Time: time.Date(2026, 12, 2, 2, 0, 0, 5e8, time.UTC), Node: []int{1, 2}, Released: 4, Deferred: 3, Withheld: 3, Output: "out/n2.csv", Digest: "sha256:" + hexA},
		},
	}
}

// writeState is the test's own writer of a state (docs/series.md's keys), for the
// round trip.
func writeState(t testing.TB, st *SeriesState) []byte {
	t.Helper()
	width := 16
	if st.Persons {
		width = 32
	}
	classes := func(cs []SeriesClass) []map[string]any {
		out := []map[string]any{}
		for _, c := range cs {
			out = append(out, map[string]any{"labels": c.Labels, "entries": b64(c.Entries), "cohorts": cohortsOf(c.Entries, width, 1)})
		}
		return out
	}
	var prev, pending any
	if p := st.Previous; p != nil {
		prev = map[string]any{"night": p.Night, "node": p.Node, "classes": classes(p.Classes)}
	}
	if p := st.Pending; p != nil {
		pending = map[string]any{"output": p.Output, "temp": p.Temp, "digest": p.Digest}
	}
	waiting, history := []any{}, []any{}
	for _, w := range st.Waiting {
		waiting = append(waiting, map[string]any{"class": w.Class, "since": w.Since, "records": w.Records})
	}
	for _, h := range st.History {
		history = append(history, map[string]any{"night": h.Night, "time": h.Time.Format(time.RFC3339Nano), "node": h.Node,
			"released": h.Released, "deferred": h.Deferred, "withheld": h.Withheld, "removed": h.Removed, "output": h.Output, "digest": h.Digest})
	}
	hier := st.Digests.Hierarchies
	if hier == nil {
		hier = map[string]string{}
	}
	data, err := json.Marshal(map[string]any{
		"format": SeriesFormat, "series": st.Series, "night": st.Night, "columns": st.Columns, "quasi": st.Quasi,
		"persons": st.Persons, "key_check": st.KeyCheck, "digests": map[string]any{"models": st.Digests.Models, "hierarchies": hier},
		"node": st.Node, "classes": classes(st.Classes), "resting": []any{}, "retired": []any{}, "previous": prev, "waiting": waiting, "history": history,
		"pending": pending,
	})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestReadSeriesStateRoundTrip(t *testing.T) {
	st, err := ReadSeriesState([]byte(handState()))
	if err != nil {
		t.Fatal(err)
	}
	if want := handStateWant(); !reflect.DeepEqual(st, want) {
		t.Fatalf("read\n%+v\nwant\n%+v", st, want)
	}
	again, err := ReadSeriesState(writeState(t, st))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, st) {
		t.Fatalf("written and read again\n%+v\nwas\n%+v", again, st)
	}
	// a pending publication and persons (entries of 32 bytes)
	s := testfiles.Replace(t, handState(), `"pending": null`, `"pending": {"output": "out/n2.csv", "temp": "out/.n2.tmp", "digest": "sha256:`+hexA+`"}`)
	s = testfiles.Replace(t, s, `"persons": false`, `"persons": true`)
	s = testfiles.Replace(t, s, b64(stateE1), b64(entryBytes(32, 1, 2)))
	s = testfiles.Replace(t, s, b64(stateE2), b64(entryBytes(32, 3)))
	s = testfiles.Replace(t, s, b64(stateE3), b64(entryBytes(32, 1)))
	s = testfiles.Replace(t, s, cohortsOf(stateE1, 16, 1), cohortsOf(entryBytes(32, 1, 2), 32, 1))
	s = testfiles.Replace(t, s, cohortsOf(stateE2, 16, 2), cohortsOf(entryBytes(32, 3), 32, 2))
	st, err = ReadSeriesState([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	if !st.Persons || st.Pending == nil || st.Pending.Temp != "out/.n2.tmp" || !bytes.Equal(st.Classes[0].Entries, entryBytes(32, 1, 2)) {
		t.Fatalf("read %+v", st)
	}
}

func TestReadSeriesStateErrors(t *testing.T) {
	notWhole := append(slices.Clone(stateE2), 0)
	cases := []struct {
		name      string
		edit      func(t *testing.T, s string) string
		path, why string
	}{
		{"unknown key", rep(`"persons": false,`, `"persons": false, "extra": 1,`), "extra", "unknown key"},
		{"unknown nested key", rep(`"since": 2,`, `"since": 2, "Since": 2,`), "waiting[0].Since", "unknown key"},
		{"duplicate key", rep(`"night": 2,`, `"night": 2, "night": 2,`), "night", "duplicate key"},
		{"duplicate nested key", rep(`"records": 3`, `"records": 3, "records": 4`), "waiting[0].records", "duplicate key"},
		{"missing key", rep(",\n \"pending\": null", ""), "pending", "missing key"},
		{"missing nested key", rep(`, "records": 3`, ""), "waiting[0].records", "missing key"},
		{"wrong type", rep(`"night": 2,`, `"night": "2",`), "night", "a string, want an integer"},
		{"not an integer", rep(`"since": 2,`, `"since": 2.5,`), "waiting[0].since", "not an integer"},
		{"null", rep(`"persons": false`, `"persons": null`), "persons", "null, want a boolean"},
		{"object for an array", rep(`"node": [1, 2]`, `"node": {}`), "node", "an object, want an array"},
		{"wrong element type", rep(`"columns": ["age", "zip", "diag"]`, `"columns": ["age", "zip", 3]`), "columns[2]", "a number, want a string"},
		{"bad format", rep(`"sanitize-series/1"`, `"sanitize-series/2"`), "format", "not"},
		{"bad series id", rep(`"0123456789abcdef0123456789abcdef"`, `"0123456789ABCDEF0123456789abcdef"`), "series", "hex"},
		{"bad waiting class", rep(`"00112233445566778899aabbccddeeff"`, `"00112233445566778899aabbccddee"`), "waiting[0].class", "hex"},
		{"bad models digest", rep(`"models": "sha256:`+hexA, `"models": "sha1:`+hexA), "digests.models", "sha256"},
		{"bad hierarchy digest", rep(`"sha256:`+hexB, `"sha256:`+hexB[1:]), `digests.hierarchies["zip"]`, "sha256"},
		{"hierarchy of no quasi", rep(`{"zip":`, `{"diag":`), `digests.hierarchies["diag"]`, "not a quasi"},
		{"bad history digest", rep(`"sha256:`+hexC, `"sha256:`+strings.ToUpper(hexC)), "history[0].digest", "sha256"},
		{"bad base64", rep(b64(stateE2), "!!!!"+b64(stateE2)[4:]), "classes[1].entries", "base64"},
		{"unpadded base64", rep(b64(stateE2), strings.TrimRight(b64(stateE2), "=")), "classes[1].entries", "base64"},
		{"entries not whole", rep(b64(stateE2), b64(notWhole)), "classes[1].entries", "whole number"},
		{"no entries", rep(b64(stateE2), ""), "classes[1].entries", "no entries"},
		{"entries out of order", rep(b64(stateE1), b64(entryBytes(16, 2, 1))), "classes[0].entries", "ascending"},
		{"previous entries out of order", rep(b64(stateE3), b64(entryBytes(16, 2, 1))), "previous.classes[0].entries", "ascending"},
		{"persons with rows' entries", rep(`"persons": false`, `"persons": true`), "classes[0].entries", "whole number"},
		{"labels short", rep(`["[30,39]", "123**"]`, `["[30,39]"]`), "classes[1].labels", "labels"},
		{"classes out of order", rep(`["[30,39]", "123**"]`, `["[10,19]", "123**"]`), "classes[1].labels", "ascending"},
		{"class twice", rep(`["[30,39]", "123**"]`, `["[20,29]", "123**"]`), "classes[1].labels", "ascending"},
		{"node short", rep(`"node": [1, 2],`, `"node": [1],`), "node", "levels"},
		{"negative level", rep(`"node": [1, 2],`, `"node": [1, -2],`), "node[1]", "negative"},
		{"previous node short", rep(`"node": [1, 1], "classes"`, `"node": [1], "classes"`), "previous.node", "levels"},
		{"history node short", rep(`"node": [1, 1], "released"`, `"node": [1], "released"`), "history[0].node", "levels"},
		{"previous night not before", rep(`"night": 1, "node": [1, 1], "classes"`, `"night": 2, "node": [1, 1], "classes"`), "previous.night", "before"},
		{"night zero", rep(`"night": 2,`, `"night": 0,`), "night", "below 1"},
		{"quasi not a column", rep(`"quasi": ["age", "zip"]`, `"quasi": ["age", "sex"]`), "quasi[1]", "not a column"},
		{"quasi out of order", rep(`"quasi": ["age", "zip"]`, `"quasi": ["zip", "age"]`), "quasi[1]", "order"},
		{"column twice", rep(`"columns": ["age", "zip", "diag"]`, `"columns": ["age", "zip", "age"]`), "columns[2]", "named before"},
		{"time not UTC", rep(`"2026-12-01T02:00:00Z"`, `"2026-12-01T03:00:00+01:00"`), "history[0].time", "UTC"},
		{"time not a time", rep(`"2026-12-01T02:00:00Z"`, `"yesterday"`), "history[0].time", "RFC 3339"},
		{"waiting since after night", rep(`"since": 2,`, `"since": 3,`), "waiting[0].since", "night"},
		{"negative count", rep(`"deferred": 3`, `"deferred": -3`), "history[1].deferred", "negative"},
		{"two values", func(t *testing.T, s string) string { return s + "{}" }, "", "more than one JSON value"},
		{"not an object", func(t *testing.T, s string) string { return "[" + s + "]" }, "", "an array, want an object"},
		{"not UTF-8", rep(`"out/n1.csv"`, "\"out/n1\xff.csv\""), "", "UTF-8"},
		{"truncated", func(t *testing.T, s string) string { return s[:len(s)/2] }, "", "not JSON"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadSeriesState([]byte(tc.edit(t, handState())))
			if err == nil {
				t.Fatal("read")
			}
			if !errors.Is(err, fault.ErrBadInput) {
				t.Errorf("%v: not bad input", err)
			}
			msg := err.Error()
			if tc.path != "" && !strings.Contains(msg, "series state: "+tc.path+":") {
				t.Errorf("%q does not name %s", msg, tc.path)
			}
			if !strings.Contains(msg, tc.why) {
				t.Errorf("%q does not say %q", msg, tc.why)
			}
			for _, v := range []string{"[20,29]", "123**", "0123456789", "out/n1", b64(stateE1), hexA[:16]} {
				if strings.Contains(msg, v) {
					t.Errorf("%q quotes a value of the file", msg)
				}
			}
		})
	}
}

// rep is an edit of the state's text: old replaced by new once.
func rep(old, new string) func(t *testing.T, s string) string {
	return func(t *testing.T, s string) string { return testfiles.Replace(t, s, old, new) }
}

// FuzzReadSeriesState: whatever the bytes, the reader returns a state that keeps
// the rules (and reads again the same once written) or an error of bad input.
func FuzzReadSeriesState(f *testing.F) {
	f.Add([]byte(handState()))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"format": "sanitize-series/1", "night": [[[[1]]]]}`))
	f.Add([]byte(testfiles.Replace(f, handState(), `"pending": null`, `"pending": {"output": "a", "temp": "b", "digest": "sha256:`+hexA+`"}`)))
	f.Add([]byte(testfiles.Replace(f, handState(), `"previous": {`, `"previous": null, "x": {`)))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := ReadSeriesState(data)
		if err != nil {
			if !errors.Is(err, fault.ErrBadInput) {
				t.Fatalf("%v: not bad input", err)
			}
			return
		}
		width := 16
		if st.Persons {
			width = 32
		}
		check := func(node []int, cs []SeriesClass) {
			if len(node) != len(st.Quasi) {
				t.Fatalf("a node of %d levels for %d quasi-identifiers", len(node), len(st.Quasi))
			}
			for i, c := range cs {
				if len(c.Labels) != len(st.Quasi) || len(c.Entries) == 0 || len(c.Entries)%width != 0 {
					t.Fatalf("class %d: %d labels, %d bytes of entries", i, len(c.Labels), len(c.Entries))
				}
				if i > 0 && slices.Compare(cs[i-1].Labels, c.Labels) >= 0 {
					t.Fatalf("class %d out of order", i)
				}
				for at := width; at < len(c.Entries); at += width {
					if bytes.Compare(c.Entries[at-width:at], c.Entries[at:at+width]) > 0 {
						t.Fatalf("class %d: entries out of order", i)
					}
				}
			}
		}
		check(st.Node, st.Classes)
		if st.Previous != nil {
			check(st.Previous.Node, st.Previous.Classes)
		}
		again, err := ReadSeriesState(writeState(t, st))
		if err != nil {
			t.Fatalf("written and read again: %v", err)
		}
		if !reflect.DeepEqual(again, st) {
			t.Fatalf("written and read again\n%+v\nwas\n%+v", again, st)
		}
	})
}
