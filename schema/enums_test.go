package schema_test

import (
	"fmt"
	"go/ast"
	goparser "go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"sanitizer/closeness"
	"sanitizer/diversity"
	"sanitizer/gen"
	"sanitizer/internal/testfiles"
	"sanitizer/job"
	"sanitizer/risk"
	"sanitizer/schema"
)

// enumSpellings are the configuration spellings of the enumerations that are types,
// with the types that define each (a spelling may be a value of more than one). Some
// are common words ("string", "date", "timestamp", "error", "warn"): no code compares
// one with anything but its enumeration today; should some (an Arrow type's name, a
// log level) need to, narrow the rule for that type to a literal whose other operand
// has the enumeration's type rather than leave the type out.
func enumSpellings() map[string]string {
	out := map[string]string{}
	add := func(typ string, names []string) {
		for _, n := range names {
			if out[n] != "" {
				out[n] += " or " + typ
			} else {
				out[n] = typ
			}
		}
	}
	add("schema.Algorithm", spellings(schema.Algorithms))
	add("schema.Metric", spellings(schema.Metrics))
	add("schema.LossAggregate", spellings(schema.LossAggregates))
	add("diversity.Variant", spellings(diversity.Variants))
	add("diversity.Estimator", spellings(diversity.Estimators))
	add("closeness.Distance", spellings(closeness.Distances))
	add("closeness.LikenessVariant", spellings(closeness.LikenessVariants))
	add("schema.Neighbours", spellings(schema.NeighbourRelations))
	add("schema.Mechanism", spellings(schema.Mechanisms))
	add("schema.PostProcess", spellings(schema.PostProcesses))
	add("schema.Stat", spellings(schema.Stats))
	add("schema.SynthesisMethod", spellings(schema.SynthesisMethods))
	add("schema.Format", spellings(schema.Formats))
	add("schema.Role", spellings(schema.Roles))
	add("schema.Type", spellings(schema.Types))
	add("schema.ReleasedCheck", spellings(schema.ReleasedChecks))
	add("risk.UniquenessModel", spellings(risk.UniquenessModels))
	add("risk.CellSizeEstimator", spellings(risk.CellSizeEstimators))
	add("schema.Unlisted", spellings(schema.UnlistedAnswers))
	add("schema.MaskFrom", spellings(schema.MaskEnds))
	add("schema.DateUnit", spellings(schema.DateUnits))
	add("job.Stage", spellings(job.Stages))
	add("gen.Table", spellings(gen.Tables))
	return out
}

// spellings returns the String of each of values.
func spellings[E fmt.Stringer](values []E) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = v.String()
	}
	return out
}

// TestNoBareEnumLiterals: no code of either module (tests excepted) compares with ==,
// != or a switch case, or looks up with slices.Contains or slices.Index, a bare string
// literal that spells a value of an enumeration: it compares against the enumeration's
// constant, so that a value is written once, where its type defines it.
func TestNoBareEnumLiterals(t *testing.T) {
	values := enumSpellings()
	var found []string
	for _, root := range []string{"..", "../beam"} {
		found = append(found, bareEnumLiterals(t, root, values)...)
	}
	for _, f := range found {
		t.Error(f)
	}
}

// bareEnumLiterals returns the places below root (a module; another module's folder
// and testdata are skipped) where a string literal among values is compared.
func bareEnumLiterals(t *testing.T, root string, values map[string]string) []string {
	t.Helper()
	var out []string
	fset := token.NewFileSet()
	for _, path := range testfiles.GoFiles(t, root, true) {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := goparser.ParseFile(fset, path, nil, goparser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		report := func(lit ast.Expr) {
			b, ok := lit.(*ast.BasicLit)
			if !ok || b.Kind != token.STRING {
				return
			}
			s, err := strconv.Unquote(b.Value)
			if err != nil {
				return
			}
			if typ, ok := values[s]; ok {
				out = append(out, fset.Position(b.Pos()).String()+": "+b.Value+" is compared bare: use the constant of "+typ)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if n.Op == token.EQL || n.Op == token.NEQ {
					report(n.X)
					report(n.Y)
				}
			case *ast.CaseClause:
				for _, e := range n.List {
					report(e)
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && len(n.Args) == 2 {
					if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "slices" && (sel.Sel.Name == "Contains" || sel.Sel.Name == "Index") {
						report(n.Args[1])
					}
				}
			}
			return true
		})
	}
	return out
}
