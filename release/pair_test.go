package release

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
)

// TestCheckReportOfAnotherRelease: a report records the digest of its release (a
// file's, or every part's of a folder) and check --report passes on the pair; a report
// beside a release that is not its own is exit 3 naming the key, however the release
// differs: another file, a part changed, a part added or gone, a file where the
// report describes parts or the reverse; a report that records no digest is refused
// too.
func TestCheckReportOfAnotherRelease(t *testing.T) {
	cfg, in, dir := hospitalFixture(t, 600)
	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	parts := filepath.Join(dir, "parts")
	if err := os.Mkdir(parts, 0o700); err != nil {
		t.Fatal(err)
	}
	splitCSV(t, data, parts, 2)
	file, fileRep := filepath.Join(dir, "r.csv"), filepath.Join(dir, "r.json")
	folder, folderRep := filepath.Join(dir, "rel")+string(filepath.Separator), filepath.Join(dir, "rel.json")
	for _, o := range []job.Options{{Input: in, Output: file, Report: fileRep}, {Input: parts, Output: folder, Report: folderRep}} {
		if _, err := Release(context.Background(), cfg, o); err != nil {
			t.Fatal(err)
		}
		if _, err := Check(context.Background(), cfg, o); err != nil {
			t.Fatalf("check of the pair %s, %s: %v", o.Output, o.Report, err)
		}
	}
	part0 := filepath.Join(folder, "part-00000.csv")
	partData, err := os.ReadFile(part0)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name       string
		change     func(t *testing.T) // what is done to the releases before the check
		input, rel string
		report     string
		want       string
	}{
		{"the file changed", func(t *testing.T) { appendTo(t, file, "") }, in, file, fileRep, "output.digest"},
		{"the file's report beside the folder", nil, parts, folder, fileRep, "output.digest"},
		{"the folder's report beside the file", nil, in, file, folderRep, "output.part_digests"},
		{"a part changed", func(t *testing.T) { appendTo(t, part0, "") }, parts, folder, folderRep, "output.part_digests"},
		{"a part added", func(t *testing.T) {
			writeTestFile(t, filepath.Join(folder, "part-00002.csv"), partData)
		}, parts, folder, folderRep, "output.part_digests"},
		{"a part gone", func(t *testing.T) {
			if err := os.Remove(part0); err != nil {
				t.Fatal(err)
			}
		}, parts, folder, folderRep, "output.part_digests"},
		{"no digest recorded", func(t *testing.T) {
			b, err := os.ReadFile(fileRep)
			if err != nil {
				t.Fatal(err)
			}
			writeTestFile(t, fileRep, []byte(testfiles.Replace(t, string(b), `"digest"`, `"digest_was"`)))
		}, in, file, fileRep, "records no digest"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			saved := map[string][]byte{}
			for _, p := range []string{file, fileRep, part0} {
				saved[p], _ = os.ReadFile(p)
			}
			t.Cleanup(func() {
				os.Remove(filepath.Join(folder, "part-00002.csv"))
				for p, b := range saved {
					writeTestFile(t, p, b)
				}
			})
			if c.change != nil {
				c.change(t)
			}
			_, err := Check(context.Background(), cfg, job.Options{Input: c.input, Output: c.rel, Report: c.report})
			if !errors.Is(err, fault.ErrUnattainable) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want a violation naming %s", err, c.want)
			}
		})
	}
}

// appendTo appends text and a newline to the file at path: another file, the same
// records when text is "" (a CSV reader skips the empty line).
func appendTo(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text + "\n"); err != nil {
		t.Fatal(err)
	}
}
