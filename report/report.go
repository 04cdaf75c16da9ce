package report

import (
	"encoding/json"
	"fmt"
	"io"

	"sanitizer/closeness"
	"sanitizer/diversity"
	"sanitizer/generalize"
	"sanitizer/schema"
)

// Report describes a release. It holds counts and parameters only: never a data value.
type Report struct {
	Tool         string `json:"tool"`
	Version      string `json:"version"`
	Dataset      string `json:"dataset,omitempty"`
	ConfigDigest string `json:"config_digest"`
	CreatedUTC   string `json:"created_utc,omitempty"` // when the release was written (RFC 3339)
	// HierarchyDigests maps every hierarchy file the release used to its SHA-256.
	HierarchyDigests map[string]string `json:"hierarchy_digests,omitempty"`
	Input            FileSummary       `json:"input"`
	Output           FileSummary       `json:"output"`
	Model            ModelSummary      `json:"model"`
	Algorithm        schema.Algorithm  `json:"algorithm"`
	Node             []NodeLevel       `json:"node,omitempty"`       // optimal: the chosen levels
	Partitions       *PartitionStats   `json:"partitions,omitempty"` // mondrian
	// LocalRecoding is a release placed pass by pass (search.local-recoding).
	LocalRecoding *LocalRecodingSummary `json:"local_recoding,omitempty"`
	Classes       int                   `json:"classes"`
	MinClass      int                   `json:"min_class"`
	AvgClass      float64               `json:"avg_class"`
	Suppressed    int                   `json:"suppressed"`
	Metric        MetricSummary         `json:"metric"`
	Utility       generalize.Metrics    `json:"utility"` // every metric, whatever the search optimized
	Lattice       LatticeStats          `json:"lattice"`
	Verified      Verification          `json:"verified"`
	// Persons is the release counted in persons, beside its records (with
	// privacy.privacy-unit; nil without).
	Persons *PersonsSummary `json:"persons,omitempty"`
	// Generalized is, per quasi-identifier, what the release publishes of it.
	Generalized []QuasiRelease `json:"generalized,omitempty"`
	// Risk is the re-identification risk of the input and of the written release.
	Risk *RiskReport `json:"risk,omitempty"`
	// Series is the night of a release series this release is (nil: none).
	Series *SeriesSummary `json:"series,omitempty"`
	// DifferentialPrivacy is a release of records under (ε, δ)-differential privacy
	// (privacy.differential-privacy, SafePub; nil: none).
	DifferentialPrivacy *DPSummary `json:"differential_privacy,omitempty"`
	StagesMS            Stages     `json:"stages_ms"`
}

// QuasiRelease is what a release publishes of one quasi-identifier: its level (−1
// under Mondrian, whose partitions each have their own; else counted as NodeLevel
// counts it), the number of distinct values the release holds, and a few of them, in
// order. The values are the release's own, never an input value it does not publish.
type QuasiRelease struct {
	Column   string   `json:"column"`
	Level    int      `json:"level"`
	Levels   int      `json:"levels"`
	Distinct int      `json:"distinct"`
	Examples []string `json:"examples"`
}

// FileSummary names a file and its record count.
type FileSummary struct {
	Path   string `json:"path"`
	Format string `json:"format"`
	Rows   int    `json:"rows"`
	// Digest is a release file's SHA-256 ("sha256:" and hex), PartDigests a release
	// folder's, part by part (by name): what tells the release a report describes from
	// another (sanitize check --report). Set on a release report's output only.
	Digest      string            `json:"digest,omitempty"`
	PartDigests map[string]string `json:"part_digests,omitempty"`
}

// ModelSummary is the privacy model the release satisfies.
type ModelSummary struct {
	K int `json:"k"`
	// KDefault says the configuration gave no k and k is 1 (other models protect the
	// release).
	KDefault        bool             `json:"k_default,omitempty"`
	SuppressionRate float64          `json:"suppression_limit"`
	MaxSuppressed   int              `json:"max_suppressed_records"`
	LDiversity      []LDiversityIn   `json:"l_diversity,omitempty"`
	TCloseness      []TClosenessIn   `json:"t_closeness,omitempty"`
	BetaLikeness    []BetaLikenessIn `json:"beta_likeness,omitempty"`
	// Subset, DeltaPresence and KMap are the research subset and the models measured
	// against its population, when the configuration gives them.
	Subset        *SubsetIn        `json:"subset,omitempty"`
	DeltaPresence *DeltaPresenceIn `json:"delta_presence,omitempty"`
	KMap          *KMapIn          `json:"k_map,omitempty"`
	// Profitability is the game-theoretic model, when the configuration gives it.
	Profitability *ProfitabilityIn `json:"profitability,omitempty"`
}

// SubsetIn is the research subset a release is drawn from: the input is the
// population, the release holds the subset's records only.
type SubsetIn struct {
	Column     string `json:"column"`     // the identifier column that marks it
	Records    int    `json:"records"`    // the subset's records
	Population int    `json:"population"` // the input's records
}

// DeltaPresenceIn is the δ-presence requirement (Nergiz et al. 2007) the release
// meets: every released class holds a share of its population records within
// [Min, Max].
type DeltaPresenceIn struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// KMapIn is the k-map requirement the release meets: every released class is shared
// by at least K population records, counted in the input (no estimator) or estimated
// (El Emam & Dankar 2008, as ARX derives it): then the release is k-anonymous for
// DerivedK, with TypeIError the chance the estimate is wrong for a class.
type KMapIn struct {
	K            int     `json:"k"`
	Estimator    string  `json:"estimator,omitempty"`
	Significance float64 `json:"significance,omitempty"`
	DerivedK     int     `json:"derived_k,omitempty"`
	TypeIError   float64 `json:"type_i_error,omitempty"`
}

// LDiversityIn is an l-diversity requirement the release meets.
type LDiversityIn struct {
	Column  string            `json:"column"`
	Variant diversity.Variant `json:"variant"`
	L       float64           `json:"l"`
	C       float64           `json:"c,omitempty"`
	// Estimator is the entropy variant's estimator ("" for the other variants).
	Estimator diversity.Estimator `json:"estimator,omitempty"`
}

// TClosenessIn is a t-closeness requirement the release meets.
type TClosenessIn struct {
	Column   string             `json:"column"`
	T        float64            `json:"t"`
	Distance closeness.Distance `json:"distance"`
}

// BetaLikenessIn is a β-likeness requirement the release meets.
type BetaLikenessIn struct {
	Column  string                    `json:"column"`
	Beta    float64                   `json:"beta"`
	Variant closeness.LikenessVariant `json:"variant"`
}

// NodeLevel is the chosen generalization level of one quasi-identifier: Level from 0
// (the original values) to Levels − 1 (the top, every value *), said "level 2 of 0–4"
// (LevelOf) for Level 2 of a hierarchy of Levels 5.
type NodeLevel struct {
	Column string `json:"column"`
	Level  int    `json:"level"`  // 0 = original values … Levels − 1 = *
	Levels int    `json:"levels"` // how many levels the hierarchy has, original and "*" included
}

// PartitionStats is what a Mondrian partitioning did.
type PartitionStats struct {
	Partitions int `json:"partitions"` // released partitions (the classes)
	Splits     int `json:"splits"`     // partitions split on the way
}

// MetricSummary is the utility metric of the chosen node.
type MetricSummary struct {
	Name schema.Metric `json:"name"`
	// Aggregate is the loss metric's aggregate over the quasi-identifiers when the
	// configuration names one (arithmetic, geometric, sum or max).
	Aggregate schema.LossAggregate `json:"aggregate,omitempty"`
	// Weights is the loss's weight of each quasi-identifier the configuration names.
	Weights map[string]float64 `json:"weights,omitempty"`
	// GSFactor is ARX's generalization/suppression factor when the configuration
	// names one (loss and the entropy objectives; 0.5 when not named).
	GSFactor *float64 `json:"gs_factor,omitempty"`
	Value    float64  `json:"value"`
}

// LatticeStats is what the search did.
type LatticeStats struct {
	Size      int `json:"size"`
	Evaluated int `json:"evaluated"` // counted and checked against every model
	// MonotoneOnly were counted and checked against the monotone part of the models
	// only (under a model that is not monotone with suppression: see generalize.Result).
	MonotoneOnly int `json:"monotone_only"`
	Tagged       int `json:"tagged"`
	Bounded      int `json:"bounded"`
	// RolledUp is the source classes read by all the search's roll-ups (the records
	// themselves when a roll-up starts from the input): its work, whatever the nodes.
	RolledUp int `json:"rolled_up"`
}

// Verification is what the independent re-read of the written file measured.
type Verification struct {
	Rows       int `json:"rows"`
	Classes    int `json:"classes"`
	MinClass   int `json:"min_class"`
	Suppressed int `json:"suppressed"`
	// Sensitive holds, per protected sensitive column, the weakest published class:
	// never a sensitive value.
	Sensitive []SensitiveSummary `json:"sensitive,omitempty"`
	// Population is what the verifier measured against the research subset's
	// population (with privacy.subset).
	Population *PopulationSummary `json:"population,omitempty"`
	// Payout is what the verifier measured of the game-theoretic model with an
	// attack.
	Payout *PayoutSummary `json:"payout,omitempty"`
	// Released is what each column released as it is reveals about each protected
	// sensitive column.
	Released []ReleasedColumn `json:"released_columns,omitempty"`
}

// PersonsSummary is a release whose models count persons (privacy.privacy-unit), as
// the verifier counted them from the written file and the input: every model's k, l,
// t and β are in persons, the suppression limit in records. A person with records in
// several classes counts in each (and in the risk measures, whose classes' sizes are
// then their persons).
type PersonsSummary struct {
	Column   string  `json:"column"`             // the unit's column: its name, never an id
	Input    int     `json:"input_persons"`      // distinct persons of the input
	Released int     `json:"released"`           // persons with at least one record released
	MinClass int     `json:"min_class"`          // the published class of fewest persons
	AvgClass float64 `json:"avg_class"`          // persons per published class, on average
	Several  int     `json:"in_several_classes"` // released persons whose records lie in more than one class
	LostSome int     `json:"lost_some"`          // persons with at least one record suppressed
	LostAll  int     `json:"lost_all"`           // persons all of whose records were suppressed
	// MinGroup is, with a pseudonym (multirelational k-anonymity), the fewest released
	// persons sharing one set of classes (0 without).
	MinGroup int `json:"min_group,omitempty"`
	// Pseudonym, when the release holds the unit's column as a keyed pseudonym
	// (privacy.privacy-unit.pseudonym), says what it lets a researcher link.
	Pseudonym *PseudonymStatement `json:"pseudonym,omitempty"`
}

// PseudonymStatement says what the pseudonym a release holds in place of the privacy
// unit's id lets a researcher link. It never holds the key or anything of its file.
type PseudonymStatement struct {
	Column string       `json:"column"` // the column of pseudonyms, the unit's
	Key    PseudonymKey `json:"key"`
	Links  string       `json:"links"` // what the pseudonym links (PseudonymLinks)
}

// PseudonymKey is where a pseudonym's key came from.
type PseudonymKey string

// The pseudonym keys.
const (
	PseudonymKeyFile   PseudonymKey = "file"           // the key file's content: releases made with it link
	PseudonymKeyRandom PseudonymKey = "random per run" // drawn for the run and kept nowhere
)

// PseudonymLinks is what a pseudonym made with a key of the given kind links.
func PseudonymLinks(key PseudonymKey) string {
	within := "a person's records within this release, which share one pseudonym (multirelational k-anonymity: the persons with the same set of classes are at least k)"
	if key == PseudonymKeyFile {
		return within + "; releases made with the same key file link to each other, a person having the same pseudonym in each"
	}
	return within + "; the key was drawn for this run and kept nowhere, so the release links to no other"
}

// PopulationSummary is the released classes measured against the population: the
// least and greatest share δ of a class's population records that the release holds,
// and the smallest population count of a released class.
type PopulationSummary struct {
	DeltaMin           float64 `json:"delta_min"`
	DeltaMax           float64 `json:"delta_max"`
	SmallestPopulation int64   `json:"smallest_population_class"`
}

// SensitiveSummary is the weakest published class of a protected sensitive column:
// the measures of the models configured for it (Measures), the others left out (in
// JSON too: MarshalJSON).
type SensitiveSummary struct {
	Column      string             `json:"column"`
	MinDistinct int                `json:"min_distinct_l"` // l-diversity, distinct or recursive
	MinEntropyL float64            `json:"min_entropy_l"`  // l-diversity, entropy: exp of the smallest class entropy
	MaxEMD      float64            `json:"max_emd"`        // t-closeness
	Distance    closeness.Distance `json:"emd_distance"`
	// MaxGain is the largest relative gain of a value's share in a class over the
	// input's (β-likeness's measure).
	MaxGain float64 `json:"max_gain"`
	// MinPersonsL is, in persons (privacy.privacy-unit), the smallest of a class's
	// persons over the most persons holding one value: the largest l of distinct
	// l-diversity in persons every class meets.
	MinPersonsL float64 `json:"min_persons_l"`
	// Measures is which of the figures above the column's models require: the only
	// ones printed or written.
	Measures Measures `json:"-"`
}

// Stages is the wall time of each stage in milliseconds.
type Stages struct {
	Encode float64 `json:"encode"`
	Search float64 `json:"search"`
	Write  float64 `json:"write"`
	Verify float64 `json:"verify"`
	Total  float64 `json:"total"`
}

// Summary is the short human summary printed on stdout.
func (r *Report) Summary(w io.Writer) {
	if r.DifferentialPrivacy != nil {
		fmt.Fprintf(w, "released %d of %d records to %s (%d left out: not drawn into the sample, or in a class of fewer than k drawn records)\n", r.Output.Rows, r.Input.Rows, r.Output.Path, r.Suppressed)
	} else {
		fmt.Fprintf(w, "released %d of %d records to %s (%d suppressed, limit %d)\n", r.Output.Rows, r.Input.Rows, r.Output.Path, r.Suppressed, r.Model.MaxSuppressed)
	}
	if r.Output.Rows == 0 {
		fmt.Fprintf(w, "warning: %s\n", EmptyRelease)
	}
	kd := ""
	if r.Model.KDefault {
		kd = " (no k configured: the default)"
	}
	if p := r.Persons; p != nil {
		fmt.Fprintf(w, "k=%d%s holds in persons (%s): %d classes, the fewest persons in a class %d (the fewest records %d), on average %.1f persons (%.1f records) (verified from the written file)\n",
			r.Model.K, kd, p.Column, r.Verified.Classes, p.MinClass, r.Verified.MinClass, p.AvgClass, r.AvgClass)
		fmt.Fprintf(w, "persons: %d of %d released, %d with records in several classes; %d lost some of their records, %d all\n", p.Released, p.Input, p.Several, p.LostSome, p.LostAll)
		if ps := p.Pseudonym; ps != nil {
			fmt.Fprintf(w, "pseudonym: %s holds a keyed pseudonym per person (key: %s); it links %s\n", ps.Column, ps.Key, ps.Links)
		}
	} else {
		fmt.Fprintf(w, "k=%d%s holds: %d classes, smallest %d, average %.1f (verified from the written file)\n", r.Model.K, kd, r.Verified.Classes, r.Verified.MinClass, r.AvgClass)
	}
	r.dpSummary(w)
	r.populationSummary(w)
	r.profitSummary(w)
	r.localSummary(w)
	r.seriesSummary(w)
	if r.Partitions != nil {
		fmt.Fprintf(w, "mondrian: %d partitions after %d splits; %s %.4f; %.0f ms\n", r.Partitions.Partitions, r.Partitions.Splits, r.Metric.Name, r.Metric.Value, r.StagesMS.Total)
	} else {
		// As everywhere (LevelOf): level 0 is the original values, and a hierarchy of
		// n levels has levels 0 to n−1, the top n−1 every value as *.
		fmt.Fprintf(w, "node (level 0 = original values, the top = *):")
		for i, n := range r.Node {
			sep := ","
			if i == 0 {
				sep = ""
			}
			fmt.Fprintf(w, "%s %s %s", sep, n.Column, LevelOf(n.Level, n.Levels))
		}
		monotone := ""
		if r.Lattice.MonotoneOnly > 0 {
			monotone = fmt.Sprintf(", %d for the monotone part only", r.Lattice.MonotoneOnly)
		}
		if r.DifferentialPrivacy != nil { // one node, searched for by SafePub's walk or given: no lattice search
			fmt.Fprintf(w, "\n%.0f ms\n", r.StagesMS.Total)
		} else {
			fmt.Fprintf(w, "\n%s %.4f; lattice %d nodes, %d evaluated%s, %d tagged, %d bounded; %.0f ms\n", r.Metric.Name, r.Metric.Value, r.Lattice.Size, r.Lattice.Evaluated, monotone, r.Lattice.Tagged, r.Lattice.Bounded, r.StagesMS.Total)
		}
	}
	u := r.Utility
	fmt.Fprintf(w, "utility: loss %.4f, NCP %.4f, discernibility %.4g, C_AVG %.2f, non-uniform entropy %.4g bits\n", u.Loss, u.NCP, u.Discernibility, u.CAvg, u.NonUniformEntropy)
	for _, s := range r.Verified.Sensitive {
		fmt.Fprint(w, sensitiveLine(s.Column+": ", s))
	}
	releasedSummary(w, r.Verified.Released)
}

// EmptyRelease is the warning for a release that holds no record.
const EmptyRelease = "the release holds no record: every record was suppressed"

// WriteJSON writes v as indented JSON to w.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// populationSummary prints the research subset's line and the models measured
// against its population, and an estimated k-map's derived k.
func (r *Report) populationSummary(w io.Writer) {
	m := r.Model
	if s := m.Subset; s != nil {
		fmt.Fprintf(w, "research subset: %d of the input's %d records (column %q); the release holds only them\n", s.Records, s.Population, s.Column)
	}
	if p := r.Verified.Population; p != nil {
		if d := m.DeltaPresence; d != nil {
			fmt.Fprintf(w, "δ-presence [%g, %g] holds: every released class is %.4g to %.4g of its population records (verified)\n", d.Min, d.Max, p.DeltaMin, p.DeltaMax)
		}
		if k := m.KMap; k != nil && k.Estimator == "" {
			fmt.Fprintf(w, "k-map k=%d holds: the smallest released class has %d population records (verified)\n", k.K, p.SmallestPopulation)
		}
	}
	if k := m.KMap; k != nil && k.Estimator != "" {
		fmt.Fprintf(w, "k-map k=%d estimated (%s, significance %g) as k-anonymity with k=%d (type I error %.3g)\n", k.K, k.Estimator, k.Significance, k.DerivedK, k.TypeIError)
	}
}
