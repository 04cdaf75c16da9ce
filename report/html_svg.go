package report

import (
	"fmt"
	"html/template"
	"math"
	"strings"
	"unicode/utf8"
)

// The HTML reports' charts: inline SVG written here, every text escaped, every chart
// with its size, view box, title, axis and axis label. A chart with nothing to show is
// a sentence instead.

// Chart geometry and type sizes (px).
const (
	chartWidth  = 640
	gridWidth   = 560 // of a chart shown beside another
	wideWidth   = 760 // of a chart with long labels, shown alone
	chartPad    = 14
	titleSize   = 15
	labelSize   = 13
	smallSize   = 12
	barHeight   = 18
	barGap      = 3
	rowGap      = 12
	charWidth   = 0.6 // of the font size: a generous average for a sans-serif
	maxLabelLen = 36  // runes of a row label before it is shortened
)

// series colours: the input (before) and the release (after), then others; they
// differ in lightness too, so that a grey print tells them apart.
var seriesColors = []string{"#e0892b", "#27508f", "#7a9a3a", "#8c4f9e"}

// svg writes one chart.
type svg struct {
	b    strings.Builder
	w, h int
}

// newSVG starts a chart of w × h px titled title (drawn, and as its accessible name).
func newSVG(w, h int, title string) *svg {
	s := &svg{w: w, h: h}
	fmt.Fprintf(&s.b, `<svg class="chart" width="%d" height="%d" viewBox="0 0 %d %d" role="img"><title>%s</title>`, w, h, w, h, esc(title))
	s.text(chartPad, chartPad+titleSize, "start", "title", title)
	return s
}

// text draws s at (x, y) anchored at anchor ("start", "middle", "end").
func (s *svg) text(x, y float64, anchor, class, text string) {
	fmt.Fprintf(&s.b, `<text x="%.1f" y="%.1f" text-anchor="%s" class="%s">%s</text>`, x, y, anchor, class, esc(text))
}

// label draws text shortened to maxLabelLen runes, the whole of it as its tooltip.
func (s *svg) label(x, y float64, anchor, class, text string) {
	short := shorten(text, maxLabelLen)
	if short == text {
		s.text(x, y, anchor, class, text)
		return
	}
	fmt.Fprintf(&s.b, `<text x="%.1f" y="%.1f" text-anchor="%s" class="%s"><title>%s</title>%s</text>`, x, y, anchor, class, esc(text), esc(short))
}

func (s *svg) rect(x, y, w, h float64, fill string) {
	fmt.Fprintf(&s.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`, x, y, max(w, 0), max(h, 0), fill)
}

func (s *svg) line(x1, y1, x2, y2 float64, class string) {
	fmt.Fprintf(&s.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="%s"/>`, x1, y1, x2, y2, class)
}

// html ends the chart.
func (s *svg) html() template.HTML {
	s.b.WriteString(`</svg>`)
	return template.HTML(s.b.String()) // #nosec: every text above went through esc
}

// esc escapes text for an SVG text node or attribute.
func esc(text string) string { return template.HTMLEscapeString(text) }

// shorten cuts text to n runes, marking the cut.
func shorten(text string, n int) string {
	if utf8.RuneCountInString(text) <= n {
		return text
	}
	r := []rune(text)
	return string(r[:n-1]) + "…"
}

// textWidth estimates the width of text at font size px.
func textWidth(text string, px float64) float64 {
	return float64(visibleLen(text)) * px * charWidth
}

// emptyChart is the sentence that stands for a chart with nothing to show.
func emptyChart(title, why string) template.HTML {
	return template.HTML(`<p class="empty"><strong>` + esc(title) + `:</strong> ` + esc(why) + `</p>`)
}

// legend draws the series' swatches from (x, y), left to right.
func (s *svg) legend(x, y float64, names []string) {
	for i, n := range names {
		s.rect(x, y-10, 12, 12, seriesColors[i%len(seriesColors)])
		s.text(x+17, y, "start", "small", n)
		x += 17 + textWidth(n, smallSize) + 18
	}
}

// niceScale is a round scale end at least x and its tick step: the step is 1, 2, 2.5
// or 5 × 10^n, at most five steps to the end (1 and 0.2 for x ≤ 0).
func niceScale(x float64) (end, step float64) {
	if x <= 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return 1, 0.2
	}
	raw := x / 5
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	step = 10 * p
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m*p >= raw*(1-1e-12) {
			step = m * p
			break
		}
	}
	n := math.Ceil(x/step - 1e-9)
	return n * step, step
}

// ticks are 0 to end by step.
func ticks(end, step float64) []float64 {
	var out []float64
	for i := 0; i <= 20; i++ {
		v := step * float64(i)
		if v > end*(1+1e-9) {
			break
		}
		out = append(out, v)
	}
	return out
}
