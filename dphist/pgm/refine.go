package pgm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"

	"golang.org/x/sync/errgroup"

	"sanitizer/internal/safe"
)

// RefineOptions bounds a Refine call. Zero fields take the defaults.
type RefineOptions struct {
	// MaxCells caps the summed cells of the sets' count tables (4 bytes each),
	// default DefaultRefineCells, and the cells of any table inferring one set's
	// marginal needs; MaxInferWork caps the cell operations of inferring their
	// marginals from the model (as Model.MarginalCost estimates them), default
	// DefaultRefineInferWork. Sets are taken cheapest to infer first; those that
	// would pass a cap are left out.
	MaxCells, MaxInferWork int64
	// Moves is the number of proposed changes. Default: 2 × records × attributes,
	// lowered so that the table cells the proposals visit stay within refineWork.
	Moves int
	// Workers is the number of goroutines that compute the tables and evaluate the
	// proposals (0: GOMAXPROCS); the result depends on it.
	Workers int
	Seed    uint64 // the proposals' seed
}

// DefaultRefineCells is the default cap on the cells of Refine's tables (128 MiB).
const DefaultRefineCells = 1 << 25

// Work bounds of Refine: the table cells the proposals visit, and the records ×
// sets counted into the tables at the start (beyond that Refine leaves the
// records as they are, whose sampling error is small at such sizes anyway).
const (
	refineWork     = 2e8
	refineInitWork = 1e9
)

// DefaultRefineInferWork is the default cap on the cell operations of inferring
// Refine's marginals: about 3 s on two cores (on adult-discrete at ε = 3 it leaves out
// the one or two of the 364 3-way marginals that cost a third of the inference).
const DefaultRefineInferWork = 2e9

// RefineStats says what a Refine call did.
type RefineStats struct {
	Sets     int     // sets whose tables were used
	Moves    int     // changes proposed
	Accepted int     // changes kept
	Before   float64 // Σ over the sets of the L1 distance between counts and targets, before
	After    float64 // and after
}

// Refine moves records (column-major, as Sample returns them, changed in place)
// towards the model's marginals over sets: the target of a set is the model's
// marginal scaled to the number of records, and Refine repeatedly proposes to give
// one record, in one attribute, a value drawn from the model's marginal of that
// attribute, keeping the change when it lowers Σ over the sets of Σ over cells
// |count − target|. Sampling leaves each marginal a random distance from the model's;
// this removes most of it on the sets (the workload the records should answer).
// Refine reads only the model and the records, so it is post-processing of whatever
// made the model. Values stay within the domain; the result is a deterministic
// function of model, records, sets and options, the number of workers included
// (GOMAXPROCS when it is 0). Refine leaves the records as they are when records ×
// sets passes 10⁹ (their sampling error is small at such sizes).
func (m *Model) Refine(ctx context.Context, recs [][]int32, sets [][]int, opt RefineOptions) (RefineStats, error) {
	var st RefineStats
	if m == nil || m.e == nil {
		return st, errors.New("pgm: nil model")
	}
	dom := m.e.dom
	if len(recs) != len(dom) {
		return st, fmt.Errorf("pgm: %d record columns for %d attributes", len(recs), len(dom))
	}
	n := len(recs[0])
	for a, col := range recs {
		if len(col) != n {
			return st, fmt.Errorf("pgm: record column %d has %d rows, column 0 %d", a, len(col), n)
		}
		for r, v := range col {
			if v < 0 || int(v) >= dom[a] {
				return st, fmt.Errorf("pgm: record %d attribute %d: value %d outside [0,%d)", r, a, v, dom[a])
			}
		}
	}
	if opt.MaxCells <= 0 {
		opt.MaxCells = DefaultRefineCells
	}
	if opt.MaxInferWork <= 0 {
		opt.MaxInferWork = DefaultRefineInferWork
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	// The sets, cheapest to infer first, while their tables and their inference fit.
	var cand [][]int
	var costs []int64
	seen := map[string]bool{}
	for _, s := range sets {
		if err := dom.checkSet(s); err != nil {
			return st, err
		}
		if len(s) == 0 || seen[cliqueKey(s)] {
			continue
		}
		seen[cliqueKey(s)] = true
		// A set whose inference needs a table larger than its own cap or the model's
		// limit is left out: Marginal would refuse it, or hold too much.
		if pl := m.plan(s); pl.maxTab <= min(opt.MaxCells, maxModelCells) && pl.cost <= maxMarginalCost {
			cand = append(cand, s)
			costs = append(costs, pl.cost)
		}
	}
	order := make([]int, len(cand))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return costs[order[i]] < costs[order[j]] })
	var use [][]int
	cells, work := int64(0), int64(0)
	for _, i := range order {
		c := dom.cells(cand[i])
		if c > opt.MaxCells-cells || costs[i] > opt.MaxInferWork-work {
			continue
		}
		cells += c
		work += costs[i]
		use = append(use, cand[i])
	}
	if n < 2 || len(use) == 0 || float64(n)*float64(len(use)) > refineInitWork {
		return st, nil
	}
	t, err := m.newRefineTables(ctx, recs, use, opt.Workers)
	if err != nil {
		return st, err
	}
	st.Sets = len(use)
	st.Before = t.objective()
	moves := opt.Moves
	if moves <= 0 {
		moves = defaultMoves(n, len(dom), t.refs)
	}
	st.Moves = moves
	if err := t.search(ctx, recs, moves, opt.Workers, opt.Seed, &st); err != nil {
		return st, err
	}
	st.After = t.objective()
	return st, nil
}

// refineBatch is the number of proposals one worker evaluates between two
// applications.
const refineBatch = 4096

// refineMove is a proposal: record r gets value nv in attribute a.
type refineMove struct{ r, a, nv int32 }

// search makes the proposals in rounds: the workers evaluate a batch each against the
// tables as they stand (reading only), keeping the proposals that would lower the
// objective; then, in worker order, every kept proposal is evaluated again against
// the tables as changed by those applied before it, and applied if it still lowers
// the objective. The result depends on the seed and the number of workers only.
func (t *refineTables) search(ctx context.Context, recs [][]int32, moves, workers int, seed uint64, st *RefineStats) error {
	d, n := len(recs), len(recs[0])
	type worker struct {
		rng  *rand.Rand
		vals []int
		idx  []int
		kept []refineMove
	}
	ws := make([]*worker, workers)
	for w := range ws {
		ws[w] = &worker{rng: rand.New(rand.NewPCG(seed, 0x726566696e65+uint64(w))), vals: make([]int, d)}
	}
	for done := 0; done < moves; {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch := make([]int, len(ws))
		for i := range ws {
			batch[i] = min(refineBatch, moves-done)
			done += batch[i]
		}
		err := safe.Parallel(len(ws), func(i int) {
			w, b := ws[i], batch[i]
			w.kept = w.kept[:0]
			for range b {
				mv := refineMove{r: int32(w.rng.IntN(n)), a: int32(w.rng.IntN(d))}
				cum := t.cum[mv.a]
				tot := cum[len(cum)-1]
				if !(tot > 0) || math.IsInf(tot, 1) {
					continue // no usable marginal to draw from
				}
				mv.nv = int32(min(sort.SearchFloat64s(cum, w.rng.Float64()*tot), len(cum)-1))
				if t.gain(recs, mv, w.vals, &w.idx) < refineMinGain {
					w.kept = append(w.kept, mv)
				}
			}
		})
		if err != nil {
			return err
		}
		for _, w := range ws {
			for _, mv := range w.kept {
				if t.gain(recs, mv, w.vals, &w.idx) < refineMinGain {
					for k := 0; k < len(w.idx); k += 2 {
						t.res[w.idx[k]]++
						t.res[w.idx[k+1]]--
					}
					recs[mv.a][mv.r] = mv.nv
					st.Accepted++
				}
			}
		}
	}
	return nil
}

// refineMinGain is the change of the objective below which a proposal is kept: a
// change that moves nothing in exact arithmetic may come out a little below zero.
const refineMinGain = -1e-6

// gain is the change of the objective if mv were applied (0 when it changes nothing),
// summed in float64; it leaves in *idx the cells it would move a record out of and
// into, in pairs.
func (t *refineTables) gain(recs [][]int32, mv refineMove, vals []int, idx *[]int) float64 {
	old := int(recs[mv.a][mv.r])
	if old == int(mv.nv) {
		*idx = (*idx)[:0]
		return 0
	}
	for b, col := range recs {
		vals[b] = int(col[mv.r])
	}
	*idx = t.cellsOf((*idx)[:0], int(mv.a), vals, old, int(mv.nv))
	delta := 0.0
	for k, ix := 0, *idx; k < len(ix); k += 2 {
		ro, rn := float64(t.res[ix[k]]), float64(t.res[ix[k+1]])
		delta += math.Abs(ro+1) - math.Abs(ro) + math.Abs(rn-1) - math.Abs(rn)
	}
	return delta
}

// defaultMoves is the default number of proposals for n records of d attributes whose
// sets hold refs (set, attribute) pairs: 2·n·d, fewer when the table cells they visit
// (2·refs/d a proposal on average) would pass refineWork.
func defaultMoves(n, d, refs int) int {
	moves := 2 * n * d
	if visits := float64(2*refs) / float64(d); float64(moves)*visits > refineWork {
		moves = int(refineWork / visits)
	}
	return moves
}

// refineTables holds Refine's residuals (target − count) of every set, in one flat
// slice, and for every attribute the sets that hold it.
type refineTables struct {
	res  []float32
	cum  [][]float64   // per attribute: the model's cumulative 1-way marginal
	ents [][]refineEnt // per attribute
	oth  [][]int       // per attribute: (attribute, stride) pairs of the other members
	refs int           // Σ over attributes of len(ents[a])
}

// refineEnt is one set holding attribute a: where its table starts, a's stride in it,
// and its other members' (attribute, stride) pairs, oth[a][lo:hi].
type refineEnt struct{ off, stride, lo, hi int }

// newRefineTables makes Refine's tables: the model's cumulative 1-way marginals, the
// sets' layout, and their residuals for the records recs, workers sets at a time.
func (m *Model) newRefineTables(ctx context.Context, recs [][]int32, sets [][]int, workers int) (*refineTables, error) {
	dom := m.e.dom
	ones := make([][]int, len(dom))
	for a := range ones {
		ones[a] = []int{a}
	}
	cum, err := m.Marginals(ctx, ones, workers)
	if err != nil {
		return nil, err
	}
	t := &refineTables{ents: make([][]refineEnt, len(dom)), oth: make([][]int, len(dom)), cum: cum}
	for _, c := range t.cum {
		acc := 0.0
		for v, p := range c {
			acc += max(p, 0)
			c[v] = acc
		}
	}
	offs, strides := t.layOut(dom, sets)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	// Each set's marginal is inferred, scaled into its table and dropped, so that no
	// more than workers float64 marginals (and their inference's tables, each within
	// MaxCells cells) are held at once.
	for k, s := range sets {
		g.Go(safe.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			est, err := m.Marginal(s)
			if err != nil {
				return fmt.Errorf("pgm: marginal %v: %w", s, err)
			}
			residuals(t.res[offs[k]:offs[k]+len(est)], est, recs, s, strides[k])
			return nil
		}))
	}
	if err := g.Wait(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return t, nil
}

// layOut places the sets' tables one after another in t.res (which it makes) and
// lists, per attribute, the sets that hold it: it returns where each set's table
// starts and its members' strides.
func (t *refineTables) layOut(dom Domain, sets [][]int) (offs []int, strides [][]int) {
	offs = make([]int, len(sets))
	strides = make([][]int, len(sets))
	total := 0
	for k, s := range sets {
		offs[k] = total
		total += int(dom.cells(s))
		st := make([]int, len(s))
		x := 1
		for j := len(s) - 1; j >= 0; j-- {
			st[j] = x
			x *= dom[s[j]]
		}
		strides[k] = st
		for j, a := range s {
			e := refineEnt{off: offs[k], stride: st[j], lo: len(t.oth[a])}
			for i, b := range s {
				if i != j {
					t.oth[a] = append(t.oth[a], b, st[i])
				}
			}
			e.hi = len(t.oth[a])
			t.ents[a] = append(t.ents[a], e)
			t.refs++
		}
	}
	t.res = make([]float32, total)
	return offs, strides
}

// residuals sets res, the table of set s (its members' strides st), to the model's
// marginal est scaled to the records' number, less the records' counts.
func residuals(res []float32, est []float64, recs [][]int32, s, st []int) {
	n := float64(len(recs[0]))
	tot := 0.0
	for _, v := range est {
		tot += math.Max(v, 0)
	}
	// The records are counted exactly first: float32 cannot count past 2^24.
	counts := make([]int32, len(est))
	for r := range recs[0] {
		c := 0
		for j, a := range s {
			c += int(recs[a][r]) * st[j]
		}
		counts[c]++
	}
	for i, v := range est {
		target := 0.0
		if tot > 0 {
			target = math.Max(v, 0) * n / tot
		}
		res[i] = float32(target - float64(counts[i]))
	}
}

// cellsOf appends, for every set holding attribute a, the flat indexes of the cell of
// the record vals with a = old and with a = nv.
func (t *refineTables) cellsOf(idx []int, a int, vals []int, old, nv int) []int {
	oth := t.oth[a]
	for _, e := range t.ents[a] {
		base := e.off
		for i := e.lo; i < e.hi; i += 2 {
			base += vals[oth[i]] * oth[i+1]
		}
		idx = append(idx, base+old*e.stride, base+nv*e.stride)
	}
	return idx
}

// objective is Σ |target − count| over every table cell.
func (t *refineTables) objective() float64 {
	s := 0.0
	for _, v := range t.res {
		s += math.Abs(float64(v))
	}
	return s
}
