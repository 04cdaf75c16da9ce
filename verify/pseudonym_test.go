package verify

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// pseudoKey is a test key; the pseudonyms below were computed with Python's hmac.
var pseudoKey = SecretKey("0123456789abcdef0123456789abcdef")

// pseudoOf is the pseudonym of each test id under pseudoKey (Python: base32 of
// hmac.new(key, id, sha256).digest()[:16], padding dropped).
var pseudoOf = map[string]string{"patient-1": "JLIIUW6BHY4PHL3T5T6SQLYFVQ", "patient-2": "SU7WULXUJEHH3QNBRW4VPXAQCE"}

func TestPseudonymMAC(t *testing.T) {
	spec := pseudoSpec(pseudoKey)
	if s := fmt.Sprintf("%v %+v %x %s", spec, *spec.Pseudonym, spec.Pseudonym.Key, spec.Pseudonym.Key); strings.Contains(s, "0123") || strings.Contains(s, "3031") || !strings.Contains(s, "(pseudonym key)") {
		t.Errorf("a spec prints its key: %s", s)
	}
	m := newMacer(pseudoKey)
	for id, p := range pseudoOf {
		if !m.is(p, id) {
			t.Errorf("%s: not the pseudonym %s", id, p)
		}
		if !wellFormedPseudonym(p) {
			t.Errorf("%s: not well formed", p)
		}
	}
	if m.is(pseudoOf["patient-1"], "patient-2") || newMacer([]byte("another key, 32 bytes long......")).is(pseudoOf["patient-1"], "patient-1") {
		t.Error("a pseudonym of another id or key matches")
	}
	for _, bad := range []string{"", "patient-1", "JLIIUW6BHY4PHL3T5T6SQLYFV", "JLIIUW6BHY4PHL3T5T6SQLYFVQA", "jliiuw6bhy4phl3t5t6sqlyfvq", "JLIIUW6BHY4PHL3T5T6SQLYFV1", "JLIIUW6BHY4PHL3T5T6SQLYFVR"} {
		if wellFormedPseudonym(bad) {
			t.Errorf("%q taken for a pseudonym", bad)
		}
	}
}

// pseudoSpec is a release of (q, s, pid) counted in persons by pid, released as its
// pseudonym (key nil: not known), linkable, k = 1.
func pseudoSpec(key SecretKey) Spec {
	spec := linkable(1)
	spec.Columns = []string{"q", "s", "pid"}
	spec.Pseudonym = &PseudonymCheck{Column: "pid", Key: key}
	return spec
}

// pseudoRec is a release record of class q holding pseudonym p, of the person id.
type pseudoRec struct{ q, p, id string }

// countPseudonyms feeds a Counter of spec the records with AddMatched.
func countPseudonyms(t *testing.T, spec Spec, recs []pseudoRec) (*Measured, error) {
	t.Helper()
	spec.InputRows = len(recs)
	c, err := NewCounter(spec, spec.Columns)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := c.AddMatched([]string{r.q, "a", r.p}, []string{r.q, r.id}); err != nil {
			return nil, err
		}
	}
	return c.Finish()
}

// TestPseudonymCounter: with the key every pseudonym must be its person's; without
// it, they must be well formed, never the id, and one to one with the persons. The
// violations name release records, never a pseudonym or an id.
func TestPseudonymCounter(t *testing.T) {
	p1, p2 := pseudoOf["patient-1"], pseudoOf["patient-2"]
	other := "AAAAAAAAAAAAAAAAAAAAAAAAAA"
	for _, tc := range []struct {
		name string
		key  SecretKey
		recs []pseudoRec
		want string // a part of the violation; "" for none
	}{
		{"key: right", pseudoKey, []pseudoRec{{"A", p1, "patient-1"}, {"B", p2, "patient-2"}, {"A", p1, "patient-1"}}, ""},
		{"key: another person's", pseudoKey, []pseudoRec{{"A", p1, "patient-1"}, {"B", p1, "patient-2"}}, "release record 2: its pseudonym"},
		{"key: the id", pseudoKey, []pseudoRec{{"A", "patient-1", "patient-1"}}, "release record 1: its pseudonym"},
		{"key: another key's", []byte("another key, 32 bytes long......"), []pseudoRec{{"A", p1, "patient-1"}}, "release record 1: its pseudonym"},
		{"no key: one to one", nil, []pseudoRec{{"A", p1, "patient-1"}, {"B", other, "patient-2"}, {"B", p1, "patient-1"}}, ""},
		{"no key: a person of two pseudonyms", nil, []pseudoRec{{"A", p1, "patient-1"}, {"B", p2, "patient-2"}, {"B", other, "patient-1"}}, "release records 1 and 3 hold two pseudonyms"},
		{"no key: a pseudonym of two persons", nil, []pseudoRec{{"A", p1, "patient-1"}, {"A", p1, "patient-1"}, {"B", p1, "patient-2"}}, "release records 1 and 3 hold one pseudonym"},
		{"no key: the id", nil, []pseudoRec{{"A", p1, "patient-1"}, {"A", "patient-2", "patient-2"}}, "release record 2: column \"pid\" holds the person's id"},
		{"no key: malformed", nil, []pseudoRec{{"A", p1[:20], "patient-1"}}, "release record 1: column \"pid\" holds no pseudonym"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := countPseudonyms(t, pseudoSpec(tc.key), tc.recs)
			var v *Violation
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("right pseudonyms: %v", err)
			case tc.want != "" && (!errors.As(err, &v) || !strings.Contains(v.Msg, tc.want)):
				t.Fatalf("got %v, want a violation saying %q", err, tc.want)
			}
			if err != nil && (strings.Contains(err.Error(), "patient") || strings.Contains(err.Error(), p1[:8]) || strings.Contains(err.Error(), p2[:8]) || strings.Contains(err.Error(), "AAAA")) {
				t.Errorf("%v quotes an id or a pseudonym", err)
			}
		})
	}
}

// TestPseudonymSpec: a pseudonym needs the unit, linkable records, the unit's own
// column in the release, and is never measured as a released column.
func TestPseudonymSpec(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		edit       func(*Spec)
	}{
		{"no unit", "without a privacy unit", func(s *Spec) { s.Unit = "" }},
		{"not linkable", "Linkable", func(s *Spec) { s.Linkable = false }},
		{"another column", "under its own name", func(s *Spec) { s.Pseudonym.Column = "q" }},
		{"released as it is", "released as it is", func(s *Spec) { s.Released = []string{"pid"} }},
		{"not in the release", "missing from the release", func(s *Spec) { s.Columns = []string{"q", "s"} }},
		{"an empty key", "empty key", func(s *Spec) { s.Pseudonym.Key = SecretKey{} }},
	} {
		spec := pseudoSpec(pseudoKey)
		tc.edit(&spec)
		if _, err := NewCounter(spec, spec.Columns); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
	// a header column neither quasi, sensitive nor released, beside a released one
	spec := pseudoSpec(nil)
	spec.Columns = []string{"q", "s", "pid", "ward"}
	spec.Released = []string{"ward"}
	spec.Sensitive[0].Diversity = nil
	spec.Sensitive[0].Closeness = []Closeness{{T: 1, Distance: "equal"}}
	c, err := NewCounter(spec, spec.Columns)
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range []string{"patient-1", "patient-2"} {
		if err := c.AddMatched([]string{"A", "a", pseudoOf[id], "w"}, []string{"A", id}); err != nil {
			t.Fatalf("record %d: %v", i+1, err)
		}
	}
	m, err := c.Finish()
	if err != nil || len(m.Released) != 1 || m.Released[0].Column != "ward" {
		t.Errorf("%v: released measured %+v, want ward only", err, m.Released)
	}
}

// TestPseudonymWalk: the walk pairs a release record with an input record by the
// keyed pseudonym, not by the other columns alone: p1's and p2's records are alike in
// q and s, p1's left out, and the release record is paired with p2's. A record whose
// pseudonym is none of its candidates' is a violation naming it, whatever a Cover
// given for the column says.
func TestPseudonymWalk(t *testing.T) {
	in := [][]string{{"patient-1", "A", "a"}, {"patient-2", "A", "a"}, {"patient-2", "B", "b"}}
	right := [][]string{{"A", "a", pseudoOf["patient-2"]}, {"B", "b", pseudoOf["patient-2"]}}
	walk := func(spec Spec, rel [][]string) (*Measured, int, error) {
		spec.InputRows = len(in)
		c, err := NewCounter(spec, spec.Columns)
		if err != nil {
			t.Fatal(err)
		}
		anything := func(string, string) (bool, error) { return true, nil }
		tr := Truth{Columns: spec.Columns, MaxSuppressed: 2, Covers: map[string]Cover{"q": CoverMask(true), "pid": anything}, Count: c}
		n, err := Truthful(tr, []string{"pid", "q", "s"}, &records{recs: in}, &records{recs: rel})
		if err != nil {
			return nil, n, err
		}
		m, err := c.Finish()
		return m, n, err
	}
	m, n, err := walk(pseudoSpec(pseudoKey), right)
	if err != nil || n != 1 || m.Persons.Released != 1 || m.Persons.InSeveralClasses != 1 || m.Persons.LostAll != 1 {
		t.Fatalf("the keyed walk: %d left out, %v, persons %+v; want patient-2 released in two classes, patient-1 lost", n, err, m.Persons)
	}
	wrong := [][]string{{"A", "a", pseudoOf["patient-2"]}, {"B", "b", pseudoOf["patient-1"]}}
	var v *Violation
	if _, _, err := walk(pseudoSpec(pseudoKey), wrong); !errors.As(err, &v) || !strings.Contains(v.Msg, "release record 2") || !strings.Contains(v.Msg, "pseudonym") {
		t.Errorf("a wrong pseudonym: %v, want a violation naming release record 2", err)
	}
	ids := [][]string{{"A", "a", "patient-2"}, {"B", "b", "patient-2"}}
	if _, _, err := walk(pseudoSpec(pseudoKey), ids); !errors.As(err, &v) {
		t.Errorf("the ids released: %v, want a violation", err)
	}
	if _, _, err := walk(pseudoSpec(nil), [][]string{{"A", "a", "patient-1"}}); !errors.As(err, &v) || !strings.Contains(v.Msg, "release record 1: column \"pid\" holds the person's id") {
		t.Errorf("the ids released, no key: %v, want a violation", err)
	}
}
