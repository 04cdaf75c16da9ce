package stage

import (
	"context"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"sanitizer/fault"
	"sanitizer/generalize"
	"sanitizer/release"
	"sanitizer/schema"
)

func init() {
	register.DoFn2x1[context.Context, []byte, error](&writeFn{})
}

// writeFn writes the one element it gets to Path.
type writeFn struct {
	Path string
}

func (f *writeFn) ProcessElement(ctx context.Context, data []byte) error {
	return writeFile(ctx, f.Path, data)
}

// Execute runs a pipeline on a runner (the embedded Prism runner in tests).
type Execute func(ctx context.Context, p *beam.Pipeline) error

// Searched is what the search on the merged class table found.
type Searched struct {
	Job Job // the job, with the values its built hierarchies need
	// Classes is the input's class table at the cut (Cut: its quasi-identifiers at their
	// minimum levels, search.min-levels; at its leaves when none is set), Leaves its
	// records per leaf.
	Classes *generalize.ClassTable
	Leaves  generalize.LeafCounts
	Cut     *generalize.Cut
	// Population is a research subset's population's class table at the cut (nil: no
	// subset).
	Population *generalize.ClassTable
	// Options is what the search took (the models, the level bounds, the population):
	// the recoding of every part takes the same.
	Options generalize.Options
	Result  *generalize.Result
	// Estimate bounded the class tables before they were counted.
	Estimate Estimate
	// Count and Search are the wall time of the pipeline that counted the classes and
	// of the search.
	Count, Search time.Duration
}

// Search counts the classes of the input's parts on the runner at the quasi-identifiers'
// minimum levels (search.min-levels: generalize.Cut, so that the table holds one class
// per combination of their values there), merges them into one table on one worker
// (refused up front when its estimate is certain to be past Job.MaxClassTable:
// Estimate), and searches it here, with the options the CLI's release takes
// (release.Engine.ModelOptions): the same node as the CLI's for the same input and
// configuration. temp is where the run's temporary folder is made, which the workers
// and this process share (Job.Temp).
func Search(ctx context.Context, job Job, in, temp string, run Execute) (*Searched, error) {
	rt, err := newRunTemp(ctx, temp)
	if err != nil {
		return nil, err
	}
	defer rt.discard(context.WithoutCancel(ctx))
	src, err := openSource(ctx, in, false, rt)
	if err != nil {
		return nil, err
	}
	defer src.close()
	work, err := rt.folder("work")
	if err != nil {
		return nil, err
	}
	return search(ctx, job, src, work, run)
}

// search is Search of the parts of src.
func search(ctx context.Context, job Job, src *source, tmp string, run Execute) (*Searched, error) {
	parts := src.parts
	var err error
	if job, err = Values(ctx, job, parts, tmp, run); err != nil {
		return nil, err
	}
	if job, err = Persons(ctx, job, parts, tmp, run); err != nil {
		return nil, err
	}
	cfg, like, sens, err := job.table()
	if err != nil {
		return nil, err
	}
	// Before anything is counted: a class table certain to be past the bound is
	// refused, one that may be is warned of (estimate.go).
	est, err := estimate(cfg, job, like, sens, src.local)
	if err != nil {
		return nil, err
	}
	if err := est.check(job); err != nil {
		return nil, err
	}
	subset := cfg.Privacy.Subset != nil
	out, leavesOut, popOut := joinPath(tmp, "classes.bin"), joinPath(tmp, "leaves.bin"), joinPath(tmp, "population.bin")
	p, s := beam.NewPipelineWithRoot()
	partsCol := beam.CreateList(s, parts)
	classesCol, leavesCol := ClassTable(s, job, partsCol, false)
	beam.ParDo0(s, &writeFn{Path: out}, classesCol)
	beam.ParDo0(s, &writeFn{Path: leavesOut}, leavesCol)
	if subset {
		popCol, _ := ClassTable(s, job, partsCol, true)
		beam.ParDo0(s, &writeFn{Path: popOut}, popCol)
	}
	start := time.Now()
	if err := runMarked(ctx, run, p, job); err != nil {
		return nil, err
	}
	counted := time.Now()
	classes, err := readMerged(ctx, out, "class table", func(b []byte) (*generalize.ClassTable, error) { return sens.cut.UnmarshalClasses(b, like) })
	if err != nil {
		return nil, err
	}
	leaves, err := readMerged(ctx, leavesOut, "leaf counts", func(b []byte) (generalize.LeafCounts, error) { return generalize.UnmarshalLeafCounts(b, like) })
	if err != nil {
		return nil, err
	}
	var pop *generalize.ClassTable
	if subset {
		popLike := populationLike(like)
		if pop, err = readMerged(ctx, popOut, "population's class table", func(b []byte) (*generalize.ClassTable, error) { return sens.cut.UnmarshalClasses(b, popLike) }); err != nil {
			return nil, err
		}
	}
	opt, err := options(cfg, like, sens, classes, pop)
	if err != nil {
		return nil, err
	}
	res, err := sens.cut.Search(ctx, classes, leaves, opt)
	if err != nil {
		return nil, err
	}
	return &Searched{Job: job, Classes: classes, Leaves: leaves, Cut: sens.cut, Population: pop, Options: opt, Result: res, Estimate: est, Count: counted.Sub(start), Search: time.Since(counted)}, nil
}

// readMerged reads what the pipeline merged and wrote to path (what names it in
// errors), decoded by decode.
func readMerged[T any](ctx context.Context, path, what string, decode func([]byte) (T, error)) (T, error) {
	var zero T
	data, err := readFile(ctx, path)
	if err != nil {
		return zero, fault.Internalf("the merged %s: %w", what, err)
	}
	v, err := decode(data)
	if err != nil {
		return zero, fault.Internalf("the merged %s: %w", what, err)
	}
	return v, nil
}

// options is the search's options, the CLI's (release.Engine.ModelOptions) with the
// sensitive columns' models and, for a research subset, its population's class table
// at the cut (pop; nil: none) under δ-presence and k-map, and, with the privacy unit
// released as a pseudonym, multirelational k-anonymity (Linkable). The search and the
// recoding of every part take the same.
func options(cfg *schema.Config, like *generalize.Table, sens *input, classes, pop *generalize.ClassTable) (generalize.Options, error) {
	opt, err := release.Engine{Config: cfg}.ModelOptions(like.Columns, classes.Records())
	if err != nil {
		return opt, err
	}
	opt = sens.withModels(opt)
	opt.Linkable = linkable(cfg) // multirelational k-anonymity, as the CLI's search
	if pop != nil {
		pm := release.Engine{Config: cfg}.PopulationModel()
		pm.Classes = pop
		opt.Population = &pm
	}
	return opt, nil
}
