package stage

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/release"
	"sanitizer/schema"
)

// canaryRecords is how many records of the canary input the release suppresses.
const canaryRecords = 7

// canaryParts writes into dir a folder of Parquet parts of 4,000 records, in row
// groups of 3,000 (each with its dictionaries, which hold all of the group's values),
// whose records fall in twenty zip codes of 500 records each and a few (canaryRecords)
// of zip codes of their own, which a release at k=5 suppresses. Every value those few
// records hold in every other column is a canary, a random string no other record
// holds: dictionary-encoded as pandas categoricals and pyarrow write them (int8, int16
// and int32 indexes, nulls), and plain. With subset, a fifth of the records lie
// outside a research subset, a canary in their ward. With byZip the records come in
// order of zip code, so that a part holds eight of the twenty (else every part holds
// every zip code). It returns the folder, the canaries and the configuration's columns
// and privacy sections.
func canaryParts(t *testing.T, dir string, subset, byZip bool) (parts string, canaries []string, config string) {
	t.Helper()
	dict := func(index arrow.DataType) arrow.DataType {
		return &arrow.DictionaryType{IndexType: index, ValueType: arrow.BinaryTypes.String}
	}
	fields := []arrow.Field{
		{Name: "zip", Type: dict(arrow.PrimitiveTypes.Int8)},
		{Name: "diag", Type: dict(arrow.PrimitiveTypes.Int32)},
		{Name: "ward", Type: dict(arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "insurer", Type: dict(arrow.PrimitiveTypes.Int16), Nullable: true},
		{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "in_study", Type: arrow.BinaryTypes.String},
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	canary := func() string {
		var r [12]byte
		rand.Read(r[:])
		c := "CANARY" + hex.EncodeToString(r[:])
		canaries = append(canaries, c)
		return c
	}
	appendDict := func(j int, v string) {
		if err := b.Field(j).(*array.BinaryDictionaryBuilder).AppendString(v); err != nil {
			t.Fatal(err)
		}
	}
	const n = 10000
	for i := range n + canaryRecords {
		zip, diag, ward, insurer, note := fmt.Sprintf("021%02d", i%20), []string{"flu", "cold", "asthma"}[i%3], fmt.Sprintf("W%d", i%4), "public", fmt.Sprintf("n%d", i%9)
		if byZip {
			zip = fmt.Sprintf("021%02d", i/500)
		}
		study := "yes"
		if subset && i%5 == 0 { // outside the subset: never released
			study, ward = "no", canary()
		}
		if i%1429 == 3 && i >= n/2 || i >= n { // among the others, in different parts
			zip, diag, ward, insurer, note, study = fmt.Sprintf("9%04d", i%10000), canary(), canary(), canary(), canary(), "yes"
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
	rec := b.NewRecordBatch()
	defer rec.Release()
	parts = filepath.Join(dir, "parts")
	if err := os.Mkdir(parts, 0o700); err != nil {
		t.Fatal(err)
	}
	for i, lo := 0, int64(0); lo < rec.NumRows(); i, lo = i+1, lo+4000 {
		part := rec.NewSlice(lo, min(lo+4000, rec.NumRows()))
		testfiles.WriteArrowParquet(t, filepath.Join(parts, fmt.Sprintf("part-%d.parquet", i)), part, []parquet.WriterProperty{parquet.WithMaxRowGroupLength(3000)}, pqarrow.WithStoreSchema())
		part.Release()
	}
	config = "columns:\n  zip: {role: quasi, hierarchy: {mask: {max: 5}}}\n  diag: {role: sensitive}\n" +
		"  ward: {role: insensitive}\n  insurer: {role: insensitive}\n  note: {role: insensitive}\n"
	if subset {
		config += "  in_study: {role: identifier}\nprivacy: {k: 5, suppression: 0.02, subset: {column: in_study}, k-map: {k: 5}}\n"
	} else {
		config += "  in_study: {role: insensitive}\nprivacy: {k: 5, suppression: 0.02}\n"
	}
	return parts, canaries, config
}

// TestNoCanaryInBeamRelease: a value that only suppressed records hold (or only
// records outside a research subset) is nowhere in a release on Beam of
// dictionary-encoded Parquet parts — not in a record, a dictionary page or batch, nor
// the statistics of any part, nor in its report — into Parquet, Arrow IPC (file and
// stream) and CSV; and the CLI's check passes the release: every value of a part's
// dictionary is held by a released record, also when a part's records hold only some of
// the released labels (byZip: a part's dictionary is the release's).
func TestNoCanaryInBeamRelease(t *testing.T) {
	for _, c := range []struct{ subset, byZip bool }{{false, false}, {true, false}, {false, true}} {
		parts, canaries, columns := canaryParts(t, t.TempDir(), c.subset, c.byZip)
		formats := []string{"parquet", "arrow", "arrows", "csv"}
		if c.subset {
			formats = []string{"parquet"}
		}
		for _, format := range formats {
			t.Run(fmt.Sprintf("subset=%v/byZip=%v/%s", c.subset, c.byZip, format), func(t *testing.T) {
				dir := t.TempDir()
				cfgPath := filepath.Join(dir, "c.yaml")
				if err := os.WriteFile(cfgPath, []byte("output: {format: "+format+"}\n"+columns), 0o600); err != nil {
					t.Fatal(err)
				}
				j, err := NewJob(cfgPath)
				if err != nil {
					t.Fatal(err)
				}
				out, rep := filepath.Join(dir, "release"), filepath.Join(dir, "report.json")
				r, err := Release(context.Background(), j, job.Options{Input: parts, Output: out, Report: rep}, onPrism)
				if err != nil {
					t.Fatalf("release: %v", err)
				}
				if r.Measured.Suppressed < canaryRecords {
					t.Fatalf("%d records suppressed: the canary records are not all suppressed", r.Measured.Suppressed)
				}
				files, _ := filepath.Glob(filepath.Join(out, "*"))
				if len(files) != 3 {
					t.Fatalf("the release holds %q, want 3 parts", files)
				}
				for _, f := range append(files, rep) {
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
				cfg, err := schema.Load(cfgPath)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := release.Check(context.Background(), cfg, job.Options{Input: parts, Output: out}); err != nil {
					t.Fatalf("check: %v", err)
				}
			})
		}
	}
}
