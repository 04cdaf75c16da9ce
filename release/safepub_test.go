package release

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/report"
	"sanitizer/safepub"
	"sanitizer/schema"
)

// arxQI is the quasi-identifiers of ARX's differential privacy tests on Adult: every
// column, in the file's order.
var arxQI = []string{"sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation", "salary-class"}

// dpConfig writes a configuration of Adult's nine columns as quasi-identifiers under
// privacy (YAML of the privacy section's content) and extra (more sections) into dir,
// and loads it.
func dpConfig(t testing.TB, abs, dir, privacy, extra string) *schema.Config {
	t.Helper()
	return writeAdultConfig(t, abs, filepath.Join(dir, "dp.yaml"), arxQI, "privacy: {"+privacy+"}\n"+extra)
}

// TestReleaseDPARXCases: ARX's seven fixed-scheme differential privacy cases on Adult
// (TestAnonymizationDifferentialPrivacy, cases 0–5 and 18) release ARX's node with
// ARX's k less one (ARX's loop steps once past the least k); the release is verified
// against its sample, check passes it from the file and the report, every class holds
// k records, and the report states the guarantee.
func TestReleaseDPARXCases(t *testing.T) {
	abs := needAdult(t)
	lm := []int{0, 2, 0, 1, 1, 1, 1, 1, 0}
	for _, c := range []struct {
		epsilon, delta string
		degree         string
		node           []int
		arxK           int
	}{
		{"2", "1e-5", "low-medium", lm, 114},
		{"1.5", "1e-6", "high", []int{1, 3, 1, 2, 2, 2, 2, 2, 1}, 100},
		{"0.6931471805599453", "1e-7", "low-medium", lm, 81},                            // ln 2
		{"1.0986122886681098", "1e-8", "medium", []int{1, 2, 1, 1, 2, 1, 1, 1, 1}, 109}, // ln 3
		{"2", "1e-5", "medium-high", []int{1, 2, 1, 1, 2, 1, 1, 1, 1}, 114},
		{"1.5", "1e-6", "low-medium", lm, 100},
		{"0.01", "1e-9", "low-medium", lm, 96},
	} {
		t.Run(c.epsilon+"/"+c.delta+"/"+c.degree, func(t *testing.T) {
			dir := t.TempDir()
			cfg := dpConfig(t, abs, dir, fmt.Sprintf("differential-privacy: {epsilon: %s, delta: %s, degree: %s}", c.epsilon, c.delta, c.degree), "")
			in, out, rp := filepath.Join(abs, "adult.csv"), filepath.Join(dir, "release.csv"), filepath.Join(dir, "report.json")
			rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out, Report: rp})
			if err != nil {
				t.Fatal(err)
			}
			d := rep.DifferentialPrivacy
			if d == nil || d.K != c.arxK-1 || rep.Model.K != d.K || d.Chosen != report.DPChoice("degree "+c.degree) || d.Guarantee == "" || d.DeltaBound > d.Delta {
				t.Fatalf("report's differential privacy %+v, model k %d; want k %d (ARX's %d less one)", d, rep.Model.K, c.arxK-1, c.arxK)
			}
			var node []int
			for _, n := range rep.Node {
				node = append(node, n.Level)
			}
			if !slices.Equal(node, c.node) {
				t.Errorf("node %v, ARX's %v", node, c.node)
			}
			if rep.Verified.Rows > 0 && rep.Verified.MinClass < d.K {
				t.Errorf("smallest class %d, k %d", rep.Verified.MinClass, d.K)
			}
			m, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out, Report: rp})
			if err != nil {
				t.Fatalf("check: %v", err)
			}
			if m.Rows != rep.Output.Rows || m.RequiredK != d.K {
				t.Errorf("check counted %d records against k %d; the release %d, k %d", m.Rows, m.RequiredK, rep.Output.Rows, d.K)
			}
		})
	}
}

// TestReleaseDPSearch: a release whose node SafePub's search drew, under each score,
// is verified against its sample and written in the order of its values (in parts
// too: each part in order, and the parts in order); its report records the guarantee;
// check passes it with the report, refuses it without (exit 2), and refuses it under
// another ε.
func TestReleaseDPSearch(t *testing.T) {
	abs := needAdult(t)
	in := filepath.Join(abs, "adult.csv")
	for _, metric := range []string{"loss", "precision", "discernibility", "entropy", "aecs"} {
		t.Run(metric, func(t *testing.T) {
			dir := t.TempDir()
			priv := "differential-privacy: {epsilon: 2, delta: 1e-5, search: {epsilon: 1, steps: 10}}"
			cfg := dpConfig(t, abs, dir, priv, "search: {metric: "+metric+"}\n")
			out, rp := filepath.Join(dir, "release.csv"), filepath.Join(dir, "report.json")
			rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out, Report: rp})
			if err != nil {
				t.Fatal(err)
			}
			d := rep.DifferentialPrivacy
			if d.Chosen != report.DPSearched || d.EpsilonSearch != 1 || d.EpsilonAnonymization != 1 || d.EpsilonOnSample <= 1 || d.K != 61 || d.StepsTaken != 10 || d.Pivots < 2 || string(d.Score) != metric {
				t.Fatalf("report's differential privacy %+v", d)
			}
			checkValueOrder(t, out)
			if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out, Report: rp}); err != nil {
				t.Fatalf("check with the report: %v", err)
			}
			if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out}); !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "--report") {
				t.Errorf("check without the report: %v, want exit 2 asking for --report", err)
			}
			other := dpConfig(t, abs, t.TempDir(), testfiles.Replace(t, priv, "epsilon: 2", "epsilon: 3"), "search: {metric: "+metric+"}\n")
			if _, err := Check(context.Background(), other, job.Options{Input: in, Output: out, Report: rp}); !errors.Is(err, fault.ErrUnattainable) {
				t.Errorf("check under ε=3 of a release made at ε=2: %v, want a violation", err)
			}
		})
	}
	parts := filepath.Join(t.TempDir(), "parts") + "/"
	cfg := dpConfig(t, abs, t.TempDir(), "differential-privacy: {epsilon: 2, delta: 1e-5, degree: medium}", "")
	if _, err := Release(context.Background(), cfg, job.Options{Input: in, Output: parts}); err != nil {
		t.Fatal(err)
	}
	var all [][]string
	for _, name := range testfiles.Names(t, parts) {
		_, rows := testfiles.ReadCSV(t, filepath.Join(parts, name))
		all = append(all, rows...)
	}
	if len(all) == 0 || !slices.IsSortedFunc(all, slices.Compare) {
		t.Errorf("a release in parts: %d records, not in the order of their values across its parts", len(all))
	}
}

// checkValueOrder fails t unless the CSV release at path holds records in the order
// of their values.
func checkValueOrder(t *testing.T, path string) {
	t.Helper()
	_, rows := testfiles.ReadCSV(t, path)
	if len(rows) == 0 || !slices.IsSortedFunc(rows, slices.Compare) {
		t.Errorf("%s: %d records, not in the order of their values", path, len(rows))
	}
}

// TestReleaseDPVerifierRefuses: a release that is not its sample's function is never
// published: a record not drawn released into its class, or a drawn class of k
// records or more left out whole, each made consistent with the run's own counts so
// that only the check against the sample can see it.
func TestReleaseDPVerifierRefuses(t *testing.T) {
	abs := needAdult(t)
	in := filepath.Join(abs, "adult.csv")
	for _, c := range []struct {
		name   string
		tamper func(t *testing.T, r *run)
	}{
		{"undrawn released", func(t *testing.T, r *run) {
			sizes := map[int32]int{}
			for _, c := range r.class {
				if c >= 0 {
					sizes[c]++
				}
			}
			for i, drawn := range r.dp.sampled {
				if drawn {
					continue
				}
				for j, c := range r.class {
					// Into a class larger than the smallest: the run's own counts stay
					// the written file's, so that the sample's check is what refuses it.
					if c >= 0 && sizes[c] > r.res.MinClass && sameLeaves(r, i, j) {
						r.class[i], r.suppressed[i], r.p.leftOut[i] = c, false, false
						r.res.Suppressed--
						return
					}
				}
			}
			t.Fatal("no record not drawn shares a released record's values")
		}},
		{"class of k left out", func(t *testing.T, r *run) {
			sizes := map[int32]int{}
			for _, c := range r.class {
				if c >= 0 {
					sizes[c]++
				}
			}
			for victim, n := range sizes {
				if n > r.res.MinClass { // the smallest class stays
					for i, c := range r.class {
						if c == victim {
							r.class[i], r.suppressed[i], r.p.leftOut[i] = -1, true, true
						}
					}
					r.res.Suppressed += n
					r.res.Classes--
					return
				}
			}
			t.Fatal("no class larger than the smallest")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tamperSample = func(r *run) { c.tamper(t, r) }
			defer func() { tamperSample = nil }()
			dir := t.TempDir()
			cfg := dpConfig(t, abs, dir, "differential-privacy: {epsilon: 2, delta: 1e-5, degree: low-medium}", "")
			out := filepath.Join(dir, "release.csv")
			_, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
			if !errors.Is(err, fault.ErrInternal) || !strings.Contains(err.Error(), "failed verification") {
				t.Fatalf("a tampered release: %v, want the verifier to refuse it", err)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a release that failed verification was published: %v", err)
			}
		})
	}
}

// sameLeaves reports whether records i and j of the run's table hold the same
// quasi-identifier values.
func sameLeaves(r *run, i, j int) bool {
	for _, c := range r.t.Columns {
		if c.Codes.At(i) != c.Codes.At(j) {
			return false
		}
	}
	return true
}

// TestReleaseDPRefused: what a SafePub release cannot honour is exit 2 naming its key
// (or flag), and an over-spent budget exit 3, before anything is read; nothing is
// written, and the ledger is left as it was.
func TestReleaseDPRefused(t *testing.T) {
	abs := needAdult(t)
	in := filepath.Join(abs, "adult.csv")
	const fixed = "differential-privacy: {epsilon: 1, delta: 1e-6, degree: low}"
	for _, c := range []struct {
		name, privacy, extra string
		opt                  job.Options
		kind                 error
		says                 string
	}{
		{"mondrian", fixed, "search: {algorithm: mondrian}\n", job.Options{}, fault.ErrBadInput, "search.algorithm: not with privacy.differential-privacy"},
		{"local recoding", fixed, "search: {local-recoding: {}}\n", job.Options{}, fault.ErrBadInput, "search.local-recoding: not with"},
		{"min-levels", fixed, "search: {min-levels: {age: 1}}\n", job.Options{}, fault.ErrBadInput, "search.min-levels: not with"},
		{"series", fixed, "", job.Options{Series: "state.json"}, fault.ErrBadInput, "privacy.differential-privacy: --series"},
		{"score", "differential-privacy: {epsilon: 1, delta: 1e-6, search: {epsilon: 0.1}}", "search: {metric: ncp}\n", job.Options{}, fault.ErrBadInput, "search.metric: \"ncp\" has no score"},
		{"level above top", "differential-privacy: {epsilon: 1, delta: 1e-6, generalization: {sex: 0, age: 5, race: 0, marital-status: 0, education: 0, native-country: 0, workclass: 0, occupation: 0, salary-class: 0}}", "", job.Options{}, fault.ErrBadInput, "privacy.differential-privacy.generalization.age: 5 is above the hierarchy's top level, 4"},
		{"ledger without dp", "k: 5", "", job.Options{Ledger: "ledger.json"}, fault.ErrBadInput, "--ledger: only a release under privacy.differential-privacy"},
		{"ledger without totals", fixed, "", job.Options{Ledger: "ledger.json"}, fault.ErrBadInput, "privacy.differential-privacy: --ledger needs the dataset's budget"},
		{"over budget", fixed, "dp: {epsilon-total: 0.5, delta-total: 1e-3}\n", job.Options{Ledger: "ledger.json"}, fault.ErrUnattainable, "over the totals"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := dpConfig(t, abs, dir, c.privacy, c.extra)
			opt := c.opt
			opt.Input, opt.Output = in, filepath.Join(dir, cmp.Or(opt.Output, "release.csv"))
			if opt.Ledger != "" {
				opt.Ledger = filepath.Join(dir, opt.Ledger)
			}
			if opt.Series != "" {
				opt.Series = filepath.Join(dir, opt.Series)
			}
			_, err := Release(context.Background(), cfg, opt)
			if !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("%v, want %v saying %q", err, c.kind, c.says)
			}
			if names := testfiles.Names(t, dir); !slices.Equal(names, []string{"dp.yaml"}) {
				t.Errorf("the refused run left %v", names)
			}
		})
	}
}

// TestReleaseDPLedger: a release charges ε and δ to its dataset's account after it is
// verified; the next release that would pass the totals is refused (exit 3) before
// reading, with nothing written and the ledger as it was.
func TestReleaseDPLedger(t *testing.T) {
	abs := needAdult(t)
	in := filepath.Join(abs, "adult.csv")
	dir := t.TempDir()
	cfg := dpConfig(t, abs, dir, "differential-privacy: {epsilon: 1, delta: 1e-6, degree: low-medium}", "dp: {epsilon-total: 1.5, delta-total: 1e-5}\n")
	ledger := filepath.Join(dir, "ledger.json")
	rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: filepath.Join(dir, "one.csv"), Ledger: ledger})
	if err != nil {
		t.Fatal(err)
	}
	l := rep.DifferentialPrivacy.Ledger
	if l == nil || l.EpsilonSpent != 1 || l.DeltaSpent != 1e-6 || l.EpsilonTotal != 1.5 || len(l.History) != 1 || l.History[0].Outputs[0] != "release one.csv" {
		t.Fatalf("the report's ledger %+v", l)
	}
	before, err := os.ReadFile(ledger)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Release(context.Background(), cfg, job.Options{Input: in, Output: filepath.Join(dir, "two.csv"), Ledger: ledger})
	if !errors.Is(err, fault.ErrUnattainable) {
		t.Fatalf("a release past the totals: %v, want exit 3", err)
	}
	after, _ := os.ReadFile(ledger)
	if string(after) != string(before) {
		t.Error("the refused release changed the ledger")
	}
	if _, err := os.Stat(filepath.Join(dir, "two.csv")); !os.IsNotExist(err) {
		t.Errorf("the refused release wrote its output: %v", err)
	}
}

// TestReleaseDPNothingDrawn: a sample that draws no record (as likely as (1 − β)^n)
// is released as an empty file, verified, like any other: refusing it would tell
// that nothing was drawn.
func TestReleaseDPNothingDrawn(t *testing.T) {
	abs := needAdult(t)
	drawHook = func(purpose safepub.Purpose, keep []bool) {
		if purpose == safepub.PurposeRelease {
			clear(keep)
		}
	}
	defer func() { drawHook = nil }()
	dir := t.TempDir()
	cfg := dpConfig(t, abs, dir, "differential-privacy: {epsilon: 1, delta: 1e-6, degree: medium}", "")
	out := filepath.Join(dir, "release.csv")
	rep, err := Release(context.Background(), cfg, job.Options{Input: filepath.Join(abs, "adult.csv"), Output: out})
	if err != nil {
		t.Fatal(err)
	}
	header, rows := testfiles.ReadCSV(t, out)
	if rep.Output.Rows != 0 || len(rows) != 0 || len(header) != 1 || header[0] != strings.Join(arxQI, ";") /* ReadCSV reads ',' only */ || rep.Suppressed != rep.Input.Rows {
		t.Errorf("released %d records (%d in the file, header %q), %d of %d left out", rep.Output.Rows, len(rows), header, rep.Suppressed, rep.Input.Rows)
	}
}

// TestReleaseDPColumnsAsTheyAre: a column released as it is (sensitive, insensitive)
// beside privacy.differential-privacy is exit 2 naming its role: its values would be
// part of a record's class, which the guarantee does not cover.
func TestReleaseDPColumnsAsTheyAre(t *testing.T) {
	abs := needAdult(t)
	for _, role := range []string{"sensitive", "insensitive"} {
		dir := t.TempDir()
		cfg := dpConfig(t, abs, dir, "differential-privacy: {epsilon: 1, delta: 1e-6, degree: low}", "")
		raw, err := os.ReadFile(cfg.File)
		if err != nil {
			t.Fatal(err)
		}
		text := testfiles.Replace(t, string(raw), "  occupation: {role: quasi, hierarchy: {file: "+fmt.Sprintf("%q", filepath.Join(abs, "adult_hierarchy_occupation.csv"))+"}}", "  occupation: {role: "+role+"}")
		if err := os.WriteFile(cfg.File, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if cfg, err = schema.Load(cfg.File); err != nil {
			t.Fatal(err)
		}
		_, err = Release(context.Background(), cfg, job.Options{Input: filepath.Join(abs, "adult.csv"), Output: filepath.Join(dir, "release.csv")})
		if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "columns.occupation.role: "+role+": a column released as it is") {
			t.Errorf("occupation %s: %v, want exit 2 naming its role", role, err)
		}
		if names := testfiles.Names(t, dir); !slices.Equal(names, []string{"dp.yaml"}) {
			t.Errorf("the refused run left %v", names)
		}
	}
}

// TestReleaseDPSampleParts: the sample of an input in parts is drawn part by part,
// block by block, each block from its own stream (purpose, part, block) under the
// run's key: recomputed from the key (the first 32 bytes of the run's random source),
// the release's sample and the search's are those streams' draws, record for record,
// whichever core drew each block; and the release is verified against it.
func TestReleaseDPSampleParts(t *testing.T) {
	abs := needAdult(t)
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join(abs, "adult.csv"))
	if err != nil {
		t.Fatal(err)
	}
	partsDir := filepath.Join(dir, "parts")
	if err := os.Mkdir(partsDir, 0o700); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, p := range splitCSV(t, data, partsDir, 3) {
		_, rows := testfiles.ReadCSV(t, p)
		sizes = append(sizes, len(rows))
	}
	seed := [32]byte{'p', 'a', 'r', 't', 's'}
	randomSource = rand.NewChaCha8(seed)
	defer func(b int) { randomSource, drawHook, sampleBlock = cryptoSource, nil, b }(sampleBlock)
	sampleBlock = 4000 // several blocks per part
	drawn := map[safepub.Purpose][]bool{}
	drawHook = func(purpose safepub.Purpose, keep []bool) { drawn[purpose] = slices.Clone(keep) }
	cfg := dpConfig(t, abs, dir, "differential-privacy: {epsilon: 2, delta: 1e-5, search: {epsilon: 1, steps: 20}}", "search: {metric: loss}\n")
	if _, err := Release(context.Background(), cfg, job.Options{Input: partsDir, Output: filepath.Join(dir, "release.csv")}); err != nil {
		t.Fatal(err)
	}
	streams, err := safepub.NewStreams(rand.NewChaCha8(seed))
	if err != nil {
		t.Fatal(err)
	}
	params, err := safepub.Compute(1, 1e-5) // ε less the search's
	if err != nil {
		t.Fatal(err)
	}
	for _, purpose := range []safepub.Purpose{safepub.PurposeSearch, safepub.PurposeRelease} {
		got := drawn[purpose]
		var want []bool
		for p, n := range sizes {
			for b := 0; b*sampleBlock < n; b++ {
				keep := make([]bool, min(sampleBlock, n-b*sampleBlock))
				if err := params.SampleBlock(keep, streams, purpose, p, b); err != nil {
					t.Fatal(err)
				}
				want = append(want, keep...)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("the %s sample (%d records) is not the draws of its parts' streams (%d records)", purpose, len(got), len(want))
		}
	}
	if slices.Equal(drawn[safepub.PurposeSearch], drawn[safepub.PurposeRelease]) {
		t.Error("the search's sample and the release's are the same draws")
	}
}

// TestReleaseDPFormats: a SafePub release is written as Parquet, Arrow IPC (file and
// stream) and CSV alike, in the order of its values. Drawn from the same run key (a
// seeded random source), the four releases hold the same records in the same order,
// each read back by another implementation (pqarrow, the Arrow library); every
// quasi-identifier is a dictionary of released values only, and check passes each.
func TestReleaseDPFormats(t *testing.T) {
	abs := needAdult(t)
	in := filepath.Join(abs, "adult.csv")
	dir := t.TempDir()
	cfg := dpConfig(t, abs, dir, "differential-privacy: {epsilon: 2, delta: 1e-5, search: {epsilon: 1, steps: 20}}", "search: {metric: loss}\n")
	defer func() { randomSource = cryptoSource }()
	var want [][]string
	for _, format := range []string{"csv", "parquet", "arrow", "arrows"} {
		randomSource = rand.NewChaCha8([32]byte{'f', 'o', 'r', 'm', 'a', 't'})
		out, rp := filepath.Join(dir, "release."+format), filepath.Join(dir, format+".json")
		if _, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out, Report: rp}); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out, Report: rp}); err != nil {
			t.Errorf("check of the %s release: %v", format, err)
		}
		var got [][]string
		switch format {
		case "csv":
			_, got = readTable(t, out, ';')
			want = got
		case "parquet":
			tbl := testfiles.ReadWithPqarrow(t, out)
			defer tbl.Release()
			assertQuasiDictionaries(t, cfg, tbl.Schema())
			got = tableRows(t, tbl)
		default:
			tbl, _ := readArrowIPC(t, out, format == "arrows")
			defer tbl.Release()
			assertQuasiDictionaries(t, cfg, tbl.Schema())
			got = tableRows(t, tbl)
		}
		if len(want) == 0 || !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("%s: %d records, not the CSV release's %d in its order", format, len(got), len(want))
		}
	}
}

// TestReleaseDPElsewhereCSV: a SafePub release written by workers (ReleaseWith, as
// sanitize-beam writes it) in a format other than CSV is bad input naming
// output.format, and nothing is written; the workers are never called.
func TestReleaseDPElsewhereCSV(t *testing.T) {
	abs := needAdult(t)
	dir := t.TempDir()
	cfg := dpConfig(t, abs, dir, "differential-privacy: {epsilon: 2, delta: 1e-5, degree: medium}", "")
	raw, err := os.ReadFile(cfg.File)
	if err != nil {
		t.Fatal(err)
	}
	cfg = loadConfigText(t, testfiles.Replace(t, string(raw), `output: {csv: {separator: ";"}}`, `output: {format: parquet, csv: {separator: ";"}}`))
	out := filepath.Join(dir, "out") + "/"
	called := false
	_, err = ReleaseWith(context.Background(), cfg, job.Options{Input: filepath.Join(abs, "adult.csv"), Output: out}, "sanitize-test", func(context.Context, PartsJob) error {
		called = true
		return nil
	})
	if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "output.format: parquet: a differentially private release written by workers") {
		t.Errorf("%v, want bad input naming output.format", err)
	}
	if names := testfiles.Names(t, dir); !slices.Equal(names, []string{"dp.yaml"}) || called {
		t.Errorf("the refused run left %v (the workers called: %v)", names, called)
	}
}
