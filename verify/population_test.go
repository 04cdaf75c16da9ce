package verify

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// TestSubsetRecords: the subset's records, without their flag, in order, the others
// handed to outside; a flag that is not one is an error naming the record, never the
// value.
func TestSubsetRecords(t *testing.T) {
	in := &records{recs: [][]string{{"a", "1"}, {"b", "no"}, {"c", " TRUE "}, {"d", "False"}, {"e", "yes"}, {"f", "0"}}}
	var others []string
	r := SubsetRecords(in, "study", func(rec []string) error {
		if len(rec) != 1 {
			t.Fatalf("record %v outside the subset keeps its flag", rec)
		}
		others = append(others, rec[0])
		return nil
	})
	var got []string
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(rec) != 1 {
			t.Fatalf("record %v keeps its flag", rec)
		}
		got = append(got, rec[0])
	}
	if strings.Join(got, "") != "ace" || strings.Join(others, "") != "bdf" {
		t.Errorf("subset %v, outside %v; want a c e, b d f", got, others)
	}
	bad := SubsetRecords(&records{recs: [][]string{{"a", "1"}, {"b", secret}}}, "study", nil)
	if _, err := bad.Read(); err != nil {
		t.Fatal(err)
	}
	_, err := bad.Read()
	if err == nil || !strings.Contains(err.Error(), "input record 2") || !strings.Contains(err.Error(), `"study"`) || strings.Contains(err.Error(), secret) {
		t.Errorf("bad flag: %v", err)
	}
}

// TestCheckPopulation: classes on both sides of each bound, and a class with more
// records than its population.
func TestCheckPopulation(t *testing.T) {
	rel := func(counts map[string]int64) *Classes { return &Classes{count: counts} }
	tests := []struct {
		name string
		p    Population
		rel  map[string]int64
		pop  map[string]int64
		bad  string
		want PopulationMeasured
	}{
		{"kmap holds", Population{KMap: 4}, map[string]int64{"a": 2, "b": 1}, map[string]int64{"a": 4, "b": 10}, "", PopulationMeasured{DeltaMin: 0.1, DeltaMax: 0.5, SmallestPopulation: 4}},
		{"kmap breaks", Population{KMap: 5}, map[string]int64{"a": 2, "b": 1}, map[string]int64{"a": 4, "b": 10}, "k-map's k is 5", PopulationMeasured{}},
		{"delta at bounds", Population{DeltaMin: 0.1, DeltaMax: 0.5}, map[string]int64{"a": 2, "b": 1}, map[string]int64{"a": 4, "b": 10}, "", PopulationMeasured{DeltaMin: 0.1, DeltaMax: 0.5, SmallestPopulation: 4}},
		{"delta above", Population{DeltaMax: 0.49}, map[string]int64{"a": 2}, map[string]int64{"a": 4}, "outside δ-presence's", PopulationMeasured{}},
		{"delta below", Population{DeltaMin: 0.11, DeltaMax: 1}, map[string]int64{"b": 1}, map[string]int64{"b": 10}, "outside δ-presence's", PopulationMeasured{}},
		{"not of the population", Population{DeltaMax: 1}, map[string]int64{"a": 3}, map[string]int64{"a": 2}, "has 3 records but 2 population records", PopulationMeasured{}},
		{"absent from the population", Population{KMap: 1}, map[string]int64{"z": 1}, map[string]int64{"a": 2}, "has 1 records but 0 population records", PopulationMeasured{}},
	}
	for _, tt := range tests {
		m, err := CheckPopulation(tt.p, rel(tt.rel), tt.pop)
		var v *Violation
		switch {
		case tt.bad == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.bad == "" && m != tt.want:
			t.Errorf("%s: measured %+v, want %+v", tt.name, m, tt.want)
		case tt.bad != "" && (!errors.As(err, &v) || !strings.Contains(err.Error(), tt.bad)):
			t.Errorf("%s: %v, want a violation saying %q", tt.name, err, tt.bad)
		}
	}
}

// FuzzInSubset: a flag reads as in or out exactly when it is one of the six words, in
// any case and with surrounding space.
func FuzzInSubset(f *testing.F) {
	for _, s := range []string{"1", "0", "true", " No ", "YES", "", "maybe", "tru"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		in, ok := InSubset(s)
		w := strings.ToLower(strings.TrimSpace(s))
		wantIn := w == "1" || w == "true" || w == "yes"
		wantOut := w == "0" || w == "false" || w == "no"
		if ok != (wantIn || wantOut) || (ok && in != wantIn) {
			t.Errorf("InSubset(%q) = %v, %v", s, in, ok)
		}
	})
}
