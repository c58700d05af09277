package kubernetes

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rangekeeper/rangekeeper/backends"
	"github.com/rangekeeper/rangekeeper/backends/kubernetes/kubetest"
	"github.com/rangekeeper/rangekeeper/inspectlive"
	it "github.com/rangekeeper/rangekeeper/inspectlive/inspecttest"
)

// A release Inspect installed for a sample carries that sample's uuid as the pod label
// inspectSampleUUID (inspect_k8s_sandbox 0.4.0+: src/k8s_sandbox/_helm.py sets
// labels.inspectSampleUUID, and the agent-env chart's templates/services.yaml puts
// .Values.labels on the pods). Listed by the real backend from a real API server, the sandbox
// links exactly to the buffer sample of that uuid, as Inspect 0.3.260 (inspect_ai at 499e6152)
// writes its buffer: src/inspect_ai/log/_recorders/buffer/database.py. A release whose uuid no
// buffer holds, and one whose pods carry no uuid (as with a custom chart without .Values.labels,
// or inspect_k8s_sandbox before 0.4.0), stay unlinked, each saying why.
func TestClusterReleaseLinksExactlyToTheBufferSampleOfItsUUID(t *testing.T) {
	c := kubetest.Need(t)
	ns := c.Namespace(t)
	b := testBackend(t, c, nil, ns)
	const uuid = "e7Hq2Lk9Pz4Vw8Xn3Rt6Ys" // Inspect's sample uuids are shortuuids
	linked := release{name: newReleaseName(), task: "ctf_k8s", sample: uuid}
	elsewhere := release{name: newReleaseName(), task: "ctf_k8s", sample: "Zz9Yy8Xx7Ww6Vv5Uu4Tt3S"}
	unlabelled := release{name: newReleaseName(), task: "ctf_k8s"} // the label empty: no uuid to link by
	for _, r := range []release{linked, elsewhere, unlabelled} {
		install(t, b, ns, r)
	}
	f := newFleet()
	watch(t, b, f)
	id := func(r release) string { return "k8s:envtest/" + ns + "/" + r.name }
	f.wait(t, 90*time.Second, "three releases with running members", func(m map[string]backends.Sandbox) bool {
		return allRunning(m[id(linked)], 1) && allRunning(m[id(elsewhere)], 1) && allRunning(m[id(unlabelled)], 1)
	})

	data := t.TempDir()
	db := it.NewDB(t, it.BufferPath(data, it.LogName("ctf_k8s", "Zx8Kq2LmTd4Rw"), os.Getpid()), true)
	db.StartSample(t, "7", 1, "a1b2c3d4e5f6g7h8i9j0k1")
	db.StartSample(t, "7", 2, uuid)
	w := inspectlive.New(inspectlive.Config{DataDirs: []string{data}})
	defer w.Close()
	w.Poll(context.Background())

	sb, _ := f.get(id(linked))
	l := w.Link(sb)
	if l.How != inspectlive.HowExact || l.SampleID != "7" || l.Epoch != 2 || l.UUID != uuid || l.Eval.Task != "ctf_k8s" ||
		l.Eval.PID != os.Getpid() || l.Status != inspectlive.StatusRunning || l.Orphaned {
		t.Errorf("link of the labelled release = %+v", l)
	}
	sb, _ = f.get(id(elsewhere))
	if l := w.Link(sb); l.How != inspectlive.HowUnknown || l.Linked() || !strings.Contains(l.Why, "in no sample buffer") {
		t.Errorf("link of a release whose uuid no buffer holds = %+v", l)
	}
	sb, _ = f.get(id(unlabelled))
	if l := w.Link(sb); l.How != inspectlive.HowUnknown || !strings.Contains(l.Why, "inspectSampleUUID") {
		t.Errorf("link of a release without the label = %+v", l)
	}
}
