package stage

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"sanitizer/generalize"
	"sanitizer/risk"
)

func init() {
	register.DoFn3x1[context.Context, string, func([]byte, int64), error](&leafClassesFn{})
	register.Emitter2[[]byte, int64]()
	register.Function2x1(addCounts)
	register.Function2x2(sizeOf)
	register.Function2x1(encodeSize)
	register.DoFn3x1[[]byte, func(*[]byte) bool, func([]byte), error](&concatFn{})
}

// inputSizes is the class sizes of the records to release (a research subset's, when
// there is one) at their original quasi-identifier values, the input's risk in a
// release's report: read from the searched class table when it is at the leaves, else
// counted on the workers (InputSizes), the input read once more. tmp is a folder the
// workers and this process share.
func inputSizes(ctx context.Context, searched *Searched, parts []string, tmp string, run Execute) (risk.Distribution, error) {
	if atLeaves(searched.Cut) {
		ct := searched.Classes
		sizes := make([]int64, ct.Len())
		for j := range sizes {
			sizes[j] = int64(ct.Count(j))
		}
		return risk.FromSizes(sizes)
	}
	out := joinPath(tmp, "input-sizes.bin")
	p, s := beam.NewPipelineWithRoot()
	beam.ParDo0(s, &writeFn{Path: out}, InputSizes(s, searched.Job, beam.CreateList(s, parts)))
	if err := runMarked(ctx, run, p); err != nil {
		return risk.Distribution{}, err
	}
	return readMerged(ctx, out, "input's class sizes", decodeSizes)
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
// of each size (pairs of 8-byte sizes and counts). Each part's classes are counted on
// its worker, the same class's counts added up across parts by key (its leaf codes),
// then the classes counted by size: nothing proportional to the records or the
// classes reaches one worker.
func InputSizes(s beam.Scope, job Job, parts beam.PCollection) beam.PCollection {
	s = s.Scope("InputSizes")
	classes := beam.CombinePerKey(s, addCounts, beam.ParDo(s, &leafClassesFn{Job: job}, parts))
	bySize := beam.CombinePerKey(s, addCounts, beam.ParDo(s, sizeOf, classes))
	encoded := beam.ParDo(s, encodeSize, bySize)
	return beam.ParDo(s, &concatFn{}, beam.GroupByKey(s, beam.ParDo(s, noKey, encoded)))
}

// leafClassesFn emits every class of one part's records to release at their original
// quasi-identifier values: its leaf codes, the key, and its records.
type leafClassesFn struct {
	Job Job
}

// ProcessElement is process, its error's kind marked for the driver (workerErr).
func (f *leafClassesFn) ProcessElement(ctx context.Context, part string, emit func([]byte, int64)) error {
	return workerErr(f.process(ctx, part, emit))
}

func (f *leafClassesFn) process(ctx context.Context, part string, emit func([]byte, int64)) error {
	cfg, like, in, err := f.Job.table()
	if err != nil {
		return err
	}
	leaves := *in
	if leaves.cut, err = generalize.NewCut(like.Columns, make([]int, len(like.Columns))); err != nil {
		return fmt.Errorf("internal error: %w", err)
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
	for j := range ct.Len() {
		key := make([]byte, 0, 4*len(t.Columns))
		for i := range t.Columns {
			key = binary.AppendUvarint(key, uint64(ct.Code(i, j)))
		}
		emit(key, int64(ct.Count(j)))
	}
	return nil
}

// addCounts adds two counts.
func addCounts(a, b int64) int64 { return a + b }

// sizeOf keys a class by its size, counting it once.
func sizeOf(_ []byte, records int64) (int64, int64) { return records, 1 }

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

// decodeSizes is the class sizes InputSizes encoded.
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
