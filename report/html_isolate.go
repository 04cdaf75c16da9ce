package report

import (
	"strings"
	"unicode/utf8"
)

// The HTML pages show every user-supplied string (a column, dataset or output name, a
// path, a released value or hierarchy label) isolated from the sentence around it, so
// that neither its right-to-left letters nor a bidi control in it can reorder the
// rest of the sentence: a page is made from a copy of its result in which each such
// string is wrapped in FIRST STRONG ISOLATE … POP DIRECTIONAL ISOLATE, its own
// explicit bidi formatting characters and controls shown as \uXXXX (isolate); then
// render turns each isolate in the page's text into a <bdi> element and, in what
// cannot hold an element (the page's title, the charts' SVG text, attributes), keeps
// it as marks; any other bidi control it meets outside an isolate it shows as \uXXXX
// (isolatePage). Directional marks inside an isolate stay: they only order its own
// letters.

// isolate is s isolated as a page shows it: FSI, s with every explicit bidi
// formatting character and control written as \uXXXX, PDI; "" stays "".
func isolate(s string) string {
	if s == "" {
		return ""
	}
	var b strings.Builder
	b.WriteRune(fsi)
	for _, r := range s {
		if isBidiFormatting(r) || isControl(r) {
			escapeRune(&b, r)
			continue
		}
		b.WriteRune(r)
	}
	b.WriteRune(pdi)
	return b.String()
}

// isolateAll is ss, each isolated (nil stays nil).
func isolateAll(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = isolate(s)
	}
	return out
}

// isolateKeys is m with each key isolated (nil stays nil).
func isolateKeys[V any](m map[string]V) map[string]V {
	if m == nil {
		return nil
	}
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[isolate(k)] = v
	}
	return out
}

// isolateEach is xs, each changed by f, in a new slice (nil stays nil).
func isolateEach[T any](xs []T, f func(T) T) []T {
	if xs == nil {
		return nil
	}
	out := make([]T, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// isolateReport is a copy of r with every user-supplied string isolated; r is left
// as it was.
func isolateReport(r *Report) *Report {
	c := *r
	c.Dataset = isolate(r.Dataset)
	c.HierarchyDigests = isolateKeys(r.HierarchyDigests)
	c.Series = isolateSeries(r.Series)
	c.Input.Path, c.Output.Path = isolate(r.Input.Path), isolate(r.Output.Path)
	c.Node = isolateEach(r.Node, func(n NodeLevel) NodeLevel { n.Column = isolate(n.Column); return n })
	c.Generalized = isolateEach(r.Generalized, func(q QuasiRelease) QuasiRelease {
		q.Column, q.Examples = isolate(q.Column), isolateAll(q.Examples)
		return q
	})
	m := &c.Model
	m.LDiversity = isolateEach(m.LDiversity, func(l LDiversityIn) LDiversityIn { l.Column = isolate(l.Column); return l })
	m.TCloseness = isolateEach(m.TCloseness, func(t TClosenessIn) TClosenessIn { t.Column = isolate(t.Column); return t })
	m.BetaLikeness = isolateEach(m.BetaLikeness, func(b BetaLikenessIn) BetaLikenessIn { b.Column = isolate(b.Column); return b })
	if s := m.Subset; s != nil {
		sc := *s
		sc.Column = isolate(s.Column)
		m.Subset = &sc
	}
	c.Metric.Weights = isolateKeys(r.Metric.Weights)
	c.Verified.Sensitive = isolateEach(r.Verified.Sensitive, func(s SensitiveSummary) SensitiveSummary { s.Column = isolate(s.Column); return s })
	c.Verified.Released = isolateEach(r.Verified.Released, func(x ReleasedColumn) ReleasedColumn {
		x.Column, x.Sensitive = isolate(x.Column), isolate(x.Sensitive)
		return x
	})
	if r.Risk != nil {
		rr := isolateRisk(*r.Risk)
		c.Risk = &rr
	}
	c.Persons = isolatePersons(r.Persons)
	return &c
}

// isolatePersons is a copy of p with its column names isolated (nil stays nil).
func isolatePersons(p *PersonsSummary) *PersonsSummary {
	if p == nil {
		return nil
	}
	pc := *p
	pc.Column = isolate(p.Column)
	if ps := p.Pseudonym; ps != nil {
		psc := *ps
		psc.Column = isolate(ps.Column)
		pc.Pseudonym = &psc
	}
	return &pc
}

// isolateRisk is rr with its column names isolated.
func isolateRisk(rr RiskReport) RiskReport {
	rr.QuasiIdentifiers = isolateEach(rr.QuasiIdentifiers, func(q AttributeRisk) AttributeRisk { q.Columns = isolateAll(q.Columns); return q })
	return rr
}

// isolateAnalysis is a copy of a with every user-supplied string isolated.
func isolateAnalysis(a *RiskAnalysis) *RiskAnalysis {
	c := *a
	c.Dataset = isolate(a.Dataset)
	c.HierarchyDigests = isolateKeys(a.HierarchyDigests)
	c.Input.Path = isolate(a.Input.Path)
	if a.Release != nil {
		rel := *a.Release
		rel.Path = isolate(rel.Path)
		c.Release = &rel
	}
	c.Quasi = isolateAll(a.Quasi)
	c.Risk = isolateRisk(a.Risk)
	if p := a.Persons; p != nil {
		pc := *p
		pc.Column, pc.Release = isolate(p.Column), isolatePersons(p.Release)
		c.Persons = &pc
	}
	return &c
}

// isolateManifest is a copy of m with every user-supplied string isolated.
func isolateManifest(m *Manifest) *Manifest {
	c := *m
	c.Dataset = isolate(m.Dataset)
	if u := m.PrivacyUnit; u != nil {
		uc := *u
		uc.Column = isolate(u.Column)
		c.PrivacyUnit = &uc
	}
	if l := m.Ledger; l != nil {
		lc := *l
		lc.File = isolate(l.File)
		lc.History = isolateEach(l.History, func(h LedgerSpend) LedgerSpend { h.Outputs = isolateAll(h.Outputs); return h })
		c.Ledger = &lc
	}
	c.Outputs = isolateEach(m.Outputs, func(o ManifestOutput) ManifestOutput {
		o.Name, o.File, o.Value = isolate(o.Name), isolate(o.File), isolate(o.Value)
		o.Columns = isolateAll(o.Columns)
		o.Marginals = isolateEach(o.Marginals, isolateAll)
		return o
	})
	return &c
}

// isolatePage is page (HTML that render made) with each isolate in its text a <bdi>
// element, isolates kept as marks in the head, in SVG and in tags, every isolate
// closed where its text or attribute value ends, and every other bidi formatting
// character, unmatched PDI and directional mark outside an isolate, and every control
// but newline, tab and carriage return, written as \uXXXX.
func isolatePage(page string) string {
	var b strings.Builder
	b.Grow(len(page) + len(page)/16)
	var (
		inTag     bool // between < and >
		inHead    bool // marks, not elements: the title
		svg       int  // open <svg> elements: marks, not elements
		open      int  // isolates open in the current text or tag
		asElement bool // the open isolates are <bdi> elements
	)
	closeAll := func() {
		for ; open > 0; open-- {
			if asElement {
				b.WriteString("</bdi>")
			} else {
				b.WriteRune(pdi)
			}
		}
	}
	for i, r := range page {
		switch {
		case r == '<' || r == '>':
			closeAll()
			b.WriteRune(r)
			inTag = r == '<'
			if inTag {
				inHead, svg = tagContext(page[i+1:], inHead, svg)
			}
			continue
		case r == '"' && inTag: // an attribute's value begins or ends
			closeAll()
			b.WriteRune(r)
			continue
		case isControl(r) && r != '\n' && r != '\t' && r != '\r':
			escapeRune(&b, r)
			continue
		case !isBidiFormatting(r) && !isBidiMark(r):
			b.WriteRune(r)
			continue
		}
		asElement = !inTag && !inHead && svg == 0
		switch {
		case r == fsi:
			open++
			if asElement {
				b.WriteString("<bdi>")
			} else {
				b.WriteRune(fsi)
			}
		case r == pdi && open > 0:
			open--
			if asElement {
				b.WriteString("</bdi>")
			} else {
				b.WriteRune(pdi)
			}
		case isBidiMark(r) && open > 0:
			b.WriteRune(r)
		default:
			escapeRune(&b, r)
		}
	}
	closeAll()
	return b.String()
}

// tagContext is inHead and svg after the tag that rest (the page after a "<") begins
// with.
func tagContext(rest string, inHead bool, svg int) (bool, int) {
	closing := strings.HasPrefix(rest, "/")
	rest = strings.TrimPrefix(rest, "/")
	end := strings.IndexFunc(rest, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	})
	if end < 0 {
		end = len(rest)
	}
	switch name := strings.ToLower(rest[:end]); {
	case name == "head":
		inHead = !closing
	case name == "svg" && closing:
		svg = max(svg-1, 0)
	case name == "svg":
		svg++
	}
	return inHead, svg
}

// visibleLen is the number of characters of s a reader sees: its runes but the bidi
// formatting characters and marks.
func visibleLen(s string) int {
	n := utf8.RuneCountInString(s)
	for _, r := range s {
		if isBidiFormatting(r) || isBidiMark(r) {
			n--
		}
	}
	return n
}
