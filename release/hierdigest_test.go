package release

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"sanitizer/job"
	"sanitizer/schema"
)

// TestHierarchyDigestIsOfTheBytesUsed changes a hierarchy file while the release runs
// (between the search and the write): the report certifies the bytes the release was
// made with, and the release still verifies, because the search, the verifier and the
// digest all use the bytes read once at the start.
func TestHierarchyDigestIsOfTheBytesUsed(t *testing.T) {
	dir := t.TempDir()
	hier := filepath.Join(dir, "sex.csv")
	before := []byte("F;*\nM;*\n")
	if err := os.WriteFile(hier, before, 0o644); err != nil {
		t.Fatal(err)
	}
	input := filepath.Join(dir, "in.csv")
	rows := "sex,n\n"
	for i := 0; i < 20; i++ {
		rows += []string{"F", "M"}[i%2] + ",1\n"
	}
	if err := os.WriteFile(input, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "c.yaml")
	yaml := "dataset: d\ncolumns:\n  sex: {role: quasi, hierarchy: {file: sex.csv}}\n  n: {role: insensitive}\nprivacy: {k: 2}\n"
	if err := os.WriteFile(conf, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := schema.Load(conf)
	if err != nil {
		t.Fatal(err)
	}
	changed := false
	opt := job.Options{
		Input: input, Output: filepath.Join(dir, "out.csv"), Report: filepath.Join(dir, "report.json"),
		// Now is called once the node is chosen, before the release is written.
		Now: func() time.Time {
			if err := os.WriteFile(hier, []byte("F;person;*\nM;person;*\nX;person;*\n"), 0o644); err != nil {
				t.Error(err)
			}
			changed = true
			return time.Unix(0, 0)
		},
	}
	rep, err := Release(context.Background(), cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !changed {
		t.Fatal("the hook that changes the hierarchy file did not run")
	}
	sum := sha256.Sum256(before)
	if got, want := rep.HierarchyDigests[hier], "sha256:"+hex.EncodeToString(sum[:]); got != want {
		t.Errorf("hierarchy digest %s, want %s (the bytes the release was made with)", got, want)
	}
}
