package release_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"sanitizer/job"
	"sanitizer/release"
	"sanitizer/series"
)

// TestSeriesSplitsCohorts: under series.removals: retire a class's rows on the first
// night are split into cohorts of at least k each (so that a row that leaves retires
// few others); under refuse a class is one cohort.
func TestSeriesSplitsCohorts(t *testing.T) {
	header, pool := attackRows(t)
	for _, tc := range []struct {
		removals string
		split    bool
	}{{"retire", true}, {"refuse", false}} {
		t.Run(tc.removals, func(t *testing.T) {
			dir := t.TempDir()
			in := writeInputs(t, dir, header, [][][]string{pool[:attackFirst]})[0]
			cfg := attackConfig(t, dir, func(c string) string { return c + "series: {removals: " + tc.removals + "}\n" })
			state := filepath.Join(dir, "st.json")
			if _, err := release.Release(context.Background(), cfg, job.Options{Input: in, Output: filepath.Join(dir, "r.csv"), Series: state}); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(state)
			if err != nil {
				t.Fatal(err)
			}
			s, err := series.Parse(state, data)
			if err != nil {
				t.Fatal(err)
			}
			cohorts := 0
			for _, c := range s.Classes {
				size := map[uint32]int{}
				for i := range len(c.Entries) / s.EntryWidth() {
					size[c.Cohort(i)]++
				}
				for id, n := range size {
					if n < cfg.Privacy.K || id>>16 != 1 {
						t.Errorf("a cohort of %d rows numbered %#x: want at least k=%d, of night 1", n, id, cfg.Privacy.K)
					}
				}
				cohorts += len(size)
			}
			if split := cohorts > len(s.Classes); split != tc.split {
				t.Errorf("%d cohorts in %d classes: split %v, want %v", cohorts, len(s.Classes), split, tc.split)
			}
		})
	}
}
