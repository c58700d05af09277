package author

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rangekeeper/rangekeeper/spec"
	"github.com/rangekeeper/rangekeeper/verify"
	"github.com/rangekeeper/rangekeeper/views/keymap"
)

// VerifyFunc stands a spec up on an engine, proves it holds and tears it down (the workbench
// runs verify as a task of the action layer). specPath is a snapshot of the buffer on disk, as
// the name results and history give it; progress receives each step as it starts and ends, from
// the verify goroutine. It blocks until the run is over.
type VerifyFunc func(specPath, as string, progress func(verify.Step)) verify.Result

type (
	// verifyStepMsg is one step of a running verify, read from the run's channel.
	verifyStepMsg struct {
		step verify.Step
		ch   <-chan tea.Msg
	}
	// verifyDoneMsg ends a run.
	verifyDoneMsg struct{ res verify.Result }
)

// verifyKey starts a verify of the spec being written, or says why it cannot.
func (m *Model) verifyKey() tea.Cmd {
	switch {
	case m.opts.Verify == nil:
		m.status = "verify: not available here (no engine wired into this session)"
		return nil
	case m.verifying:
		m.status = "verify: already running (see " + m.keys.Label(keymap.Tasks) + " tasks)"
		return nil
	case m.format() != spec.FormatCompose:
		m.status = fmt.Sprintf("verify: stands up Compose specs on Docker; this is a %s spec", m.format())
		return nil
	}
	m.verifying, m.steps = true, nil
	name := m.name()
	if m.file == nil && m.opts.Dir != "." {
		name = filepath.Join(m.opts.Dir, name)
	}
	m.status = "verify: starting " + name
	return startVerify(m.opts.Verify, name, m.Content())
}

// startVerify is the command that runs a verify: it writes the buffer beside its file
// (relative build contexts and env files then resolve as they will), runs fn in a goroutine and
// returns its first message; each step message reads the next, so Update never waits and
// starts nothing itself.
func startVerify(fn VerifyFunc, name, content string) tea.Cmd {
	return func() tea.Msg {
		ch := make(chan tea.Msg, 32)
		go func() {
			defer close(ch)
			var res verify.Result
			tmp, err := snapshot(name, content)
			if err != nil {
				res = verify.Result{Spec: name, Exit: verify.ExitBadInput, Outcome: "bad input", Reason: err.Error()}
			} else {
				defer os.Remove(tmp)
				res = fn(tmp, name, func(s verify.Step) { ch <- verifyStepMsg{step: s, ch: ch} })
			}
			ch <- verifyDoneMsg{res: res}
		}()
		return <-ch
	}
}

func readVerify(ch <-chan tea.Msg) tea.Cmd {
	return func() tea.Msg { return <-ch }
}

// snapshot writes content to a hidden file beside name.
func snapshot(name, content string) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(name), ".rangekeeper-verify-*"+filepath.Ext(name))
	if err != nil {
		return "", fmt.Errorf("verify: write a snapshot of the buffer: %w", err)
	}
	_, err = f.WriteString(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("verify: write a snapshot of the buffer: %w", err)
	}
	return f.Name(), nil
}

// verifyMsg follows a running verify; it reports whether msg was one.
func (m *Model) verifyMsg(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case verifyStepMsg:
		if msg.step.Status == "" {
			m.steps = append(m.steps, msg.step)
		} else {
			for i := range m.steps {
				if m.steps[i].Name == msg.step.Name && m.steps[i].Status == "" {
					m.steps[i] = msg.step
				}
			}
		}
		return readVerify(msg.ch), true
	case verifyDoneMsg:
		m.verifying = false
		res := msg.res
		m.verified = &res
		m.status = res.Summary()
		return nil, true
	}
	return nil, false
}

// verifyLine shows the running (or last) verify's steps: done ones with their time.
func (m *Model) verifyLine() string {
	if len(m.steps) == 0 {
		return ""
	}
	parts := make([]string, 0, len(m.steps))
	for _, s := range m.steps {
		switch s.Status {
		case "":
			parts = append(parts, m.th.Warn.Render(s.Name+" …"))
		case "failed":
			parts = append(parts, m.th.Err.Render(s.Name+" ✗"))
		default:
			parts = append(parts, fmt.Sprintf("%s ✓ %s", s.Name, (time.Duration(s.DurationMS)*time.Millisecond).Round(100*time.Millisecond)))
		}
	}
	return "verify: " + strings.Join(parts, " · ")
}

// TakeVerified returns a finished verify result once (the screen shows it in the report view).
func (m *Model) TakeVerified() (verify.Result, bool) {
	if m.verified == nil {
		return verify.Result{}, false
	}
	r := *m.verified
	m.verified = nil
	return r, true
}
