package dprun

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sanitizer/fault"
	"sanitizer/job"
	"sanitizer/schema"
)

func TestDPDomains(t *testing.T) {
	dir := t.TempDir()
	hier := filepath.Join(dir, "dx.csv")
	if err := os.WriteFile(hier, []byte("flu;resp;*\ncold;resp;*\nsepsis;inf;*\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hierTop := filepath.Join(dir, "dxtop.csv")
	if err := os.WriteFile(hierTop, []byte("flu;resp;any disease\ncold;resp;any disease\nsepsis;inf;any disease\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	level := func(n int) *int { return &n }
	tests := []struct {
		name   string
		typ    schema.Type
		dom    schema.Domain
		file   string
		labels []string
		cells  map[string]int32 // value → cell; -1: outside
	}{
		{"strings", schema.String, schema.Domain{Values: []string{"F", "M"}}, "", []string{"F", "M"},
			map[string]int32{"F": 0, "M": 1, "f": -1, "": -1}},
		{"integers in any spelling", schema.Integer, schema.Domain{Values: []string{"7", "+8"}}, "", []string{"7", "8"},
			map[string]int32{"7": 0, "07": 0, "8": 1, "9": -1, "x": -1}},
		{"integer range", schema.Integer, schema.Domain{Range: &[2]float64{0, 119}, Width: 10}, "",
			[]string{"[0,9]", "[10,19]", "[20,29]", "[30,39]", "[40,49]", "[50,59]", "[60,69]", "[70,79]", "[80,89]", "[90,99]", "[100,109]", "[110,119]"},
			map[string]int32{"0": 0, "9": 0, "10": 1, "119": 11, "120": -1, "-1": -1, "abc": -1}},
		{"integer range, short last bin", schema.Integer, schema.Domain{Range: &[2]float64{1, 10}, Width: 4}, "",
			[]string{"[1,4]", "[5,8]", "[9,10]"}, map[string]int32{"1": 0, "8": 1, "10": 2, "11": -1}},
		{"float range", schema.Float, schema.Domain{Range: &[2]float64{0, 1}, Width: 0.5}, "",
			[]string{"[0,0.5)", "[0.5,1]"}, map[string]int32{"0": 0, "0.49": 0, "0.5": 1, "1": 1, "1.01": -1, "NaN": -1}},
		{"hierarchy level 1", schema.String, schema.Domain{HierarchyLevel: level(1)}, hier,
			[]string{"resp", "inf"}, map[string]int32{"flu": 0, "cold": 0, "sepsis": 1, "resp": -1}},
		{"hierarchy level 1 under a labelled top", schema.String, schema.Domain{HierarchyLevel: level(1)}, hierTop,
			[]string{"resp", "inf"}, map[string]int32{"flu": 0, "sepsis": 1}},
		{"a labelled top level", schema.String, schema.Domain{HierarchyLevel: level(2)}, hierTop,
			[]string{"any disease"}, map[string]int32{"flu": 0, "sepsis": 0, "any disease": -1}},
		{"hierarchy level 0", schema.String, schema.Domain{HierarchyLevel: level(0)}, hier,
			[]string{"flu", "cold", "sepsis"}, map[string]int32{"cold": 1, "measles": -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &schema.Column{Name: "x", Type: tt.typ, Domain: &tt.dom}
			if tt.file != "" {
				c.Hierarchy = &schema.Hierarchy{File: tt.file}
			}
			hf, err := job.ReadHierFiles(&schema.Config{Columns: []schema.Column{*c}})
			if err != nil {
				t.Fatal(err)
			}
			d, err := newDPDomain(&schema.Config{}, c, tt.typ, hf)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(d.labels, tt.labels) {
				t.Errorf("labels %v, want %v", d.labels, tt.labels)
			}
			for v, want := range tt.cells {
				got, ok := d.cell(v)
				if !ok {
					got = -1
				}
				if got != want {
					t.Errorf("cell(%q) = %d, want %d", v, got, want)
				}
			}
		})
	}
}

func TestDPDomainErrors(t *testing.T) {
	level := 3
	tests := []struct {
		name string
		col  schema.Column
		want string
	}{
		{"none", schema.Column{Name: "x", Type: schema.String}, "needs a declared domain"},
		{"bad integer", schema.Column{Name: "x", Type: schema.Integer, Domain: &schema.Domain{Values: []string{"1", "one"}}}, "domain[1]"},
		{"same integer twice", schema.Column{Name: "x", Type: schema.Integer, Domain: &schema.Domain{Values: []string{"1", "01"}}}, "same integer"},
		{"fractional integer range", schema.Column{Name: "x", Type: schema.Integer, Domain: &schema.Domain{Range: &[2]float64{0, 10}, Width: 2.5}}, "whole range and width"},
		{"range on dates", schema.Column{Name: "x", Type: schema.Date, Domain: &schema.Domain{Range: &[2]float64{0, 10}, Width: 2}}, "integer or float"},
		{"too many bins", schema.Column{Name: "x", Type: schema.Integer, Domain: &schema.Domain{Range: &[2]float64{0, 1e9}, Width: 1}}, "bins"},
		{"level of a built hierarchy", schema.Column{Name: "x", Type: schema.String, Hierarchy: &schema.Hierarchy{Mask: &schema.Mask{Max: 1}}, Domain: &schema.Domain{HierarchyLevel: &level}}, "hierarchy file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newDPDomain(&schema.Config{}, &tt.col, tt.col.Type, &job.HierFiles{})
			if !errors.Is(err, fault.ErrBadInput) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "columns.x.domain") {
				t.Errorf("err = %v, want bad input naming columns.x.domain and %q", err, tt.want)
			}
		})
	}
}
