package release

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/generalize"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/publish"
	"sanitizer/report"
	"sanitizer/schema"
	"sanitizer/table"
	"sanitizer/verify"
)

// releaseRows reads a written release (any format) as its header and records.
func releaseRows(t *testing.T, cfg *schema.Config, path, format string) ([]string, [][]string) {
	t.Helper()
	src, err := table.Open(path, schema.Format(format), cfg.Output.CSV, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var header []string
	for _, c := range src.Columns() {
		header = append(header, c.Name)
	}
	r := readRecords(context.Background(), src)
	defer r.Close()
	var rows [][]string
	for {
		rec, err := r.Read()
		if err != nil {
			break
		}
		rows = append(rows, slices.Clone(rec))
	}
	return header, rows
}

// writeReleaseRows writes header and rows as a release of cfg in format, with the
// given key-value metadata (Parquet, Arrow).
func writeReleaseRows(t *testing.T, cfg *schema.Config, in, path, format string, header []string, rows [][]string, meta map[string]string) {
	t.Helper()
	src, p, err := openInput(cfg, in, path, "csv")
	if err != nil {
		t.Fatal(err)
	}
	src.Close()
	if !slices.Equal(p.ReleaseHeader(), header) {
		t.Fatalf("release header %q, the plan's %q", header, p.ReleaseHeader())
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := table.NewSink(f, schema.Format(format), cfg.Output.CSV, p.OutColumns(), meta)
	if err != nil {
		t.Fatal(err)
	}
	var fields []string
	for _, r := range rows {
		fields = append(fields, r...)
	}
	if len(rows) > 0 {
		if err := s.Write(fields, nil, len(rows)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Finish(); err != nil {
		t.Fatal(err)
	}
}

// classesOf groups the release's records by their quasi-identifier values: per class
// key, the indexes of its records.
func classesOf(header []string, rows [][]string, quasi []string) map[string][]int {
	var pos []int
	for _, q := range quasi {
		pos = append(pos, slices.Index(header, q))
	}
	out := map[string][]int{}
	for i, r := range rows {
		var key []string
		for _, p := range pos {
			key = append(key, r[p])
		}
		k := strings.Join(key, "\x00")
		out[k] = append(out[k], i)
	}
	return out
}

// without is rows less the records at drop.
func without(rows [][]string, drop []int) [][]string {
	var out [][]string
	for i, r := range rows {
		if !slices.Contains(drop, i) {
			out = append(out, r)
		}
	}
	return out
}

// suppressedMeta is meta (nil for none) recording n records suppressed, as a tamperer
// who deletes records would edit it.
func suppressedMeta(meta map[string]string, n int) map[string]string {
	if meta == nil {
		return nil
	}
	m := map[string]string{}
	for k, v := range meta {
		m[k] = v
	}
	m["sanitize.suppressed"] = strconv.Itoa(n)
	return m
}

// TestCheckMissingRecords: a release is tampered with by deleting records that its
// models do not require suppressed (one record of a published class, a whole published
// class, a record of a Mondrian release) or by editing its recorded parameters; Check
// must find each one (fault.ErrUnattainable), while the untampered release passes.
// Every deletion keeps the smallest class at k or above and stays within the
// suppression limit, so that only the missing-records check can catch it.
func TestCheckMissingRecords(t *testing.T) {
	modelsOnly(t)
	cfg0, in, _ := hospitalFixture(t, 5000)
	raw, err := os.ReadFile(cfg0.File)
	if err != nil {
		t.Fatal(err)
	}
	quasi := []string{"age", "sex", "zip", "admitted"}
	type tamper func(t *testing.T, header []string, rows [][]string, meta map[string]string) ([][]string, map[string]string)
	// largestClass deletes one record of the largest class.
	oneRecord := func(t *testing.T, header []string, rows [][]string, meta map[string]string) ([][]string, map[string]string) {
		var big []int
		for _, c := range classesOf(header, rows, quasi) {
			if len(c) > len(big) {
				big = c
			}
		}
		if len(big) <= cfg0.Privacy.K {
			t.Fatalf("no class above k")
		}
		return without(rows, big[:1]), suppressedMeta(meta, 5000-len(rows)+1)
	}
	wholeClass := func(t *testing.T, header []string, rows [][]string, meta map[string]string) ([][]string, map[string]string) {
		// the smallest class: it fits within the suppression limit
		var small []int
		for _, c := range classesOf(header, rows, quasi) {
			if small == nil || len(c) < len(small) {
				small = c
			}
		}
		if 5000-len(rows)+len(small) > maxSuppressed(0.05, 5000) {
			t.Skip("the smallest class does not fit within the suppression limit")
		}
		return without(rows, small), suppressedMeta(meta, 5000-len(rows)+len(small))
	}
	setMeta := func(key, value string) tamper {
		return func(t *testing.T, header []string, rows [][]string, meta map[string]string) ([][]string, map[string]string) {
			if _, ok := meta[key]; !ok {
				t.Fatalf("the release has no metadata %s", key)
			}
			m := map[string]string{}
			for k, v := range meta {
				m[k] = v
			}
			m[key] = value
			return rows, m
		}
	}
	// release writes the release of a format and models once: the cases that tamper
	// with it read it and write their copy elsewhere.
	type released struct {
		cfg *schema.Config
		out string
		rep *report.Report
	}
	releases, dir := map[[2]string]released{}, t.TempDir()
	release := func(t *testing.T, format, config string) (*schema.Config, string, *report.Report) {
		t.Helper()
		if r, ok := releases[[2]string{format, config}]; ok {
			return r.cfg, r.out, r.rep
		}
		text := testfiles.Replace(t, string(raw), "output: {format: csv}", "output: {format: "+format+"}")
		switch config {
		case "":
		case "mondrian":
			text = testfiles.Replace(t, text, "search: {algorithm: optimal, metric: loss}", "search: {algorithm: mondrian, metric: loss}")
		default:
			text = testfiles.Replace(t, text, "privacy: {k: 5, suppression: 0.05}", config)
		}
		name := filepath.Join(dir, strconv.Itoa(len(releases)))
		if err := os.WriteFile(name+".yaml", []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := schema.Load(name + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		out := name + "." + format
		rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
		if err != nil {
			t.Fatal(err)
		}
		releases[[2]string{format, config}] = released{cfg, out, rep}
		return cfg, out, rep
	}
	// With these models the node suppresses classes that meet k but fail l (10 records
	// more than k alone) or t (every class suppressed has at least 17 records).
	lModel := "privacy:\n  k: 5\n  suppression: 0.05\n  l-diversity: {column: diagnosis, variant: distinct, l: 4}"
	tModel := "privacy:\n  k: 5\n  suppression: 0.05\n  t-closeness: {column: diagnosis, t: 0.5}"
	for _, tc := range []struct {
		name, format, config string
		tamper               tamper // nil: untampered, must pass
		says                 string // a part of the violation ("": any)
	}{
		{"untampered csv", "csv", "", nil, ""},
		{"untampered parquet", "parquet", "", nil, ""},
		{"untampered arrow", "arrow", "", nil, ""},
		{"untampered l", "csv", lModel, nil, ""},
		{"untampered t", "parquet", tModel, nil, ""},
		{"untampered mondrian", "csv", "mondrian", nil, ""},
		{"one record deleted", "csv", "", oneRecord, ""},
		{"one record deleted parquet", "parquet", "", oneRecord, ""},
		{"whole class deleted", "csv", "", wholeClass, ""},
		{"whole class deleted arrow", "arrow", "", wholeClass, ""},
		{"one record deleted, l", "csv", lModel, oneRecord, ""},
		{"whole class deleted, l", "csv", lModel, wholeClass, ""},
		{"one record deleted, t", "parquet", tModel, oneRecord, ""},
		{"whole class deleted, t", "csv", tModel, wholeClass, ""},
		{"one record deleted mondrian", "csv", "mondrian", oneRecord, ""},
		{"sanitize.suppressed edited", "parquet", "", setMeta("sanitize.suppressed", "0"), ""},
		{"sanitize.k edited", "parquet", "", setMeta("sanitize.k", "50"), ""},
		{"sanitize.max_suppressed edited", "arrow", "", setMeta("sanitize.max_suppressed", "4999"), ""},
		{"sanitize.suppression_limit edited", "parquet", "", setMeta("sanitize.suppression_limit", "0.5"), ""},
		{"sanitize.node edited", "parquet", "", setMeta("sanitize.node", `[{"column":"age","level":0,"levels":5},{"column":"sex","level":0,"levels":2},{"column":"zip","level":0,"levels":6},{"column":"admitted","level":0,"levels":5}]`), "does not write for any input value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, out, rep := release(t, tc.format, tc.config)
			if tc.tamper == nil {
				if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
					t.Fatalf("check of the untampered release (%d suppressed): %v", rep.Suppressed, err)
				}
				t.Logf("node %v: %d suppressed", nodeOf(rep), rep.Suppressed)
				return
			}
			header, rows := releaseRows(t, cfg, out, tc.format)
			var meta map[string]string
			if tc.format == "parquet" {
				meta = testfiles.ParquetMetadata(t, out)
			} else if tc.format == "arrow" {
				_, md := readArrowIPC(t, out, false)
				meta = map[string]string{}
				for i, k := range md.Keys() {
					meta[k] = md.Values()[i]
				}
			}
			rows, meta = tc.tamper(t, header, rows, meta)
			tampered := filepath.Join(t.TempDir(), "tampered."+tc.format)
			writeReleaseRows(t, cfg, in, tampered, tc.format, header, rows, meta)
			m, err := Check(context.Background(), cfg, job.Options{Input: in, Output: tampered})
			if !errors.Is(err, fault.ErrUnattainable) {
				t.Fatalf("check of the tampered release (%d of %d records, measured %+v): %v, want a violation", len(rows), 5000, m, err)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("check of the tampered release: %v, want a violation saying %q", err, tc.says)
			}
			t.Logf("%v", err)
		})
	}
}

// TestIntervalLabelsAgree: the verifier's labels of the interval hierarchy (which the
// missing-records check groups the input by) are the builder's, value for value and
// level for level, bounds and float rounding at the cells' edges included.
func TestIntervalLabelsAgree(t *testing.T) {
	for _, tc := range []struct {
		typ    schema.Type
		widths []float64
		values []string
	}{
		{schema.Integer, []float64{5, 10, 20}, []string{"0", "4", "5", "-1", "-5", "-6", "19", "20", "119", "-9223372036854775808", "9223372036854775807"}},
		{schema.Integer, []float64{1, 3}, []string{"0", "2", "3", "-3", "-4"}},
		{schema.Float, []float64{0.1, 0.3, 0.9}, []string{"0", "0.1", "0.3", "0.29999999999999999", "0.7", "-0.1", "-0.30000000000000004", "1e-300", "12.345", "-1e6", "0.8999999999999999"}},
		{schema.Float, []float64{0.25, 0.5, 2}, []string{"0.25", "0.5", "-0.25", "1.75", "3.9999999", "-2"}},
		{schema.Float, []float64{1e-7}, []string{"3e-7", "0.00000029999999999999997", "-1e-7"}},
	} {
		h, err := generalize.BuildIntervals("test", tc.values, tc.typ, tc.widths)
		if err != nil {
			t.Fatalf("%v %v: %v", tc.typ, tc.widths, err)
		}
		d := verify.IntervalLevels(tc.typ, tc.widths)
		for leaf, v := range tc.values {
			for l := range h.Height() {
				want := h.Value(l, h.Code(l, int32(leaf)))
				if got, ok := d.Label(v, l); !ok || got != want {
					t.Errorf("%s %v: value %s at level %d: verifier %q (%v), builder %q", tc.typ, tc.widths, v, l, got, ok, want)
				}
			}
		}
	}
}

// TestCheckInferredNode: a CSV release records no node, so Check infers it. Here the
// release's values ("a" alone, b's class suppressed) fit two levels of g's hierarchy
// (level 1 writes "a" for a and b), which the record left out tells apart: Check
// passes. A release that leaves out every record (k above the input's size) is
// explained by every level alike: Check says it needs the node (fault.ErrBadInput,
// naming --report), and passes with a report that records it.
func TestCheckInferredNode(t *testing.T) {
	dir := t.TempDir()
	hier := filepath.Join(dir, "g.csv")
	if err := os.WriteFile(hier, []byte("a;a;*\nb;a;*\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.csv")
	text := "g,v\n" + strings.Repeat("a,1\n", 19) + "b,2\n"
	if err := os.WriteFile(in, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	config := "dataset: tiny\ncolumns:\n  g: {role: quasi, hierarchy: {file: " + hier + "}}\n  v: {role: insensitive}\nprivacy: {k: 2, suppression: 0.1}\n"
	cfg := loadConfigText(t, config)
	out := filepath.Join(dir, "out.csv")
	rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	if nodeOf(rep)[0] != 0 || rep.Suppressed != 1 {
		t.Fatalf("node %v, %d suppressed: not the release the test needs", nodeOf(rep), rep.Suppressed)
	}
	if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
		t.Fatalf("check: %v", err)
	}

	empty := filepath.Join(dir, "empty.csv")
	if err := os.WriteFile(empty, []byte("g,v\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg = loadConfigText(t, testfiles.Replace(t, config, "privacy: {k: 2, suppression: 0.1}", "privacy: {k: 25, suppression: 1}"))
	_, err = Check(context.Background(), cfg, job.Options{Input: in, Output: empty})
	if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "--report") {
		t.Fatalf("check without the node: %v, want a bad input naming --report", err)
	}
	reportPath := filepath.Join(dir, "report.json")
	digest, err := publish.Digest(empty)
	if err != nil {
		t.Fatal(err)
	}
	r := report.Report{Input: report.FileSummary{Rows: 20}, Output: report.FileSummary{Digest: digest}, Model: report.ModelSummary{K: 25, SuppressionRate: 1, MaxSuppressed: 20}, Suppressed: 20,
		Algorithm: "optimal", Node: []report.NodeLevel{{Column: "g", Level: 1, Levels: 3}}}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(reportPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: empty, Report: reportPath}); err != nil {
		t.Fatalf("check with the report: %v", err)
	}
}

// TestCheckMalformedCSVRelease: a CSV release the verifier's own reading cannot parse
// is bad input naming the release file, not a pass and not an internal error.
func TestCheckMalformedCSVRelease(t *testing.T) {
	cfg, in, dir := hospitalFixture(t, 500)
	out := filepath.Join(dir, "r.csv")
	if _, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	bad := strings.Join(lines[:5], "") + "\"broken,1\n" + strings.Join(lines[5:], "")
	if err := os.WriteFile(out, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Check(context.Background(), cfg, job.Options{Input: in, Output: out})
	if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), out) {
		t.Fatalf("check of a malformed release: %v, want bad input naming %s", err, out)
	}
}
