package stage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"golang.org/x/sync/errgroup"

	"sanitizer/fault"
	"sanitizer/gen"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/release"
	"sanitizer/report"
	"sanitizer/sample"
	"sanitizer/schema"
	"sanitizer/table"
)

// lines returns the records of the CSV files (a file, or a folder's files), header
// rows left out, sorted: the release as a multiset of records.
func lines(t *testing.T, path string) []string {
	t.Helper()
	files := []string{path}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			t.Fatal(err)
		}
		files = nil
		for _, e := range entries {
			files = append(files, filepath.Join(path, e.Name()))
		}
	}
	var out []string
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ls := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
		out = append(out, ls[1:]...)
	}
	slices.Sort(out)
	return out
}

// tableRecords reads a table (a file, or a folder of parts) of a binary format with
// the table package: its columns (name and Arrow type), and its records as text lines
// (a null distinct from every value), sorted.
func tableRecords(t *testing.T, path string, format schema.Format) (cols, recs []string) {
	t.Helper()
	src, err := table.Open(path, format, schema.CSV{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	all := make([]int, len(src.Columns()))
	for i, c := range src.Columns() {
		all[i] = i
		cols = append(cols, fmt.Sprintf("%s %v", c.Name, c.Arrow))
	}
	g, ctx := errgroup.WithContext(context.Background())
	batches := make(chan *table.Batch, 2)
	g.Go(func() error { return src.Stream(ctx, all, batches) })
	for b := range batches {
		for i := range b.N {
			fs := slices.Clone(b.Record(i))
			for k := range fs {
				if b.Null(i, k) {
					fs[k] = "\x00null"
				}
			}
			recs = append(recs, strings.Join(fs, "\x1f"))
		}
		b.Release()
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(recs)
	return cols, recs
}

// againstCLI releases beamIn on Prism under the configuration at cfgPath, and cliIn
// with the CLI's release into one file, both in the configuration's output format
// (else the input's), and fails t unless both publish the same non-empty multiset of
// records at the same node with the same value of the search's metric (CSV: the same
// lines; Parquet and Arrow: the same columns of the same types and the same values).
// It returns both runs, the Beam release's
// folder and the CLI's file.
func againstCLI(t *testing.T, cfgPath, beamIn, cliIn string) (*Released, *report.Report, string, string) {
	t.Helper()
	j, err := NewJob(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "release")
	beamReport := filepath.Join(t.TempDir(), "report.json")
	got, err := Release(context.Background(), j, job.Options{Input: beamIn, Output: out, Report: beamReport}, onPrism)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := schema.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	format := cfg.Output.Format
	if format == "" {
		if format, err = table.InputFormat(cliIn, cfg.Input); err != nil {
			t.Fatal(err)
		}
	}
	cliOut := filepath.Join(t.TempDir(), "r."+format.String())
	rep, err := release.Release(context.Background(), cfg, job.Options{Input: cliIn, Output: cliOut})
	if err != nil {
		t.Fatal(err)
	}
	sameReport(t, beamReport, rep)
	// The report is checked against the written parts by the CLI's check, as a
	// release's report is.
	if _, err := release.Check(context.Background(), cfg, job.Options{Input: beamIn, Output: out, Report: beamReport}); err != nil {
		t.Errorf("the check of the release against its report: %v", err)
	}
	node := make([]int, len(rep.Node))
	for i, n := range rep.Node {
		node[i] = n.Level
	}
	var beamLines, cliLines []string
	if format == "csv" {
		beamLines, cliLines = lines(t, out), lines(t, cliOut)
	} else {
		var beamCols, cliCols []string
		beamCols, beamLines = tableRecords(t, out, format)
		cliCols, cliLines = tableRecords(t, cliOut, format)
		if !slices.Equal(beamCols, cliCols) {
			t.Errorf("Beam's columns %v, the CLI's %v", beamCols, cliCols)
		}
	}
	if !slices.Equal(got.Result.Levels, node) || got.Result.Value != rep.Metric.Value || !slices.Equal(beamLines, cliLines) || len(cliLines) == 0 {
		t.Errorf("Beam: node %v, %s %g, %d records; CLI: node %v, %g, %d records; same multiset %v", got.Result.Levels, got.Result.Metric, got.Result.Value, len(beamLines), node, rep.Metric.Value, len(cliLines), slices.Equal(beamLines, cliLines))
	}
	// The estimate made before the count bounds the tables counted.
	est := got.Estimate
	if b := got.Classes.Bytes(); b < est.Classes.AtLeast || b > est.Classes.AtMost {
		t.Errorf("the class table takes %d bytes, estimated between %d and %d", b, est.Classes.AtLeast, est.Classes.AtMost)
	}
	if b := got.Population.Bytes(); b < est.Population.AtLeast || b > est.Population.AtMost {
		t.Errorf("the population's class table takes %d bytes, estimated between %d and %d", b, est.Population.AtLeast, est.Population.AtMost)
	}
	t.Logf("class table: %d bytes, estimated %d to %d (%d records at most; %q: %d values); population %d, estimated %d to %d",
		got.Classes.Bytes(), est.Classes.AtLeast, est.Classes.AtMost, est.Records, est.Widest, est.Values, got.Population.Bytes(), est.Population.AtLeast, est.Population.AtMost)
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range entries {
		if want := (release.Engine{}).PartName(i, len(entries), format); e.Name() != want {
			t.Errorf("release part %d is %s, want %s", i, e.Name(), want)
		}
	}
	return got, rep, out, cliOut
}

// sameReport fails t unless the Beam release's report at path says what the CLI's
// report cli of the same input says: the node, the classes, the suppression, the
// models, what the check measured, the values released, the input's risk and the
// release's, and the utility metrics (measured from the written parts on Beam, by the
// search in the CLI: the same within rounding). The lattice's statistics are the
// search's work, which the cut changes, and are not compared.
func sameReport(t *testing.T, path string, cli *report.Report) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got report.Report
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	// The CLI's report as its JSON says it (a measure of a model not configured is
	// not written), as Beam's is read back.
	cliData, err := json.Marshal(cli)
	if err != nil {
		t.Fatal(err)
	}
	cli = new(report.Report)
	if err := json.Unmarshal(cliData, cli); err != nil {
		t.Fatal(err)
	}
	if got.Tool != "sanitize-beam" || got.ConfigDigest != cli.ConfigDigest || !maps.Equal(got.HierarchyDigests, cli.HierarchyDigests) || got.Algorithm != cli.Algorithm {
		t.Errorf("Beam's report: tool %q, config %s, hierarchies %v, %s; the CLI's %s, %v, %s", got.Tool, got.ConfigDigest, got.HierarchyDigests, got.Algorithm, cli.ConfigDigest, cli.HierarchyDigests, cli.Algorithm)
	}
	for _, c := range []struct {
		what      string
		beam, cli any
	}{
		{"records", []int{got.Input.Rows, got.Output.Rows}, []int{cli.Input.Rows, cli.Output.Rows}},
		{"model", got.Model, cli.Model},
		{"node", got.Node, cli.Node},
		{"classes", []any{got.Classes, got.MinClass, got.AvgClass, got.Suppressed}, []any{cli.Classes, cli.MinClass, cli.AvgClass, cli.Suppressed}},
		{"metric", got.Metric, cli.Metric},
		{"verified", got.Verified, cli.Verified},
		{"generalized", got.Generalized, cli.Generalized},
		{"risk", got.Risk, cli.Risk},
	} {
		if !reflect.DeepEqual(c.beam, c.cli) {
			t.Errorf("Beam's report: %s %+v; the CLI's %+v", c.what, c.beam, c.cli)
		}
	}
	if got.Risk == nil || got.Risk.Input.Records != int64(cli.Input.Rows) {
		t.Errorf("Beam's report: the input's risk %+v", got.Risk)
	}
	u, w := got.Utility, cli.Utility
	near := func(a, b, tol float64) bool { return math.Abs(a-b) <= tol*max(1, math.Abs(a), math.Abs(b)) }
	if !near(u.Loss, w.Loss, 1e-9) || !near(u.NCP, w.NCP, 1e-9) || !near(u.NonUniformEntropy, w.NonUniformEntropy, 1e-9) || u.Discernibility != w.Discernibility || !near(u.CAvg, w.CAvg, 1e-12) {
		t.Errorf("Beam's report: utility %+v; the CLI's %+v", u, w)
	}
}

// TestReleaseOnPrismMatchesCLI: Adult in seven parts, released on Prism, is published
// as seven parts that hold the same multiset of records as the CLI's release of the
// whole file, at the same node, for k alone, with suppression, with recursive
// l-diversity, with t-closeness and β-likeness on occupation (numbered over every
// part's values, its histograms merged with the classes), and with the average risk
// enforced by suppressing the smallest classes, and with the game-theoretic model;
// the parts passed the CLI's check before they were published.
func TestReleaseOnPrismMatchesCLI(t *testing.T) {
	for _, privacy := range []string{
		"privacy: {k: 5, suppression: 0}",
		"privacy: {k: 10, suppression: 0.05}",
		"privacy: {k: 5, suppression: 0.04, l-diversity: {column: occupation, variant: recursive, l: 3, c: 4}}",
		"privacy: {k: 3, suppression: 0.05, t-closeness: {column: occupation, t: 0.2}, beta-likeness: {column: occupation, beta: 3}}",
		"privacy: {k: 1, suppression: 0.04, average-risk: 0.01}", // enforced: the smallest classes suppressed until it holds
		// the game-theoretic model with an attack, decided class by class on the
		// classes' information loss, under the publisher's payout
		"privacy: {k: 1, suppression: 0.04, profitability: {attack: true, publisher-loss: 3000, adversary-gain: 120, adversary-cost: 20}}\nsearch: {metric: publisher-payout}",
	} {
		t.Run(privacy, func(t *testing.T) {
			cfgPath, whole, parts := adultParts(t, 5000, privacy)
			got, rep, out, _ := againstCLI(t, cfgPath, parts, whole)
			entries, _ := os.ReadDir(out)
			if len(entries) != 7 || got.Parts != 7 || got.Measured.Suppressed != rep.Suppressed {
				t.Errorf("%d release parts (%d reported), %d suppressed; the CLI %d", len(entries), got.Parts, got.Measured.Suppressed, rep.Suppressed)
			}
			if (strings.Contains(privacy, "average-risk") || strings.Contains(privacy, "profitability")) && rep.Suppressed == 0 { // k = 1 suppresses nothing itself
				t.Errorf("the model suppressed nothing: the test does not test it")
			}
		})
	}
}

// releaseFails releases parts on Prism under the configuration at cfgPath and fails t
// unless the run fails with an error of kind whose text holds says and not secret (a
// value the error must never show; "": none), and leaves neither a release nor a
// temporary behind.
func releaseFails(t *testing.T, cfgPath, parts string, kind error, says, secret string) {
	t.Helper()
	j, err := NewJob(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	_, err = Release(context.Background(), j, job.Options{Input: parts, Output: filepath.Join(dir, "release")}, onPrism)
	if !errors.Is(err, kind) || !strings.Contains(err.Error(), says) || (secret != "" && strings.Contains(err.Error(), secret)) {
		t.Errorf("got %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left %v behind", entries)
	}
}

// TestReleaseOnPrismPublishesNothing: a part that fails to encode fails the run, and
// neither the release nor a temporary is left.
func TestReleaseOnPrismPublishesNothing(t *testing.T) {
	cfgPath, _, parts := adultParts(t, 10000, "privacy: {k: 5}")
	bad := filepath.Join(parts, "part-002.csv")
	raw, err := os.ReadFile(bad)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(testfiles.Replace(t, string(raw), "United-States", "Atlantis")), 0o600); err != nil {
		t.Fatal(err)
	}
	releaseFails(t, cfgPath, parts, fault.ErrBadInput, "part-002.csv: row", "Atlantis")
}

// TestReleaseOnPrismErrorsWithoutText: a runner that reports a failed job without
// its workers' errors (Dataflow says only that the job failed) still gives the
// driver the error's kind and text, through the folder the workers write them into;
// nothing is published.
func TestReleaseOnPrismErrorsWithoutText(t *testing.T) {
	cfgPath, _, parts := adultParts(t, 10000, "privacy: {k: 5}")
	bad := filepath.Join(parts, "part-001.csv")
	raw, err := os.ReadFile(bad)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(testfiles.Replace(t, string(raw), "United-States", "Atlantis")), 0o600); err != nil {
		t.Fatal(err)
	}
	j, err := NewJob(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	mute := func(ctx context.Context, p *beam.Pipeline) error {
		if err := onPrism(ctx, p); err != nil {
			return errors.New("job failed")
		}
		return nil
	}
	dir := t.TempDir()
	_, err = Release(context.Background(), j, job.Options{Input: parts, Output: filepath.Join(dir, "release")}, mute)
	if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), `part-001.csv: row`) || strings.Contains(err.Error(), "Atlantis") {
		t.Errorf("got %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left %v behind", entries)
	}
}

// TestReleaseOnPrismForce: --force replaces a release, and only a release: a folder
// that holds anything but release parts, or that holds the input, the configuration
// or a hierarchy file, is refused as bad input and left as it was.
func TestReleaseOnPrismForce(t *testing.T) {
	cfgPath, _, parts := adultParts(t, 10000, "privacy: {k: 5}")
	j, err := NewJob(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "release")
	if _, err := Release(context.Background(), j, job.Options{Input: parts, Output: out}, onPrism); err != nil {
		t.Fatal(err)
	}
	first := lines(t, out)
	if _, err := Release(context.Background(), j, job.Options{Input: parts, Output: out, Force: true}, onPrism); err != nil {
		t.Fatalf("replacing a release: %v", err)
	}
	if again := lines(t, out); !slices.Equal(again, first) {
		t.Errorf("the replaced release holds %d records, the first %d", len(again), len(first))
	}
	// --force replaces a report too, beside a new release folder as well, and the
	// report records the parts' digests, which the check compares with the parts.
	rep, out2 := filepath.Join(t.TempDir(), "r.json"), filepath.Join(t.TempDir(), "release")
	if err := os.WriteFile(rep, []byte("a report of another release"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Release(context.Background(), j, job.Options{Input: parts, Output: out2, Report: rep, Force: true}, onPrism); err != nil {
		t.Fatalf("replacing a report beside a new release: %v", err)
	}
	cfg, err := schema.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := release.Check(context.Background(), cfg, job.Options{Input: parts, Output: out2, Report: rep}); err != nil {
		t.Errorf("check --report of the new pair: %v", err)
	}
	notes := filepath.Join(out, "notes.txt")
	if err := os.WriteFile(notes, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, o := range []string{out, filepath.Dir(parts), filepath.Dir(cfgPath), adultDir} {
		_, err := Release(context.Background(), j, job.Options{Input: parts, Output: o, Force: true}, onPrism)
		if !errors.Is(err, fault.ErrBadInput) {
			t.Errorf("--force into %s: %v", o, err)
		}
	}
	if err := os.Remove(notes); err != nil {
		t.Errorf("the folder was changed: %v", err)
	}
	if again := lines(t, out); !slices.Equal(again, first) {
		t.Errorf("the refused run changed the release: %d records, %d before", len(again), len(first))
	}
}

// TestReleaseOnPrismUnlistedSensitive: a released sensitive column's value that its
// hierarchy file does not list (the hospital sample's diagnosis, in its third part)
// fails the run as bad input naming the part, the row and the column, never the
// value, as the CLI's release of the whole file fails; nothing is published.
func TestReleaseOnPrismUnlistedSensitive(t *testing.T) {
	cfgPath, whole, parts := hospitalParts(t, "")
	for _, path := range []string{filepath.Join(parts, "part-c.csv"), whole} {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rows := strings.SplitN(string(raw), "\n", 12)
		fields := strings.Split(rows[10], ",")
		fields[6] = "SECRET-DIAGNOSIS"
		rows[10] = strings.Join(fields, ",")
		if err := os.WriteFile(path, []byte(strings.Join(rows, "\n")), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	releaseFails(t, cfgPath, parts, fault.ErrBadInput, `part-c.csv: row 10: column "diagnosis": value not listed in hierarchy`, "SECRET")
	cfg, err := schema.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	_, cliErr := release.Release(context.Background(), cfg, job.Options{Input: whole, Output: filepath.Join(t.TempDir(), "r.csv")})
	if !errors.Is(cliErr, fault.ErrBadInput) || !strings.Contains(cliErr.Error(), `column "diagnosis": value not listed in hierarchy`) {
		t.Errorf("the CLI's release of the whole file: %v", cliErr)
	}
}

// hospitalParts writes the hospital sample of 6000 records in four CSV parts of a
// folder, the whole file beside it, and testdata/hospital-tests.yaml with its output section
// replaced by output (none: as it is).
func hospitalParts(t *testing.T, output string) (cfgPath, whole, parts string) {
	t.Helper()
	dir := t.TempDir()
	var buf bytes.Buffer
	if err := sample.Hospital(&buf, 6000, 3); err != nil {
		t.Fatal(err)
	}
	whole = filepath.Join(dir, "in.csv")
	if err := os.WriteFile(whole, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	parts = filepath.Join(dir, "parts")
	os.Mkdir(parts, 0o700)
	for i, n := 1, 0; i < len(rows); i, n = i+1500, n+1 {
		body := rows[0] + "\n" + strings.Join(rows[i:min(i+1500, len(rows))], "\n") + "\n"
		if err := os.WriteFile(filepath.Join(parts, "part-"+string(rune('a'+n))+".csv"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile("../../testdata/hospital-tests.yaml")
	if err != nil {
		t.Fatal(err)
	}
	hier, _ := filepath.Abs("../../testdata/hierarchies")
	text := testfiles.ReplaceAll(t, string(raw), "hierarchies/", hier+"/")
	if output != "" {
		text = testfiles.Replace(t, text, "output: {format: csv}", output)
	}
	cfgPath = filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(cfgPath, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfgPath, whole, parts
}

// TestReleaseOnPrismBuiltHierarchies: the hospital sample (intervals, a mask and dates
// built from the values, a hierarchy file, identifiers dropped, insensitive columns
// kept) in four parts: Beam gathers every part's values for the built hierarchies and
// publishes the same records at the same node as the CLI's release of the whole file;
// so it does under ncp, which measures age by its values, with minimum levels on the
// built hierarchies (the table counted at them holds fewer classes).
func TestReleaseOnPrismBuiltHierarchies(t *testing.T) {
	for _, search := range []string{"", "search: {metric: ncp, min-levels: {age: 1, admitted: 1}}"} {
		t.Run(search, func(t *testing.T) {
			cfgPath, whole, parts := hospitalParts(t, "")
			if search != "" {
				raw, _ := os.ReadFile(cfgPath)
				os.WriteFile(cfgPath, []byte(testfiles.Replace(t, string(raw), "search: {algorithm: optimal, metric: loss}", search)), 0o600)
			}
			got, _, _, _ := againstCLI(t, cfgPath, parts, whole)
			t.Logf("%d classes counted; node %v, %s %g", got.Classes.Len(), got.Result.Levels, got.Result.Metric, got.Result.Value)
		})
	}
}

// sameRelease fails t unless a release part's metadata (got) is the CLI's (want),
// every key, the time of writing aside (which both must record).
func sameRelease(t *testing.T, part string, got, want map[string]string) {
	t.Helper()
	const created = "sanitize.created_utc"
	if _, err := time.Parse(time.RFC3339, got[created]); err != nil || want[created] == "" {
		t.Errorf("%s: %s %q, the CLI's %q", part, created, got[created], want[created])
	}
	got, want = maps.Clone(got), maps.Clone(want)
	delete(got, created)
	delete(want, created)
	if want["sanitize.k"] == "" || want["sanitize.node"] == "" || !maps.Equal(got, want) {
		t.Errorf("%s: metadata\n%v\nthe CLI's\n%v", part, got, want)
	}
}

// TestReleaseOnPrismParquetOutput: Adult in seven CSV parts released on Prism with
// output.format parquet is seven Parquet parts (part-00000.parquet, …) holding the
// same records, columns and types as the CLI's Parquet release of the whole file, at
// the same node, with l-diversity and suppression; every part's key-value metadata is
// the CLI's file's (the release parameters, the configuration's digest, the node, the
// version, the stored Arrow schema), its time of writing aside; and the CLI's check
// passes on the parts (Release ran it before publishing).
func TestReleaseOnPrismParquetOutput(t *testing.T) {
	cfgPath, whole, parts := adultParts(t, 5000, "privacy: {k: 5, suppression: 0.04, l-diversity: {column: occupation, variant: distinct, l: 2}}")
	raw, _ := os.ReadFile(cfgPath)
	os.WriteFile(cfgPath, []byte(testfiles.Replace(t, string(raw), "output: {csv: {separator: \";\"}}", "output: {format: parquet}")), 0o600)
	got, rep, out, cliOut := againstCLI(t, cfgPath, parts, whole)
	want := testfiles.ParquetMetadata(t, cliOut)
	for i := range 7 {
		part := filepath.Join(out, release.Engine{}.PartName(i, 7, "parquet"))
		sameRelease(t, part, testfiles.ParquetMetadata(t, part), want)
	}
	if got.Measured.Suppressed != rep.Suppressed || rep.Suppressed == 0 {
		t.Errorf("%d suppressed, the CLI %d", got.Measured.Suppressed, rep.Suppressed)
	}
	cfg, err := schema.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := release.Check(context.Background(), cfg, job.Options{Input: parts, Output: out}); err != nil {
		t.Errorf("sanitize check of the published parts: %v", err)
	}
}

// TestReleaseOnPrismArrowOutput: the hospital sample in four CSV parts released on
// Prism with output.format arrow is four Arrow IPC files holding the same records,
// columns and types as the CLI's Arrow release of the whole file, each carrying the
// CLI's schema metadata but the time of writing.
func TestReleaseOnPrismArrowOutput(t *testing.T) {
	cfgPath, whole, parts := hospitalParts(t, "output: {format: arrow}")
	_, _, out, cliOut := againstCLI(t, cfgPath, parts, whole)
	meta := func(path string) map[string]string {
		src, err := table.Open(path, "arrow", schema.CSV{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		return src.Metadata()
	}
	want := meta(cliOut)
	for i := range 4 {
		part := filepath.Join(out, release.Engine{}.PartName(i, 4, "arrow"))
		sameRelease(t, part, meta(part), want)
	}
}

// TestReleaseOnPrismTypedParquet: Parquet parts whose kept columns have types the CLI
// keeps (a float, a timestamp with a zone, a 16-bit integer) and nulls (in insensitive
// columns) are released on Prism, without output.format, as Parquet parts (the
// input's format, as the CLI's release in parts) holding the same records of the same
// types, nulls as nulls, as the CLI's release of the same parts.
func TestReleaseOnPrismTypedParquet(t *testing.T) {
	dir := t.TempDir()
	parts := filepath.Join(dir, "parts")
	os.Mkdir(parts, 0o700)
	fields := []arrow.Field{
		{Name: "id", Type: arrow.BinaryTypes.String},
		{Name: "age", Type: arrow.PrimitiveTypes.Int64},
		{Name: "sex", Type: arrow.BinaryTypes.String},
		{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "seen", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "visits", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
		{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true},
	}
	for p := range 3 {
		rb := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
		for i := range 700 {
			r := p*700 + i
			rb.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("p%d", r))
			rb.Field(1).(*array.Int64Builder).Append(int64(18 + r*7919%60))
			rb.Field(2).(*array.StringBuilder).Append([]string{"F", "M"}[r%2])
			if r%11 == 0 {
				rb.Field(3).AppendNull()
				rb.Field(4).AppendNull()
				rb.Field(5).AppendNull()
				rb.Field(6).AppendNull()
			} else {
				rb.Field(3).(*array.Float64Builder).Append(float64(r) / 7)
				rb.Field(4).(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_000_000_000_000 + int64(r)*86_400_000_001))
				rb.Field(5).(*array.Int16Builder).Append(int16(r%300 - 150))
				rb.Field(6).(*array.StringBuilder).Append([]string{"", "a,b", "\"q\""}[r%3])
			}
		}
		rec := rb.NewRecordBatch()
		testfiles.WriteArrowParquet(t, filepath.Join(parts, fmt.Sprintf("part-%d.parquet", p)), rec, nil, pqarrow.WithStoreSchema())
		rec.Release()
		rb.Release()
	}
	hier, _ := filepath.Abs("../../testdata/hierarchies")
	cfgPath := filepath.Join(dir, "c.yaml")
	text := fmt.Sprintf(`dataset: typed
input: {format: parquet}
columns:
  id:     {role: identifier}
  age:    {role: quasi, type: integer, hierarchy: {intervals: [5, 10, 20]}}
  sex:    {role: quasi, hierarchy: {file: %s/sex.csv}}
  score:  {role: insensitive}
  seen:   {role: insensitive}
  visits: {role: insensitive}
  note:   {role: insensitive}
privacy: {k: 4, suppression: 0.02}
`, hier)
	if err := os.WriteFile(cfgPath, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, out, _ := againstCLI(t, cfgPath, parts, parts)
	_, recs := tableRecords(t, out, "parquet")
	if nulls := strings.Count(strings.Join(recs, "\n"), "\x00null"); nulls == 0 {
		t.Errorf("no null in the release")
	}
}

// TestReleaseOnPrismParquetParts: the hospital sample written as four Parquet parts
// (sanitize gen's writer) is released on Prism as the same records as the CLI's
// release of the same parts.
func TestReleaseOnPrismParquetParts(t *testing.T) {
	dir := t.TempDir()
	parts := filepath.Join(dir, "parts")
	os.Mkdir(parts, 0o700)
	for i := range 4 {
		if err := gen.Hospital(filepath.Join(parts, fmt.Sprintf("part-%d.parquet", i)), "parquet", 1200, uint64(10+i), job.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile("../../testdata/hospital-tests.yaml")
	if err != nil {
		t.Fatal(err)
	}
	hier, _ := filepath.Abs("../../testdata/hierarchies")
	text := testfiles.ReplaceAll(t, string(raw), "hierarchies/", hier+"/")
	text = testfiles.Replace(t, text, "input: {format: csv, csv: {separator: \",\", header: true}}", "input: {format: parquet}")
	cfgPath := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(cfgPath, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	againstCLI(t, cfgPath, parts, parts)
}

// TestReleaseOnPrismArrowStreamParts: the hospital sample as three Arrow IPC stream
// parts, which give no bound on their records without reading them, is released on
// Prism as Arrow IPC stream parts (the input's format) holding the same records as the
// CLI's release of the same parts; the estimate's upper bound, from the leaves alone,
// still bounds the class table.
func TestReleaseOnPrismArrowStreamParts(t *testing.T) {
	dir := t.TempDir()
	parts := filepath.Join(dir, "parts")
	os.Mkdir(parts, 0o700)
	for i := range 3 {
		if err := gen.Hospital(filepath.Join(parts, fmt.Sprintf("part-%d.arrows", i)), "arrows", 1000, uint64(20+i), job.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile("../../testdata/hospital-tests.yaml")
	if err != nil {
		t.Fatal(err)
	}
	hier, _ := filepath.Abs("../../testdata/hierarchies")
	text := testfiles.ReplaceAll(t, string(raw), "hierarchies/", hier+"/")
	text = testfiles.Replace(t, text, "input: {format: csv, csv: {separator: \",\", header: true}}", "input: {format: arrows}")
	text = testfiles.Replace(t, text, "output: {format: csv}\n", "")
	cfgPath := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(cfgPath, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	got, _, _, _ := againstCLI(t, cfgPath, parts, parts)
	if got.Estimate.Records != -1 {
		t.Errorf("the estimate bounds the records of Arrow IPC streams: %d", got.Estimate.Records)
	}
}

// warnings sets slog's default logger to one that keeps warnings and errors, until
// the test ends.
func warnings(t *testing.T) *bytes.Buffer {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})))
	t.Cleanup(func() { slog.SetDefault(old) })
	return &buf
}

// counting is onPrism, counting the pipelines it runs in runs.
func counting(runs *int) Execute {
	return func(ctx context.Context, p *beam.Pipeline) error {
		*runs++
		return onPrism(ctx, p)
	}
}

// TestReleaseOnPrismClassTableBound: a merged class table past Job.MaxClassTable that
// the estimate cannot prove to be (Adult's hierarchies are files: nothing bounds its
// classes from below) is warned of before the count, then refused as bad input naming
// the bound while the parts are merged, and nothing is published; with a bound the
// table fits in but the estimate's upper bound does not, the warning is given and the
// release goes on; with one past the upper bound, no warning.
func TestReleaseOnPrismClassTableBound(t *testing.T) {
	cfgPath, _, parts := adultParts(t, 5000, "privacy: {k: 5}")
	j, err := NewJob(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	log := warnings(t)
	runs := 0
	j.MaxClassTable = 100 << 10 // Adult's table takes about 0.7 MiB
	_, err = Release(context.Background(), j, job.Options{Input: parts, Output: filepath.Join(dir, "release")}, counting(&runs))
	if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "--max-class-table") || !strings.Contains(err.Error(), "classes or more") || runs != 1 {
		t.Fatalf("got %v after %d pipelines", err, runs)
	}
	if !strings.Contains(log.String(), "--max-class-table") {
		t.Errorf("no warning: %q", log)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left %v behind", entries)
	}
	j.MaxClassTable = 8 << 20
	got, err := Release(context.Background(), j, job.Options{Input: parts, Output: filepath.Join(dir, "release")}, onPrism)
	if err != nil {
		t.Fatal(err)
	}
	b, est := got.Classes.Bytes(), got.Estimate.Classes
	if est.AtLeast >= b || b >= est.AtMost {
		t.Fatalf("the class table takes %d bytes, estimated %d to %d", b, est.AtLeast, est.AtMost)
	}
	for _, bound := range []int64{(b + est.AtMost) / 2, est.AtMost} {
		log.Reset()
		j.MaxClassTable = bound
		if _, err := Release(context.Background(), j, job.Options{Input: parts, Output: filepath.Join(t.TempDir(), "release")}, onPrism); err != nil {
			t.Fatal(err)
		}
		if warned := strings.Contains(log.String(), "--max-class-table"); warned != (bound < est.AtMost) {
			t.Errorf("a bound of %d bytes for a table of %d estimated at most %d: warned %v: %q", bound, b, est.AtMost, warned, log)
		}
	}
}

// TestReleaseOnPrismClassTableEstimate: the hospital sample's dates, whose hierarchy
// is built from the values gathered, give the class table at least as many classes as
// there are dates; a Job.MaxClassTable below what those take is refused as bad input
// before the parts are counted (only the pipeline that gathers the values ran), naming
// the bound and the column, and nothing is published; one above goes on, to the
// merge's exact check.
func TestReleaseOnPrismClassTableEstimate(t *testing.T) {
	cfgPath, _, parts := hospitalParts(t, "")
	j, err := NewJob(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	runs := 0
	j.MaxClassTable = 32 << 10 // 2045 dates: at least 40 KB
	_, err = Release(context.Background(), j, job.Options{Input: parts, Output: filepath.Join(dir, "release")}, counting(&runs))
	if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "--max-class-table") || !strings.Contains(err.Error(), "refused before counting") || !strings.Contains(err.Error(), `column "admitted"`) || runs != 1 {
		t.Fatalf("got %v after %d pipelines", err, runs)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left %v behind", entries)
	}
	runs = 0
	j.MaxClassTable = 64 << 10 // above the lower bound, below the table's 120 KB
	_, err = Release(context.Background(), j, job.Options{Input: parts, Output: filepath.Join(dir, "release")}, counting(&runs))
	if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "classes or more") || runs != 2 {
		t.Fatalf("got %v after %d pipelines", err, runs)
	}
}

// combinations counts, from the strings of a CSV file (sep its separator, a header
// row first) and ARX hierarchy files read here, the distinct combinations of the named
// columns' values at the given levels (0: the values themselves): the classes a table
// counted at those levels must have.
func combinations(t *testing.T, path string, sep rune, hierarchies map[string]string, levels map[string]int) int {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(strings.ReplaceAll(string(raw), "\r\n", "\n")), "\n")
	header := strings.Split(rows[0], string(sep))
	label := map[string]map[string]string{} // column → value → its label at the level
	at := map[string]int{}
	for name, file := range hierarchies {
		at[name] = slices.Index(header, name)
		label[name] = map[string]string{}
		h, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(h)), "\n") {
			fields := strings.Split(line, ";")
			label[name][fields[0]] = fields[levels[name]]
		}
	}
	seen := map[string]bool{}
	for _, row := range rows[1:] {
		fields := strings.Split(row, string(sep))
		var key []string
		for _, name := range slices.Sorted(maps.Keys(hierarchies)) {
			l, ok := label[name][fields[at[name]]]
			if !ok {
				t.Fatalf("%s: column %s: a value its hierarchy does not list", path, name)
			}
			key = append(key, l)
		}
		seen[strings.Join(key, "\x1f")] = true
	}
	return len(seen)
}

// TestReleaseOnPrismMinLevels: with search.min-levels, the workers count Adult's seven
// parts at those levels, so the class table the driver merges and searches holds one
// class per combination of the quasi-identifiers' values there (counted here from the
// file's strings and the hierarchy files: fewer than at the leaves), and Beam still
// publishes the same records at the same node as the CLI's release of the whole file
// with the same bounds: for k with suppression under loss, under entropy (which reads
// the records per original leaf, sent beside the table) with l-diversity, and under
// ncp with t-closeness and a maximum level.
func TestReleaseOnPrismMinLevels(t *testing.T) {
	for _, c := range []struct {
		privacy string
		levels  map[string]int
	}{
		{"privacy: {k: 5, suppression: 0.02}\nsearch: {min-levels: {age: 1, native-country: 1}}", map[string]int{"age": 1, "native-country": 1}},
		{"privacy: {k: 5, suppression: 0.04, l-diversity: {column: occupation, variant: distinct, l: 2}}\nsearch: {metric: entropy, min-levels: {age: 2, education: 1}}", map[string]int{"age": 2, "education": 1}},
		{"privacy: {k: 3, suppression: 0.05, t-closeness: {column: occupation, t: 0.3}}\nsearch: {metric: ncp, min-levels: {age: 1, marital-status: 1, workclass: 1}, max-levels: {race: 0}}", map[string]int{"age": 1, "marital-status": 1, "workclass": 1}},
	} {
		t.Run(c.privacy, func(t *testing.T) {
			cfgPath, whole, parts := adultParts(t, 5000, c.privacy)
			got, _, _, _ := againstCLI(t, cfgPath, parts, whole)
			abs, _ := filepath.Abs(adultDir)
			hier := map[string]string{}
			for _, q := range adultQI {
				hier[q] = filepath.Join(abs, "adult_hierarchy_"+q+".csv")
			}
			want, leaves := combinations(t, whole, ';', hier, c.levels), combinations(t, whole, ';', hier, nil)
			if got.Classes.Len() != want || want >= leaves {
				t.Errorf("the driver's class table holds %d classes; the records have %d combinations at the minimum levels, %d at the leaves", got.Classes.Len(), want, leaves)
			}
			for i, q := range adultQI {
				if got.Result.Levels[i] < c.levels[q] {
					t.Errorf("node %v releases %s below its minimum level %d", got.Result.Levels, q, c.levels[q])
				}
			}
			t.Logf("%d classes at the minimum levels, %d at the leaves; node %v", got.Classes.Len(), leaves, got.Result.Levels)
		})
	}
}

// TestReleaseOnPrismLevelBoundsRefused: a minimum level above its hierarchy's top is
// bad input naming the key, and bounds no node within meets are unattainable (exit 3),
// as in the CLI; neither publishes anything.
func TestReleaseOnPrismLevelBoundsRefused(t *testing.T) {
	for _, c := range []struct {
		privacy string
		kind    error
		says    string
	}{
		{"privacy: {k: 5}\nsearch: {min-levels: {age: 9}}", fault.ErrBadInput, "search.min-levels.age: 9 is above the hierarchy's top level"},
		{"privacy: {k: 50, suppression: 0}\nsearch: {max-levels: {age: 0, education: 0, native-country: 0, marital-status: 0}}", fault.ErrUnattainable, ""},
	} {
		t.Run(c.privacy, func(t *testing.T) {
			cfgPath, _, parts := adultParts(t, 5000, c.privacy)
			releaseFails(t, cfgPath, parts, c.kind, c.says, "")
		})
	}
}

// TestReleaseOnPrismResearchSubset: Adult in seven parts with a research subset (one
// record in eight, by a flag column) under δ-presence and k-map: Beam counts the
// subset's classes and the population's, and publishes the same records at the same
// node as the CLI's release of the whole file; the CLI's check passed the parts. So
// too under the journalist's profitability with an attack (a class decided by its
// population count and its information loss).
func TestReleaseOnPrismResearchSubset(t *testing.T) {
	for _, privacy := range []string{
		"privacy: {k: 2, suppression: 0.05, subset: {column: in_study}, delta-presence: {min: 0.02, max: 0.5}, k-map: {k: 6}}",
		"privacy: {k: 1, suppression: 0.05, subset: {column: in_study}, profitability: {attacker: journalist, attack: true, publisher-loss: 3000, adversary-gain: 120, adversary-cost: 20}}",
	} {
		t.Run(privacy, func(t *testing.T) { releaseSubsetOnPrism(t, privacy) })
	}
}

// releaseSubsetOnPrism is TestReleaseOnPrismResearchSubset under privacy.
func releaseSubsetOnPrism(t *testing.T, privacy string) {
	cfgPath, whole, parts := adultParts(t, 5000, privacy)
	// The flag: a column added to the whole file and to every part.
	flag := func(path string, first int) int {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ls := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
		ls[0] += ";in_study"
		for i := 1; i < len(ls); i++ {
			f := "no"
			if ((first+i)*2654435761)%8 == 0 {
				f = "yes"
			}
			ls[i] += ";" + f
		}
		if err := os.WriteFile(path, []byte(strings.Join(ls, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return len(ls) - 1
	}
	flag(whole, 0)
	entries, _ := os.ReadDir(parts)
	first := 0
	for _, e := range entries {
		first += flag(filepath.Join(parts, e.Name()), first)
	}
	raw, _ := os.ReadFile(cfgPath)
	os.WriteFile(cfgPath, []byte(testfiles.Replace(t, string(raw), "  occupation: {role: insensitive}\n", "  occupation: {role: insensitive}\n  in_study: {role: identifier}\n")), 0o600)
	got, rep, _, _ := againstCLI(t, cfgPath, parts, whole)
	if got.Population == nil || got.Population.Records() != 30162 || got.Classes.Records() != rep.Input.Rows {
		t.Errorf("Beam counted a subset of %d and a population of %v; the CLI's subset is %d", got.Classes.Records(), got.Population, rep.Input.Rows)
	}
	t.Logf("node %v, %d released of %d, %d suppressed", got.Result.Levels, rep.Output.Rows, rep.Input.Rows, rep.Suppressed)
}
