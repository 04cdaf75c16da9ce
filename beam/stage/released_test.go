package stage

import (
	"os"
	"testing"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
)

// TestReleaseOnPrismReleasedColumns: on Beam as in the CLI, ward, released as it is
// beside a 3-diverse diagnosis, gives the diagnosis away: the report names it, as the
// CLI's does (againstCLI compares what was verified), and with
// privacy.released-columns.check error the run is refused (exit 3), naming ward and no
// value, and publishes nothing.
func TestReleaseOnPrismReleasedColumns(t *testing.T) {
	cfgPath, whole, parts := hospitalParts(t, "")
	raw, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	const k5, ldiv = "privacy: {k: 5, suppression: 0.05}", "privacy: {k: 5, suppression: 0.05, l-diversity: {column: diagnosis, variant: distinct, l: 3}"
	write := func(privacy string) {
		if err := os.WriteFile(cfgPath, []byte(testfiles.Replace(t, string(raw), k5, privacy)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(ldiv + "}")
	got, _, _, _ := againstCLI(t, cfgPath, parts, whole)
	named := false
	for _, r := range got.Measured.Released {
		if r.Column == "ward" && r.Fails() {
			named = true
		}
		if r.Column == "insurance" && r.Fails() {
			t.Errorf("insurance gives the diagnosis away: %+v", r)
		}
	}
	if !named {
		t.Fatalf("ward not named: %+v", got.Measured.Released)
	}
	write(ldiv + ", released-columns: {check: error}}")
	releaseFails(t, cfgPath, parts, fault.ErrUnattainable, `"ward"`, "Blood 1")
}
