package stage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/release"
	"sanitizer/report"
	"sanitizer/sample"
	"sanitizer/schema"
)

// seriesNights writes the nights of a series of generated admissions (sample.Admissions,
// 3000 records): night n holds the first sizes[n-1] records, as one file and in three
// parts; and testdata/admissions.yaml with a series key file, edited by edit. It returns
// the configuration's path, and per night the file and the folder of parts.
func seriesNights(t *testing.T, sizes []int, edit func(string) string) (cfgPath string, files, parts []string) {
	t.Helper()
	var buf bytes.Buffer
	if err := sample.Admissions(&buf, slices.Max(sizes), 5); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	dir := t.TempDir()
	for n, size := range sizes {
		body := lines[1 : size+1]
		file := filepath.Join(dir, fmt.Sprintf("night%d.csv", n+1))
		writeSeriesFile(t, file, strings.Join(lines[:1], "")+"\n"+strings.Join(body, "\n")+"\n")
		folder := filepath.Join(dir, fmt.Sprintf("night%d", n+1))
		if err := os.Mkdir(folder, 0o700); err != nil {
			t.Fatal(err)
		}
		for p := range 3 {
			rows := body[p*len(body)/3 : (p+1)*len(body)/3]
			writeSeriesFile(t, filepath.Join(folder, fmt.Sprintf("part-%d.csv", p)), lines[0]+"\n"+strings.Join(rows, "\n")+"\n")
		}
		files, parts = append(files, file), append(parts, folder)
	}
	td, err := filepath.Abs("../../testdata")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(td, "admissions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(dir, "series.key")
	if err := os.WriteFile(key, []byte(strings.Repeat("s", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := testfiles.ReplaceAll(t, string(raw), "file: hierarchies/", "file: "+filepath.Join(td, "hierarchies")+"/")
	cfg += "series: {removals: retire, key-file: " + key + "}\n"
	if edit != nil {
		cfg = edit(cfg)
	}
	cfgPath = filepath.Join(dir, "admissions.yaml")
	writeSeriesFile(t, cfgPath, cfg)
	return cfgPath, files, parts
}

// orderedRows is the rows of a release's CSV parts in order, the header once.
func orderedRows(t *testing.T, folder string) []string {
	t.Helper()
	var out []string
	for i, name := range testfiles.Names(t, folder) {
		ls := strings.Split(strings.TrimSuffix(readSeriesFile(t, filepath.Join(folder, name)), "\n"), "\n")
		if i > 0 {
			ls = ls[1:]
		}
		out = append(out, ls...)
	}
	return out
}

// TestReleaseSeriesOnPrism: a release series whose nights are written on Beam's
// embedded runner publishes, night by night, the rows sanitize release --series
// publishes from the same nights read as one file, in the same order, without a
// privacy unit, with one, and with it released as a pseudonym (the workers write the
// pseudonyms under the key file); the CLI's check --series passes Beam's last night.
func TestReleaseSeriesOnPrism(t *testing.T) {
	persons := func(cfg string) string {
		return testfiles.Replace(t, cfg, "privacy:\n  k: 5\n", "privacy:\n  k: 5\n  privacy-unit: {column: patient_id}\n")
	}
	pseudonyms := func(cfg string) string { // linkable records: no l-diversity, the key in a file
		key := filepath.Join(t.TempDir(), "pseudonym.key")
		writeSeriesFile(t, key, strings.Repeat("p", 32))
		cfg = testfiles.Replace(t, cfg, "  l-diversity: {column: diagnosis, variant: distinct, l: 3}\n", "")
		return testfiles.Replace(t, cfg, "privacy:\n  k: 5\n", "privacy:\n  k: 5\n  privacy-unit: {column: patient_id, pseudonym: {key-file: "+key+"}}\n")
	}
	for _, c := range []struct {
		name string
		edit func(string) string
	}{{"rows", nil}, {"persons", persons}, {"pseudonyms", pseudonyms}} {
		edit := c.edit
		t.Run(c.name, func(t *testing.T) {
			cfgPath, files, parts := seriesNights(t, []int{2800, 3000}, edit)
			cfg, err := schema.Load(cfgPath)
			if err != nil {
				t.Fatal(err)
			}
			j, err := NewJob(cfgPath)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			cliState, beamState := filepath.Join(dir, "cli.json"), filepath.Join(dir, "beam.json")
			var last string
			for n := range files {
				cliOut := filepath.Join(dir, fmt.Sprintf("cli%d.csv", n+1))
				if _, err := release.Release(context.Background(), cfg, job.Options{Input: files[n], Output: cliOut, Series: cliState}); err != nil {
					t.Fatalf("night %d, sanitize: %v", n+1, err)
				}
				last = filepath.Join(dir, fmt.Sprintf("beam%d", n+1))
				rep, err := ReleaseSeries(context.Background(), j, job.Options{Input: parts[n], Output: last, Series: beamState}, onPrism)
				if err != nil {
					t.Fatalf("night %d, sanitize-beam: %v", n+1, err)
				}
				checkSeriesReport(t, rep, n+1)
				if rep.Tool != "sanitize-beam" {
					t.Errorf("the report's tool is %q", rep.Tool)
				}
				got, want := orderedRows(t, last), strings.Split(strings.TrimSuffix(readSeriesFile(t, cliOut), "\n"), "\n")
				if len(want) < 2000 || !slices.Equal(got, want) {
					t.Errorf("night %d: Beam's parts hold %d rows, the CLI's file %d, or other rows", n+1, len(got)-1, len(want)-1)
				}
			}
			if _, err := release.Check(context.Background(), cfg, job.Options{Input: parts[len(parts)-1], Output: last + "/", Series: beamState}); err != nil {
				t.Errorf("check --series of Beam's last night: %v", err)
			}
		})
	}
}

// checkSeriesReport fails t unless rep is night's report, and a later night's
// published new records.
func checkSeriesReport(t *testing.T, rep *report.Report, night int) {
	t.Helper()
	s := rep.Series
	switch {
	case s == nil:
		t.Fatalf("night %d: the report has no series section", night)
	case s.Night != night:
		t.Errorf("the report says night %d, want %d", s.Night, night)
	case night > 1 && s.Added == 0:
		t.Errorf("night %d added nothing: the test does not test the series", night)
	}
}

// TestReleaseSeriesRefusals: what a series night on Beam cannot do is bad input, and
// nothing is written.
func TestReleaseSeriesRefusals(t *testing.T) {
	pseudonym := func(cfg string) string { // a random key each run: no key file
		cfg = testfiles.Replace(t, cfg, "  l-diversity: {column: diagnosis, variant: distinct, l: 3}\n", "")
		return testfiles.Replace(t, cfg, "privacy:\n  k: 5\n", "privacy:\n  k: 5\n  privacy-unit: {column: patient_id, pseudonym: {}}\n")
	}
	for _, tt := range []struct {
		name, want string
		edit       func(string) string
		opt        func(in, out, state string) job.Options
	}{
		{"output in a store", "in a store", nil, func(in, _, st string) job.Options {
			return job.Options{Input: in, Output: "s3://bucket/release", Series: st}
		}},
		{"pseudonym without a key file", "privacy.privacy-unit.pseudonym.key-file", pseudonym, func(in, out, st string) job.Options {
			return job.Options{Input: in, Output: out, Series: st}
		}},
		{"restart alone", "--series-restart", nil, func(in, out, _ string) job.Options {
			return job.Options{Input: in, Output: out, SeriesRestart: true}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfgPath, _, parts := seriesNights(t, []int{300}, tt.edit)
			j, err := NewJob(cfgPath)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			_, err = ReleaseSeries(context.Background(), j, tt.opt(parts[0], filepath.Join(dir, "out"), filepath.Join(dir, "st.json")), onPrism)
			if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want bad input naming %q", err, tt.want)
			}
			if names := testfiles.Names(t, dir); len(names) > 1 || len(names) == 1 && names[0] != "st.json.lock" {
				t.Errorf("a refused night left %q", names)
			}
		})
	}
}

// writeSeriesFile writes s to path.
func writeSeriesFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// readSeriesFile is the text of the file at path.
func readSeriesFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
