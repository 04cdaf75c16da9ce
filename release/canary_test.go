package release

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/schema"
)

// writeCanary writes the canary table as an input of the given kind into dir: a
// Parquet file in row groups of 3,000 records (each with its dictionaries, which hold
// every value), a folder of such files, or an Arrow IPC file or stream in record
// batches of 3,000 (sharing one dictionary per column). It returns the input's path.
func writeCanary(t *testing.T, ct *testfiles.Canary, dir, kind string) string {
	t.Helper()
	switch kind {
	case "parquet":
		path := filepath.Join(dir, "in.parquet")
		testfiles.WriteArrowParquet(t, path, ct.Rec, []parquet.WriterProperty{parquet.WithMaxRowGroupLength(3000)}, pqarrow.WithStoreSchema())
		return path
	case "parquet-parts":
		return ct.ParquetParts(t, dir)
	case "arrow", "arrows":
		path := filepath.Join(dir, "in."+kind)
		var batches []arrow.RecordBatch
		for lo := int64(0); lo < ct.Rec.NumRows(); lo += 3000 {
			batches = append(batches, ct.Rec.NewSlice(lo, min(lo+3000, ct.Rec.NumRows())))
		}
		testfiles.WriteArrowBatches(t, path, kind == "arrows", batches)
		for _, b := range batches {
			b.Release()
		}
		return path
	}
	t.Fatalf("no input kind %q", kind)
	return ""
}

// TestNoCanaryInRelease: a value that only suppressed records hold (or only records
// outside a research subset) is nowhere in a release — not in a record, not in a
// dictionary page or dictionary batch, not in the statistics — from a Parquet file, a
// folder of Parquet parts, an Arrow IPC file or stream with dictionary-encoded
// columns (a research subset's from the Parquet file), into each output format, as one
// file and as a folder of parts. The release verifies (every dictionary entry used)
// and Check passes it.
func TestNoCanaryInRelease(t *testing.T) {
	for _, subset := range []bool{false, true} {
		ct := testfiles.NewCanary(t, subset, false)
		defer ct.Release()
		cfg := loadConfigText(t, ct.Config)
		for i, inKind := range []string{"parquet", "parquet-parts", "arrow", "arrows"} {
			if subset && inKind != "parquet" {
				continue
			}
			in := writeCanary(t, ct, t.TempDir(), inKind)
			// Under -short (the race detector's run) each input kind is released in one
			// output format, each format once (the subset's in Arrow).
			short := i
			if subset {
				short = 1
			}
			for j, outFmt := range []string{"parquet", "arrow", "arrows", "csv"} {
				if testing.Short() && j != short {
					continue
				}
				for _, folder := range []bool{false, true} {
					name := fmt.Sprintf("subset=%v/%s→%s/folder=%v", subset, inKind, outFmt, folder)
					t.Run(name, func(t *testing.T) {
						cfg.Output.Format = schema.Format(outFmt)
						out := filepath.Join(t.TempDir(), "r."+outFmt)
						if folder {
							out = filepath.Join(t.TempDir(), "r") + string(filepath.Separator)
						}
						rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
						if err != nil {
							t.Fatalf("release: %v", err)
						}
						if rep.Suppressed < testfiles.CanaryRecords {
							t.Fatalf("%d records suppressed: the canary records are not all suppressed", rep.Suppressed)
						}
						testfiles.NoCanary(t, ct.Canaries, releaseFiles(t, out)...)
						if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
							t.Fatalf("check: %v", err)
						}
					})
				}
			}
		}
	}
}

// releaseFiles is the file at path, or the files in the folder at path (named with a
// trailing separator).
func releaseFiles(t *testing.T, path string) []string {
	t.Helper()
	if !strings.HasSuffix(path, string(filepath.Separator)) {
		return []string{path}
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		files = append(files, filepath.Join(path, e.Name()))
	}
	return files
}

// TestCheckRefusesUnusedDictionaryValue: a Parquet release whose records are those of a
// verified release but whose dictionary of a passed-through column also holds a value
// none of them holds (a suppressed record's, as a writer that copied the input's
// dictionary whole would leave it) fails Check as a violation (exit 3) naming the
// column, never the value.
func TestCheckRefusesUnusedDictionaryValue(t *testing.T) {
	ct := testfiles.NewCanary(t, false, false)
	defer ct.Release()
	cfg := loadConfigText(t, ct.Config)
	dir := t.TempDir()
	in := writeCanary(t, ct, dir, "parquet")
	out := filepath.Join(dir, "r.parquet")
	if _, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
		t.Fatal(err)
	}
	if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
		t.Fatalf("check of the release as written: %v", err)
	}
	secret := ct.Canaries[len(ct.Canaries)-1]
	testfiles.RewriteParquet(t, out, nil, func(tbl arrow.Table) arrow.Table {
		return withDictionaryValue(t, tbl, "ward", secret)
	})
	_, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out})
	if !errors.Is(err, fault.ErrUnattainable) || !strings.Contains(err.Error(), `"ward"`) || strings.Contains(err.Error(), secret) {
		t.Fatalf("check of a release whose dictionary holds a suppressed value: %v, want a violation naming the column, not the value", err)
	}
}

// withDictionaryValue is tbl with its string column name dictionary-encoded, the
// dictionary holding extra (first) beside the values the records hold.
func withDictionaryValue(t *testing.T, tbl arrow.Table, name, extra string) arrow.Table {
	t.Helper()
	j := tbl.Schema().FieldIndices(name)[0]
	cols := make([]arrow.Array, tbl.NumCols())
	for c := range cols {
		a, err := array.Concatenate(tbl.Column(c).Data().Chunks(), memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Release()
		cols[c] = a
	}
	init := array.NewStringBuilder(memory.DefaultAllocator)
	init.Append(extra)
	initial := init.NewArray()
	init.Release()
	defer initial.Release()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	b := array.NewDictionaryBuilderWithDict(memory.DefaultAllocator, dt, initial).(*array.BinaryDictionaryBuilder)
	defer b.Release()
	s := cols[j].(*array.String)
	for i := range s.Len() {
		if s.IsNull(i) {
			b.AppendNull()
			continue
		}
		if err := b.AppendString(s.Value(i)); err != nil {
			t.Fatal(err)
		}
	}
	cols[j] = b.NewDictionaryArray()
	defer cols[j].Release()
	fields := slices.Clone(tbl.Schema().Fields())
	fields[j].Type = dt
	sc := arrow.NewSchema(fields, nil)
	rec := array.NewRecordBatch(sc, cols, tbl.NumRows())
	defer rec.Release()
	return array.NewTableFromRecords(sc, []arrow.RecordBatch{rec})
}

// TestDictionaryLabelsOfOtherParts: a release's dictionary of a generalized
// quasi-identifier holds the labels of the whole release, shared by every row group
// and part; a part (or row group) whose records hold only some of them carries the
// others, which other parts' records hold. The release verifies and Check passes it,
// as a folder of Parquet, Arrow file and Arrow stream parts.
func TestDictionaryLabelsOfOtherParts(t *testing.T) {
	dir := t.TempDir()
	parts := filepath.Join(dir, "in")
	if err := os.Mkdir(parts, 0o700); err != nil {
		t.Fatal(err)
	}
	for p, zips := range []int{20, 5} { // the second part holds 5 of the 20 zip codes
		var b strings.Builder
		b.WriteString("zip,v\n")
		for i := range 400 {
			fmt.Fprintf(&b, "021%02d,%d\n", i%zips, i%7)
		}
		if err := os.WriteFile(filepath.Join(parts, fmt.Sprintf("part-%d.csv", p)), []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg := loadConfigText(t, "columns:\n  zip: {role: quasi, hierarchy: {mask: {max: 5}}}\n  v: {role: insensitive}\nprivacy: {k: 2}\n")
	for _, format := range []string{"parquet", "arrow", "arrows"} {
		t.Run(format, func(t *testing.T) {
			cfg.Output.Format = schema.Format(format)
			out := filepath.Join(t.TempDir(), "r") + string(filepath.Separator)
			if _, err := Release(context.Background(), cfg, job.Options{Input: parts, Output: out}); err != nil {
				t.Fatalf("release: %v", err)
			}
			if _, err := Check(context.Background(), cfg, job.Options{Input: parts, Output: out}); err != nil {
				t.Fatalf("check: %v", err)
			}
		})
	}
}
