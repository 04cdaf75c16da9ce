package release

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/table"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestSelectRows: the rows a batch keeps, as one array: all of them, none, one run,
// several runs, the first and last rows, nulls kept where they were.
func TestSelectRows(t *testing.T) {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	for i := range 10 {
		if i == 4 {
			b.AppendNull()
			continue
		}
		b.Append(int64(i * 10))
	}
	a := b.NewInt64Array()
	defer a.Release()
	for _, tc := range []struct {
		rows []int
		want []int // row of a per value
	}{
		{nil, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{[]int{}, []int{}},
		{[]int{3, 4, 5}, []int{3, 4, 5}},
		{[]int{0, 1, 4, 8, 9}, []int{0, 1, 4, 8, 9}},
		{[]int{9}, []int{9}},
		{[]int{0, 2, 4, 6, 8}, []int{0, 2, 4, 6, 8}},
	} {
		got, err := selectRows(a, tc.rows)
		if err != nil {
			t.Fatal(err)
		}
		g := got.(*array.Int64)
		var rows []int
		for i := range g.Len() {
			switch {
			case g.IsNull(i):
				rows = append(rows, 4)
			default:
				rows = append(rows, int(g.Value(i)/10))
			}
		}
		if g.Len() != len(tc.want) || (len(rows) > 0 && !slices.Equal(rows, tc.want)) {
			t.Errorf("rows %v: got rows %v, want %v", tc.rows, rows, tc.want)
		}
		got.Release()
	}
}

// TestSensitivePassedThrough: the sensitive columns of an Arrow input released as Arrow
// or Parquet keep their type and every value, over batches whose records hold no null
// (passed as arrays) and a batch whose one null reads as the null-as value (that
// batch's column goes as text); the types' extremes included.
func TestSensitivePassedThrough(t *testing.T) {
	paris := &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "Europe/Paris"}
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "zip", Type: arrow.BinaryTypes.String},
		{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32},
		{Name: "big", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "seen", Type: paris},
		{Name: "note", Type: arrow.BinaryTypes.LargeString},
	}, nil)
	const n, nullAt = 2*table.BatchRows + 100, table.BatchRows + 7 // the null in the second batch
	in := testfiles.WriteLibraryArrow(t, memory.DefaultAllocator, false, sch, func(b *array.RecordBuilder) {
		for i := range n {
			b.Field(0).(*array.StringBuilder).Append("02139")
			if i == nullAt {
				b.Field(1).AppendNull()
			} else {
				b.Field(1).(*array.Float64Builder).Append([]float64{math.Inf(-1), -0.0, 1e-300, 0.1 * float64(i)}[min(i, 3)])
			}
			b.Field(2).(*array.Float32Builder).Append([]float32{math.MaxFloat32, float32(math.NaN()), float32(i) / 3}[min(i, 2)])
			b.Field(3).(*array.Uint64Builder).Append(math.MaxUint64 - uint64(i))
			b.Field(4).(*array.TimestampBuilder).Append(arrow.Timestamp(int64(i)*86_400_007 - 1))
			b.Field(5).(*array.LargeStringBuilder).Append(fmt.Sprintf("n%d", i%11))
		}
	})
	want, _ := readArrowIPC(t, in, false)
	defer want.Release()
	cfg := loadConfigText(t, "columns:\n  zip: {role: quasi, hierarchy: {mask: {max: 5}}}\n"+
		"  score: {role: sensitive, null-as: \"0.5\"}\n  f32: {role: sensitive}\n  big: {role: sensitive}\n  seen: {role: sensitive}\n  note: {role: sensitive}\n"+
		"privacy: {k: 2}\n")
	for _, format := range []string{"arrow", "parquet"} {
		out := filepath.Join(t.TempDir(), "r."+format)
		if _, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
			t.Fatal(err)
		}
		var got arrow.Table
		if format == "arrow" {
			got, _ = readArrowIPC(t, out, false)
		} else {
			got = testfiles.ReadWithPqarrow(t, out)
		}
		if got.NumRows() != n {
			t.Fatalf("%s: %d records released of %d", format, got.NumRows(), n)
		}
		for c := 1; c < 6; c++ {
			name := sch.Field(c).Name
			g, w := got.Column(c), want.Column(c)
			if format == "arrow" && !arrow.TypeEqual(g.DataType(), w.DataType()) {
				t.Fatalf("%s: column %q released as %s, read as %s", format, name, g.DataType(), w.DataType())
			}
			gt, wt := columnTexts(g), columnTexts(w)
			for i := range n {
				wv := wt[i]
				if i == nullAt && c == 1 {
					wv = "0.5"
				}
				if gt[i] != wv {
					t.Fatalf("%s: column %q record %d released as %q, want %q", format, name, i+1, gt[i], wv)
				}
			}
		}
		got.Release()
	}
}

// columnTexts is every value of a column as table.ArrayText gives it ("\x00": null).
func columnTexts(c *arrow.Column) []string {
	var out []string
	for _, chunk := range c.Data().Chunks() {
		text := table.ArrayText(chunk)
		for i := range chunk.Len() {
			v, null := text(i)
			if null {
				v = "\x00"
			}
			out = append(out, v)
		}
	}
	return out
}

// TestSensitiveListedNotPassed: a sensitive column whose values its hierarchy file must
// list is read as text by pass 2, which checks each kept value: an unlisted one deep
// in an Arrow input released as Parquet is bad input naming its row and column, and
// nothing is written.
func TestSensitiveListedNotPassed(t *testing.T) {
	dir := t.TempDir()
	hier := filepath.Join(dir, "diag.csv")
	if err := os.WriteFile(hier, []byte("flu;*\ncold;*\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "zip", Type: arrow.BinaryTypes.String},
		{Name: "diag", Type: arrow.BinaryTypes.String},
	}, nil)
	const n, bad = 2 * table.BatchRows, table.BatchRows + 104
	in := testfiles.WriteLibraryArrow(t, memory.DefaultAllocator, false, sch, func(b *array.RecordBuilder) {
		for i := range n {
			b.Field(0).(*array.StringBuilder).Append("02139")
			v := []string{"flu", "cold"}[i%2]
			if i == bad {
				v = "plague"
			}
			b.Field(1).(*array.StringBuilder).Append(v)
		}
	})
	cfg := loadConfigText(t, "columns:\n  zip: {role: quasi, hierarchy: {mask: {max: 5}}}\n  diag: {role: sensitive, hierarchy: {file: \""+hier+"\"}}\nprivacy: {k: 2}\n")
	out := filepath.Join(dir, "r.parquet")
	_, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
	if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), fmt.Sprintf("row %d", bad+1)) || !strings.Contains(err.Error(), `"diag"`) || !strings.Contains(err.Error(), "not listed") {
		t.Fatalf("an unlisted sensitive value: %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatal("a release was written")
	}
}

// TestSelectRowsDictionary: the rows a batch keeps of a dictionary-encoded column (as a
// Parquet release passes it through) are its values at those rows, over several runs.
func TestSelectRowsDictionary(t *testing.T) {
	db := array.NewDictionaryBuilder(memory.DefaultAllocator, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}).(*array.BinaryDictionaryBuilder)
	defer db.Release()
	words := []string{"flu", "cold", "flu", "asthma", "cold", "flu", "gout", "flu"}
	for i, w := range words {
		if i == 5 {
			db.AppendNull()
			continue
		}
		if err := db.AppendString(w); err != nil {
			t.Fatal(err)
		}
	}
	a := db.NewArray()
	defer a.Release()
	rows := []int{0, 1, 3, 5, 6}
	got, err := selectRows(a, rows)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	text := table.ArrayText(got)
	for k, r := range rows {
		v, null := text(k)
		if null != (r == 5) || (!null && v != words[r]) {
			t.Fatalf("row %d kept as %q (null %v), want %q", r, v, null, words[r])
		}
	}
}
