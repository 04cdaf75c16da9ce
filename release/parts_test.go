package release

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/gen"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/report"
	"sanitizer/sample"
	"sanitizer/schema"
)

// splitCSV writes the records of a CSV table (header first) into n part files of dir,
// each with the header, and returns the parts' paths.
func splitCSV(t *testing.T, data []byte, dir string, n int) []string {
	t.Helper()
	lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
	header, recs := lines[0], lines[1:]
	var paths []string
	for i := range n {
		lo, hi := i*len(recs)/n, (i+1)*len(recs)/n
		body := strings.Join(recs[lo:hi], "")
		if !strings.HasSuffix(body, "\n") {
			body += "\n"
		}
		p := filepath.Join(dir, "part-"+itoa(i)+".csv")
		if err := os.WriteFile(p, []byte(header+body), 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// hospitalModels are privacy sections for the hospital fixture: k alone (""), and k
// with l-diversity or t-closeness on diagnosis.
var hospitalModels = []string{
	"",
	"privacy:\n  k: 5\n  suppression: 0.05\n  l-diversity: {column: diagnosis, variant: distinct, l: 4}",
	"privacy:\n  k: 5\n  suppression: 0.05\n  t-closeness: {column: diagnosis, t: 0.5}",
}

// hospitalWith is hospitalFixture with its privacy section replaced by privacy (""
// keeps it).
func hospitalWith(t *testing.T, n int, privacy string) (cfg *schema.Config, in, dir string) {
	t.Helper()
	cfg, in, dir = hospitalFixture(t, n)
	if privacy == "" {
		return cfg, in, dir
	}
	raw, err := os.ReadFile(cfg.File)
	if err != nil {
		t.Fatal(err)
	}
	return loadConfigText(t, testfiles.Replace(t, string(raw), "privacy: {k: 5, suppression: 0.05}", privacy)), in, dir
}

// TestPartsReleaseEqualsWhole: a CSV table split into parts in a folder (beside a
// _SUCCESS marker and a hidden checksum file, which are not parts), or named by a
// pattern, releases byte for byte as the whole file does, and Check passes on it.
func TestPartsReleaseEqualsWhole(t *testing.T) {
	defer func(f func(int) int) { maxPartClasses = f }(maxPartClasses)
	maxPartClasses = func(int) int { return math.MaxInt } // the class tables, however many classes
	// With the l and t models, the node suppresses classes that meet k but fail l or t:
	// the merged class table must carry the sensitive histograms of every part.
	for _, privacy := range hospitalModels {
		cfg, in, dir := hospitalWith(t, 3000, privacy)
		partsEqualWhole(t, cfg, in, dir)
	}
	// Parts whose class tables would be too large are searched as one file's records.
	maxPartClasses = func(int) int { return 0 }
	cfg, in, dir := hospitalFixture(t, 3000)
	partsEqualWhole(t, cfg, in, dir)
}

// partsEqualWhole releases in as one file and split into three parts (a folder with a
// Spark-style marker file, and a glob): the releases are identical, and check passes.
func partsEqualWhole(t *testing.T, cfg *schema.Config, in, dir string) {
	t.Helper()
	whole := filepath.Join(dir, "whole.csv")
	rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: whole})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	parts := filepath.Join(dir, "parts")
	if err := os.Mkdir(parts, 0o700); err != nil {
		t.Fatal(err)
	}
	splitCSV(t, data, parts, 3)
	for _, name := range []string{"_SUCCESS", ".part-0.csv.crc"} {
		if err := os.WriteFile(filepath.Join(parts, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	for _, input := range []string{parts, filepath.Join(parts, "part-*.csv")} {
		out := filepath.Join(dir, "from-parts.csv")
		got, err := Release(context.Background(), cfg, job.Options{Input: input, Output: out, Force: true})
		if err != nil {
			t.Fatalf("%s: %v", input, err)
		}
		if got.Input.Rows != rep.Input.Rows || got.Suppressed != rep.Suppressed || !slices.Equal(got.Node, rep.Node) || !reflect.DeepEqual(got.Metric, rep.Metric) {
			t.Errorf("%s: %d records, %d suppressed, node %v, %v; the whole file %d, %d, %v, %v", input, got.Input.Rows, got.Suppressed, got.Node, got.Metric, rep.Input.Rows, rep.Suppressed, rep.Node, rep.Metric)
		}
		if b, err := os.ReadFile(out); err != nil || !bytes.Equal(b, want) {
			t.Errorf("%s: the release differs from the whole file's (%v)", input, err)
		}
		if _, err := Check(context.Background(), cfg, job.Options{Input: input, Output: out}); err != nil {
			t.Errorf("check %s: %v", input, err)
		}
	}
}

// TestPartsParquetEqualsCSV: Parquet parts named by a pattern release as the CSV
// table of the same records does.
func TestPartsParquetEqualsCSV(t *testing.T) {
	cfg, _, dir := hospitalFixture(t, 10)
	cfg.Input.Format = "" // each file's extension says
	var whole bytes.Buffer
	for i, seed := range []uint64{11, 12, 13} {
		if err := gen.Hospital(filepath.Join(dir, "p-"+itoa(i)+".parquet"), "", 1500, seed, job.Options{}); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := sample.Hospital(&buf, 1500, seed); err != nil {
			t.Fatal(err)
		}
		b := buf.Bytes()
		if i > 0 {
			b = b[bytes.IndexByte(b, '\n')+1:]
		}
		whole.Write(b)
	}
	in := filepath.Join(dir, "whole.csv")
	if err := os.WriteFile(in, whole.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	outs := map[string]string{}
	for _, input := range []string{in, filepath.Join(dir, "p-*.parquet")} {
		out := filepath.Join(dir, "r"+itoa(len(outs))+".csv")
		if _, err := Release(context.Background(), cfg, job.Options{Input: input, Output: out}); err != nil {
			t.Fatalf("%s: %v", input, err)
		}
		b, _ := os.ReadFile(out)
		outs[input] = string(b)
	}
	if outs[in] != outs[filepath.Join(dir, "p-*.parquet")] {
		t.Error("the release of the Parquet parts differs from the CSV table's")
	}
}

// TestPartsBadInput: what is wrong with an input in parts is bad input naming the
// part (and the row in it), and nothing is written.
func TestPartsBadInput(t *testing.T) {
	cfg, in, dir := hospitalFixture(t, 300)
	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		return p
	}
	unlisted := mk("unlisted")
	paths := splitCSV(t, data, unlisted, 3)
	b, _ := os.ReadFile(paths[1])
	lines := strings.Split(string(b), "\n")
	f := strings.Split(lines[5], ",")
	f[3] = "X" // sex: not in its hierarchy file
	lines[5] = strings.Join(f, ",")
	os.WriteFile(paths[1], []byte(strings.Join(lines, "\n")), 0o600)

	columns := mk("columns")
	paths = splitCSV(t, data, columns, 2)
	b, _ = os.ReadFile(paths[1])
	os.WriteFile(paths[1], []byte(testfiles.Replace(t, string(b), "stay_days", "stay")), 0o600)

	mixed := mk("mixed")
	splitCSV(t, data, mixed, 2)
	os.WriteFile(filepath.Join(mixed, "part-9.parquet"), []byte("PAR1"), 0o600)

	empty := mk("empty")
	os.WriteFile(filepath.Join(empty, "_SUCCESS"), nil, 0o600)

	for _, c := range []struct {
		name, input, format, out, want string
	}{
		{"unlisted value", unlisted, "csv", "r.csv", "part-1.csv: row 5: column \"sex\""},
		{"other columns", columns, "csv", "r.csv", "part-1.csv: its columns"},
		{"two formats", mixed, "", "r.csv", "the parts of a table share one format"},
		{"not the configured format", mixed, "csv", "r.csv", "part-9.parquet has the extension of parquet"},
		{"no parts", empty, "csv", "r.csv", "names no table files"},
		{"no match", filepath.Join(dir, "nothing-*.csv"), "csv", "r.csv", "names no table files"},
		{"release among the parts", unlisted, "csv", filepath.Join("unlisted", "release.csv"), "one of its parts"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg.Input.Format = schema.Format(c.format)
			out := filepath.Join(dir, c.out)
			_, err := Release(context.Background(), cfg, job.Options{Input: c.input, Output: out})
			if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want bad input with %q", err, c.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Fatalf("%s was written", out)
			}
		})
	}
}

// TestPartsReleaseFolder: with a folder as output, an input in parts gets one release
// part per input part, whose records, one part after another, are the release of the
// whole table; Check reads the folder, and finds a record taken out of a part; a
// Parquet part carries the release metadata; a cancelled run publishes no folder; an
// output folder that is not empty, or named without the separator, is refused before
// anything is read.
func TestPartsReleaseFolder(t *testing.T) {
	cfg, in, dir := hospitalFixture(t, 3000)
	whole := filepath.Join(dir, "whole.csv")
	if _, err := Release(context.Background(), cfg, job.Options{Input: in, Output: whole}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(in)
	parts := filepath.Join(dir, "parts")
	os.Mkdir(parts, 0o700)
	splitCSV(t, data, parts, 3)

	out := filepath.Join(dir, "rel") + string(filepath.Separator)
	if _, err := Release(context.Background(), cfg, job.Options{Input: parts, Output: out}); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var joined strings.Builder
	for i, e := range entries {
		if want := "part-0000" + itoa(i) + ".csv"; e.Name() != want {
			t.Fatalf("part %d is %s, want %s", i, e.Name(), want)
		}
		b, _ := os.ReadFile(filepath.Join(out, e.Name()))
		if i > 0 {
			b = b[bytes.IndexByte(b, '\n')+1:]
		}
		joined.Write(b)
	}
	if want, _ := os.ReadFile(whole); len(entries) != 3 || joined.String() != string(want) {
		t.Fatalf("%d parts whose records are not the whole table's release", len(entries))
	}
	if _, err := Check(context.Background(), cfg, job.Options{Input: parts, Output: out}); err != nil {
		t.Fatalf("check: %v", err)
	}
	// A record taken out of the second part is found missing.
	second := filepath.Join(out, "part-00001.csv")
	b, _ := os.ReadFile(second)
	lines := strings.SplitAfter(string(b), "\n")
	os.WriteFile(second, []byte(strings.Join(append(lines[:3:3], lines[4:]...), "")), 0o600)
	if _, err := Check(context.Background(), cfg, job.Options{Input: parts, Output: out}); err == nil {
		t.Fatal("check passed a release part with a record taken out")
	}

	pq := filepath.Join(dir, "pq") + string(filepath.Separator)
	cfg.Output.Format = "parquet"
	if _, err := Release(context.Background(), cfg, job.Options{Input: parts, Output: pq}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		md := testfiles.ParquetMetadata(t, filepath.Join(pq, "part-0000"+itoa(i)+".parquet"))
		if md["sanitize.k"] != "5" {
			t.Errorf("part %d: metadata %v", i, md)
		}
	}
	if _, err := Check(context.Background(), cfg, job.Options{Input: parts, Output: pq}); err != nil {
		t.Fatalf("check of the Parquet parts: %v", err)
	}
	// A part whose release metadata differs from the first part's (a key Check
	// compares with the configuration, one it does not, one gone, one added) fails
	// the check, which names the part; the same records with the same metadata pass.
	third, first := filepath.Join(pq, "part-00002.parquet"), filepath.Join(pq, "part-00000.parquet")
	released := func(path string) map[string]string { // the release's keys of a part's metadata
		m := testfiles.ParquetMetadata(t, path)
		maps.DeleteFunc(m, func(k, _ string) bool { return !strings.HasPrefix(k, "sanitize.") })
		return m
	}
	for i, edit := range []func(map[string]string){
		func(map[string]string) {},
		func(m map[string]string) {
			m["sanitize.node"] = testfiles.Replace(t, m["sanitize.node"], `"level":`, `"level":1`)
		},
		func(m map[string]string) { m["sanitize.config_digest"] = "sha256:0" },
		func(m map[string]string) { delete(m, "sanitize.created_utc") },
		func(m map[string]string) { m["sanitize.extra"] = "1" },
	} {
		testfiles.RewriteParquetMetadata(t, third, edit)
		m, err := Check(context.Background(), cfg, job.Options{Input: parts, Output: pq})
		changed := !maps.Equal(released(third), released(first))
		switch {
		case changed != (i > 0):
			t.Fatalf("edit %d changed the metadata: %v", i, changed)
		case !changed && err != nil:
			t.Fatalf("check of a part written again with the same metadata: %v", err)
		case changed && (!errors.Is(err, fault.ErrUnattainable) || !strings.Contains(err.Error(), "part-00002.parquet") || m == nil):
			t.Fatalf("edit %d: check of a part with other metadata: %v (measured %v)", i, err, m)
		}
		testfiles.RewriteParquetMetadata(t, third, func(m map[string]string) {
			maps.DeleteFunc(m, func(k, _ string) bool { return strings.HasPrefix(k, "sanitize.") })
			maps.Copy(m, released(first))
		})
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancelled := filepath.Join(dir, "cancelled") + string(filepath.Separator)
	_, err = Release(ctx, cfg, job.Options{Input: parts, Output: cancelled, AtStage: func(stage job.Stage) {
		if stage == job.StagePublish {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*cancelled*")); len(left) > 0 {
		t.Fatalf("a cancelled run left %v", left)
	}

	full := filepath.Join(dir, "full")
	os.Mkdir(full, 0o700)
	os.WriteFile(filepath.Join(full, "x"), nil, 0o600)
	if _, err := Release(context.Background(), cfg, job.Options{Input: parts, Output: full + "/"}); !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("a full output folder: %v, want bad input", err)
	}
	// Named without the separator, a folder is not an output (a script that meant a
	// file must not get a folder).
	if _, err := Release(context.Background(), cfg, job.Options{Input: parts, Output: full}); !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "is a folder") {
		t.Fatalf("a folder named without the separator: %v, want bad input", err)
	}
}

// TestWholeSearchFromClasses: a table searched from its class table (its records fall
// in few classes) releases byte for byte what the search from its records releases,
// with the same report, under k alone and with l-diversity and t-closeness.
func TestWholeSearchFromClasses(t *testing.T) {
	defer func(f func(int) int) { maxPartClasses = f }(maxPartClasses)
	for _, privacy := range hospitalModels {
		cfg, in, dir := hospitalWith(t, 3000, privacy)
		var reps []*report.Report
		var files [][]byte
		for _, limit := range []int{math.MaxInt, 0} { // the class table; the records
			maxPartClasses = func(int) int { return limit }
			out := filepath.Join(dir, "r"+itoa(len(reps))+".csv")
			rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			reps, files = append(reps, rep), append(files, b)
		}
		a, b := reps[0], reps[1]
		// The classes are numbered in another order: sums over them may differ in the
		// last bits.
		near := func(x, y float64) bool { return math.Abs(x-y) <= 1e-12*math.Max(math.Abs(x), math.Abs(y)) }
		ua, ub := a.Utility, b.Utility
		sameUtility := near(ua.Loss, ub.Loss) && near(ua.NCP, ub.NCP) && ua.Discernibility == ub.Discernibility && ua.CAvg == ub.CAvg && near(ua.NonUniformEntropy, ub.NonUniformEntropy)
		if !bytes.Equal(files[0], files[1]) || !slices.Equal(a.Node, b.Node) || a.Suppressed != b.Suppressed || a.Classes != b.Classes || a.MinClass != b.MinClass || !reflect.DeepEqual(a.Metric, b.Metric) || !sameUtility {
			t.Errorf("%q: from the class table node %v, %d suppressed, %d classes, %+v; from the records %v, %d, %d, %+v (files equal: %v)",
				privacy, a.Node, a.Suppressed, a.Classes, a.Utility, b.Node, b.Suppressed, b.Classes, b.Utility, bytes.Equal(files[0], files[1]))
		}
	}
}
