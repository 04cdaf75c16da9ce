package report

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"
)

// Names, paths and labels come from the configuration and the data, so they may hold
// the controls that reorder text on screen (U+202E RIGHT-TO-LEFT OVERRIDE makes
// "gnp.exe" of "exe.png") or that a terminal obeys (ESC). What is printed for a person
// shows them as escapes, \u202e, instead: on the terminal every one of them (Visible,
// TerminalWriter); in the HTML pages the explicit bidi formatting characters and the
// controls, each user-supplied string being isolated besides (isolate, html_isolate.go).

// Unicode's explicit bidi formatting characters and implicit marks.
const (
	lre = '\u202a' // LEFT-TO-RIGHT EMBEDDING
	pdf = '\u202c' // POP DIRECTIONAL FORMATTING
	rlo = '\u202e' // RIGHT-TO-LEFT OVERRIDE
	lri = '\u2066' // LEFT-TO-RIGHT ISOLATE
	fsi = '\u2068' // FIRST STRONG ISOLATE
	pdi = '\u2069' // POP DIRECTIONAL ISOLATE
	lrm = '\u200e' // LEFT-TO-RIGHT MARK
	rlm = '\u200f' // RIGHT-TO-LEFT MARK
	alm = '\u061c' // ARABIC LETTER MARK
)

// isBidiFormatting reports whether r opens or closes an embedding, override or
// isolate (U+202A–U+202E, U+2066–U+2069).
func isBidiFormatting(r rune) bool {
	return r >= lre && r <= rlo || r >= lri && r <= pdi
}

// isBidiMark reports whether r is a directional mark (U+200E, U+200F, U+061C).
func isBidiMark(r rune) bool { return r == lrm || r == rlm || r == alm }

// isControl reports whether r is a C0 or C1 control, DEL, or the line or paragraph
// separator (U+2028, U+2029), which also ends a bidi paragraph.
func isControl(r rune) bool {
	return r < 0x20 || r >= 0x7f && r <= 0x9f || r == '\u2028' || r == '\u2029'
}

// escapeRune writes r as \uXXXX.
func escapeRune(b *strings.Builder, r rune) { fmt.Fprintf(b, `\u%04x`, r) }

// Visible is s as a terminal may show it: every bidi formatting character, bidi mark
// and control but newline and tab written as \uXXXX, and a byte that is not UTF-8 as
// \xHH, so that no name or path can reorder or hide the text around it, or drive the
// terminal.
func Visible(s string) string {
	if !needsVisible(s) {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case r != '\n' && r != '\t' && (isBidiFormatting(r) || isBidiMark(r) || isControl(r)):
			escapeRune(&b, r)
		default:
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}

// needsVisible reports whether Visible changes s.
func needsVisible(s string) bool {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return true
			}
		}
		if r != '\n' && r != '\t' && (isBidiFormatting(r) || isBidiMark(r) || isControl(r)) {
			return true
		}
	}
	return false
}

// TerminalWriter passes what is written to it through Visible: what a command prints
// for a person (its summary on stdout, its logs and errors on stderr) goes through
// one; it may be written from several goroutines. A character split between two
// writes is held until the second. Escapes it
// writes into a JSON log record are JSON's own, so the record still decodes to what
// was logged.
type TerminalWriter struct {
	mu   sync.Mutex
	w    io.Writer
	held []byte // the start of a character the last write ended in
}

// NewTerminalWriter is a TerminalWriter writing to w.
func NewTerminalWriter(w io.Writer) *TerminalWriter { return &TerminalWriter{w: w} }

// Write writes p to the underlying writer as Visible shows it, and reports all of p
// written unless the underlying writer fails.
func (t *TerminalWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	buf := append(t.held, p...)
	t.held = nil
	// Hold an incomplete character at the end (at most utf8.UTFMax-1 bytes) for the
	// next write.
	for k := 1; k < utf8.UTFMax && k <= len(buf); k++ {
		if i := len(buf) - k; utf8.RuneStart(buf[i]) {
			if !utf8.FullRune(buf[i:]) {
				t.held = append([]byte(nil), buf[i:]...)
				buf = buf[:i]
			}
			break
		}
	}
	if _, err := io.WriteString(t.w, Visible(string(buf))); err != nil {
		return 0, err
	}
	return len(p), nil
}
