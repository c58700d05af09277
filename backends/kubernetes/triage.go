package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/rangekeeper/rangekeeper/backends"
)

var (
	_ backends.LogReader = (*Backend)(nil)
	_ backends.Sheller   = (*Backend)(nil)
)

// Logs implements backends.LogReader through the API server's pods/log, one stream per
// container of each member pod (the kubelet merges stdout and stderr: lines are reported as
// stdout), with the kubelet's timestamps; Previous reads the container before its last restart.
func (b *Backend) Logs(ctx context.Context, sandboxID string, opts backends.LogOptions) (backends.LogStream, error) {
	var pods []corev1.Pod
	if opts.Member != "" {
		p, err := b.member(ctx, sandboxID, opts.Member)
		if err != nil {
			return nil, err
		}
		pods = []corev1.Pod{*p}
	} else {
		ns, rel, err := b.parseID(sandboxID)
		if err != nil {
			return nil, err
		}
		list, err := b.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: releaseSelector(rel)})
		if err != nil {
			return nil, b.explainAPIError("list", "pods", ns, err)
		}
		if pods = list.Items; len(pods) == 0 {
			return nil, fmt.Errorf("%s: %w: release %q in namespace %q has no pods", b.Name(), backends.ErrNotFound, rel, ns)
		}
		sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	}
	s := backends.NewChanStream(ctx)
	for _, p := range pods {
		for _, c := range p.Spec.Containers {
			lo := &corev1.PodLogOptions{Container: c.Name, Follow: opts.Follow, Timestamps: true, Previous: opts.Previous}
			if opts.Tail >= 0 {
				t := int64(opts.Tail)
				lo.TailLines = &t
			}
			if !opts.Since.IsZero() {
				st := metav1.NewTime(opts.Since)
				lo.SinceTime = &st
			}
			member := p.Labels[LabelService]
			if member == "" {
				member = p.Name
			}
			if len(p.Spec.Containers) > 1 {
				member += "/" + c.Name
			}
			ns, name := p.Namespace, p.Name
			s.Go(func(ctx context.Context) error {
				rc, err := b.cs.CoreV1().Pods(ns).GetLogs(name, lo).Stream(ctx)
				if err != nil {
					return fmt.Errorf("%s: logs of %s/%s: %w", b.Name(), name, lo.Container, err)
				}
				defer rc.Close()
				go func() { <-ctx.Done(); rc.Close() }()
				w := &backends.LineWriter{Send: s.Send, Member: member, Stream: backends.LogStdout, Stamped: true}
				_, err = io.Copy(w, rc)
				w.Flush()
				if err != nil && ctx.Err() == nil && !errors.Is(err, io.ErrClosedPipe) {
					return fmt.Errorf("%s: logs of %s/%s: %w", b.Name(), name, lo.Container, err)
				}
				return nil
			})
		}
	}
	s.Start()
	return s, nil
}

// sizeQueue adapts the shell's resize channel to remotecommand's TerminalSizeQueue.
type sizeQueue struct {
	first  *backends.TermSize
	resize <-chan backends.TermSize
	ctx    context.Context
}

func (q *sizeQueue) Next() *remotecommand.TerminalSize {
	if q.first != nil {
		s := q.first
		q.first = nil
		return &remotecommand.TerminalSize{Width: uint16(s.Width), Height: uint16(s.Height)}
	}
	select {
	case <-q.ctx.Done():
		return nil
	case s, ok := <-q.resize:
		if !ok {
			return nil
		}
		return &remotecommand.TerminalSize{Width: uint16(s.Width), Height: uint16(s.Height)}
	}
}

// Shell implements backends.Sheller through pods/exec with a TTY and a terminal-size queue, in
// the member pod's first container: `bash -l` when the image has bash, else `sh` (Inspect's
// connection command); a user is switched to with `su -s <shell> -l <user>` like Inspect's.
func (b *Backend) Shell(ctx context.Context, sandboxID string, req backends.ShellRequest) (backends.ShellResult, error) {
	p, err := b.member(ctx, sandboxID, req.Member)
	if err != nil {
		return backends.ShellResult{}, err
	}
	res := backends.ShellResult{Member: p.Name, Cmd: req.Cmd}
	if len(res.Cmd) == 0 {
		res.Cmd = []string{"sh"}
		if r, err := b.execIn(ctx, p, []string{"sh", "-c", "command -v bash"}, backends.ExecRequest{}); err == nil && r.ExitCode == 0 && len(r.Stdout) > 0 {
			res.Cmd = []string{"bash", "-l"}
		}
		if req.User != "" {
			res.Cmd = []string{"su", "-s", "/bin/" + res.Cmd[0], "-l", req.User}
		}
	}
	// A TTY always gets a stdin stream: with none, kwok (v0.8.0) dereferences a nil reader and
	// dies, and kubectl refuses a TTY without input too. Without req.Stdin nothing is typed: the
	// stream stays open, empty, until the shell ends.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stdin := req.Stdin
	if stdin == nil {
		stdin = idleReader{ctx}
	}
	r := b.cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(p.Namespace).Name(p.Name).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: p.Spec.Containers[0].Name, Command: res.Cmd,
			Stdin: true, Stdout: true, TTY: true}, scheme.ParameterCodec)
	ws, err := remotecommand.NewWebSocketExecutor(b.rc, "GET", r.URL().String())
	if err != nil {
		return res, fmt.Errorf("%s: shell: %w", b.Name(), err)
	}
	spdy, err := remotecommand.NewSPDYExecutor(b.rc, "POST", r.URL())
	if err != nil {
		return res, fmt.Errorf("%s: shell: %w", b.Name(), err)
	}
	ex, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		return res, fmt.Errorf("%s: shell: %w", b.Name(), err)
	}
	first := req.Size
	out := req.Stdout
	if out == nil {
		out = io.Discard
	}
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: out, Tty: true,
		TerminalSizeQueue: &sizeQueue{first: &first, resize: req.Resize, ctx: ctx}})
	var exitErr utilexec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		res.ExitCode = exitErr.ExitStatus()
	case exitStatusInMessage(err) >= 0:
		res.ExitCode = exitStatusInMessage(err)
	default:
		return res, fmt.Errorf("%s: shell in %s/%s: %w", b.Name(), p.Namespace, p.Name, err)
	}
	return res, nil
}

// idleReader is a stdin with nothing to type: Read blocks until ctx ends, then reports EOF.
type idleReader struct{ ctx context.Context }

func (r idleReader) Read([]byte) (int, error) {
	<-r.ctx.Done()
	return 0, io.EOF
}
