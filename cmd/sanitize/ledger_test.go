package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
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
			if got := listDir(t, dir); !slices.Equal(got, want) {
				t.Errorf("the folder holds %v, want %v", got, want)
			}
		})
	}
}
