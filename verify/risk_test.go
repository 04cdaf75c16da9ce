package verify

import (
	"encoding/csv"
	"errors"
	"slices"
	"strings"
	"testing"

	"sanitizer/risk"
)

// TestReleaseRisk: the risk-based models on a release of classes of 2, 3 and 5 records
// (10 records): highest risk 1/2, average 3/10, records above 0.25: 5 (the 2 and the
// 3), above 0.2: 5 (1/5 is not above).
func TestReleaseRisk(t *testing.T) {
	var b strings.Builder
	b.WriteString("age,dx\n")
	for _, c := range []struct {
		age string
		n   int
	}{{"a", 2}, {"b", 3}, {"c", 5}} {
		for range c.n {
			b.WriteString(c.age + ",x\n")
		}
	}
	tests := []struct {
		name string
		r    Risk
		want string // "" = valid
	}{
		{"none", Risk{}, ""},
		{"highest at the limit", Risk{HighestRisk: 0.5}, ""},
		{"highest above", Risk{HighestRisk: 0.49}, "highest re-identification risk 0.5"},
		{"average at the limit", Risk{AverageRisk: 0.3}, ""},
		{"average above", Risk{AverageRisk: 0.29}, "average re-identification risk 0.3"},
		{"at risk at the limit", Risk{AtRiskThreshold: 0.25, AtRiskMax: 0.5}, ""},
		{"at risk above", Risk{AtRiskThreshold: 0.25, AtRiskMax: 0.4}, "0.5 of the records have a re-identification risk above 0.25"},
		{"threshold equal to a class's risk", Risk{AtRiskThreshold: 0.2, AtRiskMax: 0.5}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := Spec{K: 1, InputRows: 10, Columns: []string{"age", "dx"}, Quasi: []string{"age"}, Risk: tt.r}
			r := csv.NewReader(strings.NewReader(b.String()))
			header, _ := r.Read()
			m, err := Release(spec, header, r)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
			} else {
				var v *Violation
				if !errors.As(err, &v) || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("got %v, want a violation containing %q", err, tt.want)
				}
			}
			if m == nil {
				t.Fatal("no measurements")
			}
			if want := []risk.SizeCount{{Size: 2, Classes: 1}, {Size: 3, Classes: 1}, {Size: 5, Classes: 1}}; !slices.Equal(m.Sizes.Counts(), want) {
				t.Errorf("measured sizes %v, want %v", m.Sizes.Counts(), want)
			}
		})
	}
}

// TestCheckRiskUniqueness: the population uniqueness of classes of 1 and 3 records (4
// records): as the population (fraction 1) one record in four is unique; a population
// smaller than the release is a violation.
func TestCheckRiskUniqueness(t *testing.T) {
	d, err := risk.FromSizes([]int64{1, 3})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		u    Uniqueness
		want string
	}{
		{Uniqueness{Max: 0.25, Population: 4, Model: risk.Dankar}, ""},
		{Uniqueness{Max: 0.24, Population: 4, Model: risk.Zayatz}, "estimated population uniqueness 0.25"},
		{Uniqueness{Max: 1, Population: 3, Model: risk.Dankar}, "more than the population's 3"},
	}
	for _, tt := range tests {
		err := CheckRisk(Risk{Uniqueness: &tt.u}, d)
		var v *Violation
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%+v: %v", tt.u, err)
		case tt.want != "" && (!errors.As(err, &v) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%+v: got %v, want a violation containing %q", tt.u, err, tt.want)
		}
	}
}
