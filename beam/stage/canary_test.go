package stage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/release"
	"sanitizer/schema"
)

// TestNoCanaryInBeamRelease: a value that only suppressed records hold (or only
// records outside a research subset) is nowhere in a release on Beam of
// dictionary-encoded Parquet parts — not in a record, a dictionary page or batch, nor
// the statistics of any part, nor in its report — into Parquet, Arrow IPC (file and
// stream) and CSV; and the CLI's check passes the release: every value of a part's
// dictionary is held by a released record, also when a part's records hold only some of
// the released labels (byZip: a part's dictionary is the release's).
func TestNoCanaryInBeamRelease(t *testing.T) {
	for _, c := range []struct{ subset, byZip bool }{{false, false}, {true, false}, {false, true}} {
		ct := testfiles.NewCanary(t, c.subset, c.byZip)
		defer ct.Release()
		parts, canaries, columns := ct.ParquetParts(t, t.TempDir()), ct.Canaries, ct.Config
		formats := []string{"parquet", "arrow", "arrows", "csv"}
		if c.subset {
			formats = []string{"parquet"}
		}
		for _, format := range formats {
			t.Run(fmt.Sprintf("subset=%v/byZip=%v/%s", c.subset, c.byZip, format), func(t *testing.T) {
				dir := t.TempDir()
				cfgPath := filepath.Join(dir, "c.yaml")
				if err := os.WriteFile(cfgPath, []byte("output: {format: "+format+"}\n"+columns), 0o600); err != nil {
					t.Fatal(err)
				}
				j, err := NewJob(cfgPath)
				if err != nil {
					t.Fatal(err)
				}
				out, rep := filepath.Join(dir, "release"), filepath.Join(dir, "report.json")
				r, err := Release(context.Background(), j, job.Options{Input: parts, Output: out, Report: rep}, onPrism)
				if err != nil {
					t.Fatalf("release: %v", err)
				}
				if r.Measured.Suppressed < testfiles.CanaryRecords {
					t.Fatalf("%d records suppressed: the canary records are not all suppressed", r.Measured.Suppressed)
				}
				files, _ := filepath.Glob(filepath.Join(out, "*"))
				if len(files) != 3 {
					t.Fatalf("the release holds %q, want 3 parts", files)
				}
				testfiles.NoCanary(t, canaries, append(files, rep)...)
				cfg, err := schema.Load(cfgPath)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := release.Check(context.Background(), cfg, job.Options{Input: parts, Output: out}); err != nil {
					t.Fatalf("check: %v", err)
				}
			})
		}
	}
}
