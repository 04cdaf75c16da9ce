package gen

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/sample"
	"sanitizer/table"
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

// TestTables: for each table, the CSV gen writes (batch by batch, a patient's
// admissions across a batch's end) holds the bytes sample's generator writes in one go,
// the same seed gives the same file in every format, and the metadata names the table.
func TestTables(t *testing.T) {
	rows := 2*table.BatchRows + 7
	for _, tc := range []struct {
		table  Table
		sample func(io.Writer, int, uint64) error
	}{
		{TableHospital, sample.Hospital},
		{TableAdmissions, sample.Admissions},
	} {
		t.Run(tc.table.String(), func(t *testing.T) {
			dir := t.TempDir()
			var want bytes.Buffer
			if err := tc.sample(&want, rows, 5); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, "t.csv")
			if err := TableContext(t.Context(), tc.table, p, "", rows, 5, job.Options{}); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(p); !bytes.Equal(got, want.Bytes()) {
				t.Errorf("gen wrote %d bytes, sample %d; they differ", len(got), want.Len())
			}
			for _, ext := range []string{"parquet", "arrow", "arrows"} {
				a, b := filepath.Join(dir, "a."+ext), filepath.Join(dir, "b."+ext)
				for _, p := range []string{a, b} {
					if err := TableContext(t.Context(), tc.table, p, "", 300, 9, job.Options{}); err != nil {
						t.Fatal(err)
					}
				}
				if da, db := readAll(t, a), readAll(t, b); !bytes.Equal(da, db) {
					t.Errorf("%s: the same seed wrote two files", ext)
				}
			}
			if md := testfiles.ParquetMetadata(t, filepath.Join(dir, "a.parquet")); md["sanitize.generator"] != tc.table.String() || md["sanitize.seed"] != "9" {
				t.Errorf("metadata %v", md)
			}
		})
	}
}

// readAll is the file's content.
func readAll(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestParseTable: --table takes the spelling of each of Tables, nothing else (bad
// input naming the flag).
func TestParseTable(t *testing.T) {
	for _, tc := range []struct {
		flag string
		want Table
		ok   bool
	}{
		{"hospital", TableHospital, true},
		{"admissions", TableAdmissions, true},
		{"", "", false},
		{"Admissions", "", false},
		{"admission", "", false},
		{" hospital", "", false},
	} {
		got, err := ParseTable(tc.flag)
		if tc.ok && (err != nil || got != tc.want) {
			t.Errorf("%q: %q, %v; want %q", tc.flag, got, err, tc.want)
		}
		if !tc.ok && (!errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "--table")) {
			t.Errorf("%q: %q, %v; want bad input naming --table", tc.flag, got, err)
		}
	}
	if err := TableContext(t.Context(), Table("x"), filepath.Join(t.TempDir(), "x.csv"), "", 1, 1, job.Options{}); !errors.Is(err, fault.ErrInternal) {
		t.Errorf("an unknown Table: %v, want an internal error", err)
	}
}
