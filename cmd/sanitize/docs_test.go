package main

import (
	"encoding/csv"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"sanitizer/internal/testfiles"
)

// The pages whose configuration examples and quoted messages these tests hold to the
// program, relative to the repository's root.
const (
	configPage = "docs/configuration.md"
	readmePage = "README.md"
	designPage = "docs/design.md"
)

// readDoc returns the page name of the repository.
func readDoc(t *testing.T, name string) string {
	t.Helper()
	return string(readFile(t, filepath.Join("..", "..", name)))
}

// fence is a fenced block of a page: its language and its text.
type fence struct {
	lang, body string
	line       int // the line of the opening fence
}

// fences returns the page's fenced blocks in order.
func fences(page string) []fence {
	var out []fence
	var cur *fence
	for i, line := range strings.Split(page, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			cur = &fence{lang: strings.TrimPrefix(trimmed, "```"), line: i + 1}
		case cur != nil && trimmed == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.body += line + "\n"
		}
	}
	return out
}

// yamlFences returns the page's ```yaml blocks.
func yamlFences(page string) []fence {
	var out []fence
	for _, f := range fences(page) {
		if f.lang == "yaml" {
			out = append(out, f)
		}
	}
	return out
}

// docSection returns the text of the page's section headed "## title", up to the next
// heading of that level.
func docSection(t *testing.T, page, title string) string {
	t.Helper()
	_, rest, ok := strings.Cut(page, "\n## "+title+"\n")
	if !ok {
		t.Fatalf("no section %q", title)
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// tableRows returns the cells of the body rows of the first table in text whose header
// row's cells are header; "\|" in a cell is a "|".
func tableRows(t *testing.T, text string, header ...string) [][]string {
	t.Helper()
	var rows [][]string
	in := false
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "|") {
			if in {
				break
			}
			continue
		}
		cells := testfiles.TableCells(line)
		switch {
		case !in && strings.Join(cells, "|") == strings.Join(header, "|"):
			in = true
		case in && strings.Trim(strings.Join(cells, ""), "-: ") != "":
			if len(cells) != len(header) {
				t.Fatalf("table row with %d cells, want %d: %s", len(cells), len(header), line)
			}
			rows = append(rows, cells)
		}
	}
	if !in {
		t.Fatalf("no table with the header %q", header)
	}
	return rows
}

// codeSpans returns the text of a cell's backquoted spans.
func codeSpans(cell string) []string {
	var out []string
	for _, m := range regexp.MustCompile("`([^`]*)`").FindAllStringSubmatch(cell, -1) {
		out = append(out, m[1])
	}
	return out
}

// docFixture makes the folder the examples' paths are resolved in: hierarchies/ holds
// the sample's hierarchy files (testdata/hierarchies) and education.csv, the hierarchy
// file the configuration reference shows (its first ```text block); data/admissions.csv
// is the first 2,000 records of the sample, testdata/hospital.csv, separated by ';' as
// the reference's complete example reads it; out/ is where it writes.
func docFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	td := repoTestdata(t)
	for _, sub := range []string{"hierarchies", "data", "out"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"sex.csv", "diagnosis.csv", "ward.csv", "insurance.csv"} {
		writeFile(t, filepath.Join(dir, "hierarchies", name), string(readFile(t, filepath.Join(td, "hierarchies", name))))
	}
	var education string
	for _, f := range fences(readDoc(t, configPage)) {
		if f.lang == "text" {
			education = f.body
			break
		}
	}
	if education == "" {
		t.Fatalf("%s shows no hierarchy file (a ```text block)", configPage)
	}
	writeFile(t, filepath.Join(dir, "hierarchies", "education.csv"), education)
	rows := readCSV(t, filepath.Join(td, "hospital.csv"), ',')
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Comma = ';'
	if err := w.WriteAll(rows[:min(len(rows), 2001)]); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "data", "admissions.csv"), b.String())
	return dir
}

// isComplete reports whether a yaml example is a whole configuration: it names its
// dataset and its columns. Any other example is a fragment.
func isComplete(t *testing.T, example string) bool {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(example), &n); err != nil || len(n.Content) == 0 || n.Content[0].Kind != yaml.MappingNode {
		t.Fatalf("example is not a YAML mapping (%v):\n%s", err, example)
	}
	return docLookup(n.Content[0], "dataset") != nil && docLookup(n.Content[0], "columns") != nil
}

// docLookup returns the index of key's value in the mapping m's content, or nil.
func docLookup(m *yaml.Node, key string) *int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return &i
		}
	}
	return nil
}

// mergeYAML returns base with fragment's top-level sections merged in, the rule the
// configuration reference states: a section that is a mapping in both has its keys set
// one by one, any other replaces base's; a null value (~) removes the key.
func mergeYAML(t *testing.T, base, fragment string) string {
	t.Helper()
	var b, f yaml.Node
	if err := yaml.Unmarshal([]byte(base), &b); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(fragment), &f); err != nil {
		t.Fatalf("%v:\n%s", err, fragment)
	}
	if f.Kind == 0 { // an empty fragment
		return base
	}
	root, frag := b.Content[0], f.Content[0]
	if frag.Kind != yaml.MappingNode {
		t.Fatalf("fragment is not a mapping:\n%s", fragment)
	}
	for i := 0; i+1 < len(frag.Content); i += 2 {
		key, val := frag.Content[i], frag.Content[i+1]
		if at := docLookup(root, key.Value); at != nil && root.Content[*at+1].Kind == yaml.MappingNode && val.Kind == yaml.MappingNode {
			section := root.Content[*at+1]
			for k := 0; k+1 < len(val.Content); k += 2 {
				setOrRemove(section, val.Content[k], val.Content[k+1])
			}
			continue
		}
		setOrRemove(root, key, val)
	}
	out, err := yaml.Marshal(&b)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// setOrRemove sets key to val in the mapping m, or removes key when val is null.
func setOrRemove(m, key, val *yaml.Node) {
	at := docLookup(m, key.Value)
	switch {
	case val.ShortTag() == "!!null" && at != nil:
		m.Content = append(m.Content[:*at], m.Content[*at+2:]...)
	case val.ShortTag() == "!!null":
	case at != nil:
		m.Content[*at+1] = val
	default:
		m.Content = append(m.Content, key, val)
	}
}

// withoutInputPath returns the configuration with input.path removed.
func withoutInputPath(t *testing.T, cfg string) string {
	t.Helper()
	return mergeYAML(t, cfg, "input: {path: ~}")
}

// validateIn writes cfg into dir as name and runs sanitize validate on it.
func validateIn(t *testing.T, dir, name, cfg string) (int, string) {
	t.Helper()
	path := filepath.Join(dir, name)
	writeFile(t, path, cfg)
	code, _, stderr := runCLI(t, "validate", "-c", path)
	return code, strings.ReplaceAll(stderr, dir+string(filepath.Separator), "")
}

// TestDocExamples runs every configuration example of the documentation (each ```yaml
// block of docs/configuration.md, README.md and docs/design.md) through sanitize
// validate, with paths resolved in the fixture folder (docFixture): a complete
// configuration as it is (reading the input it names), a fragment merged into the
// reference's first example and validated without reading the input (a fragment may
// name columns the sample lacks). A ```yaml refused block shows a key this version
// refuses (a planned one): it must fail validate with exit 2, "not in this version".
func TestDocExamples(t *testing.T) {
	notInRaceRun(t)
	dir := docFixture(t)
	ref := yamlFences(readDoc(t, configPage))
	if len(ref) < 2 || !isComplete(t, ref[0].body) {
		t.Fatalf("%s: the first yaml example must be a complete configuration, followed by fragments", configPage)
	}
	base := ref[0].body
	n := 0
	for _, page := range []string{configPage, readmePage, designPage} {
		for _, ex := range fences(readDoc(t, page)) {
			if ex.lang != "yaml" && ex.lang != "yaml refused" {
				continue
			}
			n++
			cfg := ex.body
			if !isComplete(t, cfg) {
				cfg = withoutInputPath(t, mergeYAML(t, base, cfg))
			}
			code, stderr := validateIn(t, dir, fmt.Sprintf("example-%d.yaml", n), cfg)
			switch {
			case ex.lang == "yaml" && code != 0:
				t.Errorf("%s:%d: the example fails sanitize validate (exit %d):\n%s\n%s", page, ex.line, code, stderr, ex.body)
			case ex.lang == "yaml refused" && (code != 2 || !strings.Contains(stderr, "not in this version")):
				t.Errorf("%s:%d: the example of a key this version refuses is not refused (exit %d, want 2 and \"not in this version\"):\n%s\n%s", page, ex.line, code, stderr, ex.body)
			}
		}
	}
}

// quoted returns a pattern matching the message as the documentation quotes it: "…"
// stands for any text.
func quoted(msg string) *regexp.Regexp {
	parts := strings.Split(msg, "…")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(strings.Join(parts, ".*"))
}

// TestDocErrors provokes every message of the reference's Errors table: each row
// changes one line of the section's example (ward.yaml, in the fixture folder: the line
// keeps its indentation and takes the row's text), runs sanitize validate, and expects
// exit 2 and the message as quoted. The example unchanged must be valid.
func TestDocErrors(t *testing.T) {
	dir := docFixture(t)
	sec := docSection(t, readDoc(t, configPage), "Errors")
	ex := yamlFences(sec)
	if len(ex) != 1 {
		t.Fatalf("the Errors section must show one yaml example (ward.yaml), has %d", len(ex))
	}
	if code, stderr := validateIn(t, dir, "ward.yaml", ex[0].body); code != 0 {
		t.Fatalf("ward.yaml of the Errors section is not valid (exit %d): %s", code, stderr)
	}
	lines := strings.Split(ex[0].body, "\n")
	rows := tableRows(t, sec, "line", "changed to", "message")
	for _, row := range rows {
		n, err := strconv.Atoi(row[0])
		change, msg := codeSpans(row[1]), codeSpans(row[2])
		if err != nil || n < 1 || n > len(lines) || len(change) != 1 || len(msg) != 1 {
			t.Errorf("Errors table: a row needs a line of ward.yaml, one `change` and one `message`: %q", row)
			continue
		}
		edited := append([]string(nil), lines...)
		old := edited[n-1]
		edited[n-1] = old[:len(old)-len(strings.TrimLeft(old, " "))] + change[0]
		if edited[n-1] == old {
			t.Errorf("Errors table: line %d is %q already", n, old)
		}
		code, stderr := validateIn(t, dir, "ward.yaml", strings.Join(edited, "\n"))
		if code != 2 || !quoted(msg[0]).MatchString(stderr) {
			t.Errorf("ward.yaml line %d changed to %q: exit %d, stderr\n%s\nwant exit 2 and the documented message\n%s", n, change[0], code, stderr, msg[0])
		}
	}
	if len(rows) < 5 {
		t.Errorf("the Errors table has %d rows", len(rows))
	}
}

// TestDocRunChecks provokes every refusal of the reference's "Checks made when a
// command runs": each row names a command, a fragment merged into the page's first
// example (docFixture's folder; "~" removes a key) and flags after it, and the message
// the run must stop with, exit 2. A release writes where the example says (out/ in the
// fixture folder), dp into a new folder unless the row gives --out; a flag's relative
// path is in the fixture folder.
func TestDocRunChecks(t *testing.T) {
	notInRaceRun(t)
	dir := docFixture(t)
	page := readDoc(t, configPage)
	base := yamlFences(page)[0].body
	rows := tableRows(t, docSection(t, page, "Checks made when a command runs"), "command", "configuration", "message")
	for i, row := range rows {
		cmd, cfg, msg := codeSpans(row[0]), codeSpans(row[1]), codeSpans(row[2])
		if len(cmd) != 1 || len(cfg) < 1 || len(msg) != 1 {
			t.Errorf("checks table: a row needs a `command`, a `fragment` (and `flags`) and a `message`: %q", row)
			continue
		}
		path := filepath.Join(dir, fmt.Sprintf("check-%d.yaml", i))
		writeFile(t, path, mergeYAML(t, base, cfg[0]))
		args := []string{cmd[0], "-c", path}
		for _, f := range cfg[1:] {
			for _, a := range strings.Fields(f) {
				if !strings.HasPrefix(a, "-") && !filepath.IsAbs(a) {
					a = filepath.Join(dir, a) // a path, in the fixture folder
				}
				args = append(args, a)
			}
		}
		if cmd[0] == "dp" && !slices.Contains(args, "--out") {
			args = append(args, "--out", filepath.Join(t.TempDir(), "dp"))
		}
		code, _, stderr := runCLI(t, args...)
		stderr = strings.ReplaceAll(stderr, dir+string(filepath.Separator), "")
		// A row the program does not refuse writes a release: the next row starts afresh.
		if err := os.RemoveAll(filepath.Join(dir, "out")); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(dir, "out"), 0o755); err != nil {
			t.Fatal(err)
		}
		if code != 2 || !quoted(msg[0]).MatchString(stderr) {
			t.Errorf("sanitize %s with %s: exit %d, stderr\n%s\nwant exit 2 and the documented message\n%s", cmd[0], strings.Join(cfg, " "), code, stderr, msg[0])
		}
	}
	if len(rows) < 10 {
		t.Errorf("the checks table has %d rows", len(rows))
	}
}

// readmePartRow is how README.md quotes an error in a record of an input in parts.
var readmePartRow = regexp.MustCompile("`(part-[0-9]+)\\.csv: row ([0-9]+): column\\s+\"([a-z_]+)\": …`")

// TestDocReadmeMessages provokes the error README.md quotes for a record of an input in
// parts: the part, row and column it names get a value the column's hierarchy does not
// list, and the release must stop with exit 2 and the message as quoted.
func TestDocReadmeMessages(t *testing.T) {
	m := readmePartRow.FindStringSubmatch(readDoc(t, readmePage))
	if m == nil {
		t.Fatalf("%s no longer quotes the error of a record in a part (%s): update this test", readmePage, readmePartRow)
	}
	part, column := m[1], m[3]
	row, _ := strconv.Atoi(m[2])
	dir := docFixture(t)
	rows := readCSV(t, filepath.Join(dir, "data", "admissions.csv"), ';')
	col := slices.Index(rows[0], column)
	if col < 0 || row < 1 || row >= len(rows) {
		t.Fatalf("the sample has no column %q or row %d", column, row)
	}
	in := filepath.Join(dir, "parts")
	if err := os.Mkdir(in, 0o755); err != nil {
		t.Fatal(err)
	}
	bad := slices.Clone(rows[:row+1])
	bad[row] = slices.Clone(bad[row])
	bad[row][col] = "not-in-the-hierarchy"
	writeFile(t, filepath.Join(in, "part-00000.csv"), csvText(rows[:50], ';'))
	writeFile(t, filepath.Join(in, part+".csv"), csvText(bad, ';'))
	cfg := filepath.Join(dir, "ward.yaml")
	writeFile(t, cfg, yamlFences(readDoc(t, configPage))[0].body)
	code, _, stderr := runCLI(t, "release", "-c", cfg, "--in", in)
	want := fmt.Sprintf("%s.csv: row %d: column %q: ", part, row, column)
	if code != 2 || !strings.Contains(stderr, want) {
		t.Errorf("a bad value in %s, row %d, column %s: exit %d, stderr\n%s\nwant exit 2 and %q", part, row, column, code, stderr, want)
	}
}

// modulePackages returns every package of the module rooted at root (a folder holding
// Go files other than tests, outside testdata and the folders of other modules), by its
// path below root, with the module's packages its files other than tests import.
func modulePackages(t *testing.T, root, module string) map[string]map[string]bool {
	t.Helper()
	pkgs := map[string]map[string]bool{}
	fset := token.NewFileSet()
	for _, path := range testfiles.GoFiles(t, root, true) {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		pkg := filepath.ToSlash(filepath.Dir(rel))
		if pkgs[pkg] == nil {
			pkgs[pkg] = map[string]bool{}
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if dep, ok := strings.CutPrefix(p, module+"/"); ok {
				pkgs[pkg][dep] = true
			}
		}
	}
	return pkgs
}

// isFile reports whether path names an existing file.
func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// TestDesignPackages holds docs/design.md's package table to the module: every package
// has a row and every row names packages that exist (a name ending in "/" is a module of
// its own in that folder), and a package imports no package of the module that its row's
// "imports" cell does not name.
func TestDesignPackages(t *testing.T) {
	root := filepath.Join("..", "..")
	rows := tableRows(t, docSection(t, readDoc(t, designPage), "Packages"), "package", "holds", "imports")
	pkgs := modulePackages(t, root, "sanitizer")
	if len(pkgs) < 20 || pkgs["cmd/sanitize"] == nil {
		t.Fatalf("found %d packages: not the module", len(pkgs))
	}
	allowed := map[string]map[string]bool{}
	for _, row := range rows {
		for _, p := range codeSpans(row[0]) {
			if dir, ok := strings.CutSuffix(p, "/"); ok {
				if !isFile(filepath.Join(root, dir, "go.mod")) {
					t.Errorf("%s: %s names the module %s, which has no go.mod", designPage, row[0], p)
				}
				continue
			}
			if _, dup := allowed[p]; dup {
				t.Errorf("%s: package %s has two rows", designPage, p)
			}
			allowed[p] = map[string]bool{}
			for _, dep := range codeSpans(row[2]) {
				allowed[p][dep] = true
			}
		}
	}
	for p, deps := range pkgs {
		may, ok := allowed[p]
		if !ok {
			t.Errorf("%s: the package table has no row for %s", designPage, p)
			continue
		}
		for dep := range deps {
			if !may[dep] {
				t.Errorf("%s imports %s, which its row in %s does not allow", p, dep, designPage)
			}
		}
	}
	for p := range allowed {
		if pkgs[p] == nil {
			t.Errorf("%s: the package table names %s, which is not a package of the module", designPage, p)
		}
	}
}
