package release

import (
	"testing"

	"sanitizer/schema"
)

// TestModelsDigest: a series' models digest ignores what does not change the models
// (the suppression limit, the released-columns check, the enforcement of risk models
// none of which is given) and settings at their zero value, and changes with a model.
func TestModelsDigest(t *testing.T) {
	base := schema.Privacy{K: 5, Suppression: 0.05, ReleasedColumns: schema.ReleasedWarn, RiskEnforcement: schema.RiskSuppress,
		LDiversity: []schema.LDiversity{{Column: "diagnosis", Variant: "distinct", L: 3}}}
	d0, err := modelsDigest(base)
	if err != nil {
		t.Fatal(err)
	}
	same := map[string]func(p *schema.Privacy){
		"another suppression limit": func(p *schema.Privacy) { p.Suppression = 0.1 },
		"released-columns: error":   func(p *schema.Privacy) { p.ReleasedColumns = schema.ReleasedError },
		"risk-enforcement: measure": func(p *schema.Privacy) { p.RiskEnforcement = schema.RiskMeasure },
		"no enforcement named":      func(p *schema.Privacy) { p.RiskEnforcement = "" },
	}
	for name, edit := range same {
		p := base
		edit(&p)
		if d, err := modelsDigest(p); err != nil || d != d0 {
			t.Errorf("%s: digest %s, want %s (%v)", name, d, d0, err)
		}
	}
	differ := map[string]func(p *schema.Privacy){
		"k": func(p *schema.Privacy) { p.K = 6 },
		"l": func(p *schema.Privacy) {
			p.LDiversity = []schema.LDiversity{{Column: "diagnosis", Variant: "distinct", L: 4}}
		},
		"average-risk":           func(p *schema.Privacy) { p.AverageRisk = 0.05 },
		"average-risk, measured": func(p *schema.Privacy) { p.AverageRisk, p.RiskEnforcement = 0.05, schema.RiskMeasure },
		"highest-risk":           func(p *schema.Privacy) { p.HighestRisk = 0.2 },
		"a privacy unit":         func(p *schema.Privacy) { p.Unit = &schema.Unit{Column: "patient_id"} },
		"records-at-risk":        func(p *schema.Privacy) { p.RecordsAtRisk = &schema.RecordsAtRisk{Threshold: 0.2, Max: 0.1} },
		"l-diversity on two columns": func(p *schema.Privacy) {
			p.LDiversity = append(p.LDiversity, schema.LDiversity{Column: "ward", Variant: "distinct", L: 2})
		},
	}
	seen := map[string]string{d0: "base"}
	for name, edit := range differ {
		p := base
		edit(&p)
		d, err := modelsDigest(p)
		if err != nil {
			t.Fatal(err)
		}
		if other, ok := seen[d]; ok {
			t.Errorf("%s: the digest of %s", name, other)
		}
		seen[d] = name
	}
	a, _ := jsonDigest(struct{ A, B int }{1, 0})
	b, _ := jsonDigest(struct{ A int }{1})
	if a != b {
		t.Error("a setting at its zero value changes the digest")
	}
}
