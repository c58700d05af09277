package kubernetes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/rangekeeper/rangekeeper/backends"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"
	"k8s.io/streaming/pkg/httpstream"
)

// MaxCopySize bounds CopyFrom, like Inspect's read limit.
const MaxCopySize = 100 << 20

// member picks the pod to act in: by name, UID or inspect/service; empty means Inspect's
// "default" service, else the first pod by name.
func (b *Backend) member(ctx context.Context, sandboxID, want string) (*corev1.Pod, error) {
	ns, rel, err := b.parseID(sandboxID)
	if err != nil {
		return nil, err
	}
	list, err := b.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: releaseSelector(rel)})
	if err != nil {
		return nil, b.explainAPIError("list", "pods", ns, err)
	}
	pods := list.Items
	if len(pods) == 0 {
		return nil, fmt.Errorf("%s: %w: release %q in namespace %q has no pods", b.Name(), backends.ErrNotFound, rel, ns)
	}
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	pick := func() *corev1.Pod {
		if want == "" {
			want = "default"
			for i := range pods {
				if pods[i].Labels[LabelService] == want {
					return &pods[i]
				}
			}
			return &pods[0]
		}
		for i := range pods {
			p := &pods[i]
			if p.Name == want || string(p.UID) == want || p.Labels[LabelService] == want {
				return p
			}
		}
		return nil
	}
	p := pick()
	if p == nil {
		return nil, fmt.Errorf("%s: %w: release %s/%s has no member %q", b.Name(), backends.ErrNotFound, ns, rel, want)
	}
	if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
		return nil, fmt.Errorf("%s: pod %s/%s is %s, not running", b.Name(), ns, p.Name, stateName(p.DeletionTimestamp != nil, firstWaiting(p.Status.ContainerStatuses), p.Status.Phase))
	}
	if len(p.Spec.Containers) == 0 {
		return nil, fmt.Errorf("%s: pod %s/%s has no containers", b.Name(), ns, p.Name)
	}
	return p, nil
}

// Exec runs a command in the first container of a member pod through the API server's
// pods/exec (websocket, falling back to SPDY), as Inspect does. Env, WorkDir, User and Stdin
// need /bin/sh in the image (and runuser for User), since Kubernetes exec has no such fields.
// Stdin is read up front (at most MaxCopySize) and fed through `head -c <size>`, like Inspect's
// writes: not every exec server passes the end of stdin on to the process.
func (b *Backend) Exec(ctx context.Context, sandboxID string, req backends.ExecRequest) (backends.ExecResult, error) {
	if len(req.Cmd) == 0 {
		return backends.ExecResult{}, fmt.Errorf("%s: exec: empty command", b.Name())
	}
	stdinLen := -1
	if req.Stdin != nil {
		data, err := io.ReadAll(io.LimitReader(req.Stdin, MaxCopySize+1))
		if err != nil {
			return backends.ExecResult{}, fmt.Errorf("%s: exec: read stdin: %w", b.Name(), err)
		}
		if len(data) > MaxCopySize {
			return backends.ExecResult{}, fmt.Errorf("%s: exec: stdin larger than %d bytes", b.Name(), MaxCopySize)
		}
		stdinLen, req.Stdin = len(data), bytes.NewReader(data)
	}
	p, err := b.member(ctx, sandboxID, req.Member)
	if err != nil {
		return backends.ExecResult{}, err
	}
	return b.execIn(ctx, p, wrapCommand(req, stdinLen), req)
}

// wrapCommand adds the working directory, environment, user and a sized stdin through
// /bin/sh when asked; stdinLen < 0 means no stdin.
func wrapCommand(req backends.ExecRequest, stdinLen int) []string {
	if req.WorkDir == "" && len(req.Env) == 0 && req.User == "" && stdinLen < 0 {
		return req.Cmd
	}
	var script []string
	if req.WorkDir != "" {
		script = append(script, "cd "+shellQuote(req.WorkDir)+" &&")
	}
	script = append(script, "exec")
	if req.User != "" {
		script = append(script, "runuser -u "+shellQuote(req.User)+" --")
	}
	if len(req.Env) > 0 {
		script = append(script, "env")
		for _, e := range req.Env {
			script = append(script, shellQuote(e))
		}
	}
	script = append(script, `"$@"`)
	inner := strings.Join(script, " ")
	if stdinLen >= 0 {
		inner = "head -c " + strconv.Itoa(stdinLen) + " | (" + inner + ")"
	}
	return append([]string{"/bin/sh", "-c", inner, "sh"}, req.Cmd...)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func (b *Backend) execIn(ctx context.Context, p *corev1.Pod, cmd []string, req backends.ExecRequest) (backends.ExecResult, error) {
	if req.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, req.Timeout)
		defer cancel()
	}
	r := b.cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(p.Namespace).Name(p.Name).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{
			Container: p.Spec.Containers[0].Name,
			Command:   cmd,
			Stdin:     req.Stdin != nil,
			Stdout:    true,
			Stderr:    true,
		}, scheme.ParameterCodec)
	ws, err := remotecommand.NewWebSocketExecutor(b.rc, "GET", r.URL().String())
	if err != nil {
		return backends.ExecResult{}, fmt.Errorf("%s: exec: %w", b.Name(), err)
	}
	spdy, err := remotecommand.NewSPDYExecutor(b.rc, "POST", r.URL())
	if err != nil {
		return backends.ExecResult{}, fmt.Errorf("%s: exec: %w", b.Name(), err)
	}
	ex, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		return backends.ExecResult{}, fmt.Errorf("%s: exec: %w", b.Name(), err)
	}
	var stdout, stderr lockedBuffer
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: req.Stdin, Stdout: &stdout, Stderr: &stderr})
	res := backends.ExecResult{Stdout: stdout.snapshot(), Stderr: stderr.snapshot()}
	var exitErr utilexec.ExitError
	switch {
	case err == nil:
		return res, nil
	case errors.As(err, &exitErr):
		res.ExitCode = exitErr.ExitStatus()
		return res, nil
	case exitStatusInMessage(err) >= 0:
		res.ExitCode = exitStatusInMessage(err)
		return res, nil
	case req.Timeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded):
		res.TimedOut, res.ExitCode = true, 124 // the code timeout(1) and Inspect use
		return res, nil
	case strings.Contains(err.Error(), "no such file or directory") && len(cmd) > 0 && cmd[0] == "/bin/sh":
		return res, fmt.Errorf("%s: pod %s/%s: %w", b.Name(), p.Namespace, p.Name, errNoShell)
	}
	return res, fmt.Errorf("%s: exec in pod %s/%s: %w", b.Name(), p.Namespace, p.Name, err)
}

// exitStatusRE matches the exit status that some exec servers (kwok's ClusterExec, older
// runtimes) report only inside an internal-error message instead of the NonZeroExitCode status
// a kubelet sends.
var exitStatusRE = regexp.MustCompile(`error executing command in container: .*exit status (\d+)\s*$`)

// exitStatusInMessage returns that exit status, or -1.
func exitStatusInMessage(err error) int {
	m := exitStatusRE.FindStringSubmatch(err.Error())
	if m == nil {
		return -1
	}
	n, convErr := strconv.Atoi(m[1])
	if convErr != nil {
		return -1
	}
	return n
}

// CopyTo writes data to path in the member's first container through exec: the bytes go over
// stdin to `head -c <size>`, so only /bin/sh, mkdir, head and chmod are needed in the image.
func (b *Backend) CopyTo(ctx context.Context, sandboxID, member, path string, data []byte, mode int64) error {
	p, err := b.member(ctx, sandboxID, member)
	if err != nil {
		return err
	}
	if mode == 0 {
		mode = 0o644
	}
	// head -c, not cat: the copy must not depend on the exec server passing stdin's end on.
	script := `mkdir -p "$(dirname "$1")" && head -c "$3" > "$1" && chmod "$2" "$1"`
	cmd := []string{"/bin/sh", "-c", script, "sh", path, strconv.FormatInt(mode, 8), strconv.Itoa(len(data))}
	res, err := b.execIn(ctx, p, cmd, backends.ExecRequest{Stdin: bytes.NewReader(data)})
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		if res.ExitCode == 127 {
			return fmt.Errorf("%s: copy to %s in pod %s/%s: %w", b.Name(), path, p.Namespace, p.Name, errNoShell)
		}
		return fmt.Errorf("%s: copy to %s in pod %s/%s: exit %d: %s", b.Name(), path, p.Namespace, p.Name, res.ExitCode, strings.TrimSpace(string(res.Stderr)))
	}
	return nil
}

// CopyFrom reads a file (at most MaxCopySize bytes) from the member's first container.
func (b *Backend) CopyFrom(ctx context.Context, sandboxID, member, path string) ([]byte, error) {
	p, err := b.member(ctx, sandboxID, member)
	if err != nil {
		return nil, err
	}
	cmd := []string{"head", "-c", strconv.Itoa(MaxCopySize + 1), path}
	res, err := b.execIn(ctx, p, cmd, backends.ExecRequest{})
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 {
		return nil, fmt.Errorf("%s: copy from %s in pod %s/%s: exit %d: %s", b.Name(), path, p.Namespace, p.Name, res.ExitCode, strings.TrimSpace(string(res.Stderr)))
	}
	if len(res.Stdout) > MaxCopySize {
		return nil, fmt.Errorf("%s: copy from %s in pod %s/%s: file larger than %d bytes", b.Name(), path, p.Namespace, p.Name, MaxCopySize)
	}
	return res.Stdout, nil
}

// lockedBuffer collects a stream: on a timeout StreamWithContext returns while its copying
// goroutines may still write, so reads take a copy under the lock.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) snapshot() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}
