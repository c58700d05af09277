// Package operators reads the team-mode operators file (who may connect, with which SSH keys, in
// which role) and decides which action kinds each role may take; the daemon enforces it at the
// action layer through action.Options.Authorize.
package operators

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
	gossh "golang.org/x/crypto/ssh"

	"github.com/rangekeeper/rangekeeper/action"
	"github.com/rangekeeper/rangekeeper/backends"
)

// Role is what an operator may do.
type Role string

// The roles, least to most. What each may take follows from the action kinds' tiers
// (backends.ActionSpec.Tier): an operator takes the operator tier, an admin every kind.
const (
	Viewer   Role = "viewer"   // fleet, detail, journal, lint, probe history: no action
	Operator Role = "operator" // the operator tier, one sandbox at a time; alert acknowledgement
	Admin    Role = "admin"    // every kind, also on many marked sandboxes at once
)

// roleTier is the highest tier each role takes (0: none).
var roleTier = map[Role]backends.Tier{Viewer: 0, Operator: backends.TierOperator, Admin: backends.TierAdmin}

// Roles lists the roles, least to most.
func Roles() []Role { return []Role{Viewer, Operator, Admin} }

// Tier is the highest tier the role takes (0 for a viewer or an unknown role).
func (r Role) Tier() backends.Tier { return roleTier[r] }

// Takes reports whether the role takes kinds of tier t.
func (r Role) Takes(t backends.Tier) bool { return t > 0 && t <= r.Tier() }

// Allows reports whether the role may take action kind a (never an undeclared one).
func (r Role) Allows(a backends.Action) bool { return r.Takes(a.Tier()) }

// MayAct reports whether the role may take any action (a viewer may not): acknowledging an
// alert and cancelling a running action need it.
func (r Role) MayAct() bool { return r.Takes(backends.TierOperator) }

// Bulk reports whether the role may act on many marked sandboxes at once: one key changing a
// whole range is an admin's decision.
func (r Role) Bulk() bool { return r.Takes(backends.TierAdmin) }

// Actions lists what the role may take, sorted, for help and the README.
func (r Role) Actions() []backends.Action {
	var out []backends.Action
	for _, a := range backends.Actions() {
		if r.Allows(a) {
			out = append(out, a)
		}
	}
	return out
}

// ErrRole is wrapped by refusals for a role (and by errors.Is checks against action.ErrForbidden).
var ErrRole = fmt.Errorf("%w: the role does not allow it", action.ErrForbidden)

// Entry is one operator of the file.
type Entry struct {
	Name string
	Role Role
	Keys []gossh.PublicKey
	Line int // where the entry starts in the file
}

// File is a parsed operators file.
type File struct {
	Path      string
	Operators []Entry
	byFP      map[string]int // key fingerprint → index in Operators
	byName    map[string]int
}

// Fingerprint is a key's SHA256 fingerprint as OpenSSH prints it ("SHA256:...").
func Fingerprint(k gossh.PublicKey) string { return gossh.FingerprintSHA256(k) }

// Load reads and checks the file at path.
func Load(path string) (*File, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("operators file: %w", err)
	}
	return Parse(path, raw)
}

type rawEntry struct {
	Name string   `yaml:"name"`
	Role string   `yaml:"role"`
	Keys []string `yaml:"keys"`
}

// Parse checks an operators file's content; errors name path:line.
func Parse(path string, raw []byte) (*File, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:1: want a mapping with an `operators:` list", path)
	}
	root := doc.Content[0]
	var list *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := root.Content[i]
		if k.Value != "operators" {
			return nil, fmt.Errorf("%s:%d: unknown field %q (want `operators`)", path, k.Line, k.Value)
		}
		list = root.Content[i+1]
	}
	if list == nil || list.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s:%d: `operators` must be a list", path, root.Line)
	}
	f := &File{Path: path, byFP: map[string]int{}, byName: map[string]int{}}
	for _, n := range list.Content {
		e, err := parseEntry(path, n)
		if err != nil {
			return nil, err
		}
		if prev, dup := f.byName[e.Name]; dup {
			return nil, fmt.Errorf("%s:%d: operator %q is already declared at line %d", path, e.Line, e.Name, f.Operators[prev].Line)
		}
		f.byName[e.Name] = len(f.Operators)
		for _, k := range e.Keys {
			fp := Fingerprint(k)
			if prev, dup := f.byFP[fp]; dup {
				return nil, fmt.Errorf("%s:%d: key %s of %q is already %q's (line %d): a key names one operator", path, e.Line, fp, e.Name, f.Operators[prev].Name, f.Operators[prev].Line)
			}
			f.byFP[fp] = len(f.Operators)
		}
		f.Operators = append(f.Operators, e)
	}
	if len(f.Operators) == 0 {
		return nil, fmt.Errorf("%s:%d: no operators: nobody could connect", path, list.Line)
	}
	return f, nil
}

func parseEntry(path string, n *yaml.Node) (Entry, error) {
	var r rawEntry
	if n.Kind != yaml.MappingNode {
		return Entry{}, fmt.Errorf("%s:%d: an operator is a mapping with name, role and keys", path, n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch k := n.Content[i]; k.Value {
		case "name", "role", "keys":
		default:
			return Entry{}, fmt.Errorf("%s:%d: unknown field %q (want name, role, keys)", path, k.Line, k.Value)
		}
	}
	if err := n.Decode(&r); err != nil {
		return Entry{}, fmt.Errorf("%s:%d: %w", path, n.Line, err)
	}
	e := Entry{Name: strings.TrimSpace(r.Name), Role: Role(r.Role), Line: n.Line}
	if e.Name == "" || strings.ContainsAny(e.Name, " \t\n@") {
		return Entry{}, fmt.Errorf("%s:%d: operator name %q: want a non-empty word without spaces or @", path, n.Line, r.Name)
	}
	if _, ok := roleTier[e.Role]; !ok {
		return Entry{}, fmt.Errorf("%s:%d: operator %q: role %q: want viewer, operator or admin", path, lineOf(n, "role"), e.Name, r.Role)
	}
	if len(r.Keys) == 0 {
		return Entry{}, fmt.Errorf("%s:%d: operator %q has no keys", path, n.Line, e.Name)
	}
	keysNode := valueOf(n, "keys")
	for i, line := range r.Keys {
		at := n.Line
		if keysNode != nil && i < len(keysNode.Content) {
			at = keysNode.Content[i].Line
		}
		k, _, opts, _, err := gossh.ParseAuthorizedKey([]byte(line))
		if err != nil {
			return Entry{}, fmt.Errorf("%s:%d: operator %q: key %d: not an authorized_keys line: %w", path, at, e.Name, i+1, err)
		}
		if len(opts) > 0 {
			return Entry{}, fmt.Errorf("%s:%d: operator %q: key %d: options (%s) are not supported: the role decides", path, at, e.Name, i+1, strings.Join(opts, ","))
		}
		if _, cert := k.(*gossh.Certificate); cert {
			return Entry{}, fmt.Errorf("%s:%d: operator %q: key %d: certificates are not supported; list the plain key", path, at, e.Name, i+1)
		}
		e.Keys = append(e.Keys, k)
	}
	return e, nil
}

func valueOf(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func lineOf(n *yaml.Node, key string) int {
	if v := valueOf(n, key); v != nil {
		return v.Line
	}
	return n.Line
}

// ByKey finds the operator a key belongs to.
func (f *File) ByKey(k gossh.PublicKey) (Entry, bool) {
	if f == nil || k == nil {
		return Entry{}, false
	}
	i, ok := f.byFP[Fingerprint(k)]
	if !ok {
		return Entry{}, false
	}
	return f.Operators[i], true
}

// ByName finds an operator by name.
func (f *File) ByName(name string) (Entry, bool) {
	if f == nil {
		return Entry{}, false
	}
	i, ok := f.byName[name]
	if !ok {
		return Entry{}, false
	}
	return f.Operators[i], true
}

// HasKey reports whether the operator name still holds the key with fingerprint fp.
func (f *File) HasKey(name, fp string) bool {
	i, ok := f.byFP[fp]
	return ok && f.Operators[i].Name == name
}

// Names lists the operators, sorted.
func (f *File) Names() []string {
	out := make([]string, 0, len(f.Operators))
	for _, e := range f.Operators {
		out = append(out, e.Name)
	}
	sort.Strings(out)
	return out
}

// ErrUnknown is returned for an identity the file does not name.
var ErrUnknown = fmt.Errorf("%w: not in the operators file", action.ErrForbidden)
