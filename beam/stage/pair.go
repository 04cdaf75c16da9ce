package stage

import (
	"fmt"
	"path/filepath"

	"sanitizer/publish"
)

// partDigests maps every checked part, by name, to its digest (publish.Digest), from
// the files the check read: the release's report records them (output.part_digests),
// as the CLI's report of a release in parts does.
func (f *folder) partDigests() (map[string]string, error) {
	dir := f.parts
	if f.local != "" {
		dir = f.local
	}
	out := make(map[string]string, len(f.checked))
	for _, name := range f.checked {
		d, err := publish.Digest(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("output: the checked part's digest: %w", err)
		}
		out[name] = d
	}
	return out, nil
}
