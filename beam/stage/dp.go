package stage

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/google/differential-privacy/privacy-on-beam/v3/pbeam"

	"sanitizer/dphist"
	"sanitizer/dprun"
	"sanitizer/fault"
	"sanitizer/internal/safe"
	"sanitizer/job"
	"sanitizer/report"
	"sanitizer/schema"
	"sanitizer/table"
)

// The dp outputs on Beam: every part is read on the workers and each record mapped,
// as the CLI maps it (dprun.Mapper), to its partitions of every output; Privacy on
// Beam bounds each privacy unit's contributions, counts (or sums, averages, takes
// quantiles) and adds the noise of Google's library, over public partitions made from
// the declared domains alone (every cell, empty ones too, never a cell seen in the
// data); the noisy values are gathered into one file per output and statistic; and
// the driver makes the tables with the CLI's post-processing, records the spend in the
// ledger and only then publishes (dprun.Publish: record, then release).

func init() {
	beam.RegisterType(reflect.TypeOf((*dpElem)(nil)).Elem())
	register.DoFn3x1[context.Context, string, func(string, dpElem), error](&dpReadFn{})
	register.Emitter2[string, dpElem]()
	register.DoFn3x0[string, dpElem, func(string, int64)](&dpKeysFn{})
	register.Emitter2[string, int64]()
	register.DoFn3x0[string, dpElem, func(string, dpElem)](&dpValuesFn{})
	register.Function1x2[dpElem, int64, float64](dpKeyValue)
	register.DoFn2x0[int64, func(int64)](&partitionsFn{})
	register.Emitter1[int64]()
	register.Function2x1[int64, int64, []byte](encodeCount)
	register.Function2x1[int64, float64, []byte](encodeValue)
	register.Function2x1[int64, []float64, []byte](encodeValues)
	register.DoFn3x1[context.Context, []byte, func(*[]byte) bool, error](&gatherFn{})
}

// dpElem is one record's contribution to one partition of one output: the output's
// index, the partition and, for an aggregate, the record's value.
type dpElem struct {
	Out   int32
	Key   int64
	Value float64
}

// dpReadFn reads one part and emits, keyed by the record's privacy unit, its
// contribution to every output. Without a privacy unit every record is its own: its
// part's index and row.
type dpReadFn struct {
	Job   Job
	Parts []string
	// Cells is, per output, the labels of its columns' cells as the first part's
	// column types give them (dprun.Output.Labels): a part whose types give others is
	// bad input.
	Cells [][][]string
}

// ProcessElement is process, its error's kind marked for the driver (Job.workerErr).
func (f *dpReadFn) ProcessElement(ctx context.Context, part string, emit func(string, dpElem)) error {
	return f.Job.workerErr(ctx, f.process(ctx, part, emit))
}

func (f *dpReadFn) process(ctx context.Context, part string, emit func(string, dpElem)) error {
	cfg, err := schema.Parse(f.Job.Config, f.Job.Name, f.Job.Dir)
	if err != nil {
		return err
	}
	index := slices.Index(f.Parts, part)
	if index < 0 {
		return fault.Internalf("%s is not a part of the input", part)
	}
	hier, err := f.Job.hierFiles(cfg)
	if err != nil {
		return err
	}
	local, err := fetch(ctx, part)
	if err != nil {
		return err
	}
	defer local.done()
	return local.rename(f.read(ctx, cfg, hier, local.path, index, emit))
}

// read emits the contributions of the records of the local file part, the input's
// part index.
func (f *dpReadFn) read(ctx context.Context, cfg *schema.Config, hier *job.HierFiles, part string, index int, emit func(string, dpElem)) error {
	format, err := table.InputFormat(part, cfg.Input)
	if err != nil {
		return err
	}
	src, p, err := job.OpenInputWith(cfg, part, format, hier)
	if err != nil {
		return err
	}
	defer src.Close()
	outs, err := dprun.Describe(cfg, p)
	if err != nil {
		return err
	}
	for i, o := range outs {
		if i >= len(f.Cells) || !reflect.DeepEqual(o.Labels, f.Cells[i]) {
			return fault.BadInput("%s: output %q: the part's column types give other cells than %s's", f.Parts[index], o.Spec.Name, f.Parts[0])
		}
	}
	m, err := dprun.NewMapper(cfg, p, outs)
	if err != nil {
		return err
	}
	batches := make(chan *table.Batch, 2)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	streamed := safe.Start(func() error { return src.Stream(ctx, m.Columns(), batches) })
	prefix := strconv.Itoa(index) + ":"
	var mapErr error
	for b := range batches {
		for i := 0; i < b.N && mapErr == nil; i++ {
			id := "" // the record's own, without a privacy unit
			mapErr = m.Map(b, i, func(out int, unit string, key int64, value float64) {
				if unit == "" {
					if id == "" {
						id = prefix + strconv.Itoa(b.First+i)
					}
					unit = id
				}
				emit(unit, dpElem{Out: int32(out), Key: key, Value: value})
			})
		}
		b.Release()
		if mapErr != nil {
			cancel()
		}
	}
	if err := <-streamed; mapErr == nil && err != nil && ctx.Err() == nil {
		return err
	}
	return mapErr
}

// dpKeysFn keeps output Out's contributions as its partitions, for counting.
type dpKeysFn struct{ Out int32 }

func (f *dpKeysFn) ProcessElement(unit string, e dpElem, emit func(string, int64)) {
	if e.Out == f.Out {
		emit(unit, e.Key)
	}
}

// dpValuesFn keeps output Out's contributions, partitions with values.
type dpValuesFn struct{ Out int32 }

func (f *dpValuesFn) ProcessElement(unit string, e dpElem, emit func(string, dpElem)) {
	if e.Out == f.Out {
		emit(unit, e)
	}
}

// dpKeyValue is a contribution as the partition and value Privacy on Beam's per-key
// aggregations take.
func dpKeyValue(e dpElem) (int64, float64) { return e.Key, e.Value }

// partitionsFn emits the partitions 0 … n−1 of an output: its public partitions,
// from its declared domains alone.
type partitionsFn struct{}

func (partitionsFn) ProcessElement(n int64, emit func(int64)) {
	for k := range n {
		emit(k)
	}
}

// A noisy result travels to the driver as the partition (a varint), the number of
// values (a uvarint) and the values (float64, little-endian).
func encodeValues(key int64, vs []float64) []byte {
	b := binary.AppendVarint(nil, key)
	b = binary.AppendUvarint(b, uint64(len(vs)))
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b
}

func encodeCount(key, v int64) []byte         { return encodeValues(key, []float64{float64(v)}) }
func encodeValue(key int64, v float64) []byte { return encodeValues(key, []float64{v}) }

// gatherFn writes every encoded result of one collection into the file Path.
type gatherFn struct{ Path string }

func (f *gatherFn) ProcessElement(ctx context.Context, _ []byte, results func(*[]byte) bool) error {
	var all, r []byte
	for results(&r) {
		all = binary.AppendUvarint(all, uint64(len(r)))
		all = append(all, r...)
	}
	return writeFile(ctx, f.Path, all)
}

// gather adds to the pipeline the writing of col (encoded by encode) into path.
func gather(s beam.Scope, col beam.PCollection, encode any, path string) {
	enc := beam.ParDo(s, encode, col)
	beam.ParDo0(s, &gatherFn{Path: path}, beam.GroupByKey(s, beam.ParDo(s, noKey, enc)))
}

// readGathered reads a gathered file into one value list per partition, refusing
// anything but exactly one result for each of the n partitions.
func readGathered(ctx context.Context, path string, n int64) ([][]float64, error) {
	data, err := readFile(ctx, path)
	if err != nil {
		return nil, fault.Internalf("the noisy results: %w", err)
	}
	out := make([][]float64, n)
	seen := int64(0)
	for len(data) > 0 {
		size, k := binary.Uvarint(data)
		if k <= 0 || uint64(len(data)-k) < size {
			return nil, fault.Internalf("%s: a truncated result", path)
		}
		r := data[k : k+int(size)]
		data = data[k+int(size):]
		key, k := binary.Varint(r)
		if k <= 0 || key < 0 || key >= n || out[key] != nil {
			return nil, fault.Internalf("%s: partition %d is not one of the output's %d or comes twice", path, key, n)
		}
		m, j := binary.Uvarint(r[k:])
		r = r[k+max(j, 0):]
		if j <= 0 || uint64(len(r)) != 8*m {
			return nil, fault.Internalf("%s: a malformed result", path)
		}
		vs := make([]float64, m)
		for i := range vs {
			vs[i] = math.Float64frombits(binary.LittleEndian.Uint64(r[8*i:]))
		}
		out[key] = vs
		seen++
	}
	if seen != n {
		return nil, fault.Internalf("%s: %d of the output's %d partitions came back", path, seen, n)
	}
	return out, nil
}

// DPRun is what a dp run on Beam did.
type DPRun struct {
	Manifest *report.Manifest
	// Noise is the wall time of the pipeline that read, bounded and noised; Publish
	// the driver's tables, ledger record and writing.
	Noise, Publish time.Duration
}

// DP runs the configuration's dp outputs (histograms, marginals and aggregates) on the
// runner and publishes them into opt.Output with the CLI's manifest, the spend
// recorded first in opt.Ledger when set. It refuses, as bad input, what Privacy on
// Beam cannot do as the CLI does: synthetic records and replace-one neighbours. Errors
// as the CLI's dp: nothing is published on any.
func DP(ctx context.Context, j Job, opt job.Options, run Execute) (*DPRun, error) {
	cfg, err := schema.Parse(j.Config, j.Name, j.Dir)
	if err != nil {
		return nil, err
	}
	if err := beamDP(cfg, j.Name); err != nil {
		return nil, err
	}
	in := cfg.Input.Path
	if opt.Input != "" {
		in = opt.Input
	}
	if in == "" {
		return nil, fault.BadInput("input: no input file (--in or input.path)")
	}
	for key, p := range map[string]string{"--out": opt.Output, "--ledger": opt.Ledger} {
		if isObject(p) {
			return nil, fault.BadInput("%s: %s: dp's outputs and ledger are written on this machine, not in a store", key, p)
		}
	}
	rt, err := newRunTemp(ctx, j.Temp)
	if err != nil {
		return nil, err
	}
	defer rt.discard(context.WithoutCancel(ctx)) // a cancelled run's too
	src, err := openSource(ctx, in, true, rt)
	if err != nil {
		return nil, err
	}
	defer src.close()
	local := opt // the CLI's checks read the input's local copies
	local.Input = src.localIn
	prep, err := dprun.Prepare(cfg, local)
	if err != nil {
		return nil, src.rename(err)
	}
	parts := src.parts
	outs, err := describePart(cfg, src.local[0])
	if err != nil {
		return nil, src.rename(err)
	}
	cells := make([][][]string, len(outs)) // every part must give the first part's cells
	for i, o := range outs {
		cells[i] = o.Labels
	}
	work, err := rt.folder("work") // the noisy results, for this process
	if err != nil {
		return nil, err
	}
	if j.Errors, err = rt.folder("errors"); err != nil {
		return nil, err
	}
	p, s := beam.NewPipelineWithRoot()
	elems := beam.ParDo(s, &dpReadFn{Job: j, Parts: parts, Cells: cells}, beam.CreateList(s, parts))
	for i, out := range outs {
		if err := noiseOutput(s.Scope(out.Spec.Name), cfg, i, out, elems, work); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	if err := runMarked(ctx, run, p, j); err != nil {
		return nil, err
	}
	noised := time.Now()
	// The record count is not DP: never logged.
	opt.Logger().Info("stage done", "stage", job.StageNoise, "outputs", len(outs), "parts", len(parts), "ms", job.Millis(start, noised))
	noisy := make([]dprun.Noisy, len(outs))
	for i, out := range outs {
		if noisy[i], err = readNoisy(ctx, out, i, work); err != nil {
			return nil, err
		}
	}
	man, err := dprun.Publish(ctx, withoutSeed(cfg), opt, prep, outs, noisy)
	if err != nil {
		return nil, err
	}
	return &DPRun{Manifest: man, Noise: noised.Sub(start), Publish: time.Since(noised)}, nil
}

// beamDP refuses what the dp outputs on Beam cannot do as the CLI does.
func beamDP(cfg *schema.Config, where string) error {
	if cfg.DP == nil {
		return fault.BadInput("%s: dp: the configuration has no dp section", where)
	}
	if cfg.DP.Neighbours == schema.ReplaceOne {
		return fault.BadInput("%s: dp.neighbours: replace-one does not run on Beam (Privacy on Beam bounds and calibrates for add-remove neighbours): use add-remove, or the CLI", where)
	}
	for i, o := range cfg.DP.Outputs {
		if o.Synthetic != nil {
			return fault.BadInput("%s: dp.outputs[%d].synthetic: synthetic records do not run on Beam: use the CLI's sanitize dp", where, i)
		}
	}
	return nil
}

// describePart describes the outputs from the columns of part, the input's first (on
// this machine): the workers check that every part describes them alike (dpReadFn).
func describePart(cfg *schema.Config, part string) ([]*dprun.Output, error) {
	format, err := table.InputFormat(part, cfg.Input)
	if err != nil {
		return nil, err
	}
	src, p, err := job.OpenInput(cfg, part, format)
	if err != nil {
		return nil, err
	}
	src.Close()
	return dprun.Describe(cfg, p)
}

// withoutSeed is cfg with its privacy unit's seed cleared, for the manifest: Privacy
// on Beam samples the rows it keeps itself, unseeded.
func withoutSeed(cfg *schema.Config) *schema.Config {
	if cfg.DP.PrivacyUnit == nil {
		return cfg
	}
	c, d, u := *cfg, *cfg.DP, *cfg.DP.PrivacyUnit
	u.Seed = 0
	d.PrivacyUnit = &u
	c.DP = &d
	return &c
}

// noiseOutput adds output i to the pipeline: its contributions, bounded, counted (or
// aggregated) and noised by Privacy on Beam over its public partitions, gathered into
// files in work. Its manifest's contributions say how Privacy on Beam bounded them.
func noiseOutput(s beam.Scope, cfg *schema.Config, i int, out *dprun.Output, elems beam.PCollection, work string) error {
	spec, err := pbeam.NewPrivacySpec(pbeam.PrivacySpecParams{AggregationEpsilon: out.Spec.Epsilon, AggregationDelta: out.Spec.Delta})
	if err != nil {
		return cfg.Wrap(fmt.Sprintf("dp.outputs[%d]", i), fault.BadInput("%w", err))
	}
	public := beam.ParDo(s, partitionsFn{}, beam.Create(s, out.Partitions()))
	keys := beam.ParDo(s, &dpKeysFn{Out: int32(i)}, elems)
	var kind pbeam.NoiseKind = pbeam.LaplaceNoise{}
	if out.Spec.Mechanism == schema.Gaussian {
		kind = pbeam.GaussianNoise{}
	}
	if out.Spec.Aggregate == nil {
		m := out.Mechanism
		counts := pbeam.Count(s, pbeam.MakePrivate(s, keys, spec), pbeam.CountParams{NoiseKind: kind,
			AggregationEpsilon: m.Epsilon, AggregationDelta: m.Delta, PublicPartitions: public,
			MaxPartitionsContributed: m.L0, MaxValue: m.LInf, AllowNegativeOutputs: true})
		gather(s, counts, encodeCount, noisyPath(work, i, 0))
		bounded(cfg, out, m.L0, m.LInf)
		return nil
	}
	a := out.Aggregate
	values := pbeam.ParDo(s, dpKeyValue, pbeam.MakePrivate(s, beam.ParDo(s, &dpValuesFn{Out: int32(i)}, elems), spec))
	for j, b := range out.Manifest.Stats {
		var res beam.PCollection
		encode := any(encodeValue)
		switch b.Stat {
		case schema.StatCount:
			res = pbeam.Count(s, pbeam.MakePrivate(s, keys, spec), pbeam.CountParams{NoiseKind: kind,
				AggregationEpsilon: b.LibEpsilon, AggregationDelta: b.LibDelta, PublicPartitions: public,
				MaxPartitionsContributed: b.L0, MaxValue: a.LInf, AllowNegativeOutputs: true})
			encode = encodeCount
		case schema.StatSum:
			res = pbeam.SumPerKey(s, values, pbeam.SumParams{NoiseKind: kind,
				AggregationEpsilon: b.LibEpsilon, AggregationDelta: b.LibDelta, PublicPartitions: public,
				MaxPartitionsContributed: b.L0, MinValue: b.SumLower, MaxValue: b.SumUpper})
		case schema.StatMean:
			res = pbeam.MeanPerKey(s, values, pbeam.MeanParams{NoiseKind: kind,
				AggregationEpsilon: b.LibEpsilon, AggregationDelta: b.LibDelta, PublicPartitions: public,
				MaxPartitionsContributed: b.L0, MaxContributionsPerPartition: b.MaxContribPerPartition,
				MinValue: a.Lower, MaxValue: a.Upper})
		case schema.StatQuantiles:
			res = pbeam.QuantilesPerKey(s, values, pbeam.QuantilesParams{NoiseKind: kind,
				AggregationEpsilon: b.LibEpsilon, AggregationDelta: b.LibDelta, PublicPartitions: public,
				MaxPartitionsContributed: b.L0, MaxContributionsPerPartition: b.MaxContribPerPartition,
				MinValue: a.Lower, MaxValue: a.Upper, Ranks: a.Ranks})
			encode = encodeValues
		default:
			return fault.Internalf("output %s: statistic %q", out.Spec.Name, b.Stat)
		}
		gather(s, res, encode, noisyPath(work, i, j))
	}
	bounded(cfg, out, a.L0, a.LInf)
	return nil
}

// bounded notes in out's manifest how Privacy on Beam bounded a privacy unit's
// contributions: at most cells partitions, and at most rows rows in each.
func bounded(cfg *schema.Config, out *dprun.Output, cells, rows int64) {
	if cfg.DP.PrivacyUnit != nil {
		out.Manifest.Contributions = &report.ManifestContributed{CellsPerUnit: int(cells), RowsPerCell: int(rows)}
	}
}

// noisyPath is the file output i's statistic j is gathered into.
func noisyPath(work string, i, j int) string {
	return joinPath(work, fmt.Sprintf("noisy-%d-%d.bin", i, j))
}

// readNoisy reads output i's gathered results.
func readNoisy(ctx context.Context, out *dprun.Output, i int, work string) (dprun.Noisy, error) {
	n := out.Partitions()
	if out.Spec.Aggregate == nil {
		vs, err := readGathered(ctx, noisyPath(work, i, 0), n)
		if err != nil {
			return dprun.Noisy{}, err
		}
		counts := make([]float64, n)
		for k, v := range vs {
			counts[k] = v[0]
		}
		return dprun.Noisy{Counts: counts}, nil
	}
	groups := make([]dphist.GroupResult, n)
	for j, b := range out.Manifest.Stats {
		vs, err := readGathered(ctx, noisyPath(work, i, j), n)
		if err != nil {
			return dprun.Noisy{}, err
		}
		for k, v := range vs {
			g := &groups[k]
			switch b.Stat {
			case schema.StatCount:
				g.Count = int64(v[0])
			case schema.StatSum:
				g.Sum = v[0]
			case schema.StatMean:
				g.Mean = v[0]
			case schema.StatQuantiles:
				g.Quantiles = v
			default:
				return dprun.Noisy{}, fault.Internalf("output %s: statistic %q", out.Spec.Name, b.Stat)
			}
		}
	}
	return dprun.Noisy{Groups: groups}, nil
}
