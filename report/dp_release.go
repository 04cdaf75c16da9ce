package report

import (
	"fmt"
	"io"
	"math"

	"sanitizer/schema"
)

// DPChoice is how a SafePub release's node was chosen: given by the configuration,
// derived from a generalization degree ("degree low-medium"), or drawn by the
// data-dependent search.
type DPChoice string

// The ways a node is chosen (a degree's is "degree " and its name).
const (
	DPGiven    DPChoice = "given"
	DPSearched DPChoice = "search"
)

// DPGuarantee is what a SafePub release guarantees, in words.
const DPGuarantee = "(ε, δ)-differential privacy: whether or not any one record is in the input, every release of this configuration is about as likely (within a factor e^ε), except with probability δ. Records drawn with probability β, generalized at the node, every class of fewer than k drawn records suppressed (Li, Qardaji, Su 2012; SafePub, Bild, Kuhn, Prasser 2018). Only the released records are covered: counts of the input and of the records left out, wherever they are shown (a report, the summary, the log), are not."

// DPSummary is a release of records under privacy.differential-privacy (SafePub): its
// guarantee, its parameters and its node. It holds nothing counted from the data: it
// is what the release's file records too.
type DPSummary struct {
	Epsilon float64 `json:"epsilon"` // the whole ε, the search's included
	Delta   float64 `json:"delta"`
	// EpsilonAnonymization is the ε the sampled anonymization takes (β and k follow
	// from it), EpsilonSearch the search's share (0: no search).
	EpsilonAnonymization float64 `json:"epsilon_anonymization"`
	EpsilonSearch        float64 `json:"epsilon_search,omitempty"`
	// EpsilonOnSample is what the search spent on its own sample, which amplifies to
	// EpsilonSearch for the input (at most ln(1 + (e^ε_search − 1)/β)).
	EpsilonOnSample float64 `json:"epsilon_on_sample,omitempty"`
	// Beta is the sampling probability, K the least class of drawn records released,
	// and DeltaBound the bound on d(K, β, ε_a) the computation found (at most Delta).
	Beta       float64     `json:"beta"`
	K          int         `json:"k"`
	DeltaBound float64     `json:"delta_bound"`
	Chosen     DPChoice    `json:"chosen"`
	Node       []NodeLevel `json:"node"`
	// Steps is the search's configured steps, StepsTaken those it took (fewer when it
	// reached the lattice's bottom), Pivots the nodes its final choice was drawn from,
	// Score the metric whose score it drew by; all 0 without a search.
	Steps      int           `json:"steps,omitempty"`
	StepsTaken int           `json:"steps_taken,omitempty"`
	Pivots     int           `json:"pivots,omitempty"`
	Score      schema.Metric `json:"score,omitempty"`
	Guarantee  string        `json:"guarantee"`
	// Ledger is the dataset's account once the release was charged to it (--ledger;
	// nil without, and in the file's metadata, written before the charge).
	Ledger *ManifestLedger `json:"ledger,omitempty"`
}

// dpSummary prints a SafePub release's guarantee: ε and δ, how they were spent, β, k
// and how the node was chosen.
func (r *Report) dpSummary(w io.Writer) {
	d := r.DifferentialPrivacy
	if d == nil {
		return
	}
	fmt.Fprintf(w, "(ε=%g, δ=%g)-differential privacy: records drawn with β=%.6g, classes of fewer than k=%d drawn records suppressed (d(k)=%.3g ≤ δ); node %s", d.Epsilon, d.Delta, d.Beta, d.K, d.DeltaBound, d.Chosen)
	if d.EpsilonSearch > 0 {
		fmt.Fprintf(w, " by the %s score in %d of %d steps, drawn from %d nodes (ε_search=%g, %.4g on its own sample; ε_anonymization=%g)", d.Score, d.StepsTaken, d.Steps, d.Pivots, d.EpsilonSearch, d.EpsilonOnSample, d.EpsilonAnonymization)
	}
	fmt.Fprintln(w)
	if l := d.Ledger; l != nil {
		fmt.Fprintf(w, "ledger %s: ε=%g of %g, δ=%g of %g spent on this dataset\n", l.File, l.EpsilonSpent, l.EpsilonTotal, l.DeltaSpent, l.DeltaTotal)
	} else {
		fmt.Fprintln(w, "no ledger: this release's spend is not recorded")
	}
}

// dpLead is the HTML page's opening sentence for a SafePub release.
func dpLead(r *Report) string {
	return fmt.Sprintf("%s %s of %s were released as %s (%s) under (ε = %s, δ = %s)-differential privacy; the other %s were left out: not drawn into the sample, or in a group of fewer than k = %d drawn records.",
		fmtCount(int64(r.Output.Rows)), plural(int64(r.Output.Rows), "record", "records"), r.Input.Path, r.Output.Path, r.Output.Format,
		fmtG(r.DifferentialPrivacy.Epsilon), fmtG(r.DifferentialPrivacy.Delta), fmtCount(int64(r.Suppressed)), r.DifferentialPrivacy.K)
}

// dpModelSentences say in words what a SafePub release guarantees and how.
func dpModelSentences(r *Report, qi string) []string {
	d := r.DifferentialPrivacy
	out := []string{
		fmt.Sprintf("Differential privacy (ε = %s, δ = %s): whether or not any one record is in the input (a person with several records is protected the less for each), every release this configuration can make is about as likely, within a factor e^ε = %s, except with probability δ. The records are truthful: each is an input record with its %s generalized; none is invented or changed otherwise.",
			fmtG(d.Epsilon), fmtG(d.Delta), fmtNumber(math.Exp(d.Epsilon)), qi),
		fmt.Sprintf("How (SafePub; Li, Qardaji and Su 2012): every input record was drawn into a sample with probability β = %s, independently, from a cryptographic source; the sample was generalized at one node, and every group of fewer than k = %d drawn records was suppressed. β and k follow from ε = %s for the anonymization and δ: β is at most 1 − e^−ε and k the least number whose bound on δ, %s, is at most δ.",
			fmtNumber(d.Beta), d.K, fmtG(d.EpsilonAnonymization), fmt.Sprintf("%.3g", d.DeltaBound)),
		"The counts on this page (the input's records, those left out, the utility) are about the input and are not covered by the guarantee: publish the file, not this page.",
	}
	if r.Output.Rows > 0 {
		out = append(out, fmt.Sprintf("The release has %s groups; the smallest holds %s records.", fmtCount(int64(r.Classes)), fmtCount(int64(r.MinClass))))
	}
	if l := d.Ledger; l != nil {
		out = append(out, fmt.Sprintf("The spend was recorded in the ledger %s: ε = %s of %s and δ = %s of %s are now spent on this dataset.", l.File, fmtG(l.EpsilonSpent), fmtG(l.EpsilonTotal), fmtG(l.DeltaSpent), fmtG(l.DeltaTotal)))
	} else {
		out = append(out, "No ledger recorded the spend: repeated releases of the same data add up unchecked.")
	}
	return out
}

// dpChecks are the table's rows of a SafePub release.
func dpChecks(r *Report) []checkRow {
	d, v := r.DifferentialPrivacy, r.Verified
	return []checkRow{
		{"Differential privacy", fmt.Sprintf("ε = %s, δ = %s", fmtG(d.Epsilon), fmtG(d.Delta)), fmt.Sprintf("β = %s, k = %d, bound on δ %.3g", fmtNumber(d.Beta), d.K, d.DeltaBound), d.DeltaBound <= d.Delta},
		{"Groups of the sample", fmt.Sprintf("every group at least %d records, released whole", d.K), fmt.Sprintf("smallest group %s records; checked against the run's sample", fmtCount(int64(v.MinClass))), v.Rows == 0 || v.MinClass >= d.K},
	}
}

// dpSearchSentences say how a SafePub release's node was chosen.
func dpSearchSentences(r *Report) []string {
	d := r.DifferentialPrivacy
	node := nodeText(d.Node)
	switch d.Chosen {
	case DPGiven:
		return []string{"The node was given by the configuration, without looking at the data: " + node + ".", stagesSentence(r)}
	case DPSearched:
		return []string{fmt.Sprintf("The node was drawn by SafePub's search, spending ε = %s: on a sample of its own (drawn with the same β, so that ε = %s on the sample is ε = %s for the input), a walk from the most general node took %d of %d steps, each drawing a more specific node by the exponential mechanism on the %s score; the node was then drawn from the %d nodes the walk visited. It drew: %s.",
			fmtG(d.EpsilonSearch), fmt.Sprintf("%.4g", d.EpsilonOnSample), fmtG(d.EpsilonSearch), d.StepsTaken, d.Steps, d.Score, d.Pivots, node), stagesSentence(r)}
	}
	return []string{fmt.Sprintf("The node was derived from the hierarchies' heights (%s), without looking at the data: %s.", d.Chosen, node), stagesSentence(r)}
}
