package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sanitizer/internal/testfiles"
)

// TestDPLedgerRefused: `sanitize dp` with a ledger it may not trust exits 2 naming the
// ledger's key or folder, writes no output and leaves the ledger as it was. The
// duplicate account would, read by encoding/json alone, hide 4.9 of the 5 spent.
func TestDPLedgerRefused(t *testing.T) {
	td := repoTestdata(t)
	const spent = `{"time":"2026-01-01T00:00:00Z","epsilon":4.9,"delta":0,"outputs":["earlier"]}`
	tests := []struct {
		name   string
		ledger string // relative to the test's folder
		text   string // the ledger's content ("" = no file)
		want   []string
	}{
		{"duplicate dataset", "ledger.json",
			`{"datasets":{"hospital-sample":{"epsilon_total":5,"delta_total":1e-6,"spends":[` + spent + `]},` +
				`"hospital-sample":{"epsilon_total":5,"delta_total":1e-6,"spends":[]}}}`,
			[]string{`"datasets"."hospital-sample": duplicate key`, "ledger.json"}},
		{"spends in another case", "ledger.json",
			`{"datasets":{"hospital-sample":{"epsilon_total":5,"delta_total":1e-6,"Spends":[` + spent + `]}}}`,
			[]string{`"datasets"."hospital-sample"."Spends": unknown key`}},
		{"folder does not exist", "books/ledger.json", "",
			[]string{"--ledger: the folder {{DIR}}/books does not exist"}},
		{"an account named like the dataset", "ledger.json",
			`{"datasets":{"hospital-sample ":{"epsilon_total":5,"delta_total":1e-6,"spends":[` + spent + `]}}}`,
			[]string{`"hospital-sample " ends with a space`, "ledger.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			ledger := filepath.Join(dir, tt.ledger)
			if tt.text != "" {
				writeFile(t, ledger, tt.text)
			}
			code, stdout, stderr := runCLI(t, "dp", "-c", filepath.Join(td, "hospital-dp.yaml"), "--in", filepath.Join(td, "hospital.csv"),
				"--out", filepath.Join(dir, "out"), "--ledger", ledger)
			if code != 2 {
				t.Fatalf("exit %d, want 2\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			for _, w := range tt.want {
				if w = strings.ReplaceAll(w, "{{DIR}}", dir); !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q: %s", w, stderr)
				}
			}
			var want []string // a refused run takes no lock: the folder holds the ledger alone
			if tt.text != "" {
				want = []string{filepath.Base(ledger)}
				if got := string(readFile(t, ledger)); got != tt.text {
					t.Errorf("the ledger changed:\n%s", got)
				}
			}
			if got := testfiles.Names(t, dir); !slices.Equal(got, want) {
				t.Errorf("the folder holds %v, want %v", got, want)
			}
		})
	}
}

// TestDPLedgerNames: the probe's "7.5 of 5": runs charging one ledger through
// different names share one budget. A ledger with a second hard link is exit 2 through
// either name and left as it was (each charge's rename split it into two budgets);
// through a symbolic link, "..", or the file itself, the second run of 2.5 fills the
// budget of 5 and the third is exit 3, the link still a link.
func TestDPLedgerNames(t *testing.T) {
	notInRaceRun(t)
	td := repoTestdata(t)
	dp := func(out, ledger string) (int, string) {
		code, _, stderr := runCLI(t, "dp", "-c", filepath.Join(td, "hospital-dp.yaml"), "--in", filepath.Join(td, "hospital.csv"),
			"--out", out, "--ledger", ledger)
		return code, stderr
	}
	dir := t.TempDir()
	books := filepath.Join(dir, "books")
	ledger, copied, link := filepath.Join(books, "ledger.json"), filepath.Join(books, "copy.json"), filepath.Join(dir, "link.json")
	if err := os.Mkdir(books, 0o755); err != nil {
		t.Fatal(err)
	}
	const empty = `{"datasets":{}}`
	writeFile(t, ledger, empty)
	if err := os.Link(ledger, copied); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	for i, name := range []string{ledger, copied} {
		if code, stderr := dp(filepath.Join(dir, "h"+strconv.Itoa(i)), name); code != 2 || !strings.Contains(stderr, name+": the file has 2 names") {
			t.Fatalf("%s, a hard link: exit %d, want 2 naming it\n%s", name, code, stderr)
		}
		if got := string(readFile(t, name)); got != empty {
			t.Errorf("%s changed: %s", name, got)
		}
	}
	if err := os.Remove(copied); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ledger, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	for i, tt := range []struct {
		name string
		code int
	}{{link, 0}, {filepath.Join(books, "..", "books", "ledger.json"), 0}, {ledger, 3}, {link, 3}} {
		out := filepath.Join(dir, "out"+strconv.Itoa(i))
		if code, stderr := dp(out, tt.name); code != tt.code {
			t.Fatalf("run %d through %s: exit %d, want %d\n%s", i+1, tt.name, code, tt.code, stderr)
		}
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced (%v)", err)
	}
	if got := testfiles.Names(t, books); !slices.Equal(got, []string{"ledger.json", "ledger.json.lock"}) {
		t.Errorf("the ledger's folder holds %v", got)
	}
}

// TestDPBudgetOverflowExit: outputs whose ε add up past the largest number are exit 2
// naming dp.outputs; outputs that add up to a finite sum over epsilon-total are exit 3;
// neither writes anything.
func TestDPBudgetOverflowExit(t *testing.T) {
	td := repoTestdata(t)
	for _, tt := range []struct {
		total, eps string
		code       int
		want       string
	}{
		{"1e308", "1e308", 2, "dp.outputs"},
		{"1e308", "6e307", 3, "over the totals"},
	} {
		dir := t.TempDir()
		conf := "dataset: hospital-sample\nunlisted: drop\ncolumns:\n  sex: {role: insensitive, domain: [F, M]}\n" +
			"dp:\n  epsilon-total: " + tt.total + "\n  outputs:\n" +
			"    - {name: a, histogram: [sex], epsilon: " + tt.eps + "}\n    - {name: b, histogram: [sex], epsilon: " + tt.eps + "}\n"
		writeFile(t, filepath.Join(dir, "dp.yaml"), conf)
		code, _, stderr := runCLI(t, "dp", "-c", filepath.Join(dir, "dp.yaml"), "--in", filepath.Join(td, "hospital.csv"),
			"--out", filepath.Join(dir, "out"), "--ledger", filepath.Join(dir, "ledger.json"))
		if code != tt.code || !strings.Contains(stderr, tt.want) {
			t.Errorf("ε-total %s, outputs of %s: exit %d, want %d naming %q\n%s", tt.total, tt.eps, code, tt.code, tt.want, stderr)
		}
		if got := testfiles.Names(t, dir); !slices.Equal(got, []string{"dp.yaml"}) {
			t.Errorf("the folder holds %v", got)
		}
	}
}
