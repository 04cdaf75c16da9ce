package release

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
)

// heldInput writes a CSV input of n records: zip (quasi-identifier), diag (sensitive,
// three values), ward (three values), stay (integer, empty every seventh record: a
// null), id (unique text) and big (unique integers); bad, when positive, makes big's
// value in that 1-based row a word.
func heldInput(t *testing.T, dir string, n, bad int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("zip,diag,ward,stay,id,big\n")
	for i := range n {
		stay := strconv.Itoa(i % 30)
		if i%7 == 0 {
			stay = ""
		}
		big := strconv.Itoa(1_000_000 + i)
		if i+1 == bad {
			big = "many"
		}
		fmt.Fprintf(&b, "021%02d,%s,w%d,%s,id%d,%s\n", i%4, []string{"flu", "cold", "asthma"}[i%3], i%3, stay, i, big)
	}
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return in
}

const heldConfig = `input: {format: csv}
columns:
  zip: {role: quasi, hierarchy: {mask: {max: 5}}}
  diag: {role: sensitive}
  ward: {role: insensitive}
  stay: {role: insensitive, type: integer}
  id: {role: insensitive}
  big: {role: insensitive, type: integer}
privacy: {k: 2}
`

// TestHeldColumns: pass 1 holds the kept columns of few values of a CSV input (a null
// among them) and lets go of those past the bound, which pass 2 reads; the release
// holds every value, and every null, of the input, in every output format.
func TestHeldColumns(t *testing.T) {
	dir := t.TempDir()
	n := heldValues + 100
	in := heldInput(t, dir, n, 0)
	cfg := loadConfigText(t, heldConfig)

	src, p, err := openInput(cfg, in, "", "csv")
	if err != nil {
		t.Fatal(err)
	}
	one, err := loadTable(context.Background(), p, src, true)
	src.Close()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"diag": true, "ward": true, "stay": true, "id": false, "big": false}
	for _, h := range one.held {
		if h.held != want[h.conf.Name] {
			t.Errorf("column %q held %v, want %v", h.conf.Name, h.held, want[h.conf.Name])
		}
		if h.conf.Name == "stay" && (h.null < 0 || h.values[h.null] != "") {
			t.Errorf("stay: null numbered %d", h.null)
		}
	}
	if len(one.held) != len(want) {
		t.Errorf("%d columns held or let go, want %d", len(one.held), len(want))
	}

	for _, format := range []string{"csv", "parquet", "arrow"} {
		t.Run(format, func(t *testing.T) {
			if testing.Short() && format != "csv" {
				t.Skip("the race run: one release of held columns (the other formats' writers race in TestFormatsAgree)")
			}
			out := filepath.Join(dir, "r."+format)
			if _, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
				t.Fatal(err)
			}
			if format == "csv" {
				header, recs := testfiles.ReadCSV(t, out)
				if strings.Join(header, ",") != "zip,diag,ward,stay,id,big" || len(recs) != n {
					t.Fatalf("header %q, %d records", header, len(recs))
				}
				for i, rec := range recs {
					if rec[4] != "id"+strconv.Itoa(i) || rec[2] != "w"+strconv.Itoa(i%3) || (rec[3] == "") != (i%7 == 0) {
						t.Fatalf("record %d: %q", i, rec)
					}
				}
				return
			}
			if format != "parquet" {
				return // the Arrow release's values: checked by its verification
			}
			pq := testfiles.ReadWithPqarrow(t, out)
			defer pq.Release()
			if pq.NumRows() != int64(n) {
				t.Fatalf("%d records released, want %d", pq.NumRows(), n)
			}
			stay := pq.Column(3).Data().Chunk(0).(*array.Int64)
			ids := pq.Column(4).Data().Chunk(0).(*array.String)
			for i := range stay.Len() {
				if stay.IsNull(i) != (i%7 == 0) || (!stay.IsNull(i) && stay.Value(i) != int64(i%30)) || ids.Value(i) != "id"+strconv.Itoa(i) {
					t.Fatalf("record %d: stay %v (null %v), id %q", i, stay.Value(i), stay.IsNull(i), ids.Value(i))
				}
			}
		})
	}
}

// TestHeldColumnErrors: a value of the wrong type is bad input naming its row and
// column, and nothing is written, whether its column is held (found in pass 1) or let
// go (found in pass 2).
func TestHeldColumnErrors(t *testing.T) {
	for _, c := range []struct {
		name     string
		n, bad   int
		heldText string // stay's type: held columns' values are checked in pass 1
	}{
		{"held", 5000, 0, "many"},
		{"let go", heldValues + 100, heldValues + 50, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			in := heldInput(t, dir, c.n, c.bad)
			row := c.bad
			if c.heldText != "" {
				raw, err := os.ReadFile(in)
				if err != nil {
					t.Fatal(err)
				}
				lines := strings.Split(string(raw), "\n")
				row = 4000
				f := strings.Split(lines[row], ",")
				f[3] = c.heldText
				lines[row] = strings.Join(f, ",")
				if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			column := map[bool]string{true: `"stay"`, false: `"big"`}[c.heldText != ""]
			out := filepath.Join(dir, "r.csv")
			_, err := Release(context.Background(), loadConfigText(t, heldConfig), job.Options{Input: in, Output: out})
			if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), fmt.Sprintf("row %d", row)) || !strings.Contains(err.Error(), column) {
				t.Fatalf("got %v, want bad input naming row %d and column %s", err, row, column)
			}
			if strings.Contains(err.Error(), "many") {
				t.Errorf("the error quotes the value: %v", err)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("files left: %v", entries)
			}
		})
	}
}
