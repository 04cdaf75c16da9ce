package pgm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
)

// EstimateOptions tunes Estimate.
type EstimateOptions struct {
	// Iters is the maximum number of mirror-descent iterations; 0 or less
	// means defaultIters.
	Iters int
	// Warm, when non-nil, is a model over the same domain whose
	// log-potentials start the descent for the cliques it shares with the
	// measurements (new cliques start at zero).
	Warm *Model
	// Total, when positive, is the number of records the model stands
	// for; otherwise it is estimated from the measurements.
	Total float64
}

// defaultIters is the iteration budget when EstimateOptions.Iters <= 0.
const defaultIters = 1000

// armijoC is the sufficient-decrease fraction of the line search.
const armijoC = 0.5

// maxBacktrack bounds the step halvings of one iteration.
const maxBacktrack = 60

// momentumGrow is the step-size growth after each accepted momentum step
// (plain steps double the step after a first-try acceptance).
const momentumGrow = 1.03

// Estimate fits a graphical model to noisy marginal measurements: it
// minimises the Private-PGM loss ½ Σ_i ‖(μ_{C_i} − Y_i)/σ_i‖² over the
// marginals μ (counts summing to the model's Total) of a graphical model
// whose junction tree covers every measured clique, by entropic mirror
// descent on the cliques' log-potentials (θ ← θ − η·∇_μ L) with a
// backtracking (Armijo) line search and heavy-ball momentum that restarts
// whenever a momentum step fails; every accepted iterate lowers the loss.
// Measurements of the same clique all count. The model's Total is
// opt.Total when positive, else the inverse-variance weighted mean of the
// measurements' sums (at least 1). Estimate stops after opt.Iters
// iterations or when no step decreases the loss any more, and returns
// ctx.Err() if ctx is done first.
func Estimate(ctx context.Context, dom Domain, ms []Measurement, opt EstimateOptions) (*Model, error) {
	return estimate(ctx, dom, ms, opt, nil)
}

// group is the measurements of one distinct clique.
type group struct {
	idx []int   // measurement indices
	w   float64 // Σ 1/σ²
}

// checkMeasurements validates the measurements and groups them by clique.
func checkMeasurements(dom Domain, ms []Measurement) ([][]int, []group, error) {
	if err := dom.validate(); err != nil {
		return nil, nil, err
	}
	var meas [][]int
	var groups []group
	byKey := map[string]int{}
	for i, m := range ms {
		if err := dom.checkSet(m.Clique); err != nil {
			return nil, nil, fmt.Errorf("pgm: measurement %d: %w", i, err)
		}
		n := dom.cells(m.Clique)
		if n > maxModelCells {
			return nil, nil, fmt.Errorf("pgm: measurement %d: clique %v has %d cells, more than %d", i, m.Clique, n, maxModelCells)
		}
		if int64(len(m.Y)) != n {
			return nil, nil, fmt.Errorf("pgm: measurement %d: clique %v has %d cells but Y has %d", i, m.Clique, n, len(m.Y))
		}
		if !(m.Sigma > 0) || math.IsInf(m.Sigma, 1) {
			return nil, nil, fmt.Errorf("pgm: measurement %d: Sigma %v is not a positive finite number", i, m.Sigma)
		}
		for j, y := range m.Y {
			if math.IsNaN(y) || math.IsInf(y, 0) {
				return nil, nil, fmt.Errorf("pgm: measurement %d: Y[%d] = %v is not finite", i, j, y)
			}
		}
		k := cliqueKey(m.Clique)
		g, ok := byKey[k]
		if !ok {
			g = len(meas)
			byKey[k] = g
			meas = append(meas, slices.Clone(m.Clique))
			groups = append(groups, group{})
		}
		groups[g].idx = append(groups[g].idx, i)
		groups[g].w += 1 / (m.Sigma * m.Sigma)
	}
	return meas, groups, nil
}

// estimateTotal is the inverse-variance weighted mean of the measurements'
// sums (the sum of n noisy cells has variance n·σ²), at least 1.
func estimateTotal(ms []Measurement) float64 {
	num, den := 0.0, 0.0
	for _, m := range ms {
		s := 0.0
		for _, y := range m.Y {
			s += y
		}
		w := 1 / (float64(len(m.Y)) * m.Sigma * m.Sigma)
		num += w * s
		den += w
	}
	if den == 0 || !(num/den >= 1) {
		return 1
	}
	return num / den
}

// fitter holds the state of one estimation.
type fitter struct {
	e      *engine
	ms     []Measurement
	groups []group
	total  float64
	theta  [][]float64 // current θ
	grad   [][]float64 // gradient of the loss w.r.t. μ at the current θ
	mu     [][]float64 // current marginals (counts)
	prev   [][]float64 // the θ before the current one, for momentum
	loss   float64

	// The descent's state.
	eta, etaMin float64 // step size, and the floor of the line search
	good        float64 // step size of the last accepted step
	stall       int     // iterations in a row with negligible progress
	tk          float64 // Nesterov's sequence; momentum is off while tk == 1
	fresh       bool    // the engine's tables belong to the accepted θ
}

// lossOf returns the loss of the marginals in e.pm.
func (f *fitter) lossOf() float64 {
	l := 0.0
	for m, g := range f.groups {
		p := f.e.pm[m]
		for _, i := range g.idx {
			y := f.ms[i].Y
			iv := 1 / (f.ms[i].Sigma * f.ms[i].Sigma)
			s := 0.0
			for x, py := range y {
				d := f.total*p[x] - py
				s += d * d
			}
			l += 0.5 * iv * s
		}
	}
	return l
}

// take records the engine's marginals and θ as the current point.
func (f *fitter) take(loss float64) {
	f.loss = loss
	for m, g := range f.groups {
		copy(f.theta[m], f.e.theta[m])
		mu := f.mu[m]
		gr := f.grad[m]
		for x, p := range f.e.pm[m] {
			mu[x] = f.total * p
		}
		for x := range gr {
			gr[x] = g.w * mu[x]
		}
		for _, i := range g.idx {
			iv := 1 / (f.ms[i].Sigma * f.ms[i].Sigma)
			for x, y := range f.ms[i].Y {
				gr[x] -= iv * y
			}
		}
	}
}

// estimate is Estimate with an optional per-iteration loss trace.
func estimate(ctx context.Context, dom Domain, ms []Measurement, opt EstimateOptions, trace func(iter int, loss, eta float64)) (*Model, error) {
	meas, groups, err := checkMeasurements(dom, ms)
	if err != nil {
		return nil, err
	}
	if err := checkEstimateOptions(dom, opt); err != nil {
		return nil, err
	}
	iters := opt.Iters
	if iters <= 0 {
		iters = defaultIters
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := newFitter(dom, ms, meas, groups, opt)
	if err != nil {
		return nil, err
	}
	f.e.bp()
	f.take(f.lossOf())
	if trace != nil {
		trace(0, f.loss, f.eta)
	}
	for it := 1; it <= iters && len(meas) > 0; it++ {
		accepted, err := f.iterate(ctx)
		if err != nil {
			return nil, err
		}
		if trace != nil {
			trace(it, f.loss, f.eta)
		}
		if !accepted || f.stall >= 3 {
			break // no step decreases the loss measurably: converged
		}
	}
	if !f.fresh {
		// the last pass was a rejected trial: redo the accepted θ
		for m := range f.theta {
			copy(f.e.theta[m], f.theta[m])
		}
		f.e.bp()
	}
	return &Model{Total: f.total, e: f.e, eta: f.good}, nil
}

// checkEstimateOptions reports a warm model that is empty or over another domain, and
// a Total that is not finite.
func checkEstimateOptions(dom Domain, opt EstimateOptions) error {
	if opt.Warm != nil {
		if opt.Warm.e == nil {
			return errors.New("pgm: warm model is empty")
		}
		if !slices.Equal(opt.Warm.e.dom, dom) {
			return errors.New("pgm: warm model has a different domain")
		}
	}
	if math.IsNaN(opt.Total) || math.IsInf(opt.Total, 0) {
		return fmt.Errorf("pgm: Total %v is not finite", opt.Total)
	}
	return nil
}

// newFitter makes the engine of the measured cliques meas and the fitter's tables,
// and sets the first step (startStep).
func newFitter(dom Domain, ms []Measurement, meas [][]int, groups []group, opt EstimateOptions) (*fitter, error) {
	e, err := newEngine(slices.Clone(dom), meas)
	if err != nil {
		return nil, err
	}
	f := &fitter{e: e, ms: ms, groups: groups}
	f.total = opt.Total
	if f.total <= 0 {
		f.total = estimateTotal(ms)
	}
	f.startStep(meas, opt.Warm)
	f.theta = make([][]float64, len(meas))
	f.grad = make([][]float64, len(meas))
	f.mu = make([][]float64, len(meas))
	f.prev = make([][]float64, len(meas))
	for m := range meas {
		f.theta[m] = make([]float64, e.mcells[m])
		f.grad[m] = make([]float64, e.mcells[m])
		f.mu[m] = make([]float64, e.mcells[m])
		f.prev[m] = make([]float64, e.mcells[m])
	}
	return f, nil
}

// startStep sets the descent's first step size and its floor, and starts the engine's
// θ of the cliques the warm model shares with meas (when there is one) at the warm
// model's.
func (f *fitter) startStep(meas [][]int, warm *Model) {
	// The descent lemma for the entropic mirror map holds with constant
	// T·Σ1/σ² (Pinsker), so half its inverse always passes the Armijo test:
	// it is the floor of the line search.
	w := 0.0
	for _, g := range f.groups {
		w += g.w
	}
	f.etaMin = 1.0
	if w > 0 {
		f.etaMin = 1 / (2 * f.total * w)
	}
	eta := 4 * f.etaMin
	if warm != nil {
		we := warm.e
		for wm, c := range we.meas {
			for m, mc := range meas {
				if slices.Equal(c, mc) {
					copy(f.e.theta[m], we.theta[wm])
				}
			}
		}
		if warm.eta > 0 {
			eta = warm.eta
		}
	}
	f.eta = max(eta, f.etaMin)
	f.good, f.tk, f.fresh = f.eta, 1, true
}

// iterate takes one step of the descent: a momentum step while momentum is on, else
// (or when it fails) a plain step found by backtracking. accepted is false when no step
// lowers the loss.
func (f *fitter) iterate(ctx context.Context) (accepted bool, err error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if f.tk > 1 && f.momentumStep() {
		return true, nil
	}
	return f.plainStep(ctx)
}

// momentumStep tries a step with momentum; on failure it turns momentum off (a
// restart) and returns false.
func (f *fitter) momentumStep() bool {
	tn := (1 + math.Sqrt(1+4*f.tk*f.tk)) / 2
	loss, dec := f.trial(f.eta, (f.tk-1)/tn)
	if loss < f.loss && loss <= f.loss-armijoC*max(dec, 0) {
		f.accept(loss)
		f.tk = tn
		f.good = f.eta
		f.eta *= momentumGrow
		return true
	}
	f.tk = 1
	return false
}

// plainStep halves the step size from f.eta until a plain step passes the Armijo test
// (doubling it after a first-try acceptance); false when none does by the floor or
// maxBacktrack halvings.
func (f *fitter) plainStep(ctx context.Context) (bool, error) {
	for back := 0; ; back++ {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		loss, dec := f.trial(f.eta, 0)
		if dec > 0 && loss <= f.loss-armijoC*dec {
			f.accept(loss)
			f.good = f.eta
			if back == 0 {
				f.eta *= 2
			}
			f.tk = (1 + math.Sqrt(1+4*f.tk*f.tk)) / 2
			return true, nil
		}
		if f.eta <= f.etaMin || back == maxBacktrack {
			return false, nil
		}
		f.eta = max(f.eta/2, f.etaMin)
	}
}

// trial evaluates θ − η·g + β·(θ − θ_prev): its loss and ⟨g, μ − μ'⟩,
// the first-order decrease (positive for a small mirror step).
func (f *fitter) trial(eta, beta float64) (loss, dec float64) {
	e := f.e
	for m := range f.theta {
		t, th, g, pv := e.theta[m], f.theta[m], f.grad[m], f.prev[m]
		if beta == 0 {
			for x := range t {
				t[x] = th[x] - eta*g[x]
			}
		} else {
			for x := range t {
				t[x] = th[x] - eta*g[x] + beta*(th[x]-pv[x])
			}
		}
	}
	e.bp()
	f.fresh = false
	loss = f.lossOf()
	for m := range f.theta {
		g, mu, p := f.grad[m], f.mu[m], e.pm[m]
		for x := range g {
			dec += g[x] * (mu[x] - f.total*p[x])
		}
	}
	return loss, dec
}

// accept makes the engine's θ, whose loss is loss, the current point.
func (f *fitter) accept(loss float64) {
	if f.loss-loss <= 1e-13*f.loss {
		f.stall++
	} else {
		f.stall = 0
	}
	for m := range f.theta {
		copy(f.prev[m], f.theta[m])
	}
	f.take(loss)
	f.fresh = true
}
