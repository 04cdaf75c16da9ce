package report

import (
	"fmt"
	"html/template"
	"math"
	"strings"
	"time"
)

// stepChart is a cumulative step chart: a total that rises by each spend, at the
// spend's time, against a limit drawn across it.
type stepChart struct {
	Title  string
	Axis   string    // what the vertical scale measures
	Times  []string  // RFC 3339, oldest first
	Spends []float64 // one per time
	Limit  float64   // 0: none
	Fmt    func(float64) string
	Empty  string
}

const stepHeight = 300

// html draws the chart, or says why there is none.
func (c stepChart) html() template.HTML {
	if len(c.Spends) == 0 || len(c.Times) != len(c.Spends) {
		return emptyChart(c.Title, c.Empty)
	}
	cum := make([]float64, len(c.Spends))
	total := 0.0
	for i, v := range c.Spends {
		total += v
		cum[i] = total
	}
	end, step := niceScale(math.Max(total, c.Limit) * 1.05)
	const right, width = 130.0, gridWidth
	tickW := 0.0
	for _, t := range ticks(end, step) {
		tickW = math.Max(tickW, textWidth(c.Fmt(t), smallSize))
	}
	left := 34 + tickW + 10 // the vertical axis's label, its ticks' labels, a gap
	top := float64(chartPad + titleSize + 22)
	plotW := width - left - right
	plotH := stepHeight - top - 58
	y := func(v float64) float64 { return top + plotH - plotH*math.Min(v, end)/end }
	xs, labels := c.positions(plotW)
	s := newSVG(width, stepHeight, c.Title)
	for _, t := range ticks(end, step) {
		s.line(left, y(t), left+plotW, y(t), "grid")
		s.text(left-6, y(t)+4, "end", "small", c.Fmt(t))
	}
	s.line(left, top, left, top+plotH, "axis")
	s.line(left, top+plotH, left+plotW, top+plotH, "axis")
	for _, l := range labels {
		s.text(left+l.x, top+plotH+20, "middle", "small", l.text)
	}
	s.text(left+plotW/2, top+plotH+42, "middle", "axislabel", "time of the runs (UTC)")
	fmt.Fprintf(&s.b, `<text x="16" y="%.1f" text-anchor="middle" class="axislabel" transform="rotate(-90 16 %.1f)">%s</text>`,
		top+plotH/2, top+plotH/2, esc(c.Axis))
	if c.Limit > 0 {
		s.line(left, y(c.Limit), left+plotW, y(c.Limit), "limit")
		s.text(left+plotW+6, y(c.Limit)+4, "start", "reflabel", "total "+c.Fmt(c.Limit))
	}
	var path strings.Builder
	fmt.Fprintf(&path, "M%.1f %.1f", left, y(0))
	prev := 0.0
	for i, x := range xs {
		fmt.Fprintf(&path, " H%.1f V%.1f", left+x, y(cum[i]))
		prev = cum[i]
	}
	fmt.Fprintf(&path, " H%.1f", left+plotW)
	fmt.Fprintf(&s.b, `<path d="%s" class="step"/>`, path.String())
	for i, x := range xs {
		fmt.Fprintf(&s.b, `<circle cx="%.1f" cy="%.1f" r="3.5" class="dot"/>`, left+x, y(cum[i]))
	}
	spent := "spent " + c.Fmt(prev)
	if c.Limit > 0 && math.Abs(y(prev)-y(c.Limit)) < 16 {
		s.text(left+plotW+6, y(c.Limit)+20, "start", "value", spent)
	} else {
		s.text(left+plotW+6, y(prev)+4, "start", "value", spent)
	}
	return s.html()
}

// tickLabel is a label of the time axis at x.
type tickLabel struct {
	x    float64
	text string
}

// positions are the spends' horizontal positions in a plot w wide, in proportion to
// their times (evenly spaced, in order, when the times do not parse or coincide), and
// the axis's labels.
func (c stepChart) positions(w float64) ([]float64, []tickLabel) {
	times := make([]time.Time, len(c.Times))
	ok := true
	for i, s := range c.Times {
		t, err := time.Parse(time.RFC3339, s)
		times[i], ok = t, ok && err == nil
	}
	span := time.Duration(0)
	if ok {
		span = times[len(times)-1].Sub(times[0])
	}
	xs := make([]float64, len(times))
	inner := w * 0.9
	if !ok || span <= 0 {
		var labels []tickLabel
		every := max(1, len(times)/6)
		for i := range xs {
			xs[i] = w * 0.05
			if len(xs) > 1 {
				xs[i] += inner * float64(i) / float64(len(xs)-1)
			}
			if i%every == 0 {
				labels = append(labels, tickLabel{xs[i], fmt.Sprintf("run %d", i+1)})
			}
		}
		return xs, labels
	}
	layout := "2006-01-02"
	if span < 72*time.Hour {
		layout = "01-02 15:04"
	}
	for i, t := range times {
		xs[i] = w*0.05 + inner*float64(t.Sub(times[0]))/float64(span)
	}
	var labels []tickLabel
	for i := range 4 {
		t := times[0].Add(time.Duration(float64(span) * float64(i) / 3))
		labels = append(labels, tickLabel{w*0.05 + inner*float64(i)/3, t.UTC().Format(layout)})
	}
	return xs, labels
}
