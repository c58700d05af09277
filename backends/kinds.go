package backends

import "sort"

// Tier is the least role that may take an action kind in a team session. It lives here, not
// with the roles, because operators imports backends: the roles read the tiers, never the
// reverse.
type Tier int

// The tiers, least to most. The zero Tier is no tier: a kind must declare one.
const (
	TierOperator Tier = iota + 1 // one sandbox at a time, nothing lost that a snapshot cannot bring back
	TierAdmin                    // loses state, decides for the range, or reconnects what the watch cut off
)

// Tiers lists the tiers, least to most.
func Tiers() []Tier { return []Tier{TierOperator, TierAdmin} }

func (t Tier) String() string {
	switch t {
	case TierOperator:
		return "operator"
	case TierAdmin:
		return "admin"
	}
	return "no tier"
}

// ActionSpec is everything the layers above need to know about an action kind. Every kind is
// declared once, in kinds; the keymap, the workbench's flows and gerunds, the roles and the
// daemon's socket commands are derived from it.
type ActionSpec struct {
	Kind Action
	// Verb is the CLI command that takes the kind ("snapshots" for snapshot-rm: `snapshots rm`);
	// "" when no command does.
	Verb string
	// Gerund names the kind while it runs, in rows and the team line ("tearing down").
	Gerund string
	// Tier is the least role that may take it in a team session.
	Tier Tier
	// Destructive actions lose state: they need confirmation and are refused in read-only mode.
	Destructive bool
	// Mutating actions can change the sandbox or the host (exec, copy and probe count: an
	// arbitrary command or an injected binary changes a live sandbox); refused in read-only mode.
	Mutating bool
	// Confirm asks for confirmation although no state is lost (quarantine cuts a sandbox off).
	Confirm bool
	// Warning is what the confirmation says will happen, when the workbench asks with its
	// generic dialog.
	Warning []string
	// Remote: when a daemon runs, the CLI verb goes through its socket (one set of locks, one
	// journal naming who asked).
	Remote bool
	// Bulk: it may be taken on many marked sandboxes at once.
	Bulk bool
	// Key and Help are the workbench's default binding ("" for none).
	Key, Help string
	// Implemented reports whether b has the capability interface the action calls.
	Implemented func(b Backend) bool
	// Needs lists actions that must be supported too (a probe needs exec and copy); their
	// reasons are given when they are not.
	Needs []Action
}

func implements[T any](b Backend) bool { _, ok := b.(T); return ok }

// kinds are the action kinds in the order their keys are listed in help.
var kinds = []ActionSpec{
	{Kind: ActionSnapshot, Verb: "snapshot", Gerund: "snapshotting", Tier: TierOperator, Mutating: true, Remote: true,
		Key: "s", Help: "snapshot", Implemented: implements[Snapshotter]},
	{Kind: ActionRevert, Verb: "revert", Gerund: "reverting", Tier: TierOperator, Destructive: true, Remote: true,
		Key: "r", Help: "revert", Implemented: implements[Reverter]},
	{Kind: ActionTeardown, Verb: "teardown", Gerund: "tearing down", Tier: TierAdmin, Destructive: true, Remote: true, Bulk: true,
		Key: "D", Help: "teardown", Implemented: implements[TearDowner]},
	{Kind: ActionReset, Gerund: "resetting", Tier: TierAdmin, Destructive: true, Key: "R", Help: "reset pods",
		Implemented: implements[Resetter], Warning: []string{"Recreates every member fresh from its image; state inside the sandbox is lost."}},
	{Kind: ActionProbe, Verb: "probe", Gerund: "probing", Tier: TierOperator, Mutating: true, Remote: true, Bulk: true,
		Key: "p", Help: "escape probe", Needs: []Action{ActionExec, ActionCopy}},
	{Kind: ActionShell, Verb: "shell", Gerund: "in a shell", Tier: TierOperator, Mutating: true,
		Key: "E", Help: "shell", Implemented: implements[Sheller]},
	// Containment: no state is lost, but the sandbox is cut off, so both are confirmed. Release
	// reconnects a sandbox the watch cut off: whether it may reach the world again is the
	// range's decision, so an admin's.
	{Kind: ActionQuarantine, Verb: "quarantine", Gerund: "quarantining", Tier: TierOperator, Mutating: true, Confirm: true, Remote: true,
		Key: "Q", Help: "quarantine", Implemented: implements[Quarantiner],
		Warning: []string{"Cuts the sandbox off from everything outside itself: Docker disconnects members from non-internal networks and networks shared with a scorer; Kubernetes adds a deny-all policy; Proxmox sets link_down=1 on every NIC.",
			"Members keep running and keep their files; release restores exactly what was there."}},
	{Kind: ActionRelease, Verb: "release", Gerund: "releasing", Tier: TierAdmin, Mutating: true, Confirm: true, Remote: true,
		Key: "U", Help: "release quarantine", Implemented: implements[Quarantiner],
		Warning: []string{"Restores the networks, aliases, addresses, policies or NIC options the quarantine changed: the sandbox can reach what it reached before."}},

	{Kind: ActionExec, Verb: "exec", Gerund: "running exec", Tier: TierOperator, Mutating: true, Remote: true,
		Implemented: implements[Executor]},
	{Kind: ActionCopy, Gerund: "copying", Tier: TierOperator, Mutating: true, Implemented: implements[Copier]},
	{Kind: ActionDeleteSnapshot, Verb: "snapshots", Gerund: "deleting a snapshot", Tier: TierAdmin, Destructive: true, Remote: true,
		Implemented: implements[Snapshotter], Needs: []Action{ActionSnapshot}},
	// Every backend, deliberately: the action layer recovers probe records itself (through exec)
	// and asks a Recoverer for the rest, saying so when the backend has none.
	{Kind: ActionRecover, Verb: "recover", Gerund: "recovering", Tier: TierAdmin, Mutating: true,
		Implemented: func(Backend) bool { return true }},
	// A backend verify stands specs up on must let it probe what it stood up.
	{Kind: ActionVerify, Verb: "verify", Gerund: "verifying", Tier: TierOperator, Mutating: true, Needs: []Action{ActionProbe}},
}

// kindIndex finds a kind's declaration in kinds.
var kindIndex = func() map[Action]int {
	m := make(map[Action]int, len(kinds))
	for i, k := range kinds {
		m[k.Kind] = i
	}
	return m
}()

// Kinds lists every action kind's declaration, in help order.
func Kinds() []ActionSpec { return append([]ActionSpec(nil), kinds...) }

// Gerund names the kind while it runs ("tearing down"); "<kind> running" for an unknown one.
func (a Action) Gerund() string {
	if s, ok := a.Spec(); ok && s.Gerund != "" {
		return s.Gerund
	}
	return string(a) + " running"
}

// Tier is the least role that may take the kind (0 for an unknown kind).
func (a Action) Tier() Tier { s, _ := a.Spec(); return s.Tier }

// RemoteVerbs are the CLI verbs that go through a running daemon's socket, sorted.
func RemoteVerbs() []string {
	var out []string
	for _, k := range kinds {
		if k.Remote && k.Verb != "" {
			out = append(out, k.Verb)
		}
	}
	sort.Strings(out)
	return out
}
