package verify

// The series state (docs/series.md, "The state file"), read by the verifier's own
// strict reader: it shares no code with the release side that writes it. The JSON is
// walked token by token first, against the state's shape (every key known, none
// twice, none missing, each value of its type), then decoded and checked key by key.
// Every error matches fault.ErrBadInput and names the key by its JSON path (such as
// classes[3].entries), never a value of the file.

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"sanitizer/fault"
)

// SeriesFormat is the format string of a series state.
const SeriesFormat = "sanitize-series/1"

// Entry widths: the row digest, then, with persons, the person digest.
const (
	seriesDigestBytes = 16
	seriesEntryRows   = seriesDigestBytes
	seriesEntryPerson = 2 * seriesDigestBytes
)

// SeriesState is a series' state file as the verifier reads it.
type SeriesState struct {
	Series  string        // the series' id: 32 lowercase hex digits
	Night   int           // the last night published (1 after the first)
	Columns []string      // the release's header
	Quasi   []string      // the quasi-identifier columns, in the release's order
	Persons bool          // entries carry person digests
	Digests SeriesDigests // of the models and the hierarchies
	Node    []int         // the last night's level of each quasi-identifier
	Classes []SeriesClass // the last night's published classes, in label order
	// Resting and Retired are the classes' cohorts withheld whole and the rows never
	// to be published again (read and checked for their form; a night is checked
	// against Classes).
	Resting, Retired []SeriesClass
	KeyCheck         string       // tells the series key from another
	Previous         *SeriesNight // the night before's (nil on the first night)
	Waiting          []SeriesWaiting
	History          []SeriesHistory
	Pending          *SeriesPending // nil unless a publication is under way
}

// SeriesDigests are the digests ("sha256:" and 64 hex digits) of the privacy models'
// settings and of each quasi-identifier's hierarchy.
type SeriesDigests struct {
	Models      string
	Hierarchies map[string]string // column → digest
}

// SeriesClass is one published class: its labels (in the state's quasi order) and its
// entries, each 16 bytes (the row digest) or 32 (then the person digest), in
// ascending byte order, an entry repeated as often as its row was published.
type SeriesClass struct {
	Labels  []string
	Entries []byte
}

// SeriesNight is a night's published classes at its node.
type SeriesNight struct {
	Night   int
	Node    []int
	Classes []SeriesClass
}

// SeriesWaiting is a class's records deferred and still unpublished.
type SeriesWaiting struct {
	Class   string // the class's keyed digest: 32 lowercase hex digits
	Since   int    // the first night of the run of nights it has had records waiting
	Records int
}

// SeriesHistory is one night's line of the history.
type SeriesHistory struct {
	Night    int
	Time     time.Time // UTC
	Node     []int
	Released int
	Deferred int // new records waiting
	Withheld int // every record the night left out by the series' rules
	Removed  int
	Output   string
	Digest   string // the release's "sha256:" digest
}

// SeriesPending is a publication under way: the release at Temp is to be put at
// Output, its digest Digest.
type SeriesPending struct {
	Output string
	Temp   string
	Digest string
}

// ReadSeriesState reads a series state strictly: an unknown, duplicate or missing
// key, a value of the wrong type or one that breaks the state's rules (its format,
// hex and base64 values, entries' width and order, labels' count, classes' order,
// nodes' length) is an error matching fault.ErrBadInput that names the key's path.
func ReadSeriesState(data []byte) (*SeriesState, error) {
	if !utf8.Valid(data) {
		return nil, stateError("", "not UTF-8")
	}
	if err := walkStateJSON(data); err != nil {
		return nil, err
	}
	var raw rawState
	if err := json.Unmarshal(data, &raw); err != nil {
		// the walk checked every type: told without the decoder's message, which may
		// quote a value
		return nil, fault.BadInput("series state: unreadable after its shape was checked (%T)", err)
	}
	return raw.state()
}

// stateError is a state's error at path (the whole file when "").
func stateError(path, format string, a ...any) error {
	where := "series state"
	if path != "" {
		where += ": " + path
	}
	return fault.BadInput("%s: %s", where, fmt.Sprintf(format, a...))
}

// The JSON types of the state's values.
type stateKind int8

const (
	kString stateKind = iota
	kInt
	kBool
	kObject // with the keys of fields, each required
	kMap    // with any keys, each value of elem
	kArray  // of elem
)

func (k stateKind) String() string {
	return [...]string{"a string", "an integer", "a boolean", "an object", "an object", "an array"}[k]
}

// stateShape is what one value of the state may be.
type stateShape struct {
	kind     stateKind
	nullable bool
	fields   map[string]*stateShape
	elem     *stateShape
}

func arrayOf(e *stateShape) *stateShape { return &stateShape{kind: kArray, elem: e} }

func objectOf(f map[string]*stateShape) *stateShape { return &stateShape{kind: kObject, fields: f} }

// seriesShape is the state's shape (docs/series.md).
var seriesShape = func() *stateShape {
	str, num, boolean := &stateShape{kind: kString}, &stateShape{kind: kInt}, &stateShape{kind: kBool}
	strs, nums := arrayOf(str), arrayOf(num)
	classes := arrayOf(objectOf(map[string]*stateShape{"labels": strs, "entries": str, "cohorts": str}))
	previous := objectOf(map[string]*stateShape{"night": num, "node": nums, "classes": classes})
	previous.nullable = true
	pending := objectOf(map[string]*stateShape{"output": str, "temp": str, "digest": str})
	pending.nullable = true
	return objectOf(map[string]*stateShape{
		"format": str, "series": str, "night": num, "columns": strs, "quasi": strs, "persons": boolean, "key_check": str,
		"digests":  objectOf(map[string]*stateShape{"models": str, "hierarchies": {kind: kMap, elem: str}}),
		"node":     nums,
		"classes":  classes,
		"resting":  classes,
		"retired":  classes,
		"previous": previous,
		"waiting":  arrayOf(objectOf(map[string]*stateShape{"class": str, "since": num, "records": num})),
		"history": arrayOf(objectOf(map[string]*stateShape{
			"night": num, "time": str, "node": nums, "released": num, "deferred": num, "withheld": num, "removed": num, "output": str, "digest": str,
		})),
		"pending": pending,
	})
}()

// walkStateJSON checks that data is one JSON value of seriesShape.
func walkStateJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := walkState(dec, seriesShape, ""); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return stateError("", "more than one JSON value")
	}
	return nil
}

// walkState reads the value at path and checks it against s.
func walkState(dec *json.Decoder, s *stateShape, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return stateSyntax(path, err)
	}
	got := ""
	switch v := tok.(type) {
	case nil:
		if s.nullable {
			return nil
		}
		got = "null"
	case string:
		if s.kind == kString {
			return nil
		}
		got = "a string"
	case bool:
		if s.kind == kBool {
			return nil
		}
		got = "a boolean"
	case json.Number:
		if s.kind == kInt {
			if _, err := strconv.ParseInt(string(v), 10, 64); err != nil {
				return stateError(path, "not an integer of 64 bits")
			}
			return nil
		}
		got = "a number"
	case json.Delim:
		switch {
		case v == '[' && s.kind == kArray:
			return walkStateArray(dec, s, path)
		case v == '{' && (s.kind == kObject || s.kind == kMap):
			return walkStateObject(dec, s, path)
		case v == '[':
			got = "an array"
		default:
			got = "an object"
		}
	}
	return stateError(path, "%s, want %s", got, s.kind)
}

// walkStateArray reads the elements of the array at path, whose '[' has been read.
func walkStateArray(dec *json.Decoder, s *stateShape, path string) error {
	for i := 0; dec.More(); i++ {
		if err := walkState(dec, s.elem, path+"["+strconv.Itoa(i)+"]"); err != nil {
			return err
		}
	}
	return stateClosing(dec, path)
}

// walkStateObject reads the keys and values of the object at path, whose '{' has
// been read: every key once, known (kObject), and none missing.
func walkStateObject(dec *json.Decoder, s *stateShape, path string) error {
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return stateSyntax(path, err)
		}
		key, _ := tok.(string)
		at := keyPath(path, key, s.kind == kMap)
		if seen[key] {
			return stateError(at, "duplicate key")
		}
		seen[key] = true
		sub := s.elem
		if s.kind == kObject {
			if sub = s.fields[key]; sub == nil {
				return stateError(at, "unknown key (keys are case-sensitive)")
			}
		}
		if err := walkState(dec, sub, at); err != nil {
			return err
		}
	}
	if s.kind == kObject {
		keys := make([]string, 0, len(s.fields))
		for k := range s.fields {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if !seen[k] {
				return stateError(keyPath(path, k, false), "missing key")
			}
		}
	}
	return stateClosing(dec, path)
}

// keyPath is the path of key in the object at path: path.key, or path["key"] for a
// map's key (a column's name).
func keyPath(path, key string, quoted bool) string {
	switch {
	case quoted:
		return path + "[" + strconv.Quote(key) + "]"
	case path == "":
		return key
	}
	return path + "." + key
}

// stateClosing reads the '}' or ']' that ends the value at path.
func stateClosing(dec *json.Decoder, path string) error {
	if _, err := dec.Token(); err != nil {
		return stateSyntax(path, err)
	}
	return nil
}

// stateSyntax is a JSON syntax error met in the value at path.
func stateSyntax(path string, err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	where := "series state: not JSON"
	if path != "" {
		where = "series state: " + path + ": not JSON"
	}
	return fault.BadInput("%s: %w", where, err)
}

// The state as encoding/json decodes it, once walkStateJSON has checked its shape.
type (
	rawState struct {
		Format   string         `json:"format"`
		Series   string         `json:"series"`
		Night    int            `json:"night"`
		Columns  []string       `json:"columns"`
		Quasi    []string       `json:"quasi"`
		Persons  bool           `json:"persons"`
		KeyCheck string         `json:"key_check"`
		Digests  rawDigests     `json:"digests"`
		Node     []int          `json:"node"`
		Classes  []rawClass     `json:"classes"`
		Resting  []rawClass     `json:"resting"`
		Retired  []rawClass     `json:"retired"`
		Previous *rawNight      `json:"previous"`
		Waiting  []rawWaiting   `json:"waiting"`
		History  []rawHistory   `json:"history"`
		Pending  *SeriesPending `json:"pending"`
	}
	rawDigests struct {
		Models      string            `json:"models"`
		Hierarchies map[string]string `json:"hierarchies"`
	}
	rawClass struct {
		Labels  []string `json:"labels"`
		Entries string   `json:"entries"`
		Cohorts string   `json:"cohorts"`
	}
	rawNight struct {
		Night   int        `json:"night"`
		Node    []int      `json:"node"`
		Classes []rawClass `json:"classes"`
	}
	rawWaiting struct {
		Class   string `json:"class"`
		Since   int    `json:"since"`
		Records int    `json:"records"`
	}
	rawHistory struct {
		Night    int    `json:"night"`
		Time     string `json:"time"`
		Node     []int  `json:"node"`
		Released int    `json:"released"`
		Deferred int    `json:"deferred"`
		Withheld int    `json:"withheld"`
		Removed  int    `json:"removed"`
		Output   string `json:"output"`
		Digest   string `json:"digest"`
	}
)

// state checks the decoded state's values and returns it.
func (r *rawState) state() (*SeriesState, error) {
	if err := r.checkHeader(); err != nil {
		return nil, err
	}
	st := &SeriesState{Series: r.Series, Night: r.Night, Columns: r.Columns, Quasi: r.Quasi, Persons: r.Persons, KeyCheck: r.KeyCheck,
		Digests: SeriesDigests{Models: r.Digests.Models, Hierarchies: r.Digests.Hierarchies}, Node: r.Node}
	width := seriesEntryRows
	if r.Persons {
		width = seriesEntryPerson
	}
	if err := checkNode(r.Node, len(r.Quasi), "node"); err != nil {
		return nil, err
	}
	var err error
	for _, cs := range []struct {
		path    string
		raw     []rawClass
		to      *[]SeriesClass
		cohorts bool
	}{{"classes", r.Classes, &st.Classes, true}, {"resting", r.Resting, &st.Resting, true}, {"retired", r.Retired, &st.Retired, false}} {
		if *cs.to, err = stateClasses(cs.raw, cs.path, len(r.Quasi), width); err != nil {
			return nil, err
		}
		if err := stateCohorts(cs.raw, cs.path, width, cs.cohorts, r.Night); err != nil {
			return nil, err
		}
	}
	if p := r.Previous; p != nil {
		if p.Night < 1 || p.Night >= r.Night {
			return nil, stateError("previous.night", "not a night before night")
		}
		if err := checkNode(p.Node, len(r.Quasi), "previous.node"); err != nil {
			return nil, err
		}
		st.Previous = &SeriesNight{Night: p.Night, Node: p.Node}
		if st.Previous.Classes, err = stateClasses(p.Classes, "previous.classes", len(r.Quasi), width); err != nil {
			return nil, err
		}
		if err := stateCohorts(p.Classes, "previous.classes", width, true, p.Night); err != nil {
			return nil, err
		}
	}
	if st.Waiting, err = r.waiting(); err != nil {
		return nil, err
	}
	if st.History, err = r.history(); err != nil {
		return nil, err
	}
	if p := r.Pending; p != nil {
		if !isReleaseDigest(p.Digest) {
			return nil, stateError("pending.digest", "not sha256: or sha256-folder: and 64 lowercase hex digits")
		}
		st.Pending = p
	}
	return st, nil
}

// checkHeader checks the format, the id, the night, the columns, the quasi-identifiers
// and the digests.
func (r *rawState) checkHeader() error {
	switch {
	case r.Format != SeriesFormat:
		return stateError("format", "not %q", SeriesFormat)
	case !isLowerHex(r.Series, 32):
		return stateError("series", "not 32 lowercase hex digits")
	case r.Night < 1:
		return stateError("night", "below 1")
	case len(r.Columns) == 0:
		return stateError("columns", "empty")
	case !isLowerHex(r.KeyCheck, 16):
		return stateError("key_check", "not 16 lowercase hex digits")
	case !isDigest(r.Digests.Models):
		return stateError("digests.models", "not sha256: and 64 lowercase hex digits")
	}
	for i, c := range r.Columns {
		if slices.Contains(r.Columns[:i], c) {
			return stateError(fmt.Sprintf("columns[%d]", i), "names a column named before")
		}
	}
	last := -1
	for i, q := range r.Quasi {
		at := slices.Index(r.Columns, q)
		switch {
		case at < 0:
			return stateError(fmt.Sprintf("quasi[%d]", i), "not a column of columns")
		case at <= last:
			return stateError(fmt.Sprintf("quasi[%d]", i), "not in the columns' order (or named twice)")
		}
		last = at
	}
	for c, d := range r.Digests.Hierarchies {
		at := keyPath("digests.hierarchies", c, true)
		switch {
		case !slices.Contains(r.Quasi, c):
			return stateError(at, "not a quasi-identifier")
		case !isDigest(d):
			return stateError(at, "not sha256: and 64 lowercase hex digits")
		}
	}
	return nil
}

// checkNode checks a node of q levels at path.
func checkNode(node []int, q int, path string) error {
	if len(node) != q {
		return stateError(path, "%d levels, quasi has %d columns", len(node), q)
	}
	for i, l := range node {
		if l < 0 {
			return stateError(fmt.Sprintf("%s[%d]", path, i), "a negative level")
		}
	}
	return nil
}

// stateClasses decodes and checks the classes at path: q labels each, in ascending
// order of their labels, entries of width bytes each in ascending byte order.
func stateClasses(raw []rawClass, path string, q, width int) ([]SeriesClass, error) {
	out := make([]SeriesClass, len(raw))
	for i, rc := range raw {
		at := fmt.Sprintf("%s[%d]", path, i)
		if len(rc.Labels) != q {
			return nil, stateError(at+".labels", "%d labels, quasi has %d columns", len(rc.Labels), q)
		}
		if i > 0 && slices.Compare(raw[i-1].Labels, rc.Labels) >= 0 {
			return nil, stateError(at+".labels", "not after the class before (classes are in ascending order of their labels, each once)")
		}
		e, err := stateEntries(rc.Entries, at+".entries", width)
		if err != nil {
			return nil, err
		}
		out[i] = SeriesClass{Labels: rc.Labels, Entries: e}
	}
	return out, nil
}

// stateCohorts checks the cohorts of the classes at path: with cohorts, one
// little-endian uint32 per entry, each a night from 1 to night; without (retired
// classes), none.
func stateCohorts(raw []rawClass, path string, width int, cohorts bool, night int) error {
	for i, rc := range raw {
		at := fmt.Sprintf("%s[%d].cohorts", path, i)
		c, err := base64.StdEncoding.Strict().DecodeString(rc.Cohorts)
		if err != nil || strings.ContainsAny(rc.Cohorts, "\r\n") {
			return stateError(at, "not standard base64 with padding")
		}
		e, _ := base64.StdEncoding.Strict().DecodeString(rc.Entries) // checked by stateClasses
		entries := len(e) / width
		switch {
		case !cohorts && len(c) != 0:
			return stateError(at, "a retired class has no cohorts")
		case cohorts && len(c) != 4*entries:
			return stateError(at, "%d bytes, not a cohort (4 bytes) per entry", len(c))
		}
		for j := 0; j+4 <= len(c); j += 4 {
			if n := binary.LittleEndian.Uint32(c[j:]) >> 16; n < 1 || int64(n) > int64(night) {
				return stateError(at, "cohort %d is not of a night of the series", j/4)
			}
		}
	}
	return nil
}

// stateEntries decodes the entries at path: standard base64 with padding, entries of
// width bytes in ascending byte order, at least one.
func stateEntries(b64, path string, width int) ([]byte, error) {
	if strings.ContainsAny(b64, "\r\n") {
		return nil, stateError(path, "not standard base64 (a line break)")
	}
	e, err := base64.StdEncoding.Strict().DecodeString(b64)
	switch {
	case err != nil:
		return nil, stateError(path, "not standard base64 with padding")
	case len(e) == 0:
		return nil, stateError(path, "no entries: a published class has rows")
	case len(e)%width != 0:
		return nil, stateError(path, "%d bytes, not a whole number of entries of %d", len(e), width)
	}
	for at := width; at < len(e); at += width {
		if bytes.Compare(e[at-width:at], e[at:at+width]) > 0 {
			return nil, stateError(path, "entry %d is not in ascending byte order", at/width)
		}
	}
	return e, nil
}

// waiting checks the deferred classes.
func (r *rawState) waiting() ([]SeriesWaiting, error) {
	out := make([]SeriesWaiting, len(r.Waiting))
	for i, w := range r.Waiting {
		at := fmt.Sprintf("waiting[%d]", i)
		switch {
		case !isLowerHex(w.Class, 2*seriesDigestBytes):
			return nil, stateError(at+".class", "not 32 lowercase hex digits")
		case w.Since < 1 || w.Since > r.Night:
			return nil, stateError(at+".since", "not a night of the series")
		case w.Records < 1:
			return nil, stateError(at+".records", "below 1")
		}
		out[i] = SeriesWaiting(w)
	}
	return out, nil
}

// history checks the nights' history.
func (r *rawState) history() ([]SeriesHistory, error) {
	out := make([]SeriesHistory, len(r.History))
	for i, h := range r.History {
		at := fmt.Sprintf("history[%d]", i)
		t, err := time.Parse(time.RFC3339Nano, h.Time)
		switch {
		case h.Night < 1 || h.Night > r.Night:
			return nil, stateError(at+".night", "not a night of the series")
		case err != nil || !strings.HasSuffix(h.Time, "Z"):
			return nil, stateError(at+".time", "not an RFC 3339 time in UTC")
		case h.Released < 0:
			return nil, stateError(at+".released", "negative")
		case h.Deferred < 0:
			return nil, stateError(at+".deferred", "negative")
		case h.Withheld < h.Deferred:
			return nil, stateError(at+".withheld", "fewer than deferred (the deferred records are withheld)")
		case h.Removed < 0:
			return nil, stateError(at+".removed", "negative")
		case !isReleaseDigest(h.Digest):
			return nil, stateError(at+".digest", "not sha256: or sha256-folder: and 64 lowercase hex digits")
		}
		if err := checkNode(h.Node, len(r.Quasi), at+".node"); err != nil {
			return nil, err
		}
		out[i] = SeriesHistory{Night: h.Night, Time: t.UTC(), Node: h.Node, Released: h.Released, Deferred: h.Deferred,
			Withheld: h.Withheld, Removed: h.Removed, Output: h.Output, Digest: h.Digest}
	}
	return out, nil
}

// isDigest reports whether s is "sha256:" and 64 lowercase hex digits.
func isDigest(s string) bool {
	d, ok := strings.CutPrefix(s, "sha256:")
	return ok && isLowerHex(d, 64)
}

// isReleaseDigest reports whether s is a release's digest: a file's "sha256:" or a
// folder of parts' "sha256-folder:", and 64 lowercase hex digits.
func isReleaseDigest(s string) bool {
	d, ok := strings.CutPrefix(s, "sha256-folder:")
	return isDigest(s) || ok && isLowerHex(d, 64)
}

// isLowerHex reports whether s is n lowercase hex digits.
func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
