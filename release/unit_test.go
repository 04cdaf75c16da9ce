package release

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/report"
	"sanitizer/sample"
	"sanitizer/schema"
)

// admissionsFixture writes n rows of the generated admissions table (several rows per
// patient) with one more column, rid (the row's number, insensitive, released as it
// is, so that the test can tell which input row a release row is), edited by edit (nil:
// none), and a configuration of testdata/admissions.yaml's roles whose privacy section
// is privacy. It returns the configuration, the input's path and the folder.
func admissionsFixture(t *testing.T, n int, privacy string, edit func(row int, rec []string)) (*schema.Config, string, string) {
	t.Helper()
	var gen bytes.Buffer
	if err := sample.Admissions(&gen, n, 5); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(gen.String(), "\n"), "\n")
	var b strings.Builder
	b.WriteString(lines[0] + ",rid\n")
	for r, line := range lines[1:] {
		rec := strings.Split(line, ",")
		if edit != nil {
			edit(r, rec)
		}
		fmt.Fprintf(&b, "%s,%d\n", strings.Join(rec, ","), r)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "admissions.csv")
	if err := os.WriteFile(in, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	hier, err := filepath.Abs("../testdata/hierarchies")
	if err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`dataset: admissions
input: {format: csv, csv: {separator: ",", header: true}}
output: {format: csv}
columns:
  patient_id: {role: identifier}
  name:       {role: identifier}
  age:        {role: quasi, type: integer, hierarchy: {intervals: [5, 10, 20]}}
  sex:        {role: quasi, hierarchy: {file: %[1]s/sex.csv}}
  zip:        {role: quasi, hierarchy: {mask: {from: right, max: 4}}}
  admitted:   {role: quasi, type: date, hierarchy: {date: [month, year, decade]}}
  diagnosis:  {role: insensitive}
  stay_days:  {role: quasi, type: integer, hierarchy: {intervals: [7, 28, 364]}}
  ward:       {role: quasi, hierarchy: {file: %[1]s/ward.csv}}
  insurance:  {role: insensitive}
  rid:        {role: insensitive, type: integer}
%[2]s
`, hier, privacy)
	if !strings.Contains(privacy, "search:") {
		cfg += "search: {algorithm: optimal, metric: loss}\n"
	}
	path := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := schema.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return c, in, dir
}

// personsPerClass reads a release and its input as strings and returns, per class
// (the released quasi-identifiers' values), the distinct patients of its rows, found
// through the released rid.
func personsPerClass(t *testing.T, in, rel string) map[string]map[string]bool {
	t.Helper()
	classes, _ := releasedPersons(t, in, rel)
	return classes
}

// releasedPersons is personsPerClass with, per patient, its released rows.
func releasedPersons(t *testing.T, in, rel string) (map[string]map[string]bool, map[string]int) {
	t.Helper()
	header, rows := readTable(t, in, ',')
	pid, rid := indexOf(header, "patient_id"), indexOf(header, "rid")
	patient := map[string]string{}
	for _, rec := range rows {
		patient[rec[rid]] = rec[pid]
	}
	rheader, released := readTable(t, rel, ',')
	quasi := []int{indexOf(rheader, "age"), indexOf(rheader, "sex"), indexOf(rheader, "zip"), indexOf(rheader, "admitted"), indexOf(rheader, "stay_days"), indexOf(rheader, "ward")}
	out, kept := map[string]map[string]bool{}, map[string]int{}
	for _, rec := range released {
		var key []string
		for _, q := range quasi {
			key = append(key, rec[q])
		}
		k := strings.Join(key, "\x1f")
		if out[k] == nil {
			out[k] = map[string]bool{}
		}
		p, ok := patient[rec[indexOf(rheader, "rid")]]
		if !ok {
			t.Fatalf("a released rid is not an input row")
		}
		out[k][p] = true
		kept[p]++
	}
	return out, kept
}

func indexOf(header []string, name string) int {
	for i, h := range header {
		if h == name {
			return i
		}
	}
	return -1
}

// TestReleasePersons: with privacy.privacy-unit, every class of the written release
// holds rows of at least k distinct patients, counted by the test from the files'
// strings; the same release counted in rows has classes of fewer patients (so the
// test can tell the two apart), and no release holds the patient id.
func TestReleasePersons(t *testing.T) {
	modelsOnly(t)
	const k = 5
	for _, tt := range []struct {
		name    string
		privacy string
		persons bool
	}{
		{"rows", "privacy: {k: 5, suppression: 0.05}", false},
		{"persons", "privacy: {k: 5, suppression: 0.05, privacy-unit: {column: patient_id}}", true},
		{"persons mondrian", "privacy: {k: 5, suppression: 0.05, privacy-unit: {column: patient_id}}\nsearch: {algorithm: mondrian}", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, in, dir := admissionsFixture(t, 6000, tt.privacy, nil)
			out := filepath.Join(dir, "out.csv")
			rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
			if err != nil {
				t.Fatal(err)
			}
			classes, kept := releasedPersons(t, in, out)
			if tt.persons {
				checkPersonsReport(t, rep.Persons, in, classes, kept)
			} else if rep.Persons != nil {
				t.Errorf("a release in rows reports persons: %+v", rep.Persons)
			}
			fewest, below := 0, 0
			for _, who := range classes {
				if fewest == 0 || len(who) < fewest {
					fewest = len(who)
				}
				if len(who) < k {
					below++
				}
			}
			if tt.persons && below > 0 {
				t.Errorf("%d classes hold fewer than %d patients (the fewest %d)", below, k, fewest)
			}
			if !tt.persons && below == 0 {
				t.Errorf("counted in rows, every class still holds %d patients: the fixture cannot tell persons from rows", k)
			}
			rel, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if header, _, _ := strings.Cut(string(rel), "\n"); strings.Contains(header, "patient_id") {
				t.Errorf("the release holds the unit column: %q", header)
			}
		})
	}
}

// TestReleasePersonsBadIds: a record without its person's id (null, empty) or an input
// without the unit's column is exit 2 naming the file, row and column, never a value,
// and nothing is written.
func TestReleasePersonsBadIds(t *testing.T) {
	privacy := "privacy: {k: 3, suppression: 0.05, privacy-unit: {column: patient_id}}"
	for _, tt := range []struct {
		name string
		edit func(row int, rec []string)
		want string
	}{
		{"empty", func(row int, rec []string) {
			if row == 40 {
				rec[0] = ""
			}
		}, `admissions.csv: row 41: column "patient_id": no person id`},
		{"blank first", func(row int, rec []string) {
			if row == 0 {
				rec[0] = ""
			}
		}, `admissions.csv: row 1: column "patient_id": no person id`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, in, dir := admissionsFixture(t, 300, privacy, tt.edit)
			out := filepath.Join(dir, "out.csv")
			_, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
			if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "privacy.privacy-unit.column") {
				t.Fatalf("got %v, want bad input with %q and the key", err, tt.want)
			}
			leftOnly(t, dir, "admissions.csv", "c.yaml")
		})
	}
	t.Run("no column", func(t *testing.T) {
		cfg, in, dir := admissionsFixture(t, 300, privacy, nil)
		data, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		renamed := testfiles.Replace(t, string(data), "patient_id,", "patient,")
		if err := os.WriteFile(in, []byte(renamed), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err = Release(context.Background(), cfg, job.Options{Input: in, Output: filepath.Join(dir, "out.csv")})
		if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "patient_id") {
			t.Fatalf("got %v, want bad input naming the column", err)
		}
		leftOnly(t, dir, "admissions.csv", "c.yaml")
	})
}

// leftOnly fails when dir holds a file not named.
func leftOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		found := false
		for _, n := range names {
			found = found || e.Name() == n
		}
		if !found {
			t.Errorf("left %s behind", e.Name())
		}
	}
}

// checkPersonsReport compares a release's report in persons with the test's own count
// from the input (in) and the release's classes' patients.
func checkPersonsReport(t *testing.T, got *report.PersonsSummary, in string, classes map[string]map[string]bool, kept map[string]int) {
	t.Helper()
	header, rows := readTable(t, in, ',')
	pid := indexOf(header, "patient_id")
	records := map[string]int{} // per patient, the input's records
	for _, rec := range rows {
		records[rec[pid]]++
	}
	inClasses := map[string]int{} // per released patient, the classes it is in
	fewest, sum := 0, 0
	for _, who := range classes {
		if fewest == 0 || len(who) < fewest {
			fewest = len(who)
		}
		sum += len(who)
		for p := range who {
			inClasses[p]++
		}
	}
	several, lostSome := 0, 0
	for _, n := range inClasses {
		if n > 1 {
			several++
		}
	}
	for p, n := range records {
		if kept[p] < n {
			lostSome++
		}
	}
	want := report.PersonsSummary{Column: "patient_id", Input: len(records), Released: len(inClasses), MinClass: fewest, Several: several,
		LostSome: lostSome, LostAll: len(records) - len(inClasses)}
	if len(classes) > 0 {
		want.AvgClass = float64(sum) / float64(len(classes))
	}
	if got == nil {
		t.Fatal("no persons in the report")
	}
	g := *got
	if math.Abs(g.AvgClass-want.AvgClass) < 1e-9 {
		g.AvgClass = want.AvgClass
	}
	if g != want {
		t.Errorf("report in persons %+v, counted %+v", g, want)
	}
}

// TestRiskPersons: sanitize risk with privacy.privacy-unit measures in persons: the
// input's and the release's highest prosecutor risk is 1 / the fewest persons of a
// class, counted by the test from the files' strings, and the release's persons are
// the report's; a release made counting rows shows its classes of one patient.
func TestRiskPersons(t *testing.T) {
	modelsOnly(t)
	persons := "privacy: {k: 5, suppression: 0.05, privacy-unit: {column: patient_id}}"
	for _, made := range []string{"privacy: {k: 5, suppression: 0.05}", persons} {
		cfg, in, dir := admissionsFixture(t, 4000, made, nil)
		out := filepath.Join(dir, "out.csv")
		if _, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
			t.Fatal(err)
		}
		cfg, _, _ = admissionsFixture(t, 4000, persons, nil) // the same input, analysed in persons
		a, err := Risk(context.Background(), cfg, job.Options{Input: in, Output: out})
		if err != nil {
			t.Fatal(err)
		}
		classes, kept := releasedPersons(t, in, out)
		fewest := 0
		for _, who := range classes {
			if fewest == 0 || len(who) < fewest {
				fewest = len(who)
			}
		}
		if a.Persons == nil || a.Risk.Release == nil || math.Abs(a.Risk.Release.HighestRisk-1/float64(fewest)) > 1e-12 {
			t.Fatalf("made with %q: release's highest risk %v, want 1/%d", made, a.Risk.Release, fewest)
		}
		checkPersonsReport(t, a.Persons.Release, in, classes, kept)
		if made != persons && fewest >= 5 {
			t.Errorf("a release counted in rows has no class under 5 patients: the test tells nothing")
		}
		header, rows := readTable(t, in, ',')
		inClasses := map[string]map[string]bool{}
		for _, rec := range rows {
			var key []string
			for _, q := range []string{"age", "sex", "zip", "admitted", "stay_days", "ward"} {
				key = append(key, rec[indexOf(header, q)])
			}
			k := strings.Join(key, "\x1f")
			if inClasses[k] == nil {
				inClasses[k] = map[string]bool{}
			}
			inClasses[k][rec[indexOf(header, "patient_id")]] = true
		}
		fewestIn := 0
		for _, who := range inClasses {
			if fewestIn == 0 || len(who) < fewestIn {
				fewestIn = len(who)
			}
		}
		if math.Abs(a.Risk.Input.HighestRisk-1/float64(fewestIn)) > 1e-12 || a.Risk.Input.Classes != int64(len(inClasses)) {
			t.Errorf("input: highest risk %g in %d classes, counted 1/%d in %d", a.Risk.Input.HighestRisk, a.Risk.Input.Classes, fewestIn, len(inClasses))
		}
	}
}
