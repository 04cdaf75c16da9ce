package dprun

import (
	"math"

	"sanitizer/fault"
	"sanitizer/job"
	"sanitizer/schema"
	"sanitizer/table"
)

// Mapper maps one record at a time to what every output counts, with the CLI's
// reading of each value (null-as, canonical spellings, the declared domains and their
// "other" cell) and its errors: for an engine that counts elsewhere (sanitize-beam's
// workers), where the CLI reads whole columns.
type Mapper struct {
	p     *job.Plan
	outs  []*Output
	cols  []int   // the input positions streamed
	out   [][]int // per output, per column of its cells, the field it is in
	value []int   // per output, the field of its aggregated value (−1: none)
	unit  int     // the field of the privacy unit (−1: none)
	cells []int32
}

// NewMapper is the mapper of the outputs outs (Describe) over input plan p.
func NewMapper(cfg *schema.Config, p *job.Plan, outs []*Output) (*Mapper, error) {
	m := &Mapper{p: p, outs: outs, unit: -1}
	field := map[string]int{}
	fieldOf := func(name string) (int, error) {
		if f, ok := field[name]; ok {
			return f, nil
		}
		for pos, h := range p.Header {
			if h == name {
				field[name] = len(m.cols)
				m.cols = append(m.cols, pos)
				return field[name], nil
			}
		}
		return 0, fault.BadInput("%s: column %q: not in the input", p.Input, name)
	}
	for _, o := range outs {
		var fs []int
		for _, name := range o.Manifest.Columns {
			f, err := fieldOf(name)
			if err != nil {
				return nil, err
			}
			fs = append(fs, f)
		}
		m.out = append(m.out, fs)
		v := -1
		if a := o.Spec.Aggregate; a != nil {
			var err error
			if v, err = fieldOf(a.Column); err != nil {
				return nil, err
			}
		}
		m.value = append(m.value, v)
		m.cells = make([]int32, max(len(m.cells), len(fs)))
	}
	if u := cfg.DP.PrivacyUnit; u != nil {
		var err error
		if m.unit, err = fieldOf(u.Column); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Columns is the input positions to stream, in the order Map reads a batch's fields.
func (m *Mapper) Columns() []int { return m.cols }

// Map maps record i of b (streamed with Columns): emit gets, for each output in turn
// (out, its index), the record's privacy unit (its id as canonical text; "" without a
// privacy unit), each partition the record falls in (Output.Keys) and, for an
// aggregate, the record's value clamped to the output's bounds. A value outside an
// output's domain, when the output has no "other" cell, an unparsable or null value of
// an aggregated column and a missing unit are bad input naming the row and column,
// never the value.
func (m *Mapper) Map(b *table.Batch, i int, emit func(out int, unit string, key int64, value float64)) error {
	row := b.First + i
	unit := ""
	if m.unit >= 0 {
		pos := m.cols[m.unit]
		v, null := field(m.p, b, i, m.unit, pos)
		name := m.p.Header[pos]
		if null || v == "" {
			return m.p.Config.Errorf("dp.privacy-unit.column", "%s: column %q: no privacy unit (null or empty: every row must name its unit)", m.p.At(row), name)
		}
		var ok bool
		if unit, ok = table.Canonical(m.p.Types[pos], v); !ok {
			return fault.BadInput("%s: column %q: not a valid %s", m.p.At(row), name, m.p.Types[pos])
		}
	}
	for k, o := range m.outs {
		cells := m.cells[:len(m.out[k])]
		for c, f := range m.out[k] {
			v, null := field(m.p, b, i, f, m.cols[f])
			x, ok := o.Cell(c, v, null)
			if !ok {
				name := o.Manifest.Columns[c]
				return outsideError(m.p, row, null, name, o.Spec.Name)
			}
			cells[c] = x
		}
		value := 0.0
		if f := m.value[k]; f >= 0 {
			var err error
			if value, err = m.number(b, i, f); err != nil {
				return err
			}
			value = math.Min(math.Max(value, o.Aggregate.Lower), o.Aggregate.Upper)
		}
		o.Keys(cells, func(key int64) { emit(k, unit, key, value) })
	}
	return nil
}

// number is the number in field f of record i of b, as the CLI's addValues reads it.
func (m *Mapper) number(b *table.Batch, i, f int) (float64, error) {
	pos := m.cols[f]
	name := m.p.Header[pos]
	v, null := field(m.p, b, i, f, pos)
	if null {
		return 0, aggregatedNullError(m.p, b.First+i, name)
	}
	x, err := numberOf(m.p.Types[pos], m.p.Ints[pos], v)
	if err != nil || math.IsNaN(x) {
		return 0, fault.BadInput("%s: column %q: not a valid %s", m.p.At(b.First+i), name, m.p.Types[pos])
	}
	return x, nil
}
