package docker

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/events"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/sandbox"
)

// activityOf turns one engine event of a sandbox into an Activity, or nil for chatter nobody
// reads (attach, resize, exec_create before it starts, …). sandboxID and member are the sandbox
// and container name the event belongs to.
func (b *Backend) activityOf(ctx context.Context, m events.Message, sandboxID, member string) *backends.Activity {
	a := &backends.Activity{Time: eventTime(m), SandboxID: sandboxID, Member: member, Attrs: map[string]string{}}
	action, arg, _ := strings.Cut(string(m.Action), ": ")
	attrs := m.Actor.Attributes
	switch m.Type {
	case events.NetworkEventType:
		a.Attrs["network"] = attrs["name"]
		switch events.Action(action) {
		case events.ActionConnect:
			a.Kind, a.Detail = sandbox.ActNetConnect, "joined network "+attrs["name"]
		case events.ActionDisconnect:
			a.Kind, a.Detail = sandbox.ActNetDisconnect, "left network "+attrs["name"]
		default:
			return nil
		}
		return a
	case events.ContainerEventType:
	default:
		return nil
	}
	switch events.Action(action) {
	case events.ActionCreate:
		a.Kind, a.Detail = sandbox.ActCreate, "created from "+attrs["image"]
	case events.ActionStart:
		a.Kind, a.Detail = sandbox.ActStart, "started"
	case events.ActionRestart:
		a.Kind, a.Detail = sandbox.ActRestart, "restarted"
	case events.ActionStop, events.ActionPause:
		a.Kind, a.Detail = sandbox.ActStop, string(m.Action)
	case events.ActionUnPause:
		a.Kind, a.Detail = sandbox.ActStart, "unpaused"
	case events.ActionDie:
		a.Kind = sandbox.ActDie
		a.Attrs["exit_code"] = attrs["exitCode"]
		a.Detail = "exited with code " + attrs["exitCode"]
	case events.ActionOOM:
		a.Kind, a.Detail = sandbox.ActOOM, "killed: out of memory"
	case events.ActionDestroy:
		a.Kind, a.Detail = sandbox.ActDestroy, "removed"
	case events.ActionUpdate:
		a.Kind, a.Detail = sandbox.ActUpdate, "configuration updated in place"
	case events.ActionRename:
		a.Kind, a.Detail = sandbox.ActUpdate, "renamed (was "+strings.TrimPrefix(attrs["oldName"], "/")+")"
	case "health_status":
		a.Kind, a.Attrs["status"] = sandbox.ActHealth, arg
		a.Detail = "health: " + arg
	case events.ActionExecStart:
		a.Kind = sandbox.ActExec
		b.describeExec(ctx, a, attrs["execID"], arg)
	default:
		return nil
	}
	if len(a.Attrs) == 0 {
		a.Attrs = nil
	}
	return a
}

func eventTime(m events.Message) time.Time {
	if m.TimeNano != 0 {
		return time.Unix(0, m.TimeNano)
	}
	return time.Unix(m.Time, 0)
}

// describeExec fills an exec's user, privileged flag and command name from the engine (the
// event's own text carries the arguments, which may hold secrets and are never kept). cmdline
// is the event's command line, used for the command name when the engine no longer knows the
// exec.
func (b *Backend) describeExec(ctx context.Context, a *backends.Activity, execID, cmdline string) {
	cmd, _, _ := strings.Cut(cmdline, " ")
	user, privileged := "", false
	if pc, err := b.execProcess(ctx, execID); err == nil {
		cmd, user = pc.Entrypoint, pc.User
		privileged = pc.Privileged != nil && *pc.Privileged
	}
	cmd = path.Base(cmd)
	if user == "" {
		user = "(image default)"
	}
	a.Actor = "user " + user
	a.Attrs["command"], a.Attrs["user"] = cmd, user
	a.Attrs["privileged"] = fmt.Sprint(privileged)
	a.Detail = "exec " + cmd + " as " + user + " (arguments not recorded)"
	if privileged {
		a.Detail += ", privileged"
	}
}

// execProcess reads an exec's process configuration. The client's ExecInspect drops it, so this
// asks the engine directly over the client's own connection.
func (b *Backend) execProcess(ctx context.Context, execID string) (container.ExecProcessConfig, error) {
	var out struct{ ProcessConfig *container.ExecProcessConfig }
	if execID == "" {
		return container.ExecProcessConfig{}, fmt.Errorf("no exec ID")
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return b.cli.Dialer()(ctx)
	}}}
	defer hc.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://docker/v"+b.cli.ClientVersion()+"/exec/"+execID+"/json", nil)
	if err != nil {
		return container.ExecProcessConfig{}, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return container.ExecProcessConfig{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return container.ExecProcessConfig{}, fmt.Errorf("exec %s: %s", execID, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.ProcessConfig == nil {
		return container.ExecProcessConfig{}, fmt.Errorf("exec %s: no process config (%v)", execID, err)
	}
	return *out.ProcessConfig, nil
}

// memberOfNetworkEvent finds the sandbox key and container name a network event is about: the
// event names the container only by ID.
func (b *Backend) memberOfNetworkEvent(ctx context.Context, m events.Message) (key, member string, ok bool) {
	id := m.Actor.Attributes["container"]
	if id == "" {
		return "", "", false
	}
	res, err := b.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil || res.Container.Config == nil {
		return "", "", false
	}
	name := strings.TrimPrefix(res.Container.Name, "/")
	key, ok = b.keyFromLabels(name, res.Container.Config.Labels)
	return key, name, ok
}
