package release

import (
	"fmt"
	"path/filepath"
	"time"

	"sanitizer/dphist"
	"sanitizer/fault"
	"sanitizer/job"
	"sanitizer/report"
	"sanitizer/schema"
)

// dpSpend is what a SafePub release charges to its dataset's budget: ε (the search's
// included) and δ, named for the release out.
func dpSpend(cfg *schema.Config, opt job.Options, out string) dphist.Spend {
	d := cfg.Privacy.DifferentialPrivacy
	return dphist.Spend{Time: opt.Time().UTC(), Epsilon: d.Epsilon, Delta: d.Delta, Outputs: []string{"release " + filepath.Base(out)}}
}

// planLedger checks, before anything is read, a release's --ledger: only a
// differentially private release spends a budget; the ledger keeps it per dataset,
// against the dp section's totals; the ledger is none of the run's inputs or outputs;
// and the dataset's spending so far leaves room for this release (exit 3 otherwise,
// the charge made again under the ledger's lock once the release is verified).
func planLedger(cfg *schema.Config, opt job.Options, in, out string) error {
	if opt.Ledger == "" {
		return nil
	}
	switch {
	case cfg.Privacy.DifferentialPrivacy == nil:
		return fault.BadInput("--ledger: only a release under privacy.differential-privacy spends a differential privacy budget; this one spends none")
	case cfg.Dataset == "":
		return cfg.Errorf("dataset", "required with --ledger (the ledger keeps one account per dataset)")
	case cfg.DP == nil:
		return cfg.Errorf("privacy.differential-privacy", "--ledger needs the dataset's budget: dp.epsilon-total and dp.delta-total (a dp section without outputs)")
	}
	if err := checkDestination(cfg, in, "--ledger", opt.Ledger, false); err != nil {
		return err
	}
	for _, other := range append([]string{out}, opt.ReportPaths()...) {
		if err := checkNotIn("--ledger", opt.Ledger, "an output of the run:", other); err != nil {
			return err
		}
	}
	return dphist.Check(opt.Ledger, cfg.Dataset, cfg.DP.EpsilonTotal, cfg.DP.DeltaTotal, dpSpend(cfg, opt, out))
}

// recordSpend charges a SafePub release's spend to the ledger once its sample is
// drawn and before anything is written (a failure after the charge leaves the budget
// spent and nothing published, never the reverse), and keeps the account for the
// report; without a ledger it warns that the spend is not recorded.
func (r *run) recordSpend() error {
	if r.dp == nil {
		return nil
	}
	cfg, opt := r.cfg, r.opt
	spend := dpSpend(cfg, opt, r.out)
	if opt.Ledger == "" {
		r.log.Warn("no --ledger: this release's spend is not recorded; repeated releases of the same data add up unchecked", "epsilon", spend.Epsilon, "delta", spend.Delta)
		return nil
	}
	a, err := dphist.Record(opt.Ledger, cfg.Dataset, cfg.DP.EpsilonTotal, cfg.DP.DeltaTotal, spend)
	if err != nil {
		return fmt.Errorf("%s: %w", opt.Ledger, err)
	}
	e, d := a.Spent()
	ef, _ := e.Float64()
	df, _ := d.Float64()
	l := &report.ManifestLedger{File: filepath.Base(opt.Ledger), EpsilonSpent: ef, DeltaSpent: df,
		EpsilonTotal: a.EpsilonTotal, DeltaTotal: a.DeltaTotal, Recorded: "once the sample was drawn, before anything was written"}
	for _, sp := range a.Spends {
		l.History = append(l.History, report.LedgerSpend{Time: sp.Time.UTC().Format(time.RFC3339), Epsilon: sp.Epsilon, Delta: sp.Delta, Outputs: sp.Outputs})
	}
	r.ledger = l
	return nil
}
