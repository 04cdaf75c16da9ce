package dphist

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/publish"
)

// spendA is a spend of ε 0.5 in the ledger's JSON form.
const spendA = `{"time":"2026-01-01T00:00:00Z","epsilon":0.5,"delta":0,"outputs":["a"]}`

// TestLoadLedgerStrict: a ledger that encoding/json would read by dropping or
// misplacing a spend (a key twice, a key in another case, a key the ledger does not
// have) is bad input naming the key's path, and charging it through Record leaves the
// file as it was.
func TestLoadLedgerStrict(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"duplicate dataset",
			`{"datasets":{"ward":{"epsilon_total":1,"delta_total":0,"spends":[` + spendA + `,` + spendA + `]},"ward":{"epsilon_total":1,"delta_total":0,"spends":[]}}}`,
			`"datasets"."ward": duplicate key`},
		{"duplicate datasets",
			`{"datasets":{"ward":{"epsilon_total":1,"delta_total":0,"spends":[` + spendA + `]}},"datasets":{}}`,
			`"datasets": duplicate key`},
		{"Spends in another case",
			`{"datasets":{"ward":{"epsilon_total":1,"delta_total":0,"Spends":[` + spendA + `]}}}`,
			`"datasets"."ward"."Spends": unknown key`},
		{"spends twice, once in another case",
			`{"datasets":{"ward":{"epsilon_total":1,"delta_total":0,"spends":[` + spendA + `],"Spends":[]}}}`,
			`"datasets"."ward"."Spends": unknown key`},
		{"Datasets in another case",
			`{"Datasets":{"ward":{"epsilon_total":1,"delta_total":0,"spends":[]}}}`,
			`"Datasets": unknown key`},
		{"unknown key at the top",
			`{"datasets":{},"notes":"x"}`,
			`"notes": unknown key`},
		{"unknown key in an account",
			`{"datasets":{"ward":{"epsilon_total":1,"delta_total":0,"spends":[],"refunds":[]}}}`,
			`"datasets"."ward"."refunds": unknown key`},
		{"unknown key in a spend",
			`{"datasets":{"ward":{"epsilon_total":1,"delta_total":0,"spends":[` + spendA + `,{"epsilon":0.5,"delta":0,"refund":true}]}}}`,
			`"datasets"."ward"."spends"[1]."refund": unknown key`},
		{"duplicate key in a spend",
			`{"datasets":{"ward":{"epsilon_total":1,"delta_total":0,"spends":[{"epsilon":0.5,"epsilon":0,"delta":0}]}}}`,
			`"datasets"."ward"."spends"[0]."epsilon": duplicate key`},
		{"duplicate total",
			`{"datasets":{"ward":{"epsilon_total":1,"epsilon_total":9,"delta_total":0,"spends":[]}}}`,
			`"datasets"."ward"."epsilon_total": duplicate key`},
		{"duplicate dataset spelled with an escape",
			`{"datasets":{"ward":{"epsilon_total":1,"delta_total":0,"spends":[` + spendA + `]},"w\u0061rd":{"epsilon_total":1,"delta_total":0,"spends":[]}}}`,
			`"datasets"."ward": duplicate key`},
		{"null for a ledger",
			`null`,
			`not a JSON object`},
		{"second value after the ledger",
			`{"datasets":{}} {"datasets":{}}`,
			`not a ledger`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ledger.json")
			if err := os.WriteFile(path, []byte(tt.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadLedger(path)
			if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("err = %v, want bad input naming %s and %s", err, path, tt.want)
			}
			if _, err := Record(path, "ward", 1, 0, Spend{Epsilon: 0.1}); !errors.Is(err, fault.ErrBadInput) {
				t.Errorf("Record: err = %v, want bad input", err)
			}
			if got, _ := os.ReadFile(path); string(got) != tt.text {
				t.Error("a refused ledger was rewritten")
			}
		})
	}
}

// TestLoadLedgerDeep: a ledger nested far deeper than any ledger is refused, not
// walked.
func TestLoadLedgerDeep(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.json")
	deep := `{"datasets":{"w":{"epsilon_total":1,"delta_total":0,"spends":[{"outputs":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}]}}}`
	if err := os.WriteFile(path, []byte(deep), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadLedger(path); !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), `"datasets"."w"."spends"[0]."outputs"`) {
		t.Fatalf("err = %v, want bad input naming the nested key", err)
	}
}

// TestLoadLedgerKeepsSpends: a strict ledger loads with every spend and account.
func TestLoadLedgerKeepsSpends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.json")
	text := `{"datasets":{"ward":{"epsilon_total":1,"delta_total":1e-6,"spends":[` + spendA + `,{"epsilon":0.25,"delta":1e-7,"outputs":null}]},` +
		`"Ward":{"epsilon_total":2,"delta_total":0,"spends":null}}}`
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := LoadLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	e, d := l.Datasets["ward"].Spent()
	if e.RatString() != "3/4" || d.RatString() != "1/10000000" || len(l.Datasets) != 2 || l.Datasets["Ward"].EpsilonTotal != 2 {
		t.Errorf("loaded %+v: spent ε=%s δ=%s", l.Datasets, e.RatString(), d.RatString())
	}
}

// TestRecordRemovesStaleTemporaries: a temporary ledger that no live run holds (as a
// killed run leaves it, named as package publish names it) is removed by the next
// Record; a live run's, and files that only look alike, stay.
func TestRecordRemovesStaleTemporaries(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.json")
	stale := []string{".ledger.json.sanitize-123456789-0123456789abcdef.tmp", ".ledger.json.sanitize-4-fedcba9876543210.tmp"}
	kept := []string{
		".ledger.json.123456789.tmp", // os.CreateTemp's, as Saves named them before package publish: no longer swept
		".ledger.json.sanitize-4-0123.tmp", ".ledger.json.sanitize-4-0123456789abcdef.tmp.old",
		".other.json.sanitize-4-0123456789abcdef.tmp", "ledger.json.sanitize-4-0123456789abcdef.tmp",
	}
	for _, n := range append(slices.Clone(stale), kept...) {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(`{"datasets":{}}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	live, err := publish.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Discard()
	kept = append(kept, filepath.Base(live.Name()))
	if _, err := Record(path, "ward", 1, 0, Spend{Epsilon: 0.1}); err != nil {
		t.Fatal(err)
	}
	for _, n := range stale {
		if _, err := os.Lstat(filepath.Join(dir, n)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: stale temporary still there (%v)", n, err)
		}
	}
	want := append(slices.Clone(kept), "ledger.json", "ledger.json.lock")
	slices.Sort(want)
	if got := testfiles.Names(t, dir); !slices.Equal(got, want) {
		t.Errorf("the folder holds %q, want %q", got, want)
	}
}

// TestSaveReplaces: Save replaces the ledger whole, readable by others, and leaves
// nothing else beside it; a Save that fails leaves the ledger as it was.
func TestSaveReplaces(t *testing.T) {
	for _, tt := range []struct {
		name   string
		ledger *Ledger
		ok     bool
	}{
		{"spend", &Ledger{Datasets: map[string]*Account{"ward": {EpsilonTotal: 1, Spends: []Spend{{Epsilon: 0.25}}}}}, true},
		{"empty", &Ledger{Datasets: map[string]*Account{}}, true},
		{"not JSON", &Ledger{Datasets: map[string]*Account{"ward": {EpsilonTotal: math.NaN()}}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "ledger.json")
			old := `{"datasets":{}}`
			if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
				t.Fatal(err)
			}
			err := tt.ledger.Save(path)
			if tt.ok != (err == nil) {
				t.Fatalf("Save: %v", err)
			}
			if got := testfiles.Names(t, dir); !slices.Equal(got, []string{"ledger.json"}) {
				t.Errorf("the folder holds %q", got)
			}
			if !tt.ok {
				if got, _ := os.ReadFile(path); string(got) != old {
					t.Errorf("a failed Save left %q", got)
				}
				return
			}
			l, err := LoadLedger(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Datasets) != len(tt.ledger.Datasets) {
				t.Errorf("saved %+v, loaded %+v", tt.ledger.Datasets, l.Datasets)
			}
			if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o644 {
				t.Errorf("saved with mode %v (%v)", st.Mode(), err)
			}
		})
	}
}

// TestLoadLedgerDatasetNames: a ledger holding an account whose name the
// configuration refuses (one that looks like another: "ward " beside "ward") is bad
// input naming the ledger and the name, so that its spends cannot sit unseen beside
// the dataset's account; charging it through Record leaves the file as it was.
func TestLoadLedgerDatasetNames(t *testing.T) {
	for _, name := range []string{"ward ", " ward", "w  ard", "ward\u200b", "\ufeffward", "ward\t", "ward\u00a0", "wa\u0301rd", "ward\u202e"} {
		t.Run(strconv.QuoteToASCII(name), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ledger.json")
			key, _ := json.Marshal(name)
			text := `{"datasets":{"ward":{"epsilon_total":1,"delta_total":0,"spends":[]},` + string(key) + `:{"epsilon_total":1,"delta_total":0,"spends":[` + spendA + `]}}}`
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadLedger(path)
			if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), strconv.QuoteToASCII(name)) {
				t.Fatalf("err = %v, want bad input naming %s and %s", err, path, strconv.QuoteToASCII(name))
			}
			if _, err := Record(path, "ward", 1, 0, Spend{Epsilon: 0.6}); !errors.Is(err, fault.ErrBadInput) {
				t.Errorf("Record: err = %v, want bad input", err)
			}
			if got, _ := os.ReadFile(path); string(got) != text {
				t.Error("a refused ledger was rewritten")
			}
		})
	}
}

// TestChargeNotFinite: a spend or total that is not a finite budget (an ε that
// overflowed to +Inf once read as 0) is refused as bad input and charges nothing.
func TestChargeNotFinite(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, tt := range []struct {
		name                 string
		epsTotal, deltaTotal float64
		spend                Spend
	}{
		{"ε +Inf", 5, 0, Spend{Epsilon: inf}},
		{"ε NaN", 5, 0, Spend{Epsilon: nan}},
		{"ε −Inf", 5, 0, Spend{Epsilon: math.Inf(-1)}},
		{"ε negative", 5, 0, Spend{Epsilon: -1}},
		{"δ +Inf", 5, 1e-6, Spend{Epsilon: 1, Delta: inf}},
		{"δ NaN", 5, 1e-6, Spend{Epsilon: 1, Delta: nan}},
		{"ε total +Inf", inf, 0, Spend{Epsilon: 1}},
		{"ε total NaN", nan, 0, Spend{Epsilon: 1}},
		{"δ total NaN", 5, nan, Spend{Epsilon: 1}},
		{"δ total 1", 5, 1, Spend{Epsilon: 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := &Ledger{Datasets: map[string]*Account{"ward": {EpsilonTotal: 5, DeltaTotal: 1e-6, Spends: []Spend{{Epsilon: 1}}}}}
			err := l.Charge("ward", tt.epsTotal, tt.deltaTotal, tt.spend)
			if !errors.Is(err, fault.ErrBadInput) {
				t.Fatalf("err = %v, want bad input", err)
			}
			if a := l.Datasets["ward"]; len(a.Spends) != 1 || a.EpsilonTotal != 5 {
				t.Errorf("the account is now %+v", a)
			}
			fresh := &Ledger{Datasets: map[string]*Account{}}
			if err := fresh.Charge("new", tt.epsTotal, tt.deltaTotal, tt.spend); !errors.Is(err, fault.ErrBadInput) || len(fresh.Datasets) != 0 {
				t.Errorf("a fresh ledger: err = %v, datasets %v", err, fresh.Datasets)
			}
		})
	}
}

// TestCompose: outputs compose to the exact decimal sum of their ε and δ, never
// recorded as less than it (a sum with more digits than a float64 holds is rounded
// up), and a sum that is not a finite number (or a part that is not a budget) is an
// error, not +Inf or 0.
func TestCompose(t *testing.T) {
	max := math.MaxFloat64
	for _, tt := range []struct {
		name      string
		eps, dlt  []float64
		wantEps   string // the exact decimal the composed ε is; "" = an error
		wantDelta string
	}{
		{"tenths", []float64{0.1, 0.2}, []float64{0, 0}, "3/10", "0"},
		{"ten spends of 0.1", []float64{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1}, make([]float64, 10), "1", "0"},
		{"δ", []float64{1, 1}, []float64{1e-7, 2e-7}, "2", "3/10000000"},
		{"the largest ε", []float64{max}, []float64{0}, "", ""}, // checked below: finite
		{"two huge ε", []float64{1e308, 1e308}, []float64{0, 0}, "", ""},
		{"the largest ε twice", []float64{max, max}, []float64{0, 0}, "", ""},
		{"+Inf", []float64{1, math.Inf(1)}, []float64{0, 0}, "", ""},
		{"NaN", []float64{math.NaN()}, []float64{0}, "", ""},
		{"negative", []float64{1, -0.5}, []float64{0, 0}, "", ""},
		{"δ NaN", []float64{1}, []float64{math.NaN()}, "", ""},
		{"δ adding up to 1", []float64{1, 1}, []float64{0.5, 0.5}, "2", "1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var spends []Spend
			for i := range tt.eps {
				spends = append(spends, Spend{Epsilon: tt.eps[i], Delta: tt.dlt[i]})
			}
			eps, delta, err := Compose(spends)
			if tt.name == "the largest ε" {
				if err != nil || eps != max {
					t.Fatalf("Compose = %g, %v", eps, err)
				}
				return
			}
			if tt.wantEps == "" {
				if err == nil {
					t.Fatalf("Compose = %g, %g, want an error", eps, delta)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := decimal(eps).RatString(); got != tt.wantEps {
				t.Errorf("ε = %s, want %s", got, tt.wantEps)
			}
			if got := decimal(delta).RatString(); got != tt.wantDelta {
				t.Errorf("δ = %s, want %s", got, tt.wantDelta)
			}
		})
	}
	// Digits past a float64's: the composed ε is the least float64 not below the sum.
	parts := []Spend{{Epsilon: 0.1}, {Epsilon: 0.2}, {Epsilon: 1e-20}}
	eps, _, err := Compose(parts)
	if err != nil {
		t.Fatal(err)
	}
	exact, _ := new(big.Rat).SetString("0.30000000000000000001")
	if decimal(eps).Cmp(exact) < 0 || decimal(math.Nextafter(eps, 0)).Cmp(exact) >= 0 {
		t.Errorf("ε = %v for an exact sum of 0.30000000000000000001", eps)
	}
}
