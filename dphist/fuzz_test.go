package dphist

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoadLedger: any file either loads as a ledger or is refused as bad input; a
// loaded ledger saves and loads back to the same spending, and charging it never
// panics.
func FuzzLoadLedger(f *testing.F) {
	f.Add([]byte(`{"datasets":{"w":{"epsilon_total":1,"delta_total":0,"spends":[{"time":"2026-01-01T00:00:00Z","epsilon":0.5,"delta":0,"outputs":["a"]}]}}}`))
	f.Add([]byte(`{"datasets":{"w":null}}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`[`))
	// Hostile ledgers that encoding/json alone would read by dropping a spend.
	f.Add([]byte(`{"datasets":{"w":{"epsilon_total":1,"delta_total":0,"spends":[{"epsilon":0.5,"delta":0}]},"w":{"epsilon_total":1,"delta_total":0,"spends":[]}}}`))
	f.Add([]byte(`{"datasets":{"w":{"epsilon_total":1,"delta_total":0,"spends":[{"epsilon":0.5,"delta":0}],"Spends":[]}}}`))
	f.Add([]byte(`{"datasets":{},"notes":1}`))
	f.Add([]byte(`{"datasets":{"w":{"epsilon_total":1,"delta_total":0,"spends":[{"epsilon":0.5,"epsilon":0,"refund":0}]}}}`))
	f.Add([]byte(`{"datasets":{"w":{"epsilon_total":1,"delta_total":0,"spends":[{"outputs":[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]}]}}}`))
	f.Add([]byte(`{"datasets":{}} {}`))
	f.Add([]byte(`null`))
	// An account named like another, and spends that are no finite budget.
	f.Add([]byte(`{"datasets":{"w ":{"epsilon_total":1,"delta_total":0,"spends":[{"epsilon":0.5,"delta":0}]}}}`))
	f.Add([]byte(`{"datasets":{"w":{"epsilon_total":1e999,"delta_total":0,"spends":[{"epsilon":1e308,"delta":0},{"epsilon":1e308,"delta":0}]}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "ledger.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := LoadLedger(path)
		if err != nil {
			return
		}
		spent := map[string]string{}
		for name, a := range l.Datasets {
			e, d := a.Spent()
			spent[name] = e.String() + "/" + d.String()
		}
		if err := l.Save(path); err != nil {
			t.Fatal(err)
		}
		back, err := LoadLedger(path)
		if err != nil {
			t.Fatalf("a saved ledger does not load: %v", err)
		}
		for name, a := range back.Datasets {
			e, d := a.Spent()
			if spent[name] != e.String()+"/"+d.String() {
				t.Fatalf("dataset %q: spent %s, then %s/%s", name, spent[name], e, d)
			}
		}
		_ = back.Charge("w", 1, 1e-6, Spend{Epsilon: 0.1})
	})
}
