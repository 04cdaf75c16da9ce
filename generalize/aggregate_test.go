package generalize

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"sanitizer/diversity"
	"sanitizer/schema"
)

// TestSearchRandomAggregatesMatchExhaustive: the loss metric with each aggregate, and
// with weights, against the exhaustive optimum (the oracle's own rational arithmetic),
// with and without suppression and with distinct l-diversity; each must change the
// unweighted mean's optimum in some trials (the sum never).
func TestSearchRandomAggregatesMatchExhaustive(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 23))
	trials := 150
	if testing.Short() {
		trials = 30 // the race run: the search's agreement, not the coverage guard
	}
	for _, agg := range []string{string(AggregateGeometric), string(AggregateSum), string(AggregateMax), "weighted " + string(AggregateArithmetic), "weighted " + string(AggregateMax)} {
		differs := 0
		for trial := range trials {
			n := 20 + rng.IntN(200)
			tab, raw, hier := randomTable(rng, n, 2+rng.IntN(3))
			k := 1 + rng.IntN(6)
			maxSupp := 0
			if rng.IntN(2) == 0 {
				maxSupp = rng.IntN(n/4 + 1)
			}
			o := newOracle(raw, hier)
			var div []Diversity
			var holds func([]map[string]int) bool
			if rng.IntN(3) == 0 {
				sensitive, sens := skewedSensitive(rng, n, 2+rng.IntN(4))
				tab.Sensitive = []Sensitive{sensitive}
				o.sens = [][]string{sens}
				div = []Diversity{{0, diversity.Model{Variant: diversity.Distinct, L: 2}}}
				holds = first(oracleDistinct(2))
			}
			name, weights := agg, []float64(nil)
			if rest, ok := strings.CutPrefix(agg, "weighted "); ok {
				name = rest
				for range tab.Columns {
					weights = append(weights, []float64{0.1, 0.5, 1, 2, 3.7}[rng.IntN(5)])
				}
			}
			t.Run(fmt.Sprintf("%s/trial%d/n=%d/k=%d/supp=%d/w=%v", agg, trial, n, k, maxSupp, weights), func(t *testing.T) {
				q := oracleQuery{k: k, maxSupp: maxSupp, metric: MetricLoss, aggregate: schema.LossAggregate(name), weights: weights, holds: holds}
				matchOracle(t, o, tab, q, Options{K: k, MaxSuppressed: maxSupp, Diversity: div, Aggregate: schema.LossAggregate(name), Weights: weights})
				mean := o.bestMany(t, []oracleQuery{{k: k, maxSupp: maxSupp, metric: MetricLoss, holds: holds}, q})
				if mean[0] != nil && mean[1] != nil && fmt.Sprint(mean[0].node) != fmt.Sprint(mean[1].node) {
					differs++
				}
			})
		}
		t.Logf("%s: the optimum differs from the arithmetic mean's in %d of %d trials", agg, differs, trials)
		if !testing.Short() && agg != string(AggregateSum) && differs < 5 {
			t.Errorf("%s: the optimum differs from the mean's in only %d trials: the test checks too little", agg, differs)
		}
		if agg == string(AggregateSum) && differs != 0 {
			t.Errorf("the sum ordered nodes differently from the mean in %d trials", differs)
		}
	}
}

// BenchmarkSearchAdultAggregates measures the loss search on Adult (k=5, 5%) under each
// aggregate (BENCHMARKS.md compares them with the mean).
func BenchmarkSearchAdultAggregates(b *testing.B) {
	tab, _, _ := loadAdult(b)
	for _, agg := range []schema.LossAggregate{AggregateArithmetic, AggregateGeometric, AggregateSum, AggregateMax} {
		b.Run(string(agg), func(b *testing.B) {
			var res *Result
			for b.Loop() {
				var err error
				res, err = Search(context.Background(), tab, Options{K: 5, MaxSuppressed: int(math.Floor(0.05 * float64(tab.Rows))), Aggregate: agg})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(res.Evaluated), "evaluated")
		})
	}
}
