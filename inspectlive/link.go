package inspectlive

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/rangekeeper/rangekeeper/inspectlive/trace"
	"github.com/rangekeeper/rangekeeper/sandbox"
)

// Names the backends give Inspect's identities (backends/kubernetes, backends/proxmox).
const (
	labelSampleUUID = "inspectSampleUUID" // pod label set by inspect_k8s_sandbox 0.4.0+
	labelVMID       = "vmid"              // Proxmox member label
	labelNode       = "node"              // Proxmox member label
)

// inspectProjectRE is Inspect's is_inspect_project, with the task prefix captured.
var inspectProjectRE = regexp.MustCompile(`^inspect-([a-z\d\-_]*)-i[a-z\d]{6,}$`)

// projectPrefix is the task part of the compose project Inspect names for a task
// (task_project_name): lowercased, [^a-z0-9_-] → "-", runs of "-" collapsed, first 12 chars,
// trailing "_" dropped.
func projectPrefix(task string) string {
	t := strings.ToLower(task)
	var b strings.Builder
	dash := false
	for _, r := range t {
		ok := (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '_' || r == '-'
		if !ok {
			r = '-'
		}
		if r == '-' {
			if dash {
				continue
			}
			dash = true
		} else {
			dash = false
		}
		b.WriteRune(r)
	}
	s := b.String()
	if len(s) > 12 {
		s = s[:12]
	}
	return strings.TrimRight(s, "_")
}

// sampleRef is one sample of one eval in a snapshot.
type sampleRef struct {
	eval *Eval
	s    *SampleState
}

// tracedProject is a compose project a trace file names.
type tracedProject struct {
	trace.Project
	PID        int
	TracePath  string
	Superseded bool
}

// link is the linker proper: a pure function of one snapshot.
func (sn *snapshot) link(sb sandbox.Sandbox, execs []string) Link {
	l := Link{SandboxID: sb.ID, How: HowUnknown}
	switch sb.Backend {
	case sandbox.KindKubernetes:
		sn.linkKubernetes(sb, &l)
	case sandbox.KindDocker:
		sn.linkDocker(sb, execs, &l)
	case sandbox.KindProxmox:
		sn.linkProxmox(sb, &l)
	default:
		l.Why = "backend " + string(sb.Backend) + " has no Inspect linkage"
	}
	return l
}

func (l *Link) set(r sampleRef, how How, why string) {
	l.Eval = r.eval.Ref()
	l.SampleID, l.Epoch, l.UUID = r.s.ID, r.s.Epoch, r.s.UUID
	l.Status = r.s.Status
	l.How, l.Why = how, why
	// A dead eval process ended its eval, however it ended: one killed (SIGKILL, the OOM killer)
	// leaves its buffer with the sample still running, and nothing will ever tear it down.
	l.Orphaned = !r.eval.Alive
}

func (sn *snapshot) linkKubernetes(sb sandbox.Sandbox, l *Link) {
	uuid := sb.Labels[labelSampleUUID]
	for _, m := range sb.Members {
		if uuid == "" {
			uuid = m.Labels[labelSampleUUID]
		}
	}
	if uuid == "" {
		uuid = sb.Sample // backends/kubernetes puts the label's value here
	}
	if uuid == "" {
		l.Why = "no " + labelSampleUUID + " pod label (inspect_k8s_sandbox older than 0.4.0, or a custom chart without .Values.labels)"
		return
	}
	if r, ok := sn.byUUID[uuid]; ok {
		l.set(r, HowExact, "pod label "+labelSampleUUID+"="+uuid)
		return
	}
	l.UUID = uuid
	l.Why = "sample uuid " + uuid + " is in no sample buffer this host reads (another host's eval, or already flushed)"
}

func (sn *snapshot) linkDocker(sb sandbox.Sandbox, execs []string, l *Link) {
	project := sb.Name
	if tp, ok := sn.projects[project]; ok {
		sn.linkTraced(tp, execs, l)
		return
	}
	m := inspectProjectRE.FindStringSubmatch(project)
	if m == nil {
		l.Why = "compose project " + project + " is not named like an Inspect sandbox"
		return
	}
	prefix := m[1]
	var evals []*Eval
	var cands []sampleRef
	for i := range sn.evals {
		e := &sn.evals[i]
		if projectPrefix(e.Task) != prefix {
			continue
		}
		evals = append(evals, e)
		for j := range e.Samples {
			// A sample the trace gives another project is that sandbox's: a common command
			// (ls, id) must not pull it over here.
			if s := &e.Samples[j]; !sn.claimed[claimKey(e.PID, s.ID, s.Epoch)] {
				cands = append(cands, sampleRef{e, s})
			}
		}
	}
	if hits := confirmed(cands, execs); len(hits) == 1 {
		l.set(hits[0], HowMatched, "task prefix "+prefix+" and a command the sandbox ran")
		return
	}
	l.How = HowGuessed
	l.Eval.Task = prefix
	l.Why = "task prefix " + prefix + " from the project name; no trace names this project"
	if len(evals) == 1 {
		l.Eval = evals[0].Ref()
		l.Orphaned = !evals[0].Alive && evals[0].Ended
	}
}

// confirmed keeps the candidates whose sample ran one of the commands.
func confirmed(cands []sampleRef, execs []string) []sampleRef {
	if len(execs) == 0 {
		return nil
	}
	var hits []sampleRef
	for _, c := range cands {
		if ranCommand(c.s, execs) {
			hits = append(hits, c)
		}
	}
	return hits
}

// linkTraced resolves a project the trace names to the sample in that pid's buffer. One process
// may run several evals of the same task (an eval set across models): the commands tell them
// apart, and without them the link stays a guess rather than a wrong sample.
func (sn *snapshot) linkTraced(tp tracedProject, execs []string, l *Link) {
	why := fmt.Sprintf("trace %s names project %s for sample %s epoch %d", tp.TracePath, tp.Project.Project, tp.SampleID, tp.Epoch)
	cands := sn.tracedCandidates(tp, true)
	if len(cands) == 0 {
		// The task name may differ in form (a log name's task, when start.json is unread).
		cands = sn.tracedCandidates(tp, false)
	}
	l.Superseded = tp.Superseded
	switch hits := confirmed(cands, execs); {
	case len(hits) == 1:
		l.set(hits[0], HowMatched, why+", confirmed by a command the sandbox ran")
	case len(cands) == 1:
		l.set(cands[0], HowTrace, why)
	case len(cands) > 1:
		l.How = HowGuessed
		l.Eval = EvalRef{Task: tp.Task, PID: tp.PID}
		l.Why = why + fmt.Sprintf("; %d evals of task %s in that process hold it and no command tells them apart", len(cands), tp.Task)
	default:
		// The buffer has not got the sample yet, or is gone: the trace alone still names it.
		l.How = HowTrace
		l.Eval = EvalRef{Task: tp.Task, PID: tp.PID}
		l.SampleID, l.Epoch = tp.SampleID, tp.Epoch
		l.Why = why + "; no sample buffer of that process holds it"
		l.Orphaned = !sn.alive[tp.PID]
	}
	if l.Superseded {
		l.Why += "; a later attempt of this sample has a newer project"
	}
}

func (sn *snapshot) tracedCandidates(tp tracedProject, byTask bool) []sampleRef {
	var cands []sampleRef
	for i := range sn.evals {
		e := &sn.evals[i]
		if e.PID != tp.PID || (byTask && tp.Task != "" && e.Task != tp.Task) {
			continue
		}
		for j := range e.Samples {
			if s := &e.Samples[j]; s.ID == tp.SampleID && s.Epoch == tp.Epoch {
				cands = append(cands, sampleRef{e, s})
			}
		}
	}
	return cands
}

// linkProxmox finds the sample whose transcript says it made (or acquired) these VMs. VMIDs are
// reused once freed, so a live sample wins over a finished one, and a newer over an older.
func (sn *snapshot) linkProxmox(sb sandbox.Sandbox, l *Link) {
	var best *sampleRef
	bestWhy := ""
	for _, m := range sb.Members {
		vmid, err := strconv.Atoi(m.Labels[labelVMID])
		if err != nil {
			if vmid, err = strconv.Atoi(m.ID); err != nil {
				continue
			}
		}
		node := m.Labels[labelNode]
		for i := range sn.evals {
			e := &sn.evals[i]
			for j := range e.Samples {
				s := &e.Samples[j]
				h := s.Proxmox
				if h == nil {
					continue
				}
				if _, ok := h.VMs[vmid]; !ok || (h.Node != "" && node != "" && h.Node != node) {
					continue
				}
				r := sampleRef{e, s}
				if best == nil || better(r, *best) {
					best = &r
					bestWhy = fmt.Sprintf("sample transcript says VM %d is ready", vmid)
					if h.Node != "" {
						bestWhy += " on node " + h.Node
					}
				}
			}
		}
	}
	if best != nil {
		l.set(*best, HowExact, bestWhy)
		return
	}
	l.Why = "no sample transcript names these VMs (proxmoxsandbox older than its INFO logging, or another host's eval)"
}

func better(a, b sampleRef) bool {
	if ad, bd := a.s.Status.Done(), b.s.Status.Done(); ad != bd {
		return !ad
	}
	return a.s.LastEvent.After(b.s.LastEvent)
}
