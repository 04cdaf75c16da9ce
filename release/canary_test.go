package release

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
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

	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/schema"
)

// canaryTable is an input whose records fall in twenty zip codes of 500 records each,
// and a few records of zip codes of their own, which a release at k=5 suppresses (the
// search keeps the zip codes whole: 0.1% suppressed). Every value those few records
// hold in every other column is a canary, a random string no other record holds:
// dictionary-encoded as pandas categoricals and pyarrow write them (int8, int16 and int32
// indexes, nulls), and plain. A release may hold no
// canary anywhere in its bytes.
type canaryTable struct {
	rec      arrow.RecordBatch
	canaries []string
	config   string
}

// canaryRecords is how many records the canary table's suppressed zip codes hold.
const canaryRecords = 7

func newCanaryTable(t *testing.T, subset bool) canaryTable {
	t.Helper()
	dict := func(index arrow.DataType, value arrow.DataType) arrow.DataType {
		return &arrow.DictionaryType{IndexType: index, ValueType: value}
	}
	fields := []arrow.Field{
		{Name: "zip", Type: dict(arrow.PrimitiveTypes.Int8, arrow.BinaryTypes.String)},
		{Name: "diag", Type: dict(arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String)},
		{Name: "ward", Type: dict(arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String), Nullable: true},
		{Name: "insurer", Type: dict(arrow.PrimitiveTypes.Int16, arrow.BinaryTypes.String), Nullable: true},
		{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "in_study", Type: arrow.BinaryTypes.String},
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	var ct canaryTable
	canary := func() string {
		var r [12]byte
		if _, err := rand.Read(r[:]); err != nil {
			t.Fatal(err)
		}
		c := "CANARY" + hex.EncodeToString(r[:])
		ct.canaries = append(ct.canaries, c)
		return c
	}
	appendDict := func(j int, v string) {
		if err := b.Field(j).(*array.BinaryDictionaryBuilder).AppendString(v); err != nil {
			t.Fatal(err)
		}
	}
	const n = 10000
	for i := range n + canaryRecords {
		// The canary records lie among the others, in different batches.
		zip, diag, ward, insurer, note := fmt.Sprintf("021%02d", i%20), []string{"flu", "cold", "asthma"}[i%3], fmt.Sprintf("W%d", i%4), "public", fmt.Sprintf("n%d", i%9)
		study := "yes"
		if subset && i%5 == 0 {
			// Outside the subset: never released, whatever the classes.
			study, ward = "no", canary()
		}
		if i%1429 == 3 && i >= n/2 || i >= n {
			zip, diag, ward, insurer, note = fmt.Sprintf("9%04d", i%10000), canary(), canary(), canary(), canary()
			study = "yes"
		}
		appendDict(0, zip)
		appendDict(1, diag)
		if i%11 == 0 && !strings.HasPrefix(ward, "CANARY") {
			b.Field(2).AppendNull()
		} else {
			appendDict(2, ward)
		}
		appendDict(3, insurer)
		b.Field(4).(*array.StringBuilder).Append(note)
		b.Field(5).(*array.StringBuilder).Append(study)
	}
	ct.rec = b.NewRecordBatch()
	ct.config = "columns:\n  zip: {role: quasi, hierarchy: {mask: {max: 5}}}\n  diag: {role: sensitive}\n" +
		"  ward: {role: insensitive}\n  insurer: {role: insensitive}\n  note: {role: insensitive}\n"
	if subset {
		ct.config += "  in_study: {role: identifier}\nprivacy: {k: 5, suppression: 0.02, subset: {column: in_study}, k-map: {k: 5}}\n"
	} else {
		ct.config += "  in_study: {role: insensitive}\nprivacy: {k: 5, suppression: 0.02}\n"
	}
	return ct
}

// write writes the table as an input of the given kind into dir: a Parquet file in row
// groups of 3,000 records (each with its dictionaries, which hold every value), a
// folder of such files, or an Arrow IPC file or stream in record batches of 3,000
// (sharing one dictionary per column). It returns the input's path.
func (ct canaryTable) write(t *testing.T, dir, kind string) string {
	t.Helper()
	switch kind {
	case "parquet":
		path := filepath.Join(dir, "in.parquet")
		testfiles.WriteArrowParquet(t, path, ct.rec, []parquet.WriterProperty{parquet.WithMaxRowGroupLength(3000)}, pqarrow.WithStoreSchema())
		return path
	case "parquet-parts":
		parts := filepath.Join(dir, "parts")
		if err := os.Mkdir(parts, 0o700); err != nil {
			t.Fatal(err)
		}
		rows := ct.rec.NumRows()
		for i, lo := 0, int64(0); lo < rows; i, lo = i+1, lo+4000 {
			part := ct.rec.NewSlice(lo, min(lo+4000, rows))
			testfiles.WriteArrowParquet(t, filepath.Join(parts, fmt.Sprintf("part-%d.parquet", i)), part, []parquet.WriterProperty{parquet.WithMaxRowGroupLength(3000)}, pqarrow.WithStoreSchema())
			part.Release()
		}
		return parts
	case "arrow", "arrows":
		path := filepath.Join(dir, "in."+kind)
		var batches []arrow.RecordBatch
		for lo := int64(0); lo < ct.rec.NumRows(); lo += 3000 {
			batches = append(batches, ct.rec.NewSlice(lo, min(lo+3000, ct.rec.NumRows())))
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
// columns, into each output format, as one file and as a folder of parts. The release
// verifies (every dictionary entry used) and Check passes it.
func TestNoCanaryInRelease(t *testing.T) {
	for _, subset := range []bool{false, true} {
		ct := newCanaryTable(t, subset)
		defer ct.rec.Release()
		cfg := loadConfigText(t, ct.config)
		for _, inKind := range []string{"parquet", "parquet-parts", "arrow", "arrows"} {
			in := ct.write(t, t.TempDir(), inKind)
			if subset && inKind != "parquet" {
				continue
			}
			for _, outFmt := range []string{"parquet", "arrow", "arrows", "csv"} {
				for _, folder := range []bool{false, true} {
					name := fmt.Sprintf("subset=%v/%s→%s/folder=%v", subset, inKind, outFmt, folder)
					t.Run(name, func(t *testing.T) {
						cfg.Output.Format = outFmt
						out := filepath.Join(t.TempDir(), "r."+outFmt)
						if folder {
							out = filepath.Join(t.TempDir(), "r") + string(filepath.Separator)
						}
						rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
						if err != nil {
							t.Fatalf("release: %v", err)
						}
						if rep.Suppressed < canaryRecords {
							t.Fatalf("%d records suppressed: the canary records are not all suppressed", rep.Suppressed)
						}
						noCanary(t, out, ct.canaries)
						if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
							t.Fatalf("check: %v", err)
						}
					})
				}
			}
		}
	}
}

// noCanary fails when a file at path (or in the folder at path) holds one of the
// canaries in its bytes, as they are or once a Parquet file's pages are decoded.
func noCanary(t *testing.T, path string, canaries []string) {
	t.Helper()
	files := []string{path}
	if strings.HasSuffix(path, string(filepath.Separator)) {
		entries, err := os.ReadDir(path)
		if err != nil {
			t.Fatal(err)
		}
		files = files[:0]
		for _, e := range entries {
			files = append(files, filepath.Join(path, e.Name()))
		}
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, ".parquet") {
			data = append(data, testfiles.ParquetPageBytes(t, f)...)
		}
		for _, c := range canaries {
			if bytes.Contains(data, []byte(c)) {
				t.Fatalf("%s holds %s, a value only a suppressed record (or a record outside the subset) holds", f, c)
			}
		}
	}
}

// TestCheckRefusesUnusedDictionaryValue: a Parquet release whose records are those of a
// verified release but whose dictionary of a passed-through column also holds a value
// none of them holds (a suppressed record's, as a writer that copied the input's
// dictionary whole would leave it) fails Check as a violation (exit 3) naming the
// column, never the value.
func TestCheckRefusesUnusedDictionaryValue(t *testing.T) {
	ct := newCanaryTable(t, false)
	defer ct.rec.Release()
	cfg := loadConfigText(t, ct.config)
	dir := t.TempDir()
	in := ct.write(t, dir, "parquet")
	out := filepath.Join(dir, "r.parquet")
	if _, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
		t.Fatal(err)
	}
	if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
		t.Fatalf("check of the release as written: %v", err)
	}
	secret := ct.canaries[len(ct.canaries)-1]
	testfiles.RewriteParquet(t, out, nil, func(tbl arrow.Table) arrow.Table {
		return withDictionaryValue(t, tbl, "ward", secret)
	})
	_, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out})
	if !errors.Is(err, schema.ErrUnattainable) || !strings.Contains(err.Error(), `"ward"`) || strings.Contains(err.Error(), secret) {
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
			cfg.Output.Format = format
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
