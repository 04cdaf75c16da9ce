package schema

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"sanitizer/internal/readfile"
)

// Load reads and parses the configuration file at path, a regular file of at most
// MaxConfigBytes. The result's File is path,
// Dir is the folder holding the file (relative paths in the configuration are resolved
// against it) and Digest is the hex SHA-256 of the file's bytes.
func Load(path string) (*Config, error) {
	data, err := readfile.Read(path, MaxConfigBytes)
	if err != nil {
		return nil, BadInput("reading configuration: %w", err)
	}
	return Parse(data, path, filepath.Dir(path))
}

// Parse decodes and validates configuration bytes, filling in defaults. name identifies
// the configuration in error messages and is stored in Config.File; relative paths in
// the configuration are resolved against dir. Every error matches ErrBadInput and reads
// "name:line: key.path: message".
func Parse(data []byte, name, dir string) (*Config, error) {
	label := name
	if label == "" {
		label = "configuration"
	}
	root, err := decodeYAML(data, label)
	if err != nil {
		return nil, err
	}
	p := &parser{file: label, dir: dir}
	cfg, err := p.config(root)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	cfg.File = name
	cfg.Dir = dir
	cfg.Digest = hex.EncodeToString(sum[:])
	return cfg, nil
}

// yamlLine matches the location prefix of the YAML decoder's syntax errors.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// decodeYAML returns the root node of the single YAML document in data.
func decodeYAML(data []byte, label string) (root *yaml.Node, err error) {
	defer func() {
		// The decoder is third-party code run on user input: a panic in it is
		// reported as bad input rather than crashing the run.
		if r := recover(); r != nil {
			root, err = nil, BadInput("%s: cannot decode YAML: %v", label, r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	switch err := dec.Decode(&doc); {
	case errors.Is(err, io.EOF):
		return nil, BadInput("%s:1: the configuration is empty", label)
	case err != nil:
		return nil, syntaxError(label, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].ShortTag() == "!!null" {
		return nil, BadInput("%s:%d: the configuration is empty", label, max(doc.Line, 1))
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, syntaxError(label, err)
	default:
		return nil, BadInput("%s:%d: only one YAML document is allowed", label, next.Line)
	}
	return doc.Content[0], nil
}

// syntaxError rewrites a YAML decoder error as "label:line: syntax error: ...".
func syntaxError(label string, err error) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		return BadInput("%s:%s: syntax error: %s", label, m[1], msg[len(m[0]):])
	}
	return BadInput("%s: syntax error: %s", label, strings.TrimPrefix(msg, "yaml: "))
}

// parser walks the YAML node tree of one configuration.
type parser struct {
	file string             // file name for messages
	dir  string             // folder that relative paths are resolved against
	cols map[string]*Column // configured columns by name, once parsed
}

// errorf returns a bad-input error located at n's line and naming the key path.
func (p *parser) errorf(n *yaml.Node, path, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if path == "" {
		return BadInput("%s:%d: %s", p.file, n.Line, msg)
	}
	return BadInput("%s:%d: %s: %s", p.file, n.Line, path, msg)
}

// expected reports that the value at path is not of the wanted kind.
func (p *parser) expected(n *yaml.Node, path, want string) error {
	return p.errorf(n, path, "expected %s, got %s", want, describe(n))
}

// resolve follows an alias to the node it names.
func resolve(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

// describe names the kind (and, for scalars, the value) of n for messages.
func describe(n *yaml.Node) string {
	n = resolve(n)
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		v := n.Value
		if utf8.RuneCountInString(v) > 40 {
			v = string([]rune(v)[:40]) + "…"
		}
		switch tag := n.ShortTag(); tag {
		case "!!null":
			return "null"
		case "!!str":
			return "string " + strconv.Quote(v)
		case "!!int":
			return "integer " + v
		case "!!float":
			return "number " + v
		case "!!bool":
			return "boolean " + v
		case "!!timestamp":
			return "timestamp " + v
		default:
			return "value tagged " + tag
		}
	}
	return "an unexpected YAML node"
}

// join appends a mapping key to a key path.
func join(path, key string) string {
	if strings.IndexFunc(key, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 || key == "" {
		key = strconv.Quote(key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// index appends a list index to a key path.
func index(path string, i int) string {
	return fmt.Sprintf("%s[%d]", path, i)
}

// entry is one key/value pair of a YAML mapping.
type entry struct {
	key     string
	keyNode *yaml.Node
	val     *yaml.Node
}

// entries expects a mapping at path and returns its pairs in document order,
// rejecting duplicate, merge and non-scalar keys.
func (p *parser) entries(n *yaml.Node, path string) ([]entry, error) {
	m := resolve(n)
	if m.Kind != yaml.MappingNode {
		return nil, p.expected(n, path, "a mapping")
	}
	first := make(map[string]int, len(m.Content)/2)
	out := make([]entry, 0, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := resolve(m.Content[i])
		if k.Kind != yaml.ScalarNode {
			return nil, p.errorf(m.Content[i], path, "keys must be names, got %s", describe(k))
		}
		switch k.ShortTag() {
		case "!!merge":
			return nil, p.errorf(m.Content[i], path, "merge keys (<<) are not supported")
		case "!!null":
			return nil, p.errorf(m.Content[i], path, "keys must be names, got null")
		}
		at := join(path, k.Value)
		if line, dup := first[k.Value]; dup {
			return nil, p.errorf(m.Content[i], at, "duplicate key (first given at line %d)", line)
		}
		first[k.Value] = m.Content[i].Line
		out = append(out, entry{key: k.Value, keyNode: m.Content[i], val: m.Content[i+1]})
	}
	return out, nil
}

// fields is a decoded mapping whose keys have been checked against the known ones.
type fields struct {
	p       *parser
	node    *yaml.Node
	path    string
	section string   // the key of sectionKeys this mapping is checked against
	keys    []string // present keys in document order
	vals    map[string]*yaml.Node
}

// mapping expects a mapping at path whose keys are all among the known keys of
// section (a key of sectionKeys).
func (p *parser) mapping(n *yaml.Node, path, section string) (*fields, error) {
	known, ok := sectionKeys[section]
	if !ok {
		panic("schema: section " + strconv.Quote(section) + " is missing from sectionKeys")
	}
	es, err := p.entries(n, path)
	if err != nil {
		return nil, err
	}
	f := &fields{p: p, node: n, path: path, section: section, vals: make(map[string]*yaml.Node, len(es))}
	for _, e := range es {
		if !slices.Contains(known, e.key) {
			return nil, p.errorf(e.keyNode, join(path, e.key), "unknown key (expected one of %s)", strings.Join(known, ", "))
		}
		f.keys = append(f.keys, e.key)
		f.vals[e.key] = e.val
	}
	return f, nil
}

// at returns the key path of key in f.
func (f *fields) at(key string) string { return join(f.path, key) }

// get returns the value of key (nil when absent) and its key path.
func (f *fields) get(key string) (*yaml.Node, string) { return f.vals[key], f.at(key) }

// required returns the value of key, or an error when it is absent.
func (f *fields) required(key string) (*yaml.Node, string, error) {
	v, at := f.get(key)
	if v == nil {
		return nil, at, f.p.errorf(f.node, at, "required")
	}
	return v, at, nil
}

// present returns which of keys f holds, in document order.
func (f *fields) present(keys ...string) []string {
	var out []string
	for _, k := range f.keys {
		if slices.Contains(keys, k) {
			out = append(out, k)
		}
	}
	return out
}

// allowed returns the values enumValues allows for key in f's section.
func (f *fields) allowed(key string) []string {
	at := keyPath(f.section, key)
	vals, ok := enumValues[at]
	if !ok {
		panic("schema: key " + strconv.Quote(at) + " is missing from enumValues")
	}
	return vals
}

// enum returns the value of the optional key, one of f.allowed(key), def when it is
// absent.
func (f *fields) enum(key, def string) (string, error) {
	v, at := f.get(key)
	if v == nil {
		return def, nil
	}
	return f.p.enum(v, at, f.allowed(key)...)
}

// scalar expects a scalar whose tag is one of tags.
func (p *parser) scalar(n *yaml.Node, path, want string, tags ...string) (*yaml.Node, error) {
	v := resolve(n)
	if v.Kind != yaml.ScalarNode || !slices.Contains(tags, v.ShortTag()) {
		return nil, p.expected(n, path, want)
	}
	return v, nil
}

// str expects a string.
func (p *parser) str(n *yaml.Node, path string) (string, error) {
	v, err := p.scalar(n, path, "a string", "!!str")
	if err != nil {
		return "", err
	}
	return v.Value, nil
}

// name expects a non-empty name: any scalar but null, so that "2024" names a column.
func (p *parser) name(n *yaml.Node, path string) (string, error) {
	v := resolve(n)
	if v.Kind != yaml.ScalarNode || v.ShortTag() == "!!null" {
		return "", p.expected(n, path, "a name")
	}
	if v.Value == "" {
		return "", p.errorf(n, path, "must not be empty")
	}
	return v.Value, nil
}

// enum expects a string among allowed.
func (p *parser) enum(n *yaml.Node, path string, allowed ...string) (string, error) {
	s, err := p.str(n, path)
	if err != nil {
		return "", err
	}
	if !slices.Contains(allowed, s) {
		return "", p.errorf(n, path, "must be one of %s, got %q", strings.Join(allowed, ", "), s)
	}
	return s, nil
}

// float expects a finite number (an integer is fine).
func (p *parser) float(n *yaml.Node, path string) (float64, error) {
	v, err := p.scalar(n, path, "a number", "!!int", "!!float")
	if err != nil {
		return 0, err
	}
	var x float64
	if err := v.Decode(&x); err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, p.expected(n, path, "a finite number")
	}
	return x, nil
}

// int expects an integer.
func (p *parser) int(n *yaml.Node, path string) (int, error) {
	v, err := p.scalar(n, path, "an integer", "!!int")
	if err != nil {
		return 0, err
	}
	var x int
	if err := v.Decode(&x); err != nil {
		return 0, p.errorf(n, path, "integer %s is out of range", v.Value)
	}
	return x, nil
}

// bool expects true or false.
func (p *parser) bool(n *yaml.Node, path string) (bool, error) {
	v, err := p.scalar(n, path, "a boolean (true or false)", "!!bool")
	if err != nil {
		return false, err
	}
	var b bool
	if err := v.Decode(&b); err != nil {
		return false, p.expected(n, path, "a boolean (true or false)")
	}
	return b, nil
}

// list expects a sequence.
func (p *parser) list(n *yaml.Node, path string) ([]*yaml.Node, error) {
	v := resolve(n)
	if v.Kind != yaml.SequenceNode {
		return nil, p.expected(n, path, "a list")
	}
	return v.Content, nil
}

// nonEmptyList expects a sequence with at least one item.
func (p *parser) nonEmptyList(n *yaml.Node, path string) ([]*yaml.Node, error) {
	items, err := p.list(n, path)
	if err == nil && len(items) == 0 {
		err = p.errorf(n, path, "must not be empty")
	}
	return items, err
}

// enumList expects a non-empty list of distinct strings among allowed.
func (p *parser) enumList(n *yaml.Node, path string, allowed ...string) ([]string, error) {
	items, err := p.nonEmptyList(n, path)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		s, err := p.enum(it, index(path, i), allowed...)
		if err != nil {
			return nil, err
		}
		if slices.Contains(out, s) {
			return nil, p.errorf(it, index(path, i), "%s is listed twice", s)
		}
		out = append(out, s)
	}
	return out, nil
}

// bounds expects a list of two numbers lo < hi.
func (p *parser) bounds(n *yaml.Node, path string) ([2]float64, error) {
	var b [2]float64
	items, err := p.list(n, path)
	if err != nil {
		return b, err
	}
	if len(items) != 2 {
		return b, p.errorf(n, path, "expected a list of two numbers [lo, hi], got %d items", len(items))
	}
	for i, it := range items {
		if b[i], err = p.float(it, index(path, i)); err != nil {
			return b, err
		}
	}
	if b[0] >= b[1] {
		return b, p.errorf(n, path, "lo must be less than hi, got [%g, %g]", b[0], b[1])
	}
	return b, nil
}

// path expects a non-empty file path and resolves it against the configuration's
// folder; a URL of a store (gs://…, s3://…, which the beam module reads) is kept as it
// is.
func (p *parser) path(n *yaml.Node, at string) (string, error) {
	s, err := p.str(n, at)
	if err != nil {
		return "", err
	}
	if s == "" {
		return "", p.errorf(n, at, "must not be empty")
	}
	if StoreURL(s) {
		return s, nil
	}
	if filepath.IsAbs(s) {
		return filepath.Clean(s), nil
	}
	return filepath.Join(p.dir, s), nil
}

// column expects the name of a configured column.
func (p *parser) column(n *yaml.Node, path string) (*Column, error) {
	name, err := p.name(n, path)
	if err != nil {
		return nil, err
	}
	col := p.cols[name]
	if col == nil {
		return nil, p.errorf(n, path, "unknown column %q", name)
	}
	return col, nil
}

// sensitiveColumn expects the name of a configured column with role sensitive.
func (p *parser) sensitiveColumn(n *yaml.Node, path string) (*Column, error) {
	col, err := p.column(n, path)
	if err == nil && col.Role != Sensitive {
		err = p.errorf(n, path, "column %q is not sensitive (its role is %s)", col.Name, col.Role)
	}
	return col, err
}

// columnList expects a non-empty list of distinct configured column names.
func (p *parser) columnList(n *yaml.Node, path string) ([]string, error) {
	items, err := p.nonEmptyList(n, path)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		col, err := p.column(it, index(path, i))
		if err != nil {
			return nil, err
		}
		if slices.Contains(out, col.Name) {
			return nil, p.errorf(it, index(path, i), "column %q is listed twice", col.Name)
		}
		out = append(out, col.Name)
	}
	return out, nil
}

// oneOrMany expects a mapping or a non-empty list of mappings and returns the items
// with their key paths.
func (p *parser) oneOrMany(n *yaml.Node, path string) ([]*yaml.Node, []string, error) {
	switch resolve(n).Kind {
	case yaml.MappingNode:
		return []*yaml.Node{n}, []string{path}, nil
	case yaml.SequenceNode:
		items, err := p.nonEmptyList(n, path)
		if err != nil {
			return nil, nil, err
		}
		paths := make([]string, len(items))
		for i := range items {
			paths[i] = index(path, i)
		}
		return items, paths, nil
	}
	return nil, nil, p.expected(n, path, "a mapping or a list of mappings")
}

// isWhole reports whether x is an integer.
func isWhole(x float64) bool { return x == math.Trunc(x) }

// config decodes the top-level mapping.
func (p *parser) config(root *yaml.Node) (*Config, error) {
	f, err := p.mapping(root, "", "")
	if err != nil {
		return nil, err
	}
	cfg := &Config{
		Unlisted: "error",
		Input:    defaultIO(),
		Output:   defaultIO(),
		Search:   Search{Algorithm: "optimal", Metric: "loss"},
	}
	if v, at := f.get("dataset"); v != nil {
		if cfg.Dataset, err = p.name(v, at); err != nil {
			return nil, err
		}
		if err := CheckDatasetName(cfg.Dataset); err != nil {
			return nil, BadInput("%s:%d: %s: %w", p.file, v.Line, at, err)
		}
	}
	if cfg.Unlisted, err = f.enum("unlisted", "error"); err != nil {
		return nil, err
	}
	if v, at := f.get("input"); v != nil {
		if cfg.Input, err = p.io(v, at); err != nil {
			return nil, err
		}
	}
	if v, at := f.get("output"); v != nil {
		if cfg.Output, err = p.io(v, at); err != nil {
			return nil, err
		}
	}
	v, at, err := f.required("columns")
	if err != nil {
		return nil, err
	}
	if cfg.Columns, err = p.columns(v, at); err != nil {
		return nil, err
	}
	p.cols = make(map[string]*Column, len(cfg.Columns))
	for i := range cfg.Columns {
		p.cols[cfg.Columns[i].Name] = &cfg.Columns[i]
	}
	if v, at := f.get("privacy"); v != nil {
		if cfg.Privacy, err = p.privacy(v, at); err != nil {
			return nil, err
		}
	}
	if v, at := f.get("search"); v != nil {
		if cfg.Search, err = p.search(v, at); err != nil {
			return nil, err
		}
	}
	if v, at := f.get("risk"); v != nil {
		if cfg.Risk, err = p.risk(v, at); err != nil {
			return nil, err
		}
	}
	if pu := cfg.Privacy.PopulationUniqueness; pu != nil && !cfg.Risk.Known() {
		v, at := f.get("privacy")
		return nil, p.errorf(v, at+".population-uniqueness", "needs the population: risk: {population: N} or risk: {sampling-fraction: f}")
	}
	if cfg.Privacy.Subset != nil && cfg.Search.Algorithm == "mondrian" {
		v, at := f.get("search")
		return nil, p.errorf(v, at+".algorithm", "mondrian cannot decide privacy.subset's models (δ-presence, k-map against the population), which are decided on full-domain classes: use optimal")
	}
	if km := cfg.Privacy.KMap; km != nil && km.Estimator != "" && !cfg.Risk.Known() {
		v, at := f.get("privacy")
		return nil, p.errorf(v, at+".k-map", "an estimator needs the population: risk: {population: N} or risk: {sampling-fraction: f}")
	}
	if v, at := f.get("dp"); v != nil {
		if cfg.DP, err = p.dp(v, at); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

// risk decodes what is known of the population the input was drawn from.
func (p *parser) risk(n *yaml.Node, path string) (Risk, error) {
	var r Risk
	f, err := p.mapping(n, path, "risk")
	if err != nil {
		return r, err
	}
	switch keys := f.present("population", "sampling-fraction"); len(keys) {
	case 0:
		return r, p.errorf(n, path, "needs population or sampling-fraction")
	case 2:
		v, at := f.get(keys[1])
		return r, p.errorf(v, at, "give population or sampling-fraction, not both")
	}
	if v, at := f.get("population"); v != nil {
		pop, err := p.int(v, at)
		if err != nil {
			return r, err
		}
		if pop < 1 || pop > MaxPopulation {
			return r, p.errorf(v, at, "must be at least 1 and at most %d, got %d", int64(MaxPopulation), pop)
		}
		r.Population = int64(pop)
	}
	if v, at := f.get("sampling-fraction"); v != nil {
		if r.SamplingFraction, err = p.share(v, at, false); err != nil {
			return r, err
		}
		if r.SamplingFraction < MinSamplingFraction {
			return r, p.errorf(v, at, "must be at least %g (a population of at most %d records), got %g", MinSamplingFraction, int64(MaxPopulation), r.SamplingFraction)
		}
	}
	return r, nil
}

// share decodes a number in (0, 1], or [0, 1] when zero is allowed.
func (p *parser) share(n *yaml.Node, path string, zero bool) (float64, error) {
	x, err := p.float(n, path)
	if err != nil {
		return 0, err
	}
	if x > 1 || x < 0 || (x == 0 && !zero) {
		if zero {
			return 0, p.errorf(n, path, "must be between 0 and 1, got %g", x)
		}
		return 0, p.errorf(n, path, "must be above 0 and at most 1, got %g", x)
	}
	return x, nil
}

// defaultIO returns an IO with the default CSV dialect.
func defaultIO() IO { return IO{CSV: CSV{Separator: ',', Header: true}} }

// io decodes the input or output section; path is "input" or "output", which is
// also its section in sectionKeys.
func (p *parser) io(n *yaml.Node, path string) (IO, error) {
	t := defaultIO()
	f, err := p.mapping(n, path, path)
	if err != nil {
		return t, err
	}
	if v, at := f.get("path"); v != nil {
		if t.Path, err = p.path(v, at); err != nil {
			return t, err
		}
	}
	if t.Format, err = f.enum("format", ""); err != nil {
		return t, err
	}
	if v, at := f.get("csv"); v != nil {
		if t.CSV, err = p.csv(v, at, keyPath(f.section, "csv")); err != nil {
			return t, err
		}
	}
	return t, nil
}

// csv decodes a CSV dialect; section is input.csv or output.csv.
func (p *parser) csv(n *yaml.Node, path, section string) (CSV, error) {
	c := CSV{Separator: ',', Header: true}
	f, err := p.mapping(n, path, section)
	if err != nil {
		return c, err
	}
	if v, at := f.get("separator"); v != nil {
		s, err := p.str(v, at)
		if err != nil {
			return c, err
		}
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case s == "":
			return c, p.errorf(v, at, "must not be empty")
		case size != len(s):
			return c, p.errorf(v, at, "must be a single character, got %q", s)
		case r == '"':
			return c, p.errorf(v, at, "must not be the quote character")
		case r == '\r' || r == '\n':
			return c, p.errorf(v, at, "must not be a line break")
		case r == 0 || r == utf8.RuneError:
			return c, p.errorf(v, at, "must be a printable character or a tab, got %q", s)
		}
		c.Separator = r
	}
	if v, at := f.get("header"); v != nil {
		if c.Header, err = p.bool(v, at); err != nil {
			return c, err
		}
	}
	return c, nil
}

// columns decodes the columns mapping, keeping its order.
func (p *parser) columns(n *yaml.Node, path string) ([]Column, error) {
	es, err := p.entries(n, path)
	if err != nil {
		return nil, err
	}
	if len(es) == 0 {
		return nil, p.errorf(n, path, "must name at least one column")
	}
	cols := make([]Column, 0, len(es))
	for _, e := range es {
		if e.key == "" {
			return nil, p.errorf(e.keyNode, path, "column names must not be empty")
		}
		col, err := p.columnConfig(e.key, e.val, join(path, e.key))
		if err != nil {
			return nil, err
		}
		cols = append(cols, col)
	}
	return cols, nil
}

// columnConfig decodes the configuration of one column.
func (p *parser) columnConfig(name string, n *yaml.Node, path string) (Column, error) {
	col := Column{Name: name, Type: String}
	f, err := p.mapping(n, path, "columns.<name>")
	if err != nil {
		return col, err
	}
	v, at, err := f.required("role")
	if err != nil {
		return col, err
	}
	role, err := p.enum(v, at, f.allowed("role")...)
	if err != nil {
		return col, err
	}
	col.Role = Role(role)
	typ, err := f.enum("type", string(String))
	if err != nil {
		return col, err
	}
	col.Type = Type(typ)
	col.TypeDeclared = f.vals["type"] != nil
	if v, at := f.get("null-as"); v != nil {
		if col.Role != Quasi && col.Role != Sensitive {
			return col, p.errorf(v, at, "not allowed for an %s column (only quasi-identifiers and sensitive columns replace nulls)", col.Role)
		}
		s, err := p.scalar(v, at, "the value a null is read as (a string, number or boolean)", "!!str", "!!int", "!!float", "!!bool")
		if err != nil {
			return col, err
		}
		col.Null = &s.Value
	}
	if v, at := f.get("hierarchy"); v != nil {
		if col.Role == Identifier || col.Role == Insensitive {
			return col, p.errorf(v, at, "not allowed for an %s column", col.Role)
		}
		if col.Hierarchy, err = p.hierarchy(v, at, col.Type); err != nil {
			return col, err
		}
	} else if col.Role == Quasi {
		return col, p.errorf(n, at, "required for a quasi-identifier")
	}
	if v, at := f.get("domain"); v != nil {
		if col.Domain, err = p.domain(v, at, col.Hierarchy != nil); err != nil {
			return col, err
		}
	}
	return col, nil
}

// hierarchy decodes a column's hierarchy for a column of type typ.
func (p *parser) hierarchy(n *yaml.Node, path string, typ Type) (*Hierarchy, error) {
	f, err := p.mapping(n, path, "columns.<name>.hierarchy")
	if err != nil {
		return nil, err
	}
	switch given := f.present(hierarchyKinds...); len(given) {
	case 0:
		return nil, p.errorf(n, path, "needs one of %s", strings.Join(hierarchyKinds, ", "))
	case 1:
	default:
		return nil, p.errorf(n, path, "takes only one of %s, got %s", strings.Join(hierarchyKinds, ", "), strings.Join(given, " and "))
	}
	h := &Hierarchy{}
	if v, at := f.get("file"); v != nil {
		h.File, err = p.path(v, at)
	}
	if v, at := f.get("intervals"); v != nil {
		h.Intervals, err = p.intervals(v, at, typ)
	}
	if v, at := f.get("mask"); v != nil {
		h.Mask, err = p.mask(v, at)
	}
	if v, at := f.get("date"); v != nil {
		h.Date, err = p.dateLevels(v, at, typ, f.allowed("date"))
	}
	if err != nil {
		return nil, err
	}
	return h, nil
}

// intervals decodes the interval widths of a numeric hierarchy.
func (p *parser) intervals(n *yaml.Node, path string, typ Type) ([]float64, error) {
	if typ != Integer && typ != Float {
		return nil, p.errorf(n, path, "needs a column of type integer or float, not %s", typ)
	}
	items, err := p.nonEmptyList(n, path)
	if err != nil {
		return nil, err
	}
	if len(items) > MaxHierarchyLevels-2 {
		return nil, p.errorf(n, path, "at most %d widths (a hierarchy has at most %d levels, the original values and the top included), got %d", MaxHierarchyLevels-2, MaxHierarchyLevels, len(items))
	}
	widths := make([]float64, 0, len(items))
	for i, it := range items {
		w, err := p.float(it, index(path, i))
		if err != nil {
			return nil, err
		}
		if w <= 0 {
			return nil, p.errorf(it, path, "widths must be positive, got %g", w)
		}
		if typ == Integer && !isWhole(w) {
			return nil, p.errorf(it, path, "widths must be whole numbers for an integer column, got %g", w)
		}
		if i > 0 {
			prev := widths[i-1]
			if w <= prev {
				return nil, p.errorf(it, path, "widths must be strictly increasing, got %g after %g", w, prev)
			}
			if r := w / prev; math.Abs(r-math.Round(r)) > 1e-9*r {
				return nil, p.errorf(it, path, "each width must be a multiple of the one before, got %g after %g", w, prev)
			}
		}
		widths = append(widths, w)
	}
	return widths, nil
}

// mask decodes a masking hierarchy.
func (p *parser) mask(n *yaml.Node, path string) (*Mask, error) {
	f, err := p.mapping(n, path, "columns.<name>.hierarchy.mask")
	if err != nil {
		return nil, err
	}
	from, err := f.enum("from", "right")
	if err != nil {
		return nil, err
	}
	v, at, err := f.required("max")
	if err != nil {
		return nil, err
	}
	m := &Mask{FromRight: from == "right"}
	if m.Max, err = p.int(v, at); err != nil {
		return nil, err
	}
	if m.Max < 1 || m.Max > MaxHierarchyLevels-2 {
		return nil, p.errorf(v, at, "must be at least 1 and at most %d (a hierarchy has at most %d levels, the original values and the top included), got %d", MaxHierarchyLevels-2, MaxHierarchyLevels, m.Max)
	}
	return m, nil
}

// dateLevels decodes the levels of a date hierarchy; units are the allowed levels,
// finest first (dateUnits).
func (p *parser) dateLevels(n *yaml.Node, path string, typ Type, units []string) ([]string, error) {
	if typ != Date {
		return nil, p.errorf(n, path, "needs a column of type date, not %s", typ)
	}
	levels, err := p.enumList(n, path, units...)
	if err != nil {
		return nil, err
	}
	for i := 1; i < len(levels); i++ {
		if slices.Index(units, levels[i]) < slices.Index(units, levels[i-1]) {
			return nil, p.errorf(n, path, "must list the finest level first (%s), got %s after %s",
				strings.Join(units, " < "), levels[i], levels[i-1])
		}
	}
	return levels, nil
}

// domain decodes a column's declared domain; hasHierarchy says whether the column
// has a hierarchy.
func (p *parser) domain(n *yaml.Node, path string, hasHierarchy bool) (*Domain, error) {
	switch resolve(n).Kind {
	case yaml.SequenceNode:
		return p.domainValues(n, path)
	case yaml.MappingNode:
	default:
		return nil, p.expected(n, path, "a list of values or a mapping with range and width, or hierarchy-level")
	}
	f, err := p.mapping(n, path, "columns.<name>.domain")
	if err != nil {
		return nil, err
	}
	d := &Domain{}
	if v, at := f.get("hierarchy-level"); v != nil {
		if others := f.present("range", "width"); len(others) > 0 {
			return nil, p.errorf(n, path, "hierarchy-level cannot be combined with %s", strings.Join(others, " and "))
		}
		level, err := p.int(v, at)
		if err != nil {
			return nil, err
		}
		if level < 0 {
			return nil, p.errorf(v, at, "must be at least 0, got %d", level)
		}
		if !hasHierarchy {
			return nil, p.errorf(v, at, "requires a hierarchy on the column")
		}
		d.HierarchyLevel = &level
		return d, nil
	}
	if len(f.keys) == 0 {
		return nil, p.errorf(n, path, "needs range and width, or hierarchy-level")
	}
	v, at, err := f.required("range")
	if err != nil {
		return nil, err
	}
	r, err := p.bounds(v, at)
	if err != nil {
		return nil, err
	}
	d.Range = &r
	if v, at, err = f.required("width"); err != nil {
		return nil, err
	}
	if d.Width, err = p.float(v, at); err != nil {
		return nil, err
	}
	if d.Width <= 0 {
		return nil, p.errorf(v, at, "must be positive, got %g", d.Width)
	}
	return d, nil
}

// domainValues decodes a domain given as a list of values.
func (p *parser) domainValues(n *yaml.Node, path string) (*Domain, error) {
	items, err := p.nonEmptyList(n, path)
	if err != nil {
		return nil, err
	}
	d := &Domain{Values: make([]string, 0, len(items))}
	seen := make(map[string]bool, len(items))
	for i, it := range items {
		v := resolve(it)
		if v.Kind != yaml.ScalarNode || v.ShortTag() == "!!null" {
			return nil, p.expected(it, index(path, i), "a value")
		}
		if seen[v.Value] {
			return nil, p.errorf(it, index(path, i), "value %q is listed twice", v.Value)
		}
		seen[v.Value] = true
		d.Values = append(d.Values, v.Value)
	}
	return d, nil
}

// privacy decodes the privacy models.
func (p *parser) privacy(n *yaml.Node, path string) (Privacy, error) {
	var pr Privacy
	f, err := p.mapping(n, path, "privacy")
	if err != nil {
		return pr, err
	}
	if v, at := f.get("k"); v != nil {
		if pr.K, err = p.int(v, at); err != nil {
			return pr, err
		}
		if pr.K < 1 {
			return pr, p.errorf(v, at, "must be at least 1, got %d", pr.K)
		}
	}
	if v, at := f.get("suppression"); v != nil {
		if pr.Suppression, err = p.float(v, at); err != nil {
			return pr, err
		}
		if pr.Suppression < 0 || pr.Suppression > 1 {
			return pr, p.errorf(v, at, "must be between 0 and 1, got %g", pr.Suppression)
		}
	}
	if v, at := f.get("l-diversity"); v != nil {
		items, paths, err := p.oneOrMany(v, at)
		if err != nil {
			return pr, err
		}
		for i, it := range items {
			l, err := p.lDiversity(it, paths[i])
			if err != nil {
				return pr, err
			}
			for _, prev := range pr.LDiversity {
				if prev.Column == l.Column {
					return pr, p.errorf(it, paths[i], "column %q already has an l-diversity requirement", l.Column)
				}
			}
			pr.LDiversity = append(pr.LDiversity, l)
		}
	}
	if v, at := f.get("t-closeness"); v != nil {
		items, paths, err := p.oneOrMany(v, at)
		if err != nil {
			return pr, err
		}
		for i, it := range items {
			t, err := p.tCloseness(it, paths[i])
			if err != nil {
				return pr, err
			}
			for _, prev := range pr.TCloseness {
				if prev.Column == t.Column {
					return pr, p.errorf(it, paths[i], "column %q already has a t-closeness requirement", t.Column)
				}
			}
			pr.TCloseness = append(pr.TCloseness, t)
		}
	}
	if v, at := f.get("beta-likeness"); v != nil {
		items, paths, err := p.oneOrMany(v, at)
		if err != nil {
			return pr, err
		}
		for i, it := range items {
			b, err := p.betaLikeness(it, paths[i])
			if err != nil {
				return pr, err
			}
			for _, prev := range pr.BetaLikeness {
				if prev.Column == b.Column {
					return pr, p.errorf(it, paths[i], "column %q already has a β-likeness requirement", b.Column)
				}
			}
			pr.BetaLikeness = append(pr.BetaLikeness, b)
		}
	}
	if err := p.riskModels(f, &pr); err != nil {
		return pr, err
	}
	if err := p.populationModels(f, &pr); err != nil {
		return pr, err
	}
	if pr.ReleasedColumns, err = p.releasedColumns(f); err != nil {
		return pr, err
	}
	// l-diversity, t-closeness, β-likeness, a risk or population model without k: every
	// class is a class of at least one record (ARX's default), and the report says k
	// was not given.
	if pr.K == 0 && (len(pr.LDiversity) > 0 || len(pr.TCloseness) > 0 || len(pr.BetaLikeness) > 0 || pr.RisksModelled() || pr.PopulationModelled()) {
		pr.K, pr.KDefault = 1, true
	}
	return pr, nil
}

// releasedColumns decodes privacy.released-columns (ReleasedWarn when absent).
func (p *parser) releasedColumns(f *fields) (ReleasedCheck, error) {
	v, at := f.get("released-columns")
	if v == nil {
		return ReleasedWarn, nil
	}
	rf, err := p.mapping(v, at, "privacy.released-columns")
	if err != nil {
		return "", err
	}
	c, err := rf.enum("check", string(ReleasedWarn))
	return ReleasedCheck(c), err
}

// riskModels decodes the risk-based models of the privacy section.
func (p *parser) riskModels(f *fields, pr *Privacy) (err error) {
	if v, at := f.get("average-risk"); v != nil {
		if pr.AverageRisk, err = p.share(v, at, false); err != nil {
			return err
		}
	}
	if v, at := f.get("highest-risk"); v != nil {
		if pr.HighestRisk, err = p.share(v, at, false); err != nil {
			return err
		}
	}
	if v, at := f.get("records-at-risk"); v != nil {
		rf, err := p.mapping(v, at, "privacy.records-at-risk")
		if err != nil {
			return err
		}
		r := &RecordsAtRisk{}
		tv, tat, err := rf.required("threshold")
		if err != nil {
			return err
		}
		if r.Threshold, err = p.share(tv, tat, false); err != nil {
			return err
		}
		mv, mat, err := rf.required("max")
		if err != nil {
			return err
		}
		if r.Max, err = p.share(mv, mat, true); err != nil {
			return err
		}
		pr.RecordsAtRisk = r
	}
	if v, at := f.get("population-uniqueness"); v != nil {
		uf, err := p.mapping(v, at, "privacy.population-uniqueness")
		if err != nil {
			return err
		}
		u := &PopulationUniqueness{}
		mv, mat, err := uf.required("max")
		if err != nil {
			return err
		}
		if u.Max, err = p.share(mv, mat, true); err != nil {
			return err
		}
		if u.Model, err = uf.enum("model", "dankar"); err != nil {
			return err
		}
		pr.PopulationUniqueness = u
	}
	return nil
}

// populationModels decodes the research subset, δ-presence and k-map.
func (p *parser) populationModels(f *fields, pr *Privacy) error {
	if v, at := f.get("subset"); v != nil {
		sf, err := p.mapping(v, at, "privacy.subset")
		if err != nil {
			return err
		}
		cv, cat, err := sf.required("column")
		if err != nil {
			return err
		}
		col, err := p.column(cv, cat)
		if err != nil {
			return err
		}
		if col.Role != Identifier {
			return p.errorf(cv, cat, "column %q must have role identifier, so that it is never released (its role is %s)", col.Name, col.Role)
		}
		pr.Subset = &Subset{Column: col.Name}
	}
	if v, at := f.get("delta-presence"); v != nil {
		df, err := p.mapping(v, at, "privacy.delta-presence")
		if err != nil {
			return err
		}
		d := &DeltaPresence{}
		if mv, mat := df.get("min"); mv != nil {
			if d.Min, err = p.share(mv, mat, true); err != nil {
				return err
			}
		}
		mv, mat, err := df.required("max")
		if err != nil {
			return err
		}
		if d.Max, err = p.share(mv, mat, false); err != nil {
			return err
		}
		if d.Min > d.Max {
			return p.errorf(mv, mat, "must be at least min (%g), got %g", d.Min, d.Max)
		}
		if pr.Subset == nil {
			return p.errorf(v, at, "needs privacy.subset: δ-presence is measured against the population the subset is drawn from")
		}
		pr.DeltaPresence = d
	}
	if v, at := f.get("k-map"); v != nil {
		kf, err := p.mapping(v, at, "privacy.k-map")
		if err != nil {
			return err
		}
		m := &KMap{}
		kv, kat, err := kf.required("k")
		if err != nil {
			return err
		}
		if m.K, err = p.int(kv, kat); err != nil {
			return err
		}
		if m.K < 1 {
			return p.errorf(kv, kat, "must be at least 1, got %d", m.K)
		}
		ev, eat := kf.get("estimator")
		sv, sat := kf.get("significance")
		switch {
		case pr.Subset != nil && ev != nil:
			return p.errorf(ev, eat, "not with privacy.subset: the population is then the input itself")
		case pr.Subset != nil && sv != nil:
			return p.errorf(sv, sat, "only with an estimator (without privacy.subset)")
		case pr.Subset == nil && ev == nil:
			return p.errorf(v, at, "needs privacy.subset (the input is the population) or an estimator (poisson or zero-truncated-poisson, with risk's population)")
		}
		if ev != nil {
			if m.Estimator, err = kf.enum("estimator", ""); err != nil {
				return err
			}
			m.Significance = 0.01
			if sv != nil {
				if m.Significance, err = p.share(sv, sat, true); err != nil {
					return err
				}
			}
		}
		pr.KMap = m
	}
	if pr.Subset != nil && !pr.PopulationModelled() {
		v, at := f.get("subset")
		return p.errorf(v, at, "a research subset needs delta-presence or k-map (without them, release the subset as its own input)")
	}
	return nil
}

// lDiversity decodes one l-diversity requirement.
func (p *parser) lDiversity(n *yaml.Node, path string) (LDiversity, error) {
	var l LDiversity
	f, err := p.mapping(n, path, "privacy.l-diversity")
	if err != nil {
		return l, err
	}
	v, at, err := f.required("column")
	if err != nil {
		return l, err
	}
	col, err := p.sensitiveColumn(v, at)
	if err != nil {
		return l, err
	}
	l.Column = col.Name
	if v, at, err = f.required("variant"); err != nil {
		return l, err
	}
	if l.Variant, err = p.enum(v, at, f.allowed("variant")...); err != nil {
		return l, err
	}
	if v, at, err = f.required("l"); err != nil {
		return l, err
	}
	if l.L, err = p.float(v, at); err != nil {
		return l, err
	}
	if l.L < 1 {
		return l, p.errorf(v, at, "must be at least 1, got %g", l.L)
	}
	if l.Variant != "entropy" && !isWhole(l.L) {
		return l, p.errorf(v, at, "must be a whole number for the %s variant, got %g", l.Variant, l.L)
	}
	v, at = f.get("c")
	switch {
	case l.Variant != "recursive" && v != nil:
		return l, p.errorf(v, at, "only allowed for the recursive variant")
	case l.Variant == "recursive" && v == nil:
		return l, p.errorf(f.node, at, "required for the recursive variant")
	case v != nil:
		if l.C, err = p.float(v, at); err != nil {
			return l, err
		}
		if l.C <= 0 {
			return l, p.errorf(v, at, "must be positive, got %g", l.C)
		}
	}
	if v, at = f.get("estimator"); v != nil && l.Variant != "entropy" {
		return l, p.errorf(v, at, "only allowed for the entropy variant")
	}
	if l.Variant == "entropy" {
		l.Estimator, err = f.enum("estimator", "shannon")
	}
	return l, err
}

// betaLikeness decodes one β-likeness requirement.
func (p *parser) betaLikeness(n *yaml.Node, path string) (BetaLikeness, error) {
	var b BetaLikeness
	f, err := p.mapping(n, path, "privacy.beta-likeness")
	if err != nil {
		return b, err
	}
	v, at, err := f.required("column")
	if err != nil {
		return b, err
	}
	col, err := p.sensitiveColumn(v, at)
	if err != nil {
		return b, err
	}
	b.Column = col.Name
	if v, at, err = f.required("beta"); err != nil {
		return b, err
	}
	if b.Beta, err = p.float(v, at); err != nil {
		return b, err
	}
	if b.Beta <= 0 {
		return b, p.errorf(v, at, "must be above 0, got %g", b.Beta)
	}
	b.Variant, err = f.enum("variant", "basic")
	return b, err
}

// tCloseness decodes one t-closeness requirement.
func (p *parser) tCloseness(n *yaml.Node, path string) (TCloseness, error) {
	var t TCloseness
	f, err := p.mapping(n, path, "privacy.t-closeness")
	if err != nil {
		return t, err
	}
	v, at, err := f.required("column")
	if err != nil {
		return t, err
	}
	col, err := p.sensitiveColumn(v, at)
	if err != nil {
		return t, err
	}
	t.Column = col.Name
	if v, at, err = f.required("t"); err != nil {
		return t, err
	}
	if t.T, err = p.float(v, at); err != nil {
		return t, err
	}
	if t.T < 0 {
		return t, p.errorf(v, at, "must be at least 0, got %g", t.T)
	}
	if t.Distance, err = f.enum("distance", "equal"); err != nil {
		return t, err
	}
	if t.Distance == "hierarchical" && col.Hierarchy == nil {
		v, at = f.get("distance")
		return t, p.errorf(v, at, "hierarchical needs a hierarchy on column %q", col.Name)
	}
	v, at = f.get("order")
	switch {
	case v != nil && t.Distance != "ordered":
		return t, p.errorf(v, at, "only allowed with distance: ordered")
	case v != nil:
		d, err := p.domainValues(v, at)
		if err != nil {
			return t, err
		}
		t.Order = d.Values
	case t.Distance == "ordered" && col.Type != Integer && col.Type != Float && col.Type != Date && col.Type != Timestamp:
		v, at = f.get("distance")
		return t, p.errorf(v, at, "ordered on the %s column %q needs order: [its values, smallest first]", col.Type, col.Name)
	}
	return t, nil
}

// search decodes the search section.
func (p *parser) search(n *yaml.Node, path string) (Search, error) {
	var s Search
	f, err := p.mapping(n, path, "search")
	if err != nil {
		return s, err
	}
	if s.Algorithm, err = f.enum("algorithm", "optimal"); err != nil {
		return s, err
	}
	if s.Metric, err = f.enum("metric", "loss"); err != nil {
		return s, err
	}
	if v, at := f.get("aggregate"); v != nil {
		if s.Metric != "loss" {
			return s, p.errorf(v, at, "only allowed with metric: loss")
		}
		if s.Aggregate, err = f.enum("aggregate", "arithmetic"); err != nil {
			return s, err
		}
	}
	if v, at := f.get("weights"); v != nil {
		if s.Metric != "loss" {
			return s, p.errorf(v, at, "only allowed with metric: loss")
		}
		if s.Weights, err = p.weights(v, at); err != nil {
			return s, err
		}
	}
	if v, at := f.get("gs-factor"); v != nil {
		switch s.Metric {
		case "loss", "entropy", "entropy-monotone", "entropy-loss":
		default:
			return s, p.errorf(v, at, "only allowed with metric: loss, entropy, entropy-monotone or entropy-loss")
		}
		x, err := p.share(v, at, true)
		if err != nil {
			return s, err
		}
		s.GSFactor = &x
	}
	for _, key := range []string{"min-levels", "max-levels"} {
		v, at := f.get(key)
		if v == nil {
			continue
		}
		m, err := p.levels(v, at)
		if err != nil {
			return s, err
		}
		if key == "min-levels" {
			s.MinLevels = m
		} else {
			s.MaxLevels = m
		}
	}
	for name, lo := range s.MinLevels {
		if hi, ok := s.MaxLevels[name]; ok && hi < lo {
			v, at := f.get("max-levels")
			return s, p.errorf(v, join(at, name), "%d is below min-levels' %d for %q", hi, lo, name)
		}
	}
	return s, nil
}

// quasiKey checks that entry e of the mapping at path is keyed by a quasi-identifier's
// name, and returns the entry's path.
func (p *parser) quasiKey(e entry, path string) (string, error) {
	at := join(path, e.key)
	switch c := p.cols[e.key]; {
	case c == nil:
		return at, p.errorf(e.keyNode, at, "unknown column %q", e.key)
	case c.Role != Quasi:
		return at, p.errorf(e.keyNode, at, "column %q is not a quasi-identifier", e.key)
	}
	return at, nil
}

// levels decodes min-levels or max-levels: quasi-identifier name → level ≥ 0.
func (p *parser) levels(n *yaml.Node, path string) (map[string]int, error) {
	es, err := p.entries(n, path)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int, len(es))
	for _, e := range es {
		at, err := p.quasiKey(e, path)
		if err != nil {
			return nil, err
		}
		l, err := p.int(e.val, at)
		if err != nil {
			return nil, err
		}
		if l < 0 {
			return nil, p.errorf(e.val, at, "must be at least 0 (0 is the original values), got %d", l)
		}
		out[e.key] = l
	}
	return out, nil
}

// weights decodes the loss's weights: quasi-identifier name → number above 0.
func (p *parser) weights(n *yaml.Node, path string) (map[string]float64, error) {
	es, err := p.entries(n, path)
	if err != nil {
		return nil, err
	}
	out := make(map[string]float64, len(es))
	for _, e := range es {
		at, err := p.quasiKey(e, path)
		if err != nil {
			return nil, err
		}
		w, err := p.float(e.val, at)
		if err != nil {
			return nil, err
		}
		if w <= 0 {
			return nil, p.errorf(e.val, at, "must be above 0, got %g", w)
		}
		out[e.key] = w
	}
	return out, nil
}

// dp decodes the differential-privacy section.
func (p *parser) dp(n *yaml.Node, path string) (*DP, error) {
	f, err := p.mapping(n, path, "dp")
	if err != nil {
		return nil, err
	}
	d := &DP{}
	v, at, err := f.required("epsilon-total")
	if err != nil {
		return nil, err
	}
	if d.EpsilonTotal, err = p.float(v, at); err != nil {
		return nil, err
	}
	if d.EpsilonTotal <= 0 {
		return nil, p.errorf(v, at, "must be positive, got %g", d.EpsilonTotal)
	}
	if v, at := f.get("delta-total"); v != nil {
		if d.DeltaTotal, err = p.delta(v, at); err != nil {
			return nil, err
		}
	}
	if d.Neighbours, err = f.enum("neighbours", "add-remove"); err != nil {
		return nil, err
	}
	if v, at := f.get("privacy-unit"); v != nil {
		if d.PrivacyUnit, err = p.privacyUnit(v, at); err != nil {
			return nil, err
		}
	}
	if v, at, err = f.required("outputs"); err != nil {
		return nil, err
	}
	items, err := p.nonEmptyList(v, at)
	if err != nil {
		return nil, err
	}
	names := make(map[string]bool, len(items))
	for i, it := range items {
		o, err := p.dpOutput(it, index(at, i), names)
		if err != nil {
			return nil, err
		}
		d.Outputs = append(d.Outputs, o)
	}
	return d, nil
}

// delta expects a δ in [0, 1).
func (p *parser) delta(n *yaml.Node, path string) (float64, error) {
	x, err := p.float(n, path)
	if err == nil && (x < 0 || x >= 1) {
		err = p.errorf(n, path, "must be at least 0 and less than 1, got %g", x)
	}
	return x, err
}

// positiveInt expects an integer ≥ 1.
func (p *parser) positiveInt(n *yaml.Node, path string) (int, error) {
	x, err := p.int(n, path)
	if err == nil && x < 1 {
		err = p.errorf(n, path, "must be at least 1, got %d", x)
	}
	return x, err
}

// maxUnitCap bounds a privacy unit's caps: far above any useful bound, and small
// enough that the sensitivities built from them cannot overflow.
const maxUnitCap = 1_000_000

// cap expects a contribution cap: an integer from 1 to maxUnitCap.
func (p *parser) cap(n *yaml.Node, path string) (int, error) {
	x, err := p.positiveInt(n, path)
	if err == nil && x > maxUnitCap {
		err = p.errorf(n, path, "must be at most %d, got %d", maxUnitCap, x)
	}
	return x, err
}

// privacyUnit decodes the contribution bounds of a privacy unit.
func (p *parser) privacyUnit(n *yaml.Node, path string) (*PrivacyUnit, error) {
	f, err := p.mapping(n, path, "dp.privacy-unit")
	if err != nil {
		return nil, err
	}
	u := &PrivacyUnit{}
	v, at, err := f.required("column")
	if err != nil {
		return nil, err
	}
	col, err := p.column(v, at)
	if err != nil {
		return nil, err
	}
	u.Column = col.Name
	if v, at := f.get("max-rows-per-unit"); v != nil {
		if u.MaxRowsPerUnit, err = p.cap(v, at); err != nil {
			return nil, err
		}
	}
	if v, at := f.get("max-cells-per-unit"); v != nil {
		if u.MaxCellsPerUnit, err = p.cap(v, at); err != nil {
			return nil, err
		}
	}
	if u.MaxRowsPerUnit == 0 && u.MaxCellsPerUnit == 0 {
		return nil, p.errorf(n, path, "needs max-rows-per-unit or max-cells-per-unit (a unit's contribution must be bounded)")
	}
	u.Seed = 1
	if v, at := f.get("seed"); v != nil {
		seed, err := p.int(v, at)
		if err != nil {
			return nil, err
		}
		if seed < 0 {
			return nil, p.errorf(v, at, "must be at least 0, got %d", seed)
		}
		u.Seed = uint64(seed)
	}
	return u, nil
}

// dpOutput decodes one DP output; names holds the names of the outputs before it.
func (p *parser) dpOutput(n *yaml.Node, path string, names map[string]bool) (DPOutput, error) {
	o := DPOutput{Mechanism: "laplace"}
	f, err := p.mapping(n, path, "dp.outputs[]")
	if err != nil {
		return o, err
	}
	if o.Name, err = p.outputName(f, names); err != nil {
		return o, err
	}
	if err := p.outputBudget(f, &o); err != nil {
		return o, err
	}
	if v, at := f.get("post"); v != nil {
		if o.Post, err = p.enumList(v, at, f.allowed("post")...); err != nil {
			return o, err
		}
	}
	if o.Format, err = f.enum("format", ""); err != nil {
		return o, err
	}
	if v, at := f.get("other"); v != nil {
		if o.Other, err = p.bool(v, at); err != nil {
			return o, err
		}
	}
	return o, p.outputKind(f, n, path, &o)
}

// outputName decodes an output's name: usable as a file name, and not one of names
// (the outputs before), to which it is added.
func (p *parser) outputName(f *fields, names map[string]bool) (string, error) {
	v, at, err := f.required("name")
	if err != nil {
		return "", err
	}
	name, err := p.name(v, at)
	if err != nil {
		return "", err
	}
	if strings.ContainsAny(name, `/\`) || strings.IndexFunc(name, unicode.IsControl) >= 0 || name == "." || name == ".." {
		return "", p.errorf(v, at, "must be usable as a file name, got %q", name)
	}
	if names[name] {
		return "", p.errorf(v, at, "output %q is named twice", name)
	}
	names[name] = true
	return name, nil
}

// outputBudget decodes an output's epsilon, delta and mechanism: ε at least
// MinOutputEpsilon, and with the gaussian mechanism at most MaxGaussianEpsilon and a
// positive δ.
func (p *parser) outputBudget(f *fields, o *DPOutput) error {
	ev, eat, err := f.required("epsilon")
	if err != nil {
		return err
	}
	if o.Epsilon, err = p.float(ev, eat); err != nil {
		return err
	}
	if o.Epsilon < MinOutputEpsilon {
		return p.errorf(ev, eat, "must be at least %g, got %g", MinOutputEpsilon, o.Epsilon)
	}
	if v, at := f.get("delta"); v != nil {
		if o.Delta, err = p.delta(v, at); err != nil {
			return err
		}
	}
	if o.Mechanism, err = f.enum("mechanism", "laplace"); err != nil {
		return err
	}
	if o.Mechanism != "gaussian" {
		return nil
	}
	if o.Delta <= 0 {
		v, at := f.get("delta")
		if v == nil {
			v = f.node
		}
		return p.errorf(v, at, "must be positive for the gaussian mechanism")
	}
	if o.Epsilon > MaxGaussianEpsilon {
		return p.errorf(ev, eat, "must be at most %d for the gaussian mechanism, got %g", MaxGaussianEpsilon, o.Epsilon)
	}
	return nil
}

// outputKind decodes what an output of the mapping n (fields f) at path publishes:
// exactly one of outputKinds.
func (p *parser) outputKind(f *fields, n *yaml.Node, path string, o *DPOutput) error {
	switch given := f.present(outputKinds...); len(given) {
	case 0:
		return p.errorf(n, path, "needs one of %s", strings.Join(outputKinds, ", "))
	case 1:
	default:
		return p.errorf(n, path, "takes only one of %s, got %s", strings.Join(outputKinds, ", "), strings.Join(given, " and "))
	}
	var err error
	if v, at := f.get("histogram"); v != nil {
		o.Histogram, err = p.columnList(v, at)
	}
	if v, at := f.get("marginals"); v != nil {
		o.Marginals, err = p.marginals(v, at)
	}
	if v, at := f.get("aggregate"); v != nil {
		o.Aggregate, err = p.aggregate(v, at)
	}
	if v, at := f.get("synthetic"); v != nil {
		if o.Synthetic, err = p.synthetic(v, at); err != nil {
			return err
		}
		return p.syntheticMechanism(f, path, o)
	}
	return err
}

// syntheticMechanism checks what a synthetic output says of its mechanism: it is fixed
// (exponential selection, Gaussian measurements, zCDP accounting), so it needs a
// delta and takes neither a mechanism nor post-processing.
func (p *parser) syntheticMechanism(f *fields, path string, o *DPOutput) error {
	for _, k := range []string{"mechanism", "post"} {
		if v, at := f.get(k); v != nil {
			return p.errorf(v, at, "a synthetic output takes no %s (it selects with the exponential mechanism and measures with Gaussian noise)", k)
		}
	}
	o.Mechanism = ""
	if o.Delta <= 0 {
		v, at := f.get("delta")
		if v == nil {
			v, at = f.node, path+".delta"
		}
		return p.errorf(v, at, "must be positive for a synthetic output (its zCDP accounting converts to (epsilon, delta))")
	}
	return nil
}

// way expects an integer between 1 and limit.
func (p *parser) way(n *yaml.Node, path string, limit int) (int, error) {
	w, err := p.int(n, path)
	if err == nil && (w < 1 || w > limit) {
		err = p.errorf(n, path, "must be between 1 and the number of columns (%d), got %d", limit, w)
	}
	return w, err
}

// marginals decodes a marginals output.
func (p *parser) marginals(n *yaml.Node, path string) (*Marginals, error) {
	f, err := p.mapping(n, path, "dp.outputs[].marginals")
	if err != nil {
		return nil, err
	}
	m := &Marginals{}
	v, at, err := f.required("columns")
	if err != nil {
		return nil, err
	}
	if m.Columns, err = p.columnList(v, at); err != nil {
		return nil, err
	}
	if v, at, err = f.required("way"); err != nil {
		return nil, err
	}
	if m.Way, err = p.way(v, at, len(m.Columns)); err != nil {
		return nil, err
	}
	return m, nil
}

// aggregate decodes an aggregate output.
func (p *parser) aggregate(n *yaml.Node, path string) (*Aggregate, error) {
	f, err := p.mapping(n, path, "dp.outputs[].aggregate")
	if err != nil {
		return nil, err
	}
	a := &Aggregate{}
	if v, at := f.get("group-by"); v != nil {
		if a.GroupBy, err = p.columnList(v, at); err != nil {
			return nil, err
		}
	}
	v, at, err := f.required("column")
	if err != nil {
		return nil, err
	}
	col, err := p.column(v, at)
	if err != nil {
		return nil, err
	}
	a.Column = col.Name
	if v, at, err = f.required("stats"); err != nil {
		return nil, err
	}
	if a.Stats, err = p.enumList(v, at, f.allowed("stats")...); err != nil {
		return nil, err
	}
	v, at = f.get("bounds")
	switch {
	case v != nil:
		if a.Bounds, err = p.bounds(v, at); err != nil {
			return nil, err
		}
	case slices.ContainsFunc(a.Stats, func(s string) bool { return s != "count" }):
		return nil, p.errorf(n, at, "required for sum, mean and quantiles")
	}
	v, at = f.get("quantiles")
	switch {
	case v != nil && !slices.Contains(a.Stats, "quantiles"):
		return nil, p.errorf(v, at, "needs quantiles among the stats")
	case v != nil:
		items, err := p.nonEmptyList(v, at)
		if err != nil {
			return nil, err
		}
		for i, it := range items {
			q, err := p.float(it, index(at, i))
			if err != nil {
				return nil, err
			}
			if q < 0 || q > 1 {
				return nil, p.errorf(it, index(at, i), "must be between 0 and 1, got %g", q)
			}
			a.Quantiles = append(a.Quantiles, q)
		}
	case slices.Contains(a.Stats, "quantiles"):
		a.Quantiles = []float64{0.25, 0.5, 0.75}
	}
	return a, nil
}

// synthetic decodes a synthetic-records output.
func (p *parser) synthetic(n *yaml.Node, path string) (*Synthetic, error) {
	f, err := p.mapping(n, path, "dp.outputs[].synthetic")
	if err != nil {
		return nil, err
	}
	s := &Synthetic{}
	v, at, err := f.required("columns")
	if err != nil {
		return nil, err
	}
	if s.Columns, err = p.columnList(v, at); err != nil {
		return nil, err
	}
	if v, at := f.get("rows"); v != nil {
		if r := resolve(v); r.Kind == yaml.ScalarNode && r.ShortTag() == "!!str" {
			if r.Value != "same" {
				return nil, p.errorf(v, at, "expected a positive integer or same, got %q", r.Value)
			}
		} else if s.Rows, err = p.positiveInt(v, at); err != nil {
			return nil, err
		} else if s.Rows > MaxSyntheticRows {
			return nil, p.errorf(v, at, "must be at most %d, got %d", MaxSyntheticRows, s.Rows)
		}
	}
	if s.Method, err = f.enum("method", "aim"); err != nil {
		return nil, err
	}
	if v, at := f.get("workload"); v != nil {
		if err := p.workload(v, at, s); err != nil {
			return nil, err
		}
	} else {
		s.Way = min(3, len(s.Columns))
	}
	if v, at := f.get("max-model-size"); v != nil {
		if s.MaxModelSize, err = p.positiveInt(v, at); err != nil {
			return nil, err
		}
		if s.MaxModelSize > MaxModelSize {
			return nil, p.errorf(v, at, "must be at most %d cells, got %d", MaxModelSize, s.MaxModelSize)
		}
	}
	return s, nil
}

// workload decodes the workload of a synthetic output into s.
func (p *parser) workload(n *yaml.Node, path string, s *Synthetic) error {
	switch resolve(n).Kind {
	case yaml.MappingNode:
		f, err := p.mapping(n, path, "dp.outputs[].synthetic.workload")
		if err != nil {
			return err
		}
		v, at, err := f.required("way")
		if err != nil {
			return err
		}
		s.Way, err = p.way(v, at, len(s.Columns))
		return err
	case yaml.SequenceNode:
		items, err := p.nonEmptyList(n, path)
		if err != nil {
			return err
		}
		for i, it := range items {
			at := index(path, i)
			clique, err := p.columnList(it, at)
			if err != nil {
				return err
			}
			for j, c := range clique {
				if !slices.Contains(s.Columns, c) {
					return p.errorf(it, index(at, j), "column %q is not among the synthetic columns", c)
				}
			}
			s.Workload = append(s.Workload, clique)
		}
		return nil
	}
	return p.expected(n, path, "a mapping {way: n} or a list of lists of columns")
}

// StoreURL reports whether s is a URL of a store (gs://, s3://, memfs://), not a local
// path: a scheme of letters, digits, "+", "-" or ".", starting with a letter, then
// "://".
func StoreURL(s string) bool {
	scheme, _, ok := strings.Cut(s, "://")
	if !ok || scheme == "" || !unicode.IsLetter(rune(scheme[0])) {
		return false
	}
	return strings.Trim(scheme, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.") == ""
}
