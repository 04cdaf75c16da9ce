package generalize

import (
	"math/big"
)

// approximator is a metric whose value, in float64, costs less than its exact integer:
// approx is exact's float value up to a few units of rounding (computed from the same
// integer sums), enough to tell that a node cannot beat another whose value is larger
// than float rounding allows. The traversal skips the exact value of such a node.
type approximator interface {
	approx(levels []int, cls *classes, fails func(j int) bool) float64
}

// lossFloats is loss's factors in float64, for approx.
type lossFloats struct {
	gfd, dg, sfd float64   // gfd, d − gfd, sfd
	den          []float64 // den[i]
}

func toFloat(x *big.Int) float64 {
	f, _ := new(big.Float).SetInt(x).Float64()
	return f
}

// floats is m's factors in float64, computed once.
func (m *loss) floats() *lossFloats {
	if m.ff != nil {
		return m.ff
	}
	ff := &lossFloats{gfd: toFloat(m.f.gfd), dg: toFloat(new(big.Int).Sub(m.f.d, m.f.gfd)), sfd: toFloat(m.f.sfd), den: make([]float64, len(m.den))}
	for i, d := range m.den {
		ff.den[i] = toFloat(d)
	}
	m.ff = ff
	return ff
}

// approx is exact's value from the same sums in float64: tᵢ and its ratio to den[i] each
// within a few ulps, and the aggregate as exact's value takes it.
func (m *loss) approx(levels []int, cls *classes, fails func(j int) bool) float64 {
	return m.approxOf(levels, m.sumsOf(levels, cls, fails))
}

// approxOf is approx from the node's sums.
func (m *loss) approxOf(levels []int, s *lossSums) float64 {
	if m.f.half() && m.plain() {
		_, v := m.exactHalf(levels, s.rest, s.supp)
		return v
	}
	ff := m.floats()
	lv, rest, supp := s.lv, s.rest, s.supp
	per := perColumn(len(levels), new([smallQ]float64))
	for i, l := range levels {
		switch {
		case supp == 0:
			per[i] = m.boundF[i][l]
		case m.oneLeaf(i):
			per[i] = ff.sfd * float64(supp) / ff.den[i]
		default:
			t := ff.gfd*float64(m.sum[i][l]) + ff.sfd*float64(rest[i])
			if lv != nil {
				t += ff.dg * float64(lv[i])
			}
			per[i] = t / ff.den[i]
		}
	}
	if m.plain() {
		v := 0.0
		for _, p := range per {
			v += p
		}
		if m.scale > 0 {
			v /= m.scale
		}
		return v
	}
	for i := range per {
		if m.n > 0 {
			per[i] /= float64(m.n)
		} else {
			per[i] = 0
		}
	}
	return m.aggregate(per)
}
