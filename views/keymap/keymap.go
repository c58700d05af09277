// Package keymap is rangekeeper's one binding model: every binding's typed name, keys, help
// text, help group, the sandbox action it runs, and why it cannot act right now. Every screen's
// keys, every footer and status hint, the `?` help and the config's remapping read the same Map,
// so a remapped key is right everywhere and nothing can disagree.
package keymap

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/backends"
)

// Name is a binding's stable name, used in code (the constants in names.go) and in the config's
// keys: section. A name that is not a constant does not exist.
type Name string

// Selection is what a binding would act on.
type Selection struct {
	Sandbox string   // the sandbox under the cursor, or the one the screen shows ("" when none)
	Marked  []string // multi-selected sandboxes; bulk bindings act on these when there are any
	Item    string   // the screen's own item under the cursor (a task, a snapshot...)
}

// Targets are the sandboxes a binding acts on: the marked ones for a bulk binding, else the
// selected one.
func (s Selection) Targets(bulk bool) []string {
	if bulk && len(s.Marked) > 0 {
		return s.Marked
	}
	if s.Sandbox == "" {
		return nil
	}
	return []string{s.Sandbox}
}

// Guard says why a binding cannot act on a selection right now ("" when it can). Guards read
// only in-memory state; they run at every frame.
type Guard func(Selection) string

// Binding is one thing an operator can trigger by key.
type Binding struct {
	Name   Name
	Keys   []string        // tea key strings: "s", "ctrl+l", "enter", "space"
	Help   string          // short description
	Group  string          // help section
	Action backends.Action // the sandbox action it runs ("" for none)
	// Dangerous (destroys state: confirmed, absent in read-only mode) and Mutates (changes a
	// sandbox: absent in read-only mode) follow from Action's declaration.
	Dangerous bool
	Mutates   bool
	Bulk      bool // acts on every marked sandbox, not only the selected one
	guard     Guard
}

// Label is the first key as shown to operators.
func (b Binding) Label() string {
	if len(b.Keys) == 0 {
		return ""
	}
	return b.Keys[0]
}

// Matches reports whether msg is one of b's keys.
func (b Binding) Matches(msg tea.KeyPressMsg) bool { return slices.Contains(b.Keys, msg.String()) }

// Disabled says why b cannot act on sel ("" when it can or has no guard).
func (b Binding) Disabled(sel Selection) string {
	if b.guard == nil {
		return ""
	}
	return b.guard(sel)
}

// Map is an ordered set of bindings.
type Map struct {
	list   []Binding
	byName map[Name]int
}

// NewMap builds a map from bindings in order; a name given twice is a programming error.
func NewMap(bs []Binding) *Map {
	m := &Map{byName: map[Name]int{}}
	for _, b := range bs {
		if _, dup := m.byName[b.Name]; dup {
			panic(fmt.Sprintf("keymap: binding %q declared twice", b.Name))
		}
		m.byName[b.Name] = len(m.list)
		m.list = append(m.list, b)
	}
	return m
}

// Get returns the binding called name; ok is false when it does not exist (e.g. a dangerous
// binding in read-only mode, or one the operator's role may not use).
func (m *Map) Get(name Name) (Binding, bool) {
	i, ok := m.byName[name]
	if !ok {
		return Binding{}, false
	}
	return m.list[i], true
}

// Has reports whether the binding exists in this map.
func (m *Map) Has(name Name) bool { _, ok := m.byName[name]; return ok }

// Is reports whether msg triggers the binding called name.
func (m *Map) Is(msg tea.KeyPressMsg, name Name) bool {
	b, ok := m.Get(name)
	return ok && b.Matches(msg)
}

// IsControl is Is for a text input with focus: only keys that type no text (enter, esc, tab,
// arrows, ctrl+…) can trigger a binding there, so "h" or "q" stay letters.
func (m *Map) IsControl(msg tea.KeyPressMsg, name Name) bool {
	return msg.Text == "" && m.Is(msg, name)
}

// Label is the first key of a binding, for hints and prose ("" when it does not exist).
func (m *Map) Label(name Name) string {
	b, _ := m.Get(name)
	return b.Label()
}

// Labels joins the first keys of several bindings: Labels(Down, Up) is "j/k".
func (m *Map) Labels(names ...Name) string {
	var ls []string
	for _, n := range names {
		if l := m.Label(n); l != "" {
			ls = append(ls, l)
		}
	}
	return strings.Join(ls, "/")
}

// All returns every binding in order.
func (m *Map) All() []Binding { return append([]Binding(nil), m.list...) }

// Guard installs why a binding cannot act; the footer, the help and the dispatcher all ask it.
// Guarding a binding the map does not have is a no-op (it was removed, e.g. read-only).
func (m *Map) Guard(name Name, g Guard) {
	if i, ok := m.byName[name]; ok {
		m.list[i].guard = g
	}
}

// Without returns a copy without the bindings drop selects: in read-only mode, or for an
// operator whose role may not take an action, those keys do not exist at all.
func (m *Map) Without(drop func(Binding) bool) *Map {
	var keep []Binding
	for _, b := range m.list {
		if !drop(b) {
			keep = append(keep, b)
		}
	}
	return NewMap(keep)
}

// ReadOnly returns a copy without the bindings that change a sandbox.
func (m *Map) ReadOnly() *Map {
	return m.Without(func(b Binding) bool { return b.Dangerous || b.Mutates })
}

// Remap applies name → "k1,k2" overrides from the config file. Unknown names are errors, so a
// typo never silently leaves an action unbound. Each scope is a set of bindings that can be
// live at once (one screen's and the global ones; the program knows its screens); a key claimed
// twice within a scope is an error.
func (m *Map) Remap(over map[string]string, scopes ...[]Name) (*Map, error) {
	out := NewMap(m.All())
	names := make([]string, 0, len(over))
	for n := range over {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		i, ok := out.byName[Name(name)]
		if !ok {
			return nil, fmt.Errorf("keys: unknown binding %q (the names are listed by `?` in the workbench)", name)
		}
		var ks []string
		for _, k := range strings.Split(over[name], ",") {
			if k = strings.TrimSpace(k); k != "" {
				ks = append(ks, k)
			}
		}
		if len(ks) == 0 {
			return nil, fmt.Errorf("keys: binding %q has no keys", name)
		}
		for _, k := range ks {
			if flowControl[k] {
				return nil, fmt.Errorf("keys: binding %q: %s is the terminal's flow control and never reaches rangekeeper", name, k)
			}
		}
		out.list[i].Keys = ks
	}
	if len(scopes) == 0 {
		return nil, fmt.Errorf("keys: remapping needs the scopes to check for keys bound twice")
	}
	for _, scope := range scopes {
		if err := out.conflicts(scope); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// flowControl keys are eaten by terminals (XON/XOFF) before a program sees them.
var flowControl = map[string]bool{"ctrl+s": true, "ctrl+q": true}

func (m *Map) conflicts(scope []Name) error {
	owner := map[string]Name{}
	for _, n := range scope {
		b, ok := m.Get(n)
		if !ok {
			continue
		}
		for _, k := range b.Keys {
			if prev, dup := owner[k]; dup && prev != n {
				return fmt.Errorf("keys: %q is bound to both %q and %q", k, prev, n)
			}
			owner[k] = n
		}
	}
	return nil
}

// Groups returns bindings by help group, in group order.
func (m *Map) Groups() []GroupedBindings {
	var out []GroupedBindings
	for _, g := range groupOrder {
		var bs []Binding
		for _, b := range m.list {
			if b.Group == g {
				bs = append(bs, b)
			}
		}
		if len(bs) > 0 {
			out = append(out, GroupedBindings{Group: g, Bindings: bs})
		}
	}
	return out
}

// GroupedBindings is one help section.
type GroupedBindings struct {
	Group    string
	Bindings []Binding
}
