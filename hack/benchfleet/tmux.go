package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// pane is one tmux server (its own socket) running one tool in a single window of fixed size,
// read with capture-pane like an operator's screen.
type pane struct {
	socket string
	path   string // the server's socket file, removed with it
}

func newPane(socket string, width, height int) (*pane, error) {
	p := &pane{socket: socket}
	// The session starts a shell that stays until the tool is respawned into it; remain-on-exit
	// keeps a crashed tool's last screen readable.
	if _, err := p.tmux("-f", "/dev/null", "new-session", "-d", "-s", "bench", "-x", strconv.Itoa(width), "-y", strconv.Itoa(height), "sleep 86400"); err != nil {
		return nil, err
	}
	if _, err := p.tmux("set-option", "-g", "remain-on-exit", "on"); err != nil {
		p.kill()
		return nil, err
	}
	if out, err := p.tmux("display-message", "-p", "#{socket_path}"); err == nil {
		p.path = strings.TrimSpace(out)
	}
	return p, nil
}

func (p *pane) tmux(args ...string) (string, error) {
	cmd := exec.Command("tmux", append([]string{"-L", p.socket}, args...)...)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("tmux %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// start replaces the pane's program with argv (environment env) and returns its PID: the
// command is exec'd, so the pane's PID is the tool's.
func (p *pane) start(argv, env []string) (int, error) {
	var b strings.Builder
	b.WriteString("exec env")
	for _, kv := range env {
		b.WriteString(" " + shellQuote(kv))
	}
	for _, a := range argv {
		b.WriteString(" " + shellQuote(a))
	}
	if _, err := p.tmux("respawn-pane", "-k", "-t", "bench", b.String()); err != nil {
		return 0, err
	}
	out, err := p.tmux("display-message", "-p", "-t", "bench", "#{pane_pid}")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(out))
}

// screen is the visible text of the pane, without colours.
func (p *pane) screen() (string, error) { return p.tmux("capture-pane", "-p", "-t", "bench") }

// dead reports whether the tool in the pane has exited.
func (p *pane) dead() bool {
	out, err := p.tmux("display-message", "-p", "-t", "bench", "#{pane_dead}")
	return err != nil || strings.TrimSpace(out) == "1"
}

func (p *pane) keys(k ...string) error {
	_, err := p.tmux(append([]string{"send-keys", "-t", "bench"}, k...)...)
	return err
}

// literal types s without tmux interpreting key names.
func (p *pane) literal(s string) error {
	_, err := p.tmux("send-keys", "-t", "bench", "-l", "--", s)
	return err
}

// waitFor polls the screen every interval until ok(screen) holds, and returns the time of the
// capture that first satisfied it and that screen.
func (p *pane) waitFor(ctx context.Context, ok func(string) bool, interval, within time.Duration) (time.Time, string, error) {
	deadline := time.Now().Add(within)
	last := ""
	for {
		s, err := p.screen()
		at := time.Now()
		if err == nil {
			last = s
			if ok(s) {
				return at, s, nil
			}
		}
		if p.dead() {
			return at, last, fmt.Errorf("the tool exited; last screen:\n%s", last)
		}
		if at.After(deadline) {
			return at, last, fmt.Errorf("not reached within %s; last screen:\n%s", within, last)
		}
		select {
		case <-ctx.Done():
			return at, last, ctx.Err()
		case <-time.After(interval):
		}
	}
}

// poll captures the screen back to back until ok(screen) holds (one tmux process per capture,
// no liveness check between: the resolution waitFor's timings cannot give), and returns the
// time of the capture that satisfied it.
func (p *pane) poll(ctx context.Context, ok func(string) bool, within time.Duration) (time.Time, string, error) {
	deadline := time.Now().Add(within)
	last := ""
	for ctx.Err() == nil {
		s, err := p.screen()
		at := time.Now()
		if err == nil {
			if last = s; ok(s) {
				return at, s, nil
			}
		}
		if at.After(deadline) {
			if p.dead() {
				return at, last, fmt.Errorf("the tool exited; last screen:\n%s", last)
			}
			return at, last, fmt.Errorf("not reached within %s; last screen:\n%s", within, last)
		}
	}
	return time.Now(), last, ctx.Err()
}

// kill stops the tmux server and with it the tool (SIGHUP).
func (p *pane) kill() {
	_, _ = p.tmux("kill-server")
	if p.path != "" {
		_ = os.Remove(p.path)
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
