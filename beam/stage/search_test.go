package stage

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"sanitizer/fault"
	"sanitizer/job"
	"sanitizer/release"
	"sanitizer/schema"
)

const adultDir = "../../../shared/data/adult"

var adultQI = []string{"age", "education", "marital-status", "native-country", "race", "salary-class", "sex", "workclass"}

func onPrism(ctx context.Context, p *beam.Pipeline) error {
	_, err := prism.Execute(ctx, p)
	return err
}

// adultParts writes Adult in parts of about size records into a folder, the whole
// table beside it, and a configuration for it; it skips when Adult is absent.
func adultParts(t *testing.T, size int, privacy string) (cfgPath, whole, parts string) {
	t.Helper()
	abs, err := filepath.Abs(adultDir)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(abs, "adult.csv"))
	if err != nil {
		t.Skipf("Adult data not available: %v", err)
	}
	dir := t.TempDir()
	lines := strings.Split(strings.TrimSpace(strings.ReplaceAll(string(raw), "\r\n", "\n")), "\n")
	parts = filepath.Join(dir, "parts")
	if err := os.Mkdir(parts, 0o700); err != nil {
		t.Fatal(err)
	}
	for i, n := 1, 0; i < len(lines); i, n = i+size, n+1 {
		body := lines[0] + "\n" + strings.Join(lines[i:min(i+size, len(lines))], "\n") + "\n"
		if err := os.WriteFile(filepath.Join(parts, fmt.Sprintf("part-%03d.csv", n)), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	whole = filepath.Join(dir, "adult.csv")
	if err := os.WriteFile(whole, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "dataset: adult\ninput: {csv: {separator: \";\"}}\noutput: {csv: {separator: \";\"}}\ncolumns:\n")
	for _, q := range adultQI {
		fmt.Fprintf(&b, "  %s: {role: quasi, hierarchy: {file: %q}}\n", q, filepath.Join(abs, "adult_hierarchy_"+q+".csv"))
	}
	role := "insensitive"
	if strings.Contains(privacy, "occupation") { // a model protects it
		role = "sensitive"
	}
	fmt.Fprintf(&b, "  occupation: {role: %s}\n%s\n", role, privacy)
	cfgPath = filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(cfgPath, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfgPath, whole, parts
}

// TestSearchOnPrismMatchesCLI: Adult in seven parts, counted on Beam's embedded runner
// and merged there, holds the CLI's records and, searched, gives the node, the
// suppression and the value of the CLI's release of the whole file, for k alone, with
// suppression and under another objective.
func TestSearchOnPrismMatchesCLI(t *testing.T) {
	for _, privacy := range []string{
		"privacy: {k: 5, suppression: 0}",
		"privacy: {k: 10, suppression: 0.05}",
		"privacy: {k: 3, suppression: 0.02}\nsearch: {metric: entropy}",
	} {
		t.Run(privacy, func(t *testing.T) {
			cfgPath, whole, parts := adultParts(t, 5000, privacy)
			j, err := NewJob(cfgPath)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Search(context.Background(), j, parts, t.TempDir(), onPrism)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := schema.Load(cfgPath)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := release.Release(context.Background(), cfg, job.Options{Input: whole, Output: filepath.Join(t.TempDir(), "r.csv")})
			if err != nil {
				t.Fatal(err)
			}
			node := make([]int, len(rep.Node))
			for i, n := range rep.Node {
				node[i] = n.Level
			}
			if got.Classes.Records() != rep.Input.Rows || !slices.Equal(got.Result.Levels, node) || got.Result.Suppressed != rep.Suppressed || got.Result.Value != rep.Metric.Value {
				t.Errorf("Beam: %d records, node %v, %d suppressed, %s %g; CLI: %d, %v, %d, %g",
					got.Classes.Records(), got.Result.Levels, got.Result.Suppressed, got.Result.Metric, got.Result.Value, rep.Input.Rows, node, rep.Suppressed, rep.Metric.Value)
			}
		})
	}
}

// TestSearchOnPrismBadPart: a value a hierarchy does not list fails the whole run
// with bad input naming the part, the row and the column, never the value.
func TestSearchOnPrismBadPart(t *testing.T) {
	cfgPath, _, parts := adultParts(t, 10000, "privacy: {k: 5}")
	bad := filepath.Join(parts, "part-001.csv")
	raw, err := os.ReadFile(bad)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	f := strings.Split(lines[7], ";")
	f[1] = "SECRET-AGE"
	lines[7] = strings.Join(f, ";")
	if err := os.WriteFile(bad, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	j, err := NewJob(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Search(context.Background(), j, parts, t.TempDir(), onPrism)
	if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), `part-001.csv: row 7: column "age": value not listed`) || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("got %v", err)
	}
}

func TestMain(m *testing.M) {
	flag.Parse()
	beam.Init()
	os.Exit(m.Run())
}
