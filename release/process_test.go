package release

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// processSettings are the calls that change the whole process's runtime settings:
// only the command (cmd/) may make them, never a library package.
var processSettings = map[string][]string{
	"runtime/debug": {"SetGCPercent", "FreeOSMemory", "SetMemoryLimit", "SetMaxThreads", "SetMaxStack", "SetPanicOnFault", "SetTraceback"},
	"runtime":       {"GC", "GOMAXPROCS", "LockOSThread"},
}

// TestLibrariesLeaveTheProcessAlone parses every non-test Go file of the module
// outside cmd/ and fails on a call that changes the process's runtime settings
// (runtime.GOMAXPROCS(0), which only reads, is allowed). internal/supervise is the
// commands' own: its Main is a command's main, which runs the command in a child
// process (and locks the thread that starts it, which the child's parent-death signal
// is tied to).
func TestLibrariesLeaveTheProcessAlone(t *testing.T) {
	root := ".."
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (name == "cmd" || name == "testdata" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			if filepath.ToSlash(path) == "../internal/supervise" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		checked++
		for _, call := range settingCalls(t, path) {
			t.Errorf("%s: %s changes the process's settings: that belongs to cmd/sanitize", path, call)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 20 {
		t.Fatalf("only %d files checked: the walk did not reach the module", checked)
	}
}

// settingCalls lists the calls of processSettings in the Go file at path.
func settingCalls(t *testing.T, path string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	local := map[string]string{} // the file's name for each package → its path
	for _, im := range f.Imports {
		p := strings.Trim(im.Path.Value, `"`)
		if _, ok := processSettings[p]; !ok {
			continue
		}
		name := filepath.Base(p)
		if im.Name != nil {
			name = im.Name.Name
		}
		local[name] = p
	}
	var found []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		pkg, ok := sel.X.(*ast.Ident)
		if !ok || local[pkg.Name] == "" {
			return true
		}
		for _, fn := range processSettings[local[pkg.Name]] {
			if sel.Sel.Name != fn {
				continue
			}
			if lit, ok := singleArg(call); fn == "GOMAXPROCS" && ok && lit == "0" {
				continue
			}
			found = append(found, local[pkg.Name]+"."+fn)
		}
		return true
	})
	return found
}

// singleArg is the text of a call's only argument when it is a literal.
func singleArg(call *ast.CallExpr) (string, bool) {
	if len(call.Args) != 1 {
		return "", false
	}
	lit, ok := call.Args[0].(*ast.BasicLit)
	if !ok {
		return "", false
	}
	return lit.Value, true
}
