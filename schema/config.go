package schema

import (
	"sanitizer/closeness"
	"sanitizer/diversity"
	"sanitizer/risk"
	"sanitizer/safepub"
)

// Role is what a column is to the release.
type Role string

// The four roles of DESIGN.md: every input column has exactly one.
const (
	Identifier  Role = "identifier"  // dropped from the release
	Quasi       Role = "quasi"       // generalized through its hierarchy
	Sensitive   Role = "sensitive"   // kept as is, protected by l-diversity / t-closeness
	Insensitive Role = "insensitive" // kept as is
)

// Roles are the roles, in the order messages list them.
var Roles = []Role{Identifier, Quasi, Sensitive, Insensitive}

// String is the role's configuration spelling.
func (r Role) String() string { return string(r) }

// Type is the declared value type of a column.
type Type string

// Column value types; String is the default.
const (
	String    Type = "string"
	Integer   Type = "integer"
	Float     Type = "float"
	Date      Type = "date"
	Timestamp Type = "timestamp"
	Boolean   Type = "boolean"
)

// Types are the value types, in the order messages list them.
var Types = []Type{String, Integer, Float, Date, Timestamp, Boolean}

// String is the type's configuration spelling.
func (t Type) String() string { return string(t) }

// Config is a decoded and validated release configuration.
type Config struct {
	File     string // path of the configuration file as given ("" when parsed from bytes without a name)
	Dir      string // folder of the configuration file; relative paths below are already resolved against it
	Digest   string // hex SHA-256 of the configuration file's bytes
	Dataset  string
	Unlisted Unlisted // UnlistedError by default
	Input    IO
	Output   IO
	Columns  []Column // in the order the configuration lists them
	Privacy  Privacy
	Search   Search
	Risk     Risk
	Series   Series
	DP       *DP            // nil when the configuration has no dp section
	lines    map[string]int // the line of every key path the file gives (Where)
}

// IO describes an input or output table.
type IO struct {
	Path   string // resolved; "" when not given
	Format Format // one of Formats, "" when not given (the path's extension says it)
	CSV    CSV
}

// CSV holds the CSV dialect of a table.
type CSV struct {
	Separator rune // default ','
	Header    bool // default true
}

// Column is the configuration of one input column.
type Column struct {
	Name string
	Role Role
	Type Type // default String
	// TypeDeclared is set when the configuration gives the type: Parquet and Arrow
	// columns must then have it; otherwise they keep the type the file gives them.
	TypeDeclared bool
	// Null is the value a null of a quasi-identifier or sensitive column is read as
	// (nil: a null there is an error). Insensitive columns keep their nulls.
	Null      *string
	Hierarchy *Hierarchy // required for quasi-identifiers
	Domain    *Domain    // optional, used by DP outputs
}

// Hierarchy says where a column's generalization hierarchy comes from: exactly one
// of File, Intervals, Mask, Date is set.
type Hierarchy struct {
	File      string    // ARX-format file, resolved against the configuration's folder
	Intervals []float64 // interval widths, finest first; each a multiple of the one before
	Mask      *Mask
	Date      []DateUnit // some of DateUnits, finest first
}

// Mask is the masking hierarchy builder: level i replaces i characters by '*'.
type Mask struct {
	FromRight bool // from: right (MaskFromRight, the default), not left
	Max       int  // number of masking levels before the top "*"
}

// Domain is the declared finite domain of a column (for DP outputs).
type Domain struct {
	Values         []string    // domain: [a, b, c]
	Range          *[2]float64 // domain: {range: [lo, hi], width: w}
	Width          float64
	HierarchyLevel *int // domain: {hierarchy-level: n}
}

// Privacy holds the privacy models of a release.
type Privacy struct {
	// K is k-anonymity's k: 0 when neither it nor any other model is given, 1 when
	// only other models are (KDefault then says so).
	K            int
	Suppression  float64 // share of input records that may be removed, in [0,1]
	LDiversity   []LDiversity
	TCloseness   []TCloseness
	BetaLikeness []BetaLikeness
	KDefault     bool // K was not given and is 1 because other models are
	// The risk-based models (package risk), each 0 or nil when not given.
	AverageRisk          float64 // the records' average prosecutor risk is at most this
	HighestRisk          float64 // no record's prosecutor risk is above this
	RecordsAtRisk        *RecordsAtRisk
	PopulationUniqueness *PopulationUniqueness
	// RiskEnforcement is how average-risk, records-at-risk and population-uniqueness
	// are met (RiskSuppress unless configured).
	RiskEnforcement RiskEnforcement
	// Subset names the research subset: the input is then the population, only the
	// subset's records are released, and δ-presence and k-map are measured against the
	// population (nil: the input is what is released).
	Subset        *Subset
	DeltaPresence *DeltaPresence
	KMap          *KMap
	// Profitability is the game-theoretic model (nil: not given).
	Profitability *Profitability
	// ReleasedColumns is what a release does when a column released as it is gives a
	// protected sensitive value away (ReleasedWarn unless configured).
	ReleasedColumns ReleasedCheck
	// Unit names the column whose value identifies the person a record is about, so
	// that the models count persons, not rows (nil: one record is one person).
	Unit *Unit
	// DifferentialPrivacy is SafePub's (ε, δ)-differentially private release of
	// generalized records (nil: not given). It stands alone: k and the suppression
	// follow from ε and δ, and no other model is given with it.
	DifferentialPrivacy *DifferentialPrivacy
}

// DifferentialPrivacy is privacy.differential-privacy: SafePub (Bild, Kuhn, Prasser,
// "SafePub: A Truthful Data Anonymization Algorithm With Strong Privacy Guarantees",
// PoPETs 2018), on Li, Qardaji and Su ("On sampling, anonymization, and differential
// privacy", ASIACCS 2012). Every input record is drawn into a sample with probability
// β, the sample is generalized at one node of the lattice, and every class of fewer
// than k sampled records is suppressed; β and k follow from the anonymization's ε and
// from δ (package safepub). Exactly one of Generalization, Degree and Search says how
// the node is chosen.
type DifferentialPrivacy struct {
	Epsilon float64 // the whole ε, the search's share included
	Delta   float64
	// Generalization is the node given: a level for every quasi-identifier.
	Generalization map[string]int
	// Degree is ARX's generalization degree: each quasi-identifier at a share of its
	// hierarchy's height (0: not given).
	Degree safepub.Degree
	// Search is SafePub's data-dependent search for the node (nil: not given).
	Search *DPSearch
}

// DefaultDPSteps is the steps of SafePub's search when the configuration gives none:
// the paper's evaluation's (Bild et al. 2018, section 6).
const DefaultDPSteps = 300

// DPSearch is privacy.differential-privacy.search: SafePub's choice of the node by the
// exponential mechanism, step by step, on the sample.
type DPSearch struct {
	Epsilon float64 // ε_search, part of DifferentialPrivacy.Epsilon
	Steps   int     // the steps of the search, each spending Epsilon/Steps
}

// Unit is privacy.privacy-unit: the column of role identifier whose value identifies
// the person (the privacy unit) each record is about, and, when the person's records
// are to be linkable, the pseudonym that stands for the id in the release.
type Unit struct {
	Column    string     // a column of role identifier, never released as it is
	Pseudonym *Pseudonym // nil: the column is not released at all
}

// Pseudonym is privacy.privacy-unit.pseudonym: the unit column is released, under its
// own name, as a keyed pseudonym of the id.
type Pseudonym struct {
	KeyFile string // resolved; "": a new random key each run
}

// ReleasedCheck is what a release does when a column it releases as it is fails a
// protected sensitive column's requirements on its own (privacy.released-columns.check).
type ReleasedCheck string

// The two answers to a column that gives a sensitive value away.
const (
	ReleasedWarn  ReleasedCheck = "warn"  // the report names it, the release is published
	ReleasedError ReleasedCheck = "error" // exit 3, nothing is published
)

// ReleasedChecks are the values of privacy.released-columns.check.
var ReleasedChecks = []ReleasedCheck{ReleasedWarn, ReleasedError}

// String is the check's configuration spelling.
func (c ReleasedCheck) String() string { return string(c) }

// RiskEnforcement is how a release meets the risk-based models decided on the whole
// release (privacy.risk-enforcement).
type RiskEnforcement string

// The two ways to meet average-risk, records-at-risk and population-uniqueness.
const (
	// RiskSuppress suppresses the smallest released classes until the models hold,
	// within the suppression limit, as ARX enforces them.
	RiskSuppress RiskEnforcement = "suppress"
	// RiskMeasure measures the models over the classes the other models release: a
	// generalization that misses one is not chosen.
	RiskMeasure RiskEnforcement = "measure"
)

// RiskEnforcements are the values of privacy.risk-enforcement.
var RiskEnforcements = []RiskEnforcement{RiskSuppress, RiskMeasure}

// String is the enforcement's configuration spelling.
func (e RiskEnforcement) String() string { return string(e) }

// Subset is the research subset of the input (ARX's data subset): the records whose
// Column holds true, 1 or yes (false, 0 or no: not in it; case ignored).
type Subset struct {
	Column string // a column of role identifier, so that it is never released
}

// DeltaPresence bounds every released class's share of the population records with
// its values (Nergiz, Atzori, Clifton 2007): Min ≤ share ≤ Max. It needs a Subset.
type DeltaPresence struct {
	Min, Max float64
}

// KMap is k-map (El Emam & Dankar 2008): every released class's values are shared by
// at least K records of the population. With a Subset, the population is the input;
// without, it is estimated from risk's population size or sampling fraction by
// Estimator, at the significance level Significance, as ARX derives a k for
// k-anonymity from it.
type KMap struct {
	K            int
	Estimator    *risk.CellSizeEstimator // nil with a subset (it is not given then)
	Significance float64                 // the estimator's significance level (default 0.01)
}

// EstimatorName is the estimator's configuration spelling, "" when none is given (with
// a subset).
func (k KMap) EstimatorName() string {
	if k.Estimator == nil {
		return ""
	}
	return k.Estimator.String()
}

// Profitability is privacy.profitability: the game-theoretic model of Wan et al. 2015
// ("A Game Theoretic Framework for Analyzing Re-Identification Risk", PLOS ONE) as
// ARX's profitability criteria decide it, class by class.
type Profitability struct {
	// Attacker is the adversary: ProsecutorAttacker re-identifies a record of a class
	// with probability 1/its records, JournalistAttacker 1/its population's records
	// (it needs Subset).
	Attacker risk.Attacker
	// Attack says that the adversary may attack where it pays: a class is released
	// when the publisher's expected payout per record stays positive (ARX's
	// ProfitabilityProsecutor, ProfitabilityJournalist). Without it no attack may pay
	// the adversary: every class holds at least CostBenefit.NoAttackK records (of the
	// population for the journalist), ARX's NoAttack criteria.
	Attack bool
	risk.CostBenefit
}

// RisksModelled reports whether any risk-based model is given.
func (p Privacy) RisksModelled() bool {
	return p.AverageRisk > 0 || p.HighestRisk > 0 || p.RecordsAtRisk != nil || p.PopulationUniqueness != nil
}

// PopulationModelled reports whether δ-presence or k-map is given.
func (p Privacy) PopulationModelled() bool { return p.DeltaPresence != nil || p.KMap != nil }

// RecordsAtRisk bounds the share of records whose prosecutor risk is above a threshold.
type RecordsAtRisk struct {
	Threshold float64 // a record is at risk when 1/(its class size) is above this
	Max       float64 // the largest share of the released records at risk
}

// PopulationUniqueness bounds the share of the population estimated to be unique on
// the released quasi-identifiers.
type PopulationUniqueness struct {
	Max   float64
	Model risk.UniquenessModel // risk.Dankar by default
}

// Risk is what is known of the population the input was drawn from; the zero Risk
// knows nothing (only the prosecutor model is measured).
type Risk struct {
	Population       int64   // N, the population's records; 0 when not given
	SamplingFraction float64 // the input's share of the population; 0 when not given
}

// Series is the series section: what a night of a release series (release --series)
// may do that a single release need not decide (docs/series.md).
type Series struct {
	// MaxDeferred is the largest share of the input's records a night may defer (hold
	// back until their class's new records can be published); above it the night
	// fails. 1 (no bound) unless configured.
	MaxDeferred float64
	// Removals is what a night does when a class loses between 1 and k−1 records
	// (persons) since the previous night (RemovalsRefuse unless configured).
	Removals Removals
	// KeyFile is the series key's file (resolved; "": the file STATE.json.key beside
	// the state, created on the first night).
	KeyFile string
}

// Removals is series.removals: whether a night may publish a class that lost between
// 1 and k−1 of the previous night's records, which someone holding both files sees.
type Removals string

// The answers of series.removals.
const (
	RemovalsRefuse Removals = "refuse" // the night fails (exit 3)
	RemovalsAllow  Removals = "allow"  // the night publishes; the report lists the classes
	// RemovalsRetire withholds, from then on, the other rows of every cohort that lost
	// a row, so that a class only ever loses whole cohorts (at least k each).
	RemovalsRetire Removals = "retire"
)

// RemovalAnswers lists series.removals's values.
var RemovalAnswers = []Removals{RemovalsRefuse, RemovalsRetire, RemovalsAllow}

func (r Removals) String() string { return string(r) }

// Name is what messages call the configuration: its file, or "configuration" when it
// was parsed from bytes without a name.
func (c *Config) Name() string {
	if c.File == "" {
		return "configuration"
	}
	return c.File
}

// Known reports whether the population is described.
func (r Risk) Known() bool { return r.Population > 0 || r.SamplingFraction > 0 }

// LDiversity is one l-diversity requirement on a sensitive column.
type LDiversity struct {
	Column    string
	Variant   diversity.Variant
	L         float64
	C         float64             // recursive only
	Estimator diversity.Estimator // entropy only: diversity.Shannon by default
}

// BetaLikeness is one β-likeness requirement on a sensitive column (Cao & Karras
// 2012): in every class no value's share exceeds its share in the input by more than
// Beta relatively (enhanced: by more than min(Beta, −ln of its input share)).
type BetaLikeness struct {
	Column  string
	Beta    float64
	Variant closeness.LikenessVariant
}

// TCloseness is one t-closeness requirement on a sensitive column.
type TCloseness struct {
	Column   string
	T        float64
	Distance closeness.Distance
	Order    []string // ordered distance on a string column: its values, smallest first
}

// Search selects the algorithm and the utility metric.
type Search struct {
	Aggregate LossAggregate      // loss only; "" when not given (the loss metric then takes AggregateArithmetic)
	Weights   map[string]float64 // loss only: a quasi-identifier's weight (1 when not named); nil when not given
	Algorithm Algorithm          // Optimal by default
	Metric    Metric             // MetricLoss by default
	// GSFactor is ARX's generalization/suppression factor in [0, 1] for the loss and
	// the entropy objectives; nil when not given (0.5, ARX's default: generalized and
	// suppressed values weigh alike).
	GSFactor *float64
	// MinLevels and MaxLevels bound a quasi-identifier's level in the release (as
	// ARX's minimum and maximum generalization): the least and the greatest level the
	// search may choose for it; nil when not given, a quasi-identifier not named
	// unbounded.
	MinLevels, MaxLevels map[string]int
	// LocalRecoding, when not nil, releases the records the optimal search's node
	// suppresses at nodes of their own (ARX's iterative local recoding).
	LocalRecoding *LocalRecoding
}

// LocalRecoding is search.local-recoding: ARX's optimizeIterative, whose parameters
// (and defaults: ARX's) it takes.
type LocalRecoding struct {
	Iterations int      // the passes after the first, at most (100)
	GSFactor   *float64 // the passes' gs-factor (nil: not given)
	Adaption   float64  // added to the gs-factor after a pass that places nothing (0.05)
	// Cells makes it a cell suppression: the passes after the first may only raise
	// some of the first node's quasi-identifiers to their top level (false).
	Cells bool
}

// DP is the differential-privacy section.
type DP struct {
	EpsilonTotal float64
	DeltaTotal   float64
	Neighbours   Neighbours // AddRemove by default
	PrivacyUnit  *PrivacyUnit
	Outputs      []DPOutput
}

// PrivacyUnit bounds each unit's contribution to DP outputs.
type PrivacyUnit struct {
	Column          string
	MaxRowsPerUnit  int    // 0: not capped
	MaxCellsPerUnit int    // 0: not capped
	Seed            uint64 // seeds the uniform sampling of the kept rows and cells
}

// DPOutput is one differentially private output; exactly one of Histogram, Marginals,
// Aggregate, Synthetic is set.
type DPOutput struct {
	Name      string
	Histogram []string
	Marginals *Marginals
	Aggregate *Aggregate
	Synthetic *Synthetic
	Epsilon   float64
	Delta     float64
	Mechanism Mechanism     // Laplace by default; "" for a synthetic output
	Post      []PostProcess // in the order given
	Format    Format        // FormatCSV or FormatParquet; "" = FormatCSV
	// Other adds a cell named "other" to every column's domain in this output: values
	// outside the declared domain are counted there instead of failing the run.
	Other bool
}

// Marginals asks for all Way-way marginals of Columns.
type Marginals struct {
	Columns []string
	Way     int
}

// Aggregate asks for per-group statistics of a numeric column.
type Aggregate struct {
	GroupBy   []string
	Column    string
	Stats     []Stat
	Bounds    [2]float64
	Quantiles []float64 // ranks in [0, 1] for the quantiles stat
}

// Synthetic asks for synthetic records.
type Synthetic struct {
	Columns  []string
	Rows     int             // 0 = same as the input (its noisy estimate)
	Method   SynthesisMethod // AIM by default
	Workload [][]string      // explicit cliques; empty when Way is used
	Way      int             // all Way-way marginals of Columns; min(3, columns) by default
	// MaxModelSize caps the cells of the fitted graphical model (0: the default).
	MaxModelSize int
}

// MaxConfigBytes bounds the size of a configuration file.
const MaxConfigBytes = 16 << 20

// MaxHierarchyBytes bounds the size of a hierarchy file (a file of a few million
// values; its rows are held in memory).
const MaxHierarchyBytes = 256 << 20

// MaxHierarchyLevels bounds the levels of a hierarchy, its leaves and its top
// included: a hierarchy file's rows, a mask's max + 2, an interval hierarchy's widths
// + 2. Each level of a built hierarchy is a label per distinct value held in memory,
// and the verifier's utility measurement follows up to 32 levels per column.
const MaxHierarchyLevels = 32

// MaxPopulation bounds the population the risk models compute with (risk.population,
// or the input's records over risk.sampling-fraction): 10¹², more than a hundred times
// the people alive, and exact in the float64 arithmetic of the estimators.
const MaxPopulation = 1_000_000_000_000

// MinSamplingFraction is the smallest risk.sampling-fraction: a sample of one record in
// a billion (a smaller one implies a population beyond MaxPopulation for any input of
// more than a thousand records).
const MinSamplingFraction = 1e-9

// MinOutputEpsilon is the least ε a DP output may spend: the noise then swamps any
// count, and Google's library refuses an ε below 2⁻⁵⁰, which an output's mechanisms
// may split a smaller one into.
const MinOutputEpsilon = 1e-9

// MaxGaussianEpsilon is the most ε an output of the gaussian mechanism may spend:
// past ε ≈ 709, where e^ε overflows, Google's library's Gaussian mechanism draws
// forever.
const MaxGaussianEpsilon = 500

// MaxSyntheticRows bounds a synthetic output's rows (they are held in memory, 4 bytes
// a value).
const MaxSyntheticRows = 100_000_000

// MaxModelSize bounds a synthetic output's max-model-size (cells of float64).
const MaxModelSize = 64 << 20

// Column returns the configuration of the named column, or nil.
func (c *Config) Column(name string) *Column {
	for i := range c.Columns {
		if c.Columns[i].Name == name {
			return &c.Columns[i]
		}
	}
	return nil
}

// Quasi returns the quasi-identifier columns in configuration order.
func (c *Config) Quasi() []Column {
	var out []Column
	for _, col := range c.Columns {
		if col.Role == Quasi {
			out = append(out, col)
		}
	}
	return out
}
