package release

import (
	"fmt"
	"math/big"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"

	"sanitizer/generalize"
	"sanitizer/schema"
	"sanitizer/table"
)

// plan is a release configuration checked against the input's header: what happens to
// every input column.
type plan struct {
	cfg      *schema.Config
	input    string
	output   string
	header   []string         // input columns, in file order
	conf     []*schema.Column // per input column; nil when dropped
	quasi    []int            // input positions of the quasi-identifiers, in configuration order
	kept     []int            // input positions written to the release, in file order
	maxSupp  int
	metric   string
	quasiCfg []schema.Column

	inFormat, outFormat string
	types               []schema.Type    // per input column: the type its values have
	ints                []table.IntType  // per input column: an integer's width and signedness
	arrowTypes          []arrow.DataType // per input column: the file's type (nil: CSV)
	textIn              bool             // the input is text (CSV): typed values are checked
	emptyNull           []bool           // per input column: an empty field is a null (CSV, typed)
	progress            *Progress
	hier                *hierFiles // the bytes of every hierarchy file, read once
	// locate, for an input in parts, names the part holding a record and its row
	// there (nil: the input is one file)
	locate func(row int) (string, int)
}

// at names input record row (0-based): "FILE: row N", the file being the part of an
// input in parts that holds it, N its 1-based row there.
func (p *plan) at(row int) string {
	if p.locate != nil {
		file, n := p.locate(row)
		return fmt.Sprintf("%s: row %d", file, n)
	}
	return fmt.Sprintf("%s: row %d", p.input, row+1)
}

// isNull reports whether field f of record i of b, input column pos, is null.
func (p *plan) isNull(b *table.Batch, i, f, pos int) bool {
	return b.Null(i, f) || (p.emptyNull[pos] && b.Fields[i*b.Width+f] == "")
}

// outColumns is the release's columns: generalized quasi-identifiers are text, the
// other kept columns keep their type; only insensitive columns may hold nulls.
func (p *plan) outColumns() []table.OutColumn {
	out := make([]table.OutColumn, len(p.kept))
	for j, pos := range p.kept {
		c := p.conf[pos]
		out[j] = table.OutColumn{Name: p.header[pos], Type: p.types[pos], Ints: p.ints[pos], Arrow: p.arrowTypes[pos], Nullable: c.Role == schema.Insensitive}
		if c.Role == schema.Quasi {
			out[j].Type, out[j].Ints, out[j].Arrow = schema.String, table.IntType{}, nil
		}
	}
	return out
}

// checkReleaseConfig rejects settings a release cannot honour (yet): failing closed is
// better than publishing without a requested protection.
func checkReleaseConfig(cfg *schema.Config) error {
	where := cfg.File
	if where == "" {
		where = "configuration"
	}
	switch {
	case cfg.Privacy.K < 1:
		return schema.BadInput("%s: privacy.k: required for a release (k ≥ 1)", where)
	case cfg.Search.Algorithm != "" && cfg.Search.Algorithm != "optimal" && cfg.Search.Algorithm != "mondrian":
		return schema.BadInput("%s: search.algorithm: %q is not supported by this version (use optimal or mondrian)", where, cfg.Search.Algorithm)
	}
	switch cfg.Search.Metric {
	case "", generalize.MetricLoss, generalize.MetricDiscernibility:
	default:
		return schema.BadInput("%s: search.metric: %q is not supported by this version (use loss or discernibility)", where, cfg.Search.Metric)
	}
	if len(cfg.Quasi()) == 0 {
		return schema.BadInput("%s: columns: a release needs at least one quasi-identifier", where)
	}
	return nil
}

// maxSuppressed is the number of records the limit allows: floor(share × rows), the
// share taken as the decimal the configuration wrote (0.05 × 100 is 5, not 4, and
// 0.282 × 10⁸ is 28200000), computed exactly.
func maxSuppressed(share float64, rows int) int {
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(share, 'g', -1, 64))
	if !ok {
		return 0
	}
	r.Mul(r, new(big.Rat).SetInt64(int64(rows)))
	return int(new(big.Int).Quo(r.Num(), r.Denom()).Int64())
}

// newPlan matches the configuration's columns with the input's columns and types.
func newPlan(cfg *schema.Config, input, output string, cols []table.Column) (*plan, error) {
	header := make([]string, len(cols))
	for i, c := range cols {
		header[i] = c.Name
	}
	p := &plan{cfg: cfg, input: input, output: output, header: header, metric: cfg.Search.Metric}
	if p.metric == "" {
		p.metric = generalize.MetricLoss
	}
	p.conf = make([]*schema.Column, len(header))
	// A "header" that names none of the configured columns is probably a record (a
	// file without a header row): say so without quoting it.
	named := false
	for _, name := range header {
		named = named || cfg.Column(name) != nil
	}
	if !named {
		return nil, schema.BadInput("%s: the header names none of the configured columns (if the file has no header row, set input.csv.header: false)", input)
	}
	pos := map[string]int{}
	for i, name := range header {
		pos[name] = i
		c := cfg.Column(name)
		if c == nil {
			if cfg.Unlisted == "drop" {
				continue
			}
			return nil, schema.BadInput("%s: column %q is not in the configuration (name it, or set unlisted: drop)", input, name)
		}
		p.conf[i] = c
		if c.Role != schema.Identifier {
			p.kept = append(p.kept, i)
		}
	}
	for _, c := range cfg.Columns {
		i, ok := pos[c.Name]
		if !ok {
			return nil, schema.BadInput("%s: configured column %q is missing from the input", input, c.Name)
		}
		if c.Role == schema.Quasi {
			p.quasi = append(p.quasi, i)
			p.quasiCfg = append(p.quasiCfg, c)
		}
	}
	p.types = make([]schema.Type, len(cols))
	p.ints = make([]table.IntType, len(cols))
	p.arrowTypes = make([]arrow.DataType, len(cols))
	p.emptyNull = make([]bool, len(cols))
	for i, col := range cols {
		c := p.conf[i]
		p.ints[i], p.arrowTypes[i] = col.Ints, col.Arrow
		switch {
		case col.Unsupported != "" && c != nil && c.Role != schema.Identifier:
			return nil, schema.BadInput("%s: column %q: values of type %s cannot be read (drop the column: role identifier)", input, col.Name, col.Unsupported)
		case c == nil:
			p.types[i] = col.Type
		case col.Type == "": // text: the declared type, checked value by value
			p.textIn = true
			p.types[i] = c.Type
			p.emptyNull[i] = c.Type != schema.String
		case c.TypeDeclared && c.Type != col.Type:
			return nil, schema.BadInput("%s: column %q: the configuration declares type %s but the file's column holds %s values", input, c.Name, c.Type, col.Type)
		default:
			p.types[i] = col.Type
		}
	}
	return p, nil
}

// releaseHeader is the release's columns, in input order.
func (p *plan) releaseHeader() []string {
	out := make([]string, len(p.kept))
	for j, i := range p.kept {
		out[j] = p.header[i]
	}
	return out
}

func (p *plan) quasiNames() []string {
	out := make([]string, len(p.quasi))
	for j, i := range p.quasi {
		out[j] = p.header[i]
	}
	return out
}
