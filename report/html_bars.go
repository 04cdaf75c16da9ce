package report

import (
	"html/template"
	"math"
)

// minPlot is the narrowest a bar chart's plot may be (px).
const minPlot = 200

// barChart is a horizontal bar chart: one row per category, one or more bars per row
// (one per series), each labelled with its value, on one scale from 0 to Max.
type barChart struct {
	Title  string
	Axis   string   // what the scale measures
	Legend []string // the series' names; nil when each row names its own bar
	Rows   []barRow
	Max    float64              // the scale's right end; 0: a round number above the largest bar
	Tick   func(float64) string // a tick's label (nil: fmtNumber)
	Refs   []refLine            // reference lines across the plot
	Empty  string               // the sentence that stands for a chart with no rows
	// Width is the chart's width (0: chartWidth); LabelWidth and TextWidth, when set,
	// fix the room for the row labels and the value labels, so that charts shown side
	// by side share their scale's position; RefRow keeps a row for reference labels
	// even without them, for the same reason.
	Width                 int
	LabelWidth, TextWidth float64
	RefRow                bool
}

// barRow is one category of a bar chart.
type barRow struct {
	Label string
	Bars  []bar
}

// bar is one bar: its value, its label, and its series (its colour).
type bar struct {
	Value  float64
	Text   string
	Series int
}

// refLine is a reference value drawn across a chart.
type refLine struct {
	At    float64
	Label string
}

// html draws the chart, or says why there is none.
func (c barChart) html() template.HTML {
	if len(c.Rows) == 0 {
		return emptyChart(c.Title, c.Empty)
	}
	end, step := c.scale()
	tick := c.Tick
	if tick == nil {
		tick = fmtNumber
	}
	width := float64(cmpOr(c.Width, chartWidth))
	labelW, textW := c.margins()
	plotX := chartPad + labelW
	plotW := width - plotX - textW - chartPad
	if plotW < minPlot { // long labels: a wider chart rather than a bar too short to read
		plotW, width = minPlot, plotX+minPlot+textW+chartPad
	}
	top := float64(chartPad + titleSize + 10)
	if len(c.Legend) > 0 {
		top += 22
	}
	if len(c.Refs) > 0 || c.RefRow {
		top += 18
	}
	plotH := c.plotHeight()
	s := newSVG(int(width), int(top+plotH+50), c.Title)
	if len(c.Legend) > 0 {
		s.legend(chartPad, float64(chartPad+titleSize+28), c.Legend)
	}
	x := func(v float64) float64 { return plotX + plotW*math.Max(0, math.Min(v, end))/end }
	for _, t := range ticks(end, step) {
		s.line(x(t), top, x(t), top+plotH, "grid")
		s.text(x(t), top+plotH+17, "middle", "small", tick(t))
	}
	for i, r := range c.Refs {
		lineTop, lx, anchor := top, x(r.At), "middle"
		if len(c.Refs) > 1 { // the labels either side of their lines
			lineTop = top - 14
			lx, anchor = lx-4, "end"
			if i%2 == 1 {
				lx, anchor = lx+8, "start"
			}
		}
		s.line(x(r.At), lineTop, x(r.At), top+plotH, "ref")
		s.text(lx, top-6, anchor, "reflabel", r.Label)
	}
	s.line(plotX, top, plotX, top+plotH, "axis")
	s.line(plotX, top+plotH, plotX+plotW, top+plotH, "axis")
	s.text(centred(plotX+plotW/2, c.Axis, width), top+plotH+40, "middle", "axislabel", c.Axis)
	c.bars(s, x, plotX, top)
	return s.html()
}

// bars draws the rows from y = top on, x placing a value on the scale.
func (c barChart) bars(s *svg, x func(float64) float64, plotX, top float64) {
	y := top + rowGap/2
	for _, r := range c.Rows {
		rowH := float64(len(r.Bars)) * (barHeight + barGap)
		s.label(plotX-8, y+rowH/2+3, "end", "label", r.Label)
		for _, b := range r.Bars {
			if math.IsNaN(b.Value) || math.IsInf(b.Value, 0) {
				b.Value = 0
			}
			w := x(b.Value) - plotX
			if b.Value > 0 && w < 1 {
				w = 1 // a share too small to draw is still there
			}
			s.rect(plotX, y, w, barHeight, seriesColors[b.Series%len(seriesColors)])
			s.rect(plotX+w+2, y+1, textWidth(b.Text, smallSize)+6, barHeight-2, "#fff") // hides a line behind the label
			s.text(plotX+w+5, y+barHeight-5, "start", "value", b.Text)
			y += barHeight + barGap
		}
		y += rowGap
	}
}

// centred is the centre of text near x that keeps it inside a chart width wide.
func centred(x float64, text string, width float64) float64 {
	half := textWidth(text, smallSize) / 2
	return math.Max(chartPad+half, math.Min(x, width-chartPad-half))
}

// cmpOr is v, or def when v is 0.
func cmpOr(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// scale is the scale's right end and tick step.
func (c barChart) scale() (float64, float64) {
	if c.Max > 0 {
		_, step := niceScale(c.Max)
		return c.Max, step
	}
	m := 0.0
	for _, r := range c.Rows {
		for _, b := range r.Bars {
			m = math.Max(m, b.Value)
		}
	}
	for _, r := range c.Refs {
		m = math.Max(m, r.At)
	}
	return niceScale(m)
}

// margins are the widths left of the plot (the row labels) and right of it (room for
// the longest value label past a full-length bar).
func (c barChart) margins() (label, text float64) {
	label, text = c.labelWidth(), c.textWidth()
	if c.LabelWidth > 0 {
		label = c.LabelWidth
	}
	if c.TextWidth > 0 {
		text = c.TextWidth
	}
	return label, text
}

// labelWidth is the room the row labels need.
func (c barChart) labelWidth() float64 {
	w := 0.0
	for _, r := range c.Rows {
		w = math.Max(w, textWidth(shorten(r.Label, maxLabelLen), labelSize))
	}
	return w + 12
}

// textWidth is the room the value labels need.
func (c barChart) textWidth() float64 {
	w := 0.0
	for _, r := range c.Rows {
		for _, b := range r.Bars {
			w = math.Max(w, textWidth(b.Text, smallSize))
		}
	}
	return w + 12
}

// plotHeight is the height of the rows.
func (c barChart) plotHeight() float64 {
	h := 0.0
	for _, r := range c.Rows {
		h += float64(len(r.Bars))*(barHeight+barGap) + rowGap
	}
	return h
}

// figure is the chart and its caption; a chart with nothing to show is its sentence
// alone.
func (c barChart) figure(caption string) figure {
	if len(c.Rows) == 0 {
		caption = ""
	}
	return figure{Chart: c.html(), Caption: caption}
}

// alignCharts gives charts shown side by side the same room for labels, so that their
// scales line up.
func alignCharts(cs []barChart) {
	label, text := 0.0, 0.0
	for _, c := range cs {
		label, text = math.Max(label, c.labelWidth()), math.Max(text, c.textWidth())
	}
	for i := range cs {
		cs[i].LabelWidth, cs[i].TextWidth, cs[i].RefRow = label, text, true
	}
}
