package stage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"sanitizer/fault"
	"sanitizer/generalize"
	"sanitizer/job"
	"sanitizer/publish"
	"sanitizer/release"
	"sanitizer/report"
	"sanitizer/risk"
	"sanitizer/schema"
	"sanitizer/table"
)

// Released is what a release on Beam did.
type Released struct {
	Searched
	Out      string               // the published release's folder
	Parts    int                  // release parts written, one per input part
	Recoding *generalize.Recoding // the node's published and suppressed classes
	Measured *release.Measured    // the check of the written parts
	// Report is the release's report, the CLI's document (release.Engine.NewReport; nil
	// unless one was asked for).
	Report *report.Report
	// Write and Check are the wall time of the pipeline that wrote the parts and of
	// their check.
	Write, Check time.Duration
}

// Release releases the input's parts on the runner as opt says: the input opt.Input
// and the folder opt.Output (else the configuration's input.path and output.path), the
// reports at opt.ReportPaths (each in the format its name says), opt.Force to replace
// them, the stages logged to opt.Log. It searches (Search), then recodes every part
// and writes it on the workers into the run's temporary folder (newRunTemp: in
// Job.Temp, never beside the output; part-00000.csv, .parquet or .arrow…:
// output.format, else the input's format, as the CLI's release in parts; a Parquet or Arrow part
// carries the CLI's release metadata, release.Engine.ReleaseMetadata, the same in every part),
// then checks the written parts with the CLI's independent check (release.Check:
// truthfulness against the input's parts, k, the suppression, the records left out
// exactly those of the failing classes) and that it measured what the search found,
// and only then moves the parts into the output and publishes the report. A run that
// cannot meet the models, fails on a part, or whose parts fail the check publishes
// nothing.
//
// With a privacy unit (privacy.privacy-unit) every model counts persons, as the CLI's
// release does: the persons are numbered once for every part (Persons), so that a
// person whose records lie in several parts is one person of every class table, the
// merge exact; the check counts them again from the input's unit column. With the
// unit released as a pseudonym (privacy.privacy-unit.pseudonym) every part writes the
// CLI's pseudonyms under the same key, which the workers read from a file
// (pseudonym.go), and the search, the recoding and the check meet multirelational
// k-anonymity, whole persons suppressed, as the CLI's release does.
//
// The input and the output may be in a store Beam's filesystem package serves (gs://,
// s3://), which a Dataflow job's workers share with the driver: the workers copy a
// part in before they read it and a written part out; the driver reads its own copies
// of the input and of the written parts for the check. A store has no rename: the
// checked parts are copied into the output folder, and a marker, _SUCCESS, written
// last says that the release is whole (readers of a release in a store wait for it;
// table.PartPaths, which lists the parts of a folder, leaves it out).
func Release(ctx context.Context, j Job, opt job.Options, run Execute) (*Released, error) {
	start := time.Now()
	cfg, err := schema.Parse(j.Config, j.Name, j.Dir)
	if err != nil {
		return nil, err
	}
	switch {
	case cfg.Privacy.DifferentialPrivacy != nil:
		return nil, cfg.Errorf("privacy.differential-privacy", "a differentially private release is decided on one machine (ReleaseDP), not searched from the workers' class tables")
	case opt.Ledger != "":
		return nil, fault.BadInput("--ledger: only a release under privacy.differential-privacy spends a differential privacy budget; this one spends none")
	}
	in, out, old, err := releasePaths(ctx, cfg, opt)
	if err != nil {
		return nil, err
	}
	dest, err := newFolder(ctx, j.Temp, out, old)
	if err != nil {
		return nil, err
	}
	log := opt.Logger()
	// The temporaries go whatever ends the run, a cancelled context included.
	defer dest.discard(context.WithoutCancel(ctx), log)
	// The workers read the pseudonym's key from a file (pseudonym.go), never from the
	// pipeline; a random one is the run's, removed first whatever ends it.
	key, err := newRunKey(cfg, dest.work)
	if err != nil {
		return nil, err
	}
	defer key.remove(log)
	j.KeyFile = key.path
	src, err := openSource(ctx, in, false, dest.rt)
	if err != nil {
		return nil, err
	}
	defer src.close()
	inParts := src.parts
	format, err := outputFormat(cfg, src.localIn, src.local[0])
	if err != nil {
		return nil, src.rename(err)
	}
	j.Errors = dest.errors // for runners that lose the workers' errors
	searched, err := search(ctx, j, src, dest.work, run)
	if err != nil {
		return nil, src.rename(err) // the estimate reads the local copies
	}
	created := time.Now() // the release's time, in its parts' metadata and its report
	log.Info("stage done", "stage", job.StageRead, "parts", len(inParts), "classes", searched.Classes.Len(), "at_levels", searched.Cut.Levels(), "ms", searched.Count.Milliseconds())
	log.Info("stage done", "stage", job.StageSearch, "lattice", searched.Result.LatticeSize, "evaluated", searched.Result.Evaluated, "suppressed", searched.Result.Suppressed, "ms", searched.Search.Milliseconds())
	r := &Released{Searched: *searched, Out: out, Parts: len(inParts)}
	if r.Recoding, err = searched.Cut.Recoding(searched.Classes, searched.Result.Levels, searched.Options); err != nil {
		return nil, fault.Internalf("the recoding at the node: %w", err)
	}
	var sizes risk.Distribution // the input's class sizes, for the report
	if len(opt.ReportPaths()) > 0 {
		if sizes, err = inputSizes(ctx, searched, inParts, dest.work, run); err != nil {
			return nil, err
		}
	}
	wrote := time.Now()
	if err := writeRelease(ctx, cfg, searched, inParts, dest, format, created, run); err != nil {
		return nil, err
	}
	r.Write = time.Since(wrote)
	log.Info("stage done", "stage", job.StageWrite, "parts", len(inParts), "ms", r.Write.Milliseconds())
	checked := time.Now()
	if r.Measured, err = check(ctx, key.checked(cfg), src.localIn, dest, r.Recoding, searched.Result); err != nil {
		return nil, src.rename(err)
	}
	r.Check = time.Since(checked)
	log.Info("stage done", "stage", job.StageVerify, "records", r.Measured.Rows, "classes", r.Measured.Classes, "min_class", r.Measured.MinClass, "ms", r.Check.Milliseconds())
	if len(opt.ReportPaths()) > 0 {
		if r.Report, err = newReport(cfg, r, src, sizes, format, created, start); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil { // stopped before publishing: nothing is
		return nil, err
	}
	if err := dest.publish(context.WithoutCancel(ctx), opt.ReportPaths(), r.Report, opt.Force); err != nil {
		return nil, err
	}
	if r.Report != nil {
		r.Report.StagesMS.Total = job.Millis(start, time.Now())
	}
	return r, nil
}

// releasePaths is the run's input and output: opt's, else the configuration's (as the
// CLI has them), checked as far as they can be before anything runs, the report's
// path with them. old is the parts of the release at out that the run replaces
// (opt.Force; nil: none).
func releasePaths(ctx context.Context, cfg *schema.Config, opt job.Options) (in, out string, old []string, err error) {
	eng := release.Engine{Config: cfg}
	if in, out, err = eng.InputOutput(opt); err != nil {
		return "", "", nil, err
	}
	if cfg.Search.Algorithm == schema.Mondrian {
		return "", "", nil, fault.BadInput("%s: search.algorithm: mondrian does not run on Beam (its recursion is not a combine): use optimal", cfg.File)
	}
	if cfg.Search.LocalRecoding != nil {
		return "", "", nil, cfg.Errorf("search.local-recoding", "does not run on Beam in this version: each pass searches the records the last one suppressed, on one machine")
	}
	// What a release on one machine refuses before reading, a release on Beam refuses
	// too.
	if err := release.CheckConfig(cfg); err != nil {
		return "", "", nil, err
	}
	for _, p := range opt.ReportPaths() {
		if isObject(p) {
			return "", "", nil, fault.BadInput("--report: %s: a report is written on this machine, not in a store", p)
		}
	}
	if err := checkStorePath("output", out); err != nil {
		return "", "", nil, err
	}
	if isObject(out) {
		out = strings.TrimRight(out, "/")
	} else {
		out = job.Abs(out)
	}
	glob := strings.ContainsAny(in, "*?[")
	if (!glob && within(out, in)) || (glob && matches(in, out)) {
		return "", "", nil, fault.BadInput("output: %s is the input %s, or inside it", out, in)
	}
	// What the run reads or writes beside the release: locally, compared by what the
	// paths name (release.Engine.CheckDestination); in a store, by name.
	if err := eng.CheckDestination(in, "output", out, true); err != nil {
		return "", "", nil, err
	}
	mine := append([]string{in, cfg.File}, opt.ReportPaths()...)
	for _, c := range cfg.Columns {
		if c.Hierarchy != nil && c.Hierarchy.File != "" {
			mine = append(mine, c.Hierarchy.File)
		}
	}
	for _, p := range mine {
		if p != "" && within(p, out) {
			return "", "", nil, fault.BadInput("output: %s holds %s, which the run reads or writes", out, p)
		}
	}
	if old, err = oldRelease(ctx, out); err != nil {
		return "", "", nil, err
	}
	if old != nil && !opt.Force {
		return "", "", nil, fault.BadInput("%s exists (use --force to replace it)", out)
	}
	return in, out, old, eng.CheckReport(opt, in, out)
}

// within reports whether path p is dir or inside it: both local, resolved
// (table.Within: symbolic links and ".." followed), or both in a store, by name.
func within(p, dir string) bool {
	if isObject(p) != isObject(dir) {
		return false
	}
	if !isObject(p) {
		return table.Within(p, dir)
	}
	p, dir = strings.TrimRight(p, "/"), strings.TrimRight(dir, "/")
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// matches reports whether the glob pattern in matches out.
func matches(in, out string) bool {
	if isObject(in) != isObject(out) {
		return false
	}
	if isObject(in) {
		ok, _ := path.Match(in, out)
		return ok
	}
	return table.InsideParts(in, out)
}

// isRelease reports whether names are what a release on Beam writes into its folder:
// its parts (release.Engine.PartName, one format, numbered from 0 with no gap) and, in a
// store, its marker.
func isRelease(names []string) bool {
	var parts []string
	for _, n := range names {
		if n != successMarker {
			parts = append(parts, n)
		}
	}
	slices.Sort(parts)
	var eng release.Engine
	for i, n := range parts {
		f := table.Format(schema.IO{}, n)
		if f == "" || n != eng.PartName(i, len(parts), f) {
			return false
		}
	}
	return true
}

// oldRelease is the files of the release at out, if there is one (nil when out does
// not exist). A folder that holds anything else is not a release: --force never
// replaces it, as the CLI never overwrites a folder.
func oldRelease(ctx context.Context, out string) ([]string, error) {
	var names []string
	if isObject(out) {
		objs, err := listObjects(ctx, out)
		if err != nil {
			return nil, fault.BadInput("output: %s: %w", out, err)
		}
		if len(objs) == 0 {
			if exists, _ := objectExists(ctx, out); exists {
				return nil, fault.BadInput("output: %s is an object, not a release folder", out)
			}
			return nil, nil
		}
		for _, o := range objs {
			names = append(names, strings.TrimPrefix(o, out+"/"))
		}
	} else {
		st, err := os.Stat(out)
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, fault.BadInput("output: %w", err)
		}
		if !st.IsDir() {
			return nil, fault.BadInput("output: %s exists and is not a folder", out)
		}
		entries, err := os.ReadDir(out)
		if err != nil {
			return nil, fault.BadInput("output: %w", err)
		}
		for _, e := range entries {
			names = append(names, e.Name())
		}
	}
	if !isRelease(names) {
		return nil, fault.BadInput("output: %s is not a release folder (it holds more than release parts): it is never replaced", out)
	}
	if names == nil {
		names = []string{} // an empty folder: replaced, with nothing to remove
	}
	return names, nil
}

// writeRelease writes every part's release into dest's parts folder on the workers.
func writeRelease(ctx context.Context, cfg *schema.Config, searched *Searched, parts []string, dest *folder, format schema.Format, created time.Time, run Execute) error {
	classes, population, err := nodeTables(ctx, searched, dest.work)
	if err != nil {
		return err
	}
	p, s := beam.NewPipelineWithRoot()
	// The release's metadata, made here once: every part carries the same, as every
	// part of the CLI's release in parts does.
	meta := release.Engine{Config: cfg}.ReleaseMetadata(searched.Classes.Columns(), searched.Classes.Records(), searched.Result, created)
	WriteParts(s, searched.Job, searched.Result.Levels, classes, population, parts, dest.parts, format, meta)
	return runMarked(ctx, run, p, searched.Job)
}

// check is the CLI's independent check of the parts written into dest
// (release.Check) against the input in (a local path), and that it measured what the
// search's recoding rec at the node says the release holds: its records, classes,
// smallest class, suppressed records and discernibility. A release that fails either
// is an internal error, but for a column released as it is that gives a sensitive
// value away (release.ErrReleasedColumn: the search does not look at it, the check
// decides): nothing is published. Parts in a store are checked from local
// copies. With a privacy unit, the check counts the persons of every class from the
// input's unit column, and its smallest class in persons must be the search's (res).
func check(ctx context.Context, cfg *schema.Config, in string, dest *folder, rec *generalize.Recoding, res *generalize.Result) (*release.Measured, error) {
	parts, err := dest.localParts(ctx)
	if err != nil {
		return nil, err
	}
	m, err := release.Check(ctx, cfg, job.Options{Input: in, Output: parts})
	if errors.Is(err, fault.ErrUnattainable) && !errors.Is(err, release.ErrReleasedColumn) {
		return nil, fault.Internalf("the written parts failed the check, nothing published: %s", err.Error()) // internal, not the models' failing
	}
	if err != nil {
		return nil, err
	}
	minClass, disc := 0, float64(rec.Suppressed)*float64(rec.Records)
	for _, n := range rec.Sizes {
		if minClass == 0 || n < minClass {
			minClass = n
		}
		disc += float64(n) * float64(n)
	}
	if m.Rows != rec.Records-rec.Suppressed || m.Suppressed != rec.Suppressed || m.Classes != len(rec.Sizes) || m.MinClass != minClass || m.Discernibility != disc || !m.Utility {
		return nil, fault.Internalf("the check counted %d records, %d suppressed, %d classes, smallest %d, discernibility %g; the search %d, %d, %d, %d, %g; nothing published",
			m.Rows, m.Suppressed, m.Classes, m.MinClass, m.Discernibility, rec.Records-rec.Suppressed, rec.Suppressed, len(rec.Sizes), minClass, disc)
	}
	if p := m.Persons; cfg.Privacy.Unit != nil && (p == nil || p.MinClass != res.MinPersons) {
		return nil, fault.Internalf("the check counted the smallest class in persons as %v, the search %d; nothing published", p, res.MinPersons)
	}
	return m, nil
}

// newReport is the release's report (release.Engine.NewReport): the search's node and
// result, the input's class sizes, and what the check measured of the written parts,
// the utility metrics among it.
func newReport(cfg *schema.Config, r *Released, src *source, sizes risk.Distribution, format schema.Format, created, start time.Time) (*report.Report, error) {
	in, out := src.in, r.Out
	inFmt, err := table.InputFormat(src.localIn, cfg.Input)
	if err != nil {
		return nil, src.rename(err)
	}
	hier, err := r.Job.hierFiles(cfg) // the bytes the workers read
	if err != nil {
		return nil, err
	}
	eng := release.Engine{Config: cfg}
	cols, levels, m := r.Classes.Columns(), r.Result.Levels, r.Measured
	cavg := 0.0 // as the CLI's: over privacy.k, whatever k-map derives
	if m.Classes > 0 {
		cavg = m.AvgClass / float64(cfg.Privacy.K)
	}
	f := release.Facts{
		Tool: "sanitize-beam", Created: created, HierarchyDigests: hier.Digests(),
		Input:   report.FileSummary{Path: in, Format: inFmt.String(), Rows: r.Classes.Records()},
		Output:  report.FileSummary{Path: out, Format: format.String(), Rows: m.Rows},
		Columns: cols, Result: r.Result, Measured: m, InputSizes: sizes, PopulationMeasured: m.Population,
		Utility:     generalize.Metrics{Loss: m.Loss, NCP: m.NCP, Discernibility: m.Discernibility, CAvg: cavg, NonUniformEntropy: m.NonUniformEntropy},
		Generalized: eng.Generalized(cols, levels, eng.ReleasedCodes(cols, levels, r.Recoding.Covers)),
		Stages:      report.Stages{Encode: ms(r.Count), Search: ms(r.Search), Write: ms(r.Write), Verify: ms(r.Check), Total: job.Millis(start, time.Now())},
	}
	if r.Population != nil {
		f.Population = r.Population.Records()
	}
	return eng.NewReport(f)
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// folder is where a release is written before it is published: the run's temporary
// folders (runTemp, never beside the output), holding the workers' shared files
// (work), the errors they report (errors) and the release's parts (parts), which are
// moved into the output when checked (copied, in a store).
type folder struct {
	out, work, errors, parts string
	rt                       *runTemp
	old                      []string // the files of the release the run replaces (nil: none)
	local                    string   // a local folder for copies of parts in a store ("": none)
	checked                  []string // the parts the check read, by name
}

// newFolder makes the run's temporary folders in temp (Job.Temp) for a release at
// out, whose release old (nil: none) the run replaces. A local out's folder must take
// the temporary folder the release is published through (rename): it is tried now,
// and what a run that died while publishing left there is removed.
func newFolder(ctx context.Context, temp, out string, old []string) (*folder, error) {
	if !isObject(out) {
		pub, err := publish.CreateFolder(out)
		if err != nil {
			return nil, fmt.Errorf("output: %w", err)
		}
		pub.Discard()
		if err := publish.Sweep(out); err != nil {
			return nil, fmt.Errorf("output: %w", err)
		}
	}
	rt, err := newRunTemp(ctx, temp)
	if err != nil {
		return nil, err
	}
	f := &folder{out: out, rt: rt, old: old}
	for _, d := range []struct {
		path *string
		name string
	}{{&f.work, "work"}, {&f.errors, "errors"}, {&f.parts, "release"}} {
		if *d.path, err = rt.folder(d.name); err != nil {
			rt.discard(ctx)
			return nil, err
		}
	}
	return f, nil
}

// localParts is the written parts as a local folder: the parts folder, or copies of
// the parts in a store. It notes the parts' names: what is published.
func (f *folder) localParts(ctx context.Context) (string, error) {
	if !isObject(f.parts) {
		entries, err := os.ReadDir(f.parts)
		if err != nil {
			return "", err
		}
		for _, e := range entries {
			f.checked = append(f.checked, e.Name())
		}
		return f.parts, nil
	}
	objs, err := listObjects(ctx, f.parts)
	if err != nil {
		return "", err
	}
	if f.local, err = f.rt.private("checked"); err != nil {
		return "", err
	}
	for _, o := range objs {
		name := baseName(o)
		if err := copyFile(ctx, o, filepath.Join(f.local, name)); err != nil {
			return "", fmt.Errorf("%s: %w", o, err)
		}
		f.checked = append(f.checked, name)
	}
	return f.local, nil
}

// successMarker is the object written last into a release in a store: the release is
// whole once it is there.
const successMarker = "_SUCCESS"

// publish puts the checked parts at the output, in place of the release there (old),
// and the report rep at each of paths (none: no report), with the parts' digests,
// beside it, each written first to a temporary file of its own in the format its name
// says. Reports it replaces (force) are removed before the release is put in place, as
// the CLI's release does: a kill between the steps leaves a release with no report,
// never a release beside a report of another.
func (f *folder) publish(ctx context.Context, paths []string, rep *report.Report, force bool) error {
	var reports *release.Reports
	if len(paths) > 0 {
		var err error
		if rep.Output.PartDigests, err = f.partDigests(); err != nil {
			return err
		}
		if reports, err = (release.Engine{}).PrepareReports(paths, rep); err != nil {
			return err
		}
		defer reports.Discard() // nothing, once published
		if force {
			if err := reports.RemoveReplaced(); err != nil {
				return fmt.Errorf("%w (nothing published)", err)
			}
		}
	}
	move := f.rename
	if isObject(f.out) {
		move = f.copy
	}
	if err := move(ctx); err != nil {
		if reports.Len() > 0 && force {
			return fmt.Errorf("%w (the reports it would have replaced are removed: %s)", err, reports.Paths())
		}
		return err
	}
	if reports.Len() > 0 {
		if err := reports.Publish(force); err != nil {
			return fmt.Errorf("%w (the release %s was published)", err, f.out)
		}
	}
	return nil
}

// rename puts a local release in place through a temporary folder beside the output,
// on its file system (publish.CreateFolder: held while the run lives, removed by the
// next run if this one dies): the checked parts are moved into it (copied from
// another file system), the old release is moved aside into it (removed with it) and
// the new one renamed to the output, so that a failure leaves the old one where it
// was.
func (f *folder) rename(ctx context.Context) error {
	pub, err := publish.CreateFolder(f.out)
	if err != nil {
		return fmt.Errorf("output: %w (nothing published)", err)
	}
	defer pub.Discard()
	parts := filepath.Join(pub.Path, "release")
	if err := f.moveParts(ctx, parts); err != nil {
		return fmt.Errorf("output: %w (nothing published)", err)
	}
	if f.old != nil {
		aside := filepath.Join(pub.Path, "old")
		if err := os.Rename(f.out, aside); err != nil {
			return fmt.Errorf("output: %w (nothing published)", err)
		}
		if err := os.Rename(parts, f.out); err != nil {
			return errors.Join(fmt.Errorf("output: %w (nothing published)", err), os.Rename(aside, f.out))
		}
		return nil
	}
	return os.Rename(parts, f.out)
}

// moveParts moves the checked parts into the new folder to: the folder the check read
// (the parts folder, or the local copies of parts in a store: a --temp_location in a
// store with a local output) renamed, or, from another file system, each part copied
// and synced.
func (f *folder) moveParts(ctx context.Context, to string) error {
	from := f.parts
	if f.local != "" {
		from = f.local
	}
	if os.Rename(from, to) == nil {
		return nil
	}
	if err := os.Mkdir(to, 0o700); err != nil {
		return err
	}
	for _, name := range f.checked {
		p := filepath.Join(to, name)
		if err := copyFile(ctx, filepath.Join(from, name), p); err != nil {
			return err
		}
		part, err := os.Open(p)
		if err != nil {
			return err
		}
		err = part.Sync()
		part.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// copy puts a release in a store in place: the old release's marker is removed first
// (it is no longer whole), the checked parts copied over, the new marker written, and
// only then the old parts the new release does not have removed. A copy that fails
// leaves no marker: a reader waits for one.
func (f *folder) copy(ctx context.Context) error {
	if slices.Contains(f.old, successMarker) {
		if err := removeObject(ctx, joinPath(f.out, successMarker)); err != nil {
			return fmt.Errorf("%s: the old release's marker: %w (nothing published)", f.out, err)
		}
	}
	for _, name := range f.checked {
		if err := copyFile(ctx, joinPath(f.parts, name), joinPath(f.out, name)); err != nil {
			return fmt.Errorf("%s: %w (no marker written: the release is not whole)", f.out, err)
		}
	}
	marker, _ := json.Marshal(map[string]any{"parts": f.checked})
	if err := writeFile(ctx, joinPath(f.out, successMarker), marker); err != nil {
		return fmt.Errorf("%s: %w (no marker written: the release is not whole)", f.out, err)
	}
	var errs []error
	for _, name := range f.old {
		if name != successMarker && !slices.Contains(f.checked, name) {
			errs = append(errs, removeObject(ctx, joinPath(f.out, name)))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s: the new release is whole, but parts of the old one are left: %w", f.out, err)
	}
	return nil
}

// discard removes the run's temporary folders and whatever they still hold, and says
// on log what it cannot remove.
func (f *folder) discard(ctx context.Context, log *slog.Logger) {
	if err := f.rt.discard(ctx); err != nil {
		log.Warn("a temporary folder is left", "error", err.Error())
	}
}

// outputFormat is the release's format: output.format, else the input's, as the CLI's
// release into a folder of parts has it. A kept column whose values have no text form
// (decimals, binary), which the CLI's release passes through as arrays, is refused
// before anything runs: a release on Beam writes every value from its text. first is
// the input's first part, whose columns every part shares.
func outputFormat(cfg *schema.Config, in, first string) (schema.Format, error) {
	inFmt, err := table.InputFormat(in, cfg.Input)
	if err != nil {
		return "", err
	}
	src, p, err := job.OpenInput(cfg, first, inFmt)
	if err != nil {
		return "", err
	}
	src.Close()
	if len(p.PassOnly) > 0 {
		pos := p.PassOnly[0]
		return "", fault.BadInput("%s: column %q: values of type %s have no text form, and sanitize-beam writes a release from its values' text: drop the column (role identifier), or release it with sanitize release, which passes it through", first, p.Header[pos], p.ArrowTypes[pos])
	}
	if f := cfg.Output.Format; f != "" {
		return f, nil
	}
	return inFmt, nil
}
