package pgm

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// adultDom is the domain of the Adult table.
var adultDom = Domain{85, 9, 100, 16, 7, 15, 6, 5, 2, 100, 100, 99, 42, 2}

// adultProblem returns noisy measurements on adultDom: every one-way
// marginal plus k random 2- and 3-way cliques chosen so the model stays
// within budget cells, and the remaining random candidate cliques. The
// "true" table is a random model of 45222 records on a chain plus a few
// random pairs.
func adultProblem(tb testing.TB, seed uint64, k int, budget int64) (ms []Measurement, truth *Model, candidates [][]int) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 99))
	dom := adultDom
	var chain [][]int
	for i := 0; i+1 < len(dom); i++ {
		chain = append(chain, []int{i, i + 1})
	}
	// plus random pairs while the truth stays small
	for tries := 0; tries < 100 && len(chain) < len(dom)+7; tries++ {
		c := rng.Perm(len(dom))[:2]
		slices.Sort(c)
		if s, _ := ModelSize(dom, append(chain, c)); s <= 1<<19 {
			chain = append(chain, c)
		}
	}
	truth, err := newModel(dom, chain, randomTheta(rng, dom, chain, 1), 45222)
	if err != nil {
		tb.Fatal(err)
	}
	var cliques [][]int
	for a := range dom {
		cliques = append(cliques, []int{a})
	}
	seen := map[string]bool{}
	for tries := 0; tries < 2000 && len(cliques) < len(dom)+k; tries++ {
		c := rng.Perm(len(dom))[:2+rng.IntN(2)]
		slices.Sort(c)
		if seen[cliqueKey(c)] {
			continue
		}
		seen[cliqueKey(c)] = true
		s, _ := ModelSize(dom, append(cliques, c))
		if s > budget {
			candidates = append(candidates, c)
			continue
		}
		cliques = append(cliques, c)
	}
	for _, c := range cliques {
		y, err := truth.Marginal(c)
		if err != nil {
			tb.Fatal(err)
		}
		sigma := 20.0
		for i := range y {
			y[i] += sigma * rng.NormFloat64()
		}
		ms = append(ms, Measurement{Clique: c, Y: y, Sigma: sigma})
	}
	// fill the candidate list up to ~470 one- to three-way sets
	for len(candidates) < 470 {
		c := rng.Perm(len(dom))[:1+rng.IntN(3)]
		slices.Sort(c)
		candidates = append(candidates, c)
	}
	return ms, truth, candidates
}

func BenchmarkBP(b *testing.B) {
	for _, tc := range []struct {
		name   string
		budget int64
	}{{"1M", 1 << 20}, {"4M", 4 << 20}} {
		b.Run(tc.name, func(b *testing.B) {
			ms, _, _ := adultProblem(b, 1, 30, tc.budget)
			m, err := Estimate(context.Background(), adultDom, ms, EstimateOptions{Iters: 3})
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				m.e.bp()
			}
			b.ReportMetric(float64(m.Size()), "cells")
			b.ReportMetric(float64(len(m.e.jt.cliques)), "cliques")
		})
	}
}

func BenchmarkEstimateAdultLike(b *testing.B) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		budget int64
		warm   bool
		iters  int
	}{
		{"cold-1M-100it", 1 << 20, false, 100},
		{"warm-1M-50it", 1 << 20, true, 50},
		{"warm-4M-50it", 4 << 20, true, 50},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ms, _, _ := adultProblem(b, 2, 30, tc.budget)
			var warm *Model
			if tc.warm {
				var err error
				warm, err = Estimate(ctx, adultDom, ms[:len(ms)-1], EstimateOptions{Iters: 200})
				if err != nil {
					b.Fatal(err)
				}
			}
			var m *Model
			var err error
			var loss float64
			for b.Loop() {
				m, err = estimate(ctx, adultDom, ms, EstimateOptions{Iters: tc.iters, Warm: warm}, func(_ int, l, _ float64) { loss = l })
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(m.Size()), "cells")
			b.ReportMetric(loss, "loss")
		})
	}
}

// BenchmarkMarginals scores 470 candidate sets of 1–3 attributes the way
// a caller would: those whose MarginalCost exceeds 16 times the model size
// are skipped (reported as "skipped").
func BenchmarkMarginals(b *testing.B) {
	ms, _, cands := adultProblem(b, 3, 30, 2<<20)
	m, err := Estimate(context.Background(), adultDom, ms, EstimateOptions{Iters: 5})
	if err != nil {
		b.Fatal(err)
	}
	var sets [][]int
	var cost int64
	for _, c := range cands[:470] {
		if mc := m.MarginalCost(c); mc <= 16*m.Size() {
			sets = append(sets, c)
			cost += mc
		}
	}
	for b.Loop() {
		if _, err := m.Marginals(context.Background(), sets, 2); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(m.Size()), "cells")
	b.ReportMetric(float64(470-len(sets)), "skipped")
	b.ReportMetric(float64(cost), "costcells")
}

func BenchmarkSample(b *testing.B) {
	ms, _, _ := adultProblem(b, 4, 30, 2<<20)
	m, err := Estimate(context.Background(), adultDom, ms, EstimateOptions{Iters: 5})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := m.Sample(48842, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(m.Size()), "cells")
}

// BenchmarkRefine refines 48,842 sampled records on adultDom towards the 3-way
// marginals of a 2M-cell model (those of the 364 the default inference cap lets in),
// from a fresh copy each time.
func BenchmarkRefine(b *testing.B) {
	ms, _, _ := adultProblem(b, 4, 30, 2<<20)
	m, err := Estimate(context.Background(), adultDom, ms, EstimateOptions{Iters: 5})
	if err != nil {
		b.Fatal(err)
	}
	recs, err := m.Sample(48842, 1)
	if err != nil {
		b.Fatal(err)
	}
	sets := allSubsets(len(adultDom), 3)
	var st RefineStats
	for b.Loop() {
		b.StopTimer()
		cp := cloneRecs(recs)
		b.StartTimer()
		if st, err = m.Refine(context.Background(), cp, sets, RefineOptions{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(st.Sets), "sets")
	b.ReportMetric(float64(st.Accepted), "accepted")
	b.ReportMetric(st.After/st.Before, "after/before")
}

// BenchmarkAIMLike runs 30 rounds of the caller's loop on adultDom: score
// the candidate sets (skipping those costing more than 16 times the model
// size), add the candidate with the largest L1 error between the truth and
// the model (or a random one, which grows the model faster), and
// warm-start a 30-iteration re-estimate; the model is kept within 4M cells.
func BenchmarkAIMLike(b *testing.B) {
	b.Run("worst-error", func(b *testing.B) { benchAIMLike(b, false) })
	b.Run("random-pick", func(b *testing.B) { benchAIMLike(b, true) })
}

func benchAIMLike(b *testing.B, randomPick bool) {
	ctx := context.Background()
	const rounds = 30
	rng := rand.New(rand.NewPCG(6, 6))
	ms0, truth, _ := adultProblem(b, 6, 0, 1)
	var cands [][]int
	for i := 0; i < len(adultDom); i++ {
		for j := i + 1; j < len(adultDom); j++ {
			cands = append(cands, []int{i, j})
			for k := j + 1; k < len(adultDom); k++ {
				if rng.IntN(3) == 0 {
					cands = append(cands, []int{i, j, k})
				}
			}
		}
	}
	exact, err := truth.Marginals(ctx, cands, 2)
	if err != nil {
		b.Fatal(err)
	}
	var nbp, scored int
	var scoreTime, fitTime time.Duration
	for b.Loop() {
		ms := slices.Clone(ms0)
		m, err := Estimate(ctx, adultDom, ms, EstimateOptions{Iters: 50})
		if err != nil {
			b.Fatal(err)
		}
		for r := 0; r < rounds; r++ {
			t0 := time.Now()
			var sets [][]int
			var idx []int
			for i, c := range cands {
				s, _ := ModelSize(adultDom, append(m.Cliques(), c))
				if s <= 4<<20 && m.MarginalCost(c) <= 16*m.Size() {
					sets = append(sets, c)
					idx = append(idx, i)
				}
			}
			est, err := m.Marginals(ctx, sets, 2)
			if err != nil {
				b.Fatal(err)
			}
			scored += len(sets)
			best, bestErr := -1, -1.0
			for i := range sets {
				if e := relL1(est[i], exact[idx[i]], 1); e > bestErr {
					best, bestErr = i, e
				}
			}
			if randomPick {
				best = rng.IntN(len(sets))
			}
			t1 := time.Now()
			c := sets[best]
			y := slices.Clone(exact[idx[best]])
			for i := range y {
				y[i] += 20 * rng.NormFloat64()
			}
			ms = append(ms, Measurement{Clique: c, Y: y, Sigma: 20})
			m, err = Estimate(ctx, adultDom, ms, EstimateOptions{Iters: 30, Warm: m})
			if err != nil {
				b.Fatal(err)
			}
			nbp += m.e.nbp
			scoreTime += t1.Sub(t0)
			fitTime += time.Since(t1)
		}
		b.ReportMetric(float64(m.Size()), "cells")
	}
	b.ReportMetric(float64(nbp)/float64(b.N*rounds), "BPs/round")
	b.ReportMetric(float64(scored)/float64(b.N*rounds), "scored/round")
	b.ReportMetric(scoreTime.Seconds()/float64(b.N*rounds), "score-s/round")
	b.ReportMetric(fitTime.Seconds()/float64(b.N*rounds), "fit-s/round")
}

// BenchmarkMarginalCost prices the 470 candidate sets of BenchmarkMarginals.
func BenchmarkMarginalCost(b *testing.B) {
	ms, _, cands := adultProblem(b, 3, 30, 2<<20)
	m, err := Estimate(context.Background(), adultDom, ms, EstimateOptions{Iters: 5})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		for _, c := range cands[:470] {
			m.MarginalCost(c)
		}
	}
}

// BenchmarkModelSize prices 470 hypothetical clique sets (the model's
// cliques plus one candidate each).
func BenchmarkModelSize(b *testing.B) {
	ms, _, cands := adultProblem(b, 3, 30, 2<<20)
	var cl [][]int
	for _, m := range ms {
		cl = append(cl, m.Clique)
	}
	for b.Loop() {
		for _, c := range cands[:470] {
			if _, err := ModelSize(adultDom, append(cl[:len(cl):len(cl)], c)); err != nil {
				b.Fatal(err)
			}
		}
	}
}
