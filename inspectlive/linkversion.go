package inspectlive

import (
	"hash/fnv"
	"sort"
	"strconv"
)

// LinkVersion moves only when something a link depends on moved: an eval came, ended or its
// process died; a sample came, went or changed status; a trace named a project; a transcript
// named a VM. Events that only add progress (tokens, the agent's commands) leave it. A reader
// that links thousands of rows relinks at LinkVersion's changes and reads progress at Version's.
// The agent's commands, which can confirm a link as matched, do not move it: such a reader
// relinks now and then for them.
func (w *Watcher) LinkVersion() uint64 { return w.snap.Load().linkVersion }

// linkDigest hashes the inputs of every link in sn, in a fixed order.
func (sn *snapshot) linkDigest() uint64 {
	h := fnv.New64a()
	put := func(ss ...string) {
		for _, s := range ss {
			h.Write([]byte(s))
			h.Write([]byte{0})
		}
	}
	flag := func(b bool) string { return strconv.FormatBool(b) }
	for _, e := range sn.evals {
		put(string(e.Key), e.Task, strconv.Itoa(e.PID), flag(e.Alive), flag(e.Ended))
		for _, s := range e.Samples {
			put(s.ID, strconv.Itoa(s.Epoch), s.UUID, string(s.Status))
			if p := s.Proxmox; p != nil {
				put(p.Instance, p.Host, p.Port, p.Node)
				vms := make([]int, 0, len(p.VMs))
				for id := range p.VMs {
					vms = append(vms, id)
				}
				sort.Ints(vms)
				for _, id := range vms {
					put(strconv.Itoa(id), p.VMs[id])
				}
			}
		}
	}
	names := make([]string, 0, len(sn.projects))
	for n := range sn.projects {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		tp := sn.projects[n]
		put(n, strconv.Itoa(tp.PID), tp.Task, tp.SampleID, strconv.Itoa(tp.Epoch), flag(tp.Superseded), flag(sn.alive[tp.PID]))
	}
	return h.Sum64()
}
