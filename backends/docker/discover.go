package docker

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/events"
	"github.com/moby/moby/client"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/internal/redact"
)

// List returns the engine's sandboxes (and plain containers with Options.All).
func (b *Backend) List(ctx context.Context) ([]backends.Sandbox, error) {
	cs, err := b.containers(ctx, nil)
	if err != nil {
		return nil, err
	}
	groups := map[string][]container.Summary{}
	for _, c := range cs {
		if key, ok := b.groupKey(c); ok {
			groups[key] = append(groups[key], c)
		}
	}
	out := make([]backends.Sandbox, 0, len(groups))
	for key, members := range groups {
		out = append(out, b.sandbox(ctx, key, members))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Watch implements backends.Backend: it subscribes to container events first, then lists, so no
// change between the list and the subscription is lost; each event re-reads only the affected
// project.
func (b *Backend) Watch(ctx context.Context, emit func(backends.Event)) (err error) {
	// The contract: nil only when ctx was cancelled — and then always nil, even when the
	// cancellation cut a listing or a refresh short (their error is the cancellation's).
	defer func() {
		if ctx.Err() != nil {
			err = nil
		}
	}()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if _, err := b.cli.Ping(wctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		return b.wrap(err)
	}
	ev := b.cli.Events(wctx, client.EventsListOptions{Filters: make(client.Filters).
		Add("type", string(events.ContainerEventType)).Add("type", string(events.NetworkEventType))})
	list, err := b.List(wctx)
	if err != nil {
		return b.wrap(err)
	}
	emit(backends.Event{Type: backends.EventReset, Sandboxes: list})
	known := make(map[string]bool, len(list))
	for _, s := range list {
		known[s.ID] = true
	}
	b.execs.keep(known)
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-ev.Err:
			if ctx.Err() != nil {
				return nil
			}
			if err == nil {
				err = errors.New("event stream closed")
			}
			return b.wrap(fmt.Errorf("event stream: %w", err))
		case m := <-ev.Messages:
			key, member, ok := b.eventMember(wctx, m)
			if !ok {
				continue
			}
			if line, ok := execLine(m); ok && known[b.Name()+"/"+key] {
				// Only a listed sandbox's: its removal below drops them, so they stay bounded.
				b.execs.add(b.Name()+"/"+key, line)
			}
			if a := b.activityOf(wctx, m, b.Name()+"/"+key, member); a != nil {
				emit(backends.Event{Type: backends.EventActivity, Activity: a})
			}
			if !relevant(m) {
				continue
			}
			switch {
			case m.Action == events.ActionDestroy, m.Action == events.ActionUpdate: // update: limits changed in place
				b.forgetPosture(m.Actor.ID)
			case m.Type == events.NetworkEventType:
				// A member's networks are part of its posture: re-assess it.
				b.forgetPosture(m.Actor.Attributes["container"])
			}
			sb, found, err := b.refresh(wctx, key)
			if err != nil {
				return b.wrap(err)
			}
			switch {
			case found:
				known[sb.ID] = true
				emit(backends.Event{Type: backends.EventUpsert, Sandbox: sb})
			case known[b.Name()+"/"+key]:
				delete(known, b.Name()+"/"+key)
				b.execs.forget(b.Name() + "/" + key)
				emit(backends.Event{Type: backends.EventRemove, ID: b.Name() + "/" + key})
			}
		}
	}
}

func (b *Backend) wrap(err error) error {
	return fmt.Errorf("%s (%s): %w", b.Name(), redact.Text(b.ep.Host), err)
}

// eventMember finds the sandbox key and member name an event is about.
func (b *Backend) eventMember(ctx context.Context, m events.Message) (key, member string, ok bool) {
	if m.Type == events.NetworkEventType {
		return b.memberOfNetworkEvent(ctx, m)
	}
	key, ok = b.keyFromLabels(m.Actor.ID, m.Actor.Attributes)
	return key, m.Actor.Attributes["name"], ok
}

// execLine is the command line of a container's exec_start event (argv joined by spaces, as the
// engine writes it), arguments and all: for execLines only, never for an Activity.
func execLine(m events.Message) (string, bool) {
	if m.Type != events.ContainerEventType {
		return "", false
	}
	line, ok := strings.CutPrefix(string(m.Action), string(events.ActionExecStart)+": ")
	return line, ok && line != ""
}

// relevant filters out exec_* and other chatter that does not change membership, state or
// posture; a network (dis)connect changes a member's posture.
func relevant(m events.Message) bool {
	if m.Type == events.NetworkEventType {
		return m.Action == events.ActionConnect || m.Action == events.ActionDisconnect
	}
	switch m.Action {
	case events.ActionCreate, events.ActionStart, events.ActionRestart, events.ActionStop, events.ActionDie,
		events.ActionKill, events.ActionPause, events.ActionUnPause, events.ActionDestroy, events.ActionRename,
		events.ActionOOM, events.ActionUpdate:
		return true
	}
	return false
}

// groupKey is the sandbox key inside this backend: the compose project, or container:<name>
// for a plain container when listing all.
func (b *Backend) groupKey(c container.Summary) (string, bool) {
	name := ""
	if len(c.Names) > 0 {
		name = strings.TrimPrefix(c.Names[0], "/")
	}
	return b.keyFromLabels(name, c.Labels)
}

func (b *Backend) keyFromLabels(name string, labels map[string]string) (string, bool) {
	if p := labels[LabelProject]; p != "" {
		return p, true
	}
	if b.opts.All && name != "" {
		if n, ok := labels["name"]; ok && n != "" { // event attributes carry the name here
			name = n
		}
		return plainPrefix + name, true
	}
	return "", false
}

// refresh re-reads one project (or plain container) after an event.
func (b *Backend) refresh(ctx context.Context, key string) (backends.Sandbox, bool, error) {
	var f client.Filters
	if name, plain := strings.CutPrefix(key, plainPrefix); plain {
		f = make(client.Filters).Add("name", "^/"+name+"$")
	} else {
		f = make(client.Filters).Add("label", LabelProject+"="+key)
	}
	cs, err := b.containers(ctx, f)
	if err != nil {
		return backends.Sandbox{}, false, err
	}
	var members []container.Summary
	for _, c := range cs {
		if k, ok := b.groupKey(c); ok && k == key {
			members = append(members, c)
		}
	}
	if len(members) == 0 {
		return backends.Sandbox{}, false, nil
	}
	return b.sandbox(ctx, key, members), true, nil
}

func (b *Backend) containers(ctx context.Context, f client.Filters) ([]container.Summary, error) {
	if f == nil && !b.opts.All {
		f = make(client.Filters).Add("label", LabelProject)
	}
	res, err := b.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return nil, err
	}
	return res.Items, nil
}

// sandbox builds the backend-neutral view of one group of containers.
func (b *Backend) sandbox(ctx context.Context, key string, cs []container.Summary) backends.Sandbox {
	sort.Slice(cs, func(i, j int) bool {
		si, sj := cs[i].Labels[LabelService], cs[j].Labels[LabelService]
		if si != sj {
			return si < sj
		}
		return cs[i].Labels[LabelNumber] < cs[j].Labels[LabelNumber]
	})
	_, plain := strings.CutPrefix(key, plainPrefix)
	sb := backends.Sandbox{
		ID:         b.Name() + "/" + key,
		Name:       key,
		Backend:    backends.KindDocker,
		Endpoint:   b.Name(),
		Actionable: !plain,
		Inspect:    !plain && IsInspectProject(key),
		Task:       TaskHint(key),
	}
	if plain {
		sb.Name = strings.TrimPrefix(key, plainPrefix)
	}
	for _, c := range cs {
		created := time.Unix(c.Created, 0).UTC()
		if sb.Created.IsZero() || created.Before(sb.Created) {
			sb.Created = created
		}
		name := ""
		if len(c.Names) > 0 {
			name = strings.TrimPrefix(c.Names[0], "/")
		}
		sb.Members = append(sb.Members, backends.Member{
			ID:      c.ID,
			Name:    name,
			Service: c.Labels[LabelService],
			State:   string(c.State),
			Running: c.State == container.StateRunning,
			Image:   c.Image,
			Created: created,
			Labels:  composeLabels(c.Labels),
		})
		if !plain {
			sb.Findings = append(sb.Findings, b.posture(ctx, c.ID, name)...)
		}
	}
	if !plain && len(cs) > 0 {
		if wd := cs[0].Labels["com.docker.compose.project.working_dir"]; wd != "" {
			sb.Extra = append(sb.Extra, backends.KeyValue{Key: "working dir", Value: wd})
		}
		if cf := cs[0].Labels["com.docker.compose.project.config_files"]; cf != "" {
			sb.Extra = append(sb.Extra, backends.KeyValue{Key: "config files", Value: cf})
		}
	}
	sb.Status = backends.DeriveStatus(sb.Members)
	return sb
}

// composeLabels keeps the labels an operator needs to see; the full set is in the engine.
func composeLabels(all map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range all {
		if strings.HasPrefix(k, "com.docker.compose.") && k != "com.docker.compose.config-hash" {
			out[k] = v
		}
	}
	return out
}
