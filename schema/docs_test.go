package schema

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"sanitizer/internal/testfiles"
)

// reference is the configuration reference that must document every key.
const reference = "../docs/configuration.md"

// keyCell matches the first cell of a key row: one or more backquoted key paths,
// separated by commas.
var keyCell = regexp.MustCompile("^`[^`]+`(, `[^`]+`)*$")

// keyRows returns the rows of the page's key tables (tables whose header's first cell
// is "Key" and second "Type"), as their type cells by the key paths their first cell
// names, and errors for rows whose first cell is not a list of backquoted paths or
// that name a path already named.
func keyRows(page string) (map[string]string, []error) {
	rows := map[string]string{}
	var errs []error
	inFence, inTable, keyTable := false, false, false
	for i, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
			continue
		}
		if inFence || !strings.HasPrefix(line, "|") {
			inTable = false
			continue
		}
		cells := testfiles.TableCells(line)
		if !inTable { // the header row
			inTable, keyTable = true, len(cells) > 1 && cells[0] == "Key" && cells[1] == "Type"
			continue
		}
		if !keyTable || strings.Trim(cells[0], "-: ") == "" { // not a key table, or the separator row
			continue
		}
		if !keyCell.MatchString(cells[0]) || len(cells) < 2 {
			errs = append(errs, fmt.Errorf("line %d: the first cell of a key row must be backquoted key paths, got %q", i+1, cells[0]))
			continue
		}
		for _, p := range strings.Split(cells[0], ", ") {
			p = strings.Trim(p, "`")
			if _, dup := rows[p]; dup {
				errs = append(errs, fmt.Errorf("line %d: %s has a second row", i+1, p))
			}
			rows[p] = cells[1]
		}
	}
	return rows, errs
}

// acceptedKeys returns the key path of every key the parser accepts, from its tables.
func acceptedKeys() map[string]bool {
	keys := map[string]bool{}
	for section, ks := range sectionKeys {
		for _, k := range ks {
			keys[keyPath(section, k)] = true
		}
	}
	return keys
}

func readReference(t *testing.T) string {
	t.Helper()
	page, err := os.ReadFile(reference)
	if err != nil {
		t.Fatal(err)
	}
	return string(page)
}

// TestReferenceDocumentsEveryKey checks docs/configuration.md against the parser's
// tables: every key of every section has a row, every row is a key the parser accepts,
// and the type cell of an enumerated key's row gives each allowed value.
func TestReferenceDocumentsEveryKey(t *testing.T) {
	rows, errs := keyRows(readReference(t))
	for _, err := range errs {
		t.Error(err)
	}
	accepted := acceptedKeys()
	if !accepted["privacy.l-diversity.variant"] || len(accepted) < 50 {
		t.Fatalf("the parser's tables hold %d keys: not the whole configuration", len(accepted))
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range accepted {
			if !yield(k) {
				return
			}
		}
	}) {
		if _, ok := rows[k]; !ok {
			t.Errorf("%s: the parser accepts this key but %s has no row for it", k, reference)
		}
	}
	for k := range rows {
		if !accepted[k] {
			t.Errorf("%s: %s documents this key but the parser does not accept it", k, reference)
		}
	}
	for k, vals := range enumValues {
		if !accepted[k] {
			t.Errorf("%s: enumValues lists values for a key no section accepts", k)
		}
		typ, ok := rows[k]
		if !ok {
			continue // reported above
		}
		for _, v := range vals {
			if !strings.Contains(typ, "`"+v+"`") {
				t.Errorf("%s: the type cell of %s does not give the value `%s`", reference, k, v)
			}
		}
	}
}

// yamlExamples returns the bodies of the page's ```yaml blocks (```yaml refused too: an
// example of a key this version refuses, which cmd/sanitize's TestDocExamples holds to
// being refused).
func yamlExamples(page string) []string {
	var out []string
	var b strings.Builder
	in := false
	for _, line := range strings.Split(page, "\n") {
		switch {
		case !in && (strings.TrimSpace(line) == "```yaml" || strings.TrimSpace(line) == "```yaml refused"):
			in = true
			b.Reset()
		case in && strings.TrimSpace(line) == "```":
			in = false
			out = append(out, b.String())
		case in:
			b.WriteString(line + "\n")
		}
	}
	return out
}

// usedKeys adds the key path of every key n uses, below path, to used.
func usedKeys(n *yaml.Node, path string, used map[string]bool) {
	n = resolve(n)
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			at := path + ".<name>" // a mapping keyed by column names
			if path != "columns" && path != "search.weights" && path != "search.min-levels" && path != "search.max-levels" && path != "privacy.differential-privacy.generalization" {
				at = keyPath(path, n.Content[i].Value)
				used[at] = true
			}
			usedKeys(n.Content[i+1], at, used)
		}
	case yaml.SequenceNode:
		at := path
		if path == "dp.outputs" {
			at = "dp.outputs[]"
		}
		for _, c := range n.Content {
			usedKeys(c, at, used)
		}
	}
}

// lookup returns the value of key in the mapping m, or nil.
func lookup(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// setKey sets key to val in the mapping m, replacing a value it holds; a null val (~)
// removes the key.
func setKey(m *yaml.Node, key, val *yaml.Node) {
	remove := val.Kind == yaml.ScalarNode && val.ShortTag() == "!!null" // a ~ removes the key
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key.Value {
			if remove {
				m.Content = append(m.Content[:i], m.Content[i+2:]...)
			} else {
				m.Content[i+1] = val
			}
			return
		}
	}
	if !remove {
		m.Content = append(m.Content, key, val)
	}
}

// merge returns base with fragment's top-level sections merged in: a section that is a
// mapping in both has its keys set one by one, any other replaces base's.
func merge(t *testing.T, base, fragment string) []byte {
	t.Helper()
	var b, f yaml.Node
	if err := yaml.Unmarshal([]byte(base), &b); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(fragment), &f); err != nil {
		t.Fatal(err)
	}
	root, frag := b.Content[0], f.Content[0]
	if frag.Kind != yaml.MappingNode {
		t.Fatalf("example is not a mapping:\n%s", fragment)
	}
	for i := 0; i+1 < len(frag.Content); i += 2 {
		key, val := frag.Content[i], frag.Content[i+1]
		if section := lookup(root, key.Value); section != nil && section.Kind == yaml.MappingNode && val.Kind == yaml.MappingNode {
			for k := 0; k+1 < len(val.Content); k += 2 {
				setKey(section, val.Content[k], val.Content[k+1])
			}
			continue
		}
		setKey(root, key, val)
	}
	out, err := yaml.Marshal(&b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// complete reports whether a YAML example is a configuration of its own: one that names
// both dataset and columns (the page's rule; the others are fragments).
func complete(t *testing.T, ex string) bool {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(ex), &n); err != nil || len(n.Content) == 0 {
		t.Fatalf("example does not parse: %v\n%s", err, ex)
	}
	return lookup(n.Content[0], "dataset") != nil && lookup(n.Content[0], "columns") != nil
}

// TestReferenceExamples parses the page's YAML examples (the first whole, each later one
// merged into it unless it is complete) and checks that together they use every key the parser accepts, so
// that every key has an example the parser takes.
func TestReferenceExamples(t *testing.T) {
	examples := yamlExamples(readReference(t))
	if len(examples) < 2 {
		t.Fatalf("%s has %d yaml examples, want a complete one and fragments", reference, len(examples))
	}
	used := map[string]bool{}
	for i, ex := range examples {
		data := []byte(ex)
		if i > 0 && !complete(t, ex) {
			data = merge(t, examples[0], ex)
		}
		if _, err := Parse(data, fmt.Sprintf("example %d", i+1), "/cfg"); err != nil {
			t.Errorf("%s: yaml example %d is rejected: %v\n%s", reference, i+1, err, ex)
		}
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(ex), &n); err != nil {
			t.Fatal(err)
		}
		usedKeys(n.Content[0], "", used)
	}
	for k := range acceptedKeys() {
		if !used[k] {
			t.Errorf("%s: no yaml example uses %s", reference, k)
		}
	}
	for k := range used {
		if !acceptedKeys()[k] {
			t.Errorf("%s: an example uses %s, which the parser does not accept", reference, k)
		}
	}
}
