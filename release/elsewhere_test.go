package release_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/release"
	"sanitizer/sample"
)

// TestReleaseWith: a release whose parts another writer writes is published when the
// parts are the release this process would write, and fails the verification, with
// nothing published and no temporary left, when a part drops or keeps one record
// more, or when the writer fails; what such a writer cannot be given is bad input.
func TestReleaseWith(t *testing.T) {
	dir := t.TempDir()
	cfg := attackConfig(t, dir, nil)
	var buf bytes.Buffer
	if err := sample.Admissions(&buf, 1500, 3); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join(dir, "ref") + "/" // this process's own release, the reference
	if _, err := release.Release(context.Background(), cfg, job.Options{Input: in, Output: ref}); err != nil {
		t.Fatal(err)
	}
	part := testfiles.Names(t, ref)[0]
	want, err := os.ReadFile(filepath.Join(ref, part))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(want), "\n")
	writeAs := func(text string) release.PartsWriter {
		return func(_ context.Context, pj release.PartsJob) error {
			if len(pj.Names) != 1 || pj.Names[0] != part || pj.Rows[0] != 1500 || len(pj.LeftOut[0]) != 1500-(len(lines)-2) {
				t.Errorf("the job names %q, %d records, %d left out; the release wrote %s with %d", pj.Names, pj.Rows, len(pj.LeftOut[0]), part, len(lines)-2)
			}
			return os.WriteFile(filepath.Join(pj.Dir, pj.Names[0]), []byte(text), 0o644)
		}
	}
	for _, tt := range []struct {
		name  string
		write release.PartsWriter
		ok    bool
	}{
		{"the release", writeAs(string(want)), true},
		{"one record dropped", writeAs(strings.Join(lines[:len(lines)-2], "")), false},
		{"one record twice", writeAs(string(want) + lines[len(lines)-2]), false},
		{"the writer fails", func(context.Context, release.PartsJob) error { return errors.New("a worker died") }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			outDir := t.TempDir()
			out := filepath.Join(outDir, "out") + "/"
			_, err := release.ReleaseWith(context.Background(), cfg, job.Options{Input: in, Output: out}, "sanitize-test", tt.write)
			if tt.ok {
				if err != nil {
					t.Fatal(err)
				}
				if got, err := os.ReadFile(filepath.Join(out, part)); err != nil || !bytes.Equal(got, want) {
					t.Errorf("the published part differs from the release's (%v)", err)
				}
				return
			}
			if err == nil {
				t.Fatal("published")
			}
			if names := testfiles.Names(t, outDir); len(names) > 0 {
				t.Errorf("a failed release left %q", names)
			}
		})
	}
	if _, err := release.ReleaseWith(context.Background(), cfg, job.Options{Input: in, Output: filepath.Join(dir, "one.csv")}, "sanitize-test", writeAs("")); !errors.Is(err, fault.ErrBadInput) {
		t.Errorf("a release into one file: %v, want bad input", err)
	}
}
