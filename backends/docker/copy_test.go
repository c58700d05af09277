package docker

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/docker/dockertest"
)

var clientInspect = client.ContainerInspectOptions{}

func TestCopyRoundTrip(t *testing.T) {
	b := newTestBackend(t, Options{})
	project := "rk-copy-" + dockertest.RunID
	dockertest.Project(t, project,
		dockertest.Service{Name: "default"},
		dockertest.Service{Name: "ro", HostConfig: &container.HostConfig{ReadonlyRootfs: true}})
	id := b.SandboxID(project)
	ctx := context.Background()

	payload := append([]byte("probe\x00binary\n"), bytes.Repeat([]byte{0xff}, 70000)...)
	if err := b.CopyTo(ctx, id, "", "/tmp/probe", payload, 0o750); err != nil {
		t.Fatal(err)
	}
	got, err := b.CopyFrom(ctx, id, "", "/tmp/probe")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, payload) {
		t.Fatalf("round trip changed %d bytes into %d", len(payload), len(got))
	}
	res, err := b.Exec(ctx, id, backends.ExecRequest{Cmd: []string{"stat", "-c", "%a", "/tmp/probe"}})
	if err != nil || strings.TrimSpace(string(res.Stdout)) != "750" {
		t.Fatalf("mode %q (%v), want 750", res.Stdout, err)
	}
	// A symbolic link is followed, as docker cp does.
	if _, err := b.Exec(ctx, id, backends.ExecRequest{Cmd: []string{"ln", "-s", "probe", "/tmp/link"}}); err != nil {
		t.Fatal(err)
	}
	if got, err := b.CopyFrom(ctx, id, "", "/tmp/link"); err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("through symlink: %d bytes, %v", len(got), err)
	}

	errTests := []struct {
		name string
		run  func() error
		want string
	}{
		{"to missing directory", func() error { return b.CopyTo(ctx, id, "", "/no/such/dir/f", []byte("x"), 0) }, "does not exist"},
		{"to read-only rootfs", func() error { return b.CopyTo(ctx, id, "ro", "/tmp/f", []byte("x"), 0) }, "read-only"},
		{"to relative path", func() error { return b.CopyTo(ctx, id, "", "tmp/f", []byte("x"), 0) }, "absolute"},
		{"from missing file", func() error { _, err := b.CopyFrom(ctx, id, "", "/tmp/absent"); return err }, "does not exist"},
		{"from directory", func() error { _, err := b.CopyFrom(ctx, id, "", "/tmp"); return err }, "is a directory"},
		{"unknown member", func() error { _, err := b.CopyFrom(ctx, id, "zzz", "/tmp/probe"); return err }, "no member"},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want it to say %q", err, tt.want)
			}
		})
	}
}
