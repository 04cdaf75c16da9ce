package report

import (
	"fmt"
	"io"

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
const DPGuarantee = "(ε, δ)-differential privacy: whether or not any one record is in the input, every release of this configuration is about as likely (within a factor e^ε), except with probability δ. Records drawn with probability β, generalized at the node, every class of fewer than k drawn records suppressed (Li, Qardaji, Su 2012; SafePub, Bild, Kuhn, Prasser 2018). Only the released file is covered: this report's counts of the input and of the records left out are not."

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
		fmt.Fprintf(w, " by the %s score in %d of %d steps, drawn from %d nodes (ε_search=%g, ε_anonymization=%g)", d.Score, d.StepsTaken, d.Steps, d.Pivots, d.EpsilonSearch, d.EpsilonAnonymization)
	}
	fmt.Fprintln(w)
	if l := d.Ledger; l != nil {
		fmt.Fprintf(w, "ledger %s: ε=%g of %g, δ=%g of %g spent on this dataset\n", l.File, l.EpsilonSpent, l.EpsilonTotal, l.DeltaSpent, l.DeltaTotal)
	} else {
		fmt.Fprintln(w, "no ledger: this release's spend is not recorded")
	}
}
