package release

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/sample"
	"sanitizer/schema"
)

// destFixture is a run's files under one folder: the configuration conf/c.yaml with
// its hierarchy files in conf/h, the input in.csv and the same records in parts,
// in/part-0.csv and in/part-1.csv; symbolic links clink → conf, hlink → conf/h,
// ilink → in; hard links hard-c.yaml, hard-sex.csv, hard-in.csv and hard-part.csv
// (of in/part-0.csv).
func destFixture(t *testing.T) (root string, cfg *schema.Config) {
	t.Helper()
	root = t.TempDir()
	for _, d := range []string{"conf/h", "in"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range []string{"sex.csv", "diagnosis.csv"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "hierarchies", h))
		if err != nil {
			t.Fatal(err)
		}
		writeTestFile(t, filepath.Join(root, "conf", "h", h), data)
	}
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "hospital-tests.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(root, "conf", "c.yaml"), []byte(testfiles.ReplaceAll(t, string(raw), "hierarchies/", "h/")))
	var buf bytes.Buffer
	if err := sample.Hospital(&buf, 300, 3); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(root, "in.csv"), buf.Bytes())
	splitCSV(t, buf.Bytes(), filepath.Join(root, "in"), 2)
	for link, target := range map[string]string{"clink": "conf", "hlink": "conf/h", "ilink": "in"} {
		if err := os.Symlink(filepath.Join(root, target), filepath.Join(root, link)); err != nil {
			t.Skip(err)
		}
	}
	for link, target := range map[string]string{"hard-c.yaml": "conf/c.yaml", "hard-sex.csv": "conf/h/sex.csv", "hard-in.csv": "in.csv", "hard-part.csv": "in/part-0.csv"} {
		if err := os.Link(filepath.Join(root, target), filepath.Join(root, link)); err != nil {
			t.Skip(err)
		}
	}
	if cfg, err = schema.Load(filepath.Join(root, "conf", "c.yaml")); err != nil {
		t.Fatal(err)
	}
	return root, cfg
}

// writeTestFile writes data to path.
func writeTestFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// snapshot maps every name under root (links not followed) to its content, or its
// link's target, or "folder".
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			out[p] = "→ " + target
			return err
		case d.IsDir():
			out[p] = "folder"
		default:
			data, err := os.ReadFile(p)
			out[p] = string(data)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDestinationNotRead: with --force, an output, a report or a risk analysis's
// report naming a file the run reads (the configuration, a hierarchy file, the input
// or one of its parts), or a new file among the input's parts, is exit 2 naming it,
// before anything is read or written, whichever way the path names it: a hard link, a
// symbolic link to its folder, a ".." after a symbolic link. A destination that is
// none of them is written.
func TestDestinationNotRead(t *testing.T) {
	sep := string(filepath.Separator)
	cases := []struct {
		name  string
		input string // in.csv, in (a folder of parts), or in/part-*.csv
		dest  string // under the fixture's folder, as written (not cleaned)
		want  string // in the message; "" the run succeeds
	}{
		{"configuration, hard link", "in.csv", "hard-c.yaml", "the configuration"},
		{"configuration, linked folder", "in.csv", "clink/c.yaml", "the configuration"},
		{"configuration, .. after a link", "in.csv", "hlink/../c.yaml", "the configuration"},
		{"hierarchy, hard link", "in.csv", "hard-sex.csv", "columns.sex.hierarchy.file"},
		{"hierarchy, linked folder", "in.csv", "hlink/diagnosis.csv", "columns.diagnosis.hierarchy.file"},
		{"hierarchy, .. after a link", "in.csv", "hlink/../h/sex.csv", "columns.sex.hierarchy.file"},
		{"input, hard link", "in.csv", "hard-in.csv", "the input"},
		{"input part, hard link", "in", "hard-part.csv", "the input's part"},
		{"input part, linked folder", "in", "ilink/part-1.csv", "one of its parts"},
		{"new part, linked folder", "in", "ilink/part-3.csv", "one of its parts"},
		{"new part, .. after a link", "in", "hlink/../../in/part-3.csv", "one of its parts"},
		{"pattern's part, linked folder", "in/part-*.csv", "ilink/part-1.csv", "one of its parts"},
		{"pattern's new part, linked folder", "in/part-*.csv", "ilink/part-7.csv", "one of its parts"},
		{"elsewhere", "in", "clink/../ok.csv", ""},
	}
	kinds := []string{"output", "--report", "risk --report"}
	for _, c := range cases {
		for _, kind := range kinds {
			t.Run(c.name+"/"+kind, func(t *testing.T) {
				root, cfg := destFixture(t)
				dest := root + sep + filepath.FromSlash(c.dest)
				if kind != "output" && c.want == "" {
					dest = strings.TrimSuffix(dest, ".csv") + ".json" // a report's name says its format
				}
				opt := job.Options{Input: filepath.Join(root, filepath.FromSlash(c.input)), Force: true}
				before := snapshot(t, root)
				var err error
				switch kind {
				case "output":
					opt.Output = dest
					_, err = Release(context.Background(), cfg, opt)
				case "--report":
					opt.Output, opt.Report = filepath.Join(root, "r.csv"), dest
					_, err = Release(context.Background(), cfg, opt)
				default:
					opt.Report = dest
					_, err = Risk(context.Background(), cfg, opt)
				}
				if c.want == "" {
					if err != nil {
						t.Fatal(err)
					}
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s was not written: %v", dest, err)
					}
					return
				}
				if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), dest) {
					t.Fatalf("err = %v, want bad input naming %s and %q", err, dest, c.want)
				}
				if after := snapshot(t, root); !maps.Equal(after, before) {
					for p, v := range after {
						if before[p] != v {
							t.Errorf("%s changed or appeared", p)
						}
					}
					for p := range before {
						if _, ok := after[p]; !ok {
							t.Errorf("%s is gone", p)
						}
					}
				}
			})
		}
	}
}

// TestReportNotOutput: a report naming the run's output (release) or the release a
// risk analysis measures, through a hard link or a linked folder, is exit 2 naming
// it, and the output is left as it was.
func TestReportNotOutput(t *testing.T) {
	for _, report := range []string{"hard-r.csv", "hlink/../../r.csv"} {
		for _, kind := range []string{"release", "risk"} {
			t.Run(report+"/"+kind, func(t *testing.T) {
				root, cfg := destFixture(t)
				out := filepath.Join(root, "r.csv")
				opt := job.Options{Input: filepath.Join(root, "in.csv"), Output: out, Force: true}
				if _, err := Release(context.Background(), cfg, opt); err != nil {
					t.Fatal(err)
				}
				if err := os.Link(out, filepath.Join(root, "hard-r.csv")); err != nil {
					t.Skip(err)
				}
				before := snapshot(t, root)
				opt.Report = root + string(filepath.Separator) + filepath.FromSlash(report)
				var err error
				if kind == "release" {
					_, err = Release(context.Background(), cfg, opt)
				} else {
					_, err = Risk(context.Background(), cfg, opt)
				}
				if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), opt.Report) || !strings.Contains(err.Error(), out) {
					t.Fatalf("err = %v, want bad input naming %s and %s", err, opt.Report, out)
				}
				if after := snapshot(t, root); !maps.Equal(after, before) {
					t.Error("the run changed its folder")
				}
			})
		}
	}
}

// TestReportBesideParts: a report (JSON or HTML) or a risk report written into the
// folder of an input in parts is no part of it (the folder's listing takes only
// tables): the run writes it. A release file written there would be one, and is
// refused.
func TestReportBesideParts(t *testing.T) {
	root, cfg := destFixture(t)
	parts := filepath.Join(root, "parts")
	if err := os.Mkdir(parts, 0o700); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "in.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(parts, "part-0.csv"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, report := range []string{"report.json", "report.html"} {
		opt := job.Options{Input: parts, Output: filepath.Join(root, "r-"+report+".csv"), Report: filepath.Join(parts, report)}
		if _, err := Release(context.Background(), cfg, opt); err != nil {
			t.Errorf("release with --report %s beside the parts: %v", report, err)
		}
	}
	opt := job.Options{Input: parts, Report: filepath.Join(parts, "risk.html")}
	if _, err := Risk(context.Background(), cfg, opt); err != nil {
		t.Errorf("risk with --report beside the parts: %v", err)
	}
	_, err = Release(context.Background(), cfg, job.Options{Input: parts, Output: filepath.Join(parts, "r.csv")})
	if !errors.Is(err, fault.ErrBadInput) {
		t.Errorf("a release among the parts: %v, want bad input", err)
	}
}
