package gen

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/sample"
)

// TestHospital: the same seed writes the same table; an existing file is replaced only
// with Force; bad arguments are bad input naming the flag, and leave nothing.
func TestHospital(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	for _, p := range []string{a, b} {
		if err := Hospital(p, "", 50, 7, job.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	da, _ := os.ReadFile(a)
	db, _ := os.ReadFile(b)
	if !bytes.Equal(da, db) {
		t.Error("the same seed wrote two tables")
	}
	header, recs := testfiles.ReadCSV(t, a)
	if strings.Join(header, ",") != strings.Join(sample.HospitalColumns, ",") || len(recs) != 50 {
		t.Errorf("header %v, %d records", header, len(recs))
	}
	if err := Hospital(a, "", 10, 8, job.Options{}); !errors.Is(err, fault.ErrBadInput) {
		t.Errorf("an existing file without force: %v", err)
	}
	if err := Hospital(a, "", 10, 8, job.Options{Force: true}); err != nil {
		t.Fatal(err)
	}
	if _, recs := testfiles.ReadCSV(t, a); len(recs) != 10 {
		t.Errorf("with force: %d records, want 10", len(recs))
	}
	pq := filepath.Join(dir, "h.parquet")
	if err := Hospital(pq, "", 20, 1, job.Options{}); err != nil {
		t.Fatal(err)
	}
	if md := testfiles.ParquetMetadata(t, pq); md["sanitize.seed"] != "1" || md["sanitize.generator"] != "hospital" {
		t.Errorf("metadata %v", md)
	}
	for _, tc := range []struct {
		path, format, flag string
		rows               int
	}{
		{filepath.Join(dir, "x.csv"), "xlsx", "--format", 1},
		{filepath.Join(dir, "x.csv"), "parquet", "--format", 1},
		// A bad --format too: were --rows not checked first, the run would stop there
		// (naming --format), not write a huge table.
		{filepath.Join(dir, "x.csv"), "xlsx", "--rows", -1},
		{filepath.Join(dir, "x.csv"), "xlsx", "--rows", 0},
		{filepath.Join(dir, "x.csv"), "xlsx", "--rows", MaxRows + 1},
		{filepath.Join(dir, "x.csv"), "xlsx", "--rows", math.MaxInt},
	} {
		err := Hospital(tc.path, tc.format, tc.rows, 1, job.Options{})
		if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), tc.flag) {
			t.Errorf("%s %q %d: %v, want bad input naming %s", tc.path, tc.format, tc.rows, err, tc.flag)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("the folder holds %d entries, want a.csv, b.csv, h.parquet", len(entries))
	}
}

// TestHospitalCancelled: a cancelled context stops the write before it publishes, with
// the context's error, and leaves nothing in the folder: cancelled before the first
// batch, after it, and at the publishing point.
func TestHospitalCancelled(t *testing.T) {
	for _, stage := range []job.Stage{"", job.StageWrite, job.StagePublish} {
		for _, format := range []string{"csv", "parquet", "arrow", "arrows"} {
			dir := t.TempDir()
			ctx, cancel := context.WithCancel(t.Context())
			if stage == "" {
				cancel()
			}
			opt := job.Options{AtStage: func(s job.Stage) {
				if s == stage {
					cancel()
				}
			}}
			err := HospitalContext(ctx, filepath.Join(dir, "h."+format), "", 3*4096, 1, opt)
			cancel()
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s, cancelled at %q: %v, want context.Canceled", format, stage, err)
			}
			if entries, _ := os.ReadDir(dir); len(entries) > 0 {
				t.Errorf("%s, cancelled at %q: the folder holds %d entries", format, stage, len(entries))
			}
		}
	}
}
