// Package keys is rangekeeper's one binding model: every key's name, keys, help text, group,
// dangerous flag and disabled reason. The footer, the `?` help and the config's remapping all read
// the same Map, so they cannot disagree.
package keymap

import (
	"fmt"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// Binding is one action an operator can trigger by key.
type Binding struct {
	Name      string   // stable name used in config remapping, e.g. "snapshot"
	Keys      []string // tea key strings: "s", "ctrl+l", "enter", "space"
	Help      string   // short description
	Group     string   // help section
	Dangerous bool     // destroys state; needs confirmation; absent in read-only mode
	Mutates   bool     // changes a sandbox without destroying it; absent in read-only mode
	Footer    bool     // shown in the footer by default
}

// Label is the first key as shown to operators.
func (b Binding) Label() string {
	if len(b.Keys) == 0 {
		return ""
	}
	return b.Keys[0]
}

// Matches reports whether msg is one of b's keys.
func (b Binding) Matches(msg tea.KeyPressMsg) bool {
	s := msg.String()
	for _, k := range b.Keys {
		if k == s {
			return true
		}
	}
	return false
}

// Map is an ordered set of bindings.
type Map struct {
	list   []Binding
	byName map[string]int
}

// Groups, in help order.
const (
	GroupNav     = "navigate"
	GroupView    = "view"
	GroupSandbox = "sandbox"
	GroupApp     = "app"
)

// Default is the stock keymap. Keys avoid tmux's and screen's prefixes (ctrl+b, ctrl+a) and the
// terminal's flow control (ctrl+s, ctrl+q).
func Default() *Map {
	return NewMap([]Binding{
		{Name: "up", Keys: []string{"k", "up"}, Help: "up", Group: GroupNav},
		{Name: "down", Keys: []string{"j", "down"}, Help: "down", Group: GroupNav},
		{Name: "top", Keys: []string{"g", "home"}, Help: "top", Group: GroupNav},
		{Name: "bottom", Keys: []string{"G", "end"}, Help: "bottom", Group: GroupNav},
		{Name: "pageup", Keys: []string{"pgup", "ctrl+u"}, Help: "page up", Group: GroupNav},
		{Name: "pagedown", Keys: []string{"pgdown", "ctrl+d"}, Help: "page down", Group: GroupNav},
		{Name: "open", Keys: []string{"enter", "l"}, Help: "detail", Group: GroupNav, Footer: true},
		{Name: "back", Keys: []string{"esc", "h"}, Help: "back", Group: GroupNav},
		{Name: "expand", Keys: []string{"e", "right"}, Help: "expand members", Group: GroupView},
		{Name: "filter", Keys: []string{"/"}, Help: "filter", Group: GroupView, Footer: true},
		{Name: "command", Keys: []string{":"}, Help: "command", Group: GroupView, Footer: true},
		{Name: "sort", Keys: []string{"o"}, Help: "sort column", Group: GroupView},
		{Name: "reverse", Keys: []string{"O"}, Help: "reverse sort", Group: GroupView},
		{Name: "group", Keys: []string{"b"}, Help: "group by", Group: GroupView},
		{Name: "select", Keys: []string{"space"}, Help: "select", Group: GroupSandbox},
		{Name: "snapshot", Keys: []string{"s"}, Help: "snapshot", Group: GroupSandbox, Mutates: true, Footer: true},
		{Name: "revert", Keys: []string{"r"}, Help: "revert", Group: GroupSandbox, Dangerous: true, Footer: true},
		{Name: "teardown", Keys: []string{"D"}, Help: "teardown", Group: GroupSandbox, Dangerous: true, Footer: true},
		{Name: "reset", Keys: []string{"R"}, Help: "reset pods", Group: GroupSandbox, Dangerous: true},
		{Name: "probe", Keys: []string{"p"}, Help: "escape probe", Group: GroupSandbox, Mutates: true, Footer: true},
		{Name: "copy", Keys: []string{"c"}, Help: "copy ID", Group: GroupSandbox},
		{Name: "author", Keys: []string{"a"}, Help: "author spec", Group: GroupApp},
		{Name: "journal", Keys: []string{"@"}, Help: "journal", Group: GroupApp},
		{Name: "tasks", Keys: []string{"t"}, Help: "tasks", Group: GroupApp},
		{Name: "cancel", Keys: []string{"x"}, Help: "cancel action", Group: GroupApp},
		{Name: "help", Keys: []string{"?"}, Help: "help", Group: GroupApp, Footer: true},
		{Name: "redraw", Keys: []string{"ctrl+l"}, Help: "redraw", Group: GroupApp},
		{Name: "quit", Keys: []string{"q", "ctrl+c"}, Help: "quit", Group: GroupApp, Footer: true},
	})
}

// NewMap builds a map from bindings in order.
func NewMap(bs []Binding) *Map {
	m := &Map{byName: map[string]int{}}
	for _, b := range bs {
		m.byName[b.Name] = len(m.list)
		m.list = append(m.list, b)
	}
	return m
}

// Get returns the binding called name; ok is false when it does not exist (e.g. a dangerous
// binding in read-only mode).
func (m *Map) Get(name string) (Binding, bool) {
	i, ok := m.byName[name]
	if !ok {
		return Binding{}, false
	}
	return m.list[i], true
}

// Is reports whether msg triggers the binding called name.
func (m *Map) Is(msg tea.KeyPressMsg, name string) bool {
	b, ok := m.Get(name)
	return ok && b.Matches(msg)
}

// All returns every binding in order.
func (m *Map) All() []Binding { return append([]Binding(nil), m.list...) }

// ReadOnly returns a copy without dangerous bindings: in read-only mode they do not exist.
func (m *Map) ReadOnly() *Map {
	var keep []Binding
	for _, b := range m.list {
		if !b.Dangerous && !b.Mutates {
			keep = append(keep, b)
		}
	}
	return NewMap(keep)
}

// Remap applies name → "k1,k2" overrides from the config file. Unknown names and keys claimed by
// two bindings are errors, so a typo never silently leaves an action unbound.
func (m *Map) Remap(over map[string]string) (*Map, error) {
	out := NewMap(m.All())
	names := make([]string, 0, len(over))
	for n := range over {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		i, ok := out.byName[name]
		if !ok {
			return nil, fmt.Errorf("keys: unknown binding %q", name)
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
		out.list[i].Keys = ks
	}
	owner := map[string]string{}
	for _, b := range out.list {
		for _, k := range b.Keys {
			if prev, dup := owner[k]; dup {
				return nil, fmt.Errorf("keys: %q is bound to both %q and %q", k, prev, b.Name)
			}
			owner[k] = b.Name
		}
	}
	return out, nil
}

// Groups returns bindings by help group, in group order.
func (m *Map) Groups() []GroupedBindings {
	order := []string{GroupNav, GroupView, GroupSandbox, GroupApp}
	var out []GroupedBindings
	for _, g := range order {
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
