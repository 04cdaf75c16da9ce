package release

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/generalize"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/report"
	"sanitizer/schema"
)

// nodeClassSizes recounts, from the input CSV and the configuration's hierarchies (built
// here from the input's values), the size of every class of the node with the given
// levels, suppressed or not, without the search.
func nodeClassSizes(t *testing.T, cfg *schema.Config, in string, levels []int) []int {
	t.Helper()
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header, rows := recs[0], recs[1:]
	quasi := cfg.Quasi()
	if len(levels) != len(quasi) {
		t.Fatalf("node of %d levels for %d quasi-identifiers", len(levels), len(quasi))
	}
	keys := make([]string, len(rows))
	for i, c := range quasi {
		at := -1
		for j, h := range header {
			if h == c.Name {
				at = j
			}
		}
		seen := map[string]bool{}
		var values []string
		for _, r := range rows {
			if !seen[r[at]] {
				seen[r[at]] = true
				values = append(values, r[at])
			}
		}
		var h *generalize.Hierarchy
		switch hs := c.Hierarchy; {
		case hs.Intervals != nil:
			h, err = generalize.BuildIntervals(c.Name, values, c.Type, hs.Intervals)
		case hs.Mask != nil:
			h, err = generalize.BuildMask(c.Name, values, *hs.Mask)
		case hs.Date != nil:
			h, err = generalize.BuildDate(c.Name, values, hs.Date)
		default:
			raw, rerr := os.ReadFile(hs.File)
			if rerr != nil {
				t.Fatal(rerr)
			}
			var hrows [][]string
			for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
				hrows = append(hrows, strings.Split(strings.TrimRight(line, "\r"), ";"))
			}
			h, err = generalize.NewHierarchy(hs.File, hrows)
		}
		if err != nil {
			t.Fatal(err)
		}
		for r, row := range rows {
			leaf, ok := h.Leaf(row[at])
			if !ok {
				t.Fatalf("%s: %q not in its hierarchy", c.Name, row[at])
			}
			keys[r] += h.Value(levels[i], h.Code(levels[i], leaf)) + "\x1f"
		}
	}
	count := map[string]int{}
	for _, k := range keys {
		count[k]++
	}
	var sizes []int
	for _, n := range count {
		sizes = append(sizes, n)
	}
	return sizes
}

// TestReleaseObjectives: a release under each objective of the optimal search succeeds,
// passes check, and reports the metric's name and its value at the chosen node as this
// test recomputes it from the input, the node and the definition; a Mondrian release
// with one of them is bad input naming search.metric.
func TestReleaseObjectives(t *testing.T) {
	modelsOnly(t)
	cfg, in, _ := hospitalFixture(t, 2000)
	raw, err := os.ReadFile(cfg.File)
	if err != nil {
		t.Fatal(err)
	}
	base := string(raw)
	for _, metric := range []schema.Metric{generalize.MetricHeight, generalize.MetricPrecision, generalize.MetricAECS, generalize.MetricDiscernibilityStar} {
		t.Run(string(metric), func(t *testing.T) {
			text := testfiles.Replace(t, base, "search: {algorithm: optimal, metric: loss}", "search: {algorithm: optimal, metric: "+string(metric)+"}")
			if text == base {
				t.Fatal("the fixture's search line changed")
			}
			cfg := loadConfigText(t, text)
			out := filepath.Join(t.TempDir(), "release.csv")
			rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
				t.Fatalf("check: %v", err)
			}
			if rep.Metric.Name != metric {
				t.Fatalf("metric name %q, want %q", rep.Metric.Name, metric)
			}
			levels := nodeOf(rep)
			sizes := nodeClassSizes(t, cfg, in, levels)
			k := cfg.Privacy.K
			n, supp, published := 0, 0, 0
			var dmStar int64
			for _, s := range sizes {
				n += s
				dmStar += int64(s) * int64(s)
				if s < k {
					supp += s
				} else {
					published++
				}
			}
			if supp != rep.Suppressed || published != rep.Classes {
				t.Fatalf("recount: %d suppressed, %d classes; the release says %d, %d", supp, published, rep.Suppressed, rep.Classes)
			}
			want := new(big.Rat)
			switch metric {
			case generalize.MetricHeight:
				for _, l := range levels {
					want.Add(want, big.NewRat(int64(l), 1))
				}
			case generalize.MetricPrecision:
				// Σ over columns of ((N−S)·level/(levels−1) + S), over N·q.
				for _, nl := range rep.Node {
					want.Add(want, big.NewRat(int64((n-supp)*nl.Level), int64(nl.Levels-1)))
					want.Add(want, big.NewRat(int64(supp), 1))
				}
				want.Quo(want, big.NewRat(int64(n*len(levels)), 1))
			case generalize.MetricAECS:
				groups := published
				if supp > 0 {
					groups++
				}
				want.SetFrac64(int64(n), int64(groups))
			case generalize.MetricDiscernibilityStar:
				want.SetInt64(dmStar)
			}
			wv, _ := want.Float64()
			if math.Abs(rep.Metric.Value-wv) > 1e-12*math.Max(1, wv) {
				t.Fatalf("node %v: %s %.15g, recomputed %s", levels, metric, rep.Metric.Value, want.RatString())
			}
			t.Logf("node %v: %s = %s, %d suppressed, %d classes", levels, metric, want.RatString(), supp, published)
		})
		t.Run("mondrian/"+string(metric), func(t *testing.T) {
			text := testfiles.Replace(t, base, "search: {algorithm: optimal, metric: loss}", "search: {algorithm: mondrian, metric: "+string(metric)+"}")
			cfg := loadConfigText(t, text)
			out := filepath.Join(t.TempDir(), "release.csv")
			rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
			if metric == generalize.MetricHeight || metric == generalize.MetricPrecision {
				if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "search.metric") {
					t.Fatalf("got %v, want bad input naming search.metric", err)
				}
				if _, serr := os.Stat(out); !os.IsNotExist(serr) {
					t.Fatalf("a refused release wrote %s", out)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// The value from the written file's classes (Mondrian suppresses nothing).
			header, rows := readTable(t, out, ',')
			var pos []int
			for _, q := range []string{"age", "sex", "zip", "admitted"} {
				pos = append(pos, slices.Index(header, q))
			}
			sizes := map[string]int{}
			for _, r := range rows {
				sizes[r[pos[0]]+"\x1f"+r[pos[1]]+"\x1f"+r[pos[2]]+"\x1f"+r[pos[3]]]++
			}
			want := float64(len(rows)) / float64(len(sizes))
			if metric == generalize.MetricDiscernibilityStar {
				want = 0
				for _, c := range sizes {
					want += float64(c) * float64(c)
				}
			}
			if rep.Metric.Name != metric || math.Abs(rep.Metric.Value-want) > 1e-9*math.Max(1, want) {
				t.Fatalf("report %s = %g, counted from the file %g", rep.Metric.Name, rep.Metric.Value, want)
			}
		})
	}
}

// TestReleaseLossAggregates: a release under each aggregate of the loss names it in its
// report and passes check; the sum is q times the mean and the mean is the utility's
// loss (the search's optimum under each aggregate is TestSearchRandomAggregates's);
// Mondrian refuses all but the mean.
func TestReleaseLossAggregates(t *testing.T) {
	modelsOnly(t)
	base, in, dir := hospitalFixture(t, 3000)
	raw, err := os.ReadFile(base.File)
	if err != nil {
		t.Fatal(err)
	}
	for _, agg := range []schema.LossAggregate{generalize.AggregateArithmetic, generalize.AggregateGeometric, generalize.AggregateSum, generalize.AggregateMax} {
		cfg := loadConfigText(t, testfiles.Replace(t, string(raw), "search: {algorithm: optimal, metric: loss}", "search: {algorithm: optimal, metric: loss, aggregate: "+string(agg)+"}"))
		out := filepath.Join(dir, string(agg)+".csv")
		rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
		if err != nil {
			t.Fatalf("%s: %v", agg, err)
		}
		if rep.Metric.Name != generalize.MetricLoss || rep.Metric.Aggregate != agg || !(rep.Metric.Value >= 0) {
			t.Errorf("%s: report metric %+v", agg, rep.Metric)
		}
		if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
			t.Errorf("%s: check: %v", agg, err)
		}
		if agg == generalize.AggregateSum && math.Abs(rep.Metric.Value-4*rep.Utility.Loss) > 1e-12 {
			t.Errorf("sum %g is not 4 × the mean %g", rep.Metric.Value, rep.Utility.Loss)
		}
		if agg == generalize.AggregateArithmetic && math.Abs(rep.Metric.Value-rep.Utility.Loss) > 1e-12 {
			t.Errorf("mean %g is not the utility's loss %g", rep.Metric.Value, rep.Utility.Loss)
		}
		t.Logf("%s: node %v, value %.4f", agg, nodeOf(rep), rep.Metric.Value)
	}
	text := testfiles.Replace(t, string(raw), "search: {algorithm: optimal, metric: loss}", "search: {algorithm: mondrian, metric: loss, aggregate: max}")
	_, err = Release(context.Background(), loadConfigText(t, text), job.Options{Input: in, Output: filepath.Join(dir, "m.csv")})
	if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "search.aggregate") {
		t.Errorf("mondrian with max: %v, want bad input naming search.aggregate", err)
	}
}

// TestReleaseLossWeights: weighting one quasi-identifier's loss heavily never lets the
// release generalize it further than the unweighted release does, and names the
// weights in the report; Mondrian refuses weights.
func TestReleaseLossWeights(t *testing.T) {
	base, in, dir := hospitalFixture(t, 3000)
	raw, err := os.ReadFile(base.File)
	if err != nil {
		t.Fatal(err)
	}
	level := func(rep *report.Report, col string) int {
		for _, n := range rep.Node {
			if n.Column == col {
				return n.Level
			}
		}
		t.Fatalf("no %s in %v", col, rep.Node)
		return 0
	}
	var reps []*report.Report
	for i, search := range []string{"search: {algorithm: optimal, metric: loss}", "search: {algorithm: optimal, metric: loss, weights: {admitted: 50}}"} {
		cfg := loadConfigText(t, testfiles.Replace(t, string(raw), "search: {algorithm: optimal, metric: loss}", search))
		out := filepath.Join(dir, fmt.Sprintf("w%d.csv", i))
		rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
			t.Errorf("%s: check: %v", search, err)
		}
		reps = append(reps, rep)
	}
	if level(reps[1], "admitted") > level(reps[0], "admitted") || reps[1].Metric.Weights["admitted"] != 50 {
		t.Errorf("admitted weighted 50: node %v (weights %v); unweighted %v", nodeOf(reps[1]), reps[1].Metric.Weights, nodeOf(reps[0]))
	}
	if slices.Equal(nodeOf(reps[0]), nodeOf(reps[1])) {
		t.Errorf("the weight changed nothing (node %v): the test checks too little", nodeOf(reps[0]))
	}
	t.Logf("unweighted %v, admitted weighted 50: %v", nodeOf(reps[0]), nodeOf(reps[1]))
	text := testfiles.Replace(t, string(raw), "search: {algorithm: optimal, metric: loss}", "search: {algorithm: mondrian, metric: loss, weights: {age: 2}}")
	if _, err := Release(context.Background(), loadConfigText(t, text), job.Options{Input: in, Output: filepath.Join(dir, "m.csv")}); !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "search.weights") {
		t.Errorf("mondrian with weights: %v", err)
	}
}
