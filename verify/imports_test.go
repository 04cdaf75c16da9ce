package verify

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps the verifier independent of what it checks: besides the standard
// library it may use only the configuration, the pure l-diversity and t-closeness
// functions, the panic guard and its own Parquet library, never the pipeline, the
// search (generalize) or the Arrow project's code.
func TestImports(t *testing.T) {
	allowed := []string{"sanitizer/schema", "sanitizer/diversity", "sanitizer/closeness", "sanitizer/internal/safe",
		"github.com/parquet-go/parquet-go"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			std := !strings.Contains(strings.Split(path, "/")[0], ".") && !strings.HasPrefix(path, "sanitizer/")
			ok := std
			for _, a := range allowed {
				ok = ok || path == a || strings.HasPrefix(path, a+"/")
			}
			if !ok {
				t.Errorf("%s imports %s", name, path)
			}
		}
	}
}
