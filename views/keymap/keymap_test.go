package keymap

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/backends"
)

// declaredNames parses names.go: every constant of type Name.
func declaredNames(t *testing.T) map[Name]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "names.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[Name]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Name" {
				continue
			}
			for i, n := range vs.Names {
				v, _ := strconv.Unquote(vs.Values[i].(*ast.BasicLit).Value)
				out[Name(v)] = n.Name
			}
		}
	}
	return out
}

func TestEveryNameIsBound(t *testing.T) {
	declared := declaredNames(t)
	d := Default()
	for n, ident := range declared {
		if !d.Has(n) {
			t.Errorf("constant %s (%q) has no binding in Default", ident, n)
		}
	}
	for _, b := range d.All() {
		if _, ok := declared[b.Name]; !ok {
			t.Errorf("binding %q has no constant in names.go: code could only name it by a string", b.Name)
		}
		if len(b.Keys) == 0 || b.Help == "" || !slices.Contains(groupOrder, b.Group) {
			t.Errorf("binding %q: keys %v, help %q, group %q", b.Name, b.Keys, b.Help, b.Group)
		}
	}
	if len(Names()) != len(declared) {
		t.Errorf("Names() lists %d, names.go declares %d", len(Names()), len(declared))
	}
}

// nameArgs is where each keymap method takes a Name (-1: every argument from there on).
var nameArgs = map[string]int{"Is": 1, "IsControl": 1, "Get": 0, "Has": 0, "Label": 0, "Guard": 0, "Hint": 0, "Labels": -1, "Footer": -2}

// TestNoBindingIsNamedByAString scans every file that uses the keymap: a binding name written as
// a string literal would compile (an untyped constant converts to Name) and fail silently when
// mistyped, so code must use the constants.
func TestNoBindingIsNamedByAString(t *testing.T) {
	root := filepath.Join("..", "..")
	known := declaredNames(t)
	scanned := 0
	err := filepath.WalkDir(root, func(path string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if de.IsDir() && path != root && (de.Name() == "testdata" || strings.HasPrefix(de.Name(), ".") || de.Name() == "bin") {
			return filepath.SkipDir
		}
		if de.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		inKeymap := f.Name.Name == "keymap"
		imports := inKeymap
		for _, im := range f.Imports {
			if strings.HasSuffix(im.Path.Value, `/views/keymap"`) {
				imports = true
			}
		}
		if !imports {
			return nil
		}
		scanned++
		literal := func(e ast.Expr, why string) {
			if bl, ok := e.(*ast.BasicLit); ok && bl.Kind == token.STRING {
				v, _ := strconv.Unquote(bl.Value)
				if _, ok := known[Name(v)]; !ok || !inKeymap {
					t.Errorf("%s: %s %s: use a keymap constant", fset.Position(bl.Pos()), why, bl.Value)
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok {
					break
				}
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "keymap" && sel.Sel.Name == "Name" && len(n.Args) == 1 {
					literal(n.Args[0], "keymap.Name conversion of")
					break
				}
				pos, ok := nameArgs[sel.Sel.Name]
				if !ok {
					break
				}
				for i, a := range n.Args {
					if i == pos || pos == -1 || pos == -2 && i >= 1 {
						literal(a, "binding named by the string")
					}
				}
			case *ast.CompositeLit:
				if at, ok := n.Type.(*ast.ArrayType); ok {
					if s, ok := at.Elt.(*ast.SelectorExpr); ok && s.Sel.Name == "Name" {
						for _, e := range n.Elts {
							literal(e, "binding list holds the string")
						}
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 10 {
		t.Fatalf("scanned only %d files that use the keymap: the scan is not biting", scanned)
	}
}

func TestNoFlowControlKey(t *testing.T) {
	for _, b := range Default().All() {
		for _, k := range b.Keys {
			if flowControl[k] || k == "ctrl+b" || k == "ctrl+a" {
				t.Errorf("%s is bound to %s (terminal flow control or a multiplexer prefix)", b.Name, k)
			}
		}
	}
	scope := Names()
	if _, err := Default().Remap(map[string]string{"save": "ctrl+s"}, scope); err == nil || !strings.Contains(err.Error(), "flow control") {
		t.Errorf("remapping to ctrl+s = %v; want it refused", err)
	}
}

func TestDangerFollowsTheAction(t *testing.T) {
	for _, b := range Default().All() {
		if b.Action == "" {
			if b.Dangerous || b.Mutates {
				t.Errorf("%s is dangerous without an action", b.Name)
			}
			continue
		}
		if b.Dangerous != b.Action.Destructive() || b.Mutates != b.Action.Mutating() {
			t.Errorf("%s: dangerous=%v mutates=%v, but %s is destructive=%v mutating=%v", b.Name, b.Dangerous, b.Mutates,
				b.Action, b.Action.Destructive(), b.Action.Mutating())
		}
		if _, ok := b.Action.Spec(); !ok {
			t.Errorf("%s runs %q, which backends does not declare", b.Name, b.Action)
		}
	}
	ro := Default().ReadOnly()
	for _, n := range []Name{Snapshot, Revert, Teardown, Reset, Probe} {
		if ro.Has(n) {
			t.Errorf("read-only keymap has %s", n)
		}
	}
	// A role that may not tear down loses exactly that key.
	role := Default().Without(func(b Binding) bool { return b.Action == backends.ActionTeardown })
	if role.Has(Teardown) || !role.Has(Snapshot) {
		t.Error("Without dropped the wrong bindings")
	}
}

func TestRemapIsCheckedPerScope(t *testing.T) {
	fleet := []Name{Up, Down, Open, Back, Filter, Snapshot, Cancel, Quit}
	dialog := []Name{Open, Back, Focus, Yes, No}
	km, err := Default().Remap(map[string]string{"cancel": "X", "no": "N, esc2"}, fleet, dialog)
	if err != nil {
		t.Fatal(err)
	}
	if km.Label(Cancel) != "X" || !slices.Equal(mustGet(t, km, No).Keys, []string{"N", "esc2"}) {
		t.Errorf("remap not applied: cancel %q no %v", km.Label(Cancel), mustGet(t, km, No).Keys)
	}
	if Default().Label(Cancel) != "x" {
		t.Error("Remap changed the map it was called on")
	}
	// "n" may serve next-warning and no: they are never live together.
	if _, err := Default().Remap(map[string]string{"next-warning": "n"}, []Name{NextWarning, Fix}, dialog); err != nil {
		t.Errorf("keys in disjoint scopes refused: %v", err)
	}
	for over, want := range map[string]string{
		"snapshot": `"j" is bound to both`, // within the fleet's scope
		"bogus":    `unknown binding "bogus"`,
	} {
		m := map[string]string{over: "j"}
		if _, err := Default().Remap(m, fleet); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Remap(%v) = %v; want %q", m, err, want)
		}
	}
	if _, err := Default().Remap(map[string]string{"cancel": " , "}, fleet); err == nil {
		t.Error("a binding remapped to no key was accepted")
	}
	if _, err := Default().Remap(map[string]string{"cancel": "X"}); err == nil {
		t.Error("a remap without scopes was not refused")
	}
}

func TestGuardsAreAPropertyOfTheBinding(t *testing.T) {
	km := Default()
	km.Guard(Teardown, func(sel Selection) string {
		if len(sel.Targets(true)) > 1 {
			return ""
		}
		return "teardown: pick several"
	})
	b, _ := km.Get(Teardown)
	if b.Disabled(Selection{Sandbox: "a"}) == "" || b.Disabled(Selection{Sandbox: "a", Marked: []string{"a", "b"}}) != "" {
		t.Error("the guard does not see the selection")
	}
	if ro := km.ReadOnly(); ro.Has(Teardown) {
		t.Error("read-only kept a guarded dangerous binding")
	}
	msg := tea.KeyPressMsg{Code: 'q', Text: "q"}
	if !km.Is(msg, Quit) || km.IsControl(msg, Quit) {
		t.Error("a letter must not trigger a binding while typing")
	}
	if !km.IsControl(tea.KeyPressMsg{Code: tea.KeyEscape}, Back) {
		t.Error("esc must still go back while typing")
	}
}

func mustGet(t *testing.T, km *Map, n Name) Binding {
	t.Helper()
	b, ok := km.Get(n)
	if !ok {
		t.Fatalf("%s missing", n)
	}
	return b
}

// TestEveryKeyedKindIsBound: each action kind that declares a key has its binding, named by a
// constant of names.go, with the declared key, help, bulk and danger; no other binding runs an
// action.
func TestEveryKeyedKindIsBound(t *testing.T) {
	known := declaredNames(t)
	km := Default()
	keyed := 0
	for _, k := range backends.Kinds() {
		n := ActionName(k.Kind)
		b, ok := km.Get(n)
		if k.Key == "" {
			if ok && b.Action == k.Kind { // copy and verify name other bindings: copy ID, the author's verify
				t.Errorf("%s declares no key but is bound", k.Kind)
			}
			continue
		}
		keyed++
		if _, ok := known[n]; !ok {
			t.Errorf("%s: binding %q is not a constant of names.go", k.Kind, n)
		}
		if !ok || b.Action != k.Kind || b.Label() != k.Key || b.Help != k.Help || b.Bulk != k.Bulk || b.Group != GroupSandbox {
			t.Errorf("%s: binding %+v; want key %q help %q bulk %v", k.Kind, b, k.Key, k.Help, k.Bulk)
		}
	}
	actions := 0
	for _, b := range km.All() {
		if b.Action != "" {
			actions++
		}
	}
	if keyed == 0 || actions != keyed {
		t.Errorf("%d bindings run an action, %d kinds declare a key", actions, keyed)
	}
}
