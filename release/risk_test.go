package release

import (
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
	"sanitizer/report"
	"sanitizer/risk"
	"sanitizer/schema"
)

// releasedSizes counts the classes of a written CSV release by its quasi-identifiers'
// strings, with no code of the release or the verifier.
func releasedSizes(t *testing.T, path string, sep rune, quasi []string) []int64 {
	t.Helper()
	header, rows := readTable(t, path, sep)
	var pos []int
	for _, q := range quasi {
		i := slices.Index(header, q)
		if i < 0 {
			t.Fatalf("%s: no column %q", path, q)
		}
		pos = append(pos, i)
	}
	count := map[string]int64{}
	for _, r := range rows {
		var key []string
		for _, i := range pos {
			key = append(key, r[i])
		}
		count[strings.Join(key, "\x1f")]++
	}
	var sizes []int64
	for _, n := range count {
		sizes = append(sizes, n)
	}
	return sizes
}

// hospitalQuasi are the hospital sample's quasi-identifiers (testdata/hospital-tests.yaml).
var hospitalQuasi = []string{"age", "sex", "zip", "admitted"}

// releasedHistograms counts, per class of a written CSV release (keyed by its
// quasi-identifiers' strings), the records holding each value of column, with no code
// of the release or the verifier.
func releasedHistograms(t *testing.T, path string, sep rune, quasi []string, column string) map[string]map[string]int {
	t.Helper()
	header, rows := readTable(t, path, sep)
	at := slices.Index(header, column)
	var pos []int
	for _, q := range quasi {
		pos = append(pos, slices.Index(header, q))
	}
	if at < 0 || slices.Contains(pos, -1) {
		t.Fatalf("%s: header %v lacks %q or one of %v", path, header, column, quasi)
	}
	classes := map[string]map[string]int{}
	for _, r := range rows {
		var key []string
		for _, i := range pos {
			key = append(key, r[i])
		}
		k := strings.Join(key, "\x1f")
		if classes[k] == nil {
			classes[k] = map[string]int{}
		}
		classes[k][r[at]]++
	}
	return classes
}

// TestReleaseRiskModels: releases of the hospital sample under each risk-based model
// meet it, counted from the written file by the test itself; Check agrees; and a model
// that no node meets is exit 3 with nothing written.
func TestReleaseRiskModels(t *testing.T) {
	modelsOnly(t)
	rows := 20000
	if testing.Short() {
		rows = 6000 // the race run
	}
	base, in, dir := hospitalFixture(t, rows)
	raw, err := os.ReadFile(base.File)
	if err != nil {
		t.Fatal(err)
	}
	quasi := hospitalQuasi
	tests := []struct {
		name, privacy, plain string // plain: the privacy section without the model
		holds                func(sizes []int64) bool
	}{
		{"highest risk", "privacy: {k: 2, suppression: 0.05, highest-risk: 0.04}", "privacy: {k: 2, suppression: 0.05}", func(sizes []int64) bool {
			return slices.Min(sizes) >= 25
		}},
		{"average risk", "privacy: {k: 2, suppression: 0.05, average-risk: 0.02}", "privacy: {k: 2, suppression: 0.05}", func(sizes []int64) bool {
			var n int64
			for _, s := range sizes {
				n += s
			}
			return float64(len(sizes))/float64(n) <= 0.02
		}},
		{"records at risk", "privacy: {k: 2, suppression: 0.02, records-at-risk: {threshold: 0.05, max: 0.01}}", "privacy: {k: 2, suppression: 0.02}", func(sizes []int64) bool {
			var n, at int64
			for _, s := range sizes {
				n += s
				if s < 20 { // risk 1/s above 0.05
					at += s
				}
			}
			return float64(at)/float64(n) <= 0.01
		}},
		// With k = 2 no class is unique and every estimator gives 0: k = 1 here.
		{"population uniqueness", "privacy: {k: 1, suppression: 0.05, population-uniqueness: {max: 0.0005}}\nrisk: {sampling-fraction: 0.05}", "privacy: {k: 1, suppression: 0.05}", func(sizes []int64) bool {
			d, err := risk.FromSizes(sizes)
			if err != nil {
				t.Fatal(err)
			}
			// The release is a sample of its records out of rows / 0.05.
			est, err := risk.PopulationUniqueness(d, float64(d.Records())/(float64(rows)/0.05), risk.Dankar)
			return err == nil && est.Valid && est.Share <= 0.0005
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := loadConfigText(t, testfiles.Replace(t, string(raw), "privacy: {k: 5, suppression: 0.05}", tt.privacy))
			out := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".csv")
			rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
			if err != nil {
				t.Fatal(err)
			}
			sizes := releasedSizes(t, out, ',', quasi)
			if !tt.holds(sizes) {
				t.Fatalf("the release's %d classes do not meet %s", len(sizes), tt.privacy)
			}
			// Without the model the optimum is another node: the model decided.
			plain := loadConfigText(t, testfiles.Replace(t, string(raw), "privacy: {k: 5, suppression: 0.05}", tt.plain))
			prep, err := Release(context.Background(), plain, job.Options{Input: in, Output: out + ".plain.csv"})
			if err != nil {
				t.Fatal(err)
			}
			if slices.Equal(nodeOf(rep), nodeOf(prep)) {
				t.Errorf("node %v with and without %s: the model was not binding", nodeOf(rep), tt.privacy)
			}
			if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
				t.Fatalf("check: %v", err)
			}
			// The release without the model fails it on Check.
			if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out + ".plain.csv"}); !errors.Is(err, fault.ErrUnattainable) {
				t.Fatalf("check of the release without %s: %v, want the models unmet", tt.privacy, err)
			}
			t.Logf("node %v (without the model %v), %d classes, %d suppressed", nodeOf(rep), nodeOf(prep), rep.Classes, rep.Suppressed)
		})
	}
	t.Run("unattainable", func(t *testing.T) {
		cfg := loadConfigText(t, testfiles.Replace(t, string(raw), "privacy: {k: 5, suppression: 0.05}", "privacy: {k: 2, average-risk: 0.00001}"))
		out := filepath.Join(dir, "none.csv")
		_, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
		if !errors.Is(err, fault.ErrUnattainable) || !strings.Contains(err.Error(), "risk") {
			t.Fatalf("got %v, want unattainable naming the risk requirements", err)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s written: %v", out, err)
		}
	})
	t.Run("mondrian", func(t *testing.T) {
		text := testfiles.Replace(t, string(raw), "privacy: {k: 5, suppression: 0.05}", "privacy: {k: 2, average-risk: 0.1}")
		cfg := loadConfigText(t, testfiles.Replace(t, text, "algorithm: optimal", "algorithm: mondrian"))
		_, err := Release(context.Background(), cfg, job.Options{Input: in, Output: filepath.Join(dir, "m.csv")})
		if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "mondrian") {
			t.Fatalf("got %v, want bad input naming mondrian", err)
		}
	})
}

// TestReportRisk: the report's risk before and after equals the measures of the input's
// and the written release's classes as the test counts them from the files' strings,
// and what it says each quasi-identifier publishes is what the release holds.
func TestReportRisk(t *testing.T) {
	rows := 8000
	if testing.Short() {
		rows = 3000 // the race run
	}
	base, in, dir := hospitalFixture(t, rows)
	raw, err := os.ReadFile(base.File)
	if err != nil {
		t.Fatal(err)
	}
	cfg := loadConfigText(t, testfiles.Replace(t, string(raw), "privacy: {k: 5, suppression: 0.05}",
		"privacy: {k: 3, suppression: 0.05, records-at-risk: {threshold: 0.15, max: 0.5}}\nrisk: {sampling-fraction: 0.1}"))
	out := filepath.Join(dir, "r.csv")
	rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	quasi := hospitalQuasi
	rr := rep.Risk
	if rr == nil || rr.Release == nil || rr.Population == nil || rr.Population.Size != float64(rows)/0.1 {
		t.Fatalf("risk report %+v", rr)
	}
	for _, side := range []struct {
		name  string
		sizes []int64
	}{{"input", releasedSizes(t, in, ',', quasi)}, {"release", releasedSizes(t, out, ',', quasi)}} {
		m := rr.Input
		if side.name == "release" {
			m = *rr.Release
		}
		var records int64
		smallest := side.sizes[0]
		for _, s := range side.sizes {
			records += s
			smallest = min(smallest, s)
		}
		if m.Records != records || m.Classes != int64(len(side.sizes)) || m.HighestRisk != 1/float64(smallest) ||
			m.AverageRisk != float64(len(side.sizes))/float64(records) {
			t.Errorf("%s: report %d records, %d classes, highest %g, average %g; counted %d, %d, smallest class %d", side.name,
				m.Records, m.Classes, m.HighestRisk, m.AverageRisk, records, len(side.sizes), smallest)
		}
		if !slices.Equal(rr.Thresholds, []float64{0.2, 0.15, 0.1, 0.05}) || len(m.RecordsAtRisk) != 4 {
			t.Fatalf("thresholds %v, shares %v", rr.Thresholds, m.RecordsAtRisk)
		}
		var above int64
		for _, s := range side.sizes {
			if 1/float64(s) > 0.15 {
				above += s
			}
		}
		if want := float64(above) / float64(records); m.RecordsAtRisk[1] != want {
			t.Errorf("%s: records above 0.15: %g, counted %g", side.name, m.RecordsAtRisk[1], want)
		}
		var bucketed int64
		for _, b := range m.ClassSizes {
			bucketed += b.Records
		}
		if bucketed != records || m.Journalist == nil || m.Marketer == nil || len(m.PopulationUniqueness) != 4 {
			t.Errorf("%s: %d records in the size buckets of %d; journalist %v, marketer %v, %d uniqueness estimates", side.name, bucketed, records, m.Journalist, m.Marketer, len(m.PopulationUniqueness))
		}
	}
	if len(rr.Models) != 1 || rr.Models[0].Model != "records-at-risk" || !rr.Models[0].Holds || rr.Models[0].Measured != rr.Release.RecordsAtRisk[1] {
		t.Errorf("models %+v", rr.Models)
	}
	header, released := readTable(t, out, ',')
	for _, g := range rep.Generalized {
		col := slices.Index(header, g.Column)
		values := map[string]bool{}
		for _, r := range released {
			values[r[col]] = true
		}
		if g.Distinct != len(values) || len(g.Examples) == 0 {
			t.Errorf("%s: report %d distinct values, the release holds %d", g.Column, g.Distinct, len(values))
		}
		for _, v := range g.Examples {
			if !values[v] {
				t.Errorf("%s: example %q is not in the release", g.Column, v)
			}
		}
	}
}

// TestReleaseWithoutK: l-diversity, or a risk model, without k releases with k = 1 and
// the report says k was not configured; the release meets its model, counted from the
// written file, and passes check.
func TestReleaseWithoutK(t *testing.T) {
	modelsOnly(t)
	base, in, dir := hospitalFixture(t, 3000)
	raw, err := os.ReadFile(base.File)
	if err != nil {
		t.Fatal(err)
	}
	for i, privacy := range []string{
		"privacy: {suppression: 0.05, l-diversity: {column: diagnosis, variant: distinct, l: 2}}",
		"privacy: {suppression: 0.05, average-risk: 0.05}",
	} {
		cfg := loadConfigText(t, testfiles.Replace(t, string(raw), "privacy: {k: 5, suppression: 0.05}", privacy))
		out := filepath.Join(dir, fmt.Sprintf("r%d.csv", i))
		rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
		if err != nil {
			t.Fatalf("%s: %v", privacy, err)
		}
		if rep.Model.K != 1 || !rep.Model.KDefault {
			t.Errorf("%s: report k %d (default %v), want 1 (true)", privacy, rep.Model.K, rep.Model.KDefault)
		}
		if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
			t.Errorf("%s: check: %v", privacy, err)
		}
		values := releasedHistograms(t, out, ',', hospitalQuasi, "diagnosis")
		records := 0
		for _, h := range values {
			for _, c := range h {
				records += c
			}
		}
		for key, v := range values {
			if i == 0 && len(v) < 2 {
				t.Errorf("%s: a class %q holds %d diagnosis", privacy, key, len(v))
			}
		}
		if i == 1 && float64(len(values))/float64(records) > 0.05 {
			t.Errorf("%s: average risk %g", privacy, float64(len(values))/float64(records))
		}
	}
}

// TestReleaseRiskEnforcement: with privacy.risk-enforcement: suppress (the default) a
// release meets an average risk below what k alone gives by suppressing small classes
// that meet k, which the release at the same node under k alone publishes, and
// reaches a value no worse than with measure (every node measure accepts, suppress
// accepts with nothing more suppressed); the written file meets the model by the
// test's own count; Check agrees, refuses the release under measure (classes that
// meet k are missing), and refuses a copy that also leaves out a class larger than
// one it releases.
func TestReleaseRiskEnforcement(t *testing.T) {
	modelsOnly(t)
	base, in, dir := hospitalFixture(t, 12000)
	raw, err := os.ReadFile(base.File)
	if err != nil {
		t.Fatal(err)
	}
	config := func(privacy, search string) *schema.Config {
		text := testfiles.Replace(t, string(raw), "privacy: {k: 5, suppression: 0.05}", privacy)
		if search != "" {
			text = testfiles.Replace(t, text, "algorithm: optimal", "algorithm: optimal, "+search)
		}
		return loadConfigText(t, text)
	}
	release := func(cfg *schema.Config, name string) (*report.Report, string, error) {
		out := filepath.Join(dir, name+".csv")
		rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
		return rep, out, err
	}
	// k alone at the node a release chose: what it suppresses there.
	kOnly := func(rep *report.Report) int {
		t.Helper()
		var bounds []string
		for _, n := range rep.Node {
			bounds = append(bounds, fmt.Sprintf("%s: %d", n.Column, n.Level))
		}
		levels := "{" + strings.Join(bounds, ", ") + "}"
		krep, _, err := release(config("privacy: {k: 2, suppression: 0.05}", "min-levels: "+levels+", max-levels: "+levels), "k-only")
		if err != nil {
			t.Fatal(err)
		}
		return krep.Suppressed
	}
	plain, _, err := release(config("privacy: {k: 2, suppression: 0.05}", ""), "plain")
	if err != nil {
		t.Fatal(err)
	}
	a0 := plain.Risk.Release.AverageRisk
	for _, share := range []float64{0.97, 0.93, 0.88, 0.8, 0.7} {
		avg := a0 * share
		suppress := config(fmt.Sprintf("privacy: {k: 2, suppression: 0.05, average-risk: %g}", avg), "")
		measure := config(fmt.Sprintf("privacy: {k: 2, suppression: 0.05, average-risk: %g, risk-enforcement: measure}", avg), "")
		srep, sout, err := release(suppress, "suppress")
		if err != nil {
			t.Fatalf("average risk %g: %v", avg, err)
		}
		k := kOnly(srep)
		if srep.Suppressed == k {
			continue // the chosen node meets it as it is: no enforcement to see
		}
		if srep.Risk == nil || srep.Risk.Enforcement != "suppress" {
			t.Errorf("the report's risk enforcement: %+v", srep.Risk)
		}
		if srep.Suppressed < k {
			t.Fatalf("node %v: %d suppressed with the average risk, %d under k alone", nodeOf(srep), srep.Suppressed, k)
		}
		mrep, _, err := release(measure, "measure")
		switch {
		case err == nil && srep.Metric.Value > mrep.Metric.Value:
			t.Errorf("loss %g enforcing by suppression, %g measuring: suppress accepts every node measure does", srep.Metric.Value, mrep.Metric.Value)
		case err != nil && !errors.Is(err, fault.ErrUnattainable):
			t.Fatal(err)
		case err == nil:
			t.Logf("measuring: node %v, loss %.4f", nodeOf(mrep), mrep.Metric.Value)
		}
		t.Logf("average risk %g (k alone: %g): node %v, %d suppressed (k alone there: %d), loss %.4f", avg, a0, nodeOf(srep), srep.Suppressed, k, srep.Metric.Value)
		checkEnforced(t, suppress, measure, in, sout, avg)
		return
	}
	t.Fatalf("no average risk below %g made the release suppress a class that meets k", a0)
}

// checkEnforced checks a release out written under suppress (the average risk avg,
// enforced): its own count meets avg; Check passes it, refuses it under measure, and
// refuses a copy that also leaves out a class larger than one it releases.
func checkEnforced(t *testing.T, suppress, measure *schema.Config, in, out string, avg float64) {
	t.Helper()
	sizes := releasedSizes(t, out, ',', hospitalQuasi)
	var records int64
	for _, s := range sizes {
		records += s
	}
	if got := float64(len(sizes)) / float64(records); got > avg {
		t.Fatalf("the release's average risk is %g, above %g", got, avg)
	}
	if _, err := Check(context.Background(), suppress, job.Options{Input: in, Output: out}); err != nil {
		t.Fatalf("check: %v", err)
	}
	if _, err := Check(context.Background(), measure, job.Options{Input: in, Output: out}); !errors.Is(err, fault.ErrUnattainable) {
		t.Errorf("check under measure of a release that suppressed classes meeting k: %v, want the models unmet", err)
	}
	header, rows := readTable(t, out, ',')
	pos := make([]int, len(hospitalQuasi))
	for i, q := range hospitalQuasi {
		pos[i] = slices.Index(header, q)
	}
	key := func(r []string) string {
		var k []string
		for _, i := range pos {
			k = append(k, r[i])
		}
		return strings.Join(k, "\x1f")
	}
	count := map[string]int{}
	for _, r := range rows {
		count[key(r)]++
	}
	// A class larger than the smallest released, but below the average size, so that
	// leaving it out lowers the average risk: only the order of suppression is wrong.
	smallest, mean := slices.Min(sizes), float64(records)/float64(len(sizes))
	gone := ""
	for k, n := range count {
		if int64(n) > smallest && float64(n) < mean && (gone == "" || n < count[gone] || n == count[gone] && k < gone) {
			gone = k
		}
	}
	if gone == "" {
		t.Fatalf("no class between the smallest (%d) and the average size (%g) to leave out", smallest, mean)
	}
	var kept [][]string
	for _, r := range rows {
		if key(r) != gone {
			kept = append(kept, r)
		}
	}
	tampered := filepath.Join(filepath.Dir(out), "tampered.csv")
	writeTable(t, tampered, header, kept)
	if _, err := Check(context.Background(), suppress, job.Options{Input: in, Output: tampered}); !errors.Is(err, fault.ErrUnattainable) || !strings.Contains(err.Error(), "smallest classes first") {
		t.Errorf("check of a release that left out a class of %d while releasing one of %d: %v, want the order of suppression refused", count[gone], smallest, err)
	}
}
