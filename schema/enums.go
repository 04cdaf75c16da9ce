package schema

import "fmt"

// The configuration's enumerated values. Each is a type whose constants are its values,
// spelled in the configuration as their String (the type's own value for a string
// type); the list after each type holds every value in the order error messages and
// docs/configuration.md name them, and keys.go's enumValues is built from the lists.
// The models' own variants are defined by the packages that compute them (diversity's
// Variant and Estimator, closeness's Distance and LikenessVariant, risk's
// UniquenessModel and CellSizeEstimator), and read here as they are.

// Algorithm is search.algorithm: how the release's generalization is found.
type Algorithm string

// The search algorithms.
const (
	Optimal  Algorithm = "optimal"  // full-domain generalization over the lattice (the default)
	Mondrian Algorithm = "mondrian" // multidimensional top-down partitioning
)

// Algorithms are the values of search.algorithm.
var Algorithms = []Algorithm{Optimal, Mondrian}

// Metric is search.metric: the utility measure the search minimizes. Package
// generalize defines what each computes.
type Metric string

// The metrics of search.metric.
const (
	MetricLoss               Metric = "loss" // the default
	MetricDiscernibility     Metric = "discernibility"
	MetricDiscernibilityStar Metric = "discernibility-star"
	MetricHeight             Metric = "height"
	MetricPrecision          Metric = "precision"
	MetricAECS               Metric = "aecs"
	MetricEntropy            Metric = "entropy"
	MetricEntropyMonotone    Metric = "entropy-monotone"
	MetricEntropyLoss        Metric = "entropy-loss"
	MetricNCP                Metric = "ncp"
	MetricPublisherPayout    Metric = "publisher-payout"
)

// Metrics are the values of search.metric.
var Metrics = []Metric{MetricLoss, MetricDiscernibility, MetricDiscernibilityStar, MetricHeight, MetricPrecision,
	MetricAECS, MetricEntropy, MetricEntropyMonotone, MetricEntropyLoss, MetricNCP, MetricPublisherPayout}

// LossAggregate is search.aggregate: how the loss metric combines the
// quasi-identifiers' losses (package generalize defines each).
type LossAggregate string

// The aggregates of the loss metric.
const (
	AggregateArithmetic LossAggregate = "arithmetic" // the default
	AggregateGeometric  LossAggregate = "geometric"
	AggregateSum        LossAggregate = "sum"
	AggregateMax        LossAggregate = "max"
)

// LossAggregates are the values of search.aggregate.
var LossAggregates = []LossAggregate{AggregateArithmetic, AggregateGeometric, AggregateSum, AggregateMax}

// spellings returns the configuration's spelling of each of values.
func spellings[E fmt.Stringer](values []E) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = v.String()
	}
	return out
}

// String is the algorithm's configuration spelling.
func (a Algorithm) String() string { return string(a) }

// String is the metric's configuration spelling.
func (m Metric) String() string { return string(m) }

// TakesGSFactor reports whether the metric weighs generalization against suppression
// by a gs-factor (search.gs-factor, search.local-recoding.gs-factor); "" is loss, the
// default.
func (m Metric) TakesGSFactor() bool {
	switch m {
	case "", MetricLoss, MetricEntropy, MetricEntropyMonotone, MetricEntropyLoss, MetricPublisherPayout:
		return true
	}
	return false
}

// NeedsHalfGSFactor reports whether the metric needs a gs-factor of at least 0.5: below
// it a suppressed record could cost less than a published one, so that suppressing
// more could lower the value, which the search cannot bound.
func (m Metric) NeedsHalfGSFactor() bool { return m == MetricEntropyLoss || m == MetricPublisherPayout }

// String is the aggregate's configuration spelling.
func (a LossAggregate) String() string { return string(a) }

// Format is a table's file format: input.format and output.format (any of Formats),
// dp.outputs[].format (one of DPFormats).
type Format string

// The table formats.
const (
	FormatCSV     Format = "csv"
	FormatParquet Format = "parquet"
	FormatArrow   Format = "arrow"  // Arrow IPC, the file format
	FormatArrows  Format = "arrows" // Arrow IPC, the stream format
)

// Formats are the values of input.format and output.format.
var Formats = []Format{FormatCSV, FormatParquet, FormatArrow, FormatArrows}

// DPFormats are the values of dp.outputs[].format.
var DPFormats = []Format{FormatCSV, FormatParquet}

// String is the format's configuration spelling.
func (f Format) String() string { return string(f) }

// Neighbours is dp.neighbours: which datasets the DP guarantee holds between.
type Neighbours string

// The neighbouring relations.
const (
	AddRemove  Neighbours = "add-remove"  // one unit's records added or removed (the default)
	ReplaceOne Neighbours = "replace-one" // one unit's records replaced by another's
)

// NeighbourRelations are the values of dp.neighbours.
var NeighbourRelations = []Neighbours{AddRemove, ReplaceOne}

// String is the relation's configuration spelling.
func (n Neighbours) String() string { return string(n) }

// Mechanism is dp.outputs[].mechanism: the noise a DP output's counts get (package
// dphist adds it).
type Mechanism string

// The noise mechanisms.
const (
	Laplace  Mechanism = "laplace" // the default
	Gaussian Mechanism = "gaussian"
)

// Mechanisms are the values of dp.outputs[].mechanism.
var Mechanisms = []Mechanism{Laplace, Gaussian}

// String is the mechanism's configuration spelling.
func (m Mechanism) String() string { return string(m) }

// PostProcess is a step of dp.outputs[].post: post-processing of a DP output's noisy
// counts, applied in the order consistent, clamp, round whatever the order given.
type PostProcess string

// The post-processing steps.
const (
	PostClamp      PostProcess = "clamp"      // negative counts become 0
	PostRound      PostProcess = "round"      // counts are rounded to whole numbers
	PostConsistent PostProcess = "consistent" // marginals agree where they overlap
)

// PostProcesses are the values of dp.outputs[].post.
var PostProcesses = []PostProcess{PostClamp, PostRound, PostConsistent}

// String is the step's configuration spelling.
func (p PostProcess) String() string { return string(p) }

// Stat is a statistic of dp.outputs[].aggregate.stats.
type Stat string

// The statistics of an aggregate output.
const (
	StatCount     Stat = "count"
	StatSum       Stat = "sum"
	StatMean      Stat = "mean"
	StatQuantiles Stat = "quantiles"
)

// Stats are the values of dp.outputs[].aggregate.stats.
var Stats = []Stat{StatCount, StatSum, StatMean, StatQuantiles}

// String is the statistic's configuration spelling.
func (s Stat) String() string { return string(s) }

// SynthesisMethod is dp.outputs[].synthetic.method: how synthetic records are drawn
// (package dphist defines each).
type SynthesisMethod string

// The synthesis methods.
const (
	AIM SynthesisMethod = "aim" // the default
	MST SynthesisMethod = "mst"
)

// SynthesisMethods are the values of dp.outputs[].synthetic.method.
var SynthesisMethods = []SynthesisMethod{AIM, MST}

// String is the method's configuration spelling.
func (m SynthesisMethod) String() string { return string(m) }

// Unlisted is unlisted: what a run does with an input column the configuration does
// not list.
type Unlisted string

// The answers to an unlisted column.
const (
	UnlistedError Unlisted = "error" // the run fails, naming the column (the default)
	UnlistedDrop  Unlisted = "drop"  // the column is read past and not released
)

// UnlistedAnswers are the values of unlisted.
var UnlistedAnswers = []Unlisted{UnlistedError, UnlistedDrop}

// String is the answer's configuration spelling.
func (u Unlisted) String() string { return string(u) }

// MaskFrom is columns.<name>.hierarchy.mask.from: the end a masking hierarchy masks
// from (Mask.FromRight holds it).
type MaskFrom string

// The ends a mask starts from.
const (
	MaskFromRight MaskFrom = "right" // the default
	MaskFromLeft  MaskFrom = "left"
)

// MaskEnds are the values of columns.<name>.hierarchy.mask.from.
var MaskEnds = []MaskFrom{MaskFromRight, MaskFromLeft}

// String is the end's configuration spelling.
func (m MaskFrom) String() string { return string(m) }

// DateUnit is a level of a date hierarchy (columns.<name>.hierarchy.date).
type DateUnit string

// The date hierarchy's levels, finest first.
const (
	DateMonth   DateUnit = "month"   // "2023-04"
	DateQuarter DateUnit = "quarter" // "2023-Q2"
	DateYear    DateUnit = "year"    // "2023"
	DateDecade  DateUnit = "decade"  // "[2020,2029]"
)

// DateUnits are the values of columns.<name>.hierarchy.date, finest first.
var DateUnits = []DateUnit{DateMonth, DateQuarter, DateYear, DateDecade}

// String is the level's configuration spelling.
func (d DateUnit) String() string { return string(d) }
