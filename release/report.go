package release

import (
	"encoding/json"
	"strconv"
	"time"

	"sanitizer/fault"
	"sanitizer/generalize"
	"sanitizer/internal/build"
	"sanitizer/report"
	"sanitizer/risk"
	"sanitizer/schema"
	"sanitizer/verify"
)

// releaseMetadata is the key-value metadata of a Parquet or Arrow release of rows
// input records (those of the research subset, when there is one) whose
// quasi-identifiers are quasi (in the table's order), at the search's result res,
// written at now: the release parameters (sanitize.* keys), never a data value. Every
// part of a release in parts carries the same; a release on another engine (the beam
// module) writes the same as the CLI's.
func releaseMetadata(cfg *schema.Config, quasi []generalize.Column, rows int, res *generalize.Result, now time.Time) map[string]string {
	nodeJSON := []byte(mondrianNode)
	if res.Levels != nil {
		nodeJSON, _ = json.Marshal(nodeLevels(quasi, res.Levels))
	}
	meta := recordedParams(cfg, rows, maxSuppressed(cfg.Privacy.Suppression, rows), res.Suppressed)
	meta["sanitize.metric_value"] = strconv.FormatFloat(res.Value, 'g', -1, 64)
	for k, v := range describedMetadata(cfg, nodeJSON, res.Metric, now) {
		meta[k] = v
	}
	return meta
}

// describedMetadata is the metadata every release's file holds, whatever it
// guarantees: the tool, the dataset, the configuration's digest, the node, the metric
// and when it was written.
func describedMetadata(cfg *schema.Config, nodeJSON []byte, metric schema.Metric, now time.Time) map[string]string {
	meta := map[string]string{}
	meta["sanitize.tool"] = "sanitize"
	meta["sanitize.version"] = build.Version
	meta["sanitize.dataset"] = cfg.Dataset
	meta["sanitize.config_digest"] = "sha256:" + cfg.Digest
	meta["sanitize.node"] = string(nodeJSON)
	meta["sanitize.metric"] = metric.String()
	meta["sanitize.created_utc"] = now.UTC().Format(time.RFC3339)
	return meta
}

// recordedParams is the part of a release's metadata that check compares with what
// it measures: the models' parameters (column names and parameters only) and the
// suppression of a release of cfg over an input of rows records.
func recordedParams(cfg *schema.Config, rows, maxSupp, suppressed int) map[string]string {
	meta := map[string]string{
		"sanitize.k":                 strconv.Itoa(cfg.Privacy.K),
		"sanitize.suppression_limit": strconv.FormatFloat(cfg.Privacy.Suppression, 'g', -1, 64),
		"sanitize.max_suppressed":    strconv.Itoa(maxSupp),
		"sanitize.suppressed":        strconv.Itoa(suppressed),
		"sanitize.input_rows":        strconv.Itoa(rows),
		"sanitize.algorithm":         algorithm(cfg).String(),
	}
	var ls []report.LDiversityIn
	for _, l := range cfg.Privacy.LDiversity {
		ls = append(ls, report.LDiversityIn{Column: l.Column, Variant: l.Variant, L: l.L, C: l.C, Estimator: l.Estimator})
	}
	if ls != nil {
		b, _ := json.Marshal(ls)
		meta["sanitize.l_diversity"] = string(b)
	}
	var ts []report.TClosenessIn
	for _, t := range cfg.Privacy.TCloseness {
		ts = append(ts, report.TClosenessIn{Column: t.Column, T: t.T, Distance: t.Distance})
	}
	if ts != nil {
		b, _ := json.Marshal(ts)
		meta["sanitize.t_closeness"] = string(b)
	}
	pr := cfg.Privacy
	if pr.Subset != nil {
		meta["sanitize.subset"] = pr.Subset.Column
	}
	if d := pr.DeltaPresence; d != nil {
		b, _ := json.Marshal(report.DeltaPresenceIn{Min: d.Min, Max: d.Max})
		meta["sanitize.delta_presence"] = string(b)
	}
	if k := pr.KMap; k != nil {
		b, _ := json.Marshal(report.KMapIn{K: k.K, Estimator: k.EstimatorName(), Significance: k.Significance})
		meta["sanitize.k_map"] = string(b)
	}
	if p := profitIn(cfg); p != nil {
		b, _ := json.Marshal(p)
		meta["sanitize.profitability"] = string(b)
	}
	return meta
}

// mondrianNode is a Mondrian release's sanitize.node: the algorithm's name in JSON, as
// it has no node of the lattice.
var mondrianNode = strconv.Quote(schema.Mondrian.String())

// algorithm is the configured search algorithm, schema.Optimal by default.
func algorithm(cfg *schema.Config) schema.Algorithm {
	if cfg.Search.Algorithm == "" {
		return schema.Optimal
	}
	return cfg.Search.Algorithm
}

// Facts is what a release found, whichever engine ran it (Release here, or the beam
// module's): what newReport makes its report of. It holds counts, parameters and the
// release's own values: never an input value the release does not publish.
type Facts struct {
	Tool    string    // the command that ran the release
	Created time.Time // when the release was written (its metadata's created_utc)
	// HierarchyDigests maps every hierarchy file the release used to its SHA-256.
	HierarchyDigests map[string]string
	// Input is the input (Rows: the records the release is of, a research subset's
	// when there is one), Output the written release (Rows: the records it holds).
	Input, Output report.FileSummary
	Columns       []generalize.Column // the quasi-identifiers, in the search's order
	Result        *generalize.Result  // the search's (Levels nil under Mondrian)
	Measured      *Measured           // the independent check of the written release
	Utility       generalize.Metrics
	// InputSizes is the class sizes of the input's records at their original
	// quasi-identifier values, the input's risk.
	InputSizes risk.Distribution
	// Population is a research subset's population records (0: no subset), and
	// PopulationMeasured the released classes measured against it (nil: not measured).
	Population         int
	PopulationMeasured *verify.PopulationMeasured
	Generalized        []report.QuasiRelease // per quasi-identifier, what the release publishes of it
	Stages             report.Stages
}

// newReport is the report of a release of cfg that found f: the same document,
// whichever engine ran it.
func newReport(cfg *schema.Config, f Facts) (*report.Report, error) {
	res, m, rows := f.Result, f.Measured, f.Input.Rows
	rep := &report.Report{
		Tool: f.Tool, Version: build.Version, Dataset: cfg.Dataset, ConfigDigest: "sha256:" + cfg.Digest,
		CreatedUTC:       f.Created.UTC().Format(time.RFC3339),
		HierarchyDigests: f.HierarchyDigests,
		Input:            f.Input,
		Output:           f.Output,
		Model:            report.ModelSummary{K: cfg.Privacy.K, KDefault: cfg.Privacy.KDefault, SuppressionRate: cfg.Privacy.Suppression, MaxSuppressed: maxSuppressed(cfg.Privacy.Suppression, rows)},
		Algorithm:        algorithm(cfg),
		Classes:          res.Classes,
		MinClass:         res.MinClass,
		AvgClass:         m.AvgClass,
		Suppressed:       res.Suppressed,
		Metric:           report.MetricSummary{Name: res.Metric, Aggregate: cfg.Search.Aggregate, Weights: cfg.Search.Weights, GSFactor: cfg.Search.GSFactor, Value: res.Value},
		Utility:          f.Utility,
		Lattice:          report.LatticeStats{Size: res.LatticeSize, Evaluated: res.Evaluated, MonotoneOnly: res.MonotoneOnly, Tagged: res.Tagged, Bounded: res.Bounded, RolledUp: res.RolledUp},
		Verified:         report.Verification{Rows: m.Rows, Classes: m.Classes, MinClass: m.MinClass, Suppressed: m.Suppressed},
		Generalized:      f.Generalized,
		StagesMS:         f.Stages,
	}
	for _, l := range cfg.Privacy.LDiversity {
		rep.Model.LDiversity = append(rep.Model.LDiversity, report.LDiversityIn{Column: l.Column, Variant: l.Variant, L: l.L, C: l.C, Estimator: l.Estimator})
	}
	for _, t := range cfg.Privacy.TCloseness {
		rep.Model.TCloseness = append(rep.Model.TCloseness, report.TClosenessIn{Column: t.Column, T: t.T, Distance: t.Distance})
	}
	for _, b := range cfg.Privacy.BetaLikeness {
		rep.Model.BetaLikeness = append(rep.Model.BetaLikeness, report.BetaLikenessIn{Column: b.Column, Beta: b.Beta, Variant: b.Variant})
	}
	if err := populationReport(cfg, f, rep); err != nil {
		return nil, err
	}
	for _, s := range m.Sensitive {
		sum := report.SensitiveSummary{Column: s.Column, MinDistinct: s.MinDistinct, MinEntropyL: s.MinEntropyL, MaxEMD: s.MaxEMD, Distance: s.Distance, MaxGain: s.MaxGain,
			Measures: report.ConfiguredMeasures(cfg, s.Column)}
		if m.Persons != nil {
			for _, ps := range m.Persons.Sensitive {
				if ps.Column == s.Column { // the models' figures in persons
					sum.MinPersonsL, sum.MaxEMD, sum.MaxGain = ps.MinL, ps.MaxEMD, ps.MaxGain
				}
			}
		}
		rep.Verified.Sensitive = append(rep.Verified.Sensitive, sum)
	}
	rep.Verified.Released = report.ReleasedColumns(cfg, m)
	rep.Persons = personsSummary(cfg, m)
	if res.Levels != nil {
		rep.Node = nodeLevels(f.Columns, res.Levels)
	}
	out := m.Sizes
	if m.Persons != nil {
		out = m.Persons.Sizes // and the input's sizes are in persons too (inputSizes)
	}
	var err error
	rep.Risk, err = riskReport(cfg, rows, f.InputSizes, out)
	return rep, err
}

// personsSummary is the release counted in persons, as the verifier measured it (nil
// without privacy.privacy-unit).
func personsSummary(cfg *schema.Config, m *verify.Measured) *report.PersonsSummary {
	p := m.Persons
	if p == nil {
		return nil
	}
	s := &report.PersonsSummary{Column: unitColumn(cfg), Input: p.InputPersons, Released: p.Released, MinClass: p.MinClass,
		Several: p.InSeveralClasses, LostSome: p.LostSome, LostAll: p.LostAll, MinGroup: p.MinGroup}
	if c := p.Sizes.Classes(); c > 0 {
		s.AvgClass = float64(p.Sizes.Records()) / float64(c)
	}
	if linkable(cfg) {
		key := report.PseudonymKeyRandom
		if cfg.Privacy.Unit.Pseudonym.KeyFile != "" {
			key = report.PseudonymKeyFile
		}
		s.Pseudonym = &report.PseudonymStatement{Column: s.Column, Key: key, Links: report.PseudonymLinks(key)}
	}
	return s
}

// populationReport adds the research subset, δ-presence and k-map to the report: the
// requirements and what the verifier measured.
func populationReport(cfg *schema.Config, f Facts, rep *report.Report) error {
	pr := cfg.Privacy
	if pr.Subset != nil && f.Population > 0 {
		rep.Model.Subset = &report.SubsetIn{Column: pr.Subset.Column, Records: f.Input.Rows, Population: f.Population}
	}
	if d := pr.DeltaPresence; d != nil {
		rep.Model.DeltaPresence = &report.DeltaPresenceIn{Min: d.Min, Max: d.Max}
	}
	if km := pr.KMap; km != nil {
		in := &report.KMapIn{K: km.K, Estimator: km.EstimatorName()}
		if km.Estimator != nil {
			k, typeI, err := kmapK(cfg, f.Input.Rows)
			if err != nil {
				return err
			}
			in.Significance, in.DerivedK, in.TypeIError = km.Significance, k, typeI
		}
		rep.Model.KMap = in
	}
	rep.Model.Profitability = profitIn(cfg)
	rep.Verified.Payout = payoutSummary(f.Measured, f.PopulationMeasured)
	if p := f.PopulationMeasured; p != nil {
		rep.Verified.Population = &report.PopulationSummary{DeltaMin: p.DeltaMin, DeltaMax: p.DeltaMax, SmallestPopulation: p.SmallestPopulation}
	}
	return nil
}

// riskReport is a release's report of the re-identification risk of its input (the
// class sizes in, of rows records) and of the written release (out, measured by the
// verifier).
func riskReport(cfg *schema.Config, rows int, in, out risk.Distribution) (*report.RiskReport, error) {
	n, err := population(cfg, rows)
	if err != nil {
		return nil, err
	}
	rr := &report.RiskReport{Population: populationFigures(n, rows), Thresholds: reportThresholds(cfg)}
	if rr.Input, err = riskMeasures(in, n, rr.Thresholds); err != nil {
		return nil, fault.Internalf("the input's risk: %w", err)
	}
	rel, err := riskMeasures(out, n, rr.Thresholds)
	if err != nil {
		return nil, fault.Internalf("the release's risk: %w", err)
	}
	rr.Release = &rel
	rr.Models = riskChecks(cfg, out, n)
	if pr := cfg.Privacy; pr.AverageRisk > 0 || pr.RecordsAtRisk != nil || pr.PopulationUniqueness != nil {
		rr.Enforcement = pr.RiskEnforcement.String()
	}
	return rr, nil
}

// nodeLevels is the node of levels over the quasi-identifiers cols, as reports and
// metadata write it.
func nodeLevels(cols []generalize.Column, levels []int) []report.NodeLevel {
	node := make([]report.NodeLevel, len(cols))
	for i, c := range cols {
		node[i] = report.NodeLevel{Column: c.Name, Level: levels[i], Levels: c.Hierarchy.Height()}
	}
	return node
}
