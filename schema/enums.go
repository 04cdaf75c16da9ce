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
)

// Metrics are the values of search.metric.
var Metrics = []Metric{MetricLoss, MetricDiscernibility, MetricDiscernibilityStar, MetricHeight, MetricPrecision,
	MetricAECS, MetricEntropy, MetricEntropyMonotone, MetricEntropyLoss, MetricNCP}

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

// String is the aggregate's configuration spelling.
func (a LossAggregate) String() string { return string(a) }
