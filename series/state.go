// Package series holds what a release series carries from one night to the next: the
// state file (docs/series.md), its strict reading, its lock, its key, its atomic
// replacement and the recovery of a night killed while it was being published; the
// entries (digests of published rows and of persons); and the comparison of a night's
// classes with the previous night's (Byun, Sohn, Bertino, Li 2006, "Secure
// anonymization for incremental datasets"; Pei et al. 2007; Xiao & Tao 2007,
// "m-Invariance").
//
// It imports, of this module, only fault, publish and internal/strictjson: the release
// path gives it rows as text and classes as labels.
package series

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"sanitizer/fault"
	"sanitizer/internal/strictjson"
)

// Format is the state file's format string.
const Format = "sanitize-series/1"

// State is a series' state file (docs/series.md, "The state file").
type State struct {
	Format   string   `json:"format"`
	Series   string   `json:"series"` // 32 lowercase hex digits
	Night    int      `json:"night"`  // the last night published
	Columns  []string `json:"columns"`
	Quasi    []string `json:"quasi"`
	Persons  bool     `json:"persons"`
	KeyCheck string   `json:"key_check"` // KeyCheck of the series key
	Digests  Digests  `json:"digests"`
	Node     []int    `json:"node"`
	Classes  []Class  `json:"classes"`
	// Resting is the classes' cohorts that were published on an earlier night and are
	// withheld whole tonight (they may return whole); Retired the entries that left the
	// release other than with their whole cohort, never to be published again.
	Resting  []Class  `json:"resting"`
	Retired  []Class  `json:"retired"`
	Previous *Night   `json:"previous"`
	Waiting  []Wait   `json:"waiting"`
	History  []Record `json:"history"`
	Pending  *Pending `json:"pending"`
}

// Digests identifies what a series may not change between nights: the models and each
// quasi-identifier's hierarchy.
type Digests struct {
	Models      string            `json:"models"`
	Hierarchies map[string]string `json:"hierarchies"`
}

// Class is one published class: its labels, in the order of State.Quasi, the entries
// of its rows, concatenated in ascending byte order, one per published row, and the
// cohort of each entry, a little-endian uint32 per entry: a cohort is rows of the class
// first published together, numbered CohortOf(the night it was first published, its
// part that night). Ties of equal entries are in ascending order of cohort. Retired
// classes hold no cohorts.
type Class struct {
	Labels  []string `json:"labels"`
	Entries []byte   `json:"entries"`
	Cohorts []byte   `json:"cohorts"`
}

// CohortOf is the number of the part-th cohort a class first published on night.
func CohortOf(night, part int) uint32 { return uint32(night)<<16 | uint32(part) }

// MaxParts bounds the cohorts a class first publishes on one night.
const MaxParts = 1 << 16

// Cohort is the cohort of entry i of c.
func (c *Class) Cohort(i int) uint32 { return binary.LittleEndian.Uint32(c.Cohorts[4*i:]) }

// Night is the night before the last: its node and classes.
type Night struct {
	Night   int     `json:"night"`
	Node    []int   `json:"node"`
	Classes []Class `json:"classes"`
}

// Wait is the records of one class that wait to be published.
type Wait struct {
	Class   string `json:"class"` // ClassTag, hex
	Since   int    `json:"since"` // the night they first waited
	Records int    `json:"records"`
}

// Record is one night of the history.
type Record struct {
	Night    int       `json:"night"`
	Time     time.Time `json:"time"`
	Node     []int     `json:"node"`
	Released int       `json:"released"`
	Deferred int       `json:"deferred"` // new records withheld (they wait)
	Withheld int       `json:"withheld"` // every record withheld: deferred, resting, retired
	Removed  int       `json:"removed"`
	Output   string    `json:"output"`
	Digest   string    `json:"digest"`
}

// Pending is a night committed but not yet put in place: its release is the
// temporary Temp, to be renamed to Output, whose digest is Digest.
type Pending struct {
	Output string `json:"output"`
	Temp   string `json:"temp"`
	Digest string `json:"digest"`
}

// EntryWidth is the bytes of an entry: a row digest, and a person digest with persons.
func (s *State) EntryWidth() int { return entryWidth(s.Persons) }

func entryWidth(persons bool) int {
	if persons {
		return 2 * DigestBytes
	}
	return DigestBytes
}

var (
	classShape = &strictjson.Shape{All: true, Fields: map[string]*strictjson.Shape{"labels": nil, "entries": nil, "cohorts": nil}}
	stateShape = &strictjson.Shape{All: true, Fields: map[string]*strictjson.Shape{
		"format": nil, "series": nil, "night": nil, "columns": nil, "quasi": nil, "persons": nil, "key_check": nil,
		"digests": {All: true, Fields: map[string]*strictjson.Shape{"models": nil, "hierarchies": {Names: &strictjson.Shape{}}}},
		"node":    nil,
		"classes": {Elems: classShape},
		"resting": {Elems: classShape},
		"retired": {Elems: classShape},
		"previous": {All: true, Fields: map[string]*strictjson.Shape{
			"night": nil, "node": nil, "classes": {Elems: classShape},
		}},
		"waiting": {Elems: &strictjson.Shape{All: true, Fields: map[string]*strictjson.Shape{"class": nil, "since": nil, "records": nil}}},
		"history": {Elems: &strictjson.Shape{All: true, Fields: map[string]*strictjson.Shape{
			"night": nil, "time": nil, "node": nil, "released": nil, "deferred": nil, "withheld": nil, "removed": nil, "output": nil, "digest": nil,
		}}},
		"pending": {All: true, Fields: map[string]*strictjson.Shape{"output": nil, "temp": nil, "digest": nil}},
	}}
)

// Parse reads a state file's bytes (name names it in errors) strictly: an unknown,
// duplicate or missing key, a value of the wrong type, or a state that breaks its own
// rules (Check) is an error matching fault.ErrBadInput that names the key, never a
// data value.
func Parse(name string, data []byte) (*State, error) {
	if err := strictjson.Check(data, stateShape); err != nil {
		if errors.Is(err, strictjson.ErrSyntax) {
			return nil, fault.BadInput("series state %s: not a series state: %w", name, err)
		}
		return nil, fault.BadInput("series state %s: %w", name, err)
	}
	var s State
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fault.BadInput("series state %s: %w", name, typeError(data, err))
	}
	if err := s.Check(); err != nil {
		return nil, fault.BadInput("series state %s: %w", name, err)
	}
	for _, l := range [][]Class{s.Classes, s.Resting, s.Retired} {
		for i := range l {
			if len(l[i].Cohorts) == 0 {
				l[i].Cohorts = nil // a retired class's "" is none
			}
		}
	}
	return &s, nil
}

// typeError is a decoding error of data without the value it met: the key and the
// type, or the key of a malformed base64 or time.
func typeError(data []byte, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("%q: a %s where the state holds %s", te.Field, te.Value, te.Type)
	}
	if at := malformedAt(data); at != "" {
		return fmt.Errorf("%s: %s", at, "not standard base64 with padding (entries, cohorts) or an RFC 3339 time")
	}
	return errors.New("a value that is not of its key's type")
}

// malformedAt names the first base64 or time value of the state data that does not
// decode ("" when none; data has the state's shape).
func malformedAt(data []byte) string {
	type rawClass struct{ Entries, Cohorts string }
	var raw struct {
		Classes, Resting, Retired []rawClass
		Previous                  *struct{ Classes []rawClass }
		History                   []struct{ Time string }
	}
	if json.Unmarshal(data, &raw) != nil {
		return ""
	}
	lists := map[string][]rawClass{"classes": raw.Classes, "resting": raw.Resting, "retired": raw.Retired}
	if raw.Previous != nil {
		lists["previous.classes"] = raw.Previous.Classes
	}
	for _, key := range []string{"classes", "resting", "retired", "previous.classes"} {
		for i, c := range lists[key] {
			if _, err := base64.StdEncoding.DecodeString(c.Entries); err != nil {
				return fmt.Sprintf("%s[%d].entries", key, i)
			}
			if _, err := base64.StdEncoding.DecodeString(c.Cohorts); err != nil {
				return fmt.Sprintf("%s[%d].cohorts", key, i)
			}
		}
	}
	for i, h := range raw.History {
		if _, err := time.Parse(time.RFC3339Nano, h.Time); err != nil {
			return fmt.Sprintf("history[%d].time", i)
		}
	}
	return ""
}

// Check reports the first rule of docs/series.md the state breaks, naming its key.
func (s *State) Check() error {
	switch {
	case s.Format != Format:
		return fmt.Errorf("format: not %q", Format)
	case !isHex(s.Series, 32):
		return errors.New("series: not 32 lowercase hex digits")
	case s.Night < 1:
		return errors.New("night: below 1")
	case len(s.Quasi) == 0 || len(s.Node) != len(s.Quasi):
		return errors.New("node: not one level per quasi-identifier")
	case !isHex(s.KeyCheck, 16):
		return errors.New("key_check: not 16 lowercase hex digits")
	case !isDigest(s.Digests.Models):
		return errors.New("digests.models: not sha256: and 64 hex digits")
	}
	for _, q := range s.Quasi {
		if !slices.Contains(s.Columns, q) {
			return fmt.Errorf("quasi: a column that columns does not list")
		}
		if !isDigest(s.Digests.Hierarchies[q]) {
			return fmt.Errorf("digests.hierarchies: a quasi-identifier without a sha256 digest")
		}
	}
	if err := checkLevels("node", s.Node); err != nil {
		return err
	}
	for _, cs := range []struct {
		key     string
		classes []Class
		cohorts bool
	}{{"classes", s.Classes, true}, {"resting", s.Resting, true}, {"retired", s.Retired, false}} {
		if err := checkClasses(cs.key, cs.classes, len(s.Quasi), s.EntryWidth(), cs.cohorts, s.Night); err != nil {
			return err
		}
	}
	if p := s.Previous; p != nil {
		if len(p.Node) != len(s.Quasi) || p.Night != s.Night-1 {
			return errors.New("previous: not the night before's node")
		}
		if err := checkLevels("previous.node", p.Node); err != nil {
			return err
		}
		if err := checkClasses("previous.classes", p.Classes, len(s.Quasi), s.EntryWidth(), true, p.Night); err != nil {
			return err
		}
	}
	for i, w := range s.Waiting {
		if !isHex(w.Class, 2*DigestBytes) || w.Since < 1 || w.Since > s.Night || w.Records < 1 {
			return fmt.Errorf("waiting[%d]: not a class tag, a night of the series and a count", i)
		}
	}
	if len(s.History) != s.Night {
		return errors.New("history: not one record per night")
	}
	if p := s.Pending; p != nil && (p.Output == "" || p.Temp == "" || !isReleaseDigest(p.Digest)) {
		return errors.New("pending: not an output, a temporary and a digest")
	}
	return nil
}

// checkLevels refuses a negative level.
func checkLevels(key string, node []int) error {
	if slices.ContainsFunc(node, func(l int) bool { return l < 0 }) {
		return fmt.Errorf("%s: a negative level", key)
	}
	return nil
}

// checkClasses checks classes (at key) against the state's rules: labels per
// quasi-identifier, classes in ascending label order, entries whole and in order, and
// with cohorts one per entry, each of a night up to night, ties in order (without,
// none).
func checkClasses(key string, classes []Class, quasi, width int, cohorts bool, night int) error {
	for i, c := range classes {
		at := fmt.Sprintf("%s[%d]", key, i)
		if len(c.Labels) != quasi {
			return fmt.Errorf("%s.labels: not one label per quasi-identifier", at)
		}
		if i > 0 && slices.Compare(classes[i-1].Labels, c.Labels) >= 0 {
			return fmt.Errorf("%s: not after the class before it (classes in ascending order of their labels, each once)", at)
		}
		if len(c.Entries) == 0 || len(c.Entries)%width != 0 {
			return fmt.Errorf("%s.entries: not a whole number of %d-byte entries", at, width)
		}
		if err := checkCohorts(at, &c, width, cohorts, night); err != nil {
			return err
		}
	}
	return nil
}

// checkCohorts checks the order of a class's entries and its cohorts.
func checkCohorts(at string, c *Class, width int, cohorts bool, night int) error {
	n := len(c.Entries) / width
	switch {
	case !cohorts && len(c.Cohorts) != 0:
		return fmt.Errorf("%s.cohorts: a retired class has none", at)
	case cohorts && len(c.Cohorts) != 4*n:
		return fmt.Errorf("%s.cohorts: not one cohort (4 bytes) per entry", at)
	}
	for i := range n {
		if cohorts && (c.Cohort(i)>>16 < 1 || int(c.Cohort(i)>>16) > night) {
			return fmt.Errorf("%s.cohorts: a cohort that is not of a night of the series", at)
		}
		if i == 0 {
			continue
		}
		cmp := bytes.Compare(c.Entries[(i-1)*width:i*width], c.Entries[i*width:(i+1)*width])
		if cmp > 0 || cmp == 0 && cohorts && c.Cohort(i-1) > c.Cohort(i) {
			return fmt.Errorf("%s.entries: not in ascending order", at)
		}
	}
	return nil
}

// isHex reports whether s is n lowercase hex digits.
func isHex(s string, n int) bool {
	if len(s) != n || strings.ToLower(s) != s {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// isDigest reports whether s is "sha256:" and 64 lowercase hex digits.
func isDigest(s string) bool {
	h, ok := strings.CutPrefix(s, "sha256:")
	return ok && isHex(h, 64)
}

// isReleaseDigest reports whether s is a release's digest (publish.ReleaseDigest): a
// file's "sha256:" or a folder's "sha256-folder:", and 64 lowercase hex digits.
func isReleaseDigest(s string) bool {
	h, ok := strings.CutPrefix(s, "sha256-folder:")
	return isDigest(s) || ok && isHex(h, 64)
}

// Marshal is the state's bytes as a state file holds them (Encode).
func (s *State) Marshal() ([]byte, error) {
	var b bytes.Buffer
	if err := s.Encode(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Encode writes the state as a state file holds it, one class at a time (the classes
// are most of a state): the keys in the order of State's fields, lists empty, never
// null (but previous and pending), a retired class's cohorts the empty string, and a
// newline at the end.
func (s *State) Encode(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	sw := &stateWriter{w: bw}
	sw.raw("{")
	sw.field("format", s.Format)
	sw.field("series", s.Series)
	sw.field("night", s.Night)
	sw.field("columns", s.Columns)
	sw.field("quasi", s.Quasi)
	sw.field("persons", s.Persons)
	sw.field("key_check", s.KeyCheck)
	sw.field("digests", s.Digests)
	sw.field("node", s.Node)
	sw.classes("classes", s.Classes)
	sw.classes("resting", s.Resting)
	sw.classes("retired", s.Retired)
	if p := s.Previous; p != nil {
		sw.raw(`,"previous":{`)
		sw.first = true
		sw.field("night", p.Night)
		sw.field("node", p.Node)
		sw.classes("classes", p.Classes)
		sw.raw("}")
	} else {
		sw.raw(`,"previous":null`)
	}
	sw.field("waiting", nonNil(s.Waiting))
	sw.field("history", nonNil(s.History))
	sw.field("pending", s.Pending)
	sw.raw("}\n")
	if sw.err == nil {
		sw.err = bw.Flush()
	}
	if sw.err != nil {
		return fault.Internalf("series state: %w", sw.err)
	}
	return nil
}

// nonNil is xs, or an empty list for none.
func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

// stateWriter writes a JSON object's fields, keeping the first error.
type stateWriter struct {
	w     *bufio.Writer
	first bool // the next field is the object's first
	err   error
}

func (sw *stateWriter) raw(text string) {
	if sw.err == nil {
		_, sw.err = sw.w.WriteString(text)
	}
	if text == "{" {
		sw.first = true
	}
}

// key writes a field's key (after a comma unless it is the first).
func (sw *stateWriter) key(name string) {
	if !sw.first {
		sw.raw(",")
	}
	sw.first = false
	sw.raw(`"` + name + `":`)
}

func (sw *stateWriter) value(v any) {
	if sw.err != nil {
		return
	}
	var b []byte
	if b, sw.err = json.Marshal(v); sw.err == nil {
		_, sw.err = sw.w.Write(b)
	}
}

func (sw *stateWriter) field(name string, v any) {
	sw.key(name)
	sw.value(v)
}

// classes writes a list of classes, one at a time.
func (sw *stateWriter) classes(name string, cs []Class) {
	sw.key(name)
	sw.raw("[")
	for i, c := range cs {
		if i > 0 {
			sw.raw(",")
		}
		if c.Cohorts == nil {
			c.Cohorts = []byte{}
		}
		sw.value(c)
	}
	sw.raw("]")
}
