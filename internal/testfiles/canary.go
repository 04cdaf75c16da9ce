package testfiles

import (
	"bytes"
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
)

// CanaryRecords is how many records of a canary table a release at k=5 suppresses.
const CanaryRecords = 7

// Canary is an input for the tests that look for suppressed values in a release: its
// records fall in twenty zip codes of 500 records each, and a few (CanaryRecords) in
// zip codes of their own, which a release at k=5 suppresses (the search keeps the zip
// codes whole: 0.07% suppressed). Every value those few records hold in every other
// column is a canary, a random string no other record holds: dictionary-encoded as
// pandas categoricals and pyarrow write them (int8, int16 and int32 indexes, nulls),
// and plain. With Subset, a fifth of the records lie outside a research subset, a
// canary in their ward. A release may hold no canary anywhere in its bytes.
type Canary struct {
	Rec      arrow.RecordBatch
	Canaries []string
	// Config is the configuration's columns and privacy sections.
	Config string
}

// NewCanary makes a canary table (outside a subset, with subset), its records in order
// of zip code when byZip (a part of 4,000 then holds eight of the twenty; else every
// part holds every zip code). Release lets its record go.
func NewCanary(t testing.TB, subset, byZip bool) *Canary {
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
	c := &Canary{}
	canary := func() string {
		var r [12]byte
		if _, err := rand.Read(r[:]); err != nil {
			t.Fatal(err)
		}
		v := "CANARY" + hex.EncodeToString(r[:])
		c.Canaries = append(c.Canaries, v)
		return v
	}
	appendDict := func(j int, v string) {
		if err := b.Field(j).(*array.BinaryDictionaryBuilder).AppendString(v); err != nil {
			t.Fatal(err)
		}
	}
	const n = 10000
	for i := range n + CanaryRecords {
		zip, diag, ward, insurer, note := fmt.Sprintf("021%02d", i%20), []string{"flu", "cold", "asthma"}[i%3], fmt.Sprintf("W%d", i%4), "public", fmt.Sprintf("n%d", i%9)
		if byZip {
			zip = fmt.Sprintf("021%02d", i/500)
		}
		study := "yes"
		if subset && i%5 == 0 { // outside the subset: never released
			study, ward = "no", canary()
		}
		if i%1429 == 3 && i >= n/2 || i >= n { // among the others, in different batches
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
	c.Rec = b.NewRecordBatch()
	c.Config = "columns:\n  zip: {role: quasi, hierarchy: {mask: {max: 5}}}\n  diag: {role: sensitive}\n" +
		"  ward: {role: insensitive}\n  insurer: {role: insensitive}\n  note: {role: insensitive}\n"
	if subset {
		c.Config += "  in_study: {role: identifier}\nprivacy: {k: 5, suppression: 0.02, subset: {column: in_study}, k-map: {k: 5}}\n"
	} else {
		c.Config += "  in_study: {role: insensitive}\nprivacy: {k: 5, suppression: 0.02}\n"
	}
	return c
}

// Release lets the table's record go.
func (c *Canary) Release() { c.Rec.Release() }

// ParquetParts writes the table into dir/parts as Parquet files of 4,000 records, in
// row groups of 3,000 (each with its dictionaries, which hold every value of the
// group's dictionary arrays), and returns the folder.
func (c *Canary) ParquetParts(t testing.TB, dir string) string {
	t.Helper()
	parts := filepath.Join(dir, "parts")
	if err := os.Mkdir(parts, 0o700); err != nil {
		t.Fatal(err)
	}
	rows := c.Rec.NumRows()
	for i, lo := 0, int64(0); lo < rows; i, lo = i+1, lo+4000 {
		part := c.Rec.NewSlice(lo, min(lo+4000, rows))
		WriteArrowParquet(t, filepath.Join(parts, fmt.Sprintf("part-%d.parquet", i)), part, []parquet.WriterProperty{parquet.WithMaxRowGroupLength(3000)}, pqarrow.WithStoreSchema())
		part.Release()
	}
	return parts
}

// NoCanary fails when one of the files holds one of the canaries in its bytes, as they
// are or, for a Parquet file, once its pages are decoded (ParquetPageBytes).
func NoCanary(t testing.TB, canaries []string, files ...string) {
	t.Helper()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, ".parquet") {
			data = append(data, ParquetPageBytes(t, f)...)
		}
		for _, c := range canaries {
			if bytes.Contains(data, []byte(c)) {
				t.Fatalf("%s holds %s, a value only a suppressed record (or a record outside the subset) holds", f, c)
			}
		}
	}
}
