// Package stage holds the stages of a release on Apache Beam, each a function of the
// configuration and the input's parts: the values the hierarchy builders and the
// sensitive columns' numbering need (Values), with a privacy unit the persons numbered
// once for every part (Persons), the class table of the most specific
// node the search may choose (search.min-levels: generalize.Cut) counted part by part
// on the workers and merged into one (ClassTable), the search on it (Search), and
// every part recoded and written, then checked (Release).
//
// It imports the main module's stages (release, dprun, generalize, job, table, report)
// and runs them on the workers and the driver; the main module never imports it. The
// search, the recoding and the check are the CLI's, so that both publish the same
// release.
package stage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"sanitizer/fault"
	"sanitizer/generalize"
	"sanitizer/internal/readfile"
	"sanitizer/job"
	"sanitizer/release"
	"sanitizer/schema"
	"sanitizer/table"
)

func init() {
	register.DoFn4x1[context.Context, string, func([]byte), func([]byte), error](&countPartFn{})
	register.DoFn4x1[context.Context, []byte, func(*[]byte) bool, func([]byte), error](&mergeFn{})
	register.DoFn3x1[[]byte, func(*[]byte) bool, func([]byte), error](&mergeLeavesFn{})
	register.Emitter1[[]byte]()
	register.Function1x2(noKey)
	register.Iter1[[]byte]()
}

// Job is what every worker needs to read the input as the configuration says: the
// configuration's text, its file name and folder (relative hierarchy paths are read
// from there).
type Job struct {
	Config []byte
	Name   string
	Dir    string
	// Values holds, per quasi-identifier whose hierarchy is built (intervals, a mask,
	// dates) and per protected sensitive column, every value the input's parts hold,
	// sorted (the Values stage).
	Values map[string][]string
	// MaxClassTable bounds the memory of the merged class table, which the search
	// holds on one machine (generalize.ClassTable.Bytes; 0: no bound): a table its
	// estimate proves past it is refused before the count (Estimate), one the merge
	// finds past it while merging.
	MaxClassTable int64
	// Hierarchies holds the bytes of every hierarchy file the configuration names, by
	// its path there, read once by the driver (NewJob): a worker reads the hierarchies
	// from them, not from paths it may not see (a Dataflow worker), and every worker
	// reads the same bytes. Nil: the files are read where the configuration says.
	Hierarchies map[string][]byte
	// Temp is Beam's --temp_location: where each run makes its temporary folder for
	// its intermediate files, which the driver and the workers share (a store, on
	// Dataflow; a shared mount, on a cluster of local paths); "": the system's
	// temporary folder on this machine, which only workers on this machine see.
	// Never beside the output (temp.go).
	Temp string
	// Errors is a folder the driver and the workers share, where a worker writes the
	// text of an error of a kind the exit status tells apart (Job.workerErr); "":
	// none.
	Errors string
	// Persons is, with a privacy unit (privacy.privacy-unit), the number of persons
	// the input's parts name, and PersonsFile the file of their numbering, which the
	// driver and the workers share (the Persons stage): every part's records are
	// counted with the same person codes. 0 and "": no unit, or not numbered yet.
	Persons     int
	PersonsFile string
	// KeyFile is, with the privacy unit released as a pseudonym, the file of its key,
	// which the workers that write the release read (pseudonym.go): a path, never the
	// key, which the pipeline's description would carry. "": no pseudonym.
	KeyFile string
}

// NewJob reads the configuration at path for the workers: a regular file of at most
// schema.MaxConfigBytes, as the CLI reads it.
func NewJob(path string) (Job, error) {
	data, err := readfile.Read(path, schema.MaxConfigBytes)
	if err != nil {
		return Job{}, fault.BadInput("reading configuration: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Job{}, err
	}
	j := Job{Config: data, Name: path, Dir: filepath.Dir(abs)}
	cfg, err := schema.Parse(data, path, j.Dir)
	if err != nil {
		return Job{}, err
	}
	hier, err := job.ReadHierFiles(cfg)
	if err != nil {
		return Job{}, err
	}
	j.Hierarchies = hier.Bytes()
	return j, nil
}

// hierFiles is the job's hierarchy files (Job.Hierarchies), or those cfg names read
// now when the job holds none.
func (j Job) hierFiles(cfg *schema.Config) (*job.HierFiles, error) {
	if j.Hierarchies == nil {
		return job.ReadHierFiles(cfg)
	}
	return job.HierFilesOf(j.Hierarchies), nil
}

// table is the configuration with the table its parts are read into: the
// quasi-identifiers with their hierarchies, the protected sensitive columns numbered
// over the job's values (release.Engine.SensitiveModels), options holding their models, and
// the cut at search.min-levels that the parts' classes are counted at.
func (j Job) table() (*schema.Config, *generalize.Table, *input, error) {
	cfg, err := schema.Parse(j.Config, j.Name, j.Dir)
	if err != nil {
		return nil, nil, nil, err
	}
	hier, err := j.hierFiles(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	t := &generalize.Table{}
	if cfg.Privacy.Unit != nil { // the persons the job numbered: a class table's person codes
		t.Unit = &generalize.Unit{Persons: j.Persons}
	}
	for _, c := range cfg.Quasi() {
		if c.Hierarchy != nil && c.Hierarchy.File == "" {
			values, ok := j.Values[c.Name]
			if !ok {
				return nil, nil, nil, fault.Internalf("column %q's values were not gathered", c.Name)
			}
			h, err := release.Engine{}.BuildHierarchy(c, values)
			var ve *generalize.ValueError
			if errors.As(err, &ve) {
				return nil, nil, nil, fault.BadInput("%s: column %q: %s (hierarchy columns.%s.hierarchy)", j.Name, c.Name, ve.Msg, c.Name)
			}
			if err != nil {
				return nil, nil, nil, err
			}
			t.Columns = append(t.Columns, generalize.Column{Name: c.Name, Hierarchy: h})
			continue
		}
		if c.Hierarchy == nil {
			return nil, nil, nil, fault.BadInput("%s: columns.%s.hierarchy: a quasi-identifier needs a hierarchy", j.Name, c.Name)
		}
		h, err := hier.Hierarchy(c.Hierarchy.File)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("columns.%s.hierarchy.file: %w", c.Name, err)
		}
		t.Columns = append(t.Columns, generalize.Column{Name: c.Name, Hierarchy: h})
	}
	in := &input{hier: hier}
	sens, err := release.Engine{Config: cfg}.SensitiveModels(hier, j.Values, &in.models)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, s := range sens {
		t.Sensitive = append(t.Sensitive, s.Meta)
		in.index = append(in.index, s.Index)
	}
	lo, _, err := release.Engine{Config: cfg}.LevelBounds(t.Columns)
	if err != nil {
		return nil, nil, nil, err
	}
	if lo == nil {
		lo = make([]int, len(t.Columns)) // the leaves
	}
	if in.cut, err = generalize.NewCut(t.Columns, lo); err != nil {
		return nil, nil, nil, err
	}
	return cfg, t, in, nil
}

// input is how a part's records are read into a class table: its sensitive values'
// numbering, the models on them, the cut its classes are counted at and, with a
// privacy unit, the persons' numbering.
type input struct {
	hier  *job.HierFiles     // the hierarchy files' bytes, which a part's plan reads
	index []map[string]int32 // per sensitive column of the table: value → number
	// persons is every person id's code (Job.personCodes), when the records are
	// counted in persons (nil: they are not, or not read yet: encodePart reads it).
	persons map[string]int32
	models  generalize.Options // the l-diversity, t-closeness and β-likeness requirements
	// cut is the quasi-identifiers at their minimum levels (search.min-levels; the
	// leaves where none is set): the search never chooses a node below them, so the
	// class table holds one class per combination of their values there, no more.
	cut *generalize.Cut
}

// withModels returns opt with the sensitive columns' requirements.
func (in *input) withModels(opt generalize.Options) generalize.Options {
	opt.Diversity, opt.Closeness, opt.Likeness = in.models.Diversity, in.models.Closeness, in.models.Likeness
	return opt
}

// countPartFn counts the classes of one part at the job's cut and emits its cut class
// table and, for the records to release, its records per leaf (generalize.LeafCounts:
// what the entropy and ncp metrics read beside a cut table, and a check of its counts).
// Each element (a part) parses the configuration and loads the hierarchies again: a
// part is large, that is little.
type countPartFn struct {
	Job Job
	// Population counts every record's quasi-identifiers (the research subset's
	// population), not the records to release.
	Population bool
}

// ProcessElement is process, its error's kind marked for the driver (Job.workerErr).
func (f *countPartFn) ProcessElement(ctx context.Context, part string, emitClasses, emitLeaves func([]byte)) error {
	return f.Job.workerErr(ctx, f.process(ctx, part, emitClasses, emitLeaves))
}

func (f *countPartFn) process(ctx context.Context, part string, emitClasses, emitLeaves func([]byte)) error {
	cfg, like, in, err := f.Job.table()
	if err != nil {
		return err
	}
	if like.Unit != nil && !f.Population {
		if in.persons, err = f.Job.personCodes(ctx); err != nil {
			return err
		}
	}
	t, leaves, err := encodePart(ctx, cfg, like, in, part, f.Population)
	if err != nil {
		return err
	}
	ct, err := generalize.CountClasses(t)
	if err != nil {
		return err
	}
	data, err := in.cut.MarshalClasses(ct)
	if err != nil {
		return err
	}
	emitClasses(data)
	if !f.Population {
		if data, err = leaves.MarshalBinary(); err != nil {
			return err
		}
		emitLeaves(data)
	}
	return nil
}

// encodePart reads a part's quasi-identifiers as the representatives at in's cut of
// their leaf codes in like's hierarchies (generalize.Cut.Leaf), and its protected
// sensitive columns as their values' numbers; leaves are its records per leaf. A
// value a hierarchy does not list is bad input naming the part, the row and the
// column, never the value, as in the CLI.
//
// With a research subset (privacy.subset), only the subset's records are read, or,
// with population, every record's quasi-identifiers alone.
func encodePart(ctx context.Context, cfg *schema.Config, like *generalize.Table, in *input, part string, population bool) (t *generalize.Table, leaves generalize.LeafCounts, err error) {
	if population {
		like = populationLike(like)
	}
	q := len(like.Columns)
	leaves = make(generalize.LeafCounts, q)
	for i, c := range like.Columns {
		leaves[i] = make([]int64, c.Hierarchy.Leaves())
	}
	names := append(names(like), sensitiveNames(like)...)
	unit := like.Unit != nil
	if unit { // its id last but for a subset's flag
		if in.persons == nil {
			return nil, nil, fault.Internalf("the persons' numbering was not read")
		}
		names = append(names, cfg.Privacy.Unit.Column)
	}
	sub := cfg.Privacy.Subset != nil && !population
	if sub {
		names = append(names, cfg.Privacy.Subset.Column)
	}
	codes := make([][]int32, len(names)) // per column: every record's representative, or value number
	var persons []int32                  // with a unit, every record's person
	err = eachRecord(ctx, cfg, in.hier, part, func(p *job.Plan) ([]int, error) { return positions(p, part, names) },
		func(_ *job.Plan, at func() string, fields []string) error {
			if sub {
				if in, err := inSubset(cfg, fields[len(fields)-1], at); !in || err != nil {
					return err
				}
				fields = fields[:len(fields)-1]
			}
			if unit {
				p, err := personOf(cfg, in.persons, fields[len(fields)-1], at)
				if err != nil {
					return err
				}
				persons = append(persons, p)
				fields = fields[:len(fields)-1]
			}
			for i, v := range fields {
				if i >= q { // a protected sensitive column: its value's number
					x, ok := in.index[i-q][v]
					if !ok {
						return fault.Internalf("%s: column %q: a value the gathering did not see", at(), like.Sensitive[i-q].Name)
					}
					codes[i] = append(codes[i], x)
					continue
				}
				leaf, err := leafOf(like.Columns[i], v, at)
				if err != nil {
					return err
				}
				leaves[i][leaf]++
				codes[i] = append(codes[i], in.cut.Leaf(i, leaf))
			}
			return nil
		})
	if err != nil {
		return nil, nil, err
	}
	t = &generalize.Table{Rows: len(codes[0])}
	for i, c := range like.Columns {
		cs := generalize.NewCodes(t.Rows, c.Hierarchy.Leaves())
		for r, leaf := range codes[i] {
			cs.Set(r, leaf)
		}
		c.Codes = cs
		t.Columns = append(t.Columns, c)
	}
	for k, s := range like.Sensitive {
		cs := generalize.NewCodes(t.Rows, s.Values)
		for r, x := range codes[q+k] {
			cs.Set(r, x)
		}
		s.Codes = cs
		t.Sensitive = append(t.Sensitive, s)
	}
	if unit {
		cs := generalize.NewCodes(t.Rows, like.Unit.Persons)
		for r, p := range persons {
			cs.Set(r, p)
		}
		t.Unit = &generalize.Unit{Persons: like.Unit.Persons, Codes: cs}
	}
	return t, leaves, nil
}

// personOf is the code of person id in codes (the job's numbering); an empty id is
// bad input naming where it is and the column, never a value, as in the CLI.
func personOf(cfg *schema.Config, codes map[string]int32, id string, at func() string) (int32, error) {
	if id == "" {
		return 0, unitMissing(cfg, at)
	}
	p, ok := codes[id]
	if !ok {
		return 0, fault.Internalf("%s: column %q: a person the numbering did not see", at(), cfg.Privacy.Unit.Column)
	}
	return p, nil
}

// populationLike is like's quasi-identifiers alone: the columns a population's class
// table counts.
func populationLike(like *generalize.Table) *generalize.Table {
	return &generalize.Table{Columns: like.Columns}
}

// sensitiveNames is the sensitive columns' names of t, in its order.
func sensitiveNames(t *generalize.Table) []string {
	out := make([]string, len(t.Sensitive))
	for i, s := range t.Sensitive {
		out[i] = s.Name
	}
	return out
}

// leafOf is value v's leaf in column c's hierarchy; a value the hierarchy does not
// list is bad input naming where it is (the part and the row), the column and the
// hierarchy, never the value, as in the CLI.
func leafOf(c generalize.Column, v string, at func() string) (int32, error) {
	leaf, ok := c.Hierarchy.Leaf(v)
	if !ok {
		return 0, fault.BadInput("%s: column %q: value not listed in hierarchy %s", at(), c.Name, c.Hierarchy.Source())
	}
	return leaf, nil
}

// mergeFn merges every part's class table into the whole input's.
type mergeFn struct {
	Job        Job
	Population bool // the tables are a population's (quasi-identifiers alone)
}

// ProcessElement is process, its error's kind marked for the driver (Job.workerErr).
func (f *mergeFn) ProcessElement(ctx context.Context, key []byte, parts func(*[]byte) bool, emit func([]byte)) error {
	return f.Job.workerErr(ctx, f.process(ctx, key, parts, emit))
}

func (f *mergeFn) process(_ context.Context, _ []byte, parts func(*[]byte) bool, emit func([]byte)) error {
	_, like, in, err := f.Job.table()
	if err != nil {
		return err
	}
	if f.Population {
		like = populationLike(like)
	}
	// One part at a time, so that a table past the bound is refused before it is
	// whole, and before the search's machine has to hold it.
	var merged *generalize.ClassTable
	var data []byte
	for parts(&data) {
		ct, err := in.cut.UnmarshalClasses(data, like)
		if err != nil {
			return fault.Internalf("a part's class table: %w", err)
		}
		if merged == nil {
			merged = ct
		} else if merged, err = generalize.MergeClasses(merged, ct); err != nil {
			return err
		}
		if b := merged.Bytes(); f.Job.MaxClassTable > 0 && b > f.Job.MaxClassTable {
			return fault.BadInput("%s: the input's class table holds %d classes or more (%.1f MiB), past the bound of %.1f MiB (--max-class-table) on what the search holds on one machine: use fewer or coarser quasi-identifiers, raise their minimum levels (search.min-levels), or raise the bound", f.Job.Name, merged.Len(), float64(b)/(1<<20), float64(f.Job.MaxClassTable)/(1<<20))
		}
	}
	out, err := in.cut.MarshalClasses(merged)
	if err != nil {
		return err
	}
	emit(out)
	return nil
}

// mergeLeavesFn adds up every part's records per leaf.
type mergeLeavesFn struct {
	Job Job
}

// ProcessElement is process, its error's kind marked for the driver (Job.workerErr).
func (f *mergeLeavesFn) ProcessElement(_ []byte, parts func(*[]byte) bool, emit func([]byte)) error {
	return f.Job.workerErr(context.Background(), f.process(parts, emit))
}

func (f *mergeLeavesFn) process(parts func(*[]byte) bool, emit func([]byte)) error {
	_, like, _, err := f.Job.table()
	if err != nil {
		return err
	}
	var merged generalize.LeafCounts
	var data []byte
	for parts(&data) {
		lc, err := generalize.UnmarshalLeafCounts(data, like)
		if err != nil {
			return fault.Internalf("a part's leaf counts: %w", err)
		}
		if merged == nil {
			merged = lc
		} else if merged, err = generalize.MergeLeafCounts(merged, lc); err != nil {
			return fault.Internalf("%w", err)
		}
	}
	out, err := merged.MarshalBinary()
	if err != nil {
		return err
	}
	emit(out)
	return nil
}

// noKey keys every element alike, so that one worker merges them.
func noKey(b []byte) ([]byte, []byte) { return nil, b }

// ClassTable adds to the pipeline the class table of the records of the parts at the
// job's cut (search.min-levels), and their records per leaf: one element each, the
// merged table and the merged counts encoded (generalize.Cut.MarshalClasses,
// generalize.LeafCounts.MarshalBinary).
//
// With population, the table of every record's quasi-identifiers alone, and no leaf
// counts (leaves is then not valid): a research subset's population, which δ-presence
// and k-map are measured against.
func ClassTable(s beam.Scope, job Job, parts beam.PCollection, population bool) (classes, leaves beam.PCollection) {
	s = s.Scope("ClassTable")
	tables, leafParts := beam.ParDo2(s, &countPartFn{Job: job, Population: population}, parts)
	classes = beam.ParDo(s, &mergeFn{Job: job, Population: population}, beam.GroupByKey(s, beam.ParDo(s, noKey, tables)))
	if population {
		return classes, beam.PCollection{}
	}
	return classes, beam.ParDo(s, &mergeLeavesFn{Job: job}, beam.GroupByKey(s, beam.ParDo(s, noKey, leafParts)))
}

// Parts lists the parts of an input as the CLI does (table.PartPaths: a folder's table
// files, names starting with "." or "_" left out, or a glob's; else the one file), in
// name order, as absolute paths: a worker's working folder is not the driver's. An
// input in a store (gs://…) is listed there alike (objectParts).
func Parts(ctx context.Context, in string) ([]string, error) {
	if isObject(in) {
		return objectParts(ctx, in)
	}
	in = job.Abs(in)
	if table.IsParts(in) {
		return table.PartPaths(in)
	}
	if _, err := os.Stat(in); err != nil {
		return nil, fault.BadInput("input: %w", err)
	}
	return []string{in}, nil
}

// DifferentiallyPrivate reports whether the job's configuration asks for a release
// under privacy.differential-privacy (ReleaseDP's), false when it does not parse.
func (j Job) DifferentiallyPrivate() bool {
	cfg, err := schema.Parse(j.Config, j.Name, j.Dir)
	return err == nil && cfg.Privacy.DifferentialPrivacy != nil
}
