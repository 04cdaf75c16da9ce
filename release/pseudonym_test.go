package release

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/report"
	"sanitizer/schema"
)

// testPseudonym is the test's own pseudonym of id under key: HMAC-SHA-256 cut to 16
// bytes, base32 with its padding taken off.
func testPseudonym(key []byte, id string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id))
	return strings.TrimRight(base32.StdEncoding.EncodeToString(m.Sum(nil)[:16]), "=")
}

// TestPseudonymFunction: pseudonym and the reusable pseudonymizer give the test's own
// HMAC for every id, 26 characters, well formed; a different key or id gives another.
func TestPseudonymFunction(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	z := newPseudonymizer(key)
	var buf []byte
	for i, id := range []string{"", "P1", "P4563956", "é", strings.Repeat("x", 200), "P4563957"} {
		want := testPseudonym(key, id)
		if got := pseudonym(key, id); got != want || len(got) != pseudonymLen || !wellFormed(got) {
			t.Errorf("id %d: pseudonym %q, want %q (26 characters, well formed)", i, got, want)
		}
		buf = z.append(buf[:0], id)
		if string(buf) != want {
			t.Errorf("id %d: pseudonymizer %q, want %q", i, buf, want)
		}
		if other := pseudonym(append(slices.Clone(key), 'x'), id); other == want {
			t.Errorf("id %d: another key gives the same pseudonym", i)
		}
	}
	if pseudonym(key, "P1") == pseudonym(key, "P2") {
		t.Error("two ids give one pseudonym")
	}
	for _, s := range []string{"", "P4563956", strings.Repeat("A", 25), strings.Repeat("A", 27), strings.Repeat("a", 26), strings.Repeat("A", 25) + "B", strings.Repeat("1", 26)} {
		if wellFormed(s) {
			t.Errorf("%q is taken for a pseudonym", s)
		}
	}
}

// TestSecretNeverPrinted: a key formats, logs and marshals as a placeholder.
func TestSecretNeverPrinted(t *testing.T) {
	key := secret("KEYMATERIAL-0123456789abcdefghijk")
	var log bytes.Buffer
	slog.New(slog.NewJSONHandler(&log, nil)).Info("x", "key", key)
	js, err := json.Marshal(struct{ K secret }{key})
	if err != nil {
		t.Fatal(err)
	}
	out := fmt.Sprintf("%v %s %q %x %X %#v %+v %d", key, key, key, key, key, key, key, key) + log.String() + string(js)
	assertNoKey(t, out, key)
}

// assertNoKey fails when text holds key, as it is or in hex, base64 or base32.
func assertNoKey(t *testing.T, text string, key []byte) {
	t.Helper()
	for _, form := range []string{string(key), hex.EncodeToString(key), strings.ToUpper(hex.EncodeToString(key)), base64.StdEncoding.EncodeToString(key),
		base64.RawURLEncoding.EncodeToString(key), base32.StdEncoding.EncodeToString(key), string(key[:16])} {
		if strings.Contains(text, form) {
			t.Fatalf("the key (%d bytes) appears in the text", len(key))
		}
	}
}

// writeKey writes a key file of content with mode perm into a folder of its own.
func writeKey(t *testing.T, content []byte, perm os.FileMode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pseudonym.key")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil {
		t.Fatal(err)
	}
	return path
}

// testKey is a key file's content that the tests look for in every text.
var testKey = []byte("KEYMATERIAL-ff00ee11dd22cc33bb44aa55-end\n")

// pseudonymPrivacy is a k=5 privacy section with a pseudonym (key file keyFile; "":
// a random key), and a search that releases the admission's year at least (so that
// many patients have rows in several classes).
func pseudonymPrivacy(keyFile string) string {
	p := "{}"
	if keyFile != "" {
		p = fmt.Sprintf("{key-file: %q}", keyFile)
	}
	return "privacy: {k: 5, suppression: 0.05, privacy-unit: {column: patient_id, pseudonym: " + p + "}}\n" + linkingSearch
}

// linkingSearch keeps the admission's year (level 2).
const linkingSearch = "search: {metric: loss, max-levels: {admitted: 2}}"

// releaseTable reads a CSV or Parquet release as strings.
func releaseStrings(t *testing.T, path string) ([]string, [][]string) {
	t.Helper()
	if strings.HasSuffix(path, ".csv") {
		return readTable(t, path, ',')
	}
	tbl := testfiles.ReadWithPqarrow(t, path)
	defer tbl.Release()
	header := make([]string, tbl.NumCols())
	for i := range header {
		header[i] = tbl.Schema().Field(i).Name
	}
	return header, tableRows(t, tbl)
}

// linkedRelease is a release with its persons linked through the input: per released
// row its patient (found by the released rid), its pseudonym and its class.
type linkedRelease struct {
	header  []string
	patient []string // per released row
	pseudo  []string
	class   []string
}

// readLinked reads the release rel of input in.
func readLinked(t *testing.T, in, rel string) linkedRelease {
	t.Helper()
	inHeader, inRows := readTable(t, in, ',')
	pid, rid := indexOf(inHeader, "patient_id"), indexOf(inHeader, "rid")
	patient := map[string]string{}
	for _, rec := range inRows {
		patient[rec[rid]] = rec[pid]
	}
	header, rows := releaseStrings(t, rel)
	want := slices.DeleteFunc(slices.Clone(inHeader), func(c string) bool { return c == "name" })
	if !slices.Equal(header, want) {
		t.Fatalf("release header %q, want %q (the unit's column at its place, name dropped)", header, want)
	}
	l := linkedRelease{header: header}
	at := indexOf(header, "patient_id")
	quasi := []int{indexOf(header, "age"), indexOf(header, "sex"), indexOf(header, "zip"), indexOf(header, "admitted"), indexOf(header, "stay_days"), indexOf(header, "ward")}
	for _, rec := range rows {
		p, ok := patient[rec[indexOf(header, "rid")]]
		if !ok {
			t.Fatal("a released rid is not an input row")
		}
		var key []string
		for _, q := range quasi {
			key = append(key, rec[q])
		}
		for i, v := range rec {
			if v == p && i != indexOf(header, "rid") {
				t.Fatalf("released row holds its patient's id in column %q", header[i])
			}
		}
		l.patient, l.pseudo, l.class = append(l.patient, p), append(l.pseudo, rec[at]), append(l.class, strings.Join(key, "\x1f"))
	}
	return l
}

// checkLinked checks a release's pseudonyms: the test's HMAC of each row's patient
// under key (nil: not known, then well formed), one per patient and patient per
// pseudonym; every class holds k pseudonyms, and every group of pseudonyms with the
// same set of classes holds k (multirelational k-anonymity). It returns the pseudonym
// of each released patient.
func checkLinked(t *testing.T, l linkedRelease, key []byte, k int) map[string]string {
	t.Helper()
	if len(l.pseudo) == 0 {
		t.Fatal("nothing released")
	}
	of, who := map[string]string{}, map[string]string{}
	classes := map[string]map[string]bool{} // per pseudonym, its classes
	persons := map[string]map[string]bool{} // per class, its pseudonyms
	for r, p := range l.pseudo {
		if key != nil && p != testPseudonym(key, l.patient[r]) {
			t.Fatalf("row %d: the pseudonym is not the HMAC of its patient's id", r)
		}
		if !wellFormed(p) {
			t.Fatalf("row %d: %q is not a pseudonym", r, p)
		}
		if q, ok := of[l.patient[r]]; ok && q != p {
			t.Fatalf("row %d: a patient has two pseudonyms", r)
		}
		if q, ok := who[p]; ok && q != l.patient[r] {
			t.Fatalf("row %d: two patients share a pseudonym", r)
		}
		of[l.patient[r]], who[p] = p, l.patient[r]
		if classes[p] == nil {
			classes[p] = map[string]bool{}
		}
		classes[p][l.class[r]] = true
		if persons[l.class[r]] == nil {
			persons[l.class[r]] = map[string]bool{}
		}
		persons[l.class[r]][p] = true
	}
	for _, ps := range persons {
		if len(ps) < k {
			t.Fatalf("a class holds %d persons, fewer than k=%d", len(ps), k)
		}
	}
	if small, several := multirelational(classes, k); small > 0 {
		t.Fatalf("%d groups of persons with the same set of classes hold fewer than k=%d", small, k)
	} else if several == 0 {
		t.Fatal("no person has rows in several classes: the fixture does not test the linking")
	}
	return of
}

// multirelational groups the persons by their set of classes (classes: per person)
// and returns the groups of fewer than k persons, and the persons in several classes.
func multirelational[P comparable](classes map[P]map[string]bool, k int) (small, several int) {
	groups := map[string]int{}
	for _, cs := range classes {
		var set []string
		for c := range cs {
			set = append(set, c)
		}
		slices.Sort(set)
		groups[strings.Join(set, "\x1e")]++
		if len(cs) > 1 {
			several++
		}
	}
	for _, n := range groups {
		if n < k {
			small++
		}
	}
	return small, several
}

// TestReleasePseudonym: with privacy.privacy-unit.pseudonym the release holds the
// unit's column under its name at its place, as the test's own HMAC of each released
// row's patient id (found through the released rid), one pseudonym per patient; every
// class holds 5 persons and every group of persons with the same set of classes does
// too (multirelational k-anonymity), which the same data released in persons without
// a pseudonym does not; in CSV and Parquet; the report says what the pseudonym links,
// and the key appears in no report, summary, log or metadata.
func TestReleasePseudonym(t *testing.T) {
	modelsOnly(t)
	keyFile := writeKey(t, testKey, 0o600)
	for _, tt := range []struct {
		name, out string
		keyFile   string
		key       report.PseudonymKey
	}{
		{"csv key file", "out.csv", keyFile, report.PseudonymKeyFile},
		{"parquet key file", "out.parquet", keyFile, report.PseudonymKeyFile},
		{"csv random", "out.csv", "", report.PseudonymKeyRandom},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, in, dir := admissionsFixture(t, 6000, pseudonymPrivacy(tt.keyFile), nil)
			if strings.HasSuffix(tt.out, ".parquet") {
				cfg.Output.Format = schema.FormatParquet
			}
			out := filepath.Join(dir, tt.out)
			var log bytes.Buffer
			rep, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out, Log: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			if err != nil {
				t.Fatal(err)
			}
			var key []byte
			if tt.keyFile != "" {
				key = testKey
			}
			checkLinked(t, readLinked(t, in, out), key, 5)
			want := report.PseudonymStatement{Column: "patient_id", Key: tt.key, Links: report.PseudonymLinks(tt.key)}
			if rep.Persons == nil || rep.Persons.Pseudonym == nil || *rep.Persons.Pseudonym != want {
				t.Fatalf("the report's pseudonym statement: %+v, want %+v", rep.Persons, want)
			}
			js, err := json.Marshal(rep)
			if err != nil {
				t.Fatal(err)
			}
			var sum bytes.Buffer
			rep.Summary(&sum)
			if !strings.Contains(string(js), `"pseudonym":{"column":"patient_id","key":"`+string(tt.key)+`"`) || !strings.Contains(sum.String(), "pseudonym: patient_id holds a keyed pseudonym") {
				t.Errorf("the JSON report or the summary lacks the pseudonym:\n%s\n%s", js, sum.String())
			}
			text := string(js) + sum.String() + log.String()
			if strings.HasSuffix(out, ".parquet") {
				text += fmt.Sprint(testfiles.ParquetMetadata(t, out))
			}
			assertNoKey(t, text, testKey)
			if strings.Contains(text, strings.TrimSpace(string(testKey))[:20]) {
				t.Fatal("the key file's content appears in the report, summary, log or metadata")
			}
		})
	}
	t.Run("persons without pseudonym", func(t *testing.T) {
		// The fixture tells the models apart: the same data in persons, unlinked, has
		// groups of persons by their set of classes below k.
		cfg, in, dir := admissionsFixture(t, 6000, "privacy: {k: 5, suppression: 0.05, privacy-unit: {column: patient_id}}\n"+linkingSearch, nil)
		out := filepath.Join(dir, "out.csv")
		if _, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
			t.Fatal(err)
		}
		classes := map[string]map[string]bool{}
		for class, who := range personsPerClass(t, in, out) {
			for p := range who {
				if classes[p] == nil {
					classes[p] = map[string]bool{}
				}
				classes[p][class] = true
			}
		}
		if small, _ := multirelational(classes, 5); small == 0 {
			t.Error("without a pseudonym every group of persons by their classes holds 5 too: the fixture cannot tell multirelational k from k")
		}
	})
}

// TestPseudonymKeys: two releases with the same key file give every patient the same
// pseudonym; two with a random key give every patient a different one. The
// truthfulness walk as sanitize check plans it (the key file's key, read by planCheck)
// accepts a release with its key file, refuses it with another key or with two rows'
// pseudonyms swapped, and accepts a random-key release (whose key it cannot know) by
// the pseudonyms' form.
func TestPseudonymKeys(t *testing.T) {
	modelsOnly(t)
	keyFile := writeKey(t, testKey, 0o600)
	run := func(keyFile string) (*schema.Config, string, string, map[string]string) {
		cfg, in, dir := admissionsFixture(t, 6000, pseudonymPrivacy(keyFile), nil)
		out := filepath.Join(dir, "out.csv")
		if _, err := Release(context.Background(), cfg, job.Options{Input: in, Output: out}); err != nil {
			t.Fatal(err)
		}
		var key []byte
		if keyFile != "" {
			key = testKey
		}
		return cfg, in, out, checkLinked(t, readLinked(t, in, out), key, 5)
	}
	cfg, in, out, a := run(keyFile)
	_, _, _, b := run(keyFile)
	rcfg, rin, rout, c := run("")
	_, _, _, d := run("")
	if len(a) == 0 || len(a) != len(c) {
		t.Fatalf("%d and %d patients released", len(a), len(c))
	}
	for id, p := range a {
		if b[id] != p {
			t.Fatal("the same key file gave a patient two pseudonyms")
		}
		if c[id] == p || c[id] == d[id] {
			t.Fatal("a random key gave a patient the key file's pseudonym, or the same one twice")
		}
	}
	check := func(cfg *schema.Config, in, out string) error {
		rp, err := planCheck(cfg, job.Options{Input: in, Output: out})
		if err != nil {
			return err
		}
		src, p, err := rp.open()
		if err != nil {
			return err
		}
		src.Close()
		p.maxSupp = 1 << 30 // the walk only: which records the models left out is not its question
		_, err = verifyTruth(context.Background(), p, out, p.ReleaseHeader(), nil, nil)
		return violation(out, err)
	}
	if err := check(cfg, in, out); err != nil {
		t.Fatalf("check with the key file: %v", err)
	}
	if err := check(rcfg, rin, rout); err != nil {
		t.Fatalf("check of a random-key release: %v", err)
	}
	other := *cfg
	other.Privacy.Unit = &schema.Unit{Column: "patient_id", Pseudonym: &schema.Pseudonym{KeyFile: writeKey(t, []byte(strings.Repeat("k", 32)), 0o400)}}
	if err := check(&other, in, out); !errors.Is(err, fault.ErrUnattainable) || !strings.Contains(err.Error(), `"patient_id"`) {
		t.Fatalf("check with another key: %v, want a violation in patient_id", err)
	}
	swapped := swapPseudonyms(t, out)
	if err := check(cfg, in, swapped); !errors.Is(err, fault.ErrUnattainable) {
		t.Fatalf("check of a release with two pseudonyms swapped: %v, want a violation", err)
	}
}

// swapPseudonyms writes beside the CSV release rel a copy with the pseudonyms of its
// first two rows of different persons swapped, and returns its path.
func swapPseudonyms(t *testing.T, rel string) string {
	t.Helper()
	header, rows := readTable(t, rel, ',')
	at := indexOf(header, "patient_id")
	for r := 1; r < len(rows); r++ {
		if rows[r][at] != rows[0][at] {
			rows[0][at], rows[r][at] = rows[r][at], rows[0][at]
			break
		}
	}
	var b strings.Builder
	b.WriteString(strings.Join(header, ",") + "\n")
	for _, rec := range rows {
		for i, v := range rec {
			if strings.ContainsAny(v, ",\"") {
				rec[i] = `"` + strings.ReplaceAll(v, `"`, `""`) + `"`
			}
		}
		b.WriteString(strings.Join(rec, ",") + "\n")
	}
	path := strings.TrimSuffix(rel, ".csv") + "-swapped.csv"
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPseudonymKeyFileRefused: a key file that is missing, shorter than 32 bytes,
// readable by group or others, or a folder is exit 2 naming the key, the path and what
// is wrong, before anything is read or written, and its content appears in no error
// or log.
func TestPseudonymKeyFileRefused(t *testing.T) {
	for _, tt := range []struct {
		name string
		path func(t *testing.T) string
		want string
	}{
		{"missing", func(t *testing.T) string { return filepath.Join(t.TempDir(), "none.key") }, "does not exist"},
		{"31 bytes", func(t *testing.T) string { return writeKey(t, testKey[:31], 0o600) }, "holds 31 bytes, a pseudonym key needs at least 32"},
		{"mode 0644", func(t *testing.T) string { return writeKey(t, testKey, 0o644) }, "mode 0644 lets group or others read"},
		{"mode 0640", func(t *testing.T) string { return writeKey(t, testKey, 0o640) }, "mode 0640 lets group or others read"},
		{"mode 0604", func(t *testing.T) string { return writeKey(t, testKey, 0o604) }, "mode 0604 lets group or others read"},
		{"folder", func(t *testing.T) string {
			d := filepath.Join(t.TempDir(), "keys")
			if err := os.Mkdir(d, 0o700); err != nil {
				t.Fatal(err)
			}
			return d
		}, "not a regular file (a folder)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.path(t)
			cfg, in, dir := admissionsFixture(t, 50, pseudonymPrivacy(path), nil)
			var log bytes.Buffer
			opt := job.Options{Input: in, Output: filepath.Join(dir, "out.csv"), Log: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))}
			_, err := Release(context.Background(), cfg, opt)
			if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), keyFileKey+": "+path+": ") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want bad input at %s naming %s and %q", err, keyFileKey, path, tt.want)
			}
			assertNoKey(t, err.Error()+log.String(), testKey)
			leftOnly(t, dir, "admissions.csv", "c.yaml")
			if _, err := Check(context.Background(), cfg, opt); !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), keyFileKey) {
				t.Errorf("check: %v, want bad input at %s", err, keyFileKey)
			}
		})
	}
}

// TestPseudonymConfig: with a pseudonym, the models and metrics the search cannot
// release linked records with are exit 2 naming their key, before anything is read
// (the input named does not exist); those it can pass CheckConfig.
func TestPseudonymConfig(t *testing.T) {
	for _, tt := range []struct {
		name, privacy, search string
		key                   string // "": accepted
	}{
		{"k", "k: 5", "", ""},
		{"highest risk", "k: 2, highest-risk: 0.2", "", ""},
		{"l-diversity", "k: 5, l-diversity: {column: diagnosis, variant: distinct, l: 2}", "", "privacy.l-diversity"},
		{"t-closeness", "k: 5, t-closeness: {column: diagnosis, t: 0.3}", "", "privacy.t-closeness"},
		{"β-likeness", "k: 5, beta-likeness: {column: diagnosis, beta: 1}", "", "privacy.beta-likeness"},
		{"mondrian", "k: 5", "{algorithm: mondrian}", "search.algorithm"},
		{"discernibility", "k: 5", "{metric: discernibility}", "search.metric"},
		{"aecs", "k: 5", "{metric: aecs}", "search.metric"},
		{"entropy", "k: 5", "{metric: entropy}", "search.metric"},
		{"ncp", "k: 5", "{metric: ncp}", ""},
		{"height", "k: 5", "{metric: height}", ""},
		{"precision", "k: 5", "{metric: precision}", ""},
		{"entropy-loss", "k: 5", "{metric: entropy-loss}", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			search := "{metric: loss}"
			if tt.search != "" {
				search = tt.search
			}
			cfg := loadConfigText(t, `columns:
  patient_id: {role: identifier}
  age:        {role: quasi, type: integer, hierarchy: {intervals: [5, 10]}}
  diagnosis:  {role: sensitive}
privacy: {`+tt.privacy+`, privacy-unit: {column: patient_id, pseudonym: {}}}
search: `+search+"\n")
			err := CheckConfig(cfg)
			if tt.key == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), tt.key+": ") || !strings.Contains(err.Error(), "privacy.privacy-unit.pseudonym") {
				t.Fatalf("got %v, want bad input at %s", err, tt.key)
			}
			dir := t.TempDir()
			_, err = Release(context.Background(), cfg, job.Options{Input: filepath.Join(dir, "none.csv"), Output: filepath.Join(dir, "out.csv")})
			if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), tt.key+": ") {
				t.Fatalf("release: %v, want the configuration's error", err)
			}
			leftOnly(t, dir)
		})
	}
}

// BenchmarkPseudonym measures a pseudonym per id: pseudonym (a new MAC each time) and
// the pseudonymizer pass 2 uses (its keyed MAC reset, the pseudonym appended).
func BenchmarkPseudonym(b *testing.B) {
	key := []byte("0123456789abcdef0123456789abcdef")
	ids := make([]string, 1024)
	for i := range ids {
		ids[i] = fmt.Sprintf("P%07d", 4563956+i*7919)
	}
	b.Run("pseudonym", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			_ = pseudonym(key, ids[i%len(ids)])
		}
	})
	b.Run("pseudonymizer", func(b *testing.B) {
		b.ReportAllocs()
		z := newPseudonymizer(key)
		buf := make([]byte, 0, pseudonymLen)
		for i := 0; b.Loop(); i++ {
			buf = z.append(buf[:0], ids[i%len(ids)])
		}
	})
}
