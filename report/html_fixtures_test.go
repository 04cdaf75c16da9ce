package report

import (
	"bytes"

	"sanitizer/dphist"
	"sanitizer/generalize"
)

// The HTML reports' test values: releases, risk analyses and manifests of the sizes
// and shapes the tool writes (figures of an Adult release at k = 5), built here.

// hostile is a column name that HTML must not take for markup.
const hostile = `<script>alert("x")</script> & <b>co`

// htmlCase is one rendered page and what it must show.
type htmlCase struct {
	name   string
	render func(*bytes.Buffer) error
	want   []string // substrings of the HTML, as escaped
	svgs   int      // the charts it must hold
	empty  []string // sentences that stand for empty charts
}

func adultSizesIn() []SizeBucket {
	return []SizeBucket{{1, 1, 14892, 14892}, {2, 2, 2200, 4400}, {3, 4, 900, 3050}, {5, 9, 500, 3200}, {10, 19, 180, 2400},
		{20, 49, 60, 1700}, {50, 99, 12, 420}, {100, 999, 1, 100}, {1000, 0, 0, 0}}
}

func adultSizesOut() []SizeBucket {
	return []SizeBucket{{1, 1, 0, 0}, {2, 2, 0, 0}, {3, 4, 0, 0}, {5, 9, 400, 2340}, {10, 19, 250, 3020},
		{20, 49, 170, 5100}, {50, 99, 60, 4000}, {100, 999, 30, 10356}, {1000, 0, 2, 4000}}
}

// bands are the default risk bands with the given shares, lowest risk first.
func bands(shares ...float64) []RiskBand {
	bounds := []float64{0, 0.001, 0.01, 0.05, 0.1, 0.2, 1.0 / 3, 0.5, 1}
	out := make([]RiskBand, len(bounds)-1)
	for i := range out {
		out[i] = RiskBand{Above: bounds[i], UpTo: bounds[i+1]}
		if i < len(shares) {
			out[i].Records = shares[i]
		}
	}
	return out
}

// adultRisk is the risk of Adult and of its k = 5 release; population says whether the
// population's figures are given.
func adultRisk(population bool) *RiskReport {
	rr := &RiskReport{
		Thresholds: []float64{0.2, 0.1, 0.05},
		Input: RiskMeasures{Records: 30162, Classes: 18745, HighestRisk: 1, AverageRisk: 18745.0 / 30162, RecordsAtHighest: 14892.0 / 30162,
			RecordsAtRisk: []float64{0.7407, 0.8468, 0.9264}, SampleUniqueness: 14892.0 / 30162,
			RecordRisk: bands(0, 0.0033, 0.0703, 0.0796, 0.1061, 0.1011, 0.1459, 0.4937), ClassSizes: adultSizesIn()},
		Release: &RiskMeasures{Records: 28816, Classes: 912, HighestRisk: 0.2, AverageRisk: 912.0 / 28816, RecordsAtHighest: 0.0104,
			RecordsAtRisk: []float64{0, 0.0812, 0.186}, SampleUniqueness: 0,
			RecordRisk: bands(0.1388, 0.3594, 0.3158, 0.1048, 0.0812), ClassSizes: adultSizesOut()},
		Models: []RiskModelCheck{
			{Model: "average-risk", Limit: 0.05, Measured: 912.0 / 28816, Holds: true},
			{Model: "records-at-risk", Limit: 0.1, Measured: 0.0812, Holds: true, Threshold: 0.1},
		},
	}
	if population {
		rr.Population = &PopulationFigures{Size: 3.2e6, SamplingFraction: 30162 / 3.2e6}
		rr.Input.Journalist = &JournalistRisk{Highest: 1, Average: 0.6215, UpperBound: true}
		rr.Input.Marketer = &MarketerRisk{Share: 0.6215, UpperBound: true}
		rr.Input.PopulationUniqueness = []UniquenessEstimate{{"dankar", 0.0421, true, "pitman"}, {"zayatz", 0.0398, true, ""}, {"pitman", 0.0421, true, ""}, {"snb", 0, false, ""}}
		rr.Release.Journalist = &JournalistRisk{Highest: 0.0021, Average: 0.00035}
		rr.Release.Marketer = &MarketerRisk{Share: 0.00031}
		rr.Release.PopulationUniqueness = []UniquenessEstimate{{"dankar", 0.000033, true, "pitman"}, {"zayatz", 0.00004, true, ""}, {"pitman", 0.000033, true, ""}, {"snb", 0, false, ""}}
		rr.Models = append(rr.Models, RiskModelCheck{Model: "population-uniqueness", Limit: 0.001, Measured: 0.000033, Holds: true, Estimator: "dankar"})
	}
	return rr
}

// adultReport is the report of a k = 5 release of Adult, its risk measured with or
// without the population.
func adultReport(population bool) *Report {
	return &Report{
		Tool: "sanitize", Version: "v1.4.0", Dataset: "adult",
		ConfigDigest:     "sha256:39ba18d4a2679cbb68a5c1c62d21addac272be9e808f9c2c3c8e92474030d2c6",
		HierarchyDigests: map[string]string{"hierarchies/education.csv": "sha256:12f888da", "hierarchies/age.csv": "sha256:35219b44"},
		Input:            FileSummary{Path: "adult.csv", Format: "csv", Rows: 30162},
		Output:           FileSummary{Path: "release.csv", Format: "csv", Rows: 28816},
		Model: ModelSummary{K: 5, SuppressionRate: 0.05, MaxSuppressed: 1508,
			LDiversity: []LDiversityIn{{Column: "occupation", Variant: "recursive", L: 3, C: 4}},
			TCloseness: []TClosenessIn{{Column: "salary", T: 0.2, Distance: "equal"}}},
		Algorithm: "optimal",
		Node: []NodeLevel{{"age", 2, 5}, {"sex", 0, 2}, {"race", 1, 2}, {"marital-status", 1, 3}, {"education", 2, 4},
			{"native-country", 2, 3}, {"workclass", 1, 3}},
		Classes: 912, MinClass: 5, AvgClass: 31.596, Suppressed: 1346,
		Metric:  MetricSummary{Name: "loss", Value: 0.4127},
		Utility: generalize.Metrics{Loss: 0.4127, NCP: 0.3981, Discernibility: 1.2345678e8, CAvg: 6.3192, NonUniformEntropy: 412345.678},
		Lattice: LatticeStats{Size: 4320, Evaluated: 211, Tagged: 1490, Bounded: 2610, RolledUp: 98000},
		Verified: Verification{Rows: 28816, Classes: 912, MinClass: 5, Suppressed: 1346,
			Sensitive: []SensitiveSummary{{Column: "occupation", MinDistinct: 3, MinEntropyL: 2.71, Distance: "equal"},
				{Column: "salary", MinDistinct: 1, MinEntropyL: 1, MaxEMD: 0.1873, Distance: "equal"}}},
		Generalized: []QuasiRelease{
			{"age", 2, 5, 8, []string{"[10,19]", "[20,29]", "[30,39]"}}, {"sex", 0, 2, 2, []string{"Female", "Male"}},
			{"race", 1, 2, 1, []string{"*"}}, {"marital-status", 1, 3, 3, []string{"spouse present", "never married"}},
			{"education", 2, 4, 3, []string{"primary", "secondary", "higher"}}, {"native-country", 2, 3, 1, []string{"*"}},
			{"workclass", 1, 3, 3, []string{"private", "government", "self-employed"}}},
		Risk:     adultRisk(population),
		StagesMS: Stages{Encode: 41.2, Search: 120.7, Write: 33.1, Verify: 52.4, Total: 247.4},
	}
}

// mondrianReport is a Mondrian release of a small table, its risk without the
// population and without risk models, with a hostile column name.
// subsetReport is a release of a research subset of Adult under δ-presence and k-map.
func subsetReport() *Report {
	r := adultReport(false)
	r.Model.Subset = &SubsetIn{Column: "in_study", Records: 2955, Population: 30162}
	r.Model.DeltaPresence = &DeltaPresenceIn{Min: 0, Max: 0.5}
	r.Model.KMap = &KMapIn{K: 5}
	r.Verified.Population = &PopulationSummary{DeltaMin: 0.0215, DeltaMax: 0.4444, SmallestPopulation: 5}
	return r
}

func mondrianReport() *Report {
	r := &Report{
		Tool: "sanitize", Version: "v1.4.0", Dataset: "ward <admissions> & co",
		ConfigDigest: "sha256:5d5745af",
		Input:        FileSummary{Path: "ward.parquet", Format: "parquet", Rows: 1200},
		Output:       FileSummary{Path: "ward-release.parquet", Format: "parquet", Rows: 1200},
		Model:        ModelSummary{K: 10, SuppressionRate: 0, MaxSuppressed: 0, LDiversity: []LDiversityIn{{Column: "diagnosis", Variant: "entropy", L: 2}}},
		Algorithm:    "mondrian", Partitions: &PartitionStats{Partitions: 96, Splits: 95},
		Classes: 96, MinClass: 10, AvgClass: 12.5,
		Metric:  MetricSummary{Name: "ncp", Value: 0.0812},
		Utility: generalize.Metrics{Loss: 0.0931, NCP: 0.0812, Discernibility: 15120, CAvg: 1.25, NonUniformEntropy: 3012.5},
		Verified: Verification{Rows: 1200, Classes: 96, MinClass: 10,
			Sensitive: []SensitiveSummary{{Column: "diagnosis", MinDistinct: 3, MinEntropyL: 2.3, Distance: "equal"}}},
		Generalized: []QuasiRelease{{"age", -1, 5, 40, []string{"[20,24]", "[25,31]"}}, {hostile, -1, 6, 12, []string{"021**", "<i>x</i>"}}},
		StagesMS:    Stages{Total: 12},
	}
	rr := adultRisk(false)
	rr.Models = nil
	rr.Input = RiskMeasures{Records: 1200, Classes: 1100, HighestRisk: 1, AverageRisk: 1100.0 / 1200, RecordsAtHighest: 1000.0 / 1200,
		RecordsAtRisk: []float64{0.95, 0.97, 0.99}, SampleUniqueness: 1000.0 / 1200, RecordRisk: bands(0, 0, 0.01, 0.02, 0.02, 0.05, 0.07, 1000.0/1200),
		ClassSizes: []SizeBucket{{1, 1, 1000, 1000}, {2, 2, 50, 100}, {3, 4, 30, 100}, {5, 9, 0, 0}, {10, 19, 0, 0}, {20, 49, 0, 0}, {50, 99, 0, 0}, {100, 999, 0, 0}, {1000, 0, 0, 0}}}
	rr.Release = &RiskMeasures{Records: 1200, Classes: 96, HighestRisk: 0.1, AverageRisk: 0.08, RecordsAtHighest: 0.5,
		RecordsAtRisk: []float64{0, 0, 1}, RecordRisk: bands(0, 0, 0, 1),
		ClassSizes: []SizeBucket{{1, 1, 0, 0}, {2, 2, 0, 0}, {3, 4, 0, 0}, {5, 9, 0, 0}, {10, 19, 96, 1200}, {20, 49, 0, 0}, {50, 99, 0, 0}, {100, 999, 0, 0}, {1000, 0, 0, 0}}}
	r.Risk = rr
	return r
}

// emptyReport is a release in which every record was suppressed.
func emptyReport() *Report {
	r := adultReport(false)
	r.Dataset = "tiny"
	r.Input.Rows, r.Output.Rows, r.Suppressed, r.Classes, r.MinClass, r.AvgClass = 4, 0, 4, 0, 0, 0
	r.Model.MaxSuppressed, r.Model.SuppressionRate = 4, 1
	r.Verified = Verification{Suppressed: 4}
	r.Generalized = []QuasiRelease{{Column: "age", Level: 4, Levels: 5}, {Column: "sex", Level: 1, Levels: 2}}
	r.Node = []NodeLevel{{"age", 4, 5}, {"sex", 1, 2}}
	r.Model.LDiversity, r.Model.TCloseness = nil, nil
	r.Utility = generalize.Metrics{Loss: 1, NCP: 1, Discernibility: 16}
	r.Risk = &RiskReport{Thresholds: []float64{0.2, 0.1, 0.05},
		Input:   RiskMeasures{Records: 4, Classes: 4, HighestRisk: 1, AverageRisk: 1, RecordsAtHighest: 1, RecordsAtRisk: []float64{1, 1, 1}, SampleUniqueness: 1, RecordRisk: bands(0, 0, 0, 0, 0, 0, 0, 1), ClassSizes: []SizeBucket{{1, 1, 4, 4}}},
		Release: &RiskMeasures{RecordsAtRisk: []float64{0, 0, 0}, RecordRisk: bands(), ClassSizes: []SizeBucket{{1, 1, 0, 0}}}}
	return r
}

// noRiskReport is a release whose report holds no risk figures.
func noRiskReport() *Report {
	r := adultReport(false)
	r.Risk = nil
	r.Generalized = nil // an older report: the node only
	return r
}

// admissionsRisk is the risk of an admissions table counted in persons (a class's
// size is its persons, a person counted in each class they have records in) and of its
// k = 5 release in persons: no population (its figures count records), the
// highest-risk model in persons.
func admissionsRisk() *RiskReport {
	sizes := func(b ...SizeBucket) []SizeBucket {
		out := []SizeBucket{{1, 1, 0, 0}, {2, 2, 0, 0}, {3, 4, 0, 0}, {5, 9, 0, 0}, {10, 19, 0, 0}, {20, 49, 0, 0}, {50, 99, 0, 0}, {100, 999, 0, 0}, {1000, 0, 0, 0}}
		for _, x := range b {
			for i := range out {
				if out[i].Min == x.Min {
					out[i] = x
				}
			}
		}
		return out
	}
	return &RiskReport{
		Thresholds: []float64{0.2, 0.1, 0.05},
		Input: RiskMeasures{Records: 9104, Classes: 8950, HighestRisk: 1, AverageRisk: 8950.0 / 9104, RecordsAtHighest: 8820.0 / 9104,
			RecordsAtRisk: []float64{1, 1, 1}, SampleUniqueness: 8820.0 / 9104, RecordRisk: bands(0, 0, 0, 0, 0, 64.0/9104, 220.0/9104, 8820.0/9104),
			ClassSizes: sizes(SizeBucket{1, 1, 8820, 8820}, SizeBucket{2, 2, 110, 220}, SizeBucket{3, 4, 20, 64})},
		Release: &RiskMeasures{Records: 2996, Classes: 140, HighestRisk: 0.2, AverageRisk: 140.0 / 2996, RecordsAtHighest: 50.0 / 2996,
			RecordsAtRisk: []float64{0, 180.0 / 2996, 930.0 / 2996}, RecordRisk: bands(0, 0, 2066.0/2996, 750.0/2996, 180.0/2996),
			ClassSizes: sizes(SizeBucket{5, 9, 30, 180}, SizeBucket{10, 19, 45, 750}, SizeBucket{20, 49, 55, 1566}, SizeBucket{50, 99, 10, 500})},
		Models: []RiskModelCheck{{Model: "highest-risk", Limit: 0.2, Measured: 0.2, Holds: true}},
	}
}

// admissionsPersons is the persons of a k = 5 release of 9,412 admissions of 2,000
// patients, counted by the verifier; pseudonym is its key's kind ("": no pseudonym).
func admissionsPersons(pseudonym PseudonymKey) *PersonsSummary {
	p := &PersonsSummary{Column: "patient_id", Input: 2000, Released: 1968, MinClass: 5, AvgClass: 2996.0 / 140, Several: 701, LostSome: 57, LostAll: 32}
	if pseudonym != "" {
		p.Pseudonym = &PseudonymStatement{Column: "patient_id", Key: pseudonym, Links: PseudonymLinks(pseudonym)}
	}
	return p
}

// personsReport is a k = 5 release of admissions counted in persons: with a pseudonym
// (then k alone, as the configuration requires), or with distinct l-diversity,
// t-closeness and β-likeness in persons on the diagnosis.
func personsReport(pseudonym PseudonymKey) *Report {
	r := &Report{
		Tool: "sanitize", Version: "v1.4.0", Dataset: "ward-admissions", ConfigDigest: "sha256:7be1c2a0", CreatedUTC: "2026-11-25T09:30:00Z",
		HierarchyDigests: map[string]string{"hierarchies/sex.csv": "sha256:0c1d2e3f"},
		Input:            FileSummary{Path: "data/admissions.csv", Format: "csv", Rows: 9412},
		Output:           FileSummary{Path: "out/admissions-linked.csv", Format: "csv", Rows: 9101},
		Model:            ModelSummary{K: 5, SuppressionRate: 0.05, MaxSuppressed: 470},
		Algorithm:        "optimal",
		Node:             []NodeLevel{{"age", 2, 4}, {"sex", 0, 2}, {"admitted", 2, 4}},
		Classes:          140, MinClass: 9, AvgClass: 9101.0 / 140, Suppressed: 311,
		Metric:   MetricSummary{Name: "loss", Value: 0.3712},
		Utility:  generalize.Metrics{Loss: 0.3712, NCP: 0.3305, Discernibility: 1.0125e6, CAvg: 13.0, NonUniformEntropy: 40512.25},
		Lattice:  LatticeStats{Size: 60, Evaluated: 21, Tagged: 25, Bounded: 14, RolledUp: 30000},
		Verified: Verification{Rows: 9101, Classes: 140, MinClass: 9, Suppressed: 311},
		Persons:  admissionsPersons(pseudonym),
		Generalized: []QuasiRelease{{"age", 2, 4, 5, []string{"[20,39]", "[40,59]"}}, {"sex", 0, 2, 2, []string{"F", "M"}},
			{"admitted", 2, 4, 6, []string{"2021", "2022"}}},
		Risk:     admissionsRisk(),
		StagesMS: Stages{Encode: 12, Search: 40, Write: 9, Verify: 15, Total: 76},
	}
	if pseudonym == "" {
		r.Output.Path = "out/admissions.csv"
		r.Model.LDiversity = []LDiversityIn{{Column: "diagnosis", Variant: "distinct", L: 3}}
		r.Model.TCloseness = []TClosenessIn{{Column: "diagnosis", T: 0.3, Distance: "equal"}}
		r.Model.BetaLikeness = []BetaLikenessIn{{Column: "diagnosis", Beta: 1.5, Variant: "basic"}}
		r.Verified.Sensitive = []SensitiveSummary{{Column: "diagnosis", MinPersonsL: 3.5, MaxEMD: 0.21, MaxGain: 1.2, Distance: "equal",
			Measures: MeasurePersonsL | MeasureEMD | MeasureGain}}
	}
	return r
}

// personsAnalysis is sanitize risk on admissions counted in persons, with its release;
// the unit's column has a hostile name.
func personsAnalysis() *RiskAnalysis {
	p := admissionsPersons("")
	p.Column = hostile
	rr := admissionsRisk()
	rr.QuasiIdentifiers = []AttributeRisk{{[]string{"age"}, 0.0085, 0.9712}, {[]string{"sex"}, 0.00021, 0.4998}, {[]string{"admitted"}, 0.0771, 0.9989},
		{[]string{"age", "sex"}, 0.0169, 0.9856}, {[]string{"age", "admitted"}, 0.6512, 0.99997}, {[]string{"sex", "admitted"}, 0.1402, 0.9994}}
	return &RiskAnalysis{Tool: "sanitize", Version: "v1.4.0", Dataset: "ward-admissions", ConfigDigest: "sha256:7be1c2a0", CreatedUTC: "2026-11-25T09:40:00Z",
		Input: FileSummary{Path: "data/admissions.csv", Format: "csv", Rows: 9412}, Release: &FileSummary{Path: "out/admissions.csv", Format: "csv", Rows: 9101},
		Quasi: []string{"age", "sex", "admitted"}, Risk: *rr,
		Persons: &RiskPersons{Column: hostile, Input: 2000, Release: p}}
}

// adultAnalysis is sanitize risk on Adult, with its release or without.
func adultAnalysis(release bool) *RiskAnalysis {
	a := &RiskAnalysis{Tool: "sanitize", Version: "v1.4.0", Dataset: "adult", ConfigDigest: "sha256:39ba18d4",
		HierarchyDigests: map[string]string{"hierarchies/age.csv": "sha256:35219b44"}, CreatedUTC: "2026-11-25T09:12:44Z",
		Input: FileSummary{Path: "adult.csv", Format: "csv", Rows: 30162},
		Quasi: []string{"age", "sex", "race", hostile, "education"},
	}
	rr := adultRisk(release)
	if !release {
		rr.Release, rr.Models = nil, nil
	} else {
		a.Release = &FileSummary{Path: "release.csv", Format: "csv", Rows: 28816}
		rr.Models[0].Holds = false // a release that misses one: the page must say so
	}
	rr.QuasiIdentifiers = []AttributeRisk{
		{[]string{"age"}, 0.0024, 0.9821}, {[]string{"sex"}, 0.000066, 0.4417}, {[]string{"race"}, 0.00017, 0.2533},
		{[]string{hostile}, 0.0011, 0.9132}, {[]string{"education"}, 0.00053, 0.8671},
		{[]string{"age", "sex"}, 0.0047, 0.9902}, {[]string{"age", "race"}, 0.0061, 0.9866}, {[]string{"age", hostile}, 0.0389, 0.9985},
		{[]string{"age", "education"}, 0.0312, 0.9977}, {[]string{"sex", "race"}, 0.00033, 0.5866}, {[]string{"sex", hostile}, 0.0021, 0.9514},
		{[]string{"sex", "education"}, 0.0011, 0.9261}, {[]string{"race", hostile}, 0.0033, 0.9398}, {[]string{"race", "education"}, 0.0021, 0.9007},
		{[]string{hostile, "education"}, 0.0142, 0.9890},
	}
	a.Risk = *rr
	return a
}

// hospitalManifest is the DP manifest of the hospital sample, with its ledger or not.
func hospitalManifest(ledger bool) *Manifest {
	m := &Manifest{Tool: "sanitize", Version: "v1.4.0", Dataset: "hospital-sample", ConfigDigest: "sha256:5d5745af", CreatedUTC: "2026-11-25T00:31:47Z",
		Neighbours: "add-remove", PrivacyUnit: &ManifestUnit{Column: "patient_id", MaxRowsPerUnit: 3, Seed: 1},
		Epsilon: 2.5, Delta: 1.01e-7,
		Outputs: []ManifestOutput{
			{Name: "age-by-diagnosis", File: "age-by-diagnosis.csv", Kind: "histogram", Columns: []string{"age", "diagnosis"}, Cells: 300,
				Mechanism: "laplace", Epsilon: 0.5, Neighbours: "add-remove", L0: 1, LInf: 3, L1: 3, L2: 3, NoiseScale: 6, HalfWidth95: 18},
			{Name: "pairs", File: "pairs.csv", Kind: "marginals", Columns: []string{"age", "sex", hostile},
				Marginals: [][]string{{"age", "sex"}, {"age", hostile}, {"sex", hostile}}, Cells: 80, Mechanism: "gaussian", Epsilon: 0.5, Delta: 1e-7,
				NoiseScale: 46.76537180435969, HalfWidth95: 92, Post: []string{"consistent", "clamp", "round"}},
			{Name: "stay", File: "stay.parquet", Kind: "aggregate", Columns: []string{"diagnosis"}, Cells: 25, Mechanism: "laplace", Epsilon: 0.5,
				Value: "stay_days", Bounds: []float64{0, 60}, Ranks: []float64{0.5, 0.9},
				Stats: []dphist.StatBudget{{Stat: "count", Epsilon: 0.125, HalfWidth95: 72}, {Stat: "sum", Epsilon: 0.125, HalfWidth95: 4313.854473917747},
					{Stat: "mean", Epsilon: 0.125}, {Stat: "quantiles", Epsilon: 0.125}}},
			{Name: "synthetic", File: "synthetic.csv", Kind: "synthetic", Columns: []string{"age", "sex", "diagnosis"}, Cells: 4988,
				Mechanism: "exponential selection + gaussian measurements (aim, zCDP)", Epsilon: 1, Delta: 1e-9,
				Synthetic: &dphist.SynthReport{Method: "aim", Rho: 0.014973057673586254, Rounds: 6, Measured: make([]dphist.SynthMeasure, 10), ModelSize: 81, Rows: 4988}},
		},
	}
	if ledger {
		m.Ledger = &ManifestLedger{File: "ledger.json", EpsilonSpent: 6, DeltaSpent: 3.01e-7, EpsilonTotal: 10, DeltaTotal: 1e-6, Recorded: "2026-11-25T00:31:47Z",
			History: []LedgerSpend{
				{Time: "2026-09-01T08:00:00Z", Epsilon: 1.5, Delta: 1e-7, Outputs: []string{"age-by-diagnosis", "pairs"}},
				{Time: "2026-10-03T08:00:00Z", Epsilon: 2, Delta: 1e-7, Outputs: []string{"synthetic"}},
				{Time: "2026-11-25T00:31:47Z", Epsilon: 2.5, Delta: 1.01e-7, Outputs: []string{"age-by-diagnosis", "pairs", "stay", "synthetic"}},
			}}
	}
	return m
}

// adultSeries is night 4 of a nightly series of Adult's k = 5 releases (the node
// coarser in age and education from night 3 on), under series.removals: retire (rows
// retired) or allow (three groups exposed tonight, one of them a group tonight's
// release no longer publishes).
func adultSeries(removals string) *SeriesSummary {
	node := func(age, education int) []int { return []int{age, 0, 1, 1, education, 2, 1} }
	s := &SeriesSummary{State: "nightly/adult.series.json", Series: "5f0c2a9e41d87b36a0e4c1f9d2b7e8a3", Night: 4, Removals: removals,
		Added: 212, Removed: 9, Deferred: 37, Withheld: 51, WaitingClasses: 6, OldestWait: 3, Retired: 23,
		Quasi: []string{"age", "sex", "race", "marital-status", "education", "native-country", "workclass"},
		History: []SeriesRecord{
			{Night: 1, Time: "2026-11-22T02:00:07Z", Node: node(1, 1), Released: 28190, Deferred: 41},
			{Night: 2, Time: "2026-11-23T02:00:05Z", Node: node(1, 1), Released: 28413, Deferred: 58, Removed: 5},
			{Night: 3, Time: "2026-11-24T02:00:09Z", Node: node(2, 2), Released: 28631, Deferred: 44, Removed: 12},
			{Night: 4, Time: "2026-11-25T02:00:04Z", Node: node(2, 2), Released: 28816, Deferred: 37, Removed: 9},
		}}
	if removals == "allow" {
		s.Retired, s.Exposed = 0, []int{3, 17, -1}
	}
	s.Learns = SeriesLearns(s, 5, false)
	return s
}

// seriesReport is adultReport(true) as night 4 of adultSeries(removals).
func seriesReport(removals string) *Report {
	r := adultReport(true)
	r.Series = adultSeries(removals)
	return r
}

// personsSeriesReport is personsReport("") as night 3 of a series counted in persons
// under series.removals: refuse, the node coarser in admitted from night 2 on, nothing
// deferred or waiting tonight.
func personsSeriesReport() *Report {
	r := personsReport("")
	s := &SeriesSummary{State: "/var/lib/sanitize/admissions.json", Series: "0d9be1f2a3c4b5d6e7f8091a2b3c4d5e", Night: 3, Removals: "refuse",
		Added: 64, Removed: 0, Quasi: []string{"age", "sex", "admitted"},
		History: []SeriesRecord{
			{Night: 1, Time: "2026-11-23T01:30:00Z", Node: []int{2, 0, 1}, Released: 8990, Deferred: 12},
			{Night: 2, Time: "2026-11-24T01:30:00Z", Node: []int{2, 0, 2}, Released: 9037},
			{Night: 3, Time: "2026-11-25T01:30:00Z", Node: []int{2, 0, 2}, Released: 9101},
		}}
	s.Learns = SeriesLearns(s, 5, true)
	r.Series = s
	return r
}

// htmlCases are every page the tests render, with what each must show.
func htmlCases() []htmlCase {
	rel := func(r *Report) func(*bytes.Buffer) error {
		return func(b *bytes.Buffer) error { return WriteReleaseHTML(b, r) }
	}
	ana := func(a *RiskAnalysis) func(*bytes.Buffer) error {
		return func(b *bytes.Buffer) error { return WriteRiskHTML(b, a) }
	}
	man := func(m *Manifest) func(*bytes.Buffer) error {
		return func(b *bytes.Buffer) error { return WriteManifestHTML(b, m) }
	}
	return append([]htmlCase{
		{"release-population", rel(adultReport(true)), []string{
			"28,816 records of adult.csv were released as release.csv (csv); 1,346 (4.5%) were withheld",
			"k-anonymity (k = 5): every group of records that share their age, sex, race, marital-status, education, native-country and workclass holds at least 5 records",
			"Recursive (c,l)-diversity on occupation (c = 4, l = 3)", "t-closeness on salary (t = 0.2)",
			"Average risk: the records&#39; average re-identification risk is at most 5% (1 in 20); measured 3.2% (1 in 32).",
			"Records at risk: at most 10% of the records have a re-identification risk above 10%; measured 8.1%.",
			"Population uniqueness: at most 0.1% of the population is estimated (by Dankar&#39;s rule)",
			"0.0033% (Pitman&#39;s model)", "≤ 100%<", "0.21% (1 in 476)", "0.031%",
			"20% (1 in 5)", "3.2% (1 in 32)", "62.1% (1 in 1.6)", "49.4%", "30,162", "18,745", "912",
			"level 2 of 0–4", "<code class=\"ex\">[20,29]</code>", "41.3%", "39.8%", "123,456,780", "6.32", "412,345.68 bits",
			"largest EMD 0.187", "smallest group 5 records", "4,320 combinations", "211 were counted", "1,490 were settled", "2,610 were skipped",
			"sha256:39ba18d4a2679cbb68a5c1c62d21addac272be9e808f9c2c3c8e92474030d2c6", "hierarchies/age.csv", "v1.4.0", "247 ms",
			"sample of 0.94% of a population of 3,200,000 people", "50%–100% (groups of 1)", "20%–33.3% (groups of 3–4)", "0.1%–1% (groups of 100–999)",
			"1 (unique)", "1,000 or more", "35.9%", "10,356",
		}, releaseCharts + 3 + 1, nil},
		{"release-subset", rel(subsetReport()), []string{
			"Research subset: the input (30,162 records) is the population, and only the 2,955 records marked in in_study were released",
			"δ-presence (δ from 0 to 0.5): every released group holds between 0% and 50% of the population&#39;s records with its values",
			"k-map (k = 5): every released group&#39;s values are shared by at least 5 people of the population",
			"shares from 2.1% to 44.4% (the verifier counted the population)", "smallest: 5 population records",
		}, releaseCharts, nil},
		{"release-kmap-estimated", rel(func() *Report {
			r := adultReport(false)
			r.Model.KMap = &KMapIn{K: 20, Estimator: "zero-truncated-poisson", Significance: 0.01, DerivedK: 6, TypeIError: 0.0037}
			return r
		}()), []string{"k-map (k = 20), estimated: the population&#39;s records are not at hand, so the zero truncated poisson estimator turns k-map into k-anonymity with k = 6 in the release"}, releaseCharts, nil},
		{"release-profitability-attack", rel(func() *Report {
			r := adultReport(false)
			r.Model.Profitability = &ProfitabilityIn{Attacker: "prosecutor", Attack: true, PublisherBenefit: 1200, PublisherLoss: 3000, AdversaryGain: 120, AdversaryCost: 20}
			r.Verified.Payout = &PayoutSummary{LeastPayout: 65.279}
			return r
		}()), []string{
			"Game-theoretic model (Wan et al. 2015): publishing a record earns 1200, a re-identified record costs 3000; an adversary who knows that a person is in this release gains 120 per re-identification and pays 20 per attempt.",
			"Attacks may pay the adversary, but every released group leaves the publisher a positive expected payout per record",
			"profitability (attacks allowed)", "every group&#39;s expected payout per record above 0", "least: 65.279",
		}, releaseCharts, nil},
		{"release-profitability-no-attack", rel(func() *Report {
			r := subsetReport()
			r.Model.Profitability = &ProfitabilityIn{Attacker: "journalist", PublisherBenefit: 1200, PublisherLoss: 300, AdversaryGain: 120, AdversaryCost: 20, NoAttackK: 7}
			return r
		}()), []string{
			"an adversary who does not know whether a person is in this release, only in the population",
			"No attack pays: every released group holds at least 7 population records",
			"profitability (no attack)", "every group of at least 7 population records", "smallest: 5 population records",
		}, releaseCharts, nil},
		{"release-local-recoding", rel(func() *Report {
			r := adultReport(false)
			r.LocalRecoding = &LocalRecodingSummary{Iterations: 100, GSFactor: 0.05, Adaption: 0.05, Passes: 14, FirstSuppressed: 7151, Nodes: []LocalNode{
				{Node: []NodeLevel{{Column: "age", Level: 2, Levels: 5}, {Column: "sex", Level: 0, Levels: 2}}, Records: 23011},
				{Node: []NodeLevel{{Column: "age", Level: 3, Levels: 5}, {Column: "sex", Level: 1, Levels: 2}}, Records: 5805},
			}}
			return r
		}()), []string{
			"Local recoding (ARX&#39;s iterative local recoding): the 7,151 records the first generalization suppressed were generalized again on their own",
			"Pass 1: age 2, sex 0 — 23,011 records.", "Pass 2: age 3, sex 1 — 5,805 records.",
		}, releaseCharts, nil},
		{"release-cell-suppression", rel(func() *Report {
			r := adultReport(false)
			r.LocalRecoding = &LocalRecodingSummary{Iterations: 100, GSFactor: 0.05, Adaption: 0.05, Cells: true, SuppressedCells: 5805, Passes: 3, FirstSuppressed: 5900, Nodes: []LocalNode{
				{Node: []NodeLevel{{Column: "age", Level: 2, Levels: 5}, {Column: "sex", Level: 0, Levels: 2}}, Records: 23011},
				{Node: []NodeLevel{{Column: "age", Level: 2, Levels: 5}, {Column: "sex", Level: 1, Levels: 2}}, Records: 5805},
			}}
			return r
		}()), []string{
			"Cell suppression: the 5,900 records the first generalization suppressed were released with some of their values replaced",
			"(5,805 values replaced)", "Pass 2: age 2, sex 1 — 5,805 records.",
		}, releaseCharts, nil},
		{"release-prosecutor-only", rel(adultReport(false)), []string{
			"No population size was configured", "Records at risk above 5%", "groups of 19 or fewer records",
		}, releaseCharts, nil},
		{"release-mondrian", rel(mondrianReport()), []string{
			"Mondrian multidimensional partitioning: the records were split 95 times into 96 partitions",
			"Mondrian: each partition its own range or group", "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &lt;b&gt;co",
			"<code class=\"ex\">&lt;i&gt;x&lt;/i&gt;</code>", "Entropy l-diversity on diagnosis (l = 2)", "entropy l 2.3",
			"ward &lt;admissions&gt; &amp; co", "0 (0%) were withheld", "none was withheld, and the configuration allowed none to be",
		}, releaseCharts - 1, []string{"Mondrian generalizes each partition on its own"}},
		{"release-empty", rel(emptyReport()), []string{
			"0 records of adult.csv were released", "4 (100%) were withheld", "The release holds no record", "no record", "level 4 of 0–4: every value is *",
		}, 2 + 3 + 1 + 2 + 1 + 1, nil},
		{"release-no-risk", rel(noRiskReport()), []string{
			"This report holds no risk figures", "level 2 of 0–4", "It chose: age at level 2 of 0–4",
		}, 2, nil},
		{"release-series-retire", rel(seriesReport("retire")), []string{
			"This release is night 4 of the release series 5f0c2a9e41d87b36a0e4c1f9d2b7e8a3", "nightly/adult.series.json",
			"Records that leave (series.removals: retire)", "3 nights (tonight included)", "It changed once: on night 3 (changed: coarser in age and education).",
			"<td><strong>2 (was 1)</strong></td>", "28,631", "(23 rows retired so far)", "<h2 id=\"series-night\">2. This night of the series</h2>", "<h2>6. What the verifier checked and found</h2>",
		}, releaseCharts + 3 + 1, nil},
		{"release-series-allow", rel(seriesReport("allow")), []string{
			"Records that leave (series.removals: allow)", "3 groups lost between 1 and 4 records tonight, and were published all the same",
			"tonight&#39;s groups 3 and 17 (numbered from 0 in the release&#39;s order of labels) and 1 group of last night&#39;s release that tonight&#39;s does not publish",
			"but 3 classes lost between 1 and 4 records tonight (series.removals: allow), which the difference shows",
		}, releaseCharts + 3 + 1, nil},
		{"risk-with-release", ana(adultAnalysis(true)), []string{
			"adult.csv holds 30,162 records", "Its release release.csv (csv) holds 28,816 records",
			"does not hold", "The column that drives the risk most is age", "0.24 distinct values per 100 records",
			"age and &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &lt;b&gt;co together", "0.0066%", "98.2%", "2026-11-25T09:12:44Z",
		}, 2 + 3 + 1 + 3 + 1 + 2 + 2, nil},
		{"risk-input-only", ana(adultAnalysis(false)), []string{
			"No release was given: the figures are the input&#39;s alone.", "No population size was configured",
		}, 2 + 3 + 1 + 2 + 2, nil},
		{"manifest-ledger", man(hospitalManifest(true)), []string{
			"This run published 4 outputs, spending ε = 2.5 and δ = 1.01 × 10⁻⁷", "b = 6", "σ = 46.77", "± 18", "± 92",
			"count ± 72; sum ± 4,314", "depends on the data", "4,988 synthetic records made by AIM from 10 noisy marginals measured in 6 rounds",
			"it has spent ε = 6 of 10 (60% of the total) and δ = 3.01 × 10⁻⁷ of 10⁻⁶", "ε = 4 is left", "2026-10-03T08:00:00Z",
			"age × &lt;script&gt;", "patient_id", "at most 3 rows", "ε = 1 (40% of the run)", "total 10",
		}, 3, nil},
		{"manifest-no-ledger", man(hospitalManifest(false)), []string{"This run kept no ledger"}, 1, nil},
		{"manifest-empty-history", man(func() *Manifest {
			m := hospitalManifest(true)
			m.Ledger.History, m.Outputs = nil, nil
			return m
		}()), []string{"published 0 outputs"}, 0, []string{"the run published no output.", "the ledger holds no spend on this dataset."}},
	}, personsCases()...)
}

// A release with risk: a chart per measure, two distributions, the levels, the loss.
const releaseCharts = 2 + 3 + 1 + 2 + 1 + 1

// renderRelease renders r's release page.
func renderRelease(r *Report) func(*bytes.Buffer) error {
	return func(b *bytes.Buffer) error { return WriteReleaseHTML(b, r) }
}

// renderRisk renders a's risk analysis page.
func renderRisk(a *RiskAnalysis) func(*bytes.Buffer) error {
	return func(b *bytes.Buffer) error { return WriteRiskHTML(b, a) }
}

// personsCases are the pages of a release and a risk analysis counted in persons, with
// what each must show.
func personsCases() []htmlCase {
	return []htmlCase{
		{"release-persons-linked", renderRelease(personsReport(PseudonymKeyFile)), []string{
			"k-anonymity in persons (k = 5): every group of records that share their age, sex and admitted holds records of at least 5 different persons, so no one can be narrowed down to fewer than 5 persons",
			"The release has 140 groups; the group of fewest persons holds 5 persons, and a group holds on average 21.4 persons (65.01 records).",
			"Multirelational k-anonymity (Nergiz, Clifton and Nergiz 2009)", "every set of groups a person&#39;s records lie in shared by at least 5 persons",
			"Here a person is one value of patient_id", "the column holds a keyed pseudonym of each person in their place",
			`<tr><td>In the input</td><td class="n">2,000</td><td class="n">9,412</td></tr>`,
			`<tr><td>Released (at least one record in the file)</td><td class="n">1,968</td><td class="n">9,101</td></tr>`,
			`<tr><td>Lost at least one record (withheld)</td><td class="n">57</td><td class="n">311</td></tr>`,
			`<td class="n">32</td><td class="n">—</td>`, `<tr><td>Released with records in several groups</td><td class="n">701</td>`,
			`<tr><td>The smallest group holds</td><td class="n">5</td><td class="n">9</td></tr>`,
			"What a researcher can link: a person&#39;s records within this release, which share one pseudonym",
			"Links to other releases: yes. Whoever holds two releases made with this key file can join a person&#39;s records across them",
			"fewest persons in a group: 5 (fewest records: 9)", "311 (3.3%) withheld; 57 persons lost some of their records, 32 all",
			"its persons counted from the input&#39;s patient_id beside it: it holds 9,101 records of 1,968 persons in 140 groups; the group of fewest persons holds 5 persons, the group of fewest records 9 records",
			"Counted in persons (patient_id): a group&#39;s size is the number of different persons",
			"Highest risk: no person&#39;s re-identification risk exceeds 20% (1 in 5)", "every person&#39;s risk at most 20% (1 in 5)",
			"Persons at risk above 10%", "groups of 19 or fewer persons", "Persons by the size of their group, in persons", "Persons in groups (a person counted in each group",
			"2,996", "31%", "C_AVG can be above 1 when every group holds exactly k persons",
		}, releaseCharts, nil},
		{"release-persons", renderRelease(personsReport("")), []string{
			"Distinct l-diversity in persons on diagnosis (l = 3): in every group, each value of diagnosis is held by at most 1/3 of the group&#39;s persons",
			"every value held by at most 1/3 of a group&#39;s persons", "weakest group: l = 3.5 in persons",
			"t-closeness in persons on diagnosis (t = 0.3)", "largest distance 0.21 (on shares of persons)",
			"β-likeness in persons on diagnosis (β = 1.5, basic)", "at most 25% of a group&#39;s persons", "largest gain 1.2 (on shares of persons",
			"The ids in patient_id are not in the release.",
		}, releaseCharts, nil},
		{"release-persons-series", renderRelease(personsSeriesReport()), []string{
			"This release is night 3 of the release series 0d9be1f2a3c4b5d6e7f8091a2b3c4d5e", "/var/lib/sanitize/admissions.json",
			"Records that leave (series.removals: refuse): a night on which a group would lose between 1 and 4 persons is refused",
			"at least 5 persons whose values alone meet the privacy models", "none waits", "It changed once: on night 2 (changed: coarser in admitted).",
		}, releaseCharts, nil},
		{"risk-persons", renderRisk(personsAnalysis()), []string{
			"Counted in persons: the input&#39;s 9,412 records are about 2,000 persons, each named by &lt;script&gt;",
			"The release holds records of 1,968 of them (the verifier counted them from the file and the input): 701 with records in several groups; 57 lost some of their records, 32 all.",
			"Counted in persons (&lt;script&gt;", "Persons at risk above 5%", "Persons by their re-identification risk", "every person&#39;s risk at most 20% (1 in 5)",
			"Sample uniqueness", "96.9%", "Counted in persons, only the prosecutor model is measured",
			"distinction and separation count records, not persons",
		}, 2 + 3 + 1 + 2 + 2, nil},
	}
}
