package release

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"sanitizer/fault"
	"sanitizer/publish"
	"sanitizer/table"
)

// checkPair refuses, with an error matching fault.ErrUnattainable, a report
// (reportPath) that is not the report of the release at rel: one that records no
// digest of its release (output.digest, output.part_digests), or a digest that is not
// rel's (a report left beside a newer release, or the reverse, whose parameters may
// all agree). rel is a file, or a folder or pattern of parts.
func checkPair(reportPath, rel string) error {
	rep, err := readReleaseReport(reportPath)
	if err != nil {
		return err
	}
	out := rep.Output
	switch {
	case out.Digest == "" && len(out.PartDigests) == 0:
		return fault.Unattainable("%s: the report %s records no digest of its release (output.digest): it cannot be told from another release's report (write it again: sanitize release --report)", rel, reportPath)
	case len(out.PartDigests) > 0 && !table.IsParts(rel):
		return fault.Unattainable("%s: the report %s records output.part_digests, of a release in parts: the report is of another release", rel, reportPath)
	case out.Digest != "" && table.IsParts(rel):
		return fault.Unattainable("%s: the report %s records output.digest, of a release in one file: the report is of another release", rel, reportPath)
	case out.Digest != "":
		got, err := publish.Digest(rel)
		if err != nil {
			return fault.BadInput("release: %w", err)
		}
		if got != out.Digest {
			return fault.Unattainable("%s: its digest is %s, the report %s records output.digest %s: the report is of another release", rel, got, reportPath, out.Digest)
		}
		return nil
	}
	return checkPartDigests(reportPath, rel, out.PartDigests)
}

// checkPartDigests is checkPair for a release in parts: its parts, by name, are those
// the report records, with the digests it records.
func checkPartDigests(reportPath, rel string, want map[string]string) error {
	paths, err := table.PartPaths(rel)
	if err != nil {
		return err
	}
	got := make(map[string]string, len(paths))
	for _, p := range paths {
		if got[filepath.Base(p)], err = publish.Digest(p); err != nil {
			return fault.BadInput("release: %w", err)
		}
	}
	if names, recorded := slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)); !slices.Equal(names, recorded) {
		return fault.Unattainable("%s: its parts are %s, the report %s records output.part_digests of %s: the report is of another release", rel, strings.Join(names, ", "), reportPath, strings.Join(recorded, ", "))
	}
	for _, name := range slices.Sorted(maps.Keys(got)) {
		if got[name] != want[name] {
			return fault.Unattainable("%s: part %s's digest is %s, the report %s records output.part_digests %s: the report is of another release", rel, name, got[name], reportPath, want[name])
		}
	}
	return nil
}
