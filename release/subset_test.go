package release

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"sanitizer/fault"
	"sanitizer/job"
	"sanitizer/risk"
	"sanitizer/schema"
	"sanitizer/verify"
)

// subsetFixture writes Adult with two more columns: rid (the record's number,
// insensitive, released as it is, so that the test can tell which records a release
// holds) and in_study (the research subset's flag, about one record in eight, written
// in each accepted spelling); privacy is the configuration's privacy section.
func subsetFixture(t *testing.T, privacy string, flag func(row int) string) (cfg *schema.Config, in, dir string, subset map[string]bool) {
	t.Helper()
	abs := needAdult(t)
	dir = t.TempDir()
	header, rows := readTable(t, filepath.Join(abs, "adult.csv"), ';')
	var b strings.Builder
	b.WriteString(strings.Join(header, ";") + ";rid;in_study\n")
	subset = map[string]bool{}
	for r, rec := range rows {
		f := flag(r)
		if in, _ := strconv.ParseBool(strings.ToLower(strings.ReplaceAll(strings.ReplaceAll(f, "yes", "true"), "no", "false"))); in {
			subset[strconv.Itoa(r)] = true
		}
		fmt.Fprintf(&b, "%s;%d;%s\n", strings.Join(rec, ";"), r, f)
	}
	in = filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	var c strings.Builder
	fmt.Fprintf(&c, "dataset: adult\ninput: {csv: {separator: \";\"}}\noutput: {csv: {separator: \";\"}}\ncolumns:\n")
	for _, q := range adultQI {
		fmt.Fprintf(&c, "  %s: {role: quasi, hierarchy: {file: %q}}\n", q, filepath.Join(abs, "adult_hierarchy_"+q+".csv"))
	}
	fmt.Fprintf(&c, "  occupation: {role: sensitive}\n  rid: {role: insensitive, type: integer}\n  in_study: {role: identifier}\n%s\n", privacy)
	path := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(path, []byte(c.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := schema.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, in, dir, subset
}

// studyFlag marks about one record in eight, spelled each accepted way.
func studyFlag(r int) string {
	in := (r*2654435761)%8 == 0
	spell := [][2]string{{"1", "0"}, {"true", "false"}, {"YES", "no"}, {" True ", "False"}}[r%4]
	if in {
		return spell[0]
	}
	return spell[1]
}

// adultLabels maps, per quasi-identifier of Adult, a value to its labels by level,
// read from the hierarchy files by the test itself.
func adultLabels(t *testing.T) map[string]map[string][]string {
	abs := needAdult(t)
	out := map[string]map[string][]string{}
	for _, q := range adultQI {
		raw, err := os.ReadFile(filepath.Join(abs, "adult_hierarchy_"+q+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		out[q] = map[string][]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
			f := strings.Split(strings.TrimRight(line, "\r"), ";")
			out[q][f[0]] = f
		}
	}
	return out
}

// TestReleaseResearchSubset: a release of a research subset under δ-presence and
// k-map holds subset records only, every class of it meets both against the
// population counted by the test from the input's strings and the hierarchy files,
// exactly the subset classes that fail a model are suppressed, the report's measures
// are the counted ones, and check agrees.
func TestReleaseResearchSubset(t *testing.T) {
	modelsOnly(t)
	const dmin, dmax, kmap = 0.02, 0.5, 6
	cfg, in, dir, subset := subsetFixture(t, fmt.Sprintf("privacy: {k: 2, suppression: 0.05, subset: {column: in_study}, delta-presence: {min: %g, max: %g}, k-map: {k: %d}}", dmin, dmax, kmap), studyFlag)
	out := filepath.Join(dir, "out.csv")
	rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	labels := adultLabels(t)
	level := map[string]int{}
	for _, n := range rep.Node {
		level[n.Column] = n.Level
	}
	keyOf := func(h []string, rec []string, generalize bool) string {
		parts := make([]string, len(adultQI))
		for i, q := range adultQI {
			v := rec[slices.Index(h, q)]
			if generalize {
				v = labels[q][v][level[q]]
			}
			parts[i] = v
		}
		return strings.Join(parts, "|")
	}
	ih, irows := readTable(t, in, ';')
	pop, sub := map[string]int{}, map[string]int{}
	for _, rec := range irows {
		k := keyOf(ih, rec, true)
		pop[k]++
		if subset[rec[slices.Index(ih, "rid")]] {
			sub[k]++
		}
	}
	oh, orows := readTable(t, out, ';')
	if slices.Index(oh, "in_study") >= 0 {
		t.Fatal("the release holds the subset's column")
	}
	released := map[string]int{}
	for _, rec := range orows {
		if !subset[rec[slices.Index(oh, "rid")]] {
			t.Fatalf("the release holds record %s, which is not in the research subset", rec[slices.Index(oh, "rid")])
		}
		released[keyOf(oh, rec, false)]++
	}
	lo, hi, smallest := 2.0, -1.0, 1<<62
	for k, c := range released {
		d := float64(c) / float64(pop[k])
		if pop[k] < kmap || d < dmin || d > dmax {
			t.Errorf("a released class of %d records has %d population records (δ = %.4f)", c, pop[k], d)
		}
		lo, hi, smallest = min(lo, d), max(hi, d), min(smallest, pop[k])
	}
	suppressed := 0
	for k, c := range sub {
		d := float64(c) / float64(pop[k])
		fails := c < 2 || pop[k] < kmap || d < dmin || d > dmax
		switch {
		case fails && released[k] > 0:
			t.Errorf("a class failing the models is released")
		case fails:
			suppressed += c
		case released[k] != c:
			t.Errorf("a class meeting the models released %d of its %d records", released[k], c)
		}
	}
	if suppressed != rep.Suppressed || len(orows) != len(subset)-suppressed || rep.Input.Rows != len(subset) {
		t.Errorf("suppressed %d (report %d), released %d of a subset of %d (report input %d)", suppressed, rep.Suppressed, len(orows), len(subset), rep.Input.Rows)
	}
	vp := rep.Verified.Population
	if vp == nil || vp.DeltaMin != lo || vp.DeltaMax != hi || vp.SmallestPopulation != int64(smallest) {
		t.Errorf("report's population measures %+v; counted δ %g..%g, smallest %d", vp, lo, hi, smallest)
	}
	if s := rep.Model.Subset; s == nil || s.Records != len(subset) || s.Population != len(irows) || rep.Model.KMap == nil || rep.Model.DeltaPresence == nil {
		t.Errorf("report's model %+v", rep.Model)
	}
	if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
		t.Errorf("check: %v", err)
	}
	t.Logf("node %v: %d of %d subset records released, %d suppressed; δ %.4f..%.4f, smallest population class %d", nodeOf(rep), len(orows), len(subset), suppressed, lo, hi, smallest)

	// The subset released without the population models breaks them: check says so.
	plainCfg, plainIn, _, _ := subsetFixture(t, "privacy: {k: 2, suppression: 0.05}", studyFlag)
	only := filepath.Join(dir, "only.csv")
	var b strings.Builder
	b.WriteString(strings.Join(ih, ";") + "\n")
	_, prows := readTable(t, plainIn, ';')
	for _, rec := range prows {
		if subset[rec[slices.Index(ih, "rid")]] {
			b.WriteString(strings.Join(rec, ";") + "\n")
		}
	}
	if err := os.WriteFile(only, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	plainOut := filepath.Join(dir, "plain.csv")
	if _, err := Release(context.Background(), plainCfg, job.Options{Input: only, Output: plainOut}); err != nil {
		t.Fatal(err)
	}
	if _, err := Check(context.Background(), cfg, job.Options{Input: in, Output: plainOut}); !errors.Is(err, fault.ErrUnattainable) {
		t.Errorf("check of the subset released without δ-presence and k-map: %v, want it in breach", err)
	}
}

// TestReleaseEstimatedKMap: k-map without a subset is k-anonymity with ARX's derived
// k, which the release meets and the report gives.
func TestReleaseEstimatedKMap(t *testing.T) {
	modelsOnly(t)
	dir := t.TempDir()
	cfg := adultConfig(t, dir, 2, 0.05)
	poisson := risk.Poisson
	cfg.Privacy.KMap = &schema.KMap{K: 20, Estimator: &poisson, Significance: 0.01}
	cfg.Risk.SamplingFraction = 0.05
	abs := needAdult(t)
	in := filepath.Join(abs, "adult.csv")
	rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: filepath.Join(dir, "out.csv")})
	if err != nil {
		t.Fatal(err)
	}
	want, typeI, err := risk.KMapK(20, 0.05, 0.01, risk.Poisson, rep.Input.Rows)
	if err != nil {
		t.Fatal(err)
	}
	if want <= 2 {
		t.Fatalf("derived k %d: the test needs one above privacy.k", want)
	}
	if rep.Verified.MinClass < want || rep.Model.KMap == nil || rep.Model.KMap.DerivedK != want || rep.Model.KMap.TypeIError != typeI {
		t.Errorf("smallest class %d, report %+v; derived k %d (type I %g)", rep.Verified.MinClass, rep.Model.KMap, want, typeI)
	}
	t.Logf("k-map k=20 at fraction 0.05: derived k %d, type I %.3g; smallest class %d", want, typeI, rep.Verified.MinClass)
}

// TestReleaseSubsetBadFlags: a flag that is not one, an empty flag and a subset of no
// record are bad input naming the file, row and column, and nothing is written.
func TestReleaseSubsetBadFlags(t *testing.T) {
	modelsOnly(t)
	privacy := "privacy: {k: 2, subset: {column: in_study}, k-map: {k: 3}}"
	for _, tt := range []struct {
		name string
		flag func(r int) string
		want string
	}{
		{"not a flag", func(r int) string {
			if r == 1234 {
				return "maybe"
			}
			return studyFlag(r)
		}, `in.csv: row 1235: column "in_study": not a research subset flag`}, // row 1 is the first record
		{"empty", func(r int) string {
			if r == 77 {
				return ""
			}
			return studyFlag(r)
		}, `in.csv: row 78: column "in_study": not a research subset flag`},
		{"empty subset", func(int) string { return "0" }, "no record is in the research subset"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, in, dir, _ := subsetFixture(t, privacy, tt.flag)
			out := filepath.Join(dir, "out.csv")
			_, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
			if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want bad input with %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "maybe") {
				t.Errorf("the error quotes the value: %v", err)
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if e.Name() != "in.csv" && e.Name() != "c.yaml" {
					t.Errorf("left %s behind", e.Name())
				}
			}
		})
	}
}

// TestRiskResearchSubset: sanitize risk measures the research subset's records, and
// their classes are the subset's, counted by the test.
func TestRiskResearchSubset(t *testing.T) {
	cfg, in, _, subset := subsetFixture(t, "privacy: {subset: {column: in_study}, k-map: {k: 3}}", studyFlag)
	a, err := Risk(context.Background(), cfg, job.Options{Input: in})
	if err != nil {
		t.Fatal(err)
	}
	ih, irows := readTable(t, in, ';')
	classes := map[string]bool{}
	for _, rec := range irows {
		if subset[rec[slices.Index(ih, "rid")]] {
			key := make([]string, len(adultQI))
			for i, q := range adultQI {
				key[i] = rec[slices.Index(ih, q)]
			}
			classes[strings.Join(key, "|")] = true
		}
	}
	if a.Input.Rows != len(subset) || a.Risk.Input.Classes != int64(len(classes)) {
		t.Errorf("risk measured %d records in %d classes; the subset has %d in %d", a.Input.Rows, a.Risk.Input.Classes, len(subset), len(classes))
	}
}

// TestSubsetFlagAgreesWithVerifier: the release's reading of a flag and the verifier's
// own agree on every spelling, and on what is not a flag.
func TestSubsetFlagAgreesWithVerifier(t *testing.T) {
	for _, v := range []string{"1", "0", "true", "FALSE", " Yes ", "no", "", "maybe", "2", "truee", "t", "nO"} {
		in, ok := subsetFlag(v)
		vin, vok := verify.InSubset(v)
		if in != vin || ok != vok {
			t.Errorf("%q: release reads (%v, %v), the verifier (%v, %v)", v, in, ok, vin, vok)
		}
	}
}

// subsetNCP is the NCP of a research subset's release whose records hold values (each
// released as its label), counted as generalize.Metrics's NCP defines it: on a numeric
// column (num not nil), the span of the population's leaves a label covers over the
// span of the values the subset holds, at most 1; on another, the leaves it covers
// over the column's leaves (0 for one).
func subsetNCP(values []string, byLabel map[string]map[string]bool, leaves int, label func(string) string, num func(string) float64) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range values {
		if num != nil {
			lo, hi = min(lo, num(v)), max(hi, num(v))
		}
	}
	sum := 0.0
	for _, v := range values {
		covered := byLabel[label(v)]
		switch {
		case num != nil:
			clo, chi := math.Inf(1), math.Inf(-1)
			for leaf := range covered {
				clo, chi = min(clo, num(leaf)), max(chi, num(leaf))
			}
			if hi > lo {
				sum += min((chi-clo)/(hi-lo), 1)
			}
		case len(covered) > 1:
			sum += float64(len(covered)) / float64(leaves)
		}
	}
	return sum / float64(len(values))
}

// TestSubsetBuiltHierarchies: a research subset's release generalizes a
// quasi-identifier through each kind of hierarchy (integer intervals, a mask, dates, a
// hierarchy file) above level 0, the subset's records holding only every other value
// of the population's. The leaves of a built hierarchy are the values of the whole
// input (the population), as a hierarchy file's are its rows: the release's loss is
// that of the population's leaves, counted here from the input's text, and its NCP
// measures a label's span among them against the span of the subset's values; the
// search, the verification that cross-checks it and Check agree on both.
func TestSubsetBuiltHierarchies(t *testing.T) {
	abs, err := filepath.Abs("../testdata/hierarchies/sex.csv")
	if err != nil {
		t.Fatal(err)
	}
	day0 := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	days := func(v string) float64 { d, _ := time.Parse(time.DateOnly, v); return d.Sub(day0).Hours() / 24 }
	for _, c := range []struct {
		name, column, conf string
		value              func(i int) string // record i's value
		label              func(v string) string
		num                func(v string) float64 // a value's number (nil: not numeric)
	}{
		{"intervals", "age", "{role: quasi, type: integer, hierarchy: {intervals: [10, 20]}}",
			func(i int) string { return strconv.Itoa(20 + i%60) },
			func(v string) string { n, _ := strconv.Atoi(v); return fmt.Sprintf("[%d,%d]", n-n%10, n-n%10+9) },
			func(v string) float64 { n, _ := strconv.Atoi(v); return float64(n) }},
		{"mask", "zip", "{role: quasi, hierarchy: {mask: {from: right, max: 3}}}",
			func(i int) string { return fmt.Sprintf("021%02d", i%40) },
			func(v string) string { return v[:4] + "*" }, nil},
		{"date", "admitted", "{role: quasi, type: date, hierarchy: {date: [month, year]}}",
			func(i int) string { return day0.AddDate(0, 0, i%90).Format(time.DateOnly) },
			func(v string) string { return v[:7] }, days},
		{"file", "sex", fmt.Sprintf("{role: quasi, hierarchy: {file: %q}}", abs),
			func(i int) string { return []string{"F", "M"}[i%4/2] },
			func(string) string { return "*" }, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			var b strings.Builder
			b.WriteString(c.column + ",rid,in_study\n")
			popLeaves, byLabel := map[string]bool{}, map[string]map[string]bool{}
			var subsetValues []string
			const n = 720
			for i := range n {
				v, in := c.value(i), i%2 == 0
				fmt.Fprintf(&b, "%s,%d,%v\n", v, i, in)
				popLeaves[v] = true
				if byLabel[c.label(v)] == nil {
					byLabel[c.label(v)] = map[string]bool{}
				}
				byLabel[c.label(v)][v] = true
				if in {
					subsetValues = append(subsetValues, v)
				}
			}
			in := filepath.Join(dir, "in.csv")
			if err := os.WriteFile(in, []byte(b.String()), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg := loadConfigText(t, fmt.Sprintf("columns:\n  %s: %s\n  rid: {role: insensitive, type: integer}\n  in_study: {role: identifier}\n"+
				"privacy: {k: 2, suppression: 0, subset: {column: in_study}, k-map: {k: 2}}\nsearch: {min-levels: {%s: 1}, max-levels: {%s: 1}}\n", c.column, c.conf, c.column, c.column))
			// The loss over the population's leaves: per subset record, the leaves its
			// released value covers less one, over the column's leaves less one.
			leaves := len(popLeaves)
			if c.name == "file" {
				leaves = 2 // the file's rows
			}
			want := 0.0
			for _, v := range subsetValues {
				want += float64(len(byLabel[c.label(v)])-1) / float64(leaves-1)
			}
			want /= float64(len(subsetValues))
			wantNCP := subsetNCP(subsetValues, byLabel, leaves, c.label, c.num)
			out := filepath.Join(dir, "r.csv")
			rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out})
			if err != nil {
				t.Fatalf("release: %v", err)
			}
			if rep.Suppressed != 0 || rep.Input.Rows != len(subsetValues) {
				t.Fatalf("%d of %d subset records suppressed", rep.Suppressed, rep.Input.Rows)
			}
			if math.Abs(rep.Utility.Loss-want) > 1e-12 {
				t.Errorf("the release's loss %.6f, the population's leaves give %.6f", rep.Utility.Loss, want)
			}
			if math.Abs(rep.Utility.NCP-wantNCP) > 1e-12 {
				t.Errorf("the release's NCP %.6f, want %.6f", rep.Utility.NCP, wantNCP)
			}
			m, err := Check(context.Background(), cfg, job.Options{Input: in, Output: out})
			if err != nil {
				t.Fatalf("check: %v", err)
			}
			if math.Abs(m.Loss-rep.Utility.Loss) > 1e-12 || math.Abs(m.NCP-rep.Utility.NCP) > 1e-12 {
				t.Errorf("check measures loss %g, NCP %g; the release's report %g, %g", m.Loss, m.NCP, rep.Utility.Loss, rep.Utility.NCP)
			}
		})
	}
}
