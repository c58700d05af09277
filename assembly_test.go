package rangekeeper_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// assemblyParts are the constructors of the running process's parts. Only package app calls
// them: a second caller is a second assembly, which drifts from the first (the daemon once ran
// no containment watch and no timeline because it was wired apart from the workbench).
var assemblyParts = map[string][]string{
	module + "/backends/supervisor": {"New"},
	module + "/watch":               {"New"},
	module + "/action":              {"New"},
	module + "/timeline":            {"Recorder"},
	module + "/inspectlive":         {"New"},
}

const assembler = "app"

// TestOneAssembly refuses a constructor of the process's parts outside package app. Test files
// and test-helper packages (…test) build their own parts and are not scanned.
func TestOneAssembly(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || strings.HasSuffix(d.Name(), "test") && path != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || filepath.Dir(path) == assembler {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, use := range assemblyUses(f) {
			t.Errorf("%s: %s outside package %s: build it through app.App (a second assembly drifts from the first)", fset.Position(use.Pos()), exprString(use), assembler)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// assemblyUses returns the selector expressions in f that name an assembly part.
func assemblyUses(f *ast.File) []*ast.SelectorExpr {
	names := map[string]string{} // local name → import path
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if _, ok := assemblyParts[p]; !ok {
			continue
		}
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = p
	}
	var uses []*ast.SelectorExpr
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		for _, part := range assemblyParts[names[x.Name]] {
			if sel.Sel.Name == part {
				uses = append(uses, sel)
			}
		}
		return true
	})
	return uses
}

func exprString(sel *ast.SelectorExpr) string { return sel.X.(*ast.Ident).Name + "." + sel.Sel.Name }

// TestOneAssemblyBites feeds the scan a second assembly, and a look-alike that is none.
func TestOneAssemblyBites(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want int
	}{
		{`package x; import sv "` + module + `/backends/supervisor"; var s = sv.New(nil, sv.DefaultBackoff)`, 1},
		{`package x; import "` + module + `/timeline"; var r = &timeline.Recorder{}`, 1},
		{`package x; import "` + module + `/watch"; func f() { watch.New(nil, nil, watch.Options{}) }`, 1},
		{`package x; import "` + module + `/watch"; var o watch.Options`, 0},
		{`package x; import "errors"; var e = errors.New("x")`, 0},
	} {
		f, err := parser.ParseFile(token.NewFileSet(), "x.go", tc.src, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(assemblyUses(f)); got != tc.want {
			t.Errorf("%s: %d uses found; want %d", tc.src, got, tc.want)
		}
	}
}
