package testfiles

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// untemplatedReplaces are the calls of strings.Replace, strings.ReplaceAll,
// bytes.Replace and bytes.ReplaceAll a test may make, by their old and new arguments
// as the source writes them ("old → new"), each with why it edits no template: text a
// test compares made comparable, a name made a file's or a subtest's, a placeholder of
// an expected message or of a line the test writes filled in.
var untemplatedReplaces = map[string]string{
	`"\r\n" → "\n"`:   "line endings made one before the lines are compared",
	`"{{DIR}}" → dir`: "the test's folder put into an expected message",
	`"{{HIER}}" → filepath.Join(repoTestdata(t), "hierarchies")`: "the hierarchies' folder put into an expected message",
	`dir+string(filepath.Separator) → ""`:                        "the test's folder taken out of a message before it is compared",
	`out → "OUT"`:                                                "the output folder taken out of what a command said",
	`"$(OUT)" → out`:                                             "the Makefile's output folder made the test's",
	`" " → "_"`:                                                  "a test case's name made a file name",
	`" " → "-"`:                                                  "a test case's name made a file name",
	`"/" → "_"`:                                                  "a test case's name made a subtest's",
	`"SEX" → sex`:                                                "a placeholder in a line the test writes filled in (setLine checks the line it replaces)",
	`"," → string(sep)`:                                          "a CSV case re-separated with each separator (a case of one column has none)",
	`"yes" → "true"`:                                             "a yes/no field read as a boolean",
	`s.Series → ""`:                                              "the series' id (hex digits) taken out of a page before its numbers are read",
	`"," → ""`:                                                   "a number's thousands separators taken out before it is parsed",
	`"no" → "false"`:                                             "a yes/no field read as a boolean",
	"`\"` → `\"\"`":                                              "a DuckDB identifier quoted",
	`"'" → "''"`:                                                 "a DuckDB string literal quoted",
}

// TestTemplateEditsAreChecked: every test of the repository (the main, beam and interop
// modules) edits configuration and fixture text with Replace or ReplaceAll, which fail
// when the text does not hold what they replace, never with an unchecked
// strings.Replace, strings.ReplaceAll, bytes.Replace or bytes.ReplaceAll: a template
// that drifted would turn its subtest silently into a copy of another. The rule is
// simple and needs no guess at what a template is: a test file may call those
// functions only with an old and new argument untemplatedReplaces names.
func TestTemplateEditsAreChecked(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, c := range replaceCalls(t, root) {
		if _, ok := untemplatedReplaces[c.args]; !ok {
			t.Errorf("%s: %s(%s) edits text unchecked: use testfiles.Replace or testfiles.ReplaceAll (or, if this edits no template, add %q to untemplatedReplaces with the reason)", c.at, c.fn, c.args, c.args)
		}
		used[c.args] = true
	}
	for args := range untemplatedReplaces {
		if !used[args] {
			t.Errorf("untemplatedReplaces names %s, which no test calls any more: take it out", args)
		}
	}
}

// replaceCall is a call of a replace function of package strings or bytes in a test.
type replaceCall struct {
	at   string // file:line, from the repository's root
	fn   string // strings.Replace, …
	args string // "old → new", as the source writes them
}

// replaceCalls returns the calls of strings.Replace, strings.ReplaceAll, bytes.Replace
// and bytes.ReplaceAll in the test files below root (hidden folders and testdata aside).
func replaceCalls(t *testing.T, root string) []replaceCall {
	t.Helper()
	var calls []replaceCall
	for _, path := range GoFiles(t, root, false) {
		if !strings.HasSuffix(path, "_test.go") {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		text := func(e ast.Expr) string {
			return string(src[fset.Position(e.Pos()).Offset:fset.Position(e.End()).Offset])
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) < 3 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "Replace" && sel.Sel.Name != "ReplaceAll") {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); ok && (pkg.Name == "strings" || pkg.Name == "bytes") {
				calls = append(calls, replaceCall{
					at:   rel + ":" + strconv.Itoa(fset.Position(call.Pos()).Line),
					fn:   pkg.Name + "." + sel.Sel.Name,
					args: text(call.Args[1]) + " → " + text(call.Args[2]),
				})
			}
			return true
		})
	}
	if len(calls) == 0 {
		t.Fatal("no replace call found: the walk missed the tests")
	}
	return calls
}
