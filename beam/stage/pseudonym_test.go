package stage

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/graphx"
	pipepb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/pipeline_v1"
	"google.golang.org/protobuf/proto"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/schema"
)

// keyFile writes a pseudonym key of n random bytes into a new file of mode perm.
func keyFile(t *testing.T, n int, perm os.FileMode) (path string, key []byte) {
	t.Helper()
	key = make([]byte, n)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(t.TempDir(), "p.key")
	if err := os.WriteFile(path, key, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil {
		t.Fatal(err)
	}
	return path, key
}

// pseudonymOf is the pseudonym of id under key, computed here from its
// definition: HMAC-SHA-256, its first 16 bytes, base32 without padding.
func pseudonymOf(key []byte, id string) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id))
	return base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(mac.Sum(nil)[:16])
}

// inputIDs maps every rid of the admissions table at whole to its patient's id.
func inputIDs(t *testing.T, whole string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n")[1:] {
		f := strings.Split(line, ",")
		ids[f[len(f)-1]] = f[0]
	}
	return ids
}

// releasedPseudonyms checks every released line of the admissions release at out
// (patient_id first, rid last) and returns, per rid, the pseudonym it holds.
func releasedPseudonyms(t *testing.T, out string) map[string]string {
	t.Helper()
	byRid := map[string]string{}
	for _, line := range lines(t, out) {
		f := strings.Split(line, ",")
		byRid[f[len(f)-1]] = f[0]
	}
	return byRid
}

// withoutUnit is the lines of the admissions release at out with the unit column
// (the first) left out, sorted.
func withoutUnit(t *testing.T, out string) []string {
	t.Helper()
	var recs []string
	for _, line := range lines(t, out) {
		_, rest, _ := strings.Cut(line, ",")
		recs = append(recs, rest)
	}
	slices.Sort(recs)
	return recs
}

// TestReleaseOnPrismPseudonym: the admissions table in four parts, most patients'
// rows in several of them, released on Prism with the privacy unit as a pseudonym under
// a key file: Beam publishes the CLI's records line for line, pseudonyms included (each
// the HMAC of its record's id, computed here), at the CLI's node with the CLI's
// report in persons; multirelational k-anonymity bites (the recoding suppresses whole
// persons of published classes, so the release differs from the one without the
// pseudonym), and every group of persons with the same set of classes holds k; in
// Parquet, Beam's records are the CLI's too.
func TestReleaseOnPrismPseudonym(t *testing.T) {
	const k = 3
	path, key := keyFile(t, 40, 0o600)
	privacy := "privacy: {k: 3, suppression: 0.2, privacy-unit: {column: patient_id, pseudonym: {key-file: " + path + "}}}"
	cfgPath, whole, parts := admissionsParts(t, 3000, privacy, nil)
	got, rep, out, _ := againstCLI(t, cfgPath, parts, whole)
	if rep.Persons == nil || rep.Persons.Pseudonym == nil || got.Report == nil || got.Report.Persons == nil {
		t.Fatalf("the reports in persons: Beam's %+v, the CLI's %+v", got.Report, rep.Persons)
	}
	if g, c := *got.Report.Persons, *rep.Persons; g.MinGroup != c.MinGroup || g.Released != c.Released || g.LostAll != c.LostAll || g.LostSome != c.LostSome || *g.Pseudonym != *c.Pseudonym || g.MinGroup < k {
		t.Errorf("Beam's report in persons %+v (%+v); the CLI's %+v (%+v)", g, g.Pseudonym, c, c.Pseudonym)
	}
	// Multirelational k-anonymity suppressed persons of published classes.
	byMRK := 0
	for p := range got.Job.Persons {
		if got.Recoding.PersonSuppressed(int32(p)) {
			byMRK++
		}
	}
	if byMRK == 0 {
		t.Errorf("multirelational k-anonymity suppressed no person: the test does not see it")
	}
	// Every released pseudonym is its record's id's under the key; no id is released.
	ids := inputIDs(t, whole)
	pseudonyms := releasedPseudonyms(t, out)
	persons := map[string]bool{}
	for rid, ps := range pseudonyms {
		if want := pseudonymOf(key, ids[rid]); ps != want {
			t.Fatalf("record %s: pseudonym %q, want its id's %q", rid, ps, want)
		}
		persons[ps] = true
	}
	if len(persons) != got.Report.Persons.Released {
		t.Errorf("%d distinct pseudonyms, %d persons released", len(persons), got.Report.Persons.Released)
	}
	// Without the pseudonym the same node releases other records: the persons MR-k
	// suppressed are released there.
	plainCfg, _, _ := admissionsParts(t, 3000, testfiles.Replace(t, privacy, ", pseudonym: {key-file: "+path+"}", ""), nil)
	j, err := NewJob(plainCfg)
	if err != nil {
		t.Fatal(err)
	}
	plainOut := filepath.Join(t.TempDir(), "plain")
	plain, err := Release(context.Background(), j, job.Options{Input: parts, Output: plainOut}, onPrism)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Measured.Rows <= got.Measured.Rows && slices.Equal(plain.Result.Levels, got.Result.Levels) {
		t.Errorf("without the pseudonym %d records at %v, with it %d at %v: MR-k changed nothing", plain.Measured.Rows, plain.Result.Levels, got.Measured.Rows, got.Result.Levels)
	}
	// In Parquet too: the pseudonym column is text, as the CLI writes it.
	raw, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfgPath, []byte(testfiles.Replace(t, string(raw), "output: {format: csv}", "output: {format: parquet}")), 0o600); err != nil {
		t.Fatal(err)
	}
	againstCLI(t, cfgPath, parts, whole)
	t.Logf("%d persons, %d suppressed by MR-k; node %v, %d records suppressed, %d released (%d without the pseudonym at %v), smallest group %d persons",
		got.Job.Persons, byMRK, got.Result.Levels, got.Result.Suppressed, got.Measured.Rows, plain.Measured.Rows, plain.Result.Levels, got.Report.Persons.MinGroup)
}

// keyRecorder is onPrism, recording the random key the run wrote into its work folder
// in temp (the first pipeline finds it), the key file's mode, and every pipeline's
// serialized description (the runner's proto, its transforms' payloads decoded).
type keyRecorder struct {
	temp      string
	key       []byte
	mode      fs.FileMode
	pipelines [][]byte
}

func (r *keyRecorder) run(ctx context.Context, p *beam.Pipeline) error {
	if r.key == nil {
		found, _ := filepath.Glob(filepath.Join(r.temp, "*", "work", randomKeyName))
		if len(found) == 1 {
			st, err := os.Stat(found[0])
			if err != nil {
				return err
			}
			r.mode = st.Mode()
			if r.key, err = os.ReadFile(found[0]); err != nil {
				return err
			}
		}
	}
	edges, _, err := p.Build()
	if err != nil {
		return err
	}
	pb, err := graphx.Marshal(edges, &graphx.Options{Environment: &pipepb.Environment{Urn: "beam:env:embedded"}})
	if err != nil {
		return err
	}
	data, err := proto.Marshal(pb)
	if err != nil {
		return err
	}
	r.pipelines = append(r.pipelines, decoded(data))
	return onPrism(ctx, p)
}

// base64Run is a run of base64 text long enough to be a payload.
var base64Run = regexp.MustCompile(`[A-Za-z0-9+/]{16,}={0,2}`)

// decoded is data followed by every base64 run in it decoded, and theirs in turn (a
// DoFn's fields are JSON in a base64 proto inside the pipeline's proto).
func decoded(data []byte) []byte {
	out := slices.Clone(data)
	for _, run := range base64Run.FindAll(data, -1) {
		if dec, err := base64.StdEncoding.DecodeString(string(run)); err == nil {
			out = append(out, decoded(dec)...)
		}
	}
	return out
}

// holdsKey reports whether data holds the key, as it is or in hex or base64.
func holdsKey(data, key []byte) bool {
	for _, k := range [][]byte{key, []byte(hex.EncodeToString(key)), []byte(base64.StdEncoding.EncodeToString(key)), []byte(base64.RawURLEncoding.EncodeToString(key))} {
		if bytes.Contains(data, k) {
			return true
		}
	}
	return false
}

// TestReleaseOnPrismRandomPseudonym: without a key file every run draws its own key,
// written mode 0600 into its work folder for the workers, which read its path, never
// its bytes, from the pipeline: no pipeline's serialized description holds the key;
// the pseudonyms released are the records' ids' under it, the check checked them
// against it, and two runs release the same records under pseudonyms that share
// nothing. After the run the key is nowhere: not in the log, the report, the release,
// nor the temporary folder, which is empty.
func TestReleaseOnPrismRandomPseudonym(t *testing.T) {
	privacy := "privacy: {k: 3, suppression: 0.2, privacy-unit: {column: patient_id, pseudonym: {}}}"
	cfgPath, whole, parts := admissionsParts(t, 1500, privacy, nil)
	ids := inputIDs(t, whole)
	var runs [2]map[string]string
	for i := range runs {
		j, err := NewJob(cfgPath)
		if err != nil {
			t.Fatal(err)
		}
		j.Temp = t.TempDir()
		dir := t.TempDir()
		out, rep := filepath.Join(dir, "release"), filepath.Join(dir, "report.json")
		var log bytes.Buffer
		rec := &keyRecorder{temp: j.Temp}
		got, err := Release(context.Background(), j, job.Options{Input: parts, Output: out, Report: rep, Log: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))}, rec.run)
		if err != nil {
			t.Fatal(err)
		}
		if len(rec.key) != randomKeyBytes || rec.mode.Perm() != 0o600 || !rec.mode.IsRegular() {
			t.Fatalf("run %d: the random key file: %d bytes, mode %v", i, len(rec.key), rec.mode)
		}
		runs[i] = releasedPseudonyms(t, out)
		for rid, ps := range runs[i] {
			if want := pseudonymOf(rec.key, ids[rid]); ps != want {
				t.Fatalf("run %d, record %s: pseudonym %q, want its id's under the run's key", i, rid, ps)
			}
		}
		for n, data := range rec.pipelines {
			if holdsKey(data, rec.key) {
				t.Errorf("run %d: pipeline %d's description holds the key", i, n)
			}
		}
		if !bytes.Contains(rec.pipelines[len(rec.pipelines)-1], []byte(randomKeyName)) {
			t.Errorf("run %d: the writing pipeline does not name the key's file", i)
		}
		if got.Report == nil || got.Report.Persons == nil || got.Report.Persons.Pseudonym == nil || got.Report.Persons.MinGroup < 3 {
			t.Fatalf("run %d: the report in persons %+v", i, got.Report)
		}
		var left []string
		for _, root := range []string{dir, j.Temp} {
			filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if p != root {
					left = append(left, p)
				}
				if !d.IsDir() {
					if data, err := os.ReadFile(p); err != nil || holdsKey(data, rec.key) {
						t.Errorf("run %d: %s holds the key (%v)", i, p, err)
					}
				}
				return nil
			})
		}
		if holdsKey(log.Bytes(), rec.key) || log.Len() == 0 {
			t.Errorf("run %d: the log (%d bytes) holds the key", i, log.Len())
		}
		if entries, _ := os.ReadDir(j.Temp); len(entries) != 0 {
			t.Errorf("run %d: the temporary folder holds %v", i, entries)
		}
		t.Logf("run %d: %d records released; %d files left (the release and its report)", i, len(runs[i]), len(left))
	}
	if len(runs[0]) == 0 || len(runs[0]) != len(runs[1]) {
		t.Fatalf("%d and %d records released", len(runs[0]), len(runs[1]))
	}
	first := map[string]bool{}
	for _, ps := range runs[0] {
		first[ps] = true
	}
	for rid, ps := range runs[1] {
		if _, ok := runs[0][rid]; !ok || first[ps] {
			t.Fatalf("record %s: released by the second run only, or under a pseudonym of the first run", rid)
		}
	}
}

// TestReleaseOnPrismPseudonymKeyFile: the CLI's rules for a key file hold on Beam,
// before anything runs: one readable by others, one shorter than 32 bytes, and a
// missing one are bad input naming the key-file key and the path, never the content,
// and nothing is published.
func TestReleaseOnPrismPseudonymKeyFile(t *testing.T) {
	open, openKey := keyFile(t, 40, 0o644)
	short, shortKey := keyFile(t, 31, 0o600)
	for _, c := range []struct {
		path, says string
		key        []byte
	}{
		{open, "chmod 600", openKey},
		{short, "holds 31 bytes", shortKey},
		{filepath.Join(t.TempDir(), "none.key"), "does not exist", nil},
	} {
		privacy := "privacy: {k: 3, suppression: 0.05, privacy-unit: {column: patient_id, pseudonym: {key-file: " + c.path + "}}}"
		cfgPath, _, parts := admissionsParts(t, 300, privacy, nil)
		releaseFails(t, cfgPath, parts, fault.ErrBadInput, "privacy.privacy-unit.pseudonym.key-file", string(c.key))
		releaseFails(t, cfgPath, parts, fault.ErrBadInput, c.says, "")
	}
}

// TestRunKeyInStore: with the work folder in a store, a random key is refused naming
// the key (it would be written into the bucket), before anything is written; a key
// file is given to the workers by its path.
func TestRunKeyInStore(t *testing.T) {
	path, _ := keyFile(t, 32, 0o600)
	for _, c := range []struct{ pseudonym, says string }{{"{}", "privacy.privacy-unit.pseudonym"}, {"{key-file: " + path + "}", ""}} {
		cfgPath, _, _ := admissionsParts(t, 100, "privacy: {k: 3, privacy-unit: {column: patient_id, pseudonym: "+c.pseudonym+"}}", nil)
		cfg, err := schema.Load(cfgPath)
		if err != nil {
			t.Fatal(err)
		}
		key, err := newRunKey(cfg, "gs://bucket/tmp/run/work")
		switch {
		case c.says != "" && (!errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), c.says) || key.path != ""):
			t.Errorf("a random key in a store: %v, %+v", err, key)
		case c.says == "" && (err != nil || key.path != path || key.random):
			t.Errorf("a key file with a store: %v, %+v", err, key)
		}
	}
}
