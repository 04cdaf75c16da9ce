package report

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"sync"
	"time"
)

// The HTML reports: one self-contained page each (inline CSS and SVG, no script, no
// link, nothing loaded), written for the data custodian who signs a release off. Each
// page is rendered from one view (html_release.go, html_risk.go, html_manifest.go)
// by the templates of its sections, inside the layout below.

// WriteReleaseHTML writes the report of a release as one self-contained HTML page:
// what was released under which models, the risk before and after, what was
// generalized, the utility, what the verifier found, and the digests.
func WriteReleaseHTML(w io.Writer, r *Report) error {
	if r == nil {
		return errors.New("html report: no report")
	}
	return render(w, "release", releasePage(isolateReport(r)))
}

// WriteRiskHTML writes a risk analysis as one self-contained HTML page: the input's
// re-identification risk, its release's when one was given, and how much each
// quasi-identifier sets the records apart.
func WriteRiskHTML(w io.Writer, a *RiskAnalysis) error {
	if a == nil {
		return errors.New("html risk report: no analysis")
	}
	return render(w, "analysis", riskPage(isolateAnalysis(a)))
}

// WriteManifestHTML writes a DP run's manifest as one self-contained HTML page: each
// output's budget, mechanism and noise, and the dataset's budget spent over time.
func WriteManifestHTML(w io.Writer, m *Manifest) error {
	if m == nil {
		return errors.New("html manifest: no manifest")
	}
	return render(w, "manifest", manifestPage(isolateManifest(m)))
}

// render executes the page template name on view into a buffer, makes its isolates
// <bdi> elements and shows any other bidi control (isolatePage), then writes it: a
// failing template writes nothing. The view's user-supplied strings are isolated
// (isolate).
func render(w io.Writer, name string, view any) error {
	t, err := templates()
	if err != nil {
		return fmt.Errorf("html %s: %w", name, err)
	}
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, name, view); err != nil {
		return fmt.Errorf("html %s: %w", name, err)
	}
	if _, err := io.WriteString(w, isolatePage(b.String())); err != nil {
		return fmt.Errorf("html %s: %w", name, err)
	}
	return nil
}

// templates are every page's and section's templates, parsed once.
var templates = sync.OnceValues(func() (*template.Template, error) {
	t := template.New("report").Funcs(template.FuncMap{
		"count":     func(n int) string { return fmtCount(int64(n)) },
		"pct":       fmtPct,
		"risk":      fmtRisk,
		"g":         fmtG,
		"num":       fmtNumber,
		"scale":     fmtScale,
		"levelText": levelText,
	})
	for _, src := range []string{layoutHTML, riskHTML, releaseHTML, analysisHTML, manifestHTML} {
		if _, err := t.Parse(src); err != nil {
			return nil, err
		}
	}
	return t, nil
})

// figure is a chart and the sentence that says what it shows.
type figure struct {
	Chart   template.HTML
	Caption string
}

// digest is a file and its SHA-256.
type digest struct{ File, Sum string }

// provenance is what every page ends with: the tool, the configuration and
// hierarchies it ran with, and when.
type provenance struct {
	Tool, Version, Config string
	Hierarchies           []digest
	Created               string
}

// newProvenance is a page's provenance; created "" says the result carries no time,
// and the page gives the time it was written instead.
func newProvenance(tool, version, config string, hier map[string]string, created string) provenance {
	p := provenance{Tool: tool, Version: version, Config: config, Created: created}
	if created == "" {
		p.Created = time.Now().UTC().Format(time.RFC3339) + " (when this page was written)"
	}
	for _, f := range slices.Sorted(maps.Keys(hier)) {
		p.Hierarchies = append(p.Hierarchies, digest{f, hier[f]})
	}
	return p
}

const layoutHTML = `
{{define "head"}}<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.}}</title>
<style>
:root { --ink: #1d2330; --muted: #5a6272; --rule: #d5d9e0; --ok: #1e6b34; --bad: #a4161a; --band: #f4f6f9; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #fff; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 32px 48px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 36px 0 10px; padding-top: 12px; border-top: 2px solid var(--rule); }
h3 { font-size: 16px; margin: 22px 0 6px; }
p { margin: 6px 0 10px; max-width: 80ch; }
.sub { color: var(--muted); margin-top: 0; }
.lead { font-size: 17px; }
ul.models { padding-left: 20px; max-width: 84ch; }
ul.models li { margin: 4px 0; }
.warn { border-left: 5px solid var(--bad); background: #fdf0f0; padding: 8px 14px; font-weight: 600; max-width: 84ch; }
.note { color: var(--muted); font-size: 14px; }
.persons { border-left: 5px solid #27508f; background: var(--band); padding: 4px 16px 6px; margin: 12px 0 16px; max-width: 84ch; break-inside: avoid; page-break-inside: avoid; }
.persons h3 { margin-top: 8px; }
.persons table { background: #fff; }
.empty { background: var(--band); padding: 10px 14px; border-radius: 4px; max-width: 84ch; }
table { border-collapse: collapse; margin: 8px 0 14px; font-size: 14px; }
th, td { border-bottom: 1px solid var(--rule); padding: 5px 12px 5px 0; text-align: left; vertical-align: top; }
th { font-weight: 600; border-bottom: 2px solid var(--ink); }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.why { color: var(--muted); max-width: 56ch; }
table.glance { font-size: 15px; margin: 12px 0 18px; }
table.glance td, table.glance th { padding-right: 28px; }
code, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "Liberation Mono", monospace; font-size: 13px; }
code.ex { background: var(--band); padding: 1px 5px; border-radius: 3px; margin-right: 4px; white-space: nowrap; }
.digest { word-break: break-all; }
.holds { color: var(--ok); font-weight: 600; }
.fails { color: var(--bad); font-weight: 700; }
.figs { display: grid; grid-template-columns: repeat(auto-fill, minmax(540px, 1fr)); gap: 6px 28px; }
figure { margin: 10px 0 16px; break-inside: avoid; page-break-inside: avoid; }
figcaption { font-size: 14px; color: var(--muted); max-width: 640px; margin-top: 2px; }
svg.chart { display: block; max-width: 100%; height: auto; background: #fff; }
svg.chart text { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; fill: var(--ink); }
svg.chart .title { font-size: 15px; font-weight: 700; }
svg.chart .label { font-size: 13px; }
svg.chart .small, svg.chart .value { font-size: 12px; }
svg.chart .value { font-variant-numeric: tabular-nums; paint-order: stroke; stroke: #fff; stroke-width: 3px; stroke-linejoin: round; }
svg.chart .axislabel { font-size: 12px; fill: var(--muted); }
svg.chart .reflabel { font-size: 12px; font-weight: 600; fill: var(--bad); }
svg.chart .grid { stroke: #e3e6eb; stroke-width: 1; }
svg.chart .axis { stroke: #555; stroke-width: 1; }
svg.chart .ref { stroke: var(--bad); stroke-width: 1.5; stroke-dasharray: 5 3; }
svg.chart .limit { stroke: var(--bad); stroke-width: 2; stroke-dasharray: 7 4; }
svg.chart .step { fill: none; stroke: #27508f; stroke-width: 2.5; }
svg.chart .dot { fill: #27508f; }
footer { margin-top: 40px; color: var(--muted); font-size: 13px; }
@media print {
  body { font-size: 11pt; }
  main { max-width: none; padding: 0; }
  h2 { break-after: avoid; page-break-after: avoid; }
  .figs { display: block; }
  table, figure { break-inside: avoid; page-break-inside: avoid; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
@page { margin: 16mm; }
</style>
</head>
<body>
<main>
{{end}}

{{define "provenance"}}
<h2>Configuration, hierarchies and tool</h2>
<table>
<tr><th>Item</th><th>Value</th></tr>
<tr><td>Tool</td><td>{{.Tool}} {{.Version}}</td></tr>
<tr><td>Created (UTC)</td><td>{{.Created}}</td></tr>
<tr><td>Configuration digest</td><td class="mono digest">{{.Config}}</td></tr>
{{range .Hierarchies}}<tr><td>Hierarchy <code>{{.File}}</code></td><td class="mono digest">{{.Sum}}</td></tr>
{{end}}</table>
<p class="note">A digest is the SHA-256 of the file: the same digest means the same configuration or hierarchy byte for byte, so a later run can be matched to this one.</p>
{{end}}

{{define "foot"}}
<footer>Written by {{.Tool}} {{.Version}}. This page is self-contained: it loads nothing and runs no script, so it can be archived with the release and read offline.</footer>
</main>
</body>
</html>
{{end}}
`
