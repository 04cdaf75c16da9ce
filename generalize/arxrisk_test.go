package generalize

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"sanitizer/risk"
	"sanitizer/schema"
)

// TestARXRiskCasesAdult ports TestAnonymizationRiskBased's six Adult cases (all nine
// columns quasi-identifiers, k = 1, 4% suppression): average re-identification risk
// 0.01 and population uniqueness 0.0001 under Dankar's rule and Pitman's model with
// ARX's non-monotone entropy; sample uniqueness 0.01 (records at risk above 1/2, at
// most 1%) and population uniqueness under Zayatz's model and SNB with ARX's loss; the
// population that of the USA (ARX's Region.USA, 317,238,626). ARX enforces the models
// by suppressing the smallest classes (RiskBasedCriterion.enforce), as ours do
// (Risks.Enforce Suppress). With the oracle (its own grouping and enforcement,
// exhaustive_test.go), for each case:
//   - ARX's node meets our models within ARX's limit, the classes it suppresses
//     decided by our enforcement (before this, ours suppressed nothing and refused
//     all six of ARX's nodes);
//   - our search's node meets them by the oracle, at the oracle's value, and no
//     worse than ARX's node.
//
// Our value at ARX's node is logged beside ARX's published one, which it need not
// equal: ARX's loss aggregates the columns otherwise (as in TestARXLossGSCasesAdult),
// and where classes of one size are cut between suppressed and released, ARX takes
// them in the order of its records or its classes' information loss, ours in the order
// of their codes.
func TestARXRiskCasesAdult(t *testing.T) {
	if testing.Short() {
		t.Skip("searches Adult for six cases")
	}
	exhaustiveOnly(t, "ARX's risk-based cases on Adult")
	t.Parallel()
	nineOrder := []string{"sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation", "salary-class"}
	tab, raw, hier := loadAdultQI(t, nineOrder)
	o := newOracle(raw, hier)
	const usa = 317238626
	unique := func(m risk.UniquenessModel) Risks {
		return Risks{Uniqueness: &Uniqueness{Max: 0.0001, Population: usa, Model: m}}
	}
	cases := []struct {
		name   string
		risks  Risks
		metric schema.Metric
		arx    []int
		value  float64
	}{
		{"0: average risk 0.01, entropy", Risks{Average: 0.01}, MetricEntropy, []int{1, 0, 1, 1, 3, 2, 2, 1, 1}, 314637.8461904862},
		{"1: sample uniqueness 0.01, loss", Risks{AtRiskThreshold: 0.5, AtRiskMax: 0.01}, MetricLoss, []int{0, 3, 0, 0, 1, 1, 1, 1, 0}, 0.1606952725863784},
		{"2: population uniqueness 0.0001 (Dankar), entropy", unique(risk.Dankar), MetricEntropy, []int{0, 0, 1, 1, 1, 2, 1, 0, 0}, 144298.1603344462},
		{"3: population uniqueness 0.0001 (Zayatz), loss", unique(risk.Zayatz), MetricLoss, []int{0, 3, 0, 0, 1, 1, 1, 1, 0}, 0.16078200456326086},
		{"4: population uniqueness 0.0001 (Pitman), entropy", unique(risk.Pitman), MetricEntropy, []int{0, 0, 1, 1, 1, 2, 1, 0, 0}, 144298.1603344462},
		{"5: population uniqueness 0.0001 (SNB), loss", unique(risk.SNB), MetricLoss, []int{0, 3, 0, 0, 2, 1, 1, 1, 0}, 0.17599055898432758},
	}
	same := 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opt := Options{K: 1, MaxSuppressed: int(math.Floor(0.04 * float64(tab.Rows))), Metric: c.metric, Risks: c.risks}
			qu := oracleQuery{k: 1, maxSupp: opt.MaxSuppressed, metric: c.metric, enforce: true}
			if r := c.risks; r.Uniqueness != nil {
				qu.uniqueness = oracleUniqueness(r.Uniqueness.Max, r.Uniqueness.Population, r.Uniqueness.Model)
			} else {
				qu.release = allOf(oracleAverage(r.Average), oracleAtRisk(r.AtRiskThreshold, r.AtRiskMax))
				if r.Average == 0 {
					qu.release = oracleAtRisk(r.AtRiskThreshold, r.AtRiskMax)
				} else if r.AtRiskThreshold == 0 {
					qu.release = oracleAverage(r.Average)
				}
			}
			arx := o.at(t, c.arx, []oracleQuery{qu})[0]
			if arx == nil {
				t.Fatalf("ARX's node %v does not meet our models within %d suppressed", c.arx, opt.MaxSuppressed)
			}
			arxValue, _ := arx.value.Float64()
			res, err := Search(context.Background(), tab, opt)
			if err != nil {
				t.Fatal(err)
			}
			ours := o.at(t, res.Levels, []oracleQuery{qu})[0]
			if ours == nil {
				t.Fatalf("our node %v does not meet the models by the oracle", res.Levels)
			}
			ourValue, _ := ours.value.Float64()
			if !closeValues(res.Value, ourValue) || res.Suppressed != ours.suppressed {
				t.Errorf("our node %v: the search says %.10f (%d suppressed), the oracle %.10f (%d)", res.Levels, res.Value, res.Suppressed, ourValue, ours.suppressed)
			}
			if ours.value.Cmp(arx.value) > 0 && !closeValues(ourValue, arxValue) {
				t.Errorf("our node %v has %s %.6f, ARX's %v %.6f: the search missed a better node", res.Levels, c.metric, ourValue, c.arx, arxValue)
			}
			if slices.Equal(res.Levels, c.arx) {
				same++
			}
			agree := "ARX's"
			if !closeValues(arxValue, c.value) {
				agree = fmt.Sprintf("not ARX's %.10f", c.value)
			}
			t.Logf("ARX's node %v: %d suppressed, %s %.10f (%s); ours %v: %d suppressed, %.10f", c.arx, arx.suppressed, c.metric, arxValue, agree, res.Levels, res.Suppressed, ourValue)
		})
	}
	t.Logf("%d of ARX's risk-based cases ported; %d give ARX's node", len(cases), same)
}
