package probe

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/config"
	"github.com/rangekeeper/rangekeeper/probe/facts"
)

// ScratchDirs are tried in order for the probe binary; the first writable, executable one wins.
var ScratchDirs = []string{"/tmp", "/var/tmp", "/dev/shm"}

// Exit codes of rangekeeper-probe (cmd/rangekeeper-probe).
const (
	exitSelfCheck = 3
	// A shell's / runtime's "found but cannot execute" and "not found".
	exitCannotExec = 126
	exitNotFound   = 127
)

// Options tune a delivery.
type Options struct {
	WorkDir    string        // extra candidate after ScratchDirs (the member's working directory)
	RunTimeout time.Duration // exec timeout for the probe run (default 30s)
	Deadline   time.Duration // the probe's own whole-run deadline (default 10s)
}

// Result is one probe run of one member. Facts is nil when the sandbox could not be probed;
// CouldNotProbe then says why, so an unprobed sandbox is never mistaken for a clean one.
type Result struct {
	SandboxID     string        `json:"sandbox"`
	Member        string        `json:"member,omitempty"`
	Time          time.Time     `json:"time"`
	Location      string        `json:"location,omitempty"` // where the binary ran
	Cleanup       string        `json:"cleanup,omitempty"`  // "removed" or what was left behind
	Attempts      []string      `json:"attempts,omitempty"` // each location tried and its outcome
	CouldNotProbe string        `json:"could_not_probe,omitempty"`
	Facts         *facts.Report `json:"facts,omitempty"`
}

// TargetsFrom converts the operator config's probe section into the probe's JSON input.
func TargetsFrom(t config.ProbeTargets) facts.Targets {
	return facts.Targets{Egress: t.Egress, DNS: t.DNS, Scorer: t.Scorer, Metadata: t.Metadata, TimeoutMS: t.Timeout.Milliseconds()}
}

// Run copies bin into the member, verifies it by SHA-256 (the probe's --self-check), runs it,
// collects its JSON report and removes it. The error is for failures of the call itself (nil
// capabilities, cancelled context); a sandbox that cannot be probed gives a Result with
// CouldNotProbe set and a nil error.
func Run(ctx context.Context, exec backends.Executor, cp backends.Copier, sandboxID, member string, bin []byte, targets config.ProbeTargets) (Result, error) {
	return RunWith(ctx, exec, cp, sandboxID, member, bin, TargetsFrom(targets), Options{})
}

// RunWith is Run with explicit probe targets and options.
func RunWith(ctx context.Context, exec backends.Executor, cp backends.Copier, sandboxID, member string, bin []byte, targets facts.Targets, opt Options) (Result, error) {
	res := Result{SandboxID: sandboxID, Member: member, Time: time.Now().UTC()}
	if exec == nil || cp == nil {
		return res, fmt.Errorf("probe %s: backend lacks exec or copy: %w", sandboxID, errors.ErrUnsupported)
	}
	if len(bin) == 0 {
		return res, fmt.Errorf("probe %s: empty probe binary", sandboxID)
	}
	if opt.RunTimeout == 0 {
		opt.RunTimeout = 30 * time.Second
	}
	if opt.Deadline == 0 {
		opt.Deadline = 10 * time.Second
	}
	sum := sha256.Sum256(bin)
	sumHex := hex.EncodeToString(sum[:])
	var stdin []byte
	if !targets.Empty() {
		var err error
		if stdin, err = json.Marshal(targets); err != nil {
			return res, fmt.Errorf("probe %s: encode targets: %w", sandboxID, err)
		}
	}
	name := ".rangekeeper-probe-" + sumHex[:12] + "-" + randHex(4)
	dirs := append([]string{}, ScratchDirs...)
	if opt.WorkDir != "" && path.IsAbs(opt.WorkDir) {
		dirs = append(dirs, opt.WorkDir)
	}
	var placed []string
	for _, dir := range dirs {
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("probe %s: %w", sandboxID, err)
		}
		p := path.Join(dir, name)
		// Write-ahead: a probe cut short leaves a record naming what to remove.
		placed = append(placed, p)
		if err := backends.RecordPlan(ctx, Placement{Member: member, Paths: placed}); err != nil {
			return res, fmt.Errorf("probe %s: %w", sandboxID, err)
		}
		how, err := place(ctx, exec, cp, sandboxID, member, p, bin)
		shadowed := false // a copy the engine wrote beneath a tmpfs, invisible to the member
		if err != nil {
			res.Attempts = append(res.Attempts, dir+": cannot place binary: "+oneLine(err.Error()))
			continue
		}
		args := []string{p, "--self-check", sumHex, "--remove-self", "--deadline", opt.Deadline.String()}
		if stdin != nil {
			args = append(args, "--targets", "-")
		}
		run := func() (*facts.Report, string, int) {
			req := backends.ExecRequest{Member: member, Cmd: args, Timeout: opt.RunTimeout}
			if stdin != nil {
				req.Stdin = bytes.NewReader(stdin)
			}
			backends.Progress(ctx, "running %s", p)
			out, err := exec.Exec(ctx, sandboxID, req)
			backends.Progress(ctx, "ran %s", p)
			rep, why := interpret(out, err)
			return rep, why, out.ExitCode
		}
		rep, why, code := run()
		if rep == nil && how == placedByCopy && (code == exitNotFound || code == exitCannotExec && strings.Contains(why, "no such file")) {
			// The engine's archive API writes beneath a tmpfs the member sees over it: the
			// copy "succeeded" but the member cannot see the file. Stream it in instead.
			shadowed = true
			if err := placeViaShell(ctx, exec, sandboxID, member, p, bin); err == nil {
				how = placedByShell
				rep, why, _ = run()
			}
		}
		tidy := func() string {
			c := "removed"
			if rep == nil || !rep.SelfRemoved {
				c = cleanup(ctx, exec, cp, sandboxID, member, p)
			}
			if shadowed {
				// The archive API cannot delete; truncate the hidden copy and say it is there.
				_ = cp.CopyTo(ctx, sandboxID, member, p, []byte{}, 0o600)
				c += "; an emptied file remains beneath the tmpfs at " + p + " in the container layer"
			}
			return c
		}
		if rep == nil {
			res.Attempts = append(res.Attempts, dir+": "+why)
			if c := tidy(); c != "removed" {
				res.Attempts = append(res.Attempts, dir+": cleanup: "+c)
			}
			continue
		}
		res.Location, res.Facts = p, rep
		res.Attempts = append(res.Attempts, dir+": ran ("+string(how)+")")
		res.Cleanup = tidy()
		return res, nil
	}
	res.CouldNotProbe = "could not probe: no writable location where the probe could run (" + strings.Join(res.Attempts, "; ") + ")"
	return res, nil
}

// Placement is the probe's write-ahead plan: where it may have left its binary in which member.
type Placement struct {
	Member string   `json:"member"`
	Paths  []string `json:"paths"`
}

type placement string

const (
	placedByCopy  placement = "copied"
	placedByShell placement = "streamed through sh"
)

// place copies the binary with the backend's Copier, or, where that fails (e.g. a read-only
// root under a tmpfs), streams it through a shell if the member has one.
func place(ctx context.Context, exec backends.Executor, cp backends.Copier, sandboxID, member, p string, bin []byte) (placement, error) {
	cerr := cp.CopyTo(ctx, sandboxID, member, p, bin, 0o755)
	if cerr == nil {
		return placedByCopy, nil
	}
	if err := placeViaShell(ctx, exec, sandboxID, member, p, bin); err != nil {
		return "", fmt.Errorf("copy: %v; via shell: %v", cerr, err)
	}
	return placedByShell, nil
}

func placeViaShell(ctx context.Context, exec backends.Executor, sandboxID, member, p string, bin []byte) error {
	out, err := exec.Exec(ctx, sandboxID, backends.ExecRequest{Member: member, Stdin: bytes.NewReader(bin), Timeout: 30 * time.Second,
		Cmd: []string{"/bin/sh", "-c", `cat > "$1" && chmod 0755 "$1"`, "sh", p}})
	if err != nil {
		return err
	}
	if out.ExitCode != 0 {
		return fmt.Errorf("exit %d: %s", out.ExitCode, oneLine(string(out.Stderr)))
	}
	return nil
}

// interpret decodes a probe run, or says why it did not yield a report.
func interpret(out backends.ExecResult, err error) (*facts.Report, string) {
	msg := string(out.Stderr)
	if strings.TrimSpace(msg) == "" && out.ExitCode != 0 {
		msg = string(out.Stdout) // runtimes report exec failures on stdout
	}
	switch {
	case err != nil:
		return nil, "cannot run: " + oneLine(err.Error())
	case out.TimedOut:
		return nil, "probe timed out"
	case out.ExitCode == exitSelfCheck:
		return nil, "self-check failed (copied binary differs): " + oneLine(msg)
	case out.ExitCode == exitCannotExec || out.ExitCode == exitNotFound:
		return nil, fmt.Sprintf("cannot execute (exit %d, noexec mount?): %s", out.ExitCode, oneLine(msg))
	case out.ExitCode != 0:
		return nil, fmt.Sprintf("probe exited %d: %s", out.ExitCode, oneLine(msg))
	}
	var rep facts.Report
	if err := json.Unmarshal(out.Stdout, &rep); err != nil {
		return nil, "unreadable report: " + oneLine(err.Error())
	}
	if rep.Version != facts.Version {
		return nil, fmt.Sprintf("report version %q, want %q", rep.Version, facts.Version)
	}
	return &rep, ""
}

// cleanup confirms the probe removed itself; if not (e.g. a non-root user in sticky /tmp with a
// root-owned copy), it removes the file as root.
func cleanup(ctx context.Context, exec backends.Executor, cp backends.Copier, sandboxID, member, p string) string {
	if gone(ctx, exec, cp, sandboxID, member, p) {
		return "removed"
	}
	for _, cmd := range [][]string{{"rm", "-f", p}, {p, "--remove-self", "--version"}} {
		out, err := exec.Exec(ctx, sandboxID, backends.ExecRequest{Member: member, User: "0", Cmd: cmd, Timeout: 10 * time.Second})
		if err == nil && out.ExitCode == 0 && gone(ctx, exec, cp, sandboxID, member, p) {
			return "removed"
		}
	}
	return "left behind: " + p
}

// gone checks through exec (the member's own view, which sees tmpfs) and falls back to the
// copier's view.
func gone(ctx context.Context, exec backends.Executor, cp backends.Copier, sandboxID, member, p string) bool {
	out, err := exec.Exec(ctx, sandboxID, backends.ExecRequest{Member: member, Cmd: []string{"test", "-e", p}, Timeout: 10 * time.Second})
	if err == nil && (out.ExitCode == 0 || out.ExitCode == 1) {
		return out.ExitCode == 1
	}
	// No `test` in the member (FROM scratch): ask the copier.
	_, cerr := cp.CopyFrom(ctx, sandboxID, member, p)
	return cerr != nil
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
