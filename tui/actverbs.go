package tui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/views/cmdline"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/screen"
)

// Every action kind with a key is also a `:` verb (`:quarantine [sandbox]`), taking the same
// flow as its key. The verb exists in every session whatever the role: whether the operator may
// take the action is the action layer's decision, which it journals, not the footer's.
func init() {
	taken := map[string]bool{}
	for _, e := range registry {
		for _, v := range e.verbs {
			taken[v] = true
		}
	}
	for _, k := range backends.Kinds() {
		if k.Key == "" || k.Verb == "" || taken[k.Verb] {
			continue
		}
		registry = append(registry, entry{verbs: cmdline.Verb{k.Verb}, run: actionVerb(k.Verb, keymap.ActionName(k.Kind))})
	}
}

// actionVerb runs the flow of binding name on the sandbox the argument names, else the selected one.
func actionVerb(verb string, name keymap.Name) func(m *Model, c *screen.Context, arg string) tea.Cmd {
	return func(m *Model, c *screen.Context, arg string) tea.Cmd {
		id, _, ok := m.triageTarget(c, verb, arg)
		if !ok {
			return nil
		}
		run := flows[name]
		if run == nil {
			c.SetStatus(verb + ": no flow")
			return nil
		}
		return run(m, c, []string{id})
	}
}
