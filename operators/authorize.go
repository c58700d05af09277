package operators

import (
	"fmt"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
)

// Roster answers which role an identity has. Local clients (the daemon's own user on its unix
// socket, owner-only) act as LocalRole; SSH identities by their key's operator entry.
type Roster struct {
	File      func() *File // the current file (re-read on SIGHUP)
	LocalRole Role         // role of socket and standalone identities; "": Admin
}

// RoleOf is the identity's role; ok is false for an identity nobody declared.
func (r Roster) RoleOf(who action.Identity) (Role, bool) {
	if who.Transport != action.TransportSSH {
		if r.LocalRole == "" {
			return Admin, true
		}
		return r.LocalRole, true
	}
	f := r.File()
	e, ok := f.ByName(who.Operator)
	if !ok || !f.HasKey(who.Operator, who.Fingerprint) {
		return "", false
	}
	return e.Role, true
}

// known is the identity's role, or an error naming an identity nobody declared.
func (r Roster) known(who action.Identity) (Role, error) {
	role, ok := r.RoleOf(who)
	if !ok {
		return "", fmt.Errorf("%s (%s): %w", who.Operator, who.Fingerprint, ErrUnknown)
	}
	return role, nil
}

// Authorize is an action.Options.Authorize: it refuses what the identity's role does not allow.
func (r Roster) Authorize(who action.Identity, a backends.Action) error {
	role, err := r.known(who)
	if err != nil {
		return err
	}
	if !role.Allows(a) {
		return fmt.Errorf("%s is %s, %s needs %s: %w", who.Operator, role, a, least(a), ErrRole)
	}
	return nil
}

// AuthorizeBulk is an action.Options.AuthorizeBulk: only admins act on many sandboxes at once.
func (r Roster) AuthorizeBulk(who action.Identity, a backends.Action) error {
	role, err := r.known(who)
	if err != nil {
		return err
	}
	if !role.Bulk() {
		return fmt.Errorf("%s is %s, %s on many sandboxes at once needs %s: %w", who.Operator, role, a, Admin, ErrRole)
	}
	return nil
}

// AuthorizeAck refuses an alert acknowledgement (watch.Ack) to an identity whose role takes no
// action at all (a viewer).
func (r Roster) AuthorizeAck(who action.Identity) error {
	role, err := r.known(who)
	if err != nil {
		return err
	}
	if !role.MayAct() {
		return fmt.Errorf("%s is %s, acknowledging an alert needs %s: %w", who.Operator, role, Operator, ErrRole)
	}
	return nil
}

// AuthorizeCancel is an action.Options.AuthorizeCancel: cancelling what runs on a sandbox
// (anyone's action) needs a role that acts; a viewer only watches.
func (r Roster) AuthorizeCancel(who action.Identity, running backends.Action) error {
	role, err := r.known(who)
	if err != nil {
		return err
	}
	if !role.MayAct() {
		return fmt.Errorf("%s is %s, cancelling %s needs %s: %w", who.Operator, role, running, Operator, ErrRole)
	}
	return nil
}

// least names the least role that allows a.
func least(a backends.Action) Role {
	for _, r := range Roles() {
		if r.Allows(a) {
			return r
		}
	}
	return Admin
}
