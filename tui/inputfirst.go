package tui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/internal/inputfirst"
)

// InputFirst is the program option that marks the process's input signal on every key, mouse
// press and paste, so that a large load (50,000 pods streaming in) gives way to the operator's
// keys while they type (internal/inputfirst). Every program of the workbench takes it.
func InputFirst() tea.ProgramOption { return tea.WithFilter(markInput(&inputfirst.Operator)) }

// markInput is the filter: it marks s and passes every message on unchanged.
func markInput(s *inputfirst.Signal) func(tea.Model, tea.Msg) tea.Msg {
	return func(_ tea.Model, msg tea.Msg) tea.Msg {
		switch msg.(type) {
		case tea.KeyPressMsg, tea.MouseClickMsg, tea.MouseWheelMsg, tea.PasteMsg:
			s.Mark()
		}
		return msg
	}
}
