package dprun

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sanitizer/dphist"
	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/schema"
	"sanitizer/table"
)

// mapperConf counts a histogram with an "other" cell, 2-way marginals and an
// aggregate over wardInput's columns.
const mapperConf = `dataset: ward
columns:
  pid:  {role: identifier}
  age:  {role: quasi, type: integer, hierarchy: {intervals: [10]}, domain: {range: [20, 59], width: 10}}
  sex:  {role: quasi, hierarchy: {mask: {from: right, max: 1}}, domain: [F, M]}
  dx:   {role: sensitive, domain: [flu, cold]}
  stay: {role: insensitive, type: integer}
dp:
  epsilon-total: 5
  privacy-unit: {column: pid, max-rows-per-unit: 2}
  outputs:
    - {name: h, histogram: [age, dx], epsilon: 1, mechanism: laplace, other: true}
    - {name: m, marginals: {columns: [age, sex, dx], way: 2}, epsilon: 1, mechanism: laplace}
    - {name: a, aggregate: {group-by: [sex], column: stay, stats: [count, sum], bounds: [0, 5]}, epsilon: 1, mechanism: laplace}
`

// mapped is every output's exact count per partition, and an aggregate's sum of
// values, as the Mapper maps the input record by record.
func mapped(t *testing.T, cfg *schema.Config, in string) ([]*Output, [][]int64, [][]float64, error) {
	t.Helper()
	src, p, err := job.OpenInput(cfg, in, "csv")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	outs, err := Describe(cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewMapper(cfg, p, outs)
	if err != nil {
		t.Fatal(err)
	}
	counts, sums := make([][]int64, len(outs)), make([][]float64, len(outs))
	for i, o := range outs {
		counts[i], sums[i] = make([]int64, o.Partitions()), make([]float64, o.Partitions())
	}
	batches := make(chan *table.Batch, 2)
	streamed := make(chan error, 1)
	go func() { streamed <- src.Stream(context.Background(), m.Columns(), batches) }()
	var mapErr error
	for b := range batches {
		for i := 0; i < b.N && mapErr == nil; i++ {
			mapErr = m.Map(b, i, func(out int, unit string, key int64, value float64) {
				if unit == "" {
					t.Errorf("record %d: no unit", b.First+i)
				}
				counts[out][key]++
				sums[out][key] += value
			})
		}
	}
	if err := <-streamed; err != nil {
		t.Fatal(err)
	}
	return outs, counts, sums, mapErr
}

// TestMapperMatchesColumns: the Mapper's record-by-record reading gives every output
// the exact counts (and an aggregate the clamped sums) that the CLI's reading of
// whole columns gives, for a histogram with an "other" cell, marginals and an
// aggregate; and a value outside a domain is the CLI's error, row and column.
func TestMapperMatchesColumns(t *testing.T) {
	dir := t.TempDir()
	cfgPath, in := filepath.Join(dir, "dp.yaml"), filepath.Join(dir, "in.csv")
	// Age 99 falls outside [0, 59], into the "other" cell of the histogram and the
	// marginals; a stay of 40 is clamped to the aggregate's bounds.
	if err := os.WriteFile(in, []byte(wardInput("z1,99,M,cold,3", "z2,7,F,flu,40")), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := testfiles.Replace(t, mapperConf, "range: [20, 59]", "range: [0, 59]") // the marginals have no other cell
	conf = testfiles.Replace(t, conf, "way: 2}", "way: 2}, other: true")
	if err := os.WriteFile(cfgPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := schema.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	outs, counts, sums, err := mapped(t, cfg, in)
	if err != nil {
		t.Fatal(err)
	}
	src, p, err := job.OpenInput(cfg, in, "csv")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	data, err := readInput(context.Background(), p, src)
	if err != nil {
		t.Fatal(err)
	}
	for i, out := range outs {
		cols, err := outputCells(p, out, data)
		if err != nil {
			t.Fatal(err)
		}
		var want []int64
		subsets := out.Subsets
		if subsets == nil {
			subsets = [][]int{seq(len(cols))}
		}
		for _, s := range subsets {
			sub, sizes := make([][]int32, len(s)), make([]int, len(s))
			for j, a := range s {
				sub[j], sizes[j] = cols[a], out.Sizes[a]
			}
			n, _ := dphist.Cells(sizes, maxDPCells)
			c := make([]int64, n)
			dphist.Count(c, sub, sizes)
			want = append(want, c...)
		}
		if !slices.Equal(counts[i], want) {
			t.Errorf("output %s: the mapper counts %v, the columns %v", out.Spec.Name, counts[i], want)
		}
		if a := out.Spec.Aggregate; a != nil {
			wantSums := make([]float64, out.Partitions())
			for r, v := range data.col[a.Column].values {
				wantSums[cols[0][r]] += min(max(v, a.Bounds[0]), a.Bounds[1])
			}
			if !slices.Equal(sums[i], wantSums) {
				t.Errorf("output %s: the mapper sums %v, the columns %v", out.Spec.Name, sums[i], wantSums)
			}
		}
	}

	// Outside the marginals' domain, which has no "other" cell: the CLI's error.
	if err := os.WriteFile(cfgPath, []byte(mapperConf), 0o600); err != nil {
		t.Fatal(err)
	}
	if cfg, err = schema.Load(cfgPath); err != nil {
		t.Fatal(err)
	}
	_, _, _, mapErr := mapped(t, cfg, in)
	_, runErr := Run(context.Background(), cfg, job.Options{Input: in, Output: filepath.Join(dir, "out")})
	if !errors.Is(mapErr, fault.ErrBadInput) || runErr == nil || mapErr.Error() != runErr.Error() || !strings.Contains(mapErr.Error(), "row 71") {
		t.Errorf("outside the domain: the mapper says %v; the CLI %v", mapErr, runErr)
	}
}
