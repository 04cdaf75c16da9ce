package dprun

import (
	"fmt"
	"math"
	"strconv"

	"sanitizer/job"
	"sanitizer/schema"
	"sanitizer/table"
)

// dpDomain is a column's declared DP domain: the labels of its cells, in order, and the
// mapping of a value (canonical text) to its cell. It is built from the configuration
// alone, never from the data.
type dpDomain struct {
	labels []string
	cell   func(v string) (int32, bool) // false: outside the domain
}

// newDPDomain builds the domain of column c of type typ (the type its values have).
// A hierarchy file is parsed from the bytes hier read at the start of the run. Errors
// are at the FILE:LINE of cfg's key.
func newDPDomain(cfg *schema.Config, c *schema.Column, typ schema.Type, hier *job.HierFiles) (*dpDomain, error) {
	key := "columns." + c.Name + ".domain"
	d := c.Domain
	if d == nil {
		return nil, cfg.Errorf(key, "a DP output uses column %q, which needs a declared domain (a list, a range with width, or a hierarchy level)", c.Name)
	}
	dom := &dpDomain{}
	switch {
	case len(d.Values) > 0:
		index := make(map[string]int32, len(d.Values))
		for i, v := range d.Values {
			canon, ok := table.Canonical(typ, v)
			if !ok {
				return nil, cfg.Errorf(fmt.Sprintf("%s[%d]", key, i), "%q is not a %s value", v, typ)
			}
			if _, dup := index[canon]; dup {
				return nil, cfg.Errorf(fmt.Sprintf("%s[%d]", key, i), "%q is the same %s as an earlier value", v, typ)
			}
			index[canon] = int32(i)
			dom.labels = append(dom.labels, canon)
		}
		dom.cell = func(v string) (int32, bool) {
			if i, ok := index[v]; ok {
				return i, true
			}
			// A typed value in another spelling (a CSV field "07" of an integer column).
			canon, ok := table.Canonical(typ, v)
			if !ok || canon == v {
				return 0, false
			}
			i, ok := index[canon]
			return i, ok
		}
	case d.Range != nil:
		return rangeDomain(cfg, dom, key, typ, d.Range[0], d.Range[1], d.Width)
	case d.HierarchyLevel != nil:
		if c.Hierarchy == nil || c.Hierarchy.File == "" {
			return nil, cfg.Errorf(key+".hierarchy-level", "needs a hierarchy file on column %q (a built hierarchy has no finite list of values)", c.Name)
		}
		h, err := hier.Hierarchy(c.Hierarchy.File)
		if err != nil {
			return nil, cfg.Wrap(job.HierFileKey(c.Name), err)
		}
		level := *d.HierarchyLevel
		if level >= h.Height() {
			return nil, cfg.Errorf(key+".hierarchy-level", "%d is above the hierarchy's top level %d", level, h.Height()-1)
		}
		for code := 0; code < h.Size(level); code++ {
			dom.labels = append(dom.labels, h.Value(level, int32(code)))
		}
		dom.cell = func(v string) (int32, bool) {
			leaf, ok := h.Leaf(v)
			if !ok {
				return 0, false
			}
			return h.Code(level, leaf), true
		}
	default:
		return nil, cfg.Errorf(key, "empty")
	}
	return dom, nil
}

// maxRangeCells bounds the number of bins of a range domain.
const maxRangeCells = 1 << 20

// rangeDomain fills dom with the bins of [lo, hi] of the given width: for integers the
// closed bins [lo, lo+w−1], [lo+w, lo+2w−1], … (the last one ends at hi); for floats the
// half-open bins [lo, lo+w), … with the last closed at hi.
func rangeDomain(cfg *schema.Config, dom *dpDomain, key string, typ schema.Type, lo, hi, w float64) (*dpDomain, error) {
	switch typ {
	case schema.Integer:
		if lo != math.Trunc(lo) || hi != math.Trunc(hi) || w != math.Trunc(w) {
			return nil, cfg.Errorf(key, "an integer column needs a whole range and width, got [%g, %g] width %g", lo, hi, w)
		}
	case schema.Float:
	default:
		return nil, cfg.Errorf(key, "a range needs a column of type integer or float (declare its type), not %s", typ)
	}
	var n float64
	if typ == schema.Integer {
		n = math.Floor((hi-lo)/w) + 1
	} else {
		n = math.Max(1, math.Ceil((hi-lo)/w))
	}
	if n > maxRangeCells {
		return nil, cfg.Errorf(key, "%g bins, more than %d", n, maxRangeCells)
	}
	bins := int(n)
	for i := 0; i < bins; i++ {
		a := lo + float64(i)*w
		if typ == schema.Integer {
			b := math.Min(a+w-1, hi)
			dom.labels = append(dom.labels, "["+table.FormatFloat(a)+","+table.FormatFloat(b)+"]")
			continue
		}
		b, closing := a+w, ")"
		if i == bins-1 {
			b, closing = hi, "]"
		}
		dom.labels = append(dom.labels, "["+table.FormatFloat(a)+","+table.FormatFloat(b)+closing)
	}
	dom.cell = func(v string) (int32, bool) {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || !(x >= lo && x <= hi) {
			return 0, false
		}
		i := int(math.Floor((x - lo) / w))
		return int32(min(i, bins-1)), true
	}
	return dom, nil
}
