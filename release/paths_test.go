package release

import (
	"errors"
	"path/filepath"
	"sanitizer/fault"
	"sanitizer/job"
	"strings"
	"testing"
)

// TestPaths: the command line's paths override the configuration's; formats come from
// the configuration or the extensions; a missing path names its flag and key.
func TestPaths(t *testing.T) {
	cfg := loadConfigText(t, "input: {path: a.csv}\noutput: {path: b.parquet}\ncolumns:\n  x: {role: insensitive}\n")
	in, out, inFmt, outFmt, err := paths(cfg, job.Options{})
	if err != nil || filepath.Base(in) != "a.csv" || filepath.Base(out) != "b.parquet" || inFmt != "csv" || outFmt != "parquet" {
		t.Errorf("from the configuration: %q %q %q %q %v", in, out, inFmt, outFmt, err)
	}
	in, out, inFmt, outFmt, err = paths(cfg, job.Options{Input: "c.arrow", Output: "d/"})
	if err != nil || in != "c.arrow" || out != "d/" || inFmt != "arrow" || outFmt != "arrow" {
		t.Errorf("from the options, a folder output: %q %q %q %q %v", in, out, inFmt, outFmt, err)
	}
	empty := loadConfigText(t, "columns:\n  x: {role: insensitive}\n")
	if _, _, _, _, err := paths(empty, job.Options{}); !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "--in") {
		t.Errorf("no input: %v", err)
	}
	if _, _, _, _, err := paths(empty, job.Options{Input: "a.csv"}); !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "--out") {
		t.Errorf("no output: %v", err)
	}
	if _, _, _, _, err := paths(empty, job.Options{Input: "a.csv", Output: "b.xlsx"}); !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), "output.format") {
		t.Errorf("unknown output extension: %v", err)
	}
}
