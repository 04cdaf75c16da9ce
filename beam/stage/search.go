package stage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"sanitizer/generalize"
	"sanitizer/release"
)

func init() {
	register.DoFn2x1[context.Context, []byte, error](&writeFn{})
}

// writeFn writes the one element it gets to Path.
type writeFn struct {
	Path string
}

func (f *writeFn) ProcessElement(_ context.Context, data []byte) error {
	return os.WriteFile(f.Path, data, 0o600)
}

// Execute runs a pipeline on a runner (the embedded Prism runner in tests).
type Execute func(ctx context.Context, p *beam.Pipeline) error

// Searched is what the search on the merged class table found.
type Searched struct {
	Job     Job                    // the job, with the values its built hierarchies need
	Classes *generalize.ClassTable // the input's class table at its original values
	Result  *generalize.Result
	// Count and Search are the wall time of the pipeline that counted the classes and
	// of the search.
	Count, Search time.Duration
}

// Search counts the classes of the input's parts on the runner, merges them into one
// table on one worker, and searches it here, with the options the CLI's release
// takes (release.ModelOptions): the same node as the CLI's for the same input and
// configuration. tmp is a folder the workers and this process share, for the merged
// table.
func Search(ctx context.Context, job Job, in, tmp string, run Execute) (*Searched, error) {
	parts, err := Parts(in)
	if err != nil {
		return nil, err
	}
	if job, err = Values(ctx, job, parts, tmp, run); err != nil {
		return nil, err
	}
	cfg, like, sens, err := job.table()
	if err != nil {
		return nil, err
	}
	out := filepath.Join(tmp, "classes.bin")
	p, s := beam.NewPipelineWithRoot()
	ct := ClassTable(s, job, beam.CreateList(s, parts))
	beam.ParDo0(s, &writeFn{Path: out}, ct)
	start := time.Now()
	if err := runMarked(ctx, run, p); err != nil {
		return nil, err
	}
	counted := time.Now()
	data, err := os.ReadFile(out)
	if err != nil {
		return nil, fmt.Errorf("internal error: the merged class table: %w", err)
	}
	classes, err := generalize.UnmarshalClasses(data, like)
	if err != nil {
		return nil, fmt.Errorf("internal error: the merged class table: %w", err)
	}
	quasi := make([]string, len(like.Columns))
	for i, c := range like.Columns {
		quasi[i] = c.Name
	}
	opt, err := release.ModelOptions(cfg, quasi, classes.Records())
	if err != nil {
		return nil, err
	}
	res, err := generalize.SearchClasses(ctx, classes, sens.withModels(opt))
	if err != nil {
		return nil, err
	}
	return &Searched{Job: job, Classes: classes, Result: res, Count: counted.Sub(start), Search: time.Since(counted)}, nil
}
