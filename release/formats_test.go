package release

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"sanitizer/fault"
	"sanitizer/gen"
	"sanitizer/internal/build"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/report"
	"sanitizer/schema"
	"sanitizer/table"
)

// formatsFixture generates the hospital sample in every format (same seed, so the same
// records) and loads the sample configuration without its format lines, so that each
// file's extension decides.
func formatsFixture(t *testing.T, n int) (cfg *schema.Config, dir string) {
	t.Helper()
	dir = t.TempDir()
	for _, ext := range []string{"csv", "parquet", "arrow", "arrows"} {
		if err := gen.Hospital(filepath.Join(dir, "in."+ext), "", n, 11, job.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile("../testdata/hospital-tests.yaml")
	if err != nil {
		t.Fatal(err)
	}
	hier, _ := filepath.Abs("../testdata/hierarchies")
	var kept []string
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(line, "input:") && !strings.HasPrefix(line, "output:") {
			kept = append(kept, line)
		}
	}
	text := testfiles.ReplaceAll(t, strings.Join(kept, "\n"), "hierarchies/", hier+"/")
	path := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if cfg, err = schema.Load(path); err != nil {
		t.Fatal(err)
	}
	return cfg, dir
}

// arrowValue is the canonical text of value i of a column read by the Arrow library,
// written here without the package's conversion code.
func arrowValue(t *testing.T, col arrow.Array, i int) string {
	t.Helper()
	if col.IsNull(i) {
		return ""
	}
	switch a := col.(type) {
	case *array.String:
		return a.Value(i)
	case *array.Int64:
		return fmt.Sprint(a.Value(i))
	case *array.Date32:
		return a.Value(i).ToTime().Format("2006-01-02")
	case *array.Dictionary:
		return arrowValue(t, a.Dictionary(), a.GetValueIndex(i))
	}
	t.Fatalf("unexpected column type %s", col.DataType())
	return ""
}

// assertQuasiDictionaries checks that every quasi-identifier of cfg is a
// dictionary-encoded column of sch, and no other column is.
func assertQuasiDictionaries(t *testing.T, cfg *schema.Config, sch *arrow.Schema) {
	t.Helper()
	for _, f := range sch.Fields() {
		c := cfg.Column(f.Name)
		if quasi := c != nil && c.Role == schema.Quasi; quasi != (f.Type.ID() == arrow.DICTIONARY) {
			t.Errorf("column %s (quasi-identifier: %v) is of type %s", f.Name, quasi, f.Type)
		}
	}
}

// tableRows turns an Arrow table into rows of text.
func tableRows(t *testing.T, tbl arrow.Table) [][]string {
	t.Helper()
	rows := make([][]string, tbl.NumRows())
	for r := range rows {
		rows[r] = make([]string, tbl.NumCols())
	}
	for c := 0; c < int(tbl.NumCols()); c++ {
		r := 0
		for _, chunk := range tbl.Column(c).Data().Chunks() {
			for i := 0; i < chunk.Len(); i++ {
				rows[r][c] = arrowValue(t, chunk, i)
				r++
			}
		}
	}
	return rows
}

// readArrowIPC reads a whole Arrow IPC file or stream with the Arrow library.
func readArrowIPC(t *testing.T, path string, stream bool) (arrow.Table, arrow.Metadata) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []arrow.Record
	var sch *arrow.Schema
	if stream {
		r, err := ipc.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Release()
		sch = r.Schema()
		for r.Next() {
			rec := r.Record()
			rec.Retain()
			recs = append(recs, rec)
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
	} else {
		r, err := ipc.NewFileReader(f)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		sch = r.Schema()
		for i := 0; i < r.NumRecords(); i++ {
			rec, err := r.Record(i)
			if err != nil {
				t.Fatal(err)
			}
			rec.Retain()
			recs = append(recs, rec)
		}
	}
	tbl := array.NewTableFromRecords(sch, recs)
	for _, r := range recs {
		r.Release()
	}
	return tbl, sch.Metadata()
}

// TestFormatsAgree releases the same records from every input format to every output
// format: every release passes the independent check, and every one holds exactly the
// rows of the CSV → CSV release. Parquet releases are read back by a second
// implementation (the Arrow project's pqarrow), Arrow releases by the Arrow library;
// both carry the release parameters, and no data value, in their metadata.
func TestFormatsAgree(t *testing.T) {
	cfg, dir := formatsFixture(t, 6000)
	now := func() time.Time { return time.Date(2026, 11, 22, 1, 2, 3, 0, time.UTC) }
	release := func(in, out string) *report.Report {
		t.Helper()
		rep, err := Release(context.Background(), cfg, job.Options{Input: filepath.Join(dir, in), Output: filepath.Join(dir, out), Now: now})
		if err != nil {
			t.Fatalf("%s → %s: %v", in, out, err)
		}
		if _, err := Check(context.Background(), cfg, job.Options{Input: filepath.Join(dir, in), Output: filepath.Join(dir, out)}); err != nil {
			t.Fatalf("check %s → %s: %v", in, out, err)
		}
		return rep
	}
	base := release("in.csv", "base.csv")
	header, want := readTable(t, filepath.Join(dir, "base.csv"), ',')
	if len(want) == 0 {
		t.Fatal("empty base release")
	}
	// The sensitive values, which must never reach metadata.
	diag := slices.Index(header, "diagnosis")
	formats := []string{"csv", "parquet", "arrow", "arrows"}
	for a, in := range formats {
		for b, out := range formats {
			name := fmt.Sprintf("%s-to-%s", in, out)
			t.Run(name, func(t *testing.T) {
				if testing.Short() && b != (a+1)%len(formats) {
					t.Skip("every format read once and written once under -short (the race detector's run)")
				}
				rep := release("in."+in, name+"."+out)
				if rep.Suppressed != base.Suppressed || rep.Classes != base.Classes || !slices.Equal(nodeOf(rep), nodeOf(base)) {
					t.Fatalf("release differs from the CSV one: %+v vs %+v", rep, base)
				}
				path := filepath.Join(dir, name+"."+out)
				var got [][]string
				var meta map[string]string
				switch out {
				case "csv":
					h, rows := readTable(t, path, ',')
					if !slices.Equal(h, header) {
						t.Fatalf("header %v, want %v", h, header)
					}
					got = rows
				case "parquet":
					tbl := testfiles.ReadWithPqarrow(t, path)
					defer tbl.Release()
					got = tableRows(t, tbl)
					assertQuasiDictionaries(t, cfg, tbl.Schema())
					meta = testfiles.ParquetMetadata(t, path)
				default:
					tbl, md := readArrowIPC(t, path, out == "arrows")
					defer tbl.Release()
					got = tableRows(t, tbl)
					assertQuasiDictionaries(t, cfg, tbl.Schema())
					meta = map[string]string{}
					for i, k := range md.Keys() {
						meta[k] = md.Values()[i]
					}
				}
				if len(got) != len(want) {
					t.Fatalf("%d rows, want %d", len(got), len(want))
				}
				for r := range want {
					if !slices.Equal(got[r], want[r]) {
						t.Fatalf("row %d: %q, want %q", r, got[r], want[r])
					}
				}
				if out == "csv" {
					return
				}
				wantMeta := map[string]string{
					"sanitize.k": "5", "sanitize.suppression_limit": "0.05", "sanitize.version": build.Version,
					"sanitize.config_digest": "sha256:" + cfg.Digest, "sanitize.suppressed": fmt.Sprint(base.Suppressed),
					"sanitize.created_utc": "2026-11-22T01:02:03Z", "sanitize.metric": "loss",
				}
				for k, v := range wantMeta {
					if meta[k] != v {
						t.Errorf("metadata %s = %q, want %q", k, meta[k], v)
					}
				}
				if !strings.Contains(meta["sanitize.node"], `"column":"zip"`) {
					t.Errorf("metadata sanitize.node = %q", meta["sanitize.node"])
				}
				for k, v := range meta {
					for _, row := range want[:min(len(want), 500)] {
						if strings.Contains(v, row[diag]) {
							t.Fatalf("metadata %s holds the data value %q", k, row[diag])
						}
					}
				}
			})
		}
	}
}

func nodeOf(r *report.Report) []int {
	out := make([]int, len(r.Node))
	for i, n := range r.Node {
		out[i] = n.Level
	}
	return out
}

// TestBinaryInputErrors: a column of the wrong type for its declared type, a missing
// configured column, a truncated file and a null in a quasi-identifier are bad input
// naming file and column, and nothing is written.
func TestBinaryInputErrors(t *testing.T) {
	cfg, dir := formatsFixture(t, 300)
	edit := func(t *testing.T, from, to string) *schema.Config {
		t.Helper()
		raw, err := os.ReadFile(cfg.File)
		if err != nil {
			t.Fatal(err)
		}
		return loadConfigText(t, testfiles.Replace(t, string(raw), from, to))
	}
	for _, ext := range []string{"parquet", "arrow", "arrows"} {
		in := filepath.Join(dir, "in."+ext)
		data, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		truncated := filepath.Join(dir, "truncated."+ext)
		if err := os.WriteFile(truncated, data[:len(data)*2/3], 0o600); err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name string
			cfg  *schema.Config
			in   string
			want []string
		}{
			{"wrong type", edit(t, "stay_days:  {role: insensitive, type: integer}", "stay_days:  {role: insensitive, type: date}"), in, []string{in, `"stay_days"`, "date", "integer"}},
			{"undeclared type kept", nil, in, nil},
			{"missing column", edit(t, "stay_days:  {role: insensitive, type: integer}", "stay_days:  {role: insensitive, type: integer}\n  bed: {role: insensitive}"), in, []string{in, `"bed"`, "missing"}},
			{"truncated", cfg, truncated, []string{truncated}},
		}
		for _, c := range cases {
			t.Run(ext+"/"+c.name, func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "r.csv")
				conf := c.cfg
				if conf == nil {
					conf = edit(t, "stay_days:  {role: insensitive, type: integer}", "stay_days:  {role: insensitive}")
				}
				base := runtime.NumGoroutine()
				_, err := Release(context.Background(), conf, job.Options{Input: c.in, Output: out})
				if c.want == nil {
					if err != nil {
						t.Fatal(err)
					}
					return
				}
				if !errors.Is(err, fault.ErrBadInput) {
					t.Fatalf("got %v, want bad input", err)
				}
				for _, w := range c.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 0 {
					t.Errorf("output folder holds %v", entries)
				}
				settled(t, base)
			})
		}
	}
}

// TestNulls: a null in a quasi-identifier is bad input naming column and row unless the
// column declares null-as; a null in an insensitive column is kept as a null.
func TestNulls(t *testing.T) {
	dir := t.TempDir()
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "zip", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "diag", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "stay", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	const n = 40
	in := testfiles.WriteLibraryArrow(t, memory.DefaultAllocator, false, sch, func(b *array.RecordBuilder) {
		for i := range n {
			zip := b.Field(0).(*array.StringBuilder)
			if i == 17 {
				zip.AppendNull()
			} else {
				zip.Append(fmt.Sprintf("021%02d", i%4))
			}
			if i == 5 {
				b.Field(1).(*array.StringBuilder).AppendNull()
			} else {
				b.Field(1).(*array.StringBuilder).Append("flu")
			}
			if i%3 == 0 {
				b.Field(2).(*array.Int64Builder).AppendNull()
			} else {
				b.Field(2).(*array.Int64Builder).Append(int64(i))
			}
		}
	})
	conf := func(zip, diag string) *schema.Config {
		return loadConfigText(t, "columns:\n  zip: {role: quasi, "+zip+"hierarchy: {mask: {max: 5}}}\n  diag: {role: sensitive"+diag+"}\n  stay: {role: insensitive}\nprivacy: {k: 2}\n")
	}
	out := filepath.Join(dir, "r.parquet")
	_, err := Release(context.Background(), conf("", ", null-as: unknown"), job.Options{Input: in, Output: out})
	if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "row 18") || !strings.Contains(err.Error(), `"zip"`) || !strings.Contains(err.Error(), "null-as") {
		t.Fatalf("null quasi-identifier: %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatal("a release was written")
	}
	// A null in a sensitive column without null-as: bad input naming row 6.
	_, err = Release(context.Background(), conf("null-as: \"02100\", ", ""), job.Options{Input: in, Output: out})
	if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "row 6") || !strings.Contains(err.Error(), `"diag"`) {
		t.Fatalf("null sensitive value: %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatal("a release was written")
	}
	if _, err := Release(context.Background(), conf("null-as: \"02100\", ", ", null-as: unknown"), job.Options{Input: in, Output: out}); err != nil {
		t.Fatal(err)
	}
	tbl := testfiles.ReadWithPqarrow(t, out)
	defer tbl.Release()
	if tbl.NumRows() != n {
		t.Fatalf("%d rows released", tbl.NumRows())
	}
	if diag := tbl.Column(1).Data().Chunk(0).(*array.String); diag.IsNull(5) || diag.Value(5) != "unknown" || diag.Value(4) != "flu" {
		t.Errorf("sensitive null released as %q (null %v), want the null-as value", diag.Value(5), diag.IsNull(5))
	}
	stay := tbl.Column(2).Data().Chunk(0)
	for i := range n {
		if stay.IsNull(i) != (i%3 == 0) {
			t.Fatalf("row %d: stay null=%v", i, stay.IsNull(i))
		}
	}
}

// TestPass2FailureBinary: a bad value deep in pass 2 of a Parquet input (a null in a
// sensitive column, many batches in) stops every stage, leaves no goroutine and no
// file behind, and names the row and the column.
func TestPass2FailureBinary(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.parquet")
	const n = 40000
	recs := make([][]string, n)
	for i := range recs {
		diag := "flu"
		if i == 30000 {
			diag = "\x00"
		}
		recs[i] = []string{fmt.Sprintf("021%02d", i%50), diag, fmt.Sprint(i % 9)}
	}
	writeParquet(t, in, []table.OutColumn{
		{Name: "zip", Type: schema.String},
		{Name: "diag", Type: schema.String, Nullable: true},
		{Name: "stay", Type: schema.Integer},
	}, recs)
	cfg := loadConfigText(t, "columns:\n  zip: {role: quasi, hierarchy: {mask: {max: 5}}}\n  diag: {role: sensitive}\n  stay: {role: insensitive}\nprivacy: {k: 2}\n")
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	base := runtime.NumGoroutine()
	for _, workers := range []int{1, 2, 8} {
		for _, ext := range []string{"parquet", "arrow", "csv"} {
			_, err := Release(context.Background(), cfg, job.Options{Input: in, Output: filepath.Join(out, "r."+ext), Report: filepath.Join(out, "r.json"), Workers: workers})
			if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "row 30001") || !strings.Contains(err.Error(), `"diag"`) {
				t.Fatalf("workers=%d, %s: got %v, want bad input naming row 30001 and diag", workers, ext, err)
			}
			settled(t, base)
			if entries, _ := os.ReadDir(out); len(entries) != 0 {
				t.Fatalf("workers=%d, %s: output folder holds %v", workers, ext, entries)
			}
		}
	}
}

// loadConfigText writes a configuration into a temporary folder and loads it.
func loadConfigText(t *testing.T, text string) *schema.Config {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := schema.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestDictionariesHoldReleasedLabelsOnly: the dictionary of every generalized
// quasi-identifier of a Parquet or Arrow release holds exactly the labels its records
// hold: none that only suppressed records (or no record) would have had.
func TestDictionariesHoldReleasedLabelsOnly(t *testing.T) {
	cfg, in, dir := hospitalFixture(t, 3000)
	for _, format := range []string{"parquet", "arrow"} {
		t.Run(format, func(t *testing.T) {
			cfg.Output.Format = schema.Format(format)
			out := filepath.Join(dir, "r."+format)
			rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out, Force: true})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Suppressed == 0 {
				t.Fatal("the fixture suppresses nothing: the test cannot see a suppressed label")
			}
			var tbl arrow.Table
			if format == "parquet" {
				tbl = testfiles.ReadWithPqarrow(t, out)
			} else {
				tbl, _ = readArrowIPC(t, out, false)
			}
			defer tbl.Release()
			for _, q := range cfg.Quasi() {
				idx := tbl.Schema().FieldIndices(q.Name)[0]
				held, listed := map[string]bool{}, map[string]bool{}
				for _, chunk := range tbl.Column(idx).Data().Chunks() {
					d := chunk.(*array.Dictionary)
					for i := range d.Len() {
						held[arrowValue(t, d, i)] = true
					}
					for i := range d.Dictionary().Len() {
						listed[arrowValue(t, d.Dictionary(), i)] = true
					}
				}
				if !maps.Equal(held, listed) {
					t.Errorf("%s: the dictionary lists %d labels, the records hold %d", q.Name, len(listed), len(held))
				}
			}
		})
	}
}

// writeParquet writes recs (text, "\x00" for a null) as a Parquet file of the given
// columns with the tool's own sink.
func writeParquet(t testing.TB, path string, cols []table.OutColumn, recs [][]string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := table.NewSink(f, "parquet", schema.CSV{}, cols, nil)
	if err != nil {
		t.Fatal(err)
	}
	var fields []string
	var nulls []bool
	for _, r := range recs {
		for _, v := range r {
			fields = append(fields, v)
			nulls = append(nulls, v == "\x00")
		}
	}
	if err := s.Write(fields, nulls, len(recs)); err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(); err != nil {
		t.Fatal(err)
	}
}
