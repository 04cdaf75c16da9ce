package generalize

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

// BenchmarkRollUpRecords measures one roll-up of generated records (ROLLUP_ROWS, default
// 2M) with the leaf counts of the hospital benchmark's eight quasi-identifiers to a
// node whose codes fit 32-bit keys (1.8 million classes of 10 million records): the
// search's most frequent step on large tables, where the records are the source.
func BenchmarkRollUpRecords(b *testing.B) {
	n := 2 << 20
	if v, err := strconv.Atoi(os.Getenv("ROLLUP_ROWS")); err == nil {
		n = v
	}
	leaves := []int{105, 2, 297, 2192, 25, 184, 42, 4}
	ratio := []int{15, 1, 33, 31, 2, 12, 42, 4} // leaves per code at the target node
	rng := rand.New(rand.NewPCG(1, 2))
	rows := &classes{rows: make([]Codes, len(leaves)), n: n}
	maps := make([][]int32, len(leaves))
	sizes := make([]int, len(leaves))
	for i, l := range leaves {
		rows.rows[i] = NewCodes(n, l)
		for r := range n {
			rows.rows[i].Set(r, int32(rng.IntN(l)))
		}
		maps[i] = make([]int32, l)
		for c := range l {
			maps[i][c] = int32(c / ratio[i])
		}
		sizes[i] = (l + ratio[i] - 1) / ratio[i]
	}
	g := &grouper{par: 2, pack: newPacking(leaves)}
	b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
		var out *classes
		for b.Loop() {
			out, _ = g.rollUp(rows, 1, maps, sizes, nil, 0)
		}
		b.ReportMetric(float64(out.n), "classes")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/record")
	})
}
