package release

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sanitizer/job"
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

// TestReleaseRiskModels: releases of the hospital sample under each risk-based model
// meet it, counted from the written file by the test itself; Check agrees; and a model
// that no node meets is exit 3 with nothing written.
func TestReleaseRiskModels(t *testing.T) {
	base, in, dir := hospitalFixture(t, 20000)
	raw, err := os.ReadFile(base.File)
	if err != nil {
		t.Fatal(err)
	}
	quasi := []string{"age", "sex", "zip", "admitted"}
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
			// The release is a sample of its records out of 20000 / 0.05.
			est, err := risk.PopulationUniqueness(d, float64(d.Records())/(20000/0.05), risk.Dankar)
			return err == nil && est.Valid && est.Share <= 0.0005
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := loadConfigText(t, strings.Replace(string(raw), "privacy: {k: 5, suppression: 0.05}", tt.privacy, 1))
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
			plain := loadConfigText(t, strings.Replace(string(raw), "privacy: {k: 5, suppression: 0.05}", tt.plain, 1))
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
			if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out + ".plain.csv"}); !errors.Is(err, schema.ErrUnattainable) {
				t.Fatalf("check of the release without %s: %v, want the models unmet", tt.privacy, err)
			}
			t.Logf("node %v (without the model %v), %d classes, %d suppressed", nodeOf(rep), nodeOf(prep), rep.Classes, rep.Suppressed)
		})
	}
	t.Run("unattainable", func(t *testing.T) {
		cfg := loadConfigText(t, strings.Replace(string(raw), "privacy: {k: 5, suppression: 0.05}", "privacy: {k: 2, average-risk: 0.00001}", 1))
		out := filepath.Join(dir, "none.csv")
		_, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
		if !errors.Is(err, schema.ErrUnattainable) || !strings.Contains(err.Error(), "risk") {
			t.Fatalf("got %v, want unattainable naming the risk requirements", err)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s written: %v", out, err)
		}
	})
	t.Run("mondrian", func(t *testing.T) {
		text := strings.Replace(string(raw), "privacy: {k: 5, suppression: 0.05}", "privacy: {k: 2, average-risk: 0.1}", 1)
		cfg := loadConfigText(t, strings.Replace(text, "algorithm: optimal", "algorithm: mondrian", 1))
		_, err := Release(context.Background(), cfg, job.Options{Input: in, Output: filepath.Join(dir, "m.csv")})
		if !errors.Is(err, schema.ErrBadInput) || !strings.Contains(err.Error(), "mondrian") {
			t.Fatalf("got %v, want bad input naming mondrian", err)
		}
	})
}
