package stage

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"sanitizer/fault"
	"sanitizer/generalize"
	"sanitizer/risk"
)

func init() {
	register.DoFn3x1[context.Context, string, func(int, []byte), error](&leafClassesFn{})
	register.Emitter2[int, []byte]()
	register.DoFn3x1[int, func(*[]byte) bool, func([]byte), error](&shardSizesFn{})
	register.DoFn3x1[[]byte, func(*[]byte) bool, func([]byte), error](&concatFn{})
}

// sizeShards is how many shards the classes at the leaves are split into by their
// key's hash: a shard's classes from every part are merged on one worker, which holds
// about 1/sizeShards of the input's classes.
const sizeShards = 128

// inputSizes is the class sizes of the records to release (a research subset's, when
// there is one) at their original quasi-identifier values, the input's risk in a
// release's report: read from the searched class table when it is at the leaves, else
// counted on the workers (InputSizes), the input read once more. tmp is a folder the
// workers and this process share. With a privacy unit the sizes are in persons, as
// the CLI's are: a class's distinct persons.
func inputSizes(ctx context.Context, searched *Searched, parts []string, tmp string, run Execute) (risk.Distribution, error) {
	if atLeaves(searched.Cut) {
		return tableSizes(searched.Classes, len(searched.Cut.Levels()), searched.Job.PersonsFile != "")
	}
	out := joinPath(tmp, "input-sizes.bin")
	p, s := beam.NewPipelineWithRoot()
	beam.ParDo0(s, &writeFn{Path: out}, InputSizes(s, searched.Job, beam.CreateList(s, parts)))
	if err := runMarked(ctx, run, p, searched.Job); err != nil {
		return risk.Distribution{}, err
	}
	return readMerged(ctx, out, "input's class sizes", decodeSizes)
}

// tableSizes is the sizes of the classes of ct, a class table of q quasi-identifiers:
// their records, or, with a unit, their persons (its entries, one per class and
// person, in order of their codes: a class's are consecutive).
func tableSizes(ct *generalize.ClassTable, q int, unit bool) (risk.Distribution, error) {
	var sizes []int64
	for j := range ct.Len() {
		n := int64(ct.Count(j))
		if unit {
			n = 1 // an entry: one person of its class
			if j > 0 && sameClass(ct, q, j-1, j) {
				sizes[len(sizes)-1]++
				continue
			}
		}
		sizes = append(sizes, n)
	}
	return risk.FromSizes(sizes)
}

// sameClass reports whether entries i and j of ct share their q quasi-identifiers.
func sameClass(ct *generalize.ClassTable, q, i, j int) bool {
	for c := range q {
		if ct.Code(c, i) != ct.Code(c, j) {
			return false
		}
	}
	return true
}

// atLeaves reports whether cut leaves every quasi-identifier at its original values.
func atLeaves(cut *generalize.Cut) bool {
	for _, l := range cut.Levels() {
		if l != 0 {
			return false
		}
	}
	return true
}

// InputSizes adds to the pipeline the class sizes of the records to release of the
// parts at their original quasi-identifier values: one element, the number of classes
// of each size (pairs of 8-byte sizes and counts, a size possibly repeated). Each
// part's classes are counted on its worker and split into shards by their key's hash;
// each shard's classes are added up across parts on one worker and counted by size;
// the shards' counts are joined. No worker holds more than a shard of the classes.
func InputSizes(s beam.Scope, job Job, parts beam.PCollection) beam.PCollection {
	s = s.Scope("InputSizes")
	shards := beam.ParDo(s, &leafClassesFn{Job: job}, parts)
	sizes := beam.ParDo(s, &shardSizesFn{Persons: job.PersonsFile != ""}, beam.GroupByKey(s, shards))
	return beam.ParDo(s, &concatFn{}, beam.GroupByKey(s, beam.ParDo(s, noKey, sizes)))
}

// leafClassesFn emits the classes of one part's records to release at their original
// quasi-identifier values, by shard: each shard's classes as pairs of a key (the leaf
// codes) and the records, encoded (appendClass).
type leafClassesFn struct {
	Job Job
}

// ProcessElement is process, its error's kind marked for the driver (Job.workerErr).
func (f *leafClassesFn) ProcessElement(ctx context.Context, part string, emit func(int, []byte)) error {
	return f.Job.workerErr(ctx, f.process(ctx, part, emit))
}

func (f *leafClassesFn) process(ctx context.Context, part string, emit func(int, []byte)) error {
	cfg, like, in, err := f.Job.table()
	if err != nil {
		return err
	}
	leaves := *in
	if leaves.cut, err = generalize.NewCut(like.Columns, make([]int, len(like.Columns))); err != nil {
		return fault.Internalf("%w", err)
	}
	unit := like.Unit != nil
	if unit {
		if leaves.persons, err = f.Job.personCodes(ctx); err != nil {
			return err
		}
	}
	t, _, err := encodePart(ctx, cfg, like, &leaves, part, false)
	if err != nil {
		return err
	}
	t.Sensitive = nil // the classes of the quasi-identifiers alone
	ct, err := generalize.CountClasses(t)
	if err != nil {
		return err
	}
	shards := make([][]byte, sizeShards)
	key := make([]byte, 0, 4*len(t.Columns)+4)
	for j := range ct.Len() {
		key = key[:0]
		for i := range t.Columns {
			key = binary.AppendUvarint(key, uint64(ct.Code(i, j)))
		}
		sh := fnv32a(key) % sizeShards // a class's entries, with a unit, in one shard
		if unit {                      // an entry: the class's key and its person's code
			key = binary.BigEndian.AppendUint32(key, uint32(ct.Code(len(t.Columns), j)))
		}
		shards[sh] = appendClass(shards[sh], key, int64(ct.Count(j)))
	}
	for sh, data := range shards {
		if len(data) > 0 {
			emit(sh, data)
		}
	}
	return nil
}

// fnv32a is the 32-bit FNV-1a hash of b.
func fnv32a(b []byte) uint32 {
	h := uint32(2166136261)
	for _, c := range b {
		h ^= uint32(c)
		h *= 16777619
	}
	return h
}

// appendClass appends a class, its key and records, to b.
func appendClass(b, key []byte, records int64) []byte {
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	return binary.AppendUvarint(b, uint64(records))
}

// shardSizesFn adds up one shard's classes from every part and emits the number of
// classes of each size (encodeSize pairs). With Persons, a class's size is its
// persons: the keys are entries, a class's key and a person's code (4 bytes), and a
// person's entries of one class in several parts are one.
type shardSizesFn struct {
	Persons bool
}

func (f shardSizesFn) ProcessElement(_ int, parts func(*[]byte) bool, emit func([]byte)) error {
	records := map[string]int64{}
	var data []byte
	for parts(&data) {
		for len(data) > 0 {
			n, k := binary.Uvarint(data)
			if k <= 0 || uint64(len(data)-k) < n {
				return fault.Internalf("a part's classes are cut short")
			}
			key := data[k : k+int(n)]
			data = data[k+int(n):]
			c, k := binary.Uvarint(data)
			if k <= 0 {
				return fault.Internalf("a part's classes are cut short")
			}
			data = data[k:]
			records[string(key)] += int64(c)
		}
	}
	if f.Persons {
		persons := map[string]int64{}
		for key := range records {
			if len(key) < 4 {
				return fault.Internalf("an entry's key is cut short")
			}
			persons[key[:len(key)-4]]++
		}
		records = persons
	}
	bySize := map[int64]int64{}
	for _, n := range records {
		bySize[n]++
	}
	var out []byte
	for size, classes := range bySize {
		out = append(out, encodeSize(size, classes)...)
	}
	emit(out)
	return nil
}

// encodeSize encodes a size and its number of classes.
func encodeSize(size, classes int64) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, uint64(size)), uint64(classes))
}

// concatFn joins the encoded sizes into one element.
type concatFn struct{}

func (concatFn) ProcessElement(_ []byte, sizes func(*[]byte) bool, emit func([]byte)) error {
	var out, b []byte
	for sizes(&b) {
		out = append(out, b...)
	}
	emit(out)
	return nil
}

// decodeSizes is the class sizes InputSizes encoded (a size may repeat: its classes
// add up).
func decodeSizes(data []byte) (risk.Distribution, error) {
	if len(data)%16 != 0 {
		return risk.Distribution{}, fmt.Errorf("%d bytes, not pairs of 8-byte counts", len(data))
	}
	counts := make([]risk.SizeCount, 0, len(data)/16)
	for ; len(data) > 0; data = data[16:] {
		counts = append(counts, risk.SizeCount{Size: int64(binary.BigEndian.Uint64(data)), Classes: int64(binary.BigEndian.Uint64(data[8:]))})
	}
	return risk.FromCounts(counts)
}
