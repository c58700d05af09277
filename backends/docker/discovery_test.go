package docker

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
)

// The root cause of reverted members losing their service name: aliases that were a prefix of
// the (hex) container ID were dropped as if they were the engine's short-ID alias, so service
// "b" vanished whenever b's ID started with "b" (1 snapshot in 16).
func TestRecordedAliasesKeepServiceNamesThatPrefixTheID(t *testing.T) {
	id := "b3c1f0a9e8d7" + strings.Repeat("0", 52)
	cases := []struct {
		aliases, want []string
	}{
		{[]string{"b", "b3c1f0a9e8d7"}, []string{"b"}},
		{[]string{"b3c1", "web"}, []string{"b3c1", "web"}},
		{[]string{"b3c1f0a9e8d7"}, nil},
		{nil, nil},
	}
	for _, c := range cases {
		if got := recordedAliases(id, c.aliases); !reflect.DeepEqual(got, c.want) {
			t.Errorf("recordedAliases(%v) = %v, want %v", c.aliases, got, c.want)
		}
	}
}

// progressLog collects the steps an action reports.
type progressLog struct {
	mu    sync.Mutex
	steps []string
}

func (p *progressLog) ctx(ctx context.Context) context.Context {
	return backends.WithProgress(ctx, func(s string) { p.mu.Lock(); p.steps = append(p.steps, s); p.mu.Unlock() })
}

func (p *progressLog) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.steps, " | ")
}

// A revert waits until every started member runs and is registered under its service names; it
// reports the wait, and gives up at its deadline with an error naming what is missing.
func TestRevertWaitsForServiceDiscoveryAndReportsIt(t *testing.T) {
	b := newTestBackend(t, Options{})
	project := "rk-disc-" + dockertest.RunID
	dockertest.Project(t, project, dockertest.Service{Name: "web"})
	ctx := context.Background()
	web, err := b.member(ctx, b.SandboxID(project), "web")
	if err != nil {
		t.Fatal(err)
	}
	net := project + "_default"
	recipe := func(aliases ...string) memberRecipe {
		return memberRecipe{Name: project + "-web-1", Running: true,
			Endpoints: map[string]*network.EndpointSettings{net: {Aliases: aliases}}}
	}
	ids := map[string]string{project + "-web-1": web.ID}

	t.Run("ready", func(t *testing.T) {
		var log progressLog
		if err := b.awaitRunningAndNamed(log.ctx(ctx), []memberRecipe{recipe("web")}, ids, 5*time.Second); err != nil {
			t.Fatalf("running member registered as web: %v", err)
		}
	})

	t.Run("late alias is waited for", func(t *testing.T) {
		// Attach a second network with the alias only after 1.5 s: the wait must report and see it.
		late := project + "_late"
		if _, err := b.cli.NetworkCreate(ctx, late, client.NetworkCreateOptions{Driver: "bridge", Labels: dockertest.Labels(map[string]string{LabelProject: project})}); err != nil {
			t.Fatal(err)
		}
		go func() {
			time.Sleep(1500 * time.Millisecond)
			_, _ = b.cli.NetworkConnect(context.Background(), late, client.NetworkConnectOptions{Container: web.ID,
				EndpointConfig: &network.EndpointSettings{Aliases: []string{"web-late"}}})
		}()
		r := recipe("web")
		r.Endpoints[late] = &network.EndpointSettings{Aliases: []string{"web-late"}}
		var log progressLog
		if err := b.awaitRunningAndNamed(log.ctx(ctx), []memberRecipe{r}, ids, 20*time.Second); err != nil {
			t.Fatalf("late alias: %v", err)
		}
		if s := log.String(); !strings.Contains(s, "waiting for service discovery: "+project+"-web-1 not attached to "+late) ||
			!strings.Contains(s, "service discovery ready after") {
			t.Fatalf("progress = %q; want the wait reported and its end", s)
		}
	})

	t.Run("never registered fails at the deadline", func(t *testing.T) {
		var log progressLog
		start := time.Now()
		err := b.awaitRunningAndNamed(log.ctx(ctx), []memberRecipe{recipe("web", "never")}, ids, 2*time.Second)
		if err == nil || !strings.Contains(err.Error(), `not registered as "never" on `+net) || !strings.Contains(err.Error(), "not ready after 2s") {
			t.Fatalf("err = %v; want the missing alias named and the deadline", err)
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Fatalf("bounded wait took %s", took)
		}
		if !strings.Contains(log.String(), "waiting for service discovery") {
			t.Fatalf("progress = %q; want the wait reported", log.String())
		}
	})

	t.Run("cancelled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(300*time.Millisecond, cancel)
		if err := b.awaitRunningAndNamed(cctx, []memberRecipe{recipe("never")}, ids, time.Minute); err != context.Canceled {
			t.Fatalf("cancelled wait = %v", err)
		}
	})
}
