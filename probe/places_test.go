package probe

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/probe/facts"
)

// noPlace is a member where every write fails and nothing can be executed: the words of the
// failure are what is under test, not delivery itself (the Docker tests exercise that).
type noPlace struct{}

func (noPlace) Exec(context.Context, string, backends.ExecRequest) (backends.ExecResult, error) {
	return backends.ExecResult{ExitCode: 127, Stderr: []byte("not found")}, nil
}
func (noPlace) CopyTo(context.Context, string, string, string, []byte, int64) error {
	return errors.New("guest-agent file-write: read-only filesystem")
}
func (noPlace) CopyFrom(context.Context, string, string, string) ([]byte, error) {
	return nil, errors.New("no such file")
}

// TestFailureWordsPerBackend: a VM's failure names the VM's places, never a container
// layer or tmpfs; the summary stays short and the attempts are structured.
func TestFailureWordsPerBackend(t *testing.T) {
	for id, want := range map[string]string{"pve:range1/sample-42": "in the VM", "docker:default/p": "in the container", "k8s:ctx/ns/rel": "in the pod's container"} {
		res, err := RunWith(context.Background(), noPlace{}, noPlace{}, id, "", []byte("bin"), facts.Targets{}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.CouldNotProbe, want) || len(res.CouldNotProbe) > 200 {
			t.Errorf("%s: %q", id, res.CouldNotProbe)
		}
		if strings.HasPrefix(id, "pve:") {
			for _, a := range res.Attempts {
				if s := a.String(); strings.Contains(s, "container") || strings.Contains(s, "tmpfs") {
					t.Errorf("VM attempt in container words: %s", s)
				}
			}
		}
		if len(res.Attempts) < 4 || res.Attempts[0].Place != "/tmp" || res.Attempts[0].Outcome == "" {
			t.Errorf("%s: attempts %+v", id, res.Attempts)
		}
	}
	if v := vocabularyOf("pve:x"); strings.Contains(v.shadowed+v.noExec, "container") || strings.Contains(v.shadowed+v.noExec, "tmpfs") {
		t.Errorf("pve vocabulary %+v", v)
	}
}

// TestAttemptsReadOldHistory: reports stored before attempts were structured still load.
func TestAttemptsReadOldHistory(t *testing.T) {
	var r Result
	if err := json.Unmarshal([]byte(`{"sandbox":"docker:default/p","attempts":["/tmp: ran (copied)","/var/tmp: cannot place binary: read-only"]}`), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Attempts) != 2 || r.Attempts[0].Place != "/tmp" || !r.Attempts[0].OK || r.Attempts[1].Outcome != "cannot place binary: read-only" {
		t.Errorf("%+v", r.Attempts)
	}
}
