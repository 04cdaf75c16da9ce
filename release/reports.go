package release

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sanitizer/fault"
	"sanitizer/internal/readfile"
	"sanitizer/publish"
	"sanitizer/report"
	"sanitizer/schema"
	"sanitizer/table"
)

// ReportFormat is the format a report is written in, which its file name's extension
// says.
type ReportFormat int

// The report formats.
const (
	ReportJSON ReportFormat = iota + 1 // .json: what check --report reads, and programs
	ReportHTML                         // .html or .htm: a self-contained page, for the custodian
)

// ReportFormatOf is the format of the report at path: JSON for a name ending in
// .json, HTML for .html or .htm (in any case); any other name is bad input naming it.
func ReportFormatOf(path string) (ReportFormat, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		return ReportJSON, nil
	case ".html", ".htm":
		return ReportHTML, nil
	}
	return 0, fault.BadInput("--report: %s: a report's name ends in .json (JSON, which check --report reads) or .html (a page for people), which says its format", path)
}

// checkReports refuses, before anything is read, any report of paths the run could
// not publish: one that would overwrite what the run reads (checkDestination) or its
// other destination other (what: "the output", "the release"; "": none), one whose
// name says no format (ReportFormatOf), two that name the same file, and one that
// exists without force.
func checkReports(cfg *schema.Config, paths []string, force bool, in, what, other string) error {
	for i, p := range paths {
		if err := checkDestination(cfg, in, "--report", p, false); err != nil {
			return err
		}
		if err := checkNotIn("--report", p, what, other); err != nil {
			return err
		}
		for _, q := range paths[:i] {
			if p == q || table.SameFile(p, q) {
				return fault.BadInput("--report: %s and %s name the same file: give each report a name of its own", q, p)
			}
		}
		if _, err := ReportFormatOf(p); err != nil {
			return err
		}
		if err := publish.CheckFile("--report", p, force); err != nil {
			return err
		}
	}
	return nil
}

// Reports are a run's reports, each written to a temporary file beside its path and
// held there until Publish puts it in place or Discard removes it.
type Reports struct {
	files []*publish.File
	paths []string
}

// prepareReports writes a report to a temporary file beside each of paths, in the
// format its name says, by write; an error discards those written before it.
func prepareReports(paths []string, write func(f *os.File, format ReportFormat) error) (*Reports, error) {
	r := &Reports{paths: paths}
	for _, p := range paths {
		format, err := ReportFormatOf(p)
		if err != nil {
			r.Discard()
			return nil, err
		}
		f, err := publish.Prepare(p, nil, func(f *os.File) error { return write(f, format) })
		if err != nil {
			r.Discard()
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		r.files = append(r.files, f)
	}
	return r, nil
}

// prepareReleaseReports writes a release's report rep to a temporary file beside each of
// paths (HTML when the name ends in .html or .htm, JSON when it ends in .json), held
// until the caller publishes them (Reports.Publish) or discards them.
func prepareReleaseReports(paths []string, rep *report.Report) (*Reports, error) {
	return prepareReports(paths, func(f *os.File, format ReportFormat) error {
		if format == ReportHTML {
			return report.WriteReleaseHTML(f, rep)
		}
		return report.WriteJSON(f, rep)
	})
}

// Len is the number of reports held.
func (r *Reports) Len() int {
	if r == nil {
		return 0
	}
	return len(r.paths)
}

// RemoveReplaced removes every report the run replaces (force): what a release does
// before it puts the new release in place, so that a kill between the steps leaves
// the new release without a report, never beside an old one.
func (r *Reports) RemoveReplaced() error {
	for _, p := range r.paths {
		if err := publish.Remove(p); err != nil {
			return fmt.Errorf("--report: removing the report %s it replaces: %w", p, err)
		}
	}
	return nil
}

// Paths lists the reports' paths, for a message.
func (r *Reports) Paths() string {
	return strings.Join(r.paths, ", ")
}

// Publish puts every report in place (replacing an existing file only with force);
// the first error stops it, and Discard removes those not published.
func (r *Reports) Publish(force bool) error {
	for i, f := range r.files {
		if err := f.Publish(force); err != nil {
			return fmt.Errorf("--report: %s: %w", r.paths[i], err)
		}
	}
	return nil
}

// Discard removes every report not published yet.
func (r *Reports) Discard() {
	if r == nil {
		return
	}
	for _, f := range r.files {
		f.Discard()
	}
}

// readReleaseReport reads the JSON report a release wrote, for check --report: a file
// that is not one (an HTML report, a risk analysis, any other file) is bad input
// naming it and saying which report check needs.
func readReleaseReport(path string) (*report.Report, error) {
	data, err := readfile.Read(path, maxReportBytes)
	if err != nil {
		return nil, fault.BadInput("--report: %w", err)
	}
	notOne := func(what string) error {
		return fault.BadInput("--report: %s is %s, not the JSON report of a release: check needs the JSON report the release wrote (sanitize release --report R.json)", path, what)
	}
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\ufeff")), " \t\r\n")
	if bytes.HasPrefix(trimmed, []byte("<")) {
		return nil, notOne("an HTML page (or other markup)")
	}
	var rep report.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return nil, notOne(fmt.Sprintf("not JSON (invalid at byte %d)", syntax.Offset))
		}
		return nil, notOne("a JSON document of another shape")
	}
	if rep.Algorithm != schema.Optimal && rep.Algorithm != schema.Mondrian { // what every release's report records
		return nil, notOne("a JSON document that records no release's algorithm (a risk analysis, or another file)")
	}
	return &rep, nil
}
