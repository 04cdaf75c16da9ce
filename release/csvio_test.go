package release

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"sanitizer/job"
	"sanitizer/schema"
	"sanitizer/table"
)

// bom is the byte-order mark an Excel "CSV UTF-8" export starts with.
const bom = "\xEF\xBB\xBF"

// csvRead opens data as a CSV input and returns its column names and records.
func csvRead(t *testing.T, data string, dialect schema.CSV, names []string) ([]string, [][]string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := table.OpenCSV(path, dialect, names)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var header []string
	for _, c := range src.Columns() {
		header = append(header, c.Name)
	}
	var recs [][]string
	for pass := range 2 { // the second pass reads the same records
		if pass == 1 {
			if err := src.Rewind(); err != nil {
				t.Fatal(err)
			}
			recs = nil
		}
		r := readRecords(context.Background(), src)
		for {
			rec, err := r.Read()
			if err != nil {
				break
			}
			recs = append(recs, slices.Clone(rec))
		}
		r.Close()
	}
	if err := src.Unchanged(); err != nil {
		t.Fatal(err)
	}
	return header, recs
}

// TestCSVByteOrderMark: a UTF-8 byte-order mark at the start of a CSV input is not
// part of the first column's name (nor of the first record's first field, without a
// header row); one anywhere else is data.
func TestCSVByteOrderMark(t *testing.T) {
	cases := []struct {
		name       string
		data       string
		header     bool
		wantHeader []string
		wantRecs   [][]string
	}{
		{"header", bom + "zip,age\n02139,34\n", true, []string{"zip", "age"}, [][]string{{"02139", "34"}}},
		{"quoted header", bom + "\"zip\",age\n02139,34\n", true, []string{"zip", "age"}, [][]string{{"02139", "34"}}},
		{"no header", bom + "02139,34\n", false, []string{"zip", "age"}, [][]string{{"02139", "34"}}},
		{"only a mark", bom, false, []string{"zip", "age"}, nil},
		{"mark inside", "zip,age\n" + bom + "02139,34\n", true, []string{"zip", "age"}, [][]string{{bom + "02139", "34"}}},
		{"two marks", bom + bom + "zip,age\n", true, []string{bom + "zip", "age"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			header, recs := csvRead(t, tc.data, schema.CSV{Separator: ',', Header: tc.header}, []string{"zip", "age"})
			if !slices.Equal(header, tc.wantHeader) {
				t.Errorf("header %q, want %q", header, tc.wantHeader)
			}
			if !slices.EqualFunc(recs, tc.wantRecs, slices.Equal) {
				t.Errorf("records %q, want %q", recs, tc.wantRecs)
			}
		})
	}
}

// TestReleaseCSVByteOrderMark: a CSV input that starts with a byte-order mark releases
// exactly as the same input without it, and Check passes on it.
func TestReleaseCSVByteOrderMark(t *testing.T) {
	cfg, in, dir := hospitalFixture(t, 300)
	plain := filepath.Join(dir, "plain.csv")
	if _, err := Release(context.Background(), cfg, job.Options{Input: in, Output: plain}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	markedIn := filepath.Join(dir, "bom.csv")
	if err := os.WriteFile(markedIn, append([]byte(bom), data...), 0o600); err != nil {
		t.Fatal(err)
	}
	marked := filepath.Join(dir, "marked.csv")
	if _, err := Release(context.Background(), cfg, job.Options{Input: markedIn, Output: marked}); err != nil {
		t.Fatalf("release of the input with a byte-order mark: %v", err)
	}
	if _, err := Check(context.Background(), cfg, job.Options{Input: markedIn, Output: marked}); err != nil {
		t.Fatalf("check: %v", err)
	}
	a, _ := os.ReadFile(plain)
	b, _ := os.ReadFile(marked)
	if !bytes.Equal(a, b) {
		t.Error("the release differs from the release of the input without the mark")
	}
}

// readRecords reads every column of src, record by record.
func readRecords(ctx context.Context, src table.Source) *table.RecordReader {
	all := make([]int, len(src.Columns()))
	for i := range all {
		all[i] = i
	}
	return table.ReadColumns(ctx, src, all)
}
