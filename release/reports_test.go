package release

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/job"
	"sanitizer/publish"
	"sanitizer/report"
)

// TestReportFormatOf: a report's format is its name's extension, .json or .html (.htm),
// in any case; any other name is bad input naming it.
func TestReportFormatOf(t *testing.T) {
	cases := []struct {
		path string
		want ReportFormat // 0: refused
	}{
		{"r.json", ReportJSON}, {"dir/R.JSON", ReportJSON}, {"r.html", ReportHTML}, {"r.htm", ReportHTML}, {"r.HTML", ReportHTML},
		{"r.csv", 0}, {"r", 0}, {"r.json.bak", 0}, {"r.txt", 0}, {"json", 0}, {"r.html/", 0},
	}
	for _, c := range cases {
		got, err := ReportFormatOf(c.path)
		if c.want == 0 {
			if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), c.path) {
				t.Errorf("%s: err = %v, want bad input naming it", c.path, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %v, %v; want %v", c.path, got, err, c.want)
		}
	}
}

// TestSeveralReports: a release (and a risk analysis) with several reports writes
// each in the format its name says, every JSON report paired with the release
// (output.digest, which check --report verifies), no temporary left; --force replaces
// them all with the new release's, and without it an existing one refuses the run.
func TestSeveralReports(t *testing.T) {
	cfg, in, dir := hospitalFixture(t, 600)
	out := filepath.Join(dir, "r.csv")
	reps := []string{filepath.Join(dir, "r.json"), filepath.Join(dir, "r.html"), filepath.Join(dir, "copy.json")}
	opt := job.Options{Input: in, Output: out, Reports: reps}
	for round, force := range []bool{false, true} {
		opt.Force = force
		if _, err := Release(context.Background(), cfg, opt); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		digest, err := publish.Digest(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range reps {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(p, ".html") {
				if !bytes.HasPrefix(data, []byte("<!DOCTYPE html>")) {
					t.Errorf("%s is not an HTML page: %.40q", p, data)
				}
				continue
			}
			var rep report.Report
			if err := json.Unmarshal(data, &rep); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if rep.Output.Digest != digest {
				t.Errorf("round %d: %s records output.digest %s, the release's is %s", round, p, rep.Output.Digest, digest)
			}
			if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out, Report: p}); err != nil {
				t.Errorf("round %d: check --report %s: %v", round, p, err)
			}
		}
		noTemporaries(t, dir)
		appendTo(t, in, "") // the same records, another input file: a new release, with new reports
	}
	opt.Force = false
	if _, err := Release(context.Background(), cfg, job.Options{Input: in, Output: filepath.Join(dir, "new.csv"), Reports: reps[1:2]}); !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), reps[1]) {
		t.Errorf("an existing report without --force: err = %v, want bad input naming it", err)
	}
	risk := []string{filepath.Join(dir, "risk.html"), filepath.Join(dir, "risk.json")}
	if _, err := Risk(context.Background(), cfg, job.Options{Input: in, Reports: risk}); err != nil {
		t.Fatal(err)
	}
	for _, p := range risk {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if html := bytes.HasPrefix(data, []byte("<!DOCTYPE html>")); html != strings.HasSuffix(p, ".html") || !html && !json.Valid(data) {
			t.Errorf("%s is not in the format its name says: %.40q", p, data)
		}
	}
	noTemporaries(t, dir)
}

// TestSeveralReportsRefused: any report of several that the run could not publish
// refuses the release (and the risk analysis) before anything is read, as bad input
// naming it, and nothing changes: two naming the same file (as written, or through
// another path), one naming the input, the configuration, a hierarchy file or the
// release, one whose name says no format.
func TestSeveralReportsRefused(t *testing.T) {
	root, cfg := destFixture(t)
	in, out := filepath.Join(root, "in.csv"), filepath.Join(root, "r.csv")
	if err := os.Symlink(root, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	ok := filepath.Join(root, "ok.json")
	cases := []struct {
		name    string
		reports []string
		want    string
	}{
		{"twice", []string{ok, filepath.Join(root, "r.html"), ok}, "same file"},
		{"twice, through a link", []string{ok, filepath.Join(root, "link", "ok.json")}, "same file"},
		{"twice, with ..", []string{ok, filepath.Join(root, "in", "..", "ok.json")}, "same file"},
		{"the input", []string{ok, in}, "the input"},
		{"the configuration", []string{filepath.Join(root, "conf", "c.yaml"), ok}, "the configuration"},
		{"a hierarchy file", []string{ok, filepath.Join(root, "conf", "h", "sex.csv")}, "hierarchy"},
		{"the release", []string{ok, out}, "or inside it"},
		{"no format", []string{ok, filepath.Join(root, "r.txt")}, ".json"},
		{"no extension", []string{filepath.Join(root, "report"), ok}, ".html"},
	}
	for _, c := range cases {
		for _, kind := range []string{"release", "risk"} {
			t.Run(c.name+"/"+kind, func(t *testing.T) {
				before := snapshot(t, root)
				opt := job.Options{Input: in, Output: out, Reports: c.reports, Force: true}
				var err error
				if kind == "release" {
					_, err = Release(context.Background(), cfg, opt)
				} else {
					if c.name != "the release" {
						opt.Output = "" // no release to measure
					}
					_, err = Risk(context.Background(), cfg, opt)
				}
				if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "--report") || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("err = %v, want bad input naming --report and %q", err, c.want)
				}
				if after := snapshot(t, root); !maps.Equal(after, before) {
					t.Errorf("the refused run changed %s", root)
				}
			})
		}
	}
}

// TestCheckReportNotAReleaseReport: check --report given anything but the JSON report
// a release wrote (its HTML report, a risk analysis, a table, an empty or truncated
// file, JSON of another shape) is bad input naming the file and the report it needs,
// never a JSON parser's message.
func TestCheckReportNotAReleaseReport(t *testing.T) {
	cfg, in, dir := hospitalFixture(t, 300)
	out, rep, page := filepath.Join(dir, "r.csv"), filepath.Join(dir, "r.json"), filepath.Join(dir, "r.html")
	risk := filepath.Join(dir, "risk.json")
	if _, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out, Reports: []string{rep, page}}); err != nil {
		t.Fatal(err)
	}
	if _, err := Risk(context.Background(), cfg, job.Options{Input: in, Report: risk}); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(rep)
	if err != nil {
		t.Fatal(err)
	}
	others := map[string][]byte{
		"empty.json":     nil,
		"truncated.json": good[:len(good)/2],
		"array.json":     []byte(`[1, 2]`),
		"object.json":    []byte(`{"tool": "other"}`),
		"string.json":    []byte(`"sanitize"`),
		"bom.html":       append([]byte("\ufeff \n"), []byte("<html></html>")...),
	}
	paths := []string{page, risk, in}
	for name, data := range others {
		p := filepath.Join(dir, name)
		writeTestFile(t, p, data)
		paths = append(paths, p)
	}
	for _, p := range paths {
		_, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out, Report: p})
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(msg, p) || !strings.Contains(msg, "--report R.json") || strings.Contains(msg, "invalid character") || strings.Contains(msg, "unexpected end") || strings.Contains(msg, "cannot unmarshal") {
			t.Errorf("check --report %s: err = %v, want bad input naming it and the JSON report check needs", filepath.Base(p), err)
		}
	}
	if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out, Report: rep}); err != nil {
		t.Errorf("check --report of the release's JSON report: %v", err)
	}
}

// noTemporaries fails the test if a temporary file of a run is left in dir.
func noTemporaries(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary %s left in %s", e.Name(), dir)
		}
	}
}

// FuzzReadReleaseReport: whatever a --report file holds, check's reading of it either
// returns a release's report or refuses it as bad input naming the file, never
// panics.
func FuzzReadReleaseReport(f *testing.F) {
	f.Add([]byte(`{"tool": "sanitize", "config_digest": "sha256:00", "algorithm": "optimal", "output": {"digest": "sha256:00"}}`))
	f.Add([]byte(`<!DOCTYPE html><html></html>`))
	f.Add([]byte(`{"tool": "sanitize", "risk": {}}`))
	f.Add([]byte(`[`))
	path := filepath.Join(f.TempDir(), "r.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		rep, err := readReleaseReport(path)
		switch {
		case err != nil && (!errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), path)):
			t.Fatalf("err = %v, want bad input naming %s", err, path)
		case err == nil && (rep == nil || rep.Algorithm != "optimal" && rep.Algorithm != "mondrian"):
			t.Fatalf("accepted %q as a release's report", data)
		}
	})
}
