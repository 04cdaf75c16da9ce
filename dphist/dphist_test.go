package dphist

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"sanitizer/fault"
	"sanitizer/schema"
)

// The library draws from a cryptographic source and takes no seed, so the statistical
// tests below use bounds far wider than the sampling error (stated per test): they
// fail for a wrong scale, not by chance.

// TestLaplaceVariance: the noise of a count has variance 2(Δ/ε)² (Δ = L0·L∞). For the
// discrete (two-sided geometric) noise the library adds to integers the variance is
// 2p/(1−p)² with p = exp(−ε/Δ), which is 2(Δ/ε)² − 1/6 + o(1); for Δ/ε = 10 the two
// differ by 0.1%. With n = 40,000 draws the sample variance of Laplace noise (kurtosis 6)
// has a relative standard error of √(5/n) ≈ 1.1%: the ±8% bound is seven of them.
func TestLaplaceVariance(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical: many library draws (runs in the full test run, not the -short race run)")
	}
	for _, m := range []Mechanism{
		{Kind: schema.Laplace, Epsilon: 0.5, L0: 1, LInf: 5}, // Δ/ε = 10
		{Kind: schema.Laplace, Epsilon: 0.2, L0: 2, LInf: 1}, // Δ/ε = 10
		{Kind: schema.Laplace, Epsilon: 1, L0: 1, LInf: 20},  // Δ/ε = 20
	} {
		want := 2 * math.Pow(float64(m.L0*m.LInf)/m.Epsilon, 2)
		got := sampleVariance(t, m, 40000)
		if math.Abs(got/want-1) > 0.08 {
			t.Errorf("%+v: noise variance %.1f, want 2(Δ/ε)² = %.1f", m, got, want)
		}
		if s := m.Scale(); s != float64(m.L0*m.LInf)/m.Epsilon {
			t.Errorf("%+v: scale %g", m, s)
		}
	}
}

// TestGaussianVariance: the noise has variance σ² for the library's calibrated σ. The
// sample variance of normal noise has a relative standard error of √(2/n) ≈ 0.7% for
// n = 40,000: ±6% is eight of them. (The integer noise rounds a continuous draw; the
// added variance, 1/12, is below 0.1% of σ² here.)
func TestGaussianVariance(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical: many library draws (runs in the full test run, not the -short race run)")
	}
	for _, m := range []Mechanism{
		{Kind: schema.Gaussian, Epsilon: 1, Delta: 1e-6, L0: 1, LInf: 1},
		{Kind: schema.Gaussian, Epsilon: 0.5, Delta: 1e-9, L0: 3, LInf: 2},
	} {
		sigma := m.Scale()
		if !(sigma > 3) {
			t.Fatalf("%+v: σ = %g, too small for this test", m, sigma)
		}
		got := sampleVariance(t, m, 40000)
		if math.Abs(got/(sigma*sigma)-1) > 0.06 {
			t.Errorf("%+v: noise variance %.2f, want σ² = %.2f", m, got, sigma*sigma)
		}
	}
}

func sampleVariance(t *testing.T, m Mechanism, n int) float64 {
	t.Helper()
	var sum, sq float64
	for range n {
		v, err := m.Count(1000)
		if err != nil {
			t.Fatal(err)
		}
		d := float64(v - 1000)
		sum += d
		sq += d * d
	}
	mean := sum / float64(n)
	return sq/float64(n) - mean*mean
}

// TestLaplaceRatio: for neighbouring counts x and x+1 (Δ = 1), every output v is at most
// e^ε times likelier under one than under the other. The test draws n = 400,000 noisy
// counts of each and compares, on every output drawn at least 4,000 times under both,
// the two frequencies: each has a relative standard error of at most 1/√4000 ≈ 1.6%,
// so their ratio is within about 2.2% of the truth; the bound allows e^ε·1.15, seven of
// them. The test also sees the ratio approach e^ε (the noise is not needlessly wide).
func TestLaplaceRatio(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical: many library draws (runs in the full test run, not the -short race run)")
	}
	m := Mechanism{Kind: schema.Laplace, Epsilon: 0.5, L0: 1, LInf: 1}
	const n = 400000
	draw := func(x int64) map[int64]int {
		h := map[int64]int{}
		for range n {
			v, err := m.Count(x)
			if err != nil {
				t.Fatal(err)
			}
			h[v]++
		}
		return h
	}
	a, b := draw(100), draw(101)
	bound := math.Exp(m.Epsilon)
	maxRatio, bins := 0.0, 0
	for v, ca := range a {
		cb := b[v]
		if ca < 4000 || cb < 4000 {
			continue
		}
		bins++
		r := math.Max(float64(ca)/float64(cb), float64(cb)/float64(ca))
		maxRatio = math.Max(maxRatio, r)
		if r > bound*1.15 {
			t.Errorf("output %d: drawn %d and %d times, ratio %.3f > e^ε = %.3f", v, ca, cb, r, bound)
		}
	}
	if bins < 10 {
		t.Fatalf("only %d well-populated outputs", bins)
	}
	if maxRatio < bound*0.85 {
		t.Errorf("largest ratio %.3f, far below e^ε = %.3f: the noise is wider than needed", maxRatio, bound)
	}
}

func TestHalfWidth(t *testing.T) {
	// Laplace with b = 10: the 95% interval is ±b·ln(1/0.05) ≈ ±29.96, rounded by the
	// library's integer interval.
	hw, err := Mechanism{Kind: schema.Laplace, Epsilon: 0.1, L0: 1, LInf: 1}.HalfWidth95()
	if err != nil || math.Abs(hw-10*math.Log(20)) > 1 {
		t.Errorf("Laplace half-width %v, %v; want about %.2f", hw, err, 10*math.Log(20))
	}
	m := Mechanism{Kind: schema.Gaussian, Epsilon: 1, Delta: 1e-6, L0: 1, LInf: 1}
	hw, err = m.HalfWidth95()
	if want := 1.96 * m.Scale(); err != nil || math.Abs(hw-want) > 1 {
		t.Errorf("Gaussian half-width %v, %v; want about %.2f", hw, err, want)
	}
}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		m  Mechanism
		ok bool
	}{
		{Mechanism{Kind: schema.Laplace, Epsilon: 1, L0: 1, LInf: 1}, true},
		{Mechanism{Kind: schema.Laplace, Epsilon: 0, L0: 1, LInf: 1}, false},
		{Mechanism{Kind: schema.Laplace, Epsilon: 1, Delta: 1e-6, L0: 1, LInf: 1}, false},
		{Mechanism{Kind: schema.Gaussian, Epsilon: 1, L0: 1, LInf: 1}, false},
		{Mechanism{Kind: schema.Gaussian, Epsilon: 1, Delta: 1e-6, L0: 1, LInf: 1}, true},
		{Mechanism{Kind: schema.Laplace, Epsilon: 1, L0: 0, LInf: 1}, false},
		{Mechanism{Kind: "exponential", Epsilon: 1, L0: 1, LInf: 1}, false},
		{Mechanism{Kind: schema.Laplace, Epsilon: 1, L0: 1 << 26, LInf: 1 << 27}, true},
		{Mechanism{Kind: schema.Laplace, Epsilon: 1, L0: 3, LInf: 6148914691236517206}, false}, // the product wraps in int64
		{Mechanism{Kind: schema.Laplace, Epsilon: 1, L0: 1 << 27, LInf: 1<<26 + 1}, false},
	} {
		if err := c.m.Check(); (err == nil) != c.ok {
			t.Errorf("Check(%+v) = %v", c.m, err)
		}
	}
}

// TestCount: cells of the cross product in mixed radix, across chunk boundaries.
func TestCount(t *testing.T) {
	n := 10000
	a, b := make([]int32, n), make([]int32, n)
	want := make([]int64, 3*4)
	for r := range n {
		a[r], b[r] = int32(r%3), int32((r/7)%4)
		want[int(a[r])*4+int(b[r])]++
	}
	got := make([]int64, 12)
	Count(got, [][]int32{a, b}, []int{3, 4})
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("cell %d: %d, want %d", i, got[i], want[i])
		}
	}
	if _, err := Cells([]int{1000, 1000, 1000}, 1<<20); err == nil {
		t.Error("a cross product of 10⁹ cells accepted")
	}
	noisy, err := Noisy(make([]int64, 50), Mechanism{Kind: schema.Laplace, Epsilon: 1, L0: 1, LInf: 1})
	if err != nil || len(noisy) != 50 {
		t.Fatalf("noisy %v, %v", noisy, err)
	}
	nonzero := 0
	for _, v := range noisy {
		if v != 0 {
			nonzero++
		}
	}
	if nonzero == 0 { // P(all 50 zero) = (tanh(ε/2))^50 ≈ 1e-16
		t.Error("empty cells were not noised")
	}
}

func TestLedger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.json")
	l, err := LoadLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	// Ten spends of 0.1 fit a total of 1 exactly (decimal arithmetic).
	for i := range 10 {
		if err := l.Charge("ward", 1, 1e-6, Spend{Time: at, Epsilon: 0.1, Outputs: []string{"h"}}); err != nil {
			t.Fatalf("spend %d: %v", i+1, err)
		}
	}
	if err := l.Save(path); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	l, err = LoadLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	err = l.Charge("ward", 1, 1e-6, Spend{Time: at, Epsilon: 0.01, Outputs: []string{"h"}})
	if !errors.Is(err, fault.ErrUnattainable) {
		t.Fatalf("overspend: %v", err)
	}
	if len(l.Datasets["ward"].Spends) != 10 {
		t.Fatal("a refused spend was recorded")
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatal("the ledger file changed")
	}
	// δ is accounted too; other datasets have their own budget.
	if err := l.Charge("ward", 1, 1e-6, Spend{Time: at, Delta: 2e-6}); !errors.Is(err, fault.ErrUnattainable) {
		t.Fatalf("delta overspend: %v", err)
	}
	if err := l.Charge("other", 0.5, 0, Spend{Time: at, Epsilon: 0.5}); err != nil {
		t.Fatal(err)
	}
	// Raising a dataset's total is refused.
	if err := l.Charge("ward", 2, 1e-6, Spend{Time: at, Epsilon: 0.01}); !errors.Is(err, fault.ErrBadInput) {
		t.Fatalf("raised total: %v", err)
	}
	// A file that is not a ledger.
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte("[1,2"), 0o600)
	if _, err := LoadLedger(bad); !errors.Is(err, fault.ErrBadInput) {
		t.Fatalf("bad ledger: %v", err)
	}
	// A negative spend would hand budget back; bad totals are no budget.
	for _, text := range []string{
		`{"datasets":{"w":{"epsilon_total":1,"delta_total":0,"spends":[{"epsilon":-5,"delta":0}]}}}`,
		`{"datasets":{"w":{"epsilon_total":1,"delta_total":0,"spends":[{"epsilon":0.1,"delta":-1e-9}]}}}`,
		`{"datasets":{"w":{"epsilon_total":0,"delta_total":0,"spends":[]}}}`,
		`{"datasets":{"w":{"epsilon_total":1,"delta_total":1,"spends":[]}}}`,
	} {
		os.WriteFile(bad, []byte(text), 0o600)
		if _, err := LoadLedger(bad); !errors.Is(err, fault.ErrBadInput) {
			t.Errorf("%s: %v, want bad input", text, err)
		}
	}
}

// TestRecordConcurrent: runs charging one ledger file at the same time lose no spend
// (the file lock serializes them) and together never pass the total.
func TestRecordConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.json")
	const runs = 16
	errs := make(chan error, runs)
	for range runs {
		go func() {
			_, err := Record(path, "ward", 1, 0, Spend{Epsilon: 0.1})
			errs <- err
		}()
	}
	ok, refused := 0, 0
	for range runs {
		switch err := <-errs; {
		case err == nil:
			ok++
		case errors.Is(err, fault.ErrUnattainable):
			refused++
		default:
			t.Fatal(err)
		}
	}
	l, err := LoadLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	if ok != 10 || refused != 6 || len(l.Datasets["ward"].Spends) != 10 {
		t.Errorf("%d recorded, %d refused, %d in the ledger; want 10, 6, 10", ok, refused, len(l.Datasets["ward"].Spends))
	}
}

// BenchmarkCount counts a 3-column histogram (12 × 25 × 6 cells) of 10M encoded records.
func BenchmarkCount(b *testing.B) {
	const n = 10_000_000
	cols := [][]int32{make([]int32, n), make([]int32, n), make([]int32, n)}
	sizes := []int{12, 25, 6}
	for r := range n {
		cols[0][r], cols[1][r], cols[2][r] = int32(r%12), int32((r/3)%25), int32((r/7)%6)
	}
	counts := make([]int64, 12*25*6)
	for b.Loop() {
		clear(counts)
		Count(counts, cols, sizes)
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
}
