package release

import (
	"math/big"
	"strconv"

	"sanitizer/closeness"
	"sanitizer/diversity"
	"sanitizer/fault"
	"sanitizer/job"
	"sanitizer/schema"
	"sanitizer/table"
	"sanitizer/verify"
)

// CheckConfig rejects settings a release cannot honour (yet), before anything is read:
// failing closed is better than publishing without a requested protection. Release,
// Check and validate run it.
func CheckConfig(cfg *schema.Config) error {
	if err := checkDP(cfg); err != nil {
		return err
	}
	switch {
	case cfg.Privacy.K < 1 && cfg.Privacy.DifferentialPrivacy == nil:
		return cfg.Errorf("privacy.k", "required for a release, unless the configuration names l-diversity, t-closeness, β-likeness or a risk-based model (then k is 1)")
	case cfg.Search.Algorithm != "" && cfg.Search.Algorithm != schema.Optimal && cfg.Search.Algorithm != schema.Mondrian:
		return cfg.Errorf("search.algorithm", "%q is not supported by this version (use optimal or mondrian)", cfg.Search.Algorithm)
	}
	if err := checkUnit(cfg); err != nil {
		return err
	}
	if err := checkLocalRecoding(cfg); err != nil {
		return err
	}
	mondrian := cfg.Search.Algorithm == schema.Mondrian
	switch cfg.Search.Metric {
	case "", schema.MetricLoss, schema.MetricDiscernibility:
	case schema.MetricDiscernibilityStar, schema.MetricAECS:
		// Measured on a Mondrian release's partitions as on the optimal search's classes.
	case schema.MetricEntropy, schema.MetricEntropyMonotone:
		// A Mondrian release suppresses nothing: both are the non-uniform entropy of
		// its partitions.
	case schema.MetricNCP:
		// The optimal search is given the numeric quasi-identifiers' leaf values
		// (Options.Values), as the utility measures take them.
	case schema.MetricHeight, schema.MetricPrecision:
		// Defined by one level per quasi-identifier, which Mondrian's partitions do
		// not have.
		if mondrian {
			return cfg.Errorf("search.metric", "%q is defined by a hierarchy level per quasi-identifier, which search.algorithm mondrian does not choose: use loss, discernibility, discernibility-star, aecs, entropy, entropy-monotone or ncp", cfg.Search.Metric)
		}
	case schema.MetricEntropyLoss:
		// Measured per record from the leaves its released values cover, which a
		// Mondrian release's utility measures do not report.
		if mondrian {
			return cfg.Errorf("search.metric", "entropy-loss is for search.algorithm optimal: use loss, discernibility, discernibility-star, aecs, entropy, entropy-monotone or ncp with mondrian")
		}
	case schema.MetricPublisherPayout:
		// The game's amounts are privacy.profitability's; a Mondrian release reports
		// no per-class payout.
		switch {
		case mondrian:
			return cfg.Errorf("search.metric", "publisher-payout is for search.algorithm optimal: use loss, discernibility, discernibility-star, aecs, entropy, entropy-monotone or ncp with mondrian")
		case cfg.Privacy.Profitability == nil:
			return cfg.Errorf("search.metric", "publisher-payout needs privacy.profitability: its publisher-benefit, publisher-loss, adversary-gain and adversary-cost are the game's amounts")
		}
	default:
		return cfg.Errorf("search.metric", "%q is not supported by this version (use loss, discernibility, discernibility-star, height, precision, aecs, entropy, entropy-monotone, entropy-loss, ncp or publisher-payout)", cfg.Search.Metric)
	}
	if gs := cfg.Search.GSFactor; gs != nil {
		switch {
		case mondrian:
			return cfg.Errorf("search.gs-factor", "the generalization/suppression factor is for search.algorithm optimal: a Mondrian release suppresses nothing and reports its metric at the default (0.5)")
		case cfg.Search.Metric.NeedsHalfGSFactor() && *gs < 0.5:
			return cfg.Errorf("search.gs-factor", "%g is below 0.5, where %s would charge a suppressed record less than a published one may cost, so that suppressing more could lower it and the search could not bound it: use a gs-factor from 0.5 to 1 with %[2]s", *gs, cfg.Search.Metric)
		}
	}
	if a := cfg.Search.Aggregate; cfg.Search.Algorithm == schema.Mondrian && a != "" && a != schema.AggregateArithmetic {
		return cfg.Errorf("search.aggregate", "%s is an aggregate of search.algorithm optimal's loss: a Mondrian release reports the arithmetic mean", a)
	}
	if cfg.Search.Algorithm == schema.Mondrian && cfg.Search.Weights != nil {
		return cfg.Errorf("search.weights", "weights are for search.algorithm optimal's loss: a Mondrian release reports the unweighted mean")
	}
	if cfg.Search.Algorithm == schema.Mondrian && (len(cfg.Search.MinLevels) > 0 || len(cfg.Search.MaxLevels) > 0) {
		key := "search.min-levels"
		if len(cfg.Search.MinLevels) == 0 {
			key = "search.max-levels"
		}
		return cfg.Errorf(key, "levels bound search.algorithm optimal's lattice: Mondrian's partitions have no level per quasi-identifier, so it would ignore them")
	}
	if pr := cfg.Privacy; cfg.Search.Algorithm == schema.Mondrian && (pr.AverageRisk > 0 || pr.RecordsAtRisk != nil || pr.PopulationUniqueness != nil) {
		return cfg.Errorf("privacy", "average-risk, records-at-risk and population-uniqueness are decided on a whole release, which search.algorithm mondrian cannot do partition by partition: use optimal (highest-risk works with both)")
	}
	if cfg.Search.Algorithm == schema.Mondrian && cfg.Privacy.Profitability != nil {
		return cfg.Errorf("privacy.profitability", "the game-theoretic model is decided on the classes of a full-domain generalization, whose information loss it weighs: use search.algorithm optimal")
	}
	if len(cfg.Quasi()) == 0 {
		return cfg.Errorf("columns", "a release needs at least one quasi-identifier")
	}
	return nil
}

// maxSuppressed is the number of records the limit allows: floor(share × rows), the
// share taken as the decimal the configuration wrote (0.05 × 100 is 5, not 4, and
// 0.282 × 10⁸ is 28200000), computed exactly.
func maxSuppressed(share float64, rows int) int {
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(share, 'g', -1, 64))
	if !ok {
		return 0
	}
	r.Mul(r, new(big.Rat).SetInt64(int64(rows)))
	return int(new(big.Int).Quo(r.Num(), r.Denom()).Int64())
}

// plan is a release's configuration checked against the input's columns, with what
// the release adds: its output (the release to write, or to check or analyse) and its
// format, its suppression limit and metric.
type plan struct {
	*job.Plan
	output    string
	outFormat schema.Format
	// classes, when not nil, is the release's classes being counted for a check
	// (Check) on a goroutine of their own; checkFullDomain takes them from it.
	classes  *classesPrefetch
	maxSupp  int
	metric   schema.Metric
	progress *job.Progress
	// collect (validate only): pass 1 keeps each column's first error and reads the
	// other columns on, instead of stopping at the first error.
	collect bool
	// key is the pseudonym's key when the release holds the privacy unit as a
	// pseudonym (PseudonymAt); nil when there is none, or when it is not known (a
	// check of a release made with a random key).
	key secret
	// seriesKey, on a night of a release series with a privacy unit, is the series
	// key: pass 1 gives every person's digest under it (persons, by the unit's code)
	// while it still has the ids.
	seriesKey []byte
	persons   []byte
	// seriesCheck, on a night of a release series, is the verifier's check of the
	// night against the state, which rides the truthfulness walk (nil: none).
	seriesCheck *verify.SeriesCounter
	// leftOut, on a night of a release series or in a SafePub release, is every input
	// record the run left out (suppressed, withheld, or not sampled): the truthfulness
	// walk checks that alignment (nil: the walk finds one).
	leftOut []bool
}

// newPlan matches the configuration's columns with the input's columns and types for
// a release to output.
func newPlan(cfg *schema.Config, input, output string, cols []table.Column) (*plan, error) {
	jp, err := job.NewPlan(cfg, input, cols)
	if err != nil {
		return nil, err
	}
	return releasePlan(jp, output), nil
}

// releasePlan is the release's plan over p.
func releasePlan(p *job.Plan, output string) *plan {
	rp := &plan{Plan: p, output: output, metric: p.Config.Search.Metric}
	if rp.metric == "" {
		rp.metric = schema.MetricLoss
	}
	return rp
}

// openInput opens the input of a release and plans it.
func openInput(cfg *schema.Config, in, out string, format schema.Format) (table.Source, *plan, error) {
	src, p, err := job.OpenInput(cfg, in, format)
	if err != nil {
		return nil, nil, err
	}
	return src, releasePlan(p, out), nil
}

// runPlan is a run's configuration and the command's flags, checked before any data
// is read: the first of a run's two planning steps (planRelease, planCheck,
// planRisk), and the only one that takes the configuration. The second, which needs
// the input's header and types, is open (job.NewPlan) and, for a release, openRun;
// the stages after it read the configuration through the plan it gives (the
// embedded job.Plan's Config).
type runPlan struct {
	cfg           *schema.Config
	opt           job.Options
	in, out       string        // out: the release to write, or (check, risk) to read
	inFmt, outFmt schema.Format // outFmt "" for risk
	key           secret        // the pseudonym's key (pseudonymKey; nil: none or not known)
}

// open is the second planning step of the run planned as rp: it opens the input and
// plans its columns against the configuration (job.OpenInput: the header, the types,
// the hierarchy files), for the release rp.out in the format rp.outFmt.
func (rp runPlan) open() (table.Source, *plan, error) {
	src, p, err := openInput(rp.cfg, rp.in, rp.out, rp.inFmt)
	if err != nil {
		return nil, nil, err
	}
	p.outFormat, p.key = rp.outFmt, rp.key
	return src, p, nil
}

// planRelease checks everything a release of cfg with the command's options opt can be
// checked for before any data is read, in this order: the configuration (CheckConfig,
// the same checks validate runs), the input and output paths and their formats
// (paths), that the run could publish its output and reports without overwriting
// what it reads (checkPaths), and the pseudonym's key (pseudonymKey: the key file's, or
// a random one).
func planRelease(cfg *schema.Config, opt job.Options) (runPlan, error) {
	if err := CheckConfig(cfg); err != nil {
		return runPlan{}, err
	}
	in, out, inFmt, outFmt, err := paths(cfg, opt)
	if err != nil {
		return runPlan{}, err
	}
	if err := checkPaths(cfg, opt, in, out); err != nil {
		return runPlan{}, err
	}
	if err := planLedger(cfg, opt, in, out); err != nil {
		return runPlan{}, err
	}
	key, err := pseudonymKey(cfg)
	if err != nil {
		return runPlan{}, err
	}
	return runPlan{cfg: cfg, opt: opt, in: in, out: out, inFmt: inFmt, outFmt: outFmt, key: key}, nil
}

// checkPaths refuses, before anything is read, an output or report the run could not
// publish or that would overwrite one of its own inputs.
func checkPaths(cfg *schema.Config, opt job.Options, in, out string) error {
	if err := checkDestination(cfg, in, "output", out, folderOutput(out)); err != nil {
		return err
	}
	if err := checkOutput(out, opt.Force); err != nil {
		return err
	}
	return checkReport(cfg, opt, in, out)
}

// paths resolves the input and output paths of a run and their formats.
func paths(cfg *schema.Config, opt job.Options) (in, out string, inFmt, outFmt schema.Format, err error) {
	if in, out, err = inputOutput(cfg, opt); err != nil {
		return "", "", "", "", err
	}
	if inFmt, err = table.InputFormat(in, cfg.Input); err != nil {
		return "", "", "", "", err
	}
	if (folderOutput(out) || table.IsParts(out)) && cfg.Output.Format == "" {
		outFmt = inFmt // a folder of parts: in the input's format unless configured
	} else if outFmt, err = table.CheckFormat("output", out, cfg.Output); err != nil {
		return "", "", "", "", err
	}
	return in, out, inFmt, outFmt, nil
}

// inputOutput is a release's input and output: the command line's (opt.Input,
// opt.Output), else the configuration's input.path and output.path; either missing
// is bad input.
func inputOutput(cfg *schema.Config, opt job.Options) (in, out string, err error) {
	in, out = cfg.Input.Path, cfg.Output.Path
	if opt.Input != "" {
		in = opt.Input
	}
	if opt.Output != "" {
		out = opt.Output
	}
	if in == "" {
		return "", "", fault.BadInput("input: no input file (--in or input.path)")
	}
	if out == "" {
		return "", "", fault.BadInput("output: no output file (--out or output.path)")
	}
	return in, out, nil
}

// unprotected is the sensitive columns that no l-diversity, t-closeness or β-likeness
// requirement names: a release writes them as they are.
func unprotected(cfg *schema.Config) []string {
	var out []string
	for _, c := range cfg.Columns {
		if c.Role != schema.Sensitive {
			continue
		}
		named := false
		for _, l := range cfg.Privacy.LDiversity {
			named = named || l.Column == c.Name
		}
		for _, t := range cfg.Privacy.TCloseness {
			named = named || t.Column == c.Name
		}
		for _, b := range cfg.Privacy.BetaLikeness {
			named = named || b.Column == c.Name
		}
		if !named {
			out = append(out, c.Name)
		}
	}
	return out
}

// checkUnit rejects, with privacy.privacy-unit, what this version does not yet count in
// persons (issue 37), naming the key: a model counted in records would protect records,
// not persons, so it is refused rather than applied to them. With a pseudonym it
// first refuses what linked records cannot be released with (checkLinkable).
func checkUnit(cfg *schema.Config) error {
	pr := cfg.Privacy
	if pr.Unit == nil {
		return nil
	}
	if err := checkLinkable(cfg); err != nil {
		return err
	}
	for _, d := range pr.LDiversity {
		if d.Variant != diversity.Distinct {
			return cfg.Errorf("privacy.l-diversity.variant", "%s l-diversity has no meaning in persons: with privacy.privacy-unit use distinct, decided in persons as (k,l)-diversity (every value held by at most 1/l of a class's persons)", d.Variant)
		}
	}
	for _, t := range pr.TCloseness {
		if t.Distance != "" && t.Distance != closeness.Equal {
			return cfg.Errorf("privacy.t-closeness.distance", "the %s distance has no meaning in persons (it moves mass between the values of one distribution, and a person may hold several): with privacy.privacy-unit use equal", t.Distance)
		}
	}
	notYet := func(key, what string) error {
		return cfg.Errorf(key, "%s is not counted in persons in this version, and with privacy.privacy-unit every model must count persons", what)
	}
	switch {
	case pr.AverageRisk > 0:
		return notYet("privacy.average-risk", "average risk")
	case pr.RecordsAtRisk != nil:
		return notYet("privacy.records-at-risk", "records at risk")
	case pr.PopulationUniqueness != nil:
		return notYet("privacy.population-uniqueness", "population uniqueness")
	case pr.Subset != nil:
		return notYet("privacy.subset", "a research subset")
	case pr.Profitability != nil:
		return notYet("privacy.profitability", "the game-theoretic model")
	case cfg.Risk.Population > 0:
		return notYet("risk.population", "a population of records (the journalist and marketer risks, population uniqueness)")
	case cfg.Risk.SamplingFraction > 0:
		return notYet("risk.sampling-fraction", "a sampling fraction of records (the journalist and marketer risks, population uniqueness)")
	}
	return nil
}
