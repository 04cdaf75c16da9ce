package release

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/schema"
	"sanitizer/table"
)

// topFixture writes a small ward table and hierarchy files whose single top value is
// topDiag (diagnosis) and topAge (age) into dir, and returns the input's path and a
// configuration releasing it with the given algorithm and k.
func topFixture(t *testing.T, dir, topDiag, topAge, algorithm string, k int, sensitive bool) (string, *schema.Config) {
	t.Helper()
	diag := "flu;respiratory;" + topDiag + "\ncold;respiratory;" + topDiag + "\nbroken arm;injury;" + topDiag + "\nburn;injury;" + topDiag + "\n"
	age := ""
	for a := 20; a < 40; a++ {
		band := "[20,29]"
		if a >= 30 {
			band = "[30,39]"
		}
		age += itoa(a) + ";" + band + ";" + topAge + "\n"
	}
	in := "age,diag,ward\n"
	diags := []string{"flu", "cold", "broken arm", "burn"}
	for i := range 16 {
		in += itoa(20+i) + "," + diags[i%4] + ",w" + itoa(i%3) + "\n"
	}
	for name, text := range map[string]string{"diag.csv": diag, "age.csv": age, "in.csv": in} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	role := "quasi"
	models := ""
	if sensitive {
		role = "sensitive"
		models = "  t-closeness: {column: diag, t: 0.9, distance: hierarchical}\n"
	}
	conf := "columns:\n" +
		"  age: {role: quasi, type: integer, hierarchy: {file: " + filepath.Join(dir, "age.csv") + "}}\n" +
		"  diag: {role: " + role + ", hierarchy: {file: " + filepath.Join(dir, "diag.csv") + "}}\n" +
		"  ward: {role: insensitive}\n" +
		"privacy:\n  k: " + itoa(k) + "\n" + models +
		"search: {algorithm: " + algorithm + "}\n"
	return filepath.Join(dir, "in.csv"), loadConfigText(t, conf)
}

func itoa(i int) string { return table.FormatInt(int64(i)) }

// TestHierarchyFileTop: a hierarchy file's single top value may be any label, as in
// ARX: a release that generalizes a column to the top writes that label, verifies,
// and Check passes on it, under either search and with hierarchical t-closeness on a
// sensitive column whose hierarchy has such a top.
func TestHierarchyFileTop(t *testing.T) {
	cases := []struct {
		name, topDiag, topAge, algorithm string
		k                                int
		sensitive                        bool
		want                             map[string]string // column → label every record must hold
	}{
		{"optimal any disease", "any disease", "any age", "optimal", 16, false, map[string]string{"diag": "any disease", "age": "any age"}},
		{"optimal stars", "*****", "*****", "optimal", 16, false, map[string]string{"diag": "*****", "age": "*****"}},
		{"mondrian any disease", "any disease", "any age", "mondrian", 16, false, map[string]string{"diag": "any disease"}},
		{"sensitive any disease", "any disease", "all ages", "optimal", 16, true, map[string]string{"age": "all ages"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in, cfg := topFixture(t, dir, tc.topDiag, tc.topAge, tc.algorithm, tc.k, tc.sensitive)
			out := filepath.Join(dir, "release.csv")
			if _, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
				t.Fatalf("release: %v", err)
			}
			if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
				t.Fatalf("check: %v", err)
			}
			header, recs := testfiles.ReadCSV(t, out)
			if len(recs) != 16 {
				t.Fatalf("%d records released", len(recs))
			}
			for col, label := range tc.want {
				j := slices.Index(header, col)
				for r, rec := range recs {
					if rec[j] != label {
						t.Fatalf("record %d: %s = %q, want the top %q", r, col, rec[j], label)
					}
				}
			}
		})
	}
}

// TestHierarchyFileTwoTops: a hierarchy file with two different values at its top
// level is bad input naming the file and the line, and nothing is written.
func TestHierarchyFileTwoTops(t *testing.T) {
	dir := t.TempDir()
	in, cfg := topFixture(t, dir, "any disease", "any age", "optimal", 2, false)
	diag := filepath.Join(dir, "diag.csv")
	if err := os.WriteFile(diag, []byte("flu;respiratory;any disease\ncold;respiratory;any disease\nbroken arm;injury;*\nburn;injury;*\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	outDir := filepath.Join(dir, "out")
	if err := os.Mkdir(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Release(context.Background(), cfg, job.Options{Input: in, Output: filepath.Join(outDir, "r.csv")})
	if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), diag+":3:") {
		t.Fatalf("got %v, want bad input naming %s:3", err, diag)
	}
	if entries, _ := os.ReadDir(outDir); len(entries) != 0 {
		t.Errorf("output folder holds %v", entries)
	}
}
