package report

import (
	"bytes"
	"strings"
	"testing"

	"sanitizer/dphist"
)

// TestSummaries: each summary says what its result holds, and only that.
func TestSummaries(t *testing.T) {
	tests := []struct {
		name     string
		write    func(*bytes.Buffer)
		want     []string
		wantNone []string
	}{
		{"release", func(b *bytes.Buffer) {
			r := &Report{Input: FileSummary{Rows: 10}, Output: FileSummary{Path: "r.csv", Rows: 8}, Suppressed: 2,
				Model: ModelSummary{K: 2, MaxSuppressed: 3}, Node: []NodeLevel{{Column: "age", Level: 1, Levels: 4}, {Column: "sex", Level: 0, Levels: 2}},
				Metric: MetricSummary{Name: "loss", Value: 0.25}, Verified: Verification{Classes: 3, MinClass: 2}}
			r.Summary(b)
		}, []string{"released 8 of 10 records to r.csv (2 suppressed, limit 3)", "node (level 0 = original values, the top = *): age level 1 of 0–3, sex level 0 of 0–1", "k=2 holds: 3 classes, smallest 2"},
			[]string{"warning", "mondrian"}},
		{"empty release", func(b *bytes.Buffer) {
			(&Report{Input: FileSummary{Rows: 4}, Suppressed: 4}).Summary(b)
		}, []string{"warning: " + EmptyRelease}, nil},
		{"mondrian", func(b *bytes.Buffer) {
			(&Report{Output: FileSummary{Rows: 1}, Partitions: &PartitionStats{Partitions: 5, Splits: 4}}).Summary(b)
		}, []string{"mondrian: 5 partitions after 4 splits"}, []string{"node (level"}},
		{"manifest", func(b *bytes.Buffer) {
			m := &Manifest{Epsilon: 1.5, Delta: 1e-6, Dataset: "h", Ledger: &ManifestLedger{EpsilonSpent: 2, EpsilonTotal: 10},
				Outputs: []ManifestOutput{
					{File: "h.csv", Kind: "histogram", Cells: 12, Mechanism: "laplace", Epsilon: 1, HalfWidth95: 2.996},
					{File: "a.csv", Kind: "aggregate", Stats: []dphist.StatBudget{{Stat: "count", HalfWidth95: 3}, {Stat: "median"}}},
					{File: "q.csv", Kind: "aggregate", Stats: []dphist.StatBudget{{Stat: "median"}}},
					{File: "s.csv", Kind: "synthetic", Synthetic: &dphist.SynthReport{Method: "aim", Rows: 100, Rounds: 3}},
				}}
			m.Summary(b, "out/manifest.json")
		}, []string{"h.csv: histogram, 12 cells, laplace ε=1 δ=0, 95% half-width 3", "a.csv: aggregate", "half-width count 3\n",
			"q.csv: aggregate, 0 cells,  ε=0 δ=0, 95% half-width data-dependent", "s.csv: synthetic, 100 records, aim", "spent ε=1.5 δ=1e-06; dataset \"h\" has spent ε=2 of 10", "manifest: out/manifest.json"}, nil},
		{"validation, lattice known", func(b *bytes.Buffer) {
			(&Validation{Release: true, Quasi: 2, Heights: []int{3, 2}, Lattice: 6, DP: 1, Rows: 7}).Summary(b, "c.yaml")
		}, []string{"ok: c.yaml is valid", "lattice 6 nodes (levels 3×2)", "dp: 1 outputs", "input: 7 records"}, []string{"give --in"}},
		{"validation, lattice from the data", func(b *bytes.Buffer) {
			(&Validation{Release: true, Quasi: 1, Rows: -1, Input: true}).Summary(b, "c.yaml")
		}, []string{"give --in", "input: its columns, types and domains agree"}, []string{"dp:", "records;"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			tc.write(&b)
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("summary lacks %q:\n%s", w, b.String())
				}
			}
			for _, w := range tc.wantNone {
				if strings.Contains(b.String(), w) {
					t.Errorf("summary holds %q:\n%s", w, b.String())
				}
			}
		})
	}
}
