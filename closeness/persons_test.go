package closeness

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestPersonsReduceToRecords: with one record per person (holders are counts, the
// class's persons its records), the distance and β-likeness in persons are the
// record-level equal-distance EMD and β-likeness.
func TestPersonsReduceToRecords(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for trial := range 500 {
		m := 1 + rng.IntN(8)
		p, q := make([]int64, m), make([]int64, m)
		var np, nq int64
		for v := range m {
			p[v] = int64(rng.IntN(4))
			q[v] = p[v] + int64(rng.IntN(6))
			np, nq = np+p[v], nq+q[v]
		}
		if np == 0 {
			continue
		}
		ref, err := NewPersonsReference(q, nq)
		if err != nil {
			t.Fatal(err)
		}
		var vals, holders []int32
		for v, n := range p {
			if n > 0 {
				vals, holders = append(vals, int32(v)), append(holders, int32(n))
			}
		}
		want, err := EqualEMD(p, q)
		if err != nil {
			t.Fatal(err)
		}
		if got := ref.Equal(vals, holders, np); math.Abs(got-want) > 1e-12 {
			t.Errorf("trial %d: distance in persons %g, record-level EMD %g (p %v, q %v)", trial, got, want, p, q)
		}
		beta := []float64{0.1, 0.5, 1, 3}[trial%4]
		for _, enhanced := range []bool{false, true} {
			_, holds, err := LikenessOf(p, q, beta, enhanced)
			if err != nil {
				t.Fatal(err)
			}
			if got := ref.Likeness(vals, holders, np, beta, enhanced); got != holds {
				t.Errorf("trial %d: β=%g enhanced=%v: in persons %v, record-level %v (p %v, q %v)", trial, beta, enhanced, got, holds, p, q)
			}
		}
	}
}

// TestPersonsSharesNotNormalized: a class whose every person holds both x and y, in a
// table where half the persons hold x and the other half y, has the table's
// distribution of records, but tells that each of its persons holds x: in persons its
// distance is ½(½ + ½) and x's gain is 1.
func TestPersonsSharesNotNormalized(t *testing.T) {
	ref, err := NewPersonsReference([]int64{50, 50}, 100)
	if err != nil {
		t.Fatal(err)
	}
	vals, holders := []int32{0, 1}, []int32{10, 10}
	if d := ref.Equal(vals, holders, 10); math.Abs(d-0.5) > 1e-12 {
		t.Errorf("distance %g, want 0.5", d)
	}
	if recordEMD, _ := EqualEMD([]int64{10, 10}, []int64{50, 50}); recordEMD != 0 {
		t.Errorf("in records the class has the table's distribution: EMD %g", recordEMD)
	}
	if g := ref.MaxGain(vals, holders, 10); math.Abs(g-1) > 1e-12 {
		t.Errorf("gain %g, want 1", g)
	}
	if ref.Likeness(vals, holders, 10, 0.9, false) || !ref.Likeness(vals, holders, 10, 1, false) {
		t.Errorf("β-likeness: a gain of 1 must fail β=0.9 and meet β=1")
	}
}

func TestNewPersonsReferenceRefuses(t *testing.T) {
	for _, tt := range []struct {
		holders []int64
		persons int64
	}{{[]int64{1}, 0}, {[]int64{3}, 2}, {[]int64{-1}, 2}} {
		if _, err := NewPersonsReference(tt.holders, tt.persons); err == nil {
			t.Errorf("holders %v of %d persons: no error", tt.holders, tt.persons)
		}
	}
}
