package stage

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/sample"
)

// admissionsParts writes n rows of the generated admissions table (1 to 20 rows per
// patient, together) with one more column, rid (the row's number, insensitive,
// released as it is, so that every released line names its input row), into four
// parts, rows dealt to them three at a time in turn, so that most patients with more
// than three admissions have rows in several parts; the whole table (the parts'
// rows in the parts' order) beside them; and a configuration of the admissions roles
// (testdata/admissions.yaml) whose privacy section is privacy. edit, when not nil,
// changes a part's row (part index, row in the part, fields) before it is written.
func admissionsParts(t *testing.T, n int, privacy string, edit func(part, row int, rec []string)) (cfgPath, whole, parts string) {
	t.Helper()
	var gen bytes.Buffer
	if err := sample.Admissions(&gen, n, 11); err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSuffix(gen.String(), "\n"), "\n")
	header := rows[0] + ",rid"
	const nParts = 4
	dealt := make([][]string, nParts)
	partOf := map[string]map[int]bool{} // per patient, the parts holding its rows
	for r, line := range rows[1:] {
		p := (r / 3) % nParts
		rec := strings.Split(line, ",")
		if partOf[rec[0]] == nil {
			partOf[rec[0]] = map[int]bool{}
		}
		partOf[rec[0]][p] = true
		if edit != nil {
			edit(p, len(dealt[p]), rec)
		}
		dealt[p] = append(dealt[p], fmt.Sprintf("%s,%d", strings.Join(rec, ","), r))
	}
	spread := 0
	for _, ps := range partOf {
		if len(ps) > 1 {
			spread++
		}
	}
	if spread < len(partOf)/10 {
		t.Fatalf("only %d of %d patients have rows in several parts", spread, len(partOf))
	}
	dir := t.TempDir()
	parts = filepath.Join(dir, "parts")
	if err := os.Mkdir(parts, 0o700); err != nil {
		t.Fatal(err)
	}
	all := []string{header}
	for p, recs := range dealt {
		body := header + "\n" + strings.Join(recs, "\n") + "\n"
		if err := os.WriteFile(filepath.Join(parts, fmt.Sprintf("part-%d.csv", p)), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		all = append(all, recs...)
	}
	whole = filepath.Join(dir, "admissions.csv")
	if err := os.WriteFile(whole, []byte(strings.Join(all, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// testdata/admissions.yaml's columns, the hierarchies by absolute path, with a
	// record id (rid) and the privacy section given.
	base, err := os.ReadFile("../../testdata/admissions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	hier, err := filepath.Abs("../../testdata/hierarchies")
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(base)
	cfg = testfiles.ReplaceAll(t, cfg[:strings.Index(cfg, "\nprivacy:")+1], "file: hierarchies/", "file: "+hier+"/")
	cfg = testfiles.Replace(t, cfg, "  insurance:  {role: insensitive}\n", "  insurance:  {role: insensitive}\n  rid:        {role: insensitive, type: integer}\n")
	cfg += privacy + "\n"
	if !strings.Contains(privacy, "search:") {
		cfg += "search: {algorithm: optimal, metric: loss}\n"
	}
	cfgPath = filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfgPath, whole, parts
}

// TestReleaseOnPrismPersons: the generated admissions table in four parts, most
// patients' rows in several of them, released on Prism with privacy.privacy-unit: the
// persons are numbered once for every part, so the parts' class tables (one entry per
// class and person) merge exactly, and Beam publishes the same records (each line
// names its input row: the same records suppressed) at the same node, with the same
// report, persons included, as the CLI's release of the whole table; for k alone in
// persons, with distinct l-diversity in persons, and with minimum levels (the class
// table and the input's risk counted at a cut, in persons). The same table counted in
// rows is released at another node or with other records: the persons matter.
func TestReleaseOnPrismPersons(t *testing.T) {
	const unit = "privacy-unit: {column: patient_id}"
	for _, c := range []struct {
		name, privacy, rows string
	}{
		{"k", "privacy: {k: 5, suppression: 0.05, " + unit + "}", "privacy: {k: 5, suppression: 0.05}"},
		{"l-diversity", "privacy: {k: 4, suppression: 0.05, " + unit + ", l-diversity: {column: diagnosis, variant: distinct, l: 3}}", ""},
		{"min-levels", "privacy: {k: 3, suppression: 0.04, " + unit + "}\nsearch: {algorithm: optimal, metric: loss, min-levels: {age: 1, zip: 1, admitted: 2}}", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfgPath, whole, parts := admissionsParts(t, 3000, c.privacy, nil)
			got, rep, _, _ := againstCLI(t, cfgPath, parts, whole)
			if got.Report == nil || rep.Persons == nil || !reflect.DeepEqual(got.Report.Persons, rep.Persons) {
				t.Errorf("Beam's report in persons %+v; the CLI's %+v", got.Report.Persons, rep.Persons)
			}
			if got.Job.Persons != rep.Persons.Input || got.Result.MinPersons < got.Options.K {
				t.Errorf("Beam numbered %d persons, the CLI read %d; smallest class %d persons", got.Job.Persons, rep.Persons.Input, got.Result.MinPersons)
			}
			if got.Classes.Len() <= got.Classes.Records()/20 {
				t.Errorf("%d entries for %d records", got.Classes.Len(), got.Classes.Records())
			}
			t.Logf("%d persons, %d entries; node %v, %d suppressed, smallest class %d persons, %d in several classes", got.Job.Persons, got.Classes.Len(), got.Result.Levels, got.Result.Suppressed, got.Result.MinPersons, rep.Persons.Several)
			if c.rows == "" {
				return
			}
			rowsCfg, _, _ := admissionsParts(t, 3000, c.rows, nil)
			j, err := NewJob(rowsCfg)
			if err != nil {
				t.Fatal(err)
			}
			byRows, err := Search(context.Background(), j, parts, "", onPrism)
			if err != nil {
				t.Fatal(err)
			}
			if reflect.DeepEqual(byRows.Result.Levels, got.Result.Levels) && byRows.Result.Suppressed == got.Result.Suppressed {
				t.Errorf("counted in rows, the node %v and %d suppressed are the persons' release's: the test cannot tell them apart", byRows.Result.Levels, byRows.Result.Suppressed)
			}
		})
	}
}

// TestReleaseOnPrismPersonsRefused: a record without its person's id (empty) in a part
// is bad input naming the part, the row, the column and the key, never a value, and
// nothing is published; a model the CLI does not count in persons is refused as the
// CLI refuses it (a pseudonym's key file: TestReleaseOnPrismPseudonymKeyFile).
func TestReleaseOnPrismPersonsRefused(t *testing.T) {
	const privacy = "privacy: {k: 3, suppression: 0.05, privacy-unit: {column: patient_id}}"
	var id string
	cfgPath, _, parts := admissionsParts(t, 600, privacy, func(part, row int, rec []string) {
		if part == 2 && row == 6 {
			id, rec[0] = rec[0], ""
		}
	})
	releaseFails(t, cfgPath, parts, fault.ErrBadInput, `part-2.csv: row 7: column "patient_id": no person id`, "")
	releaseFails(t, cfgPath, parts, fault.ErrBadInput, "privacy.privacy-unit.column", id)

	cfgPath, _, parts = admissionsParts(t, 300, privacy, nil)
	raw, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to, says string }{
		{"suppression: 0.05,", "suppression: 0.05, l-diversity: {column: diagnosis, variant: entropy, l: 2},", "privacy.l-diversity.variant"},
	} {
		if err := os.WriteFile(cfgPath, []byte(testfiles.Replace(t, string(raw), c.from, c.to)), 0o600); err != nil {
			t.Fatal(err)
		}
		releaseFails(t, cfgPath, parts, fault.ErrBadInput, c.says, "")
	}
}
