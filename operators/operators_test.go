package operators

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"strings"
	"testing"

	gossh "golang.org/x/crypto/ssh"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
)

func newKey(t *testing.T) (gossh.PublicKey, string) {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := gossh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return k, strings.TrimSpace(string(gossh.MarshalAuthorizedKey(k)))
}

func TestParseAndRoles(t *testing.T) {
	ka, la := newKey(t)
	kb, lb := newKey(t)
	kc, _ := newKey(t)
	f, err := Parse("ops.yaml", []byte("operators:\n  - name: alice\n    role: admin\n    keys:\n      - "+la+" alice@laptop\n  - name: bob\n    role: viewer\n    keys: [\""+lb+"\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := f.ByKey(ka); !ok || e.Name != "alice" || e.Role != Admin {
		t.Errorf("ByKey(alice's) = %+v, %v", e, ok)
	}
	if _, ok := f.ByKey(kc); ok {
		t.Error("an unlisted key found an operator")
	}
	r := Roster{File: func() *File { return f }}
	bob := action.Identity{Operator: "bob", Transport: action.TransportSSH, Fingerprint: Fingerprint(kb)}
	err = r.Authorize(bob, backends.ActionTeardown)
	if !errors.Is(err, action.ErrForbidden) || !strings.Contains(err.Error(), "bob is viewer") {
		t.Errorf("viewer teardown = %v; want a role refusal naming bob and his role", err)
	}
	alice := action.Identity{Operator: "alice", Transport: action.TransportSSH, Fingerprint: Fingerprint(ka)}
	if err := r.Authorize(alice, backends.ActionTeardown); err != nil {
		t.Errorf("admin teardown = %v", err)
	}
	// alice's name with bob's key (a stale or forged identity) is nobody.
	forged := action.Identity{Operator: "alice", Transport: action.TransportSSH, Fingerprint: Fingerprint(kb)}
	if err := r.Authorize(forged, backends.ActionSnapshot); !errors.Is(err, ErrUnknown) {
		t.Errorf("name with another's key = %v; want ErrUnknown", err)
	}
	if err := r.Authorize(action.Identity{Operator: "me@host", Transport: action.TransportSocket}, backends.ActionTeardown); err != nil {
		t.Errorf("the local socket user = %v; want the local role (admin)", err)
	}
	for _, c := range []struct {
		role Role
		a    backends.Action
		want bool
	}{{Viewer, backends.ActionSnapshot, false}, {Viewer, backends.ActionProbe, false}, {Operator, backends.ActionSnapshot, true},
		{Operator, backends.ActionRevert, true}, {Operator, backends.ActionExec, true}, {Operator, backends.ActionTeardown, false},
		{Operator, backends.ActionReset, false}, {Admin, backends.ActionReset, true}} {
		if got := c.role.Allows(c.a); got != c.want {
			t.Errorf("%s.Allows(%s) = %v; want %v", c.role, c.a, got, c.want)
		}
	}
	if Operator.Bulk() || !Admin.Bulk() {
		t.Error("only admins act in bulk")
	}
}

func TestParseErrorsNameFileAndLine(t *testing.T) {
	_, la := newKey(t)
	for _, c := range []struct{ name, body, want string }{
		{"bad role", "operators:\n  - name: a\n    role: root\n    keys: [\"" + la + "\"]\n", "ops.yaml:3: operator \"a\": role \"root\""},
		{"bad key", "operators:\n  - name: a\n    role: admin\n    keys:\n      - ssh-ed25519 AAAAnope\n", "ops.yaml:5: operator \"a\": key 1"},
		{"dup name", "operators:\n  - name: a\n    role: admin\n    keys: [\"" + la + "\"]\n  - name: a\n    role: admin\n    keys: [\"" + la + "\"]\n", "ops.yaml:5: operator \"a\" is already declared at line 2"},
		{"unknown field", "operators:\n  - name: a\n    rol: admin\n", "ops.yaml:3: unknown field \"rol\""},
		{"no keys", "operators:\n  - name: a\n    role: admin\n", "ops.yaml:2: operator \"a\" has no keys"},
		{"options", "operators:\n  - name: a\n    role: admin\n    keys: [\"command=\\\"x\\\" " + la + "\"]\n", "options"},
		{"empty", "operators: []\n", "no operators"},
		{"top field", "users: []\n", "ops.yaml:1: unknown field \"users\""},
	} {
		_, err := Parse("ops.yaml", []byte(c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v; want it to contain %q", c.name, err, c.want)
		}
	}
}
