package table

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// streamBoth reads cols of src once as text and, after a rewind, once with the columns
// arrays selects as arrays; it returns both readings, the arrays turned into text by
// the readers' own conversion, and checks the batches' shapes agree.
func streamBoth(t *testing.T, src FormSource, cols []int, arrays []bool) (text, viaArrays [][]string) {
	t.Helper()
	var err error
	if text, err = streamAll(src, cols); err != nil {
		t.Fatal(err)
	}
	if err := src.Rewind(); err != nil {
		t.Fatal(err)
	}
	out := make(chan *Batch, 1)
	errc := make(chan error, 1)
	go func() { errc <- src.StreamAs(context.Background(), cols, formsOf(arrays), out) }()
	first := 0
	for b := range out {
		if b.First != first {
			t.Errorf("a batch starts at %d, want %d", b.First, first)
		}
		for i := range b.N {
			rec := slices.Clone(b.Record(i))
			for j := range cols {
				if !arrays[j] {
					if b.Null(i, j) {
						rec[j] = "\x00"
					}
					continue
				}
				if b.Arrays == nil || b.Arrays[j] == nil || b.Arrays[j].Len() != b.N {
					t.Fatalf("batch at %d: column %d has no array of %d values", b.First, j, b.N)
				}
				if rec[j] != "" {
					t.Fatalf("batch at %d: column %d has text beside its array", b.First, j)
				}
				v, null := arrowText(b.Arrays[j], nil)(i)
				if null {
					v = "\x00"
				}
				rec[j] = v
			}
			viaArrays = append(viaArrays, rec)
		}
		first += b.N
		b.Release()
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	return text, viaArrays
}

// arrowNulls is recs with writeParquet's null ("\x00") as writeArrowTable's.
func arrowNulls(recs [][]string) [][]string {
	out := make([][]string, len(recs))
	for i, r := range recs {
		out[i] = slices.Clone(r)
		for j, v := range r {
			if v == "\x00" {
				out[i][j] = arrowNull
			}
		}
	}
	return out
}

// TestStreamArrays: Arrow IPC (record batches that batches span) and Parquet sources
// give the columns asked for as arrays holding exactly what they give as text, the
// other columns as text, for every type the sinks write.
func TestStreamArrays(t *testing.T) {
	n := 3*BatchRows/2 + 7
	recs := make([][]string, n)
	for i := range recs {
		recs[i] = slices.Clone(typedRecs[i%len(typedRecs)])
		recs[i][0] = fmt.Sprint("s", i)
	}
	cols := make([]int, len(typedCols))
	for i := range cols {
		cols[i] = i
	}
	for _, tc := range []struct {
		name string
		open func(t *testing.T) FormSource
	}{
		{"arrow file, record batches of 1000", func(t *testing.T) FormSource {
			path := writeArrowTable(t, memory.DefaultAllocator, false, typedCols, nil, arrowNulls(recs), 1000)
			src, err := openArrow(path, false)
			if err != nil {
				t.Fatal(err)
			}
			return src
		}},
		{"arrow stream, record batches of 4095", func(t *testing.T) FormSource {
			path := writeArrowTable(t, memory.DefaultAllocator, true, typedCols, nil, arrowNulls(recs), BatchRows-1)
			src, err := openArrow(path, true)
			if err != nil {
				t.Fatal(err)
			}
			return src
		}},
		{"parquet", func(t *testing.T) FormSource {
			path := filepath.Join(t.TempDir(), "t.parquet")
			writeParquet(t, path, typedCols, recs, nil)
			src, err := openParquet(path)
			if err != nil {
				t.Fatal(err)
			}
			return src
		}},
	} {
		for _, arrays := range [][]bool{
			{true, true, true, true, true, true, true},
			{false, true, false, true, false, true, false},
		} {
			t.Run(fmt.Sprint(tc.name, arrays), func(t *testing.T) {
				src := tc.open(t)
				defer src.Close()
				text, viaArrays := streamBoth(t, src, cols, arrays)
				if len(viaArrays) != n || len(text) != n {
					t.Fatalf("%d and %d records, want %d", len(text), len(viaArrays), n)
				}
				for i := range text {
					for j := range text[i] {
						want := text[i][j]
						if want == "" && recs[i][j] == "\x00" {
							want = "\x00"
						}
						if viaArrays[i][j] != want && !(want == "" && viaArrays[i][j] == "\x00") {
							t.Fatalf("record %d column %d: %q through an array, %q as text", i, j, viaArrays[i][j], text[i][j])
						}
					}
				}
				if err := src.Unchanged(); err != nil {
					t.Error(err)
				}
			})
		}
	}
}

// TestArraysOfTypes: an array source's arrays have the types its columns report, the
// types a release writes passed-through columns as.
func TestArraysOfTypes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.parquet")
	writeParquet(t, path, typedCols, typedRecs, nil)
	src, err := openParquet(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	out := make(chan *Batch, 1)
	errc := make(chan error, 1)
	all := make([]bool, len(typedCols))
	for i := range all {
		all[i] = true
	}
	go func() { errc <- src.StreamAs(context.Background(), []int{0, 1, 2, 3, 4, 5, 6}, formsOf(all), out) }()
	for b := range out {
		for j, a := range b.Arrays {
			if want := src.Columns()[j].Arrow; !arrow.TypeEqual(a.DataType(), want) {
				t.Errorf("column %d: an array of %s, the column reports %s", j, a.DataType(), want)
			}
		}
		b.Release()
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// formsOf is AsArray where arrays is set, AsText elsewhere.
func formsOf(arrays []bool) []Form {
	as := make([]Form, len(arrays))
	for j, a := range arrays {
		if a {
			as[j] = AsArray
		}
	}
	return as
}
