package dprun

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/schema"
)

// TestDPLedgerPath: the ledger may not lie inside the output folder however the paths
// are spelled (a file named "..ledger.json", a folder reached through a symlink), may
// lie beside it through "..", and a ledger whose folder does not exist is refused
// before the input is read; a refused run writes nothing, neither outputs nor ledger.
func TestDPLedgerPath(t *testing.T) {
	conf := "dataset: ward\n" + wardColumns + "dp:\n  epsilon-total: 1\n  outputs:\n    - {name: h, histogram: [sex], epsilon: 1}\n"
	symlink := func(t *testing.T, dir, target, name string) {
		t.Helper()
		if err := os.Symlink(filepath.Join(dir, target), filepath.Join(dir, name)); err != nil {
			t.Skipf("no symlinks here: %v", err)
		}
	}
	mkdir := func(t *testing.T, dir, name string) {
		t.Helper()
		if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name        string
		setup       func(t *testing.T, dir string)
		out, ledger string // relative to the test's folder
		want        string // a substring of the error ("{{DIR}}" is the folder); "" = the run succeeds
	}{
		{"a file named ..ledger.json inside", func(t *testing.T, dir string) { mkdir(t, dir, "out") },
			"out", "out/..ledger.json", "inside the output folder"},
		{"a file named ..ledger.json inside a new folder", nil,
			"out", "out/..ledger.json", "inside the output folder"},
		{"inside a subfolder", func(t *testing.T, dir string) { mkdir(t, dir, "out") },
			"out", "out/sub/ledger.json", "inside the output folder"},
		{"through a symlinked folder", func(t *testing.T, dir string) { mkdir(t, dir, "out"); symlink(t, dir, "out", "link") },
			"out", "link/ledger.json", "inside the output folder"},
		{"output through a symlinked folder", func(t *testing.T, dir string) { mkdir(t, dir, "real"); symlink(t, dir, "real", "out") },
			"out", "real/ledger.json", "inside the output folder"},
		{"the output folder itself", nil,
			"out", "out/sub/..", "the input, the configuration or the ledger"},
		{"the folder does not exist", nil,
			"out", "missing/ledger.json", "--ledger: the folder {{DIR}}/missing does not exist"},
		{"the folder is a file", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "out", "file/ledger.json", "{{DIR}}/file"},
		{"through .. of a folder that does not exist", nil,
			"out", "out/../ledger.json", "--ledger: the folder {{DIR}}/out/.. does not exist"},
		{"beside the output folder through ..", func(t *testing.T, dir string) { mkdir(t, dir, "out") },
			"out", "out/../ledger.json", ""},
		{"in a folder beside it", func(t *testing.T, dir string) { mkdir(t, dir, "out"); mkdir(t, dir, "books") },
			"out", "out/../books/..ledger.json", ""},
		{"through a symlink to a folder beside it", func(t *testing.T, dir string) { mkdir(t, dir, "books"); symlink(t, dir, "books", "link") },
			"out", "link/ledger.json", ""},
		{"a symlink to nothing", func(t *testing.T, dir string) { symlink(t, dir, "gone.json", "ledger.json") },
			"out", "ledger.json", "symbolic link to nothing"},
		{"a ledger with a second name (a hard link)", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "ledger.json"), []byte(`{"datasets":{}}`), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Link(filepath.Join(dir, "ledger.json"), filepath.Join(dir, "copy.json")); err != nil {
				t.Skipf("no hard links here: %v", err)
			}
		}, "out", "copy.json", "{{DIR}}/copy.json: the file has 2 names"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			cfg, err := schema.Parse([]byte(conf), "dp.yaml", dir)
			if err != nil {
				t.Fatal(err)
			}
			in := filepath.Join(dir, "in.csv")
			if err := os.WriteFile(in, []byte(wardInput()), 0o644); err != nil {
				t.Fatal(err)
			}
			before := tree(t, dir)
			var logs bytes.Buffer
			out, ledger := filepath.Join(dir, tt.out), filepath.Join(dir, tt.ledger)
			_, err = Run(context.Background(), cfg, job.Options{Input: in, Output: dir + "/" + tt.out, Ledger: dir + "/" + tt.ledger,
				Log: slog.New(slog.NewTextHandler(&logs, nil))})
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if _, err := os.Stat(ledger); err != nil {
					t.Errorf("the ledger was not written: %v", err)
				}
				if _, err := os.Stat(filepath.Join(out, "h.csv")); err != nil {
					t.Errorf("the output was not written: %v", err)
				}
				return
			}
			want := strings.ReplaceAll(tt.want, "{{DIR}}", dir)
			if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), want) {
				t.Fatalf("err = %v, want bad input naming %q", err, want)
			}
			if strings.Contains(logs.String(), "stage done") {
				t.Errorf("the input was read before the ledger was refused:\n%s", logs.String())
			}
			if after := tree(t, dir); after != before {
				t.Errorf("a refused run changed the folder:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// tree lists every path under dir (symlinks not followed), one a line.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		b.WriteString(strings.TrimPrefix(p, dir) + " " + d.Type().String() + "\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestDPLedgerThroughSymlink: a ledger named through a symbolic link is charged where
// the link points (the link stays a link), so runs naming it either way share one
// account and the budget is not spent twice.
func TestDPLedgerThroughSymlink(t *testing.T) {
	conf := "dataset: ward\n" + wardColumns + "dp:\n  epsilon-total: 1\n  outputs:\n    - {name: h, histogram: [sex], epsilon: 0.6}\n"
	dir := t.TempDir()
	books := filepath.Join(dir, "books")
	if err := os.Mkdir(books, 0o755); err != nil {
		t.Fatal(err)
	}
	real, link := filepath.Join(books, "ledger.json"), filepath.Join(dir, "ledger.json")
	if err := os.WriteFile(real, []byte(`{"datasets":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	cfg, err := schema.Parse([]byte(conf), "dp.yaml", dir)
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte(wardInput()), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), cfg, job.Options{Input: in, Output: filepath.Join(dir, "a"), Ledger: link}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v", err)
	}
	// 0.6 + 0.6 > 1: the run naming the real file sees the first spend.
	if _, err := Run(context.Background(), cfg, job.Options{Input: in, Output: filepath.Join(dir, "b"), Ledger: real}); !errors.Is(err, fault.ErrUnattainable) {
		t.Fatalf("second run through the real path: err = %v, want unattainable", err)
	}
}

// TestLedgerPathHelpers: a path is within a folder when it is the folder or lies below
// it, whatever its name starts with; a path's folder is what precedes its last
// separator, uncleaned; a relative path resolves against the working folder.
func TestLedgerPathHelpers(t *testing.T) {
	sep := string(filepath.Separator)
	inside := []struct {
		dir, p string
		want   bool
	}{
		{"/a/out", "/a/out/..ledger.json", true},
		{"/a/out", "/a/out/sub/x", true},
		{"/a/out", "/a/out", true},
		{"/a/out", "/a/ledger.json", false},
		{"/a/out", "/a/outside/x", false},
		{"/a/out", "/a/..out/x", false},
		{"/a/out", "/ledger.json", false},
	}
	for _, tt := range inside {
		if got := within(filepath.FromSlash(tt.dir), filepath.FromSlash(tt.p)); got != tt.want {
			t.Errorf("within(%s, %s) = %v, want %v", tt.dir, tt.p, got, tt.want)
		}
	}
	folders := []struct{ p, want string }{
		{"ledger.json", "."},
		{"/ledger.json", "/"},
		{"a/b/../c.json", "a/b/.."},
		{"a//c.json", "a/"},
		{"a/b/", "a/b"},
	}
	for _, tt := range folders {
		if got := folderOf(filepath.FromSlash(tt.p)); got != filepath.FromSlash(tt.want) {
			t.Errorf("folderOf(%s) = %s, want %s", tt.p, got, tt.want)
		}
	}
	dir := t.TempDir()
	t.Chdir(dir)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir("out", 0o755); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{
		"ledger.json":                real + sep + "ledger.json",
		"out/../ledger.json":         real + sep + "ledger.json",
		"out/..ledger.json":          real + sep + "out" + sep + "..ledger.json",
		"missing/../ledger.json":     real + sep + "ledger.json", // cleaned as text past what is missing
		"out/missing/../../x/y.json": real + sep + "x" + sep + "y.json",
		"./out/./sub/../ledger.json": real + sep + "out" + sep + "ledger.json",
	} {
		if got := resolve(filepath.FromSlash(p)); got != want {
			t.Errorf("resolve(%s) = %s, want %s", p, got, want)
		}
	}
}

// refusedBeforeReading runs dp on the ward input in dir with conf and ledger, and
// checks that it was refused with an error matching kind and holding every want,
// before the input was read, and that dir (and the ledger's folder) were left as
// they were.
func refusedBeforeReading(t *testing.T, dir, conf, ledger string, kind error, want ...string) {
	t.Helper()
	cfg, err := schema.Parse([]byte(conf), "dp.yaml", dir)
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte(wardInput()), 0o644); err != nil {
		t.Fatal(err)
	}
	folders := []string{dir}
	if ledger != "" && filepath.Dir(ledger) != dir {
		folders = append(folders, filepath.Dir(ledger))
	}
	var before []string
	for _, f := range folders {
		before = append(before, tree(t, f))
	}
	var logs bytes.Buffer
	_, err = Run(context.Background(), cfg, job.Options{Input: in, Output: filepath.Join(dir, "out"), Ledger: ledger,
		Log: slog.New(slog.NewTextHandler(&logs, nil))})
	if !errors.Is(err, kind) {
		t.Fatalf("err = %v, want %v", err, kind)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("err = %v, want it to name %q", err, w)
		}
	}
	if strings.Contains(logs.String(), "stage done") {
		t.Errorf("the input was read before the run was refused:\n%s", logs.String())
	}
	for i, f := range folders {
		if after := tree(t, f); after != before[i] {
			t.Errorf("a refused run changed %s:\nbefore %s\nafter  %s", f, before[i], after)
		}
	}
}

// TestDPBudgetOverflow: outputs whose ε add up past the largest float64 are bad input
// naming dp.outputs (the sum was +Inf, which the budget check read as 0: the run
// noised the data and failed on its manifest); a sum that is finite but over the total,
// or that takes the ledger's spending past it, is unattainable. Either way the run is
// refused before the input is read and writes nothing.
func TestDPBudgetOverflow(t *testing.T) {
	const ledgerText = `{"datasets":{"ward":{"epsilon_total":1.5e308,"delta_total":0,"spends":[{"time":"2026-01-01T00:00:00Z","epsilon":1e308,"delta":0,"outputs":["a"]}]}}}`
	tests := []struct {
		name, total string
		eps         []string
		ledger      string // the ledger's content ("" = no ledger)
		kind        error
		want        []string
	}{
		{"two outputs past the largest number", "1e308", []string{"1e308", "1e308"}, "", fault.ErrBadInput,
			[]string{"dp.yaml:11: dp.outputs", "ε adds up to 2e+308", "largest number"}}, // line 11: outputs
		{"the largest number twice", "1.7976931348623157e308", []string{"1.7976931348623157e308", "1.7976931348623157e308"}, "", fault.ErrBadInput,
			[]string{"dp.outputs"}},
		{"three outputs past it with a ledger", "1e308", []string{"1e308", "5e307", "5e307"}, `{"datasets":{}}`, fault.ErrBadInput,
			[]string{"dp.outputs"}},
		{"finite but over the total", "1e308", []string{"9e307", "2e307"}, "", fault.ErrUnattainable, nil},
		{"the ledger's spending past the total", "1.5e308", []string{"1e308"}, ledgerText, fault.ErrUnattainable,
			[]string{"ledger.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conf := "dataset: ward\n" + wardColumns + "dp:\n  epsilon-total: " + tt.total + "\n  outputs:\n"
			for i, e := range tt.eps {
				conf += "    - {name: h" + strconv.Itoa(i) + ", histogram: [sex], epsilon: " + e + "}\n"
			}
			dir := t.TempDir()
			ledger := ""
			if tt.ledger != "" {
				ledger = filepath.Join(dir, "ledger.json")
				if err := os.WriteFile(ledger, []byte(tt.ledger), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			refusedBeforeReading(t, dir, conf, ledger, tt.kind, tt.want...)
		})
	}
}

// TestDPLedgerUnwritable: a ledger that the run could not charge once the noise is
// drawn (its folder read-only or one no one may create files in, its lock a folder or
// a link into a missing folder) is bad input naming the ledger, before the input is
// read, and nothing is written.
func TestDPLedgerUnwritable(t *testing.T) {
	conf := "dataset: ward\n" + wardColumns + "dp:\n  epsilon-total: 1\n  outputs:\n    - {name: h, histogram: [sex], epsilon: 0.5}\n"
	tests := []struct {
		name  string
		setup func(t *testing.T, books string) string // the ledger's path
	}{
		{"a read-only folder", func(t *testing.T, books string) string {
			p := filepath.Join(books, "ledger.json")
			if err := os.WriteFile(p, []byte(`{"datasets":{}}`), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(books, 0o555); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(books, 0o755) })
			testfiles.SkipIfWritable(t, books)
			return p
		}},
		{"a folder no one may create files in", func(t *testing.T, books string) string {
			testfiles.SkipIfWritable(t, "/sys")
			return "/sys/ledger.json"
		}},
		{"the lock is a folder", func(t *testing.T, books string) string {
			p := filepath.Join(books, "ledger.json")
			if err := os.Mkdir(p+".lock", 0o755); err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{"the lock links into a missing folder", func(t *testing.T, books string) string {
			p := filepath.Join(books, "ledger.json")
			if err := os.Symlink(filepath.Join(books, "gone", "x.lock"), p+".lock"); err != nil {
				t.Fatal(err)
			}
			return p
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			books := filepath.Join(dir, "books")
			if err := os.Mkdir(books, 0o755); err != nil {
				t.Fatal(err)
			}
			ledger := tt.setup(t, books)
			refusedBeforeReading(t, dir, conf, ledger, fault.ErrBadInput, ledger)
		})
	}
}
