package stage

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"sanitizer/fault"
	"sanitizer/job"
	"sanitizer/schema"
)

func init() {
	register.DoFn3x1[context.Context, string, func(string, []byte), error](&partValuesFn{})
	register.DoFn3x1[string, func(*[]byte) bool, func(string, []byte), error](&unionFn{})
	register.DoFn3x1[context.Context, string, []byte, error](&writeValuesFn{})
	register.Emitter2[string, []byte]()
}

// built is the columns whose values every part's workers need: the quasi-identifiers
// whose hierarchy is built (intervals, a mask, dates) from the values the input holds,
// in configuration order, then the sensitive columns the models protect (numbered over
// their values), in order of their first requirement.
func built(cfg *schema.Config) []string {
	var out []string
	for _, c := range cfg.Quasi() {
		if c.Hierarchy != nil && c.Hierarchy.File == "" {
			out = append(out, c.Name)
		}
	}
	add := func(name string) {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	for _, l := range cfg.Privacy.LDiversity {
		add(l.Column)
	}
	for _, t := range cfg.Privacy.TCloseness {
		add(t.Column)
	}
	for _, b := range cfg.Privacy.BetaLikeness {
		add(b.Column)
	}
	return out
}

// partValuesFn emits, per built quasi-identifier, the distinct values of one part (a
// JSON list, sorted).
type partValuesFn struct {
	Job Job
}

// ProcessElement is process, its error's kind marked for the driver (Job.workerErr).
func (f *partValuesFn) ProcessElement(ctx context.Context, part string, emit func(string, []byte)) error {
	return f.Job.workerErr(ctx, f.process(ctx, part, emit))
}

func (f *partValuesFn) process(ctx context.Context, part string, emit func(string, []byte)) error {
	cfg, err := schema.Parse(f.Job.Config, f.Job.Name, f.Job.Dir)
	if err != nil {
		return err
	}
	hier, err := f.Job.hierFiles(cfg)
	if err != nil {
		return err
	}
	names := built(cfg)
	sets := make([]map[string]bool, len(names))
	for i := range sets {
		sets[i] = map[string]bool{}
	}
	err = eachRecord(ctx, cfg, hier, part, func(p *job.Plan) ([]int, error) { return positions(p, part, names) },
		func(_ *job.Plan, _ func() string, fields []string) error {
			for i, v := range fields {
				if !sets[i][v] {
					sets[i][strings.Clone(v)] = true // not the batch's block
				}
			}
			return nil
		})
	if err != nil {
		return err
	}
	for i, name := range names {
		data, err := json.Marshal(sortedKeys(sets[i]))
		if err != nil {
			return err
		}
		emit(name, data)
	}
	return nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for v := range m {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// unionFn merges a column's parts' value lists.
type unionFn struct{}

func (unionFn) ProcessElement(column string, lists func(*[]byte) bool, emit func(string, []byte)) error {
	set := map[string]bool{}
	var data []byte
	for lists(&data) {
		var vs []string
		if err := json.Unmarshal(data, &vs); err != nil {
			return fault.Internalf("a part's values of %q: %w", column, err)
		}
		for _, v := range vs {
			set[v] = true
		}
	}
	out, err := json.Marshal(sortedKeys(set))
	if err != nil {
		return err
	}
	emit(column, out)
	return nil
}

// writeValuesFn writes a column's values to Dir, for the driver.
type writeValuesFn struct {
	Dir string
}

func (f *writeValuesFn) ProcessElement(ctx context.Context, column string, data []byte) error {
	return writeFile(ctx, joinPath(f.Dir, "values-"+column+".json"), data)
}

// Values runs a pipeline that gathers the distinct values of every built
// quasi-identifier from all parts, and returns job with them (Job.Values), sorted: the
// hierarchies every worker then builds alike (release.Engine.BuildHierarchy). A job without
// built hierarchies is returned as it is.
func Values(ctx context.Context, job Job, parts []string, tmp string, run Execute) (Job, error) {
	cfg, err := schema.Parse(job.Config, job.Name, job.Dir)
	if err != nil {
		return job, err
	}
	names := built(cfg)
	if len(names) == 0 {
		return job, nil
	}
	p, s := beam.NewPipelineWithRoot()
	s = s.Scope("Values")
	lists := beam.ParDo(s, &partValuesFn{Job: job}, beam.CreateList(s, parts))
	union := beam.ParDo(s, unionFn{}, beam.GroupByKey(s, lists))
	beam.ParDo0(s, &writeValuesFn{Dir: tmp}, union)
	if err := runMarked(ctx, run, p, job); err != nil {
		return job, err
	}
	job.Values = map[string][]string{}
	for _, name := range names {
		data, err := readFile(ctx, joinPath(tmp, "values-"+name+".json"))
		if err != nil {
			return job, fault.Internalf("the values of %q: %w", name, err)
		}
		var vs []string
		if err := json.Unmarshal(data, &vs); err != nil {
			return job, fault.Internalf("the values of %q: %w", name, err)
		}
		job.Values[name] = vs
	}
	return job, nil
}
