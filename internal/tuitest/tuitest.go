// Package tuitest is what the workbench's tests share: key presses by their tea names, and a
// recorder of the frames a program under teatest renders, so tests read the screen without
// racing the program.
package tuitest

import (
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

var special = map[string]tea.Key{
	"enter": {Code: tea.KeyEnter}, "esc": {Code: tea.KeyEscape}, "tab": {Code: tea.KeyTab},
	"space": {Code: tea.KeySpace, Text: " "}, "up": {Code: tea.KeyUp}, "down": {Code: tea.KeyDown},
	"left": {Code: tea.KeyLeft}, "right": {Code: tea.KeyRight}, "home": {Code: tea.KeyHome},
	"end": {Code: tea.KeyEnd}, "backspace": {Code: tea.KeyBackspace},
}

// Key is the press of a key by its tea name: "enter", "esc", "ctrl+u", "G", "é".
func Key(name string) tea.KeyPressMsg {
	if k, ok := special[name]; ok {
		return tea.KeyPressMsg(k)
	}
	if c, ok := strings.CutPrefix(name, "ctrl+"); ok && len(c) == 1 {
		return tea.KeyPressMsg{Code: rune(c[0]), Mod: tea.ModCtrl}
	}
	r := []rune(name)
	return tea.KeyPressMsg{Code: r[0], Text: name}
}

// Recorder wraps a model and keeps its newest frame.
type Recorder struct {
	Model tea.Model

	mu    sync.Mutex
	frame string
	raw   string
}

// Init starts the model.
func (r *Recorder) Init() tea.Cmd { return r.Model.Init() }

// Update forwards to the model (which updates in place) and stays the program's model.
func (r *Recorder) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := r.Model.Update(msg)
	return r, cmd
}

// View renders and records the frame.
func (r *Recorder) View() tea.View {
	v := r.Model.View()
	r.mu.Lock()
	r.frame, r.raw = ansi.Strip(v.Content), v.Content
	r.mu.Unlock()
	return v
}

// Frame is the newest frame without escape sequences.
func (r *Recorder) Frame() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.frame
}

// Raw is the newest frame as rendered, escape sequences included.
func (r *Recorder) Raw() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.raw
}
