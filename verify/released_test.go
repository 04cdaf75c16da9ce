package verify

import (
	"encoding/csv"
	"fmt"
	"strings"
	"testing"

	"sanitizer/closeness"
	"sanitizer/diversity"
)

// TestReleasedColumns: a column released as it is, grouped by its value, against the
// sensitive column's requirements. Classes A and B are both 2-diverse on dx. ward: W1
// holds only a and W2 only b (5 records in failing groups), W3 holds both. stay: s1
// and s2 each hold both values across the release (though within each class every
// stay group is homogeneous: what the quasi-identifiers and stay together would tell,
// which is not measured). plan: one value, as diverse as the release. With the dense
// counts bounded low, the counts kept in a map give the same figures.
func TestReleasedColumns(t *testing.T) {
	for _, dense := range []int64{denseMax, 3} {
		defer func(d int64) { denseMax = d }(denseMax)
		denseMax = dense
		t.Run(fmt.Sprintf("dense up to %d", dense), testReleasedColumns)
	}
}

func testReleasedColumns(t *testing.T) {
	body := "age,dx,ward,stay,plan\n" +
		"A,a,W1,s1,x\nA,b,W2,s2,x\nA,a,W1,s1,x\nA,b,W2,s2,x\n" +
		"B,a,W1,s2,x\nB,a,W3,s2,x\nB,b,W3,s1,x\n"
	dx := func(div []diversity.Model, cl []Closeness, like []Likeness) []Sensitive {
		return []Sensitive{{Column: "dx", Values: []string{"a", "b"}, Reference: []int64{4, 3}, Diversity: div, Closeness: cl, Likeness: like}}
	}
	distinct2 := []diversity.Model{{Variant: diversity.Distinct, L: 2}}
	type want struct{ groups, failing, records int }
	for _, c := range []struct {
		name string
		sens []Sensitive
		want map[string]want // by released column
	}{
		{"distinct 2-diversity", dx(distinct2, nil, nil), map[string]want{
			"ward": {3, 2, 5}, "stay": {2, 0, 0}, "plan": {1, 0, 0}}},
		// W1 = (1,0) against (4/7,3/7): equal EMD 3/7 > 0.4; W2 = (0,1): 4/7; W3 = (½,½): 1/14
		{"0.4-closeness", dx(nil, []Closeness{{T: 0.4, Distance: closeness.Equal}}, nil), map[string]want{
			"ward": {3, 2, 5}, "plan": {1, 0, 0}}},
		// b's share 3/7; W2 holds only b: gain (1 − 3/7)/(3/7) = 4/3 > 1; W1 only a:
		// gain 3/4 ≤ 1
		{"1-likeness", dx(nil, nil, []Likeness{{Beta: 1}}), map[string]want{
			"ward": {3, 1, 2}, "plan": {1, 0, 0}}},
		{"no requirement: nothing measured", dx(nil, nil, nil), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := Spec{K: 2, InputRows: 7, Columns: []string{"age", "dx", "ward", "stay", "plan"}, Quasi: []string{"age"},
				Sensitive: c.sens, Released: []string{"dx", "ward", "stay", "plan"}}
			r := csv.NewReader(strings.NewReader(body))
			header, _ := r.Read()
			m, err := Release(spec, header, r)
			if err != nil {
				t.Fatal(err)
			}
			if c.want == nil {
				if len(m.Released) != 0 {
					t.Fatalf("measured %+v without a requirement", m.Released)
				}
				return
			}
			if len(m.Released) != 3 { // dx is not measured against itself
				t.Fatalf("measured %d pairs, want 3: %+v", len(m.Released), m.Released)
			}
			for _, got := range m.Released {
				w, ok := c.want[got.Column]
				if !ok {
					continue
				}
				if got.Sensitive != "dx" || got.Groups != w.groups || got.FailingGroups != w.failing || got.Records != w.records {
					t.Errorf("%s: measured %+v, want groups %d, failing %d, records %d", got.Column, got, w.groups, w.failing, w.records)
				}
				if got.Fails() != (w.failing > 0) {
					t.Errorf("%s: Fails() = %v", got.Column, got.Fails())
				}
			}
		})
	}
}

// TestReleasedColumnMissing: a column to measure that the release lacks is a
// violation, not a column measured as empty.
func TestReleasedColumnMissing(t *testing.T) {
	spec := Spec{K: 1, InputRows: 1, Columns: []string{"age", "dx"}, Quasi: []string{"age"},
		Sensitive: []Sensitive{{Column: "dx", Values: []string{"a"}, Reference: []int64{1}, Diversity: []diversity.Model{{Variant: diversity.Distinct, L: 1}}}},
		Released:  []string{"ward"}}
	if _, err := NewCounter(spec, spec.Columns); err == nil || !strings.Contains(err.Error(), `"ward"`) {
		t.Fatalf("got %v, want a violation naming ward", err)
	}
}
