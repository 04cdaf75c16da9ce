package verify

// Truthfulness: every released record is the generalization of exactly one input record,
// in input order. This file re-derives what "generalization" means from the value
// formats alone (hierarchy files, the builders' labels, Mondrian ranges); it shares no
// code with package generalize.

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"sanitizer/schema"
)

// top is the most general value of every built hierarchy (intervals, mask, date); a
// hierarchy file's is the label its rows end in.
const top = "*"

// Cover decides whether a released value of a quasi-identifier covers an original value.
//
// The covers of this package return (true, nil) when the released value is a
// generalization of the original, (false, nil) when it is well formed but does not cover
// it (or the original is not a value the generalization applies to), and an error when
// the released value is malformed (an inverted range, a label no builder writes). Their
// errors never quote a value. A Cover is for one goroutine at a time. It must give
// the same answer whenever it is asked about the same two values: Truthful remembers
// the pairs it found to match.
type Cover func(released, original string) (bool, error)

// Truth is what the truthfulness check needs: for each release column, the input column
// it comes from (same name), and for quasi-identifiers a Cover.
type Truth struct {
	Columns       []string         // the release's header
	Covers        map[string]Cover // per quasi-identifier column
	MaxSuppressed int              // input records that may be missing from the release
	// Input, when set, is called with every input record the walk reads, in order:
	// matched says whether it is the record that the release record read last
	// generalizes (false: the release leaves it out). rec is only valid during the call.
	Input func(rec []string, matched bool)
	// Count, when set, counts the release as the walk reads it: every release record
	// with the input record it generalizes (as Counter.AddMatched), and every input
	// record the release leaves out (as AddSuppressed). Its header must be Columns,
	// and inHeader must name its quasi-identifiers, and its privacy unit when its spec
	// names one (Spec.Unit: the column need not be a release column). The walk numbers a pair of a
	// released and an input value for the counter where it decides their match, once
	// per distinct pair. After the counter's first error it counts no more; Truthful
	// returns that error when the walk finds nothing else.
	Count *Counter
	// Series, when set, checks a night of a release series as the walk reads it:
	// every release record with the input record it generalizes, every input record
	// left out (series.go). Its header must be Columns; Covers roll the previous
	// night's labels up. Its errors are its Finish's.
	Series *SeriesCounter
	// LeftOut, when set, is the run's account of which input records it left out (by
	// their place in the input, from 0): the walk then checks that alignment exactly,
	// every other input record generalized by the next release record, instead of
	// finding one. A series night with a privacy unit needs it: of input records that a
	// release writes alike, the walk must know which one's person a record is.
	LeftOut []bool
}

// Truthful reads the input (header given as inHeader, records from in) and the release
// (records from rel, header = t.Columns) in step and reports a *Violation naming the
// first release record that is not the generalization of a later, unused input record,
// or more than MaxSuppressed input records skipped. It returns the number of input
// records skipped (suppressed; on an error, those skipped so far). It never quotes a data
// value in its messages. A read error is returned as the reader gave it.
//
// A release record matches an input record when every column without a Cover holds the
// same string and every column with one holds a value that covers the input's (or the
// same string). Each release record is matched to the earliest unused input record after
// the previous match that it matches: for an order-preserving subsequence that greedy
// choice is never worse than any other, so the release is truthful exactly when this
// walk reaches its end. Records are compared as the readers give them, a null being "";
// a quasi-identifier whose nulls the configuration reads as a value needs NullAs.
//
// Records returned by a Reader are only used until its next Read.
func Truthful(t Truth, inHeader []string, in, rel Reader) (suppressed int, err error) {
	w, err := newWalker(t, inHeader)
	if err != nil {
		return 0, err
	}
	defer func() { // the counting goroutine stopped, whatever the walk did
		if cerr := w.finish(); err == nil {
			err = cerr
		}
	}()
	return w.walk(t, inHeader, in, rel)
}

// walker is the state of a truthfulness walk.
type walker struct {
	inPos  []int        // per release column: its input column
	covers []Cover      // per release column: its cover, nil for none
	memos  []*coverMemo // per release column with a cover or counted: the pairs that match
	// Counting (Truth.Count): per release column, its quasi-identifier's number in
	// the counter (-1: none); per quasi-identifier, the numbers of the values of the
	// record just matched; a suppressed record's quasi-identifier values.
	count *Counter
	qcol  []int
	ids   []pairIDs
	orig  []string
	cerr  error // the counter's first error: it counts no more
	// unitAt is the input column of the counter's privacy unit (-1: none)
	unitAt int
	// pseudo is the release column of the counter's pseudonym (Spec.Pseudonym; -1:
	// none), which the walk matches itself: with the key (mac) by the pseudonym of
	// the input record's id, without it not at all (the counter checks it)
	pseudo int
	mac    *macer
	series *SeriesCounter // Truth.Series
	// placed checks the release against a local recoding's placement (the counter's
	// Spec.Placed; nil: none)
	placed *placedWalk
}

func newWalker(t Truth, inHeader []string) (w *walker, err error) {
	if t.MaxSuppressed < 0 {
		return nil, fmt.Errorf("truthfulness: negative suppression limit %d", t.MaxSuppressed)
	}
	n := len(t.Columns)
	w = &walker{inPos: make([]int, n), covers: make([]Cover, n), memos: make([]*coverMemo, n), qcol: make([]int, n), unitAt: -1, pseudo: -1}
	seen := make(map[string]bool, n)
	for i, c := range t.Columns {
		if seen[c] {
			return nil, &Violation{Msg: fmt.Sprintf("the release names column %q twice", c)}
		}
		seen[c] = true
		w.inPos[i], w.qcol[i] = -1, -1
		for j, h := range inHeader {
			if h != c {
				continue
			}
			if w.inPos[i] >= 0 {
				return nil, fmt.Errorf("truthfulness: the input names column %q twice", c)
			}
			w.inPos[i] = j
		}
		if w.inPos[i] < 0 {
			return nil, &Violation{Msg: fmt.Sprintf("release column %q is not a column of the input", c)}
		}
		if cv, ok := t.Covers[c]; ok {
			if cv == nil {
				return nil, fmt.Errorf("truthfulness: column %q has a nil cover", c)
			}
			w.covers[i], w.memos[i] = cv, newCoverMemo()
		}
	}
	for c := range t.Covers {
		if !seen[c] {
			return nil, fmt.Errorf("truthfulness: quasi-identifier %q is not a release column", c)
		}
	}
	if s := t.Series; s != nil {
		if err := s.bind(t.Columns, inHeader, t.Covers); err != nil {
			return nil, err
		}
		w.series = s
	}
	if c := t.Count; c != nil {
		if !slices.Equal(c.header, t.Columns) {
			return nil, errors.New("truthfulness: the counter's header is not the release's")
		}
		w.count, w.ids, w.orig = c, make([]pairIDs, len(c.pos)), make([]string, c.leftWidth())
		if u := c.spec.Unit; u != "" {
			if w.unitAt = slices.Index(inHeader, u); w.unitAt < 0 {
				return nil, fmt.Errorf("truthfulness: the input read has no column %q, the privacy unit the counter counts persons by", u)
			}
		}
		if ps := c.spec.Pseudonym; ps != nil {
			// matched by the verifier's own pseudonym, never by a Cover given for it
			w.pseudo = slices.Index(t.Columns, ps.Column)
			w.covers[w.pseudo], w.memos[w.pseudo] = nil, nil
			if ps.Key != nil {
				w.mac = newMacer(ps.Key)
			}
		}
		for j, i := range c.pos {
			w.qcol[i] = j
			if w.memos[i] == nil {
				w.memos[i] = newCoverMemo()
			}
		}
		if c.spec.Placed != nil {
			if w.placed, err = newPlacedWalk(t, w, c); err != nil {
				return nil, err
			}
		}
		c.counting() // the staged records counted beside the walk, until finish
	}
	return w, nil
}

// walk is Truthful's walk.
// mismatched is an input record a release record was tried against and does not
// generalize: its number (from 1; 0: none), the first column that differs and why
// (mismatch's error), kept so that the message is written only when it is given.
type mismatched struct {
	n, col int
	err    error
}

// hint is the message's account of m ("" for none): the column it differs in, never
// a value; pseudo is the pseudonym's column (−1: none).
func (m mismatched) hint(t Truth, pseudo int) string {
	switch {
	case m.n == 0:
		return ""
	case m.col == pseudo:
		return fmt.Sprintf("; the next unused input record, %d, it generalizes but for its pseudonym (column %q), which is not the keyed pseudonym of that record's person", m.n, t.Columns[m.col])
	}
	hint := fmt.Sprintf("; the next unused input record, %d, differs in column %q", m.n, t.Columns[m.col])
	var ce *coverError
	if errors.As(m.err, &ce) { // ours: never quotes a value
		hint += ": " + ce.Error()
	}
	return hint
}

func (w *walker) walk(t Truth, inHeader []string, in, rel Reader) (suppressed int, err error) {
	relN, inN := 0, 0 // records read from each
	for {
		r, err := rel.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return suppressed, err
		}
		relN++
		if len(r) != len(t.Columns) {
			return suppressed, &Violation{Msg: fmt.Sprintf("release record %d has %d fields, the header %d", relN, len(r), len(t.Columns))}
		}
		if t.LeftOut != nil || w.placed != nil {
			step := w.aligned
			if w.placed != nil {
				step = w.placedStep
			}
			n, err := step(t, inHeader, in, r, relN, &inN)
			suppressed += n
			if err != nil {
				return suppressed, err
			}
			if suppressed > t.MaxSuppressed {
				return suppressed, &Violation{Msg: fmt.Sprintf("release record %d: the run left out more than the limit of %d input records", relN, t.MaxSuppressed)}
			}
			continue
		}
		var first mismatched // the first unused input record tried, for the message
		for tried := 0; ; tried++ {
			x, err := in.Read()
			if errors.Is(err, io.EOF) {
				return suppressed, &Violation{Msg: fmt.Sprintf(
					"release record %d is not the generalization of any later unused input record (invented, duplicated, reordered or changed)%s", relN, first.hint(t, w.pseudo))}
			}
			if err != nil {
				return suppressed, err
			}
			inN++
			if len(x) != len(inHeader) {
				return suppressed, fmt.Errorf("truthfulness: input record %d has %d fields, the header %d", inN, len(x), len(inHeader))
			}
			col, cerr := w.mismatch(r, x)
			if t.Input != nil {
				t.Input(x, col < 0)
			}
			if col < 0 {
				w.matched(r, x)
				break
			}
			w.suppressed(x)
			if tried == 0 {
				first = mismatched{n: inN, col: col, err: cerr}
			}
			suppressed++
			if suppressed > t.MaxSuppressed {
				return suppressed, &Violation{Msg: fmt.Sprintf(
					"release record %d: explaining it would suppress more than the limit of %d input records (is it invented, duplicated, reordered or changed?)%s",
					relN, t.MaxSuppressed, first.hint(t, w.pseudo))}
			}
		}
	}
	return w.rest(t, inHeader, in, relN, inN, suppressed)
}

// rest is the end of the walk, once every release record (relN of them) is matched:
// the input records after the last match (inN read so far, suppressed of them left
// out) are left out too. It returns the records left out in all.
func (w *walker) rest(t Truth, inHeader []string, in Reader, relN, inN, suppressed int) (int, error) {
	for {
		x, err := in.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return suppressed, err
		}
		inN++
		if len(x) != len(inHeader) {
			return suppressed, fmt.Errorf("truthfulness: input record %d has %d fields, the header %d", inN, len(x), len(inHeader))
		}
		if t.LeftOut != nil && (inN > len(t.LeftOut) || !t.LeftOut[inN-1]) {
			return suppressed, &Violation{Msg: fmt.Sprintf("input record %d, which the run says it released, is missing from the release (%d records)", inN, relN)}
		}
		if err := w.placed.leftOut(inN, relN); err != nil {
			return suppressed, err
		}
		if t.Input != nil {
			t.Input(x, false)
		}
		w.suppressed(x)
		suppressed++
		if suppressed > t.MaxSuppressed {
			return suppressed, &Violation{Msg: fmt.Sprintf(
				"more than %d input records are missing from the release (%d released)", t.MaxSuppressed, relN)}
		}
	}
	return suppressed, w.placed.ended(inN)
}

// aligned is the walk's step for release record r (the relN-th) along the alignment
// t.LeftOut gives: the input records left out before the next one released are
// counted as suppressed (their number returned), and that one must be the record r
// generalizes. inN counts the input records read.
func (w *walker) aligned(t Truth, inHeader []string, in Reader, r []string, relN int, inN *int) (int, error) {
	skipped := 0
	for {
		x, err := in.Read()
		if errors.Is(err, io.EOF) {
			return skipped, &Violation{Msg: fmt.Sprintf("release record %d: the input has no record left that the run says it released", relN)}
		}
		if err != nil {
			return skipped, err
		}
		*inN++
		if len(x) != len(inHeader) {
			return skipped, fmt.Errorf("truthfulness: input record %d has %d fields, the header %d", *inN, len(x), len(inHeader))
		}
		if *inN > len(t.LeftOut) {
			return skipped, &Violation{Msg: fmt.Sprintf("input record %d: the run's account of the records it left out ends at %d", *inN, len(t.LeftOut))}
		}
		if !t.LeftOut[*inN-1] {
			col, _ := w.mismatch(r, x)
			if t.Input != nil {
				t.Input(x, col < 0)
			}
			if col >= 0 {
				return skipped, &Violation{Msg: fmt.Sprintf("release record %d is not the generalization of input record %d, which the run says it released (column %q differs)", relN, *inN, t.Columns[col])}
			}
			w.matched(r, x)
			return skipped, nil
		}
		if t.Input != nil {
			t.Input(x, false)
		}
		w.suppressed(x)
		skipped++
	}
}

// mismatch returns the first release column where r is not a generalization of the input
// record x (with the cover's error, if any), or -1 when it is. A column with a memo
// remembers the pairs of values found to match there (with their numbers for the
// counter); for a counted quasi-identifier, w.ids gets the numbers of the pair.
func (w *walker) mismatch(r, x []string) (int, error) {
	// plain columns first: a string comparison is cheaper than a cover
	for i, p := range w.inPos {
		if w.covers[i] == nil && r[i] != x[p] && i != w.pseudo {
			return i, nil
		}
	}
	for i, p := range w.inPos {
		m := w.memos[i]
		if m == nil {
			continue
		}
		j := w.qcol[i]
		if ids, ok := m.find(r[i], x[p]); ok {
			if j >= 0 {
				w.ids[j] = ids
			}
			continue
		}
		if r[i] != x[p] { // a column without a cover is equal here
			ok, err := w.covers[i](r[i], x[p])
			if !ok || err != nil {
				return i, err
			}
		}
		var ids pairIDs
		if j >= 0 && w.cerr == nil {
			var err error
			if ids, err = w.count.pairIDs(j, r[i], x[p]); err != nil {
				w.cerr = err
			}
			w.ids[j] = ids
		}
		m.put(r[i], x[p], ids)
	}
	if w.mac != nil && !w.mac.is(r[w.pseudo], x[w.unitAt]) {
		return w.pseudo, nil
	}
	return -1, nil
}

// matched counts the release record r, which the walk matched to the input record x
// with the numbers in w.ids.
func (w *walker) matched(r, x []string) {
	if w.series != nil {
		w.series.add(r, x)
	}
	if w.count == nil || w.cerr != nil {
		return
	}
	unit := ""
	if w.unitAt >= 0 {
		unit = x[w.unitAt]
	}
	var pass uint8
	if w.placed != nil {
		pass = w.placed.pass
	}
	w.cerr = w.count.stageMatched(r, w.ids, unit, pass)
}

// suppressed counts the input record x, which the release leaves out.
func (w *walker) suppressed(x []string) {
	if w.series != nil {
		w.series.left(x)
	}
	if w.count == nil || w.cerr != nil {
		return
	}
	for j, i := range w.count.pos {
		w.orig[j] = x[w.inPos[i]]
	}
	if w.unitAt >= 0 {
		w.orig[len(w.count.pos)] = x[w.unitAt]
		for j, i := range w.count.spos {
			w.orig[len(w.count.pos)+1+j] = x[w.inPos[i]]
		}
	}
	w.cerr = w.count.AddSuppressed(w.orig)
}

// finish counts what the counter has staged, stops its counting goroutine and
// returns its first error.
func (w *walker) finish() error {
	if w.count == nil {
		return nil
	}
	err := w.count.drain()
	if w.cerr != nil {
		return w.cerr
	}
	return err
}

// NullAs wraps a Cover for a quasi-identifier whose nulls (read as "") the configuration
// reads as the value null: the original "" is covered as if it were null.
func NullAs(c Cover, null string) Cover {
	return func(released, original string) (bool, error) {
		if original == "" {
			if released == "" {
				return true, nil
			}
			original = null
		}
		return c(released, original)
	}
}

// coverError is a released value that is not a well-formed generalization. Its message
// never quotes the value.
type coverError struct{ msg string }

func (e *coverError) Error() string { return e.msg }

func malformed(format string, a ...any) error {
	return &coverError{msg: fmt.Sprintf(format, a...)}
}

// CoverHierarchyFile reads an ARX hierarchy file (rows "leaf;level1;…;top", ';'
// separated, RFC 4180 quoting, no header, the same number of fields on every row and
// the same top label, "*" or another, at the end of every row; a UTF-8 byte order mark
// and empty lines are ignored). The released value covers an original when it is the
// original itself, the file's top, a value on the original's row, or — for a numeric or
// date column released by Mondrian — a range "[lo,hi]" (or a float "[lo,hi)") that holds
// it. A value the file does not list is covered only by itself, the top or a range. The
// errors name the file and a line, never a value.
func CoverHierarchyFile(path string) (Cover, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("hierarchy file: %w", err)
	}
	return CoverHierarchy(data, path)
}

// CoverHierarchy is CoverHierarchyFile over the bytes of a hierarchy file that name
// identifies in errors.
func CoverHierarchy(data []byte, path string) (Cover, error) {
	recs, lines, err := readHierarchyRows(data, path)
	if err != nil {
		return nil, err
	}
	rows := make(map[string][]string, len(recs))
	for i, rec := range recs {
		if _, dup := rows[rec[0]]; dup {
			return nil, fmt.Errorf("%s:%d: a leaf value listed on an earlier row too", path, lines[i])
		}
		rows[rec[0]] = rec[1:]
	}
	fileTop := recs[0][len(recs[0])-1]
	return func(released, original string) (bool, error) {
		if released == original || released == fileTop {
			return true, nil
		}
		for _, a := range rows[original] {
			if a == released {
				return true, nil
			}
		}
		return anyRange(released, original), nil
	}, nil
}

// readHierarchyRows reads the rows of an ARX hierarchy file's bytes (see
// CoverHierarchyFile) and the line each starts on; path names the file in errors. The
// errors name the file and a line, never a value.
func readHierarchyRows(data []byte, path string) (rows [][]string, lines []int, err error) {
	cr := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(data, []byte("\ufeff"))))
	cr.Comma = ';'
	cr.FieldsPerRecord = 0 // every row as long as the first
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			// csv's messages give lines and columns, not field contents
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		line, _ := cr.FieldPos(0)
		rows, lines = append(rows, rec), append(lines, line)
	}
	if len(rows) == 0 {
		return nil, nil, fmt.Errorf("%s: empty hierarchy file", path)
	}
	last := len(rows[0]) - 1
	for i, r := range rows {
		if r[last] != rows[0][last] {
			return nil, nil, fmt.Errorf("%s:%d: the last level differs from the first row's: a hierarchy has a single top value", path, lines[i])
		}
	}
	return rows, lines, nil
}

// CoverMask covers the labels of the mask builder: the original with its last (first,
// when !fromRight) j characters replaced by '*', 1 ≤ j ≤ its length, a character being a
// rune or a byte that is not valid UTF-8. It also accepts the value itself, "*" and a
// Mondrian range that holds the value.
func CoverMask(fromRight bool) Cover {
	return func(released, original string) (bool, error) {
		if released == original || released == top {
			return true, nil
		}
		if masks(released, original, fromRight) {
			return true, nil
		}
		return anyRange(released, original), nil
	}
}

// masks reports whether released is original with some of its characters, from the
// right (left), replaced by '*', as many characters as original has.
func masks(released, original string, fromRight bool) bool {
	if fromRight {
		return masksRight(released, original)
	}
	rs, vs := chars(released), chars(original)
	if len(rs) != len(vs) || len(rs) == 0 {
		return false
	}
	if !fromRight {
		reverse(rs)
		reverse(vs)
	}
	// the longest common prefix, then stars only
	p := 0
	for p < len(rs) && rs[p] == vs[p] {
		p++
	}
	for _, c := range rs[p:] {
		if c != top {
			return false
		}
	}
	return true
}

// masksRight is masks from the right, without splitting the strings: the longest
// common prefix of characters, then as many '*' in released as original has
// characters left.
func masksRight(released, original string) bool {
	if original == "" {
		return false
	}
	i, j := 0, 0
	for i < len(released) && j < len(original) {
		_, a := utf8.DecodeRuneInString(released[i:])
		_, b := utf8.DecodeRuneInString(original[j:])
		if released[i:i+a] != original[j:j+b] {
			break
		}
		i, j = i+a, j+b
	}
	stars := len(released) - i
	if strings.Count(released[i:], top) != stars {
		return false // a character other than '*' after the common prefix
	}
	return stars == utf8.RuneCountInString(original[j:])
}

// chars splits s into characters: runes, and single bytes that are not valid UTF-8.
func chars(s string) []string {
	out := make([]string, 0, len(s))
	for len(s) > 0 {
		_, n := utf8.DecodeRuneInString(s)
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

func reverse(s []string) {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}

// CoverRange covers values of a column of type typ released as themselves, "*", or a
// range: closed "[lo,hi]" for integer (Mondrian and the interval builder), float
// (Mondrian), date ("[2019-01-03,2019-11-29]") and timestamp (RFC 3339) columns, and
// half-open "[lo,hi)" for float columns (the interval builder: ParseFloat(lo) ≤ v <
// ParseFloat(hi)). A released value equal to the original as a value ("1.0" for "1")
// covers it. CoverRange(schema.Date) is CoverDate(); for a type without order (string,
// boolean) only the value itself and "*" cover, and a range is an error.
func CoverRange(typ schema.Type) Cover {
	k := kindOf(typ).cached()
	if typ == schema.Date {
		return CoverDate()
	}
	return func(released, original string) (bool, error) {
		if released == original || released == top {
			return true, nil
		}
		if k == nil {
			return false, malformed("a %s column is generalized only to %q", typ, top)
		}
		if _, _, _, ok := splitRange(released); ok {
			return k.inRange(released, original)
		}
		rv, ok := k.parse(released)
		if !ok {
			return false, malformed("neither a %s value, a range nor %q", k.name, top)
		}
		ov, ok := k.parse(original)
		return ok && k.cmp(rv, ov) == 0, nil
	}
}

// CoverDate covers the labels of the date builder for an original ISO date YYYY-MM-DD:
// month "2023-04", quarter "2023-Q2", year "2023" (four digits), decade "[2020,2029]",
// plus the date itself, "*" and a Mondrian range of dates "[2019-01-03,2019-11-29]".
func CoverDate() Cover {
	return func(released, original string) (bool, error) {
		if released == original || released == top {
			return true, nil
		}
		od, dateOK := parseDay(original)
		var y, m int
		if dateOK { // canonical, so the digits are the year and the month
			y, m = atoi(original[:4]), atoi(original[5:7])
		}
		if lo, hi, open, ok := splitRange(released); ok {
			if l, isDate := parseDay(lo); isDate {
				// as kind.holds does for dates
				if open {
					return false, malformed("a half-open range on a date column")
				}
				h, ok := parseDay(hi)
				if !ok {
					return false, malformed("a range whose bounds are not date values")
				}
				if l > h {
					return false, errEmptyRange()
				}
				return dateOK && l <= od && od <= h, nil
			}
			// a decade: "[2020,2029]"
			dlo, ok1 := canonicalInt(lo)
			dhi, ok2 := canonicalInt(hi)
			if open || !ok1 || !ok2 || dlo < 0 || dlo%10 != 0 || dhi != dlo+9 {
				return false, malformed("a range that is neither a decade [d0,d9] nor a range of dates")
			}
			return dateOK && dlo <= y && y <= dhi, nil
		}
		switch {
		case len(released) == 4 && digits(released): // year
			return dateOK && atoi(released) == y, nil
		case len(released) == 7 && released[4] == '-' && digits(released[:4]) && digits(released[5:]): // month
			mm := atoi(released[5:])
			if mm < 1 || mm > 12 {
				return false, malformed("a month label with a month out of range")
			}
			return dateOK && atoi(released[:4]) == y && mm == m, nil
		case len(released) == 7 && released[4:6] == "-Q" && digits(released[:4]) && digits(released[6:]): // quarter
			q := atoi(released[6:])
			if q < 1 || q > 4 {
				return false, malformed("a quarter label with a quarter out of range")
			}
			return dateOK && atoi(released[:4]) == y && q == (m-1)/3+1, nil
		}
		rd, ok := parseDay(released)
		if !ok {
			return false, malformed("not a label of the date hierarchy, a date, a range of dates nor %q", top)
		}
		return dateOK && rd == od, nil
	}
}

// parseDay reads a date YYYY-MM-DD (what time.Parse accepts for time.DateOnly, and
// exactly ten bytes: years 0000 to 9999, a day that exists in its month) as days since
// 1970-01-01.
func parseDay(s string) (int64, bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' || !digits(s[:4]) || !digits(s[5:7]) || !digits(s[8:]) {
		return 0, false
	}
	y, m, d := int64(atoi(s[:4])), atoi(s[5:7]), atoi(s[8:])
	if m < 1 || m > 12 || d < 1 || d > daysIn(m, y) {
		return 0, false
	}
	// Days from the civil date (H. Hinnant, "chrono-Compatible Low-Level Date
	// Algorithms", days_from_civil), with March as the first month of the year.
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 {
		era = (y - 399) / 400
	}
	yoe := y - era*400
	mp := int64((m + 9) % 12)
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468, true
}

// daysIn is the number of days of month m of year y.
func daysIn(m int, y int64) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// digits reports whether s is made of ASCII digits only.
func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// atoi is the value of a short string of ASCII digits.
func atoi(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// canonicalInt parses a decimal integer written without leading zeros or '+'.
func canonicalInt(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && strconv.Itoa(n) == s
}

// splitRange splits "[lo,hi]" or "[lo,hi)" (open) into its bounds. It checks the
// brackets and the single comma only.
func splitRange(s string) (lo, hi string, open, ok bool) {
	if len(s) < 2 || s[0] != '[' || (s[len(s)-1] != ']' && s[len(s)-1] != ')') {
		return "", "", false, false
	}
	lo, hi, ok = strings.Cut(s[1:len(s)-1], ",")
	if !ok || strings.Contains(hi, ",") {
		return "", "", false, false
	}
	return lo, hi, s[len(s)-1] == ')', true
}

// kind is an ordered value type: how its text parses and how two values compare.
type kind struct {
	name  string
	open  bool // half-open ranges are written for it
	parse func(string) (any, bool)
	cmp   func(a, b any) int
}

var (
	integerKind = &kind{
		name: "integer",
		parse: func(s string) (any, bool) {
			// big: the interval builder's bounds may lie beyond 64 bits
			n, ok := new(big.Int).SetString(s, 10)
			return n, ok
		},
		cmp: func(a, b any) int { return a.(*big.Int).Cmp(b.(*big.Int)) },
	}
	floatKind = &kind{
		name: "float",
		open: true,
		parse: func(s string) (any, bool) {
			f, err := strconv.ParseFloat(s, 64)
			return f, err == nil && !math.IsNaN(f)
		},
		cmp: func(a, b any) int {
			x, y := a.(float64), b.(float64)
			switch {
			case x < y:
				return -1
			case x > y:
				return 1
			}
			return 0
		},
	}
	dateKind = &kind{
		name: "date",
		parse: func(s string) (any, bool) {
			t, err := time.Parse(time.DateOnly, s)
			return t, err == nil && len(s) == len(time.DateOnly)
		},
		cmp: func(a, b any) int { return a.(time.Time).Compare(b.(time.Time)) },
	}
	timestampKind = &kind{
		name: "timestamp",
		parse: func(s string) (any, bool) {
			t, err := time.Parse(time.RFC3339Nano, s)
			return t, err == nil
		},
		cmp: func(a, b any) int { return a.(time.Time).Compare(b.(time.Time)) },
	}
)

// cached is k with its parse remembered (a release repeats its labels and an input its
// values); nil for nil. The copy is for one goroutine: a Cover is not safe for
// concurrent use.
func (k *kind) cached() *kind {
	if k == nil {
		return nil
	}
	type parsed struct {
		v  any
		ok bool
	}
	seen := map[string]parsed{}
	c := *k
	c.parse = func(s string) (any, bool) {
		if p, hit := seen[s]; hit {
			return p.v, p.ok
		}
		v, ok := k.parse(s)
		if len(seen) >= 1<<16 {
			clear(seen)
		}
		seen[s] = parsed{v, ok}
		return v, ok
	}
	return &c
}

// kindOf is the kind of a column type, nil for a type without order.
func kindOf(typ schema.Type) *kind {
	switch typ {
	case schema.Integer:
		return integerKind
	case schema.Float:
		return floatKind
	case schema.Date:
		return dateKind
	case schema.Timestamp:
		return timestampKind
	}
	return nil
}

// inRange decides whether the range released holds original, both of kind k. A
// released value that is not a well-formed, non-empty range of k is an error; an
// original that is not a value of k is not covered.
func (k *kind) inRange(released, original string) (bool, error) {
	lo, hi, open, ok := splitRange(released)
	if !ok {
		return false, malformed("not a range [lo,hi]")
	}
	if k.name == integerKind.name && !open {
		// 64-bit integers, the common case, without the big numbers and their cache
		if l, err := strconv.ParseInt(lo, 10, 64); err == nil {
			if h, err := strconv.ParseInt(hi, 10, 64); err == nil {
				if v, err := strconv.ParseInt(original, 10, 64); err == nil {
					if l > h {
						return false, errEmptyRange()
					}
					return l <= v && v <= h, nil
				}
			}
		}
	}
	l, lok := k.parse(lo)
	v, vok := k.parse(original)
	return k.holds(l, lok, hi, open, v, vok)
}

// holds decides whether the range of kind k from l (lok: its text lo read as k) to hi,
// closed or (open) half-open, holds v (vok: the original read as k), as inRange does.
func (k *kind) holds(l any, lok bool, hi string, open bool, v any, vok bool) (bool, error) {
	if open && !k.open {
		return false, malformed("a half-open range on a %s column", k.name)
	}
	h, hok := k.parse(hi)
	if !lok || !hok {
		return false, malformed("a range whose bounds are not %s values", k.name)
	}
	if c := k.cmp(l, h); c > 0 || (open && c == 0) {
		return false, errEmptyRange()
	}
	if !vok {
		return false, nil
	}
	if open {
		return k.cmp(l, v) <= 0 && k.cmp(v, h) < 0, nil
	}
	return k.cmp(l, v) <= 0 && k.cmp(v, h) <= 0, nil
}

func errEmptyRange() error {
	return malformed("an empty range (its lower bound is not below its upper bound)")
}

// anyRange reports whether released is a well-formed range that holds original, for the
// covers that do not know their column's type: the first kind (date, timestamp, integer,
// float) that reads both bounds and the original decides.
func anyRange(released, original string) bool {
	lo, hi, _, ok := splitRange(released)
	if !ok {
		return false
	}
	for _, k := range []*kind{dateKind, timestampKind, integerKind, floatKind} {
		_, ok1 := k.parse(lo)
		_, ok2 := k.parse(hi)
		_, ok3 := k.parse(original)
		if !ok1 || !ok2 || !ok3 {
			continue
		}
		in, err := k.inRange(released, original)
		if err == nil {
			return in
		}
		// a half-open range of integers is read as floats below
	}
	return false
}
