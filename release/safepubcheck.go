package release

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"sanitizer/fault"
	"sanitizer/report"
	"sanitizer/schema"
	"sanitizer/verify"
)

// dpCheckSpec makes spec, Check's spec of a release of cfg, a SafePub release's: k
// from ε and δ (safepub.Compute, as the release computes it), and every record may be
// missing (the sample is not known to the check).
func dpCheckSpec(cfg *schema.Config, spec *verify.Spec) (*dpRelease, error) {
	if cfg.Privacy.DifferentialPrivacy == nil {
		return nil, nil
	}
	dr, err := newDPRelease(cfg)
	if err != nil {
		return nil, err
	}
	spec.K, spec.MaxSuppressed = dr.params.K, spec.InputRows
	return dr, nil
}

// checkDPRelease is Check's check of a SafePub release p.output, the part the
// truthfulness walk leaves: the guarantee it records (its metadata, its report at
// reportPath) is the configuration's, and every released class, at the release's
// node (the configuration's, or for a searched node the one recorded), holds at least
// k records and is one of the input's classes there, no larger. The sample is not
// known (recording it would say who was left out): that every drawn class of k records
// or more was released whole is the release's own verification, which check cannot
// repeat.
func checkDPRelease(ctx context.Context, p *plan, dr *dpRelease, reportPath string, meta *recorded, spec verify.Spec) error {
	cfg, rel := p.Config, p.output
	recs, err := recordedBy(meta, reportPath)
	if err != nil {
		return err
	}
	want := map[string]string{"sanitize.k": fmt.Sprint(dr.params.K), "sanitize.algorithm": schema.Optimal.String()}
	var node []int
	for _, r := range recs {
		want["sanitize.differential_privacy"] = r.values["sanitize.differential_privacy"] // field by field: dpGuarantee
		if err := r.compare(rel, want); err != nil {
			return err
		}
		got, err := r.dpGuarantee(rel, cfg, dr, p.QuasiNames())
		if err != nil {
			return err
		}
		if node != nil && !slices.Equal(node, got) {
			return fault.Unattainable("%s: its metadata and its report record different nodes", rel)
		}
		node = got
	}
	if len(recs) == 0 {
		return fault.BadInput("%s: a release under privacy.differential-privacy is checked against the guarantee it records: give its report with --report (a CSV release has no metadata)", rel)
	}
	if cfg.Privacy.DifferentialPrivacy.Search == nil {
		qs, err := utilityQuasi(p)
		if err != nil {
			return err
		}
		heights := make([]int, len(qs))
		for i, q := range qs {
			heights[i] = q.Domain.Height()
		}
		fixed, _, err := fixedNode(cfg, p.QuasiNames(), heights)
		if err != nil {
			return err
		}
		if node != nil && !slices.Equal(node, fixed) {
			return fault.Unattainable("%s: records node %v, the configuration's is %v", rel, node, fixed)
		}
		node = fixed
	}
	if node == nil {
		return fault.BadInput("%s: a release whose node SafePub's search drew records it in its metadata (Parquet, Arrow) or its report: give the report with --report", rel)
	}
	return checkDPClasses(ctx, p, node, dr.params.K, spec)
}

// checkDPClasses checks that every class of the release p.output holds at least k
// records and is one of the input's classes at node, no larger.
func checkDPClasses(ctx context.Context, p *plan, node []int, k int, spec verify.Spec) error {
	qs, err := utilityQuasi(p)
	if err != nil {
		return err
	}
	spec.Utility = qs
	classes, err := releasedClasses(ctx, p, p.output, spec)
	if err != nil {
		return err
	}
	counts, err := nodeCounts(ctx, p, spec, node, nil)
	if err != nil {
		return err
	}
	err = verify.CheckSample(verify.Sample{K: k, Input: counts}, classes)
	if err == nil {
		err = inValueOrder(ctx, p, p.output, spec)
	}
	var v *verify.Violation
	if errors.As(err, &v) {
		return fault.Unattainable("%s: %w", p.output, v)
	}
	return err
}

// dpGuarantee checks the guarantee r records against the configuration's (ε, δ, how
// the node is chosen) and the parameters dr computed from it, and returns the node
// it records.
func (r *recorded) dpGuarantee(rel string, cfg *schema.Config, dr *dpRelease, quasi []string) ([]int, error) {
	got, err := dpRecorded(r.values["sanitize.differential_privacy"])
	if err != nil {
		return nil, fault.Unattainable("%s: %s: %w", rel, r.where, err)
	}
	if got == nil {
		return nil, fault.Unattainable("%s: %s records no differential privacy (%s); the configuration asks for it", rel, r.where, r.name["sanitize.differential_privacy"])
	}
	d := cfg.Privacy.DifferentialPrivacy
	var search float64
	var steps int
	var score schema.Metric
	if d.Search != nil {
		search, steps, score = d.Search.Epsilon, d.Search.Steps, dpMetric(cfg)
	}
	if got.Epsilon != d.Epsilon || got.Delta != d.Delta || got.EpsilonAnonymization != dr.anon || got.EpsilonSearch != search ||
		got.Beta != dr.params.Beta || got.K != dr.params.K || got.Steps != steps || got.Score != score || (d.Search != nil) != (got.Chosen == report.DPSearched) {
		return nil, fault.Unattainable("%s: %s records ε=%g, δ=%g (anonymization %g, search %g in %d steps by %q), β=%g, k=%d, node %s; the configuration gives ε=%g, δ=%g (%g, %g in %d by %q), β=%g, k=%d",
			rel, r.where, got.Epsilon, got.Delta, got.EpsilonAnonymization, got.EpsilonSearch, got.Steps, got.Score, got.Beta, got.K, got.Chosen,
			d.Epsilon, d.Delta, dr.anon, search, steps, score, dr.params.Beta, dr.params.K)
	}
	node := make([]int, len(got.Node))
	for i, n := range got.Node {
		if i >= len(quasi) || n.Column != quasi[i] {
			return nil, fault.Unattainable("%s: %s records a node that is not one level per quasi-identifier of the configuration", rel, r.where)
		}
		node[i] = n.Level
	}
	if len(node) != len(quasi) {
		return nil, fault.Unattainable("%s: %s records a node that is not one level per quasi-identifier of the configuration", rel, r.where)
	}
	return node, nil
}

// dpMetric is the metric a SafePub search scores by (loss unless configured).
func dpMetric(cfg *schema.Config) schema.Metric {
	if cfg.Search.Metric == "" {
		return schema.MetricLoss
	}
	return cfg.Search.Metric
}
