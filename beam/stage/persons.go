package stage

import (
	"cmp"
	"context"
	"encoding/binary"
	"math"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"sanitizer/fault"
	"sanitizer/job"
	"sanitizer/schema"
)

func init() {
	register.DoFn3x1[context.Context, string, func([]byte), error](&partPersonsFn{})
	register.DoFn4x1[context.Context, []byte, func(*[]byte) bool, func([]byte), error](&numberPersonsFn{})
}

// With a privacy unit (privacy.privacy-unit), every class table counts entries, one per
// class and person, the person by a code (generalize.Table.Unit), and parts' tables
// merge exactly only when every part codes a person alike, whatever parts the person's
// records lie in. The Persons stage numbers the persons once for the whole input, as
// the CLI's encoder does (one dictionary over every part, read in order): every part's
// distinct ids in the order they first appear, the parts in their order, and one worker
// joins them, each id numbered where it first appears. The numbering is written to a
// file in the run's work folder (Job.PersonsFile), which every worker that counts
// classes reads: a person is never counted twice, nor two persons once.

// unitMissing is the error of a record without its person's id (a null, or an empty
// id), naming where it is and the column, never a value, as the CLI's.
func unitMissing(cfg *schema.Config, at func() string) error {
	return cfg.Errorf("privacy.privacy-unit.column", "%s: column %q: no person id: with privacy.privacy-unit every record must name its person", at(), cfg.Privacy.Unit.Column)
}

// isUnit reports whether input column name is the configuration's privacy unit.
func isUnit(cfg *schema.Config, name string) bool {
	return cfg.Privacy.Unit != nil && cfg.Privacy.Unit.Column == name
}

// partPersonsFn emits the distinct person ids of one part, in the order they first
// appear, after the part's place among Parts (appendIDs).
type partPersonsFn struct {
	Job   Job
	Parts []string
}

// ProcessElement is process, its error's kind marked for the driver (Job.workerErr).
func (f *partPersonsFn) ProcessElement(ctx context.Context, part string, emit func([]byte)) error {
	return f.Job.workerErr(ctx, f.process(ctx, part, emit))
}

func (f *partPersonsFn) process(ctx context.Context, part string, emit func([]byte)) error {
	cfg, err := schema.Parse(f.Job.Config, f.Job.Name, f.Job.Dir)
	if err != nil {
		return err
	}
	hier, err := f.Job.hierFiles(cfg)
	if err != nil {
		return err
	}
	index := slices.Index(f.Parts, part)
	if index < 0 {
		return fault.Internalf("%s is not a part of the input", part)
	}
	seen := map[string]bool{}
	var ids []string
	err = eachRecord(ctx, cfg, hier, part, func(p *job.Plan) ([]int, error) { return positions(p, part, []string{cfg.Privacy.Unit.Column}) },
		func(_ *job.Plan, at func() string, fields []string) error {
			id := fields[0]
			if id == "" {
				return unitMissing(cfg, at)
			}
			if !seen[id] {
				id = strings.Clone(id) // not the batch's block
				seen[id] = true
				ids = append(ids, id)
			}
			return nil
		})
	if err != nil {
		return err
	}
	emit(appendIDs(binary.AppendUvarint(nil, uint64(index)), ids))
	return nil
}

// appendIDs appends ids to b: their number, then each one's length and bytes.
func appendIDs(b []byte, ids []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ids)))
	for _, id := range ids {
		b = binary.AppendUvarint(b, uint64(len(id)))
		b = append(b, id...)
	}
	return b
}

// readIDs reads what appendIDs wrote at the start of b, and the bytes after it.
func readIDs(b []byte) ([]string, []byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, nil, fault.Internalf("a list of person ids is cut short")
	}
	b = b[k:]
	ids := make([]string, 0, n)
	for range n {
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) {
			return nil, nil, fault.Internalf("a list of person ids is cut short")
		}
		ids = append(ids, string(b[k:k+int(l)]))
		b = b[k+int(l):]
	}
	return ids, b, nil
}

// numberPersonsFn joins the parts' ids, in the parts' order, into the numbering of the
// whole input (appendIDs: every id once, at its number), and writes it to Path.
type numberPersonsFn struct {
	Job  Job
	Path string
}

// ProcessElement is process, its error's kind marked for the driver (Job.workerErr).
func (f *numberPersonsFn) ProcessElement(ctx context.Context, _ []byte, parts func(*[]byte) bool, emit func([]byte)) error {
	return f.Job.workerErr(ctx, f.process(ctx, parts, emit))
}

func (f *numberPersonsFn) process(ctx context.Context, parts func(*[]byte) bool, emit func([]byte)) error {
	type partIDs struct {
		index uint64
		ids   []string
	}
	var all []partIDs
	var data []byte
	for parts(&data) {
		index, k := binary.Uvarint(data)
		if k <= 0 {
			return fault.Internalf("a part's person ids are cut short")
		}
		ids, rest, err := readIDs(data[k:])
		if err != nil {
			return err
		}
		if len(rest) != 0 {
			return fault.Internalf("%d bytes after a part's person ids", len(rest))
		}
		all = append(all, partIDs{index, ids})
	}
	slices.SortFunc(all, func(a, b partIDs) int { return cmp.Compare(a.index, b.index) })
	seen := map[string]bool{}
	var ids []string
	for _, p := range all {
		for _, id := range p.ids {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	if len(ids) > math.MaxInt32 {
		return fault.BadInput("%s: the input names %d persons: at most %d can be counted", f.Job.Name, len(ids), math.MaxInt32)
	}
	if err := writeFile(ctx, f.Path, appendIDs(nil, ids)); err != nil {
		return err
	}
	emit(binary.AppendUvarint(nil, uint64(len(ids))))
	return nil
}

// Persons numbers the persons of the parts (privacy.privacy-unit; see the comment
// above unitMissing) on the runner and returns job with the numbering's file, in tmp
// (a folder the workers and this process share), and the number of persons
// (Job.PersonsFile, Job.Persons). A job without a unit is returned as it is.
func Persons(ctx context.Context, job Job, parts []string, tmp string, run Execute) (Job, error) {
	cfg, err := schema.Parse(job.Config, job.Name, job.Dir)
	if err != nil {
		return job, err
	}
	if cfg.Privacy.Unit == nil {
		return job, nil
	}
	path, count := joinPath(tmp, "persons.bin"), joinPath(tmp, "persons-count.bin")
	p, s := beam.NewPipelineWithRoot()
	s = s.Scope("Persons")
	lists := beam.ParDo(s, &partPersonsFn{Job: job, Parts: parts}, beam.CreateList(s, parts))
	n := beam.ParDo(s, &numberPersonsFn{Job: job, Path: path}, beam.GroupByKey(s, beam.ParDo(s, noKey, lists)))
	beam.ParDo0(s, &writeFn{Path: count}, n)
	if err := runMarked(ctx, run, p, job); err != nil {
		return job, err
	}
	persons, err := readMerged(ctx, count, "number of persons", func(b []byte) (int, error) {
		n, k := binary.Uvarint(b)
		if k != len(b) || n > math.MaxInt32 {
			return 0, fault.Internalf("not a number of persons")
		}
		return int(n), nil
	})
	if err != nil {
		return job, err
	}
	job.PersonsFile, job.Persons = path, persons
	return job, nil
}

// personCodes is the job's numbering of the persons (Persons): every id's code.
func (j Job) personCodes(ctx context.Context) (map[string]int32, error) {
	data, err := readFile(ctx, j.PersonsFile)
	if err != nil {
		return nil, fault.Internalf("the numbering of the persons: %w", err)
	}
	ids, rest, err := readIDs(data)
	if err != nil {
		return nil, err
	}
	if len(rest) != 0 || len(ids) != j.Persons {
		return nil, fault.Internalf("the numbering of the persons holds %d ids, the job %d", len(ids), j.Persons)
	}
	codes := make(map[string]int32, len(ids))
	for c, id := range ids {
		codes[id] = int32(c)
	}
	return codes, nil
}
