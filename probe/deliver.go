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
// CouldNotProbe then says why in one line, and Attempts lists every place tried, so an
// unprobed sandbox is never mistaken for a clean one.
type Result struct {
	SandboxID     string        `json:"sandbox"`
	Member        string        `json:"member,omitempty"`
	Time          time.Time     `json:"time"`
	Location      string        `json:"location,omitempty"` // where the binary ran
	Cleanup       string        `json:"cleanup,omitempty"`  // "removed" or what was left behind
	Attempts      []Attempt     `json:"attempts,omitempty"` // each place tried and its outcome
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

// probeFile is the binary's name inside its private directory.
const probeFile = "rangekeeper-probe"

// RunWith is Run with explicit probe targets and options. Places are tried in order: the
// scratch directories, the root directory, the member's working directory, then every mount a
// shell shows as writable and executable. In each, the binary goes into a private directory made
// through the backend's file API (no shell, no /tmp needed), else is streamed in through sh.
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
	d := &delivery{exec: exec, cp: cp, sid: sandboxID, member: member, bin: bin, sum: hex.EncodeToString(sum[:]), opt: opt, voc: vocabularyOf(sandboxID)}
	if !targets.Empty() {
		var err error
		if d.stdin, err = json.Marshal(targets); err != nil {
			return res, fmt.Errorf("probe %s: encode targets: %w", sandboxID, err)
		}
	}
	for _, base := range d.bases(ctx) {
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("probe %s: %w", sandboxID, err)
		}
		dir := path.Join(base, privateDirPrefix+d.sum[:12]+"-"+randHex(4))
		// Write-ahead: a probe cut short leaves a record naming every directory to remove.
		d.placed = append(d.placed, dir)
		if err := backends.RecordPlan(ctx, Placement{Member: d.member, Paths: d.placed}); err != nil {
			return res, fmt.Errorf("probe %s: %w", sandboxID, err)
		}
		a, p, rep, ranHere := d.try(ctx, base, dir)
		res.Attempts = append(res.Attempts, a)
		if rep == nil && ranHere {
			// The binary executed and failed: another place would not change that.
			res.CouldNotProbe = fmt.Sprintf("could not probe: the probe ran at %s but failed: %s", base, a.Outcome)
			return res, nil
		}
		if rep != nil {
			res.Location, res.Facts, res.Cleanup = p, rep, "removed"
			if a.Cleanup != "" {
				res.Cleanup = a.Cleanup
			}
			return res, nil
		}
	}
	res.CouldNotProbe = d.voc.summary(res.Attempts)
	return res, nil
}

// delivery is one RunWith: what it places, where, and in whose words it reports.
type delivery struct {
	exec   backends.Executor
	cp     backends.Copier
	sid    string
	member string
	bin    []byte
	sum    string
	stdin  []byte
	opt    Options
	voc    vocabulary
	placed []string // private directories planned so far (the write-ahead Placement)
}

// Placement is the probe's write-ahead plan: where it may have left its binary in which member.
type Placement struct {
	Member string   `json:"member"`
	Paths  []string `json:"paths"`
}

// bases lists the places to try, without duplicates.
func (d *delivery) bases(ctx context.Context) []string {
	wd := d.opt.WorkDir
	if wd == "" {
		if w, ok := d.cp.(WorkDirer); ok {
			wd, _ = w.MemberWorkDir(ctx, d.sid, d.member)
		}
	}
	shWD, mounts := d.discover(ctx)
	if wd == "" {
		wd = shWD
	}
	var out []string
	seen := map[string]bool{}
	for _, b := range append(append(append([]string{}, ScratchDirs...), "/", wd), mounts...) {
		if b == "" || !path.IsAbs(b) || seen[path.Clean(b)] {
			continue
		}
		seen[path.Clean(b)] = true
		out = append(out, path.Clean(b))
	}
	return out
}

// discover asks the member's shell (when it has one) for its working directory and the mounts
// it could write and execute in; a member without a shell yields nothing.
func (d *delivery) discover(ctx context.Context) (wd string, mounts []string) {
	out, err := d.exec.Exec(ctx, d.sid, backends.ExecRequest{Member: d.member, Timeout: 10 * time.Second,
		Cmd: []string{"/bin/sh", "-c", `echo "$PWD"; while read -r s m t o r; do [ -d "$m" ] && echo "$m $o"; done < /proc/self/mounts`}})
	if err != nil || out.ExitCode != 0 {
		return "", nil
	}
	lines := strings.Split(strings.TrimSpace(string(out.Stdout)), "\n")
	if len(lines) == 0 {
		return "", nil
	}
	wd = strings.TrimSpace(lines[0])
	for _, l := range lines[1:] {
		m, opts, _ := strings.Cut(l, " ")
		o := "," + opts + ","
		if strings.Contains(o, ",ro,") || strings.Contains(o, ",noexec,") || m == "/" {
			continue
		}
		if strings.HasPrefix(m, "/proc") || strings.HasPrefix(m, "/sys") || m == "/dev" || strings.HasPrefix(m, "/dev/") && m != "/dev/shm" {
			continue
		}
		mounts = append(mounts, strings.ReplaceAll(m, `\040`, " "))
	}
	return wd, mounts
}

// try places the binary in dir, a new private directory under base, and runs it there; ranHere reports
// that it executed (whatever its outcome), so the place was not the problem.
func (d *delivery) try(ctx context.Context, base, dir string) (a Attempt, p string, rep *facts.Report, ranHere bool) {
	a = Attempt{Place: base}
	p = path.Join(dir, probeFile)
	how, err := d.place(ctx, dir, p)
	if err != nil {
		a.Outcome = "cannot place binary: " + oneLine(err.Error())
		return a, p, nil, false
	}
	rep, why, code, missing := d.run(ctx, p)
	shadowed := false // a copy the engine wrote beneath a mount the member sees over it
	if rep == nil && how != placedByShell && missing {
		// The file API wrote beneath a tmpfs the member sees over it: the copy "succeeded" but
		// the member cannot see the file. Stream it in instead.
		shadowed = true
		if err := placeViaShell(ctx, d.exec, d.sid, d.member, dir, p, d.bin); err == nil {
			how = placedByShell
			rep, why, code, _ = d.run(ctx, p)
		}
	}
	ranHere = code != exitNotFound && code != exitCannotExec && code != exitSelfCheck
	a.How = string(how)
	c := "removed"
	if rep == nil || !rep.SelfRemoved {
		c = cleanup(ctx, d.exec, d.cp, d.sid, d.member, p, dir)
	}
	if shadowed {
		// The file API cannot delete; truncate the hidden copy and say where it is.
		_ = d.cp.CopyTo(ctx, d.sid, d.member, p, []byte{}, 0o600)
		c += "; " + fmt.Sprintf(d.voc.shadowed, p)
	}
	if c != "removed" {
		a.Cleanup = c
	}
	if rep == nil {
		a.Outcome = why
		return a, p, nil, ranHere
	}
	a.Outcome, a.OK = "ran", true
	return a, p, rep, true
}

// place puts the binary at p inside the new directory dir: through the file API with the
// directory (PrivateDirCopier), else the directory through a shell and the file through the
// file API, else both through a shell.
func (d *delivery) place(ctx context.Context, dir, p string) (placement, error) {
	var cerr error
	if pc, ok := d.cp.(PrivateDirCopier); ok {
		if cerr = pc.CopyToNewDir(ctx, d.sid, d.member, dir, probeFile, d.bin, 0o755); cerr == nil {
			return placedInDir, nil
		}
	} else if cerr = d.mkdir(ctx, dir); cerr == nil {
		if cerr = d.cp.CopyTo(ctx, d.sid, d.member, p, d.bin, 0o755); cerr == nil {
			return placedByCopy, nil
		}
	}
	if err := placeViaShell(ctx, d.exec, d.sid, d.member, dir, p, d.bin); err != nil {
		return "", fmt.Errorf("file API: %v; via sh: %v", oneLine(cerr.Error()), err)
	}
	return placedByShell, nil
}

func (d *delivery) mkdir(ctx context.Context, dir string) error {
	out, err := d.exec.Exec(ctx, d.sid, backends.ExecRequest{Member: d.member, Timeout: 10 * time.Second, Cmd: []string{"mkdir", "-m", "0711", dir}})
	if err != nil {
		return err
	}
	if out.ExitCode != 0 {
		return fmt.Errorf("mkdir exit %d: %s", out.ExitCode, oneLine(string(out.Stderr)))
	}
	return nil
}

// run executes the placed binary and decodes its report; missing reports that the member could
// not find the file at all.
func (d *delivery) run(ctx context.Context, p string) (rep *facts.Report, why string, code int, missing bool) {
	args := []string{p, "--self-check", d.sum, "--remove-self", "--deadline", d.opt.Deadline.String()}
	req := backends.ExecRequest{Member: d.member, Cmd: args, Timeout: d.opt.RunTimeout}
	if d.stdin != nil {
		req.Cmd = append(req.Cmd, "--targets", "-")
		req.Stdin = bytes.NewReader(d.stdin)
	}
	backends.Progress(ctx, "running %s", p)
	out, err := d.exec.Exec(ctx, d.sid, req)
	backends.Progress(ctx, "ran %s", p)
	rep, why = interpret(out, err, d.voc)
	code = out.ExitCode
	missing = rep == nil && (code == exitNotFound || code == exitCannotExec) && strings.Contains(string(out.Stderr)+string(out.Stdout), "no such file")
	return rep, why, code, missing
}

// privateDirPrefix names the directory made for the binary alone (the probe removes it too).
const privateDirPrefix = ".rangekeeper-probe-"

type placement string

const (
	placedInDir   placement = "private directory through the file API"
	placedByCopy  placement = "copied"
	placedByShell placement = "streamed through sh"
)

// placeViaShell makes the private directory (when dir is set) and streams the binary into p.
func placeViaShell(ctx context.Context, exec backends.Executor, sandboxID, member, dir, p string, bin []byte) error {
	out, err := exec.Exec(ctx, sandboxID, backends.ExecRequest{Member: member, Stdin: bytes.NewReader(bin), Timeout: 30 * time.Second,
		Cmd: []string{"/bin/sh", "-c", `{ [ -z "$2" ] || [ -d "$2" ] || mkdir -m 0711 "$2"; } && cat > "$1" && chmod 0755 "$1"`, "sh", p, dir}})
	if err != nil {
		return err
	}
	if out.ExitCode != 0 {
		return fmt.Errorf("exit %d: %s", out.ExitCode, oneLine(string(out.Stderr)))
	}
	return nil
}

// interpret decodes a probe run, or says why it did not yield a report.
func interpret(out backends.ExecResult, err error, voc vocabulary) (*facts.Report, string) {
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
		return nil, fmt.Sprintf("cannot execute (exit %d, %s): %s", out.ExitCode, voc.noExec, oneLine(msg))
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

// cleanup confirms the probe removed itself and its directory; if not (e.g. a non-root user
// in a root-owned directory), it removes them as root.
func cleanup(ctx context.Context, exec backends.Executor, cp backends.Copier, sandboxID, member, p, dir string) string {
	done := func() bool {
		return gone(ctx, exec, cp, sandboxID, member, p) && (dir == "" || gone(ctx, exec, cp, sandboxID, member, dir))
	}
	if done() {
		return "removed"
	}
	for _, cmd := range [][]string{{"rm", "-f", p}, {"rmdir", dir}, {p, "--remove-self", "--version"}} {
		if cmd[0] == "rmdir" && dir == "" {
			continue
		}
		out, err := exec.Exec(ctx, sandboxID, backends.ExecRequest{Member: member, User: "0", Cmd: cmd, Timeout: 10 * time.Second})
		if err == nil && out.ExitCode == 0 && done() {
			return "removed"
		}
	}
	return "left behind: " + p
}

// gone checks through exec (the member's own view, which sees tmpfs) and falls back to the
// file API's view (a directory "exists" there too).
func gone(ctx context.Context, exec backends.Executor, cp backends.Copier, sandboxID, member, p string) bool {
	out, err := exec.Exec(ctx, sandboxID, backends.ExecRequest{Member: member, Cmd: []string{"test", "-e", p}, Timeout: 10 * time.Second})
	if err == nil && (out.ExitCode == 0 || out.ExitCode == 1) {
		return out.ExitCode == 1
	}
	// No `test` in the member (FROM scratch): ask the file API.
	_, cerr := cp.CopyFrom(ctx, sandboxID, member, p)
	return cerr != nil && !strings.Contains(cerr.Error(), "is a directory")
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
