package job

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"

	"sanitizer/fault"
	"sanitizer/generalize"
	"sanitizer/internal/readfile"
	"sanitizer/schema"
	"sanitizer/verify"
)

// HierFiles holds the bytes of every hierarchy file a run uses, each read once: the
// search's parse, the verifier's own parse and the digest the report certifies all
// come from the same bytes, so a file changed during the run cannot be certified for a
// release made with its earlier content.
type HierFiles struct {
	files map[string]*HierFile
}

// HierFile is one hierarchy file's bytes and their digest.
type HierFile struct {
	Data   []byte
	digest string // "sha256:" and the hex SHA-256 of data
}

// ReadHierFiles reads every hierarchy file the configuration names: regular files of
// at most schema.MaxHierarchyBytes. Its error lists every file that cannot be read,
// each at the line of its columns.<name>.hierarchy.file key; with it, it returns the
// files it could read (what validate checks further).
func ReadHierFiles(cfg *schema.Config) (*HierFiles, error) {
	h := &HierFiles{files: map[string]*HierFile{}}
	var errs schema.ErrorList
	tried := map[string]bool{}
	for _, c := range cfg.Columns {
		if c.Hierarchy == nil || c.Hierarchy.File == "" || tried[c.Hierarchy.File] {
			continue
		}
		path := c.Hierarchy.File
		tried[path] = true
		data, err := readfile.Read(path, schema.MaxHierarchyBytes)
		if err != nil {
			errs.Add(cfg.Wrap(HierFileKey(c.Name), fault.BadInput("%w", err)))
			continue
		}
		h.files[path] = newHierFile(data)
	}
	return h, errs.Err()
}

// HierFileKey is the configuration's key path of the named column's hierarchy file.
func HierFileKey(column string) string { return "columns." + column + ".hierarchy.file" }

// HierFilesOf holds the bytes of hierarchy files read elsewhere (Bytes of another
// process's HierFiles), by the paths the configuration names them by: what a worker
// of a distributed run, which may not see those paths, reads the run's hierarchies
// from.
func HierFilesOf(files map[string][]byte) *HierFiles {
	h := &HierFiles{files: make(map[string]*HierFile, len(files))}
	for path, data := range files {
		h.files[path] = newHierFile(data)
	}
	return h
}

// newHierFile is a file's bytes with their digest.
func newHierFile(data []byte) *HierFile {
	sum := sha256.Sum256(data)
	return &HierFile{Data: data, digest: "sha256:" + hex.EncodeToString(sum[:])}
}

// Bytes maps every hierarchy file to the bytes read for it.
func (h *HierFiles) Bytes() map[string][]byte {
	out := make(map[string][]byte, len(h.files))
	for path, f := range h.files {
		out[path] = f.Data
	}
	return out
}

// File returns the bytes read for path; a path the configuration does not name is an
// internal error.
func (h *HierFiles) File(path string) (*HierFile, error) {
	f, ok := h.files[path]
	if !ok {
		return nil, fault.Internalf("hierarchy file %s was not read at the start of the run", path)
	}
	return f, nil
}

// Hierarchy parses the search's Hierarchy from the bytes read for path.
func (h *HierFiles) Hierarchy(path string) (*generalize.Hierarchy, error) {
	f, err := h.File(path)
	if err != nil {
		return nil, err
	}
	return generalize.ReadHierarchy(bytes.NewReader(f.Data), path)
}

// Cover is the verifier's own reading of the hierarchy read for path.
func (h *HierFiles) Cover(path string) (verify.Cover, error) {
	f, err := h.File(path)
	if err != nil {
		return nil, err
	}
	return verify.CoverHierarchy(f.Data, path)
}

// Domain is the verifier's own reading of the hierarchy's levels, for the utility
// measurement.
func (h *HierFiles) Domain(path string) (*verify.Domain, error) {
	f, err := h.File(path)
	if err != nil {
		return nil, err
	}
	return verify.HierarchyDomainOf(f.Data, path)
}

// Digests maps every hierarchy file to the digest of the bytes the run used; nil when
// the configuration names none.
func (h *HierFiles) Digests() map[string]string {
	if len(h.files) == 0 {
		return nil
	}
	out := make(map[string]string, len(h.files))
	for path, f := range h.files {
		out[path] = f.digest
	}
	return out
}
