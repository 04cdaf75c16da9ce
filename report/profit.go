package report

import (
	"fmt"
	"io"
)

// ProfitabilityIn is the game-theoretic model the release meets (Wan et al. 2015, "A
// Game Theoretic Framework for Analyzing Re-Identification Risk", PLOS ONE, as ARX's
// profitability criteria): the publisher earns PublisherBenefit per published record
// and loses PublisherLoss per re-identified one; the adversary earns AdversaryGain per
// re-identification and pays AdversaryCost per attempt, and succeeds with probability
// 1 / the class's records (prosecutor) or its population records (journalist).
type ProfitabilityIn struct {
	Attacker         string  `json:"attacker"`
	Attack           bool    `json:"attack"`
	PublisherBenefit float64 `json:"publisher_benefit"`
	PublisherLoss    float64 `json:"publisher_loss"`
	AdversaryGain    float64 `json:"adversary_gain"`
	AdversaryCost    float64 `json:"adversary_cost"`
	// NoAttackK, without an attack, is the least class size at which no attack pays
	// (the least integer above gain / cost): the release's k-anonymity (prosecutor) or
	// k-map against the population (journalist).
	NoAttackK int `json:"no_attack_k,omitempty"`
}

// PayoutSummary is what the verifier measured of the game-theoretic model with an
// attack: the least expected payout per record, to the publisher, of a released class
// (positive when the model holds; 0 when nothing is released).
type PayoutSummary struct {
	LeastPayout float64 `json:"least_payout"`
}

// profitSummary prints the game-theoretic model's line.
func (r *Report) profitSummary(w io.Writer) {
	p := r.Model.Profitability
	if p == nil {
		return
	}
	if !p.Attack {
		fmt.Fprintf(w, "profitability (%s, no attack pays): every released class holds at least %d %s\n", p.Attacker, p.NoAttackK, profitCounted(p))
		return
	}
	if v := r.Verified.Payout; v != nil {
		fmt.Fprintf(w, "profitability (%s, attacks allowed) holds: the least expected payout per released record is %.6g (verified)\n", p.Attacker, v.LeastPayout)
	}
}

// profitCounted is what the model's class size counts.
func profitCounted(p *ProfitabilityIn) string {
	if p.Attacker == "journalist" {
		return "population records"
	}
	return "records"
}

// profitSentences say what the game-theoretic model guarantees.
func profitSentences(r *Report) []string {
	p := r.Model.Profitability
	if p == nil {
		return nil
	}
	who := "an adversary who knows that a person is in this release"
	if p.Attacker == "journalist" {
		who = "an adversary who does not know whether a person is in this release, only in the population"
	}
	game := fmt.Sprintf("Game-theoretic model (Wan et al. 2015): publishing a record earns %s, a re-identified record costs %s; %s gains %s per re-identification and pays %s per attempt.",
		fmtG(p.PublisherBenefit), fmtG(p.PublisherLoss), who, fmtG(p.AdversaryGain), fmtG(p.AdversaryCost))
	if !p.Attack {
		return []string{game + fmt.Sprintf(" No attack pays: every released group holds at least %d %s, so the adversary's expected gain per attempt is below its cost.", p.NoAttackK, profitCounted(p))}
	}
	return []string{game + " Attacks may pay the adversary, but every released group leaves the publisher a positive expected payout per record: its benefit, less what it loses where an attack pays, after the information the generalization removes."}
}

// profitChecks is the verifier's row for the game-theoretic model.
func profitChecks(r *Report) []checkRow {
	p := r.Model.Profitability
	if p == nil {
		return nil
	}
	if !p.Attack {
		row := checkRow{Model: "profitability (no attack)", Required: fmt.Sprintf("every group of at least %d %s", p.NoAttackK, profitCounted(p))}
		switch {
		case p.Attacker != "journalist":
			row.Measured = fmt.Sprintf("smallest group: %s records", fmtCount(int64(r.Verified.MinClass)))
			row.Holds = r.Verified.MinClass >= p.NoAttackK || r.Verified.Rows == 0
		case r.Verified.Population != nil:
			row.Measured = fmt.Sprintf("smallest: %s population records", fmtCount(r.Verified.Population.SmallestPopulation))
			row.Holds = r.Verified.Population.SmallestPopulation >= int64(p.NoAttackK)
		default:
			row.Measured = "not in the verifier's figures"
		}
		return []checkRow{row}
	}
	row := checkRow{Model: "profitability (attacks allowed)", Required: "every group's expected payout per record above 0", Measured: "not in the verifier's figures"}
	if v := r.Verified.Payout; v != nil {
		row.Measured = fmt.Sprintf("least: %s", fmtG(v.LeastPayout))
		row.Holds = v.LeastPayout > 0 || r.Verified.Rows == 0
	}
	return []checkRow{row}
}
