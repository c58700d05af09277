package composeup_test

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends/docker"
	"github.com/rangekeeper/rangekeeper/backends/docker/composeup"
	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
)

func TestMain(m *testing.M) { dockertest.Main(m) }

// standUp loads testdata/name with the test image and stands it up under a labelled project
// that is removed when the test ends.
func standUp(t *testing.T, name string, extraEnv map[string]string) (*client.Client, *composeup.Stack, string, error) {
	t.Helper()
	cli := dockertest.Engine(t)
	img := dockertest.Image(t)
	project := strings.ReplaceAll("rkcu-"+strings.TrimSuffix(name, ".yaml")+"-"+dockertest.RunID, "_", "-")
	label := "dev.rangekeeper.composeup.test=" + project
	t.Cleanup(func() { _, _ = composeup.Down(context.Background(), cli, label) })
	env := map[string]string{"IMAGE": img}
	for k, v := range extraEnv {
		env[k] = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := composeup.Load(ctx, "testdata/"+name, env, project)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	labels := dockertest.Labels(map[string]string{"dev.rangekeeper.composeup.test": project})
	st, err := composeup.Up(ctx, cli, p, composeup.Options{Labels: labels, DNS: []netip.Addr{netip.MustParseAddr("192.0.2.53")}})
	return cli, st, label, err
}

func TestUpWaitDown(t *testing.T) {
	cli, st, label, err := standUp(t, "stack.yaml", map[string]string{"SAMPLE_METADATA_FLAG": "flag-42"})
	if err != nil {
		t.Fatalf("up: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := composeup.Wait(ctx, cli, st); err != nil {
		t.Fatalf("wait: %v", err)
	}
	inspect := func(service string) client.ContainerInspectResult {
		t.Helper()
		cs := st.Service(service)
		if len(cs) != 1 {
			t.Fatalf("service %s: %d containers", service, len(cs))
		}
		res, err := cli.ContainerInspect(ctx, cs[0].ID, client.ContainerInspectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Container.Config.Labels[docker.LabelProject]; got != st.Project {
			t.Errorf("%s: project label %q", service, got)
		}
		return res
	}
	def := inspect("default").Container
	hc := def.HostConfig
	if !slices.Equal(hc.CapDrop, []string{"ALL"}) || !hc.ReadonlyRootfs || hc.Memory != 64<<20 || hc.PidsLimit == nil || *hc.PidsLimit != 64 {
		t.Errorf("hardening keys not applied: capdrop %v ro %v mem %d pids %v", hc.CapDrop, hc.ReadonlyRootfs, hc.Memory, hc.PidsLimit)
	}
	if !slices.Contains(hc.SecurityOpt, "no-new-privileges:true") || hc.Tmpfs["/tmp"] != "" && len(hc.Tmpfs) != 1 {
		t.Errorf("security_opt %v tmpfs %v", hc.SecurityOpt, hc.Tmpfs)
	}
	if len(hc.DNS) != 1 || hc.DNS[0].String() != "192.0.2.53" {
		t.Errorf("DNS override not applied to default: %v", hc.DNS)
	}
	if !slices.Contains(def.Config.Env, "SAMPLE_METADATA_FLAG=flag-42") {
		t.Errorf("interpolated variable missing from env")
	}
	if len(def.Mounts) == 0 || def.Mounts[0].Name != composeup.ResourceName(st.Project, "data") {
		t.Errorf("named volume not mounted: %+v", def.Mounts)
	}
	db := inspect("db").Container
	if len(db.NetworkSettings.Networks) != 2 {
		t.Errorf("db networks: %v", db.NetworkSettings.Networks)
	}
	if ep := db.NetworkSettings.Networks[composeup.ResourceName(st.Project, "inner")]; ep == nil || !slices.Contains(ep.Aliases, "database") {
		t.Errorf("db alias on inner missing: %+v", ep)
	}
	side := inspect("sidecar").Container
	if string(side.HostConfig.NetworkMode) != "container:"+def.ID || len(side.HostConfig.DNS) != 0 {
		t.Errorf("sidecar network mode %q dns %v", side.HostConfig.NetworkMode, side.HostConfig.DNS)
	}
	inner, ok := st.Network("inner")
	if !ok || !inner.Internal || len(inner.Gateways) == 0 {
		t.Errorf("inner network %+v", inner)
	}
	before, err := composeup.Count(ctx, cli, label)
	if err != nil {
		t.Fatal(err)
	}
	if before != (composeup.Counts{Containers: 3, Networks: 2, Volumes: 1}) {
		t.Errorf("counted %v before down", before)
	}
	removed, err := composeup.Down(ctx, cli, label)
	if err != nil {
		t.Fatalf("down: %v", err)
	}
	after, _ := composeup.Count(ctx, cli, label)
	if removed != before || !after.Zero() {
		t.Errorf("removed %v, left %v", removed, after)
	}
}

func TestWaitFailsFast(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"exits.yaml", "exited with code 3"},
		{"unhealthy.yaml", "is unhealthy"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			cli, st, _, err := standUp(t, tc.file, nil)
			if err != nil {
				t.Fatalf("up: %v", err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			start := time.Now()
			err = composeup.Wait(ctx, cli, st)
			if !errors.Is(err, composeup.ErrNotReady) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("wait: %v, want %q", err, tc.want)
			}
			if time.Since(start) > 30*time.Second {
				t.Errorf("wait took %s; it should fail on the first bad state", time.Since(start))
			}
		})
	}
}

func TestUpRefuses(t *testing.T) {
	for _, tc := range []struct {
		file string
		want error
		key  string
	}{
		{"gpus.yaml", composeup.ErrUnsupported, "services.default.gpus"},
		{"missing.yaml", composeup.ErrImageMissing, "rangekeeper-test/does-not-exist:never"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			cli, _, label, err := standUp(t, tc.file, nil)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.key) {
				t.Fatalf("up: %v, want %v naming %s", err, tc.want, tc.key)
			}
			n, _ := composeup.Count(context.Background(), cli, label)
			if tc.want == composeup.ErrImageMissing && !n.Zero() {
				t.Errorf("a missing image must fail before anything is created; found %v", n)
			}
		})
	}
}

func TestLoadErrorNamesFile(t *testing.T) {
	_, err := composeup.Load(context.Background(), "testdata/nope.yaml", nil, "x")
	var le *composeup.LoadError
	if !errors.As(err, &le) || le.File != "testdata/nope.yaml" {
		t.Fatalf("err %v", err)
	}
}
