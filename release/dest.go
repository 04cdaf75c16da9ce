package release

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sanitizer/fault"
	"sanitizer/publish"
	"sanitizer/schema"
	"sanitizer/table"
)

// A release is written to a temporary beside its destination, verified there, and
// published only then: one file, or, when the output path ends in a separator
// ("release/"), a folder with one release part per part of the input
// (part-00000.parquet, …, in the input's order), published by one rename of the
// folder once every part is verified. (An existing folder named without the separator
// is refused, as it always was: a script that meant a file must not get a folder.)

// checkDestination refuses, as bad input naming key, a destination dest (a folder of
// parts when folder is set) that would overwrite what a run of cfg over the input in
// reads: the input (a file, or one of its parts), a file the configuration names (the
// configuration, a hierarchy file), a file that would be read as one of the input's
// parts (in its folder, or one its pattern matches), or a folder that holds any of
// them. Paths are compared by what they name (table.SameFile, table.Within,
// table.InsideParts: symbolic links, "..", hard links), not as written; a path in a
// store (scheme://…) is left to the store's own checks.
func checkDestination(cfg *schema.Config, in, key, dest string, folder bool) error {
	if schema.StoreURL(dest) {
		return nil
	}
	reads := []readPath{{"the input", in}}
	if !schema.StoreURL(in) && table.IsParts(in) {
		reads = reads[:0]
		parts, _ := table.PartPaths(in) // an input that lists no parts is refused on its own
		for _, p := range parts {
			reads = append(reads, readPath{"the input's part", p})
		}
		if folder && table.PartsFolder(in, dest) || !folder && table.InsideParts(in, dest) {
			return fault.BadInput("%s: %s is also the input, or one of its parts: it would be read as one of %s", key, dest, in)
		}
	}
	for _, r := range append(reads, configFiles(cfg)...) {
		switch {
		case schema.StoreURL(r.path):
		case !folder && table.SameFile(dest, r.path):
			return fault.BadInput("%s: %s is %s %s, which the run reads", key, dest, r.what, r.path)
		case folder && table.Within(r.path, dest):
			return fault.BadInput("%s: the folder %s holds %s %s, which the run reads", key, dest, r.what, r.path)
		}
	}
	return nil
}

// checkNotIn refuses, as bad input naming key, a destination dest that is another
// destination of the run, other (what: "the output"; a file or a folder), or inside it.
func checkNotIn(key, dest, what, other string) error {
	if other == "" || schema.StoreURL(dest) || schema.StoreURL(other) {
		return nil
	}
	if table.SameFile(dest, other) || table.Within(dest, other) {
		return fault.BadInput("%s: %s is %s %s, or inside it", key, dest, what, other)
	}
	return nil
}

// readPath is a file a run reads, and what names it.
type readPath struct {
	what string // "the input", "the configuration", or its key ("columns.sex.hierarchy.file")
	path string
}

// configFiles lists every file the configuration cfg makes a run read besides its
// input: the configuration itself and every hierarchy file.
func configFiles(cfg *schema.Config) []readPath {
	var files []readPath
	if cfg.File != "" {
		files = append(files, readPath{"the configuration", cfg.File})
	}
	for _, c := range cfg.Columns {
		if c.Hierarchy != nil && c.Hierarchy.File != "" {
			files = append(files, readPath{"columns." + c.Name + ".hierarchy.file", c.Hierarchy.File})
		}
	}
	return files
}

// checkOutput refuses, before anything is read, an output the run could not publish.
func checkOutput(out string, force bool) error {
	if folderOutput(out) {
		return publish.CheckFolder("output", out)
	}
	return publish.CheckFile("output", out, force)
}

// releaseDest is where a release is written before it is published.
type releaseDest interface {
	// path is what the verification reads: the file, or the folder of parts.
	path() string
	publish(force bool) error
	discard()
}

type fileDest struct{ f *publish.File }

func (d fileDest) path() string             { return d.f.Name() }
func (d fileDest) publish(force bool) error { return d.f.Publish(force) }
func (d fileDest) discard()                 { d.f.Discard() }

type folderDest struct{ d *publish.Folder }

func (d folderDest) path() string       { return d.d.Path }
func (d folderDest) publish(bool) error { return d.d.Publish() }
func (d folderDest) discard()           { d.d.Discard() }

// releaseWriter writes a release's records: what writeRelease needs besides the
// records, and where.
type releaseWriter struct {
	out     string
	format  schema.Format
	dialect schema.CSV
	cols    []table.OutColumn
	meta    map[string]string
	workers int
}

// write is pass 2 into a new temporary destination: the records of src (rewound),
// recoded by rc. It returns the destination, not yet published, and the records
// written. On error the temporary is gone.
func (w releaseWriter) write(ctx context.Context, src table.Source, rc *recoder) (releaseDest, int, error) {
	written := 0
	if !folderOutput(w.out) {
		tmp, err := publish.PrepareSyncing(w.out, func(f *os.File) (err error) {
			written, err = w.writeRecords(ctx, f, src, rc)
			return err
		})
		if err != nil {
			return nil, 0, err
		}
		return fileDest{tmp}, written, nil
	}
	tmp, err := publish.CreateFolder(w.out)
	if err != nil {
		return nil, 0, fmt.Errorf("output: %w", err)
	}
	parts := table.Split(src)
	for i, part := range parts {
		err := tmp.WriteFile(partName(i, len(parts), w.format), func(f *os.File) error {
			n, err := w.writeRecords(ctx, f, part, rc)
			written += n
			return err
		})
		if err != nil {
			tmp.Discard()
			return nil, 0, err
		}
	}
	return folderDest{tmp}, written, nil
}

// writeRecords writes the records of src, recoded by rc, to f.
func (w releaseWriter) writeRecords(ctx context.Context, f *os.File, src table.Source, rc *recoder) (int, error) {
	sink, err := table.NewSink(f, w.format, w.dialect, w.cols, w.meta)
	if err != nil {
		return 0, fmt.Errorf("writing release: %w", err)
	}
	written, err := writeRelease(ctx, src, rc, sink, w.workers)
	if err != nil {
		return 0, err
	}
	if err := sink.Finish(); err != nil {
		return 0, fmt.Errorf("writing release: %w", err)
	}
	return written, nil
}

// partName is the file name of release part i of n in the given format:
// part-00000.parquet, … (more digits past 100000 parts; no extension for a format not
// among schema.Formats).
func partName(i, n int, format schema.Format) string {
	digits := max(5, len(fmt.Sprint(n-1)))
	ext := ""
	if slices.Contains(schema.Formats, format) {
		ext = "." + format.String()
	}
	return fmt.Sprintf("part-%0*d%s", digits, i, ext)
}

// folderOutput reports whether an output path asks for a folder of release parts.
func folderOutput(out string) bool {
	return strings.HasSuffix(out, "/") || strings.HasSuffix(out, string(filepath.Separator))
}
