package dprun

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"sanitizer/dphist"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/schema"
)

// adultDiscrete is ../shared/data/adult-discrete: the integer-coded Adult table of the
// DP synthetic-data literature and its domain sizes.
const adultDiscrete = "../../shared/data/adult-discrete"

// adultDiscreteConfig writes a configuration for a synthetic output over every column
// of adult-discrete (each an integer range of width 1 over its published domain) and
// returns its path.
func adultDiscreteConfig(t testing.TB, dir, method string, eps float64, extra string) (string, []string, []int) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(adultDiscrete, "adult-domain.json"))
	if err != nil {
		t.Skipf("adult-discrete not available: %v", err)
	}
	// The domain file's key order is the table's column order; read it in order.
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	var names []string
	var sizes []int
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := dec.Decode(&n); err != nil {
			t.Fatal(err)
		}
		names, sizes = append(names, k.(string)), append(sizes, n)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "input: {format: csv}\ndp:\n  epsilon-total: %g\n  delta-total: 1e-9\n  outputs:\n", eps)
	fmt.Fprintf(&b, "    - {name: synth, epsilon: %g, delta: 1e-9, synthetic: {columns: [%s], rows: same, method: %s%s}}\n",
		eps, quoteAll(names), method, extra)
	b.WriteString("columns:\n")
	for i, n := range names {
		fmt.Fprintf(&b, "  %q: {role: insensitive, type: integer, domain: {range: [0, %d], width: 1}}\n", n, sizes[i]-1)
	}
	p := filepath.Join(dir, "adult-synth.yaml")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p, names, sizes
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// readCodes reads a CSV of integer codes with a header into columns ordered as names.
func readCodes(t testing.TB, path string, names []string) [][]int32 {
	t.Helper()
	header, recs := testfiles.ReadCSV(t, path)
	pos := make([]int, len(names))
	for i, n := range names {
		if pos[i] = slices.Index(header, n); pos[i] < 0 {
			t.Fatalf("%s: no column %q", path, n)
		}
	}
	cols := make([][]int32, len(names))
	for i := range cols {
		cols[i] = make([]int32, len(recs))
		for r, rec := range recs {
			v, err := strconv.Atoi(rec[pos[i]])
			if err != nil {
				t.Fatalf("%s: row %d column %q: %v", path, r+1, names[i], err)
			}
			cols[i][r] = int32(v)
		}
	}
	return cols
}

// workloadError is the mean, over every way-way marginal of the columns, of the L1
// distance between the normalized marginals of a and b (Σ over cells |p_a − p_b|).
func workloadError(a, b [][]int32, sizes []int, way int) float64 {
	subsets := dphist.Subsets(len(sizes), way)
	total := 0.0
	for _, s := range subsets {
		sub := func(cols [][]int32) ([]float64, int) {
			cs, ss := make([][]int32, len(s)), make([]int, len(s))
			n := 1
			for j, c := range s {
				cs[j], ss[j] = cols[c], sizes[c]
				n *= sizes[c]
			}
			counts := make([]int64, n)
			dphist.Count(counts, cs, ss)
			p := make([]float64, n)
			for i, c := range counts {
				p[i] = float64(c) / float64(len(cols[0]))
			}
			return p, n
		}
		pa, n := sub(a)
		pb, _ := sub(b)
		for i := range n {
			total += math.Abs(pa[i] - pb[i])
		}
	}
	return total / float64(len(subsets))
}

// BenchmarkSynthAdult runs the synthetic output on adult-discrete (δ = 1e-9) at
// ε ∈ {0.3, 1, 3} and reports the mean L1 error of all 1-, 2- and 3-way marginals of
// the synthetic table against the real one, averaged over the benchmark's runs (each
// run draws fresh noise). SYNTH_METHOD picks aim (default) or mst; SYNTH_EPS a single
// ε; SYNTH_EXTRA is appended to the synthetic mapping (e.g. ", max-model-size: 1000000").
// Run with -benchtime=3x for the three runs per ε.
func BenchmarkSynthAdult(b *testing.B) {
	method := os.Getenv("SYNTH_METHOD")
	if method == "" {
		method = schema.AIM.String()
	}
	epss := []float64{0.3, 1, 3}
	if v, err := strconv.ParseFloat(os.Getenv("SYNTH_EPS"), 64); err == nil {
		epss = []float64{v}
	}
	for _, eps := range epss {
		b.Run(fmt.Sprintf("%s/eps=%g", method, eps), func(b *testing.B) {
			dir := b.TempDir()
			cfgPath, names, sizes := adultDiscreteConfig(b, dir, method, eps, os.Getenv("SYNTH_EXTRA"))
			cfg, err := schema.Load(cfgPath)
			if err != nil {
				b.Fatal(err)
			}
			in := filepath.Join(adultDiscrete, "adult.csv")
			real := readCodes(b, in, names)
			var errs [3]float64
			runs := 0
			var secs float64
			for b.Loop() {
				out := filepath.Join(dir, fmt.Sprintf("out%d", runs))
				start := time.Now()
				man, err := Run(context.Background(), cfg, job.Options{Input: in, Output: out})
				if err != nil {
					b.Fatal(err)
				}
				secs += time.Since(start).Seconds()
				b.StopTimer()
				took := time.Since(start).Seconds()
				syn := readCodes(b, filepath.Join(out, "synth.csv"), names)
				var e [3]float64
				for w := 1; w <= 3; w++ {
					e[w-1] = workloadError(real, syn, sizes, w)
					errs[w-1] += e[w-1]
				}
				rep := man.Outputs[0].Synthetic
				b.Logf("run %d: %.1f s, 3-way %.4f, %d rounds, %d measured, model %d cells, ρ %.5f of %.5f, rows %d, refined towards %d marginals (%d changes)",
					runs, took, e[2], rep.Rounds, len(rep.Measured), rep.ModelSize, rep.RhoSpent, rep.Rho, rep.Rows, rep.RefinedSets, rep.RefineMoves)
				runs++
				b.StartTimer()
			}
			for w := range errs {
				b.ReportMetric(errs[w]/float64(runs), fmt.Sprintf("L1-%dway", w+1))
			}
			b.ReportMetric(secs/float64(runs), "s/run")
		})
	}
}
