package verify

import (
	"context"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// readAllCSV opens data as a CSV file and reads every record projected to cols.
func readAllCSV(t *testing.T, data string, sep rune, header bool, cols []int) ([]string, [][]string, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.csv")
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := OpenCSV(path, sep, header, []string{"a", "b", "c"})
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	recs, err := readRecords(f, cols)
	return f.Header(), recs, err
}

// readRecords reads every record of f projected to cols, until the end or an error.
func readRecords(f *CSVFile, cols []int) ([][]string, error) {
	r := f.Records(context.Background(), cols)
	defer r.Close()
	var recs [][]string
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return recs, nil
		}
		if err != nil {
			return recs, err
		}
		recs = append(recs, slices.Clone(rec)) // a record is valid until the next Read
	}
}

func TestCSVFile(t *testing.T) {
	many := "a,b,c\n" + strings.Repeat("1,2,3\n", 300005) // two blocks
	cases := []struct {
		name, data string
		sep        rune
		header     bool
		cols       []int
		wantHeader []string
		want       int    // records
		first      string // the first record, joined by |
		err        string
	}{
		{"projection", "a,b,c\n1,\"x,y\",3\n4,5,6\n", ',', true, []int{2, 0}, []string{"a", "b", "c"}, 2, "3|1", ""},
		{"bom", "\xEF\xBB\xBFa;b;c\n1;2;3\n", ';', true, []int{0}, []string{"a", "b", "c"}, 1, "1", ""},
		{"no header", "1,2,3\n4,5,6\n", ',', false, []int{1}, []string{"a", "b", "c"}, 2, "2", ""},
		{"blocks", many, ',', true, []int{0, 1, 2}, []string{"a", "b", "c"}, 300005, "1|2|3", ""},
		{"malformed", "a,b,c\n1,2,3\n1,\"2,3\n", ',', true, []int{0}, []string{"a", "b", "c"}, 1, "1", "record 2"},
		{"malformed line", "a,b,c\n\"x\ny\",2,3\n1,2\"3,4\n", ',', true, []int{0}, []string{"a", "b", "c"}, 1, "x\ny", "line 4"},
		{"malformed in a later block", many + "1,\"2,3\n", ',', true, []int{0}, []string{"a", "b", "c"}, 300005, "1", "record 300006: parse error on line 300007"},
		{"field count", "a,b,c\n1,2\n", ',', true, []int{0}, []string{"a", "b", "c"}, 0, "", "record 1"},
		{"empty", "", ',', true, nil, nil, 0, "", "no header row"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, recs, err := readAllCSV(t, c.data, c.sep, c.header, c.cols)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "t.csv") {
					t.Fatalf("error %v, want one naming the file and %q", err, c.err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(h, c.wantHeader) || len(recs) != c.want {
				t.Fatalf("header %q, %d records; want %q, %d", h, len(recs), c.wantHeader, c.want)
			}
			if len(recs) > 0 && strings.Join(recs[0], "|") != c.first {
				t.Fatalf("first record %q, want %q", recs[0], c.first)
			}
		})
	}
}

// TestCSVRecordsCloseEarly: closing a reader in the middle of a large file returns.
func TestCSVRecordsCloseEarly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.csv")
	if err := os.WriteFile(path, []byte("a\n"+strings.Repeat("x\n", 2000000)), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := OpenCSV(path, ',', true, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := f.Records(context.Background(), []int{0})
	if _, err := r.Read(); err != nil {
		t.Fatal(err)
	}
	r.Close()
}

// TestCSVChecksum: once read to the end, a CSV file's checksum is the CRC-32C of all
// its bytes (the byte-order mark included); not before.
func TestCSVChecksum(t *testing.T) {
	data := "\xEF\xBB\xBFa,b\n1,\"x\ny\"\n3,4"
	path := filepath.Join(t.TempDir(), "t.csv")
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := OpenCSV(path, ',', true, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := f.Records(context.Background(), []int{0, 1})
	defer r.Close()
	if _, err := r.Read(); err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := r.Read(); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	sum, ok := f.Checksum()
	if want := crc32.Checksum([]byte(data), crc32.MakeTable(crc32.Castagnoli)); !ok || sum != want {
		t.Fatalf("checksum %x (%v), want %x", sum, ok, want)
	}
	g, err := OpenCSV(path, ',', true, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, ok := g.Checksum(); ok {
		t.Error("a checksum before the records were read")
	}
}
