package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// shiftedInput writes the sample's records with every stay_days one more: its release
// has the parameters of the sample's release (the same records, node, suppression),
// and other bytes.
func shiftedInput(t *testing.T, from, to string) {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(readFile(t, from))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(recs[0], "stay_days")
	for _, r := range recs[1:] {
		n, err := strconv.Atoi(r[col])
		if err != nil {
			t.Fatal(err)
		}
		r[col] = strconv.Itoa(n + 1)
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.WriteAll(recs); err != nil {
		t.Fatal(err)
	}
	writeFile(t, to, buf.String())
}

// sha256Of is the digest of the file at path, as a report records it.
func sha256Of(t *testing.T, path string) string {
	t.Helper()
	sum := sha256.Sum256(readFile(t, path))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// TestReleaseAndReportPair: a release with --force and --report replacing an earlier
// pair, killed with SIGKILL at each point of its publication, leaves the old pair,
// the old release with no report, the new release with no report, or (not killed)
// the new pair: never a release beside a report of the other release. Whenever a
// report is there, it records the digest of the release beside it and check --report
// passes; a report put beside the other release (whose parameters all agree) is
// exit 3 naming output.digest.
func TestReleaseAndReportPair(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	td := repoTestdata(t)
	cfg := filepath.Join(td, "hospital-tests.yaml")
	inputs := t.TempDir()
	inA, inB := filepath.Join(td, "hospital.csv"), filepath.Join(inputs, "shifted.csv")
	shiftedInput(t, inA, inB)
	args := func(dir, in string) []string {
		return []string{"release", "-c", cfg, "--in", in, "--out", filepath.Join(dir, "r.csv"), "--report", filepath.Join(dir, "r.json"), "--force"}
	}
	// The pair of each input, once, for comparing.
	pairs := map[string][2][]byte{}
	for _, in := range []string{inA, inB} {
		dir := t.TempDir()
		if code, _, stderr := runCLI(t, args(dir, in)...); code != 0 {
			t.Fatalf("release of %s: exit %d\n%s", in, code, stderr)
		}
		pairs[in] = [2][]byte{readFile(t, filepath.Join(dir, "r.csv")), readFile(t, filepath.Join(dir, "r.json"))}
	}
	if bytes.Equal(pairs[inA][0], pairs[inB][0]) {
		t.Fatal("the two inputs release the same bytes: the test cannot tell their reports apart")
	}
	for _, stage := range []string{"publish", "report-removed", "release-published", ""} {
		t.Run("killed at "+stage, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "r.csv"), string(pairs[inA][0]))
			writeFile(t, filepath.Join(dir, "r.json"), string(pairs[inA][1]))
			if stage == "" {
				if code, _, stderr := runCLI(t, args(dir, inB)...); code != 0 {
					t.Fatalf("exit %d\n%s", code, stderr)
				}
			} else {
				killAt(t, stage, args(dir, inB)...)
			}
			checkPair(t, dir, map[string]string{string(pairs[inA][0]): inA, string(pairs[inB][0]): inB})
		})
	}
	t.Run("a report beside the other release", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "r.csv"), string(pairs[inB][0]))
		writeFile(t, filepath.Join(dir, "r.json"), string(pairs[inA][1]))
		code, stdout, stderr := runCLI(t, "check", "-c", cfg, "--in", inB, "--release", filepath.Join(dir, "r.csv"), "--report", filepath.Join(dir, "r.json"))
		if code != 3 || !bytes.Contains([]byte(stderr), []byte("output.digest")) {
			t.Errorf("check --report with another release's report: exit %d, want 3 naming output.digest\nstdout: %s\nstderr: %s", code, stdout, stderr)
		}
	})
}

// checkPair fails t unless dir holds a release (one of inputs' releases, by content)
// and either no report or the report of that release: recording its digest, and
// passing check --report against its input.
func checkPair(t *testing.T, dir string, inputs map[string]string) {
	t.Helper()
	rel, rep := filepath.Join(dir, "r.csv"), filepath.Join(dir, "r.json")
	in, ok := inputs[string(readFile(t, rel))]
	if !ok {
		t.Fatalf("%s is neither release", rel)
	}
	data, err := os.ReadFile(rep)
	if os.IsNotExist(err) {
		return // a release with no report: nothing to mislead a reader
	}
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Output struct {
			Digest string `json:"digest"`
		} `json:"output"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	if want := sha256Of(t, rel); r.Output.Digest != want {
		t.Errorf("the report records output.digest %q; the release beside it is %s (of %s)", r.Output.Digest, want, filepath.Base(in))
	}
	cfg := filepath.Join(repoTestdata(t), "hospital-tests.yaml")
	if code, stdout, stderr := runCLI(t, "check", "-c", cfg, "--in", in, "--release", rel, "--report", rep); code != 0 {
		t.Errorf("check --report of the pair left: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
}
