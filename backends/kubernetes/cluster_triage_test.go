package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/kubernetes/kubetest"
)

// runningRelease installs one agent-env release in a fresh namespace and waits for its member.
func runningRelease(t *testing.T, c *kubetest.Cluster) (*Backend, string, *fleet) {
	t.Helper()
	ns := c.Namespace(t)
	b := testBackend(t, c, nil, ns)
	r := release{name: newReleaseName(), task: "t", sample: "x"}
	install(t, b, ns, r)
	sid := b.Name() + "/" + ns + "/" + r.name
	f := newFleet()
	watch(t, b, f)
	f.wait(t, 90*time.Second, "a running member", func(m map[string]backends.Sandbox) bool { return allRunning(m[sid], 1) })
	return b, sid, f
}

// readLines reads n lines from s, failing the test when they do not come within 20 s.
func readLines(t *testing.T, s backends.LogStream, n int) []backends.LogLine {
	t.Helper()
	type res struct {
		l   backends.LogLine
		err error
	}
	var out []backends.LogLine
	for len(out) < n {
		ch := make(chan res, 1)
		go func() { l, err := s.Next(); ch <- res{l, err} }()
		select {
		case r := <-ch:
			if r.err != nil {
				t.Fatalf("after %d of %d lines: %v (got %+v)", len(out), n, r.err, out)
			}
			out = append(out, r.l)
		case <-time.After(20 * time.Second):
			t.Fatalf("only %d of %d lines within 20 s: %+v", len(out), n, out)
		}
	}
	return out
}

// readAll reads a stream that is not following to its end.
func readAll(t *testing.T, b *Backend, sid string, opts backends.LogOptions) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := b.Logs(ctx, sid, opts)
	if err != nil {
		t.Fatalf("logs %+v: %v", opts, err)
	}
	defer s.Close()
	var out []string
	for {
		l, err := s.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("logs %+v: %v after %q", opts, err, out)
		}
		out = append(out, l.Time.UTC().Format(time.RFC3339)+" "+l.Member+" "+l.Text)
	}
}

// bothContainers is want once per container of the chart's pod (its default container and the
// coredns sidecar), sorted: kwok serves the same file for every container.
func bothContainers(want ...string) []string {
	var out []string
	for _, w := range want {
		out = append(out, strings.Replace(w, " default ", " default/coredns ", 1), strings.Replace(w, " default ", " default/default ", 1))
	}
	sort.Strings(out)
	return out
}

// TestClusterLogsFollowTailSincePrevious reads a pod's logs through the API server's pods/log,
// which kwok serves from the file kubetest's ClusterLogs names (with the kubelet's CRI log
// reader): the kubelet's timestamps become the lines' times, tail and since select lines,
// previous reads the previous container's file, and with follow lines appended to the file
// after the stream opened arrive — from both containers of the chart's pod, each line naming
// its member/container.
func TestClusterLogsFollowTailSincePrevious(t *testing.T) {
	c := kubetest.Need(t)
	files := c.PodLogs(t)
	b, sid, _ := runningRelease(t, c)

	t0 := time.Now().Add(-time.Hour).Truncate(time.Second)
	kubetest.AppendLog(t, files.Current,
		kubetest.CRILine(t0, "stdout", "booting"),
		kubetest.CRILine(t0.Add(10*time.Minute), "stderr", "warning: disk"),
		kubetest.CRILine(t0.Add(20*time.Minute), "stdout", "ready"))
	kubetest.AppendLog(t, files.Previous, kubetest.CRILine(t0.Add(-time.Minute), "stdout", "panic: before restart"))
	at := func(d time.Duration, text string) string {
		return t0.Add(d).UTC().Format(time.RFC3339) + " default " + text
	}

	for _, tc := range []struct {
		name string
		opts backends.LogOptions
		want []string
	}{
		{"all", backends.LogOptions{Tail: -1}, []string{at(0, "booting"), at(10*time.Minute, "warning: disk"), at(20*time.Minute, "ready")}},
		{"tail 1", backends.LogOptions{Tail: 1}, []string{at(20*time.Minute, "ready")}},
		{"since", backends.LogOptions{Tail: -1, Since: t0.Add(5 * time.Minute)}, []string{at(10*time.Minute, "warning: disk"), at(20*time.Minute, "ready")}},
		{"member by service", backends.LogOptions{Member: "default", Tail: 2}, []string{at(10*time.Minute, "warning: disk"), at(20*time.Minute, "ready")}},
		{"previous", backends.LogOptions{Tail: -1, Previous: true}, []string{at(-time.Minute, "panic: before restart")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := readAll(t, b, sid, tc.opts)
			sort.Strings(got)
			if tc.want = bothContainers(tc.want...); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := b.Logs(ctx, sid, backends.LogOptions{Follow: true, Tail: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	format := func(ls []backends.LogLine) string {
		var out []string
		for _, l := range ls {
			out = append(out, l.Time.UTC().Format(time.RFC3339Nano)+" "+l.Member+" "+l.Text)
		}
		sort.Strings(out)
		return strings.Join(out, "\n")
	}
	if got, want := format(readLines(t, s, 2)), strings.Join(bothContainers(at(20*time.Minute, "ready")), "\n"); got != want {
		t.Fatalf("follow starts with\n%s\nwant the last line of each container\n%s", got, want)
	}
	later := time.Now().Truncate(time.Millisecond)
	for i := range 3 {
		at := later.Add(time.Duration(i) * time.Millisecond)
		text := fmt.Sprintf("after follow %d", i)
		kubetest.AppendLog(t, files.Current, kubetest.CRILine(at, "stdout", text))
		want := strings.Join(bothContainers(at.UTC().Format(time.RFC3339Nano)+" default "+text), "\n")
		if got := format(readLines(t, s, 2)); got != want {
			t.Errorf("followed line %d:\n%s\nwant\n%s", i, got, want)
		}
	}
	cancel()
	done := make(chan error, 1)
	go func() {
		for {
			if _, err := s.Next(); err != nil {
				done <- err
				return
			}
		}
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Next after cancel: %v, want the context's error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a followed stream did not end when its context was cancelled")
	}
}
