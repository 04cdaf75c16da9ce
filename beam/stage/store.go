package stage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"

	"sanitizer/fault"
	"sanitizer/publish"
	"sanitizer/schema"
	"sanitizer/table"
)

// The files a release on Beam shares between the driver and the workers (the input's
// parts, the merged tables, the written parts) are local paths, which every worker
// must see at the same path (a shared mount), or objects of a store Beam's filesystem
// package serves (gs://, s3://; memfs:// in tests), which a Dataflow job's workers
// share with its driver without a mount. The functions below take either.

// isObject reports whether path names an object of a store (scheme://…), not a local
// file.
func isObject(path string) bool { return schema.StoreURL(path) }

// scheme is the scheme of a store's path ("gs", "s3").
func scheme(p string) string { return p[:strings.Index(p, "://")] }

// store is the filesystem that serves path.
func store(ctx context.Context, path string) (filesystem.Interface, error) {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return nil, fault.BadInput("%s: %w", path, err)
	}
	return fs, nil
}

// joinPath is name in the folder dir.
func joinPath(dir, name string) string {
	if isObject(dir) {
		return strings.TrimSuffix(dir, "/") + "/" + name
	}
	return filepath.Join(dir, name)
}

// baseName is the last element of path.
func baseName(p string) string {
	if isObject(p) {
		return path.Base(strings.TrimSuffix(p, "/"))
	}
	return filepath.Base(p)
}

// readFile reads the file or object at p.
func readFile(ctx context.Context, p string) ([]byte, error) {
	if !isObject(p) {
		return os.ReadFile(p)
	}
	fs, err := store(ctx, p)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	r, err := fs.OpenRead(ctx, p)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// writeFile writes data to the file or object at p.
func writeFile(ctx context.Context, p string, data []byte) error {
	if !isObject(p) {
		return os.WriteFile(p, data, 0o600)
	}
	fs, err := store(ctx, p)
	if err != nil {
		return err
	}
	defer fs.Close()
	w, err := fs.OpenWrite(ctx, p)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// copyFile copies the file or object from to the file or object to, either local or
// in a store. An object whose copy fails is not committed.
func copyFile(ctx context.Context, from, to string) error {
	if isObject(from) && isObject(to) && scheme(from) == scheme(to) {
		fs, err := store(ctx, from)
		if err != nil {
			return err
		}
		defer fs.Close()
		if c, ok := fs.(filesystem.Copier); ok { // within the store: no byte passes here
			return c.Copy(ctx, from, to)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var r io.ReadCloser
	if isObject(from) {
		fs, err := store(ctx, from)
		if err != nil {
			return err
		}
		defer fs.Close()
		if r, err = fs.OpenRead(ctx, from); err != nil {
			return err
		}
	} else {
		f, err := os.Open(from)
		if err != nil {
			return err
		}
		r = f
	}
	defer r.Close()
	var w io.WriteCloser
	if isObject(to) {
		fs, err := store(ctx, to)
		if err != nil {
			return err
		}
		defer fs.Close()
		if w, err = fs.OpenWrite(ctx, to); err != nil {
			return err
		}
	} else {
		f, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		w = f
	}
	if _, err := io.Copy(w, r); err != nil {
		cancel() // a store's writer abandons the object when its context ends
		w.Close()
		if !isObject(to) {
			os.Remove(to)
		}
		return err
	}
	return w.Close()
}

// under is every object in the folder dir of the store fs or in a folder of it (the
// depth this package writes: a release's parts, a temporary folder's work/ and
// release/), sorted: "*" and "*/*", which every store's List reads alike.
func under(ctx context.Context, fs filesystem.Interface, dir string) ([]string, error) {
	dir = strings.TrimSuffix(dir, "/")
	seen := map[string]bool{}
	for _, glob := range []string{dir + "/*", dir + "/*/*"} {
		found, err := fs.List(ctx, glob)
		if err != nil {
			return nil, err
		}
		for _, p := range found {
			seen[p] = true
		}
	}
	out := slices.Collect(maps.Keys(seen))
	slices.Sort(out)
	return out, nil
}

// listObjects is every object in the folder dir of a store (under).
func listObjects(ctx context.Context, dir string) ([]string, error) {
	fs, err := store(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	return under(ctx, fs, dir)
}

// objectParts lists the parts of an input in a store as table.PartPaths lists a local
// one: the objects a glob matches, or those directly in a folder whose names do not
// start with "." or "_" and end in a table's extension; else the one object. Sorted.
func objectParts(ctx context.Context, in string) ([]string, error) {
	fs, err := store(ctx, in)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	var parts []string
	if strings.ContainsAny(in, "*?[") {
		if parts, err = fs.List(ctx, in); err != nil {
			return nil, fault.BadInput("input: %s: %w", in, err)
		}
	} else {
		dir := strings.TrimSuffix(in, "/") + "/"
		all, err := fs.List(ctx, dir+"*")
		if err != nil {
			return nil, fault.BadInput("input: %s: %w", in, err)
		}
		for _, p := range all {
			name := strings.TrimPrefix(p, dir)
			if !strings.Contains(name, "/") && !strings.HasPrefix(name, ".") && !strings.HasPrefix(name, "_") && table.Format(schema.IO{}, name) != "" {
				parts = append(parts, p)
			}
		}
		if len(parts) == 0 {
			if _, err := fs.Size(ctx, in); err == nil {
				return []string{in}, nil // one object
			}
		}
	}
	if len(parts) == 0 {
		return nil, fault.BadInput("input: %s names no table files", in)
	}
	slices.Sort(parts)
	return parts, nil
}

// objectExists reports whether p is an object of a store (not a folder).
func objectExists(ctx context.Context, p string) (bool, error) {
	fs, err := store(ctx, p)
	if err != nil {
		return false, err
	}
	defer fs.Close()
	_, err = fs.Size(ctx, p)
	return err == nil, nil
}

// removeObjects removes every object under the folder dir of a store.
func removeObjects(ctx context.Context, dir string) error {
	fs, err := store(ctx, dir)
	if err != nil {
		return err
	}
	defer fs.Close()
	rm, ok := fs.(filesystem.Remover)
	if !ok {
		return fmt.Errorf("%s: the store cannot remove objects", dir)
	}
	all, err := under(ctx, fs, dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range all {
		errs = append(errs, rm.Remove(ctx, p))
	}
	return errors.Join(errs...)
}

// removeObject removes one object of a store.
func removeObject(ctx context.Context, p string) error {
	fs, err := store(ctx, p)
	if err != nil {
		return err
	}
	defer fs.Close()
	rm, ok := fs.(filesystem.Remover)
	if !ok {
		return fmt.Errorf("%s: the store cannot remove objects", p)
	}
	return rm.Remove(ctx, p)
}

// checkStorePath refuses, as bad input naming key, a path in a store this package
// cannot use as a folder: a bucket itself (its temporary folder would be another
// bucket), or one with glob characters.
func checkStorePath(key, p string) error {
	if !isObject(p) {
		return nil
	}
	rest := p[strings.Index(p, "://")+3:]
	if i := strings.IndexByte(rest, '/'); i < 0 || strings.Trim(rest[i:], "/") == "" {
		return fault.BadInput("%s: %s is a bucket: name a folder in it", key, p)
	}
	if strings.ContainsAny(p, "*?[") {
		return fault.BadInput("%s: %s: a folder in a store is named without *, ? or [", key, p)
	}
	return nil
}

// mirror copies every part of an input in a store into the local folder dir, by its
// name (a part of a local input is read where it is): what the driver reads of the
// input itself, its columns, its records' bound and the check, it reads there. It
// returns the local paths, in the order of parts.
func mirror(ctx context.Context, parts []string, dir string) ([]string, error) {
	local := make([]string, len(parts))
	for i, p := range parts {
		if !isObject(p) {
			local[i] = p
			continue
		}
		local[i] = filepath.Join(dir, fmt.Sprintf("%05d-%s", i, baseName(p)))
		if err := copyFile(ctx, p, local[i]); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	return local, nil
}

// fetched is a part of the input as a worker reads it: the local file (the part
// itself, or a copy of an object of a store in a temporary folder) and how to say
// where a record is.
type fetched struct {
	path, name string          // the local file, and the part's own name for messages
	tmp        *publish.Folder // the temporary folder of a copy (nil: none)
}

// fetch makes part readable as a local file on this worker.
func fetch(ctx context.Context, part string) (*fetched, error) {
	if !isObject(part) {
		return &fetched{path: part, name: part}, nil
	}
	tmp, err := workerTemp(ctx)
	if err != nil {
		return nil, err
	}
	f := &fetched{path: filepath.Join(tmp.Path, baseName(part)), name: part, tmp: tmp}
	if err := copyFile(ctx, part, f.path); err != nil {
		f.done()
		return nil, fmt.Errorf("%s: %w", part, err)
	}
	return f, nil
}

// done removes the local copy, if any.
func (f *fetched) done() {
	if f.tmp != nil {
		f.tmp.Discard()
	}
}

// rename gives err, which names the local copy, the part's own name, its kind kept.
func (f *fetched) rename(err error) error {
	if err == nil || f.path == f.name || !strings.Contains(err.Error(), f.path) {
		return err
	}
	msg := strings.ReplaceAll(err.Error(), f.path, f.name)
	switch {
	case errors.Is(err, fault.ErrBadInput):
		return fault.BadInput("%s", msg)
	case errors.Is(err, fault.ErrUnattainable):
		return fault.Unattainable("%s", msg)
	}
	return errors.New(msg)
}

// source is an input's parts as the workers read them, and as this process (the
// driver) reads them: its columns, its records' bound, the check of the release.
type source struct {
	in    string   // the input, as given
	parts []string // its parts, as the workers read them (Parts)
	local []string // the same parts on this machine: themselves, or copies (mirror; the first only, for dp)
	// localIn is the input as a local path: in, or the folder of the copies, a folder of
	// parts in the input's order.
	localIn string
	dir     string // the folder of the copies ("": none)
}

// openSource lists in's parts and, for an input in a store, copies them to a local
// folder of the run's (rt) for this process (all of them, or with first only the
// first: what dp reads here); close removes it.
func openSource(ctx context.Context, in string, first bool, rt *runTemp) (*source, error) {
	parts, err := Parts(ctx, in)
	if err != nil {
		return nil, err
	}
	src := &source{in: in, parts: parts, local: parts, localIn: in}
	if !isObject(in) {
		return src, nil
	}
	if src.dir, err = rt.private("input"); err != nil {
		return nil, err
	}
	copied := parts
	if first {
		copied = parts[:1]
	}
	if src.local, err = mirror(ctx, copied, src.dir); err != nil {
		src.close()
		return nil, err
	}
	src.localIn = src.dir
	if len(parts) == 1 && parts[0] == in { // one object: read as the file it is
		src.localIn = src.local[0]
	}
	return src, nil
}

// rename gives err, which may name the local copies, the input's own names, its kind
// kept.
func (s *source) rename(err error) error {
	if err == nil || s.dir == "" {
		return err
	}
	for i, l := range s.local {
		err = (&fetched{path: l, name: s.parts[i]}).rename(err)
	}
	return (&fetched{path: s.dir, name: s.in}).rename(err)
}

// close removes the local copies, if any.
func (s *source) close() {
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}
