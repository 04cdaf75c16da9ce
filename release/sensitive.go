package release

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"sanitizer/closeness"
	"sanitizer/diversity"
	"sanitizer/generalize"
	"sanitizer/job"
	"sanitizer/schema"
	"sanitizer/verify"
)

// protected is a sensitive column that l-diversity or t-closeness protects.
type protected struct {
	cfg       *schema.Config // for messages: where its keys are
	conf      *schema.Column
	pos       int // input position
	diversity []diversity.Model
	closeness []verify.Closeness
	likeness  []verify.Likeness
	order     []string // the t-closeness order: list, if any
	// filled from the input:
	values []string         // value i is numbered i (the order the distance needs)
	index  map[string]int32 // value → number
	counts []int64          // the input's records per value (t-closeness's reference)
	tree   *closeness.Tree  // hierarchical distance: over the numbered values
	hier   *generalize.Hierarchy
}

// protectedColumns lists the sensitive columns the configuration protects, in order of
// their first requirement.
func (p *plan) protectedColumns() []*protected {
	var out []*protected
	get := func(name string) *protected {
		for _, s := range out {
			if s.conf.Name == name {
				return s
			}
		}
		conf := p.Config.Column(name)
		if conf == nil {
			return nil // validate's configuration without the columns the input lacks
		}
		s := &protected{cfg: p.Config, conf: conf, pos: slices.Index(p.Header, name)}
		out = append(out, s)
		return s
	}
	for _, l := range p.Config.Privacy.LDiversity {
		s := get(l.Column)
		if s == nil {
			continue
		}
		s.diversity = append(s.diversity, diversity.Model{Variant: l.Variant, L: l.L, C: l.C, Estimator: l.Estimator})
	}
	for _, t := range p.Config.Privacy.TCloseness {
		s := get(t.Column)
		if s == nil {
			continue
		}
		s.closeness = append(s.closeness, verify.Closeness{T: t.T, Distance: t.Distance})
		s.order = t.Order
	}
	for _, b := range p.Config.Privacy.BetaLikeness {
		s := get(b.Column)
		if s == nil {
			continue
		}
		s.likeness = append(s.likeness, verify.Likeness{Beta: b.Beta, Enhanced: b.Variant == closeness.Enhanced})
	}
	return out
}

// distance is the column's t-closeness distance ("" without t-closeness).
func (s *protected) distance() closeness.Distance {
	if len(s.closeness) == 0 {
		return ""
	}
	return s.closeness[0].Distance
}

// number numbers the column's values as its distance needs: the hierarchy file's leaves
// in file order (hierarchical distance; the tree is built from the file), the order:
// list, or the values in increasing numeric or time order (ordered distance), or first
// appearance otherwise. present are the values the input holds, in first appearance;
// at(i) says where value i first appears, for messages. Errors name the column and the
// place, never the value.
func (s *protected) number(at func(i int) string, present []string) error {
	name := s.conf.Name
	s.index = map[string]int32{}
	switch {
	case s.distance() == closeness.Hierarchical:
		h := s.hier
		for leaf := range h.Leaves() {
			s.values = append(s.values, h.Value(0, int32(leaf)))
		}
		height := h.Height() - 1
		up := make([][]int32, height)
		size := make([]int, height)
		for l := 1; l <= height; l++ {
			up[l-1] = make([]int32, h.Leaves())
			for leaf := range h.Leaves() {
				up[l-1][leaf] = h.Code(l, int32(leaf))
			}
			size[l-1] = h.Size(l)
		}
		tree, err := closeness.NewTree(h.Leaves(), up, size)
		if err != nil {
			return s.cfg.Errorf(hierarchyKey(s.cfg, name), "%w", err)
		}
		s.tree = tree
	case s.distance() == closeness.Ordered && s.order != nil:
		s.values = s.order
	case s.distance() == closeness.Ordered:
		type keyed struct {
			v string
			k float64
		}
		ks := make([]keyed, len(present))
		for i, v := range present {
			k, ok := orderKey(s.conf.Type, v)
			if !ok {
				return s.cfg.Errorf(s.cfg.RequirementKey("t-closeness", name)+".distance", "%s: column %q: not a valid %s for the ordered distance", at(i), name, s.conf.Type)
			}
			ks[i] = keyed{v, k}
		}
		slices.SortStableFunc(ks, func(a, b keyed) int {
			switch {
			case a.k < b.k:
				return -1
			case a.k > b.k:
				return 1
			}
			return 0
		})
		for _, k := range ks {
			s.values = append(s.values, k.v)
		}
	default:
		s.values = present
	}
	for i, v := range s.values {
		s.index[v] = int32(i)
	}
	for i, v := range present {
		if _, ok := s.index[v]; !ok {
			key, where := s.cfg.RequirementKey("t-closeness", name)+".order", "privacy.t-closeness.order"
			if s.distance() == closeness.Hierarchical {
				key, where = hierarchyKey(s.cfg, name), "hierarchy "+s.hier.Source()
			}
			return s.cfg.Errorf(key, "%s: column %q: value not listed in %s", at(i), name, where)
		}
	}
	for _, d := range s.diversity {
		key := s.cfg.RequirementKey("l-diversity", name) + ".l"
		if d.Variant != diversity.Entropy && int(d.L) > len(present) {
			return s.cfg.Errorf(key, "column %q: l = %g but the input holds only %d distinct values", name, d.L, len(present))
		}
		if d.Variant == diversity.Entropy && d.L > float64(len(present)) {
			return s.cfg.Errorf(key, "column %q: l = %g but the input holds only %d distinct values (entropy cannot exceed ln %d)", name, d.L, len(present), len(present))
		}
	}
	return nil
}

// orderKey is the numeric key of a value of type typ for the ordered distance.
func orderKey(typ schema.Type, v string) (float64, bool) {
	switch typ {
	case schema.Integer, schema.Float:
		f, err := strconv.ParseFloat(v, 64)
		return f, err == nil && !math.IsNaN(f)
	case schema.Date:
		t, err := time.Parse(time.DateOnly, v)
		return float64(t.Unix()), err == nil
	case schema.Timestamp:
		t, err := time.Parse(time.RFC3339Nano, v)
		return float64(t.UnixNano()), err == nil
	}
	return 0, false
}

// buildHierarchy builds, for the hierarchical distance, the hierarchy a builder
// (intervals, mask, date) makes from the values the input holds, when the column has no
// hierarchy file. Release and Check see the values in the same order, so they build the
// same hierarchy.
func (s *protected) buildHierarchy(p *plan, d *dictionary) error {
	if s.distance() != closeness.Hierarchical || s.hier != nil {
		return nil
	}
	if s.conf.Hierarchy == nil {
		return s.cfg.Errorf("columns."+s.conf.Name+".hierarchy", "the hierarchical distance needs a hierarchy")
	}
	h, _, err := hierarchyFor(p, *s.conf, d, nil)
	if err != nil {
		return err
	}
	s.hier = h
	return nil
}

// spec is the verifier's view of the column.
func (s *protected) spec() verify.Sensitive {
	return verify.Sensitive{Column: s.conf.Name, Values: s.values, Reference: s.counts, Tree: s.tree, Diversity: s.diversity, Closeness: s.closeness, Likeness: s.likeness}
}

// addModels adds the protected columns' requirements to the search's options: column
// i of prot is the table's sensitive column i.
func addModels(opt *generalize.Options, prot []*protected) {
	for i, sc := range prot {
		for _, d := range sc.diversity {
			opt.Diversity = append(opt.Diversity, generalize.Diversity{Column: i, Model: d})
		}
		for _, c := range sc.closeness {
			opt.Closeness = append(opt.Closeness, generalize.Closeness{Column: i, T: c.T, Distance: c.Distance})
		}
		for _, l := range sc.likeness {
			opt.Likeness = append(opt.Likeness, generalize.Likeness{Column: i, Beta: l.Beta, Enhanced: l.Enhanced})
		}
	}
}

// SensitiveColumn is a sensitive column the configuration protects, numbered as the
// search needs: its table column without codes, and each value's number.
type SensitiveColumn struct {
	Meta  generalize.Sensitive
	Index map[string]int32
}

// sensitiveModels numbers the sensitive columns that cfg's l-diversity, t-closeness
// and β-likeness protect, in order of their first requirement, over present[name]
// (every value the input holds of the column, in an order fixed for the run) as a
// release numbers them, and adds their requirements to opt (the returned column i is
// the table's sensitive column i). hier holds the hierarchy files' bytes. A release on
// another engine, which sees the input only in parts, takes them alike; its errors
// name the column, and "the input's parts" where a value is at fault.
func sensitiveModels(cfg *schema.Config, hier *job.HierFiles, present map[string][]string, opt *generalize.Options) ([]SensitiveColumn, error) {
	p := &plan{Plan: &job.Plan{Config: cfg}}
	prot := p.protectedColumns()
	out := make([]SensitiveColumn, len(prot))
	for i, sc := range prot {
		values := present[sc.conf.Name]
		if sc.distance() == closeness.Hierarchical {
			h := sc.conf.Hierarchy
			var err error
			switch {
			case h != nil && h.File != "":
				sc.hier, err = hier.Hierarchy(h.File)
			default:
				sc.hier, err = buildColumnHierarchy(*sc.conf, values)
			}
			if err != nil {
				return nil, fmt.Errorf("columns.%s.hierarchy: %w", sc.conf.Name, err)
			}
		}
		if err := sc.number(func(int) string { return "the input's parts" }, values); err != nil {
			return nil, err
		}
		out[i] = SensitiveColumn{Meta: generalize.Sensitive{Name: sc.conf.Name, Values: len(sc.values), Tree: sc.tree}, Index: sc.index}
	}
	addModels(opt, prot)
	return out, nil
}
