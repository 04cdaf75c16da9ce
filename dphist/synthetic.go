package dphist

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"

	"golang.org/x/sync/errgroup"

	"sanitizer/dphist/pgm"
	"sanitizer/internal/safe"
	"sanitizer/schema"
)

// DefaultMaxModelSize is the default cap on the cells of the fitted model.
const DefaultMaxModelSize = 1 << 22

// Synth describes a synthetic-records output: the columns' domain sizes, the workload
// the records should answer well, the budget, and how much one privacy unit can change
// one marginal.
type Synth struct {
	Method schema.SynthesisMethod
	Sizes  []int // domain size of every column
	// Workload is the marginals the records should answer well, as cliques of column
	// indices (each ascending): AIM's target queries, and the marginals the sampled
	// records are moved towards (the model's) under either method.
	Workload [][]int
	Epsilon  float64
	Delta    float64
	// L1 and L2 bound the change of one marginal's counts when one privacy unit is added
	// or removed (or replaced, under that neighbouring relation): the exponential
	// mechanism's scores move by at most weight·L1, the Gaussian measurements are
	// calibrated to L2.
	L1, L2       float64
	MaxModelSize int64  // cells; 0: DefaultMaxModelSize
	Rows         int    // records to sample; 0: the model's (noisy) total
	Seed         uint64 // the seed of the sampler and of the refinement (both post-processing)
	Workers      int    // 0: GOMAXPROCS
	// Iters is the number of estimation iterations after each measurement and
	// FinalIters at the end (0: defaults).
	Iters, FinalIters int
}

// SynthReport says what a synthetic output measured and spent, never a data value.
type SynthReport struct {
	Method    schema.SynthesisMethod `json:"method"`
	Rho       float64                `json:"zcdp_rho"` // the budget: the largest ρ that gives (ε, δ)
	RhoSpent  float64                `json:"zcdp_rho_spent"`
	Rounds    int                    `json:"rounds"`
	Measured  []SynthMeasure         `json:"measured"`
	ModelSize int64                  `json:"model_cells"`
	Rows      int                    `json:"rows"`
	// RefinedSets is the number of workload marginals the sampled records were moved
	// towards (the model's, see pgm.Model.Refine) and RefineMoves the changes kept.
	RefinedSets int `json:"refined_sets"`
	RefineMoves int `json:"refine_moves"`
}

// The refinement's tables may hold refineCellsPerModelCell cells (float32) per cell
// the model may hold (float64), and its proposals draw from the sampler's seed mixed
// with refineSeedMix.
const (
	refineCellsPerModelCell = 8
	refineSeedMix           = 0x9e3779b97f4a7c15
)

// SynthMeasure is one measured marginal: its columns, the Gaussian σ added to each of
// its cells, and the ρ it cost with the selection that chose it.
type SynthMeasure struct {
	Columns []int    `json:"-"`
	Names   []string `json:"columns"`
	Sigma   float64  `json:"sigma"`
	Rho     float64  `json:"zcdp_rho"`
	// SelectEpsilon is the ε of the exponential mechanism that selected it (0 for the
	// marginals measured without selection).
	SelectEpsilon float64 `json:"select_epsilon,omitempty"`
}

// Synthesize draws synthetic records from the columns cols (cols[i][r] is row r's
// value number in column i; keep, when not nil, is the rows that count) under
// (ε, δ)-differential privacy: AIM (McKenna, Mullins, Sheldon, Miklau 2022, "AIM: an
// adaptive and iterative mechanism for differentially private synthetic data") or MST
// (McKenna, Miklau, Sheldon 2021, "Winning the NIST contest: a scalable and general
// approach to differentially private synthetic data"). The records are column-major.
//
// Privacy: the mechanism is ρ-zCDP with ρ = ZCDPRho(ε, δ), so (ε, δ)-DP. It spends ρ
// on Gaussian measurements of marginals (GaussianRho with sensitivity L2) and on
// exponential-mechanism selections (ExponentialRho, with scores of sensitivity
// weight·L1), every spend charged to a ZCDPBudget of total ρ, which refuses to exceed
// it. Everything after the measurements (estimation, sampling, the refinement of the
// sampled records towards the model's workload marginals, the record count when Rows
// is 0) is post-processing of noisy values.
func Synthesize(ctx context.Context, s Synth, cols [][]int32, keep []bool) ([][]int32, *SynthReport, error) {
	if err := s.check(cols); err != nil {
		return nil, nil, err
	}
	rho, err := ZCDPRho(s.Epsilon, s.Delta)
	if err != nil {
		return nil, nil, err
	}
	r := &synthRun{Synth: s, cols: cols, keep: keep, budget: ZCDPBudget{Total: rho},
		rep: &SynthReport{Method: s.Method, Rho: rho}, dom: pgm.Domain(s.Sizes)}
	if r.Workers <= 0 {
		r.Workers = runtime.GOMAXPROCS(0)
	}
	if r.MaxModelSize <= 0 {
		r.MaxModelSize = DefaultMaxModelSize
	}
	if r.Iters <= 0 {
		r.Iters = 100
	}
	if r.FinalIters <= 0 {
		r.FinalIters = 1000
	}
	var model *pgm.Model
	var expand func([][]int32)
	if s.Method == schema.MST {
		model, expand, err = r.mst(ctx)
	} else {
		model, err = r.aim(ctx)
	}
	if err != nil {
		return nil, nil, err
	}
	r.rep.RhoSpent = r.budget.Spent()
	r.rep.ModelSize = model.Size()
	n := s.Rows
	if n <= 0 {
		n = int(math.Max(1, math.Round(model.Total)))
	}
	out, err := model.Sample(n, s.Seed)
	if err != nil {
		return nil, nil, err
	}
	if len(r.Workload) > 0 {
		st, err := model.Refine(ctx, out, r.Workload, pgm.RefineOptions{
			MaxCells: satMul(refineCellsPerModelCell, r.MaxModelSize), Workers: r.Workers, Seed: s.Seed ^ refineSeedMix})
		if err != nil {
			return nil, nil, err
		}
		r.rep.RefinedSets, r.rep.RefineMoves = st.Sets, st.Accepted
	}
	if expand != nil {
		expand(out)
	}
	r.rep.Rows = n
	return out, r.rep, nil
}

func (s Synth) check(cols [][]int32) error {
	switch {
	case s.Method != schema.AIM && s.Method != schema.MST:
		return fmt.Errorf("synthetic: unknown method %q (aim or mst)", s.Method)
	case len(s.Sizes) == 0 || len(cols) != len(s.Sizes):
		return fmt.Errorf("synthetic: %d columns for %d domains", len(cols), len(s.Sizes))
	case !(s.L1 >= 1) || !(s.L2 > 0) || math.IsInf(s.L1, 1) || math.IsInf(s.L2, 1):
		return fmt.Errorf("synthetic: sensitivities L1=%g, L2=%g must be finite, L1 ≥ 1", s.L1, s.L2)
	case s.Rows < 0:
		return fmt.Errorf("synthetic: %d rows", s.Rows)
	}
	for i, n := range s.Sizes {
		if n < 1 {
			return fmt.Errorf("synthetic: column %d has an empty domain", i)
		}
	}
	for _, w := range s.Workload {
		if len(w) == 0 || !sort.IntsAreSorted(w) {
			return fmt.Errorf("synthetic: workload clique %v is empty or not ascending", w)
		}
		for j, a := range w {
			if a < 0 || a >= len(s.Sizes) || (j > 0 && w[j-1] == a) {
				return fmt.Errorf("synthetic: workload clique %v: bad column", w)
			}
		}
	}
	return nil
}

// synthRun is one run's state.
type synthRun struct {
	Synth
	cols   [][]int32
	keep   []bool
	dom    pgm.Domain
	budget ZCDPBudget
	rep    *SynthReport
	ms     []pgm.Measurement
	expand func([][]int32) // maps sampled records back to the original domains (MST)
}

// count is the true marginal over attrs (ascending), from the kept rows.
func (r *synthRun) count(attrs []int) []float64 {
	sub, sizes := make([][]int32, len(attrs)), make([]int, len(attrs))
	n := 1
	for j, a := range attrs {
		sub[j], sizes[j] = r.cols[a], r.Sizes[a]
		n *= r.Sizes[a]
	}
	counts := make([]int64, n)
	if r.keep == nil {
		Count(counts, sub, sizes)
	} else {
		CountKept(counts, sub, sizes, r.keep)
	}
	x := make([]float64, n)
	for i, c := range counts {
		x[i] = float64(c)
	}
	return x
}

// measure adds the measurement of attrs (true marginal x, counted here when nil) with
// Gaussian noise of standard deviation sigma·L2 (ρ = 1/(2σ²)), charging its ρ first.
func (r *synthRun) measure(ctx context.Context, attrs []int, x []float64, sigma, selectEps float64) error {
	g, err := NewGaussianNoise(sigma * r.L2)
	if err != nil {
		return err
	}
	rho := GaussianRho(r.L2, g.Scale)
	if err := r.budget.Spend(rho); err != nil {
		return err
	}
	if x == nil {
		x = r.count(attrs)
	}
	y := make([]float64, len(x))
	eg, ctx := errgroup.WithContext(ctx)
	chunk := (len(x) + r.Workers - 1) / r.Workers
	for lo := 0; lo < len(x); lo += chunk {
		hi := min(lo+chunk, len(x))
		eg.Go(safe.Go(func() error {
			for i := lo; i < hi; i++ {
				if i%4096 == 0 {
					if err := ctx.Err(); err != nil {
						return err
					}
				}
				v, err := g.Add(x[i])
				if err != nil {
					return err
				}
				y[i] = v
			}
			return nil
		}))
	}
	if err := eg.Wait(); err != nil {
		return err
	}
	r.ms = append(r.ms, pgm.Measurement{Clique: slices.Clone(attrs), Y: y, Sigma: g.Scale})
	r.rep.Measured = append(r.rep.Measured, SynthMeasure{Columns: slices.Clone(attrs), Sigma: g.Scale,
		Rho: rho + ExponentialRho(selectEps), SelectEpsilon: selectEps})
	return nil
}

// selectOne charges an exponential-mechanism selection of ε and runs it.
func (r *synthRun) selectOne(scores []float64, eps, sensitivity float64) (int, error) {
	if err := r.budget.Spend(ExponentialRho(eps)); err != nil {
		return 0, err
	}
	return Select(scores, eps, sensitivity)
}

func (r *synthRun) estimate(ctx context.Context, warm *pgm.Model, iters int) (*pgm.Model, error) {
	return pgm.Estimate(ctx, r.dom, r.ms, pgm.EstimateOptions{Iters: iters, Warm: warm})
}

// Work budgets of the estimation, in model cells × iterations: a round's re-fit and
// the final fit take at most this much (and at least minRoundIters / minFinalIters
// iterations), so a large model costs fewer, warm-started, iterations.
const (
	roundWork, minRoundIters = 2e7, 10
	finalWork, minFinalIters = 2e8, 50
)

// itersFor is the number of iterations for a model of the given cells: at most max,
// at least min, and within work otherwise.
func itersFor(cells int64, max, min int, work float64) int {
	n := int(work / float64(cells+1))
	return int(math.Max(float64(min), math.Min(float64(max), float64(n))))
}

// candidate is a marginal AIM may measure, with its workload weight.
type candidate struct {
	attrs  []int
	weight float64
	cells  int64
	truth  []float64 // the true marginal, counted when first needed
}

// candidates is the downward closure of the workload (every non-empty subset of a
// workload clique), each weighted by Σ over workload cliques s of |r ∩ s| (AIM), in a
// fixed order; those with more cells than the model may hold are left out (a choice
// that does not look at the data).
func (r *synthRun) candidates() []*candidate {
	seen := map[string]*candidate{}
	var out []*candidate
	for _, w := range r.Workload {
		for mask := 1; mask < 1<<len(w); mask++ {
			var attrs []int
			for j, a := range w {
				if mask&(1<<j) != 0 {
					attrs = append(attrs, a)
				}
			}
			key := fmt.Sprint(attrs)
			if seen[key] != nil {
				continue
			}
			cells := int64(1)
			for _, a := range attrs {
				cells = satMul(cells, int64(r.Sizes[a]))
			}
			if cells > r.MaxModelSize {
				continue
			}
			c := &candidate{attrs: attrs, cells: cells}
			for _, s := range r.Workload {
				c.weight += float64(intersect(attrs, s))
			}
			seen[key] = c
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if len(out[i].attrs) != len(out[j].attrs) {
			return len(out[i].attrs) < len(out[j].attrs)
		}
		return slices.Compare(out[i].attrs, out[j].attrs) < 0
	})
	return out
}

func intersect(a, b []int) int {
	n := 0
	for _, x := range a {
		if slices.Contains(b, x) {
			n++
		}
	}
	return n
}

func satMul(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}

// aim runs AIM: measure every 1-way marginal, then in rounds select (exponential
// mechanism on the workload-weighted L1 error of the current model, less the error the
// noise alone would cause) the candidate the model answers worst among those that keep
// the model within a size growing with the budget spent, measure it, re-estimate, and
// halve the noise when the new measurement taught the model little; the last round
// spends what is left. Constants are the paper's: at most 16·d rounds' worth of
// budget at the start, 90% on measurements and 10% on selections.
func (r *synthRun) aim(ctx context.Context) (*pgm.Model, error) {
	d := len(r.Sizes)
	rho := r.budget.Total
	rounds := 16 * d
	sigma := math.Sqrt(float64(rounds) / (2 * 0.9 * rho))
	eps := math.Sqrt(8 * 0.1 * rho / float64(rounds))
	for a := range d {
		if err := r.measure(ctx, []int{a}, nil, sigma, 0); err != nil {
			return nil, err
		}
	}
	model, err := r.estimate(ctx, nil, r.Iters)
	if err != nil {
		return nil, err
	}
	cands := r.candidates()
	if len(cands) == 0 {
		return r.estimate(ctx, model, r.FinalIters)
	}
	for last := false; !last; {
		r.rep.Rounds++
		// Round cost at the current σ and ε (the measurement's ρ at σ·L2 noise is
		// 1/(2σ²); the library's σ is up to 0.1% larger, which only spends less).
		cost := func(s, e float64) float64 { return 1/(2*s*s) + e*e/8 }
		if rem := r.budget.Remaining(); rem < 2*cost(sigma, eps) {
			rem *= 1 - 1e-9 // floating point must never tip the spend over the total
			sigma = math.Sqrt(1 / (2 * 0.9 * rem))
			eps = math.Sqrt(8 * 0.1 * rem)
			last = true
		}
		spentAfter := r.budget.Spent() + cost(sigma, eps)
		limit := int64(float64(r.MaxModelSize) * math.Min(1, spentAfter/rho))
		chosen, before, err := r.aimSelect(ctx, model, cands, limit, sigma, eps)
		if err != nil {
			return nil, err
		}
		c := cands[chosen]
		if err := r.measure(ctx, c.attrs, c.truth, sigma, eps); err != nil {
			return nil, err
		}
		size, err := pgm.ModelSize(r.dom, append(model.Cliques(), c.attrs))
		if err != nil {
			return nil, err
		}
		iters := itersFor(size, r.Iters, minRoundIters, roundWork)
		if last {
			iters = itersFor(size, r.FinalIters, minFinalIters, finalWork)
		}
		if model, err = r.estimate(ctx, model, iters); err != nil {
			return nil, err
		}
		after, err := model.Marginal(c.attrs)
		if err != nil {
			return nil, err
		}
		if l1(after, before) <= math.Sqrt(2/math.Pi)*sigma*r.L2*float64(c.cells) {
			sigma /= 2
			eps *= 2
		}
	}
	return model, nil
}

// A candidate whose marginal costs more than marginalCostFactor × the model's cells
// (and more than minMarginalCost) cell operations to infer is not scored.
const (
	marginalCostFactor = 8
	minMarginalCost    = 1 << 20
)

// aimSelect scores the candidates that fit (or are already inside the model's
// cliques) and selects one with the exponential mechanism; it returns the chosen
// candidate and the model's marginal over it.
func (r *synthRun) aimSelect(ctx context.Context, model *pgm.Model, cands []*candidate, limit int64, sigma, eps float64) (int, []float64, error) {
	cliques := model.Cliques()
	maxCost := max(marginalCostFactor*model.Size(), minMarginalCost)
	var idx []int
	var sets [][]int
	for i, c := range cands {
		ok := inside(c.attrs, cliques)
		if !ok {
			size, err := pgm.ModelSize(r.dom, append(slices.Clip(cliques), c.attrs))
			if err != nil {
				return 0, nil, err
			}
			// A marginal far more costly to infer than the model itself is left out
			// this round (a choice that does not look at the data).
			ok = size <= limit && model.MarginalCost(c.attrs) <= maxCost
		}
		if ok {
			idx = append(idx, i)
			sets = append(sets, c.attrs)
		}
	}
	if len(idx) == 0 {
		// Every 1-way marginal is inside the model's cliques: this cannot happen once
		// the 1-way marginals are measured, unless none is a candidate.
		return 0, nil, fmt.Errorf("synthetic: no candidate marginal fits the model size %d", limit)
	}
	est, err := model.Marginals(ctx, sets, r.Workers)
	if err != nil {
		return 0, nil, err
	}
	scores := make([]float64, len(idx))
	maxW := 0.0
	for k, i := range idx {
		c := cands[i]
		if c.truth == nil {
			c.truth = r.count(c.attrs)
		}
		bias := math.Sqrt(2/math.Pi) * sigma * r.L2 * float64(c.cells)
		scores[k] = c.weight * (l1(c.truth, est[k]) - bias)
		maxW = math.Max(maxW, c.weight)
	}
	k, err := r.selectOne(scores, eps, maxW*r.L1)
	if err != nil {
		return 0, nil, err
	}
	return idx[k], est[k], nil
}

// inside reports whether attrs lies within one of the cliques.
func inside(attrs []int, cliques [][]int) bool {
	for _, c := range cliques {
		all := true
		for _, a := range attrs {
			if !slices.Contains(c, a) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

func l1(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += math.Abs(a[i] - b[i])
	}
	return s
}

// mst runs MST: a third of ρ measures every 1-way marginal, the domains are compressed
// (compress), a third selects d − 1 pairs forming a spanning tree (Kruskal's algorithm,
// each edge chosen by the exponential mechanism on the L1 error of the 1-way model's
// estimate of the pair), a third measures the chosen pairs. It returns the model over
// the compressed domains and the function that maps its records back.
func (r *synthRun) mst(ctx context.Context) (*pgm.Model, func([][]int32), error) {
	model, err := r.mstCompressed(ctx)
	return model, r.expand, err
}

// compress is MST's domain compression: once every 1-way marginal is measured, a
// column's values whose noisy count is below 3σ become one value when there are two or
// more of them (a decision on noisy counts only). The run's columns, domains and 1-way
// measurements are rewritten over the compressed domains (the merged value's
// measurement is the sum of its values', given the same σ: an approximation of its
// larger noise that only affects utility), and r.expand maps records back, a merged
// value becoming one of its values uniformly at random.
func (r *synthRun) compress() {
	d := len(r.Sizes)
	maps := make([][]int32, d)
	merged := make([][]int32, d) // the original values behind each column's merged value
	sizes := slices.Clone(r.Sizes)
	for a := range d {
		m := r.ms[a]
		var rare []int32
		for v, y := range m.Y {
			if y < 3*m.Sigma {
				rare = append(rare, int32(v))
			}
		}
		if len(rare) < 2 {
			continue
		}
		mp := make([]int32, len(m.Y))
		var y2 []float64
		sum := 0.0
		for v, y := range m.Y {
			if slices.Contains(rare, int32(v)) {
				sum += y
				continue
			}
			mp[v] = int32(len(y2))
			y2 = append(y2, y)
		}
		for _, v := range rare {
			mp[v] = int32(len(y2))
		}
		r.ms[a].Y = append(y2, sum)
		maps[a], merged[a], sizes[a] = mp, rare, len(y2)+1
	}
	cols := slices.Clone(r.cols)
	for a, mp := range maps {
		if mp == nil {
			continue
		}
		c := make([]int32, len(cols[a]))
		for i, v := range cols[a] {
			c[i] = mp[v]
		}
		cols[a] = c
	}
	r.cols, r.Sizes, r.dom = cols, sizes, pgm.Domain(sizes)
	seed := r.Seed
	r.expand = func(out [][]int32) {
		rng := rand.New(rand.NewPCG(seed, 0x6d7374))
		for a, rare := range merged {
			if rare == nil {
				continue
			}
			k := int32(sizes[a] - 1)
			kept := make([]int32, 0, sizes[a]-1) // compressed value → original
			for v := range maps[a] {
				if !slices.Contains(rare, int32(v)) {
					kept = append(kept, int32(v))
				}
			}
			for i, v := range out[a] {
				if v == k {
					out[a][i] = rare[rng.IntN(len(rare))]
				} else {
					out[a][i] = kept[v]
				}
			}
		}
	}
}

func (r *synthRun) mstCompressed(ctx context.Context) (*pgm.Model, error) {
	d := len(r.Sizes)
	rho := r.budget.Total * (1 - 1e-9)
	parts := 3.0
	if d == 1 {
		parts = 1
	}
	sigma1 := math.Sqrt(float64(d) / (2 * rho / parts))
	for a := range d {
		if err := r.measure(ctx, []int{a}, nil, sigma1, 0); err != nil {
			return nil, err
		}
	}
	r.compress()
	if d == 1 {
		return r.estimate(ctx, nil, r.FinalIters)
	}
	model, err := r.estimate(ctx, nil, r.Iters)
	if err != nil {
		return nil, err
	}
	var pairs [][]int
	for a := range d {
		for b := a + 1; b < d; b++ {
			pairs = append(pairs, []int{a, b})
		}
	}
	est, err := model.Marginals(ctx, pairs, r.Workers)
	if err != nil {
		return nil, err
	}
	truth := make([][]float64, len(pairs))
	errs := make([]float64, len(pairs))
	for i, p := range pairs {
		truth[i] = r.count(p)
		errs[i] = l1(truth[i], est[i])
	}
	parent := make([]int, d)
	for i := range parent {
		parent[i] = i
	}
	find := func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	eps := math.Sqrt(8 * (rho / parts) / float64(d-1))
	sigma2 := math.Sqrt(float64(d-1) / (2 * rho / parts))
	var tree []int // indexes into pairs
	for range d - 1 {
		var idx []int
		var scores []float64
		for i, p := range pairs {
			if find(p[0]) != find(p[1]) {
				idx = append(idx, i)
				scores = append(scores, errs[i])
			}
		}
		k, err := r.selectOne(scores, eps, r.L1)
		if err != nil {
			return nil, err
		}
		p := pairs[idx[k]]
		parent[find(p[0])] = find(p[1])
		tree = append(tree, idx[k])
		r.rep.Rounds++
	}
	for _, i := range tree {
		if err := r.measure(ctx, pairs[i], truth[i], sigma2, 0); err != nil {
			return nil, err
		}
		// The selection's ε is reported with the pair it chose.
		m := &r.rep.Measured[len(r.rep.Measured)-1]
		m.SelectEpsilon = eps
		m.Rho += ExponentialRho(eps)
	}
	return r.estimate(ctx, model, r.FinalIters)
}
