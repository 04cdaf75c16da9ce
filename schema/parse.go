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

	"sanitizer/closeness"
	"sanitizer/diversity"
	"sanitizer/fault"
	"sanitizer/internal/readfile"
	"sanitizer/internal/safe"
	"sanitizer/risk"
	"sanitizer/safepub"
)

// Load reads and parses the configuration file at path, a regular file of at most
// MaxConfigBytes. The result's File is path,
// Dir is the folder holding the file (relative paths in the configuration are resolved
// against it) and Digest is the hex SHA-256 of the file's bytes.
func Load(path string) (*Config, error) {
	data, err := readfile.Read(path, MaxConfigBytes)
	if err != nil {
		return nil, fault.BadInput("reading configuration: %w", err)
	}
	return Parse(data, path, filepath.Dir(path))
}

// Parse decodes and validates configuration bytes, filling in defaults. name identifies
// the configuration in error messages and is stored in Config.File; relative paths in
// the configuration are resolved against dir. The error matches fault.ErrBadInput and reads
// "name:line: key.path: message"; when the configuration holds several independent
// mistakes it is an *ErrorList of all of them, one a line, in the order of their lines.
func Parse(data []byte, name, dir string) (*Config, error) {
	cfg, err := ParseDraft(data, name, dir)
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

// LoadDraft is Load that returns, with the configuration's errors, the configuration
// as far as it decodes (see ParseDraft); nil when the file cannot be read or its YAML
// does not decode.
func LoadDraft(path string) (*Config, error) {
	data, err := readfile.Read(path, MaxConfigBytes)
	if err != nil {
		return nil, fault.BadInput("reading configuration: %w", err)
	}
	return ParseDraft(data, path, filepath.Dir(path))
}

// ParseDraft is Parse that returns, with the configuration's errors, the configuration
// as far as it decodes: what validate checks further (its hierarchy files) when the
// configuration has mistakes. A part in error is left out or zero, and a column's
// hierarchy given with a mistake is an empty Hierarchy. It is nil only when the YAML
// does not decode.
func ParseDraft(data []byte, name, dir string) (*Config, error) {
	label := name
	if label == "" {
		label = "configuration"
	}
	root, err := decodeYAML(data, label)
	if err != nil {
		return nil, err
	}
	p := &parser{file: label, dir: dir, lines: map[string]int{}, broken: map[string]bool{}}
	cfg := p.config(root)
	sum := sha256.Sum256(data)
	cfg.File = name
	cfg.Dir = dir
	cfg.Digest = hex.EncodeToString(sum[:])
	cfg.lines = p.lines
	return cfg, p.errs.Err()
}

// yamlLine matches the location prefix of the YAML decoder's syntax errors.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// decodeYAML returns the root node of the single YAML document in data.
func decodeYAML(data []byte, label string) (root *yaml.Node, err error) {
	defer func() {
		// The decoder is third-party code run on user input: a panic it raises is
		// reported as bad input rather than crashing the run; one of this program's
		// code is an internal error.
		if r := recover(); r != nil {
			root, err = nil, fault.BadInput("%s: cannot decode YAML: %v", label, r)
			if !safe.RaisedIn("go.yaml.in/yaml/") {
				err = safe.Recovered(r)
			}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	switch err := dec.Decode(&doc); {
	case errors.Is(err, io.EOF):
		return nil, fault.BadInput("%s:1: the configuration is empty", label)
	case err != nil:
		return nil, syntaxError(label, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].ShortTag() == "!!null" {
		return nil, fault.BadInput("%s:%d: the configuration is empty", label, max(doc.Line, 1))
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, syntaxError(label, err)
	default:
		return nil, fault.BadInput("%s:%d: only one YAML document is allowed", label, next.Line)
	}
	return doc.Content[0], nil
}

// syntaxError rewrites a YAML decoder error as "label:line: syntax error: ...".
func syntaxError(label string, err error) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		return fault.BadInput("%s:%s: syntax error: %s", label, m[1], msg[len(m[0]):])
	}
	return fault.BadInput("%s: syntax error: %s", label, strings.TrimPrefix(msg, "yaml: "))
}

// parser walks the YAML node tree of one configuration. It reports an error by
// returning it, and an error after which the parsing goes on (the next key, column,
// section) by noting it: the configuration's errors are all it noted.
type parser struct {
	file string             // file name for messages
	dir  string             // folder that relative paths are resolved against
	cols map[string]*Column // configured columns by name, once parsed
	// broken holds the columns whose role or type is in error ("" for all of them when
	// the columns section is): what refers to them is not checked further.
	broken map[string]bool
	errs   ErrorList      // the errors noted
	lines  map[string]int // the line of every key path and list item, for Config.Where
}

// errSkip is returned, never noted, by a check that depends on a part of the
// configuration already in error.
var errSkip = errors.New("schema: depends on a part of the configuration in error")

// note notes err (nil and errSkip: nothing) and reports whether it is nil.
func (p *parser) note(err error) bool {
	if err != nil && err != errSkip {
		p.errs.Add(err)
	}
	return err == nil
}

// errorf returns a bad-input error located at n's line and naming the key path.
func (p *parser) errorf(n *yaml.Node, path, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if path == "" {
		return &positioned{n.Line, fault.BadInput("%s:%d: %s", p.file, n.Line, msg)}
	}
	return &positioned{n.Line, fault.BadInput("%s:%d: %s: %s", p.file, n.Line, path, msg)}
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

// entries expects a mapping at path and returns its pairs in document order; it notes
// duplicate, merge and non-scalar keys and leaves them out.
func (p *parser) entries(n *yaml.Node, path string) ([]entry, error) {
	m := resolve(n)
	if m.Kind != yaml.MappingNode {
		return nil, p.expected(n, path, "a mapping")
	}
	first := make(map[string]int, len(m.Content)/2)
	out := make([]entry, 0, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		if e, err := p.entry(m.Content[i], m.Content[i+1], path, first); p.note(err) {
			out = append(out, e)
		}
	}
	return out, nil
}

// entry checks the key k of a mapping at path (first: the keys before it, with their
// lines) and returns its pair.
func (p *parser) entry(kn, val *yaml.Node, path string, first map[string]int) (entry, error) {
	k := resolve(kn)
	if k.Kind != yaml.ScalarNode {
		return entry{}, p.errorf(kn, path, "keys must be names, got %s", describe(k))
	}
	switch k.ShortTag() {
	case "!!merge":
		return entry{}, p.errorf(kn, path, "merge keys (<<) are not supported")
	case "!!null":
		return entry{}, p.errorf(kn, path, "keys must be names, got null")
	}
	at := join(path, k.Value)
	if line, dup := first[k.Value]; dup {
		return entry{}, p.errorf(kn, at, "duplicate key (first given at line %d)", line)
	}
	first[k.Value] = kn.Line
	p.lines[at] = kn.Line
	return entry{key: k.Value, keyNode: kn, val: val}, nil
}

// fields is a decoded mapping whose keys have been checked against the known ones.
type fields struct {
	p       *parser
	node    *yaml.Node
	path    string
	section string   // the key of sectionKeys this mapping is checked against
	keys    []string // present keys in document order
	vals    map[string]*yaml.Node
	// incomplete is set when a key of the mapping is in error (unknown, a merge key):
	// a key it may have meant is then not reported missing.
	incomplete bool
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
	f.incomplete = len(es) < len(resolve(n).Content)/2
	for _, e := range es {
		if !slices.Contains(known, e.key) {
			p.note(p.errorf(e.keyNode, join(path, e.key), "unknown key (expected one of %s)", strings.Join(known, ", ")))
			f.incomplete = true
			continue
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

// required returns the value of key, or an error when it is absent (errSkip when the
// mapping is incomplete).
func (f *fields) required(key string) (*yaml.Node, string, error) {
	v, at := f.get(key)
	if v == nil && f.incomplete {
		return nil, at, errSkip
	}
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

// enumSetOf returns the values enumSets holds for the key path key, which must be an
// enumeration of E.
func enumSetOf[E fmt.Stringer](key string) []E {
	set, ok := enumSets[key].(valuesOf[E])
	if !ok {
		panic("schema: key " + strconv.Quote(key) + " is not an enumeration of its type in enumSets")
	}
	return set
}

// enumField returns the value of the optional key of f, an enumeration of E (enumSets),
// def when it is absent.
func enumField[E fmt.Stringer](f *fields, key string, def E) (E, error) {
	v, at := f.get(key)
	if v == nil {
		return def, nil
	}
	return enumValue[E](f.p, v, at, keyPath(f.section, key))
}

// enumValue expects at path the spelling of one of the values enumSets holds for the
// key path key, and returns that value.
func enumValue[E fmt.Stringer](p *parser, n *yaml.Node, path, key string) (E, error) {
	values := enumSetOf[E](key)
	names := spellings(values)
	s, err := p.enum(n, path, names...)
	if err != nil {
		var zero E
		return zero, err
	}
	return values[slices.Index(names, s)], nil
}

// enumValues expects at path a non-empty list of distinct spellings of the values
// enumSets holds for the key path key, and returns those values.
func enumValueList[E fmt.Stringer](p *parser, n *yaml.Node, path, key string) ([]E, error) {
	values := enumSetOf[E](key)
	names := spellings(values)
	ss, err := p.enumList(n, path, names...)
	if err != nil {
		return nil, err
	}
	out := make([]E, len(ss))
	for i, s := range ss {
		out[i] = values[slices.Index(names, s)]
	}
	return out, nil
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
	for i, it := range v.Content {
		p.lines[index(path, i)] = it.Line
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

// column expects the name of a configured column; errSkip when the column (or the
// columns section) is in error.
func (p *parser) column(n *yaml.Node, path string) (*Column, error) {
	name, err := p.name(n, path)
	if err != nil {
		return nil, err
	}
	if p.broken[name] || p.broken[""] {
		return nil, errSkip
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

// config decodes the top-level mapping. It notes the errors of each section and goes
// on with the next; a check across sections is made only when the sections it reads
// are free of errors.
func (p *parser) config(root *yaml.Node) *Config {
	cfg := &Config{
		Unlisted: UnlistedError,
		Input:    defaultIO(),
		Output:   defaultIO(),
		Search:   Search{Algorithm: Optimal, Metric: MetricLoss},
	}
	f, err := p.mapping(root, "", "")
	if !p.note(err) {
		return cfg
	}
	if v, at := f.get("dataset"); v != nil {
		cfg.Dataset, err = p.dataset(v, at)
		p.note(err)
	}
	if u, err := enumField(f, "unlisted", UnlistedError); p.note(err) {
		cfg.Unlisted = u
	}
	if v, at := f.get("input"); v != nil {
		cfg.Input, err = p.io(v, at)
		p.note(err)
	}
	if v, at := f.get("output"); v != nil {
		cfg.Output, err = p.io(v, at)
		p.note(err)
	}
	v, at, err := f.required("columns")
	if err == nil {
		cfg.Columns, err = p.columns(v, at)
	}
	if !p.note(err) {
		p.broken[""] = true
	}
	p.cols = make(map[string]*Column, len(cfg.Columns))
	for i := range cfg.Columns {
		p.cols[cfg.Columns[i].Name] = &cfg.Columns[i]
	}
	inError := map[string]bool{} // the sections given with an error
	section := func(key string, decode func(v *yaml.Node, at string) error) {
		if v, at := f.get(key); v != nil {
			n := p.errs.Len()
			p.note(decode(v, at))
			inError[key] = p.errs.Len() > n
		}
	}
	section("privacy", func(v *yaml.Node, at string) (err error) { cfg.Privacy, err = p.privacy(v, at); return })
	section("search", func(v *yaml.Node, at string) (err error) { cfg.Search, err = p.search(v, at); return })
	section("risk", func(v *yaml.Node, at string) (err error) { cfg.Risk, err = p.risk(v, at); return })
	section("dp", func(v *yaml.Node, at string) (err error) { cfg.DP, err = p.dp(v, at); return })
	cfg.Series = Series{MaxDeferred: 1, Removals: RemovalsRefuse}
	section("series", func(v *yaml.Node, at string) (err error) { cfg.Series, err = p.series(v, at); return })
	if !inError["risk"] {
		p.needsPopulation(f, cfg)
	}
	if cfg.Privacy.Subset != nil && cfg.Search.Algorithm == Mondrian {
		v, at := f.get("search")
		p.note(p.errorf(v, at+".algorithm", "mondrian cannot decide privacy.subset's models (δ-presence, k-map against the population), which are decided on full-domain classes: use optimal"))
	}
	return cfg
}

// needsPopulation notes the privacy models that need the population described when
// the risk section does not describe it.
func (p *parser) needsPopulation(f *fields, cfg *Config) {
	if cfg.Risk.Known() {
		return
	}
	v, at := f.get("privacy")
	if cfg.Privacy.PopulationUniqueness != nil {
		p.note(p.errorf(v, at+".population-uniqueness", "needs the population: risk: {population: N} or risk: {sampling-fraction: f}"))
	}
	if km := cfg.Privacy.KMap; km != nil && km.Estimator != nil {
		p.note(p.errorf(v, at+".k-map", "an estimator needs the population: risk: {population: N} or risk: {sampling-fraction: f}"))
	}
}

// dataset decodes the dataset's name.
func (p *parser) dataset(v *yaml.Node, at string) (string, error) {
	name, err := p.name(v, at)
	if err != nil {
		return "", err
	}
	if err := CheckDatasetName(name); err != nil {
		return "", &positioned{v.Line, fault.BadInput("%s:%d: %s: %w", p.file, v.Line, at, err)}
	}
	return name, nil
}

// series decodes the series section (defaults: no bound on deferral, removals refused,
// the key beside the state).
func (p *parser) series(n *yaml.Node, path string) (Series, error) {
	s := Series{MaxDeferred: 1, Removals: RemovalsRefuse}
	f, err := p.mapping(n, path, "series")
	if err != nil {
		return s, err
	}
	if v, at := f.get("max-deferred"); v != nil {
		if s.MaxDeferred, err = p.share(v, at, true); err != nil {
			return s, err
		}
	}
	if s.Removals, err = enumField(f, "removals", RemovalsRefuse); err != nil {
		return s, err
	}
	if v, at := f.get("key-file"); v != nil {
		if s.KeyFile, err = p.path(v, at); err != nil {
			return s, err
		}
	}
	return s, nil
}

// risk decodes what is known of the population the input was drawn from.
func (p *parser) risk(n *yaml.Node, path string) (Risk, error) {
	var r Risk
	f, err := p.mapping(n, path, "risk")
	if err != nil {
		return r, err
	}
	switch keys := f.present("population", "sampling-fraction"); {
	case len(keys) == 0 && f.incomplete:
		return r, errSkip
	case len(keys) == 0:
		return r, p.errorf(n, path, "needs population or sampling-fraction")
	case len(keys) == 2:
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
		t.Path, err = p.path(v, at)
		p.note(err)
	}
	t.Format, err = enumField[Format](f, "format", "")
	p.note(err)
	if v, at := f.get("csv"); v != nil {
		t.CSV, err = p.csv(v, at, keyPath(f.section, "csv"))
		p.note(err)
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
		r, err := p.separator(v, at)
		if p.note(err) {
			c.Separator = r
		}
	}
	if v, at := f.get("header"); v != nil {
		c.Header, err = p.bool(v, at)
		p.note(err)
	}
	return c, nil
}

// separator decodes a CSV separator: one character, neither the quote nor a line
// break.
func (p *parser) separator(v *yaml.Node, at string) (rune, error) {
	s, err := p.str(v, at)
	if err != nil {
		return 0, err
	}
	r, size := utf8.DecodeRuneInString(s)
	switch {
	case s == "":
		return 0, p.errorf(v, at, "must not be empty")
	case size != len(s):
		return 0, p.errorf(v, at, "must be a single character, got %q", s)
	case r == '"':
		return 0, p.errorf(v, at, "must not be the quote character")
	case r == '\r' || r == '\n':
		return 0, p.errorf(v, at, "must not be a line break")
	case r == 0 || r == utf8.RuneError:
		return 0, p.errorf(v, at, "must be a printable character or a tab, got %q", s)
	}
	return r, nil
}

// columns decodes the columns mapping, keeping its order; a column whose role or type
// is in error is noted as broken.
func (p *parser) columns(n *yaml.Node, path string) ([]Column, error) {
	es, err := p.entries(n, path)
	if err != nil {
		return nil, err
	}
	if len(es) == 0 && len(resolve(n).Content) > 0 {
		return nil, errSkip // its keys are in error
	}
	if len(es) == 0 {
		return nil, p.errorf(n, path, "must name at least one column")
	}
	cols := make([]Column, 0, len(es))
	for _, e := range es {
		if e.key == "" {
			p.note(p.errorf(e.keyNode, path, "column names must not be empty"))
			continue
		}
		col, err := p.columnConfig(e.key, e.val, join(path, e.key))
		if !p.note(err) {
			p.broken[e.key] = true
		}
		cols = append(cols, col)
	}
	return cols, nil
}

// columnConfig decodes the configuration of one column. Its error is one of the role
// or the type, which the other keys are checked against; theirs are noted.
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
	if col.Role, err = enumValue[Role](p, v, at, keyPath(f.section, "role")); err != nil {
		return col, err
	}
	if col.Type, err = enumField(f, "type", String); err != nil {
		return col, err
	}
	col.TypeDeclared = f.vals["type"] != nil
	if v, at := f.get("null-as"); v != nil {
		col.Null, err = p.nullAs(v, at, col.Role)
		p.note(err)
	}
	if v, at := f.get("hierarchy"); v != nil {
		if col.Role == Identifier || col.Role == Insensitive {
			p.note(p.errorf(v, at, "not allowed for an %s column", col.Role))
		} else if col.Hierarchy, err = p.hierarchy(v, at, col.Type); !p.note(err) {
			col.Hierarchy = &Hierarchy{} // given, in error: not reported missing too
		}
	} else if col.Role == Quasi && !f.incomplete {
		p.note(p.errorf(n, at, "required for a quasi-identifier"))
	}
	if v, at := f.get("domain"); v != nil {
		col.Domain, err = p.domain(v, at, col.Hierarchy != nil)
		p.note(err)
	}
	return col, nil
}

// nullAs decodes the value a null of a column of role role is read as.
func (p *parser) nullAs(v *yaml.Node, at string, role Role) (*string, error) {
	if role != Quasi && role != Sensitive {
		return nil, p.errorf(v, at, "not allowed for an %s column (only quasi-identifiers and sensitive columns replace nulls)", role)
	}
	s, err := p.scalar(v, at, "the value a null is read as (a string, number or boolean)", "!!str", "!!int", "!!float", "!!bool")
	if err != nil {
		return nil, err
	}
	return &s.Value, nil
}

// hierarchy decodes a column's hierarchy for a column of type typ.
func (p *parser) hierarchy(n *yaml.Node, path string, typ Type) (*Hierarchy, error) {
	f, err := p.mapping(n, path, "columns.<name>.hierarchy")
	if err != nil {
		return nil, err
	}
	switch given := f.present(hierarchyKinds...); len(given) {
	case 0:
		if f.incomplete {
			return nil, errSkip
		}
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
		h.Date, err = p.dateLevels(v, at, typ)
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
	from, err := enumField(f, "from", MaskFromRight)
	if err != nil {
		return nil, err
	}
	v, at, err := f.required("max")
	if err != nil {
		return nil, err
	}
	m := &Mask{FromRight: from == MaskFromRight}
	if m.Max, err = p.int(v, at); err != nil {
		return nil, err
	}
	if m.Max < 1 || m.Max > MaxHierarchyLevels-2 {
		return nil, p.errorf(v, at, "must be at least 1 and at most %d (a hierarchy has at most %d levels, the original values and the top included), got %d", MaxHierarchyLevels-2, MaxHierarchyLevels, m.Max)
	}
	return m, nil
}

// dateLevels decodes the levels of a date hierarchy: some of DateUnits, finest first.
func (p *parser) dateLevels(n *yaml.Node, path string, typ Type) ([]DateUnit, error) {
	if typ != Date {
		return nil, p.errorf(n, path, "needs a column of type date, not %s", typ)
	}
	levels, err := enumValueList[DateUnit](p, n, path, "columns.<name>.hierarchy.date")
	if err != nil {
		return nil, err
	}
	for i := 1; i < len(levels); i++ {
		if slices.Index(DateUnits, levels[i]) < slices.Index(DateUnits, levels[i-1]) {
			return nil, p.errorf(n, path, "must list the finest level first (%s), got %s after %s",
				strings.Join(spellings(DateUnits), " < "), levels[i], levels[i-1])
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
		if f.incomplete {
			return nil, errSkip
		}
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

// privacy decodes the privacy models, noting the errors of each.
func (p *parser) privacy(n *yaml.Node, path string) (Privacy, error) {
	var pr Privacy
	f, err := p.mapping(n, path, "privacy")
	if err != nil {
		return pr, err
	}
	if v, at := f.get("k"); v != nil {
		if pr.K, err = p.int(v, at); err == nil && pr.K < 1 {
			err = p.errorf(v, at, "must be at least 1, got %d", pr.K)
		}
		p.note(err)
	}
	if v, at := f.get("suppression"); v != nil {
		if pr.Suppression, err = p.float(v, at); err == nil && (pr.Suppression < 0 || pr.Suppression > 1) {
			err = p.errorf(v, at, "must be between 0 and 1, got %g", pr.Suppression)
		}
		p.note(err)
	}
	pr.LDiversity = requirements(p, f, "l-diversity", "an l-diversity", p.lDiversity, func(l *LDiversity) *string { return &l.Column })
	pr.TCloseness = requirements(p, f, "t-closeness", "a t-closeness", p.tCloseness, func(t *TCloseness) *string { return &t.Column })
	pr.BetaLikeness = requirements(p, f, "beta-likeness", "a β-likeness", p.betaLikeness, func(b *BetaLikeness) *string { return &b.Column })
	p.riskModels(f, &pr)
	if v, at := f.get("profitability"); v != nil {
		pr.Profitability, err = p.profitability(v, at)
		p.note(err)
	}
	p.populationModels(f, &pr)
	pr.ReleasedColumns, err = p.releasedColumns(f)
	p.note(err)
	if v, at := f.get("privacy-unit"); v != nil {
		pr.Unit, err = p.unit(v, at)
		p.note(err)
	}
	if v, at := f.get("differential-privacy"); v != nil {
		pr.DifferentialPrivacy, err = p.differentialPrivacy(v, at)
		p.note(err)
		p.aloneWithDP(f)
		return pr, nil // k and the suppression follow from ε and δ
	}
	// l-diversity, t-closeness, β-likeness, a risk or population model without k: every
	// class is a class of at least one record (ARX's default), and the report says k
	// was not given.
	if pr.K == 0 && (len(pr.LDiversity) > 0 || len(pr.TCloseness) > 0 || len(pr.BetaLikeness) > 0 || pr.RisksModelled() || pr.PopulationModelled() || pr.Profitability != nil) {
		pr.K, pr.KDefault = 1, true
	}
	return pr, nil
}

// requirements decodes the l-diversity, t-closeness or β-likeness requirements at key
// of f (one mapping or a list of them), each by requirement with decode, at most one
// per column (column points at a requirement's); what names the model in the message
// of a second one. It notes the errors of each requirement and leaves those in error
// out.
func requirements[R any](p *parser, f *fields, key, what string, decode func(*fields, *Column) (R, error), column func(*R) *string) []R {
	v, at := f.get(key)
	if v == nil {
		return nil
	}
	items, paths, err := p.oneOrMany(v, at)
	p.note(err)
	var out []R
	for i, it := range items {
		r, err := requirement(p, it, paths[i], keyPath(f.section, key), decode, column)
		if !p.note(err) {
			continue
		}
		if slices.ContainsFunc(out, func(prev R) bool { return *column(&prev) == *column(&r) }) {
			p.note(p.errorf(it, paths[i], "column %q already has %s requirement", *column(&r), what))
			continue
		}
		out = append(out, r)
	}
	return out
}

// requirement decodes one requirement at path: a mapping of section whose column is a
// sensitive column (requirementColumn), its other keys decoded by decode, which is
// given the column (nil when it is in error) and notes the errors it goes on after.
// Its error is decode's, else errSkip when only the column is in error.
func requirement[R any](p *parser, n *yaml.Node, path, section string, decode func(*fields, *Column) (R, error), column func(*R) *string) (R, error) {
	var r R
	f, err := p.mapping(n, path, section)
	if err != nil {
		return r, err
	}
	col := p.requirementColumn(f)
	if r, err = decode(f, col); err != nil {
		return r, err
	}
	if col == nil {
		return r, errSkip
	}
	*column(&r) = col.Name
	return r, nil
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
	return enumField(rf, "check", ReleasedWarn)
}

// riskModels decodes the risk-based models of the privacy section, noting the errors
// of each.
func (p *parser) riskModels(f *fields, pr *Privacy) {
	var err error
	if v, at := f.get("average-risk"); v != nil {
		pr.AverageRisk, err = p.share(v, at, false)
		p.note(err)
	}
	if v, at := f.get("highest-risk"); v != nil {
		pr.HighestRisk, err = p.share(v, at, false)
		p.note(err)
	}
	if v, at := f.get("records-at-risk"); v != nil {
		pr.RecordsAtRisk, err = p.recordsAtRisk(v, at)
		p.note(err)
	}
	if v, at := f.get("population-uniqueness"); v != nil {
		pr.PopulationUniqueness, err = p.populationUniqueness(v, at)
		p.note(err)
	}
	pr.RiskEnforcement, err = enumField(f, "risk-enforcement", RiskSuppress)
	p.note(err)
}

// recordsAtRisk decodes privacy.records-at-risk.
func (p *parser) recordsAtRisk(v *yaml.Node, at string) (*RecordsAtRisk, error) {
	rf, err := p.mapping(v, at, "privacy.records-at-risk")
	if err != nil {
		return nil, err
	}
	r := &RecordsAtRisk{}
	tv, tat, err := rf.required("threshold")
	if err == nil {
		r.Threshold, err = p.share(tv, tat, false)
	}
	ok := p.note(err)
	mv, mat, err := rf.required("max")
	if err == nil {
		r.Max, err = p.share(mv, mat, true)
	}
	if !p.note(err) || !ok {
		return nil, errSkip
	}
	return r, nil
}

// populationUniqueness decodes privacy.population-uniqueness.
func (p *parser) populationUniqueness(v *yaml.Node, at string) (*PopulationUniqueness, error) {
	uf, err := p.mapping(v, at, "privacy.population-uniqueness")
	if err != nil {
		return nil, err
	}
	u := &PopulationUniqueness{}
	mv, mat, err := uf.required("max")
	if err == nil {
		u.Max, err = p.share(mv, mat, true)
	}
	ok := p.note(err)
	if u.Model, err = enumField(uf, "model", risk.Dankar); !p.note(err) || !ok {
		return nil, errSkip
	}
	return u, nil
}

// populationModels decodes the research subset, δ-presence and k-map, noting the
// errors of each. What one says of another is checked against the other's key being
// given, not its being free of errors.
func (p *parser) populationModels(f *fields, pr *Privacy) {
	var err error
	sv, sat := f.get("subset")
	if sv != nil {
		pr.Subset, err = p.subset(sv, sat)
		p.note(err)
	}
	if v, at := f.get("delta-presence"); v != nil {
		pr.DeltaPresence, err = p.deltaPresence(v, at)
		p.note(err)
		if sv == nil {
			p.note(p.errorf(v, at, "needs privacy.subset: δ-presence is measured against the population the subset is drawn from"))
		}
	}
	kv, kat := f.get("k-map")
	if kv != nil {
		pr.KMap, err = p.kMap(kv, kat, sv != nil)
		p.note(err)
	}
	journalist := pr.Profitability != nil && pr.Profitability.Attacker == risk.JournalistAttacker
	if sv != nil && f.vals["delta-presence"] == nil && kv == nil && !journalist && !f.incomplete {
		p.note(p.errorf(sv, sat, "a research subset needs delta-presence, k-map or a journalist's profitability (without them, release the subset as its own input)"))
	}
	if v, at := f.get("profitability"); journalist && sv == nil {
		p.note(p.errorf(v, at+".attacker", "journalist needs privacy.subset: the journalist's chance is counted in the population the subset is drawn from (use prosecutor without one)"))
	}
}

// profitability decodes privacy.profitability, ARX's defaults for the amounts not
// given.
func (p *parser) profitability(v *yaml.Node, at string) (*Profitability, error) {
	pf, err := p.mapping(v, at, "privacy.profitability")
	if err != nil {
		return nil, err
	}
	m := &Profitability{CostBenefit: risk.DefaultCostBenefit}
	m.Attacker, err = enumField(pf, "attacker", risk.ProsecutorAttacker)
	ok := p.note(err)
	if av, aat := pf.get("attack"); av != nil {
		m.Attack, err = p.bool(av, aat)
		ok = p.note(err) && ok
	}
	for _, a := range []struct {
		key string
		to  *float64
	}{{"publisher-benefit", &m.Benefit}, {"publisher-loss", &m.Loss}, {"adversary-gain", &m.Gain}, {"adversary-cost", &m.Cost}} {
		av, aat := pf.get(a.key)
		if av == nil {
			continue
		}
		x, err := p.float(av, aat)
		if err == nil && !(x >= 0 && x <= math.MaxFloat64) {
			err = p.errorf(av, aat, "must be a finite amount of at least 0, got %g", x)
		}
		if ok = p.note(err) && ok; ok {
			*a.to = x
		}
	}
	if !ok {
		return nil, errSkip
	}
	return m, nil
}

// dpAlone are the privacy keys that privacy.differential-privacy stands without: SafePub
// derives k and suppresses every class below it, and its guarantee is about records
// sampled and suppressed by nothing else.
var dpAlone = []string{"k", "suppression", "l-diversity", "t-closeness", "beta-likeness", "average-risk", "highest-risk", "records-at-risk", "population-uniqueness", "risk-enforcement", "subset", "delta-presence", "k-map", "profitability", "privacy-unit"}

// aloneWithDP notes an error at every key of the privacy section f that may not be
// given with privacy.differential-privacy.
func (p *parser) aloneWithDP(f *fields) {
	for _, key := range dpAlone {
		if v, at := f.get(key); v != nil {
			p.note(p.errorf(v, at, "not with privacy.differential-privacy: SafePub derives k from ε and δ, suppresses every class below it, and its guarantee holds for records that nothing else selects (release the differentially private records alone)"))
		}
	}
}

// differentialPrivacy decodes privacy.differential-privacy: ε (the search's share
// included) and δ, and exactly one of generalization, degree and search. The node's
// levels are checked against the hierarchies when they are read.
func (p *parser) differentialPrivacy(v *yaml.Node, at string) (*DifferentialPrivacy, error) {
	df, err := p.mapping(v, at, "privacy.differential-privacy")
	if err != nil {
		return nil, err
	}
	d := &DifferentialPrivacy{}
	ok := true
	ev, eat, err := df.required("epsilon")
	if err == nil {
		d.Epsilon, err = p.float(ev, eat)
	}
	if err == nil && !(d.Epsilon > 0) {
		err = p.errorf(ev, eat, "must be positive, got %g", d.Epsilon)
	}
	ok = p.note(err) && ok
	dv, dat, err := df.required("delta")
	if err == nil {
		d.Delta, err = p.float(dv, dat)
	}
	if err == nil && !(d.Delta >= safepub.MinDelta && d.Delta < 1) {
		err = p.errorf(dv, dat, "must be from %g and below 1, got %g", safepub.MinDelta, d.Delta)
	}
	ok = p.note(err) && ok
	var given []string
	for _, key := range []string{"generalization", "degree", "search"} {
		if v, _ := df.get(key); v != nil {
			given = append(given, key)
		}
	}
	switch {
	case len(given) == 0 && !df.incomplete:
		return nil, p.errorf(v, at, "needs one of generalization (a level per quasi-identifier), degree (low, low-medium, medium, medium-high or high) or search (the data-dependent search's epsilon and steps)")
	case len(given) > 1:
		gv, gat := df.get(given[1])
		return nil, p.errorf(gv, gat, "not with %s: the node is given, or given by a degree, or searched for", given[0])
	}
	if gv, gat := df.get("generalization"); gv != nil {
		ok = p.note(p.dpGeneralization(gv, gat, d)) && ok
	}
	if df.vals["degree"] != nil {
		d.Degree, err = enumField(df, "degree", safepub.Degree(0))
		ok = p.note(err) && ok
	}
	if sv, sat := df.get("search"); sv != nil {
		d.Search, err = p.dpSearch(sv, sat)
		ok = p.note(err) && ok
	}
	if !ok {
		return nil, errSkip
	}
	return d, p.dpEpsilon(d, ev, eat)
}

// dpEpsilon checks that the anonymization's ε (the whole ε less the search's) lies
// where package safepub computes β and k.
func (p *parser) dpEpsilon(d *DifferentialPrivacy, n *yaml.Node, at string) error {
	anon := d.Epsilon
	if d.Search != nil {
		if d.Search.Epsilon >= d.Epsilon {
			return p.errorf(n, at, "%g leaves nothing to the anonymization after the search's %g (search.epsilon is part of epsilon)", d.Epsilon, d.Search.Epsilon)
		}
		anon = safepub.Remainder(d.Epsilon, d.Search.Epsilon)
	}
	if anon < safepub.MinEpsilon || anon > safepub.MaxEpsilon {
		if d.Search != nil {
			return p.errorf(n, at, "leaves %g to the anonymization after the search's %g; it must be from %g to %g", anon, d.Search.Epsilon, safepub.MinEpsilon, float64(safepub.MaxEpsilon))
		}
		return p.errorf(n, at, "must be from %g to %g, got %g", safepub.MinEpsilon, float64(safepub.MaxEpsilon), anon)
	}
	return nil
}

// dpGeneralization decodes privacy.differential-privacy.generalization into d: a level
// for every quasi-identifier.
func (p *parser) dpGeneralization(n *yaml.Node, at string, d *DifferentialPrivacy) error {
	levels, err := p.levels(n, at)
	if err != nil {
		return err
	}
	var missing []string
	for name, col := range p.cols {
		if _, ok := levels[name]; !ok && col.Role == Quasi {
			missing = append(missing, strconv.Quote(name))
		}
	}
	switch {
	case p.broken[""]:
		return errSkip
	case len(missing) > 0:
		slices.Sort(missing)
		return p.errorf(n, at, "names no level for quasi-identifier %s: the node needs a level for every one", strings.Join(missing, ", "))
	}
	d.Generalization = levels
	return nil
}

// maxDPSteps bounds privacy.differential-privacy.search.steps: each step draws from
// the exponential mechanism over the pivot's neighbours.
const maxDPSteps = 100_000

// dpSearch decodes privacy.differential-privacy.search.
func (p *parser) dpSearch(n *yaml.Node, at string) (*DPSearch, error) {
	sf, err := p.mapping(n, at, "privacy.differential-privacy.search")
	if err != nil {
		return nil, err
	}
	s := &DPSearch{Steps: DefaultDPSteps}
	ok := true
	ev, eat, err := sf.required("epsilon")
	if err == nil {
		s.Epsilon, err = p.float(ev, eat)
	}
	if err == nil && !(s.Epsilon >= safepub.MinEpsilon && s.Epsilon <= safepub.MaxEpsilon) {
		err = p.errorf(ev, eat, "must be from %g to %g, got %g", safepub.MinEpsilon, float64(safepub.MaxEpsilon), s.Epsilon)
	}
	ok = p.note(err) && ok
	if v, vat := sf.get("steps"); v != nil {
		s.Steps, err = p.int(v, vat)
		if err == nil && (s.Steps < 1 || s.Steps > maxDPSteps) {
			err = p.errorf(v, vat, "must be from 1 to %d, got %d", maxDPSteps, s.Steps)
		}
		ok = p.note(err) && ok
	}
	if !ok {
		return nil, errSkip
	}
	return s, nil
}

// subset decodes privacy.subset.
func (p *parser) subset(v *yaml.Node, at string) (*Subset, error) {
	sf, err := p.mapping(v, at, "privacy.subset")
	if err != nil {
		return nil, err
	}
	col, err := p.identifierColumn(sf, "so that it is never released")
	if err != nil {
		return nil, err
	}
	return &Subset{Column: col}, nil
}

// identifierColumn decodes the column key of f, which must name a configured column of
// role identifier; why says why in the error when it has another role.
func (p *parser) identifierColumn(f *fields, why string) (string, error) {
	cv, cat, err := f.required("column")
	if err != nil {
		return "", err
	}
	col, err := p.column(cv, cat)
	if err != nil {
		return "", err
	}
	if col.Role != Identifier {
		return "", p.errorf(cv, cat, "column %q must have role identifier, %s (its role is %s)", col.Name, why, col.Role)
	}
	return col.Name, nil
}

// unit decodes privacy.privacy-unit: its column must be an identifier, so that the id
// is never released as it is.
func (p *parser) unit(v *yaml.Node, at string) (*Unit, error) {
	uf, err := p.mapping(v, at, "privacy.privacy-unit")
	if err != nil {
		return nil, err
	}
	col, err := p.identifierColumn(uf, "so that the id is never released as it is")
	if err != nil {
		return nil, err
	}
	u := &Unit{Column: col}
	if pv, pat := uf.get("pseudonym"); pv != nil {
		pf, err := p.mapping(pv, pat, "privacy.privacy-unit.pseudonym")
		if err != nil {
			return nil, err
		}
		u.Pseudonym = &Pseudonym{}
		if kv, kat := pf.get("key-file"); kv != nil {
			if u.Pseudonym.KeyFile, err = p.path(kv, kat); err != nil {
				return nil, err
			}
		}
	}
	return u, nil
}

// deltaPresence decodes privacy.delta-presence.
func (p *parser) deltaPresence(v *yaml.Node, at string) (*DeltaPresence, error) {
	df, err := p.mapping(v, at, "privacy.delta-presence")
	if err != nil {
		return nil, err
	}
	d := &DeltaPresence{}
	if mv, mat := df.get("min"); mv != nil {
		if d.Min, err = p.share(mv, mat, true); err != nil {
			return nil, err
		}
	}
	mv, mat, err := df.required("max")
	if err != nil {
		return nil, err
	}
	if d.Max, err = p.share(mv, mat, false); err != nil {
		return nil, err
	}
	if d.Min > d.Max {
		return nil, p.errorf(mv, mat, "must be at least min (%g), got %g", d.Min, d.Max)
	}
	return d, nil
}

// kMap decodes privacy.k-map; subset says whether privacy.subset is given.
func (p *parser) kMap(v *yaml.Node, at string, subset bool) (*KMap, error) {
	kf, err := p.mapping(v, at, "privacy.k-map")
	if err != nil {
		return nil, err
	}
	m := &KMap{}
	kv, kat, err := kf.required("k")
	if err == nil {
		m.K, err = p.int(kv, kat)
	}
	if err == nil && m.K < 1 {
		err = p.errorf(kv, kat, "must be at least 1, got %d", m.K)
	}
	p.note(err)
	ev, eat := kf.get("estimator")
	sv, sat := kf.get("significance")
	switch {
	case subset && ev != nil:
		return nil, p.errorf(ev, eat, "not with privacy.subset: the population is then the input itself")
	case subset && sv != nil:
		return nil, p.errorf(sv, sat, "only with an estimator (without privacy.subset)")
	case !subset && ev == nil && !kf.incomplete:
		return nil, p.errorf(v, at, "needs privacy.subset (the input is the population) or an estimator (poisson or zero-truncated-poisson, with risk's population)")
	}
	if ev != nil {
		e, err := enumValue[risk.CellSizeEstimator](p, ev, eat, keyPath(kf.section, "estimator"))
		if err != nil {
			return nil, err
		}
		m.Estimator = &e
		m.Significance = 0.01
		if sv != nil {
			if m.Significance, err = p.share(sv, sat, true); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

// requirementColumn decodes the column of an l-diversity, t-closeness or β-likeness
// requirement: a sensitive column; nil (the error noted) when it is not one.
func (p *parser) requirementColumn(f *fields) *Column {
	v, at, err := f.required("column")
	if err != nil {
		p.note(err)
		return nil
	}
	col, err := p.sensitiveColumn(v, at)
	if !p.note(err) {
		return nil
	}
	return col
}

// lDiversity decodes the keys of one l-diversity requirement but its column.
func (p *parser) lDiversity(f *fields, _ *Column) (LDiversity, error) {
	var l LDiversity
	v, at, err := f.required("variant")
	if err == nil {
		l.Variant, err = enumValue[diversity.Variant](p, v, at, keyPath(f.section, "variant"))
	}
	if err != nil {
		return l, err // l, c and the estimator are checked against the variant
	}
	if v, at, err = f.required("l"); err == nil {
		l.L, err = p.float(v, at)
	}
	switch {
	case err != nil:
		p.note(err)
	case l.L < 1:
		p.note(p.errorf(v, at, "must be at least 1, got %g", l.L))
	case l.Variant != diversity.Entropy && !isWhole(l.L):
		p.note(p.errorf(v, at, "must be a whole number for the %s variant, got %g", l.Variant, l.L))
	}
	p.note(p.recursiveC(f, &l))
	if v, at = f.get("estimator"); v != nil && l.Variant != diversity.Entropy {
		p.note(p.errorf(v, at, "only allowed for the entropy variant"))
	} else if l.Variant == diversity.Entropy {
		l.Estimator, err = enumField(f, "estimator", diversity.Shannon)
		p.note(err)
	}
	return l, nil
}

// recursiveC decodes the c of recursive (c,l)-diversity into l.
func (p *parser) recursiveC(f *fields, l *LDiversity) error {
	v, at := f.get("c")
	switch {
	case l.Variant != diversity.Recursive && v != nil:
		return p.errorf(v, at, "only allowed for the recursive variant")
	case l.Variant == diversity.Recursive && v == nil && !f.incomplete:
		return p.errorf(f.node, at, "required for the recursive variant")
	case v == nil:
		return nil
	}
	var err error
	if l.C, err = p.float(v, at); err == nil && l.C <= 0 {
		err = p.errorf(v, at, "must be positive, got %g", l.C)
	}
	return err
}

// betaLikeness decodes the keys of one β-likeness requirement but its column.
func (p *parser) betaLikeness(f *fields, _ *Column) (BetaLikeness, error) {
	var b BetaLikeness
	v, at, err := f.required("beta")
	if err == nil {
		b.Beta, err = p.float(v, at)
	}
	if err == nil && b.Beta <= 0 {
		err = p.errorf(v, at, "must be above 0, got %g", b.Beta)
	}
	p.note(err)
	b.Variant, err = enumField(f, "variant", closeness.Basic)
	p.note(err)
	return b, nil
}

// tCloseness decodes the keys of one t-closeness requirement but its column, col (nil
// when in error), which its distance is checked against.
func (p *parser) tCloseness(f *fields, col *Column) (TCloseness, error) {
	var t TCloseness
	v, at, err := f.required("t")
	if err == nil {
		t.T, err = p.float(v, at)
	}
	if err == nil && t.T < 0 {
		err = p.errorf(v, at, "must be at least 0, got %g", t.T)
	}
	p.note(err)
	if t.Distance, err = enumField(f, "distance", closeness.Equal); err != nil {
		return t, err // the order is checked against the distance
	}
	p.note(p.distanceOrder(f, col, &t))
	return t, nil
}

// distanceOrder checks t's distance against its column col (nil: in error, not
// checked) and decodes its order.
func (p *parser) distanceOrder(f *fields, col *Column, t *TCloseness) error {
	if t.Distance == closeness.Hierarchical && col != nil && col.Hierarchy == nil {
		v, at := f.get("distance")
		return p.errorf(v, at, "hierarchical needs a hierarchy on column %q", col.Name)
	}
	v, at := f.get("order")
	switch {
	case v != nil && t.Distance != closeness.Ordered:
		return p.errorf(v, at, "only allowed with distance: ordered")
	case v != nil:
		d, err := p.domainValues(v, at)
		if err != nil {
			return err
		}
		t.Order = d.Values
	case t.Distance == closeness.Ordered && col != nil && col.Type != Integer && col.Type != Float && col.Type != Date && col.Type != Timestamp:
		v, at = f.get("distance")
		return p.errorf(v, at, "ordered on the %s column %q needs order: [its values, smallest first]", col.Type, col.Name)
	}
	return nil
}

// search decodes the search section, noting the errors of each key. The keys allowed
// only with some metrics are not checked against a metric in error.
func (p *parser) search(n *yaml.Node, path string) (Search, error) {
	var s Search
	f, err := p.mapping(n, path, "search")
	if err != nil {
		return s, err
	}
	s.Algorithm, err = enumField(f, "algorithm", Optimal)
	p.note(err)
	s.Metric, err = enumField(f, "metric", MetricLoss)
	metric := p.note(err)
	if v, at := f.get("aggregate"); v != nil && metric {
		if s.Metric != MetricLoss {
			p.note(p.errorf(v, at, "only allowed with metric: loss"))
		} else {
			s.Aggregate, err = enumField(f, "aggregate", AggregateArithmetic)
			p.note(err)
		}
	}
	if v, at := f.get("weights"); v != nil && metric {
		if s.Metric != MetricLoss {
			p.note(p.errorf(v, at, "only allowed with metric: loss"))
		} else {
			s.Weights, err = p.weights(v, at)
			p.note(err)
		}
	}
	if v, at := f.get("gs-factor"); v != nil && metric {
		p.note(p.gsFactor(v, at, &s))
	}
	for _, key := range []string{"min-levels", "max-levels"} {
		v, at := f.get(key)
		if v == nil {
			continue
		}
		m, err := p.levels(v, at)
		p.note(err)
		if key == "min-levels" {
			s.MinLevels = m
		} else {
			s.MaxLevels = m
		}
	}
	if v, at := f.get("local-recoding"); v != nil {
		s.LocalRecoding, err = p.localRecoding(v, at)
		p.note(err)
	}
	for name, lo := range s.MinLevels {
		if hi, ok := s.MaxLevels[name]; ok && hi < lo {
			v, at := f.get("max-levels")
			p.note(p.errorf(v, join(at, name), "%d is below min-levels' %d for %q", hi, lo, name))
		}
	}
	return s, nil
}

// maxLocalIterations bounds search.local-recoding.iterations: each pass is a search.
const maxLocalIterations = 1_000_000

// localRecoding decodes search.local-recoding, ARX's defaults for what it leaves out.
func (p *parser) localRecoding(v *yaml.Node, at string) (*LocalRecoding, error) {
	lf, err := p.mapping(v, at, "search.local-recoding")
	if err != nil {
		return nil, err
	}
	lr := &LocalRecoding{Iterations: 100, Adaption: 0.05}
	ok := true
	if iv, iat := lf.get("iterations"); iv != nil {
		lr.Iterations, err = p.int(iv, iat)
		if err == nil && (lr.Iterations < 1 || lr.Iterations > maxLocalIterations) {
			err = p.errorf(iv, iat, "must be from 1 to %d, got %d", maxLocalIterations, lr.Iterations)
		}
		ok = p.note(err)
	}
	if gv, gat := lf.get("gs-factor"); gv != nil {
		var g float64
		if g, err = p.share(gv, gat, true); p.note(err) {
			lr.GSFactor = &g
		} else {
			ok = false
		}
	}
	if av, aat := lf.get("adaption"); av != nil {
		if lr.Adaption, err = p.share(av, aat, true); !p.note(err) {
			ok = false
		}
	}
	if cv, cat := lf.get("cells"); cv != nil {
		if lr.Cells, err = p.bool(cv, cat); !p.note(err) {
			ok = false
		}
	}
	if !ok {
		return nil, errSkip
	}
	return lr, nil
}

// gsFactor decodes search.gs-factor into s, whose metric is decoded.
func (p *parser) gsFactor(v *yaml.Node, at string, s *Search) error {
	if !s.Metric.TakesGSFactor() {
		return p.errorf(v, at, "only allowed with metric: loss, entropy, entropy-monotone, entropy-loss or publisher-payout")
	}
	x, err := p.share(v, at, true)
	if err != nil {
		return err
	}
	s.GSFactor = &x
	return nil
}

// quasiKey checks that entry e of the mapping at path is keyed by a quasi-identifier's
// name, and returns the entry's path; errSkip when the column is in error.
func (p *parser) quasiKey(e entry, path string) (string, error) {
	at := join(path, e.key)
	switch c := p.cols[e.key]; {
	case p.broken[e.key] || p.broken[""]:
		return at, errSkip
	case c == nil:
		return at, p.errorf(e.keyNode, at, "unknown column %q", e.key)
	case c.Role != Quasi:
		return at, p.errorf(e.keyNode, at, "column %q is not a quasi-identifier", e.key)
	}
	return at, nil
}

// levels decodes min-levels or max-levels: quasi-identifier name → level ≥ 0. It
// notes the error of each entry and leaves the entry out.
func (p *parser) levels(n *yaml.Node, path string) (map[string]int, error) {
	es, err := p.entries(n, path)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int, len(es))
	for _, e := range es {
		at, err := p.quasiKey(e, path)
		if !p.note(err) {
			continue
		}
		l, err := p.int(e.val, at)
		if err == nil && l < 0 {
			err = p.errorf(e.val, at, "must be at least 0 (0 is the original values), got %d", l)
		}
		if p.note(err) {
			out[e.key] = l
		}
	}
	return out, nil
}

// weights decodes the loss's weights: quasi-identifier name → number above 0. It
// notes the error of each entry.
func (p *parser) weights(n *yaml.Node, path string) (map[string]float64, error) {
	es, err := p.entries(n, path)
	if err != nil {
		return nil, err
	}
	out := make(map[string]float64, len(es))
	for _, e := range es {
		at, err := p.quasiKey(e, path)
		if !p.note(err) {
			continue
		}
		w, err := p.float(e.val, at)
		if err == nil && w <= 0 {
			err = p.errorf(e.val, at, "must be above 0, got %g", w)
		}
		if p.note(err) {
			out[e.key] = w
		}
	}
	return out, nil
}

// dp decodes the differential-privacy section, noting the errors of each key and
// output.
func (p *parser) dp(n *yaml.Node, path string) (*DP, error) {
	f, err := p.mapping(n, path, "dp")
	if err != nil {
		return nil, err
	}
	d := &DP{}
	v, at, err := f.required("epsilon-total")
	if err == nil {
		d.EpsilonTotal, err = p.float(v, at)
	}
	if err == nil && d.EpsilonTotal <= 0 {
		err = p.errorf(v, at, "must be positive, got %g", d.EpsilonTotal)
	}
	p.note(err)
	if v, at := f.get("delta-total"); v != nil {
		d.DeltaTotal, err = p.delta(v, at)
		p.note(err)
	}
	d.Neighbours, err = enumField(f, "neighbours", AddRemove)
	p.note(err)
	if v, at := f.get("privacy-unit"); v != nil {
		d.PrivacyUnit, err = p.privacyUnit(v, at)
		p.note(err)
	}
	var items []*yaml.Node
	if v, at := f.get("outputs"); v != nil { // sanitize dp needs them; a release's ledger needs the totals only
		items, err = p.nonEmptyList(v, at)
		p.note(err)
	}
	_, at = f.get("outputs")
	names := make(map[string]bool, len(items))
	for i, it := range items {
		o, err := p.dpOutput(it, index(at, i), names)
		if p.note(err) {
			d.Outputs = append(d.Outputs, o)
		}
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

// privacyUnit decodes the contribution bounds of a privacy unit, noting the errors of
// each key.
func (p *parser) privacyUnit(n *yaml.Node, path string) (*PrivacyUnit, error) {
	f, err := p.mapping(n, path, "dp.privacy-unit")
	if err != nil {
		return nil, err
	}
	u := &PrivacyUnit{Seed: 1}
	v, at, err := f.required("column")
	var col *Column
	if err == nil {
		col, err = p.column(v, at)
	}
	if p.note(err) {
		u.Column = col.Name
	}
	if v, at := f.get("max-rows-per-unit"); v != nil {
		u.MaxRowsPerUnit, err = p.cap(v, at)
		p.note(err)
	}
	if v, at := f.get("max-cells-per-unit"); v != nil {
		u.MaxCellsPerUnit, err = p.cap(v, at)
		p.note(err)
	}
	if f.vals["max-rows-per-unit"] == nil && f.vals["max-cells-per-unit"] == nil && !f.incomplete {
		p.note(p.errorf(n, path, "needs max-rows-per-unit or max-cells-per-unit (a unit's contribution must be bounded)"))
	}
	if v, at := f.get("seed"); v != nil {
		seed, err := p.int(v, at)
		if err == nil && seed < 0 {
			err = p.errorf(v, at, "must be at least 0, got %d", seed)
		}
		if p.note(err) {
			u.Seed = uint64(seed)
		}
	}
	return u, nil
}

// dpOutput decodes one DP output; names holds the names of the outputs before it. It
// notes the errors of its name, budget, post-processing, format and kind.
func (p *parser) dpOutput(n *yaml.Node, path string, names map[string]bool) (DPOutput, error) {
	o := DPOutput{Mechanism: Laplace}
	f, err := p.mapping(n, path, "dp.outputs[]")
	if err != nil {
		return o, err
	}
	o.Name, err = p.outputName(f, names)
	p.note(err)
	p.note(p.outputBudget(f, &o))
	if v, at := f.get("post"); v != nil {
		o.Post, err = enumValueList[PostProcess](p, v, at, keyPath(f.section, "post"))
		p.note(err)
	}
	o.Format, err = enumField[Format](f, "format", "")
	p.note(err)
	if v, at := f.get("other"); v != nil {
		o.Other, err = p.bool(v, at)
		p.note(err)
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
	if o.Mechanism, err = enumField(f, "mechanism", Laplace); err != nil {
		return err
	}
	if o.Mechanism != Gaussian {
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
		if f.incomplete {
			return errSkip
		}
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
	if a.Stats, err = enumValueList[Stat](p, v, at, keyPath(f.section, "stats")); err != nil {
		return nil, err
	}
	v, at = f.get("bounds")
	switch {
	case v != nil:
		if a.Bounds, err = p.bounds(v, at); err != nil {
			return nil, err
		}
	case slices.ContainsFunc(a.Stats, func(s Stat) bool { return s != StatCount }) && !f.incomplete:
		return nil, p.errorf(n, at, "required for sum, mean and quantiles")
	}
	v, at = f.get("quantiles")
	switch {
	case v != nil && !slices.Contains(a.Stats, StatQuantiles):
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
	case slices.Contains(a.Stats, StatQuantiles):
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
	if s.Method, err = enumField(f, "method", AIM); err != nil {
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
