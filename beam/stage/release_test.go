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

	"sanitizer/gen"
	"sanitizer/job"
	"sanitizer/release"
	"sanitizer/report"
	"sanitizer/sample"
	"sanitizer/schema"
)

// lines returns the records of the CSV files (a file, or a folder's files), header
// rows left out, sorted: the release as a multiset of records.
func lines(t *testing.T, path string) []string {
	t.Helper()
	files := []string{path}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			t.Fatal(err)
		}
		files = nil
		for _, e := range entries {
			files = append(files, filepath.Join(path, e.Name()))
		}
	}
	var out []string
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ls := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
		out = append(out, ls[1:]...)
	}
	slices.Sort(out)
	return out
}

// againstCLI releases beamIn on Prism under the configuration at cfgPath, and cliIn
// with the CLI's release, and fails t unless both publish the same non-empty multiset
// of records at the same node. It returns both runs and the Beam release's folder.
func againstCLI(t *testing.T, cfgPath, beamIn, cliIn string) (*Released, *report.Report, string) {
	t.Helper()
	j, err := NewJob(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "release")
	got, err := Release(context.Background(), j, beamIn, out, false, onPrism)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := schema.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	cliOut := filepath.Join(t.TempDir(), "r.csv")
	rep, err := release.Release(context.Background(), cfg, job.Options{Input: cliIn, Output: cliOut})
	if err != nil {
		t.Fatal(err)
	}
	node := make([]int, len(rep.Node))
	for i, n := range rep.Node {
		node[i] = n.Level
	}
	beamLines, cliLines := lines(t, out), lines(t, cliOut)
	if !slices.Equal(got.Result.Levels, node) || !slices.Equal(beamLines, cliLines) || len(cliLines) == 0 {
		t.Errorf("Beam: node %v, %d records; CLI: node %v, %d records; same multiset %v", got.Result.Levels, len(beamLines), node, len(cliLines), slices.Equal(beamLines, cliLines))
	}
	return got, rep, out
}

// TestReleaseOnPrismMatchesCLI: Adult in seven parts, released on Prism, is published
// as seven parts that hold the same multiset of records as the CLI's release of the
// whole file, at the same node, for k alone, with suppression, with recursive
// l-diversity, and with t-closeness and β-likeness on occupation (numbered over every
// part's values, its histograms merged with the classes); the parts passed the CLI's
// check before they were published.
func TestReleaseOnPrismMatchesCLI(t *testing.T) {
	for _, privacy := range []string{
		"privacy: {k: 5, suppression: 0}",
		"privacy: {k: 10, suppression: 0.05}",
		"privacy: {k: 5, suppression: 0.04, l-diversity: {column: occupation, variant: recursive, l: 3, c: 4}}",
		"privacy: {k: 3, suppression: 0.05, t-closeness: {column: occupation, t: 0.2}, beta-likeness: {column: occupation, beta: 3}}",
	} {
		t.Run(privacy, func(t *testing.T) {
			cfgPath, whole, parts := adultParts(t, 5000, privacy)
			got, rep, out := againstCLI(t, cfgPath, parts, whole)
			entries, _ := os.ReadDir(out)
			if len(entries) != 7 || got.Parts != 7 || got.Measured.Suppressed != rep.Suppressed {
				t.Errorf("%d release parts (%d reported), %d suppressed; the CLI %d", len(entries), got.Parts, got.Measured.Suppressed, rep.Suppressed)
			}
		})
	}
}

// TestReleaseOnPrismPublishesNothing: a part that fails to encode fails the run, and
// neither the release nor a temporary is left.
func TestReleaseOnPrismPublishesNothing(t *testing.T) {
	cfgPath, _, parts := adultParts(t, 10000, "privacy: {k: 5}")
	bad := filepath.Join(parts, "part-002.csv")
	raw, err := os.ReadFile(bad)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(strings.Replace(string(raw), "United-States", "Atlantis", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	j, err := NewJob(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	_, err = Release(context.Background(), j, parts, filepath.Join(dir, "release"), false, onPrism)
	if !errors.Is(err, schema.ErrBadInput) || !strings.Contains(err.Error(), "part-002.csv: row") || strings.Contains(err.Error(), "Atlantis") {
		t.Fatalf("got %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left %v behind", entries)
	}
}

// TestReleaseOnPrismBuiltHierarchies: the hospital sample (intervals, a mask and dates
// built from the values, a hierarchy file, identifiers dropped, insensitive columns
// kept) in four parts: Beam gathers every part's values for the built hierarchies and
// publishes the same records at the same node as the CLI's release of the whole file.
func TestReleaseOnPrismBuiltHierarchies(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	if err := sample.Hospital(&buf, 6000, 3); err != nil {
		t.Fatal(err)
	}
	whole := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(whole, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	parts := filepath.Join(dir, "parts")
	os.Mkdir(parts, 0o700)
	for i, n := 1, 0; i < len(rows); i, n = i+1500, n+1 {
		body := rows[0] + "\n" + strings.Join(rows[i:min(i+1500, len(rows))], "\n") + "\n"
		if err := os.WriteFile(filepath.Join(parts, "part-"+string(rune('a'+n))+".csv"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile("../../testdata/hospital.yaml")
	if err != nil {
		t.Fatal(err)
	}
	hier, _ := filepath.Abs("../../testdata/hierarchies")
	cfgPath := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(cfgPath, []byte(strings.ReplaceAll(string(raw), "hierarchies/", hier+"/")), 0o600); err != nil {
		t.Fatal(err)
	}
	againstCLI(t, cfgPath, parts, whole)
}

// TestReleaseOnPrismParquetParts: the hospital sample written as four Parquet parts
// (sanitize gen's writer) is released on Prism as the same records as the CLI's
// release of the same parts.
func TestReleaseOnPrismParquetParts(t *testing.T) {
	dir := t.TempDir()
	parts := filepath.Join(dir, "parts")
	os.Mkdir(parts, 0o700)
	for i := range 4 {
		if err := gen.Hospital(filepath.Join(parts, fmt.Sprintf("part-%d.parquet", i)), "parquet", 1200, uint64(10+i), job.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile("../../testdata/hospital.yaml")
	if err != nil {
		t.Fatal(err)
	}
	hier, _ := filepath.Abs("../../testdata/hierarchies")
	text := strings.ReplaceAll(string(raw), "hierarchies/", hier+"/")
	text = strings.Replace(text, "input: {format: csv, csv: {separator: \",\", header: true}}", "input: {format: parquet}", 1)
	cfgPath := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(cfgPath, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	againstCLI(t, cfgPath, parts, parts)
}

// TestReleaseOnPrismClassTableBound: a merged class table past Job.MaxClassTable is
// refused as bad input naming the bound, while the parts are merged, and nothing is
// published; under the bound the release goes on.
func TestReleaseOnPrismClassTableBound(t *testing.T) {
	cfgPath, _, parts := adultParts(t, 5000, "privacy: {k: 5}")
	j, err := NewJob(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	j.MaxClassTable = 100 << 10 // Adult's table takes about 0.7 MiB
	_, err = Release(context.Background(), j, parts, filepath.Join(dir, "release"), false, onPrism)
	if !errors.Is(err, schema.ErrBadInput) || !strings.Contains(err.Error(), "--max-class-table") {
		t.Fatalf("got %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left %v behind", entries)
	}
	j.MaxClassTable = 8 << 20
	if _, err := Release(context.Background(), j, parts, filepath.Join(dir, "release"), false, onPrism); err != nil {
		t.Fatal(err)
	}
}

// TestReleaseOnPrismResearchSubset: Adult in seven parts with a research subset (one
// record in eight, by a flag column) under δ-presence and k-map: Beam counts the
// subset's classes and the population's, and publishes the same records at the same
// node as the CLI's release of the whole file; the CLI's check passed the parts.
func TestReleaseOnPrismResearchSubset(t *testing.T) {
	cfgPath, whole, parts := adultParts(t, 5000, "privacy: {k: 2, suppression: 0.05, subset: {column: in_study}, delta-presence: {min: 0.02, max: 0.5}, k-map: {k: 6}}")
	// The flag: a column added to the whole file and to every part.
	flag := func(path string, first int) int {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ls := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
		ls[0] += ";in_study"
		for i := 1; i < len(ls); i++ {
			f := "no"
			if ((first+i)*2654435761)%8 == 0 {
				f = "yes"
			}
			ls[i] += ";" + f
		}
		if err := os.WriteFile(path, []byte(strings.Join(ls, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return len(ls) - 1
	}
	flag(whole, 0)
	entries, _ := os.ReadDir(parts)
	first := 0
	for _, e := range entries {
		first += flag(filepath.Join(parts, e.Name()), first)
	}
	raw, _ := os.ReadFile(cfgPath)
	os.WriteFile(cfgPath, []byte(strings.Replace(string(raw), "  occupation: {role: insensitive}\n", "  occupation: {role: insensitive}\n  in_study: {role: identifier}\n", 1)), 0o600)
	got, rep, _ := againstCLI(t, cfgPath, parts, whole)
	if got.Population == nil || got.Population.Records() != 30162 || got.Classes.Records() != rep.Input.Rows {
		t.Errorf("Beam counted a subset of %d and a population of %v; the CLI's subset is %d", got.Classes.Records(), got.Population, rep.Input.Rows)
	}
	t.Logf("node %v, %d released of %d, %d suppressed", got.Result.Levels, rep.Output.Rows, rep.Input.Rows, rep.Suppressed)
}
