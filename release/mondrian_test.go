package release

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/report"
	"sanitizer/schema"
)

// adultTyped is adultConfig with age declared an integer (so that Mondrian splits it
// at medians and the metrics measure it by value) and the given search algorithm.
func adultTyped(t testing.TB, dir string, k int, supp float64, algorithm string) *schema.Config {
	t.Helper()
	cfg := adultConfig(t, dir, k, supp)
	data, err := os.ReadFile(cfg.File)
	if err != nil {
		t.Fatal(err)
	}
	text := testfiles.Replace(t, string(data), "  age: {role: quasi,", "  age: {role: quasi, type: integer,")
	text += "search: {algorithm: " + algorithm + "}\n"
	if err := os.WriteFile(cfg.File, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if cfg, err = schema.Load(cfg.File); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestReleaseMondrianAdult: on Adult with k ∈ {5, 10, 50}, the Mondrian release passes
// the independent verifier (k, truthfulness: inside Release, and again by Check) and its
// NCP is lower than that of the optimal full-domain release, with 0% or 5%
// suppression; the Mondrian release does not depend on the number of workers.
func TestReleaseMondrianAdult(t *testing.T) {
	if testing.Short() {
		t.Skip("Adult releases take a few seconds")
	}
	abs := needAdult(t)
	in := filepath.Join(abs, "adult.csv")
	for _, k := range []int{5, 10, 50} {
		t.Run(fmt.Sprintf("k=%d", k), func(t *testing.T) {
			dir := t.TempDir()
			run := func(algorithm string, supp float64, workers int) (*report.Report, []byte) {
				sub := filepath.Join(dir, algorithm+strconv.FormatFloat(supp, 'g', -1, 64)+strconv.Itoa(workers))
				os.MkdirAll(sub, 0o755)
				cfg := adultTyped(t, sub, k, supp, algorithm)
				out := filepath.Join(sub, "release.csv")
				rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out, Workers: workers})
				if err != nil {
					t.Fatalf("%s: %v", algorithm, err)
				}
				m, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out})
				if err != nil || m.MinClass < k {
					t.Fatalf("%s: check: %v (%+v)", algorithm, err, m)
				}
				data, _ := os.ReadFile(out)
				return rep, data
			}
			mon, data1 := run("mondrian", 0, 1)
			_, data2 := run("mondrian", 0, 2)
			if !bytes.Equal(data1, data2) {
				t.Error("the Mondrian release differs between 1 and 2 workers")
			}
			for _, supp := range []float64{0, 0.05} {
				opt, _ := run("optimal", supp, 0)
				if mon.Utility.NCP >= opt.Utility.NCP {
					t.Errorf("suppression %g: Mondrian NCP %.4f is not below the optimal release's %.4f", supp, mon.Utility.NCP, opt.Utility.NCP)
				}
				t.Logf("k=%d: Mondrian NCP %.4f (%d partitions); optimal with %g%% suppression NCP %.4f (loss %.4f)",
					k, mon.Utility.NCP, mon.Classes, 100*supp, opt.Utility.NCP, opt.Utility.Loss)
			}
		})
	}
}

// TestReleaseMondrianModels: a Mondrian release of the hospital sample under k=5,
// distinct 3-diversity and t-closeness 0.3 (equal distance) on the diagnosis meets all
// three by the independent verifier.
func TestReleaseMondrianModels(t *testing.T) {
	data, err := os.ReadFile("../testdata/hospital-mondrian.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	td, _ := filepath.Abs("../testdata")
	text := testfiles.ReplaceAll(t, string(data), "hierarchies/", td+"/hierarchies/")
	text = testfiles.Replace(t, text, "privacy: {k: 5, suppression: 0.05}",
		"privacy: {k: 5, suppression: 0.05, l-diversity: {column: diagnosis, variant: distinct, l: 3}, t-closeness: {column: diagnosis, t: 0.3, distance: equal}}")
	path := filepath.Join(dir, "m.yaml")
	os.WriteFile(path, []byte(text), 0o644)
	cfg, err := schema.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(td, "hospital.csv")
	out := filepath.Join(dir, "release.csv")
	rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	s := m.Sensitive[0]
	if m.MinClass < 5 || s.MinDistinct < 3 || s.MaxEMD > 0.3 {
		t.Fatalf("measured k=%d, distinct l=%d, EMD %.3f", m.MinClass, s.MinDistinct, s.MaxEMD)
	}
	if rep.Partitions == nil || rep.Partitions.Partitions != m.Classes || rep.Suppressed != 0 {
		t.Errorf("report %+v, check counted %d classes", rep.Partitions, m.Classes)
	}
}

// BenchmarkReleaseAdultMondrian is a whole Mondrian release of Adult, k=5 (age numeric);
// search-ms is the partitioning alone.
func BenchmarkReleaseAdultMondrian(b *testing.B) {
	dir := b.TempDir()
	cfg := adultTyped(b, dir, 5, 0, "mondrian")
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
	b.ReportMetric(float64(rep.Classes), "partitions")
}

// TestCheckDetectsUntruthful: swapping two released records leaves every class, and so
// k, l and t, as they were, but the release no longer generalizes the input record by
// record in order: Check must report it.
func TestCheckDetectsUntruthful(t *testing.T) {
	data, err := os.ReadFile("../testdata/hospital-mondrian.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	td, _ := filepath.Abs("../testdata")
	path := filepath.Join(dir, "m.yaml")
	os.WriteFile(path, []byte(testfiles.ReplaceAll(t, string(data), "hierarchies/", td+"/hierarchies/")), 0o644)
	cfg, err := schema.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(td, "hospital.csv")
	out := filepath.Join(dir, "release.csv")
	if _, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
		t.Fatal(err)
	}
	if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
		t.Fatalf("untouched release: %v", err)
	}
	f, _ := os.ReadFile(out)
	lines := strings.SplitAfter(string(f), "\n")
	lines[1], lines[2] = lines[2], lines[1] // two different records swap places
	if lines[1] == lines[2] {
		t.Fatal("the first two records are equal: pick others")
	}
	os.WriteFile(out, []byte(strings.Join(lines, "")), 0o644)
	_, err = Check(context.Background(), cfg, job.Options{Input: in, Output: out})
	if !errors.Is(err, fault.ErrUnattainable) || !strings.Contains(err.Error(), "release record 2") {
		t.Fatalf("reordered release: %v, want a truthfulness violation", err)
	}
}
