package table

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
)

// TestParquetDirectMatchesArrow: reading column chunks directly gives, field for field,
// what reading through pqarrow gives, for every type read directly, required and
// nullable, in files of several row groups that do not end on a batch boundary, with
// dictionary-encoded and plain pages, compressed and not.
func TestParquetDirectMatchesArrow(t *testing.T) {
	var fields []arrow.Field
	for _, nullable := range []bool{false, true} {
		for _, f := range []arrow.Field{
			{Name: "s", Type: arrow.BinaryTypes.String},
			{Name: "i32", Type: arrow.PrimitiveTypes.Int32},
			{Name: "i64", Type: arrow.PrimitiveTypes.Int64},
			{Name: "d", Type: arrow.FixedWidthTypes.Date32},
			{Name: "f32", Type: arrow.PrimitiveTypes.Float32},
			{Name: "f64", Type: arrow.PrimitiveTypes.Float64},
			{Name: "b", Type: arrow.FixedWidthTypes.Boolean},
		} {
			f.Nullable = nullable
			if nullable {
				f.Name += "_null"
			}
			fields = append(fields, f)
		}
	}
	sch := arrow.NewSchema(fields, nil)
	rng := rand.New(rand.NewPCG(8, 9))
	n := 3*BatchRows + 1234
	words := []string{"", "F", "M", "ward 7", "Zürich", "[2019-01-03,2019-11-29]", "*"}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	for i := range n {
		for j, f := range fields {
			fb := b.Field(j)
			if f.Nullable && rng.IntN(5) == 0 {
				fb.AppendNull()
				continue
			}
			switch fb := fb.(type) {
			case *array.StringBuilder:
				if rng.IntN(3) == 0 {
					fb.Append(fmt.Sprintf("v%d", i)) // mostly distinct: the cache turns off
				} else {
					fb.Append(words[rng.IntN(len(words))])
				}
			case *array.Int32Builder:
				fb.Append(int32(rng.Uint32()) >> rng.IntN(32))
			case *array.Int64Builder:
				fb.Append(int64(rng.Uint64()) >> rng.IntN(64))
			case *array.Date32Builder:
				fb.Append(arrow.Date32(rng.IntN(40000) - 20000))
			case *array.Float32Builder:
				fb.Append(float32(rng.NormFloat64()) * 1e3)
			case *array.Float64Builder:
				fb.Append(rng.NormFloat64() * 1e-3)
			case *array.BooleanBuilder:
				fb.Append(rng.IntN(2) == 0)
			}
		}
	}
	rec := b.NewRecord()
	defer rec.Release()
	cols := make([]int, len(fields))
	for j := range cols {
		cols[j] = j
	}
	for _, tc := range []struct {
		name  string
		props []parquet.WriterProperty
	}{
		{"dictionary, snappy", []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Snappy)}},
		{"plain, uncompressed", []parquet.WriterProperty{parquet.WithDictionaryDefault(false)}},
		{"plain, snappy", []parquet.WriterProperty{parquet.WithDictionaryDefault(false), parquet.WithCompression(compress.Codecs.Snappy)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "direct.parquet")
			testfiles.WriteArrowParquet(t, path, rec, append(tc.props, parquet.WithMaxRowGroupLength(2500), parquet.WithDataPageSize(4096)))
			read := func(viaArrow bool) [][]cell {
				src, err := openParquet(path)
				if err != nil {
					t.Fatal(err)
				}
				defer src.Close()
				if !viaArrow && src.directKinds(cols) == nil {
					t.Fatal("the columns are not read directly")
				}
				src.viaArrow = viaArrow
				recs, err := readAll(t, src, cols)
				if err != nil {
					t.Fatal(err)
				}
				return recs
			}
			direct, arrow := read(false), read(true)
			if len(direct) != n || len(arrow) != n {
				t.Fatalf("%d records directly, %d through pqarrow, want %d", len(direct), len(arrow), n)
			}
			nulls := 0
			for r := range direct {
				for j := range fields {
					if direct[r][j] != arrow[r][j] {
						t.Fatalf("record %d, column %s: %+v directly, %+v through pqarrow", r, fields[j].Name, direct[r][j], arrow[r][j])
					}
					if direct[r][j].null {
						nulls++
					}
				}
			}
			if nulls == 0 {
				t.Fatal("no nulls read: the test would prove nothing about them")
			}
			// Through pqarrow, the row groups are decoded on two goroutines and still
			// come in file order; the string columns, asked for as keys, come as
			// dictionary indexes when every chunk has a dictionary.
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
			src, err := openParquet(path)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			if g := src.pf.NumRowGroups(); g < 3 {
				t.Fatalf("%d row groups: the test would not decode them in parallel", g)
			}
			as := make([]Form, len(cols))
			for j := range as {
				as[j] = AsKey
			}
			keyed, err := readAllAs(t, src, cols, as)
			if err != nil {
				t.Fatal(err)
			}
			if len(keyed) != n {
				t.Fatalf("%d records as keys, want %d", len(keyed), n)
			}
			for r := range keyed {
				for j := range fields {
					if keyed[r][j] != arrow[r][j] {
						t.Fatalf("record %d, column %s: %+v as keys, %+v as text", r, fields[j].Name, keyed[r][j], arrow[r][j])
					}
				}
			}
		})
	}
}

// TestParquetBadRowGroup: a file of several row groups, one of them corrupt, decoded
// on two goroutines, ends in bad input naming the file, as text and as dictionary
// indexes, whichever goroutine meets the corrupt group; the stream neither hangs nor
// panics.
func TestParquetBadRowGroup(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	sch := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}, {Name: "i", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	n := 6 * 2000
	for i := range n {
		b.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("w%d", i%37))
		b.Field(1).(*array.Int64Builder).Append(int64(i))
	}
	rec := b.NewRecord()
	defer rec.Release()
	dir := t.TempDir()
	good := filepath.Join(dir, "groups.parquet")
	testfiles.WriteArrowParquet(t, good, rec, []parquet.WriterProperty{parquet.WithMaxRowGroupLength(2000), parquet.WithCompression(compress.Codecs.Snappy)})
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	src, err := openParquet(good)
	if err != nil {
		t.Fatal(err)
	}
	groups := src.pf.NumRowGroups()
	var offsets []int64 // where each group's columns' pages begin
	for rg := range groups {
		for c := range 2 {
			cc, err := src.pf.MetaData().RowGroup(rg).ColumnChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			offsets = append(offsets, cc.DataPageOffset())
		}
	}
	src.Close()
	if groups != 6 {
		t.Fatalf("%d row groups, want 6", groups)
	}
	for _, rg := range []int{0, 3, 5} {
		t.Run(fmt.Sprintf("group %d", rg), func(t *testing.T) {
			bad := slices.Clone(data)
			for i := offsets[2*rg] + 4; i < offsets[2*rg]+40; i++ {
				bad[i] ^= 0x5a
			}
			path := filepath.Join(t.TempDir(), "bad.parquet")
			if err := os.WriteFile(path, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, as := range [][]Form{nil, {AsKey, AsText}} {
				src, err := openParquet(path)
				if err != nil {
					t.Fatal(err)
				}
				_, err = readAllAs(t, src, []int{0, 1}, as)
				src.Close()
				if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), path) {
					t.Fatalf("forms %v: error %v, want bad input naming %s", as, err, path)
				}
			}
		})
	}
}
