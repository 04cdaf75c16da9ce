package release

import (
	"context"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/job"
)

// TestCheckLinkable: sanitize check of a release with a pseudonym counts
// multirelational k-anonymity in persons (every group of patients with the same set
// of classes at least 5) and checks the pseudonyms, with the key file by the keyed
// pseudonym of each record's id, without it (a random key) as one to one with the
// patients. A release whose first record holds another patient's pseudonym fails
// both ways, naming records, never a pseudonym or an id.
func TestCheckLinkable(t *testing.T) {
	modelsOnly(t)
	ctx := context.Background()
	for _, tt := range []struct {
		name    string
		keyFile string
	}{{"key file", writeKey(t, testKey, 0o600)}, {"random key", ""}} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, in, dir := admissionsFixture(t, 6000, pseudonymPrivacy(tt.keyFile), nil)
			out := filepath.Join(dir, "out.csv")
			if _, err := Release(ctx, cfg, job.Options{Input: in, Output: out}); err != nil {
				t.Fatal(err)
			}
			m, err := Check(ctx, cfg, job.Options{Input: in, Output: out})
			if err != nil {
				t.Fatalf("check of the linkable release: %v", err)
			}
			if p := m.Persons; p == nil || p.MinGroup < 5 || p.Groups == 0 || p.InSeveralClasses == 0 {
				t.Fatalf("persons %+v: want groups of 5 patients or more, some in several classes", p)
			}
			t.Logf("%d groups, the smallest %d; %d patients in several classes", m.Persons.Groups, m.Persons.MinGroup, m.Persons.InSeveralClasses)

			// the first record given another patient's pseudonym (swapping two patients'
			// in every record would go unseen without the key: still one to one)
			header, rows := readTable(t, out, ',')
			at := slices.Index(header, "patient_id")
			a := rows[0][at]
			b := rows[slices.IndexFunc(rows, func(r []string) bool { return r[at] != a })][at]
			rows[0][at] = b
			writeTable(t, out, header, rows)
			_, err = Check(ctx, cfg, job.Options{Input: in, Output: out})
			if !errors.Is(err, fault.ErrUnattainable) || !strings.Contains(err.Error(), "release record") {
				t.Fatalf("another patient's pseudonym: %v, want a violation naming a release record", err)
			}
			if strings.Contains(err.Error(), a) || strings.Contains(err.Error(), b) {
				t.Errorf("%v quotes a pseudonym", err)
			}
			t.Log(err)
		})
	}
}

// writeTable writes a CSV table.
func writeTable(t *testing.T, path string, header []string, rows [][]string) {
	t.Helper()
	var b strings.Builder
	w := csv.NewWriter(&b)
	if err := w.WriteAll(append([][]string{header}, rows...)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
