package release

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"

	"os"
	"path/filepath"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/report"
	"sanitizer/schema"
)

const adultDir = "../../shared/data/adult"

var adultQI = []string{"age", "education", "marital-status", "native-country", "race", "salary-class", "sex", "workclass"}

// needAdult returns the absolute path of the shared Adult data, or skips t (at the top of
// a test, never from a subtest on its parent) when it is absent.
func needAdult(t testing.TB) string {
	t.Helper()
	abs, err := filepath.Abs(adultDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(abs, "adult.csv")); err != nil {
		t.Skipf("Adult data not available: %v", err)
	}
	return abs
}

// adultConfig writes a release configuration for Adult into dir and loads it.
func adultConfig(t testing.TB, dir string, k int, supp float64) *schema.Config {
	t.Helper()
	return writeAdultConfig(t, needAdult(t), filepath.Join(dir, "adult.yaml"), adultQI,
		fmt.Sprintf("  occupation: {role: sensitive}\nprivacy: {k: %d, suppression: %g}\n", k, supp))
}

// writeAdultConfig writes to path a configuration of the Adult files in abs (';'
// separated) with quasi as its quasi-identifiers, their hierarchy files named, then
// rest (more columns, then the other sections), and loads it.
func writeAdultConfig(t testing.TB, abs, path string, quasi []string, rest string) *schema.Config {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "dataset: adult\ninput: {csv: {separator: \";\"}}\noutput: {csv: {separator: \";\"}}\ncolumns:\n")
	for _, q := range quasi {
		fmt.Fprintf(&b, "  %s: {role: quasi, hierarchy: {file: %q}}\n", q, filepath.Join(abs, "adult_hierarchy_"+q+".csv"))
	}
	b.WriteString(rest)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := schema.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// readTable reads a ';'-separated file with a header.
func readTable(t *testing.T, path string, sep rune) ([]string, [][]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(bufio.NewReader(f))
	r.Comma = sep
	all, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return all[0], all[1:]
}

// ancestors maps every leaf of an ARX hierarchy file to its values at every level,
// read without the package's hierarchy code.
func ancestors(t *testing.T, path string) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, line := range strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n") {
		if line != "" {
			f := strings.Split(line, ";")
			out[f[0]] = f
		}
	}
	return out
}

// TestReleaseAdult releases Adult for every (k, suppression) of the spine issue and
// checks each release: by Check (class sizes and suppression recounted from the
// written strings), and for truthfulness: every released record is the generalization,
// at the reported node, of a distinct input record, in input order.
func TestReleaseAdult(t *testing.T) {
	if testing.Short() {
		t.Skip("Adult releases take a few seconds")
	}
	abs := needAdult(t)
	_, input := readTable(t, filepath.Join(abs, "adult.csv"), ';')
	hier := map[string]map[string][]string{}
	for _, q := range adultQI {
		hier[q] = ancestors(t, filepath.Join(abs, "adult_hierarchy_"+q+".csv"))
	}
	for _, k := range []int{2, 5, 10, 100} {
		for _, supp := range []float64{0, 0.05} {
			t.Run(fmt.Sprintf("k=%d/supp=%g", k, supp), func(t *testing.T) {
				dir := t.TempDir()
				cfg := adultConfig(t, dir, k, supp)
				out := filepath.Join(dir, "release.csv")
				rep, err := Release(context.Background(), cfg, job.Options{Input: filepath.Join(abs, "adult.csv"), Output: out, Report: filepath.Join(dir, "report.json")})
				if err != nil {
					t.Fatal(err)
				}
				m, err := Check(context.Background(), cfg, job.Options{Input: filepath.Join(abs, "adult.csv"), Output: out})
				if err != nil {
					t.Fatalf("check: %v", err)
				}
				if m.MinClass < k || m.Suppressed > maxSuppressed(supp, len(input)) || m.Rows+m.Suppressed != len(input) {
					t.Fatalf("check measured %+v for k=%d", m, k)
				}
				if m.Suppressed != rep.Suppressed || m.Classes != rep.Classes {
					t.Errorf("report says %d suppressed / %d classes, check counted %d / %d", rep.Suppressed, rep.Classes, m.Suppressed, m.Classes)
				}
				header, rel := readTable(t, out, ';')
				if strings.Join(header, ";") != "sex;age;race;marital-status;education;native-country;workclass;occupation;salary-class" {
					t.Fatalf("release header %q", header)
				}
				level := map[string]int{}
				for _, n := range rep.Node {
					level[n.Column] = n.Level
				}
				// Walk the input in order: each released record must generalize the
				// next input record that it matches (records keep their order).
				r := 0
				for _, rec := range input {
					if r == len(rel) {
						break
					}
					match := true
					for c, name := range header {
						want := rec[c]
						if h, ok := hier[name]; ok {
							want = h[rec[c]][level[name]]
						}
						if rel[r][c] != want {
							match = false
							break
						}
					}
					if match {
						r++
					}
				}
				if r != len(rel) {
					t.Fatalf("released record %d is not the generalization of any later input record", r+1)
				}
				t.Logf("node %v: %d classes, %d suppressed, %s %.4f", level, m.Classes, m.Suppressed, rep.Metric.Name, rep.Metric.Value)
			})
		}
	}
}

func TestCheckDetectsViolation(t *testing.T) {
	dir := t.TempDir()
	cfg := adultConfig(t, dir, 5, 0)
	abs := needAdult(t)
	in := filepath.Join(abs, "adult.csv")
	out := filepath.Join(dir, "release.csv")
	if _, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
		t.Fatal(err)
	}
	// Drop records until the first record's class falls below k.
	f, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(f), "\n")
	first := lines[1]
	var kept []string
	removed := 0
	for i, l := range lines {
		if i > 1 && l == first && removed < 4 {
			removed++
			continue
		}
		kept = append(kept, l)
	}
	if err := os.WriteFile(out, []byte(strings.Join(kept, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Check(context.Background(), cfg, job.Options{Input: in, Output: out})
	if err == nil || !strings.Contains(err.Error(), "smallest class") && !strings.Contains(err.Error(), "suppressed") {
		t.Fatalf("tampered release: got %v, want a violation", err)
	}
}

// TestReleaseUnattainableWritesNothing: k above the row count cannot be met.
func TestReleaseUnattainableWritesNothing(t *testing.T) {
	dir := t.TempDir()
	cfg := adultConfig(t, dir, 40000, 0)
	abs := needAdult(t)
	out := filepath.Join(dir, "out", "release.csv")
	if err := os.Mkdir(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Release(context.Background(), cfg, job.Options{Input: filepath.Join(abs, "adult.csv"), Output: out, Report: filepath.Join(dir, "out", "r.json")})
	if !errors.Is(err, fault.ErrUnattainable) {
		t.Fatalf("got %v, want ErrUnattainable", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	if len(entries) != 0 {
		t.Fatalf("output folder holds %v after a failed run", entries)
	}
}

// BenchmarkReleaseAdult measures a whole release of Adult (k=5, 5%): read, encode,
// search, write, verify, rename.
func BenchmarkReleaseAdult(b *testing.B) {
	dir := b.TempDir()
	cfg := adultConfig(b, dir, 5, 0.05)
	abs := needAdult(b)
	opt := job.Options{Input: filepath.Join(abs, "adult.csv"), Output: filepath.Join(dir, "release.csv"), Force: true}
	var rep *report.Report
	for b.Loop() {
		var err error
		if rep, err = Release(context.Background(), cfg, opt); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(rep.StagesMS.Search, "search-ms")
	b.ReportMetric(float64(rep.Lattice.Evaluated), "evaluated")
}

func TestMaxSuppressed(t *testing.T) {
	cases := []struct {
		share float64
		rows  int
		want  int
	}{
		{0, 30162, 0}, {0.05, 30162, 1508}, {0.05, 100, 5}, {0.1, 30, 3}, {0.282, 100000000, 28200000},
		{1, 7, 7}, {0.3, 10, 3}, {0.07, 100, 7}, {0.5, 3, 1},
	}
	for _, c := range cases {
		if got := maxSuppressed(c.share, c.rows); got != c.want {
			t.Errorf("maxSuppressed(%g, %d) = %d, want %d", c.share, c.rows, got, c.want)
		}
	}
}

// TestReleaseAdultModels: the Adult settings with occupation as the sensitive
// column (its hierarchy file for the hierarchical distance) release, pass Check (which
// recounts l and t from the written file and the input), and report the weakest class.
func TestReleaseAdultModels(t *testing.T) {
	if testing.Short() {
		t.Skip("Adult releases with l-diversity and t-closeness take several seconds")
	}
	abs := needAdult(t)
	in := filepath.Join(abs, "adult.csv")
	for _, model := range []string{
		"l-diversity: {column: occupation, variant: distinct, l: 3}",
		"l-diversity: {column: occupation, variant: entropy, l: 3}",
		"l-diversity: {column: occupation, variant: recursive, l: 3, c: 4}",
		"t-closeness: {column: occupation, t: 0.2, distance: equal}",
		"t-closeness: {column: occupation, t: 0.2, distance: hierarchical}",
	} {
		for _, supp := range []float64{0, 0.05} {
			t.Run(fmt.Sprintf("%s/supp=%g", model, supp), func(t *testing.T) {
				dir := t.TempDir()
				base := adultConfig(t, dir, 5, supp)
				raw, err := os.ReadFile(base.File)
				if err != nil {
					t.Fatal(err)
				}
				text := testfiles.Replace(t, string(raw), "  occupation: {role: sensitive}",
					fmt.Sprintf("  occupation: {role: sensitive, hierarchy: {file: %q}}", filepath.Join(abs, "adult_hierarchy_occupation.csv")))
				text = testfiles.Replace(t, text, fmt.Sprintf("privacy: {k: 5, suppression: %g}", supp), fmt.Sprintf("privacy: {k: 5, suppression: %g, %s}", supp, model))
				if err := os.WriteFile(base.File, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				cfg, err := schema.Load(base.File)
				if err != nil {
					t.Fatal(err)
				}
				out := filepath.Join(dir, "release.csv")
				rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
				if err != nil {
					t.Fatal(err)
				}
				m, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out})
				if err != nil {
					t.Fatalf("check: %v", err)
				}
				if len(m.Sensitive) != 1 || len(rep.Verified.Sensitive) != 1 || m.Sensitive[0].MaxEMD != rep.Verified.Sensitive[0].MaxEMD {
					t.Fatalf("check measured %+v, the report %+v", m.Sensitive, rep.Verified.Sensitive)
				}
				s := m.Sensitive[0]
				switch {
				case strings.Contains(model, "distinct") && s.MinDistinct < 3,
					strings.Contains(model, "entropy") && s.MinEntropyL < 3-1e-9,
					strings.Contains(model, "t: 0.2") && s.MaxEMD > 0.2:
					t.Fatalf("measured %+v does not meet %s", s, model)
				}
				t.Logf("node %v, %d suppressed, loss %.4f; weakest class %+v", nodeOf(rep), rep.Suppressed, rep.Metric.Value, s)
			})
		}
	}
}

// TestReleaseTwoProtectedColumns: two sensitive columns protected at once (diagnosis by
// recursive l-diversity, insurance by t-closeness) release and pass Check, which
// recounts both from the written file.
func TestReleaseTwoProtectedColumns(t *testing.T) {
	modelsOnly(t)
	cfg, in, dir := hospitalFixture(t, 20000)
	raw, err := os.ReadFile(cfg.File)
	if err != nil {
		t.Fatal(err)
	}
	text := testfiles.Replace(t, string(raw), "  insurance:  {role: insensitive}", "  insurance:  {role: sensitive}")
	text = testfiles.Replace(t, text, "privacy: {k: 5, suppression: 0.05}",
		"privacy:\n  k: 5\n  suppression: 0.05\n  l-diversity: {column: diagnosis, variant: recursive, l: 3, c: 3}\n  t-closeness: {column: insurance, t: 0.15}")
	cfg = loadConfigText(t, testfiles.ReplaceAll(t, text, "output: {format: csv}", "output: {format: parquet}"))
	out := filepath.Join(dir, "r.parquet")
	rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	meta := testfiles.ParquetMetadata(t, out)
	if meta["sanitize.l_diversity"] != `[{"column":"diagnosis","variant":"recursive","l":3,"c":3}]` || meta["sanitize.t_closeness"] != `[{"column":"insurance","t":0.15,"distance":"equal"}]` {
		t.Errorf("metadata: l %q, t %q", meta["sanitize.l_diversity"], meta["sanitize.t_closeness"])
	}
	m, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out})
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	if len(m.Sensitive) != 2 || m.Sensitive[0].Column != "diagnosis" || m.Sensitive[1].Column != "insurance" {
		t.Fatalf("measured %+v", m.Sensitive)
	}
	if m.Sensitive[0].MinDistinct < 3 || m.Sensitive[1].MaxEMD > 0.15 {
		t.Fatalf("measured %+v", m.Sensitive)
	}
	// Without the models the same input releases a finer node: they were enforced.
	base, err := Release(context.Background(), loadConfigText(t, string(raw)), job.Options{Input: in, Output: filepath.Join(dir, "base.csv")})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Metric.Value <= base.Metric.Value {
		t.Errorf("loss %v with the models, %v without: the models changed nothing", rep.Metric.Value, base.Metric.Value)
	}
	t.Logf("with models: node %v loss %.4f %+v; k only: node %v loss %.4f", nodeOf(rep), rep.Metric.Value, m.Sensitive, nodeOf(base), base.Metric.Value)
}

// TestReleaseHierarchicalBuiltHierarchy: t-closeness with the hierarchical distance on
// a sensitive column whose hierarchy is built (integer intervals), not read from a file.
func TestReleaseHierarchicalBuiltHierarchy(t *testing.T) {
	cfg, in, dir := hospitalFixture(t, 5000)
	raw, err := os.ReadFile(cfg.File)
	if err != nil {
		t.Fatal(err)
	}
	text := testfiles.Replace(t, string(raw), "  stay_days:  {role: insensitive, type: integer}",
		"  stay_days:  {role: sensitive, type: integer, hierarchy: {intervals: [7, 28, 364]}}")
	text = testfiles.Replace(t, text, "privacy: {k: 5, suppression: 0.05}",
		"privacy: {k: 5, suppression: 0.05, t-closeness: {column: stay_days, t: 0.1, distance: hierarchical}}")
	cfg = loadConfigText(t, text)
	out := filepath.Join(dir, "r.csv")
	if _, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
		t.Fatal(err)
	}
	m, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out})
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	if s := m.Sensitive[0]; s.Distance != "hierarchical" || s.MaxEMD > 0.1 {
		t.Fatalf("measured %+v", s)
	}
}

// modelsOnly skips, under -short (make test's race run), a test whose releases check
// the models' arithmetic, the metrics or the configuration rather than the stages'
// concurrency, which the race run's other releases (formats, parts, canaries,
// failures and cancellation in every stage) exercise alike; make test's full run
// runs it.
func modelsOnly(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("the models' arithmetic, not the stages' concurrency: make test's full run has it")
	}
}
