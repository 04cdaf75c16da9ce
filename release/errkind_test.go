package release

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/gen"
	"sanitizer/internal/safe"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/schema"
)

// editField returns the CSV text with field col of data row row (1-based, after the
// header) set to v.
func editField(text string, row, col int, v string) string {
	lines := strings.SplitAfter(text, "\n")
	f := strings.Split(strings.TrimSuffix(lines[row], "\n"), ",")
	f[col] = v
	lines[row] = strings.Join(f, ",") + "\n"
	return strings.Join(lines, "")
}

// Fields of the hospital sample (testdata/hospital-tests.yaml).
const (
	fAge      = 2
	fSex      = 3
	fDiagnose = 6
	fStay     = 7
)

// TestBadInputKeepsItsKind walks every class of bad input through every stage that
// meets it (the plan, pass 1's read and encoding, pass 2's write, the hierarchy files):
// Release fails with an error that matches fault.ErrBadInput (exit 2), never quotes
// the value, and leaves nothing in the output folder.
func TestBadInputKeepsItsKind(t *testing.T) {
	const secret = "Zq9SECRET"
	for _, tc := range []struct {
		name    string
		stage   string
		input   func(text string) string               // the CSV input, changed
		config  func(t *testing.T, text string) string // the configuration's text, changed
		hier    func(dir string) string                // writes a hierarchy file, for the config
		format  string                                 // the input converted to parquet or arrow, then truncated
		message string                                 // the error names this
	}{
		{name: "value not in its hierarchy", stage: "pass 1", input: func(s string) string { return editField(s, 40, fSex, secret) }, message: "row 40"},
		{name: "null without null-as", stage: "pass 1", input: func(s string) string { return editField(s, 40, fAge, "") }, message: "row 40"},
		{name: "quasi-identifier of the wrong type", stage: "pass 1", input: func(s string) string { return editField(s, 40, fAge, secret) }, message: "row 40"},
		{name: "malformed CSV row", stage: "pass 1", input: func(s string) string { return editField(s, 40, fStay, "1,"+secret) }, message: "row 40"},
		{name: "insensitive column of the wrong type", stage: "pass 2", input: func(s string) string { return editField(s, 40, fStay, secret) }, message: "row 40"},
		{name: "sensitive value not in its hierarchy", stage: "pass 2", input: func(s string) string { return editField(s, 40, fDiagnose, secret) }, message: "row 40"},
		{name: "missing column", stage: "plan", config: func(t *testing.T, s string) string {
			return testfiles.Replace(t, s, "  ward:", "  bed: {role: insensitive}\n  ward:")
		}, message: "bed"},
		{name: "bad hierarchy file", stage: "hierarchy", hier: func(dir string) string {
			path := filepath.Join(dir, "sex.csv")
			os.WriteFile(path, []byte("F;*\nM;x;*\n"), 0o600)
			return path
		}, message: "sex"},
		{name: "truncated Parquet", stage: "open", format: "parquet", message: "in.parquet"},
		{name: "truncated Arrow", stage: "open", format: "arrow", message: "in.arrow"},
	} {
		t.Run(tc.stage+"/"+tc.name, func(t *testing.T) {
			cfg, in, dir := hospitalFixture(t, 300)
			if tc.input != nil {
				raw, _ := os.ReadFile(in)
				if err := os.WriteFile(in, []byte(tc.input(string(raw))), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if tc.config != nil || tc.hier != nil {
				raw, _ := os.ReadFile(cfg.File)
				text := string(raw)
				if tc.config != nil {
					text = tc.config(t, text)
				}
				if tc.hier != nil {
					abs, _ := filepath.Abs("../testdata/hierarchies/sex.csv")
					text = testfiles.Replace(t, text, abs, tc.hier(t.TempDir()))
				}
				if err := os.WriteFile(cfg.File, []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
				var err error
				if cfg, err = schema.Load(cfg.File); err != nil {
					t.Fatal(err)
				}
			}
			if tc.format != "" {
				in = filepath.Join(dir, "in."+tc.format)
				if err := gen.Hospital(in, tc.format, 300, 3, job.Options{}); err != nil {
					t.Fatal(err)
				}
				st, _ := os.Stat(in)
				if err := os.Truncate(in, st.Size()*2/3); err != nil {
					t.Fatal(err)
				}
				cfg.Input.Format = ""
			}
			out := filepath.Join(dir, "out")
			if err := os.Mkdir(out, 0o755); err != nil {
				t.Fatal(err)
			}
			_, err := Release(context.Background(), cfg, job.Options{Input: in, Output: filepath.Join(out, "r.csv"), Report: filepath.Join(out, "r.json")})
			if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), tc.message) || strings.Contains(err.Error(), secret) {
				t.Fatalf("got %v, want bad input naming %q without the value", err, tc.message)
			}
			if entries, _ := os.ReadDir(out); len(entries) != 0 {
				t.Fatalf("the output folder holds %v", entries)
			}
		})
	}
}

// TestVerificationReadKeepsKind: the verification reads the input again by its path;
// an input that became bad after pass 2 (a malformed row, a truncated file) fails with
// an error that still matches fault.ErrBadInput, and a cancelled context with one
// that matches context.Canceled.
func TestVerificationReadKeepsKind(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, in string)
		cancel bool
		want   error
	}{
		{name: "malformed row", want: fault.ErrBadInput, change: func(t *testing.T, in string) {
			raw, _ := os.ReadFile(in)
			os.WriteFile(in, []byte(editField(string(raw), 40, fStay, "1,2")), 0o600)
		}},
		{name: "input gone", want: fault.ErrBadInput, change: func(t *testing.T, in string) { os.Remove(in) }},
		{name: "cancelled", want: context.Canceled, cancel: true, change: func(*testing.T, string) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, in, dir := hospitalFixture(t, 3000)
			out := filepath.Join(dir, "r.csv")
			if _, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
				t.Fatal(err)
			}
			src, p, err := openInput(cfg, in, filepath.Join(dir, "other.csv"), "csv")
			if err != nil {
				t.Fatal(err)
			}
			src.Close()
			p.maxSupp, p.outFormat = 3000, "csv"
			tc.change(t, in)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				cancel()
			}
			_, err = verifyTruth(ctx, p, out, p.ReleaseHeader(), nil, nil)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want an error matching %v", err, tc.want)
			}
		})
	}
}

// TestWorkerPanicWritesNothing: a panic in a worker goroutine of pass 1 (an encoding
// worker) or pass 2 (the writer) ends the release with an internal error carrying the
// worker's stack, not a crash; every goroutine ends and the output folder stays empty.
func TestWorkerPanicWritesNothing(t *testing.T) {
	for _, stage := range []job.Stage{job.StageRead, job.StageWrite} {
		t.Run(stage.String(), func(t *testing.T) {
			cfg, in, dir := hospitalFixture(t, 20000)
			out := filepath.Join(dir, "out")
			if err := os.Mkdir(out, 0o755); err != nil {
				t.Fatal(err)
			}
			base := runtime.NumGoroutine()
			prog := &job.Progress{}
			prog.OnBatch = func(s job.Stage) {
				if s == stage {
					var codes []int32
					_ = codes[len(s)] // a worker's defect
				}
			}
			_, err := Release(context.Background(), cfg, job.Options{Input: in, Output: filepath.Join(out, "r.csv"), Report: filepath.Join(out, "r.json"), Progress: prog})
			var pe *safe.PanicError
			if !errors.Is(err, fault.ErrInternal) || errors.Is(err, fault.ErrBadInput) || !errors.As(err, &pe) || !strings.Contains(string(pe.Stack), "TestWorkerPanicWritesNothing") {
				t.Fatalf("got %v, want an internal error with the worker's stack", err)
			}
			settled(t, base)
			if entries, _ := os.ReadDir(out); len(entries) != 0 {
				t.Fatalf("the output folder holds %v", entries)
			}
		})
	}
}
