package generalize

import (
	"context"
	"fmt"
	"math"
	"testing"
)

// BenchmarkSearchAdult measures the optimal search on Adult after encoding.
func BenchmarkSearchAdult(b *testing.B) {
	tab, _, _ := loadAdult(b)
	for _, st := range []struct {
		k    int
		supp float64
	}{{5, 0.05}, {5, 0}, {10, 0.05}, {100, 0}} {
		b.Run(fmt.Sprintf("k=%d/supp=%g", st.k, st.supp), func(b *testing.B) {
			var res *Result
			for b.Loop() {
				var err error
				res, err = Search(context.Background(), tab, Options{K: st.k, MaxSuppressed: int(math.Floor(st.supp * float64(tab.Rows)))})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(res.Evaluated), "evaluated")
			b.ReportMetric(float64(res.LatticeSize), "nodes")
			b.ReportMetric(float64(res.RolledUp), "rolled-up")
		})
	}
}
