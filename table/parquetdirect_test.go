package table

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"sanitizer/internal/testfiles"
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
