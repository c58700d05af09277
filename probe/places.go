package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/rangekeeper/rangekeeper/backends"
)

// Attempt is one place delivery tried and what happened there; a could-not-probe result keeps
// every attempt as structured evidence behind its one-line summary.
type Attempt struct {
	Place   string `json:"place"`             // the base directory (or the file) tried
	How     string `json:"how,omitempty"`     // "private directory (archive API)", "copied", "streamed through sh"
	Outcome string `json:"outcome"`           // "ran", or why not
	OK      bool   `json:"ok,omitempty"`      // the probe ran here
	Cleanup string `json:"cleanup,omitempty"` // what removal left, when not "removed"
}

// String renders an attempt on one line.
func (a Attempt) String() string {
	s := a.Place + ": " + a.Outcome
	if a.How != "" {
		s += " (" + a.How + ")"
	}
	if a.Cleanup != "" {
		s += "; cleanup: " + a.Cleanup
	}
	return s
}

// UnmarshalJSON also reads the one-line strings older stored reports carry.
func (a *Attempt) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		place, rest, _ := strings.Cut(s, ": ")
		*a = Attempt{Place: place, Outcome: rest, OK: strings.HasPrefix(rest, "ran")}
		return nil
	}
	type plain Attempt
	return json.Unmarshal(b, (*plain)(a))
}

// vocabulary is how each backend names the places delivery uses: a container has a writable
// layer and tmpfs mounts, a VM has filesystems, and failures are told in those words.
type vocabulary struct {
	member   string // "container", "pod's container", "VM"
	noExec   string // why an exec of a placed binary fails
	shadowed string // the copy the file API left where the member cannot see it (%s: path)
}

var vocabularies = map[backends.Kind]vocabulary{
	backends.KindDocker: {member: "container", noExec: "a noexec mount?",
		shadowed: "an emptied file remains beneath the tmpfs at %s in the container's writable layer (the engine's archive API cannot delete)"},
	backends.KindKubernetes: {member: "pod's container", noExec: "a noexec mount (emptyDir medium or readOnlyRootFilesystem)?",
		shadowed: "an emptied file remains at %s beneath a mount the container sees over it"},
	backends.KindProxmox: {member: "VM", noExec: "a filesystem mounted noexec in the guest?",
		shadowed: "an emptied file remains at %s in the guest"},
}

// vocabularyOf picks the words of the sandbox's backend from its ID ("docker:…", "k8s:…",
// "pve:…"); unknown backends get neutral words.
func vocabularyOf(sandboxID string) vocabulary {
	kind, _, _ := strings.Cut(sandboxID, ":")
	if v, ok := vocabularies[backends.Kind(kind)]; ok {
		return v
	}
	return vocabulary{member: "sandbox member", noExec: "a noexec filesystem?", shadowed: "an emptied file remains at %s"}
}

// summary is the one line a could-not-probe result shows; the attempts carry the detail.
func (v vocabulary) summary(attempts []Attempt) string {
	var places []string
	seen := map[string]bool{}
	for _, a := range attempts {
		if !seen[a.Place] {
			seen[a.Place] = true
			places = append(places, a.Place)
		}
	}
	return fmt.Sprintf("could not probe: no writable, executable place in the %s (%d attempts at %s; see the attempts)", v.member, len(attempts), strings.Join(places, ", "))
}

// PrivateDirCopier is a file API that can create a directory together with the file (Docker's
// archive API takes a tar): the probe then needs neither a shell nor an existing /tmp, only a
// writable parent.
type PrivateDirCopier interface {
	CopyToNewDir(ctx context.Context, sandboxID, member, dir, name string, data []byte, mode int64) error
}

// WorkDirer tells a member's configured working directory, one more place to try.
type WorkDirer interface {
	MemberWorkDir(ctx context.Context, sandboxID, member string) (string, error)
}
