package release

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/report"
)

// TestReleaseBetaLikeness: releases under basic and enhanced β-likeness on diagnosis
// meet it, counted by the test from the input's and the written file's strings; check
// agrees, and finds the release without the model in breach of it.
func TestReleaseBetaLikeness(t *testing.T) {
	modelsOnly(t)
	base, in, dir := hospitalFixture(t, 6000)
	raw, err := os.ReadFile(base.File)
	if err != nil {
		t.Fatal(err)
	}
	input := map[string]float64{}
	ih, irows := readTable(t, in, ',')
	dxIn := slices.Index(ih, "diagnosis")
	for _, r := range irows {
		input[r[dxIn]]++
	}
	for v := range input {
		input[v] /= float64(len(irows))
	}
	plain := loadConfigText(t, string(raw))
	plainOut := filepath.Join(dir, "plain.csv")
	if _, err := Release(context.Background(), plain, job.Options{Input: in, Output: plainOut}); err != nil {
		t.Fatal(err)
	}
	for i, tt := range []struct {
		privacy  string
		beta     float64
		enhanced bool
	}{
		{"privacy: {k: 5, suppression: 0.05, beta-likeness: {column: diagnosis, beta: 1}}", 1, false},
		{"privacy: {suppression: 0.05, beta-likeness: {column: diagnosis, beta: 2, variant: enhanced}}", 2, true},
	} {
		cfg := loadConfigText(t, testfiles.Replace(t, string(raw), "privacy: {k: 5, suppression: 0.05}", tt.privacy))
		out := filepath.Join(dir, fmt.Sprintf("r%d.csv", i))
		rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
		if err != nil {
			t.Fatalf("%s: %v", tt.privacy, err)
		}
		classes := releasedHistograms(t, out, ',', hospitalQuasi, "diagnosis")
		sizes := map[string]float64{}
		for key, h := range classes {
			for _, c := range h {
				sizes[key] += float64(c)
			}
		}
		worst := 0.0
		for key, h := range classes {
			for v, c := range h {
				p, q := float64(c)/sizes[key], input[v]
				limit := tt.beta
				if tt.enhanced {
					limit = min(tt.beta, -math.Log(q))
				}
				if p > q {
					worst = max(worst, (p-q)/q)
					if (p-q)/q > limit+1e-9 {
						t.Fatalf("%s: a class holds %q at %.3f against %.3f in the input (gain %.3f, limit %.3f)", tt.privacy, v, p, q, (p-q)/q, limit)
					}
				}
			}
		}
		if len(rep.Verified.Sensitive) != 1 || math.Abs(rep.Verified.Sensitive[0].MaxGain-worst) > 1e-9 {
			t.Errorf("%s: the report's largest gain %+v, counted %g", tt.privacy, rep.Verified.Sensitive, worst)
		}
		if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
			t.Errorf("%s: check: %v", tt.privacy, err)
		}
		if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: plainOut}); !errors.Is(err, fault.ErrUnattainable) {
			t.Errorf("%s: check of the release without the model: %v, want it in breach", tt.privacy, err)
		}
		t.Logf("%s: node %v, %d suppressed, largest gain %.3f", tt.privacy, nodeOf(rep), rep.Suppressed, worst)
	}
}

// TestReleaseGrassberger: entropy l-diversity by Grassberger's estimator, the paper's
// and ARX's, releases classes that meet it, counted by the test (G by Grassberger's
// recursion); check agrees; the paper's is more lenient than Shannon's on the same l
// (a node no more general).
func TestReleaseGrassberger(t *testing.T) {
	modelsOnly(t)
	base, in, dir := hospitalFixture(t, 4000)
	raw, err := os.ReadFile(base.File)
	if err != nil {
		t.Fatal(err)
	}
	g := func(n int) float64 {
		v := -0.5772156649015329 - math.Ln2
		for m := 2; m <= n; m += 2 {
			v += 2 / float64(m-1)
		}
		return v
	}
	var nodes [][]report.NodeLevel
	for i, est := range []string{"grassberger", "shannon", "grassberger-arx"} {
		cfg := loadConfigText(t, testfiles.Replace(t, string(raw), "privacy: {k: 5, suppression: 0.05}",
			"privacy: {suppression: 0.05, l-diversity: {column: diagnosis, variant: entropy, l: 4, estimator: "+est+"}}"))
		out := filepath.Join(dir, fmt.Sprintf("g%d.csv", i))
		rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
		if err != nil {
			t.Fatalf("%s: %v", est, err)
		}
		nodes = append(nodes, rep.Node)
		if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
			t.Errorf("%s: check: %v", est, err)
		}
		if est == "shannon" {
			continue
		}
		classes := releasedHistograms(t, out, ',', hospitalQuasi, "diagnosis")
		for key, h := range classes {
			n, s := 0, 0.0
			for _, c := range h {
				n += c
				s += float64(c) * g(c)
			}
			lnN := math.Log(float64(n))
			if est == "grassberger-arx" { // ARX's rule: G(N) for ln N, and 4 values
				lnN = g(n)
				if len(h) < 4 {
					t.Fatalf("class %q: %d values under ARX's rule for l = 4", key, len(h))
				}
			}
			if v := lnN - s/float64(n); v < math.Log(4)-1e-9 {
				t.Fatalf("class %q: the %s estimate %g below ln 4", key, est, v)
			}
		}
	}
	sum := func(ns []report.NodeLevel) int {
		s := 0
		for _, n := range ns {
			s += n.Level
		}
		return s
	}
	if sum(nodes[0]) > sum(nodes[1]) {
		t.Errorf("Grassberger's node %v more general than Shannon's %v", nodes[0], nodes[1])
	}
	t.Logf("Grassberger's node %v, Shannon's %v", nodes[0], nodes[1])
}
