// Package author is the spec-authoring screen: a guided flow that writes a Compose file,
// agent-env Helm values or a Proxmox sandbox config, with hardening warnings beside the field
// that causes them and the fix one key away. Linting, draft saves and file writes all run in
// commands; Update never does I/O.
package author

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/spec"
	"github.com/rangekeeper/rangekeeper/state"
	"github.com/rangekeeper/rangekeeper/verify"
	"github.com/rangekeeper/rangekeeper/views/keymap"
	"github.com/rangekeeper/rangekeeper/views/lineedit"
	"github.com/rangekeeper/rangekeeper/views/theme"
)

// DraftStore keeps drafts between sessions; *state.DB satisfies it.
type DraftStore interface {
	PutDraft(state.Draft) error
}

// Options configure the screen.
type Options struct {
	Drafts    DraftStore // nil: drafts are not kept
	DraftName string     // key of the draft in the store; default "author"
	Path      string     // existing spec to open; "" starts a new one from hardened defaults
	Dir       string     // directory new files are proposed in; default "."
	Width     int
	Height    int
	NoColor   bool
	Keys      *keymap.Map   // nil: keymap.Default()
	Embedded  bool          // true: on the workbench's stack (Screen), where quit closes the screen
	Debounce  time.Duration // delay between the last edit and the lint; default 150ms
	Lint      spec.Options  // lint context (engine version, roles)
	// Observe, if set, receives every lint result from the lint command's goroutine (never
	// from Update); tests and the fleet view's badge use it.
	Observe func(spec.Result, error)
	// Verify, when set, is what the verify key runs on the spec being written; nil: the key says
	// verify is not available here.
	Verify VerifyFunc
}

type mode int

const (
	modeForm mode = iota
	modeFile
	modeSavePrompt
	modeConfirmOverwrite
)

// Model is the author screen.
type Model struct {
	opts   Options
	th     theme.Theme
	keys   *keymap.Map
	mode   mode
	prev   mode
	draft  Draft
	cursor int
	edit   bool
	buf    lineedit.Model // the field being edited, or the save path
	closed bool           // quit was asked for (an embedded screen then leaves the stack)

	file     *openFile // modeFile: the existing spec being fixed
	seq      int       // version of the content; lint results for older versions are dropped
	result   spec.Result
	lintErr  error
	linted   bool
	savePath string
	status   string

	verifying bool           // a verify run is in progress
	steps     []verify.Step  // its steps so far (or the last run's)
	verified  *verify.Result // a finished run not yet shown in the report view
	width     int
	height    int
}

// New builds the author screen.
func New(opts Options) tea.Model { return newModel(opts) }

func newModel(opts Options) *Model {
	if opts.DraftName == "" {
		opts.DraftName = "author"
	}
	if opts.Debounce == 0 {
		opts.Debounce = 150 * time.Millisecond
	}
	if opts.Dir == "" {
		opts.Dir = "."
	}
	if opts.Keys == nil {
		opts.Keys = keymap.Default()
	}
	m := &Model{opts: opts, keys: opts.Keys, draft: NewDraft(), width: opts.Width, height: opts.Height, th: theme.Pick("auto", true, opts.NoColor)}
	if opts.Path != "" {
		m.mode = modeFile
		m.status = "opening " + opts.Path
	}
	return m
}

// Init lints the starting draft, or loads the file to open.
func (m *Model) Init() tea.Cmd {
	if m.opts.Path != "" {
		return loadFile(m.opts.Path)
	}
	return m.lintNow()
}

// Result is the latest lint result (for the fleet view and tests).
func (m *Model) Result() spec.Result { return m.result }

// Content is the spec text the screen would save.
func (m *Model) Content() string {
	if m.file != nil {
		return string(m.file.data)
	}
	return m.draft.Render()
}

func (m *Model) name() string {
	if m.file != nil {
		return m.file.path
	}
	return m.draft.DefaultFile()
}

func (m *Model) format() spec.Format {
	if m.file != nil {
		return m.file.format
	}
	return m.draft.Format()
}

// visible lists the fields that apply to the chosen backend.
func (m *Model) visible() []field {
	var out []field
	for _, f := range fields {
		if f.applies(m.draft["backend"]) {
			out = append(out, f)
		}
	}
	return out
}

// changed bumps the content version and debounces the lint.
func (m *Model) changed() tea.Cmd {
	m.seq++
	seq := m.seq
	return tea.Tick(m.opts.Debounce, func(time.Time) tea.Msg { return lintTickMsg{seq} })
}

func (m *Model) lintNow() tea.Cmd {
	return lintCmd(m.seq, m.name(), m.Content(), m.format(), m.opts)
}

// Update handles keys and command results.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if cmd, ok := m.verifyMsg(msg); ok {
		return m, cmd
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case lintTickMsg:
		if msg.seq == m.seq {
			return m, m.lintNow()
		}
	case lintDoneMsg:
		if msg.seq == m.seq {
			m.result, m.lintErr, m.linted = msg.res, msg.err, true
			if msg.draftErr != nil {
				m.status = "draft not saved: " + msg.draftErr.Error()
			}
		}
	case fileLoadedMsg:
		if msg.err != nil {
			m.status = msg.err.Error()
			m.mode = modeForm
			return m, m.lintNow()
		}
		m.file = msg.file
		m.status = "opened " + msg.file.path
		return m, m.lintNow()
	case fileExistsMsg:
		m.mode = modeConfirmOverwrite
		m.status = msg.path + " exists: overwrite? (" + m.keys.Labels(keymap.Yes, keymap.No) + ")"
	case fileWrittenMsg:
		m.mode = m.prev
		if msg.err != nil {
			m.status = "not saved: " + msg.err.Error()
		} else {
			m.status = "saved " + msg.path
			if m.file != nil {
				m.file.path = msg.path
			}
		}
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.PasteMsg:
		if m.Typing() {
			m.buf.Update(msg)
		}
	}
	return m, nil
}

func (m *Model) quit() tea.Cmd {
	m.closed = true
	if m.opts.Embedded {
		return nil
	}
	return tea.Quit
}

// Typing reports that a field or the save path is being edited: letters are text.
func (m *Model) Typing() bool { return m.edit || m.mode == modeSavePrompt }

// Bindings are the keys the author answers.
func (m *Model) Bindings() []keymap.Name { return bindings }

var bindings = []keymap.Name{keymap.Up, keymap.Down, keymap.Focus, keymap.Select, keymap.Open, keymap.Fix,
	keymap.NextWarning, keymap.Save, keymap.Quit, keymap.Back, keymap.Yes, keymap.Verify}

func (m *Model) key(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	km := m.keys
	is := km.Is
	if m.Typing() {
		is = km.IsControl
	}
	if k.String() == "ctrl+c" && km.Is(k, keymap.Quit) {
		return m, m.quit()
	}
	switch m.mode {
	case modeSavePrompt:
		switch {
		case is(k, keymap.Open):
			m.savePath = strings.TrimSpace(m.buf.Value())
			if m.savePath == "" {
				return m, nil
			}
			return m, writeFile(m.savePath, m.Content(), false)
		case is(k, keymap.Back):
			m.mode = m.prev
			m.status = "save cancelled"
		default:
			m.buf.Update(k)
		}
		return m, nil
	case modeConfirmOverwrite:
		switch {
		case is(k, keymap.Yes):
			return m, writeFile(m.savePath, m.Content(), true)
		default: // anything but yes keeps the file
			m.mode = m.prev
			m.status = "not overwritten"
		}
		return m, nil
	}
	if m.edit {
		switch {
		case is(k, keymap.Open):
			f := m.visible()[m.cursor]
			m.draft[f.key] = strings.TrimSpace(m.buf.Value())
			m.edit = false
			return m, m.changed()
		case is(k, keymap.Back):
			m.edit = false
		default:
			m.buf.Update(k)
		}
		return m, nil
	}
	switch {
	case is(k, keymap.Quit), is(k, keymap.Back):
		return m, m.quit()
	case is(k, keymap.Save):
		m.prev = m.mode
		m.mode = modeSavePrompt
		path := m.name()
		if m.file == nil && m.opts.Dir != "." {
			path = strings.TrimSuffix(m.opts.Dir, "/") + "/" + m.draft.DefaultFile()
		}
		m.buf = lineedit.New(path)
		m.status = fmt.Sprintf("save as (%s to write, %s to cancel)", km.Label(keymap.Open), km.Label(keymap.Back))
		return m, nil
	case is(k, keymap.Fix):
		return m, m.applyFix()
	case is(k, keymap.Verify):
		return m, m.verifyKey()
	}
	if m.mode == modeFile {
		switch {
		case is(k, keymap.Up):
			m.cursor = max(m.cursor-1, 0)
		case is(k, keymap.Down):
			m.cursor = min(m.cursor+1, max(len(m.result.Findings)-1, 0))
		}
		return m, nil
	}
	vis := m.visible()
	switch {
	case is(k, keymap.Up):
		m.cursor = max(m.cursor-1, 0)
	case is(k, keymap.Down), is(k, keymap.Focus):
		m.cursor = min(m.cursor+1, len(vis)-1)
	case is(k, keymap.NextWarning):
		m.cursor = m.nextWarning()
	case is(k, keymap.Select), is(k, keymap.Open):
		f := vis[m.cursor]
		switch f.kind {
		case kindBool:
			if m.draft.on(f.key) {
				m.draft[f.key] = "false"
			} else {
				m.draft[f.key] = "true"
			}
			return m, m.changed()
		case kindChoice:
			m.draft[f.key] = next(f.choices, m.draft[f.key])
			if f.key == "backend" {
				m.cursor = 0
			}
			return m, m.changed()
		case kindText:
			m.edit = true
			m.buf = lineedit.New(m.draft[f.key])
		}
	}
	return m, nil
}

// applyFix applies the one-key fix of the warning beside the focused field (or, in file mode,
// of the focused finding), falling back to the first fixable warning.
func (m *Model) applyFix() tea.Cmd {
	if m.mode == modeFile {
		if len(m.result.Findings) == 0 || m.file == nil {
			return nil
		}
		f := m.result.Findings[min(m.cursor, len(m.result.Findings)-1)]
		data, err := fixFile(m.file, f)
		if err != nil {
			m.status = err.Error()
			return nil
		}
		m.file.data = data
		m.status = "fixed " + f.RuleID + " (comments and layout kept)"
		return m.changed()
	}
	focused := m.visible()[m.cursor].key
	var pick *spec.Finding
	for i, f := range m.result.Findings {
		if !canFix(f) {
			continue
		}
		if fieldOf(f) == focused {
			pick = &m.result.Findings[i]
			break
		}
		if pick == nil {
			pick = &m.result.Findings[i]
		}
	}
	if pick == nil {
		m.status = "no warning with a one-key fix"
		return nil
	}
	fixes[pick.RuleID].apply(m.draft)
	m.status = "fixed " + pick.RuleID + ": " + pick.Fix
	for i, f := range m.visible() {
		if f.key == fieldOf(*pick) {
			m.cursor = i
		}
	}
	return m.changed()
}

func (m *Model) nextWarning() int {
	vis := m.visible()
	for step := 1; step <= len(vis); step++ {
		i := (m.cursor + step) % len(vis)
		for _, f := range m.result.Findings {
			if fieldOf(f) == vis[i].key {
				return i
			}
		}
	}
	return m.cursor
}

func next(choices []string, cur string) string {
	for i, c := range choices {
		if c == cur {
			return choices[(i+1)%len(choices)]
		}
	}
	return choices[0]
}
