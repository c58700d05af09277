package fleet

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/spec/catalog"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func sb(backend string, i int) backends.Sandbox {
	task := []string{"ctf_web", "pwn", "recon", "crypto"}[i%4]
	status := []backends.Status{backends.StatusRunning, backends.StatusPartial, backends.StatusStopped}[i%3]
	s := backends.Sandbox{
		ID: fmt.Sprintf("%s/inspect-%s-i%06d", backend, task, i), Name: fmt.Sprintf("inspect-%s-i%06d", task, i),
		Backend: backends.KindDocker, Endpoint: backend, Status: status, Task: task, Actionable: true,
		Created: t0.Add(-time.Duration(i) * time.Minute),
		Members: []backends.Member{{Name: "default", Service: "default", Running: status != backends.StatusStopped}},
	}
	if i%5 == 0 {
		s.Findings = []backends.Finding{{RuleID: "CMP-H01", Severity: catalog.Severity(1 + i%5)}}
	}
	return s
}

func ids(s *Store) []string {
	out := make([]string, s.Len())
	for i := range out {
		out[i] = s.At(i).SB.ID
	}
	return out
}

func fromScratch(s *Store) []string {
	res := Compute(s.Snapshot(s.Query(), s.Order()))
	out := make([]string, len(res.Index))
	for i, r := range res.Index {
		out[i] = r.SB.ID
	}
	return out
}

// TestIncrementalIndexEqualsFullRecompute drives random upserts, removes and resets through the
// incremental path and checks the index against a from-scratch Compute after every step.
func TestIncrementalIndexEqualsFullRecompute(t *testing.T) {
	for _, order := range []Order{{Col: ColName}, {Col: ColSev, Desc: true}, {Col: ColAge, Group: GroupTask}, {Col: ColStatus, Group: GroupBackend}} {
		t.Run(fmt.Sprintf("%v-%v-%v", order.Col, order.Desc, order.Group), func(t *testing.T) {
			rng := rand.New(rand.NewSource(1))
			s := NewStore()
			q, _ := ParseQuery("!crypto")
			s.Install(Compute(s.Snapshot(q, order)))
			for step := 0; step < 600; step++ {
				backend := []string{"docker:a", "docker:b"}[rng.Intn(2)]
				i := rng.Intn(120)
				switch op := rng.Intn(10); {
				case op < 6:
					x := sb(backend, i)
					x.Status = []backends.Status{backends.StatusRunning, backends.StatusStopped}[rng.Intn(2)]
					s.ApplyEvent(backend, backends.Event{Type: backends.EventUpsert, Sandbox: x})
				case op < 9:
					s.ApplyEvent(backend, backends.Event{Type: backends.EventRemove, ID: sb(backend, i).ID})
				default:
					var list []backends.Sandbox
					for j := 0; j < rng.Intn(20); j++ {
						list = append(list, sb(backend, rng.Intn(120)))
					}
					s.ApplyEvent(backend, backends.Event{Type: backends.EventReset, Sandboxes: list})
				}
				if got, want := ids(s), fromScratch(s); !slices.Equal(got, want) {
					t.Fatalf("step %d: incremental index diverged\n got %v\nwant %v", step, got, want)
				}
			}
		})
	}
}

// TestInstallReappliesChangesMadeDuringCompute: events that arrive while a filter is computed
// off the UI goroutine are not lost when the result is installed.
func TestInstallReappliesChangesMadeDuringCompute(t *testing.T) {
	s := NewStore()
	for i := 0; i < 50; i++ {
		s.Put(NewRow("docker:a", sb("docker:a", i), false))
	}
	q, _ := ParseQuery("task=pwn")
	snap := s.Snapshot(q, Order{Col: ColName})
	// While "computing": one new matching row, one removed matching row.
	s.Put(NewRow("docker:a", sb("docker:a", 101), false)) // 101%4 == 1 → pwn
	s.Remove(sb("docker:a", 1).ID)
	s.Install(Compute(snap))
	got := ids(s)
	if !slices.Contains(got, sb("docker:a", 101).ID) || slices.Contains(got, sb("docker:a", 1).ID) {
		t.Fatalf("changes during compute lost: %v", got)
	}
	if want := fromScratch(s); !slices.Equal(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
}

func TestQueryLanguage(t *testing.T) {
	rows := []*Row{
		NewRow("docker:a", sb("docker:a", 0), false), // ctf_web, running, sev from i%5==0 → info(1)
		NewRow("docker:a", sb("docker:a", 1), false), // pwn, partial
		NewRow("pve:lab", func() backends.Sandbox {
			x := sb("pve:lab", 2)
			x.Backend = backends.KindProxmox
			x.Findings = []backends.Finding{{Severity: catalog.SeverityCritical}}
			return x
		}(), false),
	}
	tests := []struct {
		q    string
		want []int
	}{
		{"", []int{0, 1, 2}},
		{"ctf", []int{0}},
		{"!ctf", []int{1, 2}},
		{"backend=pve", []int{2}},
		{"backend!=pve", []int{0, 1}},
		{"task~pw", []int{1}},
		{"sev>=high", []int{2}},
		{"sev<high", []int{0, 1}},
		{"status=partial", []int{1}},
		{"members>=1 !recon", []int{0, 1}},
		{"INSPECT backend=docker", []int{0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.q, func(t *testing.T) {
			q, err := ParseQuery(tt.q)
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for i, r := range rows {
				if q.Match(r) {
					got = append(got, i)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("matched %v, want %v", got, tt.want)
			}
		})
	}
	for _, bad := range []string{"colour=red", "sev>=extreme", "members>=lots", "task>=x"} {
		if _, err := ParseQuery(bad); err == nil {
			t.Errorf("ParseQuery(%q) accepted; want an error naming the term", bad)
		}
	}
}
