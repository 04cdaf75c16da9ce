package main

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sanitizer/internal/testfiles"
)

// TestPackageDocs holds every package of the main module and of the beam module to a
// package doc that go doc shows: in exactly one of its files, directly above the
// package clause, opening "Package NAME" ("Command NAME" for a main package), and
// saying what the package may import (a sentence with "import" in it).
func TestPackageDocs(t *testing.T) {
	root := filepath.Join("..", "..")
	docs := map[string][]string{} // package folder → the docs of its files
	names := map[string]string{}
	fset := token.NewFileSet()
	for _, path := range testfiles.GoFiles(t, root, false) {
		rel, _ := filepath.Rel(root, path)
		if strings.HasSuffix(path, "_test.go") || strings.HasPrefix(filepath.ToSlash(rel), "interop/") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		names[dir] = f.Name.Name
		if f.Doc != nil {
			docs[dir] = append(docs[dir], filepath.Base(path)+"\x00"+f.Doc.Text())
		} else if _, ok := docs[dir]; !ok {
			docs[dir] = nil
		}
	}
	if len(names) < 20 || names["beam/stage"] == "" {
		t.Fatalf("found %d packages: not the two modules", len(names))
	}
	dirs := make([]string, 0, len(names))
	for dir := range names {
		dirs = append(dirs, dir)
	}
	slices.Sort(dirs)
	for _, dir := range dirs {
		if len(docs[dir]) != 1 {
			t.Errorf("%s: %d files with a package doc, want exactly one", dir, len(docs[dir]))
			continue
		}
		file, text, _ := strings.Cut(docs[dir][0], "\x00")
		opening := "Package " + names[dir] + " "
		if names[dir] == "main" {
			opening = "Command "
		}
		if !strings.HasPrefix(text, opening) {
			t.Errorf("%s/%s: the package doc opens %.30q, want %q", dir, file, text, opening)
		}
		if !strings.Contains(text, "import") {
			t.Errorf("%s/%s: the package doc does not say what the package may import", dir, file)
		}
	}
}
