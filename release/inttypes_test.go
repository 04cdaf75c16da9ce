package release

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"sanitizer/dprun"
	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/schema"
)

// intRecord is a table of a quasi-identifier zip (one value) and every integer column.
func intRecord(t testing.TB) arrow.Record {
	fields := []arrow.Field{{Name: "zip", Type: arrow.BinaryTypes.String}}
	for _, c := range testfiles.IntColumns {
		fields = append(fields, arrow.Field{Name: c.Name, Type: c.Type})
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	for r := range testfiles.IntColumns[0].Vals {
		b.Field(0).(*array.StringBuilder).Append("02139")
		for j, c := range testfiles.IntColumns {
			testfiles.AppendInt(t, b.Field(j+1), c.Vals[r])
		}
	}
	return b.NewRecord()
}

// intConfig is a release of the integer table: zip the quasi-identifier, the integer
// columns insensitive.
func intConfig(t *testing.T) *schema.Config {
	text := "columns:\n  zip: {role: quasi, hierarchy: {mask: {max: 5}}}\n"
	for _, c := range testfiles.IntColumns {
		text += "  " + c.Name + ": {role: insensitive}\n"
	}
	return loadConfigText(t, text+"privacy: {k: 2}\n")
}

// TestIntegerTypesKept: every integer width and signedness, at its extremes (2⁶⁴−1 and
// 2⁶³ in a uint64), is released from Parquet and Arrow inputs into Parquet, Arrow and
// CSV with its values and, where the format has types, its type exactly; the release
// verifies and Check passes.
func TestIntegerTypesKept(t *testing.T) {
	dir := t.TempDir()
	rec := intRecord(t)
	defer rec.Release()
	inputs := map[string]string{
		"parquet": filepath.Join(dir, "in.parquet"),
		"arrow":   writeArrowRecord(t, dir, rec),
	}
	testfiles.WriteArrowParquet(t, inputs["parquet"], rec, nil)
	cfg := intConfig(t)
	for inFmt, in := range inputs {
		for _, outFmt := range []string{"parquet", "arrow", "csv"} {
			t.Run(inFmt+"→"+outFmt, func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "r."+outFmt)
				if _, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
					t.Fatalf("release: %v", err)
				}
				if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
					t.Fatalf("check: %v", err)
				}
				checkIntRelease(t, out, outFmt)
			})
		}
	}
}

// writeArrowRecord writes rec as the Arrow IPC file in.arrow of dir with the library's
// writer.
func writeArrowRecord(t testing.TB, dir string, rec arrow.RecordBatch) string {
	t.Helper()
	path := filepath.Join(dir, "in.arrow")
	testfiles.WriteArrowRecord(t, path, false, rec)
	return path
}

// checkIntRelease reads a release of the integer table with the Arrow project's
// readers (CSV: as text) and compares every integer column's type and values.
func checkIntRelease(t *testing.T, out, format string) {
	t.Helper()
	if format == "csv" {
		header, recs := testfiles.ReadCSV(t, out)
		for j, c := range testfiles.IntColumns {
			if header[j+1] != c.Name {
				t.Fatalf("header %q", header)
			}
			for r, want := range c.Vals {
				if got := recs[r][j+1]; got != want {
					t.Errorf("%s record %d: %q, want %q", c.Name, r, got, want)
				}
			}
		}
		return
	}
	var tbl arrow.Table
	if format == "parquet" {
		tbl = testfiles.ReadWithPqarrow(t, out)
	} else {
		tbl, _ = readArrowIPC(t, out, false)
	}
	defer tbl.Release()
	for j, c := range testfiles.IntColumns {
		col := tbl.Column(j + 1)
		if col.Name() != c.Name || !arrow.TypeEqual(col.DataType(), c.Type) {
			t.Errorf("column %d: %s of type %s, want %s of type %s", j+1, col.Name(), col.DataType(), c.Name, c.Type)
			continue
		}
		r := 0
		for _, chunk := range col.Data().Chunks() {
			for i := range chunk.Len() {
				if got := testfiles.IntText(t, chunk, i); got != c.Vals[r] {
					t.Errorf("%s record %d: %s, want %s", c.Name, r, got, c.Vals[r])
				}
				r++
			}
		}
		if r != len(c.Vals) {
			t.Errorf("%s: %d records, want %d", c.Name, r, len(c.Vals))
		}
	}
}

// TestUnsignedQuasiIntervals: a uint64 quasi-identifier generalizes through an interval
// hierarchy while its values fit in 63 bits; a value of 2⁶³ or more, which interval
// hierarchies do not reach, is bad input naming the column and row, and nothing is
// written.
func TestUnsignedQuasiIntervals(t *testing.T) {
	cases := []struct {
		name string
		vals []uint64
		bad  int // 1-based row of the value out of reach, 0: none
	}{
		{"fits", []uint64{0, 7, 9223372036854775800, 9223372036854775807}, 0},
		{"2^63", []uint64{0, 7, 9223372036854775808, 9}, 3},
		{"2^64-1", []uint64{18446744073709551615, 7, 1, 9}, 1},
	}
	for _, tc := range cases {
		for _, format := range []string{"parquet", "arrow"} {
			t.Run(tc.name+"/"+format, func(t *testing.T) {
				dir := t.TempDir()
				sch := arrow.NewSchema([]arrow.Field{{Name: "u", Type: arrow.PrimitiveTypes.Uint64}, {Name: "n", Type: arrow.PrimitiveTypes.Uint64}}, nil)
				b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
				defer b.Release()
				b.Field(0).(*array.Uint64Builder).AppendValues(tc.vals, nil)
				b.Field(1).(*array.Uint64Builder).AppendValues(tc.vals, nil)
				rec := b.NewRecord()
				defer rec.Release()
				in := filepath.Join(dir, "in.parquet")
				if format == "parquet" {
					testfiles.WriteArrowParquet(t, in, rec, nil)
				} else {
					in = writeArrowRecord(t, dir, rec)
				}
				cfg := loadConfigText(t, "columns:\n  u: {role: quasi, type: integer, hierarchy: {intervals: [10, 100]}}\n  n: {role: insensitive}\nprivacy: {k: 2}\n")
				outDir := filepath.Join(dir, "out")
				if err := os.Mkdir(outDir, 0o755); err != nil {
					t.Fatal(err)
				}
				out := filepath.Join(outDir, "r.parquet")
				_, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
				if tc.bad == 0 {
					if err != nil {
						t.Fatalf("release: %v", err)
					}
					tbl := testfiles.ReadWithPqarrow(t, out)
					defer tbl.Release()
					if typ := tbl.Column(1).DataType(); !arrow.TypeEqual(typ, arrow.PrimitiveTypes.Uint64) {
						t.Errorf("insensitive column of type %s", typ)
					}
					return
				}
				if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), `"u"`) || !strings.Contains(err.Error(), fmt.Sprintf("row %d", tc.bad)) {
					t.Fatalf("got %v, want bad input naming column u and row %d", err, tc.bad)
				}
				if !strings.Contains(err.Error(), "interval hierarchies") {
					t.Errorf("the error does not say why: %v", err)
				}
				if strings.Contains(err.Error(), fmt.Sprint(tc.vals[tc.bad-1])) {
					t.Errorf("the error quotes the value: %v", err)
				}
				if entries, _ := os.ReadDir(outDir); len(entries) != 0 {
					t.Errorf("output folder holds %v", entries)
				}
			})
		}
	}
}

// TestDPUnsignedAggregate: a uint64 column at and above 2⁶³ is aggregated as the
// numbers it holds (clamped to the bounds), not refused as an invalid integer.
func TestDPUnsignedAggregate(t *testing.T) {
	dir := t.TempDir()
	sch := arrow.NewSchema([]arrow.Field{{Name: "g", Type: arrow.BinaryTypes.String}, {Name: "n", Type: arrow.PrimitiveTypes.Uint64}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues([]string{"a", "a", "a"}, nil)
	b.Field(1).(*array.Uint64Builder).AppendValues([]uint64{18446744073709551615, 9223372036854775808, 5}, nil)
	rec := b.NewRecord()
	defer rec.Release()
	in := writeArrowRecord(t, dir, rec)
	cfg := loadConfigText(t, `dataset: u
columns:
  g: {role: insensitive, domain: [a]}
  n: {role: insensitive, type: integer}
dp:
  epsilon-total: 20000
  outputs:
    - {name: s, aggregate: {group-by: [g], column: n, stats: [sum], bounds: [0, 9]}, epsilon: 20000}
`)
	out := filepath.Join(dir, "out")
	if _, err := dprun.Run(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
		t.Fatal(err)
	}
	header, recs := testfiles.ReadCSV(t, filepath.Join(out, "s.csv"))
	col := slices.Index(header, "sum")
	if col < 0 || len(recs) != 1 {
		t.Fatalf("aggregate %q %v", header, recs)
	}
	var sum float64
	if _, err := fmt.Sscan(recs[0][col], &sum); err != nil || math.Abs(sum-23) > 0.5 {
		t.Errorf("sum %q, want about 23 (9 + 9 + 5)", recs[0][col])
	}
}
