package series

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
)

// canary is a data value planted in a state: no error message may quote it.
const canary = "CANARY-123"

// numCanary is a data value written as a number where the state holds a label.
const numCanary = "12345123"

// testKey is a series key of the tests.
var testKey = bytes.Repeat([]byte{0x5a}, 32)

// sha is a "sha256:" digest of 64 hex digits made of the digit d.
func sha(d string) string { return "sha256:" + strings.Repeat(d, 64) }

// entries is n sorted entries of width bytes, the i-th filled with the byte first+i.
func entries(first byte, n, width int) []byte {
	var e []byte
	for i := range n {
		e = append(e, bytes.Repeat([]byte{first + byte(i)}, width)...)
	}
	return e
}

// cohorts is the cohorts of n entries: the first cohort of night for each, or, with
// more nights given, of nights[i] for entry i.
func cohorts(n int, night uint32, nights ...uint32) []byte {
	var c []byte
	for i := range n {
		if i < len(nights) {
			c = binary.LittleEndian.AppendUint32(c, CohortOf(int(nights[i]), 0))
		} else {
			c = binary.LittleEndian.AppendUint32(c, CohortOf(int(night), 0))
		}
	}
	return c
}

// validState is a state of two nights that keeps every rule of docs/series.md, with
// the canary in one of its class labels.
func validState() *State {
	w := 2 * DigestBytes
	return &State{
		Format:   Format,
		Series:   "0123456789abcdef0123456789abcdef",
		Night:    2,
		Columns:  []string{"age", "zip", "diagnosis"},
		Quasi:    []string{"age", "zip"},
		Persons:  true,
		KeyCheck: KeyCheck(testKey),
		Digests:  Digests{Models: sha("a"), Hierarchies: map[string]string{"age": sha("b"), "zip": sha("c")}},
		Node:     []int{1, 2},
		Classes: []Class{
			{Labels: []string{"20-29", "12***"}, Entries: entries(1, 3, w), Cohorts: cohorts(3, 1, 2, 1, 1)},
			// one entry twice, of two cohorts: the ties in ascending order of cohort
			{Labels: []string{"20-29", canary}, Entries: append(entries(4, 1, w), entries(4, 1, w)...), Cohorts: cohorts(2, 2, 1)},
			{Labels: []string{"30-39", "12***"}, Entries: entries(9, 2, w), Cohorts: cohorts(2, 2)},
		},
		Resting: []Class{{Labels: []string{"40-49", "12***"}, Entries: entries(20, 2, w), Cohorts: cohorts(2, 1)}},
		Retired: []Class{{Labels: []string{"20-29", "12***"}, Entries: entries(30, 1, w), Cohorts: []byte{}}},
		Previous: &Night{Night: 1, Node: []int{1, 1}, Classes: []Class{
			{Labels: []string{"20-29", "123**"}, Entries: entries(1, 2, w), Cohorts: cohorts(2, 1)},
		}},
		Waiting: []Wait{{Class: strings.Repeat("0f", DigestBytes), Since: 2, Records: 3}},
		History: []Record{
			{Night: 1, Time: time.Date(2025, 3, 1, 2, 0, 0, 0, time.UTC), Node: []int{1, 1}, Released: 2, Output: "out/n1.csv", Digest: sha("d")},
			{Night: 2, Time: time.Date(2025, 3, 2, 2, 0, 0, 5, time.UTC), Node: []int{1, 2}, Released: 6, Deferred: 3, Output: "out/n2.csv", Digest: sha("e")},
		},
		Pending: &Pending{Output: "out/n2.csv", Temp: "out/.n2.csv.tmp", Digest: sha("e")},
	}
}

// firstCohort gives every entry of s's classes, resting classes and previous
// classes cohort 1, a night of every series, after their entries changed.
func firstCohort(s *State) {
	all := [][]Class{s.Classes, s.Resting}
	if s.Previous != nil {
		all = append(all, s.Previous.Classes)
	}
	for _, cs := range all {
		for i := range cs {
			cs[i].Cohorts = cohorts(len(cs[i].Entries)/s.EntryWidth(), 1)
		}
	}
}

// marshal is s's bytes; the test fails when s cannot be written.
func marshal(t testing.TB, s *State) []byte {
	t.Helper()
	b, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// handWritten is a state file written from docs/series.md's table, not by Marshal.
func handWritten() string {
	b64 := func(e []byte) string { return base64.StdEncoding.EncodeToString(e) }
	return fmt.Sprintf(`{
  "format": "sanitize-series/1",
  "series": "0123456789abcdef0123456789abcdef",
  "night": 1,
  "columns": ["age", "diagnosis", "zip"],
  "quasi": ["age", "zip"],
  "persons": false,
  "key_check": "%s",
  "digests": {"models": "%s", "hierarchies": {"age": "%s", "zip": "%s"}},
  "node": [0, 3],
  "classes": [
    {"labels": ["20-29", "%s"], "entries": "%s", "cohorts": "%s"},
    {"labels": ["30-39", "1****"], "entries": "%s", "cohorts": "%s"}
  ],
  "resting": [],
  "retired": [{"labels": ["30-39", "1****"], "entries": "%s", "cohorts": null}],
  "previous": null,
  "waiting": [],
  "history": [{"night": 1, "time": "2025-03-01T02:00:00Z", "node": [0, 3], "released": 4,
    "deferred": 0, "withheld": 0, "removed": 0, "output": "n1.csv", "digest": "%s"}],
  "pending": null
}`, KeyCheck(testKey), sha("a"), sha("b"), sha("c"),
		canary, b64(entries(1, 3, DigestBytes)), b64(cohorts(3, 1)),
		b64(entries(7, 1, DigestBytes)), b64(cohorts(1, 1)), b64(entries(8, 1, DigestBytes)), sha("d"))
}

func TestParseRoundTrip(t *testing.T) {
	noPending := validState()
	noPending.Pending = nil
	noPersons := validState()
	noPersons.Persons = false
	for i := range noPersons.Classes {
		noPersons.Classes[i].Entries = entries(byte(10*i+1), i+1, DigestBytes)
	}
	noPersons.Previous.Classes[0].Entries = entries(1, 1, DigestBytes)
	noPersons.Resting[0].Entries = entries(20, 3, DigestBytes)
	noPersons.Retired[0].Entries = entries(30, 1, DigestBytes)
	firstCohort(noPersons)
	first := validState()
	first.Night, first.Previous, first.Waiting, first.History = 1, nil, []Wait{}, first.History[:1]
	firstCohort(first)
	for _, tt := range []struct {
		name string
		s    *State
	}{{"two nights, pending", validState()}, {"no pending", noPending}, {"no persons", noPersons}, {"first night", first}} {
		t.Run(tt.name, func(t *testing.T) {
			data := marshal(t, tt.s)
			got, err := Parse("state.json", data)
			if err != nil {
				t.Fatalf("Parse(Marshal(s)): %v", err)
			}
			sameState(t, "Parse(Marshal(s))", got, tt.s)
			if again := marshal(t, got); !bytes.Equal(again, data) {
				t.Errorf("Marshal(Parse(Marshal(s))) differs:\n%s\n%s", again, data)
			}
		})
	}
	t.Run("hand-written", func(t *testing.T) {
		s, err := Parse("state.json", []byte(handWritten()))
		if err != nil {
			t.Fatalf("Parse of a state written from docs/series.md: %v", err)
		}
		if s.Night != 1 || s.Persons || s.EntryWidth() != DigestBytes || len(s.Classes) != 2 ||
			!bytes.Equal(s.Classes[0].Entries, entries(1, 3, DigestBytes)) || s.Classes[0].Labels[1] != canary ||
			s.Previous != nil || s.Pending != nil || len(s.History) != 1 || !s.History[0].Time.Equal(time.Date(2025, 3, 1, 2, 0, 0, 0, time.UTC)) {
			t.Errorf("Parse read %+v", s)
		}
		again, err := Parse("state.json", marshal(t, s))
		if err != nil {
			t.Fatalf("the hand-written state, written again, does not parse: %v", err)
		}
		sameState(t, "the hand-written state written and read again", again, s)
	})
}

// sameState fails the test unless got and want are equal, showing both as JSON.
// (States are the same when their files are: an empty list and none are written
// alike.)
func sameState(t testing.TB, what string, got, want *State) {
	t.Helper()
	g, gerr := got.Marshal()
	w, werr := want.Marshal()
	if gerr != nil || werr != nil || !bytes.Equal(g, w) {
		t.Errorf("%s differs:\n got %s\nwant %s", what, g, w)
	}
}

// A stateCase is a broken state: made from a valid one by edit (of the State) or by
// text (of its JSON), and the key its error must name.
type stateCase struct {
	name string
	edit func(s *State)
	text func(t *testing.T, js string) string
	key  string
}

// checkCases break each rule of State.Check and of docs/series.md's table once.
func checkCases() []stateCase {
	w := 2 * DigestBytes
	return []stateCase{
		{name: "format", edit: func(s *State) { s.Format = "sanitize-series/2" }, key: "format"},
		{name: "format canary", edit: func(s *State) { s.Format = canary }, key: "format"},
		{name: "series short", edit: func(s *State) { s.Series = s.Series[:31] }, key: "series"},
		{name: "series upper", edit: func(s *State) { s.Series = strings.ToUpper(s.Series) }, key: "series"},
		{name: "series not hex", edit: func(s *State) { s.Series = strings.Repeat("g", 32) }, key: "series"},
		{name: "night 0", edit: func(s *State) { s.Night, s.Previous, s.History = 0, nil, nil }, key: "night"},
		{name: "no quasi", edit: func(s *State) { s.Quasi, s.Node = nil, nil }, key: "node"},
		{name: "node short", edit: func(s *State) { s.Node = s.Node[:1] }, key: "node"},
		{name: "node negative", edit: func(s *State) { s.Node[1] = -1 }, key: "node"},
		{name: "key_check short", edit: func(s *State) { s.KeyCheck = s.KeyCheck[:15] }, key: "key_check"},
		{name: "key_check upper", edit: func(s *State) { s.KeyCheck = "ABCDEF0123456789" }, key: "key_check"},
		{name: "models digest", edit: func(s *State) { s.Digests.Models = "md5:" + strings.Repeat("a", 64) }, key: "digests.models"},
		{name: "models digest short", edit: func(s *State) { s.Digests.Models = s.Digests.Models[:70] }, key: "digests.models"},
		{name: "quasi not a column", edit: func(s *State) { s.Columns = []string{"age", "diagnosis"} }, key: "quasi"},
		{name: "hierarchy missing", edit: func(s *State) { delete(s.Digests.Hierarchies, "zip") }, key: "digests.hierarchies"},
		{name: "hierarchy digest bad", edit: func(s *State) { s.Digests.Hierarchies["age"] = "sha256:" + canary }, key: "digests.hierarchies"},
		{name: "labels short", edit: func(s *State) { s.Classes[1].Labels = []string{canary} }, key: "classes[1].labels"},
		{name: "classes out of order", edit: func(s *State) { s.Classes[0], s.Classes[2] = s.Classes[2], s.Classes[0] }, key: "classes[1]"},
		{name: "class twice", edit: func(s *State) { s.Classes[2].Labels = slices.Clone(s.Classes[1].Labels) }, key: "classes[2]"},
		{name: "entries empty", edit: func(s *State) { s.Classes[1].Entries = nil }, key: "classes[1].entries"},
		{name: "entries not a multiple of the width", edit: func(s *State) { s.Classes[0].Entries = s.Classes[0].Entries[:w+DigestBytes] }, key: "classes[0].entries"},
		{name: "entries out of order", edit: func(s *State) { s.Classes[2].Entries = append(entries(9, 1, w), entries(2, 1, w)...) }, key: "classes[2].entries"},
		{name: "entries out of order in the person half", edit: func(s *State) {
			e := entries(3, 2, w)
			e[DigestBytes] = 0xff // the first entry's person digest: same row, later person
			e[w] = 3              // the second's row digest made the first's
			copy(e[w:w+DigestBytes], e[:DigestBytes])
			s.Classes[0].Entries = e
			firstCohort(s)
		}, key: "classes[0].entries"},
		{name: "cohorts short", edit: func(s *State) { s.Classes[0].Cohorts = s.Classes[0].Cohorts[:8] }, key: "classes[0].cohorts"},
		{name: "cohorts missing", edit: func(s *State) { s.Classes[2].Cohorts = nil }, key: "classes[2].cohorts"},
		{name: "cohort 0", edit: func(s *State) { s.Classes[0].Cohorts = cohorts(3, 1, 0) }, key: "classes[0].cohorts"},
		{name: "cohort after the night", edit: func(s *State) { s.Classes[2].Cohorts = cohorts(2, 3) }, key: "classes[2].cohorts"},
		{name: "ties out of cohort order", edit: func(s *State) { s.Classes[1].Cohorts = cohorts(2, 1, 2) }, key: "classes[1].entries"},
		{name: "resting cohorts", edit: func(s *State) { s.Resting[0].Cohorts = nil }, key: "resting[0].cohorts"},
		{name: "resting out of order", edit: func(s *State) { s.Resting = append(s.Resting, s.Resting[0]) }, key: "resting[1]"},
		{name: "resting entries", edit: func(s *State) { s.Resting[0].Entries = s.Resting[0].Entries[:40] }, key: "resting[0].entries"},
		{name: "retired with cohorts", edit: func(s *State) { s.Retired[0].Cohorts = cohorts(1, 1) }, key: "retired[0].cohorts"},
		{name: "retired entries empty", edit: func(s *State) { s.Retired[0].Entries = nil }, key: "retired[0].entries"},
		{name: "retired labels", edit: func(s *State) { s.Retired[0].Labels = nil }, key: "retired[0].labels"},
		{name: "previous cohort after its night", edit: func(s *State) { s.Previous.Classes[0].Cohorts = cohorts(2, 2) }, key: "previous.classes[0].cohorts"},
		{name: "previous night wrong", edit: func(s *State) { s.Previous.Night = 2 }, key: "previous"},
		{name: "previous node short", edit: func(s *State) { s.Previous.Node = []int{1} }, key: "previous"},
		{name: "previous node negative", edit: func(s *State) { s.Previous.Node[0] = -3 }, key: "previous.node"},
		{name: "previous labels", edit: func(s *State) { s.Previous.Classes[0].Labels = append(s.Previous.Classes[0].Labels, canary) }, key: "previous.classes[0].labels"},
		{name: "previous classes out of order", edit: func(s *State) {
			s.Previous.Classes = append(s.Previous.Classes, Class{Labels: []string{"10-19", canary}, Entries: entries(1, 1, w)})
		}, key: "previous.classes[1]"},
		{name: "previous entries width", edit: func(s *State) { s.Previous.Classes[0].Entries = entries(1, 1, DigestBytes) }, key: "previous.classes[0].entries"},
		{name: "waiting tag", edit: func(s *State) { s.Waiting[0].Class = canary }, key: "waiting[0]"},
		{name: "waiting since 0", edit: func(s *State) { s.Waiting[0].Since = 0 }, key: "waiting[0]"},
		{name: "waiting since after night", edit: func(s *State) { s.Waiting[0].Since = 3 }, key: "waiting[0]"},
		{name: "waiting no records", edit: func(s *State) { s.Waiting[0].Records = 0 }, key: "waiting[0]"},
		{name: "history short", edit: func(s *State) { s.History = s.History[:1] }, key: "history"},
		{name: "history long", edit: func(s *State) { s.History = append(s.History, s.History[1]) }, key: "history"},
		{name: "pending without temp", edit: func(s *State) { s.Pending.Temp = "" }, key: "pending"},
		{name: "pending without output", edit: func(s *State) { s.Pending.Output = "" }, key: "pending"},
		{name: "pending digest", edit: func(s *State) { s.Pending.Digest = canary }, key: "pending"},
	}
}

// textCases break the state file's text: keys, types and encodings.
func textCases() []stateCase {
	r := func(old, new string) func(t *testing.T, js string) string {
		return func(t *testing.T, js string) string { return testfiles.Replace(t, js, old, new) }
	}
	v := validState()
	e0 := base64.StdEncoding.EncodeToString(v.Classes[0].Entries)
	resting, _ := json.Marshal(v.Resting)
	retired, _ := json.Marshal(v.Retired[0])
	noCohorts, _ := json.Marshal(struct {
		Labels  []string `json:"labels"`
		Entries []byte   `json:"entries"`
	}{v.Retired[0].Labels, v.Retired[0].Entries})
	pending := fmt.Sprintf(`,"pending":{"output":%q,"temp":%q,"digest":%q}`, v.Pending.Output, v.Pending.Temp, v.Pending.Digest)
	return []stateCase{
		{name: "unknown key", text: r(`"night":2,`, `"night":2,"nights":3,`), key: `"nights": unknown key`},
		{name: "key in another case", text: r(`"night":2,`, `"Night":2,`), key: `"Night": unknown key`},
		{name: "unknown nested key", text: r(`"labels":`, `"label":[],"labels":`), key: `"classes"[0]."label": unknown key`},
		{name: "unknown key in history", text: r(`"released":6,`, `"released":6,"note":"x",`), key: `"history"[1]."note": unknown key`},
		{name: "duplicate key", text: r(`"night":2,`, `"night":2,"night":2,`), key: `"night": duplicate key`},
		{name: "duplicate nested key", text: r(`"temp":`, `"temp":"x","temp":`), key: `"pending"."temp": duplicate key`},
		{name: "duplicate hierarchy", text: r(`"hierarchies":{`, `"hierarchies":{"zip":"sha256:0","age":"x",`), key: `"digests"."hierarchies"."age": duplicate key`},
		{name: "missing pending", text: r(pending, ``), key: `missing key "pending"`},
		{name: "missing night", text: r(`"night":2,`, ``), key: `missing key "night"`},
		{name: "missing previous night", text: r(`"previous":{"night":1,`, `"previous":{`), key: `"previous": missing key "night"`},
		{name: "missing entries", text: r(`,"entries":"`+e0+`"`, ``), key: `"classes"[0]: missing key "entries"`},
		{name: "missing waiting records", text: r(`,"records":3`, ``), key: `"waiting"[0]: missing key "records"`},
		{name: "night a string", text: r(`"night":2,`, `"night":"`+canary+`",`), key: `"night": a string`},
		{name: "night a fraction", text: r(`"night":2,`, `"night":2.5,`), key: `"night": a number`},
		{name: "persons a string", text: r(`"persons":true`, `"persons":"yes"`), key: `"persons": a string`},
		{name: "columns a string", text: r(`"columns":["age","zip","diagnosis"]`, `"columns":"age"`), key: `"columns": a string`},
		{name: "label a number", text: r(`"labels":["20-29","12***"]`, `"labels":["20-29",`+numCanary+`]`), key: `"classes.labels": a number`},
		{name: "node a string", text: r(`"node":[1,2]`, `"node":"`+canary+`"`), key: `"node": a string`},
		{name: "entries a number", text: r(`"entries":"`+e0+`"`, `"entries":7`), key: `"classes.entries": a number`},
		{name: "missing cohorts", text: r(string(retired), string(noCohorts)), key: `"retired"[0]: missing key "cohorts"`},
		{name: "missing resting", text: r(`"resting":`+string(resting)+`,`, ``), key: `missing key "resting"`},
		{name: "previous an array", text: r(`"previous":{"night":1,`, `"previous":[{"night":1,`), key: "previous"},
		{name: "not an object", text: func(t *testing.T, js string) string { return "[" + js + "]" }, key: "not a JSON object"},
		{name: "a second value", text: func(t *testing.T, js string) string { return js + js }, key: "more than one JSON value"},
		{name: "truncated", text: func(t *testing.T, js string) string { return js[:len(js)/2] }, key: "not a series state"},
	}
}

func TestParseRefuses(t *testing.T) {
	for _, tt := range append(checkCases(), textCases()...) {
		t.Run(tt.name, func(t *testing.T) {
			s := validState()
			var data []byte
			if tt.edit != nil {
				tt.edit(s)
				data = marshal(t, s)
			} else {
				data = []byte(tt.text(t, string(marshal(t, s))))
			}
			got, err := Parse("night.json", data)
			if err == nil {
				t.Fatalf("Parse accepted the state (night %d)", got.Night)
			}
			if !errors.Is(err, fault.ErrBadInput) {
				t.Errorf("error %q does not match fault.ErrBadInput", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.key) || !strings.Contains(msg, "night.json") {
				t.Errorf("error %q does not name the file and %s", msg, tt.key)
			}
			if strings.Contains(msg, canary) || strings.Contains(msg, numCanary) {
				t.Errorf("error %q quotes a value of the state", msg)
			}
		})
	}
}

// TestParseRefusesEncodings: a value of the right JSON type that does not decode
// (base64, a time) is bad input that quotes nothing of it.
func TestParseRefusesEncodings(t *testing.T) {
	v := validState()
	valid := string(marshal(t, v))
	e0 := base64.StdEncoding.EncodeToString(v.Classes[0].Entries)
	e1 := base64.StdEncoding.EncodeToString(v.Classes[1].Entries) // 64 bytes: padded
	c0 := base64.StdEncoding.EncodeToString(v.Classes[0].Cohorts)
	for _, tt := range []struct{ name, old, new string }{
		{"entries bad base64", `"entries":"` + e0, `"entries":"` + canary + e0},
		{"entries unpadded base64", `"entries":"` + e1 + `"`, `"entries":"` + strings.TrimRight(e1, "=") + `"`},
		{"entries URL base64", `"entries":"` + e0 + `"`, `"entries":"` + base64.URLEncoding.EncodeToString([]byte{0xfb, 0xff}) + `"`},
		{"cohorts bad base64", `"cohorts":"` + c0 + `"`, `"cohorts":"` + canary + `"`},
		{"time not RFC 3339", `"time":"2025-03-01T02:00:00Z"`, `"time":"` + canary + `"`},
		{"time without zone", `"time":"2025-03-01T02:00:00Z"`, `"time":"2025-03-01T02:00:00"`},
	} {
		_, err := Parse("night.json", []byte(testfiles.Replace(t, valid, tt.old, tt.new)))
		if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "night.json") {
			t.Errorf("%s: %v, want bad input naming the file", tt.name, err)
		} else if strings.Contains(err.Error(), canary) {
			t.Errorf("%s: error %q quotes a value of the state", tt.name, err)
		}
	}
}

// TestCheckRules: the rules are State.Check's own, not only Parse's: a valid state
// passes, each broken one fails naming its key.
func TestCheckRules(t *testing.T) {
	if err := validState().Check(); err != nil {
		t.Fatalf("Check of a valid state: %v", err)
	}
	for _, tt := range checkCases() {
		s := validState()
		tt.edit(s)
		if err := s.Check(); err == nil || !strings.HasPrefix(err.Error(), tt.key) {
			t.Errorf("%s: Check = %v, want an error about %s", tt.name, err, tt.key)
		}
	}
}

func FuzzParse(f *testing.F) {
	valid := marshal(f, validState())
	f.Add(valid)
	f.Add([]byte(handWritten()))
	for _, tt := range checkCases()[:6] {
		s := validState()
		tt.edit(s)
		f.Add(marshal(f, s))
	}
	f.Add([]byte(testfiles.Replace(f, string(valid), `"night":2`, `"night":2,"night":2`)))
	f.Add([]byte(testfiles.Replace(f, string(valid), `"entries":"`, `"entries":"*`)))
	f.Add(valid[:len(valid)/3])
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.json", data)
		if err != nil {
			if !errors.Is(err, fault.ErrBadInput) {
				t.Fatalf("error %q does not match fault.ErrBadInput", err)
			}
			return
		}
		out, err := s.Marshal()
		if err != nil {
			t.Fatalf("a parsed state cannot be written: %v", err)
		}
		again, err := Parse("fuzz.json", out)
		if err != nil {
			t.Fatalf("Marshal of a parsed state does not parse: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(again, s) {
			g, _ := json.Marshal(again)
			t.Fatalf("Parse(Marshal(s)) differs:\n got %s\nwant %s", g, out)
		}
		if out2, _ := again.Marshal(); !bytes.Equal(out2, out) {
			t.Fatalf("Marshal is not stable:\n%s\n%s", out, out2)
		}
	})
}
