package release

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/sample"
	"sanitizer/schema"
	"sanitizer/verify"
)

// personsCheck runs check's count in persons (checkPersons) of the release out of
// input in, configured by cfg (which names the privacy unit).
func personsCheck(t *testing.T, cfg *schema.Config, in, out string) (*Measured, error) {
	t.Helper()
	ctx := context.Background()
	rp, err := planCheck(cfg, job.Options{Input: in, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	src, p, err := rp.open()
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	spec, err := checkSpec(ctx, p, src)
	if err != nil {
		t.Fatal(err)
	}
	spec.Unit = unitColumn(cfg)
	f, err := openChecked(p.output, p.outFormat, cfg.Output.CSV, spec.Columns, releaseTable)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := checkPersons(ctx, p, f, spec)
	return m, violation(p.output, err)
}

// personsOf counts, from the files' strings, what a release of the admissions
// fixture holds in persons: the input's patients, those released, those with rows in
// several classes, those who lost some and all of their rows, and the smallest class
// in patients.
func personsOf(t *testing.T, in, out string) verify.PersonsMeasured {
	t.Helper()
	header, rows := readTable(t, in, ',')
	pid, rid := slices.Index(header, "patient_id"), slices.Index(header, "rid")
	all, released := map[string]int{}, map[string]int{}
	patient := map[string]string{}
	for _, rec := range rows {
		all[rec[pid]]++
		patient[rec[rid]] = rec[pid]
	}
	rheader, rel := readTable(t, out, ',')
	at := slices.Index(rheader, "rid")
	for _, rec := range rel {
		released[patient[rec[at]]]++
	}
	pm := verify.PersonsMeasured{InputPersons: len(all), Released: len(released)}
	for p, n := range all {
		switch {
		case released[p] == 0:
			pm.LostAll++
			pm.LostSome++
		case released[p] < n:
			pm.LostSome++
		}
	}
	classes := map[string]int{}
	for _, who := range patientsPerClass(rheader, rel, func(rec []string) string { return patient[rec[at]] }) {
		if pm.MinClass == 0 || len(who) < pm.MinClass {
			pm.MinClass = len(who)
		}
		for p := range who {
			classes[p]++
		}
	}
	for _, n := range classes {
		if n > 1 {
			pm.InSeveralClasses++
		}
	}
	return pm
}

// patientsPerClass groups the release's records (header, rows) by their
// quasi-identifiers' values: per class, the distinct patients of its records
// (patientOf: a record's patient).
func patientsPerClass(header []string, rows [][]string, patientOf func([]string) string) map[string]map[string]bool {
	var quasi []int
	for _, q := range []string{"age", "sex", "zip", "admitted", "stay_days", "ward"} {
		quasi = append(quasi, slices.Index(header, q))
	}
	out := map[string]map[string]bool{}
	for _, rec := range rows {
		var key []string
		for _, q := range quasi {
			key = append(key, rec[q])
		}
		k := strings.Join(key, "\x1f")
		if out[k] == nil {
			out[k] = map[string]bool{}
		}
		out[k][patientOf(rec)] = true
	}
	return out
}

// TestCheckPersons: check with privacy.privacy-unit counts persons. A release made in
// persons passes, with every person count equal to the one counted from the files'
// strings; the same input released in rows (k=5 records, classes of fewer patients)
// fails the check with the unit set, both the count in persons through the input
// (checkPersons, naming the class, never an id) and Check's test of the records left
// out (the classes it publishes fail k in persons).
func TestCheckPersons(t *testing.T) {
	modelsOnly(t)
	ctx := context.Background()
	unit := "privacy: {k: 5, suppression: 0.05, privacy-unit: {column: patient_id}}"
	cfg, in, dir := admissionsFixture(t, 6000, unit, nil)
	persons := filepath.Join(dir, "persons.csv")
	if _, err := Release(ctx, cfg, job.Options{Input: in, Output: persons}); err != nil {
		t.Fatal(err)
	}
	rowsCfg, rowsIn, rowsDir := admissionsFixture(t, 6000, "privacy: {k: 5, suppression: 0.05}", nil)
	rows := filepath.Join(rowsDir, "rows.csv")
	if _, err := Release(ctx, rowsCfg, job.Options{Input: rowsIn, Output: rows}); err != nil {
		t.Fatal(err)
	}

	m, err := personsCheck(t, cfg, in, persons)
	if err != nil {
		t.Fatalf("check in persons of the release made in persons: %v", err)
	}
	want := personsOf(t, in, persons)
	got := *m.Persons
	if got.Sizes.Smallest() != int64(got.MinClass) || got.Sizes.Classes() != int64(m.Classes) {
		t.Errorf("class sizes in persons %+v: smallest %d, %d classes; want %d, %d", got.Sizes, got.Sizes.Smallest(), got.Sizes.Classes(), got.MinClass, m.Classes)
	}
	got.Sizes, got.Sensitive = want.Sizes, want.Sensitive
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("counted in persons\n%+v, from the files' strings\n%+v", got, want)
	}
	t.Logf("%+v", got)
	if got.MinClass < 5 || got.LostSome == 0 || got.InSeveralClasses == 0 || !m.Utility {
		t.Errorf("persons %+v, utility %v: the release tests little", got, m.Utility)
	}
	if _, err := Check(ctx, cfg, job.Options{Input: in, Output: persons}); err != nil {
		t.Errorf("Check of the release made in persons: %v", err)
	}

	// the release made in rows, checked with the unit (its input is the same table)
	_, err = personsCheck(t, cfg, rowsIn, rows)
	if !errors.Is(err, fault.ErrUnattainable) || !strings.Contains(err.Error(), "persons, k is 5") || !strings.Contains(err.Error(), "class ") {
		t.Fatalf("check in persons of the release made in rows: %v, want a class below k=5 persons", err)
	}
	header, input := readTable(t, rowsIn, ',')
	for _, rec := range input {
		if id := rec[slices.Index(header, "patient_id")]; strings.Contains(err.Error(), id) {
			t.Fatalf("%v quotes the id of a patient", err)
		}
	}
	t.Log(err)
	_, err = Check(ctx, cfg, job.Options{Input: rowsIn, Output: rows})
	t.Log(err)
	if !errors.Is(err, fault.ErrUnattainable) || !strings.Contains(err.Error(), "persons") {
		t.Errorf("Check with the unit of the release made in rows: %v, want a class that fails k in persons", err)
	}
	if _, err := Check(ctx, rowsCfg, job.Options{Input: rowsIn, Output: rows}); err != nil {
		t.Errorf("Check without the unit of the release made in rows: %v", err)
	}
}

// TestCheckPersonsMondrian: a Mondrian release, which suppresses nothing, is counted
// in persons through the input too: made in persons it passes, made in rows (k=5
// records) it holds partitions of fewer than 5 patients and fails.
func TestCheckPersonsMondrian(t *testing.T) {
	modelsOnly(t)
	ctx := context.Background()
	release := func(privacy string) (*schema.Config, string, string) {
		cfg, in, dir := admissionsFixture(t, 3000, privacy, nil)
		cfg.Search.Algorithm = schema.Mondrian
		out := filepath.Join(dir, "out.csv")
		if _, err := Release(ctx, cfg, job.Options{Input: in, Output: out}); err != nil {
			t.Fatal(err)
		}
		return cfg, in, out
	}
	cfg, in, persons := release("privacy: {k: 5, privacy-unit: {column: patient_id}}")
	rowsCfg, rowsIn, rows := release("privacy: {k: 5}")
	m, err := personsCheck(t, cfg, in, persons)
	if err != nil {
		t.Fatalf("Mondrian release made in persons: %v", err)
	}
	if want := personsOf(t, in, persons); m.Persons.MinClass != want.MinClass || m.Persons.MinClass < 5 || m.Suppressed != 0 {
		t.Errorf("persons %+v, suppressed %d; from the files' strings the smallest partition has %d patients", *m.Persons, m.Suppressed, want.MinClass)
	}
	if _, err := Check(ctx, rowsCfg, job.Options{Input: rowsIn, Output: rows}); err != nil {
		t.Fatalf("Mondrian release made in rows, checked in rows: %v", err)
	}
	_, err = personsCheck(t, cfg, rowsIn, rows)
	if !errors.Is(err, fault.ErrUnattainable) || !strings.Contains(err.Error(), "persons, k is 5") {
		t.Errorf("Mondrian release made in rows, checked in persons: %v, want a partition below k=5 persons", err)
	}
}

// TestCheckPersonsMondrianModels: Mondrian with distinct l-diversity and t-closeness
// in persons releases partitions that the check, counting persons from the input's
// ids beside the written file, finds (k,l)-diverse and t-close in persons; the same
// models decided in rows give a release the check in persons refuses.
func TestCheckPersonsMondrianModels(t *testing.T) {
	modelsOnly(t)
	ctx := context.Background()
	dir := t.TempDir()
	var gen bytes.Buffer
	if err := sample.Admissions(&gen, 3000, 5); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "admissions.csv")
	if err := os.WriteFile(in, gen.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	base, err := os.ReadFile("../testdata/admissions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	hier, err := filepath.Abs("../testdata/hierarchies")
	if err != nil {
		t.Fatal(err)
	}
	text := testfiles.ReplaceAll(t, string(base), "file: hierarchies/", "file: "+hier+"/")
	text = testfiles.Replace(t, text, "search: {algorithm: optimal, metric: loss}", "search: {algorithm: mondrian, metric: loss}")
	models := "  t-closeness: {column: diagnosis, t: 0.4, distance: equal}\n  l-diversity: {column: diagnosis, variant: distinct, l: 2}\n"
	release := func(name, privacy string) (*schema.Config, string) {
		cfg, err := schema.Parse([]byte(testfiles.Replace(t, text, "  k: 5\n  suppression: 0.05\n  l-diversity: {column: diagnosis, variant: distinct, l: 3}\n", privacy)), name+".yaml", dir)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, name+".csv")
		if _, err := Release(ctx, cfg, job.Options{Input: in, Output: out}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return cfg, out
	}
	cfg, persons := release("persons", "  k: 3\n  privacy-unit: {column: patient_id}\n"+models)
	if _, err := personsCheck(t, cfg, in, persons); err != nil {
		t.Fatalf("Mondrian release made in persons: %v", err)
	}
	_, rows := release("rows", "  k: 3\n"+models)
	if _, err := personsCheck(t, cfg, in, rows); err == nil {
		t.Errorf("Mondrian release made in rows passes the check in persons: the fixture cannot tell them apart")
	}
}
