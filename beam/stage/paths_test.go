package stage

import (
	"bytes"
	"context"
	"errors"
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
)

// TestReleasePathsResolved: with --force, an output folder that is the input's folder
// or holds a file the run reads is exit 2 before anything runs, whichever way its path
// names it: a symbolic link to the input's folder (whose parts are named as a
// release's, so that it looks like one), the folder of the hierarchy files through a
// link, the configuration's folder through a link, a folder a part of the input links
// into (its target would be removed), the input's folder named by a pattern through a
// link. A new folder beside them passes.
func TestReleasePathsResolved(t *testing.T) {
	cases := []struct {
		name, input, out string // under the fixture's folder
		want             string // in the message; "" passes
	}{
		{"the input's folder, linked", "in", "ilink", "is the input"},
		{"the pattern's folder, linked", "in/part-*.csv", "ilink", "one of its parts"},
		{"the hierarchies' folder, linked", "in", "hlink", "columns.sex.hierarchy.file"},
		{"the configuration's folder, linked", "in", "clink", "the configuration"},
		{"a folder a part links into", "in", "old", "the input's part"},
		{"a new folder", "in", "new", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root, cfg := beamDestFixture(t)
			out := root + string(filepath.Separator) + filepath.FromSlash(c.out)
			opt := job.Options{Input: filepath.Join(root, filepath.FromSlash(c.input)), Output: out, Force: true}
			_, _, _, err := releasePaths(context.Background(), cfg, opt)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want bad input with %q", err, c.want)
			}
		})
	}
}

// beamDestFixture is a run's files under one folder: the configuration conf/c.yaml
// with its hierarchy files in conf/h; the input in parts, in/part-00000.csv and
// in/part-00001.csv, the second a symbolic link to old/part-00000.csv, the part of an
// old release; links ilink → in, hlink → conf/h and clink → conf.
func beamDestFixture(t *testing.T) (string, *schema.Config) {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"conf/h", "in", "old"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path string, data []byte) {
		if err := os.WriteFile(filepath.Join(root, path), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range []string{"sex.csv", "diagnosis.csv"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "hierarchies", h))
		if err != nil {
			t.Fatal(err)
		}
		write("conf/h/"+h, data)
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "hospital-tests.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	write("conf/c.yaml", []byte(testfiles.ReplaceAll(t, string(raw), "hierarchies/", "h/")))
	var buf bytes.Buffer
	if err := sample.Hospital(&buf, 100, 3); err != nil {
		t.Fatal(err)
	}
	write("in/part-00000.csv", buf.Bytes())
	write("old/part-00000.csv", buf.Bytes())
	for link, target := range map[string]string{"in/part-00001.csv": "old/part-00000.csv", "ilink": "in", "hlink": "conf/h", "clink": "conf"} {
		if err := os.Symlink(filepath.Join(root, target), filepath.Join(root, link)); err != nil {
			t.Skip(err)
		}
	}
	cfg, err := schema.Load(filepath.Join(root, "conf", "c.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return root, cfg
}

// TestPartsFollowLinks: sanitize-beam lists an input's parts as the CLI does, the
// same both ways: a part linked from outside the folder is listed from the folder and
// from a pattern; a second name of a part is bad input from both.
func TestPartsFollowLinks(t *testing.T) {
	root, _ := beamDestFixture(t) // in/part-00001.csv links to old/part-00000.csv
	folder, pattern := filepath.Join(root, "in"), filepath.Join(root, "in", "part-*.csv")
	a, errA := Parts(context.Background(), folder)
	b, errB := Parts(context.Background(), pattern)
	if errA != nil || errB != nil || len(a) != 2 || !slices.Equal(a, b) {
		t.Fatalf("the folder lists %q (%v), the pattern %q (%v); want the same two parts", a, errA, b, errB)
	}
	second := filepath.Join(folder, "part-00002.csv")
	if err := os.Link(filepath.Join(folder, "part-00000.csv"), second); err != nil {
		t.Skip(err)
	}
	for _, in := range []string{folder, pattern} {
		if _, err := Parts(context.Background(), in); !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), second) {
			t.Errorf("%s with a hard link of a part: %v, want bad input naming %s", in, err, second)
		}
	}
}
