package app

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/rangekeeper/rangekeeper/inspectlive"
)

// ErrEvalsOff is Evals' answer when the config turns the linkage off.
var ErrEvalsOff = errors.New("inspect linkage is disabled in the config (inspect.disabled)")

// Evals starts, once, the poller of Inspect's live eval data (sample buffers, trace files, logs)
// from the config's inspect section; it runs until Close. The workbench, the CLI and the
// daemon's sessions all read this one.
func (a *App) Evals() (*inspectlive.Watcher, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.evals != nil || a.evalsErr != nil {
		return a.evals, a.evalsErr
	}
	cfg, err := a.Config()
	if err != nil {
		a.evalsErr = err
		return nil, err
	}
	if cfg.Inspect.Disabled {
		a.evalsErr = ErrEvalsOff
		return nil, a.evalsErr
	}
	ic := cfg.Inspect
	data := expandHome(ic.DataDirs)
	if len(data) == 0 && len(ic.ForeignDataDirs) > 0 {
		data = inspectlive.DefaultDataDirs() // naming other hosts' directories adds to this one's
	}
	foreign := expandHome(ic.ForeignDataDirs)
	w := inspectlive.New(inspectlive.Config{DataDirs: append(data, foreign...), ForeignDataDirs: foreign, LogDirs: expandHome(ic.LogDirs)})
	w.Start()
	a.closers = append(a.closers, func() { w.Close() })
	a.evals = w
	return w, nil
}

// expandHome expands a leading ~/ as a shell would, so the config may say ~/logs.
func expandHome(dirs []string) []string {
	home, _ := os.UserHomeDir()
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		if rest, ok := strings.CutPrefix(d, "~/"); ok && home != "" {
			d = filepath.Join(home, rest)
		}
		out = append(out, d)
	}
	return out
}
