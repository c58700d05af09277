package tui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/verify"
	"github.com/rangekeeper/rangekeeper/views/author"
	"github.com/rangekeeper/rangekeeper/views/keymap"
)

// AuthorOptions configure `rangekeeper author` run on its own.
type AuthorOptions struct {
	Path          string      // an existing spec to fix; "" starts a new one
	EngineVersion string      // Docker Engine version the spec runs on (CMP-N06)
	Drafts        *state.DB   // nil: drafts are not kept
	Keys          *keymap.Map // nil: the default keymap
	NoColor       bool
}

// Author is the spec author as a program of its own (the CLI has no business with views).
func Author(o AuthorOptions) tea.Model {
	opts := author.Options{Path: o.Path, Keys: o.Keys, NoColor: o.NoColor}
	opts.Lint.EngineVersion = o.EngineVersion
	if o.Drafts != nil {
		opts.Drafts = o.Drafts
	}
	return author.New(opts)
}

// authorVerify is the author's verify key: the session's verify runner on the buffer, bound to
// the program's context (quitting cancels the run, which then tears down).
func (m *Model) authorVerify() author.VerifyFunc {
	run, ctx := m.opts.Verify, m.ctx
	if run == nil {
		return nil
	}
	return func(specPath, as string, progress func(verify.Step)) verify.Result {
		return run(ctx, verify.Options{Spec: specPath, As: as, Progress: progress})
	}
}
