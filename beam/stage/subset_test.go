package stage

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSubsetBuiltHierarchiesOnPrism: a research subset released on Prism through
// every kind of hierarchy (integer intervals, a mask, dates, a hierarchy file), the
// subset's records holding only every other value of the population's, in two CSV
// parts: the same node, loss and records as the CLI's, whose built hierarchies have
// the population's values as leaves; the CLI's check passes the release.
func TestSubsetBuiltHierarchiesOnPrism(t *testing.T) {
	dir := t.TempDir()
	parts := filepath.Join(dir, "parts")
	if err := os.Mkdir(parts, 0o700); err != nil {
		t.Fatal(err)
	}
	day0 := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = 1200
	for p := range 2 {
		var b strings.Builder
		b.WriteString("age,zip,admitted,sex,rid,in_study\n")
		for i := p * n / 2; i < (p+1)*n/2; i++ {
			fmt.Fprintf(&b, "%d,021%02d,%s,%s,%d,%v\n", 20+i%60, i%40, day0.AddDate(0, 0, i%90).Format(time.DateOnly), []string{"F", "M"}[i%4/2], i, i%2 == 0)
		}
		if err := os.WriteFile(filepath.Join(parts, fmt.Sprintf("part-%d.csv", p)), []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	hier, _ := filepath.Abs("../../testdata/hierarchies")
	cfgPath := filepath.Join(dir, "c.yaml")
	text := fmt.Sprintf(`columns:
  age:      {role: quasi, type: integer, hierarchy: {intervals: [10, 20]}}
  zip:      {role: quasi, hierarchy: {mask: {from: right, max: 3}}}
  admitted: {role: quasi, type: date, hierarchy: {date: [month, year]}}
  sex:      {role: quasi, hierarchy: {file: %s/sex.csv}}
  rid:      {role: insensitive, type: integer}
  in_study: {role: identifier}
privacy: {k: 3, suppression: 0.05, subset: {column: in_study}, k-map: {k: 3}}
search: {min-levels: {age: 1, zip: 1, admitted: 1}}
`, hier)
	if err := os.WriteFile(cfgPath, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	_, rep, _, _ := againstCLI(t, cfgPath, parts, parts)
	if rep.Utility.Loss == 0 {
		t.Errorf("loss 0: the hierarchies were not used")
	}
}
