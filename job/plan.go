package job

import (
	"fmt"
	"slices"

	"sanitizer/fault"
	"sanitizer/schema"
	"sanitizer/table"

	"github.com/apache/arrow-go/v18/arrow"
)

// Plan is a configuration checked against the input's columns: what happens to every
// input column (its role, its type) and where the run's records come from.
type Plan struct {
	Config   *schema.Config
	Input    string
	Header   []string         // input columns, in file order
	Conf     []*schema.Column // per input column; nil when dropped
	Quasi    []int            // input positions of the quasi-identifiers, in configuration order
	Kept     []int            // input positions written to the release, in file order (PseudonymAt's too)
	QuasiCfg []schema.Column

	InFormat   schema.Format
	Types      []schema.Type    // per input column: the type its values have
	Ints       []table.IntType  // per input column: an integer's width and signedness
	ArrowTypes []arrow.DataType // per input column: the file's type (nil: CSV)
	TextIn     bool             // the input is text (CSV): typed values are checked
	EmptyNull  []bool           // per input column: an empty field is a null (CSV, typed)
	// PassOnly lists the kept input columns whose values (decimals, binary) have no
	// text form here: they can only be passed through, into a Parquet or Arrow release.
	PassOnly []int
	Hier     *HierFiles // the bytes of every hierarchy file, read once
	// locate, for an input in parts, names the part holding a record and its row
	// there (nil: the input is one file)
	locate func(row int) (string, int)
}

// At names input record row (0-based): "FILE: row N", the file being the part of an
// input in parts that holds it, N its 1-based row there.
func (p *Plan) At(row int) string {
	if p.locate != nil {
		file, n := p.locate(row)
		return fmt.Sprintf("%s: row %d", file, n)
	}
	return fmt.Sprintf("%s: row %d", p.Input, row+1)
}

// IsNull reports whether field f of record i of b, input column pos, is null.
func (p *Plan) IsNull(b *table.Batch, i, f, pos int) bool {
	return b.Null(i, f) || (p.EmptyNull[pos] && b.Fields[i*b.Width+f] == "")
}

// OutColumns is the release's columns: generalized quasi-identifiers and the
// pseudonym of the privacy unit are text, the other kept columns keep their type; only
// insensitive columns may hold nulls.
func (p *Plan) OutColumns() []table.OutColumn {
	out := make([]table.OutColumn, len(p.Kept))
	pseudonym := p.PseudonymAt()
	for j, pos := range p.Kept {
		c := p.Conf[pos]
		out[j] = table.OutColumn{Name: p.Header[pos], Type: p.Types[pos], Ints: p.Ints[pos], Arrow: table.ReleasedType(p.ArrowTypes[pos]), Nullable: c.Role == schema.Insensitive}
		if c.Role == schema.Quasi || pos == pseudonym {
			out[j].Type, out[j].Ints, out[j].Arrow = schema.String, table.IntType{}, nil
		}
	}
	return out
}

// PseudonymAt is the input position of the privacy unit's column when the release
// holds it as a keyed pseudonym of the id (privacy.privacy-unit.pseudonym), −1
// otherwise. The column is then kept, under its own name and at its place among the
// input's columns, but its values are never written as they are: the release writes
// each record's pseudonym in their place.
func (p *Plan) PseudonymAt() int {
	if p.Config == nil || p.Config.Privacy.Unit == nil || p.Config.Privacy.Unit.Pseudonym == nil {
		return -1
	}
	return slices.Index(p.Header, p.Config.Privacy.Unit.Column)
}

// NewPlan matches the configuration's columns with the input's columns and types. Its
// error is CheckColumns's.
func NewPlan(cfg *schema.Config, input string, cols []table.Column) (*Plan, error) {
	if _, err := CheckColumns(cfg, input, cols); err != nil {
		return nil, err
	}
	header := make([]string, len(cols))
	pos := map[string]int{}
	for i, c := range cols {
		header[i] = c.Name
		pos[c.Name] = i
	}
	p := &Plan{Config: cfg, Input: input, Header: header}
	p.Conf = make([]*schema.Column, len(header))
	pseudonym := p.PseudonymAt()
	for i, name := range header {
		if c := cfg.Column(name); c != nil {
			p.Conf[i] = c
			if c.Role != schema.Identifier || i == pseudonym {
				p.Kept = append(p.Kept, i)
			}
		}
	}
	for _, c := range cfg.Columns {
		if c.Role == schema.Quasi {
			p.Quasi = append(p.Quasi, pos[c.Name])
			p.QuasiCfg = append(p.QuasiCfg, c)
		}
	}
	p.Types = make([]schema.Type, len(cols))
	p.Ints = make([]table.IntType, len(cols))
	p.ArrowTypes = make([]arrow.DataType, len(cols))
	p.EmptyNull = make([]bool, len(cols))
	for i, col := range cols {
		c := p.Conf[i]
		p.Ints[i], p.ArrowTypes[i] = col.Ints, col.Arrow
		switch {
		case col.PassOnly && c != nil && c.Role == schema.Insensitive:
			p.PassOnly = append(p.PassOnly, i) // no text form: its values pass through as they are
		case c == nil:
			p.Types[i] = col.Type
		case col.Type == "": // text: the declared type, checked value by value
			p.TextIn = true
			p.Types[i] = c.Type
			p.EmptyNull[i] = c.Type != schema.String
		default:
			p.Types[i] = col.Type
		}
	}
	return p, nil
}

// CheckColumns checks the input's columns cols against the configuration: every
// configured column is in the input with a type it may have, and every input column is
// configured (or unlisted: drop). Each error names the input file and column at the
// configuration's FILE:LINE of the key at fault; err lists them all. faulty is the
// configured columns at fault (all of them when the header names none): what depends
// on them cannot be checked against this input.
func CheckColumns(cfg *schema.Config, input string, cols []table.Column) (faulty []string, err error) {
	// A "header" that names none of the configured columns is probably a record (a
	// file without a header row): say so without quoting it.
	named := false
	for _, c := range cols {
		named = named || cfg.Column(c.Name) != nil
	}
	if !named {
		for _, c := range cfg.Columns {
			faulty = append(faulty, c.Name)
		}
		return faulty, cfg.Errorf("columns", "%s: the header names none of the configured columns (if the file has no header row, set input.csv.header: false)", input)
	}
	var errs schema.ErrorList
	atFault := func(name, key string, err error) {
		faulty = append(faulty, name)
		errs.Add(cfg.Wrap(key, err))
	}
	in := map[string]bool{}
	for _, col := range cols {
		in[col.Name] = true
		c := cfg.Column(col.Name)
		if c == nil {
			if cfg.Unlisted != schema.UnlistedDrop {
				errs.Add(cfg.Errorf("columns", "%s: column %q is not in the configuration (name it, or set unlisted: drop)", input, col.Name))
			}
			continue
		}
		if key, err := columnType(c, col, input); err != nil {
			atFault(c.Name, "columns."+c.Name+"."+key, err)
		}
	}
	for _, c := range cfg.Columns {
		if !in[c.Name] {
			atFault(c.Name, "columns."+c.Name, fault.BadInput("%s: configured column %q is missing from the input", input, c.Name))
		}
	}
	return faulty, errs.Err()
}

// columnType is nil when input column col may be read as c configures it, else the
// error and the key of c at fault ("type" or "role").
func columnType(c *schema.Column, col table.Column, input string) (string, error) {
	switch {
	case col.PassOnly && c.Role == schema.Insensitive && c.TypeDeclared:
		return "type", fault.BadInput("%s: column %q: the configuration declares type %s but the file's column holds %s values", input, c.Name, c.Type, col.Unsupported)
	case col.PassOnly && c.Role == schema.Insensitive:
		return "", nil
	case col.PassOnly && c.Role != schema.Identifier:
		return "role", fault.BadInput("%s: column %q: values of type %s can only be passed through as they are (role insensitive) or dropped (role identifier)", input, col.Name, col.Unsupported)
	case col.Unsupported != "" && c.Role != schema.Identifier:
		return "role", fault.BadInput("%s: column %q: values of type %s cannot be read (drop the column: role identifier)", input, col.Name, col.Unsupported)
	case col.Type != "" && c.TypeDeclared && c.Type != col.Type:
		return "type", fault.BadInput("%s: column %q: the configuration declares type %s but the file's column holds %s values", input, c.Name, c.Type, col.Type)
	}
	return "", nil
}

// ReleaseHeader is the release's columns, in input order.
func (p *Plan) ReleaseHeader() []string {
	out := make([]string, len(p.Kept))
	for j, i := range p.Kept {
		out[j] = p.Header[i]
	}
	return out
}

// QuasiNames is the quasi-identifiers' names, in configuration order.
func (p *Plan) QuasiNames() []string {
	out := make([]string, len(p.Quasi))
	for j, i := range p.Quasi {
		out[j] = p.Header[i]
	}
	return out
}
