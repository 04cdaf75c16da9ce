package dphist

import (
	"fmt"
	"math"
	"runtime"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/google/differential-privacy/go/v3/dpagg"
	"github.com/google/differential-privacy/go/v3/noise"

	"sanitizer/fault"
	"sanitizer/internal/safe"
	"sanitizer/schema"
)

// Aggregate asks for per-group statistics of a numeric column, each group a cell of a
// declared domain (every group is released, empty ones too).
type Aggregate struct {
	Kind           schema.Mechanism
	Epsilon, Delta float64 // the output's budget, split equally among Stats
	// L0 is the number of groups one privacy unit may contribute to, LInf the number of
	// rows it may contribute to one group (both 1 without a privacy unit).
	L0, LInf     int64
	ReplaceOne   bool // neighbours differ by one replaced unit, not one added or removed
	Stats        []schema.Stat
	Lower, Upper float64   // every value is clamped to [Lower, Upper]
	Ranks        []float64 // for schema.StatQuantiles
}

// StatBudget is what one statistic of an aggregate spends and how its noise is
// calibrated: Epsilon and Delta are its share of the output's budget; LibEpsilon and
// LibDelta are what the library is given for add-remove neighbours (equal to the share
// under add-remove; under replace-one, group privacy for two add-remove steps: an
// (ε′, δ′) mechanism is (2ε′, (1+e^ε′)δ′)-DP for datasets two steps apart, so
// ε′ = ε/2 and δ′ = δ/(1+e^(ε/2)); counts instead double L0, which is exact for them).
// L0 and LInf are the sensitivities the library is given; LInf is in rows for counts,
// mean and quantiles, and in value units for sums.
type StatBudget struct {
	Stat                   schema.Stat `json:"stat"`
	Epsilon                float64     `json:"epsilon"`
	Delta                  float64     `json:"delta"`
	LibEpsilon             float64     `json:"library_epsilon"`
	LibDelta               float64     `json:"library_delta"`
	L0                     int64       `json:"l0"`
	LInf                   float64     `json:"linf"`
	HalfWidth95            float64     `json:"ci95_half_width,omitempty"` // counts and sums: data-independent
	SumLower, SumUpper     float64     `json:"-"`
	MaxContribPerPartition int64       `json:"-"`
}

// Check reports settings the library would refuse.
func (a Aggregate) Check() error {
	if err := (Mechanism{Kind: a.Kind, Epsilon: a.Epsilon, Delta: a.Delta, L0: a.L0, LInf: a.LInf}).Check(); err != nil {
		return err
	}
	if len(a.Stats) == 0 {
		return fmt.Errorf("no statistics asked for")
	}
	for _, s := range a.Stats {
		switch s {
		case schema.StatCount:
		case schema.StatSum, schema.StatMean, schema.StatQuantiles:
			if !(a.Lower < a.Upper) || math.IsInf(a.Lower, 0) || math.IsInf(a.Upper, 0) {
				return fmt.Errorf("%s needs finite bounds lower < upper, got [%g, %g]", s, a.Lower, a.Upper)
			}
		default:
			return fmt.Errorf("unknown statistic %q", s)
		}
	}
	for _, r := range a.Ranks {
		if !(r >= 0 && r <= 1) {
			return fmt.Errorf("quantile rank %g is not in [0, 1]", r)
		}
	}
	return nil
}

// Budgets is how the output's budget is spent, one entry per statistic.
func (a Aggregate) Budgets() ([]StatBudget, error) {
	if err := a.Check(); err != nil {
		return nil, err
	}
	n := float64(len(a.Stats))
	out := make([]StatBudget, len(a.Stats))
	for i, s := range a.Stats {
		b := StatBudget{Stat: s, Epsilon: a.Epsilon / n, Delta: a.Delta / n, L0: a.L0, LInf: float64(a.LInf)}
		b.LibEpsilon, b.LibDelta = b.Epsilon, b.Delta
		switch {
		case s == schema.StatCount && a.ReplaceOne:
			b.L0 = 2 * a.L0
		case a.ReplaceOne:
			b.LibEpsilon = b.Epsilon / 2
			b.LibDelta = b.Delta / (1 + math.Exp(b.Epsilon/2))
		}
		switch s {
		case schema.StatCount:
			hw, err := (Mechanism{Kind: a.Kind, Epsilon: b.LibEpsilon, Delta: b.LibDelta, L0: b.L0, LInf: a.LInf}).HalfWidth95()
			if err != nil {
				return nil, err
			}
			b.HalfWidth95 = hw
		case schema.StatSum:
			// A unit adds at most LInf rows, each clamped to [Lower, Upper], to a
			// group: its total there lies in [SumLower, SumUpper].
			m := float64(a.LInf)
			b.SumLower, b.SumUpper = math.Min(a.Lower, m*a.Lower), math.Max(a.Upper, m*a.Upper)
			b.LInf = math.Max(math.Abs(b.SumLower), math.Abs(b.SumUpper))
			ci, err := a.noise().ComputeConfidenceIntervalFloat64(0, b.L0, b.LInf, b.LibEpsilon, b.LibDelta, 0.05)
			if err != nil {
				return nil, err
			}
			b.HalfWidth95 = (ci.UpperBound - ci.LowerBound) / 2
		default:
			b.MaxContribPerPartition = a.LInf
		}
		out[i] = b
	}
	return out, nil
}

func (a Aggregate) noise() noise.Noise {
	if a.Kind == schema.Gaussian {
		return noise.Gaussian()
	}
	return noise.Laplace()
}

// GroupResult is one group's noisy statistics; the fields of statistics not asked for
// are zero.
type GroupResult struct {
	Count     int64
	Sum, Mean float64
	Quantiles []float64 // one per rank
}

// Compute returns the noisy statistics of every group: group[r] is row r's group
// (0 … groups−1), value[r] its value. Rows are assumed already bounded per privacy unit
// to L0 groups and LInf rows per group. NaN values are refused.
func (a Aggregate) Compute(group []int32, value []float64, groups int) ([]GroupResult, error) {
	budgets, err := a.Budgets()
	if err != nil {
		return nil, err
	}
	if len(group) != len(value) {
		return nil, fmt.Errorf("%d groups for %d values", len(group), len(value))
	}
	// The clamped values, grouped (a counting sort: one flat slice, no per-group
	// growth), then every group's statistics, groups in parallel.
	counts := make([]int64, groups)
	for r, g := range group {
		if g < 0 || int(g) >= groups {
			return nil, fmt.Errorf("row %d: group %d out of range", r, g)
		}
		if math.IsNaN(value[r]) {
			return nil, fmt.Errorf("row %d: the value is not a number", r)
		}
		counts[g]++
	}
	start := make([]int, groups+1)
	for g, c := range counts {
		start[g+1] = start[g] + int(c)
	}
	flat := make([]float64, len(value))
	next := slices.Clone(start[:groups])
	for r, g := range group {
		flat[next[g]] = math.Min(math.Max(value[r], a.Lower), a.Upper)
		next[g]++
	}
	out := make([]GroupResult, groups)
	var eg errgroup.Group
	eg.SetLimit(runtime.GOMAXPROCS(0))
	const chunks = 64 // of consecutive groups, so that many tiny groups cost no goroutine each
	for c := range min(chunks, groups) {
		lo, hi := groups*c/min(chunks, groups), groups*(c+1)/min(chunks, groups)
		eg.Go(safe.Go(func() error {
			for g := lo; g < hi; g++ {
				for _, b := range budgets {
					if err := a.stat(b, &out[g], counts[g], flat[start[g]:start[g+1]]); err != nil {
						return fmt.Errorf("%s: %w", b.Stat, err)
					}
				}
			}
			return nil
		}))
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// stat computes one statistic of one group into res.
func (a Aggregate) stat(b StatBudget, res *GroupResult, count int64, vals []float64) error {
	nz := a.noise()
	switch b.Stat {
	case schema.StatCount:
		m := Mechanism{Kind: a.Kind, Epsilon: b.LibEpsilon, Delta: b.LibDelta, L0: b.L0, LInf: a.LInf}
		c, err := m.Count(count)
		res.Count = c
		return err
	case schema.StatSum:
		s, err := dpagg.NewBoundedSumFloat64(&dpagg.BoundedSumFloat64Options{
			Epsilon: b.LibEpsilon, Delta: b.LibDelta, MaxPartitionsContributed: b.L0,
			Lower: b.SumLower, Upper: b.SumUpper, Noise: nz})
		if err = addAll(s, err, vals); err != nil {
			return err
		}
		res.Sum, err = s.Result()
		return err
	case schema.StatMean:
		s, err := dpagg.NewBoundedMean(&dpagg.BoundedMeanOptions{
			Epsilon: b.LibEpsilon, Delta: b.LibDelta, MaxPartitionsContributed: b.L0,
			MaxContributionsPerPartition: b.MaxContribPerPartition, Lower: a.Lower, Upper: a.Upper, Noise: nz})
		if err = addAll(s, err, vals); err != nil {
			return err
		}
		res.Mean, err = s.Result()
		return err
	case schema.StatQuantiles:
		s, err := dpagg.NewBoundedQuantiles(&dpagg.BoundedQuantilesOptions{
			Epsilon: b.LibEpsilon, Delta: b.LibDelta, MaxPartitionsContributed: b.L0,
			MaxContributionsPerPartition: b.MaxContribPerPartition, Lower: a.Lower, Upper: a.Upper, Noise: nz})
		if err = addAll(s, err, vals); err != nil {
			return err
		}
		res.Quantiles = make([]float64, len(a.Ranks))
		for i, r := range a.Ranks {
			if res.Quantiles[i], err = s.Result(r); err != nil {
				return err
			}
		}
	default:
		return fault.Internalf("unknown statistic %q", b.Stat)
	}
	return nil
}

// addAll adds vals to an aggregation the library just made (or returns the error of
// making it).
func addAll(s interface{ Add(float64) error }, made error, vals []float64) error {
	if made != nil {
		return made
	}
	for _, v := range vals {
		if err := s.Add(v); err != nil {
			return err
		}
	}
	return nil
}
