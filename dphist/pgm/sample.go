package pgm

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// maxSampleRows bounds the number of records Sample draws at once.
const maxSampleRows = math.MaxInt32

// Sample draws n records from the model and returns them column-major:
// result[attr][row]. Attributes are drawn in the reverse of the
// triangulation's elimination order, each from its conditional given its
// already-drawn neighbours, with Private-PGM's variance reduction: rows
// sharing the conditioning values get each value's expected count rounded
// down, the remaining rows go to values drawn without replacement in
// proportion to the fractional parts, and the assignment is shuffled. The
// output is a deterministic function of the model, n and seed.
func (m *Model) Sample(n int, seed uint64) ([][]int32, error) {
	if m == nil || m.e == nil {
		return nil, errors.New("pgm: nil model")
	}
	if n < 0 {
		return nil, fmt.Errorf("pgm: cannot sample %d records", n)
	}
	if n > maxSampleRows {
		return nil, fmt.Errorf("pgm: cannot sample %d records, at most %d", n, maxSampleRows)
	}
	e := m.e
	dom := e.dom
	tri := e.tri
	for _, s := range dom {
		if s > math.MaxInt32 {
			return nil, fmt.Errorf("pgm: attribute size %d does not fit int32", s)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x5851f42d4c957f2d))
	out := make([][]int32, len(dom))
	for a := range out {
		out[a] = make([]int32, n)
	}
	s := &sampler{
		rng:    rng,
		keys:   make([]uint64, n),
		sorted: make([]uint64, n),
		rows:   make([]int32, n),
		vals:   make([]int32, n),
	}
	sc := newScratch(1)
	for i := len(tri.order) - 1; i >= 0; i-- {
		v := tri.order[i]
		cl := tri.elimClique[v]
		mc := tri.cliqueOf[v]
		tab := make([]float64, dom.cells(cl))
		newMproj(dom, e.nodes[mc].layout, [][]int{cl}).sumKernel(e.clique(mc), tab, sc)
		cond := without(cl, v)
		s.draw(dom, out, v, cl, cond, tab)
	}
	return out, nil
}

// sampler holds the buffers of one Sample call.
type sampler struct {
	rng    *rand.Rand
	keys   []uint64
	sorted []uint64
	rows   []int32
	vals   []int32
	counts []int
	cond   []float64
	frac   []float64
}

// draw fills column v given the already drawn columns cond, from tab, the
// marginal over cl = cond ∪ {v}.
func (s *sampler) draw(dom Domain, out [][]int32, v int, cl, cond []int, tab []float64) {
	n := len(s.rows)
	sv := dom[v]
	// Conditional table laid out [cond config][v value].
	ncfg := len(tab) / sv
	vstride := 1
	vpos := slices.Index(cl, v)
	for _, a := range cl[vpos+1:] {
		vstride *= dom[a]
	}
	if cap(s.cond) < len(tab) {
		s.cond = make([]float64, len(tab))
	}
	ct := s.cond[:len(tab)]
	// cl index = hi*(sv*vstride) + x*vstride + lo, cond index = hi*vstride + lo.
	for k := 0; k < ncfg; k++ {
		hi, lo := k/vstride, k%vstride
		b := hi*sv*vstride + lo
		for x := 0; x < sv; x++ {
			ct[k*sv+x] = tab[b+x*vstride]
		}
	}
	// Group the rows by conditioning configuration: rows[i] is the i-th
	// row in key order, sk[i] its key.
	rows, sk := s.rows, s.sorted
	if len(cond) == 0 {
		for r := range rows {
			rows[r] = int32(r)
		}
		clear(sk)
	} else {
		keys := s.keys
		clear(keys)
		st := 1
		for j := len(cond) - 1; j >= 0; j-- {
			col := out[cond[j]]
			for r := range keys {
				keys[r] += uint64(col[r]) * uint64(st)
			}
			st *= dom[cond[j]]
		}
		if ncfg <= 2*n+1024 {
			// stable counting sort
			if cap(s.counts) < ncfg+1 {
				s.counts = make([]int, ncfg+1)
			}
			cnt := s.counts[:ncfg+1]
			clear(cnt)
			for _, k := range keys {
				cnt[k+1]++
			}
			for k := 1; k <= ncfg; k++ {
				cnt[k] += cnt[k-1]
			}
			for r, k := range keys {
				rows[cnt[k]] = int32(r)
				sk[cnt[k]] = k
				cnt[k]++
			}
		} else {
			for r := range keys {
				sk[r] = keys[r]<<32 | uint64(r)
			}
			slices.Sort(sk)
			for i, k := range sk {
				rows[i] = int32(uint32(k))
				sk[i] = k >> 32
			}
		}
	}
	col := out[v]
	for g0 := 0; g0 < n; {
		k := sk[g0]
		g1 := g0 + 1
		for g1 < n && sk[g1] == k {
			g1++
		}
		s.fillGroup(col, rows[g0:g1], ct[int(k)*sv:(int(k)+1)*sv])
		g0 = g1
	}
}

// fillGroup assigns values to the rows of one group whose conditional
// (unnormalised) is p.
func (s *sampler) fillGroup(col []int32, rows []int32, p []float64) {
	g := len(rows)
	tot := 0.0
	for _, x := range p {
		tot += x
	}
	if !(tot > 0) || math.IsInf(tot, 0) {
		// no usable distribution: spread uniformly
		for _, r := range rows {
			col[r] = int32(s.rng.IntN(len(p)))
		}
		return
	}
	if g == 1 {
		col[rows[0]] = int32(s.pick(p, tot))
		return
	}
	vals := s.vals[:0]
	if cap(s.frac) < len(p) {
		s.frac = make([]float64, len(p))
	}
	frac := s.frac[:len(p)]
	fg := float64(g)
	ftot := 0.0
	for x, px := range p {
		c := fg * (px / tot)
		fl := math.Floor(c)
		for j := 0; j < int(fl) && len(vals) < g; j++ {
			vals = append(vals, int32(x))
		}
		frac[x] = c - fl
		ftot += frac[x]
	}
	// The remaining rows go to distinct values drawn in proportion to the
	// fractional parts, without replacement.
	for len(vals) < g {
		if !(ftot > 0) {
			// rounding left more rows than fractional mass: most likely values
			vals = append(vals, int32(s.pick(p, tot)))
			continue
		}
		x := s.pick(frac, ftot)
		vals = append(vals, int32(x))
		ftot -= frac[x]
		frac[x] = 0
		if ftot < 1e-9 {
			ftot = 0
			for _, f := range frac {
				ftot += f
			}
		}
	}
	for i := len(vals) - 1; i > 0; i-- {
		j := s.rng.IntN(i + 1)
		vals[i], vals[j] = vals[j], vals[i]
	}
	for i, r := range rows {
		col[r] = vals[i]
	}
}

// pick draws an index with probability proportional to w (non-negative,
// summing to tot > 0).
func (s *sampler) pick(w []float64, tot float64) int {
	u := s.rng.Float64() * tot
	last := -1
	for x, wx := range w {
		if wx <= 0 {
			continue
		}
		last = x
		u -= wx
		if u < 0 {
			return x
		}
	}
	return last
}
