package verify

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sanitizer/closeness"
	"sanitizer/diversity"
	"sanitizer/schema"
)

// A series night in these tests: input records (id, age, zip, dx, note), released as
// (age, zip, dx, note) with age and zip generalized by the night's level, dx the
// sensitive column, id the privacy unit when persons are counted.
var (
	seriesIn    = []string{"id", "age", "zip", "dx", "note"}
	seriesCols  = []string{"age", "zip", "dx", "note"}
	seriesQuasi = []string{"age", "zip"}
	seriesDx    = []string{"flu", "cold", "hiv", "asthma"}
	seriesKey   = []byte("a series key of thirty-two bytes")
	// zip's hierarchy file: leaf, 4 digits, 3 digits, top
	seriesZips = "12341;1234*;123**;*\n12342;1234*;123**;*\n12351;1235*;123**;*\n12352;1235*;123**;*\n12361;1236*;123**;*\n"
)

// srow is an input record; held: the release leaves it out (deferred).
type srow struct {
	id, age, zip, dx, note string
	held                   bool
}

// slevel is a night's generalization of age and zip (nil: the value itself).
type slevel struct{ age, zip func(string) string }

var (
	ageDecade = func(a string) string { return "[" + a[:1] + "0," + a[:1] + "9]" }
	ageHalf   = func(a string) string {
		if a[1] < '5' {
			return "[" + a[:1] + "0," + a[:1] + "4]"
		}
		return "[" + a[:1] + "5," + a[:1] + "9]"
	}
	zip4 = func(z string) string { return z[:4] + "*" }
	zip3 = func(z string) string { return z[:3] + "**" }
)

func (l slevel) labels(r srow) (string, string) {
	a, z := r.age, r.zip
	if l.age != nil {
		a = l.age(a)
	}
	if l.zip != nil {
		z = l.zip(z)
	}
	return a, z
}

// records are the input and the release of rows at level l.
func (l slevel) records(rows []srow) (input, release [][]string) {
	for _, r := range rows {
		input = append(input, []string{r.id, r.age, r.zip, r.dx, r.note})
		if !r.held {
			a, z := l.labels(r)
			release = append(release, []string{a, z, r.dx, r.note})
		}
	}
	return input, release
}

// seriesSpec is the spec of a night: k, distinct l on dx (0: none), counted in
// persons with persons.
func seriesSpec(k int, l float64, persons bool) Spec {
	sp := Spec{K: k, Columns: seriesCols, Quasi: seriesQuasi, Sensitive: []Sensitive{{Column: "dx", Values: seriesDx}}}
	if l > 0 {
		sp.Sensitive[0].Diversity = []diversity.Model{{Variant: diversity.Distinct, L: l}}
	}
	if persons {
		sp.Unit = "id"
	}
	return sp
}

// seriesCovers are the verifier's covers of age (an interval cover) and zip (a
// hierarchy file's).
func seriesCovers(t *testing.T) map[string]Cover {
	t.Helper()
	zc, err := CoverHierarchy([]byte(seriesZips), "zip.csv")
	if err != nil {
		t.Fatal(err)
	}
	return map[string]Cover{"age": CoverRange(schema.Integer), "zip": zc}
}

// runNight walks the night's input and release with a SeriesCounter and finishes it.
func runNight(t *testing.T, spec Spec, sc SeriesCheck, l slevel, rows []srow) (*SeriesMeasured, error) {
	t.Helper()
	input, release := l.records(rows)
	spec.InputRows = len(input)
	if sv := &spec.Sensitive[0]; sv.Reference == nil {
		sv.Reference = make([]int64, len(seriesDx))
		for _, r := range rows {
			sv.Reference[slices.Index(seriesDx, r.dx)]++
		}
	}
	if sc.Quasi == nil {
		sc.Quasi = seriesQuasi
	}
	if sc.Node == nil {
		sc.Node = []int{0, 0}
	}
	if spec.Unit != "" && sc.Key == nil {
		sc.Key = seriesKey
	}
	c, err := NewSeriesCounter(sc, spec, spec.Columns)
	if err != nil {
		t.Fatal(err)
	}
	tr := Truth{Columns: spec.Columns, Covers: seriesCovers(t), MaxSuppressed: len(input), Series: c}
	if _, err := Truthful(tr, seriesIn, &records{recs: input}, &records{recs: release}); err != nil {
		t.Fatalf("walk: %v", err)
	}
	m, err := c.Finish()
	if err != nil {
		noValueIn(t, err, rows)
	}
	return m, err
}

// noValueIn fails the test when err quotes a value of rows.
func noValueIn(t *testing.T, err error, rows []srow) {
	t.Helper()
	for _, r := range rows {
		for _, v := range []string{r.id, r.zip, r.dx, r.note, "[" + r.age[:1]} {
			if len(v) > 1 && strings.Contains(err.Error(), v) {
				t.Errorf("%q quotes a value", err)
			}
		}
	}
}

// wantRow is the row digest of the released cells that are not quasi-identifiers,
// computed here from docs/series.md.
func wantRow(cells ...string) []byte {
	h := sha256.New()
	io.WriteString(h, "sanitize-series/1 row")
	h.Write([]byte{0})
	for _, c := range cells {
		var n [binary.MaxVarintLen64]byte
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(c)))])
		io.WriteString(h, c)
	}
	return h.Sum(nil)[:16]
}

// wantPerson is the person digest of id under key.
func wantPerson(key []byte, id string) []byte {
	m := hmac.New(sha256.New, key)
	io.WriteString(m, "sanitize-series/1 person")
	m.Write([]byte{0})
	io.WriteString(m, id)
	return m.Sum(nil)[:16]
}

// wantClasses is the classes of rows at level l as the state holds them, computed
// here: grouped by labels with maps, entries sorted as byte strings.
func wantClasses(rows []srow, l slevel, key []byte) []SeriesClass {
	byLabels := map[[2]string][][]byte{}
	for _, r := range rows {
		if r.held {
			continue
		}
		a, z := l.labels(r)
		e := wantRow(r.dx, r.note)
		if key != nil {
			e = append(e, wantPerson(key, r.id)...)
		}
		byLabels[[2]string{a, z}] = append(byLabels[[2]string{a, z}], e)
	}
	var out []SeriesClass
	for lb, es := range byLabels {
		slices.SortFunc(es, bytes.Compare)
		out = append(out, SeriesClass{Labels: []string{lb[0], lb[1]}, Entries: bytes.Join(es, nil)})
	}
	slices.SortFunc(out, func(a, b SeriesClass) int { return slices.Compare(a.Labels, b.Labels) })
	return out
}

// isViolation reports whether err is a *Violation whose message holds want.
func isViolation(err error, want string) bool {
	var v *Violation
	return errors.As(err, &v) && strings.Contains(v.Msg, want)
}

// base is a first night: two classes at level (decade, 3 digits).
var base = []srow{
	{"pid-1", "21", "12341", "flu", "note-a", false}, {"pid-2", "23", "12342", "cold", "note-b", false}, {"pid-3", "27", "12351", "hiv", "note-c", false},
	{"pid-4", "31", "12341", "flu", "note-d", false}, {"pid-5", "34", "12352", "cold", "", false}, {"pid-6", "38", "12351", "hiv", "", false},
}

var decade3 = slevel{age: ageDecade, zip: zip3}

func TestSeriesFirstNightDigests(t *testing.T) {
	for _, persons := range []bool{false, true} {
		t.Run(fmt.Sprintf("persons=%v", persons), func(t *testing.T) {
			var key []byte
			if persons {
				key = seriesKey
			}
			rows := append(slices.Clone(base), srow{"pid-7", "29", "12342", "cold", "note-b", true}) // deferred
			m, err := runNight(t, seriesSpec(3, 2, persons), SeriesCheck{}, decade3, rows)
			if err != nil {
				t.Fatal(err)
			}
			want := wantClasses(rows, decade3, key)
			if !reflect.DeepEqual(m.Classes, want) {
				t.Fatalf("classes\n%x\nwant\n%x", m.Classes, want)
			}
			if m.Added != 6 || m.AddedClasses != 2 || m.Removed != 0 || m.RemovalClasses != 0 || m.Failing != 0 {
				t.Errorf("measured %+v", m)
			}
			w := 16
			if persons {
				w = 32
			}
			e := wantRow("flu", "note-a")
			if persons {
				e = append(e, wantPerson(seriesKey, "pid-1")...)
			}
			if !slices.ContainsFunc(chunks(m.Classes[0].Entries, w), func(c []byte) bool { return bytes.Equal(c, e) }) {
				t.Error("p1's entry is not in its class")
			}
			if len(m.Classes[1].Entries) != 3*w {
				t.Errorf("class 1 holds %d bytes", len(m.Classes[1].Entries))
			}
		})
	}
}

// withNew is base and n rows added to base's first class (age 2x), their dx from
// dxs in turn, of person ids ids in turn.
func withNew(n int, dxs, ids []string) []srow {
	rows := slices.Clone(base)
	for i := range n {
		rows = append(rows, srow{ids[i%len(ids)], "22", "12341", dxs[i%len(dxs)], fmt.Sprintf("new-note-%d", i), false})
	}
	return rows
}

func TestSeriesAdditions(t *testing.T) {
	prev := wantClasses(base, decade3, nil)
	cases := []struct {
		name    string
		n       int
		dxs     []string
		wantErr string
	}{
		{"one", 1, []string{"flu", "cold"}, "adds 1 records, fewer than k=3"},
		{"k-1", 2, []string{"flu", "cold"}, "adds 2 records, fewer than k=3"},
		{"k meeting l", 3, []string{"flu", "cold"}, ""},
		{"2k meeting l", 6, []string{"flu", "cold", "hiv"}, ""},
		{"k of one value", 3, []string{"hiv"}, "the 3 records it adds, on their own: a class fails distinct l-diversity (l=2)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rows := withNew(tc.n, tc.dxs, []string{"pid-q"})
			m, err := runNight(t, seriesSpec(3, 2, false), SeriesCheck{Prev: prev, PrevNode: []int{0, 0}}, decade3, rows)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && !isViolation(err, tc.wantErr) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			if m.Added != tc.n || m.AddedClasses != 1 || m.Removed != 0 {
				t.Errorf("measured %+v", m)
			}
			if !reflect.DeepEqual(m.Classes, wantClasses(rows, decade3, nil)) {
				t.Error("tonight's classes are not the file's")
			}
			if tc.wantErr != "" && !strings.Contains(err.Error(), "class 0 ") {
				t.Errorf("%v does not name class 0", err)
			}
		})
	}
}

func TestSeriesTClosenessOfAdditions(t *testing.T) {
	prev := wantClasses(base, decade3, nil)
	spec := seriesSpec(3, 0, false)
	spec.Sensitive[0].Reference = []int64{3, 3, 3, 3} // the input's, about
	spec.Sensitive[0].Closeness = []Closeness{{T: 0.5, Distance: closeness.Equal}}
	for _, tc := range []struct {
		dxs  []string
		fail bool
	}{{[]string{"hiv"}, true}, {[]string{"flu", "cold", "hiv", "asthma"}, false}} {
		_, err := runNight(t, spec, SeriesCheck{Prev: prev, PrevNode: []int{0, 0}}, decade3, withNew(4, tc.dxs, []string{"pid-q"}))
		if tc.fail != isViolation(err, "on their own: a class lies at distance") || !tc.fail && err != nil {
			t.Errorf("%v: error %v", tc.dxs, err)
		}
	}
}

func TestSeriesReplacedRow(t *testing.T) {
	prev := wantClasses(base, decade3, nil)
	rows := slices.Clone(base)
	rows[1].note = "note-b2" // same class, another released row
	m, err := runNight(t, seriesSpec(1, 0, false), SeriesCheck{Prev: prev, PrevNode: []int{0, 0}}, decade3, rows)
	if err != nil {
		t.Fatal(err)
	}
	if m.Added != 1 || m.Removed != 1 || m.AddedClasses != 1 || m.RemovalClasses != 0 {
		t.Errorf("measured %+v", m)
	}
	// with k=2 the replacement is one addition and one removal of a single row
	m, err = runNight(t, seriesSpec(2, 0, false), SeriesCheck{Prev: prev, PrevNode: []int{0, 0}}, decade3, rows)
	if !isViolation(err, "adds 1 records") || m.RemovalClasses != 1 || m.Failing != 1 {
		t.Errorf("error %v, measured %+v", err, m)
	}
}

func TestSeriesRollUp(t *testing.T) {
	prevHier := slevel{age: ageDecade, zip: zip4} // zip one level finer
	prevRange := slevel{age: ageHalf, zip: zip3}  // age one level finer
	cases := []struct {
		name     string
		prev     slevel
		prevNode []int
		rows     []srow
		prevRows []srow // the rows of the previous classes (base when nil)
		wantErr  string
		added    int
		gone     int
		unplaced int
	}{
		{name: "hierarchy file: merged, nothing new", prev: prevHier, prevNode: []int{2, 1}, rows: base},
		{name: "interval: merged, nothing new", prev: prevRange, prevNode: []int{1, 2}, rows: base},
		{name: "hierarchy file: one new", prev: prevHier, prevNode: []int{2, 1}, rows: withNew(1, []string{"flu"}, []string{"pid-q"}), wantErr: "adds 1 records", added: 1},
		{name: "interval: k new", prev: prevRange, prevNode: []int{1, 2}, rows: withNew(3, []string{"flu", "cold"}, []string{"pid-q"}), added: 3},
		{name: "a label covering nothing tonight", prev: prevHier, prevNode: []int{2, 1}, rows: base[:3], gone: 1, unplaced: 1,
			prevRows: append(slices.Clone(base[:3]), srow{"pid-x", "41", "12361", "flu", "", false}, srow{"pid-y", "42", "12361", "cold", "", false}, srow{"pid-z", "43", "12361", "hiv", "", false})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prevRows := tc.prevRows
			if prevRows == nil {
				prevRows = base
			}
			prev := wantClasses(prevRows, tc.prev, nil)
			if len(prev) <= len(wantClasses(prevRows, decade3, nil)) {
				t.Fatalf("the previous level has %d classes: not finer", len(prev))
			}
			m, err := runNight(t, seriesSpec(3, 2, false), SeriesCheck{Prev: prev, PrevNode: tc.prevNode, Node: []int{2, 2}}, decade3, tc.rows)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && !isViolation(err, tc.wantErr) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			if m.Added != tc.added || m.Gone != tc.gone || m.Unplaced != tc.unplaced || m.Removed != 3*tc.gone {
				t.Errorf("measured %+v", m)
			}
		})
	}
	// Without the roll-up (the previous node said to be tonight's), the previous
	// classes are not tonight's: everything is removed and added again.
	m, err := runNight(t, seriesSpec(3, 2, false), SeriesCheck{Prev: wantClasses(base, prevHier, nil), PrevNode: []int{2, 2}, Node: []int{2, 2}}, decade3, base)
	if err == nil || m.Added != 6 || m.Gone != 4 {
		t.Errorf("without the roll-up: error %v, measured %+v", err, m)
	}
}

func TestSeriesNotCoarser(t *testing.T) {
	// the previous node is coarser in age than tonight's, whatever the levels say
	prev := wantClasses(base, decade3, nil)
	_, err := runNight(t, seriesSpec(1, 0, false), SeriesCheck{Prev: prev, PrevNode: []int{0, 0}, Node: []int{1, 0}}, slevel{age: ageHalf, zip: zip3}, base)
	if !isViolation(err, "two labels: tonight's node is not at least as general") {
		t.Fatalf("error %v", err)
	}
	spec := seriesSpec(1, 0, false)
	if _, err := NewSeriesCounter(SeriesCheck{Prev: prev, PrevNode: []int{2, 0}, Node: []int{1, 0}, Quasi: seriesQuasi}, spec, seriesCols); !isViolation(err, "finer") {
		t.Fatalf("error %v", err)
	}
}

func TestSeriesRemovals(t *testing.T) {
	// base's first class grown to 6 records, k=3
	night1 := withNew(3, []string{"flu", "cold", "hiv"}, []string{"pid-q"})
	prev := wantClasses(night1, decade3, nil)
	for _, tc := range []struct {
		removed int
		allowed bool
		wantErr string
	}{
		{1, false, "removes 1 records published the night before, fewer than k=3"},
		{2, false, "removes 2 records"},
		{3, false, ""},
		{1, true, ""},
		{2, true, ""},
	} {
		t.Run(fmt.Sprintf("%d allowed=%v", tc.removed, tc.allowed), func(t *testing.T) {
			rows := slices.Clone(night1[:len(night1)-tc.removed])
			m, err := runNight(t, seriesSpec(3, 2, false), SeriesCheck{Prev: prev, PrevNode: []int{0, 0}, RemovalsAllowed: tc.allowed}, decade3, rows)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && !isViolation(err, tc.wantErr) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			exposed := tc.removed < 3
			if m.Removed != tc.removed || m.Added != 0 || (m.RemovalClasses == 1) != exposed {
				t.Errorf("measured %+v", m)
			}
			if want := []int(nil); tc.allowed {
				want = []int{0}
				if !reflect.DeepEqual(m.Exposed, want) {
					t.Errorf("exposed %v, want %v", m.Exposed, want)
				}
			}
		})
	}
	// a class that leaves the release whole is a removal of at least k
	m, err := runNight(t, seriesSpec(3, 2, false), SeriesCheck{Prev: prev, PrevNode: []int{0, 0}}, decade3, night1[:3])
	if err != nil || m.Gone != 1 || m.Removed != 6 || m.RemovalClasses != 0 {
		t.Errorf("a class gone: error %v, measured %+v", err, m)
	}
}

func TestSeriesPersons(t *testing.T) {
	prev := wantClasses(base, decade3, seriesKey)
	cases := []struct {
		name    string
		n       int
		dxs     []string
		ids     []string
		l       float64
		wantErr string
	}{
		{"3 records of one person", 3, []string{"flu", "cold", "hiv"}, []string{"pid-q"}, 0, "adds 1 persons, fewer than k=2"},
		{"3 records of two persons", 3, []string{"flu", "cold", "hiv"}, []string{"pid-q", "pid-r"}, 0, ""},
		{"a record of a known person", 1, []string{"flu"}, []string{"pid-1"}, 0, "adds 1 persons"},
		// distinct in records, not in persons: q holds flu and cold, r flu
		{"l in persons", 3, []string{"flu", "flu", "cold"}, []string{"pid-q", "pid-r", "pid-q"}, 2, "of 2 persons it fails l-diversity counted in persons (l=2)"},
		{"l in persons met", 4, []string{"flu", "cold", "flu", "hiv"}, []string{"pid-q", "pid-r"}, 2, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rows := withNew(tc.n, tc.dxs, tc.ids)
			m, err := runNight(t, seriesSpec(2, tc.l, true), SeriesCheck{Prev: prev, PrevNode: []int{0, 0}}, decade3, rows)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && !isViolation(err, tc.wantErr) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			if !reflect.DeepEqual(m.Classes, wantClasses(rows, decade3, seriesKey)) || m.Added != tc.n {
				t.Errorf("measured %+v", m)
			}
		})
	}
}

func TestSeriesCheckMisfits(t *testing.T) {
	spec := seriesSpec(2, 0, false)
	cases := []struct {
		name string
		sc   SeriesCheck
		spec Spec
	}{
		{"quasi differ", SeriesCheck{Quasi: []string{"zip", "age"}, Node: []int{0, 0}}, spec},
		{"node short", SeriesCheck{Quasi: seriesQuasi, Node: []int{0}}, spec},
		{"previous node short", SeriesCheck{Quasi: seriesQuasi, Node: []int{0, 0}, Prev: []SeriesClass{{Labels: []string{"a", "b"}, Entries: make([]byte, 16)}}}, spec},
		{"key without persons", SeriesCheck{Quasi: seriesQuasi, Node: []int{0, 0}, Key: seriesKey}, spec},
		{"persons without key", SeriesCheck{Quasi: seriesQuasi, Node: []int{0, 0}}, seriesSpec(2, 0, true)},
		{"previous entries of the wrong width", SeriesCheck{Quasi: seriesQuasi, Node: []int{0, 0}, PrevNode: []int{0, 0}, Prev: []SeriesClass{{Labels: []string{"a", "b"}, Entries: make([]byte, 24)}}}, spec},
	}
	for _, tc := range cases {
		if _, err := NewSeriesCounter(tc.sc, tc.spec, seriesCols); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

// chunks splits e into entries of width w.
func chunks(e []byte, w int) [][]byte {
	var out [][]byte
	for at := 0; at < len(e); at += w {
		out = append(out, e[at:at+w])
	}
	return out
}

func TestSeriesClosenessInPersons(t *testing.T) {
	prev := wantClasses(base, decade3, seriesKey)
	spec := seriesSpec(2, 0, true)
	spec.Sensitive[0].Closeness = []Closeness{{T: 0.5, Distance: closeness.Equal}}
	for _, tc := range []struct {
		dxs  []string
		fail bool
	}{{[]string{"asthma"}, true}, {[]string{"flu", "cold", "hiv", "asthma"}, false}} {
		// 4 records of 2 persons; a fifth person's record left out (it holds the
		// reference too)
		rows := append(withNew(4, tc.dxs, []string{"pid-q", "pid-r"}), srow{"pid-s", "25", "12341", "asthma", "held", true})
		_, err := runNight(t, spec, SeriesCheck{Prev: prev, PrevNode: []int{0, 0}}, decade3, rows)
		if tc.fail != isViolation(err, "the 2 persons it adds, on their own: of 2 persons it lies at distance") || !tc.fail && err != nil {
			t.Errorf("%v: error %v", tc.dxs, err)
		}
	}
}

// TestSeriesRowsAlone: with persons, a night is also compared on its rows alone, as
// someone holding both files sees them. pid-1's row leaves and a new person's equal
// row comes: in entries, two persons are added (with pid-q's new row) and one removed
// (allowed); in rows, the equal rows cancel out and one row alone is added, fewer
// than k=2.
func TestSeriesRowsAlone(t *testing.T) {
	prev := wantClasses(base, decade3, seriesKey)
	rows := slices.Clone(base)
	rows[0].id = "pid-p" // pid-1's row, now pid-p's
	rows = append(rows, srow{"pid-q", "22", "12341", "cold", "new-note", false})
	sc := SeriesCheck{Prev: prev, PrevNode: []int{0, 0}, RemovalsAllowed: true}
	_, err := runNight(t, seriesSpec(2, 0, true), sc, decade3, rows)
	if !isViolation(err, "adds 1 rows as the two files show them") {
		t.Fatalf("error %v, want the row added alone", err)
	}
	// With a second new row, the rows alone add two: the night passes.
	rows = append(rows, srow{"pid-r", "24", "12342", "flu", "new-note-2", false})
	if _, err := runNight(t, seriesSpec(2, 0, true), sc, decade3, rows); err != nil {
		t.Fatalf("two rows added alone: %v", err)
	}
}
