package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sanitizer/internal/testfiles"
	"sanitizer/sample"
)

// mustDo ends the test at err.
func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// holdsKey reports whether data holds key, as it is or in hex or base64.
func holdsKey(data, key []byte) bool {
	for _, k := range [][]byte{key, []byte(hex.EncodeToString(key)), []byte(base64.StdEncoding.EncodeToString(key)), []byte(base64.RawURLEncoding.EncodeToString(key))} {
		if bytes.Contains(data, k) {
			return true
		}
	}
	return false
}

// TestReleaseCommandPseudonym: sanitize-beam release of a generated admissions table
// in two parts, the privacy unit released as a pseudonym under a key file, succeeds
// (--debug, JSON log records of every stage, a JSON and an HTML report), and the key
// is in none of its stdout, stderr, reports, release parts or temporary folder, which
// is left empty; a key file others may read is exit 2 naming the key-file key and
// the path, never the key.
func TestReleaseCommandPseudonym(t *testing.T) {
	var gen bytes.Buffer
	if err := sample.Admissions(&gen, 1200, 5); err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(gen.String()), "\n")
	dir := t.TempDir()
	parts := filepath.Join(dir, "parts")
	mustDo(t, os.Mkdir(parts, 0o700))
	half := len(rows) / 2
	for i, body := range [][]string{rows[1:half], rows[half:]} {
		mustDo(t, os.WriteFile(filepath.Join(parts, fmt.Sprintf("p%d.csv", i)), []byte(rows[0]+"\n"+strings.Join(body, "\n")+"\n"), 0o600))
	}
	key := make([]byte, 48)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(t.TempDir(), "p.key")
	mustDo(t, os.WriteFile(keyPath, key, 0o600))
	// The admissions' configuration, k=3 in persons with the pseudonym under the key
	// file, its hierarchies by absolute path.
	base, err := os.ReadFile("../../../testdata/admissions.yaml")
	mustDo(t, err)
	hier, err := filepath.Abs("../../../testdata/hierarchies")
	mustDo(t, err)
	cfg := testfiles.ReplaceAll(t, string(base), "file: hierarchies/", "file: "+hier+"/")
	cfg = testfiles.Replace(t, cfg, "  k: 5\n  suppression: 0.05\n  l-diversity: {column: diagnosis, variant: distinct, l: 3}\n",
		fmt.Sprintf("  k: 3\n  suppression: 0.2\n  privacy-unit: {column: patient_id, pseudonym: {key-file: %s}}\n", keyPath))
	c := filepath.Join(dir, "c.yaml")
	mustDo(t, os.WriteFile(c, []byte(cfg), 0o600))
	temp := t.TempDir()
	defer flag.Set("temp_location", "")
	defer flag.Set("debug", "false")
	out, rep, repHTML := filepath.Join(dir, "rel"), filepath.Join(dir, "report.json"), filepath.Join(dir, "report.html")
	var stdout, stderr bytes.Buffer
	args := []string{"release", "-c", c, "--in", parts, "--out", out, "--runner=prism", "--debug", "--log-format", "json", "--report", rep, "--report", repHTML, "--temp_location", temp}
	if code := run(context.Background(), args, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "released") {
		t.Fatalf("exit %d; stdout %q; stderr %.2000q", code, stdout.String(), stderr.String())
	}
	if holdsKey(stdout.Bytes(), key) || holdsKey(stderr.Bytes(), key) || stderr.Len() == 0 {
		t.Errorf("stdout or stderr (%d bytes) holds the key", stderr.Len())
	}
	if !strings.Contains(stderr.String(), `"stage":"write"`) {
		t.Errorf("stderr logs no write stage: %.500q", stderr.String())
	}
	var files int
	for _, root := range []string{dir, temp} {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			files++
			if data, err := os.ReadFile(p); err != nil || holdsKey(data, key) {
				t.Errorf("%s holds the key (%v)", p, err)
			}
			return nil
		})
	}
	if entries, _ := os.ReadDir(temp); len(entries) != 0 || files < 6 {
		t.Errorf("--temp_location holds %v after the run; %d files looked at", entries, files)
	}
	// A key file others may read is refused before anything runs.
	os.Chmod(keyPath, 0o644)
	stdout.Reset()
	stderr.Reset()
	args = []string{"release", "-c", c, "--in", parts, "--out", filepath.Join(dir, "rel2"), "--runner=prism"}
	if code := run(context.Background(), args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "privacy.privacy-unit.pseudonym.key-file") || !strings.Contains(stderr.String(), keyPath) || holdsKey(stderr.Bytes(), key) {
		t.Errorf("a key file others may read: exit %d, stderr %q; want 2 naming the key and the file", code, stderr.String())
	}
}
