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
	loss   float64
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
	if opt.Warm != nil {
		if opt.Warm.e == nil {
			return nil, errors.New("pgm: warm model is empty")
		}
		if !slices.Equal(opt.Warm.e.dom, dom) {
			return nil, errors.New("pgm: warm model has a different domain")
		}
	}
	if math.IsNaN(opt.Total) || math.IsInf(opt.Total, 0) {
		return nil, fmt.Errorf("pgm: Total %v is not finite", opt.Total)
	}
	iters := opt.Iters
	if iters <= 0 {
		iters = defaultIters
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e, err := newEngine(slices.Clone(dom), meas)
	if err != nil {
		return nil, err
	}
	f := &fitter{e: e, ms: ms, groups: groups}
	f.total = opt.Total
	if f.total <= 0 {
		f.total = estimateTotal(ms)
	}
	// The descent lemma for the entropic mirror map holds with constant
	// T·Σ1/σ² (Pinsker), so half its inverse always passes the Armijo test:
	// it is the floor of the line search.
	w := 0.0
	for _, g := range groups {
		w += g.w
	}
	etaMin := 1.0
	if w > 0 {
		etaMin = 1 / (2 * f.total * w)
	}
	eta := 4 * etaMin
	if opt.Warm != nil {
		we := opt.Warm.e
		for wm, c := range we.meas {
			for m, mc := range meas {
				if slices.Equal(c, mc) {
					copy(e.theta[m], we.theta[wm])
				}
			}
		}
		if opt.Warm.eta > 0 {
			eta = opt.Warm.eta
		}
	}
	eta = max(eta, etaMin)
	f.theta = make([][]float64, len(meas))
	f.grad = make([][]float64, len(meas))
	f.mu = make([][]float64, len(meas))
	prev := make([][]float64, len(meas)) // previous θ, for momentum
	for m := range meas {
		f.theta[m] = make([]float64, e.mcells[m])
		f.grad[m] = make([]float64, e.mcells[m])
		f.mu[m] = make([]float64, e.mcells[m])
		prev[m] = make([]float64, e.mcells[m])
	}
	e.bp()
	f.take(f.lossOf())
	if trace != nil {
		trace(0, f.loss, eta)
	}
	good := eta   // step size of the last accepted step
	stall := 0    // iterations in a row with negligible progress
	tk := 1.0     // Nesterov's sequence; momentum is off while tk == 1
	fresh := true // the engine's tables belong to the accepted θ
	// trial evaluates θ − η·g + β·(θ − θ_prev): its loss and ⟨g, μ − μ'⟩,
	// the first-order decrease (positive for a small mirror step).
	trial := func(eta, beta float64) (loss, dec float64) {
		for m := range meas {
			t, th, g, pv := e.theta[m], f.theta[m], f.grad[m], prev[m]
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
		fresh = false
		loss = f.lossOf()
		for m := range meas {
			g, mu, p := f.grad[m], f.mu[m], e.pm[m]
			for x := range g {
				dec += g[x] * (mu[x] - f.total*p[x])
			}
		}
		return loss, dec
	}
	accept := func(loss float64) {
		if f.loss-loss <= 1e-13*f.loss {
			stall++
		} else {
			stall = 0
		}
		for m := range meas {
			copy(prev[m], f.theta[m])
		}
		f.take(loss)
		fresh = true
	}
	for it := 1; it <= iters && len(meas) > 0; it++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		accepted := false
		if tk > 1 {
			// momentum step; on failure restart with a plain step
			tn := (1 + math.Sqrt(1+4*tk*tk)) / 2
			loss, dec := trial(eta, (tk-1)/tn)
			if loss < f.loss && loss <= f.loss-armijoC*max(dec, 0) {
				accept(loss)
				accepted = true
				tk = tn
				good = eta
				eta *= momentumGrow
			} else {
				tk = 1
			}
		}
		for back := 0; !accepted; back++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			loss, dec := trial(eta, 0)
			if dec > 0 && loss <= f.loss-armijoC*dec {
				accept(loss)
				accepted = true
				good = eta
				if back == 0 {
					eta *= 2
				}
				tk = (1 + math.Sqrt(1+4*tk*tk)) / 2
				break
			}
			if eta <= etaMin || back == maxBacktrack {
				break
			}
			eta = max(eta/2, etaMin)
		}
		if trace != nil {
			trace(it, f.loss, eta)
		}
		if !accepted || stall >= 3 {
			break // no step decreases the loss measurably: converged
		}
	}
	if !fresh {
		// the last pass was a rejected trial: redo the accepted θ
		for m := range meas {
			copy(e.theta[m], f.theta[m])
		}
		e.bp()
	}
	return &Model{Total: f.total, e: e, eta: good}, nil
}
