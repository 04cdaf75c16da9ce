package stage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"sanitizer/job"
	"sanitizer/publish"
)

// A run's intermediate files hold the input's data: the values of the built
// hierarchies and of the protected sensitive columns (those only suppressed records
// hold among them), the class tables at the original values, the parts before they
// are checked, copies of the input. They never go beside the output: each run writes
// them into a temporary folder of its own, made (mode 0700) by publish.CreateFolder in
// a private folder: --temp_location (Job.Temp) when it is a local path, else the
// system's temporary folder. The run holds a lock on it while it lives, and every run
// first removes the folders whose runs died (a driver killed outright), as the CLI
// does with its temporaries.
//
// The files the driver and the workers exchange (the values, the tables, the written
// parts, the workers' errors) need a folder they share: the run's folder itself, or,
// when --temp_location is in a store (gs://, s3://), a folder of the same name there,
// which the run's local folder records (storeRecord) so that the sweep of a dead run's
// local folder removes the store's too. What only the driver reads (its copies of an
// input or a release in a store) stays in the local folder; a worker's copies go to
// a folder of its own in its machine's temporary folder (workerTemp).

// tempBase is the name the temporary folders are made beside, in their local folder:
// each is .sanitize-beam.sanitize-PID-RAND.tmp (publish's temporaries' names).
const tempBase = "sanitize-beam"

// storeRecord is the file in a run's local folder that names its folder in a store.
const storeRecord = "store-folder"

// runTemp is a run's temporary folders.
type runTemp struct {
	local  *publish.Folder // on this machine, held while the run lives
	shared string          // the folder shared with the workers: local's, or one in a store
}

// newRunTemp removes the temporary folders of dead runs from the private folder of
// temp (Beam's --temp_location; "": none) and makes this run's.
func newRunTemp(ctx context.Context, temp string) (*runTemp, error) {
	root := os.TempDir()
	if temp != "" && !isObject(temp) {
		root = job.Abs(temp)
	}
	if err := sweepTemps(ctx, root); err != nil {
		return nil, fmt.Errorf("--temp_location: %w", err)
	}
	d, err := publish.CreateFolder(filepath.Join(root, tempBase))
	if err != nil {
		return nil, fmt.Errorf("--temp_location: the run's temporary folder in %s: %w", root, err)
	}
	rt := &runTemp{local: d, shared: d.Path}
	if isObject(temp) {
		// Recorded first: a sweep after this run died finds it.
		rt.shared = joinPath(temp, filepath.Base(d.Path))
		if err := os.WriteFile(filepath.Join(d.Path, storeRecord), []byte(rt.shared), 0o600); err != nil {
			d.Discard()
			return nil, err
		}
	}
	return rt, nil
}

// sweepTemps removes from the local folder root the temporary folders whose runs died,
// with the folder in a store each one records.
func sweepTemps(ctx context.Context, root string) error {
	return publish.SweepFunc(filepath.Join(root, tempBase), func(tmp string) error {
		data, err := os.ReadFile(filepath.Join(tmp, storeRecord))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		shared := string(data)
		if !isObject(shared) || baseName(shared) != filepath.Base(tmp) { // only the folder named after it
			return fmt.Errorf("%s names %q, not its folder in a store", storeRecord, shared)
		}
		return removeObjects(ctx, shared)
	})
}

// folder is the folder name in the shared folder, made when it is local.
func (rt *runTemp) folder(name string) (string, error) {
	p := joinPath(rt.shared, name)
	if isObject(p) {
		return p, nil
	}
	return p, os.Mkdir(p, 0o700)
}

// private makes the folder name in the local folder, for this process alone.
func (rt *runTemp) private(name string) (string, error) {
	p := filepath.Join(rt.local.Path, name)
	return p, os.Mkdir(p, 0o700)
}

// discard removes the run's temporary folders: the one in a store first, then the
// local one, which names it (kept, when the store's cannot be removed, for a sweep
// once this run has ended).
func (rt *runTemp) discard(ctx context.Context) error {
	if rt.shared != rt.local.Path {
		if err := removeObjects(ctx, rt.shared); err != nil {
			return fmt.Errorf("the run's temporary folder %s: %w", rt.shared, err)
		}
	}
	rt.local.Discard()
	return nil
}

// workerTemp makes a temporary folder for a worker's own copies in its machine's
// temporary folder, held while its process lives, having removed those of dead
// processes there first (as far as it can: the driver's sweep reports what it
// cannot).
func workerTemp(ctx context.Context) (*publish.Folder, error) {
	root := os.TempDir()
	sweepTemps(ctx, root)
	return publish.CreateFolder(filepath.Join(root, tempBase))
}
