package schema

import (
	"fmt"

	"sanitizer/closeness"
	"sanitizer/diversity"
	"sanitizer/risk"
	"sanitizer/safepub"
)

// The keys and the enumerated values the configuration accepts. The parser reads them
// from the two tables below and nowhere else: a mapping's unknown-key check takes its
// keys from sectionKeys (mapping panics on a section missing there) and an enumerated
// key's values from enumSets (enumSetOf panics on a key missing there).
// docs/configuration.md documents every entry of both; TestReferenceDocumentsEveryKey
// walks the tables and checks that it does.
//
// Sections and keys are named by the key paths the reference uses: "" is the top level,
// "columns.<name>" any column, "dp.outputs[]" any DP output; an l-diversity or
// t-closeness requirement is "privacy.l-diversity" or "privacy.t-closeness" whether it
// is given alone or in a list.

// hierarchyKinds are the keys of a hierarchy of which exactly one is given.
var hierarchyKinds = []string{"file", "intervals", "mask", "date"}

// outputKinds are the keys of a DP output of which exactly one is given.
var outputKinds = []string{"histogram", "marginals", "aggregate", "synthetic"}

// Keys shared by more than one section.
var (
	ioKeys  = []string{"path", "format", "csv"}
	csvKeys = []string{"separator", "header"}
)

// sectionKeys holds, for every mapping of the configuration, the keys it accepts, in
// the order the unknown-key message lists them.
var sectionKeys = map[string][]string{
	"":                                    {"dataset", "unlisted", "input", "output", "columns", "privacy", "search", "risk", "series", "dp"},
	"series":                              {"max-deferred", "removals", "key-file"},
	"input":                               ioKeys,
	"output":                              ioKeys,
	"input.csv":                           csvKeys,
	"output.csv":                          csvKeys,
	"columns.<name>":                      {"role", "type", "null-as", "hierarchy", "domain"},
	"columns.<name>.hierarchy":            hierarchyKinds,
	"columns.<name>.hierarchy.mask":       {"from", "max"},
	"columns.<name>.domain":               {"range", "width", "hierarchy-level"},
	"privacy":                             {"k", "suppression", "l-diversity", "t-closeness", "beta-likeness", "average-risk", "highest-risk", "records-at-risk", "population-uniqueness", "risk-enforcement", "subset", "delta-presence", "k-map", "profitability", "released-columns", "privacy-unit", "differential-privacy"},
	"privacy.differential-privacy":        {"epsilon", "delta", "generalization", "degree", "search"},
	"privacy.differential-privacy.search": {"epsilon", "steps"},
	"privacy.profitability":               {"attacker", "attack", "publisher-benefit", "publisher-loss", "adversary-gain", "adversary-cost"},
	"privacy.released-columns":            {"check"},
	"privacy.privacy-unit":                {"column", "pseudonym"},
	"privacy.privacy-unit.pseudonym":      {"key-file"},
	"privacy.subset":                      {"column"},
	"privacy.delta-presence":              {"min", "max"},
	"privacy.k-map":                       {"k", "estimator", "significance"},
	"privacy.beta-likeness":               {"column", "beta", "variant"},
	"privacy.records-at-risk":             {"threshold", "max"},
	"privacy.population-uniqueness":       {"max", "model"},
	"risk":                                {"population", "sampling-fraction"},
	"privacy.l-diversity":                 {"column", "variant", "l", "c", "estimator"},
	"privacy.t-closeness":                 {"column", "t", "distance", "order"},
	"search":                              {"algorithm", "metric", "aggregate", "weights", "gs-factor", "min-levels", "max-levels", "local-recoding"},
	"search.local-recoding":               {"iterations", "gs-factor", "adaption", "cells"},
	"dp":                                  {"epsilon-total", "delta-total", "neighbours", "privacy-unit", "outputs"},
	"dp.privacy-unit":                     {"column", "max-rows-per-unit", "max-cells-per-unit", "seed"},
	"dp.outputs[]":                        append([]string{"name", "epsilon", "delta", "mechanism", "post", "format", "other"}, outputKinds...),
	"dp.outputs[].marginals":              {"columns", "way"},
	"dp.outputs[].aggregate":              {"group-by", "column", "stats", "bounds", "quantiles"},
	"dp.outputs[].synthetic":              {"columns", "rows", "method", "workload", "max-model-size"},
	"dp.outputs[].synthetic.workload":     {"way"},
}

// enumSets holds, for every key whose value is one of a fixed set (or a list of
// them), the enumeration's values in the order the error message lists them: the
// parser reads the key as the value of that type (enumValue), and enumValues spells
// them.
var enumSets = map[string]enumSet{
	"unlisted":                            valuesOf[Unlisted](UnlistedAnswers),
	"input.format":                        valuesOf[Format](Formats),
	"output.format":                       valuesOf[Format](Formats),
	"columns.<name>.role":                 valuesOf[Role](Roles),
	"columns.<name>.type":                 valuesOf[Type](Types),
	"columns.<name>.hierarchy.mask.from":  valuesOf[MaskFrom](MaskEnds),
	"columns.<name>.hierarchy.date":       valuesOf[DateUnit](DateUnits),
	"privacy.l-diversity.variant":         valuesOf[diversity.Variant](diversity.Variants),
	"privacy.l-diversity.estimator":       valuesOf[diversity.Estimator](diversity.Estimators),
	"privacy.t-closeness.distance":        valuesOf[closeness.Distance](closeness.Distances),
	"privacy.beta-likeness.variant":       valuesOf[closeness.LikenessVariant](closeness.LikenessVariants),
	"privacy.population-uniqueness.model": valuesOf[risk.UniquenessModel](risk.UniquenessModels),
	"privacy.k-map.estimator":             valuesOf[risk.CellSizeEstimator](risk.CellSizeEstimators),
	"privacy.profitability.attacker":      valuesOf[risk.Attacker](risk.Attackers),
	"privacy.released-columns.check":      valuesOf[ReleasedCheck](ReleasedChecks),
	"privacy.risk-enforcement":            valuesOf[RiskEnforcement](RiskEnforcements),
	"privacy.differential-privacy.degree": valuesOf[safepub.Degree](safepub.AllDegrees),
	"search.algorithm":                    valuesOf[Algorithm](Algorithms),
	"series.removals":                     valuesOf[Removals](RemovalAnswers),
	"search.aggregate":                    valuesOf[LossAggregate](LossAggregates),
	"search.metric":                       valuesOf[Metric](Metrics),
	"dp.neighbours":                       valuesOf[Neighbours](NeighbourRelations),
	"dp.outputs[].mechanism":              valuesOf[Mechanism](Mechanisms),
	"dp.outputs[].post":                   valuesOf[PostProcess](PostProcesses),
	"dp.outputs[].format":                 valuesOf[Format](DPFormats),
	"dp.outputs[].aggregate.stats":        valuesOf[Stat](Stats),
	"dp.outputs[].synthetic.method":       valuesOf[SynthesisMethod](SynthesisMethods),
}

// enumValues holds, for every key of enumSets, the configuration's spelling of its
// values.
var enumValues = func() map[string][]string {
	m := make(map[string][]string, len(enumSets))
	for k, set := range enumSets {
		m[k] = set.spellings()
	}
	return m
}()

// enumSet is the values of an enumerated key.
type enumSet interface{ spellings() []string }

// valuesOf is the values of an enumeration E, as an enumSet.
type valuesOf[E fmt.Stringer] []E

func (v valuesOf[E]) spellings() []string { return spellings(v) }

// keyPath joins a section and one of its keys into the key path the tables use.
func keyPath(section, key string) string {
	if section == "" {
		return key
	}
	return section + "." + key
}
