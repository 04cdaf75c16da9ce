package verify

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps the verifier independent of what it checks: besides the standard
// library it may use only the configuration, the pure l-diversity, t-closeness and
// risk functions, the error kinds, the panic guard, its own Parquet library and, of the Arrow project's code,
// the IPC reader alone (with the types, buffers and allocator interface it hands
// arrays over in), never the pipeline, the table package's sources, the search
// (generalize) or the rest of the Arrow library (its arrays' accessors, pqarrow, its
// Parquet code): the verifier turns the arrays' buffers into text itself.
func TestImports(t *testing.T) {
	allowed := []string{"sanitizer/schema", "sanitizer/fault", "sanitizer/diversity", "sanitizer/closeness", "sanitizer/risk", "sanitizer/internal/safe",
		"github.com/parquet-go/parquet-go"}
	// Exactly these, not the packages below them.
	exact := []string{"github.com/apache/arrow-go/v18/arrow/ipc", "github.com/apache/arrow-go/v18/arrow",
		"github.com/apache/arrow-go/v18/arrow/memory"}
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
			ok = ok || slices.Contains(exact, path)
			if !ok {
				t.Errorf("%s imports %s", name, path)
			}
		}
	}
}
