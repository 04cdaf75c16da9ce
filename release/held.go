package release

import (
	"errors"
	"strings"

	"sanitizer/fault"
	"sanitizer/generalize"
	"sanitizer/schema"
	"sanitizer/table"
)

// heldColumn is a kept column other than a quasi-identifier that pass 1 numbers
// beside the quasi-identifiers when the input is text (CSV): each distinct value is
// checked once, as pass 2 would check it in every record, and pass 2 writes the column
// from its numbers instead of reading the input again. A column whose values outgrow
// heldValues or heldBytes is let go during pass 1 (numbers dropped) and read by pass 2
// as before, so that what pass 1 holds stays about the size of the encoded codes.
type heldColumn struct {
	pos    int                   // the input column
	conf   *schema.Column        // its configuration
	listed *generalize.Hierarchy // a sensitive column's hierarchy file (nil: none)
	d      *dictionary           // while pass 1 numbers it; nil once let go
	bytes  int                   // the values' length so far
	null   int32                 // the number of a null, −1 until one is met
	held   bool                  // pass 1 numbered every record
	values []string              // after pass 1: the value of each number
	codes  generalize.Codes      // after pass 1: every record's number
}

// The bounds on a held column's distinct values: past either, pass 2 reads the column.
const (
	heldValues = 1 << 16
	heldBytes  = 16 << 20
)

// heldColumns is the kept columns pass 1 numbers for pass 2 (see heldColumn): every
// kept column that is not a quasi-identifier, when the input is text; none otherwise
// (Parquet and Arrow columns are passed through as arrays or read as text by pass 2).
func heldColumns(p *plan, listed []*generalize.Hierarchy) []*heldColumn {
	if !p.TextIn {
		return nil
	}
	var out []*heldColumn
	pseudonym := p.PseudonymAt() // its ids are read by pass 2 and written as pseudonyms
	for _, pos := range p.Kept {
		if c := p.Conf[pos]; c.Role != schema.Quasi && pos != pseudonym {
			out = append(out, &heldColumn{pos: pos, conf: c, listed: listed[pos], d: newDictionary(), null: -1})
		}
	}
	return out
}

// errLetGo is a held column's values outgrowing the bounds.
var errLetGo = errors.New("too many values to hold")

// add numbers field f (the column) of the records of b. A value met for the first time
// is checked as pass 2 checks every record's (its type, a sensitive column's null and
// hierarchy file); its errors name the file, row and column, never the value. It
// returns errLetGo when the column outgrows the bounds.
func (h *heldColumn) add(p *plan, b *table.Batch, f int) error {
	d := h.d
	for i := range b.N {
		if p.IsNull(b, i, f, h.pos) && h.conf.Role != schema.Sensitive {
			if h.null < 0 {
				h.null = h.newValue("", b.First+i)
			}
			d.put(h.null)
			continue
		}
		v := b.Fields[i*b.Width+f]
		if p.IsNull(b, i, f, h.pos) {
			if h.conf.Null == nil {
				return nullError(p, b.First+i, h.conf.Name)
			}
			v = *h.conf.Null
		}
		c, ok := d.lookup(v)
		if !ok {
			if err := h.check(p, v, b.First+i); err != nil {
				return err
			}
			if len(d.values) >= heldValues || h.bytes+len(v) > heldBytes {
				return errLetGo
			}
			v = strings.Clone(v) // not the input's block the field may point into
			c = h.newValue(v, b.First+i)
			d.index[v] = c
			h.bytes += len(v)
		}
		d.put(c)
	}
	return nil
}

// newValue numbers a value first met at row.
func (h *heldColumn) newValue(v string, row int) int32 {
	c := int32(len(h.d.values))
	h.d.values = append(h.d.values, v)
	h.d.first = append(h.d.first, row)
	return c
}

// check checks a value of the column (not a null) as pass 2 does.
func (h *heldColumn) check(p *plan, v string, row int) error {
	if err := table.CheckType(h.conf, v); err != nil {
		return p.Config.Wrap("columns."+h.conf.Name+".type", fault.BadInput("%s: column %q: %w", p.At(row), h.conf.Name, err))
	}
	if h.listed != nil {
		if _, ok := h.listed.Leaf(v); !ok {
			return p.Config.Errorf(hierarchyKey(p.Config, h.conf.Name), "%s: column %q: value not listed in hierarchy %s", p.At(row), h.conf.Name, h.listed.Source())
		}
	}
	return nil
}

// letGo drops the column's numbers: pass 2 reads it.
func (h *heldColumn) letGo() { h.d = nil }

// finish turns the numbers of a column still held into its codes.
func (h *heldColumn) finish() {
	if h.d == nil {
		return
	}
	h.values = h.d.values
	h.codes = h.d.leafCodes(len(h.values), nil)
	h.d, h.held = nil, true
}
