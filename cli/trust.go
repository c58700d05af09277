package cli

import (
	"path/filepath"

	"github.com/rangekeeper/rangekeeper/backends/kubernetes"
	"github.com/rangekeeper/rangekeeper/internal/staticbin"
	"github.com/rangekeeper/rangekeeper/internal/strictmodes"
	"github.com/rangekeeper/rangekeeper/probe"
)

// trustedPath is a file or directory whose content grants power in the daemon.
type trustedPath struct {
	what    string // as the operator knows it
	path    string
	private bool // a key: not readable by others either
}

// servePaths are what `rangekeeper serve` trusts: the operators file (keys to roles), the
// config file (it names hook commands the daemon runs), the state directory (the journal,
// the locks, and the socket, which runs commands for whoever reaches it) and the SSH host key.
//
// And, when found, the helper binaries: the Helm helper the daemon runs for a Kubernetes
// teardown, and the probe it copies into sandboxes (a replaced probe could report a sandbox as
// holding). They are looked for beside the executable and in bin/ of the working directory, so
// a daemon started in a directory others can write would otherwise run their program.
func servePaths(f *factory, o *serveOptions) []trustedPath {
	stateDir := filepath.Dir(f.statePath())
	ps := []trustedPath{
		{what: "operators file", path: o.Operators},
		{what: "config file", path: configPath(f)},
		{what: "state directory", path: stateDir},
		{what: "socket directory", path: filepath.Dir(socketPath(f.statePath()))},
		{what: "ssh host key", path: hostKeyPath(stateDir), private: true},
	}
	if p, err := staticbin.Locate(kubernetes.HelperName, kubernetes.HelperEnv, "Helm helper", 1<<30); err == nil {
		ps = append(ps, trustedPath{what: "Helm helper", path: p})
	}
	if p, err := probe.Locate(); err == nil {
		ps = append(ps, trustedPath{what: "probe binary", path: p})
	}
	return ps
}

func hostKeyPath(stateDir string) string { return filepath.Join(stateDir, "ssh_host_ed25519_key") }

// checkTrusted refuses the first path that others could write or replace (StrictModes).
func checkTrusted(ps []trustedPath) error {
	for _, p := range ps {
		check := strictmodes.Check
		if p.private {
			check = strictmodes.CheckPrivate
		}
		if err := check(p.path); err != nil {
			return &trustError{what: p.what, err: err}
		}
	}
	return nil
}

// trustError says which of the daemon's files failed, then the check's own message (the path,
// its owner and mode, and the fix).
type trustError struct {
	what string
	err  error
}

func (e *trustError) Error() string { return e.what + " refused: " + e.err.Error() }
func (e *trustError) Unwrap() error { return e.err }
